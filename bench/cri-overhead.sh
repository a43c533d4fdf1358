#!/bin/bash
# bench/cri-overhead.sh - what a rollout pod costs beyond its container's
# own processes, measured under containerd 1.6's CRI plugin (not a test:
# nothing is asserted).  Sizes the RuntimeClass overhead in
# contrib/kubernetes/runtimeclass.yaml (docs/kubernetes.md, "RuntimeClass
# overhead").
#
#   bench/cri-overhead.sh          PROCTOR defaults to ./src/proctor
#   PODS=5 IDLE=60 bench/cri-overhead.sh
#
# A private containerd (tests/tools/cri/containerd.sh) runs PODS rollout
# pods under the proctor handler with an allowlist policy (so each has an
# egress helper), each container running `sleep` under a shell.  Once all
# are up, per pod:
#   - the processes of the container's cgroup (the pod's cgroup parent
#     /pod<uid>/<container id>), split into the runtime's (the outer init:
#     the state pid containerd reports; the egress helper: comm
#     proctor-egress) and the container's own (everything else);
#   - Rss and Pss of each from /proc/PID/smaps_rollup (KiB);
#   - CPU at idle: utime+stime (/proc/PID/stat) of the outer init and the
#     helper over IDLE seconds, as millicores;
#   - the container cgroup's memory charge (memory.current, or v1's
#     memory.usage_in_bytes), which includes the helper.
# Prints one line per pod and a summary (max over pods).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
: "${PROCTOR:=$top/src/proctor}"
export PROCTOR=$(readlink -f "$PROCTOR")
PODS=${PODS:-3}
IDLE=${IDLE:-30}
IMAGE=localhost/proctor/bookworm:latest
POLICY='{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["example.invalid"]}}'

# shellcheck source=bench/cri-common.sh
. "$here/cri-common.sh"
cri_bench_up bench/cri-overhead.sh crio
cri() { timeout -k 5 120 "$CRI/cri-client.py" "$@"; }

smaps() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/smaps_rollup"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# cgroup_procs PID: the pids of PID's memory cgroup (v2 or v1).
cgroup_dir() {
	local p
	p=$(awk -F: '$2 == "memory" { print $3 }' "/proc/$1/cgroup")
	if [ -n "$p" ]; then echo "/sys/fs/cgroup/memory$p"; else echo "/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup")"; fi
}
charge() {
	if [ -e "$1/memory.current" ]; then echo $(($(cat "$1/memory.current") / 1024)); else echo $(($(cat "$1/memory.usage_in_bytes") / 1024)); fi
}

ctrs=()
for i in $(seq 1 "$PODS"); do
	pod=$(cri runp --handler proctor --annotation "run.proctor.rollout=$POLICY" "ovh-$i")
	ctr=$(cri create --image "$IMAGE" "$pod" main -- sh -c 'trap "exit 0" TERM; sleep 1000000 & wait')
	cri start "$ctr"
	ctrs+=("$ctr")
done
sleep 2

declare -A init_of helper_of t0_init t0_helper
for ctr in "${ctrs[@]}"; do
	init=$(cri status "$ctr" | jq -r .info.info.pid)
	init_of[$ctr]=$init
	helper_of[$ctr]=""
	for p in $(cat "$(cgroup_dir "$init")/cgroup.procs"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = proctor-egress ] && helper_of[$ctr]=$p
	done
	[ -n "${helper_of[$ctr]}" ] || { echo "no egress helper in the cgroup of $ctr" >&2; exit 1; }
	t0_init[$ctr]=$(ticks "$init")
	t0_helper[$ctr]=$(ticks "${helper_of[$ctr]}")
done
sleep "$IDLE"
hz=$(getconf CLK_TCK)

printf '| pod | outer init RSS / PSS, KiB | helper RSS / PSS, KiB | container processes PSS, KiB | container cgroup charge, KiB | runtime CPU at idle, millicores |\n'
printf '|---:|---:|---:|---:|---:|---:|\n'
i=0
max_pss=0 max_rss=0 max_cpu=0
for ctr in "${ctrs[@]}"; do
	i=$((i + 1))
	init=${init_of[$ctr]} helper=${helper_of[$ctr]}
	own=0
	for p in $(cat "$(cgroup_dir "$init")/cgroup.procs"); do
		[ "$p" = "$init" ] || [ "$p" = "$helper" ] || own=$((own + $(smaps "$p" Pss)))
	done
	dt=$(($(ticks "$init") - t0_init[$ctr] + $(ticks "$helper") - t0_helper[$ctr]))
	# millicores = ticks / hz / IDLE * 1000
	mc=$(awk -v t="$dt" -v hz="$hz" -v s="$IDLE" 'BEGIN { printf "%.2f", t / hz / s * 1000 }')
	ir=$(smaps "$init" Rss) ip=$(smaps "$init" Pss) hr=$(smaps "$helper" Rss) hp=$(smaps "$helper" Pss)
	printf '| %d | %d / %d | %d / %d | %d | %d | %s |\n' "$i" "$ir" "$ip" "$hr" "$hp" "$own" "$(charge "$(cgroup_dir "$init")")" "$mc"
	[ $((ip + hp)) -le "$max_pss" ] || max_pss=$((ip + hp))
	[ $((ir + hr)) -le "$max_rss" ] || max_rss=$((ir + hr))
	max_cpu=$(awk -v a="$mc" -v b="$max_cpu" 'BEGIN { print (a > b) ? a : b }')
done
printf '\nruntime per pod (outer init + egress helper), max over %d pods: PSS %d KiB, RSS %d KiB, idle CPU %s millicores (%d s window, CLK_TCK %d)\n' \
	"$PODS" "$max_pss" "$max_rss" "$max_cpu" "$IDLE" "$hz"
