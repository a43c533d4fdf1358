/* hostcheck.h - classification of the addresses a name resolves to, so
 * the egress proxy never connects to a non-public destination whatever
 * DNS (or the agent) makes a name resolve to.
 * Source: RFC 6890 (special-purpose address registries), RFC 1918,
 * RFC 4193 (fc00::/7), RFC 6598 (100.64/10), RFC 3927 / RFC 4291 (link-local,
 * IPv4-mapped ::ffff:0:0/96), RFC 6052 (64:ff9b::/96), RFC 3056 (2002::/16);
 * SPEC section 2 "network_mode". */
#ifndef PROCTOR_EGRESS_HOSTCHECK_H
#define PROCTOR_EGRESS_HOSTCHECK_H

#include <ifaddrs.h>
#include <stdbool.h>
#include <sys/socket.h>

enum pr_addr_class
{
  PR_ADDR_PUBLIC = 0,
  PR_ADDR_UNSPECIFIED, /* 0.0.0.0/8 ("this network"), :: */
  PR_ADDR_LOOPBACK,    /* 127/8, ::1 */
  PR_ADDR_LINK_LOCAL,  /* 169.254/16, fe80::/10 */
  PR_ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 (old site-local) */
  PR_ADDR_CGNAT,       /* 100.64/10 */
  PR_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
  PR_ADDR_RESERVED,    /* 240/4 incl. 255.255.255.255; a family other than inet/inet6 */
  PR_ADDR_HOST_OWN,    /* an address configured on one of the host's interfaces */
};

/* Classifies an address by the fixed special-purpose ranges above.  IPv6
 * forms that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, the
 * deprecated IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96 and 6to4
 * 2002:AABB:CCDD::/48) are classified by that IPv4 address.
 * Deliberately PUBLIC: documentation (192.0.2/24, 198.51.100/24,
 * 203.0.113/24) and benchmarking (198.18/15) ranges: they are not listed by
 * the SPEC, reach nothing inside the host, and the egress tests put their
 * stand-in "internet" hosts in 198.18/15 so that the product needs no
 * test-only exception.  Pure; sa must be AF_INET or AF_INET6 (else RESERVED). */
enum pr_addr_class pr_hostcheck_classify (const struct sockaddr *sa);

/* True when sa (or the IPv4 address an IPv6 form above carries) equals an
 * address in the getifaddrs(3) list ifa.  Pure. */
bool pr_hostcheck_is_own (const struct sockaddr *sa, const struct ifaddrs *ifa);

/* The full check done before every connect: the fixed ranges, then the
 * host's current addresses (getifaddrs, read on each call so addresses added
 * after start are covered).  A getifaddrs failure yields PR_ADDR_HOST_OWN
 * (fail closed). */
enum pr_addr_class pr_hostcheck (const struct sockaddr *sa);

/* The host's addresses, cached between checks.  getifaddrs(3) is an
 * rtnetlink dump (~70 us with 10 interfaces, more with every container
 * veth) and used to run for every proxied request; the cache is dropped
 * whenever the kernel reports an address change on an rtnetlink socket
 * subscribed to RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR.  That socket is
 * drained (non-blocking) before each check, and the kernel queues the
 * notification before the address change returns to whoever made it, so a
 * check never uses a list older than the last completed change; ENOBUFS
 * (lost notifications) also drops the cache.  Source: rtnetlink(7). */
struct pr_own_addrs
{
  struct ifaddrs *ifa; /* NULL = must be (re)read */
  int nl_fd;           /* -1 = no notifications: read on every check */
};

/* Opens the notification socket; on failure the cache degrades to reading
 * getifaddrs on every check (never to a stale list). */
void pr_own_addrs_init (struct pr_own_addrs *o);
void pr_own_addrs_free (struct pr_own_addrs *o);

/* pr_hostcheck with the cache above. */
enum pr_addr_class pr_hostcheck_cached (struct pr_own_addrs *o, const struct sockaddr *sa);

/* "public", "loopback", ... for log reasons. */
const char *pr_addr_class_name (enum pr_addr_class c);

#endif
