#!/usr/bin/env bats
# Mount races and symlinks: hostile images whose paths are symlinks to host
# paths (absolute, so they would resolve on the host if followed before
# pivot_root) or loops, and a rootfs whose mount targets flip between a
# directory and such a symlink while create runs.  Mount targets, device nodes, masked and readonly
# paths and rollout hidden paths must resolve inside the rootfs
# (openat2 RESOLVE_IN_ROOT, src/linux/safepath.c) or be refused with one
# clean error; the host side must be untouched, and nothing may be left.

load helpers

# canary DIR: a host directory with one file, and its fingerprint.
canary() {
	mkdir -p "$1"
	echo "host canary" >"$1/canary"
	chmod 0640 "$1/canary"
}
fingerprint() { (cd "$1" && find . -printf '%p %m %s %T@\n' | sort); }

# run_hostile: run the container with a bounded time; status and output in
# $status/$output.  Either outcome (refused, or ran inside the rootfs) is
# allowed by the callers, which then check the host side.
run_hostile() {
	track_id "$CID"
	run timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	[ "$status" -ne 124 ] || fail_with "the runtime hung on a hostile image"
}

@test "/proc a symlink to a host directory: procfs lands inside the rootfs or create fails" {
	setup_bundle busybox
	canary "$TEST_DIR/hostproc"
	before=$(fingerprint "$TEST_DIR/hostproc")
	rmdir "$ROOTFS/proc"
	ln -s "$TEST_DIR/hostproc" "$ROOTFS/proc"
	cfg_args sh -c 'test -e /proc/self/stat && echo PROCFS; cat /proc/self/mountinfo | grep -c . >/dev/null; ls /proc | head -3'
	run_hostile
	echo "$output"
	[ "$(fingerprint "$TEST_DIR/hostproc")" = "$before" ] || fail_with "the host directory changed"
	[ -z "$(host_mounts_under "$TEST_DIR/hostproc")" ] || fail_with "a mount on the host directory"
	if [ "$status" -eq 0 ]; then
		echo "$output" | grep -q PROCFS || fail_with "ran, but without a procfs at /proc"
	fi
	assert_no_leftovers "$CID"
}

@test "/dev/null a symlink to a host file: the host file is never the device" {
	setup_bundle busybox
	canary "$TEST_DIR/host"
	before=$(fingerprint "$TEST_DIR/host")
	mkdir -p "$ROOTFS/dev"
	ln -s "$TEST_DIR/host/canary" "$ROOTFS/dev/null"
	ln -s "$TEST_DIR/host/zero" "$ROOTFS/dev/zero"
	# Without the default /dev tmpfs, the runtime creates the default
	# devices in the image's own /dev, where the symlinks are.
	cfg_set '.mounts = [.mounts[] | select(.destination != "/dev")]'
	cfg_args sh -c 'echo PWNED >/dev/null; echo PWNED >/dev/zero; ls -l /dev/null /dev/zero'
	run_hostile
	echo "$output"
	[ "$(fingerprint "$TEST_DIR/host")" = "$before" ] || fail_with "the host directory changed: $(fingerprint "$TEST_DIR/host")"
	! grep -q PWNED "$TEST_DIR/host/canary" || fail_with "the container wrote the host file"
	if [ "$status" -eq 0 ]; then
		echo "$output" | grep -qE '^c.* 1, +3 .*/dev/null' || fail_with "/dev/null is not the null device"
	fi
	assert_no_leftovers "$CID"
}

@test "mount targets under a symlinked directory never create or mount host paths" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/hostdir" "$TEST_DIR/src"
	echo src >"$TEST_DIR/src/file"
	ln -s "$TEST_DIR/hostdir" "$ROOTFS/data"
	# A directory target, a file target and a nested one, all under /data.
	cfg_set --arg s "$TEST_DIR/src" --arg f "$TEST_DIR/src/file" '.mounts += [
		{"destination": "/data/tmp", "type": "tmpfs", "source": "tmpfs"},
		{"destination": "/data/file", "type": "bind", "source": $f, "options": ["bind"]},
		{"destination": "/data/a/b/c", "type": "bind", "source": $s, "options": ["rbind"]}]'
	cfg_args sh -c 'ls -la /data/ 2>&1; cat /data/file'
	run_hostile
	echo "$output"
	[ -z "$(ls -A "$TEST_DIR/hostdir")" ] || fail_with "the runtime created host paths: $(ls -A "$TEST_DIR/hostdir")"
	[ -z "$(host_mounts_under "$TEST_DIR/hostdir")" ] || fail_with "a mount on the host directory"
	assert_no_leftovers "$CID"
}

