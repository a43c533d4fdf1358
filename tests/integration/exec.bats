#!/usr/bin/env bats
# exec into a running container: namespaces, env, cwd, user, --process,
# exit codes, --detach, a tty through --console-socket, --cap and
# --no-new-privs.

load helpers

# thaw_by_hand: thaws $CID's cgroups through the cgroup files, for a test
# that found a process stuck in the frozen container (pause and resume may
# then be stuck behind it).
thaw_by_hand() {
	local d
	for d in $(find /sys/fs/cgroup -maxdepth 5 -type d -name "$CID" 2>/dev/null); do
		[ -w "$d/freezer.state" ] && echo THAWED >"$d/freezer.state"
		[ -w "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze"
	done
	true
}

# A running busybox container ($CID) whose init is `sleep`.
start_sleeper() {
	setup_bundle busybox
	cfg_set '.process.env += ["FROM_CONFIG=yes"]'
	cfg_args sleep 1000
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
}

@test "exec runs in the container's pid namespace (ps shows the init)" {
	start_sleeper
	run pr exec "$CID" ps -o pid,comm
	assert_status 0
	echo "$output" | grep -Eq '^ *1 +sleep$' || fail_with "no sleep at pid 1: $output"
	run pr exec "$CID" sh -c 'echo $$'
	assert_status 0
	[ "$output" -gt 1 ]
	# Same mount namespace as the init.
	pid=$(state_of "$CID" pid)
	run pr exec "$CID" readlink /proc/self/ns/mnt
	[ "$output" = "$(readlink "/proc/$pid/ns/mnt")" ]
}

@test "exec --env adds variables to the process env" {
	start_sleeper
	run pr exec --env FOO=bar --env BAZ='with space' "$CID" env
	assert_status 0
	echo "$output" | grep -qx 'FOO=bar'
	echo "$output" | grep -qx 'BAZ=with space'
	echo "$output" | grep -q '^PATH='
}

@test "exec --cwd sets the working directory" {
	start_sleeper
	run pr exec --cwd /etc "$CID" pwd
	assert_status 0
	[ "$output" = /etc ]
}

@test "exec --user 1000:1000 runs as that user" {
	start_sleeper
	run pr exec --user 1000:1000 "$CID" id -u
	assert_status 0
	[ "$output" = 1000 ]
	run pr exec --user 1000:1000 "$CID" id -g
	[ "$output" = 1000 ]
	# And without --user, as the config's user (root).
	run pr exec "$CID" id -u
	[ "$output" = 0 ]
}

@test "exec --process FILE takes the whole process from JSON" {
	start_sleeper
	cat >"$TEST_DIR/process.json" <<-'J'
	{
		"terminal": false,
		"user": {"uid": 1000, "gid": 1000},
		"args": ["sh", "-c", "echo $PROC_VAR; pwd; id -u"],
		"env": ["PATH=/bin:/usr/bin", "PROC_VAR=from-process-json"],
		"cwd": "/tmp"
	}
	J
	run pr exec --process "$TEST_DIR/process.json" "$CID"
	assert_status 0
	[ "${lines[0]}" = from-process-json ]
	[ "${lines[1]}" = /tmp ]
	[ "${lines[2]}" = 1000 ]
}

@test "exec --process with malformed JSON names the file, and the container keeps running" {
	start_sleeper
	printf '{"args": ["true"' >"$TEST_DIR/bad.json"
	run pr exec --process "$TEST_DIR/bad.json" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad.json: invalid process JSON: "* ]] || fail_with "message: $output"
	[[ "$output" != *config.json* ]] || fail_with "message names config.json: $output"
	[ "$(state_of "$CID" status)" = running ]
}

@test "exec into a paused container fails at once; --ignore-paused starts once resumed" {
	start_sleeper
	pr pause "$CID"
	# Output to a file, not through `run`: a runtime that lets the process
	# join the frozen cgroup leaves it holding whatever pipe it was given.
	local rc=0
	timeout -k 2 10 "$PROCTOR" --root "$PROCTOR_ROOT" exec "$CID" true >"$TEST_DIR/exec.out" 2>&1 || rc=$?
	# 255: exec's own failure, as runc's (issue #19), not the process's code.
	if [ "$rc" -ne 255 ]; then
		thaw_by_hand
		fail_with "exec into a paused container: status $rc: $(cat "$TEST_DIR/exec.out")"
	fi
	grep -q "cannot exec in a paused container" "$TEST_DIR/exec.out" || fail_with "message: $(cat "$TEST_DIR/exec.out")"
	[ "$(state_of "$CID" status)" = paused ]
	# waits in the frozen cgroup; resume (and state) must not wait for it
	timeout -k 2 20 "$PROCTOR" --root "$PROCTOR_ROOT" exec --ignore-paused "$CID" sh -c 'echo ran >/tmp/ignored' 3>&- &
	local ep=$!
	sleep 0.5
	kill -0 "$ep" || fail_with "exec --ignore-paused returned while paused"
	run timeout -k 2 10 "$PROCTOR" --root "$PROCTOR_ROOT" resume "$CID"
	[ "$status" -eq 0 ] || fail_with "resume: status $status: $output"
	wait "$ep" || fail_with "exec --ignore-paused failed after resume"
	run pr exec "$CID" cat /tmp/ignored
	[ "$output" = ran ]
}

@test "a running exec does not hold up pause, resume or delete" {
	start_sleeper
	pr exec "$CID" sleep 30 3>&- &
	local ep=$!
	sleep 0.5
	run timeout -k 2 5 "$PROCTOR" --root "$PROCTOR_ROOT" pause "$CID"
	[ "$status" -eq 0 ] || fail_with "pause waited for the exec: status $status: $output"
	run timeout -k 2 5 "$PROCTOR" --root "$PROCTOR_ROOT" resume "$CID"
	[ "$status" -eq 0 ] || fail_with "resume: status $status: $output"
	run timeout -k 2 10 "$PROCTOR" --root "$PROCTOR_ROOT" delete -f "$CID"
	[ "$status" -eq 0 ] || fail_with "delete -f waited for the exec: status $status: $output"
	wait "$ep" || true
}

@test "exec propagates the exit code and leaves the container running" {
	start_sleeper
	run pr exec "$CID" sh -c 'exit 42'
	assert_status 42
	[ "$(state_of "$CID" status)" = running ]
	run pr exec "$CID" true
	assert_status 0
}

@test "exec of a missing binary fails and leaves the container running" {
	start_sleeper
	run pr exec "$CID" /no/such/binary
	[ "$status" -ne 0 ]
	[ "$(state_of "$CID" status)" = running ]
	run pr exec "$CID" echo still-here
	assert_status 0
	[ "$output" = still-here ]
}

@test "exec --detach with --pid-file" {
	start_sleeper
	pr exec --detach --pid-file "$TEST_DIR/exec.pid" "$CID" sh -c 'echo detached >/tmp/marker; exec sleep 500' \
		</dev/null >"$TEST_DIR/exec.out" 2>&1
	wait_file "$TEST_DIR/exec.pid"
	epid=$(cat "$TEST_DIR/exec.pid")
	kill -0 "$epid"
	initpid=$(state_of "$CID" pid)
	[ "$(readlink "/proc/$epid/ns/pid")" = "$(readlink "/proc/$initpid/ns/pid")" ]
	[ "$(readlink "/proc/$epid/ns/mnt")" = "$(readlink "/proc/$initpid/ns/mnt")" ]
	for i in $(seq 50); do
		[ "$(cat "/proc/$epid/comm")" = sleep ] && break
		sleep 0.1
	done
	[ "$(cat "/proc/$epid/comm")" = sleep ]
	run pr exec "$CID" cat /tmp/marker
	[ "$output" = detached ]
	pr delete -f "$CID"
	wait_gone "$epid"
	assert_no_leftovers "$CID"
}

@test "exec -t with --console-socket gives the process a pty" {
	start_sleeper
	start_recvtty "$TEST_DIR/tty.sock" "$TEST_DIR/tty.out"
	pr exec -t --detach --console-socket "$TEST_DIR/tty.sock" "$CID" sh -c 'tty; echo done' \
		</dev/null >"$TEST_DIR/exec.out" 2>&1
	wait_recvtty
	out=$(tr -d '\r' <"$TEST_DIR/tty.out")
	echo "$out" | grep -Eqx '/dev/pts/[0-9]+' || fail_with "tty printed: $out"
	echo "$out" | grep -qx done
}

# cap_mask FIELD: the Cap* line FIELD of $output (a /proc/PID/status dump)
# as a number.
cap_mask() {
	printf '%d' "0x$(echo "$output" | awk -v k="$1:" '$1 == k { print $2 }')"
}

@test "exec --cap adds the capability to the exec'd process only" {
	start_sleeper
	# The config's sets lack CAP_CHOWN (bit 0): chown to another user fails.
	[ "$(cfg_get '.process.capabilities.bounding | any(. == "CAP_CHOWN")')" = false ]
	run pr exec "$CID" sh -c 'grep ^Cap /proc/self/status; touch /tmp/f; chown 1000 /tmp/f 2>/dev/null; echo rc=$?'
	assert_status 0
	for k in CapEff CapPrm CapBnd; do
		[ $(($(cap_mask $k) & 1)) -eq 0 ] || fail_with "$k has CAP_CHOWN without --cap: $output"
	done
	[ "${lines[-1]}" = rc=1 ] || fail_with "$output"

	run pr exec --cap CAP_CHOWN --cap CAP_SYS_ADMIN "$CID" sh -c 'grep ^Cap /proc/self/status; chown 1000 /tmp/f; echo rc=$?'
	assert_status 0
	# CAP_SYS_ADMIN is bit 21.
	for k in CapEff CapPrm CapBnd; do
		m=$(cap_mask $k)
		[ $((m & 1)) -eq 1 ] && [ $(((m >> 21) & 1)) -eq 1 ] || fail_with "$k lacks an added cap: $output"
	done
	[ "${lines[-1]}" = rc=0 ] || fail_with "chown with --cap CAP_CHOWN: $output"
	[ "$(stat -c %u "$ROOTFS/tmp/f")" = 1000 ]
	# The init keeps the config's sets.
	pid=$(state_of "$CID" pid)
	[ $(($(printf '%d' "0x$(awk '$1 == "CapEff:" { print $2 }' "/proc/$pid/status")") & 1)) -eq 0 ] ||
		fail_with "the init gained CAP_CHOWN"
}

@test "exec --no-new-privs sets NoNewPrivs: 1 for the exec'd process" {
	setup_bundle busybox
	cfg_set '.process.noNewPrivileges = false'
	cfg_args sleep 1000
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	run pr exec "$CID" grep NoNewPrivs /proc/self/status
	assert_status 0
	[[ "$output" =~ ^NoNewPrivs:[[:space:]]+0$ ]] || fail_with "without the flag: $output"
	run pr exec --no-new-privs "$CID" grep NoNewPrivs /proc/self/status
	assert_status 0
	[[ "$output" =~ ^NoNewPrivs:[[:space:]]+1$ ]] || fail_with "with --no-new-privs: $output"
	# Only that process: the init is unchanged.
	pid=$(state_of "$CID" pid)
	grep -Eq '^NoNewPrivs:[[:space:]]+0$' "/proc/$pid/status"
}
