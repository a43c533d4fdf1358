#!/usr/bin/env bats
# No trace of the harness in the mount table (SPEC section 2 "Filesystem",
# docs/rollout.md): a rollout's /proc/self/mountinfo entries for the
# device nodes, the masked and the read-only paths, and its /dev listing,
# read the same as those of a plain container of the same engine under
# crun, the runtime users compare with.  The plain container has a user
# namespace too (a rollout always has one): the engine's own map
# (--uidmap 0:100000:65536) in the first test, a full identity map in the
# second (what a rollout without an engine map reads in its uid_map).
#
# A trial found the fingerprint these tests catch: the devices and masked
# files were binds of a private tmpfs with source "none" (mountinfo
# "/dev0 /dev/null ... - tmpfs none rw,mode=700"), the masked directories
# tmpfs "none" without crun's size=0k.
#
# crun refuses a hybrid cgroup host whose cgroup2 has controllers; there
# crun runs in a private mount namespace where that cgroup2's
# cgroup.controllers reads empty (nothing changes on the host).  crun 1.8
# chowns the host's /dev/null to the container's root when that is the
# container's stdin (containers/crun issue 1845): the runs are -i, so
# stdin is a pipe, and teardown puts the owner back all the same.
#
# Left out: the cgroup tree under /sys/fs/cgroup (the same for a plain
# proctor container: not the rollout's doing, see docs/rollout.md).

load helpers

HOST_NODES="/dev/null /dev/zero /dev/full /dev/tty /dev/random /dev/urandom"

setup() {
	engine_setup_dev_null=$(stat -c %u:%g /dev/null)
	# mode and owner of each host node, put back by teardown whatever a
	# failing test did to them
	host_nodes_before=$(stat -c '%n %a %u:%g' $HOST_NODES)
	# helpers' setup: TEST_DIR, NAME
	case $ENGINE in podman) command -v podman >/dev/null || require_or_skip "podman is not installed" ;; esac
	TEST_DIR=$(mktemp -d /tmp/pre.XXXXXX)
	NAME=prt-${TEST_DIR##*.}
	NAME=${NAME,,}
	NAMES=()
}

teardown() {
	chown "$engine_setup_dev_null" /dev/null
	local n m o
	while read -r n m o; do chmod "$m" "$n"; chown "$o" "$n"; done <<<"$host_nodes_before"
	engine_teardown
}

# What the container prints: its mount table, its /dev, its device nodes.
PROBE='cat /proc/self/mountinfo; echo "== dev"; ls -la --time-style=+ /dev
echo "== nodes"; for f in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty; do
stat -c "%n %F %a %u:%g %t:%T" "$f"; done'

# normalise: the probe's output with the mountinfo lines of /dev, /proc,
# /sys and everything under them but the cgroup tree (another concern),
# in their order (the order mounts were made in), fields root, mount
# point, options, fstype, source and super options only (ids and device
# numbers differ between any two containers); ls without dates
# (--time-style=+ in the probe).
normalise() {
	awk '
	/^== dev/ { sect = "dev"; print; next }
	/^== nodes/ { sect = "nodes"; print; next }
	sect == "" {
		sep = 0; for (i = 7; i <= NF; i++) if ($i == "-") { sep = i; break }
		mp = $5
		if (mp !~ /^\/(dev|proc|sys)(\/|$)/ || mp ~ /^\/sys\/fs\/cgroup/) next
		line = $4 " " mp " " $6 " " $(sep + 1) " " $(sep + 2) " " $(sep + 3)
		print line
		next
	}
	sect == "dev" && $1 == "total" { next }
	{ print }' <<<"$1"
}

