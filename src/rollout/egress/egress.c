/* egress.c - the egress helper's event loop and lifetime: listeners
 * (agent, verifier, peers), the connection limit, the control socket and
 * its tokens (each live until its process exits, watched with a pidfd),
 * shutdown on container exit or SIGTERM; and the control client
 * pr_egress_open_token.  Interface and protocol: egress.h. */
#define _GNU_SOURCE
#include "config.h" /* configure's: HAVE_MALLOC_TRIM */

#include <errno.h>
#include <fcntl.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <yajl/yajl_tree.h>

#include "egress-internal.h"
#include "../../base/log.h"
#include "../../base/syscall.h"
#include "../../base/util.h"

/* ---- tokens ---- */

/* Constant-time comparison: the verifier listener is reachable by the
 * agent, which must not learn a token byte by byte from timing. */
static bool
token_equal (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  unsigned char d = la != lb;
  for (size_t i = 0; i < la && i < lb; i++)
    d |= (unsigned char) a[i] ^ (unsigned char) b[i];
  return d == 0;
}

const struct pr_token *
pr_egress_find_token (struct pr_egress *eg, const char *token)
{
  for (struct pr_token *t = eg->tokens; t; t = t->next)
    if (token_equal (t->token, token))
      return t;
  return NULL;
}

static void
token_remove (struct pr_egress *eg, struct pr_token *t)
{
  struct pr_token **pp = &eg->tokens;
  while (*pp && *pp != t)
    pp = &(*pp)->next;
  if (*pp)
    *pp = t->next;
  eg->n_tokens--;
  pr_proxy_drop_token (eg, t->id);
  if (t->ev)
    event_free (t->ev);
  if (t->pidfd >= 0)
    close (t->pidfd);
  free (t);
}

static void
token_pid_exited (evutil_socket_t fd, short what, void *arg)
{
  struct pr_token *t = arg;
  token_remove (t->eg, t);
}

static bool
valid_token (const char *s)
{
  size_t n = strlen (s);
  if (n < PR_EGRESS_TOKEN_MIN || n > PR_EGRESS_TOKEN_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
      return false;
  return true;
}

/* Returns NULL on success or a static error for the reply. */
static const char *
token_open (struct pr_egress *eg, const char *phase, const char *token, long long pid)
{
  enum pr_phase ph;

  if (phase == NULL || token == NULL)
    return "open needs phase, token and pid";
  if (strcmp (phase, "verifier") == 0)
    ph = PR_PHASE_VERIFIER;
  else if (strcmp (phase, "setup") == 0)
    ph = PR_PHASE_SETUP;
  else
    return "phase must be verifier or setup";
  if (!valid_token (token))
    return "token must be 16 to 128 hex digits";
  if (pid <= 0 || pid > INT32_MAX)
    return "bad pid";
  if (pr_egress_find_token (eg, token))
    return "token already registered";
  if (eg->n_tokens >= PR_EGRESS_MAX_TOKENS)
    return "too many live tokens";

  int pidfd = pr_sys_pidfd_open ((pid_t) pid, 0);
  if (pidfd < 0)
    return errno == ESRCH ? "no such process" : "pidfd_open failed";
  struct pr_token *t = xmalloc0 (sizeof *t);
  t->eg = eg;
  t->id = ++eg->next_token_id;
  snprintf (t->token, sizeof t->token, "%s", token);
  t->phase = ph;
  t->pid = pid;
  t->pidfd = pidfd;
  t->ev = event_new (eg->base, pidfd, EV_READ, token_pid_exited, t);
  if (t->ev == NULL || event_add (t->ev, NULL) < 0)
    {
      if (t->ev)
        event_free (t->ev);
      close (pidfd);
      free (t);
      return "cannot watch the process";
    }
  t->next = eg->tokens;
  eg->tokens = t;
  eg->n_tokens++;
  return NULL;
}

static const char *
token_close (struct pr_egress *eg, const char *token)
{
  if (token == NULL)
    return "close needs a token";
  for (struct pr_token *t = eg->tokens; t; t = t->next)
    if (token_equal (t->token, token))
      {
        token_remove (eg, t);
        return NULL;
      }
  return "unknown token";
}

/* ---- control socket ---- */

struct pr_ctl
{
  struct pr_ctl *prev, *next;
  struct pr_egress *eg;
  struct bufferevent *bev;
};

static void
ctl_free (struct pr_ctl *k)
{
  struct pr_egress *eg = k->eg;

  if (k->prev)
    k->prev->next = k->next;
  else
    eg->ctls = k->next;
  if (k->next)
    k->next->prev = k->prev;
  bufferevent_free (k->bev);
  free (k);
  eg->n_ctls--;
}

static const char *
json_str (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_string);
  return v ? YAJL_GET_STRING (v) : NULL;
}

