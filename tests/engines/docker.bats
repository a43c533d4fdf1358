#!/usr/bin/env bats
# docker 20.10 (Debian's docker.io) driving the runtime under test: dockerd's
# daemon.json registers it as runtime "proctor" (contrib/docker/daemon.json),
# which dockerd hands to containerd's runc v2 shim as its BinaryName.

ENGINE=docker
load helpers

# drun ARGS: docker run with the runtime under test.
drun() { dk run --runtime proctor "$@"; }

@test "docker: the proctor runtime is registered and is the binary under test" {
	run dk info --format '{{json .Runtimes}}'
	assert_status 0
	local path
	path=$(jq -r '.proctor.path // empty' <<<"$output")
	[ -n "$path" ] || fail_with "runtimes: $output"
	# start-daemons.sh leaves a dockerd it did not start alone: its
	# "proctor" must still resolve to $PROCTOR.
	[ "$(readlink -f "$path")" = "$(readlink -f "$PROCTOR")" ] ||
		fail_with "docker's proctor is $path -> $(readlink -f "$path"), not $PROCTOR"
	need_image busybox
	track_name "$NAME"
	run drun -d --name "$NAME" "$(image busybox)" sleep 1000
	assert_status 0
	local id
	id=$(dk inspect -f '{{.Id}}' "$NAME")
	# The container's state is proctor's: proctor reads a runc state.json as
	# a stopped container, so "running" here means proctor made it.
	run "$PROCTOR" --root /run/docker/runtime-runc/moby state "$id"
	assert_status 0
	[ "$(jq -r .status <<<"$output")" = running ] || fail_with "$output"
}

@test "docker run --runtime proctor --rm busybox echo hi" {
	need_image busybox
	track_name "$NAME"
	run drun --rm --name "$NAME" "$(image busybox)" echo hi
	assert_status 0
	[ "$output" = hi ]
}

@test "docker run --rm bookworm, exit codes" {
	need_image bookworm
	track_name "$NAME"
	run drun --rm --name "$NAME" "$(image bookworm)" cat /etc/debian_version
	assert_status 0
	[[ "$output" =~ ^12\.[0-9]+$ ]] || fail_with "output: $output"
	run drun --rm --name "$NAME" "$(image bookworm)" sh -c 'exit 7'
	assert_status 7
}

@test "docker run -d, exec, logs, stop, start, restart, kill, rm -f" {
	need_image busybox
	track_name "$NAME"
	run drun -d --name "$NAME" "$(image busybox)" sh -c 'echo started; trap "echo got-term; exit 0" TERM; while :; do sleep 0.1; done'
	assert_status 0
	[ "$(dk inspect -f '{{.State.Status}}' "$NAME")" = running ]

	run dk exec "$NAME" sh -c 'echo exec-ok; cat /proc/1/comm'
	assert_status 0
	[ "${lines[0]}" = exec-ok ]
	[ "${lines[1]}" = sh ]

	run dk exec -e PRT_VAR=hello -w /tmp -u 1000:1000 "$NAME" sh -c 'echo "$PRT_VAR $(pwd) $(id -u)"'
	assert_status 0
	[ "$output" = "hello /tmp 1000" ]

	run dk exec "$NAME" sh -c 'exit 5'
	assert_status 5

	run dk logs "$NAME"
	assert_status 0
	[[ "$output" == *started* ]] || fail_with "logs: $output"

	# stop: SIGTERM reaches pid 1, which exits 0.
	run dk stop -t 10 "$NAME"
	assert_status 0
	[ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$NAME")" = "exited 0" ]
	run dk logs "$NAME"
	[[ "$output" == *got-term* ]] || fail_with "logs: $output"

	run dk start "$NAME"
	assert_status 0
	[ "$(dk inspect -f '{{.State.Status}}' "$NAME")" = running ]
	run dk restart -t 10 "$NAME"
	assert_status 0
	[ "$(dk inspect -f '{{.State.Status}}' "$NAME")" = running ]

	run dk kill "$NAME"
	assert_status 0
	wait_until 10 test "$(dk inspect -f '{{.State.Status}}' "$NAME")" = exited
	[ "$(dk inspect -f '{{.State.ExitCode}}' "$NAME")" = 137 ]

	# Kill of a stopped container is docker's own error, not a hang.
	run dk kill "$NAME"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not running"* ]] || fail_with "output: $output"

	run dk start "$NAME"
	assert_status 0
	run dk rm -f "$NAME"
	assert_status 0
	run dk container inspect "$NAME"
	[ "$status" -ne 0 ]
}

