#!/usr/bin/env bats
# seccomp beyond plain errno rules (issue #19 item 3): SCMP_ACT_NOTIFY with
# a linux.seccomp.listenerPath on the host, served by the project's own
# listener agent (tests/tools/seccomp-listener: it judges the fd and the
# containerProcessState JSON it receives, and answers the notified
# syscalls), for run and exec, with and without noNewPrivileges; and
# syscalls newer than the profile failing with ENOSYS.

load helpers

# start_listener [--errno N]: (sets LISTENER_PID) the agent on $TEST_DIR/l.sock, a host path
# outside the rootfs; each runtime connection appends its state JSON as a
# line to $TEST_DIR/state, each answered syscall number to state.log.
start_listener() {
	[ -n "${SECCOMP_LISTENER:-}" ] && [ -x "$SECCOMP_LISTENER" ] ||
		require_or_skip "SECCOMP_LISTENER is not set to an executable"
	"$SECCOMP_LISTENER" "$@" "$TEST_DIR/l.sock" "$TEST_DIR/state" 2>"$TEST_DIR/listener.err" &
	LISTENER_PID=$!
	on_teardown "kill $LISTENER_PID"
	local tries=200
	while [ $tries -gt 0 ] && [ ! -S "$TEST_DIR/l.sock" ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	[ -S "$TEST_DIR/l.sock" ]
}

# notify_mkdir NNP: mkdir and mkdirat go to the listener; the rest allowed.
notify_mkdir() {
	cfg_set --arg l "$TEST_DIR/l.sock" --argjson nnp "$1" '.process.noNewPrivileges = $nnp
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $l,
			"listenerMetadata": "agent=proctor-test",
			"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
}

# check_state LINE STATUS_REGEX: line LINE of the state file is a
# containerProcessState for $CID whose state's status matches.  The init
# loads the filter before exec.fifo ("creating") without noNewPrivileges
# (it needs CAP_SYS_ADMIN), as its last step ("created") with it.
check_state() {
	local s
	s=$(sed -n "${1}p" "$TEST_DIR/state")
	echo "$s" | jq -e --arg id "$CID" --arg st "$2" '.ociVersion != null and .fds == ["seccompFd"]
		and .pid > 0 and .metadata == "agent=proctor-test"
		and .state.id == $id and (.state.status | test("^(" + $st + ")$")) and .state.pid == .pid' >/dev/null ||
		fail_with "state line $1: $s"
}

# next_round: the container and listener gone, $TEST_DIR empty again.
next_round() {
	pr delete -f "$CID" >/dev/null 2>&1 || true
	kill "$LISTENER_PID" 2>/dev/null || true
	wait "$LISTENER_PID" 2>/dev/null || true
	rm -rf "${TEST_DIR:?}"/*
}

@test "seccomp notify: a host listenerPath gets the fd and state, the listener lets mkdir run (run, noNewPrivileges true and false)" {
	for nnp in true false; do
		setup_bundle busybox
		start_listener
		notify_mkdir "$nnp"
		cfg_args sh -c 'mkdir /tmp/d && echo made'
		run_ctr
		assert_status 0
		echo "$output" | grep -qx made || fail_with "nnp=$nnp: $output"
		[ -d "$ROOTFS/tmp/d" ]
		[ "$(wc -l <"$TEST_DIR/state")" = 1 ]
		check_state 1 "creating|created"
		grep -Eqx '83|258' "$TEST_DIR/state.log" || fail_with "nnp=$nnp: no mkdir answered"
		next_round
	done
}

@test "seccomp notify: the listener's errno is mkdir's result for run and exec (noNewPrivileges true and false)" {
	for nnp in true false; do
		setup_bundle busybox
		start_listener --errno 13
		notify_mkdir "$nnp"
		cfg_args sh -c 'mkdir /tmp/d 2>&1; sleep 60'
		create_ctr || fail_with "nnp=$nnp: $(cat "$TEST_DIR/$CID.err")"
		pr start "$CID"
		run pr exec "$CID" sh -c 'mkdir /tmp/e 2>&1; echo rc=$?'
		assert_status 0
		assert_output_contains "Permission denied"
		echo "$output" | grep -qx rc=1
		[ ! -e "$ROOTFS/tmp/d" ] && [ ! -e "$ROOTFS/tmp/e" ]
		[ "$(wc -l <"$TEST_DIR/state")" = 2 ] || fail_with "nnp=$nnp: $(cat "$TEST_DIR/state")"
		check_state 1 "creating|created"
		check_state 2 running
		next_round
	done
}

@test "seccomp notify: an unreachable listenerPath fails create with its path, nothing left behind" {
	setup_bundle busybox
	notify_mkdir true
	create_must_fail
	[[ "$stderr" == *"connect to seccomp listener \`$TEST_DIR/l.sock\`"* ]] || fail_with "$stderr"
	assert_no_leftovers "$CID"
}

@test "seccomp: a syscall above the profile's highest fails with ENOSYS, a known denied one keeps the default errno" {
	[ "$(uname -m)" = x86_64 ] || skip "syscall numbers of x86_64"
	setup_bundle bookworm
	# Allow every x86_64 syscall up to rseq (334) but mkdir: the profile
	# knows nothing newer (clone3, faccessat2... glibc falls back).
	names=$(awk '$1 == "#define" && $2 ~ /^__NR_/ && $3 <= 334 { sub(/^__NR_/, "", $2); print $2 }' \
		/usr/include/x86_64-linux-gnu/asm/unistd_64.h | grep -vx 'mkdir\|mkdirat' | jq -R . | jq -cs .)
	[ "$(echo "$names" | jq length)" -gt 300 ]
	# 440 is process_madvise (newer than the profile), 1000 is no syscall
	# yet; 83 is mkdir, known and left to the default (EPERM).  Without
	# architectures (native only) and with docker's three.
	for arches in '[]' '["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]'; do
		cfg_set --argjson n "$names" --argjson a "$arches" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO",
			"architectures": $a, "syscalls": [{"names": $n, "action": "SCMP_ACT_ALLOW"}]}'
		cfg_args perl -e 'for $n (440, 1000) { syscall($n, 0, 0, 0); print "$n=", 0 + $!, "\n" }
			$p = "/tmp/x"; syscall(83, $p, 0755); print "83=", 0 + $!, "\n"'
		run_ctr
		assert_status 0
		echo "$output" | grep -qx 440=38 || fail_with "$arches: $output"
		echo "$output" | grep -qx 1000=38 || fail_with "$arches: $output"
		echo "$output" | grep -qx 83=1 || fail_with "$arches: $output"
	done
}
