/* egress-internal.h - state shared by the egress helper's files (egress.c:
 * loop, listeners, tokens, control socket; proxy.c: per-connection state
 * machine up to connect; relay.c: byte relay; peers.c: peer splicing;
 * declog.c: decision log).
 * Not part of the public interface (egress.h). */
#ifndef PROCTOR_EGRESS_INTERNAL_H
#define PROCTOR_EGRESS_INTERNAL_H

#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress.h"
#include "hostcheck.h"
#include "reqhead.h"
#include "tlshello.h"

/* Limits (all per helper process, i.e. per container):
 *   PR_EGRESS_MAX_CONNS_AGENT / _PHASE / _PEER
 *                             live client connections (any state, tunnels
 *                             included) per listener group: the agent's
 *                             3128, the verifier and setup's 3129, all peer
 *                             listeners together.  Each group has its own
 *                             budget, so no agent flood can take, evict or
 *                             starve a verifier's slot.  At a group's limit
 *                             a new connection makes room by closing the
 *                             group's oldest client still idle before its
 *                             request head; when there is none, the
 *                             group's listeners stop accepting (the kernel
 *                             backlog holds the rest) until one closes.
 *   PR_EGRESS_MAX_PIPES_AGENT / _PHASE / _PEER
 *                             relay pipes (2 fds each, bulk transfers only)
 *                             per group; past them a direction relays
 *                             through user space (slower, same bytes).
 *   PR_EGRESS_FD_SLACK        fds for everything else: listeners, DNS,
 *                             netlink, log, control connections, pidfds.
 *   PR_EGRESS_NOFILE          the helper's RLIMIT_NOFILE (soft and hard):
 *                             slack + 2 per connection + 2 per pipe, so the
 *                             budgets above can never run out of fds.  A
 *                             lower hard limit scales every budget down.
 *   PR_EGRESS_HEAD_TIMEOUT_S  time to receive a complete request head
 *                             (slowloris guard); the connection is closed.
 *   PR_EGRESS_CONNECT_TIMEOUT_S  per upstream address connect attempt.
 *   PR_EGRESS_RELAY_HIGH      bytes queued towards one side before reading
 *                             from the other side stops (per direction), so
 *                             a slow reader costs at most ~2 x this per
 *                             connection.  Relayed bytes wait in a pipe of
 *                             this size (kernel memory, spliced, never
 *                             copied to the helper), or for the first
 *                             PR_EGRESS_RELAY_BUF bytes of a direction and
 *                             the rewritten head, in a user-space buffer.
 *   PR_EGRESS_RELAY_HIGH_MAX  the bound a direction's pipe grows to, by
 *                             doubling, while its reader keeps taking a
 *                             full pipe in one write (a bulk download):
 *                             fewer splices per byte.  A slow reader never
 *                             does, so it keeps PR_EGRESS_RELAY_HIGH.
 *   PR_EGRESS_RELAY_GROWN     directions per helper that may grow at once:
 *                             a client that reads fast and then stops
 *                             leaves a grown pipe full, so this caps what
 *                             all of them can pin beyond the 128 KiB each.
 *   PR_EGRESS_RELAY_BUDGET    bytes one connection may read in one turn of
 *                             the event loop before the others get theirs.
 *   PR_EGRESS_ERROR_TIMEOUT_S time to flush an error reply.
 *   PR_EGRESS_MAX_TOKENS / PR_EGRESS_MAX_CONTROL / PR_EGRESS_CONTROL_LINE
 *                             live tokens, control connections, and one
 *                             control command line's length. */
#define PR_EGRESS_MAX_CONNS_AGENT 512
#define PR_EGRESS_MAX_CONNS_PHASE 128
#define PR_EGRESS_MAX_CONNS_PEER 128
#define PR_EGRESS_MAX_PIPES_AGENT 256
#define PR_EGRESS_MAX_PIPES_PHASE 128
#define PR_EGRESS_MAX_PIPES_PEER 128
#define PR_EGRESS_FD_SLACK 128
#define PR_EGRESS_NOFILE                                                                                               \
  (PR_EGRESS_FD_SLACK + 2 * (PR_EGRESS_MAX_CONNS_AGENT + PR_EGRESS_MAX_CONNS_PHASE + PR_EGRESS_MAX_CONNS_PEER)       \
   + 2 * (PR_EGRESS_MAX_PIPES_AGENT + PR_EGRESS_MAX_PIPES_PHASE + PR_EGRESS_MAX_PIPES_PEER))
