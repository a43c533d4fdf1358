/* hostcheck.c - the address classification behind the egress proxy's
 * "only addresses on the internet" rule (see hostcheck.h): the table of
 * special-purpose ranges, the IPv6 forms carrying IPv4 addresses, the
 * host's networks, and the operator's reachable ranges. */
#define _GNU_SOURCE
#include "hostcheck.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/util.h"

#define V4(a, b, c, d) { a, b, c, d }

/* Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * whose "Globally Reachable" is False (or N/A, for a block whose parts say
 * otherwise), the multicast and reserved space outside them, and the
 * exceptions inside those blocks.  The longest match wins.  Registry
 * entries that are globally reachable and sit outside every refused block
 * (AS112 192.31.196/24 and 192.175.48/24, AMT 192.52.193/24,
 * 2620:4f:8000::/48) need no line. */
static const struct pr_addr_range table[] = {
  /* ---- IPv4 (IANA IPv4 Special-Purpose Address Registry) ---- */
  { AF_INET, 8, V4 (0, 0, 0, 0), PR_ADDR_UNSPECIFIED, "\"this network\"", "RFC 791 section 3.2" },
  { AF_INET, 8, V4 (10, 0, 0, 0), PR_ADDR_PRIVATE, "private-use", "RFC 1918" },
  { AF_INET, 10, V4 (100, 64, 0, 0), PR_ADDR_CGNAT, "shared address space", "RFC 6598" },
  { AF_INET, 8, V4 (127, 0, 0, 0), PR_ADDR_LOOPBACK, "loopback", "RFC 1122 section 3.2.1.3" },
  { AF_INET, 16, V4 (169, 254, 0, 0), PR_ADDR_LINK_LOCAL, "link local", "RFC 3927" },
  { AF_INET, 12, V4 (172, 16, 0, 0), PR_ADDR_PRIVATE, "private-use", "RFC 1918" },
  /* The block's globally reachable parts, PCP anycast 192.0.0.9 (RFC 7723)
   * and TURN anycast 192.0.0.10 (RFC 8155), are answered by the nearest
   * such server, often the host's own gateway: refused with the block, as
   * are its service continuity prefix (192.0.0.0/29, RFC 7335), dummy
   * address (192.0.0.8, RFC 7600) and NAT64 discovery addresses
   * (192.0.0.170-171, RFC 8880). */
  { AF_INET, 24, V4 (192, 0, 0, 0), PR_ADDR_PROTOCOL, "IETF protocol assignments", "RFC 6890 section 2.1" },
  { AF_INET, 24, V4 (192, 0, 2, 0), PR_ADDR_DOCUMENTATION, "documentation (TEST-NET-1)", "RFC 5737" },
  { AF_INET, 24, V4 (192, 88, 99, 0), PR_ADDR_RESERVED, "deprecated 6to4 relay anycast", "RFC 7526" },
  { AF_INET, 16, V4 (192, 168, 0, 0), PR_ADDR_PRIVATE, "private-use", "RFC 1918" },
  { AF_INET, 15, V4 (198, 18, 0, 0), PR_ADDR_BENCHMARKING, "benchmarking", "RFC 2544" },
  { AF_INET, 24, V4 (198, 51, 100, 0), PR_ADDR_DOCUMENTATION, "documentation (TEST-NET-2)", "RFC 5737" },
  { AF_INET, 24, V4 (203, 0, 113, 0), PR_ADDR_DOCUMENTATION, "documentation (TEST-NET-3)", "RFC 5737" },
  { AF_INET, 4, V4 (224, 0, 0, 0), PR_ADDR_MULTICAST, "multicast", "RFC 5771" },
  { AF_INET, 4, V4 (240, 0, 0, 0), PR_ADDR_RESERVED, "reserved", "RFC 1112 section 4" },
  { AF_INET, 32, V4 (255, 255, 255, 255), PR_ADDR_RESERVED, "limited broadcast", "RFC 919 section 7, RFC 8190" },

  /* ---- IPv6 (IANA IPv6 Address Space and Special-Purpose Registries) ---- */
  /* Everything outside global unicast 2000::/3 is reserved by the IETF
   * (IANA IPv6 Address Space), apart from the lines below. */
  { AF_INET6, 0, { 0 }, PR_ADDR_RESERVED, "reserved by the IETF", "RFC 4291 section 2.4" },
  { AF_INET6, 3, { 0x20 }, PR_ADDR_PUBLIC, "global unicast", "RFC 4291 section 2.4" },
  { AF_INET6, 128, { 0 }, PR_ADDR_UNSPECIFIED, "unspecified", "RFC 4291 section 2.5.2" },
  { AF_INET6, 128, { [15] = 1 }, PR_ADDR_LOOPBACK, "loopback", "RFC 4291 section 2.5.3" },
  /* IPv4-mapped and NAT64 addresses are their IPv4 address (checked first,
   * see pr_hostcheck_classify); the deprecated IPv4-compatible form
   * (::/96, RFC 4291 section 2.5.5.1) stays reserved by the ::/0 line. */
  { AF_INET6, 96, { [10] = 0xff, [11] = 0xff }, PR_ADDR_PUBLIC, "IPv4-mapped", "RFC 4291 section 2.5.5.2" },
  { AF_INET6, 96, { 0, 0x64, 0xff, 0x9b }, PR_ADDR_PUBLIC, "IPv4-IPv6 translation", "RFC 6052 section 2.1" },
  { AF_INET6, 48, { 0, 0x64, 0xff, 0x9b, 0, 1 }, PR_ADDR_TRANSLATION, "local-use IPv4-IPv6 translation", "RFC 8215" },
  { AF_INET6, 64, { 0x01 }, PR_ADDR_DISCARD, "discard-only", "RFC 6666" },
  { AF_INET6, 64, { 0x01, 0, 0, 0, 0, 0, 0, 1 }, PR_ADDR_DISCARD, "dummy IPv6 prefix", "RFC 9780" },
  /* 2001::/23 is IETF protocol assignments; its anycast addresses
   * (2001:1::1-3, PCP, TURN, DNS-SD SRP) are refused with it, as in IPv4. */
  { AF_INET6, 23, { 0x20, 0x01 }, PR_ADDR_PROTOCOL, "IETF protocol assignments", "RFC 2928" },
  /* Teredo: its IPv4 addresses are checked first (pr_hostcheck_classify). */
  { AF_INET6, 32, { 0x20, 0x01 }, PR_ADDR_PUBLIC, "Teredo", "RFC 4380, RFC 8190" },
  { AF_INET6, 48, { 0x20, 0x01, 0, 2 }, PR_ADDR_BENCHMARKING, "benchmarking", "RFC 5180" },
  { AF_INET6, 32, { 0x20, 0x01, 0, 3 }, PR_ADDR_PUBLIC, "AMT", "RFC 7450" },
  { AF_INET6, 48, { 0x20, 0x01, 0, 4, 0x01, 0x12 }, PR_ADDR_PUBLIC, "AS112-v6", "RFC 7535" },
  /* ORCHIDs are identifiers, not locators: nothing answers at one. */
  { AF_INET6, 28, { 0x20, 0x01, 0, 0x10 }, PR_ADDR_RESERVED, "deprecated ORCHID", "RFC 4843" },
  { AF_INET6, 28, { 0x20, 0x01, 0, 0x20 }, PR_ADDR_RESERVED, "ORCHIDv2", "RFC 7343" },
  { AF_INET6, 28, { 0x20, 0x01, 0, 0x30 }, PR_ADDR_PUBLIC, "drone remote ID entity tags", "RFC 9374" },
  { AF_INET6, 32, { 0x20, 0x01, 0x0d, 0xb8 }, PR_ADDR_DOCUMENTATION, "documentation", "RFC 3849" },
  { AF_INET6, 20, { 0x3f, 0xff }, PR_ADDR_DOCUMENTATION, "documentation", "RFC 9637" },
  { AF_INET6, 16, { 0x5f, 0x00 }, PR_ADDR_RESERVED, "segment routing SIDs", "RFC 9602" },
  { AF_INET6, 7, { 0xfc }, PR_ADDR_PRIVATE, "unique-local", "RFC 4193" },
  { AF_INET6, 10, { 0xfe, 0x80 }, PR_ADDR_LINK_LOCAL, "link-local unicast", "RFC 4291 section 2.5.6" },
  { AF_INET6, 10, { 0xfe, 0xc0 }, PR_ADDR_PRIVATE, "deprecated site-local", "RFC 3879" },
  { AF_INET6, 8, { 0xff }, PR_ADDR_MULTICAST, "multicast", "RFC 4291 section 2.7" },
};

