#!/usr/bin/env bats
# CVE-2019-5736 class: a container must never be able to open the runtime
# binary for writing through /proc/PID/exe.  Before it enters any container
# namespace proctor re-executes itself (src/linux/exeguard.c) from its own
# file seen through a private, detached, read-only overlayfs mount with no
# upper layer, or, where that mount cannot be made, from a sealed memfd
# copy; what a container reaches is one of those two, never the host file.
# PROCTOR_TEST_EXEGUARD=memfd (compiled into the --enable-fault-injection
# build only) forces the fallback, so both paths are attacked here.  A
# binary on a read-only mount runs as it is, protected by the mount (the
# last test).  Each test checks the binary's hash afterwards.

load helpers

setup() {
	base_setup
	EXE_HASH=$(sha256 "$PROCTOR")
}

teardown_check_hash() {
	local now
	now=$(sha256 "$PROCTOR")
	[ "$now" = "$EXE_HASH" ] || fail_with "the runtime binary changed: $EXE_HASH -> $now"
}

# overlay_expected: the default path must give the overlay view here (the
# kernel has overlayfs and the fallback is not forced); where it does not,
# the memfd copy is what the tests must find instead.
overlay_expected() {
	[ "${PROCTOR_TEST_EXEGUARD:-}" != memfd ] || return 1
	grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
	grep -qw overlay /proc/filesystems
}

# force_memfd: run this test's proctor calls on the memfd fallback
# (exeguard.c test_force_memfd); skipped on a build without the hook.
force_memfd() {
	grep -q PROCTOR_TEST_EXEGUARD "$PROCTOR" ||
		require_or_skip "needs the --enable-fault-injection build (PROCTOR_TEST_EXEGUARD)"
	export PROCTOR_TEST_EXEGUARD=memfd
}

# view_unwritable FILE: FILE (a /proc/PID/exe on the overlay view) refuses
# O_WRONLY and O_RDWR with EROFS or ETXTBSY, and the view has no writable
# layer: a clone of its mount (open_tree; refused on this kernel for
# another process's detached mount, which is fine too) with the mount's
# read-only flag cleared still reports a read-only filesystem and refuses
# the same opens.  Prints why not, and fails, otherwise.
view_unwritable() {
	python3 - "$1" <<'PY'
import ctypes, errno, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_open_tree, SYS_mount_setattr = 428, 442
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC, AT_EMPTY_PATH = 1, 0o2000000, 0x1000
MOUNT_ATTR_RDONLY, ST_RDONLY = 1, 1
def refuse(path, what):
    for fl in (os.O_WRONLY, os.O_RDWR):
        try:
            os.close(os.open(path, fl))
            sys.exit("%s: opened for writing (flags %d)" % (what, fl))
        except OSError as e:
            if e.errno not in (errno.EROFS, errno.ETXTBSY, errno.EISDIR):
                sys.exit("%s: open for writing failed with %s, not EROFS/ETXTBSY" % (what, e.strerror))
refuse(sys.argv[1], sys.argv[1])
fd = os.open(sys.argv[1], os.O_PATH)
t = libc.syscall(SYS_open_tree, fd, b"", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)
if t < 0:
    print("open_tree of the view refused:", os.strerror(ctypes.get_errno()))
    sys.exit(0)
attr = ctypes.create_string_buffer(struct.pack("QQQQ", 0, MOUNT_ATTR_RDONLY, 0, 0))
if libc.syscall(SYS_mount_setattr, t, b"", AT_EMPTY_PATH, attr, 32) < 0:
    sys.exit("mount_setattr on the clone: %s" % os.strerror(ctypes.get_errno()))
clone = "/proc/self/fd/%d" % t
if not os.statvfs(clone).f_flag & ST_RDONLY:
    sys.exit("a read-write clone of the view is a writable filesystem: it has an upper layer")
refuse(clone, "the read-write clone")
print("a read-write clone of the view is still a read-only filesystem")
PY
}

# assert_protected_exe FILE WHAT: FILE (a /proc/PID/exe) is the overlay view
# (overlayfs, unwritable) when overlay_expected, else the sealed memfd
# named proctor; never the host binary.
assert_protected_exe() {
	local link type
	link=$(readlink "$1") || fail_with "$2: cannot read $1"
	type=$(stat -L -f -c %T "$1")
	echo "$2: $link on $type"
	if overlay_expected; then
		[ "$type" = overlayfs ] || fail_with "$2 runs from '$link' on $type, not the read-only overlay view"
		view_unwritable "$1" || fail_with "$2: the overlay view is writable"
	else
		[[ "$link" == /memfd:proctor* ]] || fail_with "$2 runs from '$link' on $type, not the sealed memfd"
	fi
}

