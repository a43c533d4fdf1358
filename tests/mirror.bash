# mirror.bash - this machine's Debian mirror, read from its apt sources at
# run time (never written into the repo), and the egress helper's operator
# setting that makes it reachable.  Sourced by the suites and contrib/demo.sh.
#
# On some machines the mirror resolves into a range the egress helper
# refuses (this one's is in a documentation range): only the runtime's
# PROCTOR_EGRESS_REACHABLE makes it reachable, never a policy.

# mirror_host: the host name of the first non-security http URI of the
# apt sources (deb822 .sources or one-line .list), empty when none.
mirror_host() {
	sed -n 's|^URIs:[[:space:]]*http://\([^/[:space:]]*\).*|\1|p; s|^deb[[:space:]]\+http://\([^/[:space:]]*\).*|\1|p' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null |
		grep -v security | head -n 1
}

# mirror_reachable: the mirror's addresses (as resolved now), comma
# separated, in the form PROCTOR_EGRESS_REACHABLE takes; empty when the
# mirror is unknown or does not resolve.
mirror_reachable() {
	local h
	h=$(mirror_host)
	[ -n "$h" ] || return 0
	getent ahosts "$h" 2>/dev/null | awk '{ print $1 }' | sort -u | paste -sd, -
}

# egress_wrapper PATH RUNTIME [RANGES]: writes an executable PATH that runs
# RUNTIME with PROCTOR_EGRESS_REACHABLE set to the mirror's addresses (and
# RANGES, comma separated, when given), plus whatever PROCTOR_EGRESS_*
# variables are set now.  Engines do not pass their environment to the
# runtime, so a wrapper is how a setting reaches it.
egress_wrapper() {
	local path=$1 rt=$2 extra=${3:-} r v
	r=$(mirror_reachable)
	[ -n "$extra" ] && r=${r:+$r,}$extra
	{
		echo '#!/bin/bash'
		for v in PROCTOR_EGRESS_HOSTS PROCTOR_EGRESS_RESOLV_CONF PROCTOR_EGRESS_USER; do
			[ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
		done
		printf 'export PROCTOR_EGRESS_REACHABLE=%q\n' "$r"
		printf 'exec %q "$@"\n' "$rt"
	} >"$path"
	chmod 0755 "$path"
}
