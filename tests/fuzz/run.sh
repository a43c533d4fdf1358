#!/bin/bash
# Builds the libFuzzer targets tests/fuzz/fuzz_*.c with clang
# (-fsanitize=fuzzer,address,undefined, outside automake's CC), replays each
# target's regression inputs (tests/fuzz/regressions/NAME/*: every crash
# ever found, kept so it stays fixed), then fuzzes each target for a bounded
# time from its seed corpus (tests/fuzz/corpus/NAME/).
#
# Usage: tests/fuzz/run.sh [NAME...]      (default: every fuzz_*.c)
# Environment:
#   FUZZ_SECONDS  seconds of fuzzing per target (default 30; 0 = replay only)
#   FUZZ_SEED     libFuzzer seed for every target (a positive integer);
#                 default: a random one per run, printed first, so that
#                 each run explores different inputs and a failing run can
#                 be repeated with FUZZ_SEED=N (and the same corpus)
#   FUZZ_BUILD    build and work directory (default: a directory under
#                 /tmp named after the source tree, so nothing lands in it)
#   FUZZ_SRCDIR   source tree (default: this script's ../..)
#   FUZZ_CONFIG_H directory holding configure's config.h (default: the
#                 current directory when it has one)
#   CLANG         compiler (default clang)
# A crash leaves its input in $FUZZ_BUILD/artifacts/; copy it into
# tests/fuzz/regressions/NAME/ once fixed.  Exit status: non-zero when a
# target failed to build, a regression input crashed, or fuzzing crashed.
# Last line: "fuzz: N passed, N failed" (one per target).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=${FUZZ_SRCDIR:-$(cd "$here/../.." && pwd)}
out=${FUZZ_BUILD:-${TMPDIR:-/tmp}/proctor-fuzz.$(printf '%s' "$src" | md5sum | cut -c1-8)}
seconds=${FUZZ_SECONDS:-30}
cc=${CLANG:-clang}
confdir=${FUZZ_CONFIG_H:-}
[ -z "$confdir" ] && [ -f "$PWD/config.h" ] && confdir=$PWD
[ -z "$confdir" ] && [ -f "$src/config.h" ] && confdir=$src

if [ -n "${FUZZ_SEED:-}" ]; then
	[[ "$FUZZ_SEED" =~ ^[1-9][0-9]{0,8}$ ]] || { echo "fuzz: FUZZ_SEED must be an integer from 1 to 999999999, not '$FUZZ_SEED'" >&2; echo "fuzz: 0 passed, 1 failed"; exit 1; }
	seed=$FUZZ_SEED
	seed_from="from FUZZ_SEED"
else
	# Not libFuzzer's -seed=0 (a seed per target, only in each target's
	# log): one seed for the whole run, printed here and in a crash report.
	seed=$(( $(od -An -N4 -tu4 /dev/urandom) % 999999999 + 1 ))
	seed_from="random"
fi
echo "fuzz: seed $seed ($seed_from; FUZZ_SEED=$seed repeats this run)"

command -v "$cc" >/dev/null || { echo "fuzz: $cc not found (apt-get install clang)" >&2; echo "fuzz: 0 passed, 1 failed"; exit 1; }
[ -n "$confdir" ] || { echo "fuzz: no config.h: run ./configure first" >&2; echo "fuzz: 0 passed, 1 failed"; exit 1; }

pkgs="yajl libseccomp libcap libselinux libmnl libevent"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=gnu11 -g -O1 -w -I$confdir -iquote $src/src -DHAVE_CONFIG_H $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -levent_core"

mkdir -p "$out/obj" "$out/artifacts" "$out/work"

