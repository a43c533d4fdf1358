/* proxy.c - one egress connection from accept to close: read and parse the
 * request head, authenticate (verifier listener), apply the phase policy,
 * resolve (evdns), check every resolved address, connect, then hand the
 * sockets to the relay (relay.c); answer errors with a one-line reason and
 * record one decision log line per connection.
 *
 * States: HEAD (reading the head, with a timeout) -> RESOLVE -> CONNECT ->
 * RELAY, or -> ERROR (flushing an error reply) from any of them.  Forward
 * requests are sent upstream with "Connection: close" and the client
 * connection ends with the response (RFC 9112 section 9.6), so a connection
 * carries exactly one checked request; the request body is framed
 * (pr_body_feed) and anything after it is discarded, never forwarded. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "egress-internal.h"
#include "hostcheck.h"
#include "tlshello.h"
#include "../../base/util.h"

static void error_event_cb (struct bufferevent *bev, short what, void *arg);
static void connect_next (struct pr_conn *c);

static const char *
phase_name (struct pr_conn *c)
{
  return pr_phase_name (c->phase);
}

void
pr_conn_decide (struct pr_conn *c, bool allow, const char *fmt, ...)
{
  va_list ap;

  c->decided = true;
  c->allow = allow;
  va_start (ap, fmt);
  vsnprintf (c->reason, sizeof c->reason, fmt, ap);
  va_end (ap);
}

static const char *
status_text (int status)
{
  switch (status)
    {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 407: return "Proxy Authentication Required";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    }
  return "Error";
}

static void
linger_read_cb (struct bufferevent *bev, void *arg)
{
  struct evbuffer *in = bufferevent_get_input (bev);
  evbuffer_drain (in, evbuffer_get_length (in));
}

/* The reply is flushed: half-close and discard what the client still
 * sends for a moment, since closing with unread input makes the kernel send
 * a reset that can destroy the reply before the client reads it. */
static void
error_write_cb (struct bufferevent *bev, void *arg)
{
  struct timeval tv = { 2, 0 };

  shutdown (bufferevent_getfd (bev), SHUT_WR);
  bufferevent_setwatermark (bev, EV_READ, 0, 0);
  bufferevent_set_timeouts (bev, &tv, NULL);
  bufferevent_setcb (bev, linger_read_cb, NULL, error_event_cb, arg);
  bufferevent_disable (bev, EV_WRITE);
  bufferevent_enable (bev, EV_READ);
}

static void
error_event_cb (struct bufferevent *bev, short what, void *arg)
{
  pr_conn_free (arg);
}

/* Answers the client with status and the one-line reason c->reason (set by
 * pr_conn_decide()), then closes once the reply is flushed.  Nothing the
 * agent can make the proxy say names the product (SPEC section 2,
 * "Nothing names the harness inside"): the body is the reason alone and
 * the 407 realm is "proxy". */
static void
reply_error (struct pr_conn *c, int status)
{
  struct bufferevent *cli = c->s[CLI].bev;
  struct timeval tv = { PR_EGRESS_ERROR_TIMEOUT_S, 0 };

  if (c->s[UP].bev)
    {
      bufferevent_free (c->s[UP].bev);
      c->s[UP].bev = NULL;
    }
  c->state = ST_ERROR;
  /* A peer or transparent connection has no HTTP client: closing answers. */
  if (c->kind == PR_CONN_PEER || c->transparent)
    {
      pr_conn_free (c);
      return;
    }
  bufferevent_disable (cli, EV_READ);
  evbuffer_add_printf (bufferevent_get_output (cli),
                       "HTTP/1.1 %d %s\r\n"
                       "Content-Type: text/plain\r\n"
                       "Content-Length: %zu\r\n"
                       "Connection: close\r\n"
                       "%s"
                       "\r\n"
                       "%s\n",
                       status, status_text (status), strlen (c->reason) + 1,
                       status == 407 ? "Proxy-Authenticate: Basic realm=\"proxy\"\r\n" : "", c->reason);
  bufferevent_setwatermark (cli, EV_WRITE, 0, 0);
  bufferevent_set_timeouts (cli, NULL, &tv);
  bufferevent_setcb (cli, NULL, error_write_cb, error_event_cb, c);
  bufferevent_enable (cli, EV_WRITE);
}

