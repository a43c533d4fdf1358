#!/usr/bin/env bats
# Container lifecycle: create/start/kill/delete, run, list, state errors.

load helpers

@test "create gives created with a pid; start runs; kill stops; delete removes" {
	setup_bundle busybox
	cfg_args sh -c 'echo started; exec sleep 1000'
	create_ctr
	[ "$(state_of "$CID" status)" = created ]
	pid=$(state_of "$CID" pid)
	[ "$pid" -gt 1 ]
	kill -0 "$pid"
	[ "$(state_of "$CID" id)" = "$CID" ]
	[ "$(state_of "$CID" bundle)" = "$BUNDLE" ]
	# The user process has not run yet.
	[ ! -s "$TEST_DIR/$CID.out" ]

	pr start "$CID"
	wait_status "$CID" running
	wait_file "$TEST_DIR/$CID.out"
	grep -qx started "$TEST_DIR/$CID.out"
	[ "$(state_of "$CID" pid)" = "$pid" ]
	[ "$(cat "/proc/$pid/comm")" = sleep ]

	pr kill "$CID" KILL
	wait_status "$CID" stopped
	wait_gone "$pid"

	pr delete "$CID"
	run pr state "$CID"
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
}

@test "run propagates the exit code" {
	setup_bundle busybox
	cfg_args sh -c 'echo out; echo err >&2; exit 7'
	run_ctr
	assert_status 7
	assert_output_contains out
	assert_output_contains err
	run pr state "$CID"
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
}

@test "run with a successful process exits 0 and prints its output" {
	setup_bundle busybox
	cfg_args echo hello-from-container
	run_ctr
	assert_status 0
	[ "$output" = hello-from-container ]
}

@test "run --detach leaves the container running" {
	setup_bundle busybox
	cfg_args sleep 1000
	track_id "$CID"
	pr run --detach --bundle "$BUNDLE" "$CID" </dev/null >"$TEST_DIR/out" 2>&1
	[ "$(state_of "$CID" status)" = running ]
	pid=$(state_of "$CID" pid)
	[ "$(cat "/proc/$pid/comm")" = sleep ]
	pr delete --force "$CID"
	wait_gone "$pid"
	assert_no_leftovers "$CID"
}

@test "list shows containers; list --format json has id, status, pid, bundle" {
	setup_bundle busybox
	cfg_args sleep 1000
	create_ctr
	create_ctr "$CID-b"
	pr start "$CID-b"
	run pr list
	assert_status 0
	assert_output_contains "$CID "
	assert_output_contains "$CID-b "
	[ "$(echo "$output" | grep -c "^$CID ")" -eq 1 ]
	echo "$output" | grep "^$CID " | grep -q created
	echo "$output" | grep "^$CID-b " | grep -q running

	run pr list --format json
	assert_status 0
	[ "$(echo "$output" | jq -r --arg id "$CID" '.[] | select(.id == $id) | .status')" = created ]
	[ "$(echo "$output" | jq -r --arg id "$CID-b" '.[] | select(.id == $id) | .status')" = running ]
	[ "$(echo "$output" | jq -r --arg id "$CID-b" '.[] | select(.id == $id) | .pid')" = "$(state_of "$CID-b" pid)" ]
	[ "$(echo "$output" | jq -r --arg id "$CID" '.[] | select(.id == $id) | .bundle')" = "$BUNDLE" ]
}

@test "state of an unknown id fails with 'does not exist'" {
	run --separate-stderr pr state prt-no-such-container
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"does not exist"* ]] || fail_with "stderr: $stderr"
}

@test "creating a duplicate id fails with 'exists' and keeps the first" {
	setup_bundle busybox
	cfg_args sleep 1000
	create_ctr
	pid=$(state_of "$CID" pid)
	run --separate-stderr pr create --bundle "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *exists* ]] || fail_with "stderr: $stderr"
	[ "$(state_of "$CID" status)" = created ]
	[ "$(state_of "$CID" pid)" = "$pid" ]
}

@test "delete --force removes a running container" {
	setup_bundle busybox
	cfg_args sleep 1000
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	pid=$(state_of "$CID" pid)
	run pr delete "$CID"
	[ "$status" -ne 0 ]
	[ "$(state_of "$CID" status)" = running ]
	pr delete --force "$CID"
	wait_gone "$pid"
	run pr state "$CID"
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
}

@test "delete --force removes a created container" {
	setup_bundle busybox
	cfg_args sleep 1000
	create_ctr
	pid=$(state_of "$CID" pid)
	pr delete --force "$CID"
	wait_gone "$pid"
	assert_no_leftovers "$CID"
}

@test "kill of a stopped container fails" {
	setup_bundle busybox
	cfg_args true
	create_ctr
	pr start "$CID"
	wait_status "$CID" stopped
	run --separate-stderr pr kill "$CID" KILL
	[ "$status" -ne 0 ]
	[ -n "$stderr" ]
	# Still deletable afterwards.
	pr delete "$CID"
	assert_no_leftovers "$CID"
}

@test "kill sends the named signal to the container process" {
	setup_bundle busybox
	cfg_args sh -c 'trap "echo got-usr1; exit 3" USR1; echo ready; while :; do sleep 0.1; done'
	create_ctr
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	pr kill "$CID" USR1
	wait_status "$CID" stopped
	grep -qx got-usr1 "$TEST_DIR/$CID.out"
}

@test "delete --force of a container that does not exist succeeds, as runc's does" {
	run pr delete --force no-such-container-here
	assert_status 0
	run pr delete no-such-container-here
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]
}
