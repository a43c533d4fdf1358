/* safepath.c - opening and creating paths inside a rootfs with openat2(2)
 * RESOLVE_IN_ROOT, so that symlinks and ".." in a container image can never
 * lead the runtime to a host path.  Owns pr_safe_open, pr_safe_mkdir_p,
 * pr_safe_create_target and pr_fd_path (see safepath.h). */
#define _GNU_SOURCE
#include "safepath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/syscall.h"
#include "../base/util.h"

/* RESOLVE_IN_ROOT lookups return EAGAIN when a concurrent rename could have
 * moved a path component outside the root; the lookup is then retried. */
#define SAFE_OPEN_RETRIES 32

static int
openat2_in_root (int rootfd, const char *path, int flags, mode_t mode)
{
  struct open_how how = {
    .flags = (unsigned long long) (flags | O_CLOEXEC),
    .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };
  if (path == NULL || *path == '\0')
    path = ".";
  for (int i = 0; i < SAFE_OPEN_RETRIES; i++)
    {
      int fd = pr_sys_openat2 (rootfd, path, &how, sizeof how);
      if (fd >= 0 || (errno != EAGAIN && errno != EINTR))
        return fd;
    }
  return -1;
}

int
pr_safe_open (int rootfd, const char *path, int flags, mode_t mode, int *fd_out, pr_error **err)
{
  int fd = openat2_in_root (rootfd, path, flags, mode);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s` inside the rootfs", path);
  *fd_out = fd;
  return 0;
}

/* Copies the first `len` bytes of path (a prefix ending at a component
 * boundary) into a new string. */
static char *
prefix_dup (const char *path, size_t len)
{
  char *r = xmalloc (len + 1);
  memcpy (r, path, len);
  r[len] = '\0';
  return r;
}

/* Bounds the dangling-symlink chains followed by mkdir_p (as the kernel's
 * own limit of 40 symlinks per lookup). */
#define MAX_LINK_DEPTH 40

static int mkdir_p_depth (int rootfd, const char *path, mode_t mode, int depth, int *fd_out, pr_error **err);

/* comp (in directory cur, reached by the path prefix `dir`) is a dangling
 * symlink: create its target, resolved inside the root like the kernel
 * would resolve it from inside the container. */
static int
mkdir_link_target (int rootfd, int cur, const char *dir, const char *comp, mode_t mode, int depth, pr_error **err)
{
  char target[4096];
  ssize_t n = readlinkat (cur, comp, target, sizeof target - 1);
  if (n < 0)
    return -1;
  target[n] = '\0';
  _cleanup_free_ char *p = target[0] == '/' ? xstrdup (target) : xasprintf ("%s/%s", dir, target);
  _cleanup_close_ int fd = -1;
  if (mkdir_p_depth (rootfd, p, mode, depth + 1, &fd, err) < 0)
    return -1;
  return 0;
}

int
pr_safe_mkdir_p (int rootfd, const char *path, mode_t mode, int *fd_out, pr_error **err)
{
  return mkdir_p_depth (rootfd, path, mode, 0, fd_out, err);
}

static int
mkdir_p_depth (int rootfd, const char *path, mode_t mode, int depth, int *fd_out, pr_error **err)
{
  if (depth > MAX_LINK_DEPTH)
    return pr_error_set (err, ELOOP, "mkdir `%s` inside the rootfs", path);

  /* Every prefix is resolved from the root again (not from the previous
   * component's fd) so that an absolute symlink met on the way resolves
   * against the rootfs, exactly as it will inside the container. */
  _cleanup_close_ int cur = openat2_in_root (rootfd, ".", O_PATH | O_DIRECTORY, 0);
  if (cur < 0)
    return pr_error_set (err, errno, "open the rootfs");

  size_t len = strlen (path);
  size_t i = 0;
  while (i < len)
    {
      while (i < len && path[i] == '/')
        i++;
      if (i >= len)
        break;
      size_t start = i;
      while (i < len && path[i] != '/')
        i++;
      _cleanup_free_ char *comp = prefix_dup (path + start, i - start);
      _cleanup_free_ char *prefix = prefix_dup (path, i);

      int next = openat2_in_root (rootfd, prefix, O_PATH | O_DIRECTORY, 0);
      if (next < 0 && errno == ENOENT)
        {
          /* mkdirat() never follows a symlink in its last component: a
           * dangling symlink gives EEXIST; its target is then created
           * inside the root (never on the host). */
          if (mkdirat (cur, comp, mode) < 0)
            {
              if (errno != EEXIST)
                return pr_error_set (err, errno, "mkdir `%s` inside the rootfs", prefix);
              _cleanup_free_ char *dir = prefix_dup (path, start);
              pr_error *lerr = NULL;
              if (mkdir_link_target (rootfd, cur, *dir ? dir : ".", comp, mode, depth, &lerr) < 0 && lerr)
                {
                  if (err && *err == NULL)
                    *err = lerr;
                  else
                    pr_error_free (&lerr);
                  return -1;
                }
            }
          next = openat2_in_root (rootfd, prefix, O_PATH | O_DIRECTORY, 0);
        }
      if (next < 0)
        return pr_error_set (err, errno, "open directory `%s` inside the rootfs", prefix);
      close (cur);
      cur = next;
    }
  *fd_out = steal_fd (&cur);
  return 0;
}

static int create_target_depth (int rootfd, const char *path, int depth, int *fd_out, pr_error **err);

int
pr_safe_create_target (int rootfd, const char *path, bool is_dir, int *fd_out, pr_error **err)
{
  if (is_dir)
    return pr_safe_mkdir_p (rootfd, path, 0755, fd_out, err);
  return create_target_depth (rootfd, path, 0, fd_out, err);
}

static int
create_target_depth (int rootfd, const char *path, int depth, int *fd_out, pr_error **err)
{
  if (depth > MAX_LINK_DEPTH)
    return pr_error_set (err, ELOOP, "create file `%s` inside the rootfs", path);

  int fd = openat2_in_root (rootfd, path, O_PATH, 0);
  if (fd >= 0)
    {
      *fd_out = fd;
      return 0;
    }
  if (errno != ENOENT)
    return pr_error_set (err, errno, "open `%s` inside the rootfs", path);

  /* Split off the last component; trailing slashes name a directory. */
  _cleanup_free_ char *dir = xstrdup (path);
  size_t n = strlen (dir);
  while (n > 1 && dir[n - 1] == '/')
    dir[--n] = '\0';
  char *slash = strrchr (dir, '/');
  const char *base = slash ? slash + 1 : dir;
  if (*base == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return pr_error_invalid (err, "invalid file target `%s`", path);
  _cleanup_free_ char *base_copy = xstrdup (base);
  if (slash)
    slash[slash == dir ? 1 : 0] = '\0';
  else
    strcpy (dir, ".");

  _cleanup_close_ int parent = -1;
  if (pr_safe_mkdir_p (rootfd, dir, 0755, &parent, err) < 0)
    return -1;

  /* O_EXCL|O_NOFOLLOW: a symlink planted at the last component is never
   * followed (EEXIST), and an existing file is left alone. */
  int created = openat (parent, base_copy, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (created < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "create file `%s` inside the rootfs", path);
  if (created >= 0)
    close (created);
  else
    {
      /* A dangling symlink (/etc/resolv.conf -> /run/...): create its
       * target, resolved inside the root. */
      char target[4096];
      ssize_t n = readlinkat (parent, base_copy, target, sizeof target - 1);
      if (n >= 0)
        {
          target[n] = '\0';
          _cleanup_free_ char *next = target[0] == '/' ? xstrdup (target) : xasprintf ("%s/%s", dir, target);
          return create_target_depth (rootfd, next, depth + 1, fd_out, err);
        }
    }

  fd = openat2_in_root (rootfd, path, O_PATH, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s` inside the rootfs", path);
  *fd_out = fd;
  return 0;
}

void
pr_fd_path (int fd, char *buf, size_t len)
{
  snprintf (buf, len, "/proc/self/fd/%d", fd);
}
