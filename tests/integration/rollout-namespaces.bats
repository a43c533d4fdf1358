#!/usr/bin/env bats
# rollout-namespaces.bats - the namespaces a rollout gets when the engine
# hands it shared ones (src/rollout/namespaces.c), without containerd: what
# a Kubernetes pod's container looks like to the runtime.  CRI makes every
# container of a pod join the pause container's ipc, uts and network
# namespaces by path (/proc/PAUSE/ns/...), all owned by the initial user
# namespace; a hostIPC / hostPID / hostNetwork pod's paths name the host's
# own.  Here a host process made with unshare(1) plays the pause container.

load helpers

POLICY='{"version": 1, "environment": {"network_mode": "none"}}'

# start_pod_owner: a host process in new ipc and uts namespaces of the
# initial user namespace (as the pause container's are), hostname pod-a,
# with a message queue prt-pod in its ipc namespace; sets POD_PID.
start_pod_owner() {
	mkdir -p "$TEST_DIR/mq"
	unshare --ipc --uts --mount --propagation private sh -c '
		hostname pod-a && mount -t mqueue mqueue "$1" && touch "$1/prt-pod" &&
		echo ready && exec sleep 1000' sh "$TEST_DIR/mq" >"$TEST_DIR/pod.out" 2>&1 3>&- &
	POD_PID=$!
	on_teardown "kill $POD_PID"
	wait_file "$TEST_DIR/pod.out"
	grep -qx ready "$TEST_DIR/pod.out" || fail_with "pod owner: $(cat "$TEST_DIR/pod.out")"
}

# join_pod NS...: config.json joins the pod owner's namespaces NS by path.
join_pod() {
	local ns
	for ns in "$@"; do
		cfg_set --arg t "$ns" --arg p "/proc/$POD_PID/ns/$ns" \
			'.linux.namespaces = [.linux.namespaces[] | select(.type != $t)] + [{"type": $t, "path": $p}]'
	done
}

# as_rollout: the bundle's config carries the rollout annotation.
as_rollout() { cfg_set --arg p "$POLICY" '.annotations["run.proctor.rollout"] = $p'; }

# start_sleeper: create and start the bundle running `sleep 1000`.
start_sleeper() {
	cfg_args sleep 1000
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_status "$CID" running
}

@test "rollout in a pod's ipc and uts namespaces: create mounts mqueue in a private ipc namespace, the pod's hostname is kept" {
	setup_bundle busybox
	start_pod_owner
	cfg_set 'del(.hostname)'
	join_pod ipc uts
	as_rollout
	start_sleeper
	run pr exec "$CID" sh -c 'readlink /proc/self/ns/ipc; readlink /proc/self/ns/uts; hostname; ls -A /dev/mqueue; echo end'
	assert_status 0
	[ "${lines[0]}" != "$(readlink /proc/$POD_PID/ns/ipc)" ] || fail_with "the agent is in the pod's ipc namespace: $output"
	[ "${lines[1]}" != "$(readlink /proc/$POD_PID/ns/uts)" ] || fail_with "the agent is in the pod's uts namespace: $output"
	[ "${lines[2]}" = pod-a ] || fail_with "hostname: $output"
	# A private ipc namespace: the pod's queue is not there.
	[ "${lines[3]}" = end ] || fail_with "mqueue: $output"
	[ "$(nsenter -t "$POD_PID" -u hostname)" = pod-a ]
}

@test "rollout in a pod's namespaces: agent, setup and verifier execs all join" {
	setup_bundle busybox
	start_pod_owner
	join_pod ipc uts
	as_rollout
	start_sleeper
	local init_ipc phase
	init_ipc=$(readlink "/proc/$(state_of "$CID" pid)/ns/ipc")
	for phase in agent setup verifier; do
		run pr exec --env PROCTOR_PHASE=$phase "$CID" sh -c 'readlink /proc/self/ns/ipc; readlink /proc/self/ns/uts'
		assert_status 0
		[ "${lines[0]}" = "$init_ipc" ] || fail_with "$phase: ipc: $output"
	done
}