#define PR_EGRESS_HEAD_TIMEOUT_S 30
#define PR_EGRESS_HELLO_TIMEOUT_S 10
#define PR_EGRESS_CONNECT_TIMEOUT_S 15
#define PR_EGRESS_RELAY_HIGH (128 * 1024)
#define PR_EGRESS_RELAY_HIGH_MAX (1024 * 1024)
#define PR_EGRESS_RELAY_GROWN 16
#define PR_EGRESS_RELAY_BUF (16 * 1024)
#define PR_EGRESS_RELAY_BUDGET (1024 * 1024)
#define PR_EGRESS_ERROR_TIMEOUT_S 10
#define PR_EGRESS_MAX_TOKENS 64
#define PR_EGRESS_MAX_CONTROL 16
#define PR_EGRESS_CONTROL_LINE 4096
#define PR_EGRESS_TOKEN_MIN 16
#define PR_EGRESS_TOKEN_MAX 128
#define PR_EGRESS_MAX_ADDRS 16
/* The transparent sides: the agent's, the verifier's, the setup's. */
#define PR_EGRESS_TSIDES 3

/* The transparent resolver's stand-in addresses (transparent.c): one pool
 * per phase, each in its own /16 of 100.64.0.0/10 (RFC 6598): the agent's
 * 100.64.0.0/16, the setup's 100.65.0.0/16, the verifier's 100.66.0.0/16,
 * so no phase's names can take another's addresses.
 *   PR_EGRESS_MAX_STANDINS        names the agent's pool holds at once;
 *   PR_EGRESS_MAX_STANDINS_PHASE  the setup's and the verifier's.
 * A full pool gives a new name the address of its least recently used
 * name (resolved, or dialled), never a refusal. */
#define PR_EGRESS_MAX_STANDINS 4096
#define PR_EGRESS_MAX_STANDINS_PHASE 1024

struct pr_standin; /* one slot (transparent.c) */

/* One phase's pool: slot i is the address first + i; a hash of the names
 * (bucket, chained through the slots) and a least recently used list. */
struct pr_standin_pool
{
  uint32_t first;          /* slot 0's address, host byte order */
  uint32_t cap, n;         /* slots (a power of two), slots in use */
  struct pr_standin *slot; /* cap of them, allocated on the pool's first name */
  uint32_t *bucket;        /* cap of them: the first slot of each hash chain */
  uint32_t oldest, newest; /* ends of the LRU list */
};

struct pr_egress;

struct pr_token
{
  struct pr_token *next;
  struct pr_egress *eg;
  uint64_t id;
  char token[PR_EGRESS_TOKEN_MAX + 1];
  enum pr_phase phase;
  pid_t pid;
  int pidfd;
  struct event *ev;
};

enum pr_conn_kind
{
  PR_CONN_AGENT,
  PR_CONN_VERIFIER,
  PR_CONN_PEER,
  PR_CONN_KINDS,
};

/* One listener group's budget (see the limits above). */
struct pr_budget
{
  size_t n, max;     /* live connections, limit */
  size_t pipes_free; /* relay pipes that may still be opened */
  bool paused;       /* the group's listeners are disabled */
};

struct pr_ctl;

/* The decision log (declog.c):
 *   PR_EGRESS_LOG_MAX      bytes the log file may reach (per container);
 *                          decisions past it are only counted (totals).
 *   PR_EGRESS_LOG_FOLD_S   a decision that repeats one already written is
 *                          folded into one line per key per this period.
 *   PR_EGRESS_LOG_FORGET_S a key quiet this long is forgotten.
 *   PR_DECLOG_KEYS         keys remembered at once (least recently seen
 *                          forgotten first). */