const struct pr_addr_range *
pr_hostcheck_table (size_t *n)
{
  *n = PR_ARRAY_SIZE (table);
  return table;
}

static bool
prefix_match (const uint8_t *net, unsigned int len, const uint8_t *a)
{
  unsigned int bytes = len / 8, bits = len % 8;
  if (memcmp (net, a, bytes) != 0)
    return false;
  if (bits == 0)
    return true;
  uint8_t mask = (uint8_t) (0xff << (8 - bits));
  return (net[bytes] & mask) == (a[bytes] & mask);
}

static enum pr_addr_class
table_class (int family, const uint8_t *a)
{
  const struct pr_addr_range *best = NULL;
  for (size_t i = 0; i < PR_ARRAY_SIZE (table); i++)
    if (table[i].family == family && (best == NULL || table[i].len > best->len)
        && prefix_match (table[i].addr, table[i].len, a))
      best = &table[i];
  return best ? best->cls : PR_ADDR_PUBLIC;
}

/* The IPv4 addresses an IPv6 address carries, network byte order:
 * IPv4-mapped, IPv4-compatible, NAT64 (well-known prefix), 6to4, and
 * Teredo's server and (inverted) client addresses.  Returns how many (0-2). */
static size_t
embedded_v4 (const uint8_t *b, uint8_t v4[2][4])
{
  static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
  static const uint8_t compat[12] = { 0 };
  static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };

  if (memcmp (b, mapped, 12) == 0 || memcmp (b, nat64, 12) == 0
      || (memcmp (b, compat, 12) == 0 && (b[12] | b[13] | b[14]) != 0))
    {
      memcpy (v4[0], b + 12, 4);
      return 1;
    }
  if (b[0] == 0x20 && b[1] == 0x02)
    {
      memcpy (v4[0], b + 2, 4);
      return 1;
    }
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0)
    {
      memcpy (v4[0], b + 4, 4);
      for (int i = 0; i < 4; i++)
        v4[1][i] = (uint8_t) ~b[12 + i];
      return 2;
    }
  return 0;
}

