# shellcheck shell=bash
# bench/rollout.sh - the rollout section of bench/run.sh (sourced by it,
# BENCH_ONLY word "rollout"; uses run.sh's helpers and variables).
#
# What it measures, proctor only (crun and runc have no rollouts):
#   create+start   `proctor run -d` of a rollout (allowlist agent policy,
#                  so create starts the egress helper; a public verifier
#                  with two verifier mounts; /tests and /logs in the image,
#                  hidden from the agent) against `proctor run -d` of the
#                  same bundle without the annotation; the previous
#                  container is deleted (and its helper gone) before each
#                  timed run, in hyperfine's --prepare, which is not timed
#   exec           `exec ID /bin/true` (an agent session) against `exec
#                  --env PROCTOR_PHASE=verifier ID /bin/true` (a verifier
#                  session: its own user and mount namespaces, the
#                  verifier's view mounted) into one running rollout, and
#                  `exec` into the plain container for reference
#   concurrency    N rollouts (ROLLOUT_NS, default "16 64") started at the
#                  same instant, each by its own `proctor run -d` on its
#                  own copy of the rootfs (as an engine does), and the
#                  same through `podman run -d --annotation ...`: the wall
#                  time from the first start to the last return, p50 and p99
#                  of the per-rollout latency, and failures (a non-zero exit,
#                  or a container that is not running afterwards)
#   idle memory    with the N rollouts up and idle: PSS of each egress
#                  helper (/proc/PID/smaps_rollup; the only process the
#                  runtime leaves behind a rollout, `proctor ps` leaves it
#                  out), its RSS and open fds; conmon's PSS for podman
#                  (podman's share, not the runtime's); and MemAvailable
#                  before and after divided by N (everything: the container's
#                  process, page tables, namespaces, cgroups, the helper;
#                  noisy on a shared machine)
# Writes $RESULTS/rollout.md (tables) and $RAW/rollout-* (samples).

RB=$WORK/rollout
ROLLOUT_NS=${ROLLOUT_NS:-16 64}
[ "$QUICK" = 1 ] && ROLLOUT_NS=${ROLLOUT_NS_QUICK:-4 16}
RO_ID=$ID-ro
PR_STATE=$WORK/state/proctor

# The bundles: one rootfs with /tests and /logs (so the hide list hides
# something), the policy file, the host side of the verifier's mounts.
rollout_bundles() {
	rm -rf "$RB"
	mkdir -p "$RB"/{rollout,plain} "$RB/srv/tests" "$RB/srv/verdict"
	cp -a "$BUNDLES/rootfs" "$RB/rootfs"
	mkdir -p "$RB/rootfs/tests" "$RB/rootfs/logs"
	echo answer >"$RB/rootfs/tests/expected"
	printf '#!/bin/sh\nexit 0\n' >"$RB/srv/tests/test.sh"
	chmod +x "$RB/srv/tests/test.sh"
	cat >"$RB/policy.json" <<-EOF
		{"version": 1,
		 "environment": {"network_mode": "public"},
		 "agent": {"network_mode": "allowlist",
		           "allowed_hosts": ["pypi.org", "files.pythonhosted.org", "deb.debian.org"]},
		 "verifier": {"network_mode": "public",
		              "mounts": [{"source": "$RB/srv/tests", "destination": "/tests", "readonly": true},
		                         {"source": "$RB/srv/verdict", "destination": "/logs/verifier"}]},
		 "hide": ["/tests", "/logs"]}
	EOF
	# runc spec's ambient capabilities only make every call warn.
	jq '.process.args = ["/bin/sleep", "1800"] | .root.path = "../rootfs"
	    | del(.process.capabilities.ambient)' "$BUNDLES/run/config.json" >"$RB/plain/config.json"
	jq --arg p "@$RB/policy.json" '.annotations["run.proctor.rollout"] = $p' \
		"$RB/plain/config.json" >"$RB/rollout/config.json"
}

# helper_pids: pids of the egress helpers of this run's state root.
helper_pids() {
	local p
	for p in $(pgrep -x proctor-egress); do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "--root $PR_STATE " && echo "$p"
	done
	return 0
}
# podman_helper_pids: pids of the egress helpers of the podman containers
# named $RO_ID-c* (podman runs the runtime with its own --root; the helper's
# command line is the `create` that started it, with the container's id).
podman_helper_pids() {
	local ids p
	ids=$(podman ps -aq --no-trunc --filter "name=^$RO_ID-c" 2>/dev/null)
	[ -n "$ids" ] || return 0
	for p in $(pgrep -x proctor-egress); do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$ids" && echo "$p"
	done
	return 0
}
# helpers_gone [SECONDS]: waits until no helper of this run's state root
# is left.
helpers_gone() {
	local i n=$((${1:-10} * 10))
	for ((i = 0; i < n; i++)); do
		[ -z "$(helper_pids)" ] && return 0
		sleep 0.1
	done
	log "warning: egress helpers still running after ${1:-10} s: $(helper_pids | tr '\n' ' ')"
	return 1
}

