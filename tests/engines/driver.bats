#!/usr/bin/env bats
# The rollout driver (contrib/rollout/proctor-rollout) beyond single-image
# tasks: compose services as sibling containers (a connected one reached by
# name as a peer, an isolated one unreachable; everything removed on
# success, failure and Ctrl-C); the verifier chosen by the argv switch
# (proctor-phase + a per-run secret), so an image's ENV PROCTOR_PHASE
# cannot decide the phase; --strict grading a tampered rollout as failed.

load helpers
source "$BATS_TEST_DIRNAME/../mirror.bash"

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DRIVER=$TOP/contrib/rollout/proctor-rollout
TASKS=$TOP/contrib/tasks

setup_file() {
	[ -x "${PROCTOR:-}" ] || return 1
	command -v jq >/dev/null
	python3 -c 'import yaml' # python3-yaml: compose tasks
	egress_wrapper "$BATS_FILE_TMPDIR/proctor" "$PROCTOR"
	export PROCTOR=$BATS_FILE_TMPDIR/proctor
}

drive() {
	local json=$1
	shift
	run timeout -k 5 600 "$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" --json "$json" "$@"
}

reward_of() { jq -r '.reward' "$1"; }

# left_behind: containers and networks any driver run labelled and left.
left_behind() {
	podman ps -a -q --filter label=proctor-rollout.run
	podman network ls -q --filter label=proctor-rollout.run
}

# busybox_task DIR [DOCKERFILE_EXTRA]: a minimal task on busybox.
busybox_task() {
	mkdir -p "$1/environment" "$1/tests" "$1/solution"
	printf 'version = "1.0"\n[environment]\nallow_internet = false\n' >"$1/task.toml"
	printf 'FROM localhost/proctor/busybox\n%s\n' "${2:-}" >"$1/environment/Dockerfile"
	printf '#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n' >"$1/tests/test.sh"
	printf '#!/bin/sh\necho solved\n' >"$1/solution/solve.sh"
}

@test "task compose-services: oracle 1 (db reached by name by agent and verifier), empty agent 0; grader no peer; nothing left" {
	need_image bookworm
	need_image busybox
	drive "$TEST_DIR/oracle.json" "$TASKS/compose-services"
	[ "$status" -eq 0 ] || fail_with "oracle: status $status: $output"
	[ "$(reward_of "$TEST_DIR/oracle.json")" = 1 ] || fail_with "oracle: $output"
	grep -q '| grader: unreachable' <<<"$output" || fail_with "$output"
	jq -e '.services.db.isolated == false and .services.grader.isolated == true and .services.grader.address == null' \
		"$TEST_DIR/oracle.json" >/dev/null || fail_with "$(jq .services "$TEST_DIR/oracle.json")"
	jq -e '[.policy.peers[] | select(.name == "db" and .port == 6379)] | length == 1' "$TEST_DIR/oracle.json" >/dev/null ||
		fail_with "$(jq .policy "$TEST_DIR/oracle.json")"
	jq -e '[.policy.peers[] | select(.name == "grader")] | length == 0' "$TEST_DIR/oracle.json" >/dev/null
	[ -z "$(left_behind)" ] || fail_with "left behind: $(left_behind)"
	drive "$TEST_DIR/empty.json" --agent none "$TASKS/compose-services"
	[ "$status" -eq 0 ] && [ "$(reward_of "$TEST_DIR/empty.json")" = 0 ] || fail_with "empty: $output"
}

@test "compose: an agent reaches db by name and cannot name, resolve or connect to the isolated grader" {
	need_image bookworm
	need_image busybox
	# An agent that tries the isolated service every way it can name it.
	cat >"$TEST_DIR/probe.sh" <<'SH'
#!/bin/bash
redis-cli -h db PING
getent hosts grader || echo "grader: no name"
for p in 80 6379 8000; do timeout 3 bash -c "echo > /dev/tcp/grader/$p" 2>/dev/null && echo "grader:$p open"; done
grep -w grader /etc/hosts || echo "grader: not in /etc/hosts"
echo probe done
SH
	drive "$TEST_DIR/probe.json" --agent-mode exec --agent "$TEST_DIR/probe.sh" "$TASKS/compose-services"
	[ "$status" -eq 0 ] || fail_with "probe: status $status: $output"
	grep -q '| PONG' <<<"$output" || fail_with "db not reached: $output"
	grep -q '| grader: no name' <<<"$output" || fail_with "$output"
	grep -q '| grader: not in /etc/hosts' <<<"$output" || fail_with "$output"
	! grep -q 'grader:[0-9]* open' <<<"$output" || fail_with "grader reached: $output"
	[ "$(reward_of "$TEST_DIR/probe.json")" = 0 ]
	[ -z "$(left_behind)" ] || fail_with "left behind: $(left_behind)"
}

