/* procattr.h - per-process attributes applied just before execve:
 * rlimits, oomScoreAdj, scheduler, ioPriority, personality, umask,
 * hostname/domainname, sysctl.  Each function is a no-op when the config
 * does not set its attribute.  Source: runtime-spec config.md "process",
 * config-linux.md "Sysctl", "Personality"; setrlimit(2), sched_setattr(2),
 * ioprio_set(2), personality(2). */
#ifndef PROCTOR_PROCATTR_H
#define PROCTOR_PROCATTR_H

#include "../base/error.h"
#include "../config/config.h"

/* setrlimit for each process.rlimits entry.  Errors: setrlimit errno naming
 * the limit (e.g. EPERM raising a hard limit without CAP_SYS_RESOURCE). */
int pr_rlimits_apply (const struct pr_process *p, pr_error **err);

/* Writes /proc/self/oom_score_adj.  Errors: write errno. */
int pr_oom_score_adj_apply (const struct pr_process *p, pr_error **err);

/* sched_setattr(2) from process.scheduler.  Errors: EINVAL unknown
 * policy/flag; syscall errno. */
int pr_scheduler_apply (const struct pr_process *p, pr_error **err);

/* ioprio_set(2) from process.ioPriority.  Errors: EINVAL unknown class. */
int pr_io_priority_apply (const struct pr_process *p, pr_error **err);

/* personality(2) from linux.personality.  Errors: EINVAL unknown domain. */
int pr_personality_apply (const struct pr_config *cfg, pr_error **err);

/* sethostname/setdomainname (only when linux.namespaces has a uts entry,
 * new or joined by path; otherwise setting them is an error as the spec
 * requires). */
int pr_uts_apply (const struct pr_config *cfg, bool new_utsns, pr_error **err);

/* Refuses, before anything is created, what would write into the runtime's
 * own (the host's) namespaces: hostname/domainname without a uts namespace
 * of the container's own, a linux.sysctl key of the ipc (ipc_namespaces(7)
 * list, fs.mqueue.*), network (net.*) or uts (kernel.hostname,
 * kernel.domainname) namespace when that namespace is inherited or its
 * path names the runtime's current one, and any sysctl that no namespace
 * holds (it would change the whole host).  A namespace joined by a path
 * other than the runtime's own belongs to the container (a pod's).  Source:
 * runtime-spec config-linux.md "Sysctl", config.md "Hostname"; runc's
 * validator refuses the same set.  Errors: EINVAL "sysctl `K` not allowed
 * in host T namespace", "sysctl `K` is not in a separate kernel
 * namespace", "hostname `H` not allowed in host uts namespace" (likewise
 * domainname); open/fstat errno of a namespace path. */
int pr_host_ns_check (const struct pr_config *cfg, pr_error **err);

/* Writes each linux.sysctl key under /proc/sys (dots become slashes).
 * Errors: EINVAL for a key with "..", write errno naming the key. */
int pr_sysctl_apply (const struct pr_config *cfg, pr_error **err);

#endif
