#!/usr/bin/env bats
# The rollout annotation, part 1 (SPEC section 2: policy, phases, identity,
# filesystem), through podman with a real Debian image.  The task image is
# bookworm plus what a terminal-bench task has: /tests and /logs baked in,
# and a non-root USER 1000 whose workdir only that user may write.

load helpers

TASK_IMAGE=localhost/proctor/rollout-task

setup_file() {
	[ -x "${PROCTOR:-}" ] || return 1
	podman image exists "$TASK_IMAGE" && return 0
	local ctx
	ctx=$(mktemp -d)
	cat >"$ctx/Containerfile" <<'CF'
FROM localhost/proctor/bookworm
RUN useradd -m -u 1000 -s /bin/sh agent \
 && mkdir -p /tests /logs/verifier /work \
 && printf '#!/bin/sh\necho image-copy\n' > /tests/test.sh && chmod +x /tests/test.sh \
 && echo stale > /logs/verifier/reward.txt \
 && chown agent:agent /work && chmod 0700 /work
USER 1000
WORKDIR /work
CF
	podman build --runtime "$PROCTOR" -q -t "$TASK_IMAGE" "$ctx" >&3
	rm -rf "$ctx"
}

# policy FILE JSON: writes a policy file.
policy() { printf '%s\n' "$2" >"$1"; }

# start_rollout POLICY_FILE [podman run args...]: a running rollout.
start_rollout() {
	local pol=$1
	shift
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$pol" "$@" "$TASK_IMAGE" sleep 1000
	assert_status 0
}

write_task_dirs() {
	mkdir -p "$TEST_DIR/tests" "$TEST_DIR/verdict"
	printf '#!/bin/sh\necho real-tests\necho 1 > /logs/verifier/reward.txt\n' >"$TEST_DIR/tests/test.sh"
	chmod +x "$TEST_DIR/tests/test.sh"
	chmod 0777 "$TEST_DIR/verdict"
	POLICY=$TEST_DIR/policy.json
	policy "$POLICY" '{"version": 1,
	  "environment": {"network_mode": "none", "env": {"TASK": "demo"}},
	  "agent": {"env": {"AGENT_ONLY": "yes", "PHASE": "agent"}},
	  "verifier": {"user": "root", "env": {"PHASE": "verifier"},
	    "mounts": [{"source": "'"$TEST_DIR"'/tests", "destination": "/tests", "readonly": true},
	               {"source": "'"$TEST_DIR"'/verdict", "destination": "/logs/verifier"}]},
	  "drop_env": ["HUD_*"]}'
}

@test "rollout agent: /tests and /logs are absent even though the image has them" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec "$NAME" sh -c 'for p in /tests /logs /tests/test.sh; do stat "$p" >/dev/null 2>&1 && echo "present $p"; done; echo checked'
	assert_status 0
	[ "$output" = checked ] || fail_with "$output"
}

@test "rollout agent: nothing names the harness in mountinfo, env, / /tmp /run" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY" -e HUD_SECRET=s3cret -e KEEP_ME=1
	run pm exec -e PROCTOR_DEBUG=1 "$NAME" sh -c 'cat /proc/self/mountinfo; env; ls -a / /tmp /run'
	assert_status 0
	! grep -Eiq 'proctor|rollout' <<<"$output" || fail_with "harness visible: $(grep -Ei 'proctor|rollout' <<<"$output")"
	! grep -q 'HUD_SECRET' <<<"$output" || fail_with "drop_env variable visible"
	grep -q '^KEEP_ME=1$' <<<"$output"
	grep -q '^AGENT_ONLY=yes$' <<<"$output"
	grep -q '^TASK=demo$' <<<"$output"
}

@test "rollout agent: the user namespace maps 0-65535 and pid 1 is the container's process" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec "$NAME" sh -c 'cat /proc/self/uid_map /proc/self/gid_map; cat /proc/1/cmdline | tr "\0" " "'
	assert_status 0
	read -r inside outside size <<<"$(sed -n 1p <<<"$output")"
	[ "$inside" = 0 ] && [ "$size" -ge 65536 ] || fail_with "uid_map: $output"
	grep -q 'sleep 1000' <<<"$output"
	# The agent's root has capabilities only in its own user namespace.
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]
}

