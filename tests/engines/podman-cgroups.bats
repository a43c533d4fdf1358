#!/usr/bin/env bats
# podman (cgroup_manager=cgroupfs) driving the runtime under test: resource
# flags reach the cgroup (read back from inside and from the host's cgroup
# files), pause/unpause, update, top, stats, OOM and pids limits, cleanup.

load helpers

# ctr_cgroup_dir NAME CONTROLLER: host directory of NAME's cgroup for a v1
# controller (or the cgroup2 one on unified hosts), from its init's
# /proc/PID/cgroup.
ctr_cgroup_dir() {
	local pid path mnt
	pid=$(podman inspect -f '{{.State.Pid}}' "$1")
	mnt=$(awk -v c="$2" '$9 == "cgroup" { n = split($NF, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $5; exit } }' /proc/self/mountinfo)
	if [ -n "$mnt" ]; then
		path=$(awk -F: -v c="$2" '{ n = split($2, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $3 }' "/proc/$pid/cgroup")
	else
		mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
		path=$(awk -F: '$1 == 0 { print $3 }' "/proc/$pid/cgroup")
	fi
	echo "$mnt$path"
}

assert_output_contains() {
	[[ "$output" == *"$1"* ]] || fail_with "output does not contain '$1': $output"
}

is_v1() { awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { f = 1 } END { exit !f }' /proc/self/mountinfo; }

@test "podman: --memory 64m --cpus 0.5 --pids-limit 50 are applied" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" --memory 64m --cpus 0.5 --pids-limit 50 localhost/proctor/busybox sleep 1000
	assert_status 0
	mem=$(ctr_cgroup_dir "$NAME" memory)
	cpu=$(ctr_cgroup_dir "$NAME" cpu)
	pids=$(ctr_cgroup_dir "$NAME" pids)
	[ -d "$mem" ] || fail_with "no cgroup dir $mem"
	[ "$(cat "$pids/pids.max")" = 50 ]
	if is_v1; then
		[ "$(cat "$mem/memory.limit_in_bytes")" = 67108864 ]
		[ "$(cat "$cpu/cpu.cfs_quota_us")" = 50000 ]
		[ "$(cat "$cpu/cpu.cfs_period_us")" = 100000 ]
		run pm exec "$NAME" cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us \
			/sys/fs/cgroup/pids/pids.max
		assert_status 0
		[ "${lines[*]}" = "67108864 50000 50" ] || fail_with "inside: $output"
	else
		[ "$(cat "$mem/memory.max")" = 67108864 ]
		[ "$(cat "$cpu/cpu.max")" = "50000 100000" ]
		run pm exec "$NAME" cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/cpu.max /sys/fs/cgroup/pids.max
		assert_status 0
		[ "${lines[*]}" = "67108864 50000 100000 50" ] || fail_with "inside: $output"
	fi
	# exec'd processes join the container's cgroup
	run pm exec "$NAME" sh -c 'cat /proc/self/cgroup'
	assert_status 0
	[ "$(grep -c "$(podman inspect -f '{{.Id}}' "$NAME")" "/proc/$(podman inspect -f '{{.State.Pid}}' "$NAME")/cgroup")" -ge 1 ]
}

@test "podman: pause and unpause" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" localhost/proctor/busybox sleep 1000
	assert_status 0
	run pm pause "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = paused ]
	if is_v1; then
		[ "$(cat "$(ctr_cgroup_dir "$NAME" freezer)/freezer.state")" = FROZEN ]
	fi
	run pm unpause "$NAME"
	assert_status 0
	[ "$(podman inspect -f '{{.State.Status}}' "$NAME")" = running ]
	run pm exec "$NAME" true
	assert_status 0
}

