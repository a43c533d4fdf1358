#!/bin/bash
# bench/profile.sh - perf profiles of the issue 21 goals that are not met.
#
#   bench/profile.sh run|exec|proxy ...   (after one `make bench`, whose
#                                          bundles and harness it reuses)
#
# run     `perf record -a -g` over PROFILE_N (200) sequential `proctor run`
#         of /bin/true (bench/run.sh's busybox bundle, hybrid layout)
# exec    the same over PROFILE_N `proctor exec ID /bin/true` into one
#         running container
# proxy   the same around `BENCH_ONLY=proxy bench/run.sh` (5 x 1 GiB
#         downloads and 5 x 20000 short requests per path)
# System-wide (-a): the kernel's share (namespaces, cgroups, exit) is where
# a runtime's floor is; other work on a shared machine shows up too, so the
# reports are filtered by command name.  proctor is profiled as built
# with its symbol table (see PROFILE_STRIP below).  Sampled at 999 Hz.  Writes
# $BENCH_RESULTS/profile-WHAT.txt (perf report summaries); the perf.data
# stays in $BENCH_WORK/profile/.  Take it under the bats lock.
set -euo pipefail

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
BW=${BENCH_WORK:-/var/tmp/proctor-bench}
WORK=$BW/profile
RESULTS=${BENCH_RESULTS:-$SRCDIR/bench/results}
N=${PROFILE_N:-200}
PROCTOR=$(readlink -f "${PROCTOR:-$SRCDIR/src/proctor}")
log() { printf 'bench-profile: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
command -v perf >/dev/null || die "perf is missing: apt-get install -y linux-perf"
[ -x "$PROCTOR" ] || die "no proctor binary"
[ -f "$BW/bundles/.done" ] || die "no bundles: run make bench (BENCH_ONLY=size is enough) first"
mkdir -p "$WORK/state" "$RESULTS"
# As a package installs it (bench/run.sh measures a stripped copy), but with
# the symbol table kept so that perf names proctor's functions; the debug
# info is what makes the as-built binary 2.2 MB and its memfd copy costly.
# PROFILE_STRIP=0 profiles the build as is.
if [ "${PROFILE_STRIP:-1}" = 1 ]; then
	strip --strip-debug -o "$WORK/proctor" "$PROCTOR" || die "cannot strip $PROCTOR"
	PROCTOR=$WORK/proctor
fi
S="$PROCTOR --root $WORK/state"
ID=pp$$
trap '$S delete -f $ID-exec >/dev/null 2>&1 || true' EXIT

# summary DATA OUT COMM...: the top of the report, by command and DSO, then
# the hottest symbols (self time) of the named commands.
summary() {
	local data=$1 out=$2 c
	shift 2
	# head closes the pipe early: not an error here
	set +o pipefail
	{
		echo "== share by command, DSO (self, all CPUs)"
		perf report -i "$data" --stdio --no-children --sort comm,dso -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -25
		for c in "$@"; do
			echo "== hottest symbols of $c (self)"
			perf report -i "$data" --stdio --no-children --comm "$c" --sort dso,sym -g none 2>/dev/null |
				grep -v '^#' | grep -v '^$' | head -25
			echo "== $c, inclusive (children): the system calls and kernel paths its time is under"
			perf report -i "$data" --stdio --children --comm "$c" --sort sym -g none 2>/dev/null |
				grep -v '^#' | grep -v '^$' | grep -E '__x64_sys_|__do_sys|do_exit|exit_mmap|copy_process|unshare|mount|cgroup|net_ns|exec|memfd|sendfile|shmem' | head -30
		done
	} >"$out"
	set -o pipefail
}

for what in "$@"; do
	data=$WORK/$what.data
	case $what in
	run)
		log "perf record: $N x proctor run"
		perf record -q -F 999 -a -g -o "$data" -- sh -c \
			"for i in \$(seq $N); do $S run --bundle $BW/bundles/run $ID-r >/dev/null 2>&1; done" 2>/dev/null
		summary "$data" "$RESULTS/profile-run.txt" proctor memfd:proctor true
		;;
	exec)
		$S run -d --bundle "$BW/bundles/exec" "$ID-exec" </dev/null >/dev/null 2>&1 || die "cannot start the exec container"
		log "perf record: $N x proctor exec"
		perf record -q -F 999 -a -g -o "$data" -- sh -c \
			"for i in \$(seq $N); do $S exec $ID-exec /bin/true; done" 2>/dev/null
		$S delete -f "$ID-exec" >/dev/null 2>&1
		summary "$data" "$RESULTS/profile-exec.txt" proctor memfd:proctor true
		;;
	proxy)
		log "perf record: BENCH_ONLY=proxy bench/run.sh"
		perf record -q -F 999 -a -g -o "$data" -- env BENCH_ONLY=proxy BENCH_STRIP=0 PROCTOR="$PROCTOR" \
			BENCH_RESULTS="$WORK/proxy-results" "$SRCDIR/bench/run.sh" >"$WORK/proxy.log" 2>&1 || {
			tail -5 "$WORK/proxy.log" >&2
			die "the proxy run failed"
		}
		summary "$data" "$RESULTS/profile-proxy.txt" egress-harness tinyproxy ab curl
		;;
	*) die "unknown profile $what (run, exec, proxy)" ;;
	esac
	log "wrote $RESULTS/profile-$what.txt"
done
