#!/usr/bin/env bats
# The rollout annotation, part 2 (SPEC section 2 "Network") through podman:
# the fresh network namespace, the egress proxy per phase, peers, and the
# helper's lifetime, sandbox and log.  The test internet is a network
# namespace of this file's own behind a veth pair: a stand-in address in
# 198.19.0.0/16 (RFC 2544 benchmarking range, which the proxy refuses
# unless the operator's PROCTOR_EGRESS_REACHABLE names it) serving HTTP on
# 8080 (so the policies add it to allowed_ports), and a 10.201.x address
# reachable only as a peer.  The egress helper learns the test names from a
# private hosts file (PROCTOR_EGRESS_HOSTS) and the reachable ranges from
# PROCTOR_EGRESS_REACHABLE, both set by a wrapper that podman runs as the
# runtime (tests/mirror.bash).  The only outside host is the Debian mirror
# named in this machine's apt sources (read at test time, its addresses
# resolved then), for the real-input tests.

load helpers
source "$BATS_TEST_DIRNAME/../testnet.bash"
source "$BATS_TEST_DIRNAME/../mirror.bash"

setup_file() {
	engine_setup_file || return 1
	command -v python3 >/dev/null && command -v jq >/dev/null || {
		echo "rollout-network.bats needs python3 and jq" >&2
		return 1
	}
	export RN_DIR=$BATS_FILE_TMPDIR
	testnet_up rn 198.19 10.201
	export RN_NS=$TN_NS RN_VH=$TN_VH RN_PUB=$TN_PUB RN_PRIV=$TN_PRIV
	export RN_PEER_PORT=$((10000 + $$ % 20000))
	mkdir -p "$RN_DIR/www"
	echo origin-says-hello >"$RN_DIR/www/hello.txt"
	ip netns exec "$RN_NS" python3 -m http.server --bind 0.0.0.0 --directory "$RN_DIR/www" 8080 \
		>"$RN_DIR/origin.log" 2>&1 3>&- &
	echo $! >"$RN_DIR/origin.pid"
	# The peer: a banner server on the private address, 8 connections.
	ip netns exec "$RN_NS" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(8)
for _ in range(8):
    c, _ = s.accept(); c.sendall(b"peer-db-banner\n"); c.close()
' "$RN_PRIV" "$RN_PEER_PORT" >"$RN_DIR/peer.log" 2>&1 3>&- &
	echo $! >"$RN_DIR/peer.pid"
	cat >"$RN_DIR/hosts" <<-EOF
	$RN_PUB agent.test verifier.test denied.test
	$RN_PRIV priv.test
	127.0.0.1 lo.test
	EOF
	# podman runs this wrapper as the runtime; every container of this file
	# gets an egress helper that knows the test names.
	export PROCTOR_UNWRAPPED=$PROCTOR
	PROCTOR_EGRESS_HOSTS=$RN_DIR/hosts egress_wrapper "$RN_DIR/proctor" "$PROCTOR" 198.18.0.0/15
	export PROCTOR=$RN_DIR/proctor
	local i
	for i in $(seq 50); do
		curl -s -o /dev/null "http://$RN_PUB:8080/hello.txt" && return 0
		sleep 0.1
	done
	echo "the test origin did not start: $(cat "$RN_DIR/origin.log")" >&2
	return 1
}

teardown_file() {
	testnet_down "$RN_NS" "$RN_VH" "$RN_DIR/origin.pid" "$RN_DIR/peer.pid"
}


# HTTP_VIA_PROXY, run inside the container as `perl -e "$HTTP_VIA_PROXY"
# PORT URL [BASIC]` (perl-base only): sends one absolute-form GET to
# 127.0.0.1:PORT (with Proxy-Authorization: Basic BASIC when given, and
# the Host field the proxy requires: the URL's host and port) and prints
# the status line, or "connect failed: ERR".
HTTP_VIA_PROXY='use IO::Socket::INET; my ($port, $url, $tok) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port, Timeout => 10)
  or do { print "connect failed: $!\n"; exit 0 };
