/* mount.h - the container's root filesystem: rootfs bind, config mounts,
 * default devices and linux.devices, pivot_root, masked and readonly paths,
 * readonly root, rootfsPropagation.
 *
 * Called in the container's own (new) mount namespace, in this order:
 *   pr_rootfs_prepare()  before pivot_root (createContainer hooks run after)
 *   pr_rootfs_pivot()
 *   pr_rootfs_finalize()
 * Every mount target is resolved inside the rootfs with openat2(2)
 * RESOLVE_IN_ROOT (see safepath.h) and mounted through its
 * /proc/self/fd/N path, so a symlink in the image cannot send a mount
 * outside the rootfs.  Source: runtime-spec config.md "Root", "Mounts",
 * config-linux.md "Devices", "Default Devices", "maskedPaths",
 * "readonlyPaths", "rootfsMountPropagation"; pivot_root(2). */
#ifndef PROCTOR_MOUNT_H
#define PROCTOR_MOUNT_H

#include <stdbool.h>

#include "../base/error.h"
#include "../config/config.h"

struct pr_rootfs_opts
{
  const char *rootfs;   /* absolute host path of the rootfs */
  bool in_userns;       /* the container has its own user namespace: device
                           nodes are bind-mounted from the host, not mknod'ed */
  bool new_cgroupns;    /* cgroup mounts show the container's cgroupns root */
  bool no_pivot;        /* --no-pivot: MS_MOVE + chroot instead of pivot_root */
  const int *bind_fds;  /* per cfg->mounts entry: its source's detached
                           clone from stage 1 (idmount.h), -1 or NULL for
                           none */
  const int *dev_fds;   /* per device (devices.h pr_devices_open): its
                           node's detached mount, -1 or NULL for none */
};

/* Makes / recursively private (or rslave per rootfsPropagation), bind-mounts
 * the rootfs onto itself, performs every cfg->mounts entry in order
 * (bind/rbind with all flags and propagation options, proc, sysfs, tmpfs,
 * devpts, mqueue, cgroup/cgroup2, and any other fstype with data options),
 * creates the default devices (/dev/null, zero, full, random, urandom, tty,
 * /dev/ptmx -> pts/ptmx, /dev/fd, stdin/out/err symlinks) and linux.devices;
 * a "ro" /dev mount is made read-only only after all of that (its own
 * mount, not /dev/pts or /dev/shm below it).
 * A rootfs whose /dev is a symlink is refused first (ELOOP).
 * Errors: the first failing mount/mknod/mkdir, with errno, naming the mount
 * destination ("mount `proc` to `/proc`: ..."), or EINVAL for an unknown
 * mount option or a relative destination. */
int pr_rootfs_prepare (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err);

/* Switches root to the rootfs with pivot_root(".", ".") + umount2(MNT_DETACH)
 * of the old root, or MS_MOVE + chroot when o->no_pivot (whole procfs and
 * sysfs mounts outside the rootfs are detached or covered first, so that
 * mount_too_revealing refuses a fresh procfs inside); chdir("/") after.
 * Errors: pivot_root/mount/chroot errno, mountinfo unreadable, or a
 * procfs/sysfs outside the rootfs that can be neither detached nor
 * covered. */
int pr_rootfs_pivot (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err);

/* After pivot: masks linux.maskedPaths (a read-only empty tmpfs, source
 * "tmpfs" and size=0k, for directories, a read-only bind of the
 * container's /dev/null for files, made from fds with open_tree/fsmount
 * and move_mount; missing paths skipped), makes linux.readonlyPaths
 * read-only bind mounts (on procfs and sysfs without the source's nosuid,
 * nodev, noexec: all of these read in mountinfo as crun's, so that a
 * rollout reads like a plain container), remounts root read-only when
 * root.readonly, and sets rootfsPropagation on /.  /dev/null must be the
 * null device (character 1:3), else nothing is masked and EPERM is
 * returned (CVE-2025-31133: a symlink there once bound its target over
 * every masked file).  Errors: mount, open_tree, fsmount, move_mount errno
 * naming the path; EPERM as above. */
int pr_rootfs_finalize (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err);

/* Parses a mount's options into mount(2) flags, propagation flags, recursive
 * (rbind) flag and the remaining data string ("mode=755,size=65536k").
 * Used by the mount code and by config validation before anything is done.
 * Errors: EINVAL naming an option that has no meaning (none today: unknown
 * options are passed to the filesystem as data, as runc does). */
struct pr_mount_flags
{
  unsigned long flags;       /* MS_* for the mount itself */
  unsigned long propagation; /* MS_SHARED/MS_PRIVATE/MS_SLAVE/MS_UNBINDABLE (| MS_REC) */
  unsigned long clear_flags; /* flags explicitly negated (rw, suid, ...) */
  unsigned long rec_flags;   /* recursive attributes set (rro, rnosuid, ...:
                                runtime-spec 1.2), over every submount */
  unsigned long rec_clear_flags; /* recursive attributes cleared (rrw, ...) */
  bool bind;
  bool recursive;
  bool idmap;               /* "idmap" / "ridmap" option */
  char *data;               /* malloc'd, may be NULL */
};
int pr_mount_parse_options (char *const *options, struct pr_mount_flags *out, pr_error **err);

#endif