static void
deny (struct pr_conn *c, int status, const char *fmt, ...)
{
  va_list ap;

  c->decided = true;
  c->allow = false;
  va_start (ap, fmt);
  vsnprintf (c->reason, sizeof c->reason, fmt, ap);
  va_end (ap);
  reply_error (c, status);
}

void
pr_conn_deny (struct pr_conn *c, const char *fmt, ...)
{
  va_list ap;

  c->decided = true;
  c->allow = false;
  va_start (ap, fmt);
  vsnprintf (c->reason, sizeof c->reason, fmt, ap);
  va_end (ap);
  reply_error (c, 403);
}

void
pr_conn_free (struct pr_conn *c)
{
  struct pr_egress *eg = c->eg;

  if (c->decided)
    {
      struct pr_decision d = {
        .phase = c->kind == PR_CONN_PEER ? "peer" : phase_name (c),
        .method = c->method,
        .host = c->host,
        .port = c->port,
        .allow = c->allow,
        .reason = c->reason,
        .bytes_up = c->bytes_up,
        .bytes_down = c->bytes_down,
      };
      pr_declog_record (&eg->log, &d);
    }
  if (c->dnsreq)
    {
      struct evdns_getaddrinfo_request *r = c->dnsreq;
      c->dnsreq = NULL;
      /* Runs the callback with EVUTIL_EAI_CANCEL, which ignores c. */
      evdns_getaddrinfo_cancel (r);
    }
  for (int i = 0; i < 2; i++)
    {
      if (c->s[i].bev)
        {
          /* The socket is closed now, not by bufferevent_free: that one
           * closes it in a finalizer at the end of the loop's turn, and a
           * turn that accepts a burst of connections at the budget (each
           * evicting the oldest idle one, egress.c admit) would hold
           * every evicted fd until then and run into EMFILE (s/egress.bats
           * "10,000 idle connections ...", failing now and then). */
          evutil_socket_t fd = bufferevent_getfd (c->s[i].bev);
          if (fd >= 0)
            {
              bufferevent_setfd (c->s[i].bev, -1);
              evutil_closesocket (fd);
            }
          bufferevent_free (c->s[i].bev);
        }
      if (c->s[i].ev)
        event_free (c->s[i].ev);
      if (c->s[i].fd >= 0)
        close (c->s[i].fd);
      if (c->d[i].pipe[0] >= 0)
        {
          close (c->d[i].pipe[0]);
          close (c->d[i].pipe[1]);
          eg->budget[c->kind].pipes_free++;
        }
      if (pr_relay_dir_grown (&c->d[i]))
        eg->grown_free++;
      free (c->d[i].buf);
    }
  if (c->head_deadline)
    event_free (c->head_deadline);
  if (c->kick)
    event_free (c->kick);
  free (c->fwd_head);
  if (c->prev)
    c->prev->next = c->next;
  else
    eg->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  enum pr_conn_kind kind = c->kind;
  free (c);
  eg->budget[kind].n--;
  pr_egress_conn_closed (eg, kind);
}

void
pr_conn_set_target (struct pr_conn *c, const char *method, const char *host, uint16_t port)
{
  snprintf (c->method, sizeof c->method, "%s", method);
  snprintf (c->host, sizeof c->host, "%s", host);
  c->port = port;
}

/* ---- connect ---- */

/* ---- the ClientHello of a CONNECT to 443 ---- */

