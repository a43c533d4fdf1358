/* idmount.h - idmapped bind mounts (runtime-spec config.md "Mounts":
 * the idmap and ridmap options, a mount's uidMappings and gidMappings;
 * mount_setattr(2) MOUNT_ATTR_IDMAP).
 *
 * An idmapped mount can only be made by a process privileged over the
 * filesystem's user namespace (the host's), and a container's init runs in
 * its own user namespace by the time it mounts.  So the work is split:
 * pr_bind_sources_open runs in stage 1 of create, still in the runtime's
 * user and mount namespaces, and makes a detached, idmapped clone of each
 * such bind source (and, with a user namespace, a plain clone of every
 * other bind source, so that it resolves with the runtime's credentials);
 * the init attaches those clones inside the rootfs with
 * pr_bind_source_attach. */
#ifndef PROCTOR_IDMOUNT_H
#define PROCTOR_IDMOUNT_H

#include <stdbool.h>

#include "mount.h"
#include "../base/error.h"
#include "../config/config.h"

/* True when mount m asks to be idmapped: an "idmap" or "ridmap" option
 * (with or without "=VALUE"), or uidMappings/gidMappings of its own. */
bool pr_idmount_wanted (const struct pr_mount *m);

/* Checks every idmapped mount of cfg before anything is created: no
 * "idmap=VALUE" option (crun's in-option mappings, refused rather than
 * passed on as data, which would give a plain bind); it is a
 * bind mount (bind/rbind option or type "bind"); uidMappings and
 * gidMappings come together; without them the container has a user
 * namespace whose mappings can be used (a new one with linux.uidMappings,
 * or one joined by path).  Returns 0, or -1 with EINVAL naming the mount
 * index and destination. */
int pr_idmount_validate (const struct pr_config *cfg, pr_error **err);

/* In stage 1 of create, still in the runtime's user and mount namespaces
 * and with its credentials: a detached copy (open_tree(2) OPEN_TREE_CLONE,
 * AT_RECURSIVE for rbind) of each bind source that the init, in the
 * container's user namespace, could not reach or could not idmap:
 *  - an idmapped entry of cfg->mounts gets MOUNT_ATTR_IDMAP on its copy
 *    (AT_RECURSIVE for ridmap) with a user namespace holding the mount's
 *    mappings, or the container's;
 *  - when the container has a user namespace and a new mount namespace,
 *    every other bind source too: a source under a directory only the
 *    host's root may enter (0700) resolves with the runtime's
 *    credentials, not with those of the container's root (issue #19
 *    item 5; runc and crun open them before the user namespace too).
 * Relative sources are relative to bundle.  *fds_out gets cfg->n_mounts
 * fds (O_CLOEXEC; -1 for mounts the init makes itself; NULL when there is
 * none), to be closed by the caller.  Errors: open of the bundle; open_tree
 * errno naming the source (ENOENT, EACCES...); mount_setattr errno (EINVAL:
 * the filesystem cannot be idmapped; ENOSYS: kernel before 5.12);
 * clone/uid_map errors making the mapping's user namespace. */
int pr_bind_sources_open (const struct pr_config *cfg, const char *bundle, int **fds_out, pr_error **err);

/* In the container's mount namespace: attaches the detached mount fd (from
 * pr_bind_sources_open) at m->destination inside rootfd (created as a
 * directory or file like the source, never following a symlink out of the
 * rootfs), then applies the mount's parsed options f (flags and
 * propagation, as any bind mount).  Errors: move_mount errno, and those of
 * the target's creation. */
int pr_bind_source_attach (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, int fd,
                           pr_error **err);

#endif
