#!/usr/bin/env bats
# The 2025 container-escape classes (issue #19 item 12), each tried against
# proctor by an image, a shared /dev or a shared volume, or a racing host
# process: a swapped /dev/null as the maskedPaths source (CVE-2025-31133),
# a swapped /dev/console or /dev/ptmx around the console bind
# (CVE-2025-52565), procfs writes redirected by a mount that raced in
# through a shared mount (CVE-2025-52881), and an image whose /dev is a
# symlink (runc's setupPtmx class).  The outcome is read from the host
# side (its files, its mountinfo) or from what the container sees.
# docs/security.md describes each defence.

load helpers

# dev_dir DIR: a host directory to be the container's /dev (a bind mount,
# as a /dev volume shared with another container would be): the runtime
# creates no device there, so what the directory holds is what is used.
dev_dir() {
	mkdir -p "$1/pts" "$1/shm" "$1/mqueue"
	cfg_set --arg d "$1" '(.mounts[] | select(.destination == "/dev")) |=
		{"destination": "/dev", "type": "bind", "source": $d, "options": ["rbind", "nosuid"]}'
}

# CVE-2025-31133: masking by a bind of the *path* /dev/null follows what
# the container put there.  Here /dev/null is a symlink to
# /proc/sys/kernel/core_pattern: a runtime that follows it bind-mounts the
# host's core_pattern, writable, over every masked file (seen on main
# before the fix: /proc/timer_list read "core", this host's core_pattern).
# proctor opens /dev/null inside the root, checks it is character 1:3 and
# mounts from that fd: create is refused.
@test "CVE-2025-31133: /dev/null a symlink to core_pattern is never bound over the masked paths" {
	setup_bundle busybox
	local before
	before=$(cat /proc/sys/kernel/core_pattern)
	dev_dir "$TEST_DIR/dev"
	ln -s /proc/sys/kernel/core_pattern "$TEST_DIR/dev/null"
	cfg_set '.linux.maskedPaths = ["/proc/timer_list", "/proc/keys"]'
	cfg_args sh -c 'for f in /proc/timer_list /proc/keys; do echo "$f $(stat -c "%F %t:%T" $f) [$(head -c 64 $f)]"; done'
	track_id "$CID"
	run --separate-stderr timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	echo "status $status: $output / $stderr"
	[ "$status" -ne 124 ] || fail_with "the runtime hung"
	if [ "$status" -eq 0 ]; then
		# Ran: every masked file must be the null device, empty.
		for f in /proc/timer_list /proc/keys; do
			echo "$output" | grep -qxF "$f character special file 1:3 []" ||
				fail_with "$f is not masked by the null device: $output"
		done
	else
		assert_one_error_line
		[[ "$stderr" == *"not the null device"* ]] || fail_with "unexpected refusal: $stderr"
	fi
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ] || fail_with "core_pattern changed"
	assert_no_leftovers "$CID"
}

# The same, raced: a host process exchanges the shared /dev's null between
# the real null device and that symlink as fast as it can while containers
# are run.  Every container that runs must see its masked file as the null
# device; any other outcome is a mask made from the symlink (what a runtime
# mounting the path "/dev/null" gets about half the time here).
@test "CVE-2025-31133: /dev/null swapped for a symlink while containers are created never reaches the masked paths" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	setup_bundle busybox
	dev_dir "$TEST_DIR/dev"
	mknod -m 0666 "$TEST_DIR/dev/null" c 1 3
	ln -s /proc/sys/kernel/core_pattern "$TEST_DIR/dev/null.alt"
	cfg_set '.linux.maskedPaths = ["/proc/timer_list"]'
	cfg_args sh -c 'echo "$(stat -c "%F %t:%T" /proc/timer_list) [$(head -c 64 /proc/timer_list)]"'
	local stop=$TEST_DIR/swap.stop count=$TEST_DIR/swap.count
	python3 -c "$SWAPPER" "$stop" "$count" 90 "$TEST_DIR/dev/null" "$TEST_DIR/dev/null.alt" \
		2>"$TEST_DIR/swap.err" 3>&- &
	local swp=$!
	on_teardown "kill $swp"
	wait_file "$count" || fail_with "the swapper did not start: $(cat "$TEST_DIR/swap.err")"
	local i id ok=0 refused=0 start=$SECONDS
	for i in $(seq 1 30); do
		[ $((SECONDS - start)) -lt 30 ] || break
		id=$CID-r$i
		track_id "$id"
		if timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$id" \
			</dev/null >"$TEST_DIR/$id.out" 2>"$TEST_DIR/$id.err"; then
			ok=$((ok + 1))
			[ "$(cat "$TEST_DIR/$id.out")" = "character special file 1:3 []" ] ||
				fail_with "run $i: /proc/timer_list masked by something else: $(cat "$TEST_DIR/$id.out")"
		else
			[ $? -ne 124 ] || fail_with "run $id hung"
			refused=$((refused + 1))
			grep -q "not the null device" "$TEST_DIR/$id.err" ||
				grep -q "open the container's .*/dev/null" "$TEST_DIR/$id.err" ||
				fail_with "run $i refused for another reason: $(cat "$TEST_DIR/$id.err")"
		fi
		assert_no_leftovers "$id"
	done
	touch "$stop"
	wait "$swp" || fail_with "the swapper failed: $(cat "$TEST_DIR/swap.err")"
	echo "$((ok + refused)) runs: $ok ran masked by the null device, $refused refused; $(cat "$count") exchanges"
	[ "$ok" -gt 0 ] || fail_with "no run succeeded: the race exercised nothing but the refusal"
	[ "$refused" -gt 0 ] || fail_with "no run met the symlink: no race"
}

