#!/usr/bin/env bats
# Container lifecycle: create/start/kill/delete, run, list, state and its
# fields, state errors, features, --version.

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

@test "kill of a stopped container fails with 'container not running'" {
	setup_bundle busybox
	cfg_args true
	create_ctr
	pr start "$CID"
	wait_status "$CID" stopped
	run --separate-stderr pr kill "$CID" KILL
	[ "$status" -ne 0 ]
	# containerd's runc shim maps runc's "container not running" to
	# not-found: the wording is part of the contract (SPEC section 1).
	[[ "$stderr" == *"container not running"* ]] || fail_with "stderr: $stderr"
	# And the shim reads it from the --log file's last error line.
	run pr --log "$TEST_DIR/log.json" --log-format json kill "$CID" KILL
	[ "$status" -ne 0 ]
	msg=$(jq -r 'select(.level == "error") | .msg' "$TEST_DIR/log.json" | tail -n 1)
	[[ "$msg" == *"container not running"* ]] || fail_with "log: $(cat "$TEST_DIR/log.json")"
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

@test "delete --force of a state directory without state.json (a create killed early) removes it" {
	mkdir "$PROCTOR_ROOT/prt-no-state-json"
	run pr delete prt-no-state-json
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]] || fail_with "$output"
	run pr delete --force prt-no-state-json
	assert_status 0
	[ ! -e "$PROCTOR_ROOT/prt-no-state-json" ] || fail_with "the state directory is still there"
}

# The forced delete decides on the error's errno (ENOENT: no state), not on
# its text: a corrupt state.json whose parse error quotes "does not exist"
# is still a corrupt state, reported and kept (its cgroup and pid are
# unknown, so removing the directory would hide what is left running).
@test "delete --force of a corrupt state.json fails naming it, whatever its text says, and keeps it" {
	mkdir "$PROCTOR_ROOT/prt-corrupt"
	on_teardown "rm -rf '$PROCTOR_ROOT/prt-corrupt'"
	echo 'does not exist' >"$PROCTOR_ROOT/prt-corrupt/state.json"
	run pr delete --force prt-corrupt
	[ "$status" -ne 0 ] || fail_with "delete --force of a corrupt state succeeded: $output"
	[[ "$output" == *"corrupt state.json"* ]] || fail_with "$output"
	[ -e "$PROCTOR_ROOT/prt-corrupt/state.json" ] || fail_with "the corrupt state was removed"
}

@test "state: every runtime-spec field, bundle and rootfs absolute, created RFC 3339, annotations" {
	setup_bundle busybox
	# A relative root.path and a relative --bundle: state must still give
	# absolute paths (engines compare them with their own).
	cfg_set '.root.path = "rootfs" | .annotations = {"org.example.prt": "value-1", "io.prt.other": "two"}'
	cfg_args sleep 1000
	track_id "$CID"
	before=$(date -u +%s)
	(cd "$TEST_DIR" && pr create --bundle bundle --pid-file "$TEST_DIR/pid" "$CID" \
		</dev/null >"$TEST_DIR/out" 2>&1)
	after=$(date -u +%s)
	run --separate-stderr pr state "$CID"
	assert_status 0
	st=$output
	echo "$st" | jq -e 'type == "object"' >/dev/null || fail_with "not JSON: $st"
	for k in ociVersion id status pid bundle rootfs created owner annotations; do
		echo "$st" | jq -e --arg k "$k" 'has($k)' >/dev/null || fail_with "state lacks $k: $st"
	done
	# The state follows the spec version the runtime says it implements.
	spec=$("$PROCTOR" --version | sed -n 's/^spec: //p')
	[ "$(echo "$st" | jq -r .ociVersion)" = "$spec" ] || fail_with "ociVersion vs spec: $spec: $st"
	[ "$(echo "$st" | jq -r .id)" = "$CID" ]
	[ "$(echo "$st" | jq -r .status)" = created ]
	[ "$(echo "$st" | jq -r '.pid | type')" = number ]
	[ "$(echo "$st" | jq -r .pid)" = "$(cat "$TEST_DIR/pid")" ]
	[ "$(echo "$st" | jq -r .bundle)" = "$BUNDLE" ] || fail_with "bundle: $st"
	[ "$(echo "$st" | jq -r .rootfs)" = "$ROOTFS" ] || fail_with "rootfs: $st"
	[ "$(echo "$st" | jq -r '.owner | type')" = string ]
	created=$(echo "$st" | jq -r .created)
	[[ "$created" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]] ||
		fail_with "created is not RFC 3339: $created"
	# And it is the time of this create, not of something else.
	c=$(date -u -d "$created" +%s)
	[ "$c" -ge "$before" ] && [ "$c" -le "$after" ] || fail_with "created $created not in [$before, $after]"
	[ "$(echo "$st" | jq -S -c '.annotations')" = '{"io.prt.other":"two","org.example.prt":"value-1"}' ] ||
		fail_with "annotations: $st"

	# The same document once running: created does not move.
	pr start "$CID"
	wait_status "$CID" running
	[ "$(state_of "$CID" created)" = "$created" ]
	[ "$(state_of "$CID" pid)" = "$(cat "$TEST_DIR/pid")" ]
}

