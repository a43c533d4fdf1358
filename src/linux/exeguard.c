/* exeguard.c - owns the CVE-2019-5736 defence: proctor re-executes itself
 * from a sealed memfd copy of its binary, so the /proc/PID/exe a container
 * process can open is an immutable anonymous file, never the host binary.
 * Whether we already run sealed is read from the seals of /proc/self/exe
 * itself, so no marker (environment variable, argv) leaks into containers.
 * A binary on a read-only mount needs no copy (see fd_on_readonly_mount). */
#define _GNU_SOURCE
#include "exeguard.h"

#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PR_EXE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

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
 * writing fails with EROFS whatever the opener's capabilities, so the copy
 * and the re-exec (about 1 ms per create and exec, most of it the second
 * exec and dynamic loading) buy nothing.  A process in a container cannot
 * remount a mount of the host's namespace read-write.  This is the case of
 * a read-only /usr (image-based hosts) and of an administrator's
 *   mount --bind /usr/bin/proctor /usr/bin/proctor
 *   mount -o remount,bind,ro /usr/bin/proctor
 * the protection runc 1.2 relies on with its read-only overlay. */
static bool
fd_on_readonly_mount (int fd)
{
  struct statvfs sv;
  return fstatvfs (fd, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0;
}

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

int
pr_exeguard_ensure_sealed (char **argv, char **envp, pr_error **err)
{
  _cleanup_close_ int exe = -1;
  _cleanup_close_ int mfd = -1;
  struct stat st;

  exe = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (exe < 0)
    return pr_error_set (err, errno, "open `/proc/self/exe`");
  if (fd_is_sealed (exe) || fd_on_readonly_mount (exe))
    return 0;

  if (fstat (exe, &st) < 0)
    return pr_error_set (err, errno, "stat `/proc/self/exe`");
  mfd = create_memfd ();
  if (mfd < 0)
    return pr_error_set (err, errno, "memfd_create for the sealed runtime copy");
  if (copy_all (mfd, exe, st.st_size) < 0)
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
