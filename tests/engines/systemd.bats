#!/usr/bin/env bats
# The systemd cgroup driver (--systemd-cgroup) against a real systemd.  The
# CI host's init is not systemd, so setup_file boots one: the
# localhost/proctor/systemd image (tests/images.sh: bookworm with systemd
# and dbus) as a privileged podman container with /sbin/init as pid 1.
#
# How it boots on a hybrid (cgroup v1 + v2) host: runc, not crun (crun
# refuses private cgroup namespaces on hybrid hosts), a private cgroup
# namespace so systemd's root cgroup is the container's and its units stay
# inside it, and --systemd=false with /run and /tmp as tmpfs and
# container=podman: podman's --systemd=always mode bind-mounts the host's
# whole name=systemd hierarchy there on v1, where the guest systemd would
# then create (and at shutdown remove) cgroups in the host's own tree.
#
# The build directory is mounted read-only at /proctor (the image carries
# the shared libraries proctor links), the bundle at /bundle; proctor runs
# inside with podman exec and is checked with systemctl and the cgroup files.

load helpers

SD_IMAGE=localhost/proctor/systemd

# sd CMD...: run a command inside the systemd container (bounded).
sd() { timeout -k 5 "$ENGINE_TIMEOUT" podman exec "$SD_CTR" "$@"; }
# sdp ARGS: proctor inside the systemd container.
sdp() { sd /proctor/src/proctor "$@"; }

setup_file() {
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || {
		echo "PROCTOR must name the runtime binary under test" >&2
		return 1
	}
	command -v podman >/dev/null || require_or_skip "podman is not installed"
	command -v runc >/dev/null || require_or_skip "runc is not installed (crun cannot boot systemd on hybrid cgroup hosts)"
	PROCTOR_IMAGES="busybox systemd" PROCTOR_NO_DAEMONS=1 "$ENGINES_DIR/../images.sh" >&3 2>&1 || {
		echo "tests/images.sh could not build the systemd image" >&2
		return 1
	}
	# The build tree proctor came from: src/proctor under it.
	BUILD_DIR=$(cd "$(dirname "$PROCTOR")/.." && pwd)
	[ -x "$BUILD_DIR/src/proctor" ] || { echo "cannot find the build tree of $PROCTOR" >&2; return 1; }
	SD_CTR=proctor-systemd-$$
	export SD_CTR BUILD_DIR
	mkdir -p "$BATS_FILE_TMPDIR/bundles"
	timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$(command -v runc)" run -d --name "$SD_CTR" \
		--privileged --cgroupns=private --systemd=false --tmpfs /run --tmpfs /tmp \
		-e container=podman --stop-signal RTMIN+3 \
		-v "$BUILD_DIR:/proctor:ro" -v "$BATS_FILE_TMPDIR/bundles:/bundles" \
		"$SD_IMAGE" /sbin/init >/dev/null || {
		echo "could not start the systemd container" >&2
		return 1
	}
	# "running", or "degraded" when a unit irrelevant here failed.
	local state=
	for _ in $(seq 1 150); do
		state=$(podman exec "$SD_CTR" systemctl is-system-running 2>/dev/null) || true
		case $state in running | degraded) return 0 ;; esac
		sleep 0.2
	done
	echo "systemd did not finish booting in 30 s (state '$state'):" >&2
	podman exec "$SD_CTR" systemctl --failed --no-pager >&2 || true
	return 1
}

teardown_file() {
	[ -n "${SD_CTR:-}" ] && podman rm -f -t 10 "$SD_CTR" >/dev/null 2>&1 || true
}

