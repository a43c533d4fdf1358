#!/bin/bash
# bench/run.sh - proctor vs crun vs runc, side by side on this machine.
#
#   make bench                      (or: bench/run.sh from the build dir)
#   QUICK=1 make bench              a smoke run, under 2 minutes
#
# Writes bench/results/ (under the source tree; git-ignored):
#   results.md     the table (medians, ratios), pasted into docs/performance.md
#   results.tsv    the same numbers, one row per metric, for scripts
#   chart.png      gnuplot chart of the same (bench/chart.gp)
#   raw/           hyperfine JSON of every round, RSS samples, proxy samples
#
# What is measured (all runtimes on the same bundles, same machine, same run):
#   run       `RT run ID` of /bin/true from a busybox bundle: create + start +
#             wait + delete in one runtime call, sequential, 100 containers
#   exec      `RT exec ID /bin/true` into a running container, 200 execs
#   plain / userns+netns
#             `RT run` of the same bundle without user and network namespace,
#             and with a fresh user namespace (0 -> 100000, 65536 ids, the
#             rootfs chowned to match) plus a fresh network namespace: the
#             shape of a rollout container
#   peak RSS  ru_maxrss of the runtime process (GNU time %M) during `create`
#             and during `exec`, median of N samples
#   binary    size on disk and stripped size of each runtime binary
#   proxy     1 GiB download: direct, through tinyproxy and through
#             proctor's egress proxy (tests/tools/egress-harness, agent
#             listener, "public" policy, decision log on); connections per
#             second for 64-byte responses (ab, 16 clients, a new connection
#             per request) for the same three.  Clients reach the proxies
#             over loopback; the origin sits behind a veth in a network
#             namespace of the run's own (the proxy refuses loopback origins)
#   transparent  bench/transparent.sh: the same download from inside a
#             rollout through podman, by the proxy variables and by
#             transparent egress (network.transparent), against direct
#   podman    `podman --runtime RT run --rm IMAGE /bin/true` end to end
#   layouts   the run and exec rows again in a v1-only view (nswrap -u for
#             all three) and a v2-only view (nswrap -2: cgroup2 over
#             /sys/fs/cgroup); BENCH_LAYOUTS, default "hybrid v1 v2" on a
#             hybrid host.  A runtime that refuses a layout (crun 1.8 on v2
#             without CAP_SYS_RESOURCE) gets an empty column and a note
#   rollout   bench/rollout.sh: a rollout's create+start against the plain
#             container, a verifier exec against an agent exec, N rollouts
#             at once through the runtime and through podman, idle memory
#
# How the runtimes are interleaved: every timing is taken in ROUNDS; a round
# is one hyperfine call with the three runtimes as three commands (K runs
# each, one warm-up run each) and the order of the three rotates from round
# to round, so a burst of load from anything else on the machine lands on
# all three alike.  Medians are over all runs of all rounds.  The RSS and
# proxy samples are interleaved the same way (one sample each, rotating).
#
# Making crun usable on this host: the machine is hybrid (cgroup v1
# controllers plus cgroup2 at /sys/fs/cgroup/unified) and the hugetlb
# controller is on the unified hierarchy; crun 1.8 then refuses to run
# ("cgroups in hybrid mode not supported, drop all controllers from
# cgroupv2"), with --cgroup-manager=disabled as well (the check comes
# first).  Two ways, chosen with CRUN_CGROUPS:
#   mountns     (default) crun runs through `nswrap -u`: a fresh mount
#               namespace in which /sys/fs/cgroup/unified is detached, so
#               crun sees a plain v1 host and uses cgroupfs there; the host
#               is not changed.  crun then skips the (empty) unified
#               cgroup that proctor and runc create; the extra cost of -u is
#               measured as its own row ("wrapper -u") and is charged to crun.
#   hugetlb-v1  move hugetlb to a v1 mount (mount -t cgroup -o hugetlb) for
#               the duration of the run and move it back at exit.  This
#               changes the host's cgroup layout for everything running on
#               it: use it only on a scratch machine (BENCH_SCRATCH=1 is
#               required as a confirmation).
# Every runtime call goes through the same static helper (bench/nswrap.c),
# so all three pay the same extra exec.
#
# proctor is measured as a package installs it: a stripped copy of the
# built binary (`make` builds with -g, and the sealed-memfd copy that every
# create and exec makes would otherwise copy the debug info too; crun and
# runc from Debian are stripped).  BENCH_STRIP=0 measures the build as is.
#
# Environment: PROCTOR (binary, default ./src/proctor of the build dir),
# CRUN, RUNC, QUICK=1, BENCH_STRIP, BENCH_WORK (scratch dir, default
# /var/tmp/proctor-bench), BENCH_RESULTS (default $srcdir/bench/results),
# BENCH_PORT (origin port; tinyproxy takes the next one; default 18080),
# BENCH_ONLY (space-separated subset of: run exec userns rss size proxy
# transparent (needs proxy) podman rollout), BENCH_LAYOUTS, ROLLOUT_NS, BENCH_ORIGIN_CC (the proxy
# origin's congestion control, default cubic; `bbr` measures with this
# host's default; where the sysctl refuses it, the origin's socket option,
# then reno, then the namespace's default, and the run says which).
#
# Timings never gate anything: this script is not part of `make check`, and
# it exits 0 whatever the numbers are (non-zero only when it cannot measure).
set -euo pipefail

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$SRCDIR/bench
QUICK=${QUICK:-0}
WORK=${BENCH_WORK:-/var/tmp/proctor-bench}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
RAW=$RESULTS/raw
PORT0=${BENCH_PORT:-18080}
ONLY=${BENCH_ONLY:-run exec userns rss size proxy transparent podman rollout}
CRUN_CGROUPS=${CRUN_CGROUPS:-mountns}

