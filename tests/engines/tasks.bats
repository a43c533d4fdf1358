#!/usr/bin/env bats
# The example tasks (contrib/tasks/) through the rollout driver
# (contrib/rollout/proctor-rollout) under podman with proctor: each scores 1
# with its oracle solution and 0 with an empty agent phase; the adversarial
# task's tricks all fail under proctor and work in a plain runc container;
# the driver's exit status reflects the run, not the reward; task.toml is
# read as Harbor reads it (keys mapped, refused or warned about by name);
# the agent modes (whole, persistent shell, one exec per command) keep or
# lose shell state as documented; the job directory holds result.json.
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
	run timeout -k 5 600 "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" --json "$json" "$@"
}

# prebuilt_image: the image contrib/tasks/prebuilt-image names as its
# docker_image, built from the task's recipe (the driver never builds it).
prebuilt_image() {
	podman build --runtime "$PROCTOR" -q -t localhost/proctor-task-prebuilt:latest \
		"$TASKS/prebuilt-image/environment" >/dev/null
}

# toml_task DIR TOML: a minimal busybox task in DIR with TOML as task.toml.
toml_task() {
	mkdir -p "$1/environment" "$1/tests" "$1/solution"
	printf '%s\n' "$2" >"$1/task.toml"
	printf 'FROM localhost/proctor/busybox\n' >"$1/environment/Dockerfile"
	printf '#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n' >"$1/tests/test.sh"
	printf '#!/bin/sh\necho solved\n' >"$1/solution/solve.sh"
}

reward_of() { jq -r '.reward' "$1"; }

# check_task NAME [ARGS...]: oracle scores 1, the empty agent phase 0, both
# runs exit 0; ARGS go to the oracle run.
check_task() {
	local t=$1
	shift
	need_image bookworm
	drive "$TEST_DIR/oracle.json" "$@" "$TASKS/$t"
	[ "$status" -eq 0 ] || fail_with "oracle run of $t exited $status: $output"
	[ "$(reward_of "$TEST_DIR/oracle.json")" = 1 ] || fail_with "oracle reward of $t: $output"
	printf '%s\n' "$output" >"$TEST_DIR/oracle.out"
	drive "$TEST_DIR/empty.json" --agent none "$TASKS/$t"
	[ "$status" -eq 0 ] || fail_with "empty run of $t exited $status: $output"
	[ "$(reward_of "$TEST_DIR/empty.json")" = 0 ] || fail_with "empty-agent reward of $t: $output"
}

