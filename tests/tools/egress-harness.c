/* egress-harness.c - runs the egress helper (pr_egress_run) on loopback
 * listeners for the tests: what `create` does for a rollout, minus the
 * container network namespace.  Test-only; never installed.
 *
 * usage: egress-harness --policy FILE [--agent ADDR:PORT] [--verifier ADDR:PORT]
 *          [--peer-addr ADDR] [--control PATH] [--log PATH] [--hosts FILE]
 *          [--resolv FILE] [--watch-pid PID] [--ready-file PATH]
 *        egress-harness --open-token CONTROL PHASE TOKEN PID
 * Port 0 picks a free port; the ready file (written once everything
 * listens) then holds "agent=PORT" / "verifier=PORT" lines.  Each policy
 * peer listens on --peer-addr (default 127.0.0.1) at its own port.
 * --open-token runs pr_egress_open_token and exits 0, or 1 with the error. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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
    { "open-token", no_argument, NULL, 'o' },     { NULL, 0, NULL, 0 },
  };
  const char *policy_path = NULL, *agent = NULL, *verifier = NULL, *peer_addr = "127.0.0.1";
  const char *control = NULL, *ready = NULL;
  struct pr_egress_config cfg = { .agent_fd = -1, .verifier_fd = -1, .control_fd = -1, .container_pidfd = -1 };
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
  if (pr_egress_run (&cfg, &err) < 0)
    return die (err);
  free (cfg.peers);
  return 0;
}
