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

@test "podman run -d, exec, exec -t, stop, rm" {
	need_image bookworm
	track_name "$NAME"
	run pm run -d --name "$NAME" localhost/proctor/bookworm sleep 1000
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

	run pm stop -t 2 "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = exited ]

	run pm rm "$NAME"
	assert_status 0
	run podman container exists "$NAME"
	[ "$status" -ne 0 ]
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
	run pm run --rm --name "$NAME" --ulimit nofile=1234:2345 --ulimit nproc=1000:1000 --user 1000:1000 --read-only \
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
