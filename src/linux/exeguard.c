/* exeguard.c - owns the CVE-2019-5736 defence: before it enters a
 * container, proctor re-executes itself from a file no container process
 * can write, so the /proc/PID/exe a container process can open is never a
 * writable host binary.  That file is, first choice, the binary itself seen
 * through a private read-only overlayfs mount with no upper layer (no copy:
 * the re-executed text is the page cache's, shared by every proctor
 * process); when that mount cannot be made (no overlayfs, a kernel before
 * the mount API, no CAP_SYS_ADMIN over our mount namespace), a sealed memfd
 * copy.  Whether we already run protected is read from /proc/self/exe
 * itself (its seals, or its mount's read-only flag), so no marker
 * (environment variable, argv) leaks into containers.  A binary on a
 * read-only mount needs neither (see fd_on_readonly_mount). */
#define _GNU_SOURCE
#include "config.h" /* configure's: PROCTOR_FAULT_INJECTION */
#include "exeguard.h"

#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PR_EXE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* The attributes of both mounts of the overlay view: never writable, and
 * nothing on them can be a device node or gain privileges on exec. */
#define PR_EXE_MOUNT_ATTR (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID)

/* TEST-ONLY, compiled in only by `configure --enable-fault-injection`
 * (like lifecycle/container.c's test_crash_at; a release build lacks the
 * variable's name): PROCTOR_TEST_EXEGUARD=memfd skips the overlay view, so
 * tests/security/exe.bats can check the fallback on a kernel where the
 * overlay works. */
#ifdef PROCTOR_FAULT_INJECTION
static bool
test_force_memfd (void)
{
  const char *v = getenv ("PROCTOR_TEST_EXEGUARD");
  return v != NULL && strcmp (v, "memfd") == 0;
}
#else
static inline bool
test_force_memfd (void)
{
  return false;
}
#endif

/* True when fd carries every seal we require.  F_GET_SEALS fails with
 * EINVAL on files that cannot be sealed, i.e. any on-disk binary. */
static bool
fd_is_sealed (int fd)
{
  int seals = fcntl (fd, F_GET_SEALS);
  return seals >= 0 && (seals & PR_EXE_SEALS) == PR_EXE_SEALS;
}

/* True when fd lives on a read-only mount or filesystem (ST_RDONLY covers
 * both).  /proc/PID/exe then names that read-only mount, and opening it for
 * writing fails with EROFS whatever the opener's capabilities, so no
 * re-exec is needed.  A process in a container cannot remount a mount of
 * the host's namespace read-write.  This is the case of a read-only /usr
 * (image-based hosts), of an administrator's
 *   mount --bind /usr/bin/proctor /usr/bin/proctor
 *   mount -o remount,bind,ro /usr/bin/proctor
 * and of our own overlay view after the re-exec (what stops a second one). */
static bool
fd_on_readonly_mount (int fd)
{
  struct statvfs sv;
  return fstatvfs (fd, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0;
}

/* ------------------------------------------------ first choice: overlay */

/* A detached, read-only, empty tmpfs mount (fd), or -1 with errno.
 * overlayfs needs two lower layers when it has no upper one (one gives
 * EINVAL, the same directory twice ELOOP); this is the second, below the
 * binary's directory, and adds nothing to what the overlay shows. */
static int
empty_readonly_tmpfs (void)
{
  _cleanup_close_ int fs = pr_sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return -1;
  if (pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "nr_inodes", "1", 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, PR_EXE_MOUNT_ATTR | MOUNT_ATTR_NOEXEC);
}

/* A detached, read-only overlayfs mount (fd) whose lower layers are the
 * directory dirfd and the empty tmpfs, with no upper or work directory, or
 * -1 with errno.  Layers are given as /proc/self/fd paths of fds we hold
 * (no escaping of ':' or ',' in the binary's path; the "lowerdir" key is
 * understood by every overlayfs the mount API can reach, Linux 5.2+). */
static int
readonly_overlay (int dirfd)
{
  _cleanup_close_ int empty = empty_readonly_tmpfs ();
  if (empty < 0)
    return -1;
  _cleanup_close_ int fs = pr_sys_fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fs < 0)
    return -1;
  char layers[64];
  snprintf (layers, sizeof layers, "/proc/self/fd/%d:/proc/self/fd/%d", dirfd, empty);
  if (pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "lowerdir", layers, 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, PR_EXE_MOUNT_ATTR);
}

/* True when a and b are the same file's content: overlayfs reports the
 * lower file's inode number, size and times (not its device), so a binary
 * replaced under its path since we started (a package upgrade) fails this
 * and gets the memfd copy of what we run instead. */