if [ -z "${PROCTOR:-}" ]; then
	for p in "$PWD/src/proctor" "$SRCDIR/src/proctor"; do
		[ -x "$p" ] && { PROCTOR=$p; break; }
	done
fi
PROCTOR=$(readlink -f "${PROCTOR:-}" 2>/dev/null || true)
CRUN=${CRUN:-$(command -v crun || true)}
RUNC=${RUNC:-$(command -v runc || true)}

if [ "$QUICK" = 1 ]; then
	ROUNDS=4 RUN_K=5 EXEC_K=10 NS_K=5 RSS_N=3 POD_ROUNDS=2 POD_K=2
	PROXY_BYTES=$((256 * 1024 * 1024)) PROXY_REPS=1 AB_N=3000
else
	# run: 10 x 10 = 100 containers, exec: 10 x 20 = 200 execs per runtime
	ROUNDS=10 RUN_K=10 EXEC_K=20 NS_K=5 RSS_N=15 POD_ROUNDS=5 POD_K=4
	PROXY_BYTES=$((1024 * 1024 * 1024)) PROXY_REPS=5 AB_N=20000
fi
AB_C=16

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

[ "$(id -u)" = 0 ] || die "must run as root (the runtimes create namespaces and cgroups)"
[ -n "$PROCTOR" ] && [ -x "$PROCTOR" ] || die "no proctor binary: build it (make) or set PROCTOR"
for tool in hyperfine jq cc; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing: apt-get install -y hyperfine jq gcc gnuplot-nox tinyproxy apache2-utils curl time"
done
[ -x /usr/bin/time ] || die "GNU time is missing: apt-get install -y time"

# ------------------------------------------------------------------ setup

mkdir -p "$WORK" "$RAW"
rm -f "$RAW"/*.json "$RAW"/*.txt "$RAW"/*.log "$RESULTS"/results.tsv "$RESULTS"/proxy.tsv \
	"$RESULTS"/rollout.md "$RESULTS"/origin-cc.txt "$RESULTS"/layouts.txt
TSV=$RESULTS/results.tsv
printf 'section\tmetric\tunit\tproctor\tcrun\trunc\n' >"$TSV"
ID=pb$$

PROCTOR_BUILT=$PROCTOR
if [ "${BENCH_STRIP:-1}" = 1 ]; then
	strip -o "$WORK/proctor" "$PROCTOR" || die "cannot strip $PROCTOR"
	PROCTOR=$WORK/proctor
fi

NSWRAP=$WORK/nswrap
cc -O2 -static -o "$NSWRAP" "$BENCH/nswrap.c" 2>/dev/null || cc -O2 -o "$NSWRAP" "$BENCH/nswrap.c"

HUGETLB_MOVED=0
PIDS_TO_KILL=()
cleanup() {
	local rt
	set +e
	for rt in "${RTS[@]:-}"; do
		[ -n "$rt" ] || continue
		rtcmd "$rt" delete -f "$ID-exec" >/dev/null 2>&1
		rtcmd "$rt" delete -f "$ID-rss" >/dev/null 2>&1
	done
	# Rollouts and containers a failed section left behind.
	for c in "$WORK/state/proctor/$ID-"*; do
		[ -e "$c" ] && rtcmd proctor delete -f "${c##*/}" >/dev/null 2>&1
	done
	command -v podman >/dev/null &&
		podman ps -aq --filter "name=^$ID-" | xargs -r podman rm -f -t 0 >/dev/null 2>&1
	for p in "${PIDS_TO_KILL[@]:-}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	if [ "${NETNS_MADE:-0}" = 1 ]; then
		ip netns del "$ORIGIN_NS" 2>/dev/null
		ip link del "$VETH_H" 2>/dev/null
	fi
	if [ "$HUGETLB_MOVED" = 1 ]; then
		umount /sys/fs/cgroup/hugetlb && rmdir /sys/fs/cgroup/hugetlb
		log "hugetlb moved back to the unified hierarchy"
	fi
}
trap cleanup EXIT

CRUN_WRAP="-u"
if [ -n "$CRUN" ]; then
	case $CRUN_CGROUPS in
	mountns) ;;
	hugetlb-v1)
		[ "${BENCH_SCRATCH:-0}" = 1 ] || die "CRUN_CGROUPS=hugetlb-v1 changes the host's cgroups: set BENCH_SCRATCH=1 on a scratch machine"
		if ! grep -q ' /sys/fs/cgroup/hugetlb ' /proc/self/mountinfo; then
			mkdir -p /sys/fs/cgroup/hugetlb
			mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb ||
				die "cannot move hugetlb to v1 (is it enabled in a cgroup.subtree_control?)"
			HUGETLB_MOVED=1
		fi
		CRUN_WRAP=""
		;;
	*) die "CRUN_CGROUPS must be mountns or hugetlb-v1" ;;
	esac
fi

# The host's cgroup layout and the layouts the run and exec rows cover
# (BENCH_LAYOUTS overrides; see "Cgroup layouts" above).
if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	HOST_LAYOUT=v2
	DEFAULT_LAYOUTS="v2"
	log "host is cgroup v2 only: no v1-only view is possible (no v1 hierarchy to show), rows cover v2"
elif grep -q ' /sys/fs/cgroup/unified .* - cgroup2 ' /proc/self/mountinfo; then
	HOST_LAYOUT=hybrid
	DEFAULT_LAYOUTS="hybrid v1 v2"
else
	HOST_LAYOUT=v1
	DEFAULT_LAYOUTS="v1 v2"