@test "task service-health: a background service from one exec serves the next and the verifier" {
	check_task service-health --agent-mode exec
	grep -q 'agent phase: 3 command(s), one podman exec each' "$TEST_DIR/oracle.out" || fail_with "$(cat "$TEST_DIR/oracle.out")"
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
	drive "$TEST_DIR/nr.json" --agent-mode exec "$t"
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

@test "task shell-state: the oracle runs whole by default (cd, variables, a function, set -e carry over)" {
	check_task shell-state
	grep -q 'agent phase: /solution/solve.sh whole, one podman exec' "$TEST_DIR/oracle.out" || fail_with "$(cat "$TEST_DIR/oracle.out")"
	grep -q 'built dist/app-2.7.1.txt in /srv/project' "$TEST_DIR/oracle.out" || fail_with "$(cat "$TEST_DIR/oracle.out")"
}

@test "task shell-state: --agent-mode shell keeps one shell, --agent-mode exec loses its state and scores 0" {
	need_image bookworm
	drive "$TEST_DIR/shell.json" --agent-mode shell "$TASKS/shell-state"
	[ "$status" -eq 0 ] || fail_with "shell mode exited $status: $output"
	[ "$(reward_of "$TEST_DIR/shell.json")" = 1 ] || fail_with "shell mode: $output"
	# set -e ended the shell at the failing preflight: publish.sh never ran.
	grep -q 'the shell exited with status 1; 1 command(s) not run' <<<"$output" || fail_with "$output"
	local job
	job=$(jq -r .job_dir "$TEST_DIR/shell.json")
	jq -e '.[-1].command == "./preflight.sh" and .[-1].shell_exited and .[-1].exit == 1' "$job/agent/commands.json" >/dev/null ||
		fail_with "$(cat "$job/agent/commands.json")"
	drive "$TEST_DIR/exec.json" --agent-mode exec "$TASKS/shell-state"
	[ "$status" -eq 0 ] || fail_with "exec mode exited $status: $output"
	[ "$(reward_of "$TEST_DIR/exec.json")" = 0 ] || fail_with "exec mode kept shell state: $output"
}

@test "driver: --agent-mode shell carries cwd, variables, functions, aliases and set options; a timed-out command is interrupted" {
	need_image bookworm
	local t=$TEST_DIR/state
	mkdir -p "$t/environment" "$t/tests"
	printf 'version = "1.0"\n[environment]\nallow_internet = false\n' >"$t/task.toml"
	printf 'FROM localhost/proctor/bookworm\n' >"$t/environment/Dockerfile"
	printf '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n' >"$t/tests/test.sh"
	cat >"$TEST_DIR/agent.sh" <<'SH'
#!/bin/bash
cd /tmp
x=42
greet() { echo "greet $1"; }
alias shout='echo ALIASED'
set -o pipefail
shout from an alias
sleep 1000
echo "after: $PWD x=$x $(greet fn)"
false | true
echo "pipefail status $?"
read -r line || echo "stdin is empty"
set -e
false
echo "never printed"
SH
	drive "$TEST_DIR/st.json" --agent-mode shell --command-timeout 3 --agent "$TEST_DIR/agent.sh" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	grep -q 'timed out after' <<<"$output" || fail_with "no timeout: $output"
	grep -q '| after: /tmp x=42 greet fn$' <<<"$output" || fail_with "state lost: $output"
	grep -q '| pipefail status 1$' <<<"$output" || fail_with "set -o pipefail lost: $output"
	grep -q '| ALIASED from an alias$' <<<"$output" || fail_with "alias lost: $output"
	grep -q '| stdin is empty$' <<<"$output" || fail_with "a command read the driver's stream: $output"
	! grep -q 'never printed' <<<"$output" || fail_with "set -e did not end the shell: $output"
	grep -q '1 command(s) not run' <<<"$output" || fail_with "$output"
	local job
	job=$(jq -r .job_dir "$TEST_DIR/st.json")
	jq -e '.[] | select(.command == "sleep 1000") | .timed_out and .exit == 130' "$job/agent/commands.json" >/dev/null ||
		fail_with "$(cat "$job/agent/commands.json")"
}

@test "task allow-internet: allow_internet = true without network_mode is public for every phase" {
	check_task allow-internet
	jq -e '.policy.environment.network_mode == "public" and .network_from == "allow_internet"' "$TEST_DIR/oracle.json" >/dev/null ||
		fail_with "$(jq -c .policy "$TEST_DIR/oracle.json")"
	jq -e '[.egress.log[] | select(.phase == "agent" and .decision == "allow")] | length > 0' "$TEST_DIR/oracle.json" >/dev/null ||
		fail_with "no allowed agent egress: $(jq -c .egress "$TEST_DIR/oracle.json")"
	jq -e '[.egress.log[] | select(.phase == "verifier" and .decision == "allow")] | length > 0' "$TEST_DIR/oracle.json" >/dev/null ||
		fail_with "no allowed verifier egress: $(jq -c .egress "$TEST_DIR/oracle.json")"
	# allow_internet = false: no network at all.
	local t=$TEST_DIR/offline
	toml_task "$t" $'version = "1.0"\n[environment]\nallow_internet = false'
	drive "$TEST_DIR/off.json" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	jq -e '.policy.environment.network_mode == "no-network"' "$TEST_DIR/off.json" >/dev/null || fail_with "$output"
}

@test "task prebuilt-image: [environment] docker_image is used when present locally, a clear error otherwise" {
	need_image bookworm
	prebuilt_image
	check_task prebuilt-image
	jq -e '.image == "localhost/proctor-task-prebuilt:latest" and .image_source == "docker_image"' "$TEST_DIR/oracle.json" >/dev/null ||
		fail_with "$(cat "$TEST_DIR/oracle.json")"
	jq -e '.resources == {"cpus": 1, "memory_mb": 512}' "$TEST_DIR/oracle.json" >/dev/null || fail_with "$(cat "$TEST_DIR/oracle.json")"
	grep -q 'environment/Dockerfile is not built' "$TEST_DIR/oracle.out" || fail_with "$(cat "$TEST_DIR/oracle.out")"
	local t=$TEST_DIR/missing
	toml_task "$t" $'version = "1.0"\n[environment]\ndocker_image = "localhost/proctor-task-missing:nothing"'
	drive "$TEST_DIR/missing.json" "$t"
	[ "$status" -eq 1 ] || fail_with "status $status: $output"
	grep -q "docker_image 'localhost/proctor-task-missing:nothing' is not present locally" <<<"$output" || fail_with "$output"
}

@test "driver: [environment] cpus and memory_mb reach the container's cgroup" {
	need_image bookworm
	local t=$TEST_DIR/res
	toml_task "$t" $'version = "1.0"\n[environment]\nallow_internet = false\ncpus = 1\nmemory_mb = 300'
	# The agent reads its own limits: cgroup v2 or v1, whichever this host mounts.
	cat >"$t/solution/solve.sh" <<'SH'
#!/bin/sh
if [ -f /sys/fs/cgroup/memory.max ]; then echo "memory $(cat /sys/fs/cgroup/memory.max)"; echo "cpu $(cat /sys/fs/cgroup/cpu.max)"
else echo "memory $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"; echo "cpu $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi
SH
	drive "$TEST_DIR/res.json" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	grep -q '| memory 314572800$' <<<"$output" || fail_with "memory limit not applied: $output"
	grep -qE '\| cpu 100000 100000$' <<<"$output" || fail_with "cpu limit not applied: $output"
}

@test "task verifier-writes: tests are writable for the verifier and absent for the agent; the job directory keeps the verdict" {
	check_task verifier-writes
	local job
	job=$(jq -r .job_dir "$TEST_DIR/oracle.json")
	[ -f "$job/result.json" ] || fail_with "no $job/result.json"
	jq -e '.schema == "proctor-rollout/result/1" and .reward == 1 and .reward_source == "reward.json"
		and .reward_fields == {"reward": 1, "checks": 3, "passed": 3}
		and .verifier.ctrf == "verifier/ctrf.json" and .exit_status == 0
		and (.phase_seconds | keys == ["agent", "build", "setup", "start", "verifier"])
		and ([.phase_seconds[] | numbers] | length == 5)' "$job/result.json" >/dev/null || fail_with "$(cat "$job/result.json")"
	jq -e '.results.summary.passed == 3' "$job/verifier/ctrf.json" >/dev/null || fail_with "$(cat "$job/verifier/ctrf.json")"
	grep -q '^tests-writable: passed$' "$job/verifier/stdout.txt" || fail_with "$(cat "$job/verifier/stdout.txt")"
	grep -q '^stderr line from the verifier$' "$job/verifier/stderr.txt" || fail_with "$(cat "$job/verifier/stderr.txt")"
	! grep -q 'stderr line' "$job/verifier/stdout.txt" || fail_with "stderr mixed into stdout"
	jq -e '.verifier.user == "nobody"' "$job/policy.json" >/dev/null || fail_with "$(cat "$job/policy.json")"
	# The agent could not see /tests (the empty run fails only that and the count).
	jq -e '.reward_fields.passed == 1' "$(jq -r .job_dir "$TEST_DIR/empty.json")/result.json" >/dev/null ||
		fail_with "$(cat "$(jq -r .job_dir "$TEST_DIR/empty.json")/result.json")"
	# The tests are a copy: the task's own files are unchanged.
	[ ! -e "$TASKS/verifier-writes/tests/generated-expected.txt" ] && ! grep -qx '# graded' "$TASKS/verifier-writes/tests/test.sh"
}

@test "driver: task.toml keys it cannot apply are refused or warned about by name" {
	local t=$TEST_DIR/keys
	toml_task "$t" $'version = "1.0"\n[environment]\nallow_internet = false\ngpus = 1'
	run "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" "$t"
	[ "$status" -eq 2 ] && grep -q 'gpus = 1: GPU tasks are not supported' <<<"$output" || fail_with "gpus: $status: $output"
	toml_task "$t" $'version = "1.0"\n[[environment.mcp_servers]]\nname = "x"\nurl = "http://x.invalid/sse"'
	run "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" "$t"
	[ "$status" -eq 2 ] && grep -q 'mcp_servers: MCP servers are not supported' <<<"$output" || fail_with "mcp: $status: $output"
	toml_task "$t" $'version = "1.0"\n[environment]\nnetwork_mode = "open"'
	run "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" "$t"
	[ "$status" -eq 2 ] && grep -q "network_mode = 'open'" <<<"$output" || fail_with "mode: $status: $output"
	toml_task "$t" $'version = "1.0"\n[environment]\nallow_internet = false'
	printf 'services: {}\n' >"$t/environment/docker-compose.yaml"
	run "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" "$t"
	[ "$status" -eq 2 ] && grep -q 'environment/docker-compose.yaml: expected a top-level services: mapping' <<<"$output" ||
		fail_with "compose: $status: $output"
	rm "$t/environment/docker-compose.yaml"
	need_image busybox
	toml_task "$t" $'version = "1.0"\nflavour = 1\n[environment]\nallow_internet = false\nstorage_mb = 4096\nskills_dir = "/skills"\ncolour = "red"\n[agent]\nshoe_size = 9\n[solution]\nenv = { SOLUTION_KEY = "from-solution-env" }'
	printf '#!/bin/sh\necho "key=$SOLUTION_KEY"\n' >"$t/solution/solve.sh"
	printf '#!/bin/sh\necho "verifier-key=${SOLUTION_KEY:-unset}"\necho 1 > /logs/verifier/reward.txt\n' >"$t/tests/test.sh"
	drive "$TEST_DIR/w.json" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	for w in "unknown top-level key 'flavour'" "\[environment\] storage_mb = 4096: not enforced" "\[environment\] skills_dir: ignored" \
		"unknown key \[environment\] colour" "unknown key \[agent\] shoe_size"; do
		grep -q "warning: keys: $w" <<<"$output" || fail_with "no warning '$w': $output"
	done
	[ "$(jq '.warnings | length' "$TEST_DIR/w.json")" = 5 ] || fail_with "$(jq .warnings "$TEST_DIR/w.json")"
	# [solution] env reaches the oracle, and not the verifier.
	grep -q '| key=from-solution-env$' <<<"$output" || fail_with "solution env: $output"
	grep -qx 'verifier-key=unset' "$(jq -r .job_dir "$TEST_DIR/w.json")/verifier/stdout.txt" ||
		fail_with "the verifier saw the solution's env: $(cat "$(jq -r .job_dir "$TEST_DIR/w.json")/verifier/stdout.txt")"
}

@test "driver: artifacts: /logs/artifacts and the task's artifacts list are copied into the job; links and missing paths are reported, never followed" {
	need_image busybox
	local t=$TEST_DIR/art
	toml_task "$t" $'version = "1.0"\nartifacts = ["/app/out.txt", { source = "/app/dir", destination = "keep/d" }, "/app/none"]\n[environment]\nallow_internet = false'
	printf '#!/bin/sh\nmkdir -p /logs/artifacts/sub /app/dir\necho conv > /logs/artifacts/c.txt\necho deep > /logs/artifacts/sub/s.txt\necho out > /app/out.txt\necho d > /app/dir/f\nln -s /etc/hostname /logs/artifacts/link\nmkfifo /logs/artifacts/fifo\n' >"$t/solution/solve.sh"
	drive "$TEST_DIR/art.json" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	local a
	a=$(jq -r .job_dir "$TEST_DIR/art.json")/artifacts
	[ "$(cat "$a/c.txt")" = conv ] && [ "$(cat "$a/sub/s.txt")" = deep ] || fail_with "$(find "$a" -ls)"
	[ "$(cat "$a/out.txt")" = out ] && [ "$(cat "$a/keep/d/f")" = d ] || fail_with "$(find "$a" -ls)"
	# A link the agent planted would point at the host's /etc/hostname here.
	[ ! -L "$a/link" ] && [ ! -e "$a/link" ] && [ ! -e "$a/fifo" ] || fail_with "$(find "$a" -ls)"
	jq -e '.artifacts.missing == ["/app/none"] and .artifacts.removed == ["fifo", "link"]' "$TEST_DIR/art.json" >/dev/null ||
		fail_with "$(jq .artifacts "$TEST_DIR/art.json")"
	grep -q 'warning: artifact /app/none' <<<"$output" || fail_with "$output"
	for bad in '"../up"' '"/abs"'; do
		toml_task "$t" "version = \"1.0\"
artifacts = [{ source = \"/app/x\", destination = $bad }]"
		run "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" "$t"
		[ "$status" -eq 2 ] && grep -q 'artifacts\[0\]: destination must be a relative path' <<<"$output" ||
			fail_with "$bad: $status: $output"
	done
}

@test "driver: [environment] healthcheck runs in the setup phase until it passes; one that keeps failing fails the run" {
	need_image busybox
	local t=$TEST_DIR/hc
	# The first check fails and leaves a mark; the second passes.
	toml_task "$t" $'version = "1.0"\n[environment]\nallow_internet = false\n[environment.healthcheck]\ncommand = "test -e /tmp/checked || { touch /tmp/checked; exit 1; }"\ninterval_sec = 0.2\nretries = 2'
	printf '#!/bin/sh\nls /tmp/checked\n' >"$t/solution/solve.sh"
	drive "$TEST_DIR/hc.json" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	grep -q 'setup phase: healthcheck' <<<"$output" && grep -q '^   healthy$' <<<"$output" || fail_with "$output"
	grep -q '| /tmp/checked$' <<<"$output" || fail_with "the healthcheck did not run in the agent's view: $output"
	toml_task "$t" $'version = "1.0"\n[environment]\nallow_internet = false\n[environment.healthcheck]\ncommand = "echo not ready; exit 3"\ninterval_sec = 0.2\nretries = 2'
	drive "$TEST_DIR/hc2.json" "$t"
	[ "$status" -eq 1 ] || fail_with "status $status: $output"
	grep -q 'healthcheck failed 2 times: `echo not ready; exit 3` exited 3: not ready' <<<"$output" || fail_with "$output"
	[ "$(jq -r '.phase_seconds.agent' "$TEST_DIR/hc2.json")" = null ] || fail_with "the agent phase ran: $output"
}

@test "driver: --agent-setup installs under the environment's policy in the setup phase; the agent stays offline" {
	need_image bookworm
	local t=$TEST_DIR/install
	mkdir -p "$t/environment" "$t/tests"
	printf 'version = "1.0"\n[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${DEBIAN_MIRROR}"]\n[agent]\nnetwork_mode = "no-network"\n' >"$t/task.toml"
	printf 'FROM localhost/proctor/bookworm\nRUN mkdir -p /srv\n' >"$t/environment/Dockerfile"
	printf '#!/bin/bash\n[ "$(cat /srv/out.txt)" = "Hello, world!" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n' >"$t/tests/test.sh"
	printf '#!/bin/bash\n# setup-marker-7c1e\nset -e\napt-get update -q >/dev/null\nDEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends hello >/dev/null\necho "installed $(command -v hello)"\n' >"$TEST_DIR/setup.sh"
	printf '#!/bin/bash\necho "agent proxy=${http_proxy:-none}"\nhello > /srv/out.txt\nm=setup-marker-\necho "copies: $(grep -rls -D skip "${m}7c1e" /tmp /root /srv /var/tmp /run /solution 2>/dev/null | tr "\\n" " ")."\n' >"$TEST_DIR/agent.sh"
	drive "$TEST_DIR/in.json" --agent-setup "$TEST_DIR/setup.sh" --agent "$TEST_DIR/agent.sh" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	[ "$(reward_of "$TEST_DIR/in.json")" = 1 ] || fail_with "$output"
	grep -q '| installed /usr/bin/hello$' <<<"$output" && grep -q '| agent proxy=none$' <<<"$output" || fail_with "$output"
	jq -e '([.egress.log[] | select(.phase == "setup" and .decision == "allow")] | length > 0)
		and ([.egress.log[] | select(.phase == "agent")] | length == 0)' "$TEST_DIR/in.json" >/dev/null ||
		fail_with "$(jq -c .egress "$TEST_DIR/in.json")"
	# The install step's text went through stdin: no copy of it in the agent's view.
	grep -q '| copies: \.$' <<<"$output" || fail_with "a copy of the install step is in the agent's view: $output"
	# A failing install step fails the run before the agent phase.
	printf '#!/bin/sh\nexit 4\n' >"$TEST_DIR/bad.sh"
	drive "$TEST_DIR/bad.json" --agent-setup "$TEST_DIR/bad.sh" --agent "$TEST_DIR/agent.sh" "$t"
	[ "$status" -eq 1 ] && grep -q "the agent install step $TEST_DIR/bad.sh exited 4" <<<"$output" || fail_with "status $status: $output"
}
