#!/usr/bin/env bats
# OCI hooks: the six kinds, their order, the state on stdin, the namespace
# each runs in, failure and timeout.

load helpers

# A hook script that works with the host's sh and with busybox sh (for the
# hooks run inside the container): appends "KIND STATUS PID MNTNS" to LOG.
write_hook() {
	cat >"$ROOTFS/hook.sh" <<-'H'
	#!/bin/sh
	state=$(cat)
	status=$(printf '%s' "$state" | sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p')
	pid=$(printf '%s' "$state" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
	echo "$1 $status ${pid:-none} $(readlink /proc/self/ns/mnt)" >>"$2"
	H
	chmod 755 "$ROOTFS/hook.sh"
}

# all_hooks: one hook of each kind, each logging through hook.sh; startContainer runs in the
# container, so its path and log are container paths.
all_hooks() {
	local r=$ROOTFS
	cfg_set --arg r "$r" '
		def h(k): {"path": ($r + "/hook.sh"), "args": ["hook.sh", k, ($r + "/hooklog")]};
		def c(k): {"path": "/hook.sh", "args": ["hook.sh", k, "/hooklog"]};
		.hooks = {"prestart": [h("prestart")], "createRuntime": [h("createRuntime")],
			"createContainer": [h("createContainer")], "startContainer": [c("startContainer")],
			"poststart": [h("poststart")], "poststop": [h("poststop")]}'
}

@test "all six hooks run at the right step with the container's state" {
	setup_bundle busybox
	write_hook
	all_hooks
	cfg_args sh -c 'cat /hooklog >/startlog; exec sleep 1000'
	hostmnt=$(readlink /proc/self/ns/mnt)

	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	pid=$(state_of "$CID" pid)
	ctrmnt=$(readlink "/proc/$pid/ns/mnt")
	mapfile -t log <"$ROOTFS/hooklog"
	[ "${#log[@]}" -ge 3 ] || fail_with "after create: $(cat "$ROOTFS/hooklog")"
	[ "${log[0]}" = "prestart creating $pid $hostmnt" ] || fail_with "${log[0]}"
	[ "${log[1]}" = "createRuntime creating $pid $hostmnt" ] || fail_with "${log[1]}"
	# createContainer runs in the container's mount namespace.  The pid is
	# the host's view; runc passes 1 (the pid in the container's namespace).
	[[ "${log[2]}" =~ ^createContainer\ creating\ ($pid|1)\ "$ctrmnt"$ ]] || fail_with "${log[2]}"
	if [ "${#log[@]}" -gt 3 ]; then
		# runc 1.1 runs poststart hooks in create (fixed in runc 1.2); the
		# spec runs them in start, after the user process has started.
		runtime_is runc && [ "${#log[@]}" -eq 4 ] && [[ "${log[3]}" == poststart* ]] ||
			fail_with "extra hooks at create: $(cat "$ROOTFS/hooklog")"
	fi

	pr start "$CID"
	wait_status "$CID" running
	wait_file "$ROOTFS/startlog"
	mapfile -t log <"$ROOTFS/hooklog"
	[ "${#log[@]}" -eq 5 ] || fail_with "after start: $(cat "$ROOTFS/hooklog")"
	start_hook=$(printf '%s\n' "${log[@]:3}" | grep '^startContainer ')
	post_hook=$(printf '%s\n' "${log[@]:3}" | grep '^poststart ')
	[[ "$start_hook" =~ ^startContainer\ created\ ($pid|1)\ "$ctrmnt"$ ]] || fail_with "$start_hook"
	[[ "$post_hook" =~ ^poststart\ (created|running)\ $pid\ "$hostmnt"$ ]] || fail_with "$post_hook"
	# startContainer ran before the user process (which copied the log).
	grep -q '^startContainer ' "$ROOTFS/startlog"
	# runc 1.1 runs poststart early (see above), so only a spec-following
	# runtime is held to the order.
	if ! runtime_is runc; then
		[[ "${log[3]}" == startContainer* ]] || fail_with "poststart before startContainer"
		if grep -q '^poststart ' "$ROOTFS/startlog"; then
			fail_with "poststart ran before the process"
		fi
	fi

	pr kill "$CID" KILL
	wait_status "$CID" stopped
	pr delete "$CID"
	mapfile -t log <"$ROOTFS/hooklog"
	[ "${#log[@]}" -eq 6 ] || fail_with "after delete: $(cat "$ROOTFS/hooklog")"
	[[ "${log[5]}" =~ ^poststop\ stopped\ [0-9a-z]+\ "$hostmnt"$ ]] || fail_with "${log[5]}"
	assert_no_leftovers "$CID"
}

@test "hooks get the state on stdin, their args and env" {
	setup_bundle busybox
	cfg_set --arg d "$TEST_DIR" '.hooks = {"prestart": [{"path": "/bin/sh",
		"args": ["sh", "-c", "cat >\"$0/state.json\"; echo \"$1 $HOOKVAR\" >\"$0/hookenv\"", $d, "arg-one"],
		"env": ["HOOKVAR=from-hook-env", "PATH=/usr/bin:/bin"]}]}'
	cfg_args true
	create_ctr || fail_with "create: $(cat "$TEST_DIR/$CID.err")"
	pid=$(state_of "$CID" pid)
	[ "$(jq -r .id "$TEST_DIR/state.json")" = "$CID" ]
	[ "$(jq -r .pid "$TEST_DIR/state.json")" = "$pid" ]
	[ "$(jq -r .bundle "$TEST_DIR/state.json")" = "$BUNDLE" ]
	[ -n "$(jq -r .ociVersion "$TEST_DIR/state.json")" ]
	[ "$(cat "$TEST_DIR/hookenv")" = "arg-one from-hook-env" ]
}

@test "a failing prestart hook makes create fail and leaves nothing" {
	setup_bundle busybox
	cfg_set --arg d "$TEST_DIR" '.hooks = {"prestart": [{"path": "/bin/sh",
		"args": ["sh", "-c", "echo ran >\"$0/ran\"; exit 3", $d]}]}'
	cfg_args sleep 1000
	run create_ctr
	[ "$status" -ne 0 ]
	[ -e "$TEST_DIR/ran" ]
	run pr state "$CID"
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
}

@test "a prestart hook that outlives its timeout fails create" {
	setup_bundle busybox
	marker=3$RANDOM.5
	cfg_set --arg m "$marker" '.hooks = {"prestart": [{"path": "/bin/sleep", "args": ["sleep", $m], "timeout": 1}]}'
	cfg_args sleep 1000
	SECONDS=0
	run create_ctr
	elapsed=$SECONDS
	[ "$status" -ne 0 ]
	[ "$elapsed" -lt 15 ] || fail_with "create took ${elapsed}s"
	run pr state "$CID"
	[ "$status" -ne 0 ]
	assert_no_leftovers "$CID"
	# The hook itself was killed.
	if pgrep -f "sleep $marker" >/dev/null; then
		fail_with "the timed-out hook is still running"
	fi
}
