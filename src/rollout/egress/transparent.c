/* transparent.c - the egress helper's side of transparent egress (SPEC
 * section 2 "Network"; docs/rollout.md "Transparent egress"): the resolver
 * answering the container's DNS queries (redirected to 127.0.0.1:53 or
 * [::1]:53 by the runtime's nftables rules, src/rollout/transparent.c) and
 * the connections the rules hand to 127.0.0.1:3127 / [::1]:3127 (tproxy).
 *
 * An allowed name gets a stand-in address (RFC 6598 shared address space,
 * never a destination of ours) from its phase's own pool (see "stand-in
 * addresses" below); a connection to a stand-in is a connection to that name,
 * which the helper resolves itself and checks like a proxied one (address
 * classes, ports), then splices (relay.c).  A denied name gets NXDOMAIN;
 * every answer is a line in the decision log (method "DNS").
 * Source: RFC 1035, RFC 6598; the kernel's Documentation/networking/tproxy.rst
 * (the accepted socket's address is the original destination). */
#include "egress-internal.h"
#include <event2/buffer.h>
#include "dnsmsg.h"
#include "../network.h"
#include "../../base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STANDIN_BASE 0x64400000u /* 100.64.0.0: the agent's pool, the setup's and the verifier's follow */
#define STANDIN_POOL_BITS 16
#define STANDIN_NONE UINT32_MAX
#define DNS_TTL 60
#define DNS_BATCH 64

/* ---- stand-in addresses ----
 *
 * Each phase has its own pool (egress-internal.h), so an agent that
 * resolves thousands of names (a public policy allows any) only ever
 * recycles its own stand-ins: the verifier's and the setup's names never
 * compete with the agent's.  A pool is filled in slot order, then each
 * new name takes the slot of the least recently used one (a name is used
 * when it is resolved and when a stand-in connection names it).  A client
 * that still dials an address after its phase resolved a pool's worth of
 * other names since it last used it reaches the newer name, judged as
 * that name: its own phase's doing, and never outside its policy.
 *
 * A connection is judged by the policy of the phase whose listener
 * accepted it (the rules choose the listener by the socket's cgroup,
 * src/rollout/transparent.c), and only that phase's pool names its
 * address.  An address from another phase's pool is, to it, an address
 * the resolver did not hand out: the name comes from the first bytes
 * (SNI, Host) and is judged by its own policy, as an IP literal's.  So an
 * agent that dials the verifier's stand-ins (100.66.0.1 is the verifier's
 * first name: easy to guess) reaches nothing it could not reach by naming
 * the host itself, learns nothing of which names the verifier resolved
 * (not even through a raw port, where a stand-in of its own would be
 * relayed without reading a byte), and cannot steer a verifier or setup
 * session either: an address of the agent's pool the agent leaves in a
 * file they read stands for no name of theirs, however the agent has
 * recycled it since. */

struct pr_standin
{
  char *name;
  uint32_t chain;        /* next slot in the same hash bucket */
  uint32_t older, newer; /* LRU neighbours */
};

/* The pool of phase. */
static struct pr_standin_pool *
pool_of (struct pr_egress *eg, enum pr_phase phase)
{
  unsigned i = phase == PR_PHASE_AGENT ? 0 : phase == PR_PHASE_SETUP ? 1 : 2;
  return &eg->standins[i];
}

/* FNV-1a (32 bits) of name, reduced to p's buckets. */
static uint32_t
name_hash (const struct pr_standin_pool *p, const char *name)
{
  uint32_t h = 2166136261u;
  for (const unsigned char *s = (const unsigned char *) name; *s; s++)
    h = (h ^ *s) * 16777619u;
  return h & (p->cap - 1);
}

static void
pool_init (struct pr_standin_pool *p, unsigned index)
{
  if (p->slot)
    return;
  p->first = STANDIN_BASE + ((uint32_t) index << STANDIN_POOL_BITS) + 1;
  p->cap = index == 0 ? PR_EGRESS_MAX_STANDINS : PR_EGRESS_MAX_STANDINS_PHASE;
  p->n = 0;
  p->slot = xmalloc0 (p->cap * sizeof *p->slot);
  p->bucket = xmalloc (p->cap * sizeof *p->bucket);
  for (uint32_t i = 0; i < p->cap; i++)
    p->bucket[i] = STANDIN_NONE;
  p->oldest = p->newest = STANDIN_NONE;
}

