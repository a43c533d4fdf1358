#!/usr/bin/env bats
# Behaviour that engines and users rely on because runc has it (issue #19):
# host namespaces are never written, seccomp's ENOSYS for unknown syscalls,
# terminal ownership, unknown capabilities, a config without namespaces,
# and runc's CLI habits.  Each test is observed from the host.

load helpers

# refuse_create PATTERN: `create` of $BUNDLE fails with one error line
# matching PATTERN and leaves nothing behind.
refuse_create() {
	create_must_fail
	[[ "$stderr" == *$1* ]] || fail_with "stderr does not say '$1': $stderr"
}

# without_ns TYPE: drop TYPE from linux.namespaces (the container inherits
# the runtime's).
without_ns() { cfg_set --arg t "$1" '.linux.namespaces |= map(select(.type != $t))'; }

# The container's process would write the host's value when it ran, so each
# case also makes it try (the create must fail before it can).
@test "host sysctls: an ipc sysctl without an ipc namespace is refused, the host's value kept" {
	setup_bundle busybox
	before=$(cat /proc/sys/fs/mqueue/queues_max)
	on_teardown "echo $before >/proc/sys/fs/mqueue/queues_max"
	without_ns ipc
	cfg_set --arg v "$((before + 7))" '.linux.sysctl = {"fs.mqueue.queues_max": $v}'
	refuse_create "not allowed in host ipc namespace"
	[ "$(cat /proc/sys/fs/mqueue/queues_max)" = "$before" ]
}

@test "host sysctls: a net sysctl without a network namespace is refused, the host's value kept" {
	setup_bundle busybox
	before=$(cat /proc/sys/net/ipv4/ping_group_range)
	on_teardown "echo '$before' >/proc/sys/net/ipv4/ping_group_range"
	without_ns network
	cfg_set '.linux.sysctl = {"net.ipv4.ping_group_range": "0 7"}'
	refuse_create "not allowed in host network namespace"
	[ "$(cat /proc/sys/net/ipv4/ping_group_range)" = "$before" ]
}

@test "host sysctls: a net sysctl in the host's network namespace joined by path is refused" {
	setup_bundle busybox
	before=$(cat /proc/sys/net/ipv4/ping_group_range)
	on_teardown "echo '$before' >/proc/sys/net/ipv4/ping_group_range"
	# The test's own network namespace is the runtime's.
	cfg_set --arg p "/proc/$$/ns/net" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)
		| .linux.sysctl = {"net/ipv4/ping_group_range": "0 7"}'
	refuse_create "not allowed in host network namespace"
	[ "$(cat /proc/sys/net/ipv4/ping_group_range)" = "$before" ]
}

@test "host sysctls: a sysctl no namespace holds is refused" {
	setup_bundle busybox
	before=$(cat /proc/sys/vm/swappiness)
	on_teardown "echo $before >/proc/sys/vm/swappiness"
	cfg_set --arg v "$(((before + 1) % 100))" '.linux.sysctl = {"vm.swappiness": $v}'
	refuse_create "not in a separate kernel namespace"
	[ "$(cat /proc/sys/vm/swappiness)" = "$before" ]
}

@test "host sysctls: domainname and hostname without a uts namespace are refused, the host's kept" {
	setup_bundle busybox
	before=$(cat /proc/sys/kernel/domainname)
	host=$(hostname)
	on_teardown "echo '$before' >/proc/sys/kernel/domainname; hostname '$host'"
	without_ns uts
	cfg_set 'del(.hostname) | .domainname = "prt-evil.example"'
	refuse_create "domainname \`prt-evil.example\` not allowed in host uts namespace"
	[ "$(cat /proc/sys/kernel/domainname)" = "$before" ]
	cfg_set 'del(.domainname) | .hostname = "prt-evil"'
	refuse_create "not allowed in host uts namespace"
	cfg_set '.hostname = "" | .linux.sysctl = {"kernel.domainname": "prt-evil.example"}'
	refuse_create "not allowed in host uts namespace"
	[ "$(cat /proc/sys/kernel/domainname)" = "$before" ]
	[ "$(hostname)" = "$host" ]
}

@test "host sysctls: with namespaces of its own the same values are written in them" {
	setup_bundle busybox
	before=$(cat /proc/sys/fs/mqueue/queues_max)
	on_teardown "echo $before >/proc/sys/fs/mqueue/queues_max"
	want=$((before + 7))
	cfg_set --arg v "$want" '.domainname = "prt.example"
		| .linux.sysctl = {"fs.mqueue.queues_max": $v, "net.ipv4.ping_group_range": "0 7"}'
	cfg_args sh -c 'cat /proc/sys/fs/mqueue/queues_max /proc/sys/net/ipv4/ping_group_range /proc/sys/kernel/domainname'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "$want" ]
	[[ "${lines[1]}" == 0*7 ]]
	[ "${lines[2]}" = prt.example ]
	[ "$(cat /proc/sys/fs/mqueue/queues_max)" = "$before" ]
}