# The attack script: hold /proc/PID/exe of a runtime process open (read-only,
# which works even while it runs), then reopen it for writing through
# /proc/self/fd once the runtime process has moved on, and append a marker.
# Reports what it saw in /attack.log.
write_attack_script() {
	cat >"$1" <<'SH'
#!/bin/sh
pid=$1
echo "exe $(readlink /proc/$pid/exe) fs $(stat -L -f -c %t /proc/$pid/exe)" >/attack.log
exec 3</proc/$pid/exe || { echo "open-ro failed" >>/attack.log; exit 0; }
# Wait until the target execs its own program (the runtime code is gone).
i=0
while [ "$(readlink /proc/$pid/exe)" = "$(readlink /proc/self/fd/3)" ] && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
if ( printf 'EVIL' >>/proc/self/fd/3 ) 2>>/attack.log; then
	echo "WROTE" >>/attack.log
else
	echo "write refused" >>/attack.log
fi
exec 3<&-
SH
	chmod 755 "$1"
}

# attacker_bundle DIR VICTIM_PID: a busybox bundle in DIR, configured like
# $BUNDLE but in the victim's pid namespace, whose process runs the attack
# script against pid 1.
attacker_bundle() {
	local b=$1 victim=$2
	mkdir -p "$b"
	cp -a "$IMAGE_CACHE/busybox" "$b/rootfs"
	write_attack_script "$b/rootfs/attack.sh"
	jq --arg r "$b/rootfs" --arg ns "/proc/$victim/ns/pid" \
		'.root.path = $r | .root.readonly = false | .process.terminal = false
		| .process.args = ["/attack.sh", "1"]
		| .linux.namespaces = [.linux.namespaces[] | if .type == "pid" then .path = $ns else . end]' \
		"$BUNDLE/config.json" >"$b/config.json"
}

# attack_victim DIR: starts the created attacker $CID-b (bundle DIR), lets
# it take hold of pid 1's exe, starts the victim $CID and waits (10 s at
# most) for the attack's outcome in DIR/rootfs/attack.log, then prints it.
attack_victim() {
	local b=$1 i=0
	pr start "$CID-b"
	wait_file "$b/rootfs/attack.log"
	sleep 0.3
	pr start "$CID"
	while ! grep -qE 'WROTE|refused|failed' "$b/rootfs/attack.log" && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	cat "$b/rootfs/attack.log"
}

# attack_created: the CVE-2019-5736 attack on a created container's init
# (the runtime's own code until `start`) from a second container joined to
# its pid namespace.  What the attacker held must be the protected file
# (overlay view or memfd, as assert_protected_exe expects) and its write
# must be refused.
attack_created() {
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr "$CID"
	victim=$(state_of "$CID" pid)
	assert_protected_exe "/proc/$victim/exe" "the created container's init"

	local b=$TEST_DIR/b
	attacker_bundle "$b" "$victim"
	track_id "$CID-b"
	pr create --bundle "$b" "$CID-b" </dev/null >"$TEST_DIR/b.out" 2>&1
	attack_victim "$b"
	if overlay_expected; then
		# 794c7630: OVERLAYFS_SUPER_MAGIC, as busybox's stat prints it
		grep -q '^exe .* fs 794c7630$' "$b/rootfs/attack.log" ||
			fail_with "the attacker saw no overlay view: $(cat "$b/rootfs/attack.log")"
	else
		grep -q '^exe /memfd:' "$b/rootfs/attack.log" ||
			fail_with "the attacker saw a non-memfd runtime: $(cat "$b/rootfs/attack.log")"
	fi
	! grep -q 'open-ro failed' "$b/rootfs/attack.log" || fail_with "the attacker could not hold /proc/1/exe: the test proves nothing"
	! grep -q WROTE "$b/rootfs/attack.log" || fail_with "the attacker wrote to the runtime's exe"
	grep -q 'write refused' "$b/rootfs/attack.log" || fail_with "the attack did not finish: $(cat "$b/rootfs/attack.log")"
	teardown_check_hash
}

@test "create: a container sharing the pid namespace cannot write the runtime through /proc/1/exe" {
	attack_created
}

