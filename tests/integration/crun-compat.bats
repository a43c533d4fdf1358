#!/usr/bin/env bats
# crun compatibility: crun's extra CLI flags, its run.oci.* annotations
# (implemented or refused with a clear error), and libproctor-crun, the
# libcrun-shaped C library, through its example program.

load helpers

# The build tree holding $PROCTOR (src/proctor) and the example program.
top_builddir() { cd "$(dirname "$PROCTOR")/.." && pwd; }
EXAMPLE=${PROCTOR_CRUN_EXAMPLE:-}

need_proctor() {
	runtime_is proctor || skip "proctor-specific (libproctor-crun, refusals)"
}

example_bin() {
	local e=${EXAMPLE:-$(top_builddir)/libcrun-compat/example}
	[ -x "$e" ] || require_or_skip "no libcrun-compat/example: run make check (or make libcrun-compat/example)"
	echo "$e"
}

# The cgroup2 directory of a host cgroup path (hybrid or unified host).
cgroup2_dir() {
	if [ -d /sys/fs/cgroup/unified ]; then echo "/sys/fs/cgroup/unified$1"; else echo "/sys/fs/cgroup$1"; fi
}

# ------------------------------------------------------------------ flags

@test "crun flag: --cgroup-manager cgroupfs places the container in its own cgroup" {
	setup_bundle busybox
	cfg_args sleep 1000
	track_id "$CID"
	pr --cgroup-manager cgroupfs run -d --bundle "$BUNDLE" "$CID" </dev/null
	pid=$(state_of "$CID" pid)
	grep -q -- "$CID" "/proc/$pid/cgroup"
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

@test "crun flag: --cgroup-manager disabled leaves the container in the caller's cgroup" {
	need_proctor
	setup_bundle busybox
	cfg_args sleep 1000
	track_id "$CID"
	pr --cgroup-manager disabled run -d --bundle "$BUNDLE" "$CID" </dev/null
	pid=$(state_of "$CID" pid)
	diff "/proc/$pid/cgroup" /proc/self/cgroup
	[ -z "$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 8 -type d -name "*$CID*" 2>/dev/null)" ]
	# kill --all without a cgroup signals the init (the pid namespace's
	# init: everything dies with it).
	pr kill --all "$CID" KILL
	wait_status "$CID" stopped
	pr delete "$CID"
	assert_no_leftovers "$CID"
}

@test "crun flag: --cgroup-manager disabled: exec joins no cgroup, the cgroup commands refuse and change nothing" {
	need_proctor
	setup_bundle busybox
	cfg_args sleep 1000
	track_id "$CID"
	pr --cgroup-manager disabled run -d --bundle "$BUNDLE" "$CID" </dev/null
	# exec: the process stays in the caller's cgroup too
	pr exec -d --pid-file "$TEST_DIR/exec.pid" "$CID" sleep 1000
	diff "/proc/$(cat "$TEST_DIR/exec.pid")/cgroup" /proc/self/cgroup
	run pr pause "$CID"
	[ "$status" -ne 0 ]
	assert_output_contains "no cgroup of its own"
	run pr ps "$CID"
	[ "$status" -ne 0 ]
	assert_output_contains "no cgroup of its own"
	run pr update --pids-limit 10 "$CID"
	[ "$status" -ne 0 ]
	assert_output_contains "update: container $CID is running"
	run pr events --stats "$CID"
	[ "$status" -ne 0 ]
	assert_output_contains "container $CID is not running"
	# nothing was frozen, limited or created on the way
	[ "$(state_of "$CID" status)" = running ]
	[ -z "$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 8 -type d -name "*$CID*" 2>/dev/null)" ]
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

@test "crun flag: --cgroup-manager with an unknown value is refused" {
	run pr --cgroup-manager nonsense list
	[ "$status" -ne 0 ]
	assert_output_contains "unknown --cgroup-manager \`nonsense\`"
}

@test "crun flag: create and run --config FILE read that file instead of BUNDLE/config.json" {
	setup_bundle busybox
	cfg_args sh -c 'echo from-bundle-config'
	jq '.process.args = ["sh", "-c", "echo from-config-flag"]' "$BUNDLE/config.json" >"$TEST_DIR/other.json"
	run_ctr --config "$TEST_DIR/other.json"
	assert_status 0
	[ "$output" = from-config-flag ]

	track_id "$CID-c"
	pr create --bundle "$BUNDLE" --config "$TEST_DIR/other.json" "$CID-c" </dev/null >"$TEST_DIR/c.out" 2>&1
	pr start "$CID-c"
	wait_status "$CID-c" stopped
	grep -qx from-config-flag "$TEST_DIR/c.out"
	pr delete "$CID-c"
}

@test "crun flag: run --keep leaves the stopped container for delete" {
	setup_bundle busybox
	cfg_args sh -c 'exit 3'
	run_ctr --keep
	assert_status 3
	[ "$(state_of "$CID" status)" = stopped ]
	pr delete "$CID"
	run pr state "$CID"
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
}

@test "crun flag: create --no-subreaper is accepted" {
	setup_bundle busybox
	cfg_args sh -c 'echo subreaper-ok'
	create_ctr "$CID" --no-subreaper
	pr start "$CID"
	wait_status "$CID" stopped
	grep -qx subreaper-ok "$TEST_DIR/$CID.out"
	pr delete "$CID"
	assert_no_leftovers "$CID"
}

@test "crun flag: exec --cgroup runs the process in an existing sub-cgroup" {
	setup_bundle busybox
	cfg_args sleep 1000
	track_id "$CID"
	pr run -d --bundle "$BUNDLE" "$CID" </dev/null
	pid=$(state_of "$CID" pid)
	path=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
	[ -n "$path" ] || skip "no cgroup2 hierarchy on this host"
	mkdir "$(cgroup2_dir "$path")/sub"
	run pr exec --cgroup unified:sub "$CID" cat /proc/self/cgroup
	assert_status 0
	echo "$output" | grep -qE '^0::.*/sub$' || fail_with "not in the sub-cgroup: $output"
	# Without --cgroup the process is in the container's cgroup itself.
	run pr exec "$CID" cat /proc/self/cgroup
	echo "$output" | grep -qE '^0::.*/sub$' && fail_with "unexpectedly in the sub-cgroup: $output"
	# A missing sub-cgroup is an error and is never created.
	run pr exec --cgroup unified:nosuch "$CID" true
	[ "$status" -ne 0 ]
	assert_output_contains "sub-cgroup"
	[ ! -e "$(cgroup2_dir "$path")/nosuch" ]
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

# ------------------------------------------------------------ annotations

@test "crun annotation: run.oci.keep_original_groups keeps the runtime's groups" {
	need_proctor
	setup_bundle busybox
	cfg_args grep Groups /proc/self/status
	run setpriv --groups 1234,5678 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	assert_status 0
	[[ "$output" != *1234* ]] || fail_with "groups kept without the annotation: $output"

	cfg_set '.annotations["run.oci.keep_original_groups"] = "1"'
	run setpriv --groups 1234,5678 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	assert_status 0
	[[ "$output" =~ Groups:[[:space:]]+1234\ 5678 ]] || fail_with "groups not kept: $output"
}

@test "crun annotation: run.oci.keep_original_groups maps groups into a new user namespace" {
	need_proctor
	setup_bundle busybox
	cfg_args grep Groups /proc/self/status
	cfg_set '.annotations["run.oci.keep_original_groups"] = "1"
		| .linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	run setpriv --groups 100010,100020 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	assert_status 0
	[[ "$output" =~ Groups:[[:space:]]+10\ 20 ]] || fail_with "groups not mapped: $output"

	run setpriv --groups 5 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 0 ]
	assert_output_contains "run.oci.keep_original_groups: group 5 of the runtime is not mapped in linux.gidMappings"
	assert_no_leftovers "$CID"
}

@test "crun annotation: run.oci.timens_offset sets the time namespace offsets" {
	need_proctor
	[ -e /proc/self/timens_offsets ] || skip "no time namespaces in this kernel"
	setup_bundle busybox
	cfg_args cat /proc/self/timens_offsets
	cfg_set '.linux.namespaces += [{"type": "time"}]
		| .annotations["run.oci.timens_offset"] = "monotonic 1000 0\nboottime 2000 5"'
	run_ctr
	assert_status 0
	echo "$output" | grep -qE '^monotonic +1000 +0$' || fail_with "$output"
	echo "$output" | grep -qE '^boottime +2000 +5$' || fail_with "$output"
}

@test "crun annotation: run.oci.timens_offset without a time namespace or malformed is an error" {
	need_proctor
	setup_bundle busybox
	cfg_args true
	cfg_set '.annotations["run.oci.timens_offset"] = "monotonic 1000 0"'
	run_ctr
	[ "$status" -ne 0 ]
	assert_output_contains "run.oci.timens_offset requires a new time namespace"
	cfg_set '.linux.namespaces += [{"type": "time"}] | .annotations["run.oci.timens_offset"] = "realtime 1 0"'
	run_ctr
	[ "$status" -ne 0 ]
	assert_output_contains "run.oci.timens_offset: unknown clock \`realtime\`"
	assert_no_leftovers "$CID"
}

@test "crun annotation: run.oci.seccomp_fail_unknown_syscall fails on unknown syscall names" {
	need_proctor
	setup_bundle busybox
	cfg_args echo ran
	cfg_set '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["no_such_syscall_xyz", "acct"], "action": "SCMP_ACT_ERRNO"}]}'
	# By default unknown names are skipped.
	run_ctr
	assert_status 0
	[ "$output" = ran ]
	cfg_set '.annotations["run.oci.seccomp_fail_unknown_syscall"] = "1"'
	run_ctr
	[ "$status" -ne 0 ]
	assert_output_contains "run.oci.seccomp_fail_unknown_syscall: unknown syscall \`no_such_syscall_xyz\`"
	assert_no_leftovers "$CID"
}

@test "crun annotation: mount_context_type=context and an empty systemd.subgroup are accepted" {
	setup_bundle busybox
	cfg_args echo accepted
	cfg_set '.annotations["run.oci.mount_context_type"] = "context" | .annotations["run.oci.systemd.subgroup"] = ""'
	run_ctr
	assert_status 0
	[ "$output" = accepted ]
}

@test "crun annotations proctor does not implement are refused with a clear error" {
	need_proctor
	setup_bundle busybox
	cfg_args true
	local a
	for a in run.oci.seccomp.receiver run.oci.seccomp.plugins run.oci.seccomp_bpf_data \
		run.oci.systemd.force_cgroup_v1 run.oci.delegate-cgroup run.oci.hooks.stdout \
		run.oci.hooks.stderr run.oci.handler; do
		cfg_set --arg a "$a" '.annotations = {($a): "/x"}'
		run --separate-stderr pr run --bundle "$BUNDLE" "$CID" </dev/null
		[ "$status" -ne 0 ] || fail_with "$a was not refused"
		assert_one_error_line
		[[ "$stderr" == *"$a is not supported by proctor"* ]] || fail_with "$a: $stderr"
	done
	cfg_set '.annotations = {"run.oci.mount_context_type": "fscontext"}'
	run pr run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 0 ]
	assert_output_contains "run.oci.mount_context_type=fscontext is not supported by proctor"
	cfg_set '.annotations = {"run.oci.systemd.subgroup": "container"}'
	run pr run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 0 ]
	assert_output_contains "run.oci.systemd.subgroup is not supported by proctor"
	assert_no_leftovers "$CID"
}

