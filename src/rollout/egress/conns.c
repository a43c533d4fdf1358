/* conns.c - the egress helper's list of live connections as a whole:
 * which one makes room when a group's budget is full (the oldest that sent
 * nothing, else the oldest still waiting for its head), freeing them all
 * at exit, and ending every connection of a token that expired.  One
 * connection's own life is proxy.c's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <event2/buffer.h>

#include "egress-internal.h"

static bool
waiting_for_head (struct pr_conn *c)
{
  return c->head_deadline && evtimer_pending (c->head_deadline, NULL);
}

/* Nothing of a request has arrived: no byte read into the bufferevent and
 * none waiting in the socket (FIONREAD). */
static bool
sent_nothing (struct pr_conn *c)
{
  int queued = 0;
  if (c->s[CLI].bev == NULL || evbuffer_get_length (bufferevent_get_input (c->s[CLI].bev)) > 0)
    return false;
  return ioctl (bufferevent_getfd (c->s[CLI].bev), FIONREAD, &queued) == 0 && queued == 0;
}

/* The connection to close when every slot is taken: the oldest one that
 * has sent nothing at all, else the oldest still waiting for its request
 * head (nothing decided yet, nothing to log), else NULL.  A client whose
 * request is already queued in its socket, not yet read because accepting
 * a flood came first, is never closed before one that sent nothing. */
static struct pr_conn *
oldest_idle (struct pr_egress *eg, enum pr_conn_kind kind)
{
  struct pr_conn *tail = NULL, *fallback = NULL;
  for (struct pr_conn *c = eg->conns; c; c = c->next)
    tail = c;
  /* The list is newest first: walk back from the oldest. */
  for (struct pr_conn *c = tail; c; c = c->prev)
    {
      if (c->kind != kind || !waiting_for_head (c))
        continue;
      if (sent_nothing (c))
        return c;
      if (fallback == NULL)
        fallback = c;
    }
  return fallback;
}

bool
pr_proxy_has_idle (struct pr_egress *eg, enum pr_conn_kind kind)
{
  /* Any connection oldest_idle could pick: one still waiting for its head
   * (no need to find which, nor to ask the sockets what they hold). */
  for (struct pr_conn *c = eg->conns; c; c = c->next)
    if (c->kind == kind && waiting_for_head (c))
      return true;
  return false;
}

bool
pr_proxy_evict_idle (struct pr_egress *eg, enum pr_conn_kind kind)
{
  struct pr_conn *victim = oldest_idle (eg, kind);
  if (victim == NULL)
    return false;
  pr_conn_free (victim);
  return true;
}

void
pr_proxy_free_all (struct pr_egress *eg)
{
  while (eg->conns)
    pr_conn_free (eg->conns);
}

void
pr_proxy_drop_token (struct pr_egress *eg, uint64_t token_id)
{
  struct pr_conn *c = eg->conns, *next;

  for (; c; c = next)
    {
      next = c->next;
      if (c->token_id == token_id)
        {
          if (c->decided && c->allow)
            {
              size_t n = strlen (c->reason);
              snprintf (c->reason + n, sizeof c->reason - n, "%s", n ? "; token expired" : "token expired");
            }
          pr_conn_free (c);
        }
    }
}
