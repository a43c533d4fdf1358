#!/usr/bin/env bats
# The egress helper under hostile clients (src/rollout/egress, run through
# tests/tools/egress-harness on loopback): slowloris, oversized request
# heads, invalid chunk sizes, 10,000 idle connections, a flood of agent
# connections and tunnels while the verifier downloads.  Each attack runs
# while a probe client keeps asking for a normal request; the helper must
# keep answering it, close the attackers, keep its memory and descriptors
# bounded and give them back.  The helper runs sandboxed as create runs it
# (--sandbox: uid 65534, no capabilities, seccomp allowlist), so every
# attack also runs against the filter.  Limits:
# src/rollout/egress/egress-internal.h and docs/security.md.  The
# "internet" is a network namespace of the test's own (198.19.x, in the
# benchmarking range, which the helper reaches only because --reachable
# names it); nothing leaves this machine.

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
	echo '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["allowed.test"], "allowed_ports": [8081]}}' >"$HD/policy.json"
	mkdir -p "$HD/sb"
	"$HARNESS" --policy "$HD/policy.json" --agent 127.0.0.1:0 --control "$HD/ctl" \
		--log "$HD/decisions.jsonl" --hosts "$HD/hosts" --resolv "$HD/resolv.conf" \
		--reachable 198.18.0.0/15 --sandbox "$HD/sb" \
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
		--hosts "$HD/hosts" --resolv "$HD/resolv.conf" --ready-file "$HD/small.ready" --reachable 198.18.0.0/15 \
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
	    probe.sendall(b"GET http://allowed.test:8081/ HTTP/1.1\r\nHost: allowed.test:8081\r\nConnection: close\r\n\r\n")
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

# The agent floods 3128 with 3000 connections that each send one byte and
# 3000 CONNECT tunnels that then stay idle, while a verifier downloads 15
# files through 3129 with its token.  Every download must succeed (the
# verifier's connections have a budget of their own: never evicted for an
# agent's, never starved), no more tunnels may be live than the agent's
# budget, and the helper's fds stay under the RLIMIT_NOFILE it set itself
# (which its budgets never reach).  Bounded: 6000 connections, 90 s.
@test "egress hostile: an agent flood of connections and idle tunnels neither starves the verifier nor grows the helper's fds" {
	local i
	for i in $(seq 15); do head -c 1M /dev/urandom >"$HD/www/f$i"; done
	ip netns exec "$HNS" python3 -c '
import asyncio
async def echo(r, w):
    try:
        while d := await r.read(65536):
            w.write(d); await w.drain()
    except Exception:
        pass
    w.close()
async def main():
    s = await asyncio.start_server(echo, "0.0.0.0", 9000, backlog=4096)
    await s.serve_forever()
asyncio.run(main())' >"$HD/echo.log" 2>&1 3>&- &
	local echo_pid=$!
	cat >"$HD/flood.json" <<-'EOF'
	{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["allowed.test"], "allowed_ports": [8081, 9000]},
	 "verifier": {"network_mode": "public", "allowed_ports": [8081]}}
	EOF
	rm -f "$HD/flood.ready"
	"$HARNESS" --policy "$HD/flood.json" --agent 127.0.0.1:0 --verifier 127.0.0.1:0 --control "$HD/flood.ctl" \
		--hosts "$HD/hosts" --resolv "$HD/resolv.conf" --reachable 198.18.0.0/15 --sandbox "$HD/sb" \
		--ready-file "$HD/flood.ready" >"$HD/flood.log" 2>&1 3>&- &
	local fpid=$!
	for i in $(seq 50); do [ -s "$HD/flood.ready" ] && break; sleep 0.1; done
	local token=00112233445566778899aabbccddeeff
	sleep 120 3>&- &
	local tpid=$!
	"$HARNESS" --open-token "$HD/flood.ctl" verifier "$token" "$tpid"
	run timeout 120 python3 - "$(sed -n 's/^agent=//p' "$HD/flood.ready")" \
		"$(sed -n 's/^verifier=//p' "$HD/flood.ready")" "$fpid" "$token" "$HD/www" <<-'PY'
	import asyncio, base64, hashlib, os, resource, sys, time
	agent, verifier, helper, token, www = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
	resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
	auth = base64.b64encode(token.encode() + b":").decode()
	peak, tunnels, held = 0, 0, []
	def nfds():
	    try:
	        return len(os.listdir("/proc/%d/fd" % helper))
	    except OSError:
	        return -1
	async def sampler(stop):
	    global peak
	    while not stop.is_set():
	        peak = max(peak, nfds())
	        await asyncio.sleep(0.1)
	async def one_byte():
	    try:
	        r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", agent), 20)
	        w.write(b"G")
	        held.append(w)
	    except Exception:
	        pass
	async def tunnel():
	    global tunnels
	    try:
	        r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", agent), 20)
	        held.append(w)
	        w.write(b"CONNECT allowed.test:9000 HTTP/1.1\r\nHost: allowed.test:9000\r\n\r\n")
	        head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 20)
	        if head.startswith(b"HTTP/1.1 200"):
	            tunnels += 1
	    except Exception:
	        pass
	async def download(i):
	    want = hashlib.sha256(open("%s/f%d" % (www, i), "rb").read()).hexdigest()
	    await asyncio.sleep(0.5 + i * 0.2)
	    try:
	        r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", verifier), 30)
	        w.write(("GET http://allowed.test:8081/f%d HTTP/1.1\r\nHost: allowed.test:8081\r\n"
	                 "Proxy-Authorization: Basic %s\r\n\r\n" % (i, auth)).encode())
	        data = await asyncio.wait_for(r.read(), 60)
	        body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
	        return data.startswith(b"HTTP/1.") and b" 200 " in data[:20] and hashlib.sha256(body).hexdigest() == want
	    except Exception as e:
	        print("download %d: %r" % (i, e))
	        return False
	async def main():
	    stop = asyncio.Event()
	    s = asyncio.create_task(sampler(stop))
	    # The tunnels first (a budget that counts only idle clients never
	    # stops them), then the one-byte flood while the verifier downloads.
	    flood = [asyncio.create_task(tunnel()) for _ in range(3000)]
	    await asyncio.wait(flood, timeout=25)
	    flood += [asyncio.create_task(one_byte()) for _ in range(3000)]
	    ok = await asyncio.gather(*[download(i) for i in range(1, 16)])
	    await asyncio.wait(flood, timeout=25)
	    await asyncio.sleep(1)
	    stop.set()
	    await s
	    print("downloads_ok=%d" % sum(ok))
	    print("tunnels=%d" % tunnels)
	    print("peak_fds=%d" % peak)
	    for w in held:
	        w.close()
	asyncio.run(main())
	PY
	echo "$output"
	local limit
	limit=$(awk '/^Max open files/ { print $4 }' "/proc/$fpid/limits")
	# The helper closes the flood's connections as it reads their EOFs; on
	# a loaded machine that takes more than a second.  Poll (at most 30 s)
	# until it is back under the bound, which stays 64.
	local after i
	for i in $(seq 60); do
		after=$(ls "/proc/$fpid/fd" | wc -l)
		[ "$after" -lt 64 ] && break
		sleep 0.5
	done
	kill "$tpid" "$fpid" "$echo_pid" 2>/dev/null || true
	[ "$status" -eq 0 ] || fail_with "the flood client failed"
	[ "$(val downloads_ok)" = 15 ] || fail_with "only $(val downloads_ok) of 15 verifier downloads succeeded"
	[ "$(val tunnels)" -le 512 ] || fail_with "$(val tunnels) live tunnels over the agent's budget of 512"
	echo "helper RLIMIT_NOFILE $limit, peak fds $(val peak_fds), after $after"
	[ "$limit" -le 2688 ] || fail_with "RLIMIT_NOFILE $limit: the helper did not bound it"
	[ "$(val peak_fds)" -lt "$limit" ] || fail_with "peak fds $(val peak_fds) reached the cap $limit"
	[ "$after" -lt 64 ] || fail_with "$after fds left after the flood"
}

