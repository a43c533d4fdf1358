#!/bin/bash
# bench/idle.sh - density: IDLE_N idle rollouts held at once (issue 21).
#
#   make bench-idle                 (or: bench/idle.sh from the build dir)
#   IDLE_N=100 make bench-idle      fewer rollouts
#
# Not part of `make bench` (it would double its time); a separate target.
# Through the runtime directly (`proctor run -d`, own --root), one minimal
# busybox bundle running `sleep`, an allowlist agent policy (so every
# rollout has its egress helper), nothing hidden, no verifier mounts.
#
# What it measures:
#   create      `run -d` latency of each of the IDLE_N rollouts, created one
#               after another (first 10, median, p99, last 10): does the
#               cost of a create grow with the number already up?
#   held        with all IDLE_N up and idle (after IDLE_SETTLE s): the
#               MemAvailable drop per rollout, the helpers' PSS and RSS
#               (/proc/PID/smaps_rollup) and open fds, and on the host: the
#               allocated file handles (/proc/sys/fs/file-nr, first field),
#               the fds open in all processes (sum over /proc/*/fd), the
#               number of processes, before and while held, as deltas
#   501st       `run -d` latency of the next IDLE_EXTRA rollouts with IDLE_N
#               held (the 501st first), then of IDLE_EXTRA creates each
#               right after a delete (delete one, create one)
#   teardown    the wall time of deleting them all (4 at a time), and that
#               nothing is left: no helper, no state dir, no cgroup
# Bounded in time: creating stops at IDLE_DEADLINE seconds (default 480)
# after the start or at the first IDLE_MAXFAIL failures (default 5), and
# the table says how many were up.  Everything it made is deleted on any
# exit (trap).  Take it under the bats lock on a shared machine:
#   flock -o /tmp/proctor-bats.lock make bench-idle
# Writes $BENCH_RESULTS/idle.md (default bench/results/idle.md) and
# raw/idle-*.txt.  Exits 0 whatever the numbers are; non-zero only when it
# cannot measure or something is left behind.
set -euo pipefail

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=${BENCH_WORK:-/var/tmp/proctor-bench}/idle
RESULTS=${BENCH_RESULTS:-$SRCDIR/bench/results}
RAW=$RESULTS/raw
N=${IDLE_N:-500}
EXTRA=${IDLE_EXTRA:-10}
SETTLE=${IDLE_SETTLE:-5}
DEADLINE=${IDLE_DEADLINE:-480}
MAXFAIL=${IDLE_MAXFAIL:-5}
ID=pi$$