setup() {
	TEST_DIR=$(mktemp -d /tmp/pre.XXXXXX)
	CID=sd${TEST_DIR##*.}
	CID=${CID,,}
	UNIT=proctor-$CID.scope
	BUNDLE=$BATS_FILE_TMPDIR/bundles/$CID
}

teardown() {
	sdp delete -f "$CID" >/dev/null 2>&1 || true
	rm -rf "$TEST_DIR" "$BUNDLE"
}

# make_bundle CGROUPS_PATH: a busybox bundle running `sleep 1000` with a
# 64 MiB memory limit, placed in CGROUPS_PATH; /bundles/$CID inside.
make_bundle() {
	mkdir -p "$BUNDLE"
	cp -a /var/cache/proctor/rootfs/busybox "$BUNDLE/rootfs"
	(cd "$BUNDLE" && "$PROCTOR" spec)
	jq --arg cg "$1" '.process.terminal = false | .process.args = ["sleep", "1000"]
		| .linux.cgroupsPath = $cg | .linux.resources.memory = {"limit": 67108864}' \
		"$BUNDLE/config.json" >"$BUNDLE/config.json.new"
	mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# unit_prop UNIT PROP: systemctl's value of PROP for UNIT.
unit_prop() { sd systemctl show "$1" -p "$2" --value; }

unit_is_active() { [ "$(unit_prop "$1" ActiveState)" = active ]; }

# scope_dirs: the scope's directory in every hierarchy mounted in the
# systemd container that has one.
scope_dirs() { sd sh -c "ls -d /sys/fs/cgroup/*/system.slice/$UNIT 2>/dev/null" || true; }

@test "systemd: run -d puts the container in a transient scope with its limits; delete stops it" {
	make_bundle "system.slice:proctor:$CID"
	run sdp --systemd-cgroup run -d --bundle "/bundles/$CID" "$CID"
	assert_status 0

	[ "$(unit_prop "$UNIT" ActiveState)" = active ] || fail_with "$UNIT: $(sd systemctl status "$UNIT" --no-pager 2>&1)"
	[ "$(unit_prop "$UNIT" ControlGroup)" = "/system.slice/$UNIT" ]
	[ "$(unit_prop "$UNIT" Delegate)" = yes ]
	[ "$(unit_prop "$UNIT" Slice)" = system.slice ]
	[ "$(unit_prop "$UNIT" MemoryAccounting)" = yes ]

	run sdp state "$CID"
	assert_status 0
	pid=$(jq -r .pid <<<"$output")
	[ "$pid" -gt 0 ] || fail_with "state: $output"
	# systemd's own hierarchy and a controller's both hold the init.
	for h in systemd memory pids unified; do
		procs=$(sd cat "/sys/fs/cgroup/$h/system.slice/$UNIT/cgroup.procs")
		grep -qx "$pid" <<<"$procs" || fail_with "$h: init $pid not in $UNIT (cgroup.procs: $procs)"
	done
	# and systemd lists it as the unit's process
	run sd systemctl status "$UNIT" --no-pager
	[[ "$output" == *"$pid"*sleep* ]] || fail_with "systemctl status: $output"
	# linux.resources still go through cgroupfs, onto the scope's directories.
	[ "$(sd cat "/sys/fs/cgroup/memory/system.slice/$UNIT/memory.limit_in_bytes")" = 67108864 ]

	# The other operations keep working through cgroupfs on the scope.
	run sdp --systemd-cgroup pause "$CID"
	assert_status 0
	[ "$(sd cat "/sys/fs/cgroup/freezer/system.slice/$UNIT/freezer.state")" = FROZEN ]
	run sdp --systemd-cgroup resume "$CID"
	assert_status 0
	run sdp exec "$CID" echo exec-ok
	assert_status 0
	[ "$output" = exec-ok ]

	run sdp --systemd-cgroup delete -f "$CID"
	assert_status 0
	[ "$(unit_prop "$UNIT" LoadState)" = not-found ] ||
		fail_with "$UNIT still loaded: $(sd systemctl status "$UNIT" --no-pager 2>&1)"
	[ -z "$(scope_dirs)" ] || fail_with "cgroup left: $(scope_dirs)"
	run sdp state "$CID"
	[ "$status" -ne 0 ]
}

@test "systemd: crun's --cgroup-manager systemd is the same driver" {
	make_bundle "system.slice:proctor:$CID"
	run sdp --cgroup-manager systemd run -d --bundle "/bundles/$CID" "$CID"
	assert_status 0
	[ "$(unit_prop "$UNIT" ActiveState)" = active ] || fail_with "$UNIT: $(sd systemctl status "$UNIT" --no-pager 2>&1)"
	[ "$(unit_prop "$UNIT" Delegate)" = yes ]
	[ "$(sd cat "/sys/fs/cgroup/memory/system.slice/$UNIT/memory.limit_in_bytes")" = 67108864 ]
	run sdp --cgroup-manager systemd delete -f "$CID"
	assert_status 0
	[ "$(unit_prop "$UNIT" LoadState)" = not-found ] || fail_with "$UNIT still loaded"
	[ -z "$(scope_dirs)" ] || fail_with "cgroup left: $(scope_dirs)"
}

@test "systemd: a slice without .slice fails clearly and leaves no unit, cgroup or state" {
	make_bundle "system:proctor:$CID"
	run sdp --systemd-cgroup run -d --bundle "/bundles/$CID" "$CID"
	[ "$status" -ne 0 ] || fail_with "run succeeded: $output"
	[[ "$output" == *"invalid systemd slice \`system\`: must end in .slice"* ]] || fail_with "output: $output"
	[ "$(unit_prop "$UNIT" LoadState)" = not-found ]
	[ -z "$(sd systemctl list-units --all --no-legend "proctor-$CID*")" ]
	[ -z "$(sd sh -c "ls -d /sys/fs/cgroup/*/system/$UNIT /sys/fs/cgroup/*/system.slice/$UNIT 2>/dev/null" || true)" ]
	run sdp state "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]] || fail_with "state: $output"
}

@test "systemd: a unit that already exists fails the create and is left alone" {
	make_bundle "system.slice:proctor:$CID"
	# Someone else's scope with the container's unit name.
	# (exec -d: the scope's sleep must not hold this test's output open)
	podman exec -d "$SD_CTR" systemd-run --unit "proctor-$CID" --scope --quiet sleep 1000
	wait_until 10 unit_is_active "$UNIT" || fail_with "the other scope did not start"
	run sdp --systemd-cgroup run -d --bundle "/bundles/$CID" "$CID"
	[ "$status" -ne 0 ] || fail_with "run succeeded: $output"
	[[ "$output" == *"unit $UNIT already exists"* ]] || fail_with "output: $output"
	# Not ours: still running, and no state for the failed container.
	[ "$(unit_prop "$UNIT" ActiveState)" = active ]
	run sdp state "$CID"
	[ "$status" -ne 0 ]
	sd systemctl stop "$UNIT"
}

@test "systemd: without a bus daemon the driver talks to systemd's private socket" {
	make_bundle "system.slice:proctor:$CID"
	sd systemctl stop dbus.socket dbus.service
	sd rm -f /run/dbus/system_bus_socket
	run sdp --debug --systemd-cgroup run -d --bundle "/bundles/$CID" "$CID"
	local out=$output st=$status
	sd systemctl start dbus.socket
	[ "$st" -eq 0 ] || fail_with "run: $out"
	[[ "$out" == *"trying /run/systemd/private"* ]] || fail_with "no fallback logged: $out"
	[ "$(unit_prop "$UNIT" ActiveState)" = active ]
	run sdp --systemd-cgroup delete -f "$CID"
	assert_status 0
	[ "$(unit_prop "$UNIT" LoadState)" = not-found ]
}