@test "create, memfd fallback: a container sharing the pid namespace cannot write the runtime through /proc/1/exe" {
	force_memfd
	attack_created
}

@test "exec: processes in the container never see the host binary as a runtime exe" {
	setup_bundle busybox
	# The watcher records every /proc/*/exe that is not busybox, and tries
	# to write each through a held descriptor.
	cat >"$ROOTFS/watch.sh" <<'SH'
#!/bin/sh
: >/seen.log
while :; do
	for d in /proc/[0-9]*; do
		e=$(readlink $d/exe 2>/dev/null) || continue
		case $e in /bin/busybox|"") continue ;; esac
		echo "$e" >>/seen.log
		( exec 3<$d/exe && sleep 0.1 && printf 'EVIL' >>/proc/self/fd/3 && echo WROTE >>/seen.log ) 2>/dev/null
	done
done
SH
	chmod 755 "$ROOTFS/watch.sh"
	cfg_args /watch.sh
	# An exec's runtime process is in the container's pid namespace, and
	# readable to it (its capabilities dropped to the container's), only
	# for the few microseconds before its execve: polled by a shell, that
	# was caught once in 1 to 200 execs.  To make the catch certain, the
	# execve goes to a seccomp listener (tests/tools/seccomp-listener) that
	# holds the first notification of each filter (an exec's: its execve of
	# the process) for 2 s, with the runtime still the process's exe.
	[ -x "${SECCOMP_LISTENER:-}" ] || require_or_skip "SECCOMP_LISTENER is not set to an executable"
	"$SECCOMP_LISTENER" --hold-first-ms 2000 "$TEST_DIR/l.sock" "$TEST_DIR/l.state" 2>"$TEST_DIR/l.err" &
	local lpid=$!
	on_teardown "kill $lpid"
	local i=0
	while [ ! -S "$TEST_DIR/l.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -S "$TEST_DIR/l.sock" ] || fail_with "the seccomp listener did not start: $(cat "$TEST_DIR/l.err")"
	cfg_set --arg l "$TEST_DIR/l.sock" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $l,
		"syscalls": [{"names": ["execve"], "action": "SCMP_ACT_NOTIFY"}]}'
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	i=0
	while [ ! -e "$ROOTFS/seen.log" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$ROOTFS/seen.log" ] || fail_with "the watcher did not start"
	local n
	for n in $(seq 1 5); do
		pr exec "$CID" true || fail_with "exec $n failed"
		grep -q . "$ROOTFS/seen.log" && break
	done
	# Let the watcher finish its write attempt on what it caught.
	sleep 0.3
	echo "execs: $n; seen: $(sort -u "$ROOTFS/seen.log" | tr '\n' ' ')"
	grep -q . "$ROOTFS/seen.log" || fail_with "the watcher caught no runtime process in $n execs"
	! grep -q WROTE "$ROOTFS/seen.log" || fail_with "a write through /proc/PID/exe succeeded"
	# What it caught is the runtime's protected file and nothing else (the
	# host binary would show its path on ext4 here): the overlay view
	# (at its detached mount's root, /proctor; the host binary's link is
	# its full path; a stat from here races the process's own execve) or,
	# without overlayfs, the memfd.
	local want='^/memfd:proctor'
	overlay_expected && want="^/$(basename "$PROCTOR")\$"
	grep -v WROTE "$ROOTFS/seen.log" | grep -q -- "$want" || fail_with "no protected runtime file among: $(sort -u "$ROOTFS/seen.log")"
	! grep -v WROTE "$ROOTFS/seen.log" | grep -v -- "$want" | grep -q . ||
		fail_with "unprotected exe seen: $(grep -v -- "$want" "$ROOTFS/seen.log" | sort -u)"
	teardown_check_hash
}

@test "exec: a #!/proc/self/exe entrypoint runs the protected runtime file, not the host binary" {
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	# The CVE's trigger: a program in the image whose interpreter is
	# /proc/self/exe, i.e. whatever binary is doing the exec.
	printf '#!/proc/self/exe\n' >"$ROOTFS/evil"
	chmod 755 "$ROOTFS/evil"
	run pr exec "$CID" /evil
	# Whatever the interpreted runtime copy does, it must not be the
	# host file: it is read-only anyway, check the hash and that nothing in
	# the container kept a writable handle.
	teardown_check_hash
	# A process that is gone or going by the time the loop reaches it (its
	# exe unreadable: ENOENT without an mm) is skipped; what the container
	# cannot open through /proc/PID/exe it cannot attack through it either.
	run pr exec "$CID" sh -c 'for d in /proc/[0-9]*; do
		e=$(readlink $d/exe 2>/dev/null) && t=$(stat -L -f -c %t $d/exe 2>/dev/null) && echo "$e $t"; done; :'
	assert_status 0
	echo "$output" | grep -q '^/bin/busybox ' || fail_with "the loop saw no process: $output"
	! echo "$output" | grep -v -e '^/bin/busybox ' -e '^/memfd:' -e ' 794c7630$' | grep -q . || fail_with "unexpected exe: $output"
}

