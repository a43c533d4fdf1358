# testnet.bash - a test "internet" for the egress suites: a network
# namespace of the suite's own joined to the host by a veth pair, so
# origins the tests start there are reached over a real route and nothing
# leaves the machine.  Sourced by the suites that need one.
#
# testnet_up TAG PUBLIC_PREFIX [PRIVATE_PREFIX]: makes namespace prt-TAG-PID
# and veth prTAGPIDa (host) / prTAGPIDb (namespace).  The namespace side
# gets PUBLIC_PREFIX.N.2/24 (a range the egress proxy treats as public,
# 198.18.0.0/15), and PRIVATE_PREFIX.N.2/24 too when given (reachable only
# as a peer); the host side .1 of each.  N is derived from the shell's pid
# (20..219) so suites in parallel differ.  Exports TN_NS, TN_VH, TN_N,
# TN_PUB, TN_SELF and, with a private prefix, TN_PRIV.
testnet_up() {
	local tag=$1 pub=$2 priv=${3:-}
	export TN_N=$(($$ % 200 + 20))
	export TN_NS=prt-$tag-$$ TN_VH=pr$tag$$a
	local vn=pr$tag$$b
	export TN_PUB=$pub.$TN_N.2 TN_SELF=$pub.$TN_N.1
	ip netns add "$TN_NS"
	ip link add "$TN_VH" type veth peer name "$vn"
	ip link set "$vn" netns "$TN_NS"
	ip addr add "$TN_SELF/24" dev "$TN_VH"
	ip -n "$TN_NS" addr add "$TN_PUB/24" dev "$vn"
	if [ -n "$priv" ]; then
		export TN_PRIV=$priv.$TN_N.2
		ip addr add "$priv.$TN_N.1/24" dev "$TN_VH"
		ip -n "$TN_NS" addr add "$TN_PRIV/24" dev "$vn"
	fi
	ip link set "$TN_VH" up
	ip -n "$TN_NS" link set "$vn" up
	ip -n "$TN_NS" link set lo up
}

# testnet_down NS VH [PIDFILE...]: stops the servers whose pids the
# PIDFILEs hold (missing files are skipped), then removes what testnet_up
# made (NS and VH may be empty).
testnet_down() {
	local ns=${1:-} vh=${2:-} f
	shift 2
	for f in "$@"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	[ -z "$ns" ] || ip netns del "$ns" 2>/dev/null
	[ -z "$vh" ] || ip link del "$vh" 2>/dev/null
	true
}