static void
lru_unlink (struct pr_standin_pool *p, uint32_t i)
{
  struct pr_standin *s = &p->slot[i];
  if (s->older != STANDIN_NONE)
    p->slot[s->older].newer = s->newer;
  else
    p->oldest = s->newer;
  if (s->newer != STANDIN_NONE)
    p->slot[s->newer].older = s->older;
  else
    p->newest = s->older;
}

static void
lru_push_newest (struct pr_standin_pool *p, uint32_t i)
{
  struct pr_standin *s = &p->slot[i];
  s->older = p->newest;
  s->newer = STANDIN_NONE;
  if (p->newest != STANDIN_NONE)
    p->slot[p->newest].newer = i;
  else
    p->oldest = i;
  p->newest = i;
}

static void
lru_touch (struct pr_standin_pool *p, uint32_t i)
{
  if (p->newest == i)
    return;
  lru_unlink (p, i);
  lru_push_newest (p, i);
}

/* Empties slot i of a full pool for a new name: out of its hash chain
 * and the LRU list, its name freed. */
static void
slot_recycle (struct pr_standin_pool *p, uint32_t i)
{
  uint32_t *link = &p->bucket[name_hash (p, p->slot[i].name)];
  while (*link != i)
    link = &p->slot[*link].chain;
  *link = p->slot[i].chain;
  lru_unlink (p, i);
  free (p->slot[i].name);
  p->slot[i].name = NULL;
}

/* The stand-in address (host byte order) of name in phase's pool: the
 * one it has, or a new one (the least recently used name's, when the
 * pool is full).  Never fails (aborts on out-of-memory, as xstrdup). */
static uint32_t
standin_for (struct pr_egress *eg, enum pr_phase phase, const char *name)
{
  struct pr_standin_pool *p = pool_of (eg, phase);
  pool_init (p, (unsigned) (p - eg->standins));
  uint32_t h = name_hash (p, name);
  for (uint32_t i = p->bucket[h]; i != STANDIN_NONE; i = p->slot[i].chain)
    if (strcmp (p->slot[i].name, name) == 0)
      {
        lru_touch (p, i);
        return p->first + i;
      }
  uint32_t i;
  if (p->n < p->cap)
    i = p->n++;
  else
    {
      i = p->oldest;
      slot_recycle (p, i);
    }
  p->slot[i].name = xstrdup (name);
  p->slot[i].chain = p->bucket[h];
  p->bucket[h] = i;
  lru_push_newest (p, i);
  return p->first + i;
}

/* The name stand-in address addr (host byte order) of phase's own pool
 * stands for now (marked used), or NULL: an address of another phase's
 * pool, or none of ours. */
static const char *
standin_name (struct pr_egress *eg, enum pr_phase phase, uint32_t addr)
{
  struct pr_standin_pool *p = pool_of (eg, phase);
  if (p->slot == NULL || addr < p->first || addr - p->first >= p->n)
    return NULL;
  lru_touch (p, addr - p->first);
  return p->slot[addr - p->first].name;
}

void
pr_transparent_free (struct pr_egress *eg)
{
  for (size_t k = 0; k < PR_EGRESS_TSIDES; k++)
    {
      struct pr_standin_pool *p = &eg->standins[k];
      for (uint32_t i = 0; p->slot && i < p->n; i++)
        free (p->slot[i].name);
      free (p->slot);
      free (p->bucket);
      memset (p, 0, sizeof *p);
    }
}

/* The loopback address of the peer called name, or false. */
static bool
peer_addr (struct pr_egress *eg, const char *name, uint8_t out[4])
{
  const struct pr_policy *p = eg->cfg->policy;
  for (size_t i = 0; i < p->n_peers; i++)
    if (strcasecmp (p->peers[i].name, name) == 0)
      {
        _cleanup_free_ char *a = pr_network_peer_addr (p, i);
        return inet_pton (AF_INET, a, out) == 1;
      }
  return false;
}

/* Whether phase's policy lets it reach host at all (ports are checked
 * when it connects). */
static bool
name_allowed (struct pr_egress *eg, enum pr_phase phase, const char *host, const char **why)
{
  const struct pr_policy *p = eg->cfg->policy;
  switch (pr_policy_net_mode (p, phase))
    {
    case PR_NET_PUBLIC:
      return true;
    case PR_NET_ALLOWLIST:
      if (pr_policy_host_allowed (pr_policy_allowed_hosts (p, phase), host))
        return true;
      *why = phase == PR_PHASE_AGENT      ? "not in the agent allowlist"
             : phase == PR_PHASE_SETUP    ? "not in the setup's (environment) allowlist"
                                          : "not in the verifier allowlist";
      return false;
    default:
      *why = "network_mode of the phase is no-network";
      return false;
    }
}

