#!/usr/bin/env bats
# Mounts: tmpfs options, read-only binds, masked and readonly paths, a
# read-only root, the default /dev, linux.devices, rootfs propagation,
# rbind vs bind, bind flags, mqueue, --no-pivot, idmapped mounts.

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

# start_and_see_inner_mount: starts $CID (a prop_bundle whose process
# mounts a tmpfs "prt-inner" at /prop/inner and prints "mounted"), checks
# the mount reached the host's $TEST_DIR/prop/inner, then deletes the
# container and unmounts it.
start_and_see_inner_mount() {
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	grep -qx mounted "$TEST_DIR/$CID.out"
	awk -v d="$TEST_DIR/prop/inner" '$5 == d' /proc/self/mountinfo | grep -q ' - tmpfs prt-inner ' ||
		fail_with "container mount not seen on the host"
	pr delete -f "$CID"
	umount "$TEST_DIR/prop/inner"
}

@test "rootfsPropagation rshared: a mount made inside propagates to the host" {
	prop_bundle rshared
	create_ctr
	start_and_see_inner_mount
}

# Issue #19 item 4: containerd's snapshots and Kubernetes' Bidirectional
# volumes: the rootfs is itself a mount point.  pivot_root(2) refuses a new
# root whose parent mount is shared; the mount to make private is the one
# holding the rootfs, not the one holding its parent directory.
@test "rootfsPropagation rshared with a rootfs that is a bind mount: create works and the mount propagates" {
	prop_bundle rshared
	mount --bind "$ROOTFS" "$ROOTFS"
	mount --make-shared "$ROOTFS"
	create_ctr || fail_with "create failed: $(cat "$TEST_DIR/$CID.err")"
	start_and_see_inner_mount
	# The rootfs mount is still the host's own, shared as before.
	findmnt -n -o PROPAGATION "$ROOTFS" | grep -q shared || fail_with "rootfs propagation changed on the host"
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

@test "rbind carries the source's submounts into the container; bind does not" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/src/sub" "$TEST_DIR/subsrc"
	echo top >"$TEST_DIR/src/topfile"
	echo in-submount >"$TEST_DIR/subsrc/marker"
	mount --bind "$TEST_DIR/subsrc" "$TEST_DIR/src/sub"
	cfg_set --arg s "$TEST_DIR/src" '.mounts += [
		{"destination": "/rec", "type": "bind", "source": $s, "options": ["rbind"]},
		{"destination": "/flat", "type": "bind", "source": $s, "options": ["bind"]}]'
	cfg_args sh -c 'cat /rec/topfile /flat/topfile; echo "rec=$(cat /rec/sub/marker 2>/dev/null)";
		echo "flat=$(ls /flat/sub)"; cat /proc/self/mountinfo'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = top ] && [ "${lines[1]}" = top ] || fail_with "$output"
	echo "$output" | grep -qx rec=in-submount || fail_with "rbind lost the submount: $output"
	# bind: the submount's mount point is there, empty, as on the source fs.
	echo "$output" | grep -qx flat= || fail_with "bind carried the submount: $output"
	[ -n "$(mountinfo_line /rec/sub)" ] || fail_with "no /rec/sub mount: $output"
	[ -z "$(mountinfo_line /flat/sub)" ] || fail_with "a /flat/sub mount: $output"
}

@test "bind mount flags nosuid, nodev, noexec, ro: in mountinfo and enforced" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/src"
	printf '#!/bin/sh\necho script-ran\n' >"$TEST_DIR/src/script"
	chmod 755 "$TEST_DIR/src/script"
	mknod "$TEST_DIR/src/null" c 1 3
	chmod 666 "$TEST_DIR/src/null"
	# The same source twice: /plain shows that the failures on /locked come
	# from its flags and not from the files.
	cfg_set --arg s "$TEST_DIR/src" '.mounts += [
		{"destination": "/locked", "type": "bind", "source": $s, "options": ["bind", "nosuid", "nodev", "noexec", "ro"]},
		{"destination": "/plain", "type": "bind", "source": $s, "options": ["bind"]}]
		| .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]'
	cfg_args sh -c 'cat /proc/self/mountinfo
		/plain/script; echo plain-exec=$?; /locked/script 2>/dev/null; echo locked-exec=$?
		echo x >/plain/null; echo plain-dev=$?; echo x 2>/dev/null >/locked/null; echo locked-dev=$?
		touch /locked/new 2>/dev/null; echo locked-write=$?'
	run_ctr
	assert_status 0
	line=$(mountinfo_line /locked)
	[ -n "$line" ] || fail_with "no /locked in mountinfo: $output"
	opts=$(echo "$line" | awk '{ print $6 }')
	for o in ro nosuid nodev noexec; do
		[[ ",$opts," == *",$o,"* ]] || fail_with "missing $o in $line"
	done
	opts=$(mountinfo_line /plain | awk '{ print $6 }')
	for o in ro nosuid nodev noexec; do
		[[ ",$opts," != *",$o,"* ]] || fail_with "/plain has $o: $opts"
	done
	echo "$output" | grep -qx script-ran
	echo "$output" | grep -qx plain-exec=0
	# sh reports a file it may not execute with 126.
	echo "$output" | grep -qx locked-exec=126 || fail_with "noexec not enforced: $output"
	echo "$output" | grep -qx plain-dev=0
	echo "$output" | grep -qx locked-dev=1 || fail_with "nodev not enforced: $output"
	echo "$output" | grep -qx locked-write=1 || fail_with "ro not enforced: $output"
	[ ! -e "$TEST_DIR/src/new" ]
}

