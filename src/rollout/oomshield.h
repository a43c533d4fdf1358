/* oomshield.h - the runtime's own processes of a rollout (the outer init,
 * the egress helper) kept out of the kernel's OOM killer's choice when the
 * agent fills the container's memory limit (SPEC section 2: the agent
 * cannot sabotage the verifier).
 *
 * An agent under --memory that fills the limit with memory no process owns
 * (a tmpfs in a mount namespace of its own, /dev/shm) makes the memory
 * cgroup's OOM killer pick the largest process in the cgroup.  That was the
 * egress helper (a trial's finding: after it, no verifier or setup exec
 * could start), and with the helper elsewhere the outer init (the
 * container dies).  Both are ours, small and bounded, so:
 *
 *   v1 and hybrid hosts: both move, in the memory hierarchy only, to a
 *     sibling of the container's cgroup, PATH-PR_OOMSHIELD_CGROUP; in
 *     every other hierarchy they stay in the container's.  The OOM killer
 *     of the container's memory cgroup then sees only the agent's
 *     processes.
 *   cgroup2-only hosts (one cgroup per process for every controller):
 *     oom_score_adj -1000 for both, which needs CAP_SYS_RESOURCE; without
 *     it a warning says the shield is off.
 *
 * The outer init's children are the agent's init, forked before the
 * shield is put up, so nothing of the agent's inherits either. */
#ifndef PROCTOR_OOMSHIELD_H
#define PROCTOR_OOMSHIELD_H

#include <stddef.h>
#include <sys/types.h>

#include "../base/error.h"

#define PR_OOMSHIELD_CGROUP "proctor-runtime"

/* Shields the n processes in pids (0 entries skipped) of the container
 * whose cgroup is cgroup_path (NULL: no cgroup, nothing to do), as the
 * header says.  Errors: mountinfo read errors, mkdir and cgroup.procs
 * write errno naming the directory (v1 and hybrid); never on cgroup2,
 * where a refused oom_score_adj write only warns. */
int pr_oomshield_apply (const char *cgroup_path, const pid_t *pids, size_t n, pr_error **err);

/* Removes PATH-PR_OOMSHIELD_CGROUP with pr_cgroup_destroy (what is left
 * in it killed; absent is fine; a failure warns).  Never fails. */
void pr_oomshield_remove (const char *cgroup_path);

#endif