fi
LAYOUTS=${BENCH_LAYOUTS:-$DEFAULT_LAYOUTS}
for l in $LAYOUTS; do
	case $l in
	hybrid) [ "$HOST_LAYOUT" = hybrid ] || die "BENCH_LAYOUTS: hybrid needs a hybrid host (this one is $HOST_LAYOUT)" ;;
	v1) [ "$HOST_LAYOUT" != v2 ] || die "BENCH_LAYOUTS: no v1-only view on a v2-only host" ;;
	v2) ;;
	*) die "BENCH_LAYOUTS: $l is not one of hybrid v1 v2" ;;
	esac
done
# On a v1-only host the host's layout is the v1 view: -u has nothing to
# detach, and crun runs as it is.
[ "$HOST_LAYOUT" = hybrid ] || CRUN_WRAP=""

# Runtimes present, in a fixed base order; rounds rotate it.
RTS=(proctor)
[ -n "$CRUN" ] && RTS+=(crun) || log "crun not installed: its column stays empty"
[ -n "$RUNC" ] && RTS+=(runc) || log "runc not installed: its column stays empty"
mkdir -p "$WORK/state"
# The cgroup layout the runtimes are shown (LAYOUT, see "Cgroup layouts"
# above): hybrid = the host as it is (crun: its v1 view, it refuses the
# rest), v1 = nswrap -u for every runtime, v2 = nswrap -2 for every runtime.
LAYOUT=hybrid
# layout_flag RT: the nswrap flag that shows RT the layout LAYOUT.
layout_flag() {
	case $LAYOUT in
	hybrid) [ "$1" = crun ] && printf '%s' "$CRUN_WRAP" ;;
	v1) printf -- -u ;;
	v2) printf -- -2 ;;
	esac
	return 0
}
# rtargv RT: the argv prefix that runs runtime RT with its own --root.
rtargv() {
	case $1 in
	proctor) echo "$NSWRAP $(layout_flag proctor) $PROCTOR --root $WORK/state/proctor" ;;
	crun) echo "$NSWRAP $(layout_flag crun) $CRUN --root $WORK/state/crun" ;;
	runc) echo "$NSWRAP $(layout_flag runc) $RUNC --root $WORK/state/runc" ;;
	esac
}
rtcmd() {
	local rt=$1
	shift
	# shellcheck disable=SC2046
	$(rtargv "$rt") "$@"
}
# rotated ROUND: the runtimes, rotated by ROUND.
rotated() {
	local n=${#RTS[@]} i
	for ((i = 0; i < n; i++)); do
		printf '%s ' "${RTS[$(((i + $1) % n))]}"
	done
}

# Bundles: one busybox rootfs, config from `runc spec` (terminal false,
# args /bin/true).  Rebuilt only when missing.
ROOTFS_SRC=/var/cache/proctor/rootfs/busybox
make_rootfs() {
	local dir=$1 bb
	if [ -x "$ROOTFS_SRC/bin/busybox" ]; then
		cp -a "$ROOTFS_SRC" "$dir"
		return
	fi
	bb=$(command -v busybox || true)
	[ -x /bin/busybox ] && bb=/bin/busybox
	[ -n "$bb" ] || die "no busybox rootfs and no busybox binary (apt-get install -y busybox-static)"
	mkdir -p "$dir"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,run}
	cp "$bb" "$dir/bin/busybox"
	# applet links point at the copy, never at busybox itself by a loop
	for applet in $("$dir/bin/busybox" --list); do
		[ "$applet" = busybox ] || ln -sf /bin/busybox "$dir/bin/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$dir/etc/passwd"
	printf 'root:x:0:\n' >"$dir/etc/group"
}
BUNDLES=$WORK/bundles
if [ ! -f "$BUNDLES/.done" ]; then
	log "building bundles in $BUNDLES"
	rm -rf "$BUNDLES"
	mkdir -p "$BUNDLES"/{run,exec,plain,userns}
	make_rootfs "$BUNDLES/rootfs"
	(cd "$BUNDLES/run" && runc spec 2>/dev/null || "$PROCTOR" spec)
	base=$BUNDLES/run/config.json
	jq '.process.terminal = false | .process.args = ["/bin/true"] | .root.path = "../rootfs"' \
		"$base" >"$base.new" && mv "$base.new" "$base"
	jq '.process.args = ["/bin/sleep", "1800"]' "$base" >"$BUNDLES/exec/config.json"
	jq '.linux.namespaces |= map(select(.type != "network" and .type != "user"))' \
		"$base" >"$BUNDLES/plain/config.json"
	cp -a "$BUNDLES/rootfs" "$BUNDLES/userns/rootfs"
	chown -R 100000:100000 "$BUNDLES/userns/rootfs"
	jq '.root.path = "rootfs"
	    | .linux.namespaces |= (map(select(.type != "network" and .type != "user"))
	                            + [{"type": "network"}, {"type": "user"}])
	    | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
	    | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]' \
		"$base" >"$BUNDLES/userns/config.json"
	touch "$BUNDLES/.done"
fi

# ---------------------------------------------------------------- helpers

# hf_rounds NAME ROUNDS K CMD_TEMPLATE: interleaved hyperfine rounds; the
# template has RT where the runtime's argv prefix goes.
hf_rounds() {
	local name=$1 rounds=$2 k=$3 tmpl=$4 r rt args
	for ((r = 0; r < rounds; r++)); do
		args=()
		for rt in $(rotated "$r"); do
			args+=(-n "$rt" "${tmpl//RT/$(rtargv "$rt")}")
		done
		# hyperfine's "statistical outliers" warnings go to the log: with
		# other work on the machine they are expected, and the medians
		# are what the table uses.
		hyperfine -N -i --style none --warmup 1 --runs "$k" \
			--export-json "$RAW/$name.$r.json" "${args[@]}" >/dev/null 2>>"$RAW/hyperfine.log" || {
			tail -5 "$RAW/hyperfine.log" >&2
			die "hyperfine failed in $name round $r"
		}
	done
}

