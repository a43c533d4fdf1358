#!/bin/bash
# bench/layouts-ab.sh - why `make bench` and a whole-process A/B disagree
# about proctor's run against crun's (issue 21; docs/performance.md,
# "Two measurements that disagree").  Not part of `make bench`.
#
#   bench/layouts-ab.sh            after one `make bench` (its bundles and
#                                  stripped copy in BENCH_WORK)
#
# One hyperfine per variant, proctor and crun as its two commands, run in
# both orders (crun first, then proctor first), 2 x RUNS runs each:
#   bench      make bench's way: every call through nswrap, proctor in the
#              host's hybrid layout, crun in its v1-only view (nswrap -u)
#   onens      the issue's way: hyperfine itself inside one mount namespace
#              where /sys/fs/cgroup/unified is detached, both runtimes
#              exec'd directly, state roots as in `bench`
#   onens-g    as onens with the binary as built (-g, unstripped)
#   onens-run  as onens-g with each runtime's default state root (/run)
#   v1-both    make bench's way, but proctor in the v1-only view too
# Prints one line per variant: medians (ms) and the proctor/crun ratio.
set -euo pipefail
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=${BENCH_WORK:-/var/tmp/proctor-bench}
RUNS=${RUNS:-40}
P=$WORK/proctor G=${PROCTOR_BUILT:-$SRCDIR/src/proctor} C=$(command -v crun) N=$WORK/nswrap
B=$WORK/bundles/run
OUT=${BENCH_RESULTS:-$SRCDIR/bench/results}/layouts-ab
mkdir -p "$OUT"
[ -x "$P" ] && [ -x "$N" ] && [ -d "$B" ] || { echo "run make bench first" >&2; exit 1; }

# ab NAME PREFIX PCMD CCMD: hyperfine both orders; PREFIX runs hyperfine.
ab() {
	local name=$1 pre=$2 pc=$3 cc=$4
	# shellcheck disable=SC2086
	$pre hyperfine -N -i --style none --warmup 3 --runs "$RUNS" --export-json "$OUT/$name.0.json" \
		-n crun "$cc" -n proctor "$pc" >/dev/null 2>&1
	# shellcheck disable=SC2086
	$pre hyperfine -N -i --style none --warmup 3 --runs "$RUNS" --export-json "$OUT/$name.1.json" \
		-n proctor "$pc" -n crun "$cc" >/dev/null 2>&1
	local mp mc
	med() {
		jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | .times[]] | sort
		    | .[length / 2 | floor] * 1000000 | round / 1000' "$OUT/$1".*.json
	}
	cpu() {
		jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | (.user + .system)] | add / length * 1000000 | round / 1000' "$OUT/$1".*.json
	}
	mp=$(med "$name" proctor) mc=$(med "$name" crun)
	printf '| %s | %s | %s | %.2f | %s | %s |\n' "$name" "$mp" "$mc" "$(echo "$mp / $mc" | bc -l)" \
		"$(cpu "$name" proctor)" "$(cpu "$name" crun)"
}
printf '#!/bin/sh\numount -l /sys/fs/cgroup/unified 2>/dev/null\nexec "$@"\n' >"$OUT/detach.sh"
chmod +x "$OUT/detach.sh"
ONENS="unshare -m --propagation slave $OUT/detach.sh"
echo '| variant | proctor run, ms | crun run, ms | proctor/crun | proctor CPU, ms | crun CPU, ms |'
echo '|---|---:|---:|---:|---:|---:|'
ab bench "" "$N $P --root $WORK/state/proctor run --bundle $B abp" "$N -u $C --root $WORK/state/crun run --bundle $B abc"
ab v1-both "" "$N -u $P --root $WORK/state/proctor run --bundle $B abp" "$N -u $C --root $WORK/state/crun run --bundle $B abc"
ab onens "$ONENS" "$P --root $WORK/state/proctor run --bundle $B abp" "$C --root $WORK/state/crun run --bundle $B abc"
ab onens-g "$ONENS" "$G --root $WORK/state/proctor run --bundle $B abp" "$C --root $WORK/state/crun run --bundle $B abc"
ab onens-run "$ONENS" "$G run --bundle $B abp" "$C run --bundle $B abc"
