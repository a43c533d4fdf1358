/* base.h - the verifier's base (policy verifier.base, verifier.base_paths;
 * SPEC section 2 "A trusted base"; docs/rollout.md "The verifier's base"):
 * the rootfs's overlay layers recorded at create, the image's layers of a
 * base path, and the detached mounts that show the verifier the image's
 * base paths under a private writable layer.
 *
 * State files (in the container's state directory):
 *   rollout-base-lower   the rootfs overlay's lower layers, top first,
 *                        NUL-separated host paths; absent: not an overlay
 *   rollout-base-upper   the rootfs overlay's upper dir (host path) */
#ifndef PROCTOR_BASE_H
#define PROCTOR_BASE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "../base/error.h"

#define PR_BASE_LOWER_FILE "rollout-base-lower"
#define PR_BASE_UPPER_FILE "rollout-base-upper"

struct pr_verifier_view;

/* Create time: finds the mount at rootfs (host path) in
 * /proc/self/mountinfo (proc(5)) and, when it is an overlay
 * (Documentation/filesystems/overlayfs.rst), records its lowerdir and
 * upperdir in the state dir.  Errors: reading mountinfo; writing the state
 * files; p->base is "image" and the rootfs is not an overlay with a
 * lowerdir (errnum 0, naming verifier.base: a plain directory has no
 * record of what the image held, and proctor does not copy one). */
int pr_base_record (const char *rootfs, const struct pr_policy *p, int state_dirfd, pr_error **err);

/* The recorded layers: *lowers (NULL-terminated, top first; NULL when
 * none was recorded) and *upper (NULL when none).  Never fails: a missing
 * or unreadable file reads as "not recorded". */
void pr_base_load (int state_dirfd, char ***lowers, char **upper);

/* Whether path (absolute, inside the container) exists in the image the
 * lowers make up (overlay rules: the top layer that has it wins, a
 * whiteout or an opaque or non-directory parent hides the layers below). */
bool pr_base_in_image (char *const *lowers, const char *path);

/* Exec time, verifier sessions under verifier.base "image": adds to v, for
 * each base path the image has, a detached mount of the image's content
 * there: a directory as an overlay of its image layers under a fresh
 * private tmpfs upper (the verifier may write; nothing reaches the
 * rootfs), a file as a copy on a private tmpfs; a base path the image
 * lacks but the live rootfs has (an agent's /etc/ld.so.preload) as an
 * empty file or directory.  Errors: no recorded lowers (errnum 0); mount
 * API errors with errno. */
int pr_base_view_add (int state_dirfd, const char *rootfs, const struct pr_policy *p, struct pr_verifier_view *v,
                      pr_error **err);

/* A copy of the file name (relative to dirfd, last component not followed;
 * NULL: an empty file 0644) on a fresh private tmpfs (nosuid, nodev), with
 * the original's mode and owner, as a detached mount of that one file in
 * *out: what the verifier's view binds over path (inside the container,
 * for messages), writable by the verifier, dropped with its exec.  Errors:
 * fsopen/fsmount/open_tree(2) errno; open/read/write/fchown errno naming
 * path. */
int pr_base_file_mount (int dirfd, const char *name, const char *path, int *out, pr_error **err);

#endif