static void
log_dns (struct pr_egress *eg, enum pr_phase phase, const char *name, bool allow, const char *reason)
{
  struct pr_decision d = {
    .phase = pr_phase_name (phase), .method = "DNS", .host = name[0] ? name : ".", .port = 53, .allow = allow, .reason = reason,
  };
  pr_declog_record (&eg->log, &d);
}

/* The answer to one parsed query: rcode, and the address to put in it. */
static int
dns_decide (struct pr_egress *eg, enum pr_phase phase, const struct pr_dnsq *q, uint8_t addr[4], bool *has_addr)
{
  char reason[96];
  const char *why = NULL;
  uint8_t peer[4];

  *has_addr = false;
  if (peer_addr (eg, q->name, peer))
    {
      if (q->qtype == PR_DNS_TYPE_A)
        {
          memcpy (addr, peer, 4);
          *has_addr = true;
        }
      log_dns (eg, phase, q->name, true, "peer");
      return 0;
    }
  if (q->qclass != PR_DNS_CLASS_IN || !name_allowed (eg, phase, q->name, &why))
    {
      log_dns (eg, phase, q->name, false, why ? why : "not class IN");
      return PR_DNS_RCODE_NXDOMAIN;
    }
  if (q->qtype != PR_DNS_TYPE_A)
    {
      /* No data: clients fall back to the A record (IPv4 stand-ins only). */
      snprintf (reason, sizeof reason, "no data for type %u", q->qtype);
      log_dns (eg, phase, q->name, true, reason);
      return 0;
    }
  uint32_t s = standin_for (eg, phase, q->name);
  uint32_t be = htonl (s);
  memcpy (addr, &be, 4);
  *has_addr = true;
  char text[INET_ADDRSTRLEN];
  inet_ntop (AF_INET, addr, text, sizeof text);
  snprintf (reason, sizeof reason, "stand-in %s", text);
  log_dns (eg, phase, q->name, true, reason);
  return 0;
}

static void
dns_one (struct pr_egress *eg, enum pr_phase phase, int fd, const uint8_t *buf, size_t len, const struct sockaddr *from, socklen_t fromlen)
{
  struct pr_dnsq q;
  uint8_t out[PR_DNS_MAX_REPLY], addr[4];
  bool has_addr = false;
  int rcode = pr_dnsmsg_parse_query (buf, len, &q);

  if (rcode < 0)
    return;
  if (rcode == 0)
    rcode = dns_decide (eg, phase, &q, addr, &has_addr);
  else
    log_dns (eg, phase, "", false, "malformed query");
  size_t n = pr_dnsmsg_reply (buf, &q, rcode, has_addr ? addr : NULL, 4, DNS_TTL, out, sizeof out);
  if (n > 0)
    sendto (fd, out, n, MSG_DONTWAIT, from, fromlen);
}

void
pr_transparent_dns_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_transparent_side *ts = arg;
  uint8_t buf[PR_DNS_MAX_REPLY];

  for (int i = 0; i < DNS_BATCH; i++)
    {
      struct sockaddr_storage from;
      socklen_t fl = sizeof from;
      ssize_t n = recvfrom (fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *) &from, &fl);
      if (n < 0)
        return;
      dns_one (ts->eg, ts->phase, fd, buf, (size_t) n, (struct sockaddr *) &from, fl);
    }
}

/* ---- the name of a connection to an address the resolver did not give ---- */

/* A TLS ClientHello's server name (SNI): 1 with it in host, 0 for "more
 * bytes needed", -1 with a reason (malformed, no SNI, or an encrypted
 * ClientHello that hides it). */
static int
tls_name (const uint8_t *buf, size_t len, char host[PR_REQHEAD_MAX_HOST + 1], const char **why)
{
  struct pr_tlshello h;
  int r = pr_tlshello_parse (buf, len, &h, why);
  if (r == PR_TLSHELLO_MORE)
    return 0;
  if (r != PR_TLSHELLO_OK)
    return -1;
  if (!h.has_sni || h.encrypted)
    {
      *why = "the TLS ClientHello names no server (or hides it)";
      return -1;
    }
  snprintf (host, PR_REQHEAD_MAX_HOST + 1, "%s", h.sni);
  return 1;
}

