/* identity.h - resolving a user spec (a rollout phase's `user`, the tty
 * group of a console) against the image's own
 * /etc/passwd and /etc/group, read by the runtime through a rootfs fd with
 * openat2(RESOLVE_IN_ROOT) (never by tools from the image, which may be
 * missing, old, or hostile).  Source: SPEC section 2 "user"; passwd(5),
 * group(5). */
#ifndef PROCTOR_IDENTITY_H
#define PROCTOR_IDENTITY_H

#include <stdint.h>
#include <sys/types.h>

#include "../base/error.h"

struct pr_identity
{
  uint32_t uid;
  uint32_t gid;
  char *home;            /* from passwd, "/" when the uid has no entry */
  uint32_t *groups;      /* supplementary groups the user is listed in */
  size_t n_groups;
};

/* Resolves spec ("uid", "uid:gid", "name", "name:group", "uid:group") in
 * the image whose root is rootfd.  A numeric uid without a passwd entry is
 * allowed (gid defaults to the uid's passwd gid, else 0; HOME "/").
 * Errors: EINVAL "unknown user `NAME` in the image's /etc/passwd",
 * "unknown group `NAME` in the image's /etc/group", malformed spec. */
int pr_identity_resolve (int rootfd, const char *spec, struct pr_identity *out, pr_error **err);

/* Highest uid and gid named in the image's passwd and group files (0 when
 * the files are absent), so the agent's id map can cover them. */
int pr_identity_max_ids (int rootfd, uint32_t *max_uid, uint32_t *max_gid, pr_error **err);

void pr_identity_free_contents (struct pr_identity *id);

#endif