@test "compose: contradictions are errors by name (unknown service, unknown mode, unknown key); nothing is left" {
	local t=$TEST_DIR/bad
	busybox_task "$t"
	local -a cases=(
		'unknown service|services:\n  svc:\n    image: localhost/proctor/busybox\n    depends_on: [nope]\n'
		'network_mode: .host.|services:\n  svc:\n    image: localhost/proctor/busybox\n    network_mode: host\n'
		'services.svc.volumes: not supported|services:\n  svc:\n    image: localhost/proctor/busybox\n    volumes: [/srv:/srv]\n'
		'must be a DNS label|services:\n  my_db:\n    image: localhost/proctor/busybox\n'
		'depends_on cycle|services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n    depends_on: [a]\n'
	)
	local c want
	for c in "${cases[@]}"; do
		want=${c%%|*}
		printf "${c#*|}" >"$t/environment/docker-compose.yaml"
		drive "$TEST_DIR/bad.json" "$t"
		[ "$status" -eq 2 ] || fail_with "[$want] status $status: $output"
		grep -q -- "$want" <<<"$output" || fail_with "[$want] message: $output"
	done
	# A connected service without a port is refused at start, and what was
	# started by then is removed.
	need_image busybox
	printf 'services:\n  svc:\n    image: localhost/proctor/busybox\n    command: [sleep, "1000"]\n' \
		>"$t/environment/docker-compose.yaml"
	drive "$TEST_DIR/noport.json" "$t"
	[ "$status" -eq 2 ] || fail_with "no port: status $status: $output"
	grep -q 'svc is connected but declares no port' <<<"$output" || fail_with "$output"
	[ -z "$(left_behind)" ] || fail_with "left behind: $(left_behind)"
}

@test "compose: Ctrl-C in the agent phase removes the rollout, the services and the network" {
	need_image bookworm
	need_image busybox
	printf '#!/bin/bash\necho agent sleeping\nsleep 300\n' >"$TEST_DIR/slow.sh"
	"$DRIVER" --runtime "$PROCTOR" --jobs-dir "$TEST_DIR/jobs" --json "$TEST_DIR/int.json" \
		--agent "$TEST_DIR/slow.sh" "$TASKS/compose-services" >"$TEST_DIR/int.out" 2>&1 3>&- &
	local pid=$! i
	for i in $(seq 240); do
		grep -q '| agent sleeping' "$TEST_DIR/int.out" && break
		sleep 0.5
	done
	grep -q '| agent sleeping' "$TEST_DIR/int.out" || fail_with "$(cat "$TEST_DIR/int.out")"
	[ -n "$(left_behind)" ] # the run's containers exist now
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 1 ] || fail_with "exit $rc: $(cat "$TEST_DIR/int.out")"
	[ "$(jq -r .error "$TEST_DIR/int.json")" = interrupted ]
	[ -z "$(left_behind)" ] || fail_with "left behind: $(left_behind)"
}

@test "argv switch: the verifier runs through proctor-phase with a per-run secret; an image's ENV PROCTOR_PHASE decides nothing" {
	need_image busybox
	local t=$TEST_DIR/envphase
	# The image carries PROCTOR_PHASE=verifier, so `podman exec -e
	# PROCTOR_PHASE=verifier` is an agent session: only the switch works.
	busybox_task "$t" 'ENV PROCTOR_PHASE=verifier'
	cat >"$t/tests/test.sh" <<'SH'
#!/bin/sh
# The switch's four words are gone from the verifier's own argv.
if tr '\0' ' ' </proc/$$/cmdline | grep -q proctor-phase; then echo 0; else echo 1; fi >/logs/verifier/reward.txt
SH
	cat >"$TEST_DIR/agent.sh" <<'SH'
#!/bin/sh
echo "agent phase var: $PROCTOR_PHASE"
ls /tests 2>&1 || echo "no /tests for the agent"
proctor-phase verifier guess -- cat /tests/test.sh || echo "no switch from a shell"
SH
	drive "$TEST_DIR/ep.json" --agent-mode exec --agent "$TEST_DIR/agent.sh" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	[ "$(reward_of "$TEST_DIR/ep.json")" = 1 ] || fail_with "$output"
	grep -q '| no /tests for the agent' <<<"$output" || fail_with "$output"
	grep -q '| no switch from a shell' <<<"$output" || fail_with "$output"
	grep -q 'verifier phase: sh /tests/test.sh (proctor-phase verifier)' <<<"$output" || fail_with "$output"
	local job d1 d2
	job=$(jq -r .job_dir "$TEST_DIR/ep.json")
	d1=$(jq -r .phase_secret_sha256 "$job/policy.json")
	[[ $d1 =~ ^[0-9a-f]{64}$ ]] || fail_with "$(cat "$job/policy.json")"
	# A fresh secret per run.
	drive "$TEST_DIR/ep2.json" --agent none "$t"
	[ "$status" -eq 0 ] || fail_with "$output"
	d2=$(jq -r .policy.phase_secret_sha256 "$TEST_DIR/ep2.json")
	[ "$d1" != "$d2" ] || fail_with "the same secret twice"
}