# The --prepare of the create+start rows: delete the previous container of
# both commands and wait for its helper (not timed).
cat >"$WORK/rollout-prepare.sh" <<EOF
#!/bin/sh
$NSWRAP $PROCTOR --root $PR_STATE delete -f $RO_ID-cs >/dev/null 2>&1
$NSWRAP $PROCTOR --root $PR_STATE delete -f $RO_ID-csp >/dev/null 2>&1
# the helper's command line is the run that started it; match on helpers
# only (hyperfine's own argv holds the same words)
i=0
while [ \$i -lt 100 ]; do
	busy=0
	for p in \$(pgrep -x proctor-egress); do
		tr '\\0' ' ' <"/proc/\$p/cmdline" 2>/dev/null | grep -q -- " $RO_ID-cs \\?\$" && busy=1
	done
	[ \$busy = 0 ] && break
	sleep 0.05; i=\$((i + 1))
done
exit 0
EOF
chmod +x "$WORK/rollout-prepare.sh"

RO_MD=$RESULTS/rollout.md
rollout_bundles
P="$NSWRAP $PROCTOR --root $PR_STATE"
$P run -d --bundle "$RB/rollout" "$RO_ID-probe" </dev/null >/dev/null 2>"$RAW/rollout-probe.log" ||
	die "a rollout does not start: $(tail -1 "$RAW/rollout-probe.log")"
$P delete -f "$RO_ID-probe" >/dev/null 2>&1
helpers_gone 10

# ------------------------------------------------ create+start, rollout vs plain

log "rollout: $((ROUNDS * NS_K)) create+start of a rollout and of the plain container"
for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2)); then
		a=(-n plain "$P run -d --bundle $RB/plain $RO_ID-csp" -n rollout "$P run -d --bundle $RB/rollout $RO_ID-cs")
	else
		a=(-n rollout "$P run -d --bundle $RB/rollout $RO_ID-cs" -n plain "$P run -d --bundle $RB/plain $RO_ID-csp")
	fi
	hyperfine -N -i --style none --runs "$NS_K" --prepare "$WORK/rollout-prepare.sh" \
		--export-json "$RAW/rocs.$r.json" "${a[@]}" >/dev/null 2>>"$RAW/hyperfine.log" ||
		die "hyperfine failed in rollout create+start round $r"
done
"$WORK/rollout-prepare.sh"

# ------------------------------------------------ exec: verifier vs agent

log "rollout: $((ROUNDS * EXEC_K)) agent, verifier and plain execs"
$P run -d --bundle "$RB/rollout" "$RO_ID-ex" </dev/null >/dev/null 2>&1 || die "cannot start the exec rollout"
$P run -d --bundle "$RB/plain" "$RO_ID-exp" </dev/null >/dev/null 2>&1 || die "cannot start the plain exec container"
$P exec --env PROCTOR_PHASE=verifier "$RO_ID-ex" /bin/sh -c 'test -x /tests/test.sh' ||
	die "the verifier exec does not see its mounts"
$P exec "$RO_ID-ex" /bin/sh -c 'test ! -e /tests' || die "the agent exec sees /tests"
for ((r = 0; r < ROUNDS; r++)); do
	cmds=("agent|$P exec $RO_ID-ex /bin/true" "verifier|$P exec --env PROCTOR_PHASE=verifier $RO_ID-ex /bin/true"
		"plain|$P exec $RO_ID-exp /bin/true")
	a=()
	for ((j = 0; j < 3; j++)); do
		c=${cmds[$(((r + j) % 3))]}
		a+=(-n "${c%%|*}" "${c#*|}")
	done
	hyperfine -N -i --style none --warmup 1 --runs "$EXEC_K" --export-json "$RAW/roex.$r.json" "${a[@]}" \
		>/dev/null 2>>"$RAW/hyperfine.log" || die "hyperfine failed in rollout exec round $r"
done
$P delete -f "$RO_ID-ex" >/dev/null 2>&1
$P delete -f "$RO_ID-exp" >/dev/null 2>&1
helpers_gone 10

ro_fail() {
	jq -s --arg c "$2" '[.[].results[] | select(.command == $c) | .exit_codes[] | select(. != 0)] | length' "$RAW/$1".*.json
}

# ------------------------------------------------ N at once

