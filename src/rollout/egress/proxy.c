/* proxy.c - one egress connection from accept to close: read and parse the
 * request head, authenticate (verifier listener), apply the phase policy,
 * resolve (evdns), check every resolved address, connect, then relay bytes
 * both ways with bounded buffers; answer errors with a one-line reason and
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
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "../../core/util.h"
#include "egress-internal.h"
#include "hostcheck.h"

enum conn_state
{
  ST_HEAD,
  ST_RESOLVE,
  ST_CONNECT,
  ST_RELAY,
  ST_ERROR,
};

enum
{
  CLI = 0,
  UP = 1,
};

struct side
{
  struct bufferevent *bev; /* until the relay starts */
  int fd;                  /* from then on (-1 before) */
  struct event *ev;        /* edge-triggered read + write event on fd */
};

/* One relay direction: bytes read from side i, written to side 1 - i. */
struct relay_dir
{
  char *buf; /* bytes to write before those in the pipe: [off, len) */
  size_t cap, off, len;
  int pipe[2]; /* -1 until the direction switches to splice */
  size_t in_pipe;
  bool pipe_tried;
  bool eof;  /* read side reached EOF */
  bool shut; /* we shut down the other side's write half */
};

struct pr_conn
{
  struct pr_conn *prev, *next;
  struct pr_egress *eg;
  enum pr_conn_kind kind;
  const struct pr_peer *peer;
  enum conn_state state;
  enum pr_phase phase;
  uint64_t token_id; /* 0: none */
  struct side s[2];
  struct relay_dir d[2]; /* d[CLI]: client to upstream; d[UP]: upstream to client */
  struct event *kick;    /* pump again after a spent budget (bit i: direction i) */
  unsigned kick_dirs;
  struct evdns_getaddrinfo_request *dnsreq;
  struct event *head_deadline; /* absolute limit for the whole head */
  struct sockaddr_storage addrs[PR_EGRESS_MAX_ADDRS];
  socklen_t addr_lens[PR_EGRESS_MAX_ADDRS];
  size_t n_addrs, next_addr;
  int last_connect_errno;
  bool timed_out;
  char method[32];
  char host[PR_REQHEAD_MAX_HOST + 1];
  uint16_t port;
  bool forward;   /* absolute-form request (vs CONNECT tunnel / peer splice) */
  char *fwd_head; /* rewritten head for a forward request */
  size_t fwd_len;
  struct pr_body_tracker body;
  uint64_t bytes_up, bytes_down;
  bool decided, allow;
  char reason[256];
};

static void conn_free (struct pr_conn *c);
static void error_event_cb (struct bufferevent *bev, short what, void *arg);
static void connect_next (struct pr_conn *c);

static const char *
phase_name (struct pr_conn *c)
{
  return pr_phase_name (c->phase);
}

static void
decide (struct pr_conn *c, bool allow, const char *fmt, ...)
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
  conn_free (arg);
}

/* Answers the client with status and the one-line reason c->reason (set by
 * decide()), then closes once the reply is flushed. */
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
  if (c->kind == PR_CONN_PEER)
    {
      conn_free (c);
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
                       "proctor: %s\n",
                       status, status_text (status), strlen (c->reason) + strlen ("proctor: \n"),
                       status == 407 ? "Proxy-Authenticate: Basic realm=\"proctor\"\r\n" : "", c->reason);
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

static void
conn_free (struct pr_conn *c)
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
      pr_declog_write (eg->log_fd, &d);
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
        bufferevent_free (c->s[i].bev);
      if (c->s[i].ev)
        event_free (c->s[i].ev);
      if (c->s[i].fd >= 0)
        close (c->s[i].fd);
      if (c->d[i].pipe[0] >= 0)
        {
          close (c->d[i].pipe[0]);
          close (c->d[i].pipe[1]);
          eg->pipes_free++;
        }
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
  free (c);
  eg->n_conns--;
  pr_egress_conn_closed (eg);
}

/* The oldest connection still waiting for its request head (nothing
 * decided yet, nothing to log), or NULL. */
static struct pr_conn *
oldest_idle (struct pr_egress *eg)
{
  struct pr_conn *victim = NULL;
  for (struct pr_conn *c = eg->conns; c; c = c->next)
    if (c->head_deadline && evtimer_pending (c->head_deadline, NULL))
      victim = c; /* the list is newest first: the last match is the oldest */
  return victim;
}

bool
pr_proxy_has_idle (struct pr_egress *eg)
{
  return oldest_idle (eg) != NULL;
}

bool
pr_proxy_evict_idle (struct pr_egress *eg)
{
  struct pr_conn *victim = oldest_idle (eg);
  if (victim == NULL)
    return false;
  conn_free (victim);
  return true;
}

