/* safepath.h - resolving paths inside a rootfs without escaping it.
 *
 * Uses openat2(2) with RESOLVE_IN_ROOT (kernel >= 5.6): ".." and absolute
 * symlinks are resolved relative to the rootfs fd, so an image cannot
 * point a mount target, device node or masked path at a host path.
 * Source: openat2(2); CVE-2021-30465 (runc mount race) and friends. */
#ifndef PROCTOR_SAFEPATH_H
#define PROCTOR_SAFEPATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "../base/error.h"

/* Opens path (absolute or relative; interpreted relative to rootfd) inside
 * the root with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) and the
 * given open flags (O_CLOEXEC always added).  Returns the fd in *fd_out.
 * Errors: the openat2 errno (ENOENT, ELOOP, EXDEV ...) with the path. */
int pr_safe_open (int rootfd, const char *path, int flags, mode_t mode, int *fd_out, pr_error **err);

/* Creates every missing directory of path inside rootfd (mode), each step
 * resolved in the root, and returns an O_PATH|O_DIRECTORY fd of the last.
 * Errors: mkdirat/openat2 errno; ENOTDIR when a component is not a dir. */
int pr_safe_mkdir_p (int rootfd, const char *path, mode_t mode, int *fd_out, pr_error **err);

/* Makes sure a mount target exists inside the root: a directory when
 * is_dir, otherwise an empty regular file (parents created as dirs).
 * Returns an O_PATH fd of the target (for mounting via /proc/self/fd/N).
 * Errors: as above. */
int pr_safe_create_target (int rootfd, const char *path, bool is_dir, int *fd_out, pr_error **err);

/* Writes "/proc/self/fd/N" for fd into buf (at least 32 bytes). */
void pr_fd_path (int fd, char *buf, size_t len);

#endif
