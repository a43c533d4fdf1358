#!/usr/bin/env bats
# Out of the agent's reach (SPEC section 2, issue #15 findings 2 and 3),
# through podman on bookworm: verifier and setup sessions live in the
# outer pid namespace, the agent's processes in one nested in it
# (src/rollout/procs.h).  Every attack runs from an agent background
# process (`podman exec -d`, root in the agent's user namespace); every
# outcome is read from the verifier's side or from the host.

load helpers

BOOKWORM=localhost/proctor/bookworm

# reach_policy [AGENT_PROCESSES]: the policy file, with
# verifier.agent_processes when given.
reach_policy() {
	POLICY=$TEST_DIR/policy.json
	local ap=
	[ -z "${1:-}" ] || ap=", \"agent_processes\": \"$1\""
	printf '{"version": 1, "environment": {"network_mode": "none"}, "verifier": {"user": "root"%s}}\n' "$ap" >"$POLICY"
}

# start_reach [AGENT_PROCESSES [podman run args...]]
start_reach() {
	reach_policy "${1:-}"
	shift || true
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$POLICY" "$@" "$BOOKWORM" sleep 1000
	assert_status 0
}

# bg_session PHASE MARKER: a session of PHASE that stays until the test
# ends (a shell loop whose $0 is MARKER, so its cmdline names it); waits
# until it runs.  BG_PID is the host's podman exec.
bg_session() {
	pm exec -e PROCTOR_PHASE="$1" -e SESSION_SECRET=s3cr3t-"$1" "$NAME" \
		sh -c 'grep NSpid /proc/self/status > /tmp/'"$2"'.nspid; while :; do sleep 1; done' "$2" \
		>/dev/null 2>&1 3>&- &
	BG_PID=$!
	wait_until 20 pm exec "$NAME" test -s "/tmp/$2.nspid" || fail_with "the $1 session did not start"
}

# host_pid MARKER: the host pid of the session whose cmdline names MARKER.
host_pid() { pgrep -f "^sh -c grep NSpid .* $1\$" | head -n 1; }

# agent_bg SCRIPT: runs SCRIPT in an agent background process (podman exec
# -d) and waits for it to write /tmp/agent.done; prints /tmp/agent.out.
# The verifier polls (it shares /tmp): an agent exec polling could be
# stopped by the very attack it waits for.
agent_bg() {
	run pm exec -d -u 0 "$NAME" sh -c "rm -f /tmp/agent.done; { $1 ; } > /tmp/agent.out 2>&1; touch /tmp/agent.done"
	assert_status 0
	wait_until 60 pm exec -e PROCTOR_PHASE=verifier "$NAME" test -e /tmp/agent.done ||
		fail_with "the agent's script did not finish"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" cat /tmp/agent.out
}

@test "reach: a running verifier has no /proc entry for an agent background process" {
	need_image bookworm
	start_reach
	bg_session verifier reach-marker-v
	agent_bg 'for p in /proc/[0-9]*; do
		tr "\0" " " < $p/cmdline 2>/dev/null | grep -q "reach-mark""er" && echo "FOUND $p"
		grep -qs s3cr3t $p/environ && echo "LEAK environ $p"
	done; echo scanned'
	[ "$output" = scanned ] || fail_with "$output"
	# The session is alive, and the host sees it: the scan could have found it.
	[ -n "$(host_pid reach-marker-v)" ] || fail_with "no verifier session on the host"
}

@test "reach: a running setup session has no /proc entry: its environ is not readable" {
	need_image bookworm
	start_reach
	bg_session setup reach-marker-s
	agent_bg 'for p in /proc/[0-9]*; do
		tr "\0" " " < $p/cmdline 2>/dev/null | grep -q "reach-mark""er" && echo "FOUND $p"
		grep -qs s3cr3t $p/environ && echo "LEAK environ $p"
	done; echo scanned'
	[ "$output" = scanned ] || fail_with "$output"
	hp=$(host_pid reach-marker-s)
	[ -n "$hp" ] || fail_with "no setup session on the host"
	grep -q s3cr3t-setup "/proc/$hp/environ" || fail_with "the setup session has no secret to steal"
	# The setup session still has the agent's files: what it writes, the agent reads.
	run pm exec -e PROCTOR_PHASE=setup "$NAME" sh -c 'echo installed > /opt/setup-made; ps -e -o comm= | grep -c sleep'
	assert_status 0
	run pm exec "$NAME" cat /opt/setup-made
	[ "$output" = installed ] || fail_with "$output"
}

