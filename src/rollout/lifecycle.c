/* lifecycle.c - the rollout's side of the lifecycle's named points
 * (lifecycle.h): create, delete, the exec plan and the steps a rollout
 * exec takes in the joiner.  Moved here from src/lifecycle/{container,
 * init,exec}.c unchanged in behaviour. */
#define _GNU_SOURCE

#include "lifecycle.h"
#include "budget.h"
#include "network.h"
#include "transparent.h"
#include "procs.h"
#include "oomshield.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../linux/netlink.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

int
pr_rollout_config (struct pr_config *cfg, const char *policy_file, const char *rootfs, int state_dirfd,
                   struct pr_rollout **out, pr_error **err)
{
  _cleanup_free_ char *policy = pr_rollout_policy_source (cfg, policy_file);
  *out = NULL;
  if (policy && pr_rollout_create (policy, cfg, rootfs, state_dirfd, out, err) < 0)
    return -1;
  return 0;
}

bool
pr_rollout_nests_pidns (const struct pr_rollout *r, int new_flags)
{
  return r != NULL && (new_flags & CLONE_NEWPID) != 0;
}

int
pr_rollout_init_network (const struct pr_rollout *r, pr_error **err)
{
  if (r == NULL)
    return 0;
  return pr_netlink_lo_up (err);
}

int
pr_rollout_init_rootfs (const struct pr_rollout *r, const char *rootfs, pr_error **err)
{
  if (r == NULL)
    return 0;
  _cleanup_close_ int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return pr_error_set (err, errno, "open rootfs `%s`", rootfs);
  return pr_network_write_hosts (r->policy, rootfd, err);
}

int
pr_rollout_container_started (bool nested, int state_dirfd, pid_t init_pid, pid_t *agent_init, pr_error **err)
{
  if (nested && pr_procs_save_agent_init (state_dirfd, init_pid, agent_init, err) < 0)
    return -1;
  return 0;
}

int
pr_rollout_network_begin (const struct pr_rollout *r, pid_t init_pid, int state_dirfd, const char *state_dir,
                          const char *cgroup_path, int *ready_fd, pr_error **err)
{
  *ready_fd = -1;
  if (r == NULL)
    return 0;
  return pr_network_begin (r->policy, init_pid, state_dirfd, state_dir, cgroup_path, ready_fd, err) < 0 ? -1 : 0;
}

int
pr_rollout_ready (const struct pr_rollout *r, pid_t init_pid, int state_dirfd, const char *cgroup_path,
                  int ready_fd, pr_error **err)
{
  if (r == NULL)
    {
      if (ready_fd >= 0)
        close (ready_fd);
      return 0;
    }
  if (pr_network_finish (ready_fd, err) < 0)
    return -1;
  /* After the agent's init exists (the outer init forked it at create),
   * so that it inherits nothing of the shield. */
  const pid_t ours[] = { init_pid, pr_network_helper_pid (state_dirfd) };
  if (pr_oomshield_apply (cgroup_path, ours, 2, err) < 0)
    return -1;
  return 1;
}

void
pr_rollout_create_failed (const struct pr_rollout *r, int state_dirfd, const char *rootfs)
{
  pr_error *e = NULL;
  if (r == NULL)
    return;
  pr_network_stop (state_dirfd);
  if (pr_rollout_restore_hidden (state_dirfd, rootfs, &e) < 0)
    {
      pr_warn ("cleanup: %s", e->msg);
      pr_error_free (&e);
    }
}

void
pr_rollout_stop (int state_dirfd)
{
  pr_network_stop (state_dirfd);
}

int
pr_rollout_delete (int state_dirfd, const char *rootfs, pr_error **err)
{
  return pr_rollout_restore_hidden (state_dirfd, rootfs, err);
}

int
pr_rollout_delete_cgroup (const char *cgroup_path, pr_error **err)
{
  int r = pr_budget_destroy (cgroup_path, err);
  /* After the budget's teardown killed the sessions that were in them. */
  pr_transparent_remove_phase_cgroups (cgroup_path);
  /* The outer init and the helper are gone by now (delete, or create's
   * cleanup, stops them first). */
  pr_oomshield_remove (cgroup_path);
  return r;
}

int
pr_rollout_exec_enter_cgroup (const struct pr_rollout_exec_plan *plan, const char *cgroup_path, pid_t pid,
                              pr_error **err)
{
  if (plan->rollout == NULL || plan->phase == PR_PHASE_AGENT)
    return 0;
  return pr_budget_enter (plan->rollout->policy, cgroup_path, pid, err) < 0 ? -1 : 1;
}

int
pr_rollout_exec_transparent_cgroup (const struct pr_rollout_exec_plan *plan, const char *cgroup_path, pid_t pid,
                                    pr_error **err)
{
  const char *name = plan->rollout ? pr_network_transparent_cgroup (plan->rollout->policy, plan->phase) : NULL;
  if (name == NULL)
    return 0;
  return pr_transparent_enter_phase_cgroup (cgroup_path, name, pid, err);
}

char *
pr_rollout_exec_session_cgroup (const struct pr_rollout_exec_plan *plan, pid_t pid, pr_error **err)
{
  if (plan->rollout == NULL || plan->phase != PR_PHASE_VERIFIER)
    return NULL;
  return pr_budget_session_enter (pid, err);
}

void
pr_rollout_exec_watch_session (const char *dir, pid_t pid)
{
  if (dir != NULL)
    pr_budget_session_watch (dir, pid);
}

void
pr_rollout_exec_failed_cgroup (const struct pr_rollout_exec_plan *plan, const char *cgroup_path)
{
  if (plan->rollout != NULL && plan->phase != PR_PHASE_AGENT)
    pr_budget_release (cgroup_path);
}