@test "rollout with a config hostname in a pod's uts namespace: the config's name wins" {
	setup_bundle busybox
	start_pod_owner
	cfg_set '.hostname = "from-config"'
	join_pod ipc uts
	as_rollout
	start_sleeper
	run pr exec "$CID" hostname
	assert_status 0
	[ "$output" = from-config ]
	[ "$(nsenter -t "$POD_PID" -u hostname)" = pod-a ]
}

@test "exec joins a namespace owned outside the container's user namespace before joining the user namespace" {
	setup_bundle busybox
	use_userns
	start_pod_owner
	# The pod's ipc namespace belongs to the initial user namespace, where
	# the container's root may not mount mqueue: no /dev/mqueue mount.
	cfg_set '.mounts = [.mounts[] | select(.destination != "/dev/mqueue")]'
	join_pod ipc uts
	cfg_set 'del(.hostname)'
	start_sleeper
	run pr exec "$CID" sh -c 'readlink /proc/self/ns/ipc; readlink /proc/self/ns/user; hostname'
	assert_status 0
	[ "${lines[0]}" = "$(readlink /proc/$POD_PID/ns/ipc)" ] || fail_with "ipc: $output"
	[ "${lines[1]}" = "$(readlink "/proc/$(state_of "$CID" pid)/ns/user")" ] || fail_with "user: $output"
	[ "${lines[2]}" = pod-a ] || fail_with "hostname: $output"
}

# refused_create: create fails with one error line on stderr ($stderr) and
# leaves nothing behind.
refused_create() {
	cfg_args true
	track_id "$CID"
	run --separate-stderr pr create --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 0 ] || fail_with "create succeeded"
	assert_one_error_line
	assert_no_leftovers "$CID"
}

@test "rollout refused: the host's ipc namespace by path (a hostIPC pod)" {
	setup_bundle busybox
	# The test's own shell is in the host's namespaces, as a hostIPC pod's
	# pause container is.
	cfg_set --arg p "/proc/$$/ns/ipc" '.linux.namespaces = [.linux.namespaces[] | select(.type != "ipc")] + [{"type": "ipc", "path": $p}]'
	as_rollout
	refused_create
	[[ "$stderr" == *"rollout refused: the container would share the host's ipc namespace (hostIPC, --ipc=host); a rollout needs its own pid, ipc and network namespaces"* ]] ||
		fail_with "stderr: $stderr"
}

@test "rollout refused: the host's pid and network namespaces, named together (hostPID, hostNetwork)" {
	setup_bundle busybox
	# CRI gives a hostNetwork pod's container a path to the host's network
	# namespace; without a pid entry the container inherits the host's.
	cfg_set '.linux.namespaces = [.linux.namespaces[] | select(.type != "pid" and .type != "network")]
		+ [{"type": "network", "path": "/proc/self/ns/net"}]'
	as_rollout
	refused_create
	[[ "$stderr" == *"share the host's pid, network namespaces (hostPID, --pid=host; hostNetwork, --network=host)"* ]] ||
		fail_with "stderr: $stderr"
}

@test "rollout refused: another process's pid namespace (shareProcessNamespace)" {
	setup_bundle busybox
	start_pod_owner
	unshare --pid --fork sleep 1000 3>&- &
	local owner=$!
	on_teardown "kill $owner"
	local child
	wait_until_child() { child=$(pgrep -P "$owner" sleep); [ -n "$child" ]; }
	for _ in $(seq 50); do wait_until_child && break; sleep 0.1; done
	[ -n "$child" ] || fail_with "no sleeper in the new pid namespace"
	cfg_set --arg p "/proc/$child/ns/pid" '.linux.namespaces = [.linux.namespaces[] | select(.type != "pid")] + [{"type": "pid", "path": $p}]'
	as_rollout
	refused_create
	[[ "$stderr" == *"rollout refused: the container would join the pid namespace at \`/proc/$child/ns/pid\` (a pod with shareProcessNamespace)"* ]] ||
		fail_with "stderr: $stderr"
}

