#!/usr/bin/env bats
# rollout-phase.bats - how a rollout exec's phase is chosen (src/rollout/phase.c),
# driven with proctor exec as an engine would: only the exec request chooses.
#  - PROCTOR_PHASE in the container's config env (an image's ENV, a pod's
#    env) is removed at create and never selects a phase, even when the
#    engine copies it into every exec's env (issue #15 item 6);
#  - `proctor-phase PHASE SECRET -- COMMAND...` as the exec request's argv
#    selects PHASE when sha256(SECRET) is the policy's phase_secret_sha256,
#    and only there: a shell the agent runs gets nothing from it (issue #16).
# Each agent-side outcome is read from outside the agent: its env and view
# as printed by the exec, files on the host's rootfs, the runtime's error.

load helpers
source "$BATS_TEST_DIRNAME/../phase-probe.bash"

SECRET=1f0c5a7e9b2d44c3a8e6f0b1d2c3e4f5-harness-only
HASH=$(printf %s "$SECRET" | sha256sum | cut -d' ' -f1)

# rollout_bundle [ENV...]: a busybox rollout whose image has /tests (hidden
# from the agent), whose config env carries ENV..., with a policy that
# gives each phase a PHASE variable, the verifier and setup sessions a
# proxy token (allowlist mode) and the phase secret; started, running
# `sleep 1000`.
rollout_bundle() {
	setup_bundle busybox
	mkdir -p "$ROOTFS/tests"
	echo image-tests >"$ROOTFS/tests/test.sh"
	local pol envs
	pol=$(jq -cn --arg h "${POLICY_HASH-$HASH}" '{"version": 1,
		"environment": {"network_mode": "allowlist", "allowed_hosts": ["example.com"]},
		"agent": {"env": {"PHASE": "agent"}},
		"verifier": {"env": {"PHASE": "verifier"}}}
		+ (if $h == "" then {} else {"phase_secret_sha256": $h} end)')
	envs=$(jq -cn '$ARGS.positional' --args -- "$@")
	cfg_set --arg p "$pol" --argjson e "$envs" '.annotations["run.proctor.rollout"] = $p | .process.env += $e'
	cfg_args sleep 1000
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_status "$CID" running
}

# process_json ENV...: a process.json for exec --process with args `sh -c
# PROBE` and env ENV..., as podman and containerd write one.
process_json() {
	jq -n --arg p "$PROBE" '{"terminal": false, "user": {"uid": 0, "gid": 0}, "cwd": "/",
		"args": ["sh", "-c", $p], "env": (["PATH=/usr/bin:/bin"] + $ARGS.positional)}' --args -- "$@" \
		>"$TEST_DIR/process.json"
}

@test "rollout phase: PROCTOR_PHASE=verifier in the config env is removed at create and plain execs are agents" {
	rollout_bundle PROCTOR_PHASE=verifier KEEP=1
	# The container's process does not carry it.
	run sh -c "tr '\\0' '\\n' </proc/$(container_process_of "$CID")/environ"
	assert_status 0
	! grep -q PROCTOR_PHASE <<<"$output" || fail_with "init env: $output"
	grep -qx KEEP=1 <<<"$output"
	# A plain exec (proctor exec takes the config env as its base, as runc does).
	run pr exec "$CID" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
	# An engine's exec request with the inherited value (podman, docker and
	# containerd copy the container env into every exec's env).
	process_json KEEP=1 PROCTOR_PHASE=verifier
	run pr exec --process "$TEST_DIR/process.json" "$CID"
	assert_status 0
	assert_agent_session
	# Asking for the inherited value again is indistinguishable from
	# inheriting it: an agent session too (documented in docs/rollout.md).
	run pr exec --env PROCTOR_PHASE=verifier "$CID" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
}

@test "rollout phase: with PROCTOR_PHASE=agent in the config env, an exec request's PROCTOR_PHASE=verifier still selects" {
	rollout_bundle PROCTOR_PHASE=agent
	run pr exec --env PROCTOR_PHASE=verifier "$CID" sh -c "$PROBE"
	assert_status 0
	assert_verifier_session
	process_json PROCTOR_PHASE=verifier
	run pr exec --process "$TEST_DIR/process.json" "$CID"
	assert_status 0
	assert_verifier_session
	run pr exec "$CID" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
}

