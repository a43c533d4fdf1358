#!/usr/bin/env bats
# podman driving the runtime under test (podman --runtime ABSOLUTE_PATH).

load helpers

@test "podman run --rm bookworm: cat /etc/debian_version" {
	need_image bookworm
	track_name "$NAME"
	run pm run --rm --name "$NAME" localhost/proctor/bookworm cat /etc/debian_version
	assert_status 0
	[[ "$output" =~ ^12\.[0-9]+$ ]] || fail_with "output: $output"
}

@test "podman run --rm bullseye: cat /etc/debian_version" {
	need_image bullseye
	track_name "$NAME"
	run pm run --rm --name "$NAME" localhost/proctor/bullseye cat /etc/debian_version
	assert_status 0
	[[ "$output" =~ ^11\.[0-9]+$ ]] || fail_with "output: $output"
}

@test "podman run propagates the exit code" {
	need_image busybox
	track_name "$NAME"
	run pm run --rm --name "$NAME" localhost/proctor/busybox sh -c 'exit 7'
	assert_status 7
}

@test "podman run of a missing command fails with 127" {
	need_image busybox
	track_name "$NAME"
	run -127 pm run --rm --name "$NAME" localhost/proctor/busybox /no/such/command
}

# lifecycle IMAGE: run -d, exec (env, workdir, user, exit code), exec
# without and with -t, stop, rm of a Debian image.
lifecycle() {
	need_image "$1"
	track_name "$NAME"
	run pm run -d --name "$NAME" "localhost/proctor/$1" sleep 1000
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = running ]

	run pm exec "$NAME" sh -c 'echo exec-ok; cat /proc/1/comm'
	assert_status 0
	[ "${lines[0]}" = exec-ok ]
	[ "${lines[1]}" = sleep ]

	run pm exec --env PRT_VAR=hello --workdir /tmp --user 65534:65534 "$NAME" sh -c 'echo "$PRT_VAR $(pwd) $(id -u)"'
	assert_status 0
	[ "$output" = "hello /tmp 65534" ]

	run pm exec "$NAME" sh -c 'exit 5'
	assert_status 5

	# Without -t the process has no terminal.
	run pm exec "$NAME" sh -c 'tty || true'
	[[ "$output" == *"not a tty"* ]] || fail_with "output: $output"

	# -t under a pty: the exec'd process gets its own /dev/pts terminal.
	run in_pty podman --runtime "$PROCTOR" exec -t "$NAME" tty
	assert_status 0
	out=$(echo "$output" | tr -d '\r')
	echo "$out" | grep -Eqx '/dev/pts/[0-9]+' || fail_with "tty printed: $out"

	run pm exec -t "$NAME" sh -c 'stty size'
	assert_status 0
	[[ "$(tr -d '\r' <<<"$output")" =~ ^[0-9]+\ [0-9]+$ ]] || fail_with "stty size printed: $output"

	run pm stop -t 2 "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = exited ]

	run pm rm "$NAME"
	assert_status 0
	run podman container exists "$NAME"
	[ "$status" -ne 0 ]
}

@test "podman run -d, exec, exec -t, stop, rm (bookworm)" {
	lifecycle bookworm
}

@test "podman run -d, exec, exec -t, stop, rm (bullseye)" {
	lifecycle bullseye
}

@test "podman run -t gives the container a terminal" {
	need_image busybox
	track_name "$NAME"
	run in_pty podman --runtime "$PROCTOR" run --rm -t --name "$NAME" localhost/proctor/busybox sh -c 'tty; stty size'
	assert_status 0
	out=$(echo "$output" | tr -d '\r')
	echo "$out" | grep -Eqx '/dev/pts/[0-9]+' || fail_with "output: $out"
}

@test "podman ulimits, user and read-only root reach the process" {
	need_image busybox
	track_name "$NAME"
	run pm run --rm --name "$NAME" --ulimit nofile=1234:2345 --ulimit nproc=1000:1000 --user 1000 --read-only \
		localhost/proctor/busybox sh -c 'ulimit -n; ulimit -Hn; id -u; touch /x 2>&1; true'
	assert_status 0
	[ "${lines[0]}" = 1234 ]
	[ "${lines[1]}" = 2345 ]
	[ "${lines[2]}" = 1000 ]
	[[ "$output" == *"Read-only file system"* ]] || fail_with "output: $output"
}

@test "podman run --network none and the default network" {
	need_image busybox
	track_name "$NAME"
	run pm run --rm --name "$NAME" --network none localhost/proctor/busybox sh -c 'ls /sys/class/net'
	assert_status 0
	[ "$output" = lo ]
	track_name "$NAME-b"
	run pm run --rm --name "$NAME-b" localhost/proctor/busybox sh -c 'ls /sys/class/net'
	assert_status 0
	[[ "$output" == *eth0* ]] || fail_with "output: $output"
}

@test "podman pause and unpause" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" localhost/proctor/busybox sleep 1000
	assert_status 0
	run pm pause "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = paused ]
	run pm unpause "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = running ]
	run pm exec "$NAME" true
	assert_status 0
}

@test "podman exec -it and run -it: a sized pts, /dev/tty, foreground group" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" localhost/proctor/busybox sleep 1000
	assert_status 0
	run in_pty_sized 33 101 podman --runtime "$PROCTOR" exec -it "$NAME" sh -c "$TTY_PROBE"
	assert_status 0
	assert_tty_probe 33 101
	track_name "$NAME-b"
	run in_pty_sized 27 91 podman --runtime "$PROCTOR" run --rm -it --name "$NAME-b" localhost/proctor/busybox sh -c "$TTY_PROBE"
	assert_status 0
	assert_tty_probe 27 91
}

