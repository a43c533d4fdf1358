#!/usr/bin/env bats
# Out of the agent's reach, part 2 (SPEC section 2 "with their own memory
# and pids budget", issue #15 finding 2), through podman on bookworm:
# verifier and setup sessions run in their own cgroup, a sibling of the
# container's (src/rollout/budget.h), so an agent's fork bomb or memory
# balloon in the container's cgroup cannot starve them.  Attacks run from
# agent background processes; outcomes are read from the verifier or the
# host.

load helpers

BOOKWORM=localhost/proctor/bookworm

# start_budget POLICY_VERIFIER_EXTRA [podman run args...]: a rollout whose
# verifier table gets the extra JSON members (may be empty).
start_budget() {
	POLICY=$TEST_DIR/policy.json
	printf '{"version": 1, "environment": {"network_mode": "none"}, "verifier": {"user": "root"%s}}\n' "$1" >"$POLICY"
	shift
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$POLICY" "$@" "$BOOKWORM" sleep 1000
	assert_status 0
}

verifier() { pm exec -e PROCTOR_PHASE=verifier "$NAME" "$@"; }

# cgroup_dirs SUFFIX: every cgroup directory on the host whose name ends
# in SUFFIX (all hierarchies, v1 and unified).
cgroup_dirs() { find /sys/fs/cgroup -type d -name "*$1" 2>/dev/null; }

# container_cg: the container process's cgroup in the unified hierarchy
# (cgroup(7): the "0::" line), as the host sees it.
container_cg() {
	local pid
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	sed -n 's/^0:://p' "/proc/$pid/cgroup"
}

@test "reach budget: an agent fork bomb that fills --pids-limit leaves the verifier able to fork" {
	need_image bookworm
	start_budget "" --pids-limit 64
	# The agent forks sleepers until fork fails: the container's pids.max
	# is then full, and stays full while the verifier runs.
	run pm exec -d -u 0 "$NAME" perl -e 'my $n = 0; while ($n < 200) { my $p = fork; last unless defined $p; if (!$p) { sleep 600; exit 0 } $n++ }
		open my $f, ">", "/tmp/bomb.tmp"; print $f "$n\n"; close $f; rename "/tmp/bomb.tmp", "/tmp/bomb"; sleep 600'
	assert_status 0
	wait_until 30 verifier test -s /tmp/bomb || fail_with "the bomb did not report"
	run verifier cat /tmp/bomb
	[ "$output" -lt 200 ] || fail_with "the pids limit never stopped the bomb: $output"
	run pm exec "$NAME" sh -c 'sleep 0 & wait && echo agent-forked'
	[ "$output" != agent-forked ] || fail_with "the agent could still fork: the bomb did not fill the cgroup"
	run verifier sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0 & done; wait; echo verifier-forked'
	assert_status 0
	[ "$output" = verifier-forked ] || fail_with "$output"
}

@test "reach budget: verifier sessions run in the sibling cgroup PATH-verifier with the default limits; agent execs do not" {
	need_image bookworm
	start_budget ""
	cg=$(container_cg)
	[ -n "$cg" ] || fail_with "no container cgroup"
	run verifier sh -c 'cat /proc/self/cgroup'
	assert_status 0
	grep -q -- "-verifier$" <<<"$output" || fail_with "verifier cgroup: $output"
	run pm exec "$NAME" cat /proc/self/cgroup
	! grep -q -- "-verifier$" <<<"$output" || fail_with "an agent exec is in the verifier's cgroup: $output"
	run pm exec -e PROCTOR_PHASE=setup "$NAME" cat /proc/self/cgroup
	grep -q -- "-verifier$" <<<"$output" || fail_with "setup cgroup: $output"
	# The limits, read on the host in the v1 memory and pids hierarchies.
	dirs=$(cgroup_dirs "${cg##*/}-verifier")
	[ -n "$dirs" ] || fail_with "no ${cg##*/}-verifier on the host"
	for d in $dirs; do
		[ ! -e "$d/pids.max" ] || [ "$(cat "$d/pids.max")" = 4096 ] || fail_with "$d/pids.max: $(cat "$d/pids.max")"
		[ ! -e "$d/memory.limit_in_bytes" ] || [ "$(cat "$d/memory.limit_in_bytes")" = $((2 << 30)) ] ||
			fail_with "$d/memory.limit_in_bytes: $(cat "$d/memory.limit_in_bytes")"
	done
}

