#!/usr/bin/env bats
# Masked and read-only kernel interfaces: with the default spec
# (`proctor spec`), every masked /proc file reads as empty or fails, the
# read-only ones refuse writes, /proc/sysrq-trigger cannot be written, and
# /sys is read-only as configured (runtime-spec config-linux.md
# maskedPaths/readonlyPaths; the defaults follow runc's).

load helpers

@test "masked /proc files are unreadable (kcore, keys, timer_list, sched_debug, ...)" {
	setup_bundle busybox
	# Each masked file: readable bytes must be 0 (a /dev/null bind) or the
	# read must fail; directories must be empty (a read-only tmpfs).
	cfg_args sh -c '
for p in $(echo "$MASKED" | tr , " "); do
	if [ -d "$p" ]; then
		n=$(ls -A "$p" 2>/dev/null | wc -l); echo "$p dir entries=$n"
	elif [ -e "$p" ]; then
		n=$(head -c 4096 "$p" 2>/dev/null | wc -c); echo "$p bytes=$n"
	else
		echo "$p absent"
	fi
done'
	masked=$(cfg_get '.linux.maskedPaths | join(",")')
	cfg_set --arg m "MASKED=$masked" '.process.env += [$m]'
	for p in /proc/kcore /proc/keys /proc/timer_list; do
		[[ ",$masked," == *",$p,"* ]] || fail_with "the default spec does not mask $p"
	done
	run_ctr
	assert_status 0
	echo "$output"
	! echo "$output" | grep -E 'bytes=[1-9]|entries=[1-9]' || fail_with "a masked path is readable"
	# The host really has content there (so the test means something).
	[ "$(head -c 100 /proc/timer_list | wc -c)" -gt 0 ]
}

@test "read-only /proc paths refuse writes: sysrq-trigger, /proc/sys, /proc/irq" {
	setup_bundle busybox
	cfg_args sh -c '
echo h >/proc/sysrq-trigger 2>/dev/null && echo "WROTE sysrq"
echo 1 >/proc/sys/kernel/sysrq 2>/dev/null && echo "WROTE sys"
echo 1 >/proc/sys/vm/drop_caches 2>/dev/null && echo "WROTE drop_caches"
for d in /proc/irq/0 /proc/bus; do [ -e $d ] && { touch $d/x 2>/dev/null && echo "WROTE $d"; }; done
grep -E " /proc/(sys|sysrq-trigger|irq|bus|fs) " /proc/self/mountinfo | awk "{print \$5, \$6}"
echo end'
	sysrq_before=$(cat /proc/sys/kernel/sysrq 2>/dev/null || echo none)
	run_ctr
	assert_status 0
	echo "$output"
	! echo "$output" | grep -q WROTE || fail_with "a read-only path was written"
	echo "$output" | grep -E '^/proc/sys ' | grep -q 'ro' || fail_with "/proc/sys is not a read-only mount"
	# Kernels without CONFIG_MAGIC_SYSRQ have no sysrq-trigger to protect.
	if [ -e /proc/sysrq-trigger ]; then
		echo "$output" | grep -E '^/proc/sysrq-trigger ' | grep -q 'ro' || fail_with "/proc/sysrq-trigger is not read-only"
	fi
	[ "$(cat /proc/sys/kernel/sysrq 2>/dev/null || echo none)" = "$sysrq_before" ]
}

@test "/sys is read-only as configured, and writable knobs stay untouched" {
	setup_bundle busybox
	cfg_args sh -c '
grep -E " /sys " /proc/self/mountinfo | awk "{print \"sysmount\", \$6}"
touch /sys/x 2>/dev/null && echo "WROTE /sys"
echo 1 >/sys/kernel/mm/ksm/run 2>/dev/null && echo "WROTE ksm"
echo 1 >/sys/fs/cgroup/x 2>/dev/null && echo "WROTE cgroup"
ls /sys/firmware 2>/dev/null | wc -l | sed "s/^/firmware=/"
echo end'
	[ "$(cfg_get '.mounts[] | select(.destination == "/sys") | .options | index("ro") != null')" = true ] ||
		fail_with "the default spec does not mount /sys ro"
	run_ctr
	assert_status 0
	echo "$output"
	echo "$output" | grep -q '^sysmount ro' || fail_with "/sys is not mounted read-only"
	! echo "$output" | grep -q WROTE || fail_with "a /sys path was written"
	echo "$output" | grep -q '^firmware=0$' || fail_with "/sys/firmware (masked) is not empty"
}

@test "masked paths hold against remount attempts by the container's root" {
	setup_bundle busybox
	# The default capability set has no CAP_SYS_ADMIN: umount and remount
	# of the masks must fail.
	cfg_args sh -c '
umount /proc/kcore 2>/dev/null && echo "UNMOUNTED kcore"
mount -o remount,rw /sys 2>/dev/null && echo "REMOUNTED sys"
umount /proc/sys 2>/dev/null && echo "UNMOUNTED proc/sys"
head -c 10 /proc/kcore 2>/dev/null | wc -c | sed "s/^/kcore=/"'
	run_ctr
	assert_status 0
	echo "$output"
	! echo "$output" | grep -qE 'UNMOUNTED|REMOUNTED' || fail_with "a mask was undone from inside"
	echo "$output" | grep -q '^kcore=0$'
}

# Issue #19 item 6.  With --no-pivot the rootfs is moved onto "/" and
# chrooted into: the host's procfs and sysfs stay in the container's mount
# namespace below the root.  The kernel lets a process in a new user
# namespace mount a fresh procfs (or sysfs) only when one is already fully
# visible in its mount namespace (fs/namespace.c mount_too_revealing): the
# host's would be, and the fresh procfs has none of the masks.  The agent
# tries exactly that (runc's test: unshare -mrpf, mount -t proc).
@test "--no-pivot: a process inside cannot mount a fresh, unmasked procfs or sysfs" {
	setup_bundle bookworm
	# Mapping uid 0 in the new user namespace needs CAP_SETFCAP
	# (user_namespaces(7)); nothing else is added.
	cfg_set '.process.capabilities.bounding += ["CAP_SETFCAP"]
		| .process.capabilities.permitted += ["CAP_SETFCAP"]
		| .process.capabilities.effective += ["CAP_SETFCAP"]'
	cfg_args unshare -mrpf sh -c '
mount -t proc none /proc 2>&1 && echo "MOUNTED proc" && head -c 1 /proc/kcore | wc -c | sed "s/^/kcore=/"
mount -t sysfs none /sys 2>&1 && echo "MOUNTED sys"
echo done'
	run_ctr --no-pivot
	echo "$output"
	assert_status 0
	echo "$output" | grep -qx done || fail_with "the probe did not run: $output"
	! echo "$output" | grep -q MOUNTED || fail_with "a fresh procfs/sysfs was mounted inside"
	echo "$output" | grep -qi 'permission denied' || fail_with "no permission denied: $output"
	# The host's own /proc and /sys are untouched.
	[ -e /proc/self/stat ] && [ -d /sys/kernel ]
	assert_no_leftovers "$CID"
}