# The library: every .c of libproctor_la_SOURCES in Makefile.am, built once
# with coverage instrumentation (fuzzer-no-link) and sanitizers.  Targets
# link against the archive, so each pulls in only the objects it needs.
lib_srcs=$(sed -n '/^libproctor_la_SOURCES/,/^[^\t ]/p' "$src/Makefile.am" | tr ' \t\\' '\n\n\n' | grep '\.c$')
build_lib() {
	local f o rc=0 running=0 jobs
	jobs=$(nproc)
	for f in $lib_srcs; do
		o=$out/obj/$(echo "$f" | tr / _).o
		if [ -f "$o" ] && [ ! "$src/$f" -nt "$o" ] && [ -z "$(find "$src/src" -name '*.h' -newer "$o" -print -quit)" ]; then
			continue
		fi
		# shellcheck disable=SC2086
		$cc -fsanitize=fuzzer-no-link $san $cflags -c "$src/$f" -o "$o" &
		running=$((running + 1))
		if [ "$running" -ge "$jobs" ]; then
			wait -n || rc=1
			running=$((running - 1))
		fi
	done
	while [ "$running" -gt 0 ]; do
		wait -n || rc=1
		running=$((running - 1))
	done
	[ $rc -eq 0 ] || return 1
	rm -f "$out/libfuzzproctor.a"
	# shellcheck disable=SC2046
	ar rcs "$out/libfuzzproctor.a" $(for f in $lib_srcs; do echo "$out/obj/$(echo "$f" | tr / _).o"; done)
}

echo "fuzz: building the library with $($cc --version | head -n 1)"
if ! build_lib; then
	echo "fuzz: library build failed" >&2
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi

if [ $# -gt 0 ]; then
	names=("$@")
else
	names=()
	for f in "$here"/fuzz_*.c; do
		n=$(basename "$f" .c)
		names+=("${n#fuzz_}")
	done
fi

passed=0 failed=0
for name in "${names[@]}"; do
	bin=$out/fuzz_$name
	echo "=== fuzz_$name"
	# shellcheck disable=SC2086
	if ! $cc -fsanitize=fuzzer $san $cflags "$here/fuzz_$name.c" "$out/libfuzzproctor.a" $libs -o "$bin"; then
		echo "fuzz_$name: build failed"
		failed=$((failed + 1))
		continue
	fi
	opts=(-rss_limit_mb=2048 -timeout=10 -malloc_limit_mb=1024 -print_final_stats=0)
	regs=$here/regressions/$name
	if compgen -G "$regs/*" >/dev/null; then
		if ! "$bin" "${opts[@]}" "$regs"/* >"$out/work/$name.replay.log" 2>&1; then
			echo "fuzz_$name: a regression input fails again:"
			tail -n 40 "$out/work/$name.replay.log"
			failed=$((failed + 1))
			continue
		fi
		echo "fuzz_$name: $(find "$regs" -type f | wc -l) regression inputs pass"
	fi
	if [ "$seconds" -gt 0 ]; then
		# New inputs go to a work corpus outside the tree; the seed corpus
		# in tests/fuzz/corpus/NAME is only read.
		mkdir -p "$out/work/$name" "$here/corpus/$name"
		dict=()
		[ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
		if ! "$bin" "${opts[@]}" "${dict[@]}" -seed="$seed" -max_total_time="$seconds" \
			-artifact_prefix="$out/artifacts/$name-" \
			"$out/work/$name" "$here/corpus/$name" >"$out/work/$name.log" 2>&1; then
			echo "fuzz_$name: CRASH with seed $seed (FUZZ_SEED=$seed repeats the run; input kept in $out/artifacts/):"
			grep -E 'ERROR|SUMMARY|runtime error|contract|Test unit written' "$out/work/$name.log" | head -n 20
			tail -n 60 "$out/work/$name.log"
			failed=$((failed + 1))
			continue
		fi
		echo "fuzz_$name: ${seconds}s clean, $(grep -oE '#[0-9]+' "$out/work/$name.log" | tail -n 1 | tr -d '#') runs, $(ls "$out/work/$name" | wc -l) corpus entries"
	fi
	passed=$((passed + 1))
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
