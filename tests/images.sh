#!/bin/bash
# Builds the test root filesystems into a cache outside the tree and imports
# them into podman.  Idempotent and fast when the cache is warm.
#
#   /var/cache/proctor/rootfs/busybox      busybox-static, tester user 1000
#   /var/cache/proctor/rootfs/bookworm     debootstrap --variant=minbase
#   /var/cache/proctor/rootfs/bullseye     debootstrap --variant=minbase
#   /var/cache/proctor/rootfs/systemd      bookworm minbase plus systemd and
#                                          dbus, booted by tests/engines/systemd.bats
#                                          (podman only: no engine test runs it)
#   /var/cache/proctor/rootfs/NAME.tar     a tarball of each
#   podman: localhost/proctor/{busybox,bookworm,bullseye,systemd}
#   docker and containerd (namespace "default"): the same names with :latest,
#   when their daemons run (tests/engines/start-daemons.sh starts them)
#
# Each rootfs is built in a temporary directory and renamed into place, so an
# interrupted run never leaves a half-built tree behind; a lock serialises
# concurrent runs.  PROCTOR_IMAGES="busybox bookworm" narrows the set,
# PROCTOR_NO_PODMAN=1 skips the podman import and PROCTOR_NO_DAEMONS=1 the
# docker and containerd imports.
set -euo pipefail

CACHE=${PROCTOR_IMAGE_CACHE:-/var/cache/proctor/rootfs}
IMAGES=${PROCTOR_IMAGES:-busybox bookworm bullseye systemd}
# Bump when a recipe below changes: cached trees with another stamp are rebuilt.
RECIPE_VERSION=1
# The systemd image's own recipe, so changing it leaves the others cached.
SYSTEMD_RECIPE_VERSION=1

recipe_version() {
	if [ "$1" = systemd ]; then echo "$RECIPE_VERSION.$SYSTEMD_RECIPE_VERSION"; else echo "$RECIPE_VERSION"; fi
}

log() { printf 'images.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

# The Debian mirror this host already uses, read from its apt sources (deb822
# or one-line format); the first non-security URI wins.
debian_mirror() {
	local uri=""
	if [ -r /etc/apt/sources.list.d/debian.sources ]; then
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { if ($i !~ /security/) { print $i; exit } } }' \
			/etc/apt/sources.list)
	fi
	if [ -z "$uri" ]; then
		uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }')
	fi
	[ -n "$uri" ] || die "cannot find a Debian mirror in /etc/apt/sources.list{,.d}"
	printf '%s\n' "$uri"
}

build_busybox() {
	local dir=$1 bb
	bb=$(command -v busybox || true)
	[ -x /bin/busybox ] && bb=/bin/busybox
	[ -n "$bb" ] || die "busybox not installed (apt-get install busybox-static)"
	file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
		ldd "$bb" 2>&1 | grep -q 'not a dynamic' || die "$bb is not static (install busybox-static)"
	mkdir -p "$dir"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,home/tester,var,run}
	cp "$bb" "$dir/bin/busybox"
	chroot "$dir" /bin/busybox --install -s
	chmod 1777 "$dir/tmp"
	chmod 700 "$dir/root"
	cat >"$dir/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
tester:x:1000:1000:tester:/home/tester:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
P
	cat >"$dir/etc/group" <<'G'
root:x:0:
tester:x:1000:
nogroup:x:65534:
G
	chown 1000:1000 "$dir/home/tester"
}

build_debian() {
	local dir=$1 suite=$2 mirror
	mirror=$(debian_mirror)
	log "debootstrap $suite from $mirror"
	debootstrap --variant=minbase --include=procps "$suite" "$dir" "$mirror" \
		>"$dir.debootstrap.log" 2>&1 || { tail -n 30 "$dir.debootstrap.log" >&2; return 1; }
	rm -f "$dir.debootstrap.log"
	# Keep the image small and deterministic: no apt lists or package cache.
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
}

# A bookworm that boots: systemd as init and a system bus, so the systemd
# cgroup driver can be tested on hosts whose own init is not systemd.
# Units that need hardware or a network are masked: in a container they only
# fail and slow the boot down.
build_systemd() {
	local dir=$1 mirror u
	mirror=$(debian_mirror)
	log "debootstrap bookworm (systemd) from $mirror"
	debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,procps,libmnl0 bookworm "$dir" "$mirror" \
		>"$dir.debootstrap.log" 2>&1 || { tail -n 30 "$dir.debootstrap.log" >&2; return 1; }
	rm -f "$dir.debootstrap.log"
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
	for u in systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket \
		systemd-networkd.service systemd-resolved.service systemd-timesyncd.service \
		getty.target console-getty.service apt-daily.timer apt-daily-upgrade.timer \
		e2scrub_reap.service; do
		ln -sf /dev/null "$dir/etc/systemd/system/$u"
	done
	: >"$dir/etc/machine-id"
}

