#!/bin/bash
# The main job, end to end on a fresh Debian 12 machine as root: installs
# what is needed, builds proctor, builds the test images, and runs a
# container from the bookworm image under podman with proctor as its
# runtime, printing what the container sees.
set -euo pipefail
cd "$(dirname "$0")/.."

tests/setup-host.sh
[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure
make -j2
proctor=$PWD/src/proctor

echo "=== podman --runtime $proctor run --rm localhost/proctor/bookworm"
podman --runtime "$proctor" run --rm localhost/proctor/bookworm \
	sh -c 'echo "debian $(cat /etc/debian_version), pid $$, $(id)"; grep -E "^(Cap(Eff|Bnd)|NoNewPrivs|Seccomp):" /proc/self/status'
