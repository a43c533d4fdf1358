/* lifecycle.h - where the rollout enters the container lifecycle.  The
 * lifecycle (src/lifecycle) calls these at named points and holds no
 * rollout rule of its own (tests/tools/check-rollout-seam.py):
 *   create:  pr_rollout_config (the config rewrite), pr_rollout_nests_pidns,
 *            in the init pr_rollout_init_network and pr_rollout_init_rootfs,
 *            pr_rollout_network_begin, pr_rollout_container_started,
 *            pr_rollout_ready; on a failed
 *            create pr_rollout_create_failed
 *   exec:    pr_rollout_exec_plan and the pr_rollout_exec_* steps
 *   delete:  pr_rollout_stop (before the cgroup goes), pr_rollout_delete
 * For a container that is not a rollout (rollout == NULL) every call is a
 * no-op that answers "as for any container" (SPEC section 2,
 * docs/rollout.md). */
#ifndef PROCTOR_ROLLOUT_LIFECYCLE_H
#define PROCTOR_ROLLOUT_LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "phase.h"
#include "rollout.h"
#include "verifier.h"
#include "../base/error.h"
#include "../config/config.h"

/* ------------------------------------------------------------- create */

/* On the config, at create, before any namespace exists: when cfg is a
 * rollout (pr_rollout_policy_source with policy_file, the
 * --rollout-policy FILE or NULL) rewrites it and writes the rollout state
 * (pr_rollout_create); *out = the rollout, or NULL for a plain container.
 * Errors: those of pr_rollout_create. */
int pr_rollout_config (struct pr_config *cfg, const char *policy_file, const char *rootfs, int state_dirfd,
                       struct pr_rollout **out, pr_error **err);

/* Whether the container gets an outer init and the agent's pid namespace
 * nested in its own (rollout/procs.h): a rollout whose config makes a new
 * pid namespace (new_flags: the CLONE_NEW* flags create will use). */
bool pr_rollout_nests_pidns (const struct pr_rollout *r, int new_flags);

/* Inside the container's init, in its namespaces, before the rootfs is
 * prepared: a rollout's network namespace is fresh (only lo), and lo must
 * be up for the egress proxy and peers on 127.0.0.1.  Errors: those of
 * pr_netlink_lo_up. */
int pr_rollout_init_network (const struct pr_rollout *r, pr_error **err);

/* Inside the container's init, after the rootfs is prepared (rootfs: its
 * host path, as the init sees it before pivot_root): peer names go into
 * the hosts file the container will see (the engine's bind mount is in
 * place by now), so no extra mount shows in mountinfo.  Errors: errno
 * "open rootfs `PATH`", pr_network_write_hosts's. */
int pr_rollout_init_rootfs (const struct pr_rollout *r, const char *rootfs, pr_error **err);

/* The runtime side, once the container process reported (the outer init,
 * when nested, has forked it): records its host pid for agent execs
 * (pr_procs_save_agent_init from init_pid, the outer init) when nested,
 * *agent_init = that pid.  Errors: those of pr_procs_save_agent_init. */
int pr_rollout_container_started (bool nested, int state_dirfd, pid_t init_pid, pid_t *agent_init, pr_error **err);

/* As soon as the init's pid is known (its namespaces are final; it goes
 * on setting itself up meanwhile): starts the egress helper for a rollout
 * (pr_network_begin; state_dir: the path of state_dirfd; cgroup_path: the
 * container's cgroup, or NULL).  *ready_fd gets what pr_rollout_ready
 * waits on, or -1.  Returns 0, or -1 on error (pr_network_begin's). */
int pr_rollout_network_begin (const struct pr_rollout *r, pid_t init_pid, int state_dirfd, const char *state_dir,
                              const char *cgroup_path, int *ready_fd, pr_error **err);

/* When the container is ready (created, before its pid file is written):
 * waits for the helper pr_rollout_network_begin started (ready_fd, closed
 * here; pr_network_finish) and shields the runtime's processes from the
 * OOM killer (pr_oomshield_apply).  Returns 1 for a rollout, 0 for a
 * plain container, -1 on error (pr_network_finish's, pr_oomshield_apply's). */
int pr_rollout_ready (const struct pr_rollout *r, pid_t init_pid, int state_dirfd, const char *cgroup_path,
                      int ready_fd, pr_error **err);

/* A failed create, after its processes are gone: stops the egress helper
 * and puts the hidden paths back; problems are warnings (pr_warn), since
 * the create already failed. */
