/* lifecycle.c - the rollout's side of the lifecycle's named points
 * (lifecycle.h): the exec plan and the steps a rollout exec takes in the
 * joiner.  Moved here from src/lifecycle/exec.c unchanged in behaviour. */
#define _GNU_SOURCE

#include "lifecycle.h"
#include "network.h"
#include "procs.h"
#include "../base/util.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

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