my ($host) = $url =~ m{^http://([^/]+)};
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

@test "network: fresh namespace with only lo; proxy variables for the agent; transparent off: no route to a test host" {
	need_image bookworm
	printf '{"version": 1, "network": {"transparent": false}, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test"], "allowed_ports": [8080]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'ls /sys/class/net; cat /proc/net/route | wc -l; env | grep -i _proxy= | sort'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = lo ] || fail_with "$output"
	[ "$(sed -n 2p <<<"$output")" = 1 ] || fail_with "routes: $output"
	grep -q '^http_proxy=http://127.0.0.1:3128$' <<<"$output"
	grep -q '^HTTPS_PROXY=http://127.0.0.1:3128$' <<<"$output"
	grep -q '^no_proxy=localhost,127.0.0.1,::1$' <<<"$output"
	# A raw connection to the test host's address (which answers from the
	# host, see setup_file) has no route.
	run pm exec "$NAME" perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "$ARGV[0]:8080", Timeout => 3) ? print "connected\n" : print "refused: $!\n"' "$RN_PUB"
	[[ "$output" == "refused: "*"unreachable"* ]] || fail_with "$output"
}

# DIRECT_GET, run as `perl -e "$DIRECT_GET" ADDR:PORT HOST`: connects to
# ADDR:PORT itself (no proxy), sends a GET with Host: HOST and prints
# "answer: FIRST LINE", "closed, no answer" or "connect failed: ERR".
DIRECT_GET='use IO::Socket::INET; my ($to, $host) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => $to, Timeout => 10) or do { print "connect failed: $!\n"; exit 0 };
print $s "GET /hello.txt HTTP/1.0\r\nHost: $host\r\n\r\n"; my $l = <$s>;
if (defined $l) { $l =~ s/\r?\n//; print "answer: $l\n" } else { print "closed, no answer\n" }'

@test "network: by default (transparent) the same namespace has the helper's route; a direct connection to a denied host is refused by the helper and logged" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test"], "allowed_ports": [8080]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'ls /sys/class/net; env | grep -c "^http_proxy=http://127.0.0.1:3128$"'
	[ "$output" = "$(printf 'lo\n1')" ] || fail_with "$output"
	local pid
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	nsenter -t "$pid" -n nft list table inet proctor >/dev/null || fail_with "no nft table inet proctor in the container's netns"
	# The test host's address, by itself and with a name the policy denies:
	# the helper takes the connection and closes it unanswered.
	local h
	for h in "$RN_PUB:8080" denied.test:8080; do
		run pm exec "$NAME" perl -e "$DIRECT_GET" "$RN_PUB:8080" "$h"
		[ "$output" = "closed, no answer" ] || fail_with "Host $h: $output"
	done
	run pm exec "$NAME" perl -e "$DIRECT_GET" "$RN_PUB:8080" agent.test:8080
	[ "$output" = "answer: HTTP/1.0 200 OK" ] || fail_with "allowed: $output"
	run egress_log
	jq -se --arg a "$RN_PUB" 'any(.[]; .host == $a and .method == "TCP" and .decision == "deny" and .phase == "agent")' \
		<<<"$output" >/dev/null || fail_with "no TCP deny for $RN_PUB: $output"
	jq -se 'any(.[]; .host == "denied.test" and .method == "TCP" and .decision == "deny" and (.reason | test("not in the agent allowlist")))' \
		<<<"$output" >/dev/null || fail_with "no TCP deny for denied.test: $output"
	jq -se 'any(.[]; .host == "agent.test" and .method == "TCP" and .decision == "allow")' \
		<<<"$output" >/dev/null || fail_with "no TCP allow for agent.test: $output"
}

@test "network: a client using the proxy variables (busybox wget) gets an allowed host, and 403 for another" {
	need_image busybox
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test"], "allowed_ports": [8080]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json" localhost/proctor/busybox
	run pm exec "$NAME" wget -q -O - http://agent.test:8080/hello.txt
	assert_status 0
	[ "$output" = origin-says-hello ] || fail_with "$output"
	run pm exec "$NAME" wget -q -O - http://denied.test:8080/hello.txt
	[ "$status" -ne 0 ] || fail_with "denied host answered: $output"
	[[ "$output" == *403* ]] || fail_with "no 403: $output"
	run egress_log
	jq -se 'any(.[]; .host == "agent.test" and .decision == "allow" and .bytes_down > 0)' <<<"$output" >/dev/null ||
		fail_with "no allow line: $output"
	jq -se 'any(.[]; .host == "denied.test" and .decision == "deny")' <<<"$output" >/dev/null ||
		fail_with "no deny line: $output"
}

