/* netlink.h - the little rtnetlink the runtime needs, with libmnl: bringing
 * up the loopback interface of a fresh network namespace.
 * Source: rtnetlink(7), netdevice(7). */
#ifndef PROCTOR_NETLINK_H
#define PROCTOR_NETLINK_H

#include "../base/error.h"

/* Sets IFF_UP on "lo" in the calling process's network namespace
 * (RTM_NEWLINK with ifi_change = IFF_UP) and waits for the kernel's ack.
 * Errors: socket/bind/send errno, or the ack's error naming the request. */
int pr_netlink_lo_up (pr_error **err);

#endif
