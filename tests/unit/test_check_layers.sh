#!/bin/sh
# test_check_layers.sh - proves tests/tools/check-layers.py can fail: on a
# copy of the tree's src/ and libcrun-compat/ it must pass unchanged, then
# fail, naming the planted line, for each of: an upward include (base ->
# lifecycle), a sibling include (linux -> cgroup), the crun annotations
# reaching above config (-> linux), and a source file in a folder
# src/LAYERS does not list.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=$root/tests/tools/check-layers.py
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_check_layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

fresh() {
	rm -rf "$tmp/tree" && mkdir "$tmp/tree" &&
		cp -R "$root/src" "$root/libcrun-compat" "$tmp/tree/"
}

# expect NAME WANT: the check on the copy exits 1 and prints exactly WANT.
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

# plant FILE LINE: appends an include line to FILE of the copy; prints
# the new line's number.
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
n=$(plant src/base/util.c '#include "../lifecycle/state.h"')
expect "upward include" "src/base/util.c:$n includes src/lifecycle/state.h: base may not include lifecycle"

fresh
n=$(plant src/linux/mount.c '#include "../cgroup/cgroup.h"')
expect "sibling include" "src/linux/mount.c:$n includes src/cgroup/cgroup.h: linux may not include cgroup"

fresh
n=$(plant libcrun-compat/annotations.c '#include "../src/linux/caps.h"')
expect "crun annotations above config" \
	"libcrun-compat/annotations.c:$n includes src/linux/caps.h: crun-annotations may not include linux"

fresh
mkdir "$tmp/tree/src/extra" && echo 'int x;' >"$tmp/tree/src/extra/x.c"
expect "file in no layer" "src/extra/x.c is in no layer of src/LAYERS"

[ "$failures" -eq 0 ]
