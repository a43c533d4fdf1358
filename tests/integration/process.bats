#!/usr/bin/env bats
# Process attributes: rlimits, capabilities, no_new_privs, umask, user and
# additional groups, oom_score_adj, seccomp, env, cwd, sysctl, preserved fds,
# domainname, personality, scheduler, ioPriority, ambient capabilities.

load helpers

# status_field NAME: the value of NAME: in $output (a /proc/self/status dump).
status_field() {
	echo "$output" | awk -v k="$1:" '$1 == k { $1 = ""; sub(/^[ \t]+/, ""); print; exit }'
}

@test "rlimits: RLIMIT_NOFILE soft and hard are in /proc/self/limits" {
	setup_bundle busybox
	cfg_set '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 4096, "hard": 8192},
		{"type": "RLIMIT_NPROC", "soft": 300, "hard": 400}]'
	cfg_args cat /proc/self/limits
	run_ctr
	assert_status 0
	echo "$output" | grep -Eq '^Max open files +4096 +8192 +files' || fail_with "$output"
	echo "$output" | grep -Eq '^Max processes +300 +400 +processes' || fail_with "$output"
}

@test "capabilities: CapEff, CapPrm and CapBnd are exactly the configured sets" {
	setup_bundle busybox
	cfg_set '.process.capabilities = {"bounding": ["CAP_CHOWN", "CAP_KILL"],
		"effective": ["CAP_CHOWN", "CAP_KILL"], "permitted": ["CAP_CHOWN", "CAP_KILL"],
		"inheritable": [], "ambient": []}'
	cfg_args cat /proc/self/status
	run_ctr
	assert_status 0
	# CAP_CHOWN is bit 0, CAP_KILL bit 5.
	[ "$(status_field CapEff)" = 0000000000000021 ] || fail_with "$output"
	[ "$(status_field CapPrm)" = 0000000000000021 ]
	[ "$(status_field CapBnd)" = 0000000000000021 ]
	[ "$(status_field CapInh)" = 0000000000000000 ]
	[ "$(status_field CapAmb)" = 0000000000000000 ]
}

@test "capabilities: a missing capability is enforced (chown without CAP_CHOWN)" {
	setup_bundle busybox
	cfg_set '.process.capabilities = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"],
		"permitted": ["CAP_KILL"]}'
	cfg_args sh -c 'touch /tmp/f; chown 1000 /tmp/f 2>&1; echo rc=$?'
	run_ctr
	assert_status 0
	assert_output_contains "Operation not permitted"
	[ "${lines[-1]}" = rc=1 ]
}

@test "noNewPrivileges true sets NoNewPrivs: 1, false leaves 0" {
	setup_bundle busybox
	cfg_set '.process.noNewPrivileges = true'
	cfg_args cat /proc/self/status
	run_ctr
	assert_status 0
	[ "$(status_field NoNewPrivs)" = 1 ]

	cfg_set '.process.noNewPrivileges = false'
	run_ctr
	assert_status 0
	[ "$(status_field NoNewPrivs)" = 0 ]
}

@test "umask from process.user.umask" {
	setup_bundle busybox
	cfg_set '.process.user.umask = 63'
	cfg_args sh -c 'umask; touch /tmp/f; stat -c %a /tmp/f'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = 0077 ]
	[ "${lines[1]}" = 600 ]
}

@test "user uid/gid and additionalGids" {
	setup_bundle busybox
	cfg_set '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [10, 20]}'
	cfg_args sh -c 'id -u; id -g; grep "^Groups:" /proc/self/status'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	read -r _ groups <<<"${lines[2]}"
	[ "$groups" = "10 20" ] || fail_with "groups: ${lines[2]}"
}

@test "oomScoreAdj is applied" {
	setup_bundle busybox
	cfg_set '.process.oomScoreAdj = 123'
	cfg_args cat /proc/self/oom_score_adj
	run_ctr
	assert_status 0
	[ "$output" = 123 ]
}

