#!/usr/bin/env bats
# The egress helper under hostile clients (src/rollout/egress, run through
# tests/tools/egress-harness on loopback): slowloris, oversized request
# heads, invalid chunk sizes, 10,000 idle connections.  Each attack runs
# while a probe client keeps asking for a normal request; the helper must
# keep answering it, close the attackers, keep its memory bounded and give
# back its descriptors.  Limits: src/rollout/egress/egress-internal.h and
# docs/security.md.  The "internet" is a network namespace of the test's
# own (198.18.0.0/15, which the helper treats as public); nothing leaves
# this machine.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../testnet.bash"

HARNESS=${EGRESS_HARNESS:-$BATS_TEST_DIRNAME/../tools/egress-harness}
CLIENT=$BATS_TEST_DIRNAME/hostile-client.py
# Peak RSS the helper may reach under any of these attacks (kB).
RSS_LIMIT_KB=${RSS_LIMIT_KB:-131072}

setup_file() {
	[ "$(id -u)" = 0 ] || { echo "needs root" >&2; return 1; }
	[ -x "$HARNESS" ] || { echo "no harness at $HARNESS (make check builds it)" >&2; return 1; }
	command -v python3 >/dev/null || { echo "needs python3" >&2; return 1; }
	export HD=$BATS_FILE_TMPDIR
	testnet_up hs 198.19
	export HNS=$TN_NS HVH=$TN_VH HPUB=$TN_PUB
	mkdir -p "$HD/www"
	echo hello >"$HD/www/index.html"
	(cd "$HD/www" && exec ip netns exec "$HNS" python3 -m http.server --bind 0.0.0.0 8081) \
		>"$HD/origin.log" 2>&1 3>&- &
	echo $! >"$HD/origin.pid"
	printf '%s allowed.test\n' "$HPUB" >"$HD/hosts"
	echo "nameserver 127.0.0.1" >"$HD/resolv.conf"
	echo '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["allowed.test"]}}' >"$HD/policy.json"
	"$HARNESS" --policy "$HD/policy.json" --agent 127.0.0.1:0 --control "$HD/ctl" \
		--log "$HD/decisions.jsonl" --hosts "$HD/hosts" --resolv "$HD/resolv.conf" \
		--ready-file "$HD/ready" >"$HD/harness.log" 2>&1 3>&- &
	echo $! >"$HD/harness.pid"
	local i
	for i in $(seq 100); do
		[ -f "$HD/ready" ] && curl -s -o /dev/null "http://$HPUB:8081/" && break
		sleep 0.1
	done
	[ -f "$HD/ready" ] || { cat "$HD/harness.log" >&2; return 1; }
}

teardown_file() {
	testnet_down "$HNS" "$HVH" "$HD/harness.pid" "$HD/origin.pid"
}

setup() {
	PORT=$(sed -n 's/^agent=//p' "$HD/ready")
	HPID=$(cat "$HD/harness.pid")
	kill -0 "$HPID" || fail_with "the helper is gone: $(tail -5 "$HD/harness.log")"
}

fail_with() { echo "$*" >&2; return 1; }

# attack MODE ARGS...: run the hostile client; its key=value lines in $output.
attack() {
	run timeout 300 env PROBE="http://allowed.test:8081/" python3 "$CLIENT" "$PORT" "$HPID" "$@"
	echo "$output"
	[ "$status" -eq 0 ] || fail_with "the client failed (status $status)"
}

val() { echo "$output" | sed -n "s/^$1=//p" | head -n 1; }

common_checks() {
	kill -0 "$HPID" || fail_with "the helper died"
	[ "$(val bad)" = 0 ] || fail_with "$(val bad) probe or connection failures"
	[ "$(val peak_rss_kb)" -lt "$RSS_LIMIT_KB" ] || fail_with "peak RSS $(val peak_rss_kb) kB over $RSS_LIMIT_KB"
	[ "$(val fds_after)" -le $(( $(val fds_before) + 2 )) ] || fail_with "fds leaked: $(val fds_before) -> $(val fds_after)"
}

