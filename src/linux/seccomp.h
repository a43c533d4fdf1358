/* seccomp.h - the container's seccomp filter with libseccomp, including
 * notify (SCMP_ACT_NOTIFY) with linux.seccomp.listenerPath.
 * Source: runtime-spec config-linux.md "Seccomp"; seccomp_rule_add(3),
 * seccomp_notify_fd(3); the listener protocol of runtime-spec
 * "Seccomp Notify" (state JSON + fd sent over SCM_RIGHTS). */
#ifndef PROCTOR_SECCOMP_H
#define PROCTOR_SECCOMP_H

#include "../base/error.h"
#include "../config/config.h"

/* Builds the filter without loading it, to validate config at create time
 * before anything is done.  Unknown syscall names are skipped (the running
 * kernel may not have them), as runc does.  Errors: EINVAL for an unknown
 * action, operator, architecture or flag. */
int pr_seccomp_validate (const struct pr_seccomp *sc, pr_error **err);

/* Loads the filter into the calling process.  When any rule uses
 * SCMP_ACT_NOTIFY, *notify_fd_out receives the listener fd (else -1).
 * Errors: seccomp_* failures (errno from its negative return). */
int pr_seccomp_load (const struct pr_seccomp *sc, int *notify_fd_out, pr_error **err);

/* Connects a stream socket (close-on-exec) to sc->listener_path and
 * returns it, before the filter is loaded, so that nothing between the
 * load and the handover (an open or close of the long-path proxy
 * directory) can be a notified syscall.  Errors: EINVAL without a
 * listenerPath, open/socket/connect errno, ENAMETOOLONG. */
int pr_seccomp_listener_connect (const struct pr_seccomp *sc, pr_error **err);

/* Returns (malloc'd) the runtime-spec containerProcessState for the
 * listener: {"ociVersion", "fds": ["seccompFd"], "pid" (the state's pid,
 * the container's init as the runtime sees it), "metadata"
 * (listenerMetadata, "" when absent), "state" (state_json verbatim)}.
 * Errors: EINVAL (NULL returned) when state_json is not a JSON object.
 * Source: runtime-spec config-linux.md "Seccomp", containerProcessState. */
char *pr_seccomp_process_state (const struct pr_seccomp *sc, const char *state_json, pr_error **err);

/* Sends the notify fd and the containerProcessState built from state_json
 * (pr_seccomp_process_state) over sock (from
 * pr_seccomp_listener_connect; SCM_RIGHTS with the first chunk), then
 * shuts down the writing side so a listener reading to EOF has the whole
 * state.  Closes nothing: the caller keeps both fds (close-on-exec) to
 * execve, since close(2) may itself be notified.  sc names the path in
 * messages.  Errors: EINVAL for an empty state, sendmsg/send/shutdown
 * errno; EINVAL from pr_seccomp_process_state.  Source: runtime-spec
 * config-linux.md "Seccomp" listenerPath. */
int pr_seccomp_send_listener (const struct pr_seccomp *sc, int sock, int notify_fd, const char *state_json,
                              pr_error **err);

#endif
