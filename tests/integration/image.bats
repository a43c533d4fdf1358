#!/usr/bin/env bats
# Real images: debian bookworm and bullseye (old tools), and a rootfs with
# nothing but one static binary.

load helpers

debian_runs() {
	local image=$1 major=$2
	setup_bundle "$image"
	cfg_args sh -c 'cat /etc/debian_version; ps -e -o pid=,comm= | head -n 1; id -un; ls -d /proc/1 /dev/null /sys/kernel'
	run_ctr
	assert_status 0
	[[ "${lines[0]}" =~ ^$major\.[0-9]+$ ]] || fail_with "debian_version: ${lines[0]}"
	[[ "${lines[1]}" =~ ^\ *1\ sh$ ]] || fail_with "ps: ${lines[1]}"
	[ "${lines[2]}" = root ]
	assert_output_contains /sys/kernel
	# The image itself is untouched by the container.
	[ ! -e "$TEST_DIR/upper/etc/debian_version" ]
}

@test "bookworm image runs (debian_version 12)" {
	debian_runs bookworm 12
}

@test "bullseye image runs (debian_version 11)" {
	debian_runs bullseye 11
}

@test "bookworm: exec and a non-root user with the image's passwd" {
	setup_bundle bookworm
	cfg_args sleep 1000
	create_ctr
	pr start "$CID"
	wait_status "$CID" running
	run pr exec --user 65534:65534 "$CID" sh -c 'id -un; touch /tmp/nobody-file && stat -c %U /tmp/nobody-file'
	assert_status 0
	[ "${lines[0]}" = nobody ]
	[ "${lines[1]}" = nobody ]
}

@test "a rootfs with only one static binary (no /bin, no /etc) runs" {
	setup_bundle empty
	cp "$IMAGE_CACHE/busybox/bin/busybox" "$ROOTFS/sh"
	cfg_set '.process.env = ["PATH=/"]'
	cfg_args /sh -c 'echo static-ok; echo pid=$$; [ -r /proc/self/status ] && echo proc-mounted; for f in /*; do echo "entry $f"; done'
	run_ctr
	assert_status 0
	[ "${lines[0]}" = static-ok ]
	[ "${lines[1]}" = pid=1 ]
	echo "$output" | grep -qx proc-mounted
	echo "$output" | grep -qx 'entry /sh'
	# The rootfs was not given a /bin or /etc by the runtime.
	[ ! -e "$ROOTFS/bin" ]
	[ ! -e "$ROOTFS/etc/passwd" ]
}