@test "capabilities: an unknown name is a warning and ignored, the known ones granted (run and exec)" {
	setup_bundle busybox
	cfg_set '.process.capabilities |= with_entries(.value = ["CAP_KILL", "CAP_PRT_BOGUS"])'
	cfg_args sh -c 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status'
	track_id "$CID"
	run --separate-stderr pr run --bundle "$BUNDLE" "$CID" </dev/null
	assert_status 0
	[[ "$stderr" == *"unknown capability \`CAP_PRT_BOGUS\`"* ]] || fail_with "no warning: $stderr"
	# CAP_KILL is bit 5: every set holds exactly it.
	[ "$(echo "$output" | awk '{ print $2 }' | sort -u)" = 0000000000000020 ] || fail_with "$output"
	pr delete -f "$CID"

	cfg_args sleep 60
	create_ctr || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	run --separate-stderr pr exec --cap CAP_PRT_OTHER "$CID" grep CapEff /proc/self/status
	assert_status 0
	[[ "$stderr" == *"unknown capability \`CAP_PRT_OTHER\`"* ]] || fail_with "no warning: $stderr"
	[ "$(echo "$output" | awk '{ print $2 }')" = 0000000000000020 ] || fail_with "$output"
}

@test "capabilities: features lists the known names" {
	run pr features
	assert_status 0
	caps=$(echo "$output" | jq -r '.linux.capabilities[]')
	echo "$caps" | grep -qx CAP_SYS_ADMIN || fail_with "$caps"
	echo "$caps" | grep -qx CAP_CHECKPOINT_RESTORE || fail_with "$caps"
	! echo "$caps" | grep -q BOGUS
	[ "$(echo "$caps" | grep -c '^CAP_[A-Z_]*$')" -ge 41 ]
}

# The image names a tty group (gid 5, as Debian's does); the process runs as
# uid 1000.  What the host sees: the owner of the container's /dev/pts/N,
# read through the container's init (/proc/PID/root).
@test "terminal: the pty slave belongs to a non-root process user and the tty group (run and exec)" {
	setup_bundle busybox
	echo 'tty:x:5:' >>"$ROOTFS/etc/group"
	cfg_set '.process.terminal = true | .process.user = {"uid": 1000, "gid": 1000}'
	cfg_args sh -c 'stat -c "owner=%u:%g" "$(tty)"; id -u; sleep 60'
	start_recvtty "$TEST_DIR/tty.sock" "$TEST_DIR/tty.out"
	create_ctr "$CID" --console-socket "$TEST_DIR/tty.sock" || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	pid=$(state_of "$CID" pid)
	tries=100
	while [ $tries -gt 0 ] && ! grep -q owner= "$TEST_DIR/tty.out"; do sleep 0.05; tries=$((tries - 1)); done
	out=$(tr -d '\r' <"$TEST_DIR/tty.out")
	echo "$out" | grep -qx 'owner=1000:5' || fail_with "run: $out"
	pts=$(readlink "/proc/$pid/fd/0")
	[ "$(stat -c %u:%g "/proc/$pid/root$pts")" = 1000:5 ] || fail_with "host view of $pts: $(stat -c %u:%g "/proc/$pid/root$pts")"

	start_recvtty "$TEST_DIR/tty2.sock" "$TEST_DIR/tty2.out"
	pr exec -t --console-socket "$TEST_DIR/tty2.sock" --user 1000:1000 "$CID" sh -c 'stat -c "owner=%u:%g" "$(tty)"'
	wait_recvtty
	out=$(tr -d '\r' <"$TEST_DIR/tty2.out")
	echo "$out" | grep -qx 'owner=1000:5' || fail_with "exec: $out"
}

# cpu_cgroup_file PID V1FILE V2FILE: the cgroup file of PID's cpu cgroup.
cpu_cgroup_file() {
	local path
	if [ -d /sys/fs/cgroup/cpu ] && path=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3 }' "/proc/$1/cgroup") && [ -n "$path" ]; then
		echo "/sys/fs/cgroup/cpu$path/$2"
	else
		echo "/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup")/$3"
	fi
}

@test "cli: flags after the container id (update ID --cpu-period N, --cpuset-cpus)" {
	setup_bundle busybox
	cfg_args sleep 60
	create_ctr || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pid=$(state_of "$CID" pid)
	cpus=$(($(nproc) > 1 ? 1 : 0))
	run pr update "$CID" --cpu-period 900000 --cpuset-cpus "$cpus"
	assert_status 0
	f=$(cpu_cgroup_file "$pid" cpu.cfs_period_us cpu.max)
	[[ "$(cat "$f")" == *900000 ]] || fail_with "$f: $(cat "$f")"
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = "$cpus" ]
	# A flag between operands of a command that takes several.
	run pr delete "$CID" --force
	assert_status 0
	run pr state "$CID"
	[ "$status" -ne 0 ]
}