/* The first request head of a plain HTTP connection, judged by the
 * proxy's rules for a forward request (reqhead.c pr_reqhead_parse_origin:
 * one Host field, no obs-fold, an absolute-form target naming the Host's
 * host, unambiguous framing).  Returns 1 with *rh (pointing into buf) and
 * *end, the head's length; 0 for "more bytes needed"; -1 with a reason. */
static int
http_first_head (const char *buf, size_t len, struct pr_reqhead *rh, size_t *end, const char **why)
{
  ssize_t e = pr_reqhead_find_end (buf, len, PR_REQHEAD_MAX_BYTES);
  if (e == 0)
    return 0;
  if (e < 0)
    {
      *why = "neither a TLS ClientHello nor an HTTP request head of at most 16384 bytes";
      return -1;
    }
  if (pr_reqhead_parse_origin (buf, (size_t) e, rh, why) != 0)
    return -1;
  if (rh->host_is_ip)
    {
      *why = "the Host field is not a host name";
      return -1;
    }
  *end = (size_t) e;
  return 1;
}

static void decide_name (struct pr_conn *c, const char *host);

static void
first_event_cb (struct bufferevent *bev, short what, void *arg)
{
  struct pr_conn *c = arg;
  if (what & BEV_EVENT_TIMEOUT)
    pr_conn_deny (c, "%s: no TLS ClientHello or HTTP head within %d s", c->host, PR_EGRESS_HELLO_TIMEOUT_S);
  else
    pr_conn_free (c);
}

/* What the client sent first names its host: a TLS ClientHello's SNI,
 * or the Host of a plain HTTP request head.  TLS is relayed as it came
 * once the name is checked.  Plain HTTP is one request per connection, as
 * through the proxy (proxy.c): its head is rebuilt (pr_reqhead_rewrite,
 * "Connection: close"), its body framed (relay.c dir_take_body), and what
 * the client sends after the body (a kept-alive or pipelined request that
 * could name another virtual host of the same server) never goes
 * upstream. */
static void
first_read_cb (struct bufferevent *bev, void *arg)
{
  struct pr_conn *c = arg;
  struct evbuffer *in = bufferevent_get_input (bev);
  size_t len = evbuffer_get_length (in);
  const uint8_t *buf = evbuffer_pullup (in, (ssize_t) len);
  char sni[PR_REQHEAD_MAX_HOST + 1];
  struct pr_reqhead rh;
  size_t end = len;
  const char *why = NULL;

  bool tls = len > 0 && buf[0] == 0x16;
  int r = tls ? tls_name (buf, len, sni, &why) : http_first_head ((const char *) buf, len, &rh, &end, &why);
  if (r == 0 && len < PR_TLSHELLO_MAX_INPUT)
    return;
  if (r <= 0)
    {
      pr_conn_deny (c, "%s: %s", c->host, why ? why : "no name in the first bytes");
      return;
    }
  const char *host = tls ? sni : rh.host;
  /* The origin sees the Host's port; the helper dials the one the client
   * did: they must agree. */
  if (!tls && rh.port != c->port)
    {
      pr_conn_deny (c, "%s: the Host field names port %u, the connection is to port %u", c->host, rh.port, c->port);
      return;
    }
  /* To a stand-in on 80 or 443, the name the client sends must be the
   * one it resolved: a CDN's address would otherwise carry any of its
   * customers' names (the proxy's rule for CONNECT to 443). */
  if (c->named && strcmp (host, c->host) != 0)
    {
      pr_conn_deny (c, "%s names %s in its first bytes", c->host, host);
      return;
    }
  /* Sent on to the upstream before anything else (relay.c); for HTTP,
   * the bytes after the head stay in the input for the body tracker
   * (pr_relay_start). */
  if (tls)
    {
      c->fwd_head = xmalloc (len);
      memcpy (c->fwd_head, buf, len);
      c->fwd_len = len;
    }
  else
    {
      c->fwd_head = pr_reqhead_rewrite (&rh, &c->fwd_len);
      pr_body_init (&c->body, &rh);
      c->forward = true;
    }
  /* rh's path and fields point into the input: done with them only now
   * (host is a copy, in sni or rh.host). */
  evbuffer_drain (in, end);
  bufferevent_disable (bev, EV_READ);
  bufferevent_set_timeouts (bev, NULL, NULL);
  bufferevent_setcb (bev, NULL, NULL, first_event_cb, c);
  decide_name (c, host);
}

