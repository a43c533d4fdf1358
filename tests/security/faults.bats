#!/usr/bin/env bats
# Fault injection: the runtime dies or a resource fails at each step of
# create.  Afterwards `delete --force` must succeed, a fresh create with the
# same id must work, and nothing may be left: no state dir, cgroup, mount
# under the rootfs, process in the container's cgroup, egress helper or
# network namespace.
#
# kill -9 at a step uses the test-only PROCTOR_TEST_CRASH_AT=<step> hook in
# src/core/container.c (steps: state-dir cgroup fork init-pid hooks network
# state-saved).  A runtime other than proctor ignores it, so those tests
# only run against proctor.

load helpers

STEPS="state-dir cgroup fork init-pid hooks state-saved"

needs_crash_hook() {
	strings "$PROCTOR" 2>/dev/null | grep -q PROCTOR_TEST_CRASH_AT ||
		skip "the runtime under test has no PROCTOR_TEST_CRASH_AT hook"
}

# helper_pids ID: egress helpers (comm proctor-egress) serving container ID
# (they hold its state dir's log open).
helper_pids() {
	local p
	for p in $(pgrep -x proctor-egress); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -qF "$PROCTOR_ROOT/$1/" && echo "$p"
	done
	return 0
}

# recover ID: the engine's reaction to a failed create: delete --force
# (which may say "does not exist" when nothing was made), then check that
# nothing is left and that ID can be created, started and deleted again.
recover() {
	local id=$1
	run pr delete --force "$id"
	if [ "$status" -ne 0 ]; then
		[[ "$output" == *"does not exist"* ]] || fail_with "delete --force $id failed: $output"
		[ ! -e "$PROCTOR_ROOT/$id" ] || fail_with "delete says $id does not exist, but $PROCTOR_ROOT/$id is there"
	fi
	assert_no_leftovers "$id"
	[ -z "$(helper_pids "$id")" ] || fail_with "egress helper left: $(helper_pids "$id")"
	create_ctr "$id" || fail_with "fresh create of $id failed: $(cat "$TEST_DIR/$id.err")"
	pr start "$id"
	pr delete --force "$id"
	assert_no_leftovers "$id"
}

@test "kill -9 of the runtime at each step of create" {
	needs_crash_hook
	setup_bundle busybox
	cfg_args sleep 100
	for step in $STEPS; do
		echo "step $step"
		PROCTOR_TEST_CRASH_AT=$step run create_ctr "$CID"
		[ "$status" -eq 137 ] || fail_with "create was not killed at $step (status $status): $(cat "$TEST_DIR/$CID.err")"
		recover "$CID"
	done
}

@test "kill -9 of the runtime with hooks configured and a rollout network" {
	needs_crash_hook
	setup_bundle busybox
	cfg_args sleep 100
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\":1,\"environment\":{\"network_mode\":\"public\"}}"
		| .hooks.createRuntime = [{"path": "/bin/true"}]'
	for step in hooks network state-saved; do
		echo "step $step"
		PROCTOR_TEST_CRASH_AT=$step run create_ctr "$CID"
		[ "$status" -eq 137 ] || fail_with "create was not killed at $step (status $status): $(cat "$TEST_DIR/$CID.err")"
		pid=$(jq -r .pid "$PROCTOR_ROOT/$CID/state.json" 2>/dev/null || echo 0)
		netns=""
		if [ "${pid:-0}" -gt 0 ]; then netns=$(readlink "/proc/$pid/ns/net" 2>/dev/null || true); fi
		echo "  init pid $pid netns $netns helper $(helper_pids "$CID")"
		recover "$CID"
		if [ -n "$netns" ]; then
			! netns_ids | grep -qxF "$netns" || fail_with "the container's network namespace $netns is still in use"
		fi
	done
}

@test "a full state root (/run) fails create cleanly, and works once there is room" {
	local root=$TEST_DIR/fullrun
	mkdir -p "$root"
	mount -t tmpfs -o size=64k,nr_inodes=64 tmpfs "$root"
	on_teardown "umount -l $root"
	setup_bundle busybox
	cfg_args sleep 100
	dd if=/dev/zero of="$root/fill" bs=4k 2>/dev/null || true
	run --separate-stderr "$PROCTOR" --root "$root" create --bundle "$BUNDLE" "$CID"
	track_id "$CID"
	[ "$status" -ne 0 ] || fail_with "create succeeded on a full root"
	assert_one_error_line
	[ ! -e "$root/$CID" ] || fail_with "state dir left: $(ls -la "$root/$CID")"
	PROCTOR_ROOT=$root assert_no_leftovers "$CID"
	rm -f "$root/fill"
	PROCTOR_ROOT=$root recover "$CID"
}

