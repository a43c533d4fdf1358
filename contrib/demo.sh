#!/bin/bash
# The main job, end to end, on a fresh Debian 12 machine as root: a graded
# rollout of an example task under podman with proctor as its runtime.
#
#   contrib/demo.sh [TASK]       prepare the host (packages, containers.conf,
#                                base images), build proctor, build TASK's
#                                image (default: apt-allowlist) and run it
#                                with its oracle solution through
#                                contrib/rollout/proctor-rollout, printing the
#                                agent phase, the verifier phase, the verdict
#                                and the egress log
#   contrib/demo.sh --all        every task in contrib/tasks/, oracle and empty
#                                agent, as a table (`make demo`)
#   contrib/demo.sh --adversarial
#                                the adversarial task under proctor and under
#                                plain runc without a policy, side by side
#
# With PROCTOR set to a built binary (as `make demo` does) the host setup and
# the build are skipped; the base images are still checked (tests/images.sh,
# quick when cached).  Exit status: 0 when every run completed and every
# oracle run scored 1 (and every empty run 0), else 1; for one task, 0 when
# its oracle run scored 1.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
driver=$top/contrib/rollout/proctor-rollout
tasks=$top/contrib/tasks
canary_port=39217

prepare() {
	if [ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ]; then
		PROCTOR_IMAGES="bookworm bullseye" PROCTOR_NO_DAEMONS=1 tests/images.sh
		return
	fi
	echo "=== preparing the host (tests/setup-host.sh)"
	tests/setup-host.sh
	echo "=== building proctor"
	[ -x configure ] || ./autogen.sh
	[ -f Makefile ] || ./configure
	make -j2
	PROCTOR=$top/src/proctor
}

# The egress helper refuses addresses in special-purpose ranges, and on
# some machines the Debian mirror resolves into one: the operator's
# PROCTOR_EGRESS_REACHABLE names its addresses, resolved now (never
# written anywhere), through a wrapper podman runs as the runtime.
# The wrapper's directory goes when the script ends (every mode: a trap
# set here, replaced by start_canary's, which calls this too).
demo_rt=
cleanup_wrapper() { [ -z "$demo_rt" ] || rm -rf "$demo_rt"; }

reach_mirror() {
	# shellcheck source=../tests/mirror.bash
	source "$top/tests/mirror.bash"
	demo_rt=$(mktemp -d /tmp/proctor-demo-rt.XXXXXX)
	egress_wrapper "$demo_rt/proctor" "$PROCTOR"
	PROCTOR=$demo_rt/proctor
	trap cleanup_wrapper EXIT
}

# contrib/tasks/prebuilt-image names a prebuilt [environment] docker_image,
# which the driver uses as it is and never builds: build it here from the
# task's recipe (quick when cached).
prebuilt_image() {
	echo "=== building localhost/proctor-task-prebuilt:latest (prebuilt-image's docker_image)"
	podman build --runtime "$PROCTOR" -q -t localhost/proctor-task-prebuilt:latest \
		"$tasks/prebuilt-image/environment" >/dev/null
}

# The adversarial task's "reach the host" trick needs something on the host
# to reach: host-canary.py, on all addresses, for the length of this script.
start_canary() {
	if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $canary_port)) != 0)"; then
		echo "=== port $canary_port is already taken: assuming a host canary runs there"
		return
	fi
	python3 "$tasks/adversarial/host-canary.py" "$canary_port" &
	canary_pid=$!
	trap 'kill "$canary_pid" 2>/dev/null || true; cleanup_wrapper' EXIT
	sleep 0.3
}

# run_task OUT_JSON LOG ARGS...: one driver run, its output kept in LOG.
run_task() {
	local json=$1 log=$2
	shift 2
	"$driver" --runtime "$PROCTOR" --json "$json" "$@" >"$log" 2>&1 || true
}