@test "network: allowlist allows a test host, denies others with 403 and a log line, refuses loopback and private names" {
	need_image bookworm
	# lo.test, priv.test and localhost are allowlisted too: the names are
	# allowed, their addresses are not.
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test", "lo.test", "priv.test", "localhost"], "allowed_ports": [8080, 22]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://agent.test:8080/hello.txt"
	[[ "$output" == "HTTP/1.1 200"* || "$output" == "HTTP/1.0 200"* ]] || fail_with "allowed: $output"
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://denied.test:8080/hello.txt"
	[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "denied: $output"
	local h
	for h in lo.test:8080 priv.test:8080 localhost:22; do
		run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://$h/"
		[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "$h: $output"
	done
	run egress_log
	jq -se 'any(.[]; .host == "denied.test" and .decision == "deny" and .phase == "agent")' <<<"$output" >/dev/null ||
		fail_with "no deny line: $output"
	jq -se 'any(.[]; .host == "agent.test" and .decision == "allow" and .bytes_down > 0)' <<<"$output" >/dev/null ||
		fail_with "no allow line: $output"
	for h in lo.test priv.test localhost; do
		jq -se --arg h "$h" 'any(.[]; .host == $h and .decision == "deny" and (.reason | test("loopback|private|forbidden|address")))' <<<"$output" >/dev/null ||
			fail_with "$h not refused by address: $output"
	done
}

@test "network: none means no listener, no proxy variables, nothing reachable, no helper" {
	need_image bookworm
	printf '{"version": 1, "environment": {"network_mode": "none"}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'env | grep -ci proxy; for p in 3128 3129; do perl -MIO::Socket::INET -e "IO::Socket::INET->new(q(127.0.0.1:$p)) ? print qq(open $p\n) : print qq(closed $p\n)"; done'
	[ "$output" = "0
closed 3128
closed 3129" ] || fail_with "$output"
	run pm exec "$NAME" perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "$ARGV[0]:8080", Timeout => 3) ? print "connected\n" : print "refused: $!\n"' "$RN_PUB"
	[[ "$output" == "refused: "*"unreachable"* ]] || fail_with "$output"
	[ ! -e "/run/proctor/$CID/egress.pid" ]
	# Transparent egress is on by default, but not for `none`: no route, no rules.
	run pm exec "$NAME" sh -c 'cat /proc/net/route | wc -l'
	[ "$output" = 1 ] || fail_with "routes: $output"
	local pid
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	run nsenter -t "$pid" -n nft list ruleset
	assert_status 0
	[ -z "$output" ] || fail_with "rules in a none rollout: $output"
}

@test "network: the verifier reaches what its policy allows; the agent cannot use or squat 3129" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test"], "allowed_ports": [8080]},
	  "verifier": {"network_mode": "allowlist", "allowed_hosts": ["verifier.test"], "allowed_ports": [8080]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	# The agent is refused the verifier's host...
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://verifier.test:8080/hello.txt"
	[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "agent: $output"
	# ... the verifier, with the token in its own environment, gets it.
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'tok=${http_proxy#http://}; tok=${tok%@*}; perl -e "$0" 3129 "$1" "$(printf "%s:" "$tok" | base64)"' "$HTTP_VIA_PROXY" "http://verifier.test:8080/hello.txt"
	[[ "$output" == "HTTP/1."[01]" 200"* ]] || fail_with "verifier: $output"
	# The agent on 3129: outside a verifier run, and during one with a wrong token.
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3129 "http://verifier.test:8080/hello.txt"
	[[ "$output" == "HTTP/1.1 40"[37]* ]] || fail_with "agent on 3129: $output"
	run pm exec -d -e PROCTOR_PHASE=verifier "$NAME" sleep 30
	assert_status 0
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3129 "http://verifier.test:8080/hello.txt" "$(printf 'guessed-token:' | base64)"
	[[ "$output" == "HTTP/1.1 40"[37]* ]] || fail_with "agent during verifier: $output"
	run egress_log
	# Both refusals (no token, then a guessed one) are logged.
	[ "$(jq -s '[.[] | select(.decision == "deny" and (.reason | test("token")))] | length' <<<"$output")" -ge 2 ] ||
		fail_with "no log lines for the refused 3129 uses: $output"
	jq -se 'any(.[]; .host == "verifier.test" and .decision == "allow" and .phase == "verifier")' <<<"$output" >/dev/null ||
		fail_with "no verifier allow line: $output"
	# Nobody in the container can bind 3129.
	run pm exec -u 0 "$NAME" perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr => "127.0.0.1:3129", Listen => 1) ? print "bound\n" : print "bind failed: $!\n"'
	[[ "$output" == "bind failed: Address already in use" ]] || fail_with "$output"
}

@test "network: a peer answers as name:port and 127.0.0.1:port, spliced to a test server outside" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "public"},
	  "peers": [{"name": "db", "port": 5432, "target": "tcp:%s:%s"}]}\n' "$RN_PRIV" "$RN_PEER_PORT" >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" sh -c 'for a in db 127.0.0.1; do perl -MIO::Socket::INET -e "my \$c = IO::Socket::INET->new(q($a:5432)) or die qq(connect $a: \$!\n); print scalar <\$c>"; done; env | grep ^no_proxy='
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = peer-db-banner ] || fail_with "$output"
	[ "$(sed -n 2p <<<"$output")" = peer-db-banner ] || fail_with "$output"
	grep -q '^no_proxy=.*,db,' <<<"$output"
	# The peer's private address itself is not reachable from inside: the
	# transparent helper takes the connection, never dials an address
	# literal, and closes it unanswered (no banner).
	run pm exec "$NAME" perl -e "$DIRECT_GET" "$RN_PRIV:$RN_PEER_PORT" "$RN_PRIV:$RN_PEER_PORT"
	[ "$output" = "closed, no answer" ] || fail_with "$output"
	run egress_log
	jq -se --arg a "$RN_PRIV" 'any(.[]; .host == $a and .method == "TCP" and .decision == "deny")' \
		<<<"$output" >/dev/null || fail_with "no TCP deny for $RN_PRIV: $output"
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
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test"], "allowed_ports": [8080]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" apt-get update
	[ "$status" -ne 0 ] || fail_with "apt-get update succeeded: $output"
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
	local sock=/run/proctor/$CID/egress.sock
	[ -S "$sock" ]
	run pm rm -f -t 0 "$NAME"
	assert_status 0
	wait_until 10 sh -c "! kill -0 $helper 2>/dev/null"
	[ ! -e "/run/proctor/$CID" ]
	# The namespace is gone when nothing holds it: no process in it, no
	# open fd on it, no nsfs bind mount of it.
	! ls -l /proc/[0-9]*/ns/net 2>/dev/null | grep -qF "$netns" || fail_with "netns $netns: a process is still in it"
	! ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -qF "$netns" || fail_with "netns $netns: an fd still holds it"
	local ino=${netns#net:[}
	ino=${ino%]}
	! grep -qE "^[0-9]+ [0-9]+ [0-9:]+ net:\[$ino\] " /proc/self/mountinfo || fail_with "netns $netns: still bind-mounted"
	! grep -qF "$sock" /proc/net/unix || fail_with "control socket $sock still bound"
}

