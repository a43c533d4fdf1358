#!/usr/bin/env bats
# CVE-2024-21626 class: no host file descriptor other than stdio, the
# preserved fds and the LISTEN_FDS ones reaches a container process (run,
# create + start, exec, exec --detach), and a cwd that points at a
# descriptor (/proc/self/fd/N) or resolves outside the root is refused.
# Each test opens extra host fds in the runtime's own environment first (a
# directory fd, the host /, a socket), as an engine might leak them.

load helpers

# fds_inside: the fd numbers the container process holds, one per line,
# with their targets, from busybox's ls of /proc/self/fd.  The ls itself
# holds one fd on the directory it lists: drop the fd that points at it.
FDLIST='for f in /proc/self/fd/*; do n=${f##*/}; t=$(readlink $f) || continue; [ -n "$t" ] || continue; case $t in /proc/*/fd) continue;; esac; echo "$n $t"; done'

# running_sleeper: a busybox container $CID running `sleep 100`.
running_sleeper() {
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
}

# only_stdio_listed OUT ERR: once OUT (a $FDLIST run ending in END) is
# complete, it lists fds 0, 1 and 2 only, fd 2 is the file ERR, and ERR is
# empty.  Leaves the listing in $output.
only_stdio_listed() {
	wait_end "$1"
	output=$(grep -vx END "$1")
	echo "$output"
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "unexpected fds: $output"
	echo "$output" | grep -qx "2 $2" || fail_with "fd 2 is not the stderr file $2: $output"
	[ ! -s "$2" ] || fail_with "stderr: $(cat "$2")"
}

@test "run: only stdio reaches the container, even with host fds open in the runtime" {
	setup_bundle busybox
	cfg_args sh -c "$FDLIST"
	# fds 5-9 open in the runtime: a host directory, the host root, a file,
	# a socket-ish pipe.  None may survive into the container.
	run pr run --bundle "$BUNDLE" "$CID" </dev/null 5</ 6<"$TEST_DIR" 7<"$PROCTOR" 8< <(sleep 5) 9<"$BUNDLE/config.json"
	assert_status 0
	echo "$output"
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "unexpected fds in the container: $output"
	! echo "$output" | grep -qE "$TEST_DIR|proctor|config.json" || fail_with "a host path leaked: $output"
}

@test "exec: only stdio reaches an exec'd process" {
	running_sleeper
	run pr exec "$CID" sh -c "$FDLIST" </dev/null 5</ 6<"$TEST_DIR" 7<"$PROCTOR" 9<"$BUNDLE/config.json"
	assert_status 0
	echo "$output"
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "unexpected fds in the exec'd process: $output"
	# Same with an explicit --preserve-fds 0 and host fds at 3 and 4 (the
	# detached variant is the "exec --detach" test below).
	run pr exec --preserve-fds 0 "$CID" sh -c "$FDLIST" </dev/null 3<"$TEST_DIR" 4</
	assert_status 0
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "unexpected fds with --preserve-fds 0: $output"
}

# wait_end FILE: wait (at most 10 s) for the END line the listing ends with.
wait_end() {
	local i=0
	while ! grep -qx END "$1" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	grep -qx END "$1" || fail_with "no listing in $1: $(cat "$1" 2>/dev/null)"
}

@test "create + start: only stdio reaches the init, with the container's stdio in files" {
	setup_bundle busybox
	# The engines' path: create with the container's stdio on the runtime's
	# own (here files), then start.  Both commands hold host fds 5-9.
	cfg_args sh -c "$FDLIST; echo END"
	track_id "$CID"
	pr create --bundle "$BUNDLE" "$CID" </dev/null >"$TEST_DIR/c.out" 2>"$TEST_DIR/c.err" \
		5</ 6<"$TEST_DIR" 7<"$PROCTOR" 8< <(sleep 5 3>&-) 9<"$BUNDLE/config.json" ||
		fail_with "create failed: $(cat "$TEST_DIR/c.err")"
	pr start "$CID" </dev/null 5</ 6<"$TEST_DIR" 7<"$PROCTOR" 8< <(sleep 5 3>&-) 9<"$BUNDLE/config.json"
	only_stdio_listed "$TEST_DIR/c.out" "$TEST_DIR/c.err"
	# stdin is the one create was given.
	echo "$output" | grep -qx "0 /dev/null" || fail_with "fd 0 is not create's /dev/null: $output"
}

@test "exec --detach: only stdio reaches the process, with its output in a file" {
	running_sleeper
	pr exec --detach "$CID" sh -c "$FDLIST; echo END" </dev/null >"$TEST_DIR/x.out" 2>"$TEST_DIR/x.err" \
		5</ 6<"$TEST_DIR" 7<"$PROCTOR" 8< <(sleep 5 3>&-) 9<"$BUNDLE/config.json" ||
		fail_with "exec --detach failed: $(cat "$TEST_DIR/x.err")"
	only_stdio_listed "$TEST_DIR/x.out" "$TEST_DIR/x.err"
}

@test "preserved fds are the only extra descriptors" {
	setup_bundle busybox
	cfg_args sh -c "$FDLIST"
	echo three >"$TEST_DIR/three"
	echo four >"$TEST_DIR/four"
	run pr run --preserve-fds 2 --bundle "$BUNDLE" "$CID" </dev/null 3<"$TEST_DIR/three" 4<"$TEST_DIR/four" 5</ 6<"$TEST_DIR"
	assert_status 0
	echo "$output"
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 3 4 " ] || fail_with "wanted 0-4 only: $output"
	echo "$output" | grep -q "^3 $TEST_DIR/three$"
	echo "$output" | grep -q "^4 $TEST_DIR/four$"
}