# hf_median NAME CMDNAME: median in ms over all rounds of NAME.
hf_median() {
	jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | .times[]] | sort
	    | if length == 0 then empty
	      elif length % 2 == 1 then .[length / 2 | floor]
	      else (.[length / 2 - 1] + .[length / 2]) / 2 end | . * 1000 * 1000 | round / 1000' \
		"$RAW/$1".*.json
}
# hf_cpu NAME CMDNAME: mean user+system CPU ms per run (hyperfine's rusage of
# the command and its children, so the container's /bin/true is in it too).
hf_cpu() {
	jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | (.user + .system)]
	    | if length == 0 then empty else add / length * 1000 * 1000 | round / 1000 end' "$RAW/$1".*.json
}
# hf_fail NAME CMDNAME: runs that exited non-zero (hyperfine -i keeps going).
hf_fail() {
	jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | .exit_codes[] | select(. != 0)] | length' \
		"$RAW/$1".*.json
}
hf_count() {
	jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | .times[]] | length' "$RAW/$1".*.json
}

# median_file FILE: median of the numbers in FILE (one per line).
median_file() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# row SECTION METRIC UNIT PROCTOR CRUN RUNC
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$TSV"; }
col() {
	# col RT VALUE...: prints the value for RT if it ran, "-" otherwise
	case " ${RTS[*]} " in *" $1 "*) printf '%s' "$2" ;; *) printf -- '-' ;; esac
}
hf_row() {
	local section=$1 metric=$2 name=$3 rt f
	row "$section" "$metric" ms \
		"$(hf_median "$name" proctor)" \
		"$(col crun "$(hf_median "$name" crun 2>/dev/null)")" \
		"$(col runc "$(hf_median "$name" runc 2>/dev/null)")"
	row "$section-cpu" "$metric: CPU user+sys" "ms, mean" \
		"$(hf_cpu "$name" proctor)" \
		"$(col crun "$(hf_cpu "$name" crun 2>/dev/null)")" \
		"$(col runc "$(hf_cpu "$name" runc 2>/dev/null)")"
	for rt in "${RTS[@]}"; do
		f=$(hf_fail "$name" "$rt")
		[ "${f:-0}" = 0 ] || log "warning: $rt failed $f of its runs in $name (see $RAW/$name.*.json)"
	done
}

START=$(date +%s)
log "proctor: $PROCTOR ($("$PROCTOR" --version | head -1)), built as $PROCTOR_BUILT"
[ -n "$CRUN" ] && log "crun: $CRUN ($("$CRUN" --version | head -1)), cgroups via $CRUN_CGROUPS"
[ -n "$RUNC" ] && log "runc: $RUNC ($("$RUNC" --version | head -1))"
log "mode: $([ "$QUICK" = 1 ] && echo quick || echo full), $ROUNDS rounds"

# ---------------------------------------------------------------- wrapper

# What the helper itself costs: -u (crun's) against the plain exec.
hyperfine -N --style none --warmup 3 --runs $((ROUNDS * 10)) --export-json "$RAW/wrapper.0.json" \
	-n plain "$NSWRAP /bin/true" -n unshare "$NSWRAP -u /bin/true" >/dev/null 2>>"$RAW/hyperfine.log"
row wrapper "wrapper exec (all runtimes)" ms "$(hf_median wrapper plain)" "$(hf_median wrapper plain)" "$(hf_median wrapper plain)"
hyperfine -N --style none --warmup 3 --runs $((ROUNDS * 10)) --export-json "$RAW/wrapper2.0.json" \
	-n v2 "$NSWRAP -2 /bin/true" >/dev/null 2>>"$RAW/hyperfine.log"
wextra() { jq -n --argjson a "$(hf_median "$1" "$2")" --argjson b "$(hf_median wrapper plain)" '($a - $b) * 1000 | round / 1000'; }
row wrapper "wrapper -u extra (v1-only view; crun in every layout but v2)" ms "$(wextra wrapper unshare)" \
	"$(wextra wrapper unshare)" "$(wextra wrapper unshare)"
row wrapper "wrapper -2 extra (v2-only view)" ms "$(wextra wrapper2 v2)" "$(wextra wrapper2 v2)" "$(wextra wrapper2 v2)"

# ----------------------------------------------------------- run, exec

# run_exec_rows SUFFIX LABEL: the run and exec rows in the current LAYOUT;
# SUFFIX names the raw files, LABEL goes after the metric's name.
run_exec_rows() {
	local sfx=$1 label=$2 rt
	if want run; then
		log "run$label: $((ROUNDS * RUN_K)) containers per runtime (create+start+wait+delete of /bin/true)"
		hf_rounds "run$sfx" "$ROUNDS" "$RUN_K" "RT run --bundle $BUNDLES/run $ID-run"
		hf_row "run$sfx" "run /bin/true (create+start+wait+delete)$label" "run$sfx"
	fi
	if want exec; then
		log "exec$label: $((ROUNDS * EXEC_K)) execs of /bin/true per runtime"
		for rt in "${RTS[@]}"; do
			rtcmd "$rt" run -d --bundle "$BUNDLES/exec" "$ID-exec" </dev/null >/dev/null 2>&1 ||
				die "$rt: cannot start the exec container ($LAYOUT layout)"
		done
		hf_rounds "exec$sfx" "$ROUNDS" "$EXEC_K" "RT exec $ID-exec /bin/true"
		hf_row "exec$sfx" "exec /bin/true into a running container$label" "exec$sfx"
		for rt in "${RTS[@]}"; do rtcmd "$rt" delete -f "$ID-exec" >/dev/null 2>&1 || true; done
	fi
}