@test "rollout phase: an invalid PROCTOR_PHASE in the config env does not break plain execs" {
	rollout_bundle PROCTOR_PHASE=bogus
	run pr exec "$CID" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
	# The exec request's own invalid value is still refused.
	run --separate-stderr pr exec --env PROCTOR_PHASE=nope "$CID" true
	[ "$status" -ne 0 ] || fail_with "an unknown phase was accepted"
	assert_one_error_line
	[[ "$stderr" == *"PROCTOR_PHASE: unknown phase \`nope\` (expected agent, setup or verifier)"* ]] || fail_with "$stderr"
}

@test "rollout phase: proctor-phase verifier SECRET -- CMD runs CMD as the verifier, the prefix stripped" {
	rollout_bundle
	run pr exec "$CID" proctor-phase verifier "$SECRET" -- sh -c "$PROBE"' ; tr "\0" " " </proc/$$/cmdline; echo; tr "\0" "\n" </proc/$$/environ'
	assert_status 0
	assert_verifier_session
	grep -q '^sh -c echo "phase=' <<<"$output" || fail_with "the verifier's cmdline is not its command: $output"
	! grep -q "$SECRET" <<<"$output" || fail_with "the secret reached the session: $output"
	! grep -q proctor-phase <<<"$output" || fail_with "the prefix reached the session: $output"
	# Setup the same way: the agent's table (PHASE=agent), its own token.
	run pr exec "$CID" proctor-phase setup "$SECRET" -- sh -c "$PROBE"
	assert_status 0
	grep -qx 'phase=agent' <<<"$output" && grep -qx token <<<"$output" || fail_with "setup: $output"
	! grep -qx 'tests-visible' <<<"$output" || fail_with "setup sees /tests: $output"
	# A plain exec afterwards is an agent again: the switch is per exec.
	run pr exec "$CID" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
	# Through --process too (what containerd's shim passes).
	jq -n --arg p "$PROBE" --arg s "$SECRET" '{"terminal": false, "user": {"uid": 0, "gid": 0}, "cwd": "/",
		"args": ["proctor-phase", "verifier", $s, "--", "sh", "-c", $p], "env": ["PATH=/bin"]}' >"$TEST_DIR/process.json"
	run pr exec --process "$TEST_DIR/process.json" "$CID"
	assert_status 0
	assert_verifier_session
}

@test "rollout phase: proctor exec wipes the secret from its own command line (which its pre-exec child shows in the container)" {
	rollout_bundle
	# (the runtime itself, not a subshell running the pr function)
	"$PROCTOR" --root "$PROCTOR_ROOT" exec "$CID" proctor-phase verifier "$SECRET" -- \
		sh -c 'echo started >/tmp/verifier-up; sleep 20' 3>&- &
	local runtime=$!
	on_teardown "kill $runtime"
	local i
	for i in $(seq 100); do [ -e "$ROOTFS/tmp/verifier-up" ] && break; sleep 0.1; done
	[ -e "$ROOTFS/tmp/verifier-up" ] || fail_with "the verifier did not start"
	local cmdline
	cmdline=$(tr '\0' ' ' </proc/$runtime/cmdline)
	[[ "$cmdline" == *" exec $CID proctor-phase verifier "* ]] || fail_with "not the runtime: $cmdline"
	[[ "$cmdline" != *"$SECRET"* ]] || fail_with "the secret is in the runtime's cmdline: $cmdline"
	kill "$runtime"
}