static const char *
ctl_command (struct pr_egress *eg, const char *line)
{
  char errbuf[128];
  yajl_val root = yajl_tree_parse (line, errbuf, sizeof errbuf);
  const char *res;

  if (root == NULL || !YAJL_IS_OBJECT (root))
    res = "malformed command";
  else
    {
      const char *cmd = json_str (root, "cmd");
      const char *path[] = { "pid", NULL };
      yajl_val pid = yajl_tree_get (root, path, yajl_t_number);
      if (cmd && strcmp (cmd, "open") == 0)
        res = token_open (eg, json_str (root, "phase"), json_str (root, "token"),
                          pid && YAJL_IS_INTEGER (pid) ? YAJL_GET_INTEGER (pid) : -1);
      else if (cmd && strcmp (cmd, "close") == 0)
        res = token_close (eg, json_str (root, "token"));
      else
        res = "unknown command";
    }
  if (root)
    yajl_tree_free (root);
  return res;
}

static void
ctl_read_cb (struct bufferevent *bev, void *arg)
{
  struct pr_ctl *k = arg;
  struct evbuffer *in = bufferevent_get_input (bev);
  struct evbuffer *out = bufferevent_get_output (bev);
  char *line;
  size_t n;

  while ((line = evbuffer_readln (in, &n, EVBUFFER_EOL_LF)) != NULL)
    {
      const char *e = n > PR_EGRESS_CONTROL_LINE ? "command too long" : ctl_command (k->eg, line);
      free (line);
      if (e)
        evbuffer_add_printf (out, "{\"ok\":false,\"error\":\"%s\"}\n", e); /* e: static, no quotes */
      else
        evbuffer_add_printf (out, "{\"ok\":true}\n");
    }
  if (evbuffer_get_length (in) > PR_EGRESS_CONTROL_LINE)
    {
      ctl_free (k);
      return;
    }
}

static void
ctl_event_cb (struct bufferevent *bev, short what, void *arg)
{
  ctl_free (arg);
}

static void
ctl_accept_cb (struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
  struct pr_egress *eg = arg;

  if (eg->n_ctls >= PR_EGRESS_MAX_CONTROL)
    {
      evutil_closesocket (fd);
      return;
    }
  struct pr_ctl *k = xmalloc0 (sizeof *k);
  k->eg = eg;
  k->bev = bufferevent_socket_new (eg->base, fd, BEV_OPT_CLOSE_ON_FREE);
  if (k->bev == NULL)
    {
      evutil_closesocket (fd);
      free (k);
      return;
    }
  k->next = eg->ctls;
  if (eg->ctls)
    eg->ctls->prev = k;
  eg->ctls = k;
  eg->n_ctls++;
  bufferevent_setwatermark (k->bev, EV_READ, 0, PR_EGRESS_CONTROL_LINE + 2);
  bufferevent_setcb (k->bev, ctl_read_cb, NULL, ctl_event_cb, k);
  bufferevent_enable (k->bev, EV_READ | EV_WRITE);
}

/* ---- listeners and limits ---- */

/* Enables or disables one group's listeners (all of them: kind < 0). */
static void
set_listeners (struct pr_egress *eg, int kind, bool on)
{
  for (int k = 0; k < PR_CONN_KINDS; k++)
    {
      if (kind >= 0 && k != kind)
        continue;
      if (k == PR_CONN_AGENT && eg->agent_l)
        on ? evconnlistener_enable (eg->agent_l) : evconnlistener_disable (eg->agent_l);
      for (int s = 0; s < PR_EGRESS_TSIDES; s++)
        for (int t = 0; t < 2; t++)
          if ((int) eg->tside[s].kind == k && eg->tside[s].l[t])
            on ? evconnlistener_enable (eg->tside[s].l[t]) : evconnlistener_disable (eg->tside[s].l[t]);
      if (k == PR_CONN_VERIFIER && eg->verifier_l)
        on ? evconnlistener_enable (eg->verifier_l) : evconnlistener_disable (eg->verifier_l);
      if (k == PR_CONN_PEER)
        for (size_t i = 0; i < eg->n_peer_l; i++)
          on ? evconnlistener_enable (eg->peer_l[i]) : evconnlistener_disable (eg->peer_l[i]);
      eg->budget[k].paused = !on;
    }
}