@test "docker pause and unpause" {
	need_image busybox
	track_name "$NAME"
	run drun -d --name "$NAME" "$(image busybox)" sleep 1000
	assert_status 0
	local pid
	pid=$(dk inspect -f '{{.State.Pid}}' "$NAME")
	run dk pause "$NAME"
	assert_status 0
	[ "$(dk inspect -f '{{.State.Status}}' "$NAME")" = paused ]
	[ "$(freezer_state "$pid")" = FROZEN ] || fail_with "paused, but the cgroup is $(freezer_state "$pid")"
	run dk unpause "$NAME"
	assert_status 0
	[ "$(dk inspect -f '{{.State.Status}}' "$NAME")" = running ]
	[ "$(freezer_state "$pid")" = THAWED ] || fail_with "unpaused, but the cgroup is $(freezer_state "$pid")"
	run dk exec "$NAME" true
	assert_status 0
}

@test "docker exec -it: a sized pts, /dev/tty, foreground process group" {
	need_image busybox
	track_name "$NAME"
	run drun -d --name "$NAME" "$(image busybox)" sleep 1000
	assert_status 0
	run in_pty_sized 33 101 "$DOCKER_BIN" exec -it "$NAME" sh -c "$TTY_PROBE"
	assert_status 0
	assert_tty_probe 33 101
}

@test "docker run -it: a sized pts, /dev/tty, foreground process group" {
	need_image busybox
	track_name "$NAME"
	run in_pty_sized 27 91 "$DOCKER_BIN" run --runtime proctor --rm -it --name "$NAME" "$(image busybox)" sh -c "$TTY_PROBE"
	assert_status 0
	assert_tty_probe 27 91
}

@test "docker --user 1000, --read-only, --cap-drop ALL" {
	need_image busybox
	track_name "$NAME"
	run drun --rm --name "$NAME" --user 1000 --read-only --cap-drop ALL "$(image busybox)" \
		sh -c 'id -u; id -g; grep ^CapEff /proc/self/status; touch /x 2>&1; true'
	assert_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[[ "${lines[2]}" =~ ^CapEff:[[:space:]]+0+$ ]] || fail_with "output: $output"
	[[ "$output" == *"Read-only file system"* ]] || fail_with "output: $output"
}

@test "docker --security-opt seccomp=PROFILE" {
	need_image busybox
	track_name "$NAME"
	write_seccomp_profile "$TEST_DIR/seccomp.json"
	run drun --rm --name "$NAME" --security-opt "seccomp=$TEST_DIR/seccomp.json" "$(image busybox)" \
		sh -c 'mkdir /tmp/d 2>&1; grep ^Seccomp: /proc/self/status; true'
	assert_status 0
	[[ "$output" == *"Operation not permitted"* ]] || fail_with "output: $output"
	[[ "$output" == *"Seccomp:"*2* ]] || fail_with "output: $output"
}

@test "docker --network none and the default bridge" {
	need_image busybox
	track_name "$NAME"
	run drun --rm --name "$NAME" --network none "$(image busybox)" ls /sys/class/net
	assert_status 0
	[ "$output" = lo ]
	run drun --rm --name "$NAME" "$(image busybox)" ls /sys/class/net
	assert_status 0
	[[ "$output" == *eth0* ]] || fail_with "output: $output"
}

@test "docker -p: busybox httpd in the container reached from the host" {
	need_image busybox
	track_name "$NAME"
	port=$(free_port)
	run drun -d --name "$NAME" -p "127.0.0.1:$port:8080" "$(image busybox)" \
		sh -c 'mkdir -p /www && echo served-by-proctor >/www/index.html && exec httpd -f -p 8080 -h /www'
	assert_status 0
	run http_get "http://127.0.0.1:$port/index.html"
	assert_status 0
	[ "$output" = served-by-proctor ]
}

