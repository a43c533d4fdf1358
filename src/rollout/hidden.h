/* hidden.h - paths the agent must not see (policy `hide`, default /tests
 * and /logs): moved out of the rootfs at create into the state directory,
 * shown to verifiers (see verifier.h), and put back at delete.  Absent,
 * not masked: stat(2) in the agent's view fails with ENOENT.
 * Source: SPEC section 2 "Filesystem". */
#ifndef PROCTOR_HIDDEN_H
#define PROCTOR_HIDDEN_H

#include "../base/error.h"

#define PR_HIDDEN_DIR "rollout-hidden"

/* For each path in hide (NULL-terminated, absolute), if the image has it
 * (resolved inside rootfd without following a final symlink), moves it to
 * <state>/rollout-hidden/<index> (rename, or copy + remove across
 * filesystems).  On failure, what was moved is put back.  Errors: I/O
 * errnos naming the path. */
int pr_hidden_stash (int rootfd, char *const *hide, int state_dirfd, pr_error **err);

/* Moves every stashed entry back to its path (replacing whatever the
 * container created there meanwhile) and removes the stash.  Errors: I/O
 * errnos naming the path; missing stash is not an error. */
int pr_hidden_restore (int rootfd, char *const *hide, int state_dirfd, pr_error **err);

#endif
