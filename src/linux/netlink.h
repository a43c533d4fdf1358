/* netlink.h - the little rtnetlink the runtime needs, with libmnl: bringing
 * up the loopback interface of a fresh network namespace, and reading the
 * host's own addresses, on-link networks and gateways (for the egress
 * helper's address check).
 * Source: rtnetlink(7), netdevice(7). */
#ifndef PROCTOR_NETLINK_H
#define PROCTOR_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include "../base/error.h"

/* Sets IFF_UP on "lo" in the calling process's network namespace
 * (RTM_NEWLINK with ifi_change = IFF_UP) and waits for the kernel's ack.
 * Errors: socket/bind/send errno, or the ack's error naming the request. */
int pr_netlink_lo_up (pr_error **err);

/* Adds the route "local 0.0.0.0/0 dev lo" (family AF_INET) or "local ::/0
 * dev lo" (AF_INET6) to the main table of the calling process's network
 * namespace (RTM_NEWROUTE, type RTN_LOCAL, scope host), so a connect to
 * any address leaves through lo, where the transparent egress rules
 * (src/rollout/transparent.c) catch it, instead of failing with
 * ENETUNREACH.  A local route rather than a unicast one: IPv6 turns a
 * unicast route through lo into a reject route.  Errors: socket/send
 * errno, the ack's errno (EEXIST: the route is there already).
 * Source: rtnetlink(7) RTM_NEWROUTE. */
int pr_netlink_local_default_route (int family, pr_error **err);

/* One network of the host: family AF_INET or AF_INET6, the first len bits
 * of addr (network byte order, 4 or 16 bytes used). */
enum pr_host_prefix_kind
{
  PR_HOST_OWN,     /* an address of the host (len = all bits) */
  PR_HOST_ONLINK,  /* a network an interface is attached to, or a broadcast address */
  PR_HOST_GATEWAY, /* a router a route goes through (len = all bits) */
};

struct pr_host_prefix
{
  int family;
  unsigned int len;
  enum pr_host_prefix_kind kind;
  uint8_t addr[16];
};

/* More than this many distinct entries fail the dump (a full BGP table
 * has no business on a host that runs containers for graders). */
#define PR_NETLINK_MAX_PREFIXES 4096

struct mnl_socket;

/* Opens a non-blocking, close-on-exec NETLINK_ROUTE socket bound to the
 * multicast groups (RTMGRP_* bits, 0 = none: for dumps).  Errors: the
 * socket/bind errno. */
struct mnl_socket *pr_netlink_route_open (unsigned int groups, pr_error **err);

/* Dumps (RTM_GETADDR, then RTM_GETROUTE for every family and table) the
 * host's networks on nl (from pr_netlink_route_open (0)): every interface
 * address and its prefix, the local table's addresses, broadcast
 * addresses, each gateway (RTA_GATEWAY, RTA_VIA, multipath next hops) and
 * each route without a gateway (a directly attached network; a default
 * route without one is skipped).  *out is a malloc'd array of *n entries,
 * duplicates removed.  Errors: send/recv errno; ETIMEDOUT when the kernel
 * does not answer within 1 s; E2BIG past PR_NETLINK_MAX_PREFIXES entries.
 * Source: rtnetlink(7) RTM_GETADDR, RTM_GETROUTE. */
int pr_netlink_host_prefixes (struct mnl_socket *nl, struct pr_host_prefix **out, size_t *n, pr_error **err);

#endif
