#!/usr/bin/env bats
# Mounts: tmpfs options, read-only binds, masked and readonly paths, a
# read-only root, the default /dev, linux.devices, rootfs propagation.

load helpers

# mountinfo_line MOUNTPOINT: the container's mountinfo line for MOUNTPOINT,
# from $output of a run that printed /proc/self/mountinfo.
mountinfo_line() {
	echo "$output" | awk -v m="$1" '$5 == m' | tail -n 1
}

@test "tmpfs mount with options shows up in mountinfo" {
	setup_bundle busybox
	cfg_set '.mounts += [{"destination": "/mnt/scratch", "type": "tmpfs", "source": "tmpfs",
		"options": ["nosuid", "nodev", "noexec", "size=2m", "mode=1750"]}]'
	cfg_args sh -c 'cat /proc/self/mountinfo; stat -c "mode=%a" /mnt/scratch; echo hi >/mnt/scratch/f && cat /mnt/scratch/f'
	run_ctr
	assert_status 0
	line=$(mountinfo_line /mnt/scratch)
	[ -n "$line" ] || fail_with "no /mnt/scratch in mountinfo: $output"
	[[ "$line" == *" - tmpfs "* ]] || fail_with "not tmpfs: $line"
	opts=$(echo "$line" | awk '{ print $6 }')
	for o in nosuid nodev noexec; do
		[[ ",$opts," == *",$o,"* ]] || fail_with "missing $o in $line"
	done
	[[ "$line" == *size=2048k* ]] || fail_with "missing size=2048k in $line"
	[[ "$line" == *mode=1750* ]] || fail_with "missing mode=1750 in $line"
	assert_output_contains mode=1750
	[ "${lines[-1]}" = hi ]
}

@test "bind mount with ro is read-only; rw bind is writable and shared with the host" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/ro" "$TEST_DIR/rw"
	echo ro-content >"$TEST_DIR/ro/file"
	cfg_set --arg ro "$TEST_DIR/ro" --arg rw "$TEST_DIR/rw" '.mounts += [
		{"destination": "/data/ro", "type": "bind", "source": $ro, "options": ["bind", "ro"]},
		{"destination": "/data/rw", "type": "bind", "source": $rw, "options": ["rbind", "rw"]}]'
	cfg_args sh -c 'cat /data/ro/file; touch /data/ro/new 2>&1; echo rc=$?; echo written >/data/rw/out; echo rc=$?'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = ro-content ]
	assert_output_contains "Read-only file system"
	[ "${lines[2]}" = rc=1 ]
	[ "${lines[3]}" = rc=0 ]
	[ ! -e "$TEST_DIR/ro/new" ]
	[ "$(cat "$TEST_DIR/rw/out")" = written ]
}

@test "maskedPaths: /proc/kcore reads nothing, a masked dir is empty, a masked file is empty" {
	setup_bundle busybox
	echo secret-value >"$ROOTFS/etc/secret"
	mkdir -p "$ROOTFS/opt/hidden" && echo x >"$ROOTFS/opt/hidden/file"
	# /proc/kcore exists only with CONFIG_PROC_KCORE; mask another
	# non-empty /proc file too so the check always bites.
	cfg_set '.linux.maskedPaths = ["/proc/kcore", "/proc/timer_list", "/proc/keys",
		"/etc/secret", "/opt/hidden", "/no/such/path"]'
	cfg_args sh -c 'for f in /proc/kcore /proc/timer_list /proc/keys; do
			[ -e $f ] && echo "$f $(wc -c <$f) $(stat -c "%t:%T" $f)"; done
		echo "secret=$(cat /etc/secret)"; echo "hidden=$(ls /opt/hidden)"; touch /opt/hidden/y 2>/dev/null; echo rc=$?'
	run_ctr
	assert_status 0
	for f in /proc/kcore /proc/timer_list /proc/keys; do
		[ -e "$f" ] || continue
		echo "$output" | grep -qx "$f 0 1:3" || fail_with "$f not masked by /dev/null: $output"
	done
	echo "$output" | grep -qx secret=
	echo "$output" | grep -qx hidden=
	[ "${lines[-1]}" = rc=1 ]
	# The host's copy is untouched.
	[ "$(cat "$ROOTFS/etc/secret")" = secret-value ]
}

@test "readonlyPaths: /proc/sys is read-only" {
	setup_bundle busybox
	cfg_set '.linux.readonlyPaths = ["/proc/sys", "/proc/sysrq-trigger"]
		| .process.capabilities.bounding += ["CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	# A sysctl of the container's own uts namespace: writable by its root
	# with CAP_SYS_ADMIN, so only the read-only mount can refuse it.
	cfg_args sh -c 'cat /proc/self/mountinfo; echo newname >/proc/sys/kernel/hostname; echo rc=$?; hostname'
	run_ctr
	assert_status 0
	line=$(mountinfo_line /proc/sys)
	[ -n "$line" ] || fail_with "no /proc/sys mount: $output"
	opts=$(echo "$line" | awk '{ print $6 }')
	[[ ",$opts," == *,ro,* ]] || fail_with "/proc/sys not ro: $line"
	assert_output_contains "Read-only file system"
	assert_output_contains rc=1
	[ "${lines[-1]}" != newname ]
}

@test "readonly root: writing to / fails, mounts on top stay writable" {
	setup_bundle busybox
	cfg_set '.root.readonly = true
		| .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]}]'
	cfg_args sh -c 'touch /newfile 2>&1; echo rc=$?; touch /tmp/ok; echo rc=$?'
	run_ctr
	assert_status 0
	assert_output_contains "Read-only file system"
	[ "${lines[1]}" = rc=1 ]
	[ "${lines[2]}" = rc=0 ]
	[ ! -e "$ROOTFS/newfile" ]
}

