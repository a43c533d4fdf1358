#!/bin/sh
# test_rollout_seam.sh - proves tests/tools/check-rollout-seam.py can fail:
# on a copy of src/ it must pass unchanged, then fail, naming the planted
# line, for a rollout branch put back into lifecycle/exec.c (a phase
# test) or container.c (an `if (c->rollout)` as it had before
# src/rollout/lifecycle.h) and for an include of another rollout header.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=$root/tests/tools/check-rollout-seam.py
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_rollout_seam.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

fresh() {
	rm -rf "$tmp/tree" && mkdir "$tmp/tree" && cp -R "$root/src" "$tmp/tree/"
}

expect() {
	out=$("$check" --root "$tmp/tree" 2>/dev/null)
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$out" = "$2" ]; then
		echo "ok - $1"
	else
		echo "not ok - $1: exit $rc, output:"
		printf '%s\n' "$out" | sed 's/^/#   /'
		echo "#   wanted exit 1 and: $2"
		failures=$((failures + 1))
	fi
}

plant() {
	printf '%s\n' "$2" >>"$tmp/tree/$1"
	wc -l <"$tmp/tree/$1" | tr -d ' '
}

fresh
if "$check" --root "$tmp/tree" >"$tmp/out" 2>&1; then
	echo "ok - the unchanged copy passes"
else
	echo "not ok - the unchanged copy fails:"
	sed 's/^/#   /' "$tmp/out"
	failures=$((failures + 1))
fi

fresh
n=$(plant src/lifecycle/exec.c 'static int f (struct exec_ctx *c) { return c->plan.phase != PR_PHASE_AGENT; }')
expect "a phase branch in exec.c" "src/lifecycle/exec.c:$n: phase
src/lifecycle/exec.c:$n: PR_PHASE_AGENT"

fresh
n=$(plant src/lifecycle/container.c 'static void g (struct create_ctx *c) { if (c->rollout) pr_network_stop (c->state_dirfd); }')
expect "a rollout branch in container.c" "src/lifecycle/container.c:$n: rollout
src/lifecycle/container.c:$n: pr_network_stop"

fresh
n=$(plant src/lifecycle/exec.c '#include "../rollout/network.h"')
expect "a rollout header other than lifecycle.h" "src/lifecycle/exec.c:$n: includes ../rollout/network.h"

fresh
printf '/* the verifier token */ static const char *s = "rollout phase";\n' >>"$tmp/tree/src/lifecycle/sync.c"
if "$check" --root "$tmp/tree" >"$tmp/out" 2>&1; then
	echo "ok - comments and strings are not branches"
else
	echo "not ok - comments and strings counted:"
	sed 's/^/#   /' "$tmp/out"
	failures=$((failures + 1))
fi

[ "$failures" -eq 0 ]
