/* network.c - listeners, the egress helper's lifetime, proxy variables,
 * tokens and peer names (see network.h). */
#define _GNU_SOURCE
#include "network.h"
#include "../base/env.h"
#include "../base/log.h"
#include "../base/proc.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "egress/egress.h"
#include "transparent.h"
#include "../cgroup/cgroup.h"
#include "../linux/netlink.h"
#include "../linux/safepath.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

static const char *const proxy_vars[] = { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                                          "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", NULL };

/* ------------------------------------------------------------ addresses */

char *
pr_network_peer_addr (const struct pr_policy *p, size_t i)
{
  unsigned int n = 1;
  for (size_t j = 0; j < i; j++)
    if (p->peers[j].port == p->peers[i].port)
      n++;
  return xasprintf ("127.0.0.%u", n);
}

static int
listen_tcp (const char *addr, uint16_t port, int *fd_out, pr_error **err)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (port) };
  inet_pton (AF_INET, addr, &sa.sin_addr);
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "socket");
  int one = 1;
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (fd, 512) < 0)
    {
      int e = errno;
      close (fd);
      return pr_error_set (err, e, "listen on %s:%u in the container", addr, port);
    }
  *fd_out = fd;
  return 0;
}

static int
listen_unix (int state_dirfd, const char *state_dir, int *fd_out, pr_error **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  unlinkat (state_dirfd, PR_EGRESS_SOCK, 0);
  /* Bind through the directory fd so a long --root path still fits. */
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", state_dirfd, PR_EGRESS_SOCK);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "socket");
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (fd, 64) < 0)
    {
      int e = errno;
      close (fd);
      return pr_error_set (err, e, "listen on %s/%s", state_dir, PR_EGRESS_SOCK);
    }
  fchmodat (state_dirfd, PR_EGRESS_SOCK, 0600, 0);
  *fd_out = fd;
  return 0;
}

struct listeners
{
  int agent;
  int phase;
  int dns[2];         /* transparent mode: UDP 127.0.0.1:53, [::1]:53 */
  int transparent[2]; /* transparent mode: TCP 127.0.0.1:3127, [::1]:3127 */
  int vdns[2];        /* the verifier's: UDP 127.0.0.1:5354, [::1]:5354 */
  int vtransparent[2]; /* the verifier's: TCP 127.0.0.1:3126, [::1]:3126 */
  int sdns[2];        /* the setup's: UDP 127.0.0.1:5355, [::1]:5355 */
  int stransparent[2]; /* the setup's: TCP 127.0.0.1:3125, [::1]:3125 */
  struct pr_egress_peer_listener *peers;
  size_t n_peers;
};

static void
listeners_close (struct listeners *l)
{
  if (l->agent >= 0)
    close (l->agent);
  if (l->phase >= 0)
    close (l->phase);
  int *fds[] = { &l->dns[0],          &l->dns[1],          &l->transparent[0], &l->transparent[1],
                 &l->vdns[0],         &l->vdns[1],         &l->vtransparent[0], &l->vtransparent[1],
                 &l->sdns[0],         &l->sdns[1],         &l->stransparent[0], &l->stransparent[1] };
  for (size_t i = 0; i < PR_ARRAY_SIZE (fds); i++)
    if (*fds[i] >= 0)
      close (*fds[i]);
  for (size_t i = 0; i < l->n_peers; i++)
    if (l->peers[i].fd >= 0)
      close (l->peers[i].fd);
  free (l->peers);
}

/* In the helper, before it runs: closes every fd but the listeners, the
 * control socket, the readiness pipe's write end and the log file.  It forks from
 * create while create still holds the engine's pipes, the sync socket
 * with the init, a seccomp listener connection whose agent reads to EOF:
 * none of them is the helper's to keep open. */
