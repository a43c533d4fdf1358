/* netlink.c - loopback up over rtnetlink with libmnl (see netlink.h). */
#define _GNU_SOURCE
#include "netlink.h"
#include "../base/util.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
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