@test "LISTEN_FDS in the runtime's env never passes more than its own fds" {
	setup_bundle busybox
	cfg_args sh -c "$FDLIST"
	echo three >"$TEST_DIR/three"
	# systemd socket activation: LISTEN_FDS=1 names fd 3 only; fds 4-6 are
	# host fds that must stay behind.
	LISTEN_FDS=1 LISTEN_PID=$$ run pr run --bundle "$BUNDLE" "$CID" </dev/null 3<"$TEST_DIR/three" 4</ 5<"$TEST_DIR" 6<"$PROCTOR"
	assert_status 0
	echo "$output"
	extra=$(echo "$output" | awk '$1 > 3 {print}')
	[ -z "$extra" ] || fail_with "fds beyond LISTEN_FDS reached the container: $extra"
	! echo "$output" | grep -E '^3 ' | grep -vq "$TEST_DIR/three" || fail_with "fd 3 is not the listen fd: $output"
}

@test "exec --preserve-fds passes exactly the named fds" {
	running_sleeper
	echo x >"$TEST_DIR/x"
	run pr exec --preserve-fds 1 "$CID" sh -c "$FDLIST" </dev/null 3<"$TEST_DIR/x" 4</ 5<"$TEST_DIR"
	assert_status 0
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 3 " ] || fail_with "wanted 0-3 only: $output"
}

# A number in the --preserve-fds range that the caller left free can be
# taken by one of the runtime's own fds: the state directory in exec, the
# exec.fifo in create.  Handing that on would give the container a host
# directory (/proc/self/fd/N/../..) to escape through.
@test "--preserve-fds never passes a runtime fd in a number the caller left free" {
	running_sleeper
	echo x >"$TEST_DIR/x"
	# Nothing open at 3 and 4; then a gap at 4 only.
	run pr exec --preserve-fds 2 "$CID" sh -c "$FDLIST" </dev/null 3<&- 4<&-
	assert_status 0
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "exec, no fds passed: $output"
	run pr exec --preserve-fds 2 "$CID" sh -c "$FDLIST" </dev/null 3<"$TEST_DIR/x" 4<&-
	assert_status 0
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 3 " ] || fail_with "exec, fd 3 passed: $output"
	! grep -qF "$PROCTOR_ROOT" <<<"$output" || fail_with "the state directory reached the container: $output"
	# create + start with the same gap.
	cfg_args sh -c "$FDLIST"
	track_id "$CID-c"
	pr create --bundle "$BUNDLE" --preserve-fds 2 "$CID-c" </dev/null >"$TEST_DIR/c.out" 2>&1 3<&- 4<&-
	pr start "$CID-c"
	wait_status "$CID-c" stopped
	fds=$(awk '{print $1}' "$TEST_DIR/c.out" | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "create: $(cat "$TEST_DIR/c.out")"
}

@test "cwd /proc/self/fd/N is refused for run and exec" {
	setup_bundle busybox
	cfg_args pwd
	for n in 3 4 5 6 7 8 9; do
		cfg_set --arg c "/proc/self/fd/$n" '.process.cwd = $c'
		run pr run --bundle "$BUNDLE" "$CID-$n" </dev/null 3<"$TEST_DIR" 4</ 5<"$TEST_DIR" 6</ 7</ 8</ 9</
		track_id "$CID-$n"
		[ "$status" -ne 0 ] || fail_with "cwd /proc/self/fd/$n accepted: $output"
		! echo "$output" | grep -qx "$TEST_DIR" || fail_with "the process ran in the host dir"
	done
	# thread-self too.
	cfg_set '.process.cwd = "/proc/thread-self/fd/3"'
	run pr run --bundle "$BUNDLE" "$CID-t" </dev/null 3<"$TEST_DIR"
	track_id "$CID-t"
	[ "$status" -ne 0 ] || fail_with "cwd /proc/thread-self/fd/3 accepted: $output"

	cfg_args sleep 100
	cfg_set '.process.cwd = "/"'
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	for n in 3 4 5 6 7; do
		run pr exec --cwd "/proc/self/fd/$n" "$CID" pwd </dev/null 3<"$TEST_DIR" 4</ 5<"$TEST_DIR" 6</ 7</
		[ "$status" -ne 0 ] || fail_with "exec --cwd /proc/self/fd/$n accepted: $output"
	done
	# The container keeps running after the refused execs.
	[ "$(state_of "$CID" status)" = running ]
}

@test "a cwd symlink in the image that points at /proc/self/fd is refused" {
	setup_bundle busybox
	# A hostile image: /work is a symlink to a descriptor path, so the
	# textual check alone would not catch it.
	ln -s /proc/self/fd/5 "$ROOTFS/work"
	cfg_args pwd
	cfg_set '.process.cwd = "/work"'
	run pr run --bundle "$BUNDLE" "$CID" </dev/null 5<"$TEST_DIR"
	echo "$output"
	[ "$status" -ne 0 ] || ! echo "$output" | grep -qx "$TEST_DIR" || fail_with "the process ran in the host dir"
	! echo "$output" | grep -q "$TEST_DIR" || fail_with "a host path leaked: $output"
}
