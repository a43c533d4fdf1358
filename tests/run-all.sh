#!/bin/bash
# The project's test command (README, .ci/run): prepares the host (packages,
# containers.conf, test images), builds proctor from this checkout and runs
# every suite: `make check` runs the C unit tests, then the bats integration
# and engine suites (tests/run-bats.sh), whose last line is
# "N passed, N failed[, N skipped]".  Runs as root on Debian 12.
set -euo pipefail
exec </dev/null

cd "$(dirname "$0")/.."
start=$SECONDS
section() { printf '\n=== [%s +%ss] %s\n' "$(date -u +%H:%M:%S)" "$((SECONDS - start))" "$*"; }

section "host: $(uname -srm), $(. /etc/os-release && echo "$PRETTY_NAME"), $(nproc) cpus"

section "setup host (packages, containers.conf, test images)"
tests/setup-host.sh

section "autogen + configure"
./autogen.sh
./configure

section "build"
make -j2

section "make check (unit tests, integration and engine suites)"
log=$(mktemp)
rc=0
# Hard stop well inside CI's limit, so a hung test still reports.
timeout --kill-after=60 70m make check 2>&1 | tee "$log" || rc=$?
if [ "$rc" -ne 0 ]; then
	section "failure details"
	for f in test-suite.log tests/unit/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 100 "$f"; }
	done
fi

section "done in $((SECONDS - start))s (make check exit $rc)"
# Repeat the suites' totals last, where CI reads them.
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1 || true)
rm -f "$log"
[ -n "$summary" ] && echo "$summary"
exit "$rc"
