/* verifier.h - the verifier's view of the filesystem: its own mount
 * namespace (a copy of the container's, owned by the verifier's own user
 * namespace) rooted on an overlay of a small skeleton over the agent's live
 * rootfs, where the hidden image paths, the engine mounts at hidden paths
 * and the policy's verifier mounts are attached.
 *
 *   overlay lower 1  SKEL: a tmpfs holding only the mount points of the
 *                    view (/tests, /app/grader ...), with the owner and mode
 *                    of the live directories on the way
 *   overlay lower 2  LIVE: a non-recursive clone of the container's root
 *   overlay upper    a private tmpfs: what the verifier writes outside its
 *                    mounts and the re-bound directories; gone when the
 *                    exec ends
 *
 * A SKEL directory wins over whatever the agent planted at the same path (a
 * symlink, fifo or file), and the agent's other entries stay visible next
 * to it.  The image's top-level directories (recorded at create, so the
 * agent cannot grow the list) and the container's own submounts are then
 * bound back from the live tree over the overlay: below them the verifier
 * reads and writes the real rootfs, with no overlay cache in between.  The
 * mount count is bounded by the image and the engine's mounts, never by
 * what the agent creates.  Nothing is mounted in the agent's namespace and
 * no mount point is made in its rootfs.  Source: SPEC section 2 "Verifier",
 * "Filesystem"; open_tree(2), move_mount(2), mount_setattr(2), fsopen(2),
 * overlayfs (Documentation/filesystems/overlayfs.rst: changes to a lower
 * layer while mounted are not seen reliably, hence the re-binds). */
#ifndef PROCTOR_VERIFIER_H
#define PROCTOR_VERIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rollout.h"
#include "../base/error.h"

struct pr_verifier_mount
{
  char *target;   /* absolute path inside the container */
  int tree_fd;    /* detached mount (open_tree clone), or -1: empty tmpfs */
  bool is_dir;
};

struct pr_verifier_view
{
  struct pr_verifier_mount *v;
  size_t n;
  bool has_root;  /* root_fd is set */
  int root_fd;    /* the detached overlay (see above) */
  char **tops;    /* the image's top-level directories, NULL-terminated */
  char **children; /* mount points of the submounts of the container's root */
};

#define PR_VIEW_TOPS_FILE "rollout-view-tops"

/* Create time, after the hidden paths were moved out: records the names of
 * the rootfs's top-level directories (at most 1024; an image with more
 * gets the rest through the overlay only) in <state>/rollout-view-tops.
 * Errors: readdir/write errno. */
int pr_verifier_view_record (int rootfd, int state_dirfd, pr_error **err);

/* Runtime side, in the host mount namespace: clones a detached mount tree
 * of every hidden path the image had (from the stash in the state dir), of
 * every engine mount taken out at create (hidden.h: bind source with its
 * ro/nosuid/nodev/noexec flags, or an empty tmpfs), a private copy of each
 * resolver file saved at create (netfiles.h: the agent's root can rewrite
 * the engine's /etc/hosts and resolv.conf) and of every policy verifier
 * mount source (read-only when asked).  A hidden path the image
 * did not have but under which a mount lies gets an empty tmpfs.  Then
 * builds the detached overlay root (SKEL over a clone of r->rootfs, private
 * tmpfs upper), and lists the mount points of the mounts on the root of
 * init_pid (the container's init), from its /proc/PID/mountinfo.  Errors: open_tree/mount_setattr/fsopen/fsconfig errno
 * naming the source or layer (EINVAL from overlayfs when the rootfs is
 * already two overlays deep); pr_netfiles_view_add's. */
int pr_verifier_view_open (const struct pr_rollout *r, pid_t init_pid, struct pr_verifier_view *out, pr_error **err);

/* In the verifier's fresh mount namespace, with / being the container's
 * root: makes every mount private (nothing propagates either way),
 * attaches the overlay root over /, binds back the recorded top-level
 * directories and the container's submounts of / (in mount order; one
 * whose mount point can no longer be reached without a symlink is left
 * out: the container cannot see it either), attaches the view's mounts in
 * order and pivots into the result.  Each target is walked from the new
 * root one component at a time with O_NOFOLLOW; the skeleton already holds
 * it, so only a non-directory inside an earlier view mount or inside a
 * mount the agent made over a skeleton path can stop it ("`x` exists and
 * is not a directory").  Errors: mount/mkdir errnos naming the target. */
/* Adds a mount to the view: target (absolute, inside the container), a
 * detached tree fd the view takes over (-1: an empty tmpfs), is_dir. */
void pr_verifier_view_add (struct pr_verifier_view *v, const char *target, int fd, bool is_dir);

int pr_verifier_view_mount (const struct pr_verifier_view *v, pr_error **err);

void pr_verifier_view_free (struct pr_verifier_view *v);

#endif
