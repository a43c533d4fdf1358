#!/usr/bin/env bats
# rollout-status.bats - `proctor rollout status ID` (src/cmd/rollout.c): a
# JSON document that a harness parses.  The policy's strings (hide paths,
# user names) may hold any character: the output must stay valid JSON and
# give them back unchanged.

load helpers

# status_of ID: the status document, checked to be valid JSON by two
# parsers (python3's json module and jq).
status_of() {
	run --separate-stderr pr rollout status "$1"
	assert_status 0
	python3 -m json.tool <<<"$output" >/dev/null || fail_with "not valid JSON (python3 -m json.tool): $output"
	jq -e 'type == "object"' <<<"$output" >/dev/null || fail_with "not valid JSON (jq): $output"
}

@test "rollout status: hide paths and a user name holding '\"' and '\\' give valid JSON that keeps them" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	setup_bundle busybox
	# A user whose name holds both characters, in the image's passwd.
	echo 'q"u\s:x:4242:4242::/:/bin/sh' >>"$ROOTFS/etc/passwd"
	echo 'q"u\s:x:4242:' >>"$ROOTFS/etc/group"
	local hide1='/opt/a"b' hide2='/opt/c\d' user='q"u\s'
	local policy
	policy=$(jq -cn --arg h1 "$hide1" --arg h2 "$hide2" --arg u "$user" \
		'{"version": 1, "environment": {"network_mode": "none"}, "agent": {"user": $u}, "hide": [$h1, $h2]}')
	cfg_set --arg p "$policy" '.annotations["run.proctor.rollout"] = $p'
	cfg_args sleep 1000
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	status_of "$CID"
	[ "$(jq -r '.hidden[0].path' <<<"$output")" = "$hide1" ] || fail_with "hidden[0]: $output"
	[ "$(jq -r '.hidden[1].path' <<<"$output")" = "$hide2" ] || fail_with "hidden[1]: $output"
	[ "$(jq -r '.users.agent' <<<"$output")" = "$user" ] || fail_with "users.agent: $output"
	[ "$(jq -r '.policy.hide | join("|")' <<<"$output")" = "$hide1|$hide2" ] || fail_with "policy.hide: $output"
	[ "$(jq -r '.policy.agent.user' <<<"$output")" = "$user" ] || fail_with "policy.agent.user: $output"
	[ "$(jq -r '.id' <<<"$output")" = "$CID" ] || fail_with "id: $output"
	[ "$(jq -r '.status' <<<"$output")" = created ] || fail_with "status: $output"
}

@test "rollout status: every field the harness reads is there, with its type" {
	setup_bundle busybox
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\": 1, \"environment\": {\"network_mode\": \"none\"}, \"hide\": [\"/root\", \"/opt/none\"]}"'
	cfg_args sleep 1000
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	status_of "$CID"
	jq -e '(.id | type) == "string" and .phase == "agent"
		and .network == {"agent": "no-network", "setup": "no-network", "verifier": "no-network"}
		and .egress == {"reachable": []}
		and (.users | keys) == ["agent", "verifier"]
		and .hidden == [{"path": "/root", "in_image": true}, {"path": "/opt/none", "in_image": false}]
		and (.policy | type) == "object" and .policy.version == 1' <<<"$output" >/dev/null ||
		fail_with "status: $output"
}

@test "rollout status: a plain-directory rootfs gives a tamper report that says it is unavailable" {
	setup_bundle busybox
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\": 1}"'
	cfg_args sleep 1000
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	status_of "$CID"
	jq -e '.tamper == {"base": "rollout", "source": "unavailable", "complete": false, "tampered": false, "changes": []}' \
		<<<"$output" >/dev/null || fail_with "tamper: $(jq -c .tamper <<<"$output")"
}

@test "rollout: verifier.base image on a plain-directory rootfs fails create with one clear error and leaves nothing" {
	setup_bundle busybox
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\": 1, \"verifier\": {\"base\": \"image\"}}"'
	cfg_args sleep 1000
	create_must_fail
	grep -qF 'verifier.base: "image" needs an overlay rootfs' <<<"$stderr" || fail_with "$stderr"
}
