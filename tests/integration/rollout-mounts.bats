#!/usr/bin/env bats
# rollout-mounts.bats - config.json mounts at hidden paths are verifier-only
# (src/rollout/hidden.c, verifier.c), straight from a bundle: what any
# engine's -v or volume becomes.  A plain-directory rootfs, so the
# verifier's overlay view is tested here on a non-overlay lower too.

load helpers

# mounts_bundle: busybox bundle, a rollout hiding the defaults, with a
# read-only bind of $TEST_DIR/tests at /tests and a writable bind of
# $TEST_DIR/verdict at /logs/verifier (spelt /./logs//verifier: the match
# is on the normalised path).
mounts_bundle() {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/tests" "$TEST_DIR/verdict"
	echo real-tests >"$TEST_DIR/tests/t.txt"
	chmod 0777 "$TEST_DIR/verdict"
	cfg_set --arg t "$TEST_DIR/tests" --arg v "$TEST_DIR/verdict" \
		'.mounts += [{"destination": "/tests", "type": "bind", "source": $t, "options": ["rbind", "ro"]},
		             {"destination": "/./logs//verifier", "type": "bind", "source": $v, "options": ["bind"]}]'
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\": 1, \"verifier\": {\"user\": \"root\"}}"'
	cfg_args sleep 1000
}

@test "rollout mounts: config.json binds at /tests and /logs/verifier are absent for the agent, present for the verifier" {
	mounts_bundle
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_status "$CID" running
	run pr exec "$CID" sh -c 'for p in /tests /tests/t.txt /logs /logs/verifier; do stat "$p" >/dev/null 2>&1 && echo "present $p"; done
		grep -E " /tests | /logs" /proc/self/mountinfo; echo checked'
	assert_status 0
	[ "$output" = checked ] || fail_with "the agent sees: $output"
	run pr exec --env PROCTOR_PHASE=verifier "$CID" sh -c 'cat /tests/t.txt; echo 1 > /logs/verifier/reward.txt; touch /tests/x 2>/dev/null && echo TESTS-WRITABLE; echo done'
	assert_status 0
	[ "$output" = "real-tests
done" ] || fail_with "$output"
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 1 ]
}

@test "rollout mounts: a mount type that cannot be made verifier-only fails create and leaves nothing" {
	mounts_bundle
	cfg_set '.mounts += [{"destination": "/logs/q", "type": "mqueue", "source": "mqueue"}]'
	! create_ctr || fail_with "create succeeded"
	grep -q 'rollout: mount at hidden path `/logs/q`: type `mqueue` cannot be made verifier-only' "$TEST_DIR/$CID.err" ||
		fail_with "$(cat "$TEST_DIR/$CID.err")"
	run pr state "$CID"
	[ "$status" -ne 0 ]
}

# podman's cleanup can unmount a container's rootfs before it calls the
# runtime's delete: a rollout's delete must still remove its state (the
# hidden paths cannot go back), or an orphan state dir with the image's
# hidden files is left in the runtime root for good.
@test "rollout: delete of a stopped rollout whose rootfs is gone warns once and leaves nothing" {
	setup_bundle busybox
	mkdir -p "$ROOTFS/tests"
	echo image-tests >"$ROOTFS/tests/t.txt"
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\": 1}"'
	cfg_args sleep 1000
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_status "$CID" running
	pr kill "$CID" KILL
	wait_status "$CID" stopped
	mv "$ROOTFS" "$ROOTFS.gone"
	run --separate-stderr pr delete "$CID"
	mv "$ROOTFS.gone" "$ROOTFS"
	[ "$status" -eq 0 ] || fail_with "delete: status $status: $stderr"
	assert_one_error_line
	[[ "$stderr" == *"hidden paths were not put back"* ]] || fail_with "$stderr"
	[ ! -e "$PROCTOR_ROOT/$CID" ] || fail_with "state dir left: $(ls "$PROCTOR_ROOT/$CID")"
	run pr state "$CID"
	[ "$status" -ne 0 ]
}
