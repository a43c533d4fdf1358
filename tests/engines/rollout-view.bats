#!/usr/bin/env bats
# The verifier's mount view (SPEC section 2 "Filesystem", issue #15 items 4
# and 5), through podman on the bookworm test image: verifier mounts at any
# depth keep the agent's other files visible, the view does not grow with
# what the agent creates, and engine mounts (-v) at hidden paths are
# verifier-only.  Every outcome is read from inside the verifier or on the
# host.

load helpers

# start_rollout POLICY_JSON [podman run args...]: a running rollout of the
# bookworm image with the policy in a file.
start_rollout() {
	printf '%s\n' "$1" >"$TEST_DIR/policy.json"
	shift
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$@" \
		"$(image bookworm)" sleep 1000
	assert_status 0
}

# verifier ARGS...: an exec in the verifier phase.
verifier() { pm exec -e PROCTOR_PHASE=verifier "$NAME" "$@"; }

@test "rollout view: a verifier mount at /app/grader keeps the agent's /app/answer; a planted symlink there redirects nothing" {
	need_image bookworm
	mkdir -p "$TEST_DIR/grader"
	echo grader-file >"$TEST_DIR/grader/check.txt"
	start_rollout '{"version": 1, "verifier": {"user": "root",
	  "mounts": [{"source": "'"$TEST_DIR"'/grader", "destination": "/app/grader", "readonly": true}]}}'
	# The agent answers in /app and plants /app/grader -> /etc with a
	# decoy check.txt behind it.
	run pm exec -u 0 "$NAME" sh -c 'mkdir -p /app/sub && echo 42 > /app/answer && echo deep > /app/sub/f &&
		echo decoy > /etc/check.txt && ln -s /etc /app/grader && chmod 0711 /app && echo planted'
	assert_status 0
	run verifier sh -c 'ls -A /app | sort | tr "\n" " "; echo; cat /app/answer /app/sub/f /app/grader/check.txt; stat -c %a /app; [ -L /app/grader ] && echo STILL-A-LINK; echo done'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = "answer grader sub " ] || fail_with "$output"
	[ "$(sed -n 2,4p <<<"$output")" = "42
deep
grader-file" ] || fail_with "$output"
	# The skeleton directory takes the live /app's mode.
	[ "$(sed -n 5p <<<"$output")" = 711 ] || fail_with "$output"
	! grep -q STILL-A-LINK <<<"$output" || fail_with "$output"
	# The agent's side is untouched: its symlink is still there.
	run pm exec "$NAME" sh -c 'readlink /app/grader'
	[ "$output" = /etc ] || fail_with "$output"
}

@test "rollout view: 100,000 top-level directories: the verifier runs, with the mount count of 10" {
	need_image bookworm
	mkdir -p "$TEST_DIR/tests"
	echo real-tests >"$TEST_DIR/tests/t.txt"
	start_rollout '{"version": 1, "verifier": {"user": "root",
	  "mounts": [{"source": "'"$TEST_DIR"'/tests", "destination": "/tests", "readonly": true}]}}'
	run pm exec -u 0 "$NAME" sh -c 'cd / && seq 1 10 | sed s/^/few/ | xargs mkdir && echo made'
	assert_status 0
	run verifier sh -c 'wc -l < /proc/self/mountinfo'
	assert_status 0
	few=$output
	[ "$few" -gt 5 ] || fail_with "mountinfo: $output"
	run pm exec -u 0 "$NAME" sh -c 'cd / && seq 1 100000 | sed s/^/many/ | xargs mkdir && echo 1 > /many77777/f && ls / | wc -l'
	assert_status 0
	[ "$output" -gt 100000 ] || fail_with "$output"
	run verifier sh -c 'wc -l < /proc/self/mountinfo; cat /tests/t.txt /many77777/f; ls / | wc -l'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = "$few" ] || fail_with "mount count $few with 10 dirs, then: $output"
	[ "$(sed -n 2,3p <<<"$output")" = "real-tests
1" ] || fail_with "$output"
	[ "$(sed -n 4p <<<"$output")" -gt 100000 ] || fail_with "$output"
}

@test "rollout view: the verifier reads what agent processes change while it runs, and writes to the real rootfs" {
	need_image bookworm
	mkdir -p "$TEST_DIR/tests"
	start_rollout '{"version": 1, "verifier": {"user": "root",
	  "mounts": [{"source": "'"$TEST_DIR"'/tests", "destination": "/tests", "readonly": true}]}}'
	# An agent service replaces its state file by rename (as atomic
	# writers do) and creates a new file, once /srv/go appears.
	run pm exec -d -u 0 "$NAME" sh -c 'mkdir -p /srv && echo old > /srv/state && while [ ! -e /srv/go ]; do sleep 0.05; done;
		echo new > /srv/state.tmp && mv /srv/state.tmp /srv/state && echo made > /srv/later && touch /srv/done'
	assert_status 0
	run pm exec "$NAME" sh -c 'for i in $(seq 100); do [ -e /srv/state ] && break; sleep 0.05; done; cat /srv/state'
	[ "$output" = old ] || fail_with "$output"
	# The verifier looks first (state old, later absent), then triggers
	# the service through the real rootfs and looks again.
	run verifier sh -c 'cat /srv/state; [ -e /srv/later ] || echo later-absent; touch /srv/go;
		for i in $(seq 200); do [ -e /srv/done ] && break; sleep 0.05; done; cat /srv/state /srv/later'
	assert_status 0
	[ "$output" = "old
later-absent
new
made" ] || fail_with "$output"
}