static void
helper_close_others (const struct listeners *l, int control, int ready_fd)
{
  size_t n = 0, cap = 16 + l->n_peers;
  _cleanup_free_ int *keep = xmalloc (cap * sizeof *keep);
  const int fixed[] = { l->agent,           l->phase,           l->dns[0],          l->dns[1],
                        l->transparent[0],  l->transparent[1],  l->vdns[0],         l->vdns[1],
                        l->vtransparent[0], l->vtransparent[1], l->sdns[0],         l->sdns[1],
                        l->stransparent[0], l->stransparent[1], control,            ready_fd,
                        pr_log_fd () /* the --log file, where its warnings go */ };
  for (size_t i = 0; i < PR_ARRAY_SIZE (fixed); i++)
    keep[n++] = fixed[i];
  for (size_t i = 0; i < l->n_peers; i++)
    keep[n++] = l->peers[i].fd;
  pr_close_fds_except (keep, n);
}

static bool
phase_proxy_needed (const struct pr_policy *p)
{
  return pr_policy_net_mode (p, PR_PHASE_VERIFIER) != PR_NET_NONE || pr_policy_net_mode (p, PR_PHASE_SETUP) != PR_NET_NONE;
}

static bool
helper_needed (const struct pr_policy *p)
{
  return p->n_peers > 0 || phase_proxy_needed (p) || pr_policy_net_mode (p, PR_PHASE_AGENT) != PR_NET_NONE;
}

/* The helper's own sockets in the container's namespace carry this mark
 * (SO_MARK; a TCP listener's accepted sockets inherit it), so that the
 * rules let their packets pass untouched.  Setting a mark takes
 * CAP_NET_RAW or CAP_NET_ADMIN over the namespace, which the agent does
 * not have (rollout.c drops both), so it cannot wear it. */
static void
mark_helper_socket (int fd)
{
  uint32_t mark = PR_TRANSPARENT_MARK_HELPER;
  setsockopt (fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark);
}

/* A bound socket of family af (AF_INET: 127.0.0.1, AF_INET6: [::1],
 * IPv6-only) of type (SOCK_DGRAM, or SOCK_STREAM then listening), with
 * the helper's mark, and for TCP IP_TRANSPARENT / IPV6_TRANSPARENT: the
 * rules' tproxy statement hands a connection only to a transparent
 * socket, so a listener the agent might bind on another address is never
 * chosen (setting it takes CAP_NET_RAW or CAP_NET_ADMIN: ip(7), ipv6(7)).
 * Bound before the container process runs, so the agent (even as root:
 * no SO_REUSEADDR on the UDP ones) cannot take the address and port, or
 * the wildcard, itself.  *fd_out stays -1 for AF_INET6 when the namespace
 * has no IPv6 loopback. */
static int
bind_loopback (int af, int type, uint16_t port, int *fd_out, pr_error **err)
{
  struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons (port), .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons (port), .sin6_addr = IN6ADDR_LOOPBACK_INIT };
  const char *where = af == AF_INET ? "127.0.0.1" : "[::1]";
  const char *proto = type == SOCK_DGRAM ? "udp" : "tcp";
  int one = 1;
  _cleanup_close_ int fd = socket (af, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return af == AF_INET6 && errno == EAFNOSUPPORT ? 0 : pr_error_set (err, errno, "socket (%s)", proto);
  if (af == AF_INET6)
    setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  mark_helper_socket (fd);
  if (type == SOCK_STREAM)
    {
      setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      int r = af == AF_INET ? setsockopt (fd, SOL_IP, IP_TRANSPARENT, &one, sizeof one)
                            : setsockopt (fd, SOL_IPV6, IPV6_TRANSPARENT, &one, sizeof one);
      if (r < 0)
        return pr_error_set (err, errno, "transparent egress: IP_TRANSPARENT on %s:%u", where, port);
    }
  int r = af == AF_INET ? bind (fd, (struct sockaddr *) &s4, sizeof s4) : bind (fd, (struct sockaddr *) &s6, sizeof s6);
  if (r < 0 && af == AF_INET6 && errno == EADDRNOTAVAIL)
    return 0;
  if (r < 0 || (type == SOCK_STREAM && listen (fd, 512) < 0))
    return pr_error_set (err, errno, "bind %s:%u (%s) in the container", where, port, proto);
  *fd_out = fd;
  fd = -1;
  return 0;
}