@test "a mount target that is a relative symlink climbing out (../../..) stays inside" {
	setup_bundle busybox
	mkdir -p "$TEST_DIR/hostdir"
	# From rootfs/mnt/x, ../../../.. would walk out of the rootfs on the host.
	mkdir -p "$ROOTFS/mnt"
	rel=$(realpath --relative-to="$ROOTFS/mnt" "$TEST_DIR/hostdir")
	ln -s "$rel" "$ROOTFS/mnt/x"
	cfg_set '.mounts += [{"destination": "/mnt/x/sub", "type": "tmpfs", "source": "tmpfs"}]'
	cfg_args true
	run_hostile
	echo "$output"
	[ -z "$(ls -A "$TEST_DIR/hostdir")" ] || fail_with "the runtime created host paths: $(ls -A "$TEST_DIR/hostdir")"
	assert_no_leftovers "$CID"
}

@test "symlink loops in mount targets fail cleanly, quickly, leaving nothing" {
	setup_bundle busybox
	ln -s /b "$ROOTFS/a"
	ln -s /a "$ROOTFS/b"
	ln -s /self/x "$ROOTFS/self"
	cfg_set '.mounts += [{"destination": "/a/x", "type": "tmpfs", "source": "tmpfs"}]'
	cfg_args true
	start=$SECONDS
	run_hostile
	echo "$output"
	[ "$status" -ne 0 ] || fail_with "a mount through a symlink loop succeeded"
	[ $((SECONDS - start)) -lt 20 ]
	assert_no_leftovers "$CID"

	# A chain longer than the kernel's 40 links, and a self loop.
	for i in $(seq 1 50); do ln -s "/l$((i + 1))" "$ROOTFS/l$i"; done
	mkdir -p "$ROOTFS/l51"
	cfg_set '.mounts = [.mounts[] | select(.destination != "/a/x")] + [{"destination": "/l1/m", "type": "tmpfs", "source": "tmpfs"}]'
	run_hostile
	[ "$status" -ne 0 ] || echo "note: a 50-link chain resolved"
	assert_no_leftovers "$CID"
	cfg_set '.mounts = [.mounts[] | select(.destination != "/l1/m")] + [{"destination": "/self/m", "type": "tmpfs", "source": "tmpfs"}]'
	run_hostile
	[ "$status" -ne 0 ] || fail_with "a mount through a self loop succeeded"
	assert_no_leftovers "$CID"
}

@test "masked and readonly paths that are symlinks to host paths leave the host alone" {
	setup_bundle busybox
	canary "$TEST_DIR/host"
	mkdir -p "$TEST_DIR/hostro"
	before=$(fingerprint "$TEST_DIR/host")
	ln -s "$TEST_DIR/host/canary" "$ROOTFS/masked"
	ln -s "$TEST_DIR/host" "$ROOTFS/maskdir"
	ln -s "$TEST_DIR/hostro" "$ROOTFS/ro"
	cfg_set '.linux.maskedPaths += ["/masked", "/maskdir"] | .linux.readonlyPaths += ["/ro"]'
	cfg_args sh -c 'cat /masked; ls /maskdir; touch /ro/x; echo done'
	run_hostile
	echo "$output"
	[ "$(fingerprint "$TEST_DIR/host")" = "$before" ] || fail_with "the host directory changed"
	[ -z "$(host_mounts_under "$TEST_DIR")" ] || fail_with "host mounts: $(host_mounts_under "$TEST_DIR")"
	! echo "$output" | grep -q "host canary" || fail_with "the container read the host file through a masked path"
	# The host directory is still writable on the host (not remounted ro).
	touch "$TEST_DIR/hostro/probe"
	assert_no_leftovers "$CID"
}