void
pr_egress_conn_closed (struct pr_egress *eg, enum pr_conn_kind kind)
{
  struct pr_budget *b = &eg->budget[kind];
  if (b->paused && b->n < b->max && !eg->backoff)
    set_listeners (eg, kind, true);
}

void
pr_egress_budget_check (struct pr_egress *eg, enum pr_conn_kind kind)
{
  struct pr_budget *b = &eg->budget[kind];
  if (!b->paused && b->n >= b->max && !pr_proxy_has_idle (eg, kind))
    set_listeners (eg, kind, false);
}

/* A new connection of a group: at the group's limit, close its oldest
 * idle client to make room, or refuse this one (its listeners are paused
 * then, so the kernel backlog holds the next ones).  The limit counts
 * every live connection, tunnels included: it is never exceeded. */
static void
admit (struct pr_egress *eg, evutil_socket_t fd, enum pr_conn_kind kind, const struct pr_peer *peer)
{
  struct pr_budget *b = &eg->budget[kind];
  if (b->n >= b->max && !pr_proxy_evict_idle (eg, kind))
    {
      evutil_closesocket (fd);
      set_listeners (eg, kind, false);
      return;
    }
  pr_proxy_accept (eg, fd, kind, peer);
  pr_egress_budget_check (eg, kind);
}

static void
agent_accept_cb (struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
  admit (arg, fd, PR_CONN_AGENT, NULL);
}

/* A connection the transparent rules redirected: judged by the policy of
 * the side's phase, in that group's budget (docs/rollout.md "Transparent
 * egress"). */
static void
transparent_accept_cb (struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
  struct pr_transparent_side *ts = arg;
  struct pr_egress *eg = ts->eg;
  struct pr_budget *b = &eg->budget[ts->kind];
  if (b->n >= b->max && !pr_proxy_evict_idle (eg, ts->kind))
    {
      evutil_closesocket (fd);
      set_listeners (eg, ts->kind, false);
      return;
    }
  struct pr_conn *c = pr_conn_new (eg, fd, ts->kind, NULL);
  if (c)
    pr_transparent_begin (c, fd, ts->phase);
  pr_egress_budget_check (eg, ts->kind);
}

static struct evconnlistener *listen_on (struct pr_egress *eg, int fd, evconnlistener_cb cb, void *arg);

static int
transparent_setup (struct pr_egress *eg, int side, const int dns_fd[2], const int tcp_fd[2], pr_error **err)
{
  struct pr_transparent_side *ts = &eg->tside[side];
  ts->eg = eg;
  static const enum pr_phase phases[PR_EGRESS_TSIDES] = { PR_PHASE_AGENT, PR_PHASE_VERIFIER, PR_PHASE_SETUP };
  ts->phase = phases[side];
  ts->kind = side == 0 ? PR_CONN_AGENT : PR_CONN_VERIFIER;
  for (int t = 0; t < 2; t++)
    if (tcp_fd[t] >= 0 && (ts->l[t] = listen_on (eg, tcp_fd[t], transparent_accept_cb, ts)) == NULL)
      return pr_error_set (err, errno, "egress: transparent listener");
  for (int t = 0; t < 2; t++)
    {
      if (dns_fd[t] < 0)
        continue;
      ts->dns_ev[t] = event_new (eg->base, dns_fd[t], EV_READ | EV_PERSIST, pr_transparent_dns_cb, ts);
      if (ts->dns_ev[t] == NULL || event_add (ts->dns_ev[t], NULL) < 0)
        return pr_error_set (err, 0, "egress: cannot watch the resolver socket");
    }
  return 0;
}

static void
verifier_accept_cb (struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
  admit (arg, fd, PR_CONN_VERIFIER, NULL);
}

struct peer_l_ctx
{
  struct pr_egress *eg;
  const struct pr_peer *peer;
};