@test "mqueue at /dev/mqueue: the container's own message queue filesystem" {
	setup_bundle busybox
	# The default spec has it; make sure it is there whatever the spec says.
	cfg_set '.mounts = [.mounts[] | select(.destination != "/dev/mqueue")]
		+ [{"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]}]'
	cfg_args sh -c 'cat /proc/self/mountinfo; echo "before=$(ls /dev/mqueue)"; touch /dev/mqueue/prtq && cat /dev/mqueue/prtq'
	run_ctr
	assert_status 0
	line=$(mountinfo_line /dev/mqueue)
	[[ "$line" == *" - mqueue "* ]] || fail_with "/dev/mqueue is not mqueue: $line"
	# Creating a file there makes a POSIX queue, which reads back its
	# attributes: only mqueue does that.
	echo "$output" | grep -q '^QSIZE:0 ' || fail_with "$output"
	# A new ipc namespace each time: the queue made above is not there again.
	echo "$output" | grep -qx before= || fail_with "$output"
	run_ctr
	assert_status 0
	echo "$output" | grep -qx before= || fail_with "a queue of the earlier container is visible: $output"
}

@test "create --no-pivot: the container sees only its rootfs" {
	setup_bundle busybox
	echo rootfs-marker >"$ROOTFS/prt-marker"
	cfg_set '.root.readonly = false'
	cfg_args sh -c 'cat /prt-marker; ls -d '"$TEST_DIR"' /work 2>&1; awk "\$5 == \"/\"" /proc/self/mountinfo;
		echo x >/written && echo written; exec sleep 1000'
	create_ctr "$CID" --no-pivot
	pid=$(state_of "$CID" pid)
	# The process root is the rootfs (same directory as the host's view).
	[ "$(stat -L -c %d:%i "/proc/$pid/root/")" = "$(stat -c %d:%i "$ROOTFS/")" ] ||
		fail_with "root of the init is not the rootfs"
	pr start "$CID"
	wait_file "$TEST_DIR/$CID.out"
	for i in $(seq 50); do grep -qx written "$TEST_DIR/$CID.out" && break; sleep 0.1; done
	out=$(cat "$TEST_DIR/$CID.out")
	[ "$(head -n 1 <<<"$out")" = rootfs-marker ] || fail_with "$out"
	# Nothing of the host's tree: not the test dir, not /work.
	grep -q "$TEST_DIR: No such file or directory" <<<"$out" || fail_with "host dir visible: $out"
	grep -q "/work: No such file or directory" <<<"$out" || fail_with "host /work visible: $out"
	# "/" in mountinfo is the rootfs: the bundle's rootfs dir of its
	# filesystem (field 4 is relative to that filesystem's root).
	root=$(awk '$5 == "/" { print $4 }' <<<"$out" | tail -n 1)
	[[ "$root" == */"${TEST_DIR##*/}"/bundle/rootfs ]] || fail_with "root mount: $out"
	grep -qx written <<<"$out"
	[ "$(cat "$ROOTFS/written")" = x ]
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

# idmap_mount DEST SOURCE OPTIONS_JSON [MAPPINGS_JSON]: appends a bind
# mount with those options (and uidMappings/gidMappings both set to
# MAPPINGS_JSON when given) to config.json.
idmap_mount() {
	cfg_set --arg d "$1" --arg s "$2" --argjson o "$3" --argjson m "${4:-null}" \
		'.mounts += [{"destination": $d, "type": "bind", "source": $s, "options": $o}
			+ (if $m == null then {} else {"uidMappings": $m, "gidMappings": $m} end)]'
}

@test "idmapped bind mount with its own mappings shifts owners both ways" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/src"
	echo data >"$TEST_DIR/src/by-root"
	chown 0:0 "$TEST_DIR/src" "$TEST_DIR/src/by-root"
	chmod 0755 "$TEST_DIR/src"
	# On-disk id N shows as 1000 + N through the mount.
	idmap_mount /idm "$TEST_DIR/src" '["bind", "idmap"]' '[{"containerID": 0, "hostID": 1000, "size": 65536}]'
	# A plain bind of the same directory, for contrast.
	cfg_set --arg s "$TEST_DIR/src" '.mounts += [{"destination": "/plain", "type": "bind", "source": $s, "options": ["bind"]}]'
	cfg_set '.process.user = {"uid": 1000, "gid": 1000}'
	cfg_args sh -c 'stat -c "%u:%g" /idm/by-root /plain/by-root; echo new > /idm/by-1000 && echo wrote; (echo x > /plain/by-1000) 2>/dev/null || echo plain-refused'
	run_ctr
	assert_status 0
	[ "$output" = "1000:1000
0:0
wrote
plain-refused" ] || fail_with "$output"
	# uid 1000 through the mount is on-disk 0.
	[ "$(stat -c %u:%g "$TEST_DIR/src/by-1000")" = 0:0 ] || fail_with "on disk: $(stat -c %u:%g "$TEST_DIR/src/by-1000")"
}

@test "idmap without mappings uses the container's user namespace" {
	setup_bundle busybox
	use_userns
	mkdir -p "$TEST_DIR/src"
	echo data >"$TEST_DIR/src/f"
	chown 0:0 "$TEST_DIR/src" "$TEST_DIR/src/f"
	idmap_mount /idm "$TEST_DIR/src" '["rbind", "idmap"]'
	cfg_set --arg s "$TEST_DIR/src" '.mounts += [{"destination": "/plain", "type": "bind", "source": $s, "options": ["rbind"]}]'
	cfg_args sh -c 'stat -c "%u:%g" /idm/f /plain/f; echo new > /idm/new && echo wrote'
	run_ctr
	assert_status 0
	# Host root's files are the container root's through the idmapped mount,
	# and nobody's through the plain one.
	[ "$output" = "0:0
65534:65534
wrote" ] || fail_with "$output"
	[ "$(stat -c %u:%g "$TEST_DIR/src/new")" = 0:0 ]
}

@test "ridmap maps the submounts of an rbind, idmap only its top" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/src/sub" "$TEST_DIR/other"
	echo top >"$TEST_DIR/src/top"
	echo sub >"$TEST_DIR/other/f"
	chown 0:0 "$TEST_DIR/src/top" "$TEST_DIR/other/f"
	mount --bind "$TEST_DIR/other" "$TEST_DIR/src/sub"
	local m='[{"containerID": 0, "hostID": 2000, "size": 65536}]'
	idmap_mount /r "$TEST_DIR/src" '["rbind", "ridmap"]' "$m"
	idmap_mount /i "$TEST_DIR/src" '["rbind", "idmap"]' "$m"
	cfg_args sh -c 'stat -c "%u" /r/top /r/sub/f /i/top /i/sub/f'
	run_ctr
	umount "$TEST_DIR/src/sub"
	assert_status 0
	[ "$output" = "2000
2000
2000
0" ] || fail_with "$output"
}

@test "idmapped mounts that cannot be made fail create clearly and leave nothing" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/src"
	local base m='[{"containerID": 0, "hostID": 1000, "size": 65536}]'
	base=$(cat "$BUNDLE/config.json")
	local -a cases=(
		'tmpfs|.mounts += [{"destination": "/idm", "type": "tmpfs", "source": "tmpfs", "options": ["idmap"], "uidMappings": $m, "gidMappings": $m}]|idmapped mounts must be bind mounts'
		'uid only|.mounts += [{"destination": "/idm", "type": "bind", "source": $s, "options": ["bind", "idmap"], "uidMappings": $m}]|uidMappings and gidMappings go together'
		'no mapping, no userns|.mounts += [{"destination": "/idm", "type": "bind", "source": $s, "options": ["bind", "idmap"]}]|idmap without uidMappings/gidMappings needs a user namespace'
		'crun in-option mappings|.mounts += [{"destination": "/idm", "type": "bind", "source": $s, "options": ["bind", "idmap=uids=0-1000-10;gids=0-1000-10"]}]|mappings inside the option are not supported'
		'missing source|.mounts += [{"destination": "/idm", "type": "bind", "source": ($s + "/nope"), "options": ["bind", "idmap"], "uidMappings": $m, "gidMappings": $m}]|open_tree: no such file or directory'
	)
	local entry name filter want
	for entry in "${cases[@]}"; do
		IFS='|' read -r name filter want <<<"$entry"
		jq --arg s "$TEST_DIR/src" --argjson m "$m" "$filter" <<<"$base" >"$BUNDLE/config.json"
		cfg_args echo ran
		track_id "$CID"
		run --separate-stderr pr run --bundle "$BUNDLE" "$CID" </dev/null
		[ "$status" -ne 0 ] || fail_with "$name: run succeeded: $output"
		[ "$output" != ran ] || fail_with "$name: the process ran"
		assert_one_error_line
		[[ "$stderr" == *"$want"* ]] || fail_with "$name: $stderr"
		assert_no_leftovers "$CID"
	done
}

# Issue #19 item 5: "ro" on an rbind is the top mount's flag only (runc,
# crun); runtime-spec 1.2's "rro" reaches every submount (mount_setattr
# AT_RECURSIVE).  The container tries to write at each level.
@test "rbind,ro makes only the top mount read-only; rbind,rro the whole tree, and features lists rro" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/src/sub" "$TEST_DIR/subsrc"
	mount --bind "$TEST_DIR/subsrc" "$TEST_DIR/src/sub"
	cfg_set --arg s "$TEST_DIR/src" '.mounts += [
		{"destination": "/top", "type": "bind", "source": $s, "options": ["rbind", "ro"]},
		{"destination": "/all", "type": "bind", "source": $s, "options": ["rbind", "rro"]}]'
	cfg_args sh -c 'for d in /top /top/sub /all /all/sub; do
		if touch $d/w 2>/dev/null; then echo "$d=rw"; rm -f $d/w; else echo "$d=ro"; fi; done'
	run_ctr
	assert_status 0
	[ "$(echo "$output" | tr '\n' ' ')" = "/top=ro /top/sub=rw /all=ro /all/sub=ro " ] || fail_with "$output"
	[ ! -e "$TEST_DIR/src/w" ] && [ ! -e "$TEST_DIR/subsrc/w" ]
	"$PROCTOR" features | jq -e '.mountOptions | index("rro") != null' >/dev/null || fail_with "features lacks rro"
}

