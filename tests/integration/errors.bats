#!/usr/bin/env bats
# Bad input: each case fails with a non-zero exit, exactly one error line
# on stderr, and leaves nothing behind (state dir, cgroup, process, mount).

load helpers

@test "malformed JSON in config.json" {
	setup_bundle busybox
	printf '{"ociVersion": "1.0.2", "process": {' >"$BUNDLE/config.json"
	create_must_fail
}

@test "wrong type for process.args" {
	setup_bundle busybox
	cfg_set '.process.args = "sh"'
	create_must_fail
	[[ "$stderr" == *args* ]] || fail_with "error does not name the field: $stderr"
}

@test "missing rootfs" {
	setup_bundle busybox
	cfg_set --arg r "$TEST_DIR/no-such-rootfs" '.root.path = $r'
	create_must_fail
}

@test "relative mount destination" {
	runtime_is runc && skip "runc: accepts relative mount destinations with a warning (compatibility)"
	setup_bundle busybox
	cfg_set '.mounts += [{"destination": "relative/dir", "type": "tmpfs", "source": "tmpfs"}]'
	create_must_fail
	[[ "$stderr" == *relative/dir* ]] || fail_with "error does not name the destination: $stderr"
}

@test "a negative memory limit other than -1 names the field" {
	setup_bundle busybox
	cfg_set '.linux.resources.memory = {"limit": -5}'
	create_must_fail
	[[ "$stderr" == *"linux.resources.memory.limit: -5 is not a byte count"* ]] ||
		fail_with "error does not name the field: $stderr"
}

@test "impossible uid/gid mappings name the field instead of the kernel's EINVAL" {
	setup_bundle busybox
	local base
	base=$(cat "$BUNDLE/config.json")
	local -a cases=(
		'[{"containerID": 0, "hostID": 100000, "size": 0}]|linux.uidMappings[0].size: must be at least 1'
		'[{"containerID": 0, "hostID": 4294967290, "size": 100}]|linux.uidMappings[0]: the range ends past 4294967295'
		'[{"containerID": 0, "hostID": 100000, "size": 100}, {"containerID": 50, "hostID": 200000, "size": 10}]|linux.uidMappings[0] and [1]: the ranges overlap'
	)
	local entry maps want
	for entry in "${cases[@]}"; do
		maps=${entry%%|*}
		want=${entry#*|}
		jq --argjson m "$maps" '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = $m
			| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]' <<<"$base" >"$BUNDLE/config.json"
		create_must_fail
		[[ "$stderr" == *"$want"* ]] || fail_with "wanted '$want': $stderr"
	done
}

@test "a memory limit too small to start the container says it ran out of memory" {
	runtime_is proctor || skip "proctor's wording"
	setup_bundle busybox
	cfg_set '.linux.resources.memory = {"limit": 1}'
	create_must_fail
	[[ "$stderr" == *"ran out of memory"*"linux.resources.memory.limit"* ]] || fail_with "no OOM hint: $stderr"
}

@test "a process.env entry without '=' is refused, not dropped" {
	setup_bundle busybox
	cfg_set '.process.env = ["PATH=/bin", "NOEQ"]'
	create_must_fail
	[[ "$stderr" == *NOEQ* ]] || fail_with "error does not name the entry: $stderr"
	! runtime_is proctor || [[ "$stderr" == *"process.env[1]: \`NOEQ\` is not KEY=VALUE"* ]] || fail_with "$stderr"
}

@test "unknown namespace type" {
	setup_bundle busybox
	cfg_set '.linux.namespaces += [{"type": "prtbogus"}]'
	create_must_fail
	[[ "$stderr" == *prtbogus* ]] || fail_with "error does not name the type: $stderr"
}

@test "nonexistent namespace path" {
	setup_bundle busybox
	cfg_set '.linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
		+ [{"type": "network", "path": "/run/netns/prt-no-such-netns"}]'
	create_must_fail
	[[ "$stderr" == */run/netns/prt-no-such-netns* ]] || fail_with "error does not name the path: $stderr"
}

@test "a process binary missing from the rootfs fails start or create" {
	setup_bundle busybox
	cfg_args /no/such/binary
	track_id "$CID"
	status=0
	pr run --bundle "$BUNDLE" "$CID" </dev/null >"$TEST_DIR/run.out" 2>"$TEST_DIR/run.err" || status=$?
	[ "$status" -ne 0 ]
	grep -Eqi 'no such file or directory|not found' "$TEST_DIR/run.err" || fail_with "$(cat "$TEST_DIR/run.err")"
	pr delete -f "$CID" 2>/dev/null || true
	assert_no_leftovers "$CID"
}

@test "unknown container: start, kill, delete, exec and state fail with 'does not exist'" {
	for cmd in "start" "kill" "delete" "state" "exec"; do
		args=("$cmd" prt-no-such-ctr)
		[ "$cmd" = exec ] && args+=(true)
		run --separate-stderr pr "${args[@]}"
		[ "$status" -ne 0 ] || fail_with "$cmd succeeded"
		assert_one_error_line
		[[ "$stderr" == *"does not exist"* ]] || fail_with "$cmd: $stderr"
	done
	[ ! -e "$PROCTOR_ROOT/prt-no-such-ctr" ]
}

@test "--log FILE --log-format json writes a JSON error line with a msg" {
	run --separate-stderr pr --log "$TEST_DIR/log.json" --log-format json state prt-no-such-ctr
	[ "$status" -ne 0 ]
	[ -s "$TEST_DIR/log.json" ]
	# Every line is a JSON object; the last error line carries the message.
	while IFS= read -r line; do
		echo "$line" | jq -e 'type == "object"' >/dev/null || fail_with "not JSON: $line"
	done <"$TEST_DIR/log.json"
	msg=$(jq -r 'select(.level == "error") | .msg' "$TEST_DIR/log.json" | tail -n 1)
	[[ "$msg" == *"does not exist"* ]] || fail_with "log: $(cat "$TEST_DIR/log.json")"
	[ -n "$(jq -r 'select(.level == "error") | .time' "$TEST_DIR/log.json" | tail -n 1)" ]
}

@test "--log with a failing create records the error in the log file" {
	setup_bundle busybox
	cfg_set '.linux.namespaces += [{"type": "prtbogus"}]'
	track_id "$CID"
	run pr --log "$TEST_DIR/log.json" --log-format json create --bundle "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	msg=$(jq -r 'select(.level == "error") | .msg' "$TEST_DIR/log.json" | tail -n 1)
	[[ "$msg" == *prtbogus* ]] || fail_with "log: $(cat "$TEST_DIR/log.json")"
	assert_no_leftovers "$CID"
}