# A system call outside the seccomp allowlist kills the sandboxed helper:
# the harness's test-only trigger (SIGUSR2 -> mkdirat, see
# tests/tools/egress-harness.c) makes one; the kernel must end the process
# with SIGSYS before the call returns.  The same helper shows the
# sandbox's identity in /proc.
@test "egress hostile: the sandboxed helper is unprivileged and a system call outside its allowlist kills it" {
	rm -f "$HD/sb.ready"
	"$HARNESS" --policy "$HD/policy.json" --agent 127.0.0.1:0 --hosts "$HD/hosts" --resolv "$HD/resolv.conf" \
		--reachable 198.18.0.0/15 --sandbox "$HD/sb" --ready-file "$HD/sb.ready" >"$HD/sb.log" 2>&1 3>&- &
	local pid=$! i
	for i in $(seq 50); do [ -s "$HD/sb.ready" ] && break; sleep 0.1; done
	# The sandbox is entered after the ready file: wait for the filter.
	for i in $(seq 50); do grep -q '^Seccomp:[[:space:]]*2' "/proc/$pid/status" && break; sleep 0.1; done
	grep -E '^(Uid|Gid|Groups|CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' "/proc/$pid/status"
	grep -q "^Uid:[[:space:]]*65534[[:space:]]65534[[:space:]]65534[[:space:]]65534$" "/proc/$pid/status"
	grep -q "^Gid:[[:space:]]*65534[[:space:]]65534[[:space:]]65534[[:space:]]65534$" "/proc/$pid/status"
	grep -q "^Groups:[[:space:]]*$" "/proc/$pid/status"
	grep -q "^CapEff:[[:space:]]*0000000000000000$" "/proc/$pid/status"
	grep -q "^CapBnd:[[:space:]]*0000000000000000$" "/proc/$pid/status"
	grep -q "^NoNewPrivs:[[:space:]]*1$" "/proc/$pid/status"
	grep -q "^Seccomp:[[:space:]]*2$" "/proc/$pid/status"
	# Its root is empty.
	[ -z "$(ls -A "/proc/$pid/root/" 2>/dev/null)" ]
	run curl -s -m 10 -x "http://127.0.0.1:$(sed -n 's/^agent=//p' "$HD/sb.ready")" "http://allowed.test:8081/index.html"
	[ "$output" = hello ] || fail_with "the sandboxed helper did not serve: $output"
	kill -USR2 "$pid"
	local st=0
	wait "$pid" || st=$?
	cat "$HD/sb.log"
	[ "$st" -eq $((128 + 31)) ] || fail_with "the helper ended with status $st, not by SIGSYS (159)"
	! grep -q "was not stopped by the sandbox" "$HD/sb.log"
}
