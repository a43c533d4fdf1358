#!/usr/bin/env bats
# Hangs that leave things behind (issue #19 item 2): a create that can
# never finish must fail within a bounded time with one clear error, and
# leave no state dir, cgroup or process.  Each step runs under timeout(1);
# exit 124 is the hang.

load helpers

# A seccomp listener agent as engines run them: it accepts one connection,
# takes the notify fd (SCM_RIGHTS) and reads the containerProcessState to EOF,
# then answers every notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE
# (the syscall runs as if unfiltered) until the filter's last user is gone.
# It writes the state's "status" to $2 once it has it.  (The project's own
# agent, tests/tools/seccomp-listener, is tested in integration/seccomp.bats;
# this one stays independent of it.)
LISTENER='
import array, fcntl, json, os, socket, struct, sys
path, out = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path); srv.listen(1)
open(out + ".ready", "w").close()
conn, _ = srv.accept()
fds = array.array("i")
data = b""
while True:
    msg, anc, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(4))
    for level, typ, d in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(d[:4])
    if not msg:
        break
    data += msg
with open(out, "w") as f:
    f.write(json.loads(data)["state"]["status"] + "\n")
nfd = fds[0]
RECV, SEND = 0xC0502100, 0xC0182101  # SECCOMP_IOCTL_NOTIF_RECV/SEND, seccomp_notif 80 and _resp 24 bytes
while True:
    buf = bytearray(80)
    try:
        fcntl.ioctl(nfd, RECV, buf)
    except OSError:
        break  # ENOENT: no task uses the filter any more
    nid = struct.unpack_from("<Q", buf)[0]
    try:
        fcntl.ioctl(nfd, SEND, bytearray(struct.pack("<QqiI", nid, 0, 0, 1)))
    except OSError:
        pass  # the task died meanwhile
'

# notify_bundle NNP: a busybox container whose seccomp profile notifies
# close and read (syscalls the runtime's init makes after the load), with
# its listener at $TEST_DIR/l/sock, a host path (the runtime connects from
# its own side).
notify_bundle() {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	setup_bundle busybox
	mkdir -p "$TEST_DIR/l"
	cfg_set --argjson nnp "$1" --arg s "$TEST_DIR/l/sock" '
		.process.noNewPrivileges = $nnp
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $s,
			"architectures": ["SCMP_ARCH_X86_64"],
			"syscalls": [{"names": ["close", "read"], "action": "SCMP_ACT_NOTIFY"}]}'
	cfg_args sh -c 'read x </etc/hostname; echo notified-ok'
	python3 -c "$LISTENER" "$TEST_DIR/l/sock" "$TEST_DIR/l/state" 2>"$TEST_DIR/l/err" 3>&- &
	LPID=$!
	on_teardown "kill $LPID"
	wait_file_exists "$TEST_DIR/l/state.ready"
}

wait_file_exists() {
	local i
	for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.05; done
	fail_with "no $1"
}

notify_case() {
	notify_bundle "$1"
	track_id "$CID"
	# Not under `run`: the created init holds the runtime's fds until it
	# execs, and `run` would wait for its capture pipe to close.
	status=0
	timeout -k 5 20 "$PROCTOR" --root "$PROCTOR_ROOT" create --bundle "$BUNDLE" "$CID" \
		</dev/null >"$TEST_DIR/$CID.out" 2>"$TEST_DIR/$CID.err" 3>&- || status=$?
	[ "$status" -ne 124 ] || fail_with "create hung under SCMP_ACT_NOTIFY on close/read: $(cat "$TEST_DIR/$CID.err")"
	assert_status 0
	[ "$(state_of "$CID" status)" = created ]
	run timeout -k 5 20 "$PROCTOR" --root "$PROCTOR_ROOT" start "$CID" 3>&-
	[ "$status" -ne 124 ] || fail_with "start hung"
	assert_status 0
	local i
	for i in $(seq 200); do [ "$(state_of "$CID" status)" = stopped ] && break; sleep 0.05; done
	[ "$(state_of "$CID" status)" = stopped ] || fail_with "the container stayed $(state_of "$CID" status)"
	grep -qx notified-ok "$TEST_DIR/$CID.out" || fail_with "no output: $(cat "$TEST_DIR/$CID.out" "$TEST_DIR/$CID.err")"
	[ -s "$TEST_DIR/l/state" ] || fail_with "the listener never got the state: $(cat "$TEST_DIR/l/err")"
	timeout -k 5 20 "$PROCTOR" --root "$PROCTOR_ROOT" delete "$CID" 3>&-
	assert_no_leftovers "$CID"
}

