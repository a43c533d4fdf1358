#!/usr/bin/env bats
# CVE-2019-5736 class: a container must never be able to open the runtime
# binary for writing through /proc/PID/exe.  proctor re-executes itself from
# a sealed memfd copy before it enters any container namespace
# (src/linux/exeguard.c), so what a container reaches is an immutable
# anonymous file; a binary on a read-only mount runs uncopied, protected by
# the mount (the last test).  Each test checks the binary's hash afterwards.

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

# The attack script: hold /proc/PID/exe of a runtime process open (read-only,
# which works even while it runs), then reopen it for writing through
# /proc/self/fd once the runtime process has moved on, and append a marker.
# Reports what it saw in /attack.log.
write_attack_script() {
	cat >"$1" <<'SH'
#!/bin/sh
pid=$1
echo "exe $(readlink /proc/$pid/exe)" >/attack.log
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

@test "create: a container sharing the pid namespace cannot write the runtime through /proc/1/exe" {
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr "$CID"
	victim=$(state_of "$CID" pid)
	# Until `start`, the victim's pid 1 is the runtime's own init code.
	exe=$(readlink "/proc/$victim/exe")
	[[ "$exe" == /memfd:* ]] || fail_with "the container init runs from '$exe', not a sealed memfd"

	# A second container joins the first one's pid namespace and attacks
	# /proc/1/exe, while the host starts the first.
	local b=$TEST_DIR/b
	attacker_bundle "$b" "$victim"
	track_id "$CID-b"
	pr create --bundle "$b" "$CID-b" </dev/null >"$TEST_DIR/b.out" 2>&1
	attack_victim "$b"
	grep -q '^exe /memfd:' "$b/rootfs/attack.log" || fail_with "the attacker saw a non-memfd runtime: $(cat "$b/rootfs/attack.log")"
	! grep -q WROTE "$b/rootfs/attack.log" || fail_with "the attacker wrote to the runtime's exe"
	teardown_check_hash
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
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	local i=0
	while [ ! -e "$ROOTFS/seen.log" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$ROOTFS/seen.log" ] || fail_with "the watcher did not start"
	# An exec's runtime process is in the container's pid namespace only
	# between its clone and its execve (a few ms), so the watcher misses
	# most: exec until it has caught one (here after 3 to 21 execs, about
	# one in ten; 200 tries leave a chance of 1e-9 to miss).  Without a
	# catch the test would prove nothing.
	local n
	for n in $(seq 1 200); do
		pr exec "$CID" sleep 0.05 || fail_with "exec $n failed"
		grep -q . "$ROOTFS/seen.log" && break
	done
	# Let the watcher finish its write attempt on what it caught.
	sleep 0.3
	echo "execs: $n; seen: $(sort -u "$ROOTFS/seen.log" | tr '\n' ' ')"
	grep -q . "$ROOTFS/seen.log" || fail_with "the watcher caught no runtime process in $n execs"
	! grep -q WROTE "$ROOTFS/seen.log" || fail_with "a write through /proc/PID/exe succeeded"
	# What it caught is the runtime's sealed copy: a memfd named proctor,
	# and nothing else (the host binary would show its path here).
	grep -q '^/memfd:proctor' "$ROOTFS/seen.log" || fail_with "no sealed runtime copy among: $(sort -u "$ROOTFS/seen.log")"
	! grep -v '^/memfd:' "$ROOTFS/seen.log" | grep -q . ||
		fail_with "non-memfd exe seen: $(grep -v '^/memfd:' "$ROOTFS/seen.log" | sort -u)"
	teardown_check_hash
}

@test "exec: a #!/proc/self/exe entrypoint runs the sealed copy, not the host binary" {
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
	run pr exec "$CID" sh -c 'for d in /proc/[0-9]*; do readlink $d/exe; done'
	assert_status 0
	! echo "$output" | grep -v -e '^/bin/busybox$' -e '^/memfd:' | grep -q . || fail_with "unexpected exe: $output"
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

@test "the runtime copy a container can reach is sealed (F_SEAL_SEAL, SHRINK, GROW, WRITE)" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
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