# ---------------------------------------------------------- libproctor-crun

@test "libproctor-crun: the example program runs a container and returns its status" {
	need_proctor
	ex=$(example_bin)
	setup_bundle busybox
	cfg_args sh -c 'echo hello-from-library; exit 5'
	track_id "$CID"
	run "$ex" run "$PROCTOR_ROOT" "$BUNDLE" "$CID" </dev/null
	assert_status 5
	assert_output_contains hello-from-library
	assert_output_contains "exit status 5"
	assert_no_leftovers "$CID"
}

@test "libproctor-crun: preserve_fds passes the program's fds, never the library's own" {
	need_proctor
	ex=$(example_bin)
	setup_bundle busybox
	# Whatever the library opens itself (it once held the config in a memfd
	# at the lowest free number: with fd 4 left free by the program, 4,
	# inside the range) must not pass: only the program's fds 0-3.
	cfg_args sh -c 'for f in /proc/self/fd/*; do n=${f##*/}; t=$(readlink $f) || continue; case $t in /proc/*) continue;; esac; echo "$n $t"; done'
	echo x >"$TEST_DIR/three"
	track_id "$CID"
	EXAMPLE_PRESERVE_FDS=2 run "$ex" run "$PROCTOR_ROOT" "$BUNDLE" "$CID" </dev/null 3<"$TEST_DIR/three" 4<&-
	assert_status 0
	fds=$(grep -E '^[0-9]+ ' <<<"$output" | awk '{print $1}' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 3 " ] || fail_with "wanted 0-3: $output"
	grep -qx "3 $TEST_DIR/three" <<<"$output" || fail_with "fd 3 is not the program's file: $output"
	# Out of range: refused before anything runs, as the CLI refuses it.
	for n in -1 65536; do
		EXAMPLE_PRESERVE_FDS=$n run "$ex" run "$PROCTOR_ROOT" "$BUNDLE" "$CID-$n" </dev/null
		[ "$status" -ne 0 ] || fail_with "preserve_fds $n accepted: $output"
		[[ "$output" == *"preserve_fds $n is not in 0..65535"* ]] || fail_with "$output"
		assert_no_leftovers "$CID-$n"
	done
}

@test "libproctor-crun: create, state, start, exec, kill, delete from a config in memory" {
	need_proctor
	ex=$(example_bin)
	setup_bundle busybox
	cfg_args sleep 1000
	cfg_set '.annotations["org.example.note"] = "hi"'
	track_id "$CID"
	run "$ex" lifecycle "$PROCTOR_ROOT" "$BUNDLE" "$CID" </dev/null
	assert_status 0
	assert_output_contains "annotation org.example.note=hi"
	assert_output_contains '"status": "created"'
	assert_output_contains exec-output
	assert_output_contains "exec status 3"
	assert_output_contains deleted
	assert_output_contains "state after delete: container \`$CID\` does not exist"
	assert_no_leftovers "$CID"
}

# The pids.max file of container $1's cgroup, from the host: the pids v1
# hierarchy, else the unified one (hybrid and v2 hosts alike).
pids_max_file() {
	local cg m
	cg=$(jq -r .cgroup_path "$PROCTOR_ROOT/$1/state.json")
	[ -n "$cg" ] && [ "$cg" != null ] || return 1
	m=$(awk '$9 == "cgroup" && $NF ~ /(^|,)pids(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	[ -n "$m" ] || m=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	echo "$m$cg/pids.max"
}

@test "libproctor-crun: pause, update, ps, stats and events through the library; a loaded config creates twice" {
	need_proctor
	ex=$(example_bin)
	setup_bundle busybox
	cfg_args sleep 1000
	cfg_set '.annotations["org.example.note"] = "hi" | .linux.resources.pids = {"limit": 50}'
	track_id "$CID"
	track_id "$CID-b"
	# The container is left running with the program's stdio: into a file,
	# so nothing waits for the container's end of a pipe.
	timeout -k 5 120 "$ex" cgroup "$PROCTOR_ROOT" "$BUNDLE" "$CID" </dev/null >"$TEST_DIR/ex.out" 2>&1 ||
		fail_with "example cgroup failed: $(cat "$TEST_DIR/ex.out")"
	output=$(cat "$TEST_DIR/ex.out")
	# create took the parsed config over; the annotations stay readable and
	# a second create from the same loaded container works
	assert_output_contains "annotation after create org.example.note=hi"
	assert_output_contains "created twice"
	assert_no_leftovers "$CID-b"
	assert_output_contains paused
	assert_output_contains resumed
	assert_output_contains "updated by json"
	assert_output_contains "pids 1"
	assert_output_contains "stats with pids"
	assert_output_contains "event stats $CID with pids"
	# seen from the host: the cgroup has the JSON update's limit, the
	# state's config copy too, and the CLI lists the same processes
	f=$(pids_max_file "$CID") || fail_with "no cgroup path in state.json"
	[ "$(cat "$f")" = 80 ] || fail_with "pids.max is $(cat "$f")"
	[ "$(jq .linux.resources.pids.limit "$PROCTOR_ROOT/$CID/config.json")" = 80 ]
	[ "$(state_of "$CID" status)" = running ]
	run pr ps --format json "$CID"
	assert_status 0
	[ "$(jq length <<<"$output")" = 1 ]
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

@test "libproctor-crun: load errors come back as libcrun_error_t" {
	need_proctor
	ex=$(example_bin)
	run "$ex" bad-config
	assert_status 0
	[ "$output" = "error: process.args: expected an array of strings" ]
}

@test "libproctor-crun: installs a header and pkg-config file a program builds against" {
	need_proctor
	top=$(top_builddir)
	[ -f "$top/Makefile" ] || require_or_skip "no build tree next to $PROCTOR"
	command -v pkg-config >/dev/null || require_or_skip "no pkg-config"
	make -s -C "$top" install-libLTLIBRARIES install-includeHEADERS install-pkgconfigDATA \
		DESTDIR="$TEST_DIR/inst" prefix=/usr/local >"$TEST_DIR/install.log" 2>&1 ||
		fail_with "install failed: $(cat "$TEST_DIR/install.log")"
	pc=$TEST_DIR/inst/usr/local/lib/pkgconfig
	[ -f "$pc/libproctor-crun.pc" ]
	export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$TEST_DIR/inst
	src=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)/libcrun-compat/example.c
	gcc -o "$TEST_DIR/example" "$src" $(pkg-config --cflags --libs libproctor-crun)
	LD_LIBRARY_PATH=$TEST_DIR/inst/usr/local/lib run "$TEST_DIR/example" bad-config
	assert_status 0
	assert_output_contains "process.args: expected an array of strings"
	LD_LIBRARY_PATH=$TEST_DIR/inst/usr/local/lib ldd "$TEST_DIR/example" | grep -q "$TEST_DIR/inst/usr/local/lib/libproctor-crun.so"
}