@test "rollout hidden paths under a symlinked directory never move host files" {
	setup_bundle busybox
	canary "$TEST_DIR/hostlogs"
	mkdir -p "$TEST_DIR/hostlogs/inner"
	echo keep >"$TEST_DIR/hostlogs/inner/file"
	before=$(fingerprint "$TEST_DIR/hostlogs")
	ln -s "$TEST_DIR/hostlogs" "$ROOTFS/logs"
	cfg_set '.annotations["run.proctor.rollout"] = "{\"version\":1,\"hide\":[\"/logs/inner\",\"/logs/canary\",\"/tests\"]}"'
	cfg_args sleep 100
	run create_ctr
	echo "create: $status $(cat "$TEST_DIR/$CID.err")"
	[ "$(fingerprint "$TEST_DIR/hostlogs")" = "$before" ] || fail_with "host files moved at create: $(fingerprint "$TEST_DIR/hostlogs")"
	if [ "$status" -eq 0 ]; then
		pr start "$CID"
		run pr exec "$CID" sh -c 'ls /logs/ /logs/inner 2>&1'
		echo "$output"
		pr delete -f "$CID"
	fi
	[ "$(fingerprint "$TEST_DIR/hostlogs")" = "$before" ] || fail_with "host files changed after delete"
	[ -L "$ROOTFS/logs" ] || fail_with "the image's /logs symlink was not put back"
	assert_no_leftovers "$CID"
}

# SWAPPER: tests/security/helpers.bash.

# SAMPLER STOPFILE OUTFILE SECONDS DIR MOUNTID: reads this namespace's
# mountinfo every 2 ms until STOPFILE exists, and appends to OUTFILE every
# mount at or under DIR other than mount MOUNTID (so a mount that comes and
# goes between the test's own checks is seen too).
SAMPLER='
import os, sys, time
stop, out, limit, top, keep = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
deadline = time.monotonic() + limit
seen = set()
while not os.path.exists(stop) and time.monotonic() < deadline:
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[0] != keep and (fields[4] == top or fields[4].startswith(top + "/")) and line not in seen:
                seen.add(line)
                with open(out, "a") as o:
                    o.write(line)
    time.sleep(0.002)
'

