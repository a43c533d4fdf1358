#!/usr/bin/env bats
# containerd 1.6 (Debian's containerd) driving the runtime under test through
# its runc v2 shim: `ctr run --runc-binary` (the shim option BinaryName), and
# the CRI runtime entry of contrib/containerd/config.toml that
# tests/engines/start-daemons.sh loads.

ENGINE=containerd
load helpers

@test "containerd: ctr run --runc-binary --rm busybox echo hi" {
	need_image busybox
	track_name "$NAME"
	run ctr_run --rm "$(image busybox)" "$NAME" echo hi
	assert_status 0
	[ "$output" = hi ]
}

@test "containerd: exit code and bookworm" {
	need_image bookworm
	track_name "$NAME"
	run ctr_run --rm "$(image bookworm)" "$NAME" sh -c 'cat /etc/debian_version; exit 7'
	assert_status 7
	[[ "$output" =~ ^12\.[0-9]+$ ]] || fail_with "output: $output"
}

@test "containerd: run -d, exec, pause/resume, kill, delete" {
	need_image busybox
	track_name "$NAME"
	run ctr_run -d "$(image busybox)" "$NAME" sh -c 'trap "exit 3" TERM; while :; do sleep 0.1; done'
	assert_status 0
	wait_until 10 sh -c "ctr -n $CTR_NS task ls | grep -q '^$NAME .*RUNNING'"

	run cr task exec --exec-id e1 "$NAME" sh -c 'echo exec-ok; cat /proc/1/comm'
	assert_status 0
	[ "${lines[0]}" = exec-ok ]
	[ "${lines[1]}" = sh ]

	run cr task exec --exec-id e2 --user 1000 --cwd /tmp "$NAME" sh -c 'echo "$(id -u) $(pwd)"; exit 4'
	assert_status 4
	[ "$output" = "1000 /tmp" ]

	run cr task pause "$NAME"
	assert_status 0
	run cr task ls
	[[ "$output" =~ $NAME[[:space:]]+[0-9]+[[:space:]]+PAUSED ]] || fail_with "task ls: $output"
	local pid
	pid=$(awk -v n="$NAME" '$1 == n { print $2 }' <<<"$output")
	[ "$(freezer_state "$pid")" = FROZEN ] || fail_with "paused, but the cgroup is $(freezer_state "$pid")"
	run cr task resume "$NAME"
	assert_status 0
	[ "$(freezer_state "$pid")" = THAWED ] || fail_with "resumed, but the cgroup is $(freezer_state "$pid")"
	run cr task exec --exec-id e3 "$NAME" true
	assert_status 0

	run cr task kill "$NAME"
	assert_status 0
	wait_until 10 sh -c "ctr -n $CTR_NS task ls | grep -q '^$NAME .*STOPPED'"

	# Kill of a stopped task: containerd's not-found error, promptly.
	run cr task kill -s SIGKILL "$NAME"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *"not found"* || "$output" == *"not running"* || "$output" == *"process already finished"* ]] ||
		fail_with "output: $output"

	run cr task delete "$NAME"
	assert_status 0
	[[ "$output" == *"exit code 3"* ]] || fail_with "delete: $output"
	run cr container delete "$NAME"
	assert_status 0
	[ -z "$(ls /run/containerd/runc/$CTR_NS/$NAME 2>/dev/null)" ]
}

@test "containerd: task delete --force of a running task" {
	need_image busybox
	track_name "$NAME"
	run ctr_run -d "$(image busybox)" "$NAME" sleep 1000
	assert_status 0
	run cr task delete -f "$NAME"
	assert_status 0
	run cr task ls
	[[ "$output" != *"$NAME"* ]] || fail_with "task still listed: $output"
	run cr container delete "$NAME"
	assert_status 0
}

@test "containerd: tty exec gets a sized pts, /dev/tty, foreground group" {
	need_image busybox
	track_name "$NAME"
	run ctr_run -d "$(image busybox)" "$NAME" sleep 1000
	assert_status 0
	run in_pty_sized 29 97 ctr -n "$CTR_NS" task exec -t --exec-id t1 "$NAME" sh -c "$TTY_PROBE"
	assert_status 0
	assert_tty_probe 29 97
}

@test "containerd: ctr run -t gets a sized pts" {
	need_image busybox
	track_name "$NAME"
	run in_pty_sized 31 99 ctr -n "$CTR_NS" run --runtime io.containerd.runc.v2 --runc-binary "$PROCTOR" \
		--rm -t "$(image busybox)" "$NAME" sh -c "$TTY_PROBE"
	assert_status 0
	assert_tty_probe 31 99
}

@test "containerd: a background process from one exec is alive in the next" {
	need_image bookworm
	track_name "$NAME"
	run ctr_run -d "$(image bookworm)" "$NAME" sleep 1000
	assert_status 0
	run cr task exec --exec-id b1 "$NAME" sh -c 'nohup sleep 1001 >/dev/null 2>&1 & setsid sleep 1002 >/dev/null 2>&1 </dev/null & echo spawned'
	assert_status 0
	sleep 0.5
	run cr task exec --exec-id b2 "$NAME" ps -eo args
	assert_status 0
	[[ "$output" == *"sleep 1001"* ]] || fail_with "nohup child gone: $output"
	[[ "$output" == *"sleep 1002"* ]] || fail_with "setsid child gone: $output"
}

@test "containerd: a bad entrypoint is ctr's error with the runtime's message" {
	need_image busybox
	track_name "$NAME"
	run ctr_run --rm "$(image busybox)" "$NAME" /no/such/command
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *'exec: "/no/such/command"'* ]] || fail_with "output: $output"
	[[ "$output" == *"no such file or directory"* ]] || fail_with "output: $output"
}

@test "containerd: a bad exec user is ctr's error, the task keeps running" {
	need_image busybox
	track_name "$NAME"
	run ctr_run -d "$(image busybox)" "$NAME" sleep 1000
	assert_status 0
	run cr task exec --exec-id x1 "$NAME" /no/such/command
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *'/no/such/command'* ]] || fail_with "output: $output"
	# ctr resolves --user itself: its own error, at once.
	run cr task exec --exec-id x2 --user nosuchuser "$NAME" true
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail_with "status $status: $output"
	[[ "$output" == *"no users found"* ]] || fail_with "output: $output"
	run cr task exec --exec-id x3 "$NAME" echo still-here
	assert_status 0
	[ "$output" = still-here ]
}

@test "containerd: the CRI plugin loads the proctor runtime entry (BinaryName)" {
	run ctr plugins ls
	assert_status 0
	[[ "$output" =~ io.containerd.grpc.v1[[:space:]]+cri[[:space:]].*ok ]] || fail_with "plugins: $output"
	run containerd --config /run/proctor-ci/containerd.toml config dump
	assert_status 0
	[[ "$output" == *'runtimes.proctor.options]'* ]] || fail_with "config: $output"
	[[ "$output" == *'BinaryName = "/run/proctor-ci/proctor"'* ]] || fail_with "config: $output"
	[[ "$output" == *'pod_annotations = ["run.proctor.rollout"]'* ]] || fail_with "config: $output"
	[ "$(readlink -f /run/proctor-ci/proctor)" = "$(readlink -f "$PROCTOR")" ]
}
