#!/usr/bin/env bats
# egress.bats - the egress helper (src/rollout/egress) end to end, through
# tests/tools/egress-harness on loopback listeners.  The "internet" is a
# network namespace of the test's own, joined by a veth pair: its stand-in
# public address is in 198.18.0.0/15 (the benchmarking range, which the
# helper refuses unless the operator's reachable ranges name it, as
# --reachable does here: PROCTOR_EGRESS_REACHABLE under create), and it
# also has a 10.200.x address, reachable only as a peer.  Names come from a
# private hosts file; nothing leaves this machine.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../testnet.bash"

HARNESS=${EGRESS_HARNESS:-$BATS_TEST_DIRNAME/../tools/egress-harness}
TOKEN=0123456789abcdef0123456789abcdef

setup_file() {
	[ "$(id -u)" = 0 ] || { echo "egress.bats needs root" >&2; return 1; }
	[ -x "$HARNESS" ] || { echo "egress.bats: no harness at $HARNESS (make check builds it)" >&2; return 1; }
	command -v python3 >/dev/null && command -v jq >/dev/null && command -v curl >/dev/null || {
		echo "egress.bats needs python3, jq and curl" >&2; return 1; }

	export EG_DIR=$BATS_FILE_TMPDIR
	testnet_up eg 198.18 10.200
	export EG_N=$TN_N EG_NS=$TN_NS EG_VH=$TN_VH EG_PUB=$TN_PUB EG_SELF=$TN_SELF EG_PRIV=$TN_PRIV
	# Below the ephemeral range (32768+), so no client socket holds it.
	export EG_PEER_PORT=$(( 10000 + $$ % 20000 ))


	mkdir -p "$EG_DIR/www"
	head -c 100M /dev/urandom >"$EG_DIR/www/big.bin"
	write_origin >"$EG_DIR/origin.py"
	write_tunnels >"$EG_DIR/tunnels.py"
	# Echo on 9000, and on 21 and 443 for the port and TLS rules.
	ip netns exec "$EG_NS" python3 "$EG_DIR/origin.py" 8081 9000,21,443 "$EG_DIR/www" \
		>"$EG_DIR/origin.log" 2>&1 3>&- &
	echo $! >"$EG_DIR/origin.pid"

	cat >"$EG_DIR/hosts" <<-EOF
	$EG_PUB allowed.test sub.allowed.test denied.test
	$EG_PRIV priv.test
	127.0.0.1 lo.test
	$EG_SELF self.test
	EOF
	echo "nameserver 127.0.0.1" >"$EG_DIR/resolv.conf"
	cat >"$EG_DIR/policy.json" <<-EOF
	{"version": 1,
	 "agent": {"network_mode": "allowlist",
	           "allowed_hosts": ["allowed.test", "lo.test", "priv.test", "self.test", "nx.invalid"],
	           "allowed_ports": [8081, 9000]},
	 "verifier": {"network_mode": "public", "allowed_ports": [8081, 9000, 21]},
	 "peers": [{"name": "db", "port": $EG_PEER_PORT, "target": "tcp:$EG_PRIV:9000"}]}
	EOF

	"$HARNESS" --policy "$EG_DIR/policy.json" --agent 127.0.0.1:0 --verifier 127.0.0.1:0 \
		--control "$EG_DIR/ctl" --log "$EG_DIR/decisions.jsonl" --hosts "$EG_DIR/hosts" \
		--resolv "$EG_DIR/resolv.conf" --ready-file "$EG_DIR/ready" --reachable 198.18.0.0/15 \
		--totals "$EG_DIR/totals" >"$EG_DIR/harness.log" 2>&1 3>&- &
	echo $! >"$EG_DIR/harness.pid"

	local i
	for i in $(seq 50); do
		[ -f "$EG_DIR/ready" ] && curl -s -o /dev/null "http://$EG_PUB:8081/nothing" && break
		sleep 0.1
	done
	[ -f "$EG_DIR/ready" ] || { cat "$EG_DIR/harness.log" >&2; return 1; }
}

teardown_file() {
	testnet_down "$EG_NS" "$EG_VH" "$EG_DIR/harness.pid" "$EG_DIR/origin.pid"
}

setup() {
	AGENT=127.0.0.1:$(sed -n 's/^agent=//p' "$EG_DIR/ready")
	VERIFIER=127.0.0.1:$(sed -n 's/^verifier=//p' "$EG_DIR/ready")
	# The decisions written before this test (expect_decision looks after).
	EG_MARK=$(wc -l <"$EG_DIR/decisions.jsonl" 2>/dev/null || echo 0)
}