@test "seccomp: a profile blocks mkdir with EPERM and chmod with errnoRet" {
	setup_bundle busybox
	cfg_set '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
		{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"},
		{"names": ["chmod", "fchmodat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}'
	cfg_args sh -c 'mkdir /tmp/d 2>&1; echo rc=$?; touch /tmp/f && echo touched; chmod 600 /tmp/f 2>&1;
		grep "^Seccomp:" /proc/self/status'
	run_ctr
	assert_status 0
	assert_output_contains "Operation not permitted"
	echo "$output" | grep -qx rc=1
	echo "$output" | grep -qx touched
	assert_output_contains "Permission denied"
	echo "$output" | grep -Eqx 'Seccomp:[[:space:]]+2'
	[ ! -e "$ROOTFS/tmp/d" ]
}

@test "env and cwd from the config" {
	setup_bundle busybox
	cfg_set '.process.env = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "GREETING=hello world", "EMPTY="]
		| .process.cwd = "/home/tester"'
	cfg_args sh -c 'pwd; env | sort'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = /home/tester ]
	echo "$output" | grep -qx 'GREETING=hello world'
	echo "$output" | grep -qx 'EMPTY='
	echo "$output" | grep -qx 'PATH=/usr/sbin:/usr/bin:/sbin:/bin'
}

@test "sysctl net.ipv4.ip_forward in a new network namespace" {
	setup_bundle busybox
	host=$(cat /proc/sys/net/ipv4/ip_forward)
	want=$((1 - host))
	cfg_set --arg v "$want" '.linux.sysctl = {"net.ipv4.ip_forward": $v}'
	cfg_args cat /proc/sys/net/ipv4/ip_forward
	run_ctr
	assert_status 0
	[ "$output" = "$want" ]
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host" ]
}

# open_fds: the fd numbers in $output (from `ls -l /proc/self/fd` run as the
# container's process via exec), without ls's own directory descriptor.
open_fds() {
	echo "$output" | awk '$(NF-1) == "->" && $NF !~ /^\/proc\/[0-9]+\/fd$/ { print $(NF-2) }' | sort -n | tr '\n' ' '
}

@test "--preserve-fds 1 passes fd 3 and nothing above it" {
	setup_bundle busybox
	echo passed-through >"$TEST_DIR/fd3"
	echo not-passed >"$TEST_DIR/fd4"
	cfg_args sh -c 'cat <&3; exec ls -l /proc/self/fd'
	track_id "$CID"
	run pr run --preserve-fds 1 --bundle "$BUNDLE" "$CID" </dev/null 3<"$TEST_DIR/fd3" 4<"$TEST_DIR/fd4"
	assert_status 0
	[ "${lines[0]}" = passed-through ]
	[ "$(open_fds)" = "0 1 2 3 " ] || fail_with "open fds: $output"
	echo "$output" | grep -q " 3 -> $TEST_DIR/fd3\$"
}

@test "LISTEN_FDS: socket-activation fds come first, then --preserve-fds; LISTEN_FDS and LISTEN_PID=1 set" {
	runtime_is runc && skip "runc: compared against proctor's socket activation only"
	setup_bundle busybox
	echo listen-fd >"$TEST_DIR/fd3"
	echo preserved-fd >"$TEST_DIR/fd4"
	echo not-passed >"$TEST_DIR/fd5"
	cfg_args sh -c 'cat <&3; cat <&4; echo "LISTEN_FDS=$LISTEN_FDS LISTEN_PID=$LISTEN_PID"; exec ls -l /proc/self/fd'
	track_id "$CID"
	# LISTEN_PID names the runtime's own pid: exec keeps the shell's.
	run env -u LISTEN_FDS sh -c 'LISTEN_FDS=1 LISTEN_PID=$$ exec "$@"' sh \
		"$PROCTOR" --root "$PROCTOR_ROOT" run --preserve-fds 1 --bundle "$BUNDLE" "$CID" \
		</dev/null 3<"$TEST_DIR/fd3" 4<"$TEST_DIR/fd4" 5<"$TEST_DIR/fd5"
	assert_status 0
	[ "${lines[0]}" = listen-fd ] || fail_with "$output"
	[ "${lines[1]}" = preserved-fd ] || fail_with "$output"
	[ "${lines[2]}" = "LISTEN_FDS=1 LISTEN_PID=1" ] || fail_with "$output"
	[ "$(open_fds)" = "0 1 2 3 4 " ] || fail_with "open fds: $output"
}

@test "LISTEN_FDS for another pid is ignored" {
	setup_bundle busybox
	cfg_args sh -c 'echo "LISTEN_FDS=${LISTEN_FDS:-unset}"; exec ls -l /proc/self/fd'
	track_id "$CID"
	run env LISTEN_FDS=1 LISTEN_PID=1 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null 3<"$TEST_DIR"
	assert_status 0
	[ "${lines[0]}" = "LISTEN_FDS=unset" ] || fail_with "$output"
	[ "$(open_fds)" = "0 1 2 " ] || fail_with "open fds: $output"
}

@test "without --preserve-fds no descriptor above 2 reaches the process" {
	setup_bundle busybox
	cfg_args ls -l /proc/self/fd
	track_id "$CID"
	run pr run --bundle "$BUNDLE" "$CID" </dev/null 3<"$TEST_DIR" 5<"$BUNDLE/config.json"
	assert_status 0
	[ "$(open_fds)" = "0 1 2 " ] || fail_with "open fds: $output"
}

@test "domainname from the config, in the container's uts namespace only" {
	setup_bundle busybox
	host=$(cat /proc/sys/kernel/domainname)
	cfg_set '.domainname = "prt.example"'
	cfg_args cat /proc/sys/kernel/domainname
	run_ctr
	assert_status 0
	[ "$output" = prt.example ]
	[ "$(cat /proc/sys/kernel/domainname)" = "$host" ]
}

@test "personality LINUX32: uname -m gives the 32-bit machine" {
	case $(uname -m) in
	x86_64) want=i686 ;;
	aarch64) want=armv8l ;;
	*) skip "no 32-bit personality known for $(uname -m)" ;;
	esac
	setup_bundle busybox
	cfg_set '.linux.personality = {"domain": "LINUX32"}'
	cfg_args sh -c 'uname -m; cat /proc/self/personality'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "$want" ] || fail_with "uname -m: $output"
	# PER_LINUX32 is 0x0008.
	[ "${lines[1]}" = 00000008 ] || fail_with "personality: $output"
	# And LINUX is the native one.
	cfg_set '.linux.personality = {"domain": "LINUX"}'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "$(uname -m)" ] || fail_with "LINUX: $output"
	[ "${lines[1]}" = 00000000 ] || fail_with "LINUX: $output"
}