# layout_rts: the runtimes that run a container in LAYOUT (crun 1.8 needs
# CAP_SYS_RESOURCE on v2 to raise RLIMIT_MEMLOCK for its device filter);
# prints them, and logs why one is left out.
layout_rts() {
	local rt err
	for rt in "${RTS_ALL[@]}"; do
		if err=$(rtcmd "$rt" run --bundle "$BUNDLES/run" "$ID-probe" 2>&1 </dev/null >/dev/null); then
			printf '%s ' "$rt"
		else
			rtcmd "$rt" delete -f "$ID-probe" >/dev/null 2>&1
			# crun leaves the cgroup it made before it gave up
			[ "$LAYOUT" = v2 ] && rmdir "/sys/fs/cgroup/unified/$ID-probe" 2>/dev/null
			err=$(printf '%s' "$err" | grep -v ambient | tail -1)
			log "$rt cannot run a container in the $LAYOUT layout, its column stays empty: $err"
			printf '%s: %s refused to run a container: %s\n' "$LAYOUT" "$rt" "$err" >>"$RESULTS/layouts.txt"
		fi
	done
}

RTS_ALL=("${RTS[@]}")
: >"$RESULTS/layouts.txt"
case " $LAYOUTS " in *" hybrid "*)
	[ -n "$CRUN" ] && [ -n "$CRUN_WRAP" ] &&
		echo "hybrid: crun 1.8 refuses this hybrid host; its hybrid rows are its v1-only view (nswrap -u)" >"$RESULTS/layouts.txt"
	;;
esac
for LAYOUT in $LAYOUTS; do
	case $LAYOUT in
	hybrid) sfx="" label="" ;;
	*) sfx="-$LAYOUT" label=" [$LAYOUT-only view]" ;;
	esac
	read -r -a RTS <<<"$(layout_rts)"
	[ "${#RTS[@]}" -gt 0 ] || die "no runtime runs a container in the $LAYOUT layout"
	run_exec_rows "$sfx" "$label"
done
LAYOUT=hybrid
RTS=("${RTS_ALL[@]}")

# ----------------------------------------------------------------- userns

if want userns; then
	log "plain vs userns+netns: $((ROUNDS * NS_K)) containers each per runtime"
	hf_rounds plain "$ROUNDS" "$NS_K" "RT run --bundle $BUNDLES/plain $ID-plain"
	hf_rounds userns "$ROUNDS" "$NS_K" "RT run --bundle $BUNDLES/userns $ID-userns"
	hf_row userns "run, no userns, no netns" plain
	hf_row userns "run, userns + fresh netns (rollout shape)" userns
fi

# -------------------------------------------------------------------- rss

if want rss; then
	log "peak RSS: $RSS_N samples of create and exec per runtime"
	for rt in "${RTS[@]}"; do
		: >"$RAW/rss-create-$rt.txt"
		: >"$RAW/rss-exec-$rt.txt"
	done
	for ((i = 0; i < RSS_N; i++)); do
		for rt in $(rotated "$i"); do
			# shellcheck disable=SC2046
			/usr/bin/time -f %M -o "$WORK/rss.out" $(rtargv "$rt") create --bundle "$BUNDLES/exec" "$ID-rss" \
				</dev/null >/dev/null 2>&1 || die "$rt create failed"
			cat "$WORK/rss.out" >>"$RAW/rss-create-$rt.txt"
			rtcmd "$rt" start "$ID-rss" >/dev/null 2>&1
			# shellcheck disable=SC2046
			/usr/bin/time -f %M -o "$WORK/rss.out" $(rtargv "$rt") exec "$ID-rss" /bin/true \
				</dev/null >/dev/null 2>&1 || die "$rt exec failed"
			cat "$WORK/rss.out" >>"$RAW/rss-exec-$rt.txt"
			rtcmd "$rt" delete -f "$ID-rss" >/dev/null 2>&1
		done
	done
	for op in create exec; do
		row rss "peak RSS during $op" KiB \
			"$(median_file "$RAW/rss-$op-proctor.txt")" \
			"$(col crun "$(median_file "$RAW/rss-$op-crun.txt" 2>/dev/null)")" \
			"$(col runc "$(median_file "$RAW/rss-$op-runc.txt" 2>/dev/null)")"
	done
	row rss "wrapper (nswrap) peak RSS, included above" KiB \
		"$(/usr/bin/time -f %M "$NSWRAP" /bin/true 2>&1 >/dev/null | tail -1)" "" ""
fi

# ------------------------------------------------------------------- size

if want size; then
	stripped() {
		[ -n "$1" ] || return 0
		strip -o "$WORK/stripped" "$1" 2>/dev/null && stat -c %s "$WORK/stripped"
	}
	row size "binary as built (proctor: -g, unstripped)" bytes "$(stat -Lc %s "$PROCTOR_BUILT")" \
		"$(col crun "$(stat -Lc %s "$CRUN" 2>/dev/null)")" "$(col runc "$(stat -Lc %s "$RUNC" 2>/dev/null)")"
	row size "binary stripped" bytes "$(stripped "$PROCTOR")" \
		"$(col crun "$(stripped "$CRUN")")" "$(col runc "$(stripped "$RUNC")")"
	nlibs() { [ -n "$1" ] && ldd "$1" 2>/dev/null | grep -c '=>' || echo 0; }
	row size "shared libraries loaded" count "$(nlibs "$PROCTOR")" \
		"$(col crun "$(nlibs "$CRUN")")" "$(col runc "$(nlibs "$RUNC")")"
fi

# ------------------------------------------------------------------ proxy

