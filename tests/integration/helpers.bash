# Shared helpers for the integration suites (bats-core).  Runtime-agnostic:
# everything goes through $PROCTOR, which may be proctor, runc or crun.
#
# Per test file: a private state root ($PROCTOR_ROOT).  Per test: a short
# temp dir ($TEST_DIR, short so socket paths fit in sun_path), a container
# id ($CID), and a bundle made by setup_bundle.  teardown deletes every
# container created, unmounts, and removes the temp dirs.

bats_require_minimum_version 1.5.0
source "$(dirname "${BASH_SOURCE[0]}")/../require.bash"

IMAGE_CACHE=${PROCTOR_IMAGE_CACHE:-/var/cache/proctor/rootfs}

pr() { "$PROCTOR" --root "$PROCTOR_ROOT" "$@"; }

setup_file() {
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || {
		echo "PROCTOR must name the runtime binary under test" >&2
		return 1
	}
	[ "$(id -u)" = 0 ] || { echo "the integration tests need root" >&2; return 1; }
	PROCTOR_ROOT=$(mktemp -d /run/prt-root.XXXXXX)
	export PROCTOR_ROOT
}

teardown_file() {
	local d
	for d in "$PROCTOR_ROOT"/*/; do
		[ -d "$d" ] && pr delete -f "$(basename "$d")" >/dev/null 2>&1
	done
	rm -rf "$PROCTOR_ROOT"
}

setup() {
	TEST_DIR=$(mktemp -d /tmp/prt.XXXXXX)
	chmod 755 "$TEST_DIR"
	CID=prt-${TEST_DIR##*.}
	CLEANUPS=()
	IDS=("$CID")
	export TEST_DIR CID
}

teardown() {
	local id d i
	for d in "$PROCTOR_ROOT"/*/; do
		[ -d "$d" ] && IDS+=("$(basename "$d")")
	done
	for id in "${IDS[@]}"; do
		pr delete -f "$id" >/dev/null 2>&1 || true
	done
	# Run registered cleanups in reverse order.
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUPS[$i]}" >/dev/null 2>&1 || true
	done
	if [ -n "${TEST_DIR:-}" ]; then
		# Unmount anything of ours still mounted (deepest first).
		awk -v d="$TEST_DIR" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo |
			sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
		rm -rf "$TEST_DIR"
	fi
}

# on_teardown CMD: run CMD (eval'd) at teardown, after the containers are gone.
on_teardown() { CLEANUPS+=("$1"); }

# track_id ID: teardown deletes ID even if it is not in the state root yet.
track_id() { IDS+=("$1"); }

# setup_bundle [busybox|bookworm|bullseye|empty]: $BUNDLE with config.json
# from `$PROCTOR spec` and a rootfs at $ROOTFS.  busybox is copied (tiny);
# the debian images are an overlay (lower = cached tree, upper/work in
# $TEST_DIR) referenced by an absolute root.path; "empty" makes an empty
# rootfs dir for the test to fill.  The config is normalised so tests do not
# depend on a runtime's spec defaults: terminal false, writable root, and
# process.args ["sh"].
setup_bundle() {
	local image=${1:-busybox}
	BUNDLE=$TEST_DIR/bundle
	mkdir -p "$BUNDLE"
	case $image in
	busybox)
		[ -d "$IMAGE_CACHE/busybox" ] || require_or_skip "no busybox image: run tests/images.sh"
		ROOTFS=$BUNDLE/rootfs
		cp -a "$IMAGE_CACHE/busybox" "$ROOTFS"
		;;
	bookworm | bullseye)
		[ -d "$IMAGE_CACHE/$image" ] || require_or_skip "no $image image: run tests/images.sh"
		ROOTFS=$TEST_DIR/merged
		mkdir -p "$TEST_DIR/upper" "$TEST_DIR/work" "$ROOTFS"
		if ! mount -t overlay overlay \
			-o "lowerdir=$IMAGE_CACHE/$image,upperdir=$TEST_DIR/upper,workdir=$TEST_DIR/work" "$ROOTFS"; then
			# No overlayfs here: fall back to a full copy.
			rmdir "$ROOTFS"
			cp -a "$IMAGE_CACHE/$image" "$ROOTFS"
		fi
		;;
	empty)
		ROOTFS=$BUNDLE/rootfs
		mkdir -p "$ROOTFS"
		;;
	*)
		echo "setup_bundle: unknown image $image" >&2
		return 1
		;;
	esac
	(cd "$BUNDLE" && "$PROCTOR" spec) || return 1
	cfg_set --arg r "$ROOTFS" '.root.path = $r | .root.readonly = false
		| .process.terminal = false | .process.args = ["sh"]'
	# Mounts that exist before the container does (our overlay); anything
	# else under ROOTFS later is a leftover of the runtime.
	BASELINE_MOUNTS=$(rootfs_mounts)
	export BUNDLE ROOTFS BASELINE_MOUNTS
}

