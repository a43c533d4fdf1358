# Helpers for the engine suites: drive a real container engine with the
# runtime under test ($PROCTOR, an absolute path).  The engines keep their
# own default storage; the test images are localhost/proctor/* (tests/images.sh).

bats_require_minimum_version 1.5.0

# pm ARGS: podman with the runtime under test.
pm() { podman --runtime "$PROCTOR" "$@"; }

setup_file() {
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || {
		echo "PROCTOR must name the runtime binary under test" >&2
		return 1
	}
	[ "$(id -u)" = 0 ] || { echo "the engine tests need root" >&2; return 1; }
}

setup() {
	command -v podman >/dev/null || skip "podman is not installed"
	TEST_DIR=$(mktemp -d /tmp/pre.XXXXXX)
	NAME=prt-${TEST_DIR##*.}
	NAMES=()
}

teardown() {
	local n
	for n in "${NAMES[@]}"; do
		pm rm -f -t 0 "$n" >/dev/null 2>&1 || podman rm -f "$n" >/dev/null 2>&1 || true
	done
	rm -rf "$TEST_DIR"
}

# need_image NAME: skip unless localhost/proctor/NAME exists.
need_image() {
	podman image exists "localhost/proctor/$1" || skip "no image localhost/proctor/$1: run tests/images.sh"
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

# in_pty CMD...: run CMD with a pseudo-terminal as its stdin/stdout (util-linux
# script), so `-t` gets a real terminal to relay.
in_pty() {
	local cmd
	printf -v cmd '%q ' "$@"
	script -qec "$cmd" /dev/null </dev/null
}
