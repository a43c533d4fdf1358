# shellcheck shell=bash
# bench/cri-common.sh - sourced by the CRI benchmarks (cri.sh,
# cri-overhead.sh): checks root and the binary, builds the test images,
# starts a containerd of the benchmark's own (tests/tools/cri/containerd.sh)
# under state dir D and cgroup parent PARENT, removes both on exit, and
# exports the CRI client's environment.
# cri_bench_up NAME TAG: NAME names the script in errors; TAG makes the
# state dir /run/prt-TAG.XXXXXX and the cgroup parent /prt-TAG-XXXXXX.
# Needs top (the checkout) and PROCTOR set; sets CRI, D and PARENT.
# shellcheck disable=SC2154 # top is the sourcing script's
cri_bench_up() {
	local name=$1 tag=$2
	CRI=$top/tests/tools/cri
	[ "$(id -u)" = 0 ] || { echo "$name: must run as root" >&2; exit 1; }
	[ -x "$PROCTOR" ] || { echo "$name: PROCTOR=$PROCTOR is not an executable" >&2; exit 1; }
	PROCTOR_IMAGES="busybox bookworm" PROCTOR_NO_PODMAN=1 PROCTOR_NO_DAEMONS=1 "$top/tests/images.sh"
	D=$(mktemp -d "/run/prt-$tag.XXXXXX")
	PARENT=/prt-$tag-${D##*.}
	trap cri_bench_down EXIT
	CRI_IMAGES=bookworm "$CRI/containerd.sh" up "$D"
	eval "export $("$CRI/containerd.sh" env "$D")"
	export CRI_CGROUP_PARENT=$PARENT
}

# cri_bench_down: stops that containerd and removes the cgroup parent.
cri_bench_down() {
	"$CRI/containerd.sh" down "$D" || true
	local d
	for d in /sys/fs/cgroup/*/"$PARENT" /sys/fs/cgroup/unified/"$PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}