@test "mount targets swapped for symlinks to a host directory while create runs never reach the host" {
	command -v python3 >/dev/null || require_or_skip "needs python3"
	setup_bundle busybox
	# The host canary: its own tmpfs, made shared.  A runtime that followed
	# a swapped-in symlink and mounted on it would do so in the container's
	# mount namespace; under rootfsPropagation "rshared" (every other
	# container here) that mount propagates back into this namespace, where
	# mountinfo shows it (sampled all along, and checked after each create
	# and delete).  Anything a runtime creates there (a missing bind target,
	# a file target) is visible here whatever the propagation.
	local canary=$TEST_DIR/canary
	mkdir -p "$canary" "$TEST_DIR/src"
	mount -t tmpfs -o size=1m,mode=0755 prt-canary "$canary"
	on_teardown "umount -l $canary"
	mount --make-shared "$canary"
	echo "host canary" >"$canary/marker"
	echo src >"$TEST_DIR/src/file"
	local want_mounts
	want_mounts=$(host_mounts_under "$TEST_DIR")
	[ "$want_mounts" = "$canary" ] || fail_with "unexpected mounts under $TEST_DIR: $want_mounts"

	# /race (a tmpfs target) and /race2 (the parent of bind targets that do
	# not exist yet) flip between a real directory and a symlink to the
	# canary: absolute for /race, relative (climbing out with ..) for /race2.
	mkdir "$ROOTFS/race" "$ROOTFS/race2"
	ln -s "$canary" "$ROOTFS/race.alt"
	ln -s "$(realpath --relative-to="$ROOTFS" "$canary")" "$ROOTFS/race2.alt"
	cfg_args true
	cp "$BUNDLE/config.json" "$TEST_DIR/base.json"

	local stop=$TEST_DIR/swap.stop count=$TEST_DIR/swap.count
	python3 -c "$SWAPPER" "$stop" "$count" 90 \
		"$ROOTFS/race" "$ROOTFS/race.alt" "$ROOTFS/race2" "$ROOTFS/race2.alt" \
		2>"$TEST_DIR/swap.err" 3>&- &
	local swp=$!
	on_teardown "kill $swp"
	wait_file "$count" || fail_with "the swapper did not start: $(cat "$TEST_DIR/swap.err")"
	local canary_id
	canary_id=$(awk -v m="$canary" '$5 == m { print $1 }' /proc/self/mountinfo)
	: >"$TEST_DIR/sampled"
	python3 -c "$SAMPLER" "$stop" "$TEST_DIR/sampled" 90 "$TEST_DIR" "$canary_id" 3>&- &
	local smp=$!
	on_teardown "kill $smp"

	# check_canary WHEN: the canary is still the one mount under TEST_DIR,
	# still holds only the marker, unchanged and visible.
	check_canary() {
		local m
		m=$(host_mounts_under "$TEST_DIR")
		[ "$m" = "$canary" ] || fail_with "$1: mounts under $TEST_DIR: $m"
		[ "$(ls -A "$canary")" = marker ] || fail_with "$1: the host canary holds $(ls -A "$canary" | tr '\n' ' ')"
		[ "$(cat "$canary/marker" 2>&1)" = "host canary" ] || fail_with "$1: the marker is hidden or changed: $(cat "$canary/marker" 2>&1)"
	}

	local i id ok=0 failed=0 prop start=$SECONDS
	for i in $(seq 1 40); do
		[ $((SECONDS - start)) -lt 30 ] || break
		prop=""
		[ $((i % 2)) -eq 0 ] || prop=rshared
		jq --arg s "$TEST_DIR/src" --arg f "$TEST_DIR/src/file" --arg i "$i" --arg p "$prop" '.mounts += [
			{"destination": "/race", "type": "tmpfs", "source": "tmpfs"},
			{"destination": ("/race2/d" + $i), "type": "bind", "source": $s, "options": ["rbind"]},
			{"destination": ("/race2/f" + $i), "type": "bind", "source": $f, "options": ["bind"]}]
			| if $p == "" then . else .linux.rootfsPropagation = $p end' \
			"$TEST_DIR/base.json" >"$BUNDLE/config.json"
		id=$CID-r$i
		if timeout 30 "$PROCTOR" --root "$PROCTOR_ROOT" create --bundle "$BUNDLE" "$id" \
			</dev/null >"$TEST_DIR/$id.out" 2>"$TEST_DIR/$id.err"; then
			ok=$((ok + 1))
		else
			[ $? -ne 124 ] || fail_with "create $id hung"
			failed=$((failed + 1))
		fi
		track_id "$id"
		# While the container exists (its mount namespace with it).
		check_canary "after create $i${prop:+ ($prop)}"
		pr delete -f "$id" >/dev/null 2>&1 || true
		check_canary "after delete $i"
	done
	touch "$stop"
	wait "$swp" || fail_with "the swapper failed: $(cat "$TEST_DIR/swap.err")"
	wait "$smp" || fail_with "the mountinfo sampler failed"
	[ ! -s "$TEST_DIR/sampled" ] || fail_with "mounts under $TEST_DIR seen during the run: $(cat "$TEST_DIR/sampled")"
	echo "$((ok + failed)) creates in $((SECONDS - start))s: $ok created, $failed refused; $(cat "$count") exchanges"
	# The refusals, alike ones counted together.
	cat "$TEST_DIR/$CID"-r*.err 2>/dev/null | sed -E "s#$TEST_DIR#TEST_DIR#g; s/[0-9]+/N/g" |
		sort | uniq -c | sort -rn | head -5
	check_canary "at the end"
	[ "$ok" -gt 0 ] || fail_with "no create succeeded: the race exercised nothing but error paths"
	[ "$(cat "$count")" -gt 1000 ] || fail_with "only $(cat "$count") exchanges: no race"
	for i in $(seq 1 40); do
		[ -e "$TEST_DIR/$CID-r$i.err" ] || break
		assert_no_leftovers "$CID-r$i"
	done
}
