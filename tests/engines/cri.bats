#!/usr/bin/env bats
# cri.bats - Kubernetes' view of the runtime: containerd 1.6's CRI plugin
# (Debian's containerd) driven by the project's CRI client
# (tests/tools/cri/cri-client.py, playing the kubelet) with two runtime
# handlers, "runc" (Debian's runc) and "proctor" (the runc v2 shim with
# BinaryName = the binary under test, pod_annotations ["run.proctor.*"]).
# The containerd is the suite's own (tests/tools/cri/containerd.sh: own
# root, state, socket, config, CNI bridge, runtime roots, a pause image
# built from tests/tools/cri/pause.c), started once per file.
#
# Plain pods behave alike under both handlers; a pod carrying the rollout
# annotation under the proctor handler is a rollout (SPEC section 2,
# "Kubernetes"), its pause container is not.  Every test ends with nothing
# of its pods left: runtime state dirs, container cgroups, mounts, network
# namespaces, veths, processes.

load helpers

CRI_TOOLS=$BATS_TEST_DIRNAME/../tools/cri
CLIENT=$CRI_TOOLS/cri-client.py
IMAGE=localhost/proctor/bookworm:latest
TASK_IMAGE=localhost/proctor-cri/rollout-task:1

setup_file() {
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || { echo "PROCTOR must name the runtime under test" >&2; return 1; }
	[ "$(id -u)" = 0 ] || { echo "cri.bats needs root" >&2; return 1; }
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
	/usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || missing+=(python3-grpcio python3-grpc-tools)
	if [ ${#missing[@]} -gt 0 ]; then
		# setup() reports it per test (a failure under PROCTOR_REQUIRE_ALL=1).
		export CRI_MISSING="${missing[*]}"
		return 0
	fi
	PROCTOR_IMAGES="busybox bookworm" PROCTOR_NO_PODMAN=1 PROCTOR_NO_DAEMONS=1 \
		"$BATS_TEST_DIRNAME/../images.sh" >&3 2>&1 || { echo "tests/images.sh failed" >&2; return 1; }
	CRI_DIR=$(mktemp -d /run/prt-cri.XXXXXX)
	export CRI_DIR
	# Container cgroups go under a parent of the suite's own (the kubelet's
	# /kubepods/besteffort/pod<uid>), removed by teardown_file.
	export CRI_CGROUP_PARENT=/prt-cri-${CRI_DIR##*.}
	# (A failed up prints containerd's log and stops it: nothing is left.)
	"$CRI_TOOLS/containerd.sh" up "$CRI_DIR" || { echo "tests/tools/cri/containerd.sh up failed" >&2; return 1; }
	eval "export $("$CRI_TOOLS/containerd.sh" env "$CRI_DIR")"
	# A terminal-bench style task image: /tests and /logs baked in.
	local task=$CRI_DIR/task-layer
	mkdir -p "$task/tests" "$task/logs/verifier"
	printf '#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n' >"$task/tests/test.sh"
	chmod 755 "$task/tests/test.sh"
	echo stale >"$task/logs/verifier/reward.txt"
	"$CRI_TOOLS/containerd.sh" import "$CRI_DIR" "$TASK_IMAGE" \
		"${PROCTOR_IMAGE_CACHE:-/var/cache/proctor/rootfs}/bookworm.tar" "$task" || {
		echo "import of $TASK_IMAGE failed" >&2
		return 1
	}
}

teardown_file() {
	[ -n "${CRI_DIR:-}" ] || return 0
	"$CRI_TOOLS/containerd.sh" down "$CRI_DIR" >&3 2>&1 || true
	local d
	for d in /sys/fs/cgroup/*/"$CRI_CGROUP_PARENT" /sys/fs/cgroup/unified/"$CRI_CGROUP_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

setup() {
	[ -z "${CRI_MISSING:-}" ] || require_or_skip "not installed: $CRI_MISSING (tests/setup-host.sh)"
	return 0
}

# Removes every pod the test left (a failed assertion skips the test's own
# stop/remove), so the next test starts from an empty node.
teardown() {
	[ -n "${CRI_DIR:-}" ] || return 0
	cri cleanup >/dev/null 2>&1 || true
}

# cri ARGS: the CRI client against the suite's containerd, bounded.
cri() { timeout -k 5 120 "$CLIENT" "$@"; }

# pod HANDLER NAME [runp options]: RunPodSandbox; sets POD.
pod() {
	local handler=$1 name=$2
	shift 2
	POD=$(cri runp --handler "$handler" "$@" "$name") || fail_with "RunPodSandbox $name failed"
}

# ctr_in POD NAME [create options] -- CMD...: CreateContainer; sets CTR.
ctr_in() {
	local p=$1 name=$2 opts=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	CTR=$(cri create "${opts[@]}" "$p" "$name" "$@") || fail_with "CreateContainer $name failed"
}

# TERM ends it at once, with exit code 0 (sleep as pid 1 ignores TERM).
SLEEPER=(sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done')

# The terminal's size once the client's resize message has been applied
# (it travels separately from the exec's start).
TTY_SIZE='s=; for i in $(seq 1 50); do s=$(stty size) && [ "$s" != "0 0" ] && break; sleep 0.1; done; echo "$s"'

# started HANDLER NAME [runp options]: a pod with one running container,
# IMAGE running SLEEPER; sets POD and CTR.
started() {
	pod "$@"
	ctr_in "$POD" main --image "${START_IMAGE:-$IMAGE}" -- "${SLEEPER[@]}"
	cri start "$CTR" || fail_with "StartContainer failed"
}

status_of() { cri status "$1" | jq -r "$2"; }

# net_of POD: the path of the pod's network namespace (containerd's netns
# bind mount), from the sandbox's runtime spec.
net_of() {
	cri pstatus "$1" | jq -r '.info.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path'
}

# pids_naming ID...: live processes whose command line names one of the ids
# (a shim's -id, a runtime or egress-helper process's container id).
pids_naming() {
	local f pid id st
	for id in "$@"; do
		# (grep itself matches, and is gone by the time its state is read)
		for f in $(grep -laF -- "$id" /proc/[0-9]*/cmdline 2>/dev/null); do
			pid=${f#/proc/}
			pid=${pid%/cmdline}
			st=$(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
			[ -z "$st" ] || [ "$st" = Z ] || echo "$pid"
		done
	done | sort -u
}

# remove_pod POD NETNS ID...: StopPodSandbox and RemovePodSandbox, then
# nothing of the pod or the container ids is left.
remove_pod() {
	local p=$1 netns=$2
	shift 2
	run cri stopp "$p"
	assert_status 0
	run cri rmp "$p"
	assert_status 0
	assert_nothing_left "$netns" "$p" "$@"
}

# nothing_left NETNS ID...: no runtime state dir (either handler's root,
# containerd's task dir), container cgroup, mount, network namespace, veth
# or process of the ids is left; prints what is.
nothing_left() {
	local netns=$1 bad=0 id left
	shift
	for id in "$@"; do
		for left in "$CRI_DIR"/{proctor-root,runc-root}/k8s.io/"$id" "$CRI_DIR/state/io.containerd.runtime.v2.task/k8s.io/$id"; do
			[ ! -e "$left" ] || { echo "left: $left"; bad=1; }
		done
		left=$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 6 -type d -name "*$id*" 2>/dev/null)
		[ -z "$left" ] || { echo "cgroups left: $left"; bad=1; }
		left=$(awk -v id="$id" 'index($5, id) { print $5 }' /proc/self/mountinfo)
		[ -z "$left" ] || { echo "mounts left: $left"; bad=1; }
	done
	left=$(pids_naming "$@")
	[ -z "$left" ] || { echo "processes left: $(for p in $left; do tr '\0' ' ' </proc/$p/cmdline; echo; done)"; bad=1; }
	if [ -n "$netns" ]; then
		[ ! -e "$netns" ] || { echo "network namespace left: $netns"; bad=1; }
		! grep -qF " $netns " /proc/self/mountinfo || { echo "netns mount left: $netns"; bad=1; }
	fi
	left=$(ip -o link show master "$CRI_BRIDGE" 2>/dev/null)
	[ -z "$left" ] || { echo "veths left on $CRI_BRIDGE: $left"; bad=1; }
	return $bad
}

# assert_nothing_left NETNS ID...: nothing_left within 10 s (a shim exits
# shortly after its last task is deleted).
assert_nothing_left() {
	local deadline=$((SECONDS + 10))
	until nothing_left "$@" >/dev/null; do
		[ "$SECONDS" -lt "$deadline" ] || { nothing_left "$@" >&2; return 1; }
		sleep 0.2
	done
}
: "${CRI_BRIDGE:=prtcri0}"

# ------------------------------------------------------------ plain pods

@test "cri: Version answers for containerd's CRI v1" {
	run cri version
	assert_status 0
	[ "$(jq -r .runtime_name <<<"$output")" = containerd ] || fail_with "$output"
	[ "$(jq -r .runtime_api_version <<<"$output")" = v1 ] || fail_with "$output"
}

# plain_pod HANDLER: a pod's whole life under HANDLER.
plain_pod() {
	local h=$1 other
	started "$h" "plain-$h"
	local netns
	netns=$(net_of "$POD")
	[ -n "$netns" ] && [ -e "$netns" ] || fail_with "no pod network namespace: '$netns'"

	# The handler's runtime made both containers: its --root holds them.
	other=runc
	[ "$h" = runc ] && other=proctor
	[ -d "$CRI_DIR/$h-root/k8s.io/$POD" ] && [ -d "$CRI_DIR/$h-root/k8s.io/$CTR" ] ||
		fail_with "no state of $POD/$CTR under $h's root: $(ls "$CRI_DIR/$h-root/k8s.io" 2>&1)"
	[ ! -e "$CRI_DIR/$other-root/k8s.io/$CTR" ] || fail_with "$other ran the container"

	run status_of "$CTR" '.state'
	[ "$output" = CONTAINER_RUNNING ] || fail_with "state: $output"
	local pid
	pid=$(status_of "$CTR" '.info.info.pid')
	[ "$pid" -gt 0 ] || fail_with "pid: $pid"
	# In the pod's cgroup parent, its network namespace, its own pid 1.
	grep -q ":$CRI_CGROUP_PARENT/pod[0-9a-f-]*/$CTR\$" "/proc/$pid/cgroup" || fail_with "cgroup: $(cat /proc/$pid/cgroup)"
	[ "$(readlink "/proc/$pid/ns/net")" = "$(stat -L -c 'net:[%i]' "$netns")" ] || fail_with "not in the pod's netns"

	# ExecSync: stdout, stderr and the exit code, apart.
	run --separate-stderr cri exec-sync "$CTR" -- sh -c 'echo out; echo err >&2; exit 3'
	[ "$status" -eq 3 ] || fail_with "status $status: $output / $stderr"
	[ "$output" = out ] && [ "$stderr" = err ] || fail_with "stdout '$output' stderr '$stderr'"
	run cri exec-sync "$CTR" -- sh -c 'hostname; cat /proc/1/cmdline | tr "\0" " "; echo; ls /sys/class/net | sort | tr "\n" " "'
	assert_status 0
	[ "${lines[0]}" = "plain-$h" ] || fail_with "hostname: $output"
	[ "${lines[1]}" = "sh -c trap \"exit 0\" TERM; while :; do sleep 0.1; done " ] || fail_with "pid 1: $output"
	[ "${lines[2]}" = "eth0 lo " ] || fail_with "interfaces: $output"

	# Streaming exec over the WebSocket URL of the Exec RPC.
	run --separate-stderr cri exec "$CTR" -- sh -c 'echo streamed; echo e >&2; exit 5'
	[ "$status" -eq 5 ] || fail_with "status $status: $output / $stderr"
	[ "$output" = streamed ] && [ "$stderr" = e ] || fail_with "stdout '$output' stderr '$stderr'"
	run cri exec --stdin "$CTR" -- head -n 1 <<<"from-stdin"
	assert_status 0
	[ "$output" = from-stdin ] || fail_with "stdin: $output"
	# With a tty, as kubectl exec -it: containerd 1.6 relays no output of a
	# tty exec that has no stdin stream.
	run cri exec --tty --stdin --size 31x97 "$CTR" -- sh -c "tty; $TTY_SIZE" </dev/null
	assert_status 0
	[[ "$(tr -d '\r' <<<"$output")" =~ ^/dev/pts/[0-9]+$'\n'31\ 97$ ]] || fail_with "tty: $output"

	# StopContainer sends SIGTERM: the trap exits 0.
	run cri stop -t 10 "$CTR"
	assert_status 0
	run cri status "$CTR"
	[ "$(jq -r .state <<<"$output")" = CONTAINER_EXITED ] && [ "$(jq -r .exit_code <<<"$output")" = 0 ] ||
		fail_with "after stop: $output"
	run cri rm "$CTR"
	assert_status 0
	remove_pod "$POD" "$netns" "$CTR"
}

@test "cri runc: a plain pod: sandbox, container, ExecSync, streaming exec, status, stop, remove, nothing left" {
	plain_pod runc
}

@test "cri proctor: a plain pod: sandbox, container, ExecSync, streaming exec, status, stop, remove, nothing left" {
	plain_pod proctor
}

@test "cri proctor: a failed ExecSync leaves the container running" {
	started proctor failexec
	run cri exec-sync "$CTR" -- /no/such/command
	[ "$status" -ne 0 ] || fail_with "exec of a missing command succeeded"
	[[ "$output" == *"/no/such/command"* ]] || fail_with "error: $output"
	run cri exec-sync "$CTR" -- echo still-here
	assert_status 0
	[ "$output" = still-here ]
	[ "$(status_of "$CTR" .state)" = CONTAINER_RUNNING ]
}

# ---------------------------------------------------------- rollout pods

# rollout_pod POLICY [runp options]: a proctor pod whose annotation is the
# rollout POLICY (inline JSON), one container of TASK_IMAGE running
# SLEEPER; sets POD and CTR.
rollout_pod() {
	local policy=$1
	shift
	START_IMAGE=$TASK_IMAGE started proctor "rollout-${BATS_TEST_NUMBER}" --annotation "run.proctor.rollout=$policy" "$@"
}

NONE_POLICY='{"version": 1, "environment": {"network_mode": "none"}, "agent": {"user": "1000:1000"}}'

@test "cri proctor rollout: StartContainer works; the agent's view: hidden paths absent, only lo, no proxy, its own namespaces" {
	rollout_pod "$NONE_POLICY"
	local pid pause_pid
	pid=$(status_of "$CTR" .info.info.pid)
	pause_pid=$(cri pstatus "$POD" | jq -r .info.info.pid)
	run cri exec-sync "$CTR" -- sh -c '
		for p in /tests /logs /tests/test.sh /logs/verifier; do stat "$p" >/dev/null 2>&1 && echo "present $p"; done
		echo "net: $(ls /sys/class/net | tr "\n" " ")"
		echo "proxy: $(env | grep -ci proxy)"
		echo "uid: $(id -u):$(id -g)"
		echo "map: $(cat /proc/self/uid_map | tr -s " ")"
		echo "host: $(hostname)"
		echo "pid1: $(cat /proc/1/cmdline | tr "\0" " ")"
		echo "mqueue: $(grep -c " /dev/mqueue " /proc/self/mountinfo)"'
	assert_status 0
	! grep -q '^present' <<<"$output" || fail_with "hidden paths visible: $output"
	grep -qx 'net: lo ' <<<"$output" || fail_with "$output"
	grep -qx 'proxy: 0' <<<"$output" || fail_with "$output"
	grep -qx 'uid: 1000:1000' <<<"$output" || fail_with "$output"
	grep -qx 'map:  0 0 4294967295' <<<"$output" || fail_with "$output"
	grep -qx "host: rollout-${BATS_TEST_NUMBER}" <<<"$output" || fail_with "hostname not the pod's: $output"
	grep -q '^pid1: sh -c trap' <<<"$output" || fail_with "$output"
	grep -qx 'mqueue: 1' <<<"$output" || fail_with "$output"
	# Its ipc and uts namespaces are its own, not the pod's (which belong
	# to the host's user namespace); the network is a fresh one.
	local ns
	for ns in ipc uts net; do
		[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink "/proc/$pause_pid/ns/$ns")" ] ||
			fail_with "the agent shares the pod's $ns namespace"
	done
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ] || fail_with "no user namespace"
}

@test "cri proctor rollout: ExecSync and streaming exec run as the agent, in the agent's namespaces" {
	rollout_pod "$NONE_POLICY"
	local pid ns want
	# The state pid is proctor's outer init; the agent's namespaces are
	# those of the container's process (rollout-agent-init, "PID START").
	pid=$(cut -d' ' -f1 "$CRI_DIR/proctor-root/k8s.io/$CTR/rollout-agent-init")
	want=""
	for ns in user ipc uts net pid mnt; do want+="$(readlink "/proc/$pid/ns/$ns") "; done
	local probe='echo "$(id -u) $HOME"; for n in user ipc uts net pid mnt; do printf "%s " "$(readlink /proc/self/ns/$n)"; done; echo'
	run cri exec-sync "$CTR" -- sh -c "$probe"
	assert_status 0
	[ "${lines[0]}" = "1000 /" ] || fail_with "ExecSync identity: $output"
	[ "${lines[1]}" = "$want" ] || fail_with "ExecSync namespaces: ${lines[1]}, init's: $want"
	run cri exec "$CTR" -- sh -c "$probe"
	assert_status 0
	[ "${lines[0]}" = "1000 /" ] || fail_with "Exec identity: $output"
	[ "${lines[1]}" = "$want" ] || fail_with "Exec namespaces: ${lines[1]}, init's: $want"
	# A process left by one exec is there for the next (nohup, setsid).
	run cri exec-sync "$CTR" -- sh -c 'setsid sleep 1001 >/dev/null 2>&1 </dev/null & echo spawned'
	assert_status 0
	run cri exec-sync "$CTR" -- ps -eo args
	[[ "$output" == *"sleep 1001"* ]] || fail_with "background process gone: $output"
	run cri exec --tty --stdin --size 24x80 "$CTR" -- sh -c "$TTY_SIZE" </dev/null
	assert_status 0
	[ "$(tr -d '\r' <<<"$output")" = "24 80" ] || fail_with "tty: $output"
}

@test "cri proctor rollout: an allowlist policy gives agent sessions the proxy, the helper ends with the pod" {
	rollout_pod '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["example.invalid"]}}'
	local netns
	netns=$(net_of "$POD")
	run cri exec-sync "$CTR" -- sh -c 'env | grep -i _proxy= | sort; grep -c ":0C38 00000000:0000 0A" /proc/net/tcp'
	assert_status 0
	grep -qx 'http_proxy=http://127.0.0.1:3128' <<<"$output" || fail_with "$output"
	grep -qx 'HTTPS_PROXY=http://127.0.0.1:3128' <<<"$output" || fail_with "$output"
	# The helper listens on 127.0.0.1:3128 inside the agent's namespace.
	[ "${lines[-1]}" = 1 ] || fail_with "no listener on 127.0.0.1:3128: $output"
	[ -n "$(pids_naming "$CTR")" ] || fail_with "no process of the rollout (egress helper) on the node"
	run cri stop -t 10 "$CTR"
	assert_status 0
	run cri rm "$CTR"
	assert_status 0
	remove_pod "$POD" "$netns" "$CTR"
}

@test "cri proctor rollout: the pause container is untouched (no rollout, the pod's network)" {
	rollout_pod "$NONE_POLICY"
	local pause_pid
	pause_pid=$(cri pstatus "$POD" | jq -r .info.info.pid)
	[ -d "$CRI_DIR/proctor-root/k8s.io/$POD" ] || fail_with "proctor did not run the pause container"
	[ -z "$(ls "$CRI_DIR/proctor-root/k8s.io/$POD" | grep rollout)" ] ||
		fail_with "rollout state in the sandbox: $(ls "$CRI_DIR/proctor-root/k8s.io/$POD")"
	[ -e "$CRI_DIR/proctor-root/k8s.io/$CTR/rollout-policy.json" ] || fail_with "the container is no rollout"
	# No user namespace, the CNI interface, the pod's hostname.
	[ "$(readlink "/proc/$pause_pid/ns/user")" = "$(readlink /proc/self/ns/user)" ] || fail_with "pause in a user namespace"
	run nsenter -t "$pause_pid" -n ip -o link show
	[[ "$output" == *" eth0@"* ]] || fail_with "pause network: $output"
	run nsenter -t "$pause_pid" -u hostname
	[ "$output" = "rollout-${BATS_TEST_NUMBER}" ]
	[ "$(tr '\0' ' ' </proc/$pause_pid/cmdline)" = "/pause " ]
}

@test "cri proctor rollout: hostIPC, hostPID and hostNetwork pods are refused at StartContainer with one clear error" {
	local opt field
	for opt in --host-ipc --host-pid --host-net; do
		case $opt in
		--host-ipc) field="ipc namespace (hostIPC, --ipc=host)" ;;
		--host-pid) field="pid namespace (hostPID, --pid=host)" ;;
		--host-net) field="network namespace (hostNetwork, --network=host)" ;;
		esac
		pod proctor "refused${opt}" --annotation "run.proctor.rollout=$NONE_POLICY" "$opt"
		ctr_in "$POD" main --image "$TASK_IMAGE" -- "${SLEEPER[@]}"
		run cri start "$CTR"
		[ "$status" -ne 0 ] || fail_with "$opt: StartContainer succeeded"
		[[ "$output" == *"OCI runtime create failed: rollout refused: the container would share the host's $field; a rollout needs its own pid, ipc and network namespaces"* ]] ||
			fail_with "$opt: $output"
		run cri status "$CTR"
		[ "$(jq -r .state <<<"$output")" = CONTAINER_EXITED ] && [ "$(jq -r .reason <<<"$output")" = StartError ] ||
			fail_with "$opt: status $output"
		[[ "$(jq -r .message <<<"$output")" == *"rollout refused: the container would share the host's $field"* ]] ||
			fail_with "$opt: status message $output"
		# The refused container left nothing; the pause container runs on.
		[ ! -e "$CRI_DIR/proctor-root/k8s.io/$CTR" ] || fail_with "$opt: state dir left"
		[ "$(cri pstatus "$POD" | jq -r .state)" = SANDBOX_READY ] || fail_with "$opt: sandbox not ready"
		local netns
		netns=$(net_of "$POD")
		run cri rm "$CTR"
		assert_status 0
		remove_pod "$POD" "$netns" "$CTR"
	done
	# The same pods without the annotation are plain pods and run.
	started proctor host-ipc-plain --host-ipc
	[ "$(status_of "$CTR" .state)" = CONTAINER_RUNNING ]
}