@test "--strict: a tampered rollout is graded as failed, the tamper report printed beside the reward" {
	need_image busybox
	local t=$TEST_DIR/tamper
	busybox_task "$t"
	printf '#!/bin/sh\nmkdir -p /etc/profile.d\necho "export PATH=/tmp/evil:$PATH" > /etc/profile.d/zz-evil.sh\n' >"$t/solution/solve.sh"
	# Without a tamper report from this proctor: said so, and --strict
	# cannot fail the run on it.
	drive "$TEST_DIR/na.json" --strict "$t"
	[ "$status" -eq 0 ] || fail_with "$output"
	if jq -e '.tamper == null' "$TEST_DIR/na.json" >/dev/null; then
		grep -q '== tamper report: not available from this proctor' <<<"$output" || fail_with "$output"
	fi
	# `proctor rollout status` through a wrapper that adds the report
	# s3-base's proctor gives (kept when the real one has it).
	cat >"$TEST_DIR/status-tool" <<SH
#!/bin/bash
if [ "\$3 \$4" = "rollout status" ]; then
	"$PROCTOR" "\$@" | jq -c 'if .tamper then . else .tamper = {"base": "rollout", "source": "overlay-upper",
	  "complete": true, "tampered": true,
	  "changes": [{"path": "/etc/profile.d/zz-evil.sh", "change": "created", "class": "shell"}]} end'
	exit "\${PIPESTATUS[0]}"
fi
exec "$PROCTOR" "\$@"
SH
	chmod +x "$TEST_DIR/status-tool"
	export PROCTOR_ROLLOUT_TOOL=$TEST_DIR/status-tool
	drive "$TEST_DIR/lax.json" "$t"
	[ "$status" -eq 0 ] || fail_with "$output"
	[ "$(reward_of "$TEST_DIR/lax.json")" = 1 ] || fail_with "without --strict: $output"
	grep -q '== tamper report: TAMPERED' <<<"$output" || fail_with "$output"
	grep -q 'created  shell .*/etc/profile.d/zz-evil.sh' <<<"$output" || fail_with "$output"
	drive "$TEST_DIR/strict.json" --strict "$t"
	[ "$status" -eq 0 ] || fail_with "$output"
	[ "$(reward_of "$TEST_DIR/strict.json")" = 0 ] || fail_with "--strict: $output"
	jq -e '.verifier_reward == 1 and (.strict_failed | test("tamper")) and .tamper.tampered' \
		"$TEST_DIR/strict.json" >/dev/null || fail_with "$(cat "$TEST_DIR/strict.json")"
	grep -q 'verdict under --strict: reward 0' <<<"$output" || fail_with "$output"
	# A clean rollout stays graded by its verifier under --strict.
	printf '#!/bin/sh\necho solved\n' >"$t/solution/solve.sh"
	cat >"$TEST_DIR/status-tool" <<SH
#!/bin/bash
if [ "\$3 \$4" = "rollout status" ]; then
	"$PROCTOR" "\$@" | jq -c '.tamper = {"base": "rollout", "source": "overlay-upper", "complete": true, "tampered": false, "changes": []}'
	exit "\${PIPESTATUS[0]}"
fi
exec "$PROCTOR" "\$@"
SH
	drive "$TEST_DIR/clean.json" --strict "$t"
	[ "$(reward_of "$TEST_DIR/clean.json")" = 1 ] || fail_with "clean under --strict: $output"
	grep -q '== tamper report: clean, 0 change' <<<"$output" || fail_with "$output"
}

@test "argv switch: the phase secret is nowhere the agent looks (its processes during the verifier, the job directory holds only the digest)" {
	need_image busybox
	local t=$TEST_DIR/secret
	busybox_task "$t"
	# The verifier gives the agent's scanner time to look while it runs.
	cat >"$t/tests/test.sh" <<'SH'
#!/bin/sh
sleep 2
if [ -f /tmp/scanner.alive ] && [ ! -s /tmp/seen ]; then echo 1; else echo 0; fi >/logs/verifier/reward.txt
cat /tmp/seen 2>/dev/null
SH
	# The agent leaves a scanner of every process's argv and environment
	# it can see, looking for the switch or anything like a secret.
	cat >"$TEST_DIR/scan.sh" <<'SH'
#!/bin/sh
: >/tmp/seen
( while :; do
	touch /tmp/scanner.alive
	for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
		tr '\0' '\n' <"$f" 2>/dev/null | grep -E 'proctor-phase|[0-9a-f]{64}' >>/tmp/seen
	done
	sleep 0.1
done ) >/dev/null 2>&1 &
sleep 0.5
echo scanner started
SH
	drive "$TEST_DIR/sc.json" --agent "$TEST_DIR/scan.sh" "$t"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	[ "$(reward_of "$TEST_DIR/sc.json")" = 1 ] || fail_with "the scanner saw: $output"
	local job digest hexes
	job=$(jq -r .job_dir "$TEST_DIR/sc.json")
	digest=$(jq -r .phase_secret_sha256 "$job/policy.json")
	hexes=$(grep -rhoE '[0-9a-f]{64}' "$job" "$TEST_DIR/sc.json" | sort -u)
	[ "$hexes" = "$digest" ] || fail_with "64-hex strings in the job: $hexes (digest $digest)"
	! grep -q -- "$digest" <<<"$output" || fail_with "the driver printed the digest: $output"
}