# crun_run ARGS...: podman run under crun (see the header for hybrid hosts).
crun_run() {
	command -v crun >/dev/null || require_or_skip "crun is not installed"
	if [ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ] && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
		: >"$TEST_DIR/empty"
		timeout -k 5 "$ENGINE_TIMEOUT" unshare -m --propagation private sh -c \
			'mount --bind "$0" /sys/fs/cgroup/unified/cgroup.controllers && exec podman --runtime crun run -i "$@"' \
			"$TEST_DIR/empty" "$@"
	else
		timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime crun run -i "$@"
	fi
}

# compare MAP_ARGS...: the rollout's normalised view against crun's, with
# the same podman id-map arguments; prints both on a difference.
compare() {
	need_image bookworm
	echo '{"version": 1}' >"$TEST_DIR/policy.json"
	run crun_run --rm "$@" "$(image bookworm)" sh -c "$PROBE"
	assert_status 0
	crun_view=$(normalise "$output")
	chown "$engine_setup_dev_null" /dev/null
	run pm run -i --rm --annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$@" "$(image bookworm)" sh -c "$PROBE"
	assert_status 0
	rollout_view=$(normalise "$output")
	[ -n "$(sed -n '/\/dev\/null /p' <<<"$rollout_view")" ] || fail_with "no /dev/null mount in: $rollout_view"
	diff -u <(echo "$crun_view") <(echo "$rollout_view") >&2 || fail_with "the rollout's view differs from crun's (- crun, + rollout)"
}

@test "rollout fingerprint: with the engine's id map, devices, masked and read-only paths and /dev read as crun's" {
	compare --uidmap 0:100000:65536 --gidmap 0:100000:65536
}

@test "rollout fingerprint: with a full identity map, the same but the devices' fstype (tmpfs for devtmpfs, see docs/rollout.md)" {
	need_image bookworm
	echo '{"version": 1}' >"$TEST_DIR/policy.json"
	local map=(--uidmap 0:0:4294967295 --gidmap 0:0:4294967295)
	run crun_run --rm "${map[@]}" "$(image bookworm)" sh -c "$PROBE"
	assert_status 0
	# The one field the kernel lets no one set: a private copy of the
	# nodes (the host's would be the agent's to chmod: uid 0 is mapped)
	# is a tmpfs, not the host's devtmpfs.
	crun_view=$(normalise "$output" | sed 's/ devtmpfs devtmpfs / tmpfs devtmpfs /')
	chown "$engine_setup_dev_null" /dev/null
	run pm run -i --rm --annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$(image bookworm)" sh -c "$PROBE"
	assert_status 0
	rollout_view=$(normalise "$output")
	diff -u <(echo "$crun_view") <(echo "$rollout_view") >&2 || fail_with "the rollout's view differs from crun's (- crun, + rollout)"
}

# The reason the nodes are not the host's under a full identity map: the
# agent's root would own the host's /dev/null (uid 0) and could chmod or
# chown it for the whole host.  It tries on every node and on a masked
# file, under both maps; the host's nodes keep their mode and owner.
@test "rollout fingerprint: the agent's root cannot chmod or chown the host's device nodes through its own" {
	need_image bookworm
	echo '{"version": 1}' >"$TEST_DIR/policy.json"
	local try='for f in /dev/null /dev/zero /dev/full /dev/tty /dev/random /dev/urandom /proc/keys; do
		chmod 600 "$f"; chown 1:1 "$f"; done 2>/dev/null; echo tried'
	run pm run -i --rm --annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$(image bookworm)" sh -c "$try"
	assert_status 0
	[ "$(stat -c '%n %a %u:%g' $HOST_NODES)" = "$host_nodes_before" ] ||
		fail_with "identity map: host nodes now $(stat -c '%n %a %u:%g' $HOST_NODES | tr '\n' ' ')"
	run pm run -i --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 \
		--annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$(image bookworm)" sh -c "$try"
	assert_status 0
	[ "$(stat -c '%n %a %u:%g' $HOST_NODES)" = "$host_nodes_before" ] ||
		fail_with "engine map: host nodes now $(stat -c '%n %a %u:%g' $HOST_NODES | tr '\n' ' ')"
}
