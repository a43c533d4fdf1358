/* transparent.h - the runtime's side of transparent egress (policy key
 * network.transparent; docs/rollout.md "Transparent egress"): routes and
 * nftables rules in the container's network namespace that lead every
 * DNS query to the egress helper's resolver (127.0.0.1:53) and every
 * other outgoing TCP connection to its transparent listener
 * (127.0.0.1:3127, [::1]:3127), and refuse any other traffic that would
 * leave loopback.  The agent has no CAP_NET_ADMIN in that namespace, so it
 * cannot change them. */
#ifndef PROCTOR_TRANSPARENT_H
#define PROCTOR_TRANSPARENT_H

#include "../base/error.h"

#define PR_TRANSPARENT_PORT 3127
#define PR_TRANSPARENT_DNS_PORT 53

/* In the calling process's network namespace (the container's, entered
 * with setns by the caller): adds the local default routes through lo
 * (netlink.h pr_netlink_local_default_route; IPv6 skipped when the
 * namespace has no IPv6) and loads the table "inet proctor" with
 * libnftables (dlopen'd, so a create without transparent mode never loads
 * it).  Errors: the route's errno; ENOENT "libnftables.so.1 is not
 * installed"; EINVAL with nft's own message when the rules do not load
 * (a kernel without nf_tables or nf_nat). */
int pr_transparent_setup_netns (pr_error **err);

#endif
