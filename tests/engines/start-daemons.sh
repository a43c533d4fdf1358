#!/bin/bash
# Starts containerd and dockerd in the background, without systemd, for the
# engine suites; idempotent (a daemon whose socket answers is left alone).
#
#   containerd  --config /run/proctor-ci/containerd.toml
#               socket /run/containerd/containerd.sock
#   dockerd     --config-file /run/proctor-ci/daemon.json, using that
#               containerd; socket /var/run/docker.sock
#   logs        /var/log/proctor-ci/{containerd,dockerd}.log
#
# Both configurations register the runtime under test as "proctor" by a
# fixed path, /run/proctor-ci/proctor, a symlink this script points at
# $PROCTOR (when set) on every run: the daemons need no restart when the
# binary under test moves (CI builds in a fresh clone).
#
# Debian's docker.io needs iptables (nft backend is fine), containerd, runc
# (its default runtime) and tini (docker-init); all are its dependencies.
# START_DAEMONS="containerd" narrows the set.
set -euo pipefail

RUN=/run/proctor-ci
LOGS=/var/log/proctor-ci
CTRD_SOCK=/run/containerd/containerd.sock
DOCKER_SOCK=/var/run/docker.sock
DAEMONS=${START_DAEMONS:-containerd dockerd}
here=$(cd "$(dirname "$0")" && pwd)
contrib=$here/../../contrib

log() { printf 'start-daemons.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
mkdir -p "$RUN" "$LOGS"
# The daemons must not inherit fd 9, or they would hold the lock for ever;
# nor fd 3: an engine suite's setup_file runs this script with bats's
# output pipe as fd 3, and a daemon (re)started from there would keep that
# pipe open, so bats would wait for its end for ever after the last test.
exec 9>"$RUN/.lock"
flock 9

# detached CMD...: runs CMD in its own session with stdin /dev/null and no
# inherited fd above 2 (bats leaves more than fds 3 and 9 open: its own
# pipes at 4 and up, seen at 251; a daemon holding one hangs the suite).
# The caller redirects stdout/stderr to the daemon's log.
detached() {
	(
		for fd in /proc/self/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
		done
		exec setsid "$@" </dev/null
	) &
}

if [ -n "${PROCTOR:-}" ]; then
	[ -x "$PROCTOR" ] || die "PROCTOR=$PROCTOR is not an executable"
	ln -sfn "$(readlink -f "$PROCTOR")" "$RUN/proctor.tmp"
	mv -T "$RUN/proctor.tmp" "$RUN/proctor"
fi

# wait_for CMD...: poll CMD for up to 30 s.
wait_for() {
	local _
	for _ in $(seq 1 150); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# ours NAME: the running daemon NAME is one this script started (its pid
# file names a live process of that name); only those are restarted when
# their configuration changes, a daemon started otherwise is left alone.
ours() {
	local pid
	pid=$(cat "$RUN/$1.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}

# stop_ours NAME: SIGTERM the daemon this script started, wait up to 20 s.
stop_ours() {
	local pid _
	pid=$(cat "$RUN/$1.pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	rm -f "$RUN/$1.pid"
}

containerd_up() { ctr --address "$CTRD_SOCK" version; }
dockerd_up() { /usr/bin/docker -H "unix://$DOCKER_SOCK" version; }

start_containerd() {
	command -v containerd >/dev/null || die "containerd is not installed"
	# Debian's defaults plus the proctor runtime for the CRI plugin (the
	# entry a Kubernetes RuntimeClass names), from contrib/containerd.
	sed "s|/usr/local/bin/proctor|$RUN/proctor|" "$contrib/containerd/config.toml" >"$RUN/containerd.toml.new"
	if containerd_up >/dev/null 2>&1; then
		if cmp -s "$RUN/containerd.toml.new" "$RUN/containerd.toml" || ! ours containerd; then
			rm -f "$RUN/containerd.toml.new"
			log "containerd already running"
			return 0
		fi
		log "restarting containerd: its configuration changed"
		stop_ours containerd
	fi
	mv "$RUN/containerd.toml.new" "$RUN/containerd.toml"
	log "starting containerd (log $LOGS/containerd.log)"
	detached containerd --config "$RUN/containerd.toml" --log-level debug \
		>>"$LOGS/containerd.log" 2>&1
	echo $! >"$RUN/containerd.pid"
	wait_for containerd_up || {
		tail -n 30 "$LOGS/containerd.log" >&2
		die "containerd did not answer on $CTRD_SOCK"
	}
}

start_dockerd() {
	command -v dockerd >/dev/null || die "docker.io is not installed"
	containerd_up >/dev/null 2>&1 || die "dockerd needs containerd running"
	# Plus "proctor-rollout": docker 20.10 cannot pass annotations, so the
	# rollout tests take the policy from --rollout-policy, a file the test
	# writes before each run (docs/rollout.md "docker 20.10").
	sed "s|/usr/local/bin/proctor|$RUN/proctor|" "$contrib/docker/daemon.json" |
		jq --arg p "$RUN/proctor" --arg f "$RUN/rollout-policy.json" \
			'.runtimes["proctor-rollout"] = {path: $p, runtimeArgs: ["--rollout-policy", $f]}' >"$RUN/daemon.json.new"
	if dockerd_up >/dev/null 2>&1; then
		if cmp -s "$RUN/daemon.json.new" "$RUN/daemon.json" || ! ours dockerd; then
			rm -f "$RUN/daemon.json.new"
			log "dockerd already running"
			return 0
		fi
		log "restarting dockerd: its configuration changed"
		stop_ours dockerd
	fi
	mv "$RUN/daemon.json.new" "$RUN/daemon.json"
	# A stale pid file from a killed daemon makes dockerd refuse to start.
	if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
		rm -f /var/run/docker.pid
	fi
	log "starting dockerd (log $LOGS/dockerd.log)"
	detached dockerd --config-file "$RUN/daemon.json" --containerd "$CTRD_SOCK" \
		--host "unix://$DOCKER_SOCK" >>"$LOGS/dockerd.log" 2>&1
	echo $! >"$RUN/dockerd.pid"
	wait_for dockerd_up || {
		tail -n 30 "$LOGS/dockerd.log" >&2
		die "dockerd did not answer on $DOCKER_SOCK"
	}
}

for d in $DAEMONS; do
	case $d in
	containerd) start_containerd ;;
	dockerd) start_dockerd ;;
	*) die "unknown daemon $d" ;;
	esac
done