@test "network: an unreadable PROCTOR_EGRESS_HOSTS fails the create clearly and leaves nothing" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "public"}}\n' >"$TEST_DIR/p.json"
	printf '#!/bin/sh\nPROCTOR_EGRESS_HOSTS=%s/no-such-hosts exec %s "$@"\n' "$TEST_DIR" "$PROCTOR_UNWRAPPED" >"$TEST_DIR/rt"
	chmod 0755 "$TEST_DIR/rt"
	track_name "$NAME"
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$TEST_DIR/rt" create --name "$NAME" \
		--annotation "run.proctor.rollout=@$TEST_DIR/p.json" localhost/proctor/bookworm sleep 1000
	assert_status 0
	CID=$(podman inspect -f '{{.Id}}' "$NAME")
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$TEST_DIR/rt" start "$NAME"
	[ "$status" -ne 0 ] || fail_with "started: $output"
	[[ "$output" == *"PROCTOR_EGRESS_HOSTS: \`$TEST_DIR/no-such-hosts\`: no such file or directory"* ]] ||
		fail_with "$output"
	[ ! -e "/run/proctor/$CID" ] || fail_with "state dir left"
	! ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$CID"* 2>/dev/null | grep -q . || fail_with "cgroup left"
	local p
	for p in $(pgrep -x proctor-egress); do
		! tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$CID" || fail_with "helper $p left"
	done
}