# seals_of FILE: the seals of FILE (opened read-only) as a number, or
# "none: ERRNO" when it cannot carry any (F_GET_SEALS fails with EINVAL on
# an ordinary file, e.g. the host binary).
seals_of() {
	python3 - "$1" <<'PY'
import errno, fcntl, os, sys
F_GET_SEALS = 1034
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    print(fcntl.fcntl(fd, F_GET_SEALS))
except OSError as e:
    print("none:", errno.errorcode.get(e.errno, e.errno))
PY
}

# assert_sealed FILE WHAT: FILE carries F_SEAL_SEAL (1), F_SEAL_SHRINK (2),
# F_SEAL_GROW (4) and F_SEAL_WRITE (8).
assert_sealed() {
	local s
	s=$(seals_of "$1") || fail_with "cannot open $1 ($2)"
	echo "$2: $(readlink "$1"), seals $s"
	[[ "$s" =~ ^[0-9]+$ ]] || fail_with "$2 runs from $(readlink "$1"), which carries no seals ($s)"
	[ $((s & 15)) -eq 15 ] || fail_with "$2: seals $s lack some of SEAL|SHRINK|GROW|WRITE (15)"
}

@test "memfd fallback: the runtime copy a container can reach is sealed (F_SEAL_SEAL, SHRINK, GROW, WRITE)" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	force_memfd
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	# Until start, the container's pid 1 is the runtime's own init code.
	# The seals, not the write refusal (a running binary gives ETXTBSY
	# anyway), are what keeps the copy immutable once nothing runs it.
	victim=$(state_of "$CID" pid)
	assert_sealed "/proc/$victim/exe" "the created container's init"
	pr start "$CID"
	wait_status "$CID" running
	# A foreground exec: its runtime process (whose clone is what the
	# container sees; clone shares the exe) waits while the process runs.
	"$PROCTOR" --root "$PROCTOR_ROOT" exec "$CID" sh -c 'echo up >/exec-up; sleep 2' </dev/null >/dev/null 2>"$TEST_DIR/exec.err" 3>&- &
	local ep=$!
	on_teardown "kill $ep"
	wait_file "$ROOTFS/exec-up" || fail_with "the exec'd process did not start: $(cat "$TEST_DIR/exec.err")"
	assert_sealed "/proc/$ep/exe" "exec's runtime process"
	wait "$ep" || fail_with "exec failed ($?): $(cat "$TEST_DIR/exec.err")"
	teardown_check_hash
}

@test "the runtime file a container can reach is a read-only overlay view with no writable layer" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	overlay_expected || require_or_skip "no overlayfs on this kernel: the memfd tests cover it"
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	victim=$(state_of "$CID" pid)
	assert_protected_exe "/proc/$victim/exe" "the created container's init"
	# The view shows the binary's own file (same inode and content), from a
	# mount no mount table lists (detached), not its host path.
	[ "$(stat -L -c %i "/proc/$victim/exe")" = "$(stat -c %i "$PROCTOR")" ] ||
		fail_with "the view is not of $PROCTOR"
	[ "$(sha256 "/proc/$victim/exe")" = "$EXE_HASH" ] || fail_with "the view's content differs from $PROCTOR"
	[ "$(readlink "/proc/$victim/exe")" = "/$(basename "$PROCTOR")" ] ||
		fail_with "the view is at '$(readlink "/proc/$victim/exe")', not at its detached mount's root"
	pr start "$CID"
	wait_status "$CID" running
	"$PROCTOR" --root "$PROCTOR_ROOT" exec "$CID" sh -c 'echo up >/exec-up; sleep 2' </dev/null >/dev/null 2>"$TEST_DIR/exec.err" 3>&- &
	local ep=$!
	on_teardown "kill $ep"
	wait_file "$ROOTFS/exec-up" || fail_with "the exec'd process did not start: $(cat "$TEST_DIR/exec.err")"
	assert_protected_exe "/proc/$ep/exe" "exec's runtime process"
	wait "$ep" || fail_with "exec failed ($?): $(cat "$TEST_DIR/exec.err")"
	teardown_check_hash
}

