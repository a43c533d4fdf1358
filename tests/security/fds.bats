#!/usr/bin/env bats
# CVE-2024-21626 class: no host file descriptor other than stdio, the
# preserved fds and the LISTEN_FDS ones reaches a container process (run,
# exec), and a cwd that points at a descriptor (/proc/self/fd/N) or
# resolves outside the root is refused.  Each test opens extra host fds in
# the runtime's own environment first (a directory fd, the host /, a
# socket), as an engine might leak them.

load helpers

# fds_inside: the fd numbers the container process holds, one per line,
# with their targets, from busybox's ls of /proc/self/fd.  The ls itself
# holds one fd on the directory it lists: drop the fd that points at it.
FDLIST='for f in /proc/self/fd/*; do n=${f##*/}; t=$(readlink $f) || continue; [ -n "$t" ] || continue; case $t in /proc/*/fd) continue;; esac; echo "$n $t"; done'

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
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	run pr exec "$CID" sh -c "$FDLIST" </dev/null 5</ 6<"$TEST_DIR" 7<"$PROCTOR" 9<"$BUNDLE/config.json"
	assert_status 0
	echo "$output"
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "unexpected fds in the exec'd process: $output"
	# Same for the detached and tty-less variant with --preserve-fds 0.
	run pr exec --preserve-fds 0 "$CID" sh -c "$FDLIST" </dev/null 3<"$TEST_DIR" 4</
	assert_status 0
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail_with "unexpected fds with --preserve-fds 0: $output"
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
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	echo x >"$TEST_DIR/x"
	run pr exec --preserve-fds 1 "$CID" sh -c "$FDLIST" </dev/null 3<"$TEST_DIR/x" 4</ 5<"$TEST_DIR"
	assert_status 0
	fds=$(echo "$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 3 " ] || fail_with "wanted 0-3 only: $output"
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