# The helper as create starts it: set up, then sandboxed (SPEC section 2
# "Network": no capabilities, no_new_privs, seccomp, empty mount
# namespace), charged to the container's cgroup, and not one of the
# container's processes for `ps` (which engines list and signal).
@test "network: the helper runs unprivileged and sandboxed in the container's cgroup, and ps leaves it out" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "public"}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	local helper pid
	helper=$(cut -d ' ' -f 1 "/run/proctor/$CID/egress.pid")
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	local st
	st=$(grep -E '^(Uid|Gid|Groups|CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "/proc/$helper/status")
	echo "$st"
	grep -Eq '^Uid:[[:space:]]+([1-9][0-9]*)[[:space:]]+\1[[:space:]]+\1[[:space:]]+\1$' <<<"$st" || fail_with "uid: $st"
	grep -Eq '^Gid:[[:space:]]+([1-9][0-9]*)[[:space:]]+\1[[:space:]]+\1[[:space:]]+\1$' <<<"$st" || fail_with "gid: $st"
	grep -Eq '^Groups:[[:space:]]*$' <<<"$st" || fail_with "groups: $st"
	local c
	for c in CapEff CapPrm CapBnd CapAmb; do
		grep -Eq "^$c:[[:space:]]+0+$" <<<"$st" || fail_with "$c: $st"
	done
	grep -Eq '^NoNewPrivs:[[:space:]]+1$' <<<"$st" || fail_with "no_new_privs: $st"
	grep -Eq '^Seccomp:[[:space:]]+2$' <<<"$st" || fail_with "seccomp: $st"
	[ "$(awk '/^Max open files/ { print $5 }' "/proc/$helper/limits")" -le 2688 ] || fail_with "$(cat "/proc/$helper/limits")"
	[ -z "$(ls -A "/proc/$helper/root/")" ] || fail_with "root: $(ls -A "/proc/$helper/root/")"
	[ "$(readlink "/proc/$helper/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
	# Every hierarchy: the container's cgroup.
	diff <(sort "/proc/$pid/cgroup") <(sort "/proc/$helper/cgroup") || fail_with "the helper is not in the container's cgroup"
	run "$PROCTOR_UNWRAPPED" --root /run/proctor ps --format json "$CID"
	assert_status 0
	jq -e --argjson h "$helper" --argjson p "$pid" 'index($h) == null and index($p) != null' <<<"$output" >/dev/null ||
		fail_with "ps: $output (helper $helper, init $pid)"
	# And it still serves.
	run pm exec "$NAME" perl -e "$HTTP_VIA_PROXY" 3128 "http://agent.test:8080/hello.txt"
	[[ "$output" == "HTTP/1.1 403"* ]] || fail_with "port 8080 without allowed_ports: $output"
}

@test "network: without PROCTOR_EGRESS_REACHABLE naming it the mirror is refused; rollout status shows the ranges" {
	need_image bookworm
	local mirror addr
	mirror=$(mirror_host)
	addr=$(mirror_reachable | cut -d, -f1)
	[ -n "$addr" ] || fail_with "the mirror $mirror does not resolve"
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["%s"]}}\n' "$mirror" >"$TEST_DIR/p.json"
	# The suite's wrapper names the mirror: status says so.
	start_rollout "$TEST_DIR/p.json"
	run "$PROCTOR" --root /run/proctor rollout status "$CID"
	assert_status 0
	jq -e --arg a "$addr" '.egress.reachable | index($a + "/32") != null or index($a + "/128") != null' <<<"$output" >/dev/null ||
		fail_with "status: $output"
	jq -e '.egress.reachable | index("198.18.0.0/15") != null' <<<"$output" >/dev/null || fail_with "status: $output"
	# Without it: the test ranges only.
	if python3 -c 'import ipaddress, sys; sys.exit(0 if ipaddress.ip_address(sys.argv[1]).is_global else 1)' "$addr"; then
		skip "the mirror $mirror resolves to $addr, a public address: nothing to widen here"
	fi
	printf '#!/bin/sh\nPROCTOR_EGRESS_HOSTS=%s PROCTOR_EGRESS_REACHABLE=198.18.0.0/15 exec %s "$@"\n' "$RN_DIR/hosts" "$PROCTOR_UNWRAPPED" >"$TEST_DIR/rt"
	chmod 0755 "$TEST_DIR/rt"
	local name2=${NAME}-b
	track_name "$name2"
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$TEST_DIR/rt" run -d --name "$name2" \
		--annotation "run.proctor.rollout=@$TEST_DIR/p.json" localhost/proctor/bookworm sleep 1000
	assert_status 0
	local cid2
	cid2=$(podman inspect -f '{{.Id}}' "$name2")
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$TEST_DIR/rt" exec "$name2" apt-get update
	[ "$status" -ne 0 ] || fail_with "apt-get update reached the mirror: $output"
	grep -q 403 <<<"$output" || fail_with "$output"
	run "$PROCTOR_UNWRAPPED" --root /run/proctor rollout log "$cid2"
	jq -se --arg h "$mirror" 'any(.[]; .host == $h and .decision == "deny" and (.reason | test("only public addresses are reachable")))' \
		<<<"$output" >/dev/null || fail_with "no refusal by address: $output"
	run "$PROCTOR_UNWRAPPED" --root /run/proctor rollout status "$cid2"
	jq -e '.egress.reachable == ["198.18.0.0/15"]' <<<"$output" >/dev/null || fail_with "status: $output"
}

