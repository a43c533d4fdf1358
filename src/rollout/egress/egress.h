/* egress.h - the egress helper: one process per rollout container, started
 * by `create` outside the container's pid and network namespaces, serving
 * HTTP forward proxy requests and CONNECT tunnels on listening sockets that
 * were created INSIDE the container's network namespace (a socket keeps the
 * namespace it was created in), and splicing declared peers.
 *
 * Listeners (all already bound and listening when handed over):
 *   agent_fd     127.0.0.1:3128 in the container: agent and setup sessions,
 *                under the agent policy (-1 when the agent mode is none).
 *   verifier_fd  127.0.0.1:3129: bound for the container's whole life so the
 *                agent cannot squat it; a request is served only while a
 *                token registered over the control socket is live and the
 *                request carries it (Proxy-Authorization Basic, user = token,
 *                or the userinfo of the proxy URL, which curl/apt turn into
 *                that header), under that token's phase policy.
 *   peers[i].fd  127.0.0.x:port for each peer: spliced raw to the target.
 * Control socket: a unix stream socket the runtime's exec connects to, one
 * JSON line per command:
 *   {"cmd":"open","phase":"verifier"|"setup","token":"HEX","pid":N}
 *     the token is live until process N (watched with a pidfd) exits;
 *   {"cmd":"close","token":"HEX"}
 * answered with one line {"ok":true} or {"ok":false,"error":"..."}.
 * Decision log (declog.c), appended to log_path, at most 1 MiB:
 *   {"time":"RFC3339","phase":"agent","method":"CONNECT","host":"h","port":443,
 *    "decision":"allow"|"deny","reason":"...","bytes_up":N,"bytes_down":N,
 *    "count":N,"last":"RFC3339"}
 * (a line folds count decisions of one key, from time to last); per-phase
 * totals, fixed-width lines rewritten in place, in totals_path.
 * Destinations: only addresses on the internet (hostcheck.h: the IANA
 * special-purpose ranges, the host's own addresses, on-link networks and
 * gateways are refused unless cfg->reachable names them), checked on every
 * resolved address before connect; ports 80, 443 and the phase's
 * allowed_ports; a CONNECT to 443 must open with a ClientHello naming its
 * host (tlshello.h); no CONNECT to 80; a forward request's Host must name
 * its target.
 * Source: SPEC section 2 "Network"; RFC 9110 (CONNECT, absolute-form),
 * RFC 9112 (message framing), RFC 6890 and RFC 8190 (special-purpose
 * addresses), RFC 6066 (server_name). */
#ifndef PROCTOR_EGRESS_H
#define PROCTOR_EGRESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "../../base/error.h"
#include "../policy.h"
#include "hostcheck.h"

struct pr_egress_peer_listener
{
  const struct pr_peer *peer;
  int fd; /* listening socket inside the container netns */
};

struct pr_egress_config
{
  const struct pr_policy *policy;  /* phases' network_mode/allowed_hosts, peers */
  int agent_fd;
  int verifier_fd;
  struct pr_egress_peer_listener *peers;
  size_t n_peers;
  int control_fd;                  /* listening unix socket (control protocol) */
  int dns_fd[2];                   /* transparent mode: UDP 127.0.0.1:53, [::1]:53 in the container netns; -1 = none */
  int transparent_fd[2];           /* transparent mode: TCP 127.0.0.1:3127, [::1]:3127; -1 = none */
  int verifier_dns_fd[2];          /* the verifier's resolver, UDP 127.0.0.1:5354, [::1]:5354; -1 = none */
  int verifier_transparent_fd[2];  /* the verifier's TCP 127.0.0.1:3126, [::1]:3126; -1 = none */
  int setup_dns_fd[2];             /* the setup's resolver, UDP 127.0.0.1:5355, [::1]:5355; -1 = none */
  int setup_transparent_fd[2];     /* the setup's TCP 127.0.0.1:3125, [::1]:3125; -1 = none */
  const char *log_path;            /* decision log (append) */
  const char *totals_path;         /* per-phase totals (rewritten in place); NULL = none */
  int container_pidfd;             /* the helper exits when this process exits; -1 = never */
  const char *resolv_conf;         /* host resolver config for evdns (NULL = /etc/resolv.conf) */
  const char *hosts_file;          /* host name overrides for evdns (NULL = /etc/hosts) */
  const struct pr_reachable *reachable; /* ranges the operator treats as reachable (NULL = none) */
  bool sandbox;                    /* enter the sandbox (sandbox.c) once everything is open */
  uid_t uid;                       /* the sandbox's uid and gid */
  gid_t gid;
  const char *sandbox_dir;         /* an existing directory to mount the empty root on (NULL = /tmp) */
  int ready_fd;                    /* written "ok\n" or the setup error, then closed; -1 = none */
};

/* The default identity of the sandboxed helper (overridable with
 * PROCTOR_EGRESS_USER=uid:gid in the runtime's environment). */
#define PR_EGRESS_DEFAULT_UID 65534
#define PR_EGRESS_DEFAULT_GID 65534

/* Runs the helper's event loop (libevent) until the container process
 * exits or SIGTERM arrives; then closes everything and returns 0.  With
 * cfg->sandbox, the loop runs sandboxed (pr_egress_sandbox).  cfg->ready_fd
 * learns whether setup succeeded.  Errors: event base/evdns/log/netlink
 * setup or sandbox failure (before serving anything). */
int pr_egress_run (const struct pr_egress_config *cfg, pr_error **err);

/* Enters the sandbox: no_new_privs, an empty read-only root in a mount
 * namespace of its own (mounted on cfg->sandbox_dir), no capabilities in
 * any set, cfg->uid/gid with no supplementary groups, and a seccomp
 * allowlist whose default action kills the process.  Needs
 * CAP_SYS_ADMIN, CAP_SETUID/SETGID and CAP_SETPCAP (the runtime's root).
 * Errors: the failing step's errno, naming it. */
int pr_egress_sandbox (const struct pr_egress_config *cfg, pr_error **err);

/* Registers a live token for a phase with a running helper through its
 * control socket at path; the token stays live until pid exits.  Errors:
 * connect/write errno; the helper's {"ok":false} reason. */
int pr_egress_open_token (const char *control_path, enum pr_phase phase, const char *token, pid_t pid,
                          pr_error **err);

#endif