# cfg_set [jq options] JQ_EXPR: edit $BUNDLE/config.json in place.
cfg_set() {
	local tmp=$BUNDLE/config.json.tmp
	jq "$@" "$BUNDLE/config.json" >"$tmp" && mv "$tmp" "$BUNDLE/config.json"
}

# cfg_args ARG...: set process.args.
cfg_args() {
	local json
	json=$(jq -cn '$ARGS.positional' --args -- "$@")
	cfg_set --argjson a "$json" '.process.args = $a'
}

# cfg_get JQ_EXPR: print a value from config.json.
cfg_get() { jq -r "$1" "$BUNDLE/config.json"; }

# Mount points in this mount namespace at or under the bundle's rootfs.
rootfs_mounts() {
	awk -v d="$ROOTFS" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort
}

# run_ctr [runtime run options]: `run` the container in the foreground
# (stdout and stderr captured in $output, exit code in $status).
# use_userns: the container gets a new user namespace mapping 0-65535 to
# host 100000-165535, and the mapped root owns the rootfs (as a usable
# userns container needs).
use_userns() {
	chown -R 100000:100000 "$ROOTFS"
	cfg_set '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
}

run_ctr() {
	track_id "$CID"
	run pr run --bundle "$BUNDLE" "$@" "$CID" </dev/null
}

# create_ctr [ID [create options]]: create ID (default $CID) with the
# container's stdio in files: $TEST_DIR/ID.out and ID.err (the runtime's
# own diagnostics land in ID.err too).  Returns create's exit code.
create_ctr() {
	local id=${1:-$CID}
	shift || true
	track_id "$id"
	pr create --bundle "$BUNDLE" "$@" "$id" \
		</dev/null >"$TEST_DIR/$id.out" 2>"$TEST_DIR/$id.err"
}

# state_of ID FIELD: one field of `state ID` (status, pid, bundle, ...).
state_of() { pr state "$1" | jq -r ".$2"; }

# container_process_of ID: the host pid of container ID's own process.  A
# rollout's state pid is proctor's outer init (pid 1 of the outer pid
# namespace, docs/rollout.md "Out of the agent's reach"); the container's
# process is recorded in the state file rollout-agent-init ("PID START").
container_process_of() {
	local f="$PROCTOR_ROOT/$1/rollout-agent-init"
	if [ -f "$f" ]; then
		cut -d' ' -f1 "$f"
	else
		state_of "$1" pid
	fi
}

# wait_status ID STATUS [SECONDS]: poll until state ID says STATUS.
wait_status() {
	local id=$1 want=$2 tries=$((${3:-10} * 20)) s
	while [ $tries -gt 0 ]; do
		s=$(state_of "$id" status 2>/dev/null)
		[ "$s" = "$want" ] && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	echo "container $id: status '$s', wanted '$want'" >&2
	return 1
}

# wait_file FILE [SECONDS]: poll until FILE exists and is non-empty.
wait_file() {
	local f=$1 tries=$((${2:-10} * 20))
	while [ $tries -gt 0 ]; do
		[ -s "$f" ] && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	echo "timed out waiting for $f" >&2
	return 1
}

# wait_gone PID [SECONDS]: poll until PID no longer exists.
wait_gone() {
	local pid=$1 tries=$((${2:-10} * 20))
	while [ $tries -gt 0 ]; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	echo "process $pid still alive" >&2
	return 1
}

