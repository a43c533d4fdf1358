#!/usr/bin/env bats
# CVE-2019-5736 class: a container must never be able to open the runtime
# binary for writing through /proc/PID/exe.  proctor re-executes itself from
# a sealed memfd copy before it enters any container namespace
# (src/linux/exeguard.c), so what a container reaches is an immutable
# anonymous file.  Each test checks the host binary's hash afterwards.

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
	mkdir -p "$b"
	cp -a "$IMAGE_CACHE/busybox" "$b/rootfs"
	write_attack_script "$b/rootfs/attack.sh"
	jq --arg r "$b/rootfs" --arg ns "/proc/$victim/ns/pid" \
		'.root.path = $r | .root.readonly = false | .process.terminal = false
		| .process.args = ["/attack.sh", "1"]
		| .linux.namespaces = [.linux.namespaces[] | if .type == "pid" then .path = $ns else . end]' \
		"$BUNDLE/config.json" >"$b/config.json"
	track_id "$CID-b"
	pr create --bundle "$b" "$CID-b" </dev/null >"$TEST_DIR/b.out" 2>&1
	pr start "$CID-b"
	wait_file "$b/rootfs/attack.log"
	sleep 0.3
	pr start "$CID"
	local i=0
	while ! grep -qE 'WROTE|refused|failed' "$b/rootfs/attack.log" && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	cat "$b/rootfs/attack.log"
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
	for i in $(seq 1 30); do
		pr exec "$CID" sleep 0.05 || fail_with "exec $i failed"
	done
	sleep 0.3
	echo "seen: $(sort -u "$ROOTFS/seen.log" | tr '\n' ' ')"
	! grep -q WROTE "$ROOTFS/seen.log" || fail_with "a write through /proc/PID/exe succeeded"
	# Whatever runtime process the watcher caught was the sealed copy.
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

@test "the sealed runtime copy refuses writes (F_SEAL_WRITE)" {
	setup_bundle busybox
	cfg_args sleep 100
	create_ctr
	victim=$(state_of "$CID" pid)
	# From the host, as root, through the same /proc link a container
	# would use: the seal holds against root too.
	run bash -c "printf EVIL >>/proc/$victim/exe"
	[ "$status" -ne 0 ] || fail_with "write to /proc/$victim/exe succeeded"
	teardown_check_hash
}
