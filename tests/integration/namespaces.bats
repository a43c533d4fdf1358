#!/usr/bin/env bats
# Namespaces: user namespace with id mappings, uts hostname, pid namespace,
# ipc and cgroup namespaces, the time namespace with linux.timeOffsets, and
# joining existing namespaces by path (network, uts, ipc, pid, user).

load helpers

@test "user namespace: uid_map and gid_map inside show the mapping" {
	setup_bundle busybox
	use_userns
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
	use_userns
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

@test "ipc and cgroup namespaces are new when listed; the cgroup namespace is rooted at the container's cgroup" {
	setup_bundle busybox
	cfg_set 'del(.hostname) | .linux.namespaces = [{"type": "pid"}, {"type": "mount"}, {"type": "ipc"}, {"type": "cgroup"}]'
	cfg_args sh -c 'readlink /proc/self/ns/ipc; readlink /proc/self/ns/cgroup; cat /proc/self/cgroup; echo done; exec sleep 1000'
	create_ctr
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	for i in $(seq 50); do grep -qx done "$TEST_DIR/$CID.out" && break; sleep 0.1; done
	mapfile -t inside <"$TEST_DIR/$CID.out"
	[ "${inside[0]}" != "$(readlink /proc/self/ns/ipc)" ] || fail_with "ipc namespace is the host's: ${inside[0]}"
	[ "${inside[1]}" != "$(readlink /proc/self/ns/cgroup)" ] || fail_with "cgroup namespace is the host's: ${inside[1]}"
	[[ "${inside[0]}" == ipc:\[* ]] && [[ "${inside[1]}" == cgroup:\[* ]] || fail_with "output: ${inside[*]}"
	# The host sees the container in cgroups named after it; inside, the
	# namespace root is that cgroup, so every hierarchy reads "/".
	pid=$(state_of "$CID" pid)
	grep -q -- "$CID" "/proc/$pid/cgroup" || fail_with "host view: $(cat "/proc/$pid/cgroup")"
	n=0
	for l in "${inside[@]:2}"; do
		[ "$l" = done ] && break
		[ "${l##*:}" = / ] || fail_with "not at the namespace root: $l"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail_with "no cgroup lines: ${inside[*]}"
}

@test "without a cgroup namespace the container sees its host cgroup path" {
	# The counterpart of the test above: "/" there comes from the namespace.
	setup_bundle busybox
	cfg_set '.linux.namespaces = [.linux.namespaces[] | select(.type != "cgroup")]'
	cfg_args sh -c 'readlink /proc/self/ns/cgroup; cat /proc/self/cgroup'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "$(readlink /proc/self/ns/cgroup)" ] || fail_with "cgroup namespace not the host's: ${lines[0]}"
	echo "$output" | grep -q -- "/$CID\$" || fail_with "no cgroup path naming $CID: $output"
}

@test "time namespace: linux.timeOffsets shift monotonic and boottime" {
	[ -e /proc/self/timens_offsets ] || skip "no time namespaces in this kernel"
	setup_bundle busybox
	# Two days of boottime, one of monotonic: far beyond the host's own
	# uptime drift during the test.
	cfg_set '.linux.namespaces += [{"type": "time"}]
		| .linux.timeOffsets = {"monotonic": {"secs": 86400, "nanosecs": 0},
			"boottime": {"secs": 172800, "nanosecs": 5}}'
	cfg_args sh -c 'readlink /proc/self/ns/time; cat /proc/self/timens_offsets; cut -d. -f1 /proc/uptime'
	host_before=$(cut -d. -f1 /proc/uptime)
	run_ctr
	host_after=$(cut -d. -f1 /proc/uptime)
	assert_status 0
	[ "${lines[0]}" != "$(readlink /proc/self/ns/time)" ] || fail_with "time namespace is the host's"
	echo "$output" | grep -Eqx 'monotonic +86400 +0' || fail_with "$output"
	echo "$output" | grep -Eqx 'boottime +172800 +5' || fail_with "$output"
	# /proc/uptime is CLOCK_BOOTTIME: the host's plus the offset.
	up=${lines[-1]}
	[ "$up" -ge $((host_before + 172800)) ] && [ "$up" -le $((host_after + 172800 + 1)) ] ||
		fail_with "uptime inside $up, host $host_before..$host_after"
}

@test "linux.timeOffsets without a new time namespace is refused" {
	setup_bundle busybox
	cfg_set '.linux.namespaces = [.linux.namespaces[] | select(.type != "time")]
		| .linux.timeOffsets = {"boottime": {"secs": 10, "nanosecs": 0}}'
	cfg_args true
	track_id "$CID"
	run --separate-stderr pr run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"timeOffsets requires a new time namespace"* ]] || fail_with "stderr: $stderr"
	assert_no_leftovers "$CID"
}

