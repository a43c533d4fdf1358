/* verifier.h - the verifier's view of the filesystem: its own mount
 * namespace (a copy of the container's, owned by the verifier's own user
 * namespace, rooted on a tmpfs that mirrors the container root) where the hidden image paths and the policy's verifier mounts
 * are mounted.  Nothing is mounted in the agent's namespace, so the agent
 * has no path into these mounts.  Source: SPEC section 2 "Verifier",
 * "Filesystem"; open_tree(2), move_mount(2), mount_setattr(2), fsopen(2). */
#ifndef PROCTOR_VERIFIER_H
#define PROCTOR_VERIFIER_H

#include <stdbool.h>
#include <stddef.h>

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
};

/* Runtime side, in the host mount namespace: clones a detached mount tree
 * of every hidden path the image had (from the stash in the state dir) and
 * of every policy verifier mount source (read-only when asked).  A hidden
 * path the image did not have but under which a verifier mount lies gets
 * an empty tmpfs, so no directory is made in the agent's rootfs for it.
 * Errors: open_tree/mount_setattr errno naming the source. */
int pr_verifier_view_open (const struct pr_rollout *r, struct pr_verifier_view *out, pr_error **err);

/* In the verifier's fresh mount namespace, with / being the container's
 * root: makes every mount a slave (nothing propagates back to the agent),
 * then mounts the view in order.  Each target is walked from / one
 * component at a time with O_NOFOLLOW: a symlink, fifo or file the agent
 * planted at or above a target is removed and replaced by a directory, so
 * it can neither redirect nor pre-fill what the verifier sees.  Errors:
 * mount/mkdir errnos naming the target. */
int pr_verifier_view_mount (const struct pr_verifier_view *v, pr_error **err);

void pr_verifier_view_free (struct pr_verifier_view *v);

#endif