@test "SCMP_ACT_NOTIFY on close and read with noNewPrivileges: the container runs, nothing hangs" {
	notify_case true
}

@test "SCMP_ACT_NOTIFY on close and read without noNewPrivileges: the container runs, nothing hangs" {
	notify_case false
}

# frozen_cgroup NAME HIER: makes /NAME in the freezer hierarchy HIER
# ("freezer": v1 freezer.state; "unified": cgroup.freeze) frozen; prints
# its directory (the caller registers the thaw and rmdir).
frozen_cgroup() {
	local dir
	if [ "$2" = freezer ]; then
		dir=/sys/fs/cgroup/freezer/$1
		mkdir "$dir" && echo FROZEN >"$dir/freezer.state"
	else
		dir=/sys/fs/cgroup/unified/$1
		[ -e /sys/fs/cgroup/unified/cgroup.procs ] || dir=/sys/fs/cgroup/$1
		mkdir "$dir" && echo 1 >"$dir/cgroup.freeze"
	fi
	echo "$dir"
}

# The cgroup is the engine's (it may hold other processes): the runtime
# must refuse before placing anything in it, and never remove or thaw it.
frozen_case() {
	local hier=$1 name=prt-frozen-${TEST_DIR##*.} dir
	setup_bundle busybox
	[ -d "/sys/fs/cgroup/$hier" ] || [ "$hier" = unified ] || require_or_skip "no $hier hierarchy"
	dir=$(frozen_cgroup "$name" "$hier")
	if [ "$hier" = freezer ]; then
		on_teardown "echo THAWED >$dir/freezer.state; rmdir $dir"
	else
		on_teardown "echo 0 >$dir/cgroup.freeze; rmdir $dir"
	fi
	for sub in "" /ctr; do
		cfg_set --arg p "/$name$sub" '.linux.cgroupsPath = $p'
		cfg_args echo ran
		track_id "$CID"
		status=0
		timeout -k 5 30 "$PROCTOR" --root "$PROCTOR_ROOT" run -d --bundle "$BUNDLE" "$CID" \
			</dev/null >"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&- || status=$?
		[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail_with "run -d into frozen /$name$sub hung"
		[ "$status" -ne 0 ] || fail_with "run -d into frozen /$name$sub succeeded"
		grep -q frozen "$TEST_DIR/err" || fail_with "no clear error: $(cat "$TEST_DIR/err")"
		[ "$(grep -c . "$TEST_DIR/err")" -eq 1 ] || fail_with "more than one error line: $(cat "$TEST_DIR/err")"
		# Nothing left: no state dir, no process, no new cgroup anywhere.
		[ ! -e "$PROCTOR_ROOT/$CID" ] || fail_with "state dir left"
		[ -z "$(live_procs_in_cgroup "$name")" ] || fail_with "processes left in /$name: $(live_procs_in_cgroup "$name")"
		[ -z "$(find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -type d -path "*/$name/*" 2>/dev/null)" ] ||
			fail_with "cgroups left: $(find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -type d -path "*/$name/*")"
		# The engine's cgroup is still there, still frozen.
		[ -d "$dir" ] || fail_with "the runtime removed $dir"
		if [ "$hier" = freezer ]; then
			grep -q FROZEN "$dir/freezer.state" || fail_with "the runtime thawed $dir"
		else
			grep -qx 1 "$dir/cgroup.freeze" || fail_with "the runtime thawed $dir"
		fi
		assert_no_leftovers "$CID"
	done
}

@test "run -d into a cgroup frozen by the v1 freezer fails at once with a clear error and leaves nothing" {
	frozen_case freezer
}

@test "run -d into a cgroup frozen by cgroup.freeze fails at once with a clear error and leaves nothing" {
	frozen_case unified
}
