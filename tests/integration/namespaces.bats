#!/usr/bin/env bats
# Namespaces: user namespace with id mappings, uts hostname, pid namespace,
# and joining an existing network namespace by path.

load helpers

@test "user namespace: uid_map and gid_map inside show the mapping" {
	setup_bundle busybox
	# The mapped root must own its rootfs for a usable container.
	chown -R 100000:100000 "$ROOTFS"
	cfg_set '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	cfg_args sh -c 'cat /proc/self/uid_map; cat /proc/self/gid_map; id -u; stat -c %u /bin/busybox'
	run_ctr
	assert_status 0
	read -r a b c <<<"${lines[0]}"
	[ "$a $b $c" = "0 100000 65536" ] || fail_with "uid_map: ${lines[0]}"
	read -r a b c <<<"${lines[1]}"
	[ "$a $b $c" = "0 100000 65536" ] || fail_with "gid_map: ${lines[1]}"
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = 0 ]
}

@test "user namespace: the container's root is an unprivileged host user" {
	setup_bundle busybox
	chown -R 100000:100000 "$ROOTFS"
	cfg_set '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	cfg_args sleep 1000
	create_ctr
	pid=$(state_of "$CID" pid)
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")" = 100000 ]
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]
}

@test "uts namespace: hostname from the config" {
	setup_bundle busybox
	cfg_set '.hostname = "proctor-test-host"'
	cfg_args hostname
	run_ctr
	assert_status 0
	[ "$output" = proctor-test-host ]
	# The host's name is untouched.
	[ "$(hostname)" != proctor-test-host ]
}

@test "pid namespace: the process is pid 1" {
	setup_bundle busybox
	cfg_args sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = 1 ]
	[[ "${lines[1]}" == "sh -c "* ]]
}

@test "namespaces listed in the config are new, the others are the host's" {
	setup_bundle busybox
	cfg_set '.linux.namespaces = [{"type": "pid"}, {"type": "mount"}, {"type": "uts"}]'
	cfg_args sleep 1000
	create_ctr
	pid=$(state_of "$CID" pid)
	for ns in pid mnt uts; do
		[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] ||
			fail_with "$ns namespace not new"
	done
	for ns in net ipc user; do
		[ "$(readlink "/proc/$pid/ns/$ns")" = "$(readlink "/proc/self/ns/$ns")" ] ||
			fail_with "$ns namespace should be the host's"
	done
}

@test "network namespace joined by path (ip netns add)" {
	setup_bundle busybox
	ns=prt-${TEST_DIR##*.}
	ip netns add "$ns"
	on_teardown "ip netns del $ns"
	# A mark only this namespace has (no dummy module is needed).
	ip -n "$ns" link set lo mtu 12345
	want=$(stat -L -c %i "/run/netns/$ns")
	cfg_set --arg p "/run/netns/$ns" \
		'.linux.namespaces = [.linux.namespaces[] | select(.type != "network")] + [{"type": "network", "path": $p}]'
	cfg_args sh -c 'readlink /proc/self/ns/net; cat /sys/class/net/lo/mtu'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "net:[$want]" ] || fail_with "netns ${lines[0]}, wanted net:[$want]"
	[ "${lines[1]}" = 12345 ]
}

@test "a new network namespace has only loopback" {
	setup_bundle busybox
	cfg_args sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
	run_ctr
	assert_status 0
	[ "$output" = lo ]
}