static void
peer_accept_cb (struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
  struct peer_l_ctx *p = arg;
  admit (p->eg, fd, PR_CONN_PEER, p->peer);
}

static void
resume_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_egress *eg = arg;
  eg->backoff = false;
  for (int k = 0; k < PR_CONN_KINDS; k++)
    if (eg->budget[k].n < eg->budget[k].max)
      set_listeners (eg, k, true);
}

/* accept(2) failed (EMFILE, ENFILE, ENOBUFS): back off for a moment rather
 * than spinning on a listener that stays readable. */
static void
accept_error_cb (struct evconnlistener *l, void *arg)
{
  struct pr_egress *eg = arg;
  struct timeval tv = { 0, 200 * 1000 };

  pr_warn ("egress: accept: %s", strerror (errno));
  set_listeners (eg, -1, false);
  eg->backoff = true;
  evtimer_add (eg->resume_ev, &tv);
}

/* Connections accepted on a TCP listener come from the container's own
 * network namespace, a hop that never leaves the machine.  A paced
 * congestion control there (BBR, the default on many hosts, paces every
 * socket with hrtimers when the qdisc is not fq) only throttles the
 * proxy's side of a download: two paced hops in series measured 1.4 GiB/s
 * where cubic on the local hop gave 2.3 (docs/performance.md).  Accepted
 * sockets inherit the listener's algorithm; the upstream side keeps the
 * host's choice.  Best effort: cubic, else reno (always built in); a
 * failure (a unix socket, a kernel without either) leaves the default. */
static void
local_hop_congestion (int fd)
{
  static const char *const algs[] = { "cubic", "reno" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (algs); i++)
    if (setsockopt (fd, IPPROTO_TCP, TCP_CONGESTION, algs[i], strlen (algs[i])) == 0)
      return;
}

static struct evconnlistener *
listen_on (struct pr_egress *eg, int fd, evconnlistener_cb cb, void *arg)
{
  local_hop_congestion (fd);
  /* backlog 0: the socket is already listening.  libevent leaves a handed
   * in socket's blocking mode alone; a blocking accept would stall the
   * whole loop when a queued connection goes away before we get to it. */
  if (evutil_make_socket_nonblocking (fd) < 0)
    return NULL;
  struct evconnlistener *l
      = evconnlistener_new (eg->base, cb, arg, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
  if (l)
    evconnlistener_set_error_cb (l, accept_error_cb);
  return l;
}

/* ---- lifetime ---- */

static void
stop_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_egress *eg = arg;
  event_base_loopexit (eg->base, NULL);
}

static void
ignore_cb (evutil_socket_t fd, short what, void *arg)
{
}

/* The helper's fds are bounded: RLIMIT_NOFILE is set (soft and hard) to
 * PR_EGRESS_NOFILE, or kept at a lower hard limit, and each group's
 * connection and pipe budget is sized to what that limit holds (scaled
 * down proportionally under a lower one, at least 4 connections each), so
 * a connection within its budget never finds its fds taken. */
static void
set_budgets (struct pr_egress *eg)
{
  static const size_t conns[PR_CONN_KINDS]
      = { PR_EGRESS_MAX_CONNS_AGENT, PR_EGRESS_MAX_CONNS_PHASE, PR_EGRESS_MAX_CONNS_PEER };
  static const size_t pipes[PR_CONN_KINDS]
      = { PR_EGRESS_MAX_PIPES_AGENT, PR_EGRESS_MAX_PIPES_PHASE, PR_EGRESS_MAX_PIPES_PEER };
  struct rlimit rl = { PR_EGRESS_NOFILE, PR_EGRESS_NOFILE };
  struct rlimit cur;

  if (getrlimit (RLIMIT_NOFILE, &cur) == 0 && cur.rlim_max < PR_EGRESS_NOFILE)
    rl.rlim_cur = rl.rlim_max = cur.rlim_max;
  if (setrlimit (RLIMIT_NOFILE, &rl) < 0 && getrlimit (RLIMIT_NOFILE, &rl) < 0)
    rl.rlim_cur = 256;
  size_t full = PR_EGRESS_NOFILE - PR_EGRESS_FD_SLACK;
  size_t usable = rl.rlim_cur > PR_EGRESS_FD_SLACK ? rl.rlim_cur - PR_EGRESS_FD_SLACK : 0;
  if (usable > full)
    usable = full;
  for (int k = 0; k < PR_CONN_KINDS; k++)
    {
      size_t m = conns[k] * usable / full;
      eg->budget[k].max = m < 4 ? 4 : m;
      eg->budget[k].pipes_free = pipes[k] * usable / full;
    }
}