@test "podman: update --memory changes the live limit" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" --memory 64m localhost/proctor/busybox sleep 1000
	assert_status 0
	run pm update --memory 128m "$NAME"
	assert_status 0
	mem=$(ctr_cgroup_dir "$NAME" memory)
	if is_v1; then
		[ "$(cat "$mem/memory.limit_in_bytes")" = 134217728 ]
	else
		[ "$(cat "$mem/memory.max")" = 134217728 ]
	fi
	run pm update --cpus 0.25 "$NAME"
	assert_status 0
	cpu=$(ctr_cgroup_dir "$NAME" cpu)
	if is_v1; then
		[ "$(cat "$cpu/cpu.cfs_quota_us")" = 25000 ]
	else
		[ "$(cat "$cpu/cpu.max")" = "25000 100000" ]
	fi
	# the memory limit set before is kept
	if is_v1; then
		[ "$(cat "$mem/memory.limit_in_bytes")" = 134217728 ]
	fi
}

@test "podman: top and stats --no-stream" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" --memory 64m --pids-limit 50 localhost/proctor/busybox sleep 1000
	assert_status 0
	run pm top "$NAME"
	assert_status 0
	[[ "${lines[0]}" == *PID* ]]
	assert_output_contains "sleep 1000"
	run pm top "$NAME" pid comm
	assert_status 0
	assert_output_contains "sleep"

	run pm stats --no-stream --format '{{.Name}} {{.PIDs}} {{.MemUsage}}' "$NAME"
	assert_status 0
	[[ "$output" == "$NAME 1 "* ]] || fail_with "stats: $output"
	[[ "$output" == *"/ 67.11MB"* ]] || fail_with "stats: $output"
	run pm stats --no-stream "$NAME"
	assert_status 0
	assert_output_contains "$NAME"
}

@test "podman: a process above --memory is OOM-killed" {
	need_image busybox
	track_name "$NAME"
	run pm run --name "$NAME" --memory 32m --memory-swap 32m localhost/proctor/busybox \
		dd if=/dev/zero of=/dev/null bs=128M count=1
	assert_status 137
}

@test "podman: fork fails at --pids-limit" {
	need_image busybox
	track_name "$NAME"
	run pm run --rm --name "$NAME" --pids-limit 10 localhost/proctor/busybox sh -c \
		'sh -c "i=0; while [ \$i -lt 20 ]; do sleep 100 & i=\$((i+1)); done" 2>&1; read c < /sys/fs/cgroup/pids/pids.current || read c < /sys/fs/cgroup/pids.current; echo cur=$c; kill -9 -1'
	assert_status 0
	assert_output_contains "can't fork"
	cur=$(echo "$output" | sed -n 's/^cur=//p')
	[ -n "$cur" ] && [ "$cur" -le 10 ] || fail_with "$output"
}

@test "podman: no cgroup left after rm -f, and after kill -9 of the init" {
	need_image busybox
	track_name "$NAME"
	run pm run -d --name "$NAME" --memory 64m localhost/proctor/busybox sleep 1000
	assert_status 0
	id=$(podman inspect -f '{{.Id}}' "$NAME")
	pm exec -d "$NAME" sleep 999
	run pm rm -f -t 0 "$NAME"
	assert_status 0
	[ -z "$(find /sys/fs/cgroup -maxdepth 4 -type d -name "*$id*")" ] ||
		fail_with "left: $(find /sys/fs/cgroup -maxdepth 4 -type d -name "*$id*")"

	run pm run -d --name "$NAME" --pids-limit 20 localhost/proctor/busybox sleep 1000
	assert_status 0
	id=$(podman inspect -f '{{.Id}}' "$NAME")
	kill -9 "$(podman inspect -f '{{.State.Pid}}' "$NAME")"
	run pm wait "$NAME"
	run pm rm "$NAME"
	assert_status 0
	[ -z "$(find /sys/fs/cgroup -maxdepth 4 -type d -name "*$id*")" ] ||
		fail_with "left: $(find /sys/fs/cgroup -maxdepth 4 -type d -name "*$id*")"
}
