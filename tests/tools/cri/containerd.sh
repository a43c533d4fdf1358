#!/bin/bash
# containerd.sh - a private containerd 1.6 (Debian's) with its CRI plugin,
# for tests/engines/cri.bats and bench/cri.sh.  Nothing is shared with the
# host's containerd: own root, state, sockets, config, CNI network, runtime
# roots and images.
#
#   containerd.sh up DIR      start it (PROCTOR: the runtime under test)
#   containerd.sh down DIR    remove every pod, stop it, remove DIR
#   containerd.sh env DIR     the client's environment, as shell assignments
#   containerd.sh import DIR REF SOURCE...
#                             an image of one layer per SOURCE (a rootfs tar
#                             or a directory, bottom first) as REF
#
# DIR (short: socket paths must fit in sun_path) holds
#   config.toml            version 2: runtime handlers "runc" (Debian's runc)
#                          and "proctor" (runc v2 shim, BinaryName = $PROCTOR,
#                          pod_annotations ["run.proctor.*"]);
#                          restrict_oom_score_adj (no CAP_SYS_RESOURCE here)
#   containerd.sock        the CRI (and containerd) gRPC socket
#   root/ state/           containerd's
#   runc-root/ proctor-root/   each runtime's --root (the shim adds k8s.io/)
#   net.d/ ipam/           the CNI bridge network prt-cri (bridge $CRI_BRIDGE,
#                          subnet $CRI_SUBNET), Debian's containernetworking-plugins
#   pb/                    cri.proto compiled for cri-client.py
#   pods/ logs/            the client's sandbox configs and the pods' logs
#   containerd.log containerd.pid
# Images (namespace k8s.io): localhost/proctor-cri/pause:1, a static
# pause.c built here, is the sandbox image; localhost/proctor/bookworm:latest
# and localhost/proctor/busybox:latest come from the rootfs tarballs that
# tests/images.sh caches.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CLIENT=$here/cri-client.py
CACHE=${PROCTOR_IMAGE_CACHE:-/var/cache/proctor/rootfs}
PAUSE_IMAGE=localhost/proctor-cri/pause:1
: "${CRI_BRIDGE:=prtcri0}"
: "${CRI_SUBNET:=10.213.0.0/24}"
: "${CRI_WAIT:=30}"

log() { printf 'containerd.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() { die "usage: $0 up|down|env DIR, or import DIR REF SOURCE..."; }
[ $# -ge 2 ] || usage
cmd=$1
D=$2
shift 2

client() { CRI_SOCKET=$D/containerd.sock CRI_PB_DIR=$D/pb CRI_STATE=$D/pods CRI_LOG_ROOT=$D/logs \
	timeout -k 5 90 "$CLIENT" "$@"; }
ctr_() { timeout -k 5 120 ctr --address "$D/containerd.sock" -n k8s.io "$@"; }

write_config() {
	cat >"$D/config.toml" <<EOF
version = 2
root = "$D/root"
state = "$D/state"

[grpc]
  address = "$D/containerd.sock"
[ttrpc]
  address = "$D/containerd.sock.ttrpc"
[debug]
  address = "$D/debug.sock"
  level = "info"
[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    # Without CAP_SYS_RESOURCE no process may lower an oom_score_adj below
    # its own: containerd clamps the pause container's -998 to its own.
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    disable_apparmor = true
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$D/net.d"
      max_conf_num = 1
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "$(command -v runc)"
          Root = "$D/runc-root"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.proctor]
        runtime_type = "io.containerd.runc.v2"
        pod_annotations = ["run.proctor.*"]
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.proctor.options]
          BinaryName = "$PROCTOR"
          Root = "$D/proctor-root"
  [plugins."io.containerd.internal.v1.opt"]
    path = "$D/opt"
EOF
	mkdir -p "$D/net.d" "$D/ipam"
	cat >"$D/net.d/10-prt-cri.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "prt-cri",
  "plugins": [
    {"type": "bridge", "bridge": "$CRI_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$D/ipam",
              "ranges": [[{"subnet": "$CRI_SUBNET"}]]}}
  ]
}
EOF
}

# import_image REF [oci-archive options] SOURCE...: the SOURCEs (rootfs
# tars or directories) as the layers of image REF in namespace k8s.io,
# streamed into ctr.
import_image() {
	local ref=$1
	shift
	"$CLIENT" oci-archive --ref "$ref" "$@" | ctr_ images import - >/dev/null ||
		die "ctr images import of $ref failed"
}

up() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || die "PROCTOR must name the runtime binary under test"
	command -v containerd >/dev/null || die "containerd is not installed"
	[ -x /usr/lib/cni/bridge ] || die "no CNI plugins in /usr/lib/cni (containernetworking-plugins)"
	/usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || die "python3-grpcio and python3-grpc-tools are needed"
	! ip route show | grep -q "^$CRI_SUBNET " || die "subnet $CRI_SUBNET is already routed on this host"
	# A failed start leaves nothing running: containerd's log tail, then down.
	trap 'rc=$?; if [ $rc -ne 0 ]; then tail -n 20 "$D/containerd.log" >&2 2>/dev/null; down; fi' EXIT
	mkdir -p "$D"/{pods,logs,pb,runc-root,proctor-root}
	write_config
	"$CLIENT" compile "$D/pb"

	# Not fd 3: from a bats setup_file that is bats's output pipe.
	setsid containerd --config "$D/config.toml" </dev/null >>"$D/containerd.log" 2>&1 3>&- &
	echo $! >"$D/containerd.pid"
	local i
	for i in $(seq 1 $((CRI_WAIT * 5))); do
		client version >/dev/null 2>&1 && break
		kill -0 "$(cat "$D/containerd.pid")" 2>/dev/null || die "containerd exited"
		sleep 0.2
	done
	client version >/dev/null || die "the CRI did not answer in ${CRI_WAIT}s"

	# The sandbox image: one static binary, no shell, no libc.
	mkdir -p "$D/pause-root"
	cc -static -O2 -o "$D/pause-root/pause" "$here/pause.c" || die "cannot build pause.c statically (libc6-dev)"
	import_image "$PAUSE_IMAGE" --entrypoint /pause "$D/pause-root"
	local name
	for name in ${CRI_IMAGES:-bookworm busybox}; do
		[ -f "$CACHE/$name.tar" ] || die "no $CACHE/$name.tar: run tests/images.sh"
		import_image "localhost/proctor/$name:latest" --cmd /bin/sh "$CACHE/$name.tar"
	done
}

down() {
	[ -d "$D" ] || return 0
	local pid
	pid=$(cat "$D/containerd.pid" 2>/dev/null || true)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		client cleanup >/dev/null 2>&1 || log "removing the pods failed; stopping containerd anyway"
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	# Shims of ours still alive (a failed cleanup): their address names DIR.
	local p
	for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $D/containerd.sock" || true); do
		kill -9 "$p" 2>/dev/null || true
	done
	# Whatever containerd left mounted under DIR (snapshots, shm, rootfs).
	awk -v d="$D" 'index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	ip link del "$CRI_BRIDGE" 2>/dev/null || true
	rm -rf "$D"
}

case $cmd in
up) up ;;
down) down ;;
import)
	[ $# -ge 2 ] || usage
	ref=$1
	shift
	import_image "$ref" --cmd /bin/sh "$@"
	;;
env)
	printf 'CRI_SOCKET=%q CRI_PB_DIR=%q CRI_STATE=%q CRI_LOG_ROOT=%q\n' \
		"$D/containerd.sock" "$D/pb" "$D/pods" "$D/logs"
	;;
*) usage ;;
esac