static int
setup_dns (struct pr_egress *eg, pr_error **err)
{
  const struct pr_egress_config *cfg = eg->cfg;
  const char *resolv = cfg->resolv_conf ? cfg->resolv_conf : "/etc/resolv.conf";
  const char *hosts = cfg->hosts_file ? cfg->hosts_file : "/etc/hosts";

  eg->dns = evdns_base_new (eg->base, 0);
  if (eg->dns == NULL)
    return pr_error_set (err, 0, "egress: cannot create the dns resolver");
  int r = evdns_base_resolv_conf_parse (eg->dns, DNS_OPTIONS_ALL, resolv);
  if (r != 0 && cfg->resolv_conf != NULL)
    return pr_error_set (err, 0, "egress: cannot load resolver config `%s` (evdns error %d)", resolv, r);
  /* 0x20 case randomisation breaks on some resolvers; nothing here
   * depends on it (answers are checked by address, not trusted by name). */
  evdns_base_set_option (eg->dns, "randomize-case:", "0");
  if (evdns_base_load_hosts (eg->dns, hosts) != 0 && cfg->hosts_file != NULL)
    return pr_error_set (err, 0, "egress: cannot load hosts file `%s`", hosts);
  return 0;
}

static void
egress_teardown (struct pr_egress *eg)
{
  pr_proxy_free_all (eg);
  while (eg->tokens)
    token_remove (eg, eg->tokens);
  while (eg->ctls)
    ctl_free (eg->ctls);
  if (eg->agent_l)
    evconnlistener_free (eg->agent_l);
  for (int s = 0; s < PR_EGRESS_TSIDES; s++)
    {
      for (int t = 0; t < 2; t++)
        if (eg->tside[s].l[t])
          evconnlistener_free (eg->tside[s].l[t]);
      for (int t = 0; t < 2; t++)
        if (eg->tside[s].dns_ev[t])
          event_free (eg->tside[s].dns_ev[t]);
    }
  for (int t = 0; t < 2; t++)
    {
      if (eg->cfg->dns_fd[t] >= 0)
        close (eg->cfg->dns_fd[t]);
      if (eg->cfg->verifier_dns_fd[t] >= 0)
        close (eg->cfg->verifier_dns_fd[t]);
      if (eg->cfg->setup_dns_fd[t] >= 0)
        close (eg->cfg->setup_dns_fd[t]);
    }
  pr_transparent_free (eg);
  if (eg->verifier_l)
    evconnlistener_free (eg->verifier_l);
  if (eg->control_l)
    evconnlistener_free (eg->control_l);
  for (size_t i = 0; i < eg->n_peer_l; i++)
    evconnlistener_free (eg->peer_l[i]);
  free (eg->peer_l);
  free (eg->peer_ctx);
  struct event *evs[] = { eg->sigterm_ev, eg->sigpipe_ev, eg->container_ev, eg->resume_ev };
  for (size_t i = 0; i < PR_ARRAY_SIZE (evs); i++)
    if (evs[i])
      event_free (evs[i]);
  if (eg->dns)
    evdns_base_free (eg->dns, 1);
  if (eg->base)
    event_base_free (eg->base);
  pr_declog_close (&eg->log);
  pr_host_nets_free (&eg->nets);
}

/* With the epoll changelist, the interest changes of one loop turn are
 * applied together before the next epoll_wait, and a delete followed by an
 * add on the same fd (a connection moving from one phase to the next)
 * becomes one EPOLL_CTL_MOD, or nothing.  Its one caveat (an fd dup'ed and
 * one copy closed) does not arise: every socket here has exactly one fd. */