# proxies: direct, tinyproxy, egress; PROXY_LIST holds those available.
# The origin (bench/upstream.c) runs in a network namespace of this run's
# own, behind a veth pair, at 198.19.N.2: the egress proxy never connects to
# loopback, private or benchmarking addresses unless the operator's
# reachable ranges name them, as --reachable 198.18.0.0/15 (RFC 2544) does
# here, and the port joins the policy's allowed_ports.  The proxy runs
# sandboxed, as create runs it.  Clients reach the proxies over loopback; every
# path to the origin (direct, tinyproxy, egress) crosses the same veth, and
# nothing leaves this machine.
if want proxy; then
	command -v curl >/dev/null || die "curl is missing: apt-get install -y curl"
	command -v ip >/dev/null || die "ip is missing: apt-get install -y iproute2"
	UP_PORT=$PORT0 TP_PORT=$((PORT0 + 1))
	cc -O2 -o "$WORK/upstream" "$BENCH/upstream.c"
	ORIGIN_NS=pb-origin-$$ VETH_H=pbo$$a VETH_N=pbo$$b
	ON=$(($$ % 200 + 20))
	ORIGIN=198.19.$ON.2
	ip netns add "$ORIGIN_NS"
	NETNS_MADE=1
	ip link add "$VETH_H" type veth peer name "$VETH_N"
	ip link set "$VETH_N" netns "$ORIGIN_NS"
	ip addr add "198.19.$ON.1/24" dev "$VETH_H"
	ip link set "$VETH_H" up
	ip -n "$ORIGIN_NS" addr add "$ORIGIN/24" dev "$VETH_N"
	ip -n "$ORIGIN_NS" link set "$VETH_N" up
	ip -n "$ORIGIN_NS" link set lo up
	# The origin sends with cubic, Linux's default, whatever this host's
	# default is (a new namespace inherits it; here it is BBR).  BBR
	# without the fq qdisc (not in this kernel) paces every segment with
	# its own timer: the origin then caps the direct download at ~3.5 GiB/s
	# and any path through a proxy at ~2.3, and the rows measure the
	# origin's pacing instead of the path.  docs/performance.md gives both.
	# Outside the initial network namespace the sysctl accepts only the
	# algorithms of net.ipv4.tcp_allowed_congestion_control (some hosts
	# allow "reno bbr"); then the origin sets it on its listener with
	# TCP_CONGESTION (bench/upstream.c), which needs CAP_NET_ADMIN only;
	# then reno, then whatever the namespace has.  ORIGIN_CC_HOW says which.
	WANT_CC=${BENCH_ORIGIN_CC:-cubic}
	ORIGIN_CC="" ORIGIN_CC_HOW=""
	if ip netns exec "$ORIGIN_NS" sysctl -qw net.ipv4.tcp_congestion_control="$WANT_CC" 2>/dev/null; then
		ORIGIN_CC=$WANT_CC ORIGIN_CC_HOW="namespace default (sysctl)"
	fi
	start_origin() {
		ip netns exec "$ORIGIN_NS" "$WORK/upstream" "$UP_PORT" 900 0.0.0.0 "$@" 2>"$WORK/upstream.log" &
		ORIGIN_PID=$!
		PIDS_TO_KILL+=("$ORIGIN_PID")
		local i
		for ((i = 0; i < 50; i++)); do
			grep -q '^upstream: congestion control' "$WORK/upstream.log" && return 0
			kill -0 "$ORIGIN_PID" 2>/dev/null || return 1
			sleep 0.1
		done
		return 1
	}
	if [ -n "$ORIGIN_CC" ]; then
		start_origin || die "origin did not start: $(cat "$WORK/upstream.log")"
	elif start_origin "$WANT_CC"; then
		ORIGIN_CC=$WANT_CC
		ORIGIN_CC_HOW="socket option TCP_CONGESTION (sysctl refused: allowed are $(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control))"
	elif ip netns exec "$ORIGIN_NS" sysctl -qw net.ipv4.tcp_congestion_control=reno 2>/dev/null && start_origin; then
		ORIGIN_CC=reno ORIGIN_CC_HOW="fallback: $WANT_CC refused by sysctl and socket option"
	else
		start_origin || die "origin did not start: $(cat "$WORK/upstream.log")"
		ORIGIN_CC=$(sed -n 's/^upstream: congestion control //p' "$WORK/upstream.log")
		ORIGIN_CC_HOW="fallback: the namespace's default; $WANT_CC and reno refused"
	fi
	got=$(sed -n 's/^upstream: congestion control //p' "$WORK/upstream.log")
	[ "$got" = "$ORIGIN_CC" ] || die "origin's congestion control is $got, expected $ORIGIN_CC"
	log "proxy origin congestion control: $ORIGIN_CC, via $ORIGIN_CC_HOW"
	printf '%s\t%s\n' "$ORIGIN_CC" "$ORIGIN_CC_HOW" >"$RESULTS/origin-cc.txt"
	PROXY_LIST=(direct)
	declare -A PROXY_PID=()
	# proxy_cpu_ms NAME: CPU time (user+sys, all threads) the proxy process
	# has used so far, in ms; 0 for direct.  On a busy machine a proxy's
	# requests per second also measure how much CPU the scheduler gave it
	# (a single-threaded event loop against a thread per connection); CPU
	# per request and per GiB do not.
	pid_cpu_ms() {
		[ -n "$1" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
		awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' "/proc/$1/stat"
	}
	proxy_cpu_ms() { pid_cpu_ms "${PROXY_PID[$1]:-}"; }
	# The CPU rows of every path, because on a machine without a spare CPU
	# the rates follow them: the client's (GNU time of curl or ab), the
	# origin's and the proxy's, summed per GiB and per request, and the
	# machine's idle share over the downloads (/proc/stat; other load
	# counts as busy).  docs/performance.md, "The egress relay: where the
	# CPU goes", reads the ratios with them.
	stat_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
	# timed_client OUT CMD...: runs CMD with its stdout to standard output
	# and its user+sys CPU in ms to OUT.
	timed_client() {
		local out=$1
		shift
		/usr/bin/time -f '%U %S' -o "$out.time" "$@"
		# A failed command adds a line before the format's.
		tail -n 1 "$out.time" | awk '{ printf "%.0f\n", ($1 + $2) * 1000 }' >"$out"
	}
	wait_port() {
		local i
		for ((i = 0; i < 50; i++)); do
			(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
			sleep 0.1
		done
		return 1
	}
	wait_port "$ORIGIN" "$UP_PORT" || die "origin did not start on $ORIGIN:$UP_PORT"
	if command -v tinyproxy >/dev/null; then
		cat >"$WORK/tinyproxy.conf" <<-EOF
			Port $TP_PORT
			Listen 127.0.0.1
			Timeout 60
			MaxClients 1024
			LogLevel Critical
			LogFile "$WORK/tinyproxy.log"
			PidFile "$WORK/tinyproxy.pid"
			Allow 127.0.0.1
			DisableViaHeader Yes
		EOF
		tinyproxy -d -c "$WORK/tinyproxy.conf" >/dev/null 2>&1 &
		PIDS_TO_KILL+=($!)
		PROXY_PID[tinyproxy]=$!
		wait_port 127.0.0.1 "$TP_PORT" && PROXY_LIST+=(tinyproxy) || log "tinyproxy did not start"
	else
		log "tinyproxy not installed (apt-get install -y tinyproxy): no reference proxy"
	fi
	HARNESS=""
	for h in "$PWD/tests/tools/egress-harness" "$SRCDIR/tests/tools/egress-harness"; do
		[ -x "$h" ] && { HARNESS=$h; break; }
	done
	if [ -z "$HARNESS" ]; then
		echo "proxy: not built yet"
		log "proxy: not built yet (tests/tools/egress-harness is missing; make check builds it); measuring direct and tinyproxy only"
	else
		# The agent listener under a "public" policy, its decision log on,
		# as create starts it for a rollout container (minus the netns).
		printf '{"version": 1, "agent": {"network_mode": "public", "allowed_ports": [%s]}}\n' "$UP_PORT" >"$WORK/policy.json"
		printf 'nameserver 127.0.0.1\n' >"$WORK/resolv.conf"
		rm -f "$WORK/egress.ready" "$WORK/egress-decisions.jsonl"
		mkdir -p "$WORK/egress-root"
		"$HARNESS" --policy "$WORK/policy.json" --agent 127.0.0.1:0 --log "$WORK/egress-decisions.jsonl" \
			--totals "$WORK/egress-totals" --reachable 198.18.0.0/15 --sandbox "$WORK/egress-root" \
			--resolv "$WORK/resolv.conf" --ready-file "$WORK/egress.ready" >"$WORK/egress.log" 2>&1 &
		PIDS_TO_KILL+=($!)
		PROXY_PID[egress]=$!
		for ((i = 0; i < 50; i++)); do [ -s "$WORK/egress.ready" ] && break; sleep 0.1; done
		EG_PORT=$(sed -n 's/^agent=//p' "$WORK/egress.ready" 2>/dev/null)
		if [ -n "$EG_PORT" ] && curl -sf -x "http://127.0.0.1:$EG_PORT" -o /dev/null "http://$ORIGIN:$UP_PORT/16"; then
			PROXY_LIST+=(egress)
		else
			echo "proxy: egress-harness did not serve (see $WORK/egress.log)"
		fi
	fi
	proxy_opt() {
		case $1 in
		direct) ;;
		tinyproxy) printf '%s' "127.0.0.1:$TP_PORT" ;;
		egress) printf '%s' "127.0.0.1:$EG_PORT" ;;
		esac
	}
	log "proxy: ${PROXY_LIST[*]}: $PROXY_REPS x $((PROXY_BYTES / 1048576)) MiB download, $PROXY_REPS x $AB_N short requests"
	for p in "${PROXY_LIST[@]}"; do
		for f in tput cps cpugib cpureq allgib allreq idle; do : >"$RAW/proxy-$f-$p.txt"; done
	done
	for ((i = 0; i < PROXY_REPS; i++)); do
		n=${#PROXY_LIST[@]}
		for ((j = 0; j < n; j++)); do
			p=${PROXY_LIST[$(((i + j) % n))]}
			px=$(proxy_opt "$p")
			c0=$(proxy_cpu_ms "$p") o0=$(pid_cpu_ms "$ORIGIN_PID") s0=$(stat_jiffies)
			bps=$(timed_client "$WORK/client-cpu" curl -s ${px:+-x "http://$px"} -o /dev/null \
				-w '%{speed_download} %{size_download}' "http://$ORIGIN:$UP_PORT/$PROXY_BYTES")
			c1=$(proxy_cpu_ms "$p") o1=$(pid_cpu_ms "$ORIGIN_PID") s1=$(stat_jiffies)
			[ "${bps#* }" = "$PROXY_BYTES" ] || { log "$p: short download ($bps)"; continue; }
			echo "${bps% *}" | awk '{ printf "%.1f\n", $1 / 1048576 }' >>"$RAW/proxy-tput-$p.txt"
			[ "$p" = direct ] || awk -v a="$c0" -v b="$c1" -v n="$PROXY_BYTES" \
				'BEGIN { printf "%.0f\n", (b - a) * 1073741824 / n }' >>"$RAW/proxy-cpugib-$p.txt"
			awk -v a="$c0" -v b="$c1" -v oa="$o0" -v ob="$o1" -v n="$PROXY_BYTES" -v cl="$(cat "$WORK/client-cpu")" \
				'BEGIN { printf "%.0f\n", (b - a + ob - oa + cl) * 1073741824 / n }' >>"$RAW/proxy-allgib-$p.txt"
			awk -v a="$s0" -v b="$s1" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[1] - x[1] + y[2] - x[2]
				if (t > 0) printf "%.0f\n", 100 * (y[2] - x[2]) / t }' >>"$RAW/proxy-idle-$p.txt"
			if command -v ab >/dev/null; then
				c0=$(proxy_cpu_ms "$p") o0=$(pid_cpu_ms "$ORIGIN_PID")
				timed_client "$WORK/client-cpu" ab -q -r -n "$AB_N" -c "$AB_C" ${px:+-X "$px"} \
					"http://$ORIGIN:$UP_PORT/64" >"$RAW/ab-$p-$i.txt" 2>&1 || true
				c1=$(proxy_cpu_ms "$p") o1=$(pid_cpu_ms "$ORIGIN_PID")
				[ "$p" = direct ] || awk -v a="$c0" -v b="$c1" -v n="$AB_N" \
					'BEGIN { printf "%.1f\n", (b - a) * 1000 / n }' >>"$RAW/proxy-cpureq-$p.txt"
				awk -v a="$c0" -v b="$c1" -v oa="$o0" -v ob="$o1" -v n="$AB_N" -v cl="$(cat "$WORK/client-cpu")" \
					'BEGIN { printf "%.1f\n", (b - a + ob - oa + cl) * 1000 / n }' >>"$RAW/proxy-allreq-$p.txt"
				awk '/^Requests per second/ { printf "%.0f\n", $4 }' "$RAW/ab-$p-$i.txt" >>"$RAW/proxy-cps-$p.txt"
				awk '/^(Failed requests|Non-2xx)/ && $NF + 0 > 0 { print FILENAME ": " $0 }' "$RAW/ab-$p-$i.txt" >&2
			fi
		done
	done
	pmed() { [ -s "$RAW/proxy-$1-$2.txt" ] && median_file "$RAW/proxy-$1-$2.txt" || printf -- '-'; }
	{
		printf 'proxy\tdownload throughput, %s MiB\tMiB/s' "$((PROXY_BYTES / 1048576))"
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed tput $p)"; done
		printf '\n'
		printf 'proxy\tshort requests, new connection each (ab -c %s)\treq/s' "$AB_C"
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed cps $p)"; done
		printf '\n'
		printf 'proxy\tproxy CPU per GiB downloaded\tms'
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed cpugib $p)"; done
		printf '\n'
		printf 'proxy\tproxy CPU per short request\tus'
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed cpureq $p)"; done
		printf '\n'
		printf 'proxy\tclient + origin + proxy CPU per GiB downloaded\tms'
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed allgib $p)"; done
		printf '\n'
		printf 'proxy\tclient + origin + proxy CPU per short request\tus'
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed allreq $p)"; done
		printf '\n'
		printf 'proxy\tmachine idle during the downloads\t%%'
		for p in direct tinyproxy egress; do printf '\t%s' "$(pmed idle $p)"; done
		printf '\n'
	} >"$RESULTS/proxy.tsv"
	if want transparent; then
		# shellcheck source=bench/transparent.sh
		. "$BENCH/transparent.sh"
	fi
