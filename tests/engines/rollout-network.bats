#!/usr/bin/env bats
# The rollout annotation, part 2 (SPEC section 2 "Network") through podman:
# the fresh network namespace, the egress proxy per phase, peers, and the
# helper's lifetime.  The only outside host used is the Debian mirror named
# in this machine's apt sources (read at test time); everything else is on
# this machine's loopback.

load helpers

# The mirror's host name, from the apt sources of this machine.
mirror_host() {
	sed -n 's|^URIs:[[:space:]]*http://\([^/[:space:]]*\).*|\1|p; s|^deb[[:space:]]\+http://\([^/[:space:]]*\).*|\1|p' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1
}

# HTTP_VIA_PROXY, run inside the container as `perl -e "$HTTP_VIA_PROXY"
# PORT URL [BASIC]` (perl-base only): sends one absolute-form GET to
# 127.0.0.1:PORT (with Proxy-Authorization: Basic BASIC when given) and
# prints the status line, or "connect failed: ERR".
HTTP_VIA_PROXY='use IO::Socket::INET; my ($port, $url, $tok) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port, Timeout => 10)
  or do { print "connect failed: $!\n"; exit 0 };
my ($host) = $url =~ m{^http://([^/:]+)};
print $s "GET $url HTTP/1.1\r\nHost: $host\r\nConnection: close\r\n";
print $s "Proxy-Authorization: Basic $tok\r\n" if $tok;
print $s "\r\n"; my $line = <$s>; $line =~ s/\r?\n//; print "$line\n";'

start_rollout() {
	local pol=$1 img=${2:-localhost/proctor/bookworm}
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$pol" "$img" sleep 1000
	assert_status 0
	CID=$(podman inspect -f '{{.Id}}' "$NAME")
}

egress_log() { "$PROCTOR" --root /run/proctor rollout log "$CID"; }

@test "network: fresh namespace with only lo; proxy variables for the agent" {
	need_image bookworm
	local mirror
	mirror=$(mirror_host)
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["%s"]}}\n' "$mirror" >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'ls /sys/class/net; cat /proc/net/route | wc -l; env | grep -i _proxy= | sort'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = lo ] || fail_with "$output"
	[ "$(sed -n 2p <<<"$output")" = 1 ] || fail_with "routes: $output"
	grep -q '^http_proxy=http://127.0.0.1:3128$' <<<"$output"
	grep -q '^HTTPS_PROXY=http://127.0.0.1:3128$' <<<"$output"
	grep -q '^no_proxy=localhost,127.0.0.1,::1$' <<<"$output"
	# A raw connection to an outside address has no route.
	run pm exec "$NAME" perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "10.88.0.1:80", Timeout => 3) ? print "connected\n" : print "refused: $!\n"'
	[[ "$output" == "refused: "*"unreachable"* ]] || fail_with "$output"
}