# ro_copy: a copy of the runtime on a read-only bind mount, as an
# administrator's `mount --bind DIR DIR; mount -o remount,bind,ro DIR`
# (src/linux/exeguard.c, fd_on_readonly_mount).  Sets RO_PROCTOR, RO_HASH.
ro_copy() {
	local d=$TEST_DIR/robin
	mkdir -p "$d"
	cp "$PROCTOR" "$d/proctor"
	mount --bind "$d" "$d"
	on_teardown "umount -l $d"
	mount -o remount,bind,ro "$d"
	RO_PROCTOR=$d/proctor
	RO_HASH=$(sha256 "$RO_PROCTOR")
	! touch "$RO_PROCTOR" 2>/dev/null || fail_with "$d is not read-only"
}

@test "a runtime binary on a read-only mount runs uncopied, and a container still cannot write it" {
	setup_bundle busybox
	ro_copy
	cfg_args sleep 100
	track_id "$CID"
	"$RO_PROCTOR" --root "$PROCTOR_ROOT" create --bundle "$BUNDLE" "$CID" \
		</dev/null >"$TEST_DIR/$CID.out" 2>"$TEST_DIR/$CID.err" ||
		fail_with "create failed: $(cat "$TEST_DIR/$CID.err")"
	victim=$(state_of "$CID" pid)
	# docs/security.md: on a read-only mount the memfd copy is skipped.
	exe=$(readlink "/proc/$victim/exe")
	[ "$exe" = "$RO_PROCTOR" ] || fail_with "the init runs from '$exe', not from $RO_PROCTOR itself"

	# The CVE-2019-5736 attack of the first test, from a second container
	# (also created by the read-only binary) in the victim's pid namespace:
	# hold /proc/1/exe, wait until pid 1 has exec'd its program, reopen it
	# for writing.  Both starts use $PROCTOR, so when the attacker writes,
	# nothing executes the read-only file any more (no ETXTBSY): only the
	# read-only mount stands in the way, and the error must be EROFS.
	local b=$TEST_DIR/b
	attacker_bundle "$b" "$victim"
	track_id "$CID-b"
	"$RO_PROCTOR" --root "$PROCTOR_ROOT" create --bundle "$b" "$CID-b" </dev/null >"$TEST_DIR/b.out" 2>&1 ||
		fail_with "create of the attacker failed: $(cat "$TEST_DIR/b.out")"
	attack_victim "$b"
	! grep -q '^exe /memfd:' "$b/rootfs/attack.log" || fail_with "the attacker saw a memfd: the read-only shortcut was not taken"
	grep -q '^exe ' "$b/rootfs/attack.log" && ! grep -q 'open-ro failed' "$b/rootfs/attack.log" ||
		fail_with "the attacker could not hold /proc/1/exe: the test proves nothing"
	! grep -q WROTE "$b/rootfs/attack.log" || fail_with "the attacker wrote to the read-only runtime binary"
	grep -q 'write refused' "$b/rootfs/attack.log" || fail_with "the attack did not finish"
	grep -q 'Read-only file system' "$b/rootfs/attack.log" ||
		fail_with "the write was refused, but not with EROFS: $(cat "$b/rootfs/attack.log")"
	[ "$(sha256 "$RO_PROCTOR")" = "$RO_HASH" ] || fail_with "the read-only runtime binary changed"

	# exec from the read-only binary: no copy either.
	"$RO_PROCTOR" --root "$PROCTOR_ROOT" exec "$CID" sh -c 'echo up >/exec-up; sleep 2' </dev/null >/dev/null 2>"$TEST_DIR/exec.err" 3>&- &
	local ep=$!
	on_teardown "kill $ep"
	wait_file "$ROOTFS/exec-up" || fail_with "the exec'd process did not start: $(cat "$TEST_DIR/exec.err")"
	exe=$(readlink "/proc/$ep/exe")
	[ "$exe" = "$RO_PROCTOR" ] || fail_with "exec's runtime process runs from '$exe', not from $RO_PROCTOR itself"
	wait "$ep" || fail_with "exec failed ($?): $(cat "$TEST_DIR/exec.err")"
	teardown_check_hash
}