build_one() {
	local name=$1 final="$CACHE/$1" stamp="$CACHE/.$1.version" tmp
	if [ -d "$final" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$(recipe_version "$name")" ] &&
		[ -f "$CACHE/$name.tar" ]; then
		return 0
	fi
	log "building $name"
	tmp=$(mktemp -d "$CACHE/.build-$name.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp' '$tmp.debootstrap.log'" EXIT
	rmdir "$tmp"
	case $name in
	busybox) build_busybox "$tmp" ;;
	bookworm | bullseye) build_debian "$tmp" "$name" ;;
	systemd) build_systemd "$tmp" ;;
	*) die "unknown image $name" ;;
	esac
	tar -C "$tmp" --numeric-owner -cf "$CACHE/.$name.tar.tmp" .
	rm -rf "$final.old"
	[ -d "$final" ] && mv "$final" "$final.old"
	mv "$tmp" "$final"
	mv "$CACHE/.$name.tar.tmp" "$CACHE/$name.tar"
	recipe_version "$name" >"$stamp"
	rm -rf "$final.old"
	trap - EXIT
	# A rebuilt tree makes the podman image stale.
	if command -v podman >/dev/null; then
		podman rmi -f "localhost/proctor/$name" >/dev/null 2>&1 || true
	fi
	if docker_up; then
		/usr/bin/docker rmi -f "localhost/proctor/$name:latest" >/dev/null 2>&1 || true
	fi
	if containerd_up; then
		ctr -n default images rm "localhost/proctor/$name:latest" >/dev/null 2>&1 || true
	fi
	log "built $name"
}

import_one() {
	local name=$1 ref="localhost/proctor/$1"
	[ "${PROCTOR_NO_PODMAN:-0}" = 1 ] && return 0
	command -v podman >/dev/null || { log "podman not installed: skipping import of $name"; return 0; }
	podman image exists "$ref" && return 0
	log "importing $ref"
	podman import -q --change CMD=/bin/sh "$CACHE/$name.tar" "$ref" >/dev/null
}

docker_up() { [ -x /usr/bin/docker ] && /usr/bin/docker version >/dev/null 2>&1; }
containerd_up() { command -v ctr >/dev/null && ctr version >/dev/null 2>&1; }

# docker: `docker import` of the same tarball (Debian's 20.10 client, not a
# newer one that may come first on PATH).
import_docker() {
	local name=$1 ref="localhost/proctor/$1:latest"
	/usr/bin/docker image inspect "$ref" >/dev/null 2>&1 && return 0
	log "importing $ref into docker"
	/usr/bin/docker import -c 'CMD ["/bin/sh"]' "$CACHE/$name.tar" "$ref" >/dev/null
}

# containerd: a docker-archive saved by podman (ctr reads its RepoTags).
import_containerd() {
	local name=$1 ref="localhost/proctor/$1:latest" tmp
	ctr -n default images check "name==$ref" 2>/dev/null | grep -q complete && return 0
	command -v podman >/dev/null || { log "podman not installed: cannot import $name into containerd"; return 0; }
	log "importing $ref into containerd"
	tmp=$(mktemp "$CACHE/.ctr-$name.XXXXXX")
	rm -f "$tmp"
	podman save -q --format docker-archive -o "$tmp" "localhost/proctor/$name" &&
		ctr -n default images import "$tmp" >/dev/null
	local rc=$?
	rm -f "$tmp"
	return $rc
}

# Remove leftovers of interrupted runs (we hold the lock, so none is live).
rm -rf "$CACHE"/.build-* "$CACHE"/.*.tar.tmp "$CACHE"/.ctr-*

for name in $IMAGES; do
	build_one "$name"
done
for name in $IMAGES; do
	import_one "$name"
done
if [ "${PROCTOR_NO_DAEMONS:-0}" != 1 ]; then
	for name in $IMAGES; do
		[ "$name" = systemd ] && continue
		if docker_up; then import_docker "$name"; fi
		if containerd_up; then import_containerd "$name"; fi
	done
fi
log "images ready in $CACHE"
