#!/usr/bin/env bats
# Fault injection: the runtime dies or a resource fails at each step of
# create.  Afterwards `delete --force` must succeed, a fresh create with the
# same id must work, and nothing may be left: no state dir, cgroup, mount
# under the rootfs, process in the container's cgroup, egress helper or
# network namespace.
#
# kill -9 at a step uses the test-only PROCTOR_TEST_CRASH_AT=<step> hook in
# src/lifecycle/container.c (steps: state-dir cgroup fork init-pid hooks network
# state-saved), compiled in only by `configure --enable-fault-injection`
# (tests/run-all.sh's build).  A runtime other than proctor, or a release
# build of it, ignores it, so those tests only run against a test build.

load helpers

STEPS="state-dir cgroup fork init-pid hooks state-saved"

needs_crash_hook() {
	strings "$PROCTOR" 2>/dev/null | grep -q PROCTOR_TEST_CRASH_AT ||
		require_or_skip "the runtime under test has no PROCTOR_TEST_CRASH_AT hook (configure --enable-fault-injection)"
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

# mount_fields: "FSTYPE MOUNTPOINT SUPEROPTIONS" for each mount here.
mount_fields() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; print $(i + 1), $5, $(i + 3) }' /proc/self/mountinfo
}

# controller_available C: C has a cgroup v1 hierarchy of its own, or the
# cgroup2 root offers it (unified or hybrid host), as the runtime sees it.
controller_available() {
	local mp
	mount_fields | awk -v c="$1" '$1 == "cgroup" && ("," $3 ",") ~ ("," c ",") { f = 1 } END { exit !f }' && return 0
	for mp in $(mount_fields | awk '$1 == "cgroup2" { print $2 }'); do
		grep -qw "$1" "$mp/cgroup.controllers" 2>/dev/null && return 0
	done
	return 1
}

# hugetlb_2mb_limit PID: PID's 2 MB hugetlb limit, read back from its cgroup
# (v1 hugetlb hierarchy, else cgroup2).
hugetlb_2mb_limit() {
	local p mp
	p=$(awk -F: '$2 ~ /(^|,)hugetlb(,|$)/ { print $3 }' "/proc/$1/cgroup")
	if [ -n "$p" ]; then
		mp=$(mount_fields | awk '$1 == "cgroup" && ("," $3 ",") ~ /,hugetlb,/ { print $2; exit }')
		cat "$mp$p/hugetlb.2MB.limit_in_bytes"
	else
		p=$(awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup")
		mp=$(mount_fields | awk '$1 == "cgroup2" { print $2; exit }')
		cat "$mp$p/hugetlb.2MB.max"
	fi
}

@test "a cgroup controller the host lacks (hugetlb, rdma) fails create naming it and leaves nothing behind" {
	setup_bundle busybox
	cfg_args sleep 100
	cp "$BUNDLE/config.json" "$TEST_DIR/base.json"
	local c res missing=0
	for c in hugetlb rdma; do
		case $c in
		hugetlb) res='.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]' ;;
		rdma) res='.linux.resources.rdma = {"mlx5_0": {"hcaHandles": 3, "hcaObjects": 10}}' ;;
		esac
		jq "$res" "$TEST_DIR/base.json" >"$BUNDLE/config.json"
		run create_ctr "$CID"
		err=$(cat "$TEST_DIR/$CID.err")
		echo "$c: create status $status: $err"
		if ! controller_available "$c"; then
			# A limit that cannot be applied is an error, never silently dropped.
			missing=$((missing + 1))
			[ "$status" -ne 0 ] || fail_with "create succeeded with a $c limit and no $c controller"
			[ "$(grep -c . <<<"$err")" -eq 1 ] || fail_with "not one error line: $err"
			[[ "$err" == *"no $c controller"* ]] || fail_with "the error does not name the missing $c controller: $err"
		elif [ "$c" = hugetlb ]; then
			# The host has it, so nothing is missing: the limit must be
			# applied (2 pages of 2 MB), or refused for a page size the host
			# lacks.
			if [ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]; then
				[ "$status" -eq 0 ] || fail_with "create failed although the host has hugetlb: $err"
				limit=$(hugetlb_2mb_limit "$(state_of "$CID" pid)")
				echo "hugetlb present: 2MB limit $limit"
				[ "$limit" = 4194304 ] || fail_with "hugetlb 2MB limit is '$limit', wanted 4194304"
			else
				[ "$status" -ne 0 ] && [[ "$err" == *"page size \`2MB\`"* ]] ||
					fail_with "2MB pages are not supported here, create said: $status $err"
			fi
		else
			# rdma present: the limit names a device; without it the
			# kernel refuses rdma.max, with it the limit is applied.
			if [ -e /sys/class/infiniband/mlx5_0 ]; then
				[ "$status" -eq 0 ] || fail_with "create failed although the host has rdma and mlx5_0: $err"
			else
				[ "$status" -ne 0 ] && [[ "$err" == *rdma* ]] || fail_with "an rdma limit on a missing device: $status $err"
			fi
		fi
		cp "$TEST_DIR/base.json" "$BUNDLE/config.json"
		recover "$CID"
	done
	echo "$missing of 2 controllers missing here"
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
	err=$(cat "$TEST_DIR/$CID.err")
	echo "missing: $err"
	[ "$(grep -c . <<<"$err")" -eq 1 ] || fail_with "not one error line: $err"
	[[ "$err" == *"console socket \`$sock\`"* ]] || fail_with "the error does not name the console socket: $err"
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
		# The init sends the pty master after the createRuntime hooks: this
		# one waits (at most 10 s) until the listener is gone (exited, or a
		# zombie), so the master always meets a closed peer.  Without it a
		# slow listener could close after the send, and that create would
		# rightly succeed.  grep -s: the listener may be reaped between the
		# -d test and the read, and the hook's stderr is the runtime's.
		cfg_set --arg w "i=0; while [ \$i -lt 200 ] && [ -d /proc/$lp ] && ! grep -qs '^State:.*Z' /proc/$lp/status; do sleep 0.05; i=\$((i + 1)); done" \
			'.hooks = {"createRuntime": [{"path": "/bin/sh", "args": ["sh", "-c", $w], "timeout": 15}]}'
		run --separate-stderr timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" create --console-socket "$sock" --bundle "$BUNDLE" "$CID" </dev/null
		track_id "$CID"
		echo "$mode: status $status: $stderr"
		[ "$status" -ne 124 ] || fail_with "create hung on a console socket that went away"
		[ "$status" -ne 0 ] || fail_with "create succeeded although the console socket's receiver was gone ($mode)"
		assert_one_error_line
		[[ "$stderr" == *"console socket"* ]] || fail_with "the error does not say the console socket failed: $stderr"
		wait "$lp" 2>/dev/null || true
		cfg_set 'del(.hooks)'
		recover_tty
	done
}