field() { python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
e = r.get("egress") or {}
v = {"reward": "-" if r.get("reward") is None else format(r["reward"], "g"),
     "seconds": r.get("seconds", "-"),
     "egress": "%s/%s" % (e.get("allowed", 0), e.get("denied", 0)),
     "status": r.get("status", "error")}
print(v[sys.argv[2]])' "$1" "$2" 2>/dev/null || echo -; }

all_tasks() {
	prepare
	reach_mirror
	start_canary
	prebuilt_image
	local out fails=0 t
	out=$(mktemp -d /tmp/proctor-demo.XXXXXX)
	export PROCTOR_JOBS_DIR=$out/jobs
	echo "=== running every task in contrib/tasks with proctor ($PROCTOR); logs in $out"
	for t in "$tasks"/*/; do
		t=$(basename "$t")
		[ -f "$tasks/$t/task.toml" ] || continue
		printf '    %-18s oracle...' "$t"
		run_task "$out/$t.oracle.json" "$out/$t.oracle.log" "$tasks/$t"
		printf ' empty agent...'
		run_task "$out/$t.empty.json" "$out/$t.empty.log" --agent none "$tasks/$t"
		echo " done"
	done
	echo
	printf '%-18s %-7s %-8s %-16s %-13s %s\n' task reward seconds egress-allow/deny empty-reward result
	printf '%-18s %-7s %-8s %-16s %-13s %s\n' ---- ------ ------- ----------------- ------------ ------
	for t in "$tasks"/*/; do
		t=$(basename "$t")
		[ -f "$out/$t.oracle.json" ] || continue
		local r e ok=ok
		r=$(field "$out/$t.oracle.json" reward)
		e=$(field "$out/$t.empty.json" reward)
		if [ "$r" != 1 ] || [ "$e" != 0 ]; then
			ok=FAIL
			fails=$((fails + 1))
		fi
		printf '%-18s %-7s %-8s %-16s %-13s %s\n' "$t" "$r" "$(field "$out/$t.oracle.json" seconds)" \
			"$(field "$out/$t.oracle.json" egress)" "$e" "$ok"
	done
	echo
	echo "oracle runs should score 1 and empty-agent runs 0: $fails task(s) did not"
	[ "$fails" = 0 ]
}

adversarial() {
	prepare
	reach_mirror
	start_canary
	local out
	out=$(mktemp -d /tmp/proctor-demo.XXXXXX)
	export PROCTOR_JOBS_DIR=$out/jobs
	echo "=== adversarial task under proctor (rollout policy)"
	run_task "$out/proctor.json" "$out/proctor.log" "$tasks/adversarial"
	echo "=== adversarial task under runc, no policy (--no-rollout --runtime runc)"
	"$driver" --no-rollout --runtime runc --json "$out/runc.json" "$tasks/adversarial" >"$out/runc.log" 2>&1 || true
	echo
	printf '%-14s %-10s %s\n' trick proctor runc
	printf '%-14s %-10s %s\n' ----- ------- ----
	local trick p r
	for trick in read-tests write-verdict squat-3129 host environ procroot; do
		p=$(grep -m1 -E "^   \| $trick +(refused|SUCCEEDED|not tried)" "$out/proctor.log" | awk '{print $3}')
		r=$(grep -m1 -E "^   \| $trick +(refused|SUCCEEDED|not tried)" "$out/runc.log" | awk '{print $3}')
		printf '%-14s %-10s %s\n' "$trick" "${p:--}" "${r:--}"
	done
	r=$(field "$out/runc.json" reward)
	grep -q "reward.txt is now '1' (the verifier wrote 0)" "$out/runc.log" && r="$r (forged: the verifier wrote 0)"
	printf '%-14s %-10s %s\n' reward "$(field "$out/proctor.json" reward)" "$r"
	echo "(full logs: $out/proctor.log $out/runc.log)"
	[ "$(field "$out/proctor.json" reward)" = 1 ]
}

one_task() {
	local t=${1:-apt-allowlist}
	[ -f "$tasks/$t/task.toml" ] || { echo "demo.sh: no task $tasks/$t" >&2; exit 2; }
	prepare
	reach_mirror
	[ "$t" != prebuilt-image ] || prebuilt_image
	local json rc=0
	json=$(mktemp /tmp/proctor-demo.XXXXXX.json)
	echo "=== contrib/rollout/proctor-rollout --runtime $PROCTOR contrib/tasks/$t"
	"$driver" --runtime "$PROCTOR" --json "$json" "$tasks/$t" || rc=$?
	local reward
	reward=$(field "$json" reward)
	rm -f "$json"
	[ "$rc" -eq 0 ] || { echo "demo.sh: the driver exited $rc" >&2; return "$rc"; }
	[ "$reward" = 1 ] || { echo "demo.sh: the oracle solution scored $reward, not 1" >&2; return 1; }
}

case ${1:-} in
--all) all_tasks ;;
--adversarial) adversarial ;;
-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*) one_task "${1:-}" ;;
esac
