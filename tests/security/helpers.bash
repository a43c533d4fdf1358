# Helpers for the security suite: the integration helpers (bundles, state
# root, teardown that deletes every container and unmounts what is left)
# plus a few checks that only security tests need.

# shellcheck source=../integration/helpers.bash
source "$BATS_TEST_DIRNAME/../integration/helpers.bash"

# sha256 FILE: the hex digest alone.
sha256() { sha256sum "$1" | cut -d' ' -f1; }

# host_mounts_under DIR: mount points at or under DIR in the host's mount
# namespace (this shell's).
host_mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort
}

# mountinfo_count: number of mounts in this (the host's) mount namespace.
mountinfo_count() { wc -l </proc/self/mountinfo; }

# fd_targets PID: "N -> target" for each open fd of PID (host side).
fd_targets() {
	local f
	for f in /proc/"$1"/fd/*; do
		printf '%s -> %s\n' "${f##*/}" "$(readlink "$f" 2>/dev/null)"
	done
}

# netns_count: network namespaces referenced by any live process.
netns_ids() {
	for f in /proc/[0-9]*/ns/net; do readlink "$f" 2>/dev/null; done | sort -u
}

# The integration setup, under another name, so a test file can extend it.
eval "$(declare -f setup | sed '1s/^setup /base_setup /')"

# assert_no_leftovers (integration helpers) runs `find /sys/fs/cgroup`,
# which exits 1 when another container's cgroup vanishes mid-walk; under
# bats' errexit that fails the test although nothing of ours is left.  The
# walk's output is what counts, so its exit status is ignored here.
find() { command find "$@" || true; }

# SWAPPER STOPFILE COUNTFILE SECONDS A1 B1 [A2 B2...]: exchanges each pair
# of paths (renameat2 RENAME_EXCHANGE, so each name always exists, as a
# directory or a symlink) as fast as it can until STOPFILE exists; writes
# the number of exchanges to COUNTFILE.  Exits 0 only when stopped by
# STOPFILE with every exchange done; SECONDS bounds it if the test dies.
SWAPPER='
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
stop, count, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
pairs = [(a.encode(), b.encode()) for a, b in zip(sys.argv[4::2], sys.argv[5::2])]
deadline = time.monotonic() + limit
n = 0
while not os.path.exists(stop):
    if time.monotonic() > deadline:
        sys.exit("swapper: not stopped within %ss" % limit)
    for _ in range(100):
        for a, b in pairs:
            if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
                sys.exit("swapper: renameat2: " + os.strerror(ctypes.get_errno()))
            n += 1
    with open(count, "w") as f:
        f.write(str(n))
'
