/* transparent.h - the runtime's side of transparent egress (policy key
 * network.transparent; docs/rollout.md "Transparent egress"): routes and
 * nftables rules in the container's network namespace that lead every
 * DNS query to the egress helper's resolver (NAT redirect to 127.0.0.1:53
 * or [::1]:53) and every other outgoing TCP connection to its transparent
 * listener (tproxy to 127.0.0.1:3127 or [::1]:3127, no NAT, untracked),
 * and refuse any other traffic that would leave loopback.  The agent has
 * neither CAP_NET_ADMIN nor CAP_NET_RAW in that namespace, so it cannot
 * change them, mark its packets or make a transparent socket. */
#ifndef PROCTOR_TRANSPARENT_H
#define PROCTOR_TRANSPARENT_H

#include <sys/types.h>

#include "../base/error.h"

#define PR_TRANSPARENT_PORT 3127
#define PR_TRANSPARENT_DNS_PORT 53
/* The verifier's and the setup's: reached only through the rules'
 * redirect of sockets created in their cgroup (pr_transparent_phase_cgroup). */
#define PR_TRANSPARENT_VERIFIER_PORT 3126
#define PR_TRANSPARENT_VERIFIER_DNS_PORT 5354
#define PR_TRANSPARENT_SETUP_PORT 3125
#define PR_TRANSPARENT_SETUP_DNS_PORT 5355
/* The phases' cgroups, siblings of the container's (PATH-NAME) in the
 * cgroup2 hierarchy only: exec puts verifier (setup) sessions there,
 * nobody else can (not children: see phase_cgroup_path in transparent.c). */
#define PR_TRANSPARENT_VERIFIER_CGROUP "proctor-verifier"
#define PR_TRANSPARENT_SETUP_CGROUP "proctor-setup"

/* Packet marks (SO_MARK, nft meta mark) in the container's namespace:
 * the helper's own sockets (set by the runtime when it makes them), and
 * what the rules set at output for a verifier's or a setup's socket (by
 * its cgroup); everything else is set to 0, the agent's. */
#define PR_TRANSPARENT_MARK_HELPER 0x70720001u
#define PR_TRANSPARENT_MARK_VERIFIER 0x70720002u
#define PR_TRANSPARENT_MARK_SETUP 0x70720003u

/* Conntrack zones (nft ct zone) of the verifier's and the setup's UDP in
 * the container's namespace; the agent's is zone 0, the default. */
#define PR_TRANSPARENT_ZONE_VERIFIER 2u
#define PR_TRANSPARENT_ZONE_SETUP 3u

/* Where the rules find a phase's cgroup: nft's path (relative to
 * /sys/fs/cgroup) and its depth in the cgroup2 hierarchy. */
struct pr_transparent_vcg
{
  char *nft_path; /* NULL: no separation for that phase */
  unsigned level;
};

/* The phases the rules tell apart from the agent by their cgroup. */
struct pr_transparent_cgroups
{
  struct pr_transparent_vcg verifier;
  struct pr_transparent_vcg setup;
};

/* Creates the cgroup cgroup_path-NAME (NAME PR_TRANSPARENT_VERIFIER_CGROUP
 * or PR_TRANSPARENT_SETUP_CGROUP; cgroup_path the container's) in the
 * cgroup2 hierarchy and fills *out.  Errors: ENOENT when there is no
 * cgroup2 hierarchy, ENOTSUP when it is not mounted under /sys/fs/cgroup
 * (nft resolves the path there), mkdir errno (EEXIST is fine); each names
 * the policy's off switch. */
int pr_transparent_phase_cgroup (const char *cgroup_path, const char *name, struct pr_transparent_vcg *out,
                                 pr_error **err);

/* Whether libnftables(3) can be loaded (dlopen of libnftables.so.1 and
 * the calls pr_transparent_setup_netns uses): checked by create before it
 * makes anything for transparent egress, so a host without it fails with
 * one line and nothing to undo.  Errors: ENOENT with one line naming
 * libnftables.so.1, its package (libnftables1) and the policy's off
 * switch ("network": {"transparent": false}). */
int pr_transparent_available (pr_error **err);

/* Removes both phase cgroups of the container at cgroup_path with
 * pr_cgroup_destroy (what is left in them killed; absent ones are fine; a
 * failure warns).  Never fails. */
void pr_transparent_remove_phase_cgroups (const char *cgroup_path);

/* Writes pid into the cgroup.procs of the phase cgroup cgroup_path-name
 * (as for pr_transparent_phase_cgroup; cgroup2 hierarchy only).
 * Errors: ENOENT without cgroup2, open/write errno naming the file. */
int pr_transparent_enter_phase_cgroup (const char *cgroup_path, const char *name, pid_t pid, pr_error **err);

/* In the calling process's network namespace (the container's, entered
 * with setns by the caller): adds the local default routes through lo
 * (netlink.h pr_netlink_local_default_route; IPv6 skipped when the
 * namespace has no IPv6) and loads the table "inet proctor" with
 * libnftables (dlopen'd, so a create without transparent mode never loads
 * it).  With cg->verifier.nft_path, sockets created in that cgroup (the
 * verifier's sessions) are led to port 5354 (DNS) and 3126 instead; with
 * cg->setup.nft_path, the setup's to 5355 and 3125; the helper's ports
 * other than 53 take only what the rules lead there, so an agent that
 * dials them directly is refused.  The listeners must be transparent
 * sockets with PR_TRANSPARENT_MARK_HELPER (network.c); until they exist
 * every outgoing TCP connection is dropped.  Errors: the route's errno;
 * ENOENT as pr_transparent_available; EINVAL with nft's own message when
 * the rules do not load (a kernel without nf_tables, nf_nat, nft_tproxy
 * or nft_socket). */
int pr_transparent_setup_netns (const struct pr_transparent_cgroups *cg, pr_error **err);

#endif
