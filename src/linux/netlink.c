/* netlink.c - loopback up, and the host's networks, over rtnetlink with
 * libmnl (see netlink.h). */
#define _GNU_SOURCE
#include "netlink.h"
#include "../base/util.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

int
pr_netlink_lo_up (pr_error **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  unsigned int ifindex = if_nametoindex ("lo");
  if (ifindex == 0)
    return pr_error_set (err, errno, "find the loopback interface");

  struct mnl_socket *nl = mnl_socket_open (NETLINK_ROUTE);
  if (nl == NULL)
    return pr_error_set (err, errno, "open rtnetlink socket");
  int ret = -1;
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    {
      pr_error_set (err, errno, "bind rtnetlink socket");
      goto out;
    }
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  unsigned int seq = (unsigned int) time (NULL);
  nlh->nlmsg_seq = seq;
  struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header (nlh, sizeof *ifm);
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = (int) ifindex;
  ifm->ifi_flags = IFF_UP;
  ifm->ifi_change = IFF_UP;
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    {
      pr_error_set (err, errno, "send RTM_NEWLINK lo up");
      goto out;
    }
  ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof buf);
  if (n < 0 || mnl_cb_run (buf, n, seq, mnl_socket_get_portid (nl), NULL, NULL) < 0)
    {
      pr_error_set (err, errno, "bring up the loopback interface");
      goto out;
    }
  ret = 0;
out:
  mnl_socket_close (nl);
  return ret;
}

/* One request with NLM_F_ACK on a fresh rtnetlink socket; what names it
 * for the errors. */
static int
netlink_request (struct nlmsghdr *nlh, char *buf, size_t size, const char *what, pr_error **err)
{
  struct mnl_socket *nl = mnl_socket_open (NETLINK_ROUTE);
  if (nl == NULL)
    return pr_error_set (err, errno, "open rtnetlink socket");
  int ret = -1;
  unsigned int seq = (unsigned int) time (NULL);
  nlh->nlmsg_seq = seq;
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    pr_error_set (err, errno, "bind rtnetlink socket");
  else if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    pr_error_set (err, errno, "send %s", what);
  else
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, size);
      if (n < 0 || mnl_cb_run (buf, n, seq, mnl_socket_get_portid (nl), NULL, NULL) < 0)
        pr_error_set (err, errno, "%s", what);
      else
        ret = 0;
    }
  mnl_socket_close (nl);
  return ret;
}

int
pr_netlink_local_default_route (int family, pr_error **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  unsigned int ifindex = if_nametoindex ("lo");
  if (ifindex == 0)
    return pr_error_set (err, errno, "find the loopback interface");
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWROUTE;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
  struct rtmsg *rtm = mnl_nlmsg_put_extra_header (nlh, sizeof *rtm);
  rtm->rtm_family = (unsigned char) family;
  rtm->rtm_dst_len = 0;
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_BOOT;
  rtm->rtm_scope = RT_SCOPE_HOST;
  rtm->rtm_type = RTN_LOCAL;
  mnl_attr_put_u32 (nlh, RTA_OIF, ifindex);
  return netlink_request (nlh, buf, sizeof buf,
                          family == AF_INET ? "add the route local 0.0.0.0/0 dev lo" : "add the route local ::/0 dev lo",
                          err);
}

/* ------------------------------------------------ the host's own networks */

struct mnl_socket *
pr_netlink_route_open (unsigned int groups, pr_error **err)
{
  struct mnl_socket *nl = mnl_socket_open2 (NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (nl == NULL)
    {
      pr_error_set (err, errno, "open rtnetlink socket");
      return NULL;
    }
  if (mnl_socket_bind (nl, groups, MNL_SOCKET_AUTOPID) < 0)
    {
      pr_error_set (err, errno, "bind rtnetlink socket");
      mnl_socket_close (nl);
      return NULL;
    }
  return nl;
}

struct prefix_list
{
  struct pr_host_prefix *v;
  size_t n, cap;
  bool overflow;
};

static void
prefix_add (struct prefix_list *l, int family, const void *addr, unsigned int len, enum pr_host_prefix_kind kind)
{
  size_t alen = family == AF_INET ? 4 : 16;
  if (len > alen * 8)
    return;
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].family == family && l->v[i].len == len && l->v[i].kind == kind
        && memcmp (l->v[i].addr, addr, alen) == 0)
      return;
  if (l->n == PR_NETLINK_MAX_PREFIXES)
    {
      l->overflow = true;
      return;
    }
  if (l->n == l->cap)
    {
      l->cap = l->cap ? l->cap * 2 : 32;
      l->v = xrealloc (l->v, l->cap * sizeof *l->v);
    }
  struct pr_host_prefix *p = &l->v[l->n++];
  memset (p, 0, sizeof *p);
  p->family = family;
  p->len = len;
  p->kind = kind;
  memcpy (p->addr, addr, alen);
}