/* One phase's resolver and its connections' target: dns (udp) and tcp on
 * 127.0.0.1 and on [::1] (the rules lead IPv6 DNS to [::1]:dns: a port
 * left free there would be the agent's to answer another phase's queries). */
static int
make_side (uint16_t dns, uint16_t tcp, int dns_fd[2], int tcp_fd[2], pr_error **err)
{
  for (int i = 0; i < 2; i++)
    {
      int af = i == 0 ? AF_INET : AF_INET6;
      if (bind_loopback (af, SOCK_DGRAM, dns, &dns_fd[i], err) < 0
          || bind_loopback (af, SOCK_STREAM, tcp, &tcp_fd[i], err) < 0)
        return -1;
    }
  return 0;
}

/* Transparent mode (on by default, agent not no-network): the routes
 * and rules, then the resolvers and the redirect targets of the agent and
 * of each phase the rules tell apart by its cgroup. */
static int
make_transparent (const struct pr_transparent_cgroups *cg, struct listeners *l, pr_error **err)
{
  if (pr_transparent_setup_netns (cg, err) < 0
      || make_side (PR_TRANSPARENT_DNS_PORT, PR_TRANSPARENT_PORT, l->dns, l->transparent, err) < 0)
    return -1;
  if (cg->verifier.nft_path
      && make_side (PR_TRANSPARENT_VERIFIER_DNS_PORT, PR_TRANSPARENT_VERIFIER_PORT, l->vdns, l->vtransparent, err) < 0)
    return -1;
  if (cg->setup.nft_path
      && make_side (PR_TRANSPARENT_SETUP_DNS_PORT, PR_TRANSPARENT_SETUP_PORT, l->sdns, l->stransparent, err) < 0)
    return -1;
  return 0;
}

static int
make_listeners (const struct pr_policy *p, const struct pr_transparent_cgroups *cg, struct listeners *l,
                pr_error **err)
{
  if (pr_network_transparent (p) && make_transparent (cg, l, err) < 0)
    return -1;
  if (pr_policy_net_mode (p, PR_PHASE_AGENT) != PR_NET_NONE
      && listen_tcp ("127.0.0.1", PR_AGENT_PROXY_PORT, &l->agent, err) < 0)
    return -1;
  /* Bound for the container's whole life when a verifier or setup exec
   * may use it, so the agent can never squat the port. */
  if (phase_proxy_needed (p) && listen_tcp ("127.0.0.1", PR_PHASE_PROXY_PORT, &l->phase, err) < 0)
    return -1;
  l->peers = xmalloc0 ((p->n_peers + 1) * sizeof *l->peers);
  for (size_t i = 0; i < p->n_peers; i++)
    {
      _cleanup_free_ char *addr = pr_network_peer_addr (p, i);
      l->peers[i].peer = &p->peers[i];
      l->peers[i].fd = -1;
      l->n_peers = i + 1;
      if (listen_tcp (addr, p->peers[i].port, &l->peers[i].fd, err) < 0)
        return pr_error_wrap (err, "peer `%s`", p->peers[i].name);
    }
  return 0;
}

/* A socket keeps the namespace it was created in: enter the container's
 * network namespace just long enough to create the listeners. */