@test "an unwritable --root fails create cleanly" {
	local root=$TEST_DIR/rofs
	mkdir -p "$root"
	mount -t tmpfs -o ro,size=64k tmpfs "$root"
	on_teardown "umount -l $root"
	setup_bundle busybox
	cfg_args sleep 100
	run --separate-stderr "$PROCTOR" --root "$root/state" create --bundle "$BUNDLE" "$CID"
	[ "$status" -ne 0 ] || fail_with "create succeeded on a read-only root"
	assert_one_error_line
	PROCTOR_ROOT=$root/state assert_no_leftovers "$CID"
	run --separate-stderr "$PROCTOR" --root "$root" create --bundle "$BUNDLE" "$CID"
	[ "$status" -ne 0 ] || fail_with "create succeeded on a read-only root"
	PROCTOR_ROOT=$root assert_no_leftovers "$CID"
	# The same id on a good root works.
	recover "$CID"
}

@test "a missing cgroup controller (hugetlb, rdma) leaves nothing behind" {
	setup_bundle busybox
	cfg_args sleep 100
	local c
	for c in hugetlb rdma; do
		if [ -d "/sys/fs/cgroup/$c" ] || grep -qw "$c" /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null ||
			grep -qw "$c" /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
			echo "$c is available here; the test still checks cleanup"
		fi
	done
	cfg_set '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 1048576}]
		| .linux.resources.rdma = {"mlx5_0": {"hcaHandles": 3, "hcaObjects": 10}}'
	run create_ctr "$CID"
	echo "create: $status $(cat "$TEST_DIR/$CID.err")"
	if [ "$status" -ne 0 ]; then
		grep -c . "$TEST_DIR/$CID.err" | grep -qx 1 || fail_with "more than one error line: $(cat "$TEST_DIR/$CID.err")"
	fi
	cfg_set 'del(.linux.resources.hugepageLimits) | del(.linux.resources.rdma)'
	recover "$CID"
}

@test "a hook that hangs past its timeout fails create and leaves no process" {
	setup_bundle busybox
	cfg_args sleep 100
	local marker=$((RANDOM + 40000))
	for kind in createRuntime prestart; do
		cfg_set --arg k "$kind" --arg m "$marker" '.hooks = {($k): [{"path": "/bin/sleep", "args": ["sleep", $m], "timeout": 1}]}'
		start=$SECONDS
		run create_ctr "$CID"
		echo "$kind: status $status in $((SECONDS - start))s: $(cat "$TEST_DIR/$CID.err")"
		[ "$status" -ne 0 ] || fail_with "create succeeded with a hung $kind hook"
		[ $((SECONDS - start)) -lt 15 ] || fail_with "the hook timeout was not enforced"
		sleep 0.2
		! pgrep -f "sleep $marker" >/dev/null || fail_with "the hung hook is still running: $(pgrep -af "sleep $marker")"
		cfg_set 'del(.hooks)'
		recover "$CID"
	done
}

@test "a console socket that goes away fails create cleanly" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	setup_bundle busybox
	cfg_args sleep 100
	cfg_set '.process.terminal = true'
	local sock=$TEST_DIR/c.sock

	# No listener at all.
	run create_ctr "$CID" --console-socket "$sock"
	[ "$status" -ne 0 ] || fail_with "create succeeded with a missing console socket"
	recover_tty() {
		cfg_set '.process.terminal = false'
		recover "$CID"
		cfg_set '.process.terminal = true'
	}
	recover_tty

	# A listener that accepts and closes at once, and one that accepts
	# and is SIGKILLed before reading anything.
	for mode in close kill; do
		rm -f "$sock"
		python3 -c '
import os, signal, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept()
if sys.argv[2] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
c.close(); s.close()' "$sock" "$mode" &
		local lp=$!
		on_teardown "kill $lp"
		for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.05; done
		run timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" create --console-socket "$sock" --bundle "$BUNDLE" "$CID" </dev/null
		track_id "$CID"
		echo "$mode: status $status: $output"
		[ "$status" -ne 124 ] || fail_with "create hung on a console socket that went away"
		wait "$lp" 2>/dev/null || true
		recover_tty
	done
}