# quantile FILE Q: the Q-quantile (nearest rank) of the numbers in FILE.
quantile() {
	sort -g "$1" | awk -v q="$2" '{ v[NR] = $1 } END { if (NR == 0) exit; i = int(q * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'
}
# mem_available: MemAvailable in KiB.
mem_available() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
# pss_sum PID...: total PSS in KiB of the processes (smaps_rollup).
pss_of() { awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null; }
rss_of() { awk '/^Rss:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null; }

# concurrent PATH N: starts N rollouts at one instant through PATH
# (runtime | podman), one background job each; every job sleeps until the
# same start time, then times its own start with $EPOCHREALTIME (a bash
# builtin: no fork inside the measured span).  Appends a row to CONC_ROWS
# and MEM_ROWS, then removes the rollouts.
CONC_ROWS=() MEM_ROWS=()
concurrent() {
	local path=$1 n=$2 i out=$RAW/rollout-conc-$1-$2.txt t0 mem0 mem1 fails=0 running
	local -a ids=() jobs_=()
	: >"$out"
	for ((i = 0; i < n; i++)); do ids+=("$RO_ID-c$i"); done
	# Each rollout its own rootfs, as an engine gives each container its
	# own: hiding moves the hidden paths out of the rootfs, so rollouts
	# sharing one rootfs directory would race for them (not timed).
	if [ "$path" = runtime ]; then
		rm -rf "$RB/conc"
		for ((i = 0; i < n; i++)); do
			mkdir -p "$RB/conc/$i/b"
			cp -a "$RB/rootfs" "$RB/conc/$i/rootfs"
			cp "$RB/rollout/config.json" "$RB/conc/$i/b/"
		done
	fi
	helpers_gone 20
	sync
	mem0=$(mem_available)
	t0=$(awk -v t="$EPOCHREALTIME" 'BEGIN { printf "%.3f", t + 1.5 + '"$n"' * 0.01 }')
	for ((i = 0; i < n; i++)); do
		(
			sleep "$(awk -v t="$t0" -v n="$EPOCHREALTIME" 'BEGIN { d = t - n; printf "%.3f", (d > 0 ? d : 0) }')"
			s=$EPOCHREALTIME
			if [ "$path" = runtime ]; then
				$P run -d --bundle "$RB/conc/$i/b" "${ids[$i]}" </dev/null >/dev/null 2>>"$RAW/rollout-conc.log"
			else
				podman --runtime "$WORK/podman-rt/proctor" run -d --name "${ids[$i]}" \
					--annotation "run.proctor.rollout=@$RB/policy.json" "$IMAGE" sleep 1800 \
					</dev/null >/dev/null 2>>"$RAW/rollout-conc.log"
			fi
			rc=$?
			echo "$i $rc $s $EPOCHREALTIME" >>"$out"
		) &
		jobs_+=($!)
	done
	# only these jobs: a bare `wait` would also wait for the proxy
	# section's origin and proxies, which live until run.sh exits
	wait "${jobs_[@]}"
	sleep 2
	# Failures: a non-zero exit, or a container that is not running now.
	fails=$(awk '$2 != 0' "$out" | wc -l)
	if [ "$path" = runtime ]; then
		running=$(for i in "${ids[@]}"; do $P state "$i" 2>/dev/null | jq -r .status; done | grep -c '^running$' || true)
	else
		running=$(podman ps --filter "name=^$RO_ID-c" --format '{{.Status}}' | grep -c '^Up' || true)
	fi
	[ "$running" -ge "$n" ] || fails=$((fails > n - running ? fails : n - running))
	awk '{ printf "%.3f\n", ($4 - $3) * 1000 }' "$out" >"$out.ms"
	local wall p50 p99
	wall=$(awk 'NR == 1 { a = $3; b = $4 } { if ($3 < a) a = $3; if ($4 > b) b = $4 } END { printf "%.2f", b - a }' "$out")
	p50=$(quantile "$out.ms" 0.5) p99=$(quantile "$out.ms" 0.99)
	CONC_ROWS+=("| $n | $path | $wall | $p50 | $p99 | $(ratio_of "$p99" "$p50") | $fails |")
	# Idle memory, the rollouts up and idle.
	mem1=$(mem_available)
	local hp pss=0 rss=0 fds=0 nh=0 cm=0 ncm=0 p
	for hp in $(if [ "$path" = runtime ]; then helper_pids; else podman_helper_pids; fi); do
		pss=$((pss + $(pss_of "$hp"))) rss=$((rss + $(rss_of "$hp")))
		fds=$((fds + $(ls "/proc/$hp/fd" 2>/dev/null | wc -l))) nh=$((nh + 1))
	done
	if [ "$path" = podman ]; then
		for i in "${ids[@]}"; do
			p=$(podman inspect --format '{{.State.ConmonPid}}' "$i" 2>/dev/null) || continue
			[ -n "$p" ] && [ "$p" != 0 ] && { cm=$((cm + $(pss_of "$p"))); ncm=$((ncm + 1)); }
		done
	fi
	if [ "$nh" -gt 0 ]; then
		MEM_ROWS+=("| $n | $path | $nh | $((pss / nh)) | $((rss / nh)) | $((fds / nh)) | $([ "$ncm" -gt 0 ] && echo $((cm / ncm)) || echo -) | $(((mem0 - mem1) / n)) |")
	else
		MEM_ROWS+=("| $n | $path | 0 | - | - | - | - | $(((mem0 - mem1) / n)) |")
	fi
	# Remove them (not timed).
	if [ "$path" = runtime ]; then
		jobs_=()
		for i in "${ids[@]}"; do
			$P delete -f "$i" >/dev/null 2>&1 &
			jobs_+=($!)
		done
		wait "${jobs_[@]}"
	else
		podman rm -f -t 0 "${ids[@]}" >/dev/null 2>&1 || true
		for ((i = 0; i < 300; i++)); do
			[ -z "$(pgrep -x proctor-egress | while read -r p; do
				tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$PROCTOR create" && echo "$p"
			done)" ] && break
			sleep 0.1
		done
	fi
	helpers_gone 30 || true
}
ratio_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }

