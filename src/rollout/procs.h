/* procs.h - the rollout's process plan: verifier and setup processes out
 * of the agent processes' reach (SPEC section 2 "Out of the agent's
 * reach").
 *
 * A rollout container has two nested pid namespaces:
 *
 *   P_O  pid 1 is proctor's outer init (init.c): it reaps, forwards
 *        signals to the container's process and exits with its status;
 *        verifier and setup sessions join P_O.
 *   P_A  nested in P_O; pid 1 is the container's process; the agent's
 *        execs join P_A.
 *
 * A pid namespace only shows its own processes and those of the
 * namespaces nested in it (pid_namespaces(7)): from P_A, a process of P_O
 * has no pid, so no /proc entry, and kill(2), ptrace(2), setpriority(2),
 * sched_setscheduler(2), sched_setaffinity(2), prlimit(2) and
 * /proc/PID/oom_score_adj cannot name it; pidfd_send_signal(2) refuses a
 * target outside the caller's pid namespace.  From P_O, the verifier sees
 * every agent process (`ps`).
 *
 * State in the container's state directory:
 *   rollout-agent-init   "PID STARTTIME\n": the host pid of the
 *                        container's process (pid 1 of P_A) and its start
 *                        time (proc.h); absent when the container has no
 *                        nested pid namespace.
 */
#ifndef PROCTOR_PROCS_H
#define PROCTOR_PROCS_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy.h"
#include "../base/error.h"

#define PR_PROCS_AGENT_INIT_FILE "rollout-agent-init"

/* Create time, once the outer init has forked the container's process:
 * finds that process (the only child of outer, /proc/OUTER/task/OUTER/
 * children, proc(5)) and writes rollout-agent-init.  *inner_out is its
 * host pid.  Errors: ESRCH "the outer init has no child" when it has
 * none (the container process already died), EIO when it has more than
 * one; read/write errno naming the file. */
int pr_procs_save_agent_init (int state_dirfd, pid_t outer, pid_t *inner_out, pr_error **err);

/* Exec time: the host pid of the container's process from
 * rollout-agent-init; *pid_out = 0 when the file is absent (a container
 * without the nested pid namespace).  Errors: EINVAL for an unparsable
 * file; ESRCH "the container's process is gone" when the pid's start
 * time no longer matches. */
int pr_procs_agent_init (int state_dirfd, pid_t *pid_out, pr_error **err);

/* A new procfs instance of the pid namespace at pidns_fd, as a detached
 * mount (fsmount(2), nosuid, nodev, noexec) in *fd_out.  A procfs shows
 * the pid namespace of the process that creates its fs context
 * (fsopen(2)), whatever namespace the caller later attaches it in, so a
 * forked child joins pidns_fd with setns(2) and a grandchild, whose
 * active pid namespace it is, makes the mount and passes it back over a
 * socket (SCM_RIGHTS).  Must be called by the runtime (root of the
 * initial user namespace, host mount namespace).  Errors: fork/setns/
 * fsopen/fsmount errno ("make a procfs of the container's outer pid
 * namespace"). */
int pr_procs_open_proc (int pidns_fd, int *fd_out, pr_error **err);

/* In a verifier's or setup session's own mount namespace: attaches the
 * detached procfs proc_fd (from pr_procs_open_proc) over /proc and binds
 * /proc/sys read-only on itself, as the container's /proc/sys is.
 * Consumes proc_fd.  Errors: move_mount/open_tree/mount_setattr errno
 * naming the path. */
int pr_procs_mount_proc (int proc_fd, pr_error **err);

/* verifier.agent_processes before a verifier session starts, from the
 * runtime (host pid namespace): every process of the agent's pid
 * namespace, or of one nested in it (ioctl NS_GET_PARENT, ioctl_ns(2)),
 * gets SIGSTOP, pass after pass until a pass finds none still running,
 * so that one forking during the sweep cannot escape it.  Then for
 * PR_AGENT_PROCS_KILL every one but agent_init (the container's process,
 * pid 1 of the agent's namespace: its end would end the container) gets
 * SIGKILL and agent_init SIGCONT; for PR_AGENT_PROCS_FREEZE they all stay
 * stopped.  PR_AGENT_PROCS_KEEP does nothing.  Errors: open/ioctl errno
 * naming the agent's pid namespace; EAGAIN when 100 passes still found
 * running processes. */
int pr_procs_agent_processes (enum pr_agent_processes mode, pid_t agent_init, pr_error **err);

#endif
