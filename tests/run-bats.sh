#!/bin/bash
# Runs the bats-core suites named on the command line (tests/SUITE/*.bats)
# with TAP output, then prints one summary line totalled over all suites:
#   N passed, N failed[, N skipped]
# Exits non-zero when a test failed or a suite could not run.
#
# Environment: PROCTOR (runtime under test, absolute path), RECVTTY (console
# socket receiver), SECCOMP_LISTENER (seccomp notify agent); BATS_FILTER
# narrows to tests whose name matches a regex;
# BATS_TEST_TIMEOUT (seconds per test, default 180); PROCTOR_REQUIRE_ALL=1
# turns a missing engine, image or tool into failures (tests/require.bash).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || { echo "usage: $0 SUITE..." >&2; exit 2; }

: "${PROCTOR:=$here/../src/proctor}"
: "${RECVTTY:=$here/tools/recvtty}"
: "${SECCOMP_LISTENER:=$here/tools/seccomp-listener}"
export PROCTOR RECVTTY SECCOMP_LISTENER
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-180}

if [ ! -x "$PROCTOR" ]; then
	echo "run-bats.sh: PROCTOR=$PROCTOR is not an executable" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
command -v bats >/dev/null || { echo "run-bats.sh: bats is not installed" >&2; echo "0 passed, 1 failed"; exit 1; }

# The images are cached, so this is quick; it only builds on a cold host.
if [ "$(id -u)" = 0 ]; then
	if ! "$here/images.sh"; then
		echo "run-bats.sh: tests/images.sh failed; tests that need an image will skip (fail with PROCTOR_REQUIRE_ALL=1)" >&2
		[ "${PROCTOR_REQUIRE_ALL:-0}" != 1 ] || images_failed=1
	fi
fi

passed=0 failed=0 skipped=0 broken=${images_failed:-0}
for suite in "$@"; do
	dir=$here/$suite
	shopt -s nullglob
	files=("$dir"/*.bats)
	shopt -u nullglob
	if [ ${#files[@]} -eq 0 ]; then
		echo "run-bats.sh: no tests in $dir" >&2
		broken=$((broken + 1))
		continue
	fi
	echo "# suite $suite (${#files[@]} files)"
	out=$(mktemp)
	filter=()
	[ -n "${BATS_FILTER:-}" ] && filter=(--filter "$BATS_FILTER")
	bats --tap "${filter[@]}" "${files[@]}" </dev/null | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(grep -cE '^ok [0-9]+' "$out")
	s=$(grep -cE '^ok [0-9]+ .*# *skip' "$out")
	f=$(grep -cE '^not ok [0-9]+' "$out")
	rm -f "$out"
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
	# bats failing outside any test (syntax error, setup_file) counts too.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "run-bats.sh: bats exited $rc in suite $suite without a failed test" >&2
		broken=$((broken + 1))
	fi
done

failed=$((failed + broken))
line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ]