@test "rollout agent: image USER 1000 writes its home and workdir, chown works in the map" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec "$NAME" sh -c 'id -u; pwd; echo x > /work/f && echo x > "$HOME/f" && echo wrote $HOME; chown 1000:1000 /work/f && echo chowned'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = 1000 ] || fail_with "$output"
	grep -q '^/work$' <<<"$output"
	grep -q '^wrote /home/agent$' <<<"$output"
	grep -q '^chowned$' <<<"$output"
	# root in the agent's namespace can chown to any mapped id
	run pm exec -u 0 "$NAME" sh -c 'touch /tmp/c && chown 4242:4343 /tmp/c && stat -c %u:%g /tmp/c'
	assert_status 0
	[ "$output" = 4242:4343 ] || fail_with "$output"
}

@test "rollout verifier: sees the tests and verdict mounts, writes the verdict to the host, own env" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'id -u; /tests/test.sh; cat /logs/verifier/reward.txt; env'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = 0 ] || fail_with "$output"
	grep -q '^real-tests$' <<<"$output"
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 1 ]
	grep -q '^PHASE=verifier$' <<<"$output" || fail_with "$output"
	! grep -q 'AGENT_ONLY' <<<"$output" || fail_with "agent env leaked: $output"
	! grep -q 'PROCTOR_PHASE' <<<"$output" || fail_with "PROCTOR_PHASE leaked"
	# ... and the image's own /tests (moved out at create) is what the
	# verifier would see without a policy mount: here the mount wins.
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" cat /tests/test.sh
	grep -q real-tests <<<"$output"
}

@test "rollout verifier: what a session started (setsid, double fork) dies with it and cannot rewrite the verdict" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	# Found by an attacker's trial of 2026-12-03: agent code the tests run
	# left a process behind that rewrote reward.txt after test.sh.
	local m=outlive-$$-$RANDOM
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c "
		setsid sh -c 'sleep 2; echo 1 > /logs/verifier/reward.txt; sleep 100; true $m-a' </dev/null >/dev/null 2>&1 &
		( sh -c 'sleep 3; echo 2 > /logs/verifier/reward.txt; sleep 100; true $m-b' </dev/null >/dev/null 2>&1 & ) &
		nohup sh -c 'sleep 3; echo 3 > /logs/verifier/reward.txt; sleep 100; true $m-c' </dev/null >/dev/null 2>&1 &
		echo 0 > /logs/verifier/reward.txt; echo done"
	assert_status 0
	[ "$output" = done ] || fail_with "$output"
	sleep 4
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 0 ] || fail_with "reward rewritten: $(cat "$TEST_DIR/verdict/reward.txt")"
	# From the host: none of the three is alive (sleep 100 keeps them
	# alive without the fix).
	! pgrep -f "$m" >/dev/null || fail_with "left alive: $(pgrep -af "$m")"
	# The container and later sessions still work.
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" cat /logs/verifier/reward.txt
	assert_status 0
	[ "$output" = 0 ] || fail_with "$output"
	# The watchers ended with their sessions.
	! pgrep -f "^$PROCTOR .*exec" >/dev/null || fail_with "watcher left: $(pgrep -af "^$PROCTOR .*exec")"
	# A session that made a cgroup of its own below its session's (in a
	# user and cgroup namespace of its own): killed, and both cgroups gone.
	local cid
	cid=$(podman inspect -f '{{.Id}}' "$NAME")
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c "
		unshare -U -r -C -m sh -c 'mkdir -p /tmp/cg && mount -t cgroup2 none /tmp/cg && mkdir /tmp/cg/esc && echo \$\$ > /tmp/cg/esc/cgroup.procs && exec sleep 100' </dev/null >/dev/null 2>&1 &
		sleep 1; echo done"
	assert_status 0
	local i left=
	for i in $(seq 30); do
		left=$(find /sys/fs/cgroup -path "*$cid*" -name 'session-*' -type d 2>/dev/null)
		[ -z "$left" ] && break
		sleep 0.2
	done
	[ -z "$left" ] || fail_with "session cgroups left: $left $(find $left -type d)"
	# A session still running at delete is killed then, as before.
	run pm exec -d -e PROCTOR_PHASE=verifier "$NAME" sh -c "sleep 300; true $m-d"
	assert_status 0
	run pm rm -f -t 0 "$NAME"
	assert_status 0
	! pgrep -f "$m-d" >/dev/null || fail_with "left alive after rm: $(pgrep -af "$m-d")"
}