HAVE_PODMAN=0
if command -v podman >/dev/null; then
	podman_setup
	HAVE_PODMAN=1
	podman --runtime "$WORK/podman-rt/proctor" run --rm --annotation "run.proctor.rollout=@$RB/policy.json" \
		"$IMAGE" /bin/true >/dev/null 2>"$RAW/rollout-podman-probe.log" || {
		log "podman cannot run a rollout: $(tail -1 "$RAW/rollout-podman-probe.log"); podman rows skipped"
		HAVE_PODMAN=0
	}
fi
for n in $ROLLOUT_NS; do
	log "rollout: $n at once through the runtime"
	concurrent runtime "$n"
	if [ "$HAVE_PODMAN" = 1 ]; then
		log "rollout: $n at once through podman"
		concurrent podman "$n"
	fi
done

# ------------------------------------------------ the tables

{
	printf '| rollout row | unit | rollout | plain | rollout/plain | runs | failures |\n'
	printf '|---|---|---:|---:|---:|---:|---:|\n'
	va=$(hf_median rocs rollout) vb=$(hf_median rocs plain)
	printf '| create+start (`run -d`), rollout vs the same bundle without the annotation | ms, median | %s | %s | %s | %s | %s |\n' \
		"$va" "$vb" "$(ratio_of "$va" "$vb")" "$(hf_count rocs rollout)" "$(($(ro_fail rocs rollout) + $(ro_fail rocs plain)))"
	va=$(hf_cpu rocs rollout) vb=$(hf_cpu rocs plain)
	printf '| create+start: CPU user+sys of the runtime call | ms, mean | %s | %s | %s | | |\n' "$va" "$vb" "$(ratio_of "$va" "$vb")"
	va=$(hf_median roex verifier) vb=$(hf_median roex agent)
	printf '| exec /bin/true: verifier session vs agent session (same rollout) | ms, median | %s | %s | %s | %s | %s |\n' \
		"$va" "$vb" "$(ratio_of "$va" "$vb")" "$(hf_count roex verifier)" "$(($(ro_fail roex verifier) + $(ro_fail roex agent)))"
	va=$(hf_median roex agent) vb=$(hf_median roex plain)
	printf '| exec /bin/true: agent session vs exec into the plain container | ms, median | %s | %s | %s | %s | %s |\n' \
		"$va" "$vb" "$(ratio_of "$va" "$vb")" "$(hf_count roex agent)" "$(ro_fail roex plain)"
	va=$(hf_cpu roex verifier) vb=$(hf_cpu roex agent)
	printf '| exec: CPU user+sys, verifier vs agent | ms, mean | %s | %s | %s | | |\n' "$va" "$vb" "$(ratio_of "$va" "$vb")"
	printf '\n| N at once | path | wall, s | p50, ms | p99, ms | p99/p50 | failures |\n'
	printf '|---:|---|---:|---:|---:|---:|---:|\n'
	printf '%s\n' "${CONC_ROWS[@]}"
	printf '\n| N idle | path | helpers | helper PSS, KiB each | helper RSS, KiB each | helper fds each | conmon PSS, KiB each | MemAvailable drop, KiB per rollout |\n'
	printf '|---:|---|---:|---:|---:|---:|---:|---:|\n'
	printf '%s\n' "${MEM_ROWS[@]}"
} >"$RO_MD"