static const uint8_t *
sa_bytes (const struct sockaddr *sa)
{
  if (sa->sa_family == AF_INET)
    return (const uint8_t *) &((const struct sockaddr_in *) sa)->sin_addr;
  return ((const struct sockaddr_in6 *) sa)->sin6_addr.s6_addr;
}

enum pr_addr_class
pr_hostcheck_classify (const struct sockaddr *sa)
{
  if (sa->sa_family == AF_INET)
    return table_class (AF_INET, sa_bytes (sa));
  if (sa->sa_family != AF_INET6)
    return PR_ADDR_RESERVED;

  const uint8_t *b = sa_bytes (sa);
  uint8_t v4[2][4];
  size_t n = embedded_v4 (b, v4);
  for (size_t i = 0; i < n; i++)
    {
      enum pr_addr_class c = table_class (AF_INET, v4[i]);
      if (c != PR_ADDR_PUBLIC)
        return c;
    }
  return table_class (AF_INET6, b);
}

static enum pr_addr_class
host_class (int family, const uint8_t *a, const struct pr_host_prefix *p, size_t n)
{
  enum pr_addr_class c = PR_ADDR_PUBLIC;
  for (size_t i = 0; i < n; i++)
    {
      if (p[i].family != family || !prefix_match (p[i].addr, p[i].len, a))
        continue;
      if (p[i].kind == PR_HOST_OWN)
        return PR_ADDR_HOST_OWN;
      if (p[i].kind == PR_HOST_GATEWAY)
        c = PR_ADDR_HOST_GATEWAY;
      else if (c == PR_ADDR_PUBLIC)
        c = PR_ADDR_HOST_ONLINK;
    }
  return c;
}