void pr_rollout_create_failed (const struct pr_rollout *r, int state_dirfd, const char *rootfs);

/* ------------------------------------------------------------- delete */

/* On delete, before the container's cgroup is removed: stops the egress
 * helper, which runs in that cgroup, with SIGTERM, so it writes its folded
 * log lines and totals.  Nothing to do for a plain container. */
void pr_rollout_stop (int state_dirfd);

/* On delete, after the poststop hooks: puts the hidden paths back
 * (pr_rollout_restore_hidden; nothing for a plain container).  Errors:
 * those of pr_rollout_restore_hidden. */
int pr_rollout_delete (int state_dirfd, const char *rootfs, pr_error **err);

/* On delete, after the container's cgroup is removed (cgroup_path): kills
 * what is left of the verifier and setup sessions' own cgroup and removes
 * it (pr_budget_destroy, budget.h; nothing when there is none, as for a
 * plain container), then the transparent phase cgroups
 * (pr_transparent_remove_phase_cgroups).  Also called by create's cleanup.
 * Errors: those of pr_budget_destroy. */
int pr_rollout_delete_cgroup (const char *cgroup_path, pr_error **err);

/* ----------------------------------------------------------------- ps */

/* For ps (pr_container_ps, libcrun_container_read_pids): removes the
 * egress helper's pid (the state directory's PR_EGRESS_PID) from pids, n
 * entries, *n updated.  The helper runs in the container's cgroup (it is
 * charged to the container) but is none of the container's processes:
 * engines list and signal what ps prints.  Nothing to remove for a plain
 * container or an unreadable pid file. */
void pr_rollout_ps_filter (int state_dirfd, pid_t *pids, size_t *n);

/* --------------------------------------------------------------- exec */

struct pr_rollout_exec_plan
{
  struct pr_rollout *rollout;   /* NULL unless the container is a rollout */
  enum pr_phase phase;
  struct pr_verifier_view view; /* the verifier's mounts (verifier only) */
  char *token;                  /* setup/verifier egress token, or NULL */
  char *state_dir;              /* the container's state directory (rollout only) */
  pid_t agent_init;             /* host pid of the container process when the */
                                /* rollout nests the agent's pid namespace, else 0 */
};

/* Plans an exec (the runtime side, before anything is forked): loads the
 * rollout state of the container in state_dirfd (rootfs: its absolute
 * rootfs; state_dir: the path of state_dirfd; id: the container's id for
 * messages; init_pid: the state pid), decides the phase and rewrites *p
 * for it (pr_rollout_exec_prepare: user, HOME, env, capabilities), sweeps
 * the agent's processes before a verifier session when the policy says so
 * (verifier.agent_processes), opens the verifier's view, and for setup and
 * verifier sessions with egress makes a token and puts the proxy
 * environment into p->env.  *plan must be zeroed; on error it holds what
 * was made so far (free it with pr_rollout_exec_plan_free).  Errors: those
 * of pr_rollout_load, pr_rollout_exec_prepare, pr_procs_agent_init
 * (wrapped "cannot exec in container `ID`"), pr_procs_agent_processes
 * (wrapped "verifier.agent_processes"), pr_verifier_view_open; "container
 * `ID` has no agent pid namespace" when agent_processes is set for a
 * container an older proctor created. */
int pr_rollout_exec_plan (int state_dirfd, const char *rootfs, const char *state_dir, const char *id,
                          pid_t init_pid, struct pr_process *p, struct pr_rollout_exec_plan *plan,
                          pr_error **err);

/* Whether the exec gets a user namespace of its own (a sibling of the
 * container's, with the same id map, that the runtime writes through the
 * child link's id-map handshake) instead of joining the container's: the
 * verifier, so that agent root holds no capability over it. */
bool pr_rollout_exec_own_userns (const struct pr_rollout_exec_plan *plan);

/* The host pid whose pid namespace the exec joins instead of the state
 * pid's: the agent's init for an agent exec into a rollout that nests the
 * agent's pid namespace (procs.h), else 0 (the state pid's). */
pid_t pr_rollout_exec_pidns_pid (const struct pr_rollout_exec_plan *plan);

/* Whether the exec needs a pid namespace other than the runtime's (a
 * rollout that nests the agent's): the lifecycle refuses the exec when
 * the container's pid namespace is the runtime's. */