#define PR_EGRESS_LOG_MAX (1024 * 1024)
#define PR_EGRESS_LOG_FOLD_S 1
#define PR_EGRESS_LOG_FORGET_S 60
#define PR_DECLOG_KEYS 1024
#define PR_DECLOG_BUCKETS 1021
#define PR_DECLOG_PHASES 4 /* agent, setup, verifier, peer */

struct fold;

struct pr_declog_totals
{
  uint64_t allow, deny, bytes_up, bytes_down, unlogged;
};

struct pr_declog
{
  int fd, totals_fd;        /* -1: none */
  size_t size, max;
  struct fold *buckets[PR_DECLOG_BUCKETS];
  struct fold *lru_head, *lru_tail;
  size_t n_folds;
  struct event *flush_ev;
  bool flush_armed;
  struct pr_declog_totals totals[PR_DECLOG_PHASES];
  bool totals_dirty;
};

struct pr_egress
{
  const struct pr_egress_config *cfg;
  struct event_base *base;
  struct evdns_base *dns;
  struct evconnlistener *agent_l, *verifier_l, *control_l;
  struct evconnlistener **peer_l;
  struct peer_l_ctx *peer_ctx; /* one per peer listener (egress.c) */
  size_t n_peer_l;
  struct event *sigterm_ev, *sigpipe_ev, *container_ev, *resume_ev;
  struct pr_token *tokens;
  size_t n_tokens;
  uint64_t next_token_id;
  struct pr_conn *conns;
  struct pr_budget budget[PR_CONN_KINDS];
  size_t grown_free; /* relay directions that may still grow their pipe */
  bool backoff;      /* accept failed (EMFILE...): every listener waits for resume_ev */
  struct pr_ctl *ctls;
  size_t n_ctls;
  struct pr_declog log;
  struct pr_host_nets nets; /* the host's networks, for every connect */
  /* Transparent mode, [0] the agent's (127.0.0.1:53, :3127, [::1]:3127),
   * [1] the verifier's (5354, 3126), [2] the setup's (5355, 3125): which
   * one a client reaches is the runtime's rules' choice by the socket's
   * cgroup (transparent.h). */
  struct pr_transparent_side
  {
    struct pr_egress *eg;
    enum pr_phase phase;
    enum pr_conn_kind kind;
    struct evconnlistener *l[2]; /* IPv4, IPv6 (NULL: none) */
    struct event *dns_ev[2]; /* IPv4, IPv6 (NULL: none) */
  } tside[PR_EGRESS_TSIDES];
  struct pr_standin_pool standins[PR_EGRESS_TSIDES]; /* by enum pr_phase (transparent.c) */
};

/* A decision log record (see egress.h for the line format). */
struct pr_decision
{
  const char *phase;
  const char *method;
  const char *host;
  unsigned port;
  bool allow;
  const char *reason;
  uint64_t bytes_up, bytes_down;
};

/* Formats one record as a JSON line ending in '\n' (malloc'd): the
 * decision, "count" decisions folded into it, the first one at first and
 * the last at last. */
char *pr_declog_format (const struct pr_decision *d, time_t first, time_t last, uint64_t count);
/* Opens the log (append, created 0640) and the totals file (truncated);
 * path NULL = no log (decisions are still counted), totals_path NULL = no
 * totals file.  Errors: open errno naming the file; the timer. */
int pr_declog_open (struct pr_declog *l, struct event_base *base, const char *path, const char *totals_path,
                    pr_error **err);
/* Records one decision (written, folded or counted; never fails: logging
 * must not stop traffic). */
void pr_declog_record (struct pr_declog *l, const struct pr_decision *d);
/* Writes what is folded and the totals, closes the files. */
void pr_declog_close (struct pr_declog *l);

/* One client connection (proxy.c owns its life, relay.c its relay phase). */
enum conn_state
{
  ST_HEAD,
  ST_RESOLVE,
  ST_CONNECT,
  ST_HELLO, /* CONNECT to 443 answered, waiting for the ClientHello */
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
  size_t high; /* queue bound once in a pipe: RELAY_HIGH .. RELAY_HIGH_MAX */
  bool pipe_tried;
  bool eof;  /* read side reached EOF */
  bool shut; /* we shut down the other side's write half */
};

/* A direction whose pipe has grown past PR_EGRESS_RELAY_HIGH holds one of
 * eg->grown_free until its connection is freed. */
