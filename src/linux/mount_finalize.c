/* mount_finalize.c - the container's root filesystem after pivot_root:
 * maskedPaths (a bind of the verified /dev/null for files, an empty
 * read-only tmpfs for directories, both attached from fds), readonlyPaths,
 * a read-only root and rootfsPropagation on "/" (pr_rootfs_finalize, see
 * mount.h).  Every path is opened inside the root with RESOLVE_IN_ROOT. */
#define _GNU_SOURCE
#include "mount.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lsm.h"
#include "mount-internal.h"
#include "safepath.h"
#include "../base/syscall.h"
#include "../base/util.h"

/* Opens the container's /dev/null (inside the root at rootfd) and checks it
 * is the null device, character 1:3.  CVE-2025-31133: masking by a bind of
 * the path "/dev/null" followed whatever the container had put there: a
 * symlink to /proc/sys/kernel/core_pattern bound that file, writable, over
 * every masked path.  The mask is made from this fd alone.  Returns 0 with
 * the O_PATH fd in *fd_out, or -1: the openat2 errno, or EPERM when it is
 * not the null device. */
static int
open_null_device (int rootfd, int *fd_out, pr_error **err)
{
  _cleanup_close_ int fd = -1;
  if (pr_safe_open (rootfd, "/dev/null", O_PATH | O_NOFOLLOW, 0, &fd, err) < 0)
    return pr_error_wrap (err, "maskedPaths: open the container's `/dev/null`");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return pr_error_set (err, errno, "maskedPaths: stat the container's `/dev/null`");
  if (!S_ISCHR (st.st_mode) || major (st.st_rdev) != 1 || minor (st.st_rdev) != 3)
    return pr_error_set (err, EPERM, "maskedPaths: the container's `/dev/null` is not the null device (1:3)");
  *fd_out = steal_fd (&fd);
  return 0;
}

/* Binds a copy of the mount at src_fd's file (open_tree(2) of the fd
 * itself, never a path the container could swap) onto the O_PATH fd
 * target (move_mount(2)), read-only and without the nosuid, nodev and
 * noexec /dev gave it: "ro,relatime" in mountinfo, as crun's masks read
 * (a rollout reads like a plain container, SPEC section 2).  A mount
 * whose flags are locked keeps them, read-only all the same. */
