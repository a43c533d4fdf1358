/* hostcheck.h - classification of the addresses a name resolves to, so
 * the egress proxy never connects to a destination that is not on the
 * internet, whatever DNS (or the agent) makes a name resolve to: the IANA
 * special-purpose ranges that are not globally reachable, the IPv6 forms
 * that carry one of those IPv4 addresses, and the host's own addresses,
 * on-link networks and gateways.  An operator setting (PROCTOR_EGRESS_REACHABLE,
 * never a policy) names ranges to treat as reachable anyway.
 * Source: IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890,
 * RFC 8190), IANA IPv6 Address Space registry, RFC 4291 (IPv6 addressing,
 * IPv4-mapped/-compatible), RFC 6052 and RFC 8215 (NAT64 prefixes),
 * RFC 3056 (6to4), RFC 4380 (Teredo); SPEC section 2 "Network". */
#ifndef PROCTOR_EGRESS_HOSTCHECK_H
#define PROCTOR_EGRESS_HOSTCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../../base/error.h"
#include "../../linux/netlink.h"

enum pr_addr_class
{
  PR_ADDR_PUBLIC = 0,
  PR_ADDR_UNSPECIFIED,   /* 0.0.0.0/8 ("this network"), :: */
  PR_ADDR_LOOPBACK,      /* 127/8, ::1 */
  PR_ADDR_LINK_LOCAL,    /* 169.254/16, fe80::/10 */
  PR_ADDR_PRIVATE,       /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 (old site-local) */
  PR_ADDR_CGNAT,         /* 100.64/10 (shared address space) */
  PR_ADDR_MULTICAST,     /* 224/4, ff00::/8 */
  PR_ADDR_RESERVED,      /* 240/4, 255.255.255.255, deprecated and unassigned ranges */
  PR_ADDR_DOCUMENTATION, /* TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20 */
  PR_ADDR_BENCHMARKING,  /* 198.18/15, 2001:2::/48 */
  PR_ADDR_PROTOCOL,      /* IETF protocol assignments: 192.0.0/24, 2001::/23 */
  PR_ADDR_TRANSLATION,   /* 64:ff9b:1::/48 (local-use NAT64) */
  PR_ADDR_DISCARD,       /* 100::/64 discard-only, 100:0:0:1::/64 dummy */
  PR_ADDR_HOST_OWN,      /* an address of this host */
  PR_ADDR_HOST_ONLINK,   /* a network this host is attached to (its neighbours), a broadcast address */
  PR_ADDR_HOST_GATEWAY,  /* one of this host's routers */
};

/* One line of the fixed table: family AF_INET or AF_INET6, the first len
 * bits of addr (network byte order), its class, the registry's name for it
 * and the document that assigns it.  The longest matching prefix decides,
 * so an entry inside a wider one is an exception to it. */
struct pr_addr_range
{
  int family;
  unsigned int len;
  uint8_t addr[16];
  enum pr_addr_class cls;
  const char *name;
  const char *source;
};

/* The fixed table (for the unit tests and the docs): *n entries. */
const struct pr_addr_range *pr_hostcheck_table (size_t *n);

/* Classifies an address by the fixed table.  IPv6 forms that carry an IPv4
 * address (IPv4-mapped ::ffff:a.b.c.d, the deprecated IPv4-compatible
 * ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002:AABB:CCDD::/48 and Teredo
 * 2001:0::/32, server and client) take the class of that IPv4 address when
 * it is not public.  Pure; sa must be AF_INET or AF_INET6 (else RESERVED). */
enum pr_addr_class pr_hostcheck_classify (const struct sockaddr *sa);

/* The class the host's networks give sa: PR_ADDR_HOST_OWN, _HOST_GATEWAY
 * or _HOST_ONLINK when sa (or the IPv4 address it carries) is one of the n
 * entries of prefixes (in that order of precedence), else PUBLIC.  Pure. */
enum pr_addr_class pr_hostcheck_host (const struct sockaddr *sa, const struct pr_host_prefix *prefixes, size_t n);

/* Address ranges the operator treats as reachable (PROCTOR_EGRESS_REACHABLE). */
struct pr_reachable
{
  struct pr_host_prefix *v; /* kind unused */
  size_t n;
};

#define PR_REACHABLE_MAX 64

/* Parses "CIDR[,CIDR...]" (IPv4 a.b.c.d/N or IPv6 x::/N, a bare address
 * meaning one host; spaces around entries are ignored; an empty string is
 * an empty list) into *out (pr_reachable_free frees it).  Errors (EINVAL,
 * naming the entry): not an address, a prefix length out of range, bits
 * set after the prefix, more than PR_REACHABLE_MAX entries, or a range that
 * touches a class no setting can widen (pr_hostcheck_widenable). */
int pr_reachable_parse (const char *text, struct pr_reachable *out, pr_error **err);

/* The list in the form pr_reachable_parse reads, normalised ("" when
 * empty); malloc'd. */
char *pr_reachable_format (const struct pr_reachable *r);

void pr_reachable_free (struct pr_reachable *r);

/* True when sa (or the IPv4 address it carries) is in r (may be NULL). */
bool pr_reachable_contains (const struct pr_reachable *r, const struct sockaddr *sa);

/* Whether the operator setting may make an address of class c reachable:
 * every class but the host itself (its own addresses, loopback, "this
 * network"), link-local (cloud metadata services live there), multicast
 * and reserved/broadcast, which never name another host to talk to. */
bool pr_hostcheck_widenable (enum pr_addr_class c);

/* The check before every connect: the fixed table, then the host's
 * networks; a class pr_hostcheck_widenable allows is PUBLIC when sa is in
 * reachable.  Pure. */
enum pr_addr_class pr_hostcheck_decide (const struct sockaddr *sa, const struct pr_host_prefix *prefixes, size_t n,
                                        const struct pr_reachable *reachable);

/* The host's networks, cached between checks.  A dump is an rtnetlink
 * round trip (~100 us, more with every container veth): the cache is
 * dropped whenever the kernel reports an address or route change on a
 * socket subscribed to RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
 * RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE.  That socket is drained
 * (non-blocking) before each check, and the kernel queues the notification
 * before the change returns to whoever made it, so a check never uses a
 * list older than the last completed change; ENOBUFS (lost notifications)
 * also drops the cache.  Source: rtnetlink(7). */
struct pr_host_nets
{
  struct pr_host_prefix *v;
  size_t n;
  bool valid;               /* false = must be (re)read */
  struct mnl_socket *dump;  /* for the dumps */
  struct mnl_socket *watch; /* notifications; NULL = dump before every check */
};

/* Opens both sockets and reads the networks once.  Errors: from
 * pr_netlink_route_open / pr_netlink_host_prefixes. */
int pr_host_nets_init (struct pr_host_nets *h, pr_error **err);
void pr_host_nets_free (struct pr_host_nets *h);

/* pr_hostcheck_decide with the host's current networks.  A dump that fails
 * yields PR_ADDR_HOST_OWN for every address (fail closed). */
enum pr_addr_class pr_hostcheck_cached (struct pr_host_nets *h, const struct pr_reachable *reachable,
                                        const struct sockaddr *sa);

/* "public", "loopback", "documentation", ... for log reasons. */
const char *pr_addr_class_name (enum pr_addr_class c);

#endif
