#!/bin/bash
# bench/cri.sh - CRI latencies of the proctor and runc runtime handlers
# under containerd 1.6's CRI plugin (not a test: nothing is asserted).
#
#   bench/cri.sh                  PROCTOR defaults to ./src/proctor
#   ROUNDS=10 PER_ROUND=5 bench/cri.sh
#
# A private containerd (tests/tools/cri/containerd.sh: own root, state,
# socket, CNI bridge, pause image) runs pods the way the kubelet does
# (tests/tools/cri/cri-client.py bench): per pod RunPodSandbox,
# CreateContainer (bookworm, `sleep 1000`), StartContainer, ExecSync of
# `true`, then StopPodSandbox and RemovePodSandbox (not timed).  Three
# handlers: runc (Debian's runc), proctor (a plain pod) and "proctor
# rollout" (the same pod with a no-network rollout annotation).  The
# handlers are interleaved: each round runs PER_ROUND pods of each, in an
# order that rotates from round to round, so load from anything else on
# the machine lands on all of them alike.  Medians are over every pod of
# every round.  Prints a markdown table (the rows docs/performance.md
# shows) and writes the raw samples to bench/results/cri.json.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
: "${PROCTOR:=$top/src/proctor}"
export PROCTOR=$(readlink -f "$PROCTOR")
ROUNDS=${ROUNDS:-6}
PER_ROUND=${PER_ROUND:-5}
IMAGE=localhost/proctor/bookworm:latest
ROLLOUT='run.proctor.rollout={"version": 1, "environment": {"network_mode": "none"}}'

# shellcheck source=bench/cri-common.sh
. "$here/cri-common.sh"
cri_bench_up bench/cri.sh crib

mkdir -p "$top/bench/results"
raw=$(mktemp)
names=(runc proctor "proctor rollout")
run_one() {
	case $1 in
	runc) "$CRI/cri-client.py" bench --handler runc --image "$IMAGE" -n "$PER_ROUND" ;;
	proctor) "$CRI/cri-client.py" bench --handler proctor --image "$IMAGE" -n "$PER_ROUND" ;;
	"proctor rollout") "$CRI/cri-client.py" bench --handler proctor --image "$IMAGE" -n "$PER_ROUND" --annotation "$ROLLOUT" ;;
	esac | jq -c --arg n "$1" '. + {name: $n}'
}
# One warm-up pod per handler (image unpack, first shim), not counted.
for n in "${names[@]}"; do PER_ROUND=1 run_one "$n" >/dev/null; done
for r in $(seq 0 $((ROUNDS - 1))); do
	for i in 0 1 2; do
		run_one "${names[$(((r + i) % 3))]}" >>"$raw"
	done
done
jq -s '.' "$raw" >"$top/bench/results/cri.json"
rm -f "$raw"

/usr/bin/python3 - "$top/bench/results/cri.json" "$(nproc)" "$(containerd --version | awk '{print $3}')" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))
rpcs = ["RunPodSandbox", "CreateContainer", "StartContainer", "ExecSync"]
by = {}
for r in runs:
    for k in rpcs:
        by.setdefault(r["name"], {}).setdefault(k, []).extend(r[k]["samples_ms"])
n = len(next(iter(by.values()))["ExecSync"])
print("CRI latencies, containerd %s, %s cpus, %d pods per handler (medians, ms)\n" % (sys.argv[3], sys.argv[2], n))
print("| handler | " + " | ".join(rpcs) + " |")
print("|---|" + "---:|" * len(rpcs))
for name in ["runc", "proctor", "proctor rollout"]:
    print("| %s | %s |" % (name, " | ".join("%.1f" % statistics.median(by[name][k]) for k in rpcs)))
PY
