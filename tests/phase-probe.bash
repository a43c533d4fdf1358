# tests/phase-probe.bash - what an exec prints about its rollout session
# and the checks on it, shared by the integration and engine rollout-phase
# suites (tests/*/rollout-phase.bats).  The policies there give each phase
# PHASE=<name> in its env and verifier/setup sessions a 3129 proxy token.

# PROBE: a shell script printing one item a line: phase=<PHASE>,
# tests-visible when /tests exists, token when the env holds a 3129
# credential, proctor_vars=<count of PROCTOR_* variables>.
# shellcheck disable=SC2016 # expanded by the session's shell
PROBE='echo "phase=$PHASE"; test -e /tests && echo tests-visible; env | grep -q "@127.0.0.1:3129" && echo token; echo "proctor_vars=$(env | grep -c PROCTOR_)"'

# assert_agent_session: $output (PROBE's) is an agent session's.
assert_agent_session() {
	grep -qx 'phase=agent' <<<"$output" || fail_with "not an agent session: $output"
	! grep -qx 'tests-visible' <<<"$output" || fail_with "the agent sees /tests: $output"
	! grep -qx 'token' <<<"$output" || fail_with "the agent holds a 3129 token: $output"
	grep -qx 'proctor_vars=0' <<<"$output" || fail_with "PROCTOR_* reached the session: $output"
}

# assert_verifier_session: $output (PROBE's) is a verifier session's.
assert_verifier_session() {
	grep -qx 'phase=verifier' <<<"$output" || fail_with "not a verifier session: $output"
	grep -qx 'tests-visible' <<<"$output" || fail_with "the verifier does not see /tests: $output"
	grep -qx 'token' <<<"$output" || fail_with "the verifier has no 3129 token: $output"
	grep -qx 'proctor_vars=0' <<<"$output" || fail_with "PROCTOR_* reached the session: $output"
}
