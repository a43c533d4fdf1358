/* network.h - a rollout's way out (SPEC section 2 "Network"): listeners
 * created inside the container's fresh network namespace and handed to the
 * egress helper (egress/egress.h), which runs outside the container's pid
 * and network namespaces and ends with the container; proxy variables and
 * per-exec tokens for each phase; peer names in the container's hosts file.
 *
 * Addresses inside the container: agent proxy 127.0.0.1:3128, verifier and
 * setup proxy 127.0.0.1:3129 (token-gated), peers 127.0.0.N:port (N = 1,
 * or the next free loopback address when two peers share a port). */
#ifndef PROCTOR_NETWORK_H
#define PROCTOR_NETWORK_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy.h"
#include "../base/error.h"

#define PR_AGENT_PROXY_PORT 3128
#define PR_PHASE_PROXY_PORT 3129
#define PR_EGRESS_LOG "egress.log"
#define PR_EGRESS_TOTALS "egress.totals"
#define PR_EGRESS_SOCK "egress.sock"
#define PR_EGRESS_PID "egress.pid"
#define PR_EGRESS_REACHABLE "egress.reachable"

/* Starts the egress helper for a container whose init is pid, as soon as
 * the init exists in its final network namespace (it may still be
 * setting up its mounts: create overlaps the two): brings lo up in that
 * namespace, creates the listeners there, the control socket in the state
 * directory (state_dir is its absolute path), and forks the helper (its
 * pid and start time go to egress.pid, so a failed create's cleanup,
 * pr_network_stop, finds it) into the container's cgroup cgroup_path
 * (NULL: stays in the runtime's), to set itself up and sandbox itself
 * (egress.h pr_egress_sandbox) as PROCTOR_EGRESS_USER (uid:gid, default
 * 65534:65534).  *ready_fd gets the read end of its readiness pipe, for
 * pr_network_finish, or -1.  Starts nothing (returns 0) when every
 * phase's mode is none and there are no peers; 1 when it started one.
 * The helper resolves names with /etc/resolv.conf and /etc/hosts, or the
 * files PROCTOR_EGRESS_RESOLV_CONF and PROCTOR_EGRESS_HOSTS in the
 * environment name; PROCTOR_EGRESS_REACHABLE="CIDR[,CIDR...]" names
 * address ranges it treats as reachable (hostcheck.h), saved normalised in
 * egress.reachable.  Errors: EINVAL when one of those files is not an
 * absolute path or the ranges do not parse (pr_reachable_parse), the
 * access(2) errno when a file cannot be read; netlink errno bringing lo
 * up; setns/socket/bind errnos naming the address; fork errno; "egress
 * helper did not start: REASON" when its cgroup entry failed. */
int pr_network_begin (const struct pr_policy *p, pid_t pid, int state_dirfd, const char *state_dir,
                      const char *cgroup_path, int *ready_fd, pr_error **err);

/* Waits until the helper pr_network_begin started says it is set up and
 * sandboxed, reading ready_fd (closed; -1: no helper, returns 0).
 * Errors: "egress helper did not start: REASON" when its setup or sandbox
 * failed (REASON "it exited" when it said nothing), ETIMEDOUT when it
 * says nothing within 10 s. */
int pr_network_finish (int ready_fd, pr_error **err);

/* At create, before anything is made for the rollout: whether the host
 * has what the policy's network needs, libnftables when transparent
 * egress is on (pr_network_transparent).  0 when nothing is needed.
 * Errors: those of pr_transparent_available (transparent.h). */
int pr_network_check (const struct pr_policy *p, pr_error **err);

/* Whether the policy turns transparent egress on: an agent phase that is
 * not no-network and no "network": {"transparent": false} (on by
 * default, docs/rollout.md "Transparent egress"). */
bool pr_network_transparent (const struct pr_policy *p);

/* The cgroup (a child of the container's in the cgroup2 hierarchy,
 * transparent.h) that a session of phase joins so that transparent egress
 * judges its sockets by phase's policy: PR_TRANSPARENT_VERIFIER_CGROUP or
 * PR_TRANSPARENT_SETUP_CGROUP; NULL for the agent, when transparent mode
 * is off, or when phase has no way out (it is then judged as the agent,
 * as with the agent's proxy on 3128 that it can dial too). */
const char *pr_network_transparent_cgroup (const struct pr_policy *p, enum pr_phase phase);

/* Stops the helper (SIGTERM, then SIGKILL after 2 s) if egress.pid names a
 * live process.  Never fails. */
void pr_network_stop (int state_dirfd);

/* The running helper's pid (egress.pid, checked against the process's
 * start time), or 0 when there is none. */
pid_t pr_network_helper_pid (int state_dirfd);

/* Rewrites env for a phase: removes any proxy variables, then, unless the
 * phase's mode is none, sets http_proxy, https_proxy, HTTP_PROXY,
 * HTTPS_PROXY (agent: http://127.0.0.1:3128; setup/verifier:
 * http://TOKEN@127.0.0.1:3129) and no_proxy/NO_PROXY (localhost, loopback
 * and peer names).  token may be NULL for the agent.  Returns the new
 * vector (env is consumed). */
char **pr_network_proxy_env (const struct pr_policy *p, enum pr_phase phase, const char *token, char **env);

/* A fresh random token (32 hex digits, getrandom(2)), malloc'd. */
char *pr_network_new_token (void);

/* Registers token for phase with the container's helper, live until pid
 * exits.  Errors: from pr_egress_open_token. */
int pr_network_register (const char *state_dir, enum pr_phase phase, const char *token, pid_t pid, pr_error **err);

/* The loopback address of peer i ("127.0.0.N"), malloc'd. */
char *pr_network_peer_addr (const struct pr_policy *p, size_t i);

/* The "ADDR\tNAME\n" lines, one per peer, that pr_network_write_hosts
 * appends to the container's hosts file ("" without peers), malloc'd:
 * netfiles.c appends the same to its create-time copy.  Never fails. */
char *pr_network_hosts_lines (const struct pr_policy *p);

/* Appends "ADDR NAME" lines for each peer to the hosts file reached by
 * path inside rootfd (in the container's own mount namespace, before
 * pivot_root, so the engine's bind-mounted hosts file gets them and no new
 * mount shows up in mountinfo).  A missing file is created.  Errors:
 * open/write errnos. */
int pr_network_write_hosts (const struct pr_policy *p, int rootfd, pr_error **err);

#endif