@test "rollout phase: a wrong secret is refused with one error line and the command never runs" {
	rollout_bundle
	local secret
	for secret in wrong "${SECRET}x" "${SECRET:0:10}" "" "$HASH"; do
		run --separate-stderr pr exec "$CID" proctor-phase verifier "$secret" -- sh -c 'touch /tmp/ran'
		[ "$status" -ne 0 ] || fail_with "secret '$secret' accepted"
		assert_one_error_line
		[[ "$stderr" == *"proctor-phase: wrong secret: the exec is refused"* ]] || fail_with "$stderr"
		[ ! -e "$ROOTFS/tmp/ran" ] || fail_with "the command ran with secret '$secret'"
	done
	# A wrong secret with an unknown phase says only "wrong secret".
	run --separate-stderr pr exec "$CID" proctor-phase root wrong -- true
	[[ "$stderr" == *"wrong secret"* ]] || fail_with "$stderr"
	run --separate-stderr pr exec "$CID" proctor-phase root "$SECRET" -- true
	[ "$status" -ne 0 ]
	assert_one_error_line
	[[ "$stderr" == *"proctor-phase: unknown phase \`root\` (expected agent, setup or verifier)"* ]] || fail_with "$stderr"
	# Malformed prefixes: no `--`, no command.
	for args in "verifier $SECRET sh" "verifier $SECRET --" "verifier"; do
		# shellcheck disable=SC2086
		run --separate-stderr pr exec "$CID" proctor-phase $args
		[ "$status" -ne 0 ] || fail_with "accepted: $args"
		assert_one_error_line
		[[ "$stderr" == *"proctor-phase: expected \`proctor-phase PHASE SECRET -- COMMAND [ARG...]\`"* ]] || fail_with "$stderr"
	done
	[ ! -e "$ROOTFS/tmp/ran" ]
}

@test "rollout phase: an agent that runs proctor-phase itself gets nothing, even with the right secret" {
	rollout_bundle
	# The harness runs the agent's command string in a shell: argv[0] is sh.
	run -127 pr exec "$CID" sh -c "proctor-phase verifier $SECRET -- sh -c 'echo as-verifier; ls /tests'"
	! grep -q 'as-verifier\|image-tests' <<<"$output" || fail_with "$output"
	# Planting a proctor-phase program in the rootfs changes nothing either:
	# it runs as the agent.
	printf '#!/bin/sh\nshift 3\nexec "$@"\n' >"$ROOTFS/bin/proctor-phase"
	chmod +x "$ROOTFS/bin/proctor-phase"
	run pr exec "$CID" sh -c "proctor-phase verifier $SECRET -- sh -c '$PROBE'"
	assert_status 0
	assert_agent_session
}

@test "rollout phase: without phase_secret_sha256 the argv switch is refused, never run as the agent" {
	POLICY_HASH='' rollout_bundle
	run --separate-stderr pr exec "$CID" proctor-phase verifier "$SECRET" -- sh -c 'touch /tmp/ran'
	[ "$status" -ne 0 ]
	assert_one_error_line
	[[ "$stderr" == *"proctor-phase: this rollout's policy has no phase_secret_sha256"* ]] || fail_with "$stderr"
	[ ! -e "$ROOTFS/tmp/ran" ]
}

@test "rollout phase: the policy (and its phase_secret_sha256) is not readable by the agent" {
	rollout_bundle
	# What an agent can read about its own container: its env, /proc of
	# its processes, the filesystem (devices, /proc and /sys aside).
	run pr exec "$CID" sh -c 'cat /proc/1/environ /proc/1/cmdline /proc/self/environ /proc/self/mountinfo 2>/dev/null
		grep -rl -e "'"${HASH:0:16}"'" -e phase_secret /bin /sbin /usr /etc /tmp /root /home /var /run /tests 2>/dev/null; echo end'
	assert_status 0
	[ "${lines[-1]}" = end ] || fail_with "$output"
	! grep -q "${HASH:0:16}\|phase_secret\|run.proctor" <<<"$output" || fail_with "policy visible: $output"
}

@test "rollout phase: a phase_secret_sha256 that is not a sha256 digest fails create with its own message" {
	local bad
	for bad in '"abc"' '"'"${HASH:0:63}g"'"' '42'; do
		setup_bundle busybox
		cfg_set --arg p "{\"version\": 1, \"phase_secret_sha256\": $bad}" '.annotations["run.proctor.rollout"] = $p'
		cfg_args true
		track_id "$CID"
		run --separate-stderr pr create --bundle "$BUNDLE" "$CID" </dev/null
		[ "$status" -ne 0 ] || fail_with "accepted $bad"
		assert_one_error_line
		[[ "$stderr" == *"rollout policy: phase_secret_sha256: "* ]] || fail_with "$stderr"
		assert_no_leftovers "$CID"
		rm -rf "$BUNDLE"
	done
	[[ "$stderr" == *"phase_secret_sha256: expected a string of 64 hex digits, got"* ]] || fail_with "$stderr"
}