void
pr_rollout_ps_filter (int state_dirfd, pid_t *pids, size_t *n)
{
  _cleanup_free_ char *text = NULL;
  int helper = 0;
  if (pr_read_file_at (state_dirfd, PR_EGRESS_PID, &text, NULL, NULL) < 0 || sscanf (text, "%d", &helper) != 1)
    return;
  size_t w = 0;
  for (size_t i = 0; i < *n; i++)
    if (pids[i] != helper)
      pids[w++] = pids[i];
  *n = w;
}

/* verifier.agent_processes before a verifier session.  A container
 * created before the nested pid namespaces existed has no agent namespace
 * to sweep: say so rather than keep them. */
static int
sweep_agent (const struct pr_rollout_exec_plan *plan, const char *id, pr_error **err)
{
  if (plan->phase != PR_PHASE_VERIFIER || plan->rollout->policy->agent_processes == PR_AGENT_PROCS_KEEP)
    return 0;
  if (plan->agent_init == 0)
    return pr_error_set (err, 0, "verifier.agent_processes: container `%s` has no agent pid namespace "
                                 "(created by an older proctor): recreate it", id);
  if (pr_procs_agent_processes (plan->rollout->policy->agent_processes, plan->agent_init, err) < 0)
    return pr_error_wrap (err, "verifier.agent_processes");
  return 0;
}

int
pr_rollout_exec_plan (int state_dirfd, const char *rootfs, const char *state_dir, const char *id,
                      pid_t init_pid, struct pr_process *p, struct pr_rollout_exec_plan *plan,
                      pr_error **err)
{
  if (pr_rollout_load (state_dirfd, rootfs, &plan->rollout, err) < 0)
    return -1;
  if (plan->rollout == NULL)
    return 0;
  if (pr_rollout_exec_prepare (plan->rollout, p, &plan->phase, err) < 0)
    return -1;
  if (pr_procs_agent_init (state_dirfd, &plan->agent_init, err) < 0)
    return pr_error_wrap (err, "cannot exec in container `%s`", id);
  if (sweep_agent (plan, id, err) < 0)
    return -1;
  if (plan->phase == PR_PHASE_VERIFIER && pr_verifier_view_open (plan->rollout, init_pid, &plan->view, err) < 0)
    return -1;
  plan->state_dir = xstrdup (state_dir);
  if (plan->phase != PR_PHASE_AGENT && pr_policy_net_mode (plan->rollout->policy, plan->phase) != PR_NET_NONE)
    plan->token = pr_network_new_token ();
  p->env = pr_network_proxy_env (plan->rollout->policy, plan->phase, plan->token, p->env);
  return 0;
}

bool
pr_rollout_exec_own_userns (const struct pr_rollout_exec_plan *plan)
{
  return plan->rollout && plan->phase == PR_PHASE_VERIFIER;
}

pid_t
pr_rollout_exec_pidns_pid (const struct pr_rollout_exec_plan *plan)
{
  return plan->agent_init > 0 && plan->phase == PR_PHASE_AGENT ? plan->agent_init : 0;
}

bool
pr_rollout_exec_needs_pidns (const struct pr_rollout_exec_plan *plan)
{
  return plan->agent_init > 0;
}

bool
pr_rollout_exec_holds_start (const struct pr_rollout_exec_plan *plan)
{
  return plan->token != NULL;
}

/* Out of the agent's reach (procs.h): a setup or verifier session in a
 * rollout that nests the agent's pid namespace. */
static bool
outer (const struct pr_rollout_exec_plan *plan)
{
  return plan->agent_init > 0 && plan->phase != PR_PHASE_AGENT;
}

int
pr_rollout_exec_before_join (const struct pr_rollout_exec_plan *plan, int pidns_fd, int *proc_fd, pr_error **err)
{
  *proc_fd = -1;
  if (outer (plan) && pr_procs_open_proc (pidns_fd, proc_fd, err) < 0)
    return -1;
  return 0;
}

int
pr_rollout_exec_in_own_userns (const struct pr_rollout_exec_plan *plan, pr_error **err)
{
  if (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
    return pr_error_set (err, errno, "become root in the verifier's user namespace");
  if (unshare (CLONE_NEWNS) < 0)
    return pr_error_set (err, errno, "create the verifier's mount namespace");
  return pr_verifier_view_mount (&plan->view, err);
}

/* A setup session sees the agent's files (the container's mount
 * namespace), but not the agent's /proc: a copy of that namespace, slave
 * so that the agent's later mounts still reach it, gets the outer
 * procfs. */
static int
enter_setup_namespace (pr_error **err)
{
  if (unshare (CLONE_NEWNS) < 0)
    return pr_error_set (err, errno, "create the setup session's mount namespace");
  if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return pr_error_set (err, errno, "make the setup session's mounts slaves");
  return 0;
}

int
pr_rollout_exec_after_root (const struct pr_rollout_exec_plan *plan, int proc_fd, pr_error **err)
{
  if (outer (plan) && !pr_rollout_exec_own_userns (plan) && enter_setup_namespace (err) < 0)
    return -1;
  if (outer (plan) && pr_procs_mount_proc (proc_fd, err) < 0)
    return -1;
  return 0;
}

int
pr_rollout_exec_started (const struct pr_rollout_exec_plan *plan, pid_t pid, pr_error **err)
{
  if (plan->token == NULL)
    return 0;
  return pr_network_register (plan->state_dir, plan->phase, plan->token, pid, err);
}

void
pr_rollout_exec_plan_free (struct pr_rollout_exec_plan *plan)
{
  pr_verifier_view_free (&plan->view);
  free (plan->token);
  free (plan->state_dir);
  if (plan->rollout)
    pr_rollout_free (plan->rollout);
}