# start_ns_owner: container $CID-a (hostname host-a, a message queue
# prt-a in its ipc namespace, sleeping) whose namespaces others join;
# sets A_PID.
start_ns_owner() {
	local bundle=$BUNDLE
	BUNDLE=$TEST_DIR/bundle-a
	mkdir -p "$BUNDLE"
	cp "$bundle/config.json" "$BUNDLE/"
	cfg_set '.hostname = "host-a"'
	cfg_args sh -c 'touch /dev/mqueue/prt-a && echo ready; exec sleep 1000'
	create_ctr "$CID-a"
	pr start "$CID-a"
	wait_file "$TEST_DIR/$CID-a.out"
	grep -qx ready "$TEST_DIR/$CID-a.out"
	A_PID=$(state_of "$CID-a" pid)
	BUNDLE=$bundle
}

@test "uts, ipc and pid namespaces joined by path: the other container's name, queues and processes" {
	setup_bundle busybox
	start_ns_owner
	# B names no hostname: one set here would rename A's namespace.
	cfg_set --arg p "/proc/$A_PID/ns" 'del(.hostname)
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "uts" and .type != "ipc" and .type != "pid")]
			+ [{"type": "uts", "path": ($p + "/uts")}, {"type": "ipc", "path": ($p + "/ipc")},
			   {"type": "pid", "path": ($p + "/pid")}]'
	cfg_args sh -c 'for n in uts ipc pid; do readlink /proc/self/ns/$n; done; hostname; ls /dev/mqueue;
		echo "self=$$"; ps -o pid,comm | awk "\$1 == 1 { print \"pid1=\" \$2 }"'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "$(readlink "/proc/$A_PID/ns/uts")" ] || fail_with "uts: $output"
	[ "${lines[1]}" = "$(readlink "/proc/$A_PID/ns/ipc")" ] || fail_with "ipc: $output"
	[ "${lines[2]}" = "$(readlink "/proc/$A_PID/ns/pid")" ] || fail_with "pid: $output"
	[ "${lines[3]}" = host-a ] || fail_with "hostname: $output"
	# B's own mqueue mount shows the queue A made in the shared ipc namespace.
	[ "${lines[4]}" = prt-a ] || fail_with "mqueue: $output"
	# A's init is pid 1 there; B is one more process in A's namespace.
	echo "$output" | grep -qx pid1=sleep || fail_with "ps: $output"
	! echo "$output" | grep -qx self=1 || fail_with "B is pid 1: $output"
	# A is untouched.
	[ "$(state_of "$CID-a" status)" = running ]
	run pr exec "$CID-a" hostname
	[ "$output" = host-a ]
}

@test "user namespace joined by path: the other container's mapping and root" {
	setup_bundle busybox
	use_userns
	start_ns_owner
	# B brings no mappings: a joined user namespace has its own already.
	cfg_set --arg p "/proc/$A_PID/ns/user" 'del(.linux.uidMappings, .linux.gidMappings)
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "user")] + [{"type": "user", "path": $p}]'
	cfg_args sh -c 'readlink /proc/self/ns/user; cat /proc/self/uid_map; id -u; echo written >/tmp/b-file; echo rc=$?'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "$(readlink "/proc/$A_PID/ns/user")" ] || fail_with "user ns: $output"
	read -r a b c <<<"${lines[1]}"
	[ "$a $b $c" = "0 100000 65536" ] || fail_with "uid_map: $output"
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = rc=0 ]
	# Written by the mapped root: host uid 100000.
	[ "$(stat -c %u "$ROOTFS/tmp/b-file")" = 100000 ]
}
