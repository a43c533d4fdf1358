#!/bin/bash
# The project's test command (README, .ci/run): prepares the host (packages,
# containers.conf, test images), builds proctor from this checkout and runs
# every suite: the C unit tests once more in an out-of-tree ASan+UBSan build
# (configure --enable-sanitizers, make check-TESTS), then `make check` (the
# unit tests, then the bats integration, engine and security suites via
# tests/run-bats.sh, whose last line is "N passed, N failed[, N skipped]"),
# then `make fuzz` (every libFuzzer target for FUZZ_SECONDS, default 30,
# plus its regression inputs).  Runs as root on Debian 12.
set -euo pipefail
exec </dev/null

cd "$(dirname "$0")/.."
start=$SECONDS
# Everything the suites need is installed below: a test that would skip for
# a missing engine, image or tool fails instead (tests/require.bash).
export PROCTOR_REQUIRE_ALL=1
section() { printf '\n=== [%s +%ss] %s\n' "$(date -u +%H:%M:%S)" "$((SECONDS - start))" "$*"; }

section "host: $(uname -srm), $(. /etc/os-release && echo "$PRETTY_NAME"), $(nproc) cpus"

section "setup host (packages, containers.conf, test images)"
tests/setup-host.sh

section "fuzzing toolchain (clang, libFuzzer runtime)"
if ! command -v clang >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
	apt-get install -y clang libclang-rt-dev || { apt-get update && apt-get install -y clang libclang-rt-dev; } ||
		echo "run-all.sh: could not install clang; make fuzz will fail" >&2
fi

section "autogen"
./autogen.sh

# The unit tests once more with AddressSanitizer and UBSan, in a build
# directory outside the tree.  configure refuses an out-of-tree build of a
# source dir that was configured in place, so a developer's configured tree
# is first exported (tracked and new files) to a clean copy.
section "unit tests with ASan+UBSan (out-of-tree build)"
asan_rc=0
asan_top=$(mktemp -d /tmp/proctor-asan.XXXXXX)
asan_src=$PWD
if [ -f config.status ]; then
	asan_src=$asan_top/src
	mkdir -p "$asan_src"
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$asan_src"
	(cd "$asan_src" && ./autogen.sh >/dev/null 2>&1)
fi
mkdir -p "$asan_top/build-asan"
(
	cd "$asan_top/build-asan" &&
		"$asan_src/configure" --enable-sanitizers >configure.out 2>&1 &&
		make -j2 >make.out 2>&1 &&
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 make check-TESTS
) || asan_rc=$?
if [ "$asan_rc" -ne 0 ]; then
	section "ASan build failure details"
	for f in "$asan_top"/build-asan/{configure.out,make.out,test-suite.log} "$asan_top"/build-asan/tests/unit/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 60 "$f"; }
	done
fi
rm -rf "$asan_top"

section "configure"
# The build under test has the test-only crash hook that
# tests/security/faults.bats drives (PROCTOR_TEST_CRASH_AT); a release build
# (plain ./configure) lacks it.  The sanitizer build above is configured
# without it, so tests/unit/test_fault_hook.sh checks both kinds.
./configure --enable-fault-injection

section "build"
make -j2

section "make check (unit tests, integration, engine and security suites)"
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

section "fuzz (each target ${FUZZ_SECONDS:-30}s, then its regression inputs)"
fuzz_rc=0
timeout --kill-after=30 15m make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-30}" || fuzz_rc=$?

[ "$rc" -eq 0 ] && [ "$asan_rc" -ne 0 ] && rc=$asan_rc
[ "$rc" -eq 0 ] && [ "$fuzz_rc" -ne 0 ] && rc=$fuzz_rc
section "done in $((SECONDS - start))s (make check exit $rc, asan unit tests $asan_rc, fuzz $fuzz_rc)"
# Repeat the suites' totals last, where CI reads them.
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1 || true)
rm -f "$log"
[ -n "$summary" ] && echo "$summary"
exit "$rc"