# start_recvtty SOCKET OUTFILE [MODE [INPUT]]: a console-socket receiver in
# the background; sets RECVTTY_PID.  The receiver copies the pty output to
# OUTFILE (and INPUT, default /dev/null, to the pty) and exits when the pty
# closes.
start_recvtty() {
	local sock=$1 out=$2 mode=${3:-single} input=${4:-/dev/null}
	[ -n "${RECVTTY:-}" ] && [ -x "$RECVTTY" ] || require_or_skip "RECVTTY is not set to an executable"
	rm -f "$sock" "$TEST_DIR/recvtty.pid"
	"$RECVTTY" --mode "$mode" --pid-file "$TEST_DIR/recvtty.pid" "$sock" <"$input" >"$out" 2>"$out.err" &
	RECVTTY_PID=$!
	on_teardown "kill $RECVTTY_PID"
	local tries=200
	while [ $tries -gt 0 ] && [ ! -S "$sock" ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	[ -S "$sock" ] || { echo "recvtty did not create $sock" >&2; return 1; }
}

# wait_recvtty [SECONDS]: wait for the receiver to see EOF and exit.
wait_recvtty() {
	wait_gone "$RECVTTY_PID" "${1:-10}" || return 1
	wait "$RECVTTY_PID" 2>/dev/null || true
}

# live_procs_in_cgroup ID: pids (not zombies) whose cgroup path mentions ID.
live_procs_in_cgroup() {
	local f pid st
	for f in $(grep -l -F -- "$1" /proc/[0-9]*/cgroup 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/cgroup}
		st=$(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		if [ -n "$st" ] && [ "$st" != Z ]; then echo "$pid"; fi
	done
	return 0
}

# assert_no_leftovers ID: nothing of container ID remains: no state dir, no
# process in a cgroup named after it, no cgroup directory named after it,
# and no new mount under the bundle's rootfs.
assert_no_leftovers() {
	local id=$1 f bad=0 procs dirs mounts
	if [ -e "$PROCTOR_ROOT/$id" ]; then
		echo "leftover state dir $PROCTOR_ROOT/$id" >&2
		bad=1
	fi
	# Zombies are ignored: once the runtime is gone they belong to whoever
	# reaps orphans on this host (pid 1 or a subreaper), not to the runtime.
	procs=$(live_procs_in_cgroup "$id")
	for f in $procs; do
		echo "pid $f: $(tr '\0' ' ' </proc/$f/cmdline 2>/dev/null) $(grep -F -- "$id" /proc/$f/cgroup 2>/dev/null | head -2)" >&2
	done
	if [ -n "$procs" ]; then
		echo "leftover processes in a cgroup of $id: $procs" >&2
		bad=1
	fi
	dirs=$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 8 -type d -name "*$id*" 2>/dev/null || true)
	if [ -n "$dirs" ]; then
		echo "leftover cgroups: $dirs" >&2
		bad=1
	fi
	if [ -n "${ROOTFS:-}" ]; then
		mounts=$(comm -13 <(printf '%s\n' "$BASELINE_MOUNTS") <(rootfs_mounts))
		if [ -n "$mounts" ]; then
			echo "leftover mounts: $mounts" >&2
			bad=1
		fi
	fi
	return $bad
}

# create_must_fail: `create` of $BUNDLE must fail cleanly.  Sets $status
# and $stderr.  The container's stdio goes to files so that a create that
# wrongly succeeds cannot hang the test.
create_must_fail() {
	track_id "$CID"
	status=0
	pr create --bundle "$BUNDLE" "$CID" </dev/null >"$TEST_DIR/create.out" 2>"$TEST_DIR/create.err" || status=$?
	stderr=$(cat "$TEST_DIR/create.err")
	[ "$status" -ne 0 ] || fail_with "create succeeded; stderr: $stderr"
	assert_one_error_line
	run pr state "$CID"
	[ "$status" -ne 0 ] || fail_with "state of the failed container succeeded"
	assert_no_leftovers "$CID"
}

# assert_one_error_line: $stderr (from `run --separate-stderr`) is exactly
# one non-empty line.
assert_one_error_line() {
	local n
	n=$(printf '%s\n' "$stderr" | grep -c .)
	if [ "$n" -ne 1 ]; then
		echo "expected one error line on stderr, got $n:" >&2
		printf '%s\n' "$stderr" >&2
		return 1
	fi
}

# runtime_is NAME: the runtime under test reports NAME in --version (used
# only to excuse a known deviation of runc, never to skip a feature test).
runtime_is() { "$PROCTOR" --version 2>/dev/null | head -n 1 | grep -qi "^$1"; }

# fail_with MSG: print MSG and fail (bats-assert is not installed).
fail_with() {
	echo "$*" >&2
	return 1
}

# assert_output_contains STRING
assert_output_contains() {
	[[ "$output" == *"$1"* ]] || fail_with "output does not contain '$1': $output"
}

# assert_status N
assert_status() {
	[ "$status" -eq "$1" ] || fail_with "status $status, wanted $1; output: $output"
}
