#!/usr/bin/env bats
# The rollout phase through podman (issue #15 items 6 and 7, issue #16):
# only the exec request chooses a phase.  An image with ENV
# PROCTOR_PHASE=verifier (or `podman run -e PROCTOR_PHASE=verifier`, the
# shape of a pod's env) makes no exec a verifier: podman copies the
# container's env into every exec's env, and proctor recorded at create
# which values came from there.  The harness chooses with `podman exec -e
# PROCTOR_PHASE=...` (when the container does not carry that same value),
# with the argv switch `proctor-phase PHASE SECRET -- CMD...`, or with
# `proctor rollout phase` on the node.  Also: the agent's uid_map reads
# like a plain container's.

load helpers
source "$BATS_TEST_DIRNAME/../phase-probe.bash"

ENV_IMAGE=localhost/proctor/rollout-phase-env
SECRET=5d41402abc4b2a76b9719d911017c592-kept-by-the-harness
HASH=$(printf %s "$SECRET" | sha256sum | cut -d' ' -f1)

setup_file() {
	engine_setup_file || return 1
	podman image exists "$ENV_IMAGE" && return 0
	podman image exists localhost/proctor/bookworm || return 0 # need_image skips
	local ctx
	ctx=$(mktemp -d)
	cat >"$ctx/Containerfile" <<'CF'
FROM localhost/proctor/bookworm
RUN mkdir -p /tests && echo image-tests > /tests/test.sh
ENV PROCTOR_PHASE=verifier
CF
	podman build --runtime "$PROCTOR" -q -t "$ENV_IMAGE" "$ctx" >&3
	rm -rf "$ctx"
}

# The policy: each phase names itself in PHASE, verifier and setup sessions
# get a proxy token (allowlist mode: http_proxy=http://TOKEN@127.0.0.1:3129),
# and the argv switch's digest.
POLICY=$(jq -cn --arg h "$HASH" '{"version": 1,
	"environment": {"network_mode": "allowlist", "allowed_hosts": ["example.com"]},
	"agent": {"env": {"PHASE": "agent"}},
	"verifier": {"user": "root", "env": {"PHASE": "verifier"}},
	"phase_secret_sha256": $h}')

# start IMAGE [podman run args...]
start() {
	local img=$1
	shift
	track_name "$NAME"
	# (podman splits an --annotation value on commas: a file, not inline JSON)
	printf '%s\n' "$POLICY" >"$TEST_DIR/policy.json"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$@" "$img" sleep 1000
	assert_status 0
}

@test "rollout phase (podman): an image with ENV PROCTOR_PHASE=verifier gives plain execs agent sessions" {
	need_image bookworm
	start "$ENV_IMAGE"
	# podman does hand the image's value to every exec ...
	[ "$(podman inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$NAME" | grep -c '^PROCTOR_PHASE=verifier$')" = 1 ]
	# ... and it selects nothing.
	run pm exec "$NAME" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
	# The container's own process does not carry it either.
	run pm exec "$NAME" sh -c 'tr "\0" "\n" </proc/1/environ'
	assert_status 0
	! grep -q PROCTOR_PHASE <<<"$output" || fail_with "pid 1 env: $output"
	# An agent background process started from a plain exec is an agent too.
	run pm exec -d "$NAME" sh -c "($PROBE) >/tmp/bg.out"
	assert_status 0
	wait_until 30 pm exec "$NAME" test -s /tmp/bg.out
	run pm exec "$NAME" cat /tmp/bg.out
	assert_agent_session
}

@test "rollout phase (podman): podman run -e PROCTOR_PHASE=verifier (a pod's env) gives plain execs agent sessions" {
	need_image bookworm
	start localhost/proctor/bookworm -e PROCTOR_PHASE=verifier
	run pm exec "$NAME" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
}