@test "features: valid JSON with the fields podman and containerd read, matching the kernel" {
	run --separate-stderr pr features
	assert_status 0
	f=$output
	echo "$f" | jq -e 'type == "object"' >/dev/null || fail_with "not JSON: $f"
	has() { echo "$f" | jq -e --arg v "$2" "$1 | type == \"array\" and any(.[]; . == \$v)" >/dev/null; }

	[ "$(echo "$f" | jq -r .ociVersionMin)" = 1.0.0 ] || fail_with "ociVersionMin: $f"
	# ociVersionMax is the spec version --version names.
	spec=$("$PROCTOR" --version | sed -n 's/^spec: //p')
	[ "$(echo "$f" | jq -r .ociVersionMax)" = "$spec" ] || fail_with "ociVersionMax vs spec: $spec"

	[ "$(echo "$f" | jq -r '.hooks | sort | join(",")')" = \
		createContainer,createRuntime,poststart,poststop,prestart,startContainer ] || fail_with "hooks: $f"
	# The options the mount tests use.
	for o in bind rbind ro rw nosuid nodev noexec private rprivate shared rshared slave rslave idmap ridmap tmpcopyup; do
		has .mountOptions "$o" || fail_with "mountOptions lacks $o"
	done

	# All eight namespace types, and so every one this kernel has.
	[ "$(echo "$f" | jq -r '.linux.namespaces | sort | join(",")')" = \
		cgroup,ipc,mount,network,pid,time,user,uts ] || fail_with "namespaces: $f"
	for ns in /proc/self/ns/*; do
		n=${ns##*/}
		case $n in
		*_for_children) continue ;;
		mnt) n=mount ;;
		net) n=network ;;
		esac
		has .linux.namespaces "$n" || fail_with "the kernel has $n namespaces, features does not list them"
	done

	# Every capability this kernel has (0..cap_last_cap), by name.
	last=$(cat /proc/sys/kernel/cap_last_cap)
	n=$(echo "$f" | jq -r '.linux.capabilities | unique | length')
	[ "$n" -ge $((last + 1)) ] || fail_with "$n capabilities listed, the kernel has $((last + 1))"
	for c in CAP_CHOWN CAP_KILL CAP_NET_ADMIN CAP_SYS_ADMIN CAP_SYS_CHROOT CAP_AUDIT_WRITE; do
		has .linux.capabilities "$c" || fail_with "capabilities lack $c"
	done
	if command -v capsh >/dev/null; then
		for c in $(capsh --decode="$(printf '0x%x' $(((1 << (last + 1)) - 1)))" | cut -d= -f2 | tr , ' '); do
			has .linux.capabilities "${c^^}" || fail_with "the kernel has ${c^^}, features does not list it"
		done
	fi

	echo "$f" | jq -e '.linux.cgroup | (.v1 == true) and (.v2 == true)' >/dev/null || fail_with "cgroup: $f"
	echo "$f" | jq -e '.linux.seccomp.enabled == true' >/dev/null || fail_with "seccomp: $f"
	for a in SCMP_ACT_ALLOW SCMP_ACT_ERRNO SCMP_ACT_KILL SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD \
		SCMP_ACT_TRAP SCMP_ACT_TRACE SCMP_ACT_LOG SCMP_ACT_NOTIFY; do
		has .linux.seccomp.actions "$a" || fail_with "seccomp actions lack $a"
	done
	[ "$(echo "$f" | jq -r '.linux.seccomp.operators | sort | join(",")')" = \
		SCMP_CMP_EQ,SCMP_CMP_GE,SCMP_CMP_GT,SCMP_CMP_LE,SCMP_CMP_LT,SCMP_CMP_MASKED_EQ,SCMP_CMP_NE ] ||
		fail_with "seccomp operators: $f"
	case $(uname -m) in
	x86_64) arch=SCMP_ARCH_X86_64 ;;
	aarch64) arch=SCMP_ARCH_AARCH64 ;;
	*) arch= ;;
	esac
	[ -z "$arch" ] || has .linux.seccomp.archs "$arch" || fail_with "seccomp archs lack the native $arch"

	echo "$f" | jq -e '.annotations | type == "object" and all(.[]; type == "string")' >/dev/null ||
		fail_with "annotations: $f"
	if runtime_is proctor; then
		v=$("$PROCTOR" --version | sed -n 's/^proctor version //p')
		[ "$(echo "$f" | jq -r '.annotations["run.proctor.version"]')" = "$v" ] || fail_with "annotations: $f"
	fi
}

@test "--version and -v: '<name> version X.Y.Z' then 'spec: 1.x.y', as runc prints" {
	name=$(basename "$PROCTOR")
	run --separate-stderr "$PROCTOR" --version
	assert_status 0
	[[ "${lines[0]}" =~ ^$name\ version\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail_with "first line: ${lines[0]}"
	printf '%s\n' "${lines[@]}" | grep -Eqx 'spec: 1\.[0-9]+\.[0-9]+(-dev)?' || fail_with "no spec line: $output"
	long=$output
	run --separate-stderr "$PROCTOR" -v
	assert_status 0
	[ "$output" = "$long" ] || fail_with "-v printed: $output"
	# A global flag: it answers before any command is looked at.
	run --separate-stderr "$PROCTOR" --root "$PROCTOR_ROOT" --version
	assert_status 0
	[ "$output" = "$long" ]
}