# Issue #19 item 5: a config whose /dev tmpfs is "ro" (runc's and crun's
# tests use one): /dev/pts, /dev/shm and the default devices are set up
# first, then /dev alone turns read-only.
@test "a read-only /dev in the config: default devices and devpts are there, /dev refuses writes" {
	setup_bundle busybox
	cfg_set '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
	cfg_args sh -c 'test -c /dev/null && echo null=ok; test -c /dev/pts/ptmx && echo pts=ok;
		if touch /dev/prt-w 2>/dev/null; then echo dev=rw; else echo dev=ro; fi;
		grep " /dev " /proc/self/mountinfo'
	run_ctr
	assert_status 0
	echo "$output"
	echo "$output" | grep -qx null=ok || fail_with "$output"
	echo "$output" | grep -qx pts=ok || fail_with "$output"
	echo "$output" | grep -qx dev=ro || fail_with "/dev is writable: $output"
	echo "$output" | grep -q ' /dev ro,' || fail_with "/dev not ro in mountinfo: $output"
}

# Issue #19 item 5: with a user namespace the init's credentials are the
# container root's (host uid 100000 here), which cannot enter a directory
# only the host's root may (0700).  Bind sources are opened by stage 1,
# before the user namespace, with the runtime's credentials (open_tree,
# src/linux/idmount.c pr_bind_sources_open).  Before: create failed with
# "bind mount `.../private/data` to `/data`: stat source: permission
# denied" (the init's
# mount(2) looked the source up as uid 100000); a relative source (to the
# bundle) is checked too.
@test "user namespace: bind sources under a 0700 root-only directory resolve with the runtime's credentials" {
	setup_bundle busybox
	use_userns
	mkdir -p "$TEST_DIR/private/data" "$BUNDLE/priv/rel"
	echo secret-data >"$TEST_DIR/private/data/file"
	echo rel-data >"$BUNDLE/priv/rel/file"
	echo one-file >"$TEST_DIR/private/single"
	chmod 0700 "$TEST_DIR/private" "$BUNDLE/priv"
	cfg_set --arg d "$TEST_DIR/private/data" --arg f "$TEST_DIR/private/single" '.mounts += [
		{"destination": "/data", "type": "bind", "source": $d, "options": ["rbind", "ro"]},
		{"destination": "/single", "type": "bind", "source": $f, "options": ["bind"]},
		{"destination": "/rel", "type": "bind", "source": "priv/rel", "options": ["bind"]}]'
	cfg_args sh -c 'cat /data/file /single /rel/file; touch /data/w 2>/dev/null && echo data=rw || echo data=ro'
	run_ctr
	assert_status 0
	[ "$(echo "$output" | tr '\n' ' ')" = "secret-data one-file rel-data data=ro " ] || fail_with "$output"
}

