/* egress-harness.c - runs the egress helper (pr_egress_run) on loopback
 * listeners for the tests: what `create` does for a rollout, minus the
 * container network namespace.  Test-only; never installed.
 *
 * usage: egress-harness --policy FILE [--agent ADDR:PORT] [--verifier ADDR:PORT]
 *          [--peer-addr ADDR] [--control PATH] [--log PATH] [--hosts FILE]
 *          [--resolv FILE] [--reachable CIDR[,CIDR...]] [--totals PATH] [--watch-pid PID]
 *          [--ready-file PATH] [--sandbox DIR [--user UID:GID]]
 *        egress-harness --open-token CONTROL PHASE TOKEN PID
 * Port 0 picks a free port; the ready file (written once everything
 * listens) then holds "agent=PORT" / "verifier=PORT" lines.  Each policy
 * peer listens on --peer-addr (default 127.0.0.1) at its own port.
 * --reachable is what PROCTOR_EGRESS_REACHABLE gives the helper under create.
 * --sandbox runs the loop sandboxed as create does (pr_egress_sandbox, the
 * empty root mounted on DIR), as UID:GID (default 65534:65534).
 * Test-only fault trigger: SIGUSR2 makes the (sandboxed) helper call
 * mkdirat(2), outside the seccomp allowlist: the filter must kill it
 * (exit by SIGSYS); were it to survive, it exits 3.  It lives in this
 * test program, never in the installed runtime.
 * --open-token runs pr_egress_open_token and exits 0, or 1 with the error. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../src/base/error.h"
#include "../../src/base/syscall.h"
#include "../../src/base/util.h"
#include "../../src/rollout/egress/egress.h"
#include "../../src/rollout/policy.h"

static int
die (pr_error *err)
{
  fprintf (stderr, "egress-harness: %s\n", err ? err->msg : "error");
  return 1;
}

static int
listen_tcp (const char *spec, uint16_t default_port, uint16_t *bound, pr_error **err)
{
  struct sockaddr_in sin = { .sin_family = AF_INET };
  char host[64];
  const char *colon = strrchr (spec, ':');
  unsigned port = default_port;
  socklen_t len = sizeof sin;
  int one = 1;

  if (colon)
    {
      snprintf (host, sizeof host, "%.*s", (int) (colon - spec), spec);
      port = atoi (colon + 1);
    }
  else
    snprintf (host, sizeof host, "%s", spec);
  if (inet_pton (AF_INET, host, &sin.sin_addr) != 1)
    return pr_error_set (err, EINVAL, "bad listen address `%s`", spec);
  sin.sin_port = htons (port);
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "socket");
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (fd, (struct sockaddr *) &sin, sizeof sin) < 0 || listen (fd, 1024) < 0)
    {
      close (fd);
      return pr_error_set (err, errno, "listen on `%s`", spec);
    }
  getsockname (fd, (struct sockaddr *) &sin, &len);
  if (bound)
    *bound = ntohs (sin.sin_port);
  return fd;
}

static int
listen_unix (const char *path, pr_error **err)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };

  if (strlen (path) >= sizeof sun.sun_path)
    return pr_error_set (err, ENAMETOOLONG, "control path `%s`", path);
  strcpy (sun.sun_path, path);
  unlink (path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "socket");
  if (bind (fd, (struct sockaddr *) &sun, sizeof sun) < 0 || listen (fd, 16) < 0)
    {
      close (fd);
      return pr_error_set (err, errno, "listen on `%s`", path);
    }
  return fd;
}

static void
fault_syscall (int sig)
{
  syscall (SYS_mkdirat, AT_FDCWD, "fault-injection", 0700);
  static const char msg[] = "egress-harness: mkdirat was not stopped by the sandbox\n";
  if (write (2, msg, sizeof msg - 1) < 0)
    _exit (4);
  _exit (3);
}

static int
open_token (char **argv)
{
  pr_error *err = NULL;
  enum pr_phase ph = strcmp (argv[1], "setup") == 0 ? PR_PHASE_SETUP
                     : strcmp (argv[1], "verifier") == 0 ? PR_PHASE_VERIFIER
                                                          : PR_PHASE_AGENT;
  if (pr_egress_open_token (argv[0], ph, argv[2], atoi (argv[3]), &err) < 0)
    return die (err);
  return 0;
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "policy", required_argument, NULL, 'p' },   { "agent", required_argument, NULL, 'a' },
    { "verifier", required_argument, NULL, 'v' }, { "peer-addr", required_argument, NULL, 'P' },
    { "control", required_argument, NULL, 'c' },  { "log", required_argument, NULL, 'l' },
    { "hosts", required_argument, NULL, 'H' },    { "resolv", required_argument, NULL, 'r' },
    { "watch-pid", required_argument, NULL, 'w' }, { "ready-file", required_argument, NULL, 'R' },
    { "open-token", no_argument, NULL, 'o' },     { "reachable", required_argument, NULL, 'A' },
    { "totals", required_argument, NULL, 'T' },   { "sandbox", required_argument, NULL, 'S' },
    { "user", required_argument, NULL, 'U' },
    { NULL, 0, NULL, 0 },
  };
  const char *policy_path = NULL, *agent = NULL, *verifier = NULL, *peer_addr = "127.0.0.1";
  const char *control = NULL, *ready = NULL, *reachable_text = "";
  struct pr_reachable reachable = { 0 };
  struct pr_egress_config cfg = { .agent_fd = -1, .verifier_fd = -1, .control_fd = -1, .dns_fd = { -1, -1 }, .transparent_fd = { -1, -1 }, .verifier_dns_fd = { -1, -1 }, .verifier_transparent_fd = { -1, -1 }, .setup_dns_fd = { -1, -1 }, .setup_transparent_fd = { -1, -1 }, .container_pidfd = -1,
                                  .ready_fd = -1, .uid = PR_EGRESS_DEFAULT_UID, .gid = PR_EGRESS_DEFAULT_GID };
  _cleanup_policy_ struct pr_policy *policy = NULL;
  pr_error *err = NULL;
  uint16_t agent_port = 0, verifier_port = 0;
  int c;

  while ((c = getopt_long (argc, argv, "", opts, NULL)) != -1)
    switch (c)
      {
      case 'p': policy_path = optarg; break;
      case 'a': agent = optarg; break;
      case 'v': verifier = optarg; break;
      case 'P': peer_addr = optarg; break;
      case 'c': control = optarg; break;
      case 'l': cfg.log_path = optarg; break;
      case 'H': cfg.hosts_file = optarg; break;
      case 'r': cfg.resolv_conf = optarg; break;
      case 'R': ready = optarg; break;
      case 'A': reachable_text = optarg; break;
      case 'T': cfg.totals_path = optarg; break;
      case 'S': cfg.sandbox = true; cfg.sandbox_dir = optarg; break;
      case 'U':
        {
          unsigned u, g;
          if (sscanf (optarg, "%u:%u", &u, &g) != 2)
            return fprintf (stderr, "egress-harness: --user UID:GID\n"), 2;
          cfg.uid = u;
          cfg.gid = g;
          break;
        }
      case 'w':
        cfg.container_pidfd = pr_sys_pidfd_open (atoi (optarg), 0);
        if (cfg.container_pidfd < 0)
          return perror ("pidfd_open"), 1;
        break;
      case 'o':
        if (argc - optind != 4)
          return fprintf (stderr, "usage: egress-harness --open-token CONTROL PHASE TOKEN PID\n"), 2;
        return open_token (argv + optind);
      default:
        return 2;
      }
  if (policy_path == NULL)
    return fprintf (stderr, "egress-harness: --policy FILE is required\n"), 2;

  _cleanup_free_ char *abs = realpath (policy_path, NULL);
  if (abs == NULL)
    return fprintf (stderr, "egress-harness: %s: %s\n", policy_path, strerror (errno)), 1;
  _cleanup_free_ char *pv = xasprintf ("@%s", abs);
  if (pr_policy_load (pv, &policy, &err) < 0)
    return die (err);
  cfg.policy = policy;
  if (pr_reachable_parse (reachable_text, &reachable, &err) < 0)
    return die (err);
  cfg.reachable = &reachable;
  if (agent && (cfg.agent_fd = listen_tcp (agent, 3128, &agent_port, &err)) < 0)
    return die (err);
  if (verifier && (cfg.verifier_fd = listen_tcp (verifier, 3129, &verifier_port, &err)) < 0)
    return die (err);
  if (control && (cfg.control_fd = listen_unix (control, &err)) < 0)
    return die (err);
  cfg.n_peers = policy->n_peers;
  cfg.peers = xmalloc0 (sizeof *cfg.peers * (policy->n_peers + 1));
  for (size_t i = 0; i < policy->n_peers; i++)
    {
      _cleanup_free_ char *spec = xasprintf ("%s:%u", peer_addr, policy->peers[i].port);
      cfg.peers[i].peer = &policy->peers[i];
      if ((cfg.peers[i].fd = listen_tcp (spec, 0, NULL, &err)) < 0)
        return die (err);
    }

  if (ready)
    {
      _cleanup_free_ char *tmp = xasprintf ("%s.tmp", ready);
      _cleanup_free_ char *txt = xasprintf ("agent=%u\nverifier=%u\n", agent_port, verifier_port);
      if (pr_write_file (tmp, txt, strlen (txt), &err) < 0 || rename (tmp, ready) < 0)
        return die (err);
    }
  struct sigaction sa = { .sa_handler = fault_syscall };
  sigaction (SIGUSR2, &sa, NULL);
  if (pr_egress_run (&cfg, &err) < 0)
    return die (err);
  free (cfg.peers);
  pr_reachable_free (&reachable);
  return 0;
}