@test "docker: a background process from one exec is alive in the next" {
	# bookworm: busybox-static has no nohup applet.
	need_image bookworm
	track_name "$NAME"
	run drun -d --name "$NAME" "$(image bookworm)" sleep 1000
	assert_status 0
	run dk exec "$NAME" sh -c 'nohup sleep 1001 >/dev/null 2>&1 & setsid sleep 1002 >/dev/null 2>&1 </dev/null & echo spawned'
	assert_status 0
	run dk exec -d "$NAME" sleep 1003
	assert_status 0
	sleep 0.5
	run dk exec "$NAME" ps -eo args
	assert_status 0
	[[ "$output" == *"sleep 1001"* ]] || fail_with "nohup child gone: $output"
	[[ "$output" == *"sleep 1002"* ]] || fail_with "setsid child gone: $output"
	[[ "$output" == *"sleep 1003"* ]] || fail_with "exec -d process gone: $output"
}

@test "docker: a bad entrypoint is docker's error with the runtime's message" {
	need_image busybox
	track_name "$NAME"
	run -127 drun --rm --name "$NAME" "$(image busybox)" /no/such/command
	assert_status 127
	[[ "$output" == *"/no/such/command"* ]] || fail_with "output: $output"
	[[ "$output" == *"no such file or directory"* ]] || fail_with "output: $output"
}

@test "docker: a bad user is docker's error, not a hang" {
	need_image busybox
	track_name "$NAME"
	run drun --rm --name "$NAME" --user nosuchuser "$(image busybox)" true
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *nosuchuser* ]] || fail_with "output: $output"
}

@test "docker: a failed exec leaves the container running" {
	need_image busybox
	track_name "$NAME"
	run drun -d --name "$NAME" "$(image busybox)" sleep 1000
	assert_status 0
	run dk exec "$NAME" /no/such/command
	assert_status 126
	[[ "$output" == *"/no/such/command"* ]] || fail_with "output: $output"
	run dk exec -u nosuchuser "$NAME" true
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[ "$(dk inspect -f '{{.State.Status}}' "$NAME")" = running ]
	run dk exec "$NAME" echo still-here
	assert_status 0
	[ "$output" = still-here ]
}

@test "docker rollout: -v HOST:/tests:ro and -v HOST:/logs/verifier are absent for the agent, present for the verifier" {
	need_image bookworm
	mkdir -p "$TEST_DIR/tests" "$TEST_DIR/verdict"
	printf '#!/bin/sh\necho real-tests\necho 1 > /logs/verifier/reward.txt\n' >"$TEST_DIR/tests/test.sh"
	chmod +x "$TEST_DIR/tests/test.sh"
	chmod 0777 "$TEST_DIR/verdict"
	# The "proctor-rollout" runtime reads its policy from this file at
	# create (tests/engines/start-daemons.sh).
	echo '{"version": 1, "verifier": {"user": "root"}}' >/run/proctor-ci/rollout-policy.json
	track_name "$NAME"
	run dk run -d --runtime proctor-rollout --name "$NAME" \
		-v "$TEST_DIR/tests:/tests:ro" -v "$TEST_DIR/verdict:/logs/verifier" "$(image bookworm)" sleep 1000
	assert_status 0
	run dk exec -u 0 "$NAME" sh -c 'for p in /tests /tests/test.sh /logs/verifier; do stat "$p" >/dev/null 2>&1 && echo "present $p"; done; echo checked'
	assert_status 0
	[ "$output" = checked ] || fail_with "the agent sees: $output"
	run dk exec -e PROCTOR_PHASE=verifier "$NAME" sh -c '/tests/test.sh; cat /logs/verifier/reward.txt'
	assert_status 0
	[ "$output" = "real-tests
1" ] || fail_with "$output"
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 1 ] || fail_with "the verdict did not reach the host dir"
}
