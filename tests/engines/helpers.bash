# Helpers for the engine suites: drive a real container engine with the
# runtime under test ($PROCTOR, an absolute path).  The engines keep their
# own default storage; the test images are localhost/proctor/* (tests/images.sh)
# in podman, docker and containerd's "default" namespace.
#
# A suite sets ENGINE (podman, docker or containerd; podman when unset)
# before `load helpers`.  docker and containerd run as daemons that
# tests/engines/start-daemons.sh starts (setup_file calls it; it is
# idempotent); their "proctor" runtime is /run/proctor-ci/proctor, a symlink
# that script points at $PROCTOR.

bats_require_minimum_version 1.5.0
source "$(dirname "${BASH_SOURCE[0]}")/../require.bash"

: "${ENGINE:=podman}"
ENGINES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Debian's docker 20.10 client: a newer docker CLI may come first on PATH.
DOCKER_BIN=${DOCKER_BIN:-/usr/bin/docker}
CTR_NS=default
# Every engine call that could hang is bounded: a hang is a failure.
ENGINE_TIMEOUT=${ENGINE_TIMEOUT:-90}

# pm ARGS: podman with the runtime under test.
pm() { timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$PROCTOR" "$@"; }
# dk ARGS: docker 20.10 (container runs add --runtime proctor themselves).
dk() { timeout -k 5 "$ENGINE_TIMEOUT" "$DOCKER_BIN" "$@"; }
# cr ARGS: ctr in the test namespace.
cr() { timeout -k 5 "$ENGINE_TIMEOUT" ctr -n "$CTR_NS" "$@"; }
# crun_ ARGS: `ctr run` through the runc v2 shim with proctor as its binary.
ctr_run() { cr run --runtime io.containerd.runc.v2 --runc-binary "$PROCTOR" "$@"; }

# engine_setup_file: what every engine suite's setup_file does (a suite
# with its own setup_file calls it first).
setup_file() { engine_setup_file; }

engine_setup_file() {
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || {
		echo "PROCTOR must name the runtime binary under test" >&2
		return 1
	}
	[ "$(id -u)" = 0 ] || { echo "the engine tests need root" >&2; return 1; }
	case $ENGINE in
	docker | containerd)
		# Starts what is missing and points the "proctor" runtime at $PROCTOR.
		"$ENGINES_DIR/start-daemons.sh" >&3 2>&1 || {
			echo "tests/engines/start-daemons.sh failed (logs in /var/log/proctor-ci)" >&2
			return 1
		}
		PROCTOR_IMAGES="busybox bookworm" PROCTOR_NO_PODMAN=1 \
			"$ENGINES_DIR/../images.sh" >&3 2>&1 || {
			# need_image reports the missing image per test.
			echo "tests/images.sh failed for $ENGINE" >&2
			[ "${PROCTOR_REQUIRE_ALL:-0}" != 1 ] || return 1
		}
		;;
	esac
}

setup() {
	case $ENGINE in
	podman) command -v podman >/dev/null || require_or_skip "podman is not installed" ;;
	docker) "$DOCKER_BIN" version >/dev/null 2>&1 || require_or_skip "dockerd is not running" ;;
	containerd) ctr version >/dev/null 2>&1 || require_or_skip "containerd is not running" ;;
	esac
	TEST_DIR=$(mktemp -d /tmp/pre.XXXXXX)
	NAME=prt-${TEST_DIR##*.}
	NAME=${NAME,,}
	NAMES=()
}

# engine_teardown: what every engine test's teardown does (a suite with
# its own teardown calls it last).
teardown() { engine_teardown; }

engine_teardown() {
	local n
	for n in "${NAMES[@]}"; do
		case $ENGINE in
		podman) pm rm -f -t 0 "$n" >/dev/null 2>&1 || podman rm -f "$n" >/dev/null 2>&1 || true ;;
		docker) dk rm -f "$n" >/dev/null 2>&1 || true ;;
		containerd)
			cr task kill -s SIGKILL "$n" >/dev/null 2>&1 || true
			cr task delete -f "$n" >/dev/null 2>&1 || true
			cr container delete "$n" >/dev/null 2>&1 || true
			;;
		esac
	done
	rm -rf "$TEST_DIR"
}

# image NAME: the engine's reference for test image NAME.
image() {
	case $ENGINE in
	podman) echo "localhost/proctor/$1" ;;
	*) echo "localhost/proctor/$1:latest" ;;
	esac
}