# cheat_task DIR: an unsolvable task whose "solution" trojans cat in
# /usr/local/bin (ahead of /usr/bin on PATH) to print the expected answer.
cheat_task() {
	mkdir -p "$1/environment" "$1/tests" "$1/solution"
	printf 'version = "1.0"\n[environment]\nallow_internet = false\n' >"$1/task.toml"
	printf 'FROM localhost/proctor/bookworm\n' >"$1/environment/Dockerfile"
	printf '#!/bin/bash\nif [ "$(cat /work/answer 2>/dev/null)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n' >"$1/tests/test.sh"
	printf '#!/bin/sh\nprintf "#!/bin/sh\\necho 42\\n" > /usr/local/bin/cat && chmod 755 /usr/local/bin/cat\n' >"$1/solution/solve.sh"
}

@test "--verifier-base image: a solution that trojans cat scores 0; under the default it scores 1 and the tamper report names it" {
	need_image bookworm
	cheat_task "$TEST_DIR/cheat"
	drive "$TEST_DIR/rollout.json" "$TEST_DIR/cheat"
	[ "$status" -eq 0 ] || fail_with "default: status $status: $output"
	[ "$(reward_of "$TEST_DIR/rollout.json")" = 1 ] || fail_with "the trojan did not win under the default base: $output"
	jq -e '.tamper.tampered and any(.tamper.changes[]; .path == "/usr/local/bin/cat")' "$TEST_DIR/rollout.json" >/dev/null ||
		fail_with "$(jq -c .tamper "$TEST_DIR/rollout.json")"
	drive "$TEST_DIR/image.json" --verifier-base image "$TEST_DIR/cheat"
	[ "$status" -eq 0 ] || fail_with "image: status $status: $output"
	jq -e '.policy.verifier.base == "image" and .tamper.base == "image"' "$TEST_DIR/image.json" >/dev/null ||
		fail_with "$(jq -c '[.policy.verifier, .tamper]' "$TEST_DIR/image.json")"
	[ "$(reward_of "$TEST_DIR/image.json")" = 0 ] || fail_with "the trojan won under --verifier-base image: $output"
	[ -z "$(left_behind)" ] || fail_with "left behind: $(left_behind)"
}

@test "[verifier] base = \"image\" in task.toml: the trojan scores 0; --verifier-base rollout overrides it; another value refuses the task" {
	need_image bookworm
	cheat_task "$TEST_DIR/cheat"
	printf '[verifier]\nbase = "image"\n' >>"$TEST_DIR/cheat/task.toml"
	drive "$TEST_DIR/image.json" "$TEST_DIR/cheat"
	[ "$status" -eq 0 ] || fail_with "status $status: $output"
	! grep -q 'unknown key \[verifier\] base' <<<"$output" || fail_with "the key was ignored: $output"
	jq -e '.policy.verifier.base == "image"' "$TEST_DIR/image.json" >/dev/null ||
		fail_with "$(jq -c .policy.verifier "$TEST_DIR/image.json")"
	[ "$(reward_of "$TEST_DIR/image.json")" = 0 ] || fail_with "the trojan won under [verifier] base image: $output"
	drive "$TEST_DIR/rollout.json" --verifier-base rollout "$TEST_DIR/cheat"
	[ "$(reward_of "$TEST_DIR/rollout.json")" = 1 ] || fail_with "the flag did not override the task: $output"
	sed -i 's/base = "image"/base = "img"/' "$TEST_DIR/cheat/task.toml"
	drive "$TEST_DIR/bad.json" "$TEST_DIR/cheat"
	[ "$status" -ne 0 ] || fail_with "a bad base was accepted: $output"
	grep -q "\[verifier\] base = 'img': expected \"rollout\" or \"image\"" <<<"$output" || fail_with "$output"
	[ -z "$(left_behind)" ] || fail_with "left behind: $(left_behind)"
}