@test "reach budget: verifier.resources.memory bounds the verifier, not the agent: its balloon is OOM-killed, the agent's runs" {
	need_image bookworm
	start_budget ', "resources": {"memory": 67108864, "pids": 256}'
	run verifier perl -e 'my $x = q(a) x (200 << 20); print "survived\n"'
	[ "$status" = 137 ] || fail_with "status $status: $output"
	# The container (no --memory) holds the same balloon for the agent.
	run pm exec "$NAME" perl -e 'my $x = q(a) x (200 << 20); print "survived\n"'
	[ "$output" = survived ] || fail_with "$output"
}

# A trial's finding: memory no process owns (a tmpfs of the agent's own)
# fills the container's limit and the OOM killer took the largest process
# of the cgroup, the egress helper, after which no verifier exec started
# ("connect to egress control socket ...: connection refused"); with the
# helper elsewhere it took the outer init and the container died.  Both
# now sit in a memory cgroup of their own (oomshield.h): the killer finds
# only the agent's processes.  Fails on the build before (the verifier exec
# fails, the helper is gone).
@test "reach budget: an agent tmpfs balloon under --memory kills neither the egress helper nor the container; the verifier still runs" {
	need_image bookworm
	POLICY=$TEST_DIR/policy.json
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["example.invalid"]}, "verifier": {"network_mode": "allowlist", "allowed_hosts": ["example.invalid"]}}\n' >"$POLICY"
	track_name "$NAME"
	run pm run -d --name "$NAME" --memory 160m --annotation "run.proctor.rollout=@$POLICY" "$BOOKWORM" sleep 1000
	assert_status 0
	local helper
	helper=$(pgrep -n -x proctor-egress) || fail_with "no egress helper"
	run pm exec "$NAME" unshare -U -r -m sh -c 'mount -t tmpfs -o size=400m none /mnt &&
		dd if=/dev/zero of=/mnt/f bs=1M count=300 2>/dev/null; echo balloon-done'
	kill -0 "$helper" || fail_with "the egress helper was killed: $(dmesg | grep -i 'killed process' | tail -3)"
	run pm exec "$NAME" echo agent-ok
	[ "$output" = agent-ok ] || fail_with "the container did not survive: $output"
	run verifier echo verifier-ran
	[ "$output" = verifier-ran ] || fail_with "no verifier: $output"
}

@test "reach budget: an invalid verifier.resources fails create with its own message and leaves nothing" {
	need_image bookworm
	# Only what this test's creates leave counts: other rollouts on the
	# host (a shared machine) have -verifier cgroups of their own.
	local before
	before=$(cgroup_dirs -verifier | sort)
	for r in '"memory": 1024' '"pids": 0' '"memory": "1G"' '"cpu": 1'; do
		printf '{"version": 1, "verifier": {"resources": {%s}}}\n' "$r" >"$TEST_DIR/p.json"
		track_name "$NAME"
		run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$TEST_DIR/p.json" "$BOOKWORM" true
		[ "$status" != 0 ] || fail_with "accepted: $r"
		grep -q 'verifier.resources' <<<"$output" || fail_with "$r: $output"
		pm rm -f "$NAME" >/dev/null 2>&1 || true
	done
	local left
	left=$(comm -13 <(echo "$before") <(cgroup_dirs -verifier | sort) | grep . || true)
	[ -z "$left" ] || fail_with "left: $left"
}

@test "reach budget: the verifier cgroup outlives a session and podman rm -f removes it with the container's" {
	need_image bookworm
	start_budget ""
	cg=$(container_cg)
	[ -z "$(cgroup_dirs "${cg##*/}-verifier")" ] || fail_with "a verifier cgroup before any verifier exec"
	# A running verifier session at rm -f: killed, its cgroup removed.
	pm exec -e PROCTOR_PHASE=verifier "$NAME" sleep 1037 >/dev/null 2>&1 3>&- &
	wait_until 20 pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'ps -eo args | grep -qx "sleep 1037"' ||
		fail_with "the verifier session did not start"
	[ -n "$(cgroup_dirs "${cg##*/}-verifier")" ] || fail_with "no verifier cgroup while the session runs"
	run pm rm -f -t 0 "$NAME"
	assert_status 0
	[ -z "$(cgroup_dirs "${cg##*/}-verifier")" ] || fail_with "left after rm -f: $(cgroup_dirs "${cg##*/}-verifier")"
	[ -z "$(cgroup_dirs "${cg##*/}")" ] || fail_with "container cgroup left: $(cgroup_dirs "${cg##*/}")"
	! pgrep -fx "sleep 1037" >/dev/null || fail_with "the verifier session survived rm -f"
}
