/* relay.c - the byte relay phase of an egress connection, from the
 * connected upstream to close: user-space and splice(2) relay per
 * direction, edge-triggered socket events, the per-turn read budget,
 * half-close, and the end of the relay.  The states before it (head,
 * policy, resolve, connect) are proxy.c's.
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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "egress-internal.h"
#include "../../base/util.h"

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
      pr_conn_decide (c, true, "malformed chunked request body");
      pr_conn_free (c);
      return false;
    }
  d->len += n;
  c->bytes_up += n;
  return true;
}

static void
dir_open_pipe (struct pr_conn *c, struct relay_dir *d)
{
  struct pr_budget *b = &c->eg->budget[c->kind];
  int p[2];

  d->pipe_tried = true;
  /* Out of fds or of the pipe budget: this direction stays in user
   * space (slower, same bytes). */
  if (b->pipes_free == 0 || pipe2 (p, O_NONBLOCK | O_CLOEXEC) < 0)
    return;
  b->pipes_free--;
  /* A 64 KiB default pipe holds 16 socket fragments, often far less than
   * 64 KiB.  A failure (over /proc/sys/fs/pipe-max-size or the user's
   * pipe quota) leaves the default: slower, still correct. */
  fcntl (p[1], F_SETPIPE_SZ, PR_EGRESS_RELAY_HIGH);
  d->pipe[0] = p[0];
  d->pipe[1] = p[1];
  d->high = PR_EGRESS_RELAY_HIGH;
}

/* Called when the writer took at least half the bound in one splice and
 * emptied the pipe: its reader keeps up, so the bound doubles (up to
 * PR_EGRESS_RELAY_HIGH_MAX) and each splice moves more.  At 128 KiB a
 * loopback download needs ~16 splice pairs per MiB, and those syscalls,
 * not the bytes, were the relay's cost.  A reader that falls behind only
 * ever takes part of the pipe, so it stays at PR_EGRESS_RELAY_HIGH; one
 * that reads fast and then stops keeps a grown pipe full, which is why at
 * most PR_EGRESS_RELAY_GROWN directions grow at once.  A failed resize
 * (pipe-max-size, the user's pipe quota) keeps the bound. */
static void
dir_grow_pipe (struct pr_egress *eg, struct relay_dir *d)
{
  bool grown = pr_relay_dir_grown (d);
  if (d->high >= PR_EGRESS_RELAY_HIGH_MAX || (!grown && eg->grown_free == 0))
    return;
  int size = fcntl (d->pipe[1], F_SETPIPE_SZ, d->high * 2);
  if (size <= 0 || (size_t) size <= d->high)
    return;
  if (!grown)
    eg->grown_free--;
  d->high = (size_t) size < PR_EGRESS_RELAY_HIGH_MAX ? (size_t) size : PR_EGRESS_RELAY_HIGH_MAX;
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
      pr_conn_free (c);
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
/* pump's write half: the buffer's older bytes first, then the pipe's, to
 * fd to.  Returns 1 when bytes moved, 0 when none did (*wblocked set when
 * to would block), -1 on a hard I/O error (errno set). */
static int
dir_write (struct pr_conn *c, struct relay_dir *d, int to, bool *wblocked)
{
  ssize_t n;
  if (d->len > d->off)
    {
      n = send (to, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && relay_io_failed ())
        return -1;
      *wblocked = n < 0;
      if (n <= 0)
        return 0;
      d->off += n;
      if (d->off == d->len)
        d->off = d->len = 0;
      return 1;
    }
  if (d->in_pipe == 0)
    return 0;
  size_t before = d->in_pipe;
  n = splice (d->pipe[0], NULL, to, NULL, d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  if (n < 0 && relay_io_failed ())
    return -1;
  *wblocked = n < 0;
  if (n <= 0)
    return 0;
  d->in_pipe -= n;
  if (d->in_pipe == 0 && before >= d->high / 2)
    dir_grow_pipe (c->eg, d);
  return 1;
}

/* pump's read half: from fd from into the pipe (zero copy) or, before the
 * relay has one, the buffer (where a forward request's body is tracked).
 * Spends *budget; sets *rblocked when from would block and d->eof at EOF.
 * Returns 1 when bytes moved or EOF came, 0 when nothing did, -1 on a hard
 * I/O error (errno set), -2 when c was freed (a malformed body). */
static int
dir_read (struct pr_conn *c, struct relay_dir *d, int i, int from, bool *rblocked, size_t *budget)
{
  uint64_t *count = i == CLI ? &c->bytes_up : &c->bytes_down;
  ssize_t n = -2; /* no room: nothing tried */
  bool ambiguous = false;
  if (d->pipe[0] >= 0)
    {
      size_t queued = d->in_pipe + (d->len - d->off);
      if (queued < d->high)
        {
          /* EAGAIN also means "pipe slots full" while the pipe holds
           * data; only an empty pipe makes it certain. */
          ambiguous = d->in_pipe > 0;
          n = splice (from, NULL, d->pipe[1], NULL, d->high - queued, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
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
      if (n > 0 && i == CLI && c->forward)
        {
          if (!dir_take_body (c, d, n))
            return -2;
        }
      else if (n > 0)
        {
          d->len += n;
          *count += n;
          if ((size_t) n == room && !d->pipe_tried)
            dir_open_pipe (c, d);
        }
    }
  if (n == -1 && relay_io_failed ())
    return -1;
  if (n == -1 && !ambiguous)
    *rblocked = true;
  if (n == 0)
    d->eof = true;
  if (n < 0)
    return 0;
  *budget = (size_t) n < *budget ? *budget - n : 0;
  return 1;
}

static bool
pump (struct pr_conn *c, int i, bool try_read)
{
  struct relay_dir *d = &c->d[i];
  int from = side_fd (c, i), to = side_fd (c, 1 - i);
  bool rblocked = !try_read, wblocked = false;
  size_t budget = PR_EGRESS_RELAY_BUDGET;

  for (;;)
    {
      int w = wblocked ? 0 : dir_write (c, d, to, &wblocked);
      if (w < 0)
        goto fail;
      int r = 0;
      if (!rblocked && !d->eof && budget > 0)
        r = dir_read (c, d, i, from, &rblocked, &budget);
      if (r == -2)
        return false;
      if (r < 0)
        goto fail;
      if (w == 0 && r == 0)
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
  pr_conn_free (c);
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
void
pr_relay_start (struct pr_conn *c, const char *up_prefix, size_t up_len, const char *down_prefix, size_t down_len)
{
  struct evbuffer *early = bufferevent_get_input (c->s[CLI].bev);
  struct evbuffer *unsent = bufferevent_get_output (c->s[CLI].bev);
  size_t n_early = evbuffer_get_length (early), n_unsent = evbuffer_get_length (unsent);

  c->state = ST_RELAY;
  if (up_len)
    dir_append (&c->d[CLI], up_prefix, up_len);
  /* A reply the client bufferevent has not written yet (the CONNECT answer
   * before a ClientHello that came with the request) goes first. */
  if (n_unsent)
    dir_append (&c->d[UP], evbuffer_pullup (unsent, n_unsent), n_unsent);
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
          pr_conn_free (c);
          return;
        }
    }
  /* Only the prefixes are written now: whatever is already readable is
   * reported by the events' first edge. */
  if (pump (c, CLI, false))
    pump (c, UP, false);
}