@test "a pod sandbox (pause) container with the rollout annotation stays a plain container" {
	local key
	for key in io.kubernetes.cri.container-type io.kubernetes.cri-o.ContainerType; do
		setup_bundle busybox
		as_rollout
		cfg_set --arg k "$key" '.annotations[$k] = "sandbox"'
		cfg_args sh -c 'cat /proc/self/uid_map; ls /sys/class/net | sort | tr "\n" " "; echo; readlink /proc/self/ns/user'
		run_ctr
		assert_status 0
		# No user namespace added: the whole id range maps through, and
		# the namespace is the host's (a rollout's map reads the same).
		read -r a b c <<<"${lines[0]}"
		[ "$a $b $c" = "0 0 4294967295" ] || fail_with "$key: uid_map: $output"
		[ "${lines[2]}" = "$(readlink /proc/self/ns/user)" ] || fail_with "$key: a user namespace was added: $output"
		pr delete -f "$CID" >/dev/null 2>&1 || true
		rm -rf "$BUNDLE"
	done
}

@test "rollout: containerd 2.x's net.ipv4.ping_group_range (every gid) is kept under the agent's full gid map" {
	setup_bundle busybox
	# containerd 2.x (enable_unprivileged_icmp) writes this for every pod
	# container it does not know to be in a user namespace.
	cfg_set '.linux.sysctl = {"net.ipv4.ping_group_range": "0 2147483647", "net.ipv4.ip_unprivileged_port_start": "0"}'
	as_rollout
	cfg_args sh -c 'cat /proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/ip_unprivileged_port_start'
	run_ctr
	assert_status 0
	[ "$(printf '%s\n' "${lines[0]}" | tr -s '\t ' ' ')" = "0 2147483647" ] || fail_with "ping_group_range: $output"
	[ "${lines[1]}" = 0 ] || fail_with "ip_unprivileged_port_start: $output"
}

@test "rollout: containerd 2.x's net.ipv4.ping_group_range (every gid) is clamped to an engine-given gid map" {
	setup_bundle busybox
	use_userns
	cfg_set '.linux.sysctl = {"net.ipv4.ping_group_range": "0 2147483647", "net.ipv4.ip_unprivileged_port_start": "0"}'
	as_rollout
	cfg_args sh -c 'cat /proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/ip_unprivileged_port_start'
	run_ctr
	assert_status 0
	[ "$(printf '%s\n' "${lines[0]}" | tr -s '\t ' ' ')" = "0 65535" ] || fail_with "ping_group_range: $output"
	[ "${lines[1]}" = 0 ] || fail_with "ip_unprivileged_port_start: $output"
}

@test "rollout agent: uid_map and gid_map read like a plain container's (0 0 4294967295), chown to any id works" {
	setup_bundle busybox
	# chown needs CAP_CHOWN, which `proctor spec` leaves out (engines grant it).
	cfg_set '.process.capabilities |= with_entries(.value += ["CAP_CHOWN"])'
	as_rollout
	start_sleeper
	run pr exec "$CID" sh -c 'cat /proc/self/uid_map /proc/self/gid_map; readlink /proc/self/ns/user
		touch /tmp/hi && chown 4000000000:3000000000 /tmp/hi && stat -c %u:%g /tmp/hi'
	assert_status 0
	local a b c
	read -r a b c <<<"${lines[0]}"
	[ "$a $b $c" = "0 0 4294967295" ] || fail_with "uid_map: $output"
	read -r a b c <<<"${lines[1]}"
	[ "$a $b $c" = "0 0 4294967295" ] || fail_with "gid_map: $output"
	# Still a user namespace of its own (the map is not the host's namespace).
	[ "${lines[2]}" != "$(readlink /proc/self/ns/user)" ] || fail_with "the agent is in the host's user namespace"
	[ "${lines[3]}" = 4000000000:3000000000 ] || fail_with "chown: $output"
	# The same ids on the host: the map is the identity.
	[ "$(stat -c %u:%g "$ROOTFS/tmp/hi")" = 4000000000:3000000000 ]
	# The verifier (its own user namespace, the same map) reads and changes them.
	run pr exec --env PROCTOR_PHASE=verifier "$CID" sh -c 'cat /proc/self/uid_map; stat -c %u:%g /tmp/hi; chown 5:6 /tmp/hi && stat -c %u:%g /tmp/hi'
	assert_status 0
	read -r a b c <<<"${lines[0]}"
	[ "$a $b $c" = "0 0 4294967295" ] || fail_with "verifier uid_map: $output"
	[ "${lines[1]}" = 4000000000:3000000000 ] && [ "${lines[2]}" = 5:6 ] || fail_with "verifier: $output"
}