bool pr_rollout_exec_needs_pidns (const struct pr_rollout_exec_plan *plan);

/* Whether the exec's process must wait for the runtime's go (after
 * pr_rollout_exec_started) before it runs the command: its egress token
 * must be live at the helper first. */
bool pr_rollout_exec_holds_start (const struct pr_rollout_exec_plan *plan);

/* A verifier or setup session under transparent egress: moves pid into
 * its phase's cgroup (pr_network_transparent_cgroup, transparent.h) in
 * the cgroup2 hierarchy only, after pr_rollout_exec_enter_cgroup placed
 * it everywhere (on a hybrid host the cgroup2 hierarchy carries no
 * controller, so its budget stays).  Returns 0 (nothing to do or done).
 * Errors: those of pr_transparent_enter_phase_cgroup. */
int pr_rollout_exec_transparent_cgroup (const struct pr_rollout_exec_plan *plan, const char *cgroup_path, pid_t pid,
                                        pr_error **err);

/* The runtime side, the joiner pid forked, before its go: a setup or
 * verifier session goes into its own cgroup next to the container's
 * cgroup_path, with the policy's budget (pr_budget_enter, budget.h);
 * returns 1 then, 0 when the lifecycle places pid as for any exec (an
 * agent session, a plain container), -1 on error (pr_budget_enter's). */
int pr_rollout_exec_enter_cgroup (const struct pr_rollout_exec_plan *plan, const char *cgroup_path, pid_t pid,
                                  pr_error **err);

/* A verifier session, after pr_rollout_exec_enter_cgroup and
 * pr_rollout_exec_transparent_cgroup placed the joiner pid: moves pid
 * into a cgroup2 child of its own (pr_budget_session_enter, budget.h),
 * so that what it starts (setsid, double fork) stays findable.  Returns
 * the child's directory (malloc'd), or NULL: not a verifier session
 * (err untouched; setup sessions may leave services behind on purpose),
 * or an error (pr_budget_session_enter's, *err set). */
char *pr_rollout_exec_session_cgroup (const struct pr_rollout_exec_plan *plan, pid_t pid, pr_error **err);

/* Once the session's process pid runs: a watcher kills everything in dir
 * when pid ends (pr_budget_session_watch); dir NULL: nothing.  No errors. */
void pr_rollout_exec_watch_session (const char *dir, pid_t pid);

/* After pr_rollout_exec_enter_cgroup returned 1 and the exec then failed
 * in the runtime: removes the session's cgroup when nothing is left in it
 * (pr_budget_release). */
void pr_rollout_exec_failed_cgroup (const struct pr_rollout_exec_plan *plan, const char *cgroup_path);

/* In the joiner, still the host's root in the host's mount namespace,
 * before it joins anything (pidns_fd: the pid namespace it will join):
 * a session out of the agent's reach (setup or verifier in a nested
 * rollout) makes its procfs here, *proc_fd = its fd, else *proc_fd = -1.
 * Errors: those of pr_procs_open_proc. */
int pr_rollout_exec_before_join (const struct pr_rollout_exec_plan *plan, int pidns_fd, int *proc_fd,
                                 pr_error **err);

/* In the joiner, right after its own user namespace is mapped (only when
 * pr_rollout_exec_own_userns): becomes root there, makes a mount
 * namespace owned by it and mounts the verifier's view.  Errors: EPERM
 * "become root in the verifier's user namespace", unshare's errno
 * "create the verifier's mount namespace", pr_verifier_view_mount's. */
int pr_rollout_exec_in_own_userns (const struct pr_rollout_exec_plan *plan, pr_error **err);

/* In the joiner, after it entered the container's root: a setup session
 * out of the agent's reach gets a slave copy of the mount namespace, and
 * every such session gets the procfs of pr_rollout_exec_before_join
 * (proc_fd; -1: nothing to do).  Errors: unshare/mount errnos,
 * pr_procs_mount_proc's. */
int pr_rollout_exec_after_root (const struct pr_rollout_exec_plan *plan, int proc_fd, pr_error **err);

/* The runtime side, once the exec's process exists (pid: its host pid):
 * registers the egress token for it at the helper.  Errors: those of
 * pr_network_register. */
int pr_rollout_exec_started (const struct pr_rollout_exec_plan *plan, pid_t pid, pr_error **err);

/* Frees what the plan holds (the plan itself is not freed). */
void pr_rollout_exec_plan_free (struct pr_rollout_exec_plan *plan);

#endif