static void
hello_fail (struct pr_conn *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* The tunnel is established from the client's view: a refusal now can
 * only close it.  Nothing reached the upstream but its TCP handshake. */
static void
hello_fail (struct pr_conn *c, const char *fmt, ...)
{
  va_list ap;

  c->decided = true;
  c->allow = false;
  va_start (ap, fmt);
  vsnprintf (c->reason, sizeof c->reason, fmt, ap);
  va_end (ap);
  pr_conn_free (c);
}

static void
hello_read_cb (struct bufferevent *bev, void *arg)
{
  struct pr_conn *c = arg;
  struct evbuffer *in = bufferevent_get_input (bev);
  size_t len = evbuffer_get_length (in);
  const uint8_t *buf = evbuffer_pullup (in, len);
  struct pr_tlshello h;
  const char *why = NULL;

  int r = pr_tlshello_parse (buf, len, &h, &why);
  if (r == PR_TLSHELLO_MORE)
    return;
  event_del (c->head_deadline);
  if (r != PR_TLSHELLO_OK)
    {
      hello_fail (c, "CONNECT %s:%u: %s", c->host, c->port, why);
      return;
    }
  if (h.encrypted)
    {
      hello_fail (c, "CONNECT %s:%u: the ClientHello hides its server name (encrypted ClientHello)", c->host, c->port);
      return;
    }
  bool literal = strchr (c->host, ':') != NULL || pr_reqhead_is_ipv4 (c->host);
  if (literal && h.has_sni)
    {
      hello_fail (c, "CONNECT %s:%u: the ClientHello names %s, not the address the CONNECT named", c->host, c->port,
                  h.sni);
      return;
    }
  if (!literal && (!h.has_sni || strcmp (h.sni, c->host) != 0))
    {
      hello_fail (c, "CONNECT %s:%u: the ClientHello names %s, not the CONNECT host", c->host, c->port,
                  h.has_sni ? h.sni : "no server (no SNI)");
      return;
    }
  /* The hello stays in the input buffer: the relay sends it first. */
  pr_relay_start (c, NULL, 0, NULL, 0);
}

static void
hello_event_cb (struct bufferevent *bev, short what, void *arg)
{
  struct pr_conn *c = arg;
  hello_fail (c, "CONNECT %s:%u: the client sent no TLS ClientHello", c->host, c->port);
}

static void
hello_deadline_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_conn *c = arg;
  hello_fail (c, "CONNECT %s:%u: no TLS ClientHello within %d s", c->host, c->port, PR_EGRESS_HELLO_TIMEOUT_S);
}

/* The upstream is connected: answer the CONNECT, then wait for the
 * ClientHello (it may already be buffered, sent with the request). */
static void
hello_wait (struct pr_conn *c)
{
  static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
  struct bufferevent *cli = c->s[CLI].bev;
  struct timeval tv = { PR_EGRESS_HELLO_TIMEOUT_S, 0 };

  c->state = ST_HELLO;
  evbuffer_add (bufferevent_get_output (cli), established, sizeof established - 1);
  event_free (c->head_deadline);
  c->head_deadline = evtimer_new (c->eg->base, hello_deadline_cb, c);
  if (c->head_deadline == NULL || evtimer_add (c->head_deadline, &tv) < 0)
    {
      hello_fail (c, "CONNECT %s:%u: cannot arm the ClientHello timer", c->host, c->port);
      return;
    }
  bufferevent_setwatermark (cli, EV_READ, 0, PR_TLSHELLO_MAX_INPUT);
  bufferevent_setcb (cli, hello_read_cb, NULL, hello_event_cb, c);
  bufferevent_enable (cli, EV_READ | EV_WRITE);
  if (evbuffer_get_length (bufferevent_get_input (cli)) > 0)
    hello_read_cb (cli, c);
}

static void
up_connect_event (struct bufferevent *bev, short what, void *arg)
{
  struct pr_conn *c = arg;

  if ((what & BEV_EVENT_CONNECTED) && c->tls_check)
    {
      hello_wait (c);
      return;
    }
  if (what & BEV_EVENT_CONNECTED)
    {
      static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      bool tunnel = c->kind != PR_CONN_PEER && !c->forward && !c->transparent;
      bool prefix = c->forward || c->transparent;
      if (prefix)
        c->bytes_up += c->fwd_len;
      pr_relay_start (c, prefix ? c->fwd_head : NULL, prefix ? c->fwd_len : 0, tunnel ? established : NULL,
                   tunnel ? sizeof established - 1 : 0);
      return;
    }
  c->last_connect_errno = EVUTIL_SOCKET_ERROR ();
  if (what & BEV_EVENT_TIMEOUT)
    c->timed_out = true;
  bufferevent_free (bev);
  c->s[UP].bev = NULL;
  connect_next (c);
}

