/* peers.c - declared peers: a connection accepted on a peer's listener
 * (127.0.0.x:port inside the container) is spliced raw to the peer's
 * target outside.  The target comes from the policy, so its address is not
 * checked against the public-only rule: peers are the declared way to reach
 * non-public addresses (SPEC section 2 "Peers"). */
#define _GNU_SOURCE
#include "egress-internal.h"

void
pr_peer_start (struct pr_conn *c)
{
  const struct pr_peer *p = pr_conn_peer (c);

  pr_conn_set_target (c, "PEER", p->target_host, p->target_port);
  /* resolve -> connect -> splice; the client's bytes wait in the kernel
   * until the target is connected.  The decision is logged at close. */
  pr_conn_resolve (c, p->target_host, p->target_port, false);
}