# CVE-2025-52565: the console.  /dev (a shared host directory) holds
# console -> /proc/sys/kernel/core_pattern.  A runtime that binds the pty
# onto the path /dev/console follows the link and covers core_pattern
# (and one binding the path /dev/pts/N could be handed any file); proctor
# makes /dev/console an empty file without following anything and binds
# the pty from its fd (open_tree), and the ptmx it opened must be a
# devpts's 5:2.  Before the fix /dev/console was not bound at all (the
# runtime-spec asks for the pty there) and this test failed on
# "/dev/console is not the pty".
@test "CVE-2025-52565: a /dev/console symlink to a procfs file: the pty is bound on /dev/console itself" {
	setup_bundle busybox
	dev_dir "$TEST_DIR/dev"
	mknod -m 0666 "$TEST_DIR/dev/null" c 1 3
	ln -s pts/ptmx "$TEST_DIR/dev/ptmx"
	ln -s /proc/sys/kernel/core_pattern "$TEST_DIR/dev/console"
	cfg_set '.process.terminal = true'
	cfg_args sh -c 'echo "console $(stat -c "%F %t:%T" /dev/console)"; echo "tty $(stat -L -c "%F %t:%T" /proc/self/fd/0)";
		echo "core $(stat -c "%F" /proc/sys/kernel/core_pattern)";
		awk "\$5 == \"/proc/sys/kernel/core_pattern\" || \$5 == \"/dev/console\" { print \"mnt\", \$5, \$(NF-2) }" /proc/self/mountinfo'
	track_id "$CID"
	run timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 124 ] || fail_with "the runtime hung"
	output=$(printf '%s\n' "$output" | tr -d '\r')
	echo "$output"
	assert_status 0
	local tty
	tty=$(echo "$output" | sed -n 's/^tty //p')
	[[ "$tty" == "character special file 88:"* ]] || fail_with "stdin is not a pty: $output"
	echo "$output" | grep -qxF "console $tty" || fail_with "/dev/console is not the pty ($tty): $output"
	echo "$output" | grep -qx "core regular empty file\|core regular file" || fail_with "core_pattern was covered: $output"
	echo "$output" | grep -qx "mnt /dev/console devpts" || fail_with "/dev/console is not a devpts bind: $output"
	! echo "$output" | grep -q "^mnt /proc/sys/kernel/core_pattern" || fail_with "a mount landed on core_pattern: $output"
	assert_no_leftovers "$CID"
}

# CVE-2025-52565, the other half: a /dev/ptmx that is not a devpts's ptmx
# (here a symlink to /dev/zero in a shared /dev) is refused before any
# pty is used; a runtime that took whatever /dev/ptmx opened would go on
# (on main this failed later, at unlockpt, with "Inappropriate ioctl").
@test "CVE-2025-52565: a /dev/ptmx that is not a devpts ptmx is refused" {
	setup_bundle busybox
	dev_dir "$TEST_DIR/dev"
	mknod -m 0666 "$TEST_DIR/dev/null" c 1 3
	mknod -m 0666 "$TEST_DIR/dev/zero" c 1 5
	ln -s zero "$TEST_DIR/dev/ptmx"
	cfg_set '.process.terminal = true'
	cfg_args true
	track_id "$CID"
	run --separate-stderr timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 124 ] || fail_with "the runtime hung"
	[ "$status" -ne 0 ] || fail_with "ran with a /dev/ptmx that is /dev/zero"
	[[ "$stderr" == *"not the ptmx of a devpts mount"* ]] || fail_with "$stderr"
	assert_no_leftovers "$CID"
}