log() { printf 'bench-idle: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
if [ -z "${PROCTOR:-}" ]; then
	for p in "$PWD/src/proctor" "$SRCDIR/src/proctor"; do
		[ -x "$p" ] && { PROCTOR=$p; break; }
	done
fi
[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || die "no proctor binary: build it (make) or set PROCTOR"
command -v jq >/dev/null || die "jq is missing: apt-get install -y jq"

START=$(date +%s)
rm -rf "$WORK"
mkdir -p "$WORK/state" "$RAW"
STATE=$WORK/state
# Measured as a package installs it (stripped), as bench/run.sh does.
strip -o "$WORK/proctor" "$PROCTOR" || die "cannot strip $PROCTOR"
P="$WORK/proctor --root $STATE"

# helper_pids: the egress helpers of this run's state root.
helper_pids() {
	local p
	for p in $(pgrep -x proctor-egress); do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "--root $STATE " && echo "$p"
	done
	return 0
}
# delete_all: deletes every container of the state root, 4 at a time.
delete_all() {
	local d ids=()
	for d in "$STATE/$ID-"*; do
		[ -e "$d" ] && ids+=("${d##*/}")
	done
	[ "${#ids[@]}" -gt 0 ] || return 0
	printf '%s\n' "${ids[@]}" | xargs -r -P 4 -I{} $P delete -f {} >/dev/null 2>&1 || true
}
cleanup() {
	set +e
	delete_all
	for i in $(seq 100); do [ -z "$(helper_pids)" ] && break; sleep 0.1; done
}
trap cleanup EXIT

# The bundle: the busybox rootfs of the test setup (or of bench/run.sh).
ROOTFS_SRC=/var/cache/proctor/rootfs/busybox
[ -x "$ROOTFS_SRC/bin/busybox" ] || ROOTFS_SRC=${BENCH_WORK:-/var/tmp/proctor-bench}/bundles/rootfs
[ -x "$ROOTFS_SRC/bin/busybox" ] || die "no busybox rootfs (run tests/setup-host.sh or make bench first)"
cp -a "$ROOTFS_SRC" "$WORK/rootfs"
mkdir -p "$WORK/bundle"
(cd "$WORK/bundle" && $WORK/proctor spec >/dev/null 2>&1 || runc spec) || die "cannot make a config.json"
cat >"$WORK/policy.json" <<-EOF
	{"version": 1,
	 "agent": {"network_mode": "allowlist", "allowed_hosts": ["pypi.org"]}}
EOF
jq --arg p "@$WORK/policy.json" '.process.terminal = false | .process.args = ["/bin/sleep", "3600"]
    | .root.path = "../rootfs" | del(.process.capabilities.ambient)
    | .annotations["run.proctor.rollout"] = $p' \
	"$WORK/bundle/config.json" >"$WORK/bundle/config.json.new"
mv "$WORK/bundle/config.json.new" "$WORK/bundle/config.json"
$P run -d --bundle "$WORK/bundle" "$ID-probe" </dev/null >/dev/null 2>"$RAW/idle-probe.log" ||
	die "a rollout does not start: $(tail -1 "$RAW/idle-probe.log")"
[ -n "$(helper_pids)" ] || die "the probe rollout has no egress helper"
$P delete -f "$ID-probe" >/dev/null 2>&1

# Host counters.
mem_available() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
file_nr() { awk '{ print $1 }' /proc/sys/fs/file-nr; }
host_fds() { find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
host_procs() { ls -d /proc/[0-9]* 2>/dev/null | wc -l; }
quantile() {
	sort -g "$1" | awk -v q="$2" '{ v[NR] = $1 } END { if (NR == 0) exit; i = int(q * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'
}
# timed_run NAME: `run -d` of one rollout; prints its latency in ms, or
# "fail".
timed_run() {
	local s e
	s=$EPOCHREALTIME
	if $P run -d --bundle "$WORK/bundle" "$1" </dev/null >/dev/null 2>>"$RAW/idle-errors.log"; then
		e=$EPOCHREALTIME
		awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", (e - s) * 1000 }'
	else
		echo fail
	fi
}

sync
mem0=$(mem_available) fnr0=$(file_nr) hfd0=$(host_fds) hp0=$(host_procs)
: >"$RAW/idle-create.txt"
up=0 fails=0 stopped=""
log "creating $N idle rollouts (bounded: ${DEADLINE} s, $MAXFAIL failures)"
for ((i = 0; i < N; i++)); do
	if (($(date +%s) - START > DEADLINE)); then
		stopped="deadline (${DEADLINE} s) after $up"
		break
	fi
	t=$(timed_run "$ID-$i")
	if [ "$t" = fail ]; then
		fails=$((fails + 1))
		((fails < MAXFAIL)) || { stopped="$MAXFAIL failures after $up"; break; }
		continue
	fi
	echo "$t" >>"$RAW/idle-create.txt"
	up=$((up + 1))
done
[ -n "$stopped" ] && log "stopped: $stopped"
sleep "$SETTLE"
sync
mem1=$(mem_available) fnr1=$(file_nr) hfd1=$(host_fds) hp1=$(host_procs)
running=$(for d in "$STATE/$ID-"*; do $P state "${d##*/}" 2>/dev/null | jq -r .status; done | grep -c '^running$' || true)
pss=0 rss=0 fds=0 nh=0
for hp in $(helper_pids); do
	pss=$((pss + $(awk '/^Pss:/ { print $2 }' "/proc/$hp/smaps_rollup"))) 
	rss=$((rss + $(awk '/^Rss:/ { print $2 }' "/proc/$hp/smaps_rollup")))
	fds=$((fds + $(ls "/proc/$hp/fd" | wc -l))) nh=$((nh + 1))
done

# The 501st and the next ones: plain next creates (fresh ids, nothing
# deleted in between: a delete's namespace and cgroup teardown runs on
# in the kernel's workqueues and would land on the next create).
log "one more: $EXTRA x run -d with $up held"
: >"$RAW/idle-extra.txt"
xfails=0
for ((i = 0; i < EXTRA; i++)); do
	t=$(timed_run "$ID-x$i")
	[ "$t" = fail ] && xfails=$((xfails + 1)) || echo "$t" >>"$RAW/idle-extra.txt"
done
# The same after a delete: delete one, create one, EXTRA times.
: >"$RAW/idle-redo.txt"
for ((i = 0; i < EXTRA; i++)); do
	$P delete -f "$ID-x$i" >/dev/null 2>&1 || true
	t=$(timed_run "$ID-y$i")
	[ "$t" = fail ] && xfails=$((xfails + 1)) || echo "$t" >>"$RAW/idle-redo.txt"
done

log "deleting $up rollouts"
t0=$EPOCHREALTIME
delete_all
t1=$EPOCHREALTIME
for i in $(seq 100); do [ -z "$(helper_pids)" ] && break; sleep 0.1; done
left_helpers=$(helper_pids | wc -l)
left_state=$(ls "$STATE" | wc -l)
left_cg=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$ID-*" 2>/dev/null | wc -l)
sync
mem2=$(mem_available) fnr2=$(file_nr)

head -10 "$RAW/idle-create.txt" >"$RAW/idle-first10.txt"
tail -10 "$RAW/idle-create.txt" >"$RAW/idle-last10.txt"
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.0f", (a - b) / n; else print "-" }'; }
{
	printf 'Taken %s, %s; %s.\n\n' "$(date -u +%Y-%m-%dT%H:%MZ)" "$($WORK/proctor --version | head -1)" \
		"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	printf '| idle rollouts | value |\n|---|---:|\n'
	printf '| asked / up / create failures / running when held | %s / %s / %s / %s |\n' "$N" "$up" "$fails" "$running"
	[ -n "$stopped" ] && printf '| stopped early | %s |\n' "$stopped"
	printf '| create (`run -d`), first 10, median, ms | %s |\n' "$(quantile "$RAW/idle-first10.txt" 0.5)"
	printf '| create, all %s, median / p99, ms | %s / %s |\n' "$up" "$(quantile "$RAW/idle-create.txt" 0.5)" "$(quantile "$RAW/idle-create.txt" 0.99)"
	printf '| create, last 10, median, ms | %s |\n' "$(quantile "$RAW/idle-last10.txt" 0.5)"
	printf '| create of the next one with %s held (the %sst), ms | %s |\n' "$up" "$((up + 1))" "$(head -1 "$RAW/idle-extra.txt")"
	printf '| create of the next %s, median / max, ms (failures) | %s / %s (%s) |\n' "$EXTRA" \
		"$(quantile "$RAW/idle-extra.txt" 0.5)" "$(quantile "$RAW/idle-extra.txt" 1)" "$xfails"
	printf '| create right after a delete, %s held, median / max of %s, ms | %s / %s |\n' "$up" "$EXTRA" \
		"$(quantile "$RAW/idle-redo.txt" 0.5)" "$(quantile "$RAW/idle-redo.txt" 1)"
	printf '| MemAvailable drop, KiB per rollout (total MiB) | %s (%s) |\n' "$(per "$mem0" "$mem1" "$up")" "$(((mem0 - mem1) / 1024))"
	printf '| egress helpers / PSS KiB each / RSS KiB each / fds each | %s / %s / %s / %s |\n' "$nh" \
		"$(per "$pss" 0 "$nh")" "$(per "$rss" 0 "$nh")" "$(per "$fds" 0 "$nh")"
	printf '| host allocated file handles (file-nr), per rollout (total) | %s (%s) |\n' "$(per "$fnr1" "$fnr0" "$up")" "$((fnr1 - fnr0))"
	printf '| host fds open in all processes, per rollout (total) | %s (%s) |\n' "$(per "$hfd1" "$hfd0" "$up")" "$((hfd1 - hfd0))"
	printf '| host processes, per rollout (total) | %s (%s) |\n' "$(per "$hp1" "$hp0" "$up")" "$((hp1 - hp0))"
	printf '| delete all (4 at a time), s | %s |\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	printf '| left after delete: helpers / state dirs / cgroups | %s / %s / %s |\n' "$left_helpers" "$left_state" "$left_cg"
	printf '| MemAvailable after delete vs before, KiB / file-nr after vs before | %s / %s |\n' "$((mem2 - mem0))" "$((fnr2 - fnr0))"
} >"$RESULTS/idle.md"
cat "$RESULTS/idle.md"
log "done in $(($(date +%s) - START)) s"
[ "$left_helpers" = 0 ] && [ "$left_state" = 0 ] && [ "$left_cg" = 0 ] || die "something was left behind (see the table)"