static void
connect_next (struct pr_conn *c)
{
  struct timeval tv = { PR_EGRESS_CONNECT_TIMEOUT_S, 0 };

  c->state = ST_CONNECT;
  while (c->next_addr < c->n_addrs)
    {
      size_t k = c->next_addr++;
      struct bufferevent *b
          = bufferevent_socket_new (c->eg->base, -1, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
      if (b == NULL)
        break;
      bufferevent_setcb (b, NULL, NULL, up_connect_event, c);
      bufferevent_set_timeouts (b, NULL, &tv);
      if (bufferevent_socket_connect (b, (struct sockaddr *) &c->addrs[k], c->addr_lens[k]) < 0)
        {
          c->last_connect_errno = errno;
          bufferevent_free (b);
          continue;
        }
      c->s[UP].bev = b;
      return;
    }
  if (c->timed_out)
    {
      pr_conn_decide (c, true, "connect to %s port %u timed out", c->host, c->port);
      reply_error (c, 504);
      return;
    }
  pr_conn_decide (c, true, "cannot connect to %s port %u: %s", c->host, c->port,
          c->last_connect_errno ? strerror (c->last_connect_errno) : "no address");
  reply_error (c, 502);
}

static void
format_addr (const struct sockaddr *sa, char *buf, size_t len)
{
  const void *a = sa->sa_family == AF_INET ? (const void *) &((const struct sockaddr_in *) sa)->sin_addr
                                           : (const void *) &((const struct sockaddr_in6 *) sa)->sin6_addr;
  if (evutil_inet_ntop (sa->sa_family, a, buf, len) == NULL)
    snprintf (buf, len, "?");
}

struct resolve_ctx
{
  struct pr_conn *c;
  bool check;
};

static void
resolved_cb (int result, struct evutil_addrinfo *res, void *arg)
{
  struct resolve_ctx *rc = arg;
  struct pr_conn *c = rc->c;
  bool check = rc->check;
  char refused[INET6_ADDRSTRLEN] = "";
  enum pr_addr_class refused_class = PR_ADDR_PUBLIC;

  free (rc);
  if (result == EVUTIL_EAI_CANCEL)
    {
      if (res)
        evutil_freeaddrinfo (res);
      return;
    }
  c->dnsreq = NULL;
  if (result != 0)
    {
      pr_conn_decide (c, false, "cannot resolve %s: %s", c->host, evutil_gai_strerror (result));
      reply_error (c, 502);
      return;
    }
  c->n_addrs = c->next_addr = 0;
  for (struct evutil_addrinfo *ai = res; ai && c->n_addrs < PR_EGRESS_MAX_ADDRS; ai = ai->ai_next)
    {
      if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof c->addrs[0])
        continue;
      if (check)
        {
          enum pr_addr_class cls = pr_hostcheck_cached (&c->eg->nets, c->eg->cfg->reachable, ai->ai_addr);
          if (cls != PR_ADDR_PUBLIC)
            {
              if (refused_class == PR_ADDR_PUBLIC)
                {
                  refused_class = cls;
                  format_addr (ai->ai_addr, refused, sizeof refused);
                }
              continue;
            }
        }
      memcpy (&c->addrs[c->n_addrs], ai->ai_addr, ai->ai_addrlen);
      c->addr_lens[c->n_addrs++] = ai->ai_addrlen;
    }
  evutil_freeaddrinfo (res);
  if (c->n_addrs == 0)
    {
      if (refused_class != PR_ADDR_PUBLIC)
        deny (c, 403, "%s resolves to %s, a %s address; only public addresses are reachable (an operator names others in PROCTOR_EGRESS_REACHABLE)", c->host, refused,
              pr_addr_class_name (refused_class));
      else
        {
          pr_conn_decide (c, true, "%s has no usable address", c->host);
          reply_error (c, 502);
        }
      return;
    }
  connect_next (c);
}

void
pr_conn_resolve (struct pr_conn *c, const char *host, uint16_t port, bool check_addrs)
{
  struct evutil_addrinfo hints = { 0 };
  char portstr[8];
  struct resolve_ctx *rc = xmalloc (sizeof *rc);

  rc->c = c;
  rc->check = check_addrs;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  /* No AI_ADDRCONFIG: libevent answers it with getifaddrs(3), a netlink
   * socket the sandbox does not allow; an address of a family the host
   * cannot reach just fails its connect and the next one is tried. */
  snprintf (portstr, sizeof portstr, "%u", port);
  c->state = ST_RESOLVE;
  /* The callback may run before this returns (literals, hosts file, cached
   * answers) and then already moved c on; dnsreq is set only when pending,
   * and c is not touched after the call in that case. */
  struct evdns_getaddrinfo_request *r = evdns_getaddrinfo (c->eg->dns, host, portstr, &hints, resolved_cb, rc);
  if (r != NULL)
    c->dnsreq = r;
}