@test "podman logs, kill, restart, exec -d, rm -f of a running container" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" localhost/proctor/busybox sh -c 'echo started; trap "echo got-term; exit 0" TERM; while :; do sleep 0.1; done'
	assert_status 0
	wait_until 10 sh -c "podman logs $NAME 2>&1 | grep -q started"

	run pm exec -d "$NAME" sleep 999
	assert_status 0
	wait_until 10 sh -c "podman --runtime $PROCTOR exec $NAME ps -o args | grep -q 'sleep 999'"

	run pm stop -t 10 "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$NAME")" = "exited 0" ]
	run podman logs "$NAME"
	[[ "$output" == *got-term* ]] || fail_with "logs: $output"

	# Kill of a stopped container is podman's error, not a hang.
	run pm kill "$NAME"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *"not running"* || "$output" == *"can only kill running"* ]] || fail_with "output: $output"

	run pm restart -t 10 "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = running ]
	run pm kill "$NAME"
	assert_status 0
	wait_until 30 test "$(podman inspect -f '{{.State.Status}}' "$NAME")" = exited
	[ "$(podman inspect -f '{{.State.ExitCode}}' "$NAME")" = 137 ]

	run pm start "$NAME"
	assert_status 0
	run pm rm -f -t 0 "$NAME"
	assert_status 0
	run podman container exists "$NAME"
	[ "$status" -ne 0 ]
}

@test "podman --cap-drop ALL and --security-opt seccomp=PROFILE" {
	need_image busybox
	track_name "$NAME"
	run pm run --rm --name "$NAME" --cap-drop ALL localhost/proctor/busybox grep ^CapEff /proc/self/status
	assert_status 0
	[[ "$output" =~ ^CapEff:[[:space:]]+0+$ ]] || fail_with "output: $output"
	write_seccomp_profile "$TEST_DIR/seccomp.json"
	run pm run --rm --name "$NAME" --security-opt "seccomp=$TEST_DIR/seccomp.json" localhost/proctor/busybox \
		sh -c 'mkdir /tmp/d 2>&1; grep ^Seccomp: /proc/self/status; true'
	assert_status 0
	[[ "$output" == *"Operation not permitted"* ]] || fail_with "output: $output"
	[[ "$output" == *"Seccomp:"*2* ]] || fail_with "output: $output"
}

@test "podman -p: busybox httpd in the container reached from the host" {
	need_image busybox
	track_name "$NAME"
	port=$(free_port)
	run pm run -d --name "$NAME" -p "127.0.0.1:$port:8080" localhost/proctor/busybox \
		sh -c 'mkdir -p /www && echo served-by-proctor >/www/index.html && exec httpd -f -p 8080 -h /www'
	assert_status 0
	run http_get "http://127.0.0.1:$port/index.html"
	assert_status 0
	[ "$output" = served-by-proctor ]
}

@test "podman: a background process from one exec is alive in the next" {
	# bookworm: busybox-static has no nohup applet.
	need_image bookworm
	track_name "$NAME"
	run pm run -d --name "$NAME" localhost/proctor/bookworm sleep 1000
	assert_status 0
	run pm exec "$NAME" sh -c 'nohup sleep 1001 >/dev/null 2>&1 & setsid sleep 1002 >/dev/null 2>&1 </dev/null & echo spawned'
	assert_status 0
	sleep 0.5
	run pm exec "$NAME" ps -eo args
	assert_status 0
	[[ "$output" == *"sleep 1001"* ]] || fail_with "nohup child gone: $output"
	[[ "$output" == *"sleep 1002"* ]] || fail_with "setsid child gone: $output"
}

@test "podman: a bad entrypoint or user is podman's error with the runtime's message" {
	need_image busybox
	track_name "$NAME"
	run -127 pm run --rm --name "$NAME" localhost/proctor/busybox /no/such/command
	assert_status 127
	[[ "$output" == *'/no/such/command'* ]] || fail_with "output: $output"
	run pm run --rm --name "$NAME" localhost/proctor/busybox /etc/passwd
	assert_status 126
	[[ "$output" == *'/etc/passwd'* ]] || fail_with "output: $output"
	run pm run --rm --name "$NAME" --user nosuchuser localhost/proctor/busybox true
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *nosuchuser* ]] || fail_with "output: $output"

	track_name "$NAME-d"
	run pm run -d --name "$NAME-d" localhost/proctor/busybox sleep 1000
	assert_status 0
	run -127 pm exec "$NAME-d" /no/such/command
	assert_status 127
	run pm exec "$NAME-d" echo still-here
	assert_status 0
	[ "$output" = still-here ]
}

@test "podman: contrib/podman/containers.conf registers the runtime \"proctor\"" {
	need_image busybox
	track_name "$NAME"
	# The contrib file with this binary's path, plus the host's [containers]
	# table (its default_ulimits), as CONTAINERS_CONF replaces the system file.
	sed "s|/usr/local/bin/proctor|$PROCTOR|" "$ENGINES_DIR/../../contrib/podman/containers.conf" >"$TEST_DIR/containers.conf"
	if [ -r /etc/containers/containers.conf ]; then
		sed -n '/^\[containers\]/,/^\[/p' /etc/containers/containers.conf | grep -v '^\[engine' >>"$TEST_DIR/containers.conf"
	fi
	run env CONTAINERS_CONF="$TEST_DIR/containers.conf" podman --runtime proctor info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}'
	assert_status 0
	[ "$output" = "proctor $PROCTOR" ] || fail_with "output: $output"
	run env CONTAINERS_CONF="$TEST_DIR/containers.conf" timeout 90 podman --runtime proctor run --rm --name "$NAME" localhost/proctor/busybox echo via-conf
	assert_status 0
	[ "$output" = via-conf ]
}