@test "scheduler: policy and nice from process.scheduler" {
	setup_bundle busybox
	cfg_set '.process.scheduler = {"policy": "SCHED_BATCH", "nice": 7}'
	# /proc/PID/stat after the ")" closing comm: policy is field 41 of the
	# whole line (39 here), nice field 19 (17 here).  SCHED_BATCH is 3.
	cfg_args sh -c 'sed "s/^.*) //" /proc/self/stat | awk "{ print \$39, \$17 }"'
	run_ctr
	assert_status 0
	[ "$output" = "3 7" ] || fail_with "policy and nice: $output"
	# Without it the policy is inherited: SCHED_OTHER (0) when the test
	# itself runs under it.
	if [ "$(sed 's/^.*) //' /proc/self/stat | awk '{ print $39 }')" = 0 ]; then
		cfg_set 'del(.process.scheduler)'
		run_ctr
		assert_status 0
		[ "${output%% *}" = 0 ] || fail_with "default policy: $output"
	fi
}

@test "ioPriority: class and priority from process.ioPriority" {
	setup_bundle busybox
	cfg_set '.process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 6}'
	# busybox ionice without arguments prints its own class and priority
	# (ioprio_get), inherited from the container's init.
	cfg_args sh -c 'ionice; ionice -p 1'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "best-effort: prio 6" ] || fail_with "$output"
	[ "${lines[1]}" = "best-effort: prio 6" ] || fail_with "$output"
	cfg_set '.process.ioPriority = {"class": "IOPRIO_CLASS_IDLE", "priority": 0}'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = idle ] || fail_with "$output"
}

@test "capabilities: inheritable and ambient sets are applied; ambient keeps a capability for a non-root user" {
	setup_bundle busybox
	# uid 1000 loses every capability at execve unless it is ambient.
	cfg_set '.process.user = {"uid": 1000, "gid": 1000}
		| .process.capabilities = {"bounding": ["CAP_CHOWN", "CAP_KILL"], "effective": ["CAP_CHOWN", "CAP_KILL"],
			"permitted": ["CAP_CHOWN", "CAP_KILL"], "inheritable": ["CAP_CHOWN", "CAP_KILL"], "ambient": ["CAP_CHOWN"]}'
	cfg_args sh -c 'grep -E "^Cap(Inh|Amb|Eff):" /proc/self/status; touch /tmp/f; chown 0 /tmp/f; echo rc=$?'
	run_ctr
	assert_status 0
	# CAP_CHOWN is bit 0, CAP_KILL bit 5.
	[ "$(status_field CapInh)" = 0000000000000021 ] || fail_with "$output"
	[ "$(status_field CapAmb)" = 0000000000000001 ] || fail_with "$output"
	[ "$(status_field CapEff)" = 0000000000000001 ] || fail_with "$output"
	[ "${lines[-1]}" = rc=0 ] || fail_with "chown with an ambient CAP_CHOWN: $output"
	[ "$(stat -c %u "$ROOTFS/tmp/f")" = 0 ]

	# The same without ambient: nothing survives the execve.
	rm -f "$ROOTFS/tmp/f"
	cfg_set '.process.capabilities.ambient = []'
	run_ctr
	assert_status 0
	[ "$(status_field CapAmb)" = 0000000000000000 ] || fail_with "$output"
	[ "$(status_field CapEff)" = 0000000000000000 ] || fail_with "$output"
	[ "${lines[-1]}" = rc=1 ] || fail_with "chown without capability: $output"
}
