/* procfs.c - procfs files opened through a private procfs instance, so
 * that no racing mount can redirect the runtime's writes (see procfs.h,
 * CVE-2025-52881). */
#define _GNU_SOURCE
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../base/syscall.h"
#include "../base/util.h"

/* The root directory inode of every procfs (fs/proc/root.c PROC_ROOT_INO). */
#define PROCFS_ROOT_INO 1

/* A new procfs, attached nowhere (subset=pid would hide sys/: not set). */
static int
private_procfs (void)
{
  _cleanup_close_ int fs = pr_sys_fsopen ("proc", FSOPEN_CLOEXEC);
  if (fs < 0)
    return -1;
  if (pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* /proc as seen now, only if it is the root of a procfs (not a bind of a
 * part of one, nor anything else). */
static int
visible_procfs_root (void)
{
  int fd = open ("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct statfs sfs;
  struct stat st;
  if (fd < 0)
    return -1;
  if (fstatfs (fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC || fstat (fd, &st) < 0
      || st.st_ino != PROCFS_ROOT_INO)
    {
      close (fd);
      errno = EPERM;
      return -1;
    }
  return fd;
}

int
pr_procfs_open (const char *subpath, int flags, int *fd_out, pr_error **err)
{
  _cleanup_close_ int root = private_procfs ();
  if (root < 0)
    root = visible_procfs_root ();
  if (root < 0)
    return pr_error_set (err, errno, "open `/proc/%s`: no procfs of our own and `/proc` is not a procfs root",
                         subpath);
  struct open_how how = {
    .flags = (unsigned long long) (flags | O_CLOEXEC),
    .resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
  };
  int fd;
  do
    fd = pr_sys_openat2 (root, subpath, &how, sizeof how);
  while (fd < 0 && (errno == EAGAIN || errno == EINTR));
  if (fd < 0)
    return pr_error_set (err, errno, "open `/proc/%s`%s", subpath,
                         errno == EXDEV ? ": a mount is in the way" : "");
  *fd_out = fd;
  return 0;
}

void
pr_procfs_self_path (char *buf, size_t len, const char *rest)
{
  snprintf (buf, len, "%d/task/%d/%s", (int) getpid (), (int) gettid (), rest);
}

int
pr_procfs_write (const char *subpath, const void *data, size_t len, const char *what, pr_error **err)
{
  _cleanup_close_ int fd = -1;
  if (pr_procfs_open (subpath, O_WRONLY, &fd, err) < 0)
    return pr_error_wrap (err, "%s", what);
  if (pr_write_all (fd, data, len) < 0)
    return pr_error_set (err, errno, "%s: write `/proc/%s`", what, subpath);
  return 0;
}
