/* verifier.c - mounting the verifier's view (see verifier.h). */
#define _GNU_SOURCE
#include "verifier.h"
#include "hidden.h"
#include "../base/syscall.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

static int
open_tree_clone (int dirfd, const char *path, bool readonly, int *fd_out, pr_error **err)
{
  int fd = pr_sys_open_tree (dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (fd < 0)
    return pr_error_set (err, errno, "clone mount of `%s`", path);
  if (readonly)
    {
      struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
      if (pr_sys_mount_setattr (fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
        {
          int e = errno;
          close (fd);
          return pr_error_set (err, e, "make mount of `%s` read-only", path);
        }
    }
  *fd_out = fd;
  return 0;
}

static void
add (struct pr_verifier_view *v, const char *target, int fd, bool is_dir)
{
  v->v = xrealloc (v->v, (v->n + 1) * sizeof *v->v);
  v->v[v->n].target = xstrdup (target);
  v->v[v->n].tree_fd = fd;
  v->v[v->n].is_dir = is_dir;
  v->n++;
}

static bool
has_mount_under (const struct pr_policy *p, const char *dir)
{
  for (size_t i = 0; i < p->n_verifier_mounts; i++)
    if (pr_path_is_under (p->verifier_mounts[i].destination, dir))
      return true;
  return false;
}

int
pr_verifier_view_open (const struct pr_rollout *r, struct pr_verifier_view *out, pr_error **err)
{
  const struct pr_policy *p = r->policy;
  struct pr_verifier_view v = { 0 };
  _cleanup_close_ int stash = openat (r->state_dirfd, PR_HIDDEN_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);

  for (size_t i = 0; p->hide && p->hide[i]; i++)
    {
      char name[32];
      struct stat st;
      snprintf (name, sizeof name, "%zu", i);
      if (stash >= 0 && fstatat (stash, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        {
          int fd;
          if (open_tree_clone (stash, name, false, &fd, err) < 0)
            goto fail;
          add (&v, p->hide[i], fd, S_ISDIR (st.st_mode));
        }
      else if (has_mount_under (p, p->hide[i]))
        add (&v, p->hide[i], -1, true);
    }
  for (size_t i = 0; i < p->n_verifier_mounts; i++)
    {
      const struct pr_policy_mount *m = &p->verifier_mounts[i];
      struct stat st;
      int fd;
      if (stat (m->source, &st) < 0)
        {
          pr_error_set (err, errno, "verifier mount source `%s`", m->source);
          goto fail;
        }
      if (open_tree_clone (AT_FDCWD, m->source, m->readonly, &fd, err) < 0)
        goto fail;
      add (&v, m->destination, fd, S_ISDIR (st.st_mode));
    }
  *out = v;
  return 0;
fail:
  pr_verifier_view_free (&v);
  return -1;
}

/* One step of a walk below the new root: opens name in dirfd as a
 * directory (or, for the last step of a file target, a regular file),
 * creating it when missing.  Anything else found there (a symlink, fifo or
 * file the agent planted in a bound directory) is refused rather than
 * followed. */
static int
open_step (int dirfd, const char *name, bool want_dir, pr_error **err)
{
  for (int attempt = 0; attempt < 4; attempt++)
    {
      int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (want_dir ? O_DIRECTORY : 0);
      int fd = openat (dirfd, name, flags);
      if (fd >= 0)
        {
          struct stat st;
          if (fstat (fd, &st) == 0 && (want_dir ? S_ISDIR (st.st_mode) : S_ISREG (st.st_mode)))
            return fd;
          close (fd);
          return pr_error_set (err, EEXIST, "`%s` exists and is not a %s", name, want_dir ? "directory" : "file");
        }
      if (errno != ENOENT)
        return pr_error_set (err, errno, "open `%s`", name);
      int r = want_dir ? mkdirat (dirfd, name, 0755)
                       : openat (dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (r >= 0 && !want_dir)
        close (r);
      if (r < 0 && errno != EEXIST)
        return pr_error_set (err, errno, "create `%s`", name);
    }
  return pr_error_set (err, EAGAIN, "`%s` keeps changing", name);
}

static int
open_target (int rootfd, const char *path, bool is_dir, int *fd_out, pr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  int fd = dup (rootfd);
  if (fd < 0)
    return pr_error_set (err, errno, "dup");
  char *save = NULL;
  char *comp = strtok_r (copy, "/", &save);
  while (comp)
    {
      char *next = strtok_r (NULL, "/", &save);
      int nfd = open_step (fd, comp, next != NULL || is_dir, err);
      close (fd);
      if (nfd < 0)
        return pr_error_wrap (err, "verifier mount target `%s`", path);
      fd = nfd;
      comp = next;
    }
  *fd_out = fd;
  return 0;
}

static int
new_tmpfs (pr_error **err)
{
  int fs = pr_sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return pr_error_set (err, errno, "fsopen tmpfs");
  int r = pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0755", 0);
  if (r == 0)
    r = pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
  int m = r < 0 ? -1 : pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  int e = errno;
  close (fs);
  if (m < 0)
    return pr_error_set (err, e, "create tmpfs");
  return m;
}

static int
attach (int tree, int dirfd, const char *name, const char *what, pr_error **err)
{
  unsigned int flags = MOVE_MOUNT_F_EMPTY_PATH | (name[0] ? 0 : MOVE_MOUNT_T_EMPTY_PATH);
  if (pr_sys_move_mount (tree, "", dirfd, name, flags) < 0)
    return pr_error_set (err, errno, "mount %s", what);
  return 0;
}

/* The first path component of path, into buf. */
static const char *
top_name (const char *path, char *buf, size_t len)
{
  while (*path == '/')
    path++;
  size_t n = strcspn (path, "/");
  snprintf (buf, len, "%.*s", (int) (n < len ? n : len - 1), path);
  return buf;
}

static bool
is_view_top (const struct pr_verifier_view *v, const char *name)
{
  char buf[256];
  for (size_t i = 0; i < v->n; i++)
    if (strcmp (top_name (v->v[i].target, buf, sizeof buf), name) == 0)
      return true;
  return false;
}

/* Recreates one top-level entry of the container root inside the new
 * root: directories (with everything mounted below them) are bound,
 * symlinks copied, other files bound onto an empty file. */
static int
mirror_entry (int oldroot, int newroot, const char *name, pr_error **err)
{
  struct stat st;
  if (fstatat (oldroot, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0;
  if (S_ISLNK (st.st_mode))
    {
      char target[4096];
      ssize_t n = readlinkat (oldroot, name, target, sizeof target - 1);
      if (n < 0)
        return pr_error_set (err, errno, "read link `/%s`", name);
      target[n] = '\0';
      if (symlinkat (target, newroot, name) < 0)
        return pr_error_set (err, errno, "copy link `/%s`", name);
      return 0;
    }
  int r = S_ISDIR (st.st_mode) ? mkdirat (newroot, name, st.st_mode & 07777)
                               : openat (newroot, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (r < 0)
    return pr_error_set (err, errno, "create `/%s` in the verifier's root", name);
  if (!S_ISDIR (st.st_mode))
    close (r);
  int tree = pr_sys_open_tree (oldroot, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return pr_error_set (err, errno, "clone `/%s`", name);
  _cleanup_free_ char *what = xasprintf ("`/%s`", name);
  r = attach (tree, newroot, name, what, err);
  close (tree);
  return r;
}

/* Builds the verifier's root: a tmpfs stacked on the container's root that
 * mirrors its top-level entries and holds the view's own entries, then
 * pivots into it.  No mount point is ever created in the agent's rootfs,
 * and whatever the agent planted at a view path (a symlink, fifo or file
 * at /tests or /logs) is simply not mirrored. */
static int
build_root (const struct pr_verifier_view *v, int *newroot_out, pr_error **err)
{
  _cleanup_close_ int oldroot = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (oldroot < 0)
    return pr_error_set (err, errno, "open /");
  _cleanup_close_ int newroot = new_tmpfs (err);
  if (newroot < 0)
    return -1;
  if (attach (newroot, AT_FDCWD, "/", "the verifier's root", err) < 0)
    return -1;
  DIR *d = fdopendir (dup (oldroot));
  if (d == NULL)
    return pr_error_set (err, errno, "read /");
  struct dirent *de;
  int r = 0;
  while (r == 0 && (de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0 || is_view_top (v, de->d_name))
        continue;
      r = mirror_entry (oldroot, newroot, de->d_name, err);
    }
  closedir (d);
  if (r < 0)
    return -1;
  *newroot_out = steal_fd (&newroot);
  return 0;
}

static int
pivot_into (int newroot, pr_error **err)
{
  if (fchdir (newroot) < 0)
    return pr_error_set (err, errno, "enter the verifier's root");
  if (pr_sys_pivot_root (".", ".") < 0)
    return pr_error_set (err, errno, "pivot_root into the verifier's root");
  if (umount2 (".", MNT_DETACH) < 0)
    return pr_error_set (err, errno, "detach the container's root");
  if (chdir ("/") < 0)
    return pr_error_set (err, errno, "chdir /");
  return 0;
}

int
pr_verifier_view_mount (const struct pr_verifier_view *v, pr_error **err)
{
  /* Private both ways: nothing mounted here reaches the agent, and
   * nothing the agent mounts from now on reaches the verifier. */
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return pr_error_set (err, errno, "make the verifier's mounts private");
  _cleanup_close_ int newroot = -1;
  if (build_root (v, &newroot, err) < 0)
    return -1;
  for (size_t i = 0; i < v->n; i++)
    {
      const struct pr_verifier_mount *m = &v->v[i];
      _cleanup_close_ int target = -1;
      _cleanup_close_ int tmp = -1;
      if (open_target (newroot, m->target, m->is_dir, &target, err) < 0)
        return -1;
      int tree = m->tree_fd;
      if (tree < 0)
        {
          tmp = new_tmpfs (err);
          if (tmp < 0)
            return -1;
          tree = tmp;
        }
      _cleanup_free_ char *what = xasprintf ("verifier view at `%s`", m->target);
      if (attach (tree, target, "", what, err) < 0)
        return -1;
    }
  return pivot_into (newroot, err);
}

void
pr_verifier_view_free (struct pr_verifier_view *v)
{
  for (size_t i = 0; i < v->n; i++)
    {
      free (v->v[i].target);
      if (v->v[i].tree_fd >= 0)
        close (v->v[i].tree_fd);
    }
  free (v->v);
  v->v = NULL;
  v->n = 0;
}