@test "default /dev: device nodes with the right major:minor, links and mounts" {
	setup_bundle busybox
	cfg_args sh -c 'for d in null zero full random urandom tty; do echo "$d $(stat -c "%F %t:%T %a" /dev/$d)"; done;
		for l in fd stdin stdout stderr ptmx; do echo "$l -> $(readlink /dev/$l)"; done;
		cat /proc/self/mountinfo | awk "{ print \$5, \$(NF-2) }"; echo x >/dev/null && echo null-ok;
		head -c 4 /dev/zero | wc -c'
	run_ctr
	assert_status 0
	for want in "null character special file 1:3 666" "zero character special file 1:5 666" \
		"full character special file 1:7 666" "random character special file 1:8 666" \
		"urandom character special file 1:9 666" "tty character special file 5:0 666"; do
		echo "$output" | grep -qx "$want" || fail_with "missing '$want' in: $output"
	done
	echo "$output" | grep -qx 'fd -> /proc/self/fd'
	echo "$output" | grep -qx 'stdin -> /proc/self/fd/0'
	echo "$output" | grep -qx 'stdout -> /proc/self/fd/1'
	echo "$output" | grep -qx 'stderr -> /proc/self/fd/2'
	echo "$output" | grep -qx 'ptmx -> pts/ptmx'
	echo "$output" | grep -qx '/dev/pts devpts'
	echo "$output" | grep -qx '/dev/shm tmpfs'
	echo "$output" | grep -qx null-ok
	[ "${lines[-1]}" = 4 ]
}

@test "linux.devices creates a node with the given type, numbers, mode and owner" {
	setup_bundle busybox
	cfg_set '.linux.devices = [{"path": "/dev/prtnull", "type": "c", "major": 1, "minor": 3,
		"fileMode": 438, "uid": 1000, "gid": 1000}]
		| .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]'
	cfg_args sh -c 'stat -c "%F %t:%T %a %u:%g" /dev/prtnull; echo data >/dev/prtnull && echo write-ok'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = "character special file 1:3 666 1000:1000" ] || fail_with "$output"
	[ "${lines[1]}" = write-ok ]
}

@test "a device not allowed by the device cgroup cannot be opened" {
	setup_bundle busybox
	# 1:1 is /dev/mem: not among the default allowed devices.
	cfg_set '.linux.devices = [{"path": "/dev/prtmem", "type": "c", "major": 1, "minor": 1, "fileMode": 384}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"}]'
	cfg_args sh -c 'head -c 1 /dev/prtmem >/dev/null 2>&1; echo rc=$?'
	run_ctr
	assert_status 0
	[ "${lines[-1]}" = rc=1 ]
}

# prop_bundle PROPAGATION: a container with CAP_SYS_ADMIN, rootfsPropagation
# PROPAGATION and an rshared bind of the shared host dir $TEST_DIR/prop at
# /prop, which mounts a tmpfs on /prop/inner.
prop_bundle() {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/prop/inner"
	if [ -z "$(awk -v d="$TEST_DIR/prop" '$5 == d' /proc/self/mountinfo)" ]; then
		mount --bind "$TEST_DIR/prop" "$TEST_DIR/prop"
		mount --make-shared "$TEST_DIR/prop"
	fi
	cfg_set --arg s "$TEST_DIR/prop" --arg p "$1" '.linux.rootfsPropagation = $p
		| .process.capabilities.bounding += ["CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]
		| .mounts += [{"destination": "/prop", "type": "bind", "source": $s, "options": ["rbind", "rshared"]}]'
	cfg_args sh -c 'mount -t tmpfs prt-inner /prop/inner && echo mounted; sleep 1000'
}

@test "rootfsPropagation rshared: a mount made inside propagates to the host" {
	prop_bundle rshared
	create_ctr
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	grep -qx mounted "$TEST_DIR/$CID.out"
	awk -v d="$TEST_DIR/prop/inner" '$5 == d' /proc/self/mountinfo | grep -q ' - tmpfs prt-inner ' ||
		fail_with "container mount not seen on the host"
	pr delete -f "$CID"
	umount "$TEST_DIR/prop/inner"
}

@test "rootfsPropagation rslave: a mount made inside stays inside" {
	prop_bundle rslave
	create_ctr
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	grep -qx mounted "$TEST_DIR/$CID.out"
	pid=$(state_of "$CID" pid)
	# The container has it, the host does not.
	awk -v d=/prop/inner '$5 == d' "/proc/$pid/mountinfo" | grep -q ' - tmpfs prt-inner '
	[ -z "$(awk -v d="$TEST_DIR/prop/inner" '$5 == d' /proc/self/mountinfo)" ] ||
		fail_with "container mount leaked to the host"
}

@test "mount propagation: rslave bind sees host mounts made after start" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/prop"
	mount --bind "$TEST_DIR/prop" "$TEST_DIR/prop"
	mount --make-shared "$TEST_DIR/prop"
	cfg_set --arg s "$TEST_DIR/prop" '.mounts += [{"destination": "/prop", "type": "bind", "source": $s,
		"options": ["rbind", "rslave"]}]'
	cfg_args sh -c 'while [ ! -e /prop/sub/marker ]; do sleep 0.1; done; echo seen'
	create_ctr
	pr start "$CID"
	mkdir -p "$TEST_DIR/prop/sub" "$TEST_DIR/subsrc"
	echo m >"$TEST_DIR/subsrc/marker"
	mount --bind "$TEST_DIR/subsrc" "$TEST_DIR/prop/sub"
	wait_status "$CID" stopped 10
	grep -qx seen "$TEST_DIR/$CID.out"
}