/* ---- request head ---- */

static bool
policy_allows (struct pr_conn *c, const struct pr_reqhead *rh)
{
  const struct pr_policy *p = c->eg->cfg->policy;
  enum pr_net_mode mode = pr_policy_net_mode (p, c->phase);

  switch (mode)
    {
    case PR_NET_PUBLIC:
      return true;
    case PR_NET_ALLOWLIST:
      if (pr_policy_host_allowed (pr_policy_allowed_hosts (p, c->phase), rh->host))
        return true;
      deny (c, 403, "host %s is not in the %s allowlist", rh->host, phase_name (c));
      return false;
    case PR_NET_NONE:
    case PR_NET_UNSET:
    default:
      deny (c, 403, "network_mode of the %s phase is no-network", phase_name (c));
      return false;
    }
}

/* Ports: 80 and 443, or one the phase's allowed_ports adds.  A CONNECT
 * to port 80 carries a plain HTTP stream whose requests could name any
 * virtual host of that server: http:// goes as forward requests, whose
 * every head is checked. */
static bool
port_allowed (struct pr_conn *c, const struct pr_reqhead *rh)
{
  size_t n;
  const uint16_t *ports = pr_policy_allowed_ports (c->eg->cfg->policy, c->phase, &n);

  if (!pr_policy_port_allowed (ports, n, rh->port))
    {
      deny (c, 403, "port %u is not allowed for the %s phase (allowed: 80, 443 and its allowed_ports)", rh->port,
            phase_name (c));
      return false;
    }
  if (rh->is_connect && rh->port == 80)
    {
      deny (c, 403, "CONNECT to port 80 is refused: send http:// requests as forward requests");
      return false;
    }
  return true;
}

/* A forward request's Host field must name its target (RFC 9112 section
 * 3.2.2 lets a proxy replace it, but an origin behind a CDN or a virtual
 * host would answer for the Host, not for the checked target). */
static bool
host_matches_target (struct pr_conn *c, const struct pr_reqhead *rh)
{
  const char *why = NULL;
  int r = pr_reqhead_check_host (rh, &why);
  if (r == 0)
    return true;
  deny (c, r, "%s (%s port %u)", why, rh->host, rh->port);
  return false;
}

static bool
authenticate (struct pr_conn *c, const struct pr_reqhead *rh)
{
  char tok[PR_EGRESS_TOKEN_MAX + 2];
  int r = pr_reqhead_proxy_token (rh, tok, sizeof tok);

  if (r == 0)
    {
      c->phase = PR_PHASE_VERIFIER;
      deny (c, 407, "this listener needs the session token (http://TOKEN@127.0.0.1:3129)");
      return false;
    }
  const struct pr_token *t = r > 0 ? pr_egress_find_token (c->eg, tok) : NULL;
  if (t == NULL)
    {
      c->phase = PR_PHASE_VERIFIER;
      deny (c, 403, "%s proxy token", r < 0 ? "malformed" : "unknown or expired");
      return false;
    }
  c->phase = t->phase;
  c->token_id = t->id;
  return true;
}