static struct event_base *
new_base (void)
{
  struct event_config *ec = event_config_new ();
  if (ec == NULL)
    return NULL;
  event_config_set_flag (ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  struct event_base *base = event_base_new_with_config (ec);
  event_config_free (ec);
  return base;
}

static int
egress_setup (struct pr_egress *eg, pr_error **err)
{
  const struct pr_egress_config *cfg = eg->cfg;

  set_budgets (eg);
  eg->grown_free = PR_EGRESS_RELAY_GROWN;
  if (pr_host_nets_init (&eg->nets, err) < 0)
    return pr_error_wrap (err, "egress: the host's networks");
  eg->base = new_base ();
  if (eg->base == NULL)
    return pr_error_set (err, 0, "egress: cannot create the event base");
  if (setup_dns (eg, err) < 0)
    return -1;
  if (pr_declog_open (&eg->log, eg->base, cfg->log_path, cfg->totals_path, err) < 0)
    return -1;

  eg->sigterm_ev = evsignal_new (eg->base, SIGTERM, stop_cb, eg);
  /* A handled SIGPIPE turns writes to a closed peer into EPIPE. */
  eg->sigpipe_ev = evsignal_new (eg->base, SIGPIPE, ignore_cb, eg);
  eg->resume_ev = evtimer_new (eg->base, resume_cb, eg);
  if (!eg->sigterm_ev || !eg->sigpipe_ev || !eg->resume_ev || evsignal_add (eg->sigterm_ev, NULL) < 0
      || evsignal_add (eg->sigpipe_ev, NULL) < 0)
    return pr_error_set (err, 0, "egress: cannot set up signal events");
  if (cfg->container_pidfd >= 0)
    {
      eg->container_ev = event_new (eg->base, cfg->container_pidfd, EV_READ, stop_cb, eg);
      if (eg->container_ev == NULL || event_add (eg->container_ev, NULL) < 0)
        return pr_error_set (err, 0, "egress: cannot watch the container process");
    }

  if (cfg->agent_fd >= 0 && (eg->agent_l = listen_on (eg, cfg->agent_fd, agent_accept_cb, eg)) == NULL)
    return pr_error_set (err, errno, "egress: agent listener");
  if (cfg->verifier_fd >= 0
      && (eg->verifier_l = listen_on (eg, cfg->verifier_fd, verifier_accept_cb, eg)) == NULL)
    return pr_error_set (err, errno, "egress: verifier listener");
  if (cfg->control_fd >= 0 && (eg->control_l = listen_on (eg, cfg->control_fd, ctl_accept_cb, eg)) == NULL)
    return pr_error_set (err, errno, "egress: control listener");
  if (transparent_setup (eg, 0, cfg->dns_fd, cfg->transparent_fd, err) < 0
      || transparent_setup (eg, 1, cfg->verifier_dns_fd, cfg->verifier_transparent_fd, err) < 0
      || transparent_setup (eg, 2, cfg->setup_dns_fd, cfg->setup_transparent_fd, err) < 0)
    return -1;
  eg->peer_l = xmalloc0 (sizeof *eg->peer_l * (cfg->n_peers ? cfg->n_peers : 1));
  eg->peer_ctx = xmalloc0 (sizeof *eg->peer_ctx * (cfg->n_peers ? cfg->n_peers : 1));
  for (size_t i = 0; i < cfg->n_peers; i++)
    {
      struct peer_l_ctx *p = &eg->peer_ctx[i];
      p->eg = eg;
      p->peer = cfg->peers[i].peer;
      eg->peer_l[i] = listen_on (eg, cfg->peers[i].fd, peer_accept_cb, p);
      if (eg->peer_l[i] == NULL)
        {
          return pr_error_set (err, errno, "egress: listener for peer `%s`", cfg->peers[i].peer->name);
        }
      eg->n_peer_l++;
    }
  return 0;
}

/* Gives the kernel back the free pages of the heap before the helper
 * idles.  The runtime's helper is forked from `create`, not executed: its
 * heap is create's, where the container's config, the mountinfo reads and
 * the rollout's setup were parsed and freed (about 0.8 MiB under podman,
 * 0.1 MiB of it still allocated), and every one of those pages is the
 * helper's alone once create exits.  malloc_trim(0) releases the free
 * chunks' pages anywhere in the heap (madvise) and the top (brk), both in
 * the sandbox's allowlist.  Without glibc's malloc_trim, nothing. */
static void
return_free_heap (void)
{
#ifdef HAVE_MALLOC_TRIM
  malloc_trim (0);
#endif
}

int
pr_egress_run (const struct pr_egress_config *cfg, pr_error **err)
{
  struct pr_egress eg = { .cfg = cfg, .log = { .fd = -1, .totals_fd = -1 } };

  int r = egress_setup (&eg, err);
  if (r == 0 && cfg->sandbox)
    r = pr_egress_sandbox (cfg, err);
  if (cfg->ready_fd >= 0)
    {
      _cleanup_free_ char *msg = r < 0 ? xasprintf ("%s\n", (*err)->msg) : xstrdup ("ok\n");
      pr_write_all (cfg->ready_fd, msg, strlen (msg));
      close (cfg->ready_fd);
    }
  if (r < 0)
    {
      egress_teardown (&eg);
      return -1;
    }
  /* After the ready word: create does not wait for it. */
  return_free_heap ();
  event_base_dispatch (eg.base);
  egress_teardown (&eg);
  return 0;
}

/* ---- control client ---- */

int
pr_egress_open_token (const char *control_path, enum pr_phase phase, const char *token, pid_t pid,
                      pr_error **err)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *cmd = NULL;
  char reply[512];
  size_t got = 0;

  if (phase != PR_PHASE_VERIFIER && phase != PR_PHASE_SETUP)
    return pr_error_invalid (err, "egress token: phase must be verifier or setup");
  if (!valid_token (token))
    return pr_error_invalid (err, "egress token: token must be 16 to 128 hex digits");
  /* A state dir under a long runtime root (CRI's roots, 64-hex ids) gives
   * a path longer than sun_path: reach it through its directory's
   * /proc/self/fd entry, as the helper's bind does (network.c). */
  _cleanup_close_ int dirfd = -1;
  _cleanup_free_ char *proxy = NULL;
  const char *target = control_path;
  if (strlen (control_path) >= sizeof sun.sun_path)
    {
      _cleanup_free_ char *d = xstrdup (control_path);
      const char *slash = strrchr (control_path, '/');
      if (slash == NULL)
        return pr_error_set (err, ENAMETOOLONG, "egress control socket `%s`", control_path);
      d[slash - control_path] = '\0';
      dirfd = open (d[0] ? d : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dirfd < 0)
        return pr_error_set (err, errno, "open the directory of egress control socket `%s`", control_path);
      proxy = xasprintf ("/proc/self/fd/%d/%s", dirfd, slash + 1);
      target = proxy;
      if (strlen (target) >= sizeof sun.sun_path)
        return pr_error_set (err, ENAMETOOLONG, "egress control socket `%s`", control_path);
    }
  strcpy (sun.sun_path, target);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "egress control socket");
  if (connect (fd, (struct sockaddr *) &sun, sizeof sun) < 0)
    return pr_error_set (err, errno, "connect to egress control socket `%s`", control_path);
  cmd = xasprintf ("{\"cmd\":\"open\",\"phase\":\"%s\",\"token\":\"%s\",\"pid\":%d}\n", pr_phase_name (phase), token,
                   (int) pid);
  if (pr_write_all (fd, cmd, strlen (cmd)) < 0)
    return pr_error_set (err, errno, "write to egress control socket `%s`", control_path);

  /* The helper answers at once; a bounded wait keeps a wedged helper from
   * hanging exec forever. */
  while (got < sizeof reply - 1 && memchr (reply, '\n', got) == NULL)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int r = poll (&p, 1, 10000);
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        return pr_error_set (err, ETIMEDOUT, "egress control socket `%s`: no reply", control_path);
      ssize_t n = read (fd, reply + got, sizeof reply - 1 - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return pr_error_set (err, errno, "read from egress control socket `%s`", control_path);
      if (n == 0)
        break;
      got += n;
    }
  reply[got] = '\0';
  char *nl = strchr (reply, '\n');
  if (nl == NULL)
    return pr_error_set (err, 0, "egress control socket `%s`: no reply", control_path);
  *nl = '\0';

  char errbuf[128];
  yajl_val root = yajl_tree_parse (reply, errbuf, sizeof errbuf);
  const char *okp[] = { "ok", NULL };
  yajl_val ok = root ? yajl_tree_get (root, okp, yajl_t_any) : NULL;
  if (ok && YAJL_IS_TRUE (ok))
    {
      yajl_tree_free (root);
      return 0;
    }
  const char *e = root ? json_str (root, "error") : NULL;
  pr_error_set (err, 0, "egress helper refused the %s token: %s", pr_phase_name (phase), e ? e : "malformed reply");
  if (root)
    yajl_tree_free (root);
  return -1;
}