static int
bind_fd_onto (int src_fd, int target, const char *what, pr_error **err)
{
  _cleanup_close_ int tree = pr_sys_open_tree (src_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return pr_error_set (err, errno, "mask `%s`: open_tree of `/dev/null`", what);
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY,
                             .attr_clr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
  if (pr_sys_mount_setattr (tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
    {
      attr.attr_clr = 0;
      if (errno != EPERM || pr_sys_mount_setattr (tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        return pr_error_set (err, errno, "mask `%s`: make the bind of `/dev/null` read-only", what);
    }
  if (pr_sys_move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "mask `%s`", what);
  return 0;
}

/* Attaches a new, empty, read-only tmpfs (SELinux context label when
 * set) onto the O_PATH fd target, with fsopen(2)/fsmount(2)/move_mount(2):
 * no path is looked up after the fd was opened (no /proc/self/fd link,
 * which a mount over the container's /proc could redirect).  Source
 * "tmpfs" and size=0k, as crun mounts it: mountinfo then reads
 * "tmpfs tmpfs rw,size=0k" as for a plain container (SPEC section 2). */
static int
empty_ro_tmpfs_onto (int target, const char *label, const char *what, pr_error **err)
{
  _cleanup_close_ int fs = pr_sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return pr_error_set (err, errno, "mask `%s`: fsopen tmpfs", what);
  if (pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "source", "tmpfs", 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "size", "0k", 0) < 0)
    return pr_error_set (err, errno, "mask `%s`: tmpfs options", what);
  if (label && *label && pr_selinux_enabled () && pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "context", label, 0) < 0)
    return pr_error_set (err, errno, "mask `%s`: tmpfs context `%s`", what, label);
  if (pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return pr_error_set (err, errno, "mask `%s`: create tmpfs", what);
  _cleanup_close_ int mnt = pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
  if (mnt < 0)
    return pr_error_set (err, errno, "mask `%s`: fsmount tmpfs", what);
  if (pr_sys_move_mount (mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "mask `%s`", what);
  return 0;
}

static int
mask_path (int rootfd, int null_fd, const char *path, const char *label, pr_error **err)
{
  _cleanup_close_ int fd = -1;
  pr_error *e = NULL;
  if (pr_safe_open (rootfd, path, O_PATH, 0, &fd, &e) < 0)
    {
      int en = e->errnum;
      pr_error_free (&e);
      if (en == ENOENT)
        return 0;
      return pr_error_set (err, en, "open masked path `%s`", path);
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return pr_error_set (err, errno, "stat masked path `%s`", path);
  if (!S_ISDIR (st.st_mode))
    return bind_fd_onto (null_fd, fd, path, err);
  return empty_ro_tmpfs_onto (fd, label, path, err);
}

static int
readonly_path (int rootfd, const char *path, pr_error **err)
{
  _cleanup_close_ int fd = -1;
  pr_error *e = NULL;
  if (pr_safe_open (rootfd, path, O_PATH, 0, &fd, &e) < 0)
    {
      int en = e->errnum;
      pr_error_free (&e);
      if (en == ENOENT)
        return 0;
      return pr_error_set (err, en, "open readonly path `%s`", path);
    }
  char p[32];
  pr_fd_path (fd, p, sizeof p);
  if (mount (p, p, NULL, MS_BIND | MS_REC, NULL) < 0)
    return pr_error_set (err, errno, "bind mount readonly path `%s`", path);
  _cleanup_close_ int mnt = -1;
  if (pr_safe_open (rootfd, path, O_PATH, 0, &mnt, err) < 0)
    return -1;
  pr_fd_path (mnt, p, sizeof p);
  if (bind_remount (mnt, p, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 0, true, path, err) < 0)
    return -1;
  /* A procfs or sysfs path (the engines' defaults: /proc/sys, /proc/bus...)
   * reads "ro,relatime" as crun makes it (a rollout reads like a plain
   * container, SPEC section 2): its top mount loses nosuid, nodev and
   * noexec, which guard nothing there (no setuid files, nodes or
   * executables).  Any other path keeps them. */
  struct statfs sfs;
  if (fstatfs (mnt, &sfs) < 0 || (sfs.f_type != PROC_SUPER_MAGIC && sfs.f_type != SYSFS_MAGIC))
    return 0;
  return bind_remount (mnt, p, MS_RDONLY, MS_NOSUID | MS_NODEV | MS_NOEXEC, false, path, err);
}

int
pr_rootfs_finalize (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err)
{
  _cleanup_close_ int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return pr_error_set (err, errno, "open `/`");

  _cleanup_close_ int null_fd = -1;
  if (cfg->linux.masked_paths && *cfg->linux.masked_paths && open_null_device (rootfd, &null_fd, err) < 0)
    return -1;
  for (char **p = cfg->linux.masked_paths; p && *p; p++)
    if (mask_path (rootfd, null_fd, *p, cfg->linux.mount_label, err) < 0)
      return -1;
  for (char **p = cfg->linux.readonly_paths; p && *p; p++)
    if (readonly_path (rootfd, *p, err) < 0)
      return -1;

  if (cfg->root_readonly && bind_remount (rootfd, "/", MS_RDONLY, 0, false, "/", err) < 0)
    return -1;

  const char *rp = cfg->linux.rootfs_propagation;
  if (rp && *rp)
    {
      unsigned long prop;
      if (parse_propagation (rp, &prop) < 0)
        return pr_error_invalid (err, "invalid linux.rootfsPropagation `%s`", rp);
      if (mount (NULL, "/", NULL, prop, NULL) < 0)
        return pr_error_set (err, errno, "set propagation `%s` on `/`", rp);
    }
  return 0;
}