static void
head_read_cb (struct bufferevent *bev, void *arg)
{
  struct pr_conn *c = arg;
  struct evbuffer *in = bufferevent_get_input (bev);
  size_t len = evbuffer_get_length (in);
  const char *buf = (const char *) evbuffer_pullup (in, len);
  struct pr_reqhead rh;
  const char *why = NULL;

  ssize_t end = pr_reqhead_find_end (buf, len, PR_REQHEAD_MAX_BYTES);
  if (end == 0)
    return;
  event_del (c->head_deadline);
  if (end < 0)
    {
      deny (c, 431, "request head larger than %d bytes", PR_REQHEAD_MAX_BYTES);
      return;
    }
  int status = pr_reqhead_parse (buf, end, &rh, &why);
  if (status != 0)
    {
      pr_conn_set_target (c, rh.method, rh.host, rh.port);
      deny (c, status, "%s", why);
      return;
    }
  pr_conn_set_target (c, rh.method, rh.host, rh.port);
  if (c->kind == PR_CONN_VERIFIER && !authenticate (c, &rh))
    return;
  if (!policy_allows (c, &rh) || !port_allowed (c, &rh) || (!rh.is_connect && !host_matches_target (c, &rh)))
    return;
  pr_conn_decide (c, true, rh.is_connect ? "tunnel" : "forward");
  c->forward = !rh.is_connect;
  c->tls_check = rh.is_connect && rh.port == 443;
  if (c->forward)
    {
      c->fwd_head = pr_reqhead_rewrite (&rh, &c->fwd_len);
      pr_body_init (&c->body, &rh);
    }
  /* rh points into the input buffer: done with it only now. */
  evbuffer_drain (in, end);
  /* No longer idle: a group full of busy connections stops accepting. */
  pr_egress_budget_check (c->eg, c->kind);
  /* Leave what follows in the kernel until the upstream is connected. */
  bufferevent_disable (bev, EV_READ);
  bufferevent_set_timeouts (bev, NULL, NULL);
  bufferevent_setcb (bev, NULL, NULL, error_event_cb, c);
  pr_conn_resolve (c, c->host, c->port, true);
}

static void
head_deadline_cb (evutil_socket_t fd, short what, void *arg)
{
  pr_conn_free (arg);
}

static void
head_event_cb (struct bufferevent *bev, short what, void *arg)
{
  /* EOF, error or the head timeout before a complete head: nothing was
   * decided, nothing is logged. */
  pr_conn_free (arg);
}

struct pr_conn *
pr_conn_new (struct pr_egress *eg, evutil_socket_t fd, enum pr_conn_kind kind, const struct pr_peer *peer)
{
  struct pr_conn *c = xmalloc0 (sizeof *c);

  c->eg = eg;
  c->kind = kind;
  for (int i = 0; i < 2; i++)
    c->s[i].fd = c->d[i].pipe[0] = c->d[i].pipe[1] = -1;
  c->peer = peer;
  c->phase = PR_PHASE_AGENT;
  c->s[CLI].bev = bufferevent_socket_new (eg->base, fd, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
  if (c->s[CLI].bev == NULL)
    {
      evutil_closesocket (fd);
      free (c);
      return NULL;
    }
  c->next = eg->conns;
  if (eg->conns)
    eg->conns->prev = c;
  eg->conns = c;
  eg->budget[kind].n++;
  return c;
}

void
pr_proxy_accept (struct pr_egress *eg, evutil_socket_t fd, enum pr_conn_kind kind, const struct pr_peer *peer)
{
  struct timeval tv = { PR_EGRESS_HEAD_TIMEOUT_S, 0 };
  struct pr_conn *c = pr_conn_new (eg, fd, kind, peer);

  if (c == NULL)
    return;

  if (kind == PR_CONN_PEER)
    {
      bufferevent_setcb (c->s[CLI].bev, NULL, NULL, error_event_cb, c);
      pr_conn_decide (c, true, "peer %s:%u", peer->name, peer->port);
      pr_peer_start (c);
      return;
    }
  /* Reading stops at the head limit (+1 so a head of exactly the limit
   * still ends inside the buffer), so the parser sees at most that much.
   * The bufferevent's read timeout only bounds idle gaps, so a client
   * trickling one field a second would never hit it: the whole head must
   * arrive before an absolute deadline. */
  bufferevent_setwatermark (c->s[CLI].bev, EV_READ, 0, PR_REQHEAD_MAX_BYTES + 1);
  c->head_deadline = evtimer_new (eg->base, head_deadline_cb, c);
  if (c->head_deadline == NULL || evtimer_add (c->head_deadline, &tv) < 0)
    {
      pr_conn_free (c);
      return;
    }
  bufferevent_setcb (c->s[CLI].bev, head_read_cb, NULL, head_event_cb, c);
  bufferevent_enable (c->s[CLI].bev, EV_READ);
}

const struct pr_peer *
pr_conn_peer (struct pr_conn *c)
{
  return c->peer;
}