enum pr_addr_class
pr_hostcheck_host (const struct sockaddr *sa, const struct pr_host_prefix *prefixes, size_t n)
{
  if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
    return PR_ADDR_HOST_OWN;
  enum pr_addr_class c = host_class (sa->sa_family, sa_bytes (sa), prefixes, n);
  if (sa->sa_family == AF_INET6)
    {
      uint8_t v4[2][4];
      size_t k = embedded_v4 (sa_bytes (sa), v4);
      for (size_t i = 0; i < k && c != PR_ADDR_HOST_OWN; i++)
        {
          enum pr_addr_class c4 = host_class (AF_INET, v4[i], prefixes, n);
          if (c4 == PR_ADDR_HOST_OWN || (c4 == PR_ADDR_HOST_GATEWAY && c != PR_ADDR_HOST_GATEWAY)
              || (c4 != PR_ADDR_PUBLIC && c == PR_ADDR_PUBLIC))
            c = c4;
        }
    }
  return c;
}

bool
pr_hostcheck_widenable (enum pr_addr_class c)
{
  switch (c)
    {
    case PR_ADDR_UNSPECIFIED:
    case PR_ADDR_LOOPBACK:
    case PR_ADDR_LINK_LOCAL:
    case PR_ADDR_MULTICAST:
    case PR_ADDR_RESERVED:
    case PR_ADDR_HOST_OWN:
      return false;
    default:
      return true;
    }
}

static bool
reachable_has (const struct pr_reachable *r, int family, const uint8_t *a)
{
  for (size_t i = 0; r && i < r->n; i++)
    if (r->v[i].family == family && prefix_match (r->v[i].addr, r->v[i].len, a))
      return true;
  return false;
}

