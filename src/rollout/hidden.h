/* hidden.h - paths the agent must not see (policy `hide`, default /tests
 * and /logs): moved out of the rootfs at create into the state directory,
 * shown to verifiers (see verifier.h), and put back at delete.  Absent,
 * not masked: stat(2) in the agent's view fails with ENOENT.
 * Source: SPEC section 2 "Filesystem". */
#ifndef PROCTOR_HIDDEN_H
#define PROCTOR_HIDDEN_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/error.h"
#include "../config/config.h"

#define PR_HIDDEN_DIR "rollout-hidden"
#define PR_HIDDEN_MOUNTS_FILE "rollout-engine-mounts"

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

/* Removes the stash without putting anything back: for a delete whose
 * rootfs is already gone (an engine unmounted it first), so that no state
 * directory holding the image's hidden files is left behind.  Errors: I/O
 * errnos of rm -rf; a missing stash is not an error. */
int pr_hidden_discard (int state_dirfd, pr_error **err);

/* An engine mount (podman/docker -v, a Kubernetes volume) whose
 * destination is at or under a hidden path: taken out of the container's
 * mounts at create and made again, from the host side, in each verifier's
 * view (verifier.h). */
struct pr_hidden_mount
{
  char *source;       /* host path of a bind mount; NULL: an empty tmpfs */
  char *destination;  /* absolute path inside the container */
  unsigned long flags; /* MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC */
  bool recursive;     /* rbind: submounts of source come along */
};

/* Create time, on the parsed config: every cfg->mounts entry whose
 * destination is at or under one of hide (NULL-terminated) is removed from
 * cfg, so the container never has it, and recorded in
 * <state>/rollout-engine-mounts.  Bind mounts keep their source and
 * ro/nosuid/nodev/noexec/rbind options; a tmpfs becomes an empty tmpfs.
 * Errors (nothing is changed): EINVAL for any other type or an idmapped
 * mount at a hidden path ("rollout: mount at hidden path `/tests`: type
 * `nfs` cannot be made verifier-only"), the option parser's errors, the
 * state file's write errno.  Source: SPEC section 2 "Filesystem" (engine
 * mounts at hidden paths are verifier-only). */
int pr_hidden_take_mounts (struct pr_config *cfg, char *const *hide, int state_dirfd, pr_error **err);

/* Reads what pr_hidden_take_mounts recorded: *out (malloc'd, *n entries;
 * NULL and 0 when there is no record).  Errors: read errno; EINVAL for a
 * damaged record. */
int pr_hidden_mounts_load (int state_dirfd, struct pr_hidden_mount **out, size_t *n, pr_error **err);

void pr_hidden_mounts_free (struct pr_hidden_mount *v, size_t n);

#endif