void
pr_proxy_free_all (struct pr_egress *eg)
{
  while (eg->conns)
    conn_free (eg->conns);
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
          conn_free (c);
        }
    }
}

void
pr_conn_set_target (struct pr_conn *c, const char *method, const char *host, uint16_t port)
{
  snprintf (c->method, sizeof c->method, "%s", method);
  snprintf (c->host, sizeof c->host, "%s", host);
  c->port = port;
}

/* ---- relay ----
 *
 * Once the upstream is connected the bufferevents are gone: each socket
 * gets one edge-triggered event for reading and writing, added once, and
 * bytes move with recv/send through a small buffer or, for bulk transfers,
 * with splice(2) through a pipe, so a body never crosses into user space
 * and the loop makes no epoll_ctl call per burst.  Edge triggering is safe
 * because pump() only stops when every operation it could make would block
 * (EAGAIN on the read of an empty socket, or on the write to a full one),
 * and each of those is followed by an edge when the socket changes.
 * The first PR_EGRESS_RELAY_BUF bytes of a direction go through user space
 * (a short response never pays for a pipe and its 2 fds); a read that
 * fills the buffer switches the direction to a pipe for the rest.  The
 * request body of a forward request always goes through user space: the
 * body tracker has to see it. */

static void relay_kick_cb (evutil_socket_t fd, short what, void *arg);

static int
side_fd (struct pr_conn *c, int i)
{
  return c->s[i].fd;
}

static void
dir_append (struct relay_dir *d, const void *p, size_t n)
{
  if (d->len + n > d->cap)
    {
      size_t cap = d->len + n > PR_EGRESS_RELAY_BUF ? d->len + n : PR_EGRESS_RELAY_BUF;
      d->buf = xrealloc (d->buf, cap);
      d->cap = cap;
    }
  memcpy (d->buf + d->len, p, n);
  d->len += n;
}

/* Keeps what the body tracker accepts of the len bytes at d->buf + d->len
 * (just read from the client); drops anything after the end of the request
 * body.  False when the body is malformed (c is freed). */
static bool
dir_take_body (struct pr_conn *c, struct relay_dir *d, size_t len)
{
  if (c->body.done)
    return true;
  ssize_t n = pr_body_feed (&c->body, d->buf + d->len, len);
  if (n < 0)
    {
      decide (c, true, "malformed chunked request body");
      conn_free (c);
      return false;
    }
  d->len += n;
  c->bytes_up += n;
  return true;
}

static void
dir_open_pipe (struct pr_egress *eg, struct relay_dir *d)
{
  int p[2];

  d->pipe_tried = true;
  /* Out of fds or of the pipe budget: this direction stays in user
   * space (slower, same bytes). */
  if (eg->pipes_free == 0 || pipe2 (p, O_NONBLOCK | O_CLOEXEC) < 0)
    return;
  eg->pipes_free--;
  /* A 64 KiB default pipe holds 16 socket fragments, often far less than
   * 64 KiB.  A failure (over /proc/sys/fs/pipe-max-size or the user's
   * pipe quota) leaves the default: slower, still correct. */
  fcntl (p[1], F_SETPIPE_SZ, PR_EGRESS_RELAY_HIGH);
  d->pipe[0] = p[0];
  d->pipe[1] = p[1];
}

