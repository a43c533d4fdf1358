/* finalize.h - turning a process already inside the container's namespaces
 * and root into the configured container process: rlimits, scheduling,
 * cwd, executable lookup, LSM labels, user and groups, capabilities,
 * no_new_privs and seccomp, in the order the kernel requires.  Shared by the
 * container init (create) and exec.  Source: runtime-spec config.md
 * "process"; capabilities(7) "Effect of user ID changes on capabilities". */
#ifndef PROCTOR_FINALIZE_H
#define PROCTOR_FINALIZE_H

#include "../base/error.h"
#include "../base/fds.h"
#include "../config/config.h"

/* Looks up name like execvp(3) would: names containing '/' are used as is;
 * others are searched in the PATH of env (or a default PATH).  Returns a
 * malloc'd path.  Errors: ENOENT `exec: "NAME": executable file not found
 * in $PATH` (the wording podman and docker match to exit 127), EACCES
 * `exec: "NAME": permission denied` for a path that is not executable. */
int pr_find_executable (const char *name, char *const *env, char **out, pr_error **err);

/* Everything up to (not including) the user switch that may fail in a way
 * the caller must report before signalling readiness: rlimits, oom score,
 * scheduler, ioprio, personality, umask, cwd, HOME, executable lookup, LSM
 * exec labels.  *exe_out receives the resolved executable, *env_out a new
 * environment (HOME added from /etc/passwd when absent).  Errors: from
 * each step; chdir failure is `chdir to cwd ("X") set in config.json
 * failed: ...`; a cwd under /proc/self/fd is refused (CVE-2024-21626). */
int pr_finalize_prepare (const struct pr_process *p, const struct pr_config *cfg, char **exe_out, char ***env_out,
                         pr_error **err);

/* Switches identity and applies the security settings: bounding set,
 * seccomp when no_new_privileges is off (before setuid, since loading a
 * filter then needs CAP_SYS_ADMIN), supplementary groups, gid, uid,
 * capability sets, no_new_privs.  The notify fd and the process state
 * built from state_json are sent over listener_sock (from
 * pr_finalize_seccomp_connect, -1 if none) when the filter uses notify.  Errors: from each step. */
int pr_finalize_security (const struct pr_process *p, const struct pr_config *cfg, int listener_sock,
                          const char *state_json, pr_error **err);

/* With no_new_privileges, loads the seccomp filter: the caller's very last
 * step before execve (after exec.fifo and the startContainer hooks), so
 * that as few of the runtime's own syscalls as possible run under it (a
 * SCMP_ACT_NOTIFY on close or read would otherwise stop the init until the
 * listener answers).  The listener socket (listener_sock) was connected
 * by the runtime before the process started, and the notify fd is sent
 * right after the load (see seccomp.h).  Does nothing
 * without no_new_privileges (pr_finalize_security loaded it).  Errors:
 * connect/load/send errno. */
int pr_finalize_seccomp_last (const struct pr_process *p, const struct pr_config *cfg, int listener_sock,
                              const char *state_json, pr_error **err);

/* On the runtime's side, before the container or exec process is started:
 * connects to linux.seccomp.listenerPath, a host path (runtime-spec
 * config-linux.md "Seccomp"), and returns the close-on-exec socket that
 * the process inherits and hands to pr_finalize_security /
 * pr_finalize_seccomp_last as listener_sock.  Returns -2 (no error) when
 * the config has no seccomp or no listenerPath.  Errors (-1): as
 * pr_seccomp_listener_connect. */
int pr_finalize_seccomp_connect (const struct pr_config *cfg, pr_error **err);

/* Clears FD_CLOEXEC on those of 3..3+preserve_fds-1 that the caller passed
 * in (caller, see fds.h; the runtime's own fds that took a free number in
 * that range stay close-on-exec) and marks every higher fd close-on-exec,
 * so nothing but stdio and the caller's preserved fds crosses execve
 * (CVE-2024-21626 class). */
void pr_finalize_fds (int preserve_fds, const struct pr_caller_fds *caller);

#endif