@test "reach: kill, SIGSTOP, renice, chrt, taskset, prlimit and oom_score_adj by any pid leave the verifier untouched" {
	need_image bookworm
	start_reach
	bg_session verifier reach-marker-v
	hp=$(host_pid reach-marker-v)
	[ -n "$hp" ] || fail_with "no verifier session on the host"
	# The verifier's pid as the outer namespace numbers it, and as the host
	# does: an agent told both numbers still cannot name it.
	run pm exec "$NAME" cat /tmp/reach-marker-v.nspid
	vpid=$(awk '{print $2}' <<<"$output")
	[ -n "$vpid" ] || fail_with "no NSpid: $output"
	# A victim of the agent's own, to show the attack's tools work.
	run pm exec -d "$NAME" sh -c 'exec sleep 977'
	agent_bg 'for p in $(ls /proc | grep -E "^[0-9]+$") '"$vpid $hp"'; do
		[ "$p" = $$ ] && continue; [ "$p" = 1 ] && continue
		renice -n 19 -p $p; chrt -i -p 0 $p; taskset -p 1 $p; prlimit --nofile=16:16 -p $p
		echo 1000 > /proc/$p/oom_score_adj
		kill -STOP $p
	done >/dev/null 2>&1
	for p in '"$vpid $hp"'; do kill -0 $p 2>/dev/null && echo "named $p: $(tr "\0" " " < /proc/$p/cmdline)"; done
	kill -STOP -1; echo attacked'
	[[ "$output" == *attacked ]] || fail_with "$output"
	! grep -q 'named.*reach-marker' <<<"$output" || fail_with "$output"
	# From the host: the verifier runs on, untouched.
	read -r -a st <"/proc/$hp/stat"
	[ "${st[2]}" != T ] || fail_with "the verifier is stopped"
	[ "${st[18]}" = 0 ] || fail_with "the verifier's nice is ${st[18]}"
	[ "$(cat "/proc/$hp/oom_score_adj")" = 0 ] || fail_with "oom_score_adj $(cat "/proc/$hp/oom_score_adj")"
	run chrt -p "$hp"
	[[ "$output" == *SCHED_OTHER* ]] || fail_with "$output"
	run taskset -p "$hp"
	[[ "$output" == *"mask: $(printf '%x' $(((1 << $(nproc)) - 1)))" ]] || fail_with "$output"
	run prlimit --nofile -o SOFT --noheadings -p "$hp"
	[ "$output" != 16 ] || fail_with "RLIMIT_NOFILE 16"
	# The agent's own victim got all of it, seen from the verifier's side.
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'v=$(pgrep -x -f "sleep 977"); ps -o stat=,cls= -p $v; cat /proc/$v/oom_score_adj'
	assert_status 0
	[[ "$output" == T*IDL*1000 ]] || fail_with "the agent's attack did not work on its own process: $output"
	# SIGKILL to every pid the agent can name, and to -1.
	agent_bg 'for p in '"$vpid $hp"'; do kill -KILL $p; done 2>/dev/null; kill -KILL -1; echo killed'
	sleep 0.5
	kill -0 "$hp" || fail_with "the verifier was killed"
	kill -0 "$BG_PID" || fail_with "the verifier's exec ended"
}

@test "reach: ps in the verifier lists the agent's background processes" {
	need_image bookworm
	start_reach
	run pm exec -d "$NAME" sh -c 'exec sleep 988'
	run pm exec "$NAME" sh -c 'setsid sh -c "exec sleep 989" >/dev/null 2>&1 < /dev/null & echo ok'
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" ps -e -o args=
	assert_status 0
	grep -qx 'sleep 988' <<<"$output" || fail_with "$output"
	grep -qx 'sleep 989' <<<"$output" || fail_with "$output"
	grep -qx 'sleep 1000' <<<"$output" || fail_with "$output"
	# /proc/self is the verifier's own in its /proc.
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'read -r pid _ < /proc/self/stat; echo $pid; echo $$'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = "$(sed -n 2p <<<"$output")" ] || fail_with "$output"
}