# Issue #19 item 5: in a user namespace mknod(2) is refused, so a device
# node used to be a bind of the host's node at the same path: a device the
# host lacks failed create ("bind mount device `/dev/prt-absent`: No such
# file or directory"), and a host node of another type or number at that
# path was bound in as if it were the configured one.  Stage 1, real root
# on the host, now makes the node in a private detached tmpfs (or clones
# the host's node when it is the same device) and the init attaches it, as
# crun creates it.  The owner is the configured uid/gid, through the map.
@test "user namespace: a linux.devices node the host lacks is created; a host node of another number is not used" {
	setup_bundle busybox
	use_userns
	[ ! -e /dev/prt-absent ] || fail_with "/dev/prt-absent exists on the host"
	# /dev/full on the host is 1:7: configured as 1:3 (null) the container
	# must get a null device there, not the host's full.
	cfg_set '.linux.devices = [
		{"path": "/dev/prt-absent", "type": "c", "major": 1, "minor": 3, "fileMode": 438, "uid": 1000, "gid": 1000},
		{"path": "/dev/full", "type": "c", "major": 1, "minor": 3, "fileMode": 438}]
		| .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]'
	cfg_args sh -c 'stat -c "%F %t:%T %a %u:%g" /dev/prt-absent; echo data >/dev/prt-absent && echo write-ok;
		stat -c "full %t:%T" /dev/full; echo x >/dev/full && echo full-write-ok; stat -c "null %t:%T" /dev/null'
	run_ctr
	assert_status 0
	echo "$output"
	[ "${lines[0]}" = "character special file 1:3 666 1000:1000" ] || fail_with "$output"
	[ "${lines[1]}" = write-ok ] || fail_with "$output"
	[ "${lines[2]}" = "full 1:3" ] || fail_with "/dev/full is not the configured 1:3: $output"
	[ "${lines[3]}" = full-write-ok ] || fail_with "$output"
	[ "${lines[4]}" = "null 1:3" ] || fail_with "$output"
	[ ! -e /dev/prt-absent ] || fail_with "the node was made on the host's /dev"
}