# CVE-2025-52881: the image's /proc is a symlink into a volume shared with
# the host (rbind,rshared, under rootfsPropagation rshared so that the
# volume stays a peer of the host's), so the container's procfs is
# mounted on the volume and propagates to its peer on the host.  A process
# there (a createRuntime hook, standing in for a racing peer container: it
# runs on the host after the mounts and before the sysctls and the
# process attributes are written; it enters the container's ipc namespace
# as a pod's peer container shares it, since an ipc sysctl's procfs entry
# is per ipc namespace) bind-mounts host files over
# .../sys/kernel/shm_rmid_forced and .../1/oom_score_adj (the init is pid 1
# of that procfs), and those mounts propagate back over the container's
# /proc.  A runtime that opens "/proc/sys/kernel/shm_rmid_forced" or
# "/proc/self/oom_score_adj" by path (even checking the directory is on
# procfs, as main did) writes the values into the host files: on main the
# canaries read "1anary" and "100nary" after create.  proctor writes
# through a procfs of its own that is attached nowhere (fsopen/fsmount),
# crossing no mount (RESOLVE_NO_XDEV), so the values reach the container
# and the host files are untouched.
@test "CVE-2025-52881: sysctl and oom_score_adj writes are not redirected by mounts raced in over /proc through a shared volume" {
	setup_bundle busybox
	local vol=$TEST_DIR/vol
	mkdir -p "$vol"
	mount --bind "$vol" "$vol"
	mount --make-shared "$vol"
	on_teardown "umount -R -l $vol"
	echo canary >"$TEST_DIR/canary.sysctl"
	echo canary >"$TEST_DIR/canary.oom"
	local host_before
	host_before=$(cat /proc/sys/kernel/shm_rmid_forced)
	rmdir "$ROOTFS/proc"
	ln -s /vol/p "$ROOTFS/proc"
	cat >"$TEST_DIR/hook.sh" <<-EOF
		#!/bin/sh
		pid=\$(jq -r .pid)
		t=$vol/p/sys/kernel/shm_rmid_forced
		[ -f "\$t" ] || { echo "hook: no \$t" >&2; exit 1; }
		nsenter -t "\$pid" -i mount --bind "$TEST_DIR/canary.sysctl" "\$t" || exit 1
		mount --bind "$TEST_DIR/canary.oom" "$vol/p/1/oom_score_adj" || exit 1
		touch "$TEST_DIR/hook.done"
	EOF
	chmod +x "$TEST_DIR/hook.sh"
	cfg_set --arg v "$vol" --arg h "$TEST_DIR/hook.sh" '
		.mounts = [{"destination": "/vol", "type": "bind", "source": $v, "options": ["rbind", "rshared"]}] + .mounts
		| .linux.rootfsPropagation = "rshared"
		| .linux.sysctl = {"kernel.shm_rmid_forced": "1"}
		| .process.oomScoreAdj = 100
		| .hooks.createRuntime = [{"path": $h}]'
	cfg_args sleep 1000
	run create_ctr
	echo "create: $status $(cat "$TEST_DIR/$CID.err")"
	[ -e "$TEST_DIR/hook.done" ] || fail_with "the hook did not set the attack up"
	[ "$(cat "$TEST_DIR/canary.sysctl")" = canary ] ||
		fail_with "the sysctl was written into the host file: $(cat "$TEST_DIR/canary.sysctl")"
	[ "$(cat "$TEST_DIR/canary.oom")" = canary ] ||
		fail_with "oom_score_adj was written into the host file: $(cat "$TEST_DIR/canary.oom")"
	[ "$(cat /proc/sys/kernel/shm_rmid_forced)" = "$host_before" ] || fail_with "the host's value changed"
	assert_status 0
	local pid
	pid=$(state_of "$CID" pid)
	# The host's /proc shows the container's ipc values from its namespace.
	[ "$(nsenter -t "$pid" -i cat /proc/sys/kernel/shm_rmid_forced)" = 1 ] ||
		fail_with "the container's ipc namespace did not get the value"
	[ "$(cat "/proc/$pid/oom_score_adj")" = 100 ] || fail_with "the init's oom_score_adj is $(cat "/proc/$pid/oom_score_adj")"
	pr delete -f "$CID"
	assert_no_leftovers "$CID"
}

# The setupPtmx class: an image whose /dev is a symlink.  Resolved in the
# root it cannot reach the host, but everything made at /dev (its tmpfs,
# devpts, the nodes, the console) lands where it points, and the /dev
# tmpfs covers /proc (or the kernel sysctls) before maskedPaths and
# readonlyPaths are applied.  On main create went ahead and failed only by
# chance, at the first masked path ("mask `/sys/firmware`: no such file or
# directory": /dev/null had become /proc/null); with no masked paths it
# would have run so.  Such an image is refused up front with one error
# line naming the link, and nothing is left.
@test "an image whose /dev is a symlink (to /proc, to proc/sys/kernel) is refused and left as it was" {
	setup_bundle busybox
	local target
	for target in /proc proc/sys/kernel ../../../../../../dev; do
		rm -rf "$ROOTFS/dev"
		ln -s "$target" "$ROOTFS/dev"
		cfg_args sh -c 'stat -f -c %T /proc'
		create_must_fail
		[[ "$stderr" == *"/dev"*"is a symlink"* ]] || fail_with "$target: $stderr"
		[ "$(readlink "$ROOTFS/dev")" = "$target" ] || fail_with "the image's /dev link changed"
	done
}
