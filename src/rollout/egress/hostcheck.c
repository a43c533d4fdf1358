/* hostcheck.c - the address classification behind the egress proxy's
 * "never connect to a non-public address" rule (see hostcheck.h). */
#define _GNU_SOURCE
#include "hostcheck.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

/* Extracts the IPv4 address an IPv6 address carries in the forms
 * hostcheck.h lists; returns true and sets *v4 (host byte order). */
static bool
embedded_v4 (const struct in6_addr *a, uint32_t *v4)
{
  const uint8_t *b = a->s6_addr;
  static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  static const uint8_t compat[12] = { 0 };
  static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };

  if (memcmp (b, mapped, 12) == 0 || memcmp (b, nat64, 12) == 0
      || (memcmp (b, compat, 12) == 0 && (b[12] | b[13] | b[14]) != 0))
    {
      *v4 = (uint32_t) b[12] << 24 | b[13] << 16 | b[14] << 8 | b[15];
      return true;
    }
  if (b[0] == 0x20 && b[1] == 0x02)
    {
      *v4 = (uint32_t) b[2] << 24 | b[3] << 16 | b[4] << 8 | b[5];
      return true;
    }
  return false;
}

static bool
in_v4 (uint32_t a, uint32_t net, int bits)
{
  uint32_t mask = bits == 0 ? 0 : ~0u << (32 - bits);
  return (a & mask) == (net & mask);
}

static enum pr_addr_class
classify_v4 (uint32_t a)
{
  if (in_v4 (a, 0x00000000, 8))
    return PR_ADDR_UNSPECIFIED;
  if (in_v4 (a, 0x7f000000, 8))
    return PR_ADDR_LOOPBACK;
  if (in_v4 (a, 0xa9fe0000, 16))
    return PR_ADDR_LINK_LOCAL;
  if (in_v4 (a, 0x0a000000, 8) || in_v4 (a, 0xac100000, 12) || in_v4 (a, 0xc0a80000, 16))
    return PR_ADDR_PRIVATE;
  if (in_v4 (a, 0x64400000, 10))
    return PR_ADDR_CGNAT;
  if (in_v4 (a, 0xe0000000, 4))
    return PR_ADDR_MULTICAST;
  if (in_v4 (a, 0xf0000000, 4))
    return PR_ADDR_RESERVED;
  return PR_ADDR_PUBLIC;
}

enum pr_addr_class
pr_hostcheck_classify (const struct sockaddr *sa)
{
  if (sa->sa_family == AF_INET)
    return classify_v4 (ntohl (((const struct sockaddr_in *) sa)->sin_addr.s_addr));
  if (sa->sa_family != AF_INET6)
    return PR_ADDR_RESERVED;

  const struct in6_addr *a = &((const struct sockaddr_in6 *) sa)->sin6_addr;
  const uint8_t *b = a->s6_addr;
  uint32_t v4;

  if (IN6_IS_ADDR_UNSPECIFIED (a))
    return PR_ADDR_UNSPECIFIED;
  if (IN6_IS_ADDR_LOOPBACK (a))
    return PR_ADDR_LOOPBACK;
  if (embedded_v4 (a, &v4))
    return classify_v4 (v4);
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
    return PR_ADDR_LINK_LOCAL;
  if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0))
    return PR_ADDR_PRIVATE;
  if (b[0] == 0xff)
    return PR_ADDR_MULTICAST;
  return PR_ADDR_PUBLIC;
}

bool
pr_hostcheck_is_own (const struct sockaddr *sa, const struct ifaddrs *ifa)
{
  uint32_t v4 = 0;
  bool have_v4 = false, have_v6 = false;
  struct in6_addr v6;

  if (sa->sa_family == AF_INET)
    {
      v4 = ((const struct sockaddr_in *) sa)->sin_addr.s_addr;
      have_v4 = true;
    }
  else if (sa->sa_family == AF_INET6)
    {
      uint32_t h;
      v6 = ((const struct sockaddr_in6 *) sa)->sin6_addr;
      have_v6 = true;
      if (embedded_v4 (&v6, &h))
        {
          v4 = htonl (h);
          have_v4 = true;
        }
    }

  for (; ifa != NULL; ifa = ifa->ifa_next)
    {
      const struct sockaddr *a = ifa->ifa_addr;
      if (a == NULL)
        continue;
      if (have_v4 && a->sa_family == AF_INET && ((const struct sockaddr_in *) a)->sin_addr.s_addr == v4)
        return true;
      if (have_v6 && a->sa_family == AF_INET6
          && memcmp (&((const struct sockaddr_in6 *) a)->sin6_addr, &v6, sizeof v6) == 0)
        return true;
    }
  return false;
}

enum pr_addr_class
pr_hostcheck (const struct sockaddr *sa)
{
  struct ifaddrs *ifa = NULL;
  enum pr_addr_class c = pr_hostcheck_classify (sa);

  if (c != PR_ADDR_PUBLIC)
    return c;
  if (getifaddrs (&ifa) < 0)
    return PR_ADDR_HOST_OWN;
  bool own = pr_hostcheck_is_own (sa, ifa);
  freeifaddrs (ifa);
  return own ? PR_ADDR_HOST_OWN : PR_ADDR_PUBLIC;
}

void
pr_own_addrs_init (struct pr_own_addrs *o)
{
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };

  o->ifa = NULL;
  o->nl_fd = socket (AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (o->nl_fd >= 0 && bind (o->nl_fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      close (o->nl_fd);
      o->nl_fd = -1;
    }
}

void
pr_own_addrs_free (struct pr_own_addrs *o)
{
  if (o->ifa)
    freeifaddrs (o->ifa);
  o->ifa = NULL;
  if (o->nl_fd >= 0)
    close (o->nl_fd);
  o->nl_fd = -1;
}

/* Drops the cached list if any address changed since it was read. */
static void
own_addrs_refresh_if_changed (struct pr_own_addrs *o)
{
  char buf[8192];
  bool changed = o->nl_fd < 0;

  while (o->nl_fd >= 0)
    {
      ssize_t n = recv (o->nl_fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0)
        {
          changed = true;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        changed = true; /* ENOBUFS: notifications were lost */
      break;
    }
  if (changed && o->ifa)
    {
      freeifaddrs (o->ifa);
      o->ifa = NULL;
    }
}

enum pr_addr_class
pr_hostcheck_cached (struct pr_own_addrs *o, const struct sockaddr *sa)
{
  enum pr_addr_class c = pr_hostcheck_classify (sa);

  if (c != PR_ADDR_PUBLIC)
    return c;
  own_addrs_refresh_if_changed (o);
  if (o->ifa == NULL && getifaddrs (&o->ifa) < 0)
    {
      o->ifa = NULL;
      return PR_ADDR_HOST_OWN;
    }
  return pr_hostcheck_is_own (sa, o->ifa) ? PR_ADDR_HOST_OWN : PR_ADDR_PUBLIC;
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
    case PR_ADDR_HOST_OWN: return "host-own";
    }
  return "unknown";
}