@test "cri proctor rollout: stop and remove leave nothing (state, cgroups, mounts, netns, veths, helper)" {
	rollout_pod '{"version": 1, "agent": {"network_mode": "public"}}'
	local netns pid
	netns=$(net_of "$POD")
	pid=$(status_of "$CTR" .info.info.pid)
	[ -n "$(pids_naming "$CTR")" ] || fail_with "no process of the rollout on the node"
	run cri exec-sync "$CTR" -- sh -c 'nohup sleep 1002 >/dev/null 2>&1 & echo ok'
	assert_status 0
	run cri stop -t 10 "$CTR"
	assert_status 0
	[ "$(status_of "$CTR" .exit_code)" = 0 ] || fail_with "exit code $(status_of "$CTR" .exit_code)"
	run cri rm "$CTR"
	assert_status 0
	remove_pod "$POD" "$netns" "$CTR"
	! kill -0 "$pid" 2>/dev/null || fail_with "the container's init $pid is alive"
}

# The harness's phase secret for the kubectl-style switch, and its digest
# in the policy (phase_secret_sha256).
PHASE_SECRET=8c2f0e51a9d34b7c96e1f0a2b3c4d5e6-harness
PHASE_HASH=$(printf %s "$PHASE_SECRET" | sha256sum | cut -d' ' -f1)