static int
listeners_in_netns (const struct pr_policy *p, const struct pr_transparent_cgroups *cg, pid_t pid, struct listeners *l,
                    pr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/ns/net", pid);
  _cleanup_close_ int self = open ("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  _cleanup_close_ int target = open (path, O_RDONLY | O_CLOEXEC);
  if (self < 0 || target < 0)
    return pr_error_set (err, errno, "open network namespace of %d", pid);
  if (setns (target, CLONE_NEWNET) < 0)
    return pr_error_set (err, errno, "enter the container's network namespace");
  /* The init brings lo up too, but later in its own setup: create starts
   * the helper while the init is still setting up (pr_network_begin),
   * and ::1 only exists once lo is up.  Setting IFF_UP twice is a no-op. */
  int r = pr_netlink_lo_up (err);
  if (r == 0)
    r = make_listeners (p, cg, l, err);
  if (setns (self, CLONE_NEWNET) < 0)
    {
      pr_error_set (err, errno, "return to the runtime's network namespace");
      return -1;
    }
  return r;
}

/* ------------------------------------------------------------- lifetime */

/* The files the helper resolves names with.  The host's by default (the
 * helper runs in the host's network namespace, so its resolver is the
 * host's); PROCTOR_EGRESS_RESOLV_CONF and PROCTOR_EGRESS_HOSTS in the
 * runtime's environment replace them, for hosts whose egress should see a
 * different resolver or names than the host (air-gapped mirrors, tests with
 * their own origins).  The engine sets the runtime's environment (podman's
 * conmon_env_vars, a wrapper script), never the container.  A named file
 * that cannot be read fails create here (whose cleanup then removes the
 * container) rather than leaving a container whose helper died. */
struct dns_files
{
  const char *resolv_conf; /* NULL: /etc/resolv.conf */
  const char *hosts;       /* NULL: /etc/hosts */
};

static int
dns_files_from_env (struct dns_files *f, pr_error **err)
{
  const char *const names[] = { "PROCTOR_EGRESS_RESOLV_CONF", "PROCTOR_EGRESS_HOSTS" };
  const char **dst[] = { &f->resolv_conf, &f->hosts };

  for (size_t i = 0; i < 2; i++)
    {
      const char *v = getenv (names[i]);
      *dst[i] = NULL;
      if (v == NULL || *v == '\0')
        continue;
      if (v[0] != '/')
        return pr_error_invalid (err, "%s: `%s` is not an absolute path", names[i], v);
      if (access (v, R_OK) < 0)
        return pr_error_set (err, errno, "%s: `%s`", names[i], v);
      *dst[i] = v;
    }
  return 0;
}

/* The address ranges the operator treats as reachable although the
 * address check would refuse them (an internal mirror, a test origin in a
 * documentation or benchmarking range, a neighbour on the host's own
 * network): PROCTOR_EGRESS_REACHABLE="CIDR[,CIDR...]" in the runtime's
 * environment, like the resolver files above.  Never from a policy or the
 * container.  Saved in the state dir for `rollout status`. */
static int
reachable_from_env (struct pr_reachable *r, pr_error **err)
{
  const char *v = getenv ("PROCTOR_EGRESS_REACHABLE");
  if (pr_reachable_parse (v ? v : "", r, err) < 0)
    return pr_error_wrap (err, "PROCTOR_EGRESS_REACHABLE");
  return 0;
}

/* The sandboxed helper's identity: PROCTOR_EGRESS_USER="uid:gid" in the
 * runtime's environment, default 65534:65534 (nobody:nogroup). */
static int
helper_identity_from_env (uid_t *uid, gid_t *gid, pr_error **err)
{
  const char *v = getenv ("PROCTOR_EGRESS_USER");
  *uid = PR_EGRESS_DEFAULT_UID;
  *gid = PR_EGRESS_DEFAULT_GID;
  if (v == NULL || *v == '\0')
    return 0;
  const char *colon = strchr (v, ':');
  if (colon == NULL || colon == v || !pr_str_is_digits (v, (size_t) (colon - v)) || !pr_str_is_digits (colon + 1, strlen (colon + 1))
      || colon - v > 10 || strlen (colon + 1) > 10)
    return pr_error_invalid (err, "PROCTOR_EGRESS_USER: `%s` is not of the form UID:GID (numbers)", v);
  unsigned long u = strtoul (v, NULL, 10), g = strtoul (colon + 1, NULL, 10);
  if (u > 0xfffffffeUL || g > 0xfffffffeUL)
    return pr_error_invalid (err, "PROCTOR_EGRESS_USER: `%s`: ids must be below 4294967295", v);
  *uid = (uid_t) u;
  *gid = (gid_t) g;
  return 0;
}

struct helper_args
{
  const struct dns_files *dns;
  const struct pr_reachable *reachable;
  uid_t uid;
  gid_t gid;
  int ready_fd;
};

static void __attribute__ ((noreturn))
run_helper (const struct pr_policy *p, pid_t pid, struct listeners *l, int control, const char *state_dir,
            const struct helper_args *a)
{
  pr_error *err = NULL;
  _cleanup_free_ char *log = xasprintf ("%s/%s", state_dir, PR_EGRESS_LOG);
  _cleanup_free_ char *totals = xasprintf ("%s/%s", state_dir, PR_EGRESS_TOTALS);
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  /* An engine waits for the runtime's stdio to close: the helper must not
   * hold it. */
  dup2 (devnull, 0);
  dup2 (devnull, 1);
  dup2 (devnull, 2);
  setsid ();
  signal (SIGPIPE, SIG_IGN);
  prctl (PR_SET_NAME, "proctor-egress");
  struct pr_egress_config cfg = {
    .policy = p,
    .agent_fd = l->agent,
    .verifier_fd = l->phase,
    .peers = l->peers,
    .n_peers = l->n_peers,
    .control_fd = control,
    .dns_fd = { l->dns[0], l->dns[1] },
    .transparent_fd = { l->transparent[0], l->transparent[1] },
    .verifier_dns_fd = { l->vdns[0], l->vdns[1] },
    .verifier_transparent_fd = { l->vtransparent[0], l->vtransparent[1] },
    .setup_dns_fd = { l->sdns[0], l->sdns[1] },
    .setup_transparent_fd = { l->stransparent[0], l->stransparent[1] },
    .log_path = log,
    .totals_path = totals,
    .container_pidfd = pr_sys_pidfd_open (pid, 0),
    .resolv_conf = a->dns->resolv_conf,
    .hosts_file = a->dns->hosts,
    .reachable = a->reachable,
    /* The empty root is mounted on the state dir, inside the helper's own
     * mount namespace: a directory that exists, which nobody else sees
     * change. */
    .sandbox = true,
    .sandbox_dir = state_dir,
    .uid = a->uid,
    .gid = a->gid,
    .ready_fd = a->ready_fd,
  };
  if (pr_egress_run (&cfg, &err) < 0)
    _exit (1);
  _exit (0);
}

static int
write_helper_pid (int state_dirfd, pid_t helper, pr_error **err)
{
  _cleanup_free_ char *text = xasprintf ("%d %llu", helper, pr_proc_start_time (helper));
  return pr_write_file_at (state_dirfd, PR_EGRESS_PID, text, strlen (text), 0600, err);
}

/* Waits (bounded) for the helper's line on the ready pipe: "ok", or the
 * error that stopped its setup or sandbox. */
static int
wait_ready (int fd, pr_error **err)
{
  char buf[512];
  size_t got = 0;
  while (got < sizeof buf - 1)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int r = poll (&p, 1, 10000);
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        return pr_error_set (err, ETIMEDOUT, "egress helper: no word from it within 10 s");
      ssize_t n = read (fd, buf + got, sizeof buf - 1 - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += (size_t) n;
      if (memchr (buf, '\n', got))
        break;
    }
  buf[got] = '\0';
  char *nl = strchr (buf, '\n');
  if (nl)
    *nl = '\0';
  if (strcmp (buf, "ok") == 0)
    return 0;
  return pr_error_set (err, 0, "egress helper did not start: %s", got ? buf : "it exited");
}

/* Forks the egress helper (a double fork: the middle process enters the
 * container's cgroup, then forks run_helper and reports its pid through a
 * pipe).  *ready_r gets the read end of the helper's readiness pipe (the
 * caller's to close).  Returns the helper's pid, or -1 with err set:
 * pipe2/fork errno, the cgroup entry's or the helper's own reason as
 * wait_ready reads it, else ECHILD. */
static pid_t
spawn_helper (const struct pr_policy *p, pid_t pid, struct listeners *l, int control, int state_dirfd,
              const char *state_dir, const char *cgroup_path, struct helper_args *args, int *ready_r,
              pr_error **err)
{
  int pfd[2], rfd[2];
  if (pipe2 (pfd, O_CLOEXEC) < 0)
    {
      pr_error_set (err, errno, "pipe");
      return -1;
    }
  if (pipe2 (rfd, O_CLOEXEC) < 0)
    {
      pr_error_set (err, errno, "pipe");
      close (pfd[0]);
      close (pfd[1]);
      return -1;
    }
  *ready_r = rfd[0];
  args->ready_fd = rfd[1];
  pid_t mid = fork ();
  if (mid < 0)
    {
      pr_error_set (err, errno, "fork the egress helper");
      close (pfd[0]);
      close (pfd[1]);
      close (rfd[1]);
      return -1;
    }
  if (mid == 0)
    {
      /* Double fork: the helper is reparented away from the runtime, which
       * exits when create returns.  The intermediate process joins the
       * container's cgroup first, so the helper is charged to the
       * container from its first allocation (memory, pids, pipe buffers). */
      close (pfd[0]);
      close (rfd[0]);
      pr_error *e = NULL;
      pid_t h = -1;
      if (cgroup_path && pr_cgroup_enter (cgroup_path, getpid (), &e) < 0)
        {
          _cleanup_free_ char *msg = xasprintf ("%s\n", e->msg);
          pr_write_all (rfd[1], msg, strlen (msg));
        }
      else
        h = fork ();
      if (h == 0)
        {
          helper_close_others (l, control, args->ready_fd);
          run_helper (p, pid, l, control, state_dir, args);
        }
      pr_write_all (pfd[1], &h, sizeof h);
      _exit (h < 0);
    }
  close (pfd[1]);
  close (rfd[1]);
  pid_t helper = -1;
  ssize_t n = pr_read_all (pfd[0], &helper, sizeof helper);
  close (pfd[0]);
  waitpid (mid, NULL, 0);
  if (n != sizeof helper || helper <= 0)
    {
      if (wait_ready (*ready_r, err) == 0)
        pr_error_set (err, ECHILD, "start the egress helper");
      return -1;
    }
  return helper;
}

int
pr_network_begin (const struct pr_policy *p, pid_t pid, int state_dirfd, const char *state_dir,
                  const char *cgroup_path, int *ready_fd, pr_error **err)
{
  struct listeners l = { .agent = -1,
                         .phase = -1,
                         .dns = { -1, -1 },
                         .transparent = { -1, -1 },
                         .vdns = { -1, -1 },
                         .vtransparent = { -1, -1 },
                         .sdns = { -1, -1 },
                         .stransparent = { -1, -1 } };
  struct pr_transparent_cgroups cg = { { 0 } };
  struct dns_files dns;
  struct pr_reachable reachable = { 0 };
  struct helper_args args = { .dns = &dns, .reachable = &reachable, .ready_fd = -1 };
  _cleanup_close_ int control = -1, ready_r = -1;
  int ret = -1;
  *ready_fd = -1;
  /* `none` everywhere and no peers: no way out at all, no process of ours. */
  if (!helper_needed (p))
    return 0;
  if (dns_files_from_env (&dns, err) < 0 || reachable_from_env (&reachable, err) < 0
      || helper_identity_from_env (&args.uid, &args.gid, err) < 0)
    return -1;
  _cleanup_free_ char *reach_text = pr_reachable_format (&reachable);
  if (pr_write_file_at (state_dirfd, PR_EGRESS_REACHABLE, reach_text, strlen (reach_text), 0600, err) < 0)
    goto out;
  /* The verifier's and the setup's own ways out: only for a phase that
   * has one, when the container has a cgroup to hang its cgroup from. */
  const char *vname = pr_network_transparent_cgroup (p, PR_PHASE_VERIFIER);
  const char *sname = pr_network_transparent_cgroup (p, PR_PHASE_SETUP);
  if (cgroup_path && vname && pr_transparent_phase_cgroup (cgroup_path, vname, &cg.verifier, err) < 0)
    goto out;
  if (cgroup_path && sname && pr_transparent_phase_cgroup (cgroup_path, sname, &cg.setup, err) < 0)
    goto out;
  if (listeners_in_netns (p, &cg, pid, &l, err) < 0 || listen_unix (state_dirfd, state_dir, &control, err) < 0)
    goto out;
  pid_t helper = spawn_helper (p, pid, &l, control, state_dirfd, state_dir, cgroup_path, &args, &ready_r, err);
  if (helper < 0)
    goto out;
  /* Saved before the wait, so a failed start is still stopped by create's
   * cleanup (pr_network_stop). */
  if (write_helper_pid (state_dirfd, helper, err) < 0)
    goto out;
  *ready_fd = steal_fd (&ready_r);
  ret = 1;
out:
  listeners_close (&l);
  free (cg.verifier.nft_path);
  free (cg.setup.nft_path);
  pr_reachable_free (&reachable);
  return ret;
}

int
pr_network_finish (int ready_fd, pr_error **err)
{
  _cleanup_close_ int fd = ready_fd;
  if (fd < 0)
    return 0;
  return wait_ready (fd, err);
}

/* The helper's pid and start time from egress.pid; false when none. */
static bool
read_helper_pid (int state_dirfd, int *pid, unsigned long long *start)
{
  _cleanup_free_ char *text = NULL;
  if (pr_read_file_at (state_dirfd, PR_EGRESS_PID, &text, NULL, NULL) < 0)
    return false;
  return sscanf (text, "%d %llu", pid, start) == 2 && *pid > 0;
}

pid_t
pr_network_helper_pid (int state_dirfd)
{
  int pid = 0;
  unsigned long long start = 0;
  if (!read_helper_pid (state_dirfd, &pid, &start) || pr_proc_start_time (pid) != start)
    return 0;
  return pid;
}

void
pr_network_stop (int state_dirfd)
{
  int pid = 0;
  unsigned long long start = 0;
  if (!read_helper_pid (state_dirfd, &pid, &start))
    return;
  int pfd = pr_sys_pidfd_open (pid, 0);
  if (pfd < 0)
    return;
  if (pr_proc_start_time (pid) == start)
    {
      pr_sys_pidfd_send_signal (pfd, SIGTERM);
      for (int i = 0; i < 200 && pr_proc_start_time (pid) == start; i++)
        usleep (10000);
      if (pr_proc_start_time (pid) == start)
        pr_sys_pidfd_send_signal (pfd, SIGKILL);
    }
  close (pfd);
}

bool
pr_network_transparent (const struct pr_policy *p)
{
  return p->transparent != PR_TRANSPARENT_OFF && pr_policy_net_mode (p, PR_PHASE_AGENT) != PR_NET_NONE;
}

int
pr_network_check (const struct pr_policy *p, pr_error **err)
{
  return pr_network_transparent (p) ? pr_transparent_available (err) : 0;
}

const char *
pr_network_transparent_cgroup (const struct pr_policy *p, enum pr_phase phase)
{
  if (phase == PR_PHASE_AGENT || !pr_network_transparent (p) || pr_policy_net_mode (p, phase) == PR_NET_NONE)
    return NULL;
  return phase == PR_PHASE_SETUP ? PR_TRANSPARENT_SETUP_CGROUP : PR_TRANSPARENT_VERIFIER_CGROUP;
}

/* ---------------------------------------------------------- environment */

static char *
no_proxy_value (const struct pr_policy *p)
{
  char *v = xstrdup ("localhost,127.0.0.1,::1");
  for (size_t i = 0; i < p->n_peers; i++)
    {
      _cleanup_free_ char *addr = pr_network_peer_addr (p, i);
      char *n = xasprintf ("%s,%s,%s", v, p->peers[i].name, addr);
      free (v);
      v = n;
    }
  return v;
}

char **
pr_network_proxy_env (const struct pr_policy *p, enum pr_phase phase, const char *token, char **env)
{
  for (size_t i = 0; proxy_vars[i]; i++)
    env = pr_env_unset (env, proxy_vars[i]);
  if (env == NULL)
    env = xmalloc0 (sizeof (char *));
  _cleanup_free_ char *no_proxy = no_proxy_value (p);
  if (pr_policy_net_mode (p, phase) == PR_NET_NONE)
    return env;
  _cleanup_free_ char *url = phase == PR_PHASE_AGENT || token == NULL
                                 ? xasprintf ("http://127.0.0.1:%d", PR_AGENT_PROXY_PORT)
                                 : xasprintf ("http://%s@127.0.0.1:%d", token, PR_PHASE_PROXY_PORT);
  static const char *const set[] = { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (set); i++)
    {
      _cleanup_free_ char *kv = xasprintf ("%s=%s", set[i], url);
      env = pr_strv_append (env, kv);
    }
  _cleanup_free_ char *np = xasprintf ("no_proxy=%s", no_proxy);
  _cleanup_free_ char *NP = xasprintf ("NO_PROXY=%s", no_proxy);
  env = pr_strv_append (env, np);
  return pr_strv_append (env, NP);
}

char *
pr_network_new_token (void)
{
  unsigned char raw[16];
  size_t got = 0;
  while (got < sizeof raw)
    {
      ssize_t r = getrandom (raw + got, sizeof raw - got, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        abort ();
      got += r;
    }
  char *hex = xmalloc (2 * sizeof raw + 1);
  for (size_t i = 0; i < sizeof raw; i++)
    sprintf (hex + 2 * i, "%02x", raw[i]);
  return hex;
}

int
pr_network_register (const char *state_dir, enum pr_phase phase, const char *token, pid_t pid, pr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", state_dir, PR_EGRESS_SOCK);
  return pr_egress_open_token (path, phase, token, pid, err);
}

char *
pr_network_hosts_lines (const struct pr_policy *p)
{
  char *text = xstrdup ("");
  for (size_t i = 0; i < p->n_peers; i++)
    {
      _cleanup_free_ char *addr = pr_network_peer_addr (p, i);
      char *next = xasprintf ("%s%s\t%s\n", text, addr, p->peers[i].name);
      free (text);
      text = next;
    }
  return text;
}

int
pr_network_write_hosts (const struct pr_policy *p, int rootfd, pr_error **err)
{
  if (p->n_peers == 0)
    return 0;
  _cleanup_close_ int dir = -1;
  if (pr_safe_mkdir_p (rootfd, "/etc", 0755, &dir, err) < 0)
    return -1;
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", dir);
  _cleanup_close_ int etc = open (path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (etc < 0)
    return pr_error_set (err, errno, "open /etc in the rootfs");
  _cleanup_close_ int fd = openat (etc, "hosts", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return pr_error_set (err, errno, "open /etc/hosts in the rootfs");
  _cleanup_free_ char *lines = pr_network_hosts_lines (p);
  if (pr_write_all (fd, lines, strlen (lines)) < 0)
    return pr_error_set (err, errno, "write /etc/hosts");
  return 0;
}