@test "egress hostile: a well-formed probe works (baseline)" {
	run curl -s -x "http://127.0.0.1:$PORT" "http://allowed.test:8081/index.html"
	[ "$output" = hello ] || fail_with "baseline request failed: $output"
}

@test "egress hostile: slowloris (300 clients trickling a head) is cut at the head deadline" {
	# 35 s > PR_EGRESS_HEAD_TIMEOUT_S (30 s).
	attack slowloris 300 35
	common_checks
	[ "$(val slow_closed)" = "300/300" ] || fail_with "slow clients still open after the deadline: $(val slow_closed)"
}

@test "egress hostile: oversized request heads get 431 and cost bounded memory" {
	attack oversized 30 1048576
	common_checks
	echo "$output" | grep -q "replies=.*431" || fail_with "no 431 for an oversized head"
}

@test "egress hostile: invalid chunk sizes end only that connection" {
	attack chunks "http://allowed.test:8081/index.html"
	common_checks
	! echo "$output" | grep -q STILL-OPEN || fail_with "a malformed chunked body left its connection open"
}

@test "egress hostile: 10,000 idle connections do not stop the helper serving others" {
	attack idle 10000 5
	kill -0 "$HPID" || fail_with "the helper died"
	[ "$(val peak_rss_kb)" -lt "$RSS_LIMIT_KB" ] || fail_with "peak RSS $(val peak_rss_kb) kB"
	[ "$(val fds_after)" -le $(( $(val fds_before) + 2 )) ] || fail_with "fds leaked"
	echo "$output" | grep -q '^probe_after=ok' || fail_with "no service after the idle clients left"
	echo "$output" | grep -q '^probe_during=ok' ||
		fail_with "a new client was not served while 10,000 idle connections were open (at the connection limit the oldest idle one must make room)"
}

# At the connection limit the helper closes an idle client to make room.
# A client whose request is already queued in its socket, not yet read
# because a burst of accepts came first, is not idle: a flood of
# connections that send nothing must lose their slots before it does.
# The helper is stopped while the request and the flood queue up, so the
# burst is certain.  A helper of its own with RLIMIT_NOFILE 256: 32 slots.
@test "egress hostile: at the connection limit a client with its request queued outlives a flood of idle ones" {
	rm -f "$HD/small.ready"
	prlimit --nofile=256:256 "$HARNESS" --policy "$HD/policy.json" --agent 127.0.0.1:0 \
		--hosts "$HD/hosts" --resolv "$HD/resolv.conf" --ready-file "$HD/small.ready" \
		>"$HD/small.log" 2>&1 3>&- &
	local small=$!
	local i
	for i in $(seq 50); do [ -s "$HD/small.ready" ] && break; sleep 0.1; done
	local port
	port=$(sed -n 's/^agent=//p' "$HD/small.ready")
	run timeout 60 python3 - "$port" "$small" <<-'PY'
	import os, signal, socket, sys, time
	port, helper = int(sys.argv[1]), int(sys.argv[2])
	idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(32)]
	time.sleep(0.5)
	os.kill(helper, signal.SIGSTOP)
	try:
	    probe = socket.create_connection(("127.0.0.1", port))
	    probe.sendall(b"GET http://allowed.test:8081/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	    flood = []
	    for _ in range(64):
	        s = socket.socket(); s.setblocking(False)
	        try: s.connect(("127.0.0.1", port))
	        except BlockingIOError: pass
	        flood.append(s)
	    time.sleep(0.1)
	finally:
	    os.kill(helper, signal.SIGCONT)
	probe.settimeout(10)
	try:
	    line = probe.recv(4096).split(b"\r\n")[0].decode("latin1") or "closed without a reply"
	except OSError as e:
	    line = "error: %s" % e
	print(line)
	PY
	kill "$small" 2>/dev/null || true
	[ "$status" -eq 0 ] || fail_with "client: $output"
	[[ "$output" == "HTTP/1."[01]" 200"* ]] || fail_with "the queued request was not served: $output"
}