@test "network: a malformed PROCTOR_EGRESS_REACHABLE fails the create clearly and leaves nothing" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "public"}}\n' >"$TEST_DIR/p.json"
	printf '#!/bin/sh\nPROCTOR_EGRESS_REACHABLE=198.18.0.0/15,10.0.0.1/8 exec %s "$@"\n' "$PROCTOR_UNWRAPPED" >"$TEST_DIR/rt"
	chmod 0755 "$TEST_DIR/rt"
	track_name "$NAME"
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$TEST_DIR/rt" create --name "$NAME" \
		--annotation "run.proctor.rollout=@$TEST_DIR/p.json" localhost/proctor/bookworm sleep 1000
	assert_status 0
	CID=$(podman inspect -f '{{.Id}}' "$NAME")
	run timeout -k 5 "$ENGINE_TIMEOUT" podman --runtime "$TEST_DIR/rt" start "$NAME"
	[ "$status" -ne 0 ] || fail_with "started: $output"
	[[ "$output" == *'PROCTOR_EGRESS_REACHABLE: `10.0.0.1/8` has bits set after its /8 prefix'* ]] || fail_with "$output"
	[ ! -e "/run/proctor/$CID" ] || fail_with "state dir left"
	! ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$CID"* 2>/dev/null | grep -q . || fail_with "cgroup left"
}

# 20 s of denied requests as fast as the agent can send them: the log
# stays under its cap (1 MiB), repeats are folded with their counts, and
# the totals count every one.
@test "network: a 20 s denial loop leaves the log under its cap; rollout log shows the folded counts and totals" {
	need_image bookworm
	printf '{"version": 1, "agent": {"network_mode": "allowlist", "allowed_hosts": ["agent.test"], "allowed_ports": [8080]}}\n' >"$TEST_DIR/p.json"
	start_rollout "$TEST_DIR/p.json"
	run pm exec "$NAME" perl -MIO::Socket::INET -e '
my ($n, $end) = (0, time + 20);
while (time < $end) {
  my $s = IO::Socket::INET->new("127.0.0.1:3128") or next;
  print $s "GET http://denied.test:8080/ HTTP/1.1\r\nHost: denied.test:8080\r\n\r\n";
  1 while <$s>;
  $n++;
}
print "$n\n";'
	assert_status 0
	local n=$output
	echo "$n denied requests"
	[ "$n" -gt 1000 ] || fail_with "only $n requests in 20 s"
	sleep 2
	local size
	size=$(stat -c %s "/run/proctor/$CID/egress.log")
	echo "log: $size bytes"
	[ "$size" -le 1048576 ] || fail_with "the log grew to $size bytes"
	run egress_log
	jq -se --argjson n "$n" '[.[] | select(.host == "denied.test" and .decision == "deny") | .count] | add == $n' \
		<<<"$output" >/dev/null || fail_with "counts do not add up to $n: $(grep -c denied.test <<<"$output") lines"
	[ "$(grep -c '"host":"denied.test"' <<<"$output")" -le 40 ] || fail_with "repeats not folded"
	jq -se --argjson n "$n" 'any(.[]; .record == "totals" and .phase == "agent" and .deny >= $n)' <<<"$output" >/dev/null ||
		fail_with "no agent totals: $(grep totals <<<"$output")"
}