@test "network: allowlist allows the mirror, denies others with 403 and a log line, refuses loopback names" {
	need_image bookworm
	local mirror
	mirror=$(mirror_host)
	# localhost is allowlisted too: the name is allowed, its address is not.
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["%s", "localhost"]}}\n' "$mirror" >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://$mirror/debian/dists/bookworm/Release"
	[[ "$output" == "HTTP/1.1 200"* ]] || fail_with "allowed: $output"
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://example.org/"
	[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "denied: $output"
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://localhost:22/"
	[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "loopback: $output"
	run egress_log
	jq -se 'any(.[]; .host == "example.org" and .decision == "deny" and .phase == "agent")' <<<"$output" >/dev/null ||
		fail_with "no deny line: $output"
	jq -se --arg m "$mirror" 'any(.[]; .host == $m and .decision == "allow" and .bytes_down > 0)' <<<"$output" >/dev/null ||
		fail_with "no allow line: $output"
	jq -se 'any(.[]; .host == "localhost" and .decision == "deny" and (.reason | test("loopback|private|forbidden|address")))' <<<"$output" >/dev/null ||
		fail_with "localhost not refused by address: $output"
}

@test "network: none means no listener, no proxy variables, nothing reachable, no helper" {
	need_image bookworm
	printf '{"version": 1, "environment": {"network_mode": "none"}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'env | grep -ci proxy; for p in 3128 3129; do perl -MIO::Socket::INET -e "IO::Socket::INET->new(q(127.0.0.1:$p)) ? print qq(open $p\n) : print qq(closed $p\n)"; done'
	[ "$output" = "0
closed 3128
closed 3129" ] || fail_with "$output"
	[ ! -e "/run/proctor/$CID/egress.pid" ]
}

@test "network: the verifier reaches what its policy allows; the agent cannot use or squat 3129" {
	need_image bookworm
	local mirror
	mirror=$(mirror_host)
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["example.org"]},
	  "verifier": {"network_mode": "allowlist", "allowed_hosts": ["%s"]}}\n' "$mirror" >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	# The agent is refused the mirror...
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://$mirror/debian/dists/bookworm/Release"
	[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "agent: $output"
	# ... the verifier, with the token in its own environment, gets it.
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'tok=${http_proxy#http://}; tok=${tok%@*}; perl -e "$0" 3129 "$1" "$(printf "%s:" "$tok" | base64)"' "$HTTP_VIA_PROXY" "http://$mirror/debian/dists/bookworm/Release"
	[[ "$output" == "HTTP/1.1 200"* ]] || fail_with "verifier: $output"
	# The agent on 3129: outside a verifier run, and during one with a wrong token.
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3129 "http://$mirror/"
	[[ "$output" == "HTTP/1.1 40"[37]* ]] || fail_with "agent on 3129: $output"
	run pm exec -d -e PROCTOR_PHASE=verifier "$NAME" sleep 30
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3129 "http://$mirror/" "$(printf 'guessed-token:' | base64)"
	[[ "$output" == "HTTP/1.1 40"[37]* ]] || fail_with "agent during verifier: $output"
	run egress_log
	# Both refusals (no token, then a guessed one) are logged.
	[ "$(jq -s '[.[] | select(.decision == "deny" and (.reason | test("token")))] | length' <<<"$output")" -ge 2 ] ||
		fail_with "no log lines for the refused 3129 uses: $output"
	# Nobody in the container can bind 3129.
	run pm exec -u 0 "$NAME" perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr => "127.0.0.1:3129", Listen => 1) ? print "bound\n" : print "bind failed: $!\n"'
	[[ "$output" == "bind failed: Address already in use" ]] || fail_with "$output"
}

@test "network: a peer answers as name:port and 127.0.0.1:port, spliced to a host server" {
	need_image bookworm
	local port
	port=$(free_port)
	python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
for _ in range(4):
    c, _ = s.accept(); c.sendall(b"peer-db-banner\n"); c.close()
' "$port" &
	local server=$!
	printf '{"version": 1, "agent": {"network_mode": "public"},
	  "peers": [{"name": "db", "port": 5432, "target": "tcp:127.0.0.1:%s"}]}\n' "$port" >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'for a in db 127.0.0.1; do perl -MIO::Socket::INET -e "my \$c = IO::Socket::INET->new(q($a:5432)) or die qq(connect $a: \$!\n); print scalar <\$c>"; done; env | grep ^no_proxy='
	kill "$server" 2>/dev/null || true
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = peer-db-banner ] || fail_with "$output"
	[ "$(sed -n 2p <<<"$output")" = peer-db-banner ] || fail_with "$output"
	grep -q '^no_proxy=.*,db,' <<<"$output"
}

apt_install_curl() {
	local img=$1 mirror
	mirror=$(mirror_host)
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["%s"]}}\n' "$mirror" >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json" "$img"
	ENGINE_TIMEOUT=300 run pm exec "$NAME" sh -c 'apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl >/dev/null 2>&1 && curl --version | head -n 1'
	assert_status 0
	[[ "$output" == curl\ * ]] || fail_with "$output"
}

@test "network: real input: apt-get update && install curl through the allowlisted mirror (bookworm)" {
	need_image bookworm
	apt_install_curl localhost/proctor/bookworm
}

@test "network: real input: apt-get update && install curl through the allowlisted mirror (bullseye)" {
	need_image bullseye
	apt_install_curl localhost/proctor/bullseye
}

@test "network: real input: apt fails with the proxy's 403 when the mirror is not allowlisted" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["example.org"]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" apt-get update
	grep -q '403' <<<"$output" || fail_with "$output"
}

@test "network: after podman rm -f no helper process, socket or netns remains" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "public"}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	local helper netns pid
	helper=$(cut -d ' ' -f 1 "/run/proctor/$CID/egress.pid")
	[ -d "/proc/$helper" ]
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	netns=$(readlink "/proc/$pid/ns/net")
	run pm rm -f -t 0 "$NAME"
	assert_status 0
	wait_until 10 sh -c "! kill -0 $helper 2>/dev/null"
	[ ! -e "/run/proctor/$CID" ]
	! ls -l /proc/[0-9]*/ns/net 2>/dev/null | grep -qF "$netns" || fail_with "netns $netns still in use"
}