@test "reach: the agent's pid 1 is the container's process; stop, kill and the exit code are the container process's" {
	need_image bookworm
	reach_policy
	run pm run --rm --annotation "run.proctor.rollout=@$POLICY" "$BOOKWORM" sh -c 'tr "\0" " " < /proc/1/cmdline; echo; exit 7'
	[ "$status" = 7 ] || fail_with "status $status: $output"
	[ "$output" = "sh -c tr \"\\0\" \" \" < /proc/1/cmdline; echo; exit 7 " ] || fail_with "$output"
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$POLICY" "$BOOKWORM" \
		sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done'
	assert_status 0
	run pm stop -t 20 "$NAME"
	assert_status 0
	run pm inspect -f '{{.State.ExitCode}}' "$NAME"
	[ "$output" = 42 ] || fail_with "exit code after stop: $output"
	run pm rm -f "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$POLICY" "$BOOKWORM" sleep 1000
	assert_status 0
	run pm kill "$NAME"
	assert_status 0
	wait_until 10 sh -c "[ \"\$(podman inspect -f '{{.State.Status}}' $NAME)\" = exited ]" || fail_with "not exited"
	run pm inspect -f '{{.State.ExitCode}}' "$NAME"
	[ "$output" = 137 ] || fail_with "exit code after kill: $output"
}

# agent_loops: an agent ticker (writes a counter to /tmp/tick ten times a
# second) left by one exec, and a setsid'd sleep left by another.
agent_loops() {
	run pm exec -d "$NAME" sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/tick; sleep 0.1; done'
	assert_status 0
	run pm exec "$NAME" sh -c 'setsid sh -c "exec sleep 992" >/dev/null 2>&1 < /dev/null & echo ok'
	assert_status 0
	wait_until 10 pm exec "$NAME" test -s /tmp/tick || fail_with "no ticker"
}

@test "reach: verifier.agent_processes keep (default): the agent's processes run on during the verifier" {
	need_image bookworm
	start_reach
	agent_loops
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'a=$(cat /tmp/tick); sleep 1; b=$(cat /tmp/tick); [ "$b" -gt "$a" ] && echo ticking; pgrep -x -f "sleep 992" >/dev/null && echo sleeping'
	assert_status 0
	[ "$output" = "ticking
sleeping" ] || fail_with "$output"
}

@test "reach: verifier.agent_processes freeze stops every agent process, pid 1 included, before the verifier runs" {
	need_image bookworm
	start_reach freeze
	agent_loops
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'a=$(cat /tmp/tick); sleep 1; b=$(cat /tmp/tick); [ "$b" = "$a" ] && echo frozen
		for p in $(pgrep -x -f "sleep 992") $(pgrep -x -f "sleep 1000"); do ps -o stat= -p $p | cut -c1; done'
	assert_status 0
	[ "$output" = "frozen
T
T" ] || fail_with "$output"
	# Still there, only stopped: the container runs.
	run podman inspect -f '{{.State.Status}}' "$NAME"
	[ "$output" = running ] || fail_with "$output"
}

@test "reach: verifier.agent_processes kill ends every agent process but the container's, before the verifier runs" {
	need_image bookworm
	start_reach kill
	agent_loops
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'a=$(cat /tmp/tick); sleep 1; b=$(cat /tmp/tick); [ "$b" = "$a" ] && echo still
		pgrep -x -f "sleep 992" || echo no-sleeper
		ps -o stat= -p $(pgrep -x -f "sleep 1000")'
	assert_status 0
	[[ "$output" == "still
no-sleeper
S"* ]] || fail_with "$output"
	run podman inspect -f '{{.State.Status}}' "$NAME"
	[ "$output" = running ] || fail_with "$output"
	# The agent can still exec afterwards.
	run pm exec "$NAME" echo alive
	[ "$output" = alive ] || fail_with "$output"
}

@test "reach: an agent balloon under --memory 400m with every visible oom_score_adj at 1000 is OOM-killed, not the verifier" {
	need_image bookworm
	start_reach "" --memory 400m --memory-swap 400m
	bg_session verifier reach-marker-v
	hp=$(host_pid reach-marker-v)
	[ -n "$hp" ] || fail_with "no verifier session on the host"
	# Every process the agent can name but its own shell, its balloon and
	# pid 1 gets oom_score_adj 1000 (the memcg OOM killer's first pick);
	# the balloon then asks for more than the limit.
	agent_bg 'perl -e "sleep 1; my \$x = q(a) x (600 << 20); sleep 30" & bal=$!
		for d in /proc/[0-9]*; do n=${d#/proc/}
			[ "$n" = 1 ] || [ "$n" = $$ ] || [ "$n" = "$bal" ] || echo 1000 > $d/oom_score_adj
		done 2>/dev/null
		wait $bal; echo "balloon $?"'
	[ "$(tail -n 1 <<<"$output")" = "balloon 137" ] || fail_with "$output"
	kill -0 "$hp" || fail_with "the verifier was OOM-killed"
	[ "$(cat "/proc/$hp/oom_score_adj")" = 0 ] || fail_with "oom_score_adj $(cat "/proc/$hp/oom_score_adj")"
	kill -0 "$BG_PID" || fail_with "the verifier's exec ended"
}