# The test origin: HTTP on $1 (fixed routes), TCP echo on $2, files from $3.
write_origin() {
	cat <<'EOF'
import asyncio, os, sys
http_port, echo_ports, root = int(sys.argv[1]), [int(p) for p in sys.argv[2].split(",")], sys.argv[3]
CHUNKS = [b"alpha\n", b"x" * 70000, b"omega\n"]

async def echo(r, w):
    try:
        while True:
            d = await r.read(65536)
            if not d:
                break
            w.write(d)
            await w.drain()
        w.close()
    except Exception:
        pass

async def http(r, w):
    try:
        head = await r.readuntil(b"\r\n\r\n")
        lines = head.decode("latin1").split("\r\n")
        method, path, ver = lines[0].split(" ")
        hdrs = {}
        for l in lines[1:]:
            if l:
                k, v = l.split(":", 1)
                hdrs[k.strip().lower()] = v.strip()
        if path == "/headers":
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(head) + head)
        elif path == "/chunked":
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for c in CHUNKS:
                w.write(b"%x\r\n" % len(c) + c + b"\r\n")
                await w.drain()
                await asyncio.sleep(0.05)
            w.write(b"0\r\n\r\n")
        elif path == "/echo":
            if hdrs.get("transfer-encoding") == "chunked":
                body = b""
                while True:
                    n = int((await r.readline()).strip().split(b";")[0], 16)
                    if n == 0:
                        await r.readline()
                        break
                    body += await r.readexactly(n)
                    await r.readline()
            else:
                body = await r.readexactly(int(hdrs.get("content-length", "0")))
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        elif path.startswith("/file/"):
            p = os.path.join(root, os.path.basename(path))
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % os.path.getsize(p))
            with open(p, "rb") as f:
                while d := f.read(1 << 20):
                    w.write(d)
                    await w.drain()
        else:
            w.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        await w.drain()
        w.close()
    except Exception as e:
        print("origin:", e, file=sys.stderr)

async def main():
    a = await asyncio.start_server(http, "0.0.0.0", http_port, backlog=1024)
    bs = [await asyncio.start_server(echo, "0.0.0.0", p, backlog=1024) for p in echo_ports]
    await asyncio.gather(a.serve_forever(), *[b.serve_forever() for b in bs])

asyncio.run(main())
EOF
}