@test "cli: -h anywhere shows help; an unknown command with -h is an error" {
	run pr -h
	assert_status 0
	assert_output_contains USAGE
	run pr state -h
	assert_status 0
	assert_output_contains "proctor state"
	run pr state some-id -h
	assert_status 0
	assert_output_contains "proctor state"
	run pr update some-id --cpu-period 1 -h
	assert_status 0
	assert_output_contains "proctor update"
	run --separate-stderr pr no-such-command -h
	[ "$status" -ne 0 ] || fail_with "status 0: $output"
	[[ "$output" != *USAGE* ]] || fail_with "help printed: $output"
	[[ "$stderr" == *"unknown command"*no-such-command* ]] || fail_with "stderr: $stderr"
	# -h after exec's command belongs to the command.
	run pr exec some-id ls -h
	[[ "$output" != *"proctor exec"* ]] || fail_with "help printed: $output"
}

@test "cli: list is sorted by id" {
	setup_bundle busybox
	cfg_args sleep 60
	for s in m z a q; do create_ctr "$CID-$s" || fail_with "$(cat "$TEST_DIR/$CID-$s.err")"; done
	run pr list -q
	assert_status 0
	[ "$output" = "$(printf '%s\n' "$CID-a" "$CID-m" "$CID-q" "$CID-z")" ] || fail_with "list: $output"
	run pr list --format json
	[ "$(echo "$output" | jq -r '.[].id' | tr '\n' ' ')" = "$CID-a $CID-m $CID-q $CID-z " ] || fail_with "$output"
}

@test "cli: --debug writes debug records for run and exec (stderr text, --log json)" {
	setup_bundle busybox
	cfg_args true
	track_id "$CID"
	run --separate-stderr pr --debug run --bundle "$BUNDLE" "$CID" </dev/null
	assert_status 0
	[[ "$stderr" == *level=debug*run*"$CID"* ]] || fail_with "stderr: $stderr"
	pr delete -f "$CID"
	cfg_args sleep 60
	create_ctr || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	log=$TEST_DIR/debug.json
	run pr --debug --log "$log" --log-format json exec "$CID" true
	assert_status 0
	jq -e -s --arg id "$CID" 'map(select(.level == "debug" and (.msg | contains("exec") and contains($id)))) | length > 0' "$log" >/dev/null ||
		fail_with "log: $(cat "$log")"
	# Without --debug: no debug record.
	: >"$log"
	pr --log "$log" --log-format json exec "$CID" true
	! grep -q '"debug"' "$log"
}

@test "cli: exec exits 255 when exec itself fails, the process's code otherwise" {
	setup_bundle busybox
	cfg_args sleep 60
	create_ctr || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	run pr exec --pid-file "$TEST_DIR/no/such/dir/pid" "$CID" true
	assert_status 255
	run pr exec "$CID" /no/such/command
	assert_status 255
	run pr exec "$CID"-missing true
	assert_status 255
	run pr exec "$CID" sh -c 'exit 3'
	assert_status 3
	run pr exec "$CID" --env X=7 sh -c 'exit $X'
	assert_status 7
	[ "$(state_of "$CID" status)" = running ]
}

# no_namespaces_cfg: inherit every namespace, nothing to mount.
no_namespaces_cfg() {
	cfg_set 'del(.hostname) | .linux.namespaces = [] | .mounts = []
		| del(.linux.maskedPaths) | del(.linux.readonlyPaths)'
}

@test "no namespaces: the container inherits every one and runs chrooted in its rootfs (run and exec)" {
	setup_bundle busybox
	echo in-the-rootfs >"$ROOTFS/prt-marker"
	no_namespaces_cfg
	cfg_args sh -c 'cat /prt-marker; exec sleep 60'
	create_ctr || fail_with "$(cat "$TEST_DIR/$CID.err")"
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	[ "$(cat "$TEST_DIR/$CID.out")" = in-the-rootfs ]
	pid=$(state_of "$CID" pid)
	for ns in mnt pid net ipc uts user cgroup; do
		[ "$(readlink "/proc/$pid/ns/$ns")" = "$(readlink "/proc/$$/ns/$ns")" ] || fail_with "$ns not inherited"
	done
	[ "$(readlink "/proc/$pid/root")" = "$(realpath "$ROOTFS")" ]
	# exec takes the init's root, not the runtime's.
	run pr exec "$CID" cat /prt-marker
	assert_status 0
	[ "$output" = in-the-rootfs ]
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

@test "no namespaces: a mount without a mount namespace is refused with its reason, the host untouched" {
	setup_bundle busybox
	no_namespaces_cfg
	cfg_set '.mounts = [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
	refuse_create "mounts without a mount namespace"
	no_namespaces_cfg
	cfg_set '.linux.maskedPaths = ["/etc"]'
	refuse_create "linux.maskedPaths without a mount namespace"
}