static bool
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_ino == b->st_ino && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec
         && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec
         && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The running binary (exe, with stat st) opened read-only through a
 * private read-only overlay of its directory, or -1 with errno (EXDEV: the
 * file at /proc/self/exe's path is no longer the one we run).  The fd keeps
 * the detached mount alive, then the exec'd image does: nothing else
 * refers to it, and no mount table shows it. */
static int
open_overlay_view (const struct stat *st)
{
  char path[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0)
    return -1;
  path[n] = '\0';
  char *slash = strrchr (path, '/');
  if (path[0] != '/' || slash == NULL || slash[1] == '\0')
    {
      errno = ENOENT; /* not a path in our mount namespace (deleted, memfd) */
      return -1;
    }
  *slash = '\0';
  const char *dir = path[0] != '\0' ? path : "/";
  _cleanup_close_ int dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return -1;
  _cleanup_close_ int mnt = readonly_overlay (dirfd);
  if (mnt < 0)
    return -1;
  int fd = openat (mnt, slash + 1, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat vst;
  if (fstat (fd, &vst) < 0 || !same_file (&vst, st) || !fd_on_readonly_mount (fd))
    {
      close (fd);
      errno = EXDEV;
      return -1;
    }
  return fd;
}

/* Re-executes from the overlay view.  Returns only when that cannot be
 * done, with the errno of the step that failed, for the caller to fall
 * back to the memfd copy. */
static int
exec_overlay_view (const struct stat *st, char **argv, char **envp)
{
  int fd = open_overlay_view (st);
  if (fd < 0)
    return errno;
  pr_debug ("re-executing from a read-only overlay view of the runtime binary");
  fexecve (fd, argv, envp);
  int e = errno;
  close (fd);
  return e;
}

/* ------------------------------------------------ fallback: sealed memfd */

static int
create_memfd (void)
{
  /* vm.memfd_noexec (Linux 6.3+) may make memfds non-executable unless
   * MFD_EXEC is asked for; older kernels reject the unknown flag. */
  int fd = memfd_create ("proctor", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL)
    fd = memfd_create ("proctor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  return fd;
}

/* Copies all of src into dst: copy_file_range first (may fail across
 * filesystems), sendfile for the rest. */
static int
copy_all (int dst, int src, off_t size)
{
  off_t done = 0;

  while (done < size)
    {
      ssize_t n = copy_file_range (src, NULL, dst, NULL, (size_t) (size - done), 0);
      if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
        n = sendfile (dst, src, NULL, (size_t) (size - done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        break; /* the file shrank under us; the size check below catches it */
      done += n;
    }
  if (done != size)
    {
      errno = EIO;
      return -1;
    }
  return 0;
}

/* Copies exe (st_size bytes) into a sealed memfd and re-executes from it;
 * returns -1 with err set when any step fails (never returns otherwise). */
static int
exec_memfd_copy (int exe, off_t size, char **argv, char **envp, pr_error **err)
{
  _cleanup_close_ int mfd = create_memfd ();
  if (mfd < 0)
    return pr_error_set (err, errno, "memfd_create for the sealed runtime copy");
  if (copy_all (mfd, exe, size) < 0)
    return pr_error_set (err, errno, "copy `/proc/self/exe` into memfd");
  if (fcntl (mfd, F_ADD_SEALS, PR_EXE_SEALS) < 0)
    return pr_error_set (err, errno, "seal the runtime memfd");
  /* Re-check before exec: if the seals did not stick, the new process would
   * not see them either and would re-execute forever. */
  if (!fd_is_sealed (mfd))
    return pr_error_invalid (err, "seal the runtime memfd: seals not applied");

  pr_debug ("re-executing from a sealed copy of the runtime binary");
  fexecve (mfd, argv, envp);
  return pr_error_set (err, errno, "fexecve the sealed runtime copy");
}

int
pr_exeguard_ensure_protected (char **argv, char **envp, pr_error **err)
{
  _cleanup_close_ int exe = -1;
  struct stat st;

  exe = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (exe < 0)
    return pr_error_set (err, errno, "open `/proc/self/exe`");
  if (fd_is_sealed (exe) || fd_on_readonly_mount (exe))
    return 0;
  if (fstat (exe, &st) < 0)
    return pr_error_set (err, errno, "stat `/proc/self/exe`");

  /* Any failure of the overlay (old kernel, no overlayfs, no privilege
   * over our mount namespace, EPERM from an LSM) leaves the memfd copy,
   * which gives the same guarantee at the cost of a copy per call. */
  if (!test_force_memfd ())
    {
      int e = exec_overlay_view (&st, argv, envp);
      pr_debug ("no read-only overlay view of the runtime binary (%s): using a sealed copy", strerror (e));
    }
  return exec_memfd_copy (exe, st.st_size, argv, envp, err);
}