static inline bool
pr_relay_dir_grown (const struct relay_dir *d)
{
  return d->high > PR_EGRESS_RELAY_HIGH;
}

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
  bool tls_check; /* a CONNECT to 443: the tunnel must open with a ClientHello naming host */
  char *fwd_head; /* rewritten head for a forward request */
  size_t fwd_len;
  struct pr_body_tracker body;
  uint64_t bytes_up, bytes_down;
  bool decided, allow;
  bool transparent; /* redirected by the rules, not a proxy request (transparent.c) */
  bool named;       /* transparent to a stand-in: c->host came from the resolver */
  char reason[256];
};

/* proxy.c internals used by relay.c: pr_conn_decide records the decision
 * (allow, printf-style one-line reason) logged when c is freed;
 * pr_conn_free logs it, closes everything c holds, unlinks and frees c. */
void pr_conn_decide (struct pr_conn *c, bool allow, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
void pr_conn_free (struct pr_conn *c);
/* Records a denial with the reason and answers it (403, or closing for a
 * peer or transparent connection); c is gone after it returns. */
void pr_conn_deny (struct pr_conn *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* A new connection of kind on the accepted socket fd, linked into eg and
 * counted in the group's budget; NULL (fd closed) when out of memory. */
struct pr_conn *pr_conn_new (struct pr_egress *eg, evutil_socket_t fd, enum pr_conn_kind kind,
                             const struct pr_peer *peer);

/* transparent.c: the resolver socket's read callback; a redirected
 * connection's start (decides, then resolves and connects, or denies and
 * closes); the stand-in names' release at teardown. */
void pr_transparent_dns_cb (evutil_socket_t fd, short what, void *arg); /* arg: struct pr_transparent_side */
void pr_transparent_begin (struct pr_conn *c, int fd, enum pr_phase phase);
void pr_transparent_free (struct pr_egress *eg);

/* relay.c: starts relaying once the upstream is connected (c->s[i].bev
 * both set; they are replaced by raw fds and edge-triggered events).
 * up_prefix (up_len bytes, may be 0) goes upstream and down_prefix to the
 * client before anything read from the other side: the rewritten head,
 * the CONNECT answer.  May free c (error, or the relay is already over). */
void pr_relay_start (struct pr_conn *c, const char *up_prefix, size_t up_len, const char *down_prefix,
                     size_t down_len);

/* proxy.c */
void pr_proxy_accept (struct pr_egress *eg, evutil_socket_t fd, enum pr_conn_kind kind, const struct pr_peer *peer);
void pr_proxy_drop_token (struct pr_egress *eg, uint64_t token_id);
void pr_proxy_free_all (struct pr_egress *eg);
/* At a group's connection limit, idle clients must not lock the rest of
 * the group out: pr_proxy_evict_idle closes the group's oldest connection
 * still waiting for its request head (false when there is none);
 * pr_proxy_has_idle tells whether there is one. */
bool pr_proxy_evict_idle (struct pr_egress *eg, enum pr_conn_kind kind);
bool pr_proxy_has_idle (struct pr_egress *eg, enum pr_conn_kind kind);
const struct pr_token *pr_egress_find_token (struct pr_egress *eg, const char *token);
/* egress.c: pr_egress_conn_closed is called when a connection of a group
 * ends (resumes its listeners); pr_egress_budget_check when one stops
 * being idle (pauses them when the group is full of busy connections). */
void pr_egress_conn_closed (struct pr_egress *eg, enum pr_conn_kind kind);
void pr_egress_budget_check (struct pr_egress *eg, enum pr_conn_kind kind);

/* peers.c: starts a peer connection: resolve the peer's target (no address
 * check: peers are the declared way to non-public addresses), connect, splice. */
struct pr_conn;
void pr_peer_start (struct pr_conn *c);

/* proxy.c internals used by peers.c */
void pr_conn_resolve (struct pr_conn *c, const char *host, uint16_t port, bool check_addrs);
void pr_conn_set_target (struct pr_conn *c, const char *method, const char *host, uint16_t port);
const struct pr_peer *pr_conn_peer (struct pr_conn *c);

#endif