@test "cri proctor rollout: the verifier through ExecSync's argv alone (proctor-phase), a pod env PROCTOR_PHASE selects nothing" {
	local policy
	policy=$(jq -cn --arg h "$PHASE_HASH" '{"version": 1,
		"environment": {"network_mode": "allowlist", "allowed_hosts": ["example.invalid"]},
		"agent": {"user": "1000:1000", "env": {"PHASE": "agent"}},
		"verifier": {"user": "0:0", "env": {"PHASE": "verifier"}},
		"phase_secret_sha256": $h}')
	pod proctor "phase-${BATS_TEST_NUMBER}" --annotation "run.proctor.rollout=$policy"
	# A pod env PROCTOR_PHASE=verifier: containerd copies it into every exec.
	ctr_in "$POD" main --image "$TASK_IMAGE" --env PROCTOR_PHASE=verifier -- "${SLEEPER[@]}"
	cri start "$CTR" || fail_with "StartContainer failed"
	local probe='echo "$(id -u) phase=$PHASE"; test -e /tests && echo tests-visible; env | grep -q "@127.0.0.1:3129" && echo token; echo "proctor_vars=$(env | grep -c PROCTOR_)"'
	local agent_out="1000 phase=agent
proctor_vars=0"
	run cri exec-sync "$CTR" -- sh -c "$probe"
	assert_status 0
	[ "$output" = "$agent_out" ] || fail_with "plain ExecSync: $output"
	run cri exec "$CTR" -- sh -c "$probe"
	assert_status 0
	[ "$output" = "$agent_out" ] || fail_with "plain Exec: $output"

	# The harness: verifier by argv, runs the tests, the reward is written.
	run cri exec-sync "$CTR" -- proctor-phase verifier "$PHASE_SECRET" -- sh -c "$probe; /tests/test.sh && echo graded; tr '\\0' ' ' </proc/\$\$/cmdline"
	assert_status 0
	grep -qx '0 phase=verifier' <<<"$output" && grep -qx tests-visible <<<"$output" && grep -qx token <<<"$output" &&
		grep -qx proctor_vars=0 <<<"$output" && grep -qx graded <<<"$output" || fail_with "verifier ExecSync: $output"
	grep -q '^sh -c echo' <<<"$output" || fail_with "the verifier's cmdline: $output"
	! grep -q "$PHASE_SECRET\|proctor-phase" <<<"$output" || fail_with "the prefix reached the verifier: $output"
	# ... read back with another verifier exec (streaming, as kubectl exec).
	run cri exec "$CTR" -- proctor-phase verifier "$PHASE_SECRET" -- cat /logs/verifier/reward.txt
	assert_status 0
	[ "$output" = 1 ] || fail_with "reward: $output"
	# The agent sees neither the tests nor the verdict.
	run cri exec-sync "$CTR" -- sh -c 'for p in /tests /logs/verifier/reward.txt; do test -e $p && echo "present $p"; done; echo checked'
	[ "$output" = checked ] || fail_with "agent: $output"
	# Setup the same way: the agent's user and env, its own token.
	run cri exec-sync "$CTR" -- proctor-phase setup "$PHASE_SECRET" -- sh -c "$probe"
	assert_status 0
	[ "$output" = "1000 phase=agent
token
proctor_vars=0" ] || fail_with "setup: $output"
}

@test "cri proctor rollout: a wrong phase secret is refused and never runs; an agent's own proctor-phase is nothing special" {
	local policy
	policy=$(jq -cn --arg h "$PHASE_HASH" '{"version": 1, "environment": {"network_mode": "none"},
		"agent": {"user": "1000:1000"}, "phase_secret_sha256": $h}')
	rollout_pod "$policy"
	# The agent controls the command string: the exact prefix with a guess.
	run cri exec-sync "$CTR" -- proctor-phase verifier guessed-secret -- sh -c 'touch /tmp/ran; cat /tests/test.sh'
	[ "$status" -ne 0 ] || fail_with "a wrong secret ran: $output"
	[[ "$output" == *"proctor-phase: wrong secret: the exec is refused"* ]] || fail_with "$output"
	! grep -q 'reward.txt' <<<"$output" || fail_with "the tests leaked: $output"
	run cri exec "$CTR" -- proctor-phase verifier guessed-secret -- sh -c 'touch /tmp/ran'
	[ "$status" -ne 0 ] || fail_with "a wrong secret ran (Exec): $output"
	run cri exec-sync "$CTR" -- sh -c 'test -e /tmp/ran && echo ran; echo checked'
	[ "$output" = checked ] || fail_with "the refused command ran: $output"
	# Inside the container, proctor-phase is a command that does not exist,
	# the right secret notwithstanding: the switch is the exec request's.
	run cri exec-sync "$CTR" -- sh -c "proctor-phase verifier $PHASE_SECRET -- id -u; echo rc=\$?"
	grep -qx 'rc=127' <<<"$output" || fail_with "$output"
	! grep -qx 0 <<<"$output" || fail_with "the agent became root: $output"
	# The agent cannot read the policy or its digest from inside.
	run cri exec-sync "$CTR" -- sh -c "cat /proc/1/environ /proc/self/environ /proc/self/mountinfo /etc/hostname 2>/dev/null
		grep -rl -e ${PHASE_HASH:0:16} -e phase_secret /etc /run /tmp /var/run 2>/dev/null; echo end"
	! grep -q "${PHASE_HASH:0:16}\|phase_secret\|run.proctor" <<<"$output" || fail_with "policy visible: $output"
}

@test "cri proctor rollout: volumes at /tests (ro) and /logs/verifier are the verifier's only; the verdict reaches the host dir, an agent's does not" {
	# The kubelet passes a ConfigMap, Secret or hostPath volume and an
	# emptyDir as Mounts of CreateContainer from host directories: /tests
	# read-only, /logs/verifier writable.
	local vol=$CRI_DIR/vol-${BATS_TEST_NUMBER}
	mkdir -p "$vol/tests" "$vol/verdict"
	printf '#!/bin/sh\nread want </tests/expected\necho "$want" > /logs/verifier/reward.txt\n' >"$vol/tests/test.sh"
	echo 0.75 >"$vol/tests/expected"
	local policy
	policy=$(jq -cn --arg h "$PHASE_HASH" '{"version": 1, "environment": {"network_mode": "none"},
		"verifier": {"user": "0:0"}, "phase_secret_sha256": $h}')
	pod proctor "volumes-${BATS_TEST_NUMBER}" --annotation "run.proctor.rollout=$policy"
	ctr_in "$POD" main --image "$IMAGE" --mount "$vol/tests:/tests:ro" --mount "$vol/verdict:/logs/verifier" -- "${SLEEPER[@]}"
	cri start "$CTR" || fail_with "StartContainer failed"

	# The agent: ENOENT on both, no trace in its mountinfo.
	run cri exec-sync "$CTR" -- sh -c 'for p in /tests /tests/test.sh /logs /logs/verifier; do stat "$p" 2>&1 | grep -q "No such file or directory" || echo "not ENOENT: $p"; done
		grep -e " /tests" -e " /logs" -e "'"$vol"'" /proc/self/mountinfo; echo checked'
	assert_status 0
	[ "$output" = checked ] || fail_with "agent: $output"
	# An agent that makes its own /logs/verifier/reward.txt writes into its
	# rootfs; and cannot write into the host's tests or verdict.
	run cri exec-sync "$CTR" -- sh -c 'mkdir -p /logs/verifier /tests && echo 1 >/logs/verifier/reward.txt && echo cheat >/tests/expected && cat /logs/verifier/reward.txt'
	assert_status 0
	[ "$output" = 1 ] || fail_with "agent's own file: $output"
	[ ! -e "$vol/verdict/reward.txt" ] || fail_with "the agent's reward reached the host: $(cat "$vol/verdict/reward.txt")"
	[ "$(cat "$vol/tests/expected")" = 0.75 ] || fail_with "the agent wrote the host's tests: $(cat "$vol/tests/expected")"

	# The verifier: reads /tests (the volume's, not the agent's), runs the
	# test script from it, writes the verdict into the emptyDir.
	run cri exec-sync "$CTR" -- proctor-phase verifier "$PHASE_SECRET" -- sh -c 'cat /tests/expected; touch /tests/x 2>/dev/null && echo tests-writable; sh /tests/test.sh && echo graded'
	assert_status 0
	[ "$output" = "0.75
graded" ] || fail_with "verifier: $output"
	# The verdict, read with another verifier exec, and on the host.
	run cri exec-sync "$CTR" -- proctor-phase verifier "$PHASE_SECRET" -- cat /logs/verifier/reward.txt
	assert_status 0
	[ "$output" = 0.75 ] || fail_with "reward by exec: $output"
	[ "$(cat "$vol/verdict/reward.txt")" = 0.75 ] || fail_with "reward on the host: $(cat "$vol/verdict/reward.txt" 2>&1)"
	# The agent still sees only its own file, never the verdict.
	run cri exec-sync "$CTR" -- sh -c 'cat /logs/verifier/reward.txt; grep -c -e " /tests" -e " /logs" /proc/self/mountinfo'
	[ "$output" = "1
0" ] || fail_with "agent after grading: $output"

	local netns
	netns=$(net_of "$POD")
	run cri stop -t 10 "$CTR"
	assert_status 0
	run cri rm "$CTR"
	assert_status 0
	remove_pod "$POD" "$netns" "$CTR"
	# The volumes are the kubelet's: still there, with the verdict.
	[ "$(cat "$vol/verdict/reward.txt")" = 0.75 ] || fail_with "verdict gone after removal"
}

@test "cri proctor rollout: the egress helper and the outer init are charged to the pod, in the container's cgroups but the memory one" {
	rollout_pod '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["example.invalid"]}}'
	local init p helper=""
	init=$(status_of "$CTR" .info.info.pid)
	for p in $(pids_naming "$CTR"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = proctor-egress ] && helper=$p
	done
	[ -n "$helper" ] || fail_with "no proctor-egress process of $CTR: $(pids_naming "$CTR")"
	# Under the pod's cgroup (the pod's limit counts them) in every
	# hierarchy.  On a v1 memory hierarchy (this hybrid host) in the
	# container's sibling CTR-proctor-runtime, so that an agent filling the
	# container's own limit cannot have the OOM killer take them
	# (src/rollout/oomshield.h); every other hierarchy: the container's own
	# process's cgroups.
	local own
	own=$(cut -d' ' -f1 "/proc/$init/task/$init/children")
	[ -n "$own" ] || fail_with "the outer init $init has no child"
	for p in "$init" "$helper"; do
		grep -q "^[0-9]*:memory:$CRI_CGROUP_PARENT/pod[0-9a-f-]*/$CTR-proctor-runtime\$" "/proc/$p/cgroup" ||
			! grep -q "^[0-9]*:memory:" "/proc/$p/cgroup" ||
			fail_with "pid $p ($(cat /proc/$p/comm)) not in the container's sibling memory cgroup: $(cat /proc/$p/cgroup)"
		[ "$(grep -v ':memory:' "/proc/$p/cgroup")" = "$(grep -v ':memory:' "/proc/$own/cgroup")" ] ||
			fail_with "pid $p ($(cat /proc/$p/comm)): $(cat /proc/$p/cgroup), the container's process $own: $(cat /proc/$own/cgroup)"
	done
}