static bool
relay_io_failed (void)
{
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

/* Both directions over (a tunnel), or the response over (a forward
 * request, whose client gets nothing more): frees c and returns true. */
static bool
relay_maybe_finish (struct pr_conn *c)
{
  struct relay_dir *up = &c->d[CLI], *down = &c->d[UP];
  bool down_done = down->eof && down->len == 0 && down->in_pipe == 0;
  bool up_done = up->eof && up->len == 0 && up->in_pipe == 0;

  if (down_done && (c->forward || up_done))
    {
      conn_free (c);
      return true;
    }
  return false;
}

/* Moves bytes from side i to side 1 - i until that would block both ways
 * (or the call's budget is spent: then c->kick runs it again after the
 * loop has looked at other connections); on EOF from side i, once
 * everything read is written, shuts the other side's write half so its
 * peer sees EOF too (half-close).  False when c was freed (error,
 * malformed body, or the relay is over). */
static bool
pump (struct pr_conn *c, int i, bool try_read)
{
  struct relay_dir *d = &c->d[i];
  int from = side_fd (c, i), to = side_fd (c, 1 - i);
  bool tracked = i == CLI && c->forward;
  uint64_t *count = i == CLI ? &c->bytes_up : &c->bytes_down;
  bool rblocked = !try_read, wblocked = false;
  size_t budget = PR_EGRESS_RELAY_BUDGET;

  for (;;)
    {
      bool progress = false;
      ssize_t n;

      /* Older bytes first: the buffer, then the pipe. */
      if (!wblocked && d->len > d->off)
        {
          n = send (to, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (n < 0 && relay_io_failed ())
            goto fail;
          wblocked = n < 0;
          if (n > 0)
            {
              progress = true;
              d->off += n;
              if (d->off == d->len)
                d->off = d->len = 0;
            }
        }
      else if (!wblocked && d->in_pipe > 0)
        {
          n = splice (d->pipe[0], NULL, to, NULL, d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n < 0 && relay_io_failed ())
            goto fail;
          wblocked = n < 0;
          if (n > 0)
            {
              progress = true;
              d->in_pipe -= n;
            }
        }

      if (!rblocked && !d->eof && budget > 0)
        {
          n = -2; /* no room: nothing tried */
          bool ambiguous = false;
          if (d->pipe[0] >= 0)
            {
              size_t queued = d->in_pipe + (d->len - d->off);
              if (queued < PR_EGRESS_RELAY_HIGH)
                {
                  /* EAGAIN also means "pipe slots full" while the pipe
                   * holds data; only an empty pipe makes it certain. */
                  ambiguous = d->in_pipe > 0;
                  n = splice (from, NULL, d->pipe[1], NULL, PR_EGRESS_RELAY_HIGH - queued,
                              SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                  if (n > 0)
                    {
                      d->in_pipe += n;
                      *count += n;
                    }
                }
            }
          else if (d->len < PR_EGRESS_RELAY_BUF)
            {
              if (d->buf == NULL)
                {
                  d->buf = xmalloc (PR_EGRESS_RELAY_BUF);
                  d->cap = PR_EGRESS_RELAY_BUF;
                }
              size_t room = d->cap - d->len;
              n = recv (from, d->buf + d->len, room, MSG_DONTWAIT);
              if (n > 0)
                {
                  if (tracked)
                    {
                      if (!dir_take_body (c, d, n))
                        return false;
                    }
                  else
                    {
                      d->len += n;
                      *count += n;
                      if ((size_t) n == room && !d->pipe_tried)
                        dir_open_pipe (c->eg, d);
                    }
                }
            }
          if (n == -1 && relay_io_failed ())
            goto fail;
          if (n == -1 && !ambiguous)
            rblocked = true;
          if (n == 0)
            d->eof = true;
          if (n >= 0)
            {
              progress = true;
              budget = (size_t) n < budget ? budget - n : 0;
            }
        }
      if (!progress)
        break;
    }
  if (budget == 0 && !d->eof)
    {
      /* Another turn once the loop has served everyone else (a timer
       * runs after the next epoll_wait; event_active would run first). */
      static const struct timeval now = { 0, 0 };
      if (c->kick == NULL)
        c->kick = evtimer_new (c->eg->base, relay_kick_cb, c);
      if (c->kick == NULL || evtimer_add (c->kick, &now) < 0)
        goto fail;
      c->kick_dirs |= 1u << i;
    }
  if (d->eof && d->len == 0 && d->in_pipe == 0 && !d->shut)
    {
      shutdown (to, SHUT_WR);
      d->shut = true;
    }
  return !relay_maybe_finish (c);

fail:
  conn_free (c);
  return false;
}

static void
relay_kick_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_conn *c = arg;
  unsigned dirs = c->kick_dirs;

  c->kick_dirs = 0;
  if ((dirs & (1u << CLI)) && !pump (c, CLI, true))
    return;
  if (dirs & (1u << UP))
    pump (c, UP, true);
}

static void
relay_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_conn *c = arg;
  int i = fd == side_fd (c, CLI) ? CLI : UP;

  /* Readable: data from side i; writable: room for data towards it,
   * which matters only when some is waiting (reading the other side is
   * driven by its own read edges).  Errors and hangups come as both. */
  if ((what & EV_READ) && !pump (c, i, true))
    return;
  if ((what & EV_WRITE) && (c->d[1 - i].len > c->d[1 - i].off || c->d[1 - i].in_pipe > 0))
    pump (c, 1 - i, true);
}

/* Takes the socket out of a bufferevent without closing it. */
static int
bev_take_fd (struct bufferevent **bevp)
{
  int fd = bufferevent_getfd (*bevp);
  bufferevent_setfd (*bevp, -1);
  bufferevent_free (*bevp);
  *bevp = NULL;
  return fd;
}

/* Starts relaying.  prefix[i] (len[i] bytes, may be 0) goes to side 1 - i
 * before anything read from side i: the rewritten head upstream, the
 * CONNECT answer to the client. */
static void
start_relay (struct pr_conn *c, const char *up_prefix, size_t up_len, const char *down_prefix, size_t down_len)
{
  struct evbuffer *early = bufferevent_get_input (c->s[CLI].bev);
  size_t n_early = evbuffer_get_length (early);

  c->state = ST_RELAY;
  if (up_len)
    dir_append (&c->d[CLI], up_prefix, up_len);
  if (down_len)
    dir_append (&c->d[UP], down_prefix, down_len);
  /* Bytes the client sent after the head (early tunnel data, the start of
   * a request body) are already buffered. */
  if (n_early > 0)
    {
      struct relay_dir *d = &c->d[CLI];
      size_t before = d->len;
      dir_append (d, evbuffer_pullup (early, n_early), n_early);
      if (c->forward)
        {
          d->len = before;
          if (!dir_take_body (c, d, n_early))
            return;
        }
      else
        c->bytes_up += n_early;
    }
  for (int i = 0; i < 2; i++)
    {
      c->s[i].fd = bev_take_fd (&c->s[i].bev);
      c->s[i].ev = event_new (c->eg->base, c->s[i].fd, EV_READ | EV_WRITE | EV_ET | EV_PERSIST, relay_cb, c);
      if (c->s[i].ev == NULL || event_add (c->s[i].ev, NULL) < 0)
        {
          conn_free (c);
          return;
        }
    }
  /* Only the prefixes are written now: whatever is already readable is
   * reported by the events' first edge. */
  if (pump (c, CLI, false))
    pump (c, UP, false);
}

/* ---- connect ---- */

static void
up_connect_event (struct bufferevent *bev, short what, void *arg)
{
  struct pr_conn *c = arg;

  if (what & BEV_EVENT_CONNECTED)
    {
      static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      bool tunnel = c->kind != PR_CONN_PEER && !c->forward;
      if (c->forward)
        c->bytes_up += c->fwd_len;
      start_relay (c, c->forward ? c->fwd_head : NULL, c->forward ? c->fwd_len : 0, tunnel ? established : NULL,
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
      decide (c, true, "connect to %s port %u timed out", c->host, c->port);
      reply_error (c, 504);
      return;
    }
  decide (c, true, "cannot connect to %s port %u: %s", c->host, c->port,
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
      decide (c, false, "cannot resolve %s: %s", c->host, evutil_gai_strerror (result));
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
          enum pr_addr_class cls = pr_hostcheck_cached (&c->eg->own, ai->ai_addr);
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
        deny (c, 403, "%s resolves to %s, a %s address; only public addresses are reachable", c->host, refused,
              pr_addr_class_name (refused_class));
      else
        {
          decide (c, true, "%s has no usable address", c->host);
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
  hints.ai_flags = EVUTIL_AI_ADDRCONFIG;
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
  if (!policy_allows (c, &rh))
    return;
  decide (c, true, rh.is_connect ? "tunnel" : "forward");
  c->forward = !rh.is_connect;
  if (c->forward)
    {
      c->fwd_head = pr_reqhead_rewrite (&rh, &c->fwd_len);
      pr_body_init (&c->body, &rh);
    }
  /* rh points into the input buffer: done with it only now. */
  evbuffer_drain (in, end);
  /* Leave what follows in the kernel until the upstream is connected. */
  bufferevent_disable (bev, EV_READ);
  bufferevent_set_timeouts (bev, NULL, NULL);
  bufferevent_setcb (bev, NULL, NULL, error_event_cb, c);
  pr_conn_resolve (c, c->host, c->port, true);
}

static void
head_deadline_cb (evutil_socket_t fd, short what, void *arg)
{
  conn_free (arg);
}

static void
head_event_cb (struct bufferevent *bev, short what, void *arg)
{
  /* EOF, error or the head timeout before a complete head: nothing was
   * decided, nothing is logged. */
  conn_free (arg);
}

void
pr_proxy_accept (struct pr_egress *eg, evutil_socket_t fd, enum pr_conn_kind kind, const struct pr_peer *peer)
{
  struct timeval tv = { PR_EGRESS_HEAD_TIMEOUT_S, 0 };
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
      return;
    }
  c->next = eg->conns;
  if (eg->conns)
    eg->conns->prev = c;
  eg->conns = c;
  eg->n_conns++;

  if (kind == PR_CONN_PEER)
    {
      bufferevent_setcb (c->s[CLI].bev, NULL, NULL, error_event_cb, c);
      decide (c, true, "peer %s:%u", peer->name, peer->port);
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
      conn_free (c);
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