@test "rollout view: podman -v HOST:/tests:ro and -v HOST:/logs/verifier are absent for the agent, present for the verifier" {
	need_image bookworm
	mkdir -p "$TEST_DIR/tests" "$TEST_DIR/verdict"
	printf '#!/bin/sh\necho real-tests\necho 1 > /logs/verifier/reward.txt\n' >"$TEST_DIR/tests/test.sh"
	chmod +x "$TEST_DIR/tests/test.sh"
	chmod 0777 "$TEST_DIR/verdict"
	start_rollout '{"version": 1, "verifier": {"user": "root"}}' \
		-v "$TEST_DIR/tests:/tests:ro" -v "$TEST_DIR/verdict:/logs/verifier"
	run pm exec -u 0 "$NAME" sh -c 'for p in /tests /tests/test.sh /logs /logs/verifier; do stat "$p" >/dev/null 2>&1 && echo "present $p"; done
		grep -E " /tests | /logs" /proc/self/mountinfo; ls / | grep -E "^(tests|logs)$"; echo checked'
	assert_status 0
	[ "$output" = checked ] || fail_with "the agent sees: $output"
	run verifier sh -c '/tests/test.sh; cat /logs/verifier/reward.txt; touch /tests/x 2>/dev/null && echo TESTS-WRITABLE; echo done'
	assert_status 0
	[ "$output" = "real-tests
1
done" ] || fail_with "$output"
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 1 ] || fail_with "the verdict did not reach the host dir"
	# The agent writes its own /logs/verifier: the host dir never sees it.
	run pm exec -u 0 "$NAME" sh -c 'mkdir -p /logs/verifier && echo 0 > /logs/verifier/reward.txt && echo forged'
	assert_status 0
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 1 ]
	run verifier cat /logs/verifier/reward.txt
	[ "$output" = 1 ] || fail_with "$output"
}

# The agent's resolver trick: a name the verifier resolves mapped to the
# agent's loopback, and `options use-vc` (TCP DNS, refused by transparent
# egress) in resolv.conf; the engine's binds of both are writable by the
# agent's root.
resolver_trick() {
	run pm exec "$NAME" sh -c 'echo "127.0.0.1 grader.example.test" >> /etc/hosts &&
		echo "options use-vc" >> /etc/resolv.conf && getent hosts grader.example.test'
	assert_status 0
	grep -q 127.0.0.1 <<<"$output" || fail_with "$output"
}

@test "rollout view: an agent's /etc/hosts and resolv.conf (use-vc) are not the verifier's: it sees them as at create, also with verifier.base image" {
	need_image bookworm
	local name0=$NAME
	for base in rollout image; do
		NAME=$name0-$base
		start_rollout '{"version": 1, "verifier": {"user": "root", "base": "'$base'"}}'
		run pm exec "$NAME" sh -c 'cat /etc/hosts /etc/resolv.conf | md5sum'
		before=$output
		resolver_trick
		run verifier sh -c 'getent hosts grader.example.test || echo NONE; grep -c use-vc /etc/resolv.conf; cat /etc/hosts /etc/resolv.conf | md5sum'
		[ "$(sed -n 1p <<<"$output")" = NONE ] || fail_with "$base: $output"
		[ "$(sed -n 2p <<<"$output")" = 0 ] || fail_with "$base: $output"
		[ "$(sed -n 3p <<<"$output")" = "$before" ] || fail_with "$base: $output (before: $before)"
		# The agent keeps its own files; nothing of the copies in its view.
		run pm exec "$NAME" sh -c 'grep -c use-vc /etc/resolv.conf; ls /etc | grep -c rollout-etc'
		[ "$output" = "1
0" ] || fail_with "$base: $output"
	done
}

@test "rollout view: the tamper report names the agent's changes to /etc/hosts and /etc/resolv.conf" {
	need_image bookworm
	start_rollout '{"version": 1, "verifier": {"user": "root"}}'
	run "$PROCTOR" rollout status "$(podman inspect -f '{{.Id}}' "$NAME")"
	assert_status 0
	jq -e '.tamper.tampered == false' <<<"$output" >/dev/null || fail_with "$output"
	resolver_trick
	run "$PROCTOR" rollout status "$(podman inspect -f '{{.Id}}' "$NAME")"
	assert_status 0
	jq -e '[.tamper.changes[] | select(.class == "resolver" and .change == "modified") | .path] == ["/etc/hosts", "/etc/resolv.conf"]' \
		<<<"$output" >/dev/null || fail_with "$(jq -c .tamper <<<"$output")"
}
