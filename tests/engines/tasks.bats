#!/usr/bin/env bats
# The example tasks (contrib/tasks/) through the rollout driver
# (contrib/rollout/proctor-rollout) under podman with proctor: each scores 1
# with its oracle solution and 0 with an empty agent phase; the adversarial
# task's tricks all fail under proctor and work in a plain runc container;
# the driver's exit status reflects the run, not the reward.
#
# Task images are built once and cached by the driver (tagged with a content
# hash of each task's environment/ directory), so a warm run takes about a
# minute and a half.

load helpers
source "$BATS_TEST_DIRNAME/../mirror.bash"

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DRIVER=$TOP/contrib/rollout/proctor-rollout
TASKS=$TOP/contrib/tasks
CANARY_PORT=39217

setup_file() {
	[ -x "${PROCTOR:-}" ] || return 1
	command -v jq >/dev/null
	# The tasks that install from the mirror need it reachable: the
	# operator's setting, through a wrapper podman runs as the runtime.
	egress_wrapper "$BATS_FILE_TMPDIR/proctor" "$PROCTOR"
	export PROCTOR=$BATS_FILE_TMPDIR/proctor
}

# drive JSON ARGS...: runs the driver with the runtime under test, the
# result in JSON; the driver's output stays in $output for failure messages.
drive() {
	local json=$1
	shift
	run timeout -k 5 600 "$DRIVER" --runtime "$PROCTOR" --json "$json" "$@"
}

reward_of() { jq -r '.reward' "$1"; }

# check_task NAME: oracle scores 1, the empty agent phase 0, both runs exit 0.
check_task() {
	local t=$1
	need_image bookworm
	drive "$TEST_DIR/oracle.json" "$TASKS/$t"
	[ "$status" -eq 0 ] || fail_with "oracle run of $t exited $status: $output"
	[ "$(reward_of "$TEST_DIR/oracle.json")" = 1 ] || fail_with "oracle reward of $t: $output"
	printf '%s\n' "$output" >"$TEST_DIR/oracle.out"
	drive "$TEST_DIR/empty.json" --agent none "$TASKS/$t"
	[ "$status" -eq 0 ] || fail_with "empty run of $t exited $status: $output"
	[ "$(reward_of "$TEST_DIR/empty.json")" = 0 ] || fail_with "empty-agent reward of $t: $output"
}

@test "task service-health: a background service from one exec serves the next and the verifier" {
	check_task service-health
}

@test "task git-http: the verifier clones over http from the agent's server" {
	check_task git-http
}

@test "task nonroot-workdir: image USER 1001 writes its 0700 workdir" {
	check_task nonroot-workdir
}

@test "task bullseye-archive: a task on bullseye" {
	need_image bullseye
	check_task bullseye-archive
}

@test "task busybox-offline: rootfs recipe, no network in any phase" {
	check_task busybox-offline
}

@test "task apt-allowlist: apt install through the agent's allowlist" {
	check_task apt-allowlist
	jq -e '[.egress.log[] | select(.phase == "agent" and .decision == "allow")] | length > 0' "$TEST_DIR/oracle.json" >/dev/null ||
		fail_with "no allowed agent egress: $(cat "$TEST_DIR/oracle.json")"
}

@test "task verifier-tools: the verifier installs jq under its own policy, the agent is refused the mirror" {
	check_task verifier-tools
	jq -e '[.egress.log[] | select(.phase == "agent" and .decision == "deny")] | length > 0' "$TEST_DIR/oracle.json" >/dev/null
	jq -e '[.egress.log[] | select(.phase == "verifier" and .decision == "allow")] | length > 0' "$TEST_DIR/oracle.json" >/dev/null
}

@test "task curses-tty: exec -t gives a 30x100 terminal that curses reads" {
	check_task curses-tty
}

# start_canary: contrib/tasks/adversarial/host-canary.py answers on the
# host's CANARY_PORT (all addresses) until the test ends, unless something
# already listens there.  The "host" trick counts as succeeded only when it
# reaches the canary, so without one a proxy that let the agent reach the
# host would still look like a refusal.
canary_up() { python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $CANARY_PORT)) != 0)"; }
start_canary() {
	canary_up && return 0
	python3 "$TASKS/adversarial/host-canary.py" "$CANARY_PORT" 3>&- &
	CANARY_PID=$!
	wait_until 5 canary_up || fail_with "host-canary.py did not start"
}

teardown() {
	if [ -n "${CANARY_PID:-}" ]; then kill "$CANARY_PID" 2>/dev/null || true; fi
	engine_teardown
}

@test "task adversarial: every trick is tried and refused under proctor" {
	start_canary
	check_task adversarial
	for trick in read-tests write-verdict squat-3129 host environ procroot; do
		grep -qE "^   \| $trick +refused " "$TEST_DIR/oracle.out" || fail_with "$trick not refused: $(cat "$TEST_DIR/oracle.out")"
	done
}

@test "task adversarial without proctor (plain runc, no policy): the tricks succeed" {
	need_image bookworm
	command -v runc >/dev/null || require_or_skip "runc is not installed"
	start_canary
	run timeout -k 5 300 "$DRIVER" --no-rollout --runtime runc --json "$TEST_DIR/runc.json" "$TASKS/adversarial"
	[ "$status" -eq 0 ] || fail_with "runc run exited $status: $output"
	for trick in read-tests write-verdict squat-3129 host environ procroot; do
		grep -qE "^   \| $trick +SUCCEEDED " <<<"$output" || fail_with "$trick did not succeed under runc: $output"
	done
}

@test "driver: exit status reflects the run, not the reward" {
	need_image busybox
	# 2: not a task directory.
	run "$DRIVER" --runtime "$PROCTOR" "$TEST_DIR/nothing"
	[ "$status" -eq 2 ] || fail_with "missing task: status $status: $output"
	# 3: the verifier wrote no reward (reported as reward 0).
	local t=$TEST_DIR/noreward
	mkdir -p "$t/environment" "$t/tests" "$t/solution"
	printf 'version = "1.0"\n[environment]\nnetwork_mode = "none"\n' >"$t/task.toml"
	printf 'FROM localhost/proctor/busybox\n' >"$t/environment/Dockerfile"
	printf '#!/bin/sh\necho "no verdict written"\n' >"$t/tests/test.sh"
	printf '#!/bin/sh\necho one\n\nif true; then\n  echo two\nfi\ncat <<EOF\nthree\n\nfour\nEOF\n' >"$t/solution/solve.sh"
	drive "$TEST_DIR/nr.json" "$t"
	[ "$status" -eq 3 ] || fail_with "no reward: status $status: $output"
	[ "$(reward_of "$TEST_DIR/nr.json")" = 0 ]
	# solve.sh was cut into logical commands: the if block and the
	# here-document (with its blank line) are one exec each.
	grep -q 'agent phase: 3 command(s)' <<<"$output" || fail_with "$output"
	# 1: the image does not build.
	printf 'FROM localhost/proctor/busybox\nRUN exit 7\n' >"$t/environment/Dockerfile"
	drive "$TEST_DIR/nb.json" "$t"
	[ "$status" -eq 1 ] || fail_with "build failure: status $status: $output"
	[ "$(jq -r .status "$TEST_DIR/nb.json")" = error ]
}