# need_image NAME: skip (fail under PROCTOR_REQUIRE_ALL=1) unless the
# engine has test image NAME.
need_image() {
	local ref
	ref=$(image "$1")
	case $ENGINE in
	podman) podman image exists "$ref" ;;
	docker) "$DOCKER_BIN" image inspect "$ref" >/dev/null 2>&1 ;;
	containerd) ctr -n "$CTR_NS" images check "name==$ref" 2>/dev/null | grep -q complete ;;
	esac || require_or_skip "no image $ref in $ENGINE: run tests/images.sh"
}

# freezer_state PID: FROZEN or THAWED, read from the cgroup of host process
# PID (the v1 freezer when mounted, else cgroup2's cgroup.freeze).
freezer_state() {
	local path
	path=$(sed -n 's/^[0-9]*:freezer://p' "/proc/$1/cgroup")
	if [ -n "$path" ] && [ -f "/sys/fs/cgroup/freezer$path/freezer.state" ]; then
		cat "/sys/fs/cgroup/freezer$path/freezer.state"
		return
	fi
	path=$(sed -n 's/^0:://p' "/proc/$1/cgroup")
	case $(cat "/sys/fs/cgroup$path/cgroup.freeze" 2>/dev/null) in
	1) echo FROZEN ;;
	0) echo THAWED ;;
	*) echo "no freezer for pid $1" ;;
	esac
}

# track_name NAME: teardown removes container NAME.
track_name() { NAMES+=("$1"); }

fail_with() {
	echo "$*" >&2
	return 1
}

assert_status() {
	[ "$status" -eq "$1" ] || fail_with "status $status, wanted $1; output: $output"
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}

# in_pty CMD...: run CMD with a pseudo-terminal as its stdin/stdout (util-linux
# script), so `-t` gets a real terminal to relay.  The terminal is 0x0 (as
# script makes it without an outer terminal); in_pty_sized sets a size.
# script(1) runs the command line with $SHELL -c: bash is named because
# printf %q writes $'...' for arguments with newlines, which dash (the
# /bin/sh a CI job without SHELL gets) reads as a literal string.
in_pty() {
	local cmd
	printf -v cmd '%q ' "$@"
	SHELL=/bin/bash timeout -k 5 "$ENGINE_TIMEOUT" script -qec "$cmd" /dev/null </dev/null
}

# in_pty_sized ROWS COLS CMD...: in_pty with a ROWSxCOLS terminal, the size
# an engine's -t client reads and forwards.
in_pty_sized() {
	local rows=$1 cols=$2 cmd
	shift 2
	printf -v cmd '%q ' "$@"
	SHELL=/bin/bash timeout -k 5 "$ENGINE_TIMEOUT" script -qec "stty rows $rows cols $cols; $cmd" /dev/null </dev/null
}

# The shell snippet run by the tty checks, inside the container: the tty's
# name, its size once the engine has applied it (clients resize just after
# start), whether /dev/tty opens, and whether the shell's process group is
# the terminal's foreground group (field 5 pgrp == field 8 tpgid of stat).
# Prints "tty=... size=R C devtty=ok fg=yes".
TTY_PROBE='s=; for i in $(seq 1 25); do s=$(stty size 2>/dev/null) && [ -n "$s" ] && [ "$s" != "0 0" ] && break; sleep 0.2; done
set -- $(cut -d" " -f5,8 /proc/$$/stat)
fg=no; [ "$1" = "$2" ] && fg=yes
d=bad; (exec 9</dev/tty) 2>/dev/null && d=ok
echo "tty=$(tty) size=$s devtty=$d fg=$fg"'

# assert_tty_probe ROWS COLS: $output (from TTY_PROBE) shows a pts of
# ROWSxCOLS that opens as /dev/tty and whose foreground group is the shell's.
assert_tty_probe() {
	local out
	# (docker's client may write a NUL before the first byte of output)
	out=$(printf '%s\n' "$output" | tr -d '\r\0' | grep -o 'tty=.*' | tail -n 1)
	[[ "$out" =~ ^tty=/dev/pts/[0-9]+\ size=$1\ $2\ devtty=ok\ fg=yes$ ]] ||
		fail_with "tty probe: '$out'; full output: $output"
}

# The seccomp profile the --security-opt tests load: everything allowed but
# mkdir/mkdirat, which fail with EPERM (engine JSON format, as podman and
# docker read it).
write_seccomp_profile() {
	cat >"$1" <<'EOF'
{
	"defaultAction": "SCMP_ACT_ALLOW",
	"architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
	"syscalls": [
		{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}
	]
}
EOF
}

# free_port: a TCP port nobody on the host listens on.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# http_get URL: the body at URL, retried for up to 15 s while the server
# inside the container starts.
http_get() {
	local i
	for i in $(seq 1 75); do
		curl -fsS --max-time 2 "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	curl -fsS --max-time 2 "$1"
}
