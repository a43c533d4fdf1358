#!/usr/bin/env bats
# process.terminal: the pty master goes to --console-socket, the process
# gets the slave as its controlling terminal with consoleSize applied.

load helpers

@test "terminal: the process runs on a pty with consoleSize and a controlling tty" {
	setup_bundle busybox
	cfg_set '.process.terminal = true | .process.consoleSize = {"height": 37, "width": 113}'
	cfg_args sh -c 'tty; stty size; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-tty;
		echo "ttynr=$(cut -d" " -f7 /proc/self/stat)"; echo "sid=$(cut -d" " -f6 /proc/self/stat)"'
	start_recvtty "$TEST_DIR/tty.sock" "$TEST_DIR/tty.out"
	create_ctr "$CID" --console-socket "$TEST_DIR/tty.sock" || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_recvtty
	out=$(tr -d '\r' <"$TEST_DIR/tty.out")
	echo "$out" | grep -Eqx '/dev/pts/[0-9]+' || fail_with "tty: $out"
	echo "$out" | grep -qx '37 113' || fail_with "stty size: $out"
	echo "$out" | grep -qx all-tty || fail_with "$out"
	ttynr=$(echo "$out" | sed -n 's/^ttynr=//p')
	[ -n "$ttynr" ] && [ "$ttynr" -ne 0 ] || fail_with "no controlling terminal: $out"
	# Nothing went to the runtime's own stdio.
	[ ! -s "$TEST_DIR/$CID.out" ]
}

@test "terminal: input written to the pty master reaches the process" {
	setup_bundle busybox
	cfg_set '.process.terminal = true'
	cfg_args sh -c 'read line; echo "got:$line"'
	printf 'hello-through-pty\n' >"$TEST_DIR/input"
	start_recvtty "$TEST_DIR/tty.sock" "$TEST_DIR/tty.out" single "$TEST_DIR/input"
	create_ctr "$CID" --console-socket "$TEST_DIR/tty.sock" || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_recvtty
	tr -d '\r' <"$TEST_DIR/tty.out" | grep -qx 'got:hello-through-pty' ||
		fail_with "output: $(cat "$TEST_DIR/tty.out")"
	wait_status "$CID" stopped
}

@test "terminal without --console-socket is refused by create" {
	setup_bundle busybox
	cfg_set '.process.terminal = true'
	cfg_args true
	run create_ctr
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
}

# Foreground run and exec with a terminal and no --console-socket: the
# runtime itself relays between its own terminal (script(1) gives it one)
# and the container's pty (pr_console_proxy): input reaches the process,
# its output comes back, the exit status is the process's, and our
# terminal's settings are restored afterwards.
@test "terminal: foreground run and exec relay the runtime's own terminal and return the exit status" {
	command -v script >/dev/null || skip "script(1) is not installed"
	setup_bundle busybox
	cfg_set '.process.terminal = true'
	cfg_args sh -c 'tty; read line; echo "got:$line"; exit 3'
	printf 'hello-run\n' >"$TEST_DIR/input"
	run timeout 30 script -qec "$PROCTOR --root $PROCTOR_ROOT run --bundle $BUNDLE $CID; echo run-status=\$?; echo after=\$(stty -a | grep -o -- '-\\?icanon')" /dev/null <"$TEST_DIR/input"
	out=$(tr -d '\r' <<<"$output")
	grep -Eqx '/dev/pts/[0-9]+' <<<"$out" || fail_with "$out"
	grep -qx 'got:hello-run' <<<"$out" || fail_with "$out"
	grep -qx 'run-status=3' <<<"$out" || fail_with "$out"
	# canonical mode is back after the run (the proxy's raw mode undone)
	grep -qx 'after=icanon' <<<"$out" || fail_with "terminal settings not restored: $out"

	cfg_set '.process.terminal = false'
	cfg_args sleep 1000
	create_ctr "$CID" || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	printf 'hello-exec\n' >"$TEST_DIR/input"
	run timeout 30 script -qec "$PROCTOR --root $PROCTOR_ROOT exec -t $CID sh -c 'read line; echo got:\$line; exit 4'; echo exec-status=\$?" /dev/null <"$TEST_DIR/input"
	out=$(tr -d '\r' <<<"$output")
	grep -qx 'got:hello-exec' <<<"$out" || fail_with "$out"
	grep -qx 'exec-status=4' <<<"$out" || fail_with "$out"
}
