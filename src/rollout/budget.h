/* budget.h - the verifier and setup sessions' own cgroup (SPEC section 2
 * "Out of the agent's reach": "with their own memory and pids budget").
 *
 * An agent's fork bomb fills the container's pids.max and its balloon the
 * container's memory limit; a verifier charged to the same cgroup could
 * then not fork, or run with no memory left.  Verifier and setup sessions
 * therefore run in a sibling of the container's cgroup, "PATH-verifier"
 * next to PATH in every hierarchy, with its own limits:
 *
 *   verifier.resources.memory  bytes, default PR_BUDGET_MEMORY_DEFAULT
 *   verifier.resources.pids    tasks, default PR_BUDGET_PIDS_DEFAULT
 *   (-1 in the policy: no limit)
 *
 * The sibling is made by the first verifier or setup exec, removed by
 * that exec when it fails and leaves the sibling empty, and by `delete`
 * (which kills what is left in it).  Agent processes never join it:
 * their cgroup is the container's.
 */
#ifndef PROCTOR_BUDGET_H
#define PROCTOR_BUDGET_H

#include <sys/types.h>

#include "../base/error.h"
#include "policy.h"

#define PR_BUDGET_MEMORY_DEFAULT (2LL << 30) /* 2 GiB */
#define PR_BUDGET_PIDS_DEFAULT 4096

/* The sibling cgroup path of the container's cgroup_path (malloc'd):
 * cgroup_path with "-verifier" appended.  Never fails. */
char *pr_budget_path (const char *cgroup_path);

/* Creates (or reuses) the sibling of cgroup_path in every hierarchy, sets
 * its memory and pids limits from p (runtime-spec linux.resources
 * memory.limit and pids.limit semantics) and moves pid into it.  Errors:
 * pr_cgroup_create's and pr_cgroup_apply_resources' (with the path); a
 * sibling this call made is removed again on error. */
int pr_budget_enter (const struct pr_policy *p, const char *cgroup_path, pid_t pid, pr_error **err);

/* After a failed verifier or setup exec: removes the sibling of
 * cgroup_path when no process is left in it (another session keeps it).
 * Failures are logged at debug level only: the caller already fails. */
void pr_budget_release (const char *cgroup_path);

/* At delete: kills what is left in the sibling of cgroup_path and removes
 * it from every hierarchy; no sibling is no error.  Errors:
 * pr_cgroup_destroy's. */
int pr_budget_destroy (const char *cgroup_path, pr_error **err);

/* A verifier session's own cgroup: moves pid into a new child
 * session-PID of the cgroup it is in now in the cgroup2 hierarchy (below
 * the budget sibling, or the transparent phase cgroup; both keep
 * counting and matching it: limits and nft's socket cgroupv2 cover
 * descendants).  Returns the child's directory (malloc'd), or NULL.
 * Errors: ENOENT without a cgroup2 line or mount; mkdir/write errno.
 * Source: cgroups(7), Documentation/admin-guide/cgroup-v2.rst. */
char *pr_budget_session_enter (pid_t pid, pr_error **err);

/* Starts a watcher for a verifier session: a process of the host's pid
 * namespace (setsid, double-forked, no fds but /dev/null and the pidfd,
 * so never seen by the agent and never holding conmon's pipes) that
 * polls pid's pidfd (pidfd_open(2)) and, once the session's process
 * ended, kills every process of dir (cgroup.kill, else SIGKILL to each
 * of cgroup.procs until empty) and removes dir.  No errors: a failed
 * fork kills the session at once. */
void pr_budget_session_watch (const char *dir, pid_t pid);

#endif