# N parallel CONNECT tunnels to an echo server, each checked byte for byte,
# then half-closed (the echo's EOF must come back through the tunnel).
write_tunnels() {
	cat <<'EOF'
import asyncio, os, sys
proxy, host, port, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

async def one(i):
    r, w = await asyncio.open_connection("127.0.0.1", proxy)
    w.write(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    head = await r.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    payload = os.urandom(4096) * 16
    w.write(payload)
    await w.drain()
    assert await r.readexactly(len(payload)) == payload, "echo mismatch"
    w.write_eof()
    assert await r.read() == b"", "trailing bytes"
    w.close()

async def main():
    await asyncio.wait_for(asyncio.gather(*[one(i) for i in range(n)]), 60)
    print("ok", n)

asyncio.run(main())
EOF
}

# decisions_since_setup: the decision lines this test's connections wrote.
decisions_since_setup() {
	tail -n "+$((EG_MARK + 1))" "$EG_DIR/decisions.jsonl"
}

# expect_decision [JQ_OPTION...] JQ_CONDITION: some decision line of this
# test matches (options such as --arg NAME VALUE go to jq).
# A connection's line is written when the helper closes it, which can be a
# moment after the client is done (longer on a loaded machine: a CI run
# saw it past 3 s), and after the line of a later connection: the last
# line alone is not this request's (a local CI run of 2026-12-04 saw the
# previous test's CONNECT close after this test's GET).  Retries for up
# to 10 s.
expect_decision() {
	local i cond=${*: -1}
	local opts=("${@:1:$#-1}")
	for i in $(seq 100); do
		decisions_since_setup | jq -se "${opts[@]}" "any(.[]; $cond)" >/dev/null && return 0
		sleep 0.1
	done
	decisions_since_setup | jq -se "${opts[@]}" "any(.[]; $cond)"
}

@test "egress: allowed host through the forward proxy" {
	run curl -sS -m 10 -x "http://$AGENT" "http://allowed.test:8081/headers"
	[ "$status" -eq 0 ]
	[[ "$output" == *"GET /headers HTTP/1.1"* ]]
	[[ "$output" == *"Host: allowed.test:8081"* ]]
	[[ "$output" == *"Connection: close"* ]]
	[[ "$output" != *"Proxy-Connection"* ]]
	run curl -sS -m 10 -x "http://$AGENT" "http://sub.allowed.test:8081/headers"
	[ "$status" -eq 0 ]
}

@test "egress: hop-by-hop fields are removed and Host is the target's" {
	run curl -sS -m 10 -x "http://$AGENT" -H 'Connection: X-Secret' -H 'X-Secret: 1' \
		-H 'Keep-Alive: 5' -H 'Host: ALLOWED.test.:8081' -H 'TE: trailers' -H 'X-Keep: yes' \
		"http://allowed.test:8081/headers"
	[ "$status" -eq 0 ]
	[[ "$output" == *"X-Keep: yes"* ]]
	[[ "$output" == *"Host: allowed.test:8081"* ]]
	[[ "$output" != *"X-Secret"* ]]
	[[ "$output" != *"Keep-Alive"* ]]
	[[ "$output" != *"ALLOWED"* ]]
	[[ "$output" != *"TE:"* ]]
}

# Domain fronting: the origin (or the CDN in front of it) would answer for
# the Host field, not for the target the policy checked.
@test "egress: a forward request whose Host names another host than its target is refused" {
	run curl -sS -m 10 -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' -x "http://$AGENT" -H 'Host: denied.test' \
		"http://allowed.test:8081/headers"
	[ "$output" = 403 ]
	grep -q 'the Host field names another host than the request target' "$BATS_TEST_TMPDIR/body"
	expect_decision '.host == "allowed.test" and .decision == "deny" and (.reason | test("Host field"))'
	# The same host on another port is another target too.
	run curl -sS -m 10 -o /dev/null -w '%{http_code}' -x "http://$AGENT" -H 'Host: allowed.test:9000' \
		"http://allowed.test:8081/headers"
	[ "$output" = 403 ]
	# Two Host fields: 400 (RFC 9112 section 3.2); curl would send one.
	run python3 -c "
import socket
s = socket.create_connection(('${AGENT%:*}', ${AGENT#*:}))
s.sendall(b'GET http://allowed.test:8081/headers HTTP/1.1\\r\\nHost: allowed.test:8081\\r\\nhost: allowed.test:8081\\r\\n\\r\\n')
print(s.recv(4096).split(b'\\r\\n')[0].decode())"
	[ "$output" = "HTTP/1.1 400 Bad Request" ]
}

@test "egress: CONNECT tunnel to an allowed host" {
	run curl -sS -m 10 -p -x "http://$AGENT" "http://allowed.test:8081/headers"
	[ "$status" -eq 0 ]
	[[ "$output" == *"GET /headers HTTP/1.1"* ]]
	expect_decision '.method == "CONNECT" and .decision == "allow" and .host == "allowed.test" and .bytes_down > 0'
}

@test "egress: host outside the allowlist gets 403 and a log line" {
	run curl -sS -m 10 -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' -x "http://$AGENT" "http://denied.test:8081/headers"
	[ "$output" = 403 ]
	grep -qx 'host denied.test is not in the agent allowlist' "$BATS_TEST_TMPDIR/body"
	expect_decision '.phase == "agent" and .method == "GET" and .host == "denied.test" and .port == 8081 and .decision == "deny"'
	run curl -sS -m 10 -p -w '%{http_code}' -x "http://$AGENT" "http://denied.test:8081/"
	[ "$status" -ne 0 ]
	expect_decision '.method == "CONNECT" and .decision == "deny"'
}

@test "egress: names resolving to loopback, private or host-own addresses are refused" {
	local h
	for h in lo.test priv.test self.test; do
		run curl -sS -m 10 -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' -x "http://$AGENT" "http://$h:8081/headers"
		[ "$output" = 403 ]
		grep -q "only public addresses are reachable" "$BATS_TEST_TMPDIR/body"
		expect_decision --arg h "$h" '.host == $h and .decision == "deny"'
	done
	run curl -sS -m 10 -p -o /dev/null -x "http://$AGENT" "http://lo.test:8081/"
	[ "$status" -ne 0 ]
	grep -q 'lo.test resolves to 127.0.0.1, a loopback address' "$EG_DIR/decisions.jsonl"
	grep -q "priv.test resolves to $EG_PRIV, a private address" "$EG_DIR/decisions.jsonl"
}

@test "egress: unresolvable name is 502, numeric tricks are 400" {
	run curl -sS -m 20 -o /dev/null -w '%{http_code}' -x "http://$AGENT" "http://nx.invalid/"
	[ "$output" = 502 ]
	# Raw requests: curl itself would normalise these before sending.
	run python3 -c "
import socket
for req in [b'GET http://0x7f.1:8081/ HTTP/1.1', b'GET http://2130706433:8081/ HTTP/1.1',
            b'GET /headers HTTP/1.1\\r\\nHost: allowed.test:8081']:
    s = socket.create_connection(('${AGENT%:*}', ${AGENT#*:}))
    s.sendall(req + b'\\r\\n\\r\\n')
    print(s.recv(4096).split(b'\\r\\n')[0].decode())"
	[ "${#lines[@]}" -eq 3 ]
	local l
	for l in "${lines[@]}"; do
		[ "$l" = "HTTP/1.1 400 Bad Request" ]
	done
}

@test "egress: chunked response relayed byte-exact" {
	curl -sS -m 10 --raw "http://$EG_PUB:8081/chunked" >"$BATS_TEST_TMPDIR/direct"
	curl -sS -m 10 --raw -x "http://$AGENT" "http://allowed.test:8081/chunked" >"$BATS_TEST_TMPDIR/proxied"
	[ -s "$BATS_TEST_TMPDIR/direct" ]
	cmp "$BATS_TEST_TMPDIR/direct" "$BATS_TEST_TMPDIR/proxied"
	run curl -sS -m 10 -x "http://$AGENT" "http://allowed.test:8081/chunked"
	[ "${#output}" -eq $(( 6 + 70000 + 5 )) ]
}

@test "egress: request bodies (length and chunked) and nothing after them" {
	run curl -sS -m 10 -x "http://$AGENT" --data-binary 'hello body' "http://allowed.test:8081/echo"
	[ "$output" = "hello body" ]
	run bash -c "printf 'chunky data' | curl -sS -m 10 -x http://$AGENT -H 'Transfer-Encoding: chunked' --data-binary @- http://allowed.test:8081/echo"
	[ "$output" = "chunky data" ]
	# A request smuggled after the body never reaches anyone.
	run python3 -c "
import socket
s = socket.create_connection(('${AGENT%:*}', ${AGENT#*:}))
s.sendall(b'POST http://allowed.test:8081/echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcdGET http://denied.test:8081/headers HTTP/1.1\r\n\r\n')
out = b''
while d := s.recv(65536):
    out += d
print(out.decode())"
	[[ "$output" == *"HTTP/1.1 200 OK"* ]]
	[[ "$output" == *abcd ]]
	[[ "$output" != *denied* ]]
}

@test "egress: 100 MB download byte-exact" {
	want=$(sha256sum <"$EG_DIR/www/big.bin")
	got=$(curl -sS -m 60 -x "http://$AGENT" "http://allowed.test:8081/file/big.bin" | sha256sum)
	[ "$got" = "$want" ]
	got=$(curl -sS -m 60 -p -x "http://$AGENT" "http://allowed.test:8081/file/big.bin" | sha256sum)
	[ "$got" = "$want" ]
	expect_decision '.bytes_down >= 104857600'
}

@test "egress: the client hop is not paced (cubic or reno on accepted sockets, whatever the host default)" {
	# The proxy's side of an agent connection: source port = the listener's.
	run python3 -c "
import socket, subprocess, time
s = socket.create_connection(('${AGENT%:*}', ${AGENT#*:}))
time.sleep(0.3)
print(subprocess.run(['ss', '-tinH', 'state', 'established', 'sport = :${AGENT#*:}'],
                     capture_output=True, text=True).stdout)
s.close()"
	[ "$status" -eq 0 ]
	echo "host default: $(sysctl -n net.ipv4.tcp_congestion_control); ss: $output"
	[[ "$output" =~ (^|[[:space:]])(cubic|reno)[[:space:]] ]]
}

@test "egress: a slow reader does not make the helper buffer" {
	run python3 -c "
import socket, time
def rss():
    return int([l.split()[1] for l in open('/proc/$(cat "$EG_DIR/harness.pid")/status') if l.startswith('VmRSS')][0])
before = rss()
ss = []
for i in range(4):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(('${AGENT%:*}', ${AGENT#*:}))
    s.sendall(b'GET http://allowed.test:8081/file/big.bin HTTP/1.1\r\n\r\n')
    ss.append(s)
time.sleep(3)
print(rss() - before)"
	[ "$status" -eq 0 ]
	echo "rss grew by ${output} kB"
	# 4 connections x (2 x 128 KiB relay bound + socket reads) is ~1.5 MiB.
	[ "$output" -lt 16384 ]
}

@test "egress: 200 parallel CONNECT tunnels" {
	run timeout 60 python3 "$EG_DIR/tunnels.py" "${AGENT#*:}" allowed.test 9000 200
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ok 200" ]
	# Every tunnel was closed and logged.
	sleep 0.5
	[ "$(ls "/proc/$(cat "$EG_DIR/harness.pid")/fd" | wc -l)" -lt 40 ]
}

@test "egress: verifier listener needs a live token" {
	run curl -sS -m 10 -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' -x "http://$VERIFIER" "http://denied.test:8081/headers"
	[ "$output" = 407 ]
	run curl -sS -m 10 -o /dev/null -w '%{http_code}' -x "http://$TOKEN@$VERIFIER" "http://denied.test:8081/headers"
	[ "$output" = 403 ]
	expect_decision '.phase == "verifier" and .decision == "deny"'

	sleep 60 3>&- &
	local pid=$!
	"$HARNESS" --open-token "$EG_DIR/ctl" verifier "$TOKEN" "$pid"
	run "$HARNESS" --open-token "$EG_DIR/ctl" verifier "$TOKEN" "$pid"
	[ "$status" -ne 0 ]
	[[ "$output" == *"token already registered"* ]]

	# The verifier policy is public: denied.test is fine, loopback is not.
	run curl -sS -m 10 -x "http://$TOKEN@$VERIFIER" "http://denied.test:8081/headers"
	[ "$status" -eq 0 ]
	expect_decision '.phase == "verifier" and .decision == "allow"'
	run curl -sS -m 10 -p -x "http://$TOKEN:x@$VERIFIER" "http://denied.test:8081/headers"
	[ "$status" -eq 0 ]
	run curl -sS -m 10 -o /dev/null -w '%{http_code}' -x "http://$TOKEN@$VERIFIER" "http://127.0.0.1:8081/"
	[ "$output" = 403 ]
	# The agent listener ignores the token.
	run curl -sS -m 10 -o /dev/null -w '%{http_code}' -x "http://$TOKEN@$AGENT" "http://denied.test:8081/headers"
	[ "$output" = 403 ]

	kill "$pid"
	wait "$pid" || true
	sleep 0.3
	run curl -sS -m 10 -o /dev/null -w '%{http_code}' -x "http://$TOKEN@$VERIFIER" "http://denied.test:8081/headers"
	[ "$output" = 403 ]
}

@test "egress: control socket rejects bad commands" {
	run bash -c "printf '%s\n' '{\"cmd\":\"nope\"}' 'not json' '{\"cmd\":\"open\",\"phase\":\"agent\",\"token\":\"$TOKEN\",\"pid\":1}' '{\"cmd\":\"open\",\"phase\":\"setup\",\"token\":\"xyz\",\"pid\":1}' '{\"cmd\":\"close\",\"token\":\"$TOKEN\"}' | timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(\"$EG_DIR/ctl\")
s.sendall(sys.stdin.buffer.read())
s.shutdown(socket.SHUT_WR)
out = b\"\"
while d := s.recv(4096):
    out += d
print(out.decode(), end=\"\")'"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 5 ]
	local l
	for l in "${lines[@]}"; do
		echo "$l" | jq -e '.ok == false and (.error | length > 0)'
	done
}

@test "egress: peers are spliced to their target" {
	run python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', $EG_PEER_PORT))
s.sendall(b'ping through the peer')
s.shutdown(socket.SHUT_WR)
out = b''
while d := s.recv(4096):
    out += d
print(out.decode())"
	[ "$output" = "ping through the peer" ]
	sleep 0.2
	grep '"method":"PEER"' "$EG_DIR/decisions.jsonl" | tail -n 1 |
		jq -e --arg t "$EG_PRIV" '.host == $t and .port == 9000 and .decision == "allow" and .bytes_up == 21 and .bytes_down == 21'
}

@test "egress: request head limits" {
	run python3 -c "
import socket
def ask(data):
    s = socket.create_connection(('${AGENT%:*}', ${AGENT#*:}))
    s.sendall(data)
    out = b''
    while d := s.recv(65536):
        out += d
    return out.split(b'\r\n')[0].decode()
print(ask(b'GET http://allowed.test:8081/ HTTP/1.1\r\nX: ' + b'a' * 20000 + b'\r\n\r\n'))
print(ask(b'GET http://allowed.test:8081/ HTTP/1.1\r\n' + b'X: a\r\n' * 101 + b'\r\n'))
print(ask(b'GET http://allowed.test:8081/ HTTP/1.1\r\n folded\r\n\r\n'))"
	[ "${lines[0]}" = "HTTP/1.1 431 Request Header Fields Too Large" ]
	[ "${lines[1]}" = "HTTP/1.1 431 Request Header Fields Too Large" ]
	[ "${lines[2]}" = "HTTP/1.1 400 Bad Request" ]
}

@test "egress: decision log is JSON lines with every field" {
	[ -s "$EG_DIR/decisions.jsonl" ]
	jq -e -s 'length > 10 and all(.[]; (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))
		and (.phase | type == "string") and (.method | type == "string") and (.host | type == "string")
		and (.port | type == "number") and (.decision == "allow" or .decision == "deny")
		and (.reason | type == "string") and (.bytes_up | type == "number") and (.bytes_down | type == "number"))' \
		"$EG_DIR/decisions.jsonl"
}

# A helper without the operator's reachable ranges: the test origin's
# benchmarking address (and a documentation one) are refused, as is the
# Debian mirror on a machine where it resolves into a documentation
# range; with the ranges named, reached.  No traffic leaves for a refused
# address: the check runs before connect.
@test "egress: benchmarking and documentation addresses are refused unless the operator's reachable ranges name them" {
	local doc=198.51.100.$EG_N
	ip -n "$EG_NS" addr add "$doc/32" dev "${EG_VH%a}b"
	ip route add "$doc/32" dev "$EG_VH"
	echo "$doc doc.test" >>"$EG_DIR/hosts"
	echo '{"version": 1, "agent": {"network_mode": "public", "allowed_ports": [8081]}}' >"$BATS_TEST_TMPDIR/p.json"
	local r
	for r in "" "198.18.0.0/15,$doc"; do
		rm -f "$BATS_TEST_TMPDIR/ready"
		"$HARNESS" --policy "$BATS_TEST_TMPDIR/p.json" --agent 127.0.0.1:0 --log "$BATS_TEST_TMPDIR/log" \
			--hosts "$EG_DIR/hosts" --resolv "$EG_DIR/resolv.conf" --ready-file "$BATS_TEST_TMPDIR/ready" \
			${r:+--reachable "$r"} 3>&- &
		local hpid=$! i
		for i in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/ready" ] && break; sleep 0.1; done
		local port
		port=$(sed -n 's/^agent=//p' "$BATS_TEST_TMPDIR/ready")
		local a b
		a=$(curl -sS -m 10 -o "$BATS_TEST_TMPDIR/a" -w '%{http_code}' -x "http://127.0.0.1:$port" "http://allowed.test:8081/headers")
		b=$(curl -sS -m 10 -o "$BATS_TEST_TMPDIR/b" -w '%{http_code}' -x "http://127.0.0.1:$port" "http://doc.test:8081/headers")
		kill "$hpid"
		wait "$hpid" || true
		if [ -z "$r" ]; then
			[ "$a" = 403 ] || { echo "benchmarking origin without the setting: $a $(cat "$BATS_TEST_TMPDIR/a")"; return 1; }
			grep -q "resolves to $EG_PUB, a benchmarking address" "$BATS_TEST_TMPDIR/a"
			[ "$b" = 403 ] || { echo "documentation origin without the setting: $b"; return 1; }
			grep -q "resolves to $doc, a documentation address" "$BATS_TEST_TMPDIR/b"
		else
			[ "$a" = 200 ] || { echo "with the setting: $a $(cat "$BATS_TEST_TMPDIR/a")"; return 1; }
			[ "$b" = 200 ] || { echo "with the setting: $b $(cat "$BATS_TEST_TMPDIR/b")"; return 1; }
		fi
	done
	ip route del "$doc/32" dev "$EG_VH"
	# A bad range is refused before anything listens.
	run "$HARNESS" --policy "$BATS_TEST_TMPDIR/p.json" --agent 127.0.0.1:0 --reachable 198.18.0.1/15
	[ "$status" -ne 0 ]
	[[ "$output" == *'`198.18.0.1/15` has bits set after its /15 prefix'* ]]
}

# CONNECT_RAW PORT HOST:PORT PAYLOAD_PY: a CONNECT through PORT, then the
# payload (a python expression for bytes); prints the status line, then
# "echo ok" when the tunnel echoed the payload or "closed" when the proxy
# closed it.
connect_raw() {
	python3 - "$@" <<-'PY'
	import socket, ssl, sys
	port, target, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3]
	def hello(name):
	    ctx = ssl.create_default_context()
	    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
	    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
	    t = ctx.wrap_bio(i, o, server_hostname=name)
	    try:
	        t.do_handshake()
	    except ssl.SSLWantReadError:
	        pass
	    return o.read()
	data = eval(payload)
	s = socket.create_connection(("127.0.0.1", port), timeout=10)
	s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
	head = b""
	while b"\r\n\r\n" not in head:
	    d = s.recv(4096)
	    if not d:
	        break
	    head += d
	print(head.split(b"\r\n")[0].decode())
	if not head.startswith(b"HTTP/1.1 200"):
	    sys.exit(0)
	s.sendall(data)
	got = b""
	try:
	    while len(got) < len(data):
	        d = s.recv(65536)
	        if not d:
	            break
	        got += d
	except OSError:
	    pass
	print("echo ok" if got == data else "closed")
	PY
}

@test "egress: only ports 80, 443 and the phase's allowed_ports; no CONNECT to 80" {
	# The agent's allowed_ports are 8081 and 9000; the verifier's add 21.
	run connect_raw "${AGENT#*:}" allowed.test:21 'b"USER x\r\n"'
	[[ "${lines[0]}" == "HTTP/1.1 403"* ]] || { echo "$output"; return 1; }
	expect_decision '.host == "allowed.test" and .port == 21 and .decision == "deny" and (.reason | test("port 21 is not allowed"))'
	run curl -sS -m 10 -o /dev/null -w '%{http_code}' -x "http://$AGENT" "http://allowed.test:21/"
	[ "$output" = 403 ]

	sleep 60 3>&- &
	local pid=$!
	"$HARNESS" --open-token "$EG_DIR/ctl" verifier "$TOKEN" "$pid"
	local b64
	b64=$(printf '%s:' "$TOKEN" | base64)
	run python3 - "${VERIFIER#*:}" "$b64" <<-'PY'
	import socket, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
	s.sendall(b"CONNECT allowed.test:21 HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n" % sys.argv[2].encode())
	head = b""
	while b"\r\n\r\n" not in head:
	    head += s.recv(4096)
	print(head.split(b"\r\n")[0].decode())
	s.sendall(b"USER x\r\n")
	print(s.recv(100).decode().strip())
	PY
	kill "$pid"
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ] || { echo "$output"; return 1; }
	[ "${lines[1]}" = "USER x" ]

	# CONNECT to port 80 would carry requests for any virtual host.
	run connect_raw "${AGENT#*:}" allowed.test:80 'b"GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n"'
	[[ "${lines[0]}" == "HTTP/1.1 403"* ]] || { echo "$output"; return 1; }
	expect_decision '.port == 80 and .method == "CONNECT" and .decision == "deny" and (.reason | test("port 80"))'
}

@test "egress: a CONNECT to 443 must open with a ClientHello naming the CONNECT host" {
	# The right name: the tunnel carries the hello (the echo returns it).
	run connect_raw "${AGENT#*:}" allowed.test:443 'hello("allowed.test")'
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ] || { echo "$output"; return 1; }
	[ "${lines[1]}" = "echo ok" ] || { echo "$output"; return 1; }
	expect_decision '.host == "allowed.test" and .port == 443 and .decision == "allow" and .bytes_up > 100'
	# Another name (an allowed one too), no TLS at all, a hello without a name.
	run connect_raw "${AGENT#*:}" allowed.test:443 'hello("sub.allowed.test")'
	[ "${lines[1]}" = closed ] || { echo "$output"; return 1; }
	expect_decision '.port == 443 and .decision == "deny" and (.reason | test("names sub.allowed.test, not the CONNECT host"))'
	run connect_raw "${AGENT#*:}" allowed.test:443 'b"GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n"'
	[ "${lines[1]}" = closed ] || { echo "$output"; return 1; }
	expect_decision '.port == 443 and .decision == "deny" and (.reason | test("does not start with a TLS handshake"))'
	run connect_raw "${AGENT#*:}" allowed.test:443 'hello(None)'
	[ "${lines[1]}" = closed ] || { echo "$output"; return 1; }
	expect_decision '.port == 443 and .decision == "deny" and (.reason | test("no SNI"))'
	# Nothing of a refused tunnel reached the origin: the echo's log is
	# silent, and only the allowed hello was relayed.
	[ "$(jq -s '[.[] | select(.port == 443 and .decision == "deny")] | map(.bytes_down) | add' "$EG_DIR/decisions.jsonl")" = 0 ]
}

# Everything the agent can make the proxy answer: not one names the product.
@test "egress: no response the agent can elicit names the product" {
	run python3 - "${AGENT#*:}" "${VERIFIER#*:}" <<-'PY'
	import socket, sys
	agent, verifier = int(sys.argv[1]), int(sys.argv[2])
	reqs = [
	    (agent, b"GET http://denied.test:8081/ HTTP/1.1\r\n\r\n"),
	    (agent, b"GET http://lo.test:8081/ HTTP/1.1\r\n\r\n"),
	    (agent, b"GET http://allowed.test:21/ HTTP/1.1\r\n\r\n"),
	    (agent, b"GET http://allowed.test:8081/ HTTP/1.1\r\nHost: denied.test\r\n\r\n"),
	    (agent, b"GET http://nx.invalid/ HTTP/1.1\r\n\r\n"),
	    (agent, b"GET /x HTTP/1.1\r\n\r\n"),
	    (agent, b"GET http://allowed.test:8081/ HTTP/2.0\r\n\r\n"),
	    (agent, b"GET http://allowed.test:8081/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
	    (agent, b"GET http://allowed.test:8081/ HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n"),
	    (agent, b"CONNECT allowed.test:80 HTTP/1.1\r\n\r\n"),
	    (agent, b"CONNECT allowed.test:9001 HTTP/1.1\r\n\r\n"),
	    (verifier, b"GET http://allowed.test:8081/ HTTP/1.1\r\n\r\n"),
	    (verifier, b"GET http://allowed.test:8081/ HTTP/1.1\r\nProxy-Authorization: Basic eHh4eHh4eHh4eHh4eHh4eHh4eA==\r\n\r\n"),
	    (verifier, b"GET http://allowed.test:8081/ HTTP/1.1\r\nProxy-Authorization: Bearer x\r\n\r\n"),
	]
	for port, r in reqs:
	    s = socket.create_connection(("127.0.0.1", port), timeout=30)
	    s.sendall(r)
	    out = b""
	    try:
	        while d := s.recv(65536):
	            out += d
	    except OSError:
	        pass
	    print(repr(out))
	PY
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${#lines[@]}" -eq 14 ]
	local l
	for l in "${lines[@]}"; do
		[[ "$l" == "b'HTTP/1.1 4"* || "$l" == "b'HTTP/1.1 5"* ]] || { echo "no error reply: $l"; return 1; }
	done
	! grep -qi proctor <<<"$output"
	grep -q 'realm="proxy"' <<<"$output"
}

# Repeats of one decision are folded into a line per key and second, the
# totals count every decision with its bytes, per phase.
@test "egress: repeated decisions are folded and counted; totals per phase" {
	local before
	before=$(wc -l <"$EG_DIR/decisions.jsonl")
	run python3 - "${AGENT#*:}" <<-'PY'
	import socket, sys
	for i in range(300):
	    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
	    s.sendall(b"GET http://fold.denied.test:8081/ HTTP/1.1\r\n\r\n")
	    while s.recv(4096):
	        pass
	PY
	[ "$status" -eq 0 ]
	sleep 1.5
	local n
	n=$(jq -s '[.[] | select(.host == "fold.denied.test")] | length' "$EG_DIR/decisions.jsonl")
	[ "$n" -ge 1 ] && [ "$n" -le 10 ] || { echo "$n lines for 300 decisions"; return 1; }
	[ "$(jq -s '[.[] | select(.host == "fold.denied.test") | .count] | add' "$EG_DIR/decisions.jsonl")" = 300 ]
	jq -se 'all(.[] | select(.host == "fold.denied.test"); .decision == "deny" and .last >= .time)' "$EG_DIR/decisions.jsonl"
	jq -se 'length == 4 and any(.[]; .phase == "agent" and .deny >= 300 and .bytes_down > 104857600) and
		all(.[]; .record == "totals")' "$EG_DIR/totals"
}

@test "egress: helper exits when the container process exits, and on SIGTERM" {
	echo '{"version": 1, "agent": {"network_mode": "public"}}' >"$BATS_TEST_TMPDIR/p.json"
	sleep 60 3>&- &
	local cpid=$! hpid
	"$HARNESS" --policy "$BATS_TEST_TMPDIR/p.json" --agent 127.0.0.1:0 --watch-pid "$cpid" \
		--hosts "$EG_DIR/hosts" --resolv "$EG_DIR/resolv.conf" 3>&- &
	hpid=$!
	sleep 0.3
	kill -0 "$hpid"
	kill "$cpid"
	run timeout 5 tail --pid="$hpid" -f /dev/null
	[ "$status" -eq 0 ]
	wait "$hpid"

	"$HARNESS" --policy "$BATS_TEST_TMPDIR/p.json" --agent 127.0.0.1:0 \
		--hosts "$EG_DIR/hosts" --resolv "$EG_DIR/resolv.conf" 3>&- &
	hpid=$!
	sleep 0.3
	kill -TERM "$hpid"
	run timeout 5 tail --pid="$hpid" -f /dev/null
	[ "$status" -eq 0 ]
	wait "$hpid"
}

@test "egress: helper stops on SIGTERM with a clean log" {
	local pid
	pid=$(cat "$EG_DIR/harness.pid")
	kill -TERM "$pid"
	run timeout 10 tail --pid="$pid" -f /dev/null
	[ "$status" -eq 0 ]
	rm -f "$EG_DIR/harness.pid"
	cat "$EG_DIR/harness.log"
	# Memory errors fail; a LeakSanitizer report is not one (libevent keeps a
	# failed nameserver probe past evdns_base_free).
	! grep -Eq 'ERROR: AddressSanitizer|runtime error' "$EG_DIR/harness.log"
}