/* Waits (bounded) for the first bytes of a connection to an address the
 * resolver did not hand out. */
static void
wait_first_bytes (struct pr_conn *c)
{
  struct timeval tv = { PR_EGRESS_HELLO_TIMEOUT_S, 0 };
  struct bufferevent *cli = c->s[CLI].bev;
  bufferevent_setwatermark (cli, EV_READ, 0, PR_TLSHELLO_MAX_INPUT);
  bufferevent_set_timeouts (cli, &tv, NULL);
  bufferevent_setcb (cli, first_read_cb, NULL, first_event_cb, c);
  bufferevent_enable (cli, EV_READ);
}

/* The destination the client dialled: the rules' tproxy statement hands
 * the connection over unchanged, so it is the accepted socket's own
 * address (Documentation/networking/tproxy.rst). */
static int
original_dst (int fd, struct sockaddr_storage *ss)
{
  socklen_t l = sizeof *ss;
  return getsockname (fd, (struct sockaddr *) ss, &l);
}

void
pr_transparent_begin (struct pr_conn *c, int fd, enum pr_phase phase)
{
  struct pr_egress *eg = c->eg;
  struct sockaddr_storage ss;
  char text[INET6_ADDRSTRLEN] = "?";

  c->transparent = true;
  c->phase = phase;
  pr_conn_set_target (c, "TCP", "?", 0);
  if (original_dst (fd, &ss) < 0)
    {
      pr_conn_deny (c, "no original destination: %s", strerror (errno));
      return;
    }
  uint16_t port;
  const char *host = NULL;
  if (ss.ss_family == AF_INET)
    {
      const struct sockaddr_in *s4 = (const struct sockaddr_in *) &ss;
      port = ntohs (s4->sin_port);
      inet_ntop (AF_INET, &s4->sin_addr, text, sizeof text);
      host = standin_name (eg, phase, ntohl (s4->sin_addr.s_addr));
    }
  else
    {
      const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *) &ss;
      port = ntohs (s6->sin6_port);
      inet_ntop (AF_INET6, &s6->sin6_addr, text, sizeof text);
    }
  pr_conn_set_target (c, "TCP", host ? host : text, port);
  /* Loopback is never led here: a loopback address is a client that
   * dialled the helper's port itself (the rules refuse that too). */
  if ((ss.ss_family == AF_INET && ntohl (((const struct sockaddr_in *) &ss)->sin_addr.s_addr) >> 24 == 127)
      || (ss.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK (&((const struct sockaddr_in6 *) &ss)->sin6_addr)))
    {
      pr_conn_deny (c, "%s was dialled directly, not redirected", text);
      return;
    }
  if (host == NULL)
    {
      /* An address the resolver did not hand out (an IP literal, a name
       * resolved elsewhere): the name comes from the first bytes, and the
       * helper connects to that name, never to the address. */
      wait_first_bytes (c);
      return;
    }
  c->named = true;
  if (port == 80 || port == 443)
    {
      wait_first_bytes (c);
      return;
    }
  decide_name (c, host);
}

/* Judges the connection to host (c->port, c->phase) and, allowed,
 * resolves and connects. */
static void
decide_name (struct pr_conn *c, const char *host)
{
  struct pr_egress *eg = c->eg;
  enum pr_phase phase = c->phase;
  uint16_t port = c->port;
  const char *why = NULL;

  pr_conn_set_target (c, "TCP", host, port);
  if (!name_allowed (eg, phase, host, &why))
    {
      pr_conn_deny (c, "host %s is %s", host, why);
      return;
    }
  size_t n;
  const uint16_t *ports = pr_policy_allowed_ports (eg->cfg->policy, phase, &n);
  if (!pr_policy_port_allowed (ports, n, port))
    {
      pr_conn_deny (c, "port %u is not allowed for the %s phase (allowed: 80, 443 and its allowed_ports)", port,
                    pr_phase_name (phase));
      return;
    }
  const char *how = c->forward ? (c->named ? "transparent, stand-in, one HTTP request checked"
                                            : "transparent, name from the first bytes, one HTTP request")
                    : c->named ? (c->fwd_head ? "transparent, stand-in, name checked" : "transparent, stand-in")
                               : "transparent, name from the first bytes";
  pr_conn_decide (c, true, "%s", how);
  pr_egress_budget_check (eg, c->kind);
  pr_conn_resolve (c, host, port, true);
}
