#!/bin/sh
# test_fault_hook.sh - the test-only crash hook (PROCTOR_TEST_CRASH_AT,
# src/lifecycle/container.c test_crash_at) is in the proctor binary exactly
# when configure had --enable-fault-injection.  FAULT_INJECTION (yes|no,
# set by Makefile.am from configure) says which build this is; tests/run-all.sh
# runs this test in both: its test build has the hook, its sanitizer build
# is configured without it, as a release build is.
#
# Checked twice: the variable's name is (or is not) in the binary, and, as
# root, a create with PROCTOR_TEST_CRASH_AT=state-dir is (or is not) killed
# by SIGKILL (exit 137) at its first step.
set -u
here=$(cd "$(dirname "$0")" && pwd)
proctor=${PROCTOR:-$here/../../src/proctor}
want=${FAULT_INJECTION:?FAULT_INJECTION must be yes or no (set by Makefile.am)}
failures=0

[ -x "$proctor" ] || { echo "not ok - no proctor binary at $proctor"; exit 1; }

if grep -q PROCTOR_TEST_CRASH_AT "$proctor"; then has=yes; else has=no; fi
if [ "$has" = "$want" ]; then
	echo "ok - PROCTOR_TEST_CRASH_AT in the binary: $has (--enable-fault-injection: $want)"
else
	echo "not ok - PROCTOR_TEST_CRASH_AT in the binary: $has, but --enable-fault-injection: $want"
	failures=$((failures + 1))
fi

if [ "$(id -u)" != 0 ]; then
	echo "ok - # SKIP the create check needs root"
	exit "$failures"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_fault_hook.XXXXXX") || exit 1
root=$tmp/state
id=prt-fault-hook-$$
cleanup() {
	"$proctor" --root "$root" delete --force "$id" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
mkdir -p "$tmp/bundle/rootfs" "$root"
(cd "$tmp/bundle" && "$proctor" spec) || { echo "not ok - proctor spec failed"; exit 1; }
# No console: create then needs no console socket (spec writes "terminal": true).
sed -i 's/"terminal": *true/"terminal": false/' "$tmp/bundle/config.json"

PROCTOR_TEST_CRASH_AT=state-dir "$proctor" --root "$root" create --bundle "$tmp/bundle" "$id" \
	</dev/null >"$tmp/out" 2>&1
rc=$?
# 128 + SIGKILL, as the shell reports a process the signal ended.
if [ "$want" = yes ] && [ "$rc" -eq 137 ]; then
	echo "ok - create with PROCTOR_TEST_CRASH_AT=state-dir was killed at that step"
elif [ "$want" = no ] && [ "$rc" -ne 137 ]; then
	echo "ok - a build without the hook ignores PROCTOR_TEST_CRASH_AT (create exited $rc, not killed)"
else
	echo "not ok - create with PROCTOR_TEST_CRASH_AT=state-dir exited $rc (--enable-fault-injection: $want)"
	sed 's/^/#   /' "$tmp/out"
	failures=$((failures + 1))
fi
exit "$failures"