fi

# podman_setup: sets IMAGE (a busybox image podman has) and writes the
# runtime wrappers $WORK/podman-rt/RT: podman takes a runtime path; these
# add the same nswrap exec the direct rows pay (and -u for crun).
podman_setup() {
	local rt real w
	IMAGE=localhost/proctor/busybox
	if ! podman image exists "$IMAGE" 2>/dev/null; then
		IMAGE=localhost/proctor-bench/busybox
		podman image exists "$IMAGE" 2>/dev/null ||
			tar -C "$BUNDLES/rootfs" -c . | podman import -q - "$IMAGE" >/dev/null
	fi
	mkdir -p "$WORK/podman-rt"
	for rt in "${RTS[@]}"; do
		case $rt in
		proctor) real=$PROCTOR w="" ;;
		crun) real=$CRUN w=$CRUN_WRAP ;;
		runc) real=$RUNC w="" ;;
		esac
		printf '#!/bin/sh\nexec %s %s %s "$@"\n' "$NSWRAP" "$w" "$real" >"$WORK/podman-rt/$rt"
		chmod +x "$WORK/podman-rt/$rt"
	done
}

# ----------------------------------------------------------------- podman

if want podman; then
	if ! command -v podman >/dev/null; then
		log "podman not installed: skipped"
	else
		podman_setup
		for rt in "${RTS[@]}"; do
			podman --runtime "$WORK/podman-rt/$rt" run --rm "$IMAGE" /bin/true ||
				die "podman with $rt cannot run $IMAGE"
		done
		log "podman: $((POD_ROUNDS * POD_K)) x podman run --rm per runtime"
		for ((r = 0; r < POD_ROUNDS; r++)); do
			args=()
			for rt in $(rotated "$r"); do
				args+=(-n "$rt" "podman --runtime $WORK/podman-rt/$rt run --rm $IMAGE /bin/true")
			done
			hyperfine -N -i --style none --warmup 1 --runs "$POD_K" --export-json "$RAW/podman.$r.json" \
				"${args[@]}" >/dev/null 2>>"$RAW/hyperfine.log" || {
				tail -5 "$RAW/hyperfine.log" >&2
				die "hyperfine failed in podman round $r"
			}
		done
		hf_row podman "podman run --rm busybox /bin/true" podman
	fi
fi

# ---------------------------------------------------------------- rollout

if want rollout; then
	# shellcheck source=bench/rollout.sh
	. "$BENCH/rollout.sh"
fi

# ------------------------------------------------------------------ report

"$BENCH/report.sh" "$RESULTS" "$(date -u +%Y-%m-%dT%H:%MZ)" \
	"$($PROCTOR --version | head -1)" "$([ -n "$CRUN" ] && $CRUN --version | head -1)" \
	"$([ -n "$RUNC" ] && $RUNC --version | head -1)" "$([ "$QUICK" = 1 ] && echo quick || echo full)" \
	"$CRUN_CGROUPS"
cat "$RESULTS/results.md"
log "done in $(($(date +%s) - START)) s; results in $RESULTS"