@test "rollout: agent.user and verifier.user by name take uid, gid, groups and HOME from the image" {
	need_image bookworm
	# daemon (1:1, HOME /usr/sbin) for the agent, the image's own agent user
	# (1000:1000, HOME /home/agent) for the verifier; podman sets HOME for
	# the image's USER, and the policy's user must win.
	policy "$TEST_DIR/p.json" '{"version": 1, "agent": {"user": "daemon"}, "verifier": {"user": "agent"}}'
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'id -u; id -g; id -G; echo "$HOME"'
	assert_status 0
	[ "$output" = "1
1
1
/usr/sbin" ] || fail_with "agent: $output"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'id -un; id -g; echo "$HOME"'
	assert_status 0
	[ "$output" = "agent
1000
/home/agent" ] || fail_with "verifier: $output"
}

@test "rollout: the policy from --rollout-policy FILE (podman --runtime-flag) or inline in the annotation" {
	need_image bookworm
	policy "$TEST_DIR/p.json" '{"version": 1, "agent": {"network_mode": "none", "env": {"FROM_POLICY": "file"}}}'
	track_name "$NAME"
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$PROCTOR" --runtime-flag "rollout-policy=$TEST_DIR/p.json" \
		run -d --name "$NAME" "$TASK_IMAGE" sleep 1000
	assert_status 0
	run pm exec "$NAME" sh -c 'echo "$FROM_POLICY"; ls /sys/class/net; test -e /tests || echo no-tests'
	assert_status 0
	[ "$output" = "file
lo
no-tests" ] || fail_with "--rollout-policy: $output"
	# Inline JSON in the annotation.  podman splits --annotation values as
	# CSV, so the whole argument is CSV-quoted as docs/rollout.md says;
	# commas, quotes and spaces must reach the policy intact.
	track_name "$NAME-inline"
	run pm run -d --name "$NAME-inline" \
		--annotation '"run.proctor.rollout={""version"": 1, ""agent"": {""network_mode"": ""none"", ""env"": {""FROM_POLICY"": ""inline, with a comma""}}}"' \
		"$TASK_IMAGE" sleep 1000
	assert_status 0
	run pm exec "$NAME-inline" sh -c 'echo "$FROM_POLICY"; ls /sys/class/net'
	assert_status 0
	[ "$output" = "inline, with a comma
lo" ] || fail_with "inline: $output"
}

@test "rollout verifier: proctor rollout phase makes later plain execs verifiers" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec "$NAME" sh -c 'echo $PHASE'
	[ "$output" = agent ]
	run "$PROCTOR" --root /run/proctor rollout phase "$(podman inspect -f '{{.Id}}' "$NAME")" verifier
	assert_status 0
	run pm exec "$NAME" sh -c 'echo $PHASE; test -x /tests/test.sh && echo has-tests'
	assert_status 0
	[ "$output" = "verifier
has-tests" ] || fail_with "$output"
	run "$PROCTOR" --root /run/proctor rollout status "$(podman inspect -f '{{.Id}}' "$NAME")"
	assert_status 0
	[ "$(jq -r .phase <<<"$output")" = verifier ]
	[ "$(jq -r '.hidden[0].path' <<<"$output")" = /tests ]
	[ "$(jq -r '.hidden[0].in_image' <<<"$output")" = true ]
}

@test "rollout: an agent's planted symlinks and verdict-writing loop do not change the verdict" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec -u 0 "$NAME" sh -c '
		mkdir -p /tmp/fake /tmp/fakelogs /logs
		printf "#!/bin/sh\necho fake-tests\necho 0 > /logs/verifier/reward.txt\n" > /tmp/fake/test.sh
		chmod +x /tmp/fake/test.sh
		ln -s /tmp/fake /tests
		ln -s /tmp/fakelogs /logs/verifier
		nohup sh -c "while :; do echo 0 > /logs/verifier/reward.txt; echo 0 > /tmp/fakelogs/reward.txt; sleep 0.05; done" >/dev/null 2>&1 &
		echo planted'
	assert_status 0
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c '/tests/test.sh; sleep 1; cat /logs/verifier/reward.txt'
	assert_status 0
	[ "$output" = "real-tests
1" ] || fail_with "$output"
	sleep 0.5
	[ "$(cat "$TEST_DIR/verdict/reward.txt")" = 1 ]
	# The loop was alive all along: it still rewrites its own copy.
	# (polled for up to 5 s: one fixed 0.5 s wait missed it once on a loaded CI machine)
	run pm exec -u 0 "$NAME" sh -c 'rm -f /tmp/fakelogs/reward.txt; i=0
		while [ $i -lt 50 ] && [ ! -s /tmp/fakelogs/reward.txt ]; do sleep 0.1; i=$((i + 1)); done
		cat /tmp/fakelogs/reward.txt'
	[ "$output" = 0 ] || fail_with "the agent's loop is not running: $output"
}

@test "rollout: agent root cannot read the verifier's environ, root or fds, nor ptrace it" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec -d -e PROCTOR_PHASE=verifier -e VERIFIER_SECRET=tok3n "$NAME" sleep 600
	assert_status 0
	# The agent cannot even find the verifier (no /proc entry: it lives in
	# the outer pid namespace, tests/engines/rollout-reach.bats): it is
	# given the verifier's pid as the host and as the verifier number it.
	wait_until 10 pgrep -x -f "sleep 600"
	hp=$(pgrep -x -f "sleep 600" | head -n 1)
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" pgrep -x -f "sleep 600"
	op=$output
	[ -n "$hp" ] && [ -n "$op" ] || fail_with "verifier pids: host '$hp' outer '$op'"
	run pm exec -u 0 "$NAME" sh -c '
		v=$(pgrep -x -f "sleep 600" | head -n 1); echo "verifier pid $v"
		grep -l tok3n /proc/[0-9]*/environ 2>/dev/null && echo LEAK-environ
		for v in '"$hp $op"'; do
		[ -e /proc/$v ] && [ "$(tr "\0" " " < /proc/$v/cmdline)" != "sleep 600 " ] && { echo "other $v"; continue; }
		readlink /proc/$v/root >/dev/null 2>&1 && echo LEAK-root
		readlink /proc/$v/fd/0 >/dev/null 2>&1 && echo LEAK-fd
		cat /proc/$v/mem >/dev/null 2>&1 && echo LEAK-mem
		perl -e "my \$r = syscall(101, 16, $v, 0, 0); print \$r == 0 ? \"LEAK-ptrace\n\" : \"ptrace refused: \$!\n\""
		done
		echo scanned'
	assert_status 0
	[[ "$output" == *"verifier pid "$'\n'* ]] || fail_with "the agent found the verifier: $output"
	! grep -q LEAK <<<"$output" || fail_with "$output"
	grep -q 'ptrace refused: No such process' <<<"$output" || fail_with "$output"
}

# The agent shares the rollout's network namespace with the verifier, and
# that namespace belongs to the agent's user namespace: CAP_NET_RAW there
# would sniff the verifier's proxy token off loopback (docker grants it by
# default), CAP_NET_ADMIN would reroute 127.0.0.1:3129.  Neither may reach
# the container's process or an agent exec, whatever the engine grants.
NET_CAPS_PROBE='cap=$(sed -n "s/^CapBnd:[[:space:]]*//p" /proc/self/status); echo "netcaps=$(( (0x$cap >> 12) & 3 ))"
perl -e "use Socket; socket(my \$p, 17, 3, 0) ? print qq(packet-open\n) : print qq(packet-refused\n); socket(my \$r, 2, 3, 1) ? print qq(raw-open\n) : print qq(raw-refused\n)"'

@test "rollout: an agent granted CAP_NET_RAW and CAP_NET_ADMIN holds neither and cannot open a packet or raw socket" {
	need_image bookworm
	write_task_dirs
	# Control: without the annotation the engine's grant reaches the
	# process, so the probe can see the capabilities.
	run pm run --rm --cap-add NET_RAW --cap-add NET_ADMIN "$TASK_IMAGE" sh -c "$NET_CAPS_PROBE"
	assert_status 0
	grep -qx 'netcaps=3' <<<"$output" || fail_with "control: $output"
	grep -qx 'packet-open' <<<"$output" || fail_with "control: $output"
	start_rollout "$POLICY" --cap-add NET_RAW --cap-add NET_ADMIN
	run pm exec "$NAME" sh -c "$NET_CAPS_PROBE"
	assert_status 0
	grep -qx 'netcaps=0' <<<"$output" || fail_with "agent exec: $output"
	grep -qx 'packet-refused' <<<"$output" || fail_with "agent exec: $output"
	grep -qx 'raw-refused' <<<"$output" || fail_with "agent exec: $output"
	local pid cap
	# The state pid is proctor's outer init; its one child is the
	# container's process.
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	pid=$(cut -d' ' -f1 "/proc/$pid/task/$pid/children")
	[ -n "$pid" ] || fail_with "no container process below the outer init"
	cap=$(sed -n 's/^CapBnd:[[:space:]]*//p' "/proc/$pid/status")
	[ $(((0x$cap >> 12) & 3)) -eq 0 ] || fail_with "the container's process has CapBnd $cap"
}

@test "rollout: a background server the agent started is reachable by the verifier" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm exec "$NAME" sh -c 'nohup perl -MIO::Socket::INET -e "
		my \$s = IO::Socket::INET->new(LocalAddr => q(127.0.0.1:7070), Listen => 5, ReuseAddr => 1) or die;
		while (my \$c = \$s->accept) { print \$c qq(agent-service\n); close \$c }" >/dev/null 2>&1 &
		echo started'
	assert_status 0
	run pm exec "$NAME" sh -c 'sleep 0.5; echo next-exec'
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" perl -MIO::Socket::INET -e '
		for (1..50) { my $c = IO::Socket::INET->new(q(127.0.0.1:7070)); if ($c) { print scalar <$c>; exit 0 } select(undef,undef,undef,0.1) } exit 1'
	assert_status 0
	[ "$output" = agent-service ] || fail_with "$output"
}

@test "rollout: stop (runtime delete) puts the image's hidden paths back into the rootfs" {
	need_image bookworm
	write_task_dirs
	start_rollout "$POLICY"
	run pm stop -t 0 "$NAME"
	assert_status 0
	mnt=$(podman mount "$NAME")
	restored=$(cat "$mnt/tests/test.sh" 2>&1)
	stale=$(cat "$mnt/logs/verifier/reward.txt" 2>&1)
	podman umount "$NAME" >/dev/null
	grep -qx 'echo image-copy' <<<"$restored" || fail_with "tests after stop: $restored"
	[ "$stale" = stale ] || fail_with "logs after stop: $stale"
	# ... and a restart hides them again.
	run pm start "$NAME"
	assert_status 0
	run pm exec "$NAME" sh -c 'stat /tests >/dev/null 2>&1 && echo visible || echo absent'
	[ "$output" = absent ] || fail_with "$output"
}

# Each invalid policy: "FIELD-OR-PHRASE|JSON".  The phrase must appear in
# podman's error output (proctor's message), and nothing may be left.
INVALID_POLICIES=(
	'malformed JSON|{"version": 1,'
	'version|{"version": 2}'
	'unknown key "agnet"|{"version": 1, "agnet": {}}'
	'agent.network_mode|{"version": 1, "agent": {"network_mode": "open"}}'
	'agent.env|{"version": 1, "agent": {"env": {"A": 1}}}'
	'agent.env|{"version": 1, "agent": {"env": ["A=1"]}}'
	'agent.allowed_hosts|{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["http://x.org/"]}}'
	'agent.user|{"version": 1, "agent": {"user": "nosuchuser"}}'
	'verifier.user|{"version": 1, "verifier": {"user": "ghost:ghost"}}'
	'verifier.mounts[0].source|{"version": 1, "verifier": {"mounts": [{"source": "/no/such/dir", "destination": "/tests"}]}}'
	'verifier.mounts[0].destination|{"version": 1, "verifier": {"mounts": [{"source": "/tmp", "destination": "tests"}]}}'
	'hide[0]|{"version": 1, "hide": ["/"]}'
	'hide[0]|{"version": 1, "hide": ["/proc/self"]}'
	'hide[0]|{"version": 1, "hide": ["relative"]}'
	'peers[0]|{"version": 1, "peers": [{"name": "db", "port": 0, "target": "tcp:10.0.0.1:5432"}]}'
	'peers[0]|{"version": 1, "peers": [{"name": "db", "port": 5432, "target": "udp:10.0.0.1:5432"}]}'
	'drop_env|{"version": 1, "drop_env": "HUD_*"}'
)

@test "rollout: each invalid policy fails create with its own message and leaves nothing" {
	need_image bookworm
	local i=0 entry want json id p
	for entry in "${INVALID_POLICIES[@]}"; do
		i=$((i + 1))
		want=${entry%%|*}
		json=${entry#*|}
		printf '%s\n' "$json" >"$TEST_DIR/bad$i.json"
		# create + start, so the failed container has an id to look for.
		track_name "$NAME-$i"
		run pm create --name "$NAME-$i" --annotation "run.proctor.rollout=@$TEST_DIR/bad$i.json" "$TASK_IMAGE" sleep 1000
		assert_status 0
		id=$(podman inspect -f '{{.Id}}' "$NAME-$i")
		run pm start "$NAME-$i"
		[ "$status" -ne 0 ] || fail_with "case $i ($want) was accepted"
		grep -qF "rollout policy" <<<"$output" || fail_with "case $i: no policy error in: $output"
		grep -qF -- "$want" <<<"$output" || fail_with "case $i: wanted '$want' in: $output"
		[ ! -e "/run/proctor/$id" ] || fail_with "case $i left a state dir"
		! ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$id"* 2>/dev/null | grep -q . || fail_with "case $i left a cgroup"
		for p in $(pgrep -x proctor-egress); do
			! tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$id" || fail_with "case $i left helper $p"
		done
		! grep -qF "$id" /proc/self/mountinfo || fail_with "case $i left a mount naming the container"
		pm rm -f "$NAME-$i" >/dev/null
	done
	[ "$i" -ge 15 ]
}