struct attrs
{
  const struct nlattr *tb[RTA_MAX + 1 > IFA_MAX + 1 ? RTA_MAX + 1 : IFA_MAX + 1];
  int max;
};

static int
attr_cb (const struct nlattr *attr, void *data)
{
  struct attrs *a = data;
  int type = mnl_attr_get_type (attr);
  if (type <= a->max)
    a->tb[type] = attr;
  return MNL_CB_OK;
}

/* An attribute holding an address of the message's family (4 or 16 bytes). */
static const void *
attr_addr (const struct nlattr *attr, int family)
{
  size_t want = family == AF_INET ? 4 : 16;
  if (attr == NULL || mnl_attr_get_payload_len (attr) < want)
    return NULL;
  return mnl_attr_get_payload (attr);
}

static int
addr_cb (const struct nlmsghdr *nlh, void *data)
{
  struct prefix_list *l = data;
  const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload (nlh);
  struct attrs a = { .max = IFA_MAX };

  if (nlh->nlmsg_type != RTM_NEWADDR || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
    return MNL_CB_OK;
  mnl_attr_parse (nlh, sizeof *ifa, attr_cb, &a);
  int fam = ifa->ifa_family;
  unsigned full = fam == AF_INET ? 32 : 128;
  /* IFA_LOCAL is the interface's own address; IFA_ADDRESS is the same, or
   * the peer's on a point-to-point link (and the network is the peer's). */
  const void *local = attr_addr (a.tb[IFA_LOCAL], fam), *address = attr_addr (a.tb[IFA_ADDRESS], fam);
  if (local)
    prefix_add (l, fam, local, full, PR_HOST_OWN);
  if (address)
    {
      prefix_add (l, fam, address, full, local ? PR_HOST_ONLINK : PR_HOST_OWN);
      if (ifa->ifa_prefixlen > 0 && ifa->ifa_prefixlen < full)
        prefix_add (l, fam, address, ifa->ifa_prefixlen, PR_HOST_ONLINK);
    }
  return MNL_CB_OK;
}

static void
route_gateways (struct prefix_list *l, int fam, const struct attrs *a)
{
  const void *gw = attr_addr (a->tb[RTA_GATEWAY], fam);
  if (gw)
    prefix_add (l, fam, gw, fam == AF_INET ? 32 : 128, PR_HOST_GATEWAY);
  /* RTA_VIA: a gateway of another family (an IPv4 route via IPv6). */
  if (a->tb[RTA_VIA] && mnl_attr_get_payload_len (a->tb[RTA_VIA]) >= sizeof (struct rtvia))
    {
      const struct rtvia *via = mnl_attr_get_payload (a->tb[RTA_VIA]);
      size_t alen = via->rtvia_family == AF_INET ? 4 : via->rtvia_family == AF_INET6 ? 16 : 0;
      if (alen && mnl_attr_get_payload_len (a->tb[RTA_VIA]) >= sizeof *via + alen)
        prefix_add (l, via->rtvia_family, via->rtvia_addr, alen * 8, PR_HOST_GATEWAY);
    }
  if (a->tb[RTA_MULTIPATH] == NULL)
    return;
  const struct rtnexthop *nh = mnl_attr_get_payload (a->tb[RTA_MULTIPATH]);
  int left = mnl_attr_get_payload_len (a->tb[RTA_MULTIPATH]);
  while (left >= (int) sizeof *nh && nh->rtnh_len >= sizeof *nh && nh->rtnh_len <= left)
    {
      struct attrs na = { .max = RTA_MAX };
      const char *start = (const char *) RTNH_DATA (nh);
      int alen = (int) (nh->rtnh_len - RTNH_LENGTH (0));
      for (const struct nlattr *at = (const struct nlattr *) start; mnl_attr_ok (at, start + alen - (const char *) at);
           at = mnl_attr_next (at))
        attr_cb (at, &na);
      const void *ngw = attr_addr (na.tb[RTA_GATEWAY], fam);
      if (ngw)
        prefix_add (l, fam, ngw, fam == AF_INET ? 32 : 128, PR_HOST_GATEWAY);
      left -= RTNH_ALIGN (nh->rtnh_len);
      nh = RTNH_NEXT (nh);
    }
}

static int
route_cb (const struct nlmsghdr *nlh, void *data)
{
  struct prefix_list *l = data;
  const struct rtmsg *rtm = mnl_nlmsg_get_payload (nlh);
  struct attrs a = { .max = RTA_MAX };
  static const uint8_t any[16];

  if (nlh->nlmsg_type != RTM_NEWROUTE || (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
    return MNL_CB_OK;
  mnl_attr_parse (nlh, sizeof *rtm, attr_cb, &a);
  int fam = rtm->rtm_family;
  unsigned full = fam == AF_INET ? 32 : 128;
  const void *dst = attr_addr (a.tb[RTA_DST], fam);
  if (dst == NULL)
    dst = any;
  switch (rtm->rtm_type)
    {
    case RTN_LOCAL:
    case RTN_ANYCAST:
      /* The local table: every address of the host, also those of
       * interfaces that are down. */
      prefix_add (l, fam, dst, rtm->rtm_dst_len ? rtm->rtm_dst_len : full, PR_HOST_OWN);
      return MNL_CB_OK;
    case RTN_BROADCAST:
      prefix_add (l, fam, dst, full, PR_HOST_ONLINK);
      return MNL_CB_OK;
    case RTN_UNICAST:
      break;
    default:
      return MNL_CB_OK; /* unreachable, blackhole, prohibit, multicast, ... */
    }
  bool via_gateway = a.tb[RTA_GATEWAY] || a.tb[RTA_VIA] || a.tb[RTA_MULTIPATH];
  route_gateways (l, fam, &a);
  /* A route without a gateway reaches its destination directly: a network
   * the host is attached to (scope link for IPv4; IPv6 marks none).  A
   * default route without a gateway (a point-to-point or tunnel device)
   * would make every address "on-link": only prefixes count. */
  if (!via_gateway && rtm->rtm_dst_len > 0)
    prefix_add (l, fam, dst, rtm->rtm_dst_len, PR_HOST_ONLINK);
  return MNL_CB_OK;
}

static int
dump (struct mnl_socket *nl, int type, mnl_cb_t cb, struct prefix_list *l, pr_error **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  /* Dumps on one socket run one after the other, each read to its end,
   * so the sequence number only has to differ from stale messages'. */
  unsigned int seq = (unsigned int) time (NULL) ^ (unsigned int) type;

  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = seq;
  if (type == RTM_GETROUTE)
    {
      struct rtmsg *rtm = mnl_nlmsg_put_extra_header (nlh, sizeof *rtm);
      rtm->rtm_family = AF_UNSPEC; /* every family, every table */
    }
  else
    {
      struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header (nlh, sizeof *ifa);
      ifa->ifa_family = AF_UNSPEC;
    }
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    return pr_error_set (err, errno, "send rtnetlink dump request");
  unsigned int portid = mnl_socket_get_portid (nl);
  for (;;)
    {
      struct pollfd p = { .fd = mnl_socket_get_fd (nl), .events = POLLIN };
      ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof buf);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          /* The socket is non-blocking (the caller is an event loop); a
           * dump answer is produced at once, so a short wait suffices. */
          if (poll (&p, 1, 1000) <= 0)
            return pr_error_set (err, ETIMEDOUT, "rtnetlink dump: no answer");
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return pr_error_set (err, errno, "read rtnetlink dump");
      int r = mnl_cb_run (buf, n, seq, portid, cb, l);
      if (r == MNL_CB_STOP)
        return 0;
      if (r < 0)
        return pr_error_set (err, errno, "rtnetlink dump");
    }
}

int
pr_netlink_host_prefixes (struct mnl_socket *nl, struct pr_host_prefix **out, size_t *n_out, pr_error **err)
{
  struct prefix_list l = { 0 };

  if (dump (nl, RTM_GETADDR, addr_cb, &l, err) < 0 || dump (nl, RTM_GETROUTE, route_cb, &l, err) < 0)
    {
      free (l.v);
      return -1;
    }
  if (l.overflow)
    {
      free (l.v);
      return pr_error_set (err, E2BIG, "the host has more than %d addresses, on-link networks and gateways",
                           PR_NETLINK_MAX_PREFIXES);
    }
  *out = l.v;
  *n_out = l.n;
  return 0;
}