bool
pr_reachable_contains (const struct pr_reachable *r, const struct sockaddr *sa)
{
  if (r == NULL || r->n == 0 || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
    return false;
  if (reachable_has (r, sa->sa_family, sa_bytes (sa)))
    return true;
  if (sa->sa_family != AF_INET6)
    return false;
  /* A form carrying an IPv4 address is reachable when every address it
   * carries is. */
  uint8_t v4[2][4];
  size_t k = embedded_v4 (sa_bytes (sa), v4);
  for (size_t i = 0; i < k; i++)
    if (!reachable_has (r, AF_INET, v4[i]))
      return false;
  return k > 0;
}

enum pr_addr_class
pr_hostcheck_decide (const struct sockaddr *sa, const struct pr_host_prefix *prefixes, size_t n,
                     const struct pr_reachable *reachable)
{
  enum pr_addr_class c = pr_hostcheck_classify (sa);
  if (!pr_hostcheck_widenable (c))
    return c;
  enum pr_addr_class h = pr_hostcheck_host (sa, prefixes, n);
  if (h == PR_ADDR_HOST_OWN)
    return h;
  if (c == PR_ADDR_PUBLIC && h == PR_ADDR_PUBLIC)
    return PR_ADDR_PUBLIC;
  if (pr_reachable_contains (reachable, sa))
    return PR_ADDR_PUBLIC;
  return c != PR_ADDR_PUBLIC ? c : h;
}

/* ---- the operator's reachable ranges ---- */

static int
parse_one (const char *s, struct pr_host_prefix *p, pr_error **err)
{
  char buf[INET6_ADDRSTRLEN + 8];
  const char *slash = strchr (s, '/');
  size_t alen = slash ? (size_t) (slash - s) : strlen (s);

  memset (p, 0, sizeof *p);
  if (alen == 0 || alen >= INET6_ADDRSTRLEN)
    return pr_error_invalid (err, "`%s` is not an address or CIDR range", s);
  memcpy (buf, s, alen);
  buf[alen] = '\0';
  if (inet_pton (AF_INET, buf, p->addr) == 1)
    p->family = AF_INET;
  else if (inet_pton (AF_INET6, buf, p->addr) == 1)
    p->family = AF_INET6;
  else
    return pr_error_invalid (err, "`%s` is not an address or CIDR range", s);
  unsigned full = p->family == AF_INET ? 32 : 128;
  p->len = full;
  if (slash)
    {
      const char *d = slash + 1;
      size_t dl = strlen (d);
      if (dl == 0 || dl > 3 || !pr_str_is_digits (d, dl) || (dl > 1 && d[0] == '0') || (unsigned) atoi (d) > full)
        return pr_error_invalid (err, "`%s`: the prefix length must be 0 to %u", s, full);
      p->len = (unsigned) atoi (d);
    }
  for (unsigned bit = p->len; bit < full; bit++)
    if (p->addr[bit / 8] & (0x80 >> (bit % 8)))
      return pr_error_invalid (err, "`%s` has bits set after its /%u prefix", s, p->len);

  /* The range's first and last address: neither may be in a class no
   * setting can widen (so 0.0.0.0/0 or 127.0.0.0/8 are refused here rather
   * than silently doing less than they say). */
  struct sockaddr_storage first = { 0 }, last = { 0 };
  uint8_t *fb, *lb;
  if (p->family == AF_INET)
    {
      first.ss_family = last.ss_family = AF_INET;
      fb = (uint8_t *) &((struct sockaddr_in *) &first)->sin_addr;
      lb = (uint8_t *) &((struct sockaddr_in *) &last)->sin_addr;
    }
  else
    {
      first.ss_family = last.ss_family = AF_INET6;
      fb = ((struct sockaddr_in6 *) &first)->sin6_addr.s6_addr;
      lb = ((struct sockaddr_in6 *) &last)->sin6_addr.s6_addr;
    }
  memcpy (fb, p->addr, full / 8);
  memcpy (lb, p->addr, full / 8);
  for (unsigned bit = p->len; bit < full; bit++)
    lb[bit / 8] |= (uint8_t) (0x80 >> (bit % 8));
  enum pr_addr_class cf = pr_hostcheck_classify ((struct sockaddr *) &first);
  enum pr_addr_class cl = pr_hostcheck_classify ((struct sockaddr *) &last);
  enum pr_addr_class bad = !pr_hostcheck_widenable (cf) ? cf : cl;
  if (!pr_hostcheck_widenable (cf) || !pr_hostcheck_widenable (cl))
    return pr_error_invalid (err, "`%s` covers %s addresses, which are never reachable", s, pr_addr_class_name (bad));
  return 0;
}

int
pr_reachable_parse (const char *text, struct pr_reachable *out, pr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (text ? text : "");
  char *rest = copy, *t;

  out->v = NULL;
  out->n = 0;
  if (*copy == '\0')
    return 0;
  while ((t = strsep (&rest, ",")) != NULL)
    {
      while (*t == ' ' || *t == '\t')
        t++;
      size_t l = strlen (t);
      while (l > 0 && (t[l - 1] == ' ' || t[l - 1] == '\t'))
        t[--l] = '\0';
      if (l == 0)
        {
          pr_reachable_free (out);
          return pr_error_invalid (err, "empty entry in `%s`", text);
        }
      if (out->n == PR_REACHABLE_MAX)
        {
          pr_reachable_free (out);
          return pr_error_invalid (err, "more than %d ranges in `%.40s...`", PR_REACHABLE_MAX, text);
        }
      out->v = xrealloc (out->v, (out->n + 1) * sizeof *out->v);
      if (parse_one (t, &out->v[out->n], err) < 0)
        {
          pr_reachable_free (out);
          return -1;
        }
      out->n++;
    }
  return 0;
}

char *
pr_reachable_format (const struct pr_reachable *r)
{
  char *s = xstrdup ("");
  for (size_t i = 0; r && i < r->n; i++)
    {
      char a[INET6_ADDRSTRLEN];
      inet_ntop (r->v[i].family, r->v[i].addr, a, sizeof a);
      char *n = xasprintf ("%s%s%s/%u", s, i ? "," : "", a, r->v[i].len);
      free (s);
      s = n;
    }
  return s;
}

void
pr_reachable_free (struct pr_reachable *r)
{
  free (r->v);
  r->v = NULL;
  r->n = 0;
}

/* ---- the host's networks, cached ---- */

int
pr_host_nets_init (struct pr_host_nets *h, pr_error **err)
{
  memset (h, 0, sizeof *h);
  h->dump = pr_netlink_route_open (0, err);
  if (h->dump == NULL)
    return -1;
  /* Without notifications every check dumps again: slower, never stale. */
  pr_error *e = NULL;
  h->watch = pr_netlink_route_open (RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
                                    &e);
  pr_error_free (&e);
  if (pr_netlink_host_prefixes (h->dump, &h->v, &h->n, err) < 0)
    {
      pr_host_nets_free (h);
      return -1;
    }
  h->valid = true;
  return 0;
}

void
pr_host_nets_free (struct pr_host_nets *h)
{
  free (h->v);
  h->v = NULL;
  h->n = 0;
  h->valid = false;
  if (h->dump)
    mnl_socket_close (h->dump);
  if (h->watch)
    mnl_socket_close (h->watch);
  h->dump = h->watch = NULL;
}

/* Drops the cached list if anything changed since it was read. */
static void
refresh_if_changed (struct pr_host_nets *h)
{
  char buf[8192];

  if (h->watch == NULL)
    {
      h->valid = false;
      return;
    }
  for (;;)
    {
      ssize_t n = recv (mnl_socket_get_fd (h->watch), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0)
        {
          h->valid = false;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        h->valid = false; /* ENOBUFS: notifications were lost */
      break;
    }
}

enum pr_addr_class
pr_hostcheck_cached (struct pr_host_nets *h, const struct pr_reachable *reachable, const struct sockaddr *sa)
{
  enum pr_addr_class c = pr_hostcheck_classify (sa);
  if (!pr_hostcheck_widenable (c))
    return c;
  refresh_if_changed (h);
  if (!h->valid)
    {
      pr_error *e = NULL;
      struct pr_host_prefix *v = NULL;
      size_t n = 0;
      if (h->dump == NULL || pr_netlink_host_prefixes (h->dump, &v, &n, &e) < 0)
        {
          pr_error_free (&e);
          return PR_ADDR_HOST_OWN;
        }
      free (h->v);
      h->v = v;
      h->n = n;
      h->valid = true;
    }
  return pr_hostcheck_decide (sa, h->v, h->n, reachable);
}

const char *
pr_addr_class_name (enum pr_addr_class c)
{
  switch (c)
    {
    case PR_ADDR_PUBLIC: return "public";
    case PR_ADDR_UNSPECIFIED: return "unspecified";
    case PR_ADDR_LOOPBACK: return "loopback";
    case PR_ADDR_LINK_LOCAL: return "link-local";
    case PR_ADDR_PRIVATE: return "private";
    case PR_ADDR_CGNAT: return "cgnat";
    case PR_ADDR_MULTICAST: return "multicast";
    case PR_ADDR_RESERVED: return "reserved";
    case PR_ADDR_DOCUMENTATION: return "documentation";
    case PR_ADDR_BENCHMARKING: return "benchmarking";
    case PR_ADDR_PROTOCOL: return "protocol-assignment";
    case PR_ADDR_TRANSLATION: return "local translation";
    case PR_ADDR_DISCARD: return "discard-only";
    case PR_ADDR_HOST_OWN: return "host-own";
    case PR_ADDR_HOST_ONLINK: return "on-link";
    case PR_ADDR_HOST_GATEWAY: return "gateway";
    }
  return "unknown";
}