@test "rollout phase (podman): exec -e PROCTOR_PHASE=verifier selects unless the container carries that value; then the argv switch does" {
	need_image bookworm
	# No PROCTOR_PHASE in the container: -e selects, as before.
	start localhost/proctor/bookworm
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c "$PROBE"
	assert_status 0
	grep -qx 'phase=verifier' <<<"$output" && grep -qx token <<<"$output" || fail_with "$output"
	pm rm -f -t 0 "$NAME" >/dev/null
	# The image carries PROCTOR_PHASE=verifier: `-e PROCTOR_PHASE=verifier`
	# is the same env podman sends for a plain exec, so it cannot select
	# (documented in docs/rollout.md); the harness uses the argv switch.
	start "$ENV_IMAGE"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c "$PROBE"
	assert_status 0
	assert_agent_session
	run pm exec "$NAME" proctor-phase verifier "$SECRET" -- sh -c "$PROBE"' ; tr "\0" " " </proc/$$/cmdline'
	assert_status 0
	assert_verifier_session
	grep -q '^sh -c echo "phase=' <<<"$output" || fail_with "cmdline: $output"
	! grep -q "$SECRET\|proctor-phase" <<<"$output" || fail_with "the prefix reached the verifier: $output"
	# A value other than the container's does select.
	run pm exec -e PROCTOR_PHASE=setup "$NAME" sh -c "$PROBE"
	assert_status 0
	grep -qx 'phase=agent' <<<"$output" && grep -qx token <<<"$output" || fail_with "setup: $output"
	# And from the node.
	run "$PROCTOR" --root /run/proctor rollout phase "$(podman inspect -f '{{.Id}}' "$NAME")" verifier
	assert_status 0
	run pm exec "$NAME" sh -c "$PROBE"
	assert_status 0
	assert_verifier_session
}

@test "rollout phase (podman): a wrong secret in the argv switch is refused and the command never runs" {
	need_image bookworm
	start "$ENV_IMAGE"
	run pm exec "$NAME" proctor-phase verifier wrong-secret -- sh -c 'touch /tmp/ran'
	[ "$status" -ne 0 ] || fail_with "accepted: $output"
	[[ "$output" == *"proctor-phase: wrong secret: the exec is refused"* ]] || fail_with "$output"
	run pm exec "$NAME" sh -c 'test -e /tmp/ran && echo ran; echo checked'
	[ "$output" = checked ] || fail_with "the refused command ran: $output"
	# The agent's own attempt, right secret included, is an unknown command.
	run -127 pm exec "$NAME" sh -c "proctor-phase verifier $SECRET -- cat /tests/test.sh"
	! grep -q image-tests <<<"$output" || fail_with "$output"
}

@test "rollout agent (podman): uid_map and gid_map read as in a plain container" {
	need_image bookworm
	local plain
	plain=$(pm run --rm localhost/proctor/bookworm sh -c 'cat /proc/self/uid_map /proc/self/gid_map' | tr -s ' ')
	[ "$plain" = " 0 0 4294967295
 0 0 4294967295" ] || fail_with "plain container: $plain"
	start localhost/proctor/bookworm
	run pm exec "$NAME" sh -c 'cat /proc/self/uid_map /proc/self/gid_map'
	assert_status 0
	[ "$(tr -s ' ' <<<"$output")" = "$plain" ] || fail_with "agent: $output"
	# It is still a user namespace of its own.
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]
	# Ids above the old 65536 map work end to end: the agent chowns, the
	# verifier reads and changes them.
	run pm exec "$NAME" sh -c 'touch /tmp/f && chown 100000:4000000000 /tmp/f && stat -c %u:%g /tmp/f'
	assert_status 0
	[ "$output" = 100000:4000000000 ] || fail_with "$output"
	run pm exec "$NAME" proctor-phase verifier "$SECRET" -- sh -c 'stat -c %u:%g /tmp/f; chown 7:8 /tmp/f && stat -c %u:%g /tmp/f'
	assert_status 0
	[ "$output" = "100000:4000000000
7:8" ] || fail_with "verifier: $output"
}