# The stage-1 copies of bind sources (above) come from the host's mount
# namespace, where a shared host directory's copy would join its peer
# group: a mount made by the container's root (CAP_SYS_ADMIN in its user
# namespace) inside the volume would then appear on the host.  A bind the
# init makes from its rslave view never did that, so the copies are made
# rslave unless shared propagation is asked for ("rshared": Kubernetes'
# Bidirectional, which must still reach the host).  Without the rslave step
# the first mount reached the host.
@test "user namespace: a mount made inside a bind of a shared host dir stays inside unless the bind is rshared" {
	setup_bundle busybox
	use_userns
	mkdir -p "$TEST_DIR/shared/a" "$TEST_DIR/shared/b"
	mount --bind "$TEST_DIR/shared" "$TEST_DIR/shared"
	mount --make-shared "$TEST_DIR/shared"
	on_teardown "umount -R -l $TEST_DIR/shared"
	cfg_set --arg s "$TEST_DIR/shared" '.mounts += [
		{"destination": "/plain", "type": "bind", "source": $s, "options": ["rbind"]},
		{"destination": "/bidi", "type": "bind", "source": $s, "options": ["rbind", "rshared"]}]
		| .process.capabilities.bounding += ["CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	cfg_args sh -c 'mount -t tmpfs prt-plain /plain/a && mount -t tmpfs prt-bidi /bidi/b && echo mounted'
	run_ctr
	assert_status 0
	[ "$output" = mounted ] || fail_with "$output"
	! grep -q ' - tmpfs prt-plain ' /proc/self/mountinfo || fail_with "the plain bind's inner mount reached the host"
	grep -q ' - tmpfs prt-bidi ' /proc/self/mountinfo || fail_with "the rshared bind's inner mount did not reach the host"
	umount "$TEST_DIR/shared/b"
}
