#!/bin/bash
# Prepares a Debian 12 host (as root) to build proctor and run its tests:
# installs the build and test packages, gives podman containers sane default
# ulimits, starts dockerd and containerd, and builds the test images.  Safe
# to run again: every step is idempotent.
set -euo pipefail

log() { printf 'setup-host.sh: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "error: must run as root"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)

PACKAGES=(
	autoconf automake libtool pkg-config gcc make
	libseccomp-dev libcap-dev libyajl-dev libmnl-dev libselinux1-dev
	libevent-dev libcmocka-dev libsystemd-dev nettle-dev
	bats podman crun runc debootstrap busybox-static uidmap iproute2
	jq python3 python3-yaml curl docker.io containerd iptables tini go-md2man
	util-linux procps file clang libclang-rt-dev man-db
	containernetworking-plugins python3-grpcio python3-grpc-tools libc6-dev
	libnftables1 nodejs default-jdk-headless golang-go git
)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q "${missing[@]}"
else
	log "all packages present"
fi

# podman's default nofile limit comes from the daemon's own; pin it so the
# tests (and containers under test) see the same values on every host.
# Merge into an existing file rather than replacing it.
conf=/etc/containers/containers.conf
ulimits='default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]'
mkdir -p /etc/containers
if [ ! -e "$conf" ]; then
	printf '[containers]\n%s\n' "$ulimits" >"$conf"
elif grep -q '^[[:space:]]*default_ulimits[[:space:]]*=' "$conf"; then
	sed -i "s|^[[:space:]]*default_ulimits[[:space:]]*=.*|$ulimits|" "$conf"
elif grep -q '^[[:space:]]*\[containers\]' "$conf"; then
	sed -i "0,/^[[:space:]]*\[containers\]/s||[containers]\n$ulimits|" "$conf"
else
	printf '\n[containers]\n%s\n' "$ulimits" >>"$conf"
fi

# dockerd and containerd (no systemd here): started before the images so
# tests/images.sh imports them into both.  The engine suites call it again
# with PROCTOR set, which points their "proctor" runtime at the binary.
"$here/engines/start-daemons.sh"

"$here/images.sh"
log "host ready"
