/* verifier.c - mounting the verifier's view (see verifier.h). */
#define _GNU_SOURCE
#include "verifier.h"
#include "netfiles.h"
#include "base.h"
#include "hidden.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TOPS 1024

static int new_tmpfs (pr_error **err);
static int build_overlay (const struct pr_rollout *r, struct pr_verifier_view *v, pr_error **err);

static int
open_tree_flags (int dirfd, const char *path, bool recursive, unsigned long ms_flags, int *fd_out, pr_error **err)
{
  int fd = pr_sys_open_tree (dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
  if (fd < 0)
    return pr_error_set (err, errno, "clone mount of `%s`", path);
  struct mount_attr attr = { 0 };
  attr.attr_set = (ms_flags & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0) | (ms_flags & MS_NOSUID ? MOUNT_ATTR_NOSUID : 0)
                  | (ms_flags & MS_NODEV ? MOUNT_ATTR_NODEV : 0) | (ms_flags & MS_NOEXEC ? MOUNT_ATTR_NOEXEC : 0);
  if (attr.attr_set)
    {
      if (pr_sys_mount_setattr (fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
        {
          int e = errno;
          close (fd);
          return pr_error_set (err, e, "set the flags of the mount of `%s`", path);
        }
    }
  *fd_out = fd;
  return 0;
}

static int
open_tree_clone (int dirfd, const char *path, bool readonly, int *fd_out, pr_error **err)
{
  return open_tree_flags (dirfd, path, true, readonly ? MS_RDONLY : 0, fd_out, err);
}

void
pr_verifier_view_add (struct pr_verifier_view *v, const char *target, int fd, bool is_dir)
{
  v->v = xrealloc (v->v, (v->n + 1) * sizeof *v->v);
  v->v[v->n].target = xstrdup (target);
  v->v[v->n].tree_fd = fd;
  v->v[v->n].is_dir = is_dir;
  v->n++;
}

static bool
has_mount_under (const struct pr_policy *p, const struct pr_hidden_mount *em, size_t n_em, const char *dir)
{
  for (size_t i = 0; i < p->n_verifier_mounts; i++)
    if (pr_path_is_under (p->verifier_mounts[i].destination, dir))
      return true;
  for (size_t i = 0; i < n_em; i++)
    if (pr_path_is_under (em[i].destination, dir))
      return true;
  return false;
}

/* The engine mounts taken out at create, made again from the host. */
static int
add_engine_mounts (struct pr_verifier_view *v, const struct pr_hidden_mount *em, size_t n, pr_error **err)
{
  for (size_t i = 0; i < n; i++)
    {
      struct stat st;
      int fd = -1;
      if (em[i].source == NULL)
        {
          fd = new_tmpfs (err);
          if (fd < 0)
            return -1;
          pr_verifier_view_add (v, em[i].destination, fd, true);
          continue;
        }
      if (stat (em[i].source, &st) < 0)
        return pr_error_set (err, errno, "engine mount source `%s` (for `%s`)", em[i].source, em[i].destination);
      if (open_tree_flags (AT_FDCWD, em[i].source, em[i].recursive, em[i].flags, &fd, err) < 0)
        return -1;
      pr_verifier_view_add (v, em[i].destination, fd, S_ISDIR (st.st_mode));
    }
  return 0;
}

static char **
read_tops (int state_dirfd)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  char **tops = xmalloc0 (sizeof (char *));
  if (pr_read_file_at (state_dirfd, PR_VIEW_TOPS_FILE, &text, &len, NULL) < 0)
    return tops;
  for (size_t pos = 0; pos < len;)
    {
      const char *end = memchr (text + pos, '\0', len - pos);
      if (end == NULL)
        break;
      if (end > text + pos && strchr (text + pos, '/') == NULL)
        tops = pr_strv_append (tops, text + pos);
      pos = end - text + 1;
    }
  return tops;
}

int
pr_verifier_view_record (int rootfd, int state_dirfd, pr_error **err)
{
  int fd = openat (rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open the rootfs");
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return pr_error_set (err, errno, "read the rootfs");
    }
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, count = 0;
  struct dirent *de;
  while ((de = readdir (d)) && count < MAX_TOPS)
    {
      struct stat st;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
        continue;
      size_t n = strlen (de->d_name) + 1;
      buf = xrealloc (buf, len + n);
      memcpy (buf + len, de->d_name, n);
      len += n;
      count++;
    }
  closedir (d);
  return pr_write_file_at (state_dirfd, PR_VIEW_TOPS_FILE, buf ? buf : "", len, 0600, err);
}

static char **root_children (pid_t pid, pr_error **err);

int
pr_verifier_view_open (const struct pr_rollout *r, pid_t init_pid, struct pr_verifier_view *out, pr_error **err)
{
  const struct pr_policy *p = r->policy;
  struct pr_verifier_view v = { 0 };
  _cleanup_close_ int stash = openat (r->state_dirfd, PR_HIDDEN_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct pr_hidden_mount *em = NULL;
  size_t n_em = 0;
  if (pr_hidden_mounts_load (r->state_dirfd, &em, &n_em, err) < 0)
    return -1;
  /* First, so that verifier mounts below a base path land on the image's. */
  if (p->base == PR_BASE_IMAGE && pr_base_view_add (r->state_dirfd, r->rootfs, p, &v, err) < 0)
    goto fail;

  for (size_t i = 0; p->hide && p->hide[i]; i++)
    {
      char name[32];
      struct stat st;
      snprintf (name, sizeof name, "%zu", i);
      if (stash >= 0 && fstatat (stash, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        {
          int fd = -1;
          if (open_tree_clone (stash, name, false, &fd, err) < 0)
            goto fail;
          pr_verifier_view_add (&v, p->hide[i], fd, S_ISDIR (st.st_mode));
        }
      else if (has_mount_under (p, em, n_em, p->hide[i]))
        pr_verifier_view_add (&v, p->hide[i], -1, true);
    }
  if (add_engine_mounts (&v, em, n_em, err) < 0)
    goto fail;
  /* The engine's /etc/hosts, resolv.conf, hostname as they were at create
   * (the agent's root can rewrite them); before verifier.mounts, which may
   * still put a file of the policy's there. */
  if (pr_netfiles_view_add (r->state_dirfd, r->rootfs, &v, err) < 0)
    goto fail;
  for (size_t i = 0; i < p->n_verifier_mounts; i++)
    {
      const struct pr_policy_mount *m = &p->verifier_mounts[i];
      struct stat st;
      int fd = -1;
      if (stat (m->source, &st) < 0)
        {
          pr_error_set (err, errno, "verifier mount source `%s`", m->source);
          goto fail;
        }
      if (open_tree_clone (AT_FDCWD, m->source, m->readonly, &fd, err) < 0)
        goto fail;
      pr_verifier_view_add (&v, m->destination, fd, S_ISDIR (st.st_mode));
    }
  v.tops = read_tops (r->state_dirfd);
  v.children = root_children (init_pid, err);
  if (v.children == NULL)
    goto fail;
  if (build_overlay (r, &v, err) < 0)
    goto fail;
  pr_hidden_mounts_free (em, n_em);
  *out = v;
  return 0;
fail:
  pr_hidden_mounts_free (em, n_em);
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

/* ------------------------------------------------------------ the overlay */

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

/* Gives the skeleton entry at dirfd/name the owner and mode of like (the
 * live directory it covers): the overlay shows the topmost layer's
 * attributes, and a 0700 workdir must stay 0700. */
static void
copy_attrs (int dirfd, const char *name, const struct stat *like)
{
  if (fchownat (dirfd, name, like->st_uid, like->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    pr_debug ("rollout: chown of a view skeleton entry: %s", strerror (errno));
  if (fchmodat (dirfd, name, like->st_mode & 07777, 0) < 0)
    pr_debug ("rollout: chmod of a view skeleton entry: %s", strerror (errno));
}

/* Creates path's components in the skeleton (directories, the last one a
 * file unless is_dir), each with the attributes of the live directory at
 * the same path while there is one (followed with O_NOFOLLOW: a symlink
 * the agent planted is not a directory, and the skeleton's entry covers
 * it), else those of the live root. */
static int
skel_path (int skel, int live, const struct stat *root_st, const char *path, bool is_dir, pr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  _cleanup_close_ int sdir = dup (skel);
  _cleanup_close_ int ldir = dup (live);
  if (sdir < 0 || ldir < 0)
    return pr_error_set (err, errno, "dup");
  char *save = NULL;
  for (char *comp = strtok_r (copy, "/", &save); comp;)
    {
      char *next = strtok_r (NULL, "/", &save);
      bool dir = next != NULL || is_dir;
      struct stat st = *root_st;
      int nl = ldir < 0 ? -1 : openat (ldir, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      if (nl >= 0 && fstat (nl, &st) < 0)
        st = *root_st;
      int r = dir ? mkdirat (sdir, comp, 0755) : openat (sdir, comp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (r >= 0 && !dir)
        close (r);
      if (r < 0 && errno != EEXIST)
        {
          if (nl >= 0)
            close (nl);
          return pr_error_set (err, errno, "create `%s` in the verifier's skeleton", path);
        }
      if (r >= 0 && dir)
        copy_attrs (sdir, comp, &st);
      if (ldir >= 0)
        close (ldir);
      ldir = nl;
      if (!dir)
        break;
      int ns = openat (sdir, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      if (ns < 0)
        return pr_error_set (err, errno, "open `%s` in the verifier's skeleton", path);
      close (sdir);
      sdir = ns;
      comp = next;
    }
  return 0;
}

/* A fresh tmpfs whose root has the live root's owner and mode. */
static int
tmpfs_like (const struct stat *root_st, int *mnt_out, int *dir_out, pr_error **err)
{
  int m = new_tmpfs (err);
  if (m < 0)
    return -1;
  int d = openat (m, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0 || fchown (d, root_st->st_uid, root_st->st_gid) < 0 || fchmod (d, root_st->st_mode & 07777) < 0)
    {
      int e = errno;
      if (d >= 0)
        close (d);
      close (m);
      return pr_error_set (err, e, "prepare a tmpfs for the verifier's root");
    }
  *mnt_out = m;
  *dir_out = d;
  return 0;
}

static int
layer (int fs, const char *key, int fd, pr_error **err)
{
  if (pr_sys_fsconfig (fs, FSCONFIG_SET_FD, key, NULL, fd) < 0)
    return pr_error_set (err, errno, "overlay %s for the verifier's root", key);
  return 0;
}

/* SKEL over a non-recursive clone of the rootfs, with a private tmpfs
 * upper, as one detached mount in v->root_fd. */
static int
build_overlay (const struct pr_rollout *r, struct pr_verifier_view *v, pr_error **err)
{
  _cleanup_close_ int live = pr_sys_open_tree (AT_FDCWD, r->rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (live < 0)
    return pr_error_set (err, errno, "clone the rootfs `%s`", r->rootfs);
  struct stat root_st;
  if (fstat (live, &root_st) < 0)
    return pr_error_set (err, errno, "stat the rootfs");
  _cleanup_close_ int skel = -1, skel_dir = -1, upper = -1, upper_dir = -1;
  if (tmpfs_like (&root_st, &skel, &skel_dir, err) < 0 || tmpfs_like (&root_st, &upper, &upper_dir, err) < 0)
    return -1;
  for (size_t i = 0; i < v->n; i++)
    if (skel_path (skel_dir, live, &root_st, v->v[i].target, v->v[i].is_dir, err) < 0)
      return -1;
  if (mkdirat (upper_dir, "u", 0755) < 0 || mkdirat (upper_dir, "w", 0700) < 0)
    return pr_error_set (err, errno, "prepare the verifier's private layer");
  copy_attrs (upper_dir, "u", &root_st);
  _cleanup_close_ int u = openat (upper_dir, "u", O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_close_ int w = openat (upper_dir, "w", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (u < 0 || w < 0)
    return pr_error_set (err, errno, "open the verifier's private layer");
  _cleanup_close_ int fs = pr_sys_fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fs < 0)
    return pr_error_set (err, errno, "fsopen overlay");
  if (layer (fs, "lowerdir+", skel, err) < 0 || layer (fs, "lowerdir+", live, err) < 0
      || layer (fs, "upperdir", u, err) < 0 || layer (fs, "workdir", w, err) < 0)
    return -1;
  if (pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return pr_error_set (err, errno, "create the overlay for the verifier's root (over `%s`)", r->rootfs);
  int m = pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, 0);
  if (m < 0)
    return pr_error_set (err, errno, "fsmount the verifier's root");
  v->root_fd = m;
  v->has_root = true;
  return 0;
}

/* ------------------------------------------------------- binding live back */

/* Opens path (relative to dirfd, no symlink anywhere on the way) as O_PATH. */
static int
open_nofollow (int dirfd, const char *path)
{
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
  while (*path == '/')
    path++;
  return (int) pr_sys_openat2 (dirfd, *path ? path : ".", &how, sizeof how);
}

/* Clones oldroot/path (recursively) onto newroot/path.  A path that cannot
 * be reached without a symlink on either side is skipped (returns 0): the
 * container cannot reach that mount by this path either. */
static int
bind_back (int oldroot, int newroot, const char *path, pr_error **err)
{
  _cleanup_close_ int src = open_nofollow (oldroot, path);
  _cleanup_close_ int dst = src < 0 ? -1 : open_nofollow (newroot, path);
  if (src < 0 || dst < 0)
    {
      pr_debug ("rollout: verifier view: `%s` left out: %s", path, strerror (errno));
      return 0;
    }
  int tree = pr_sys_open_tree (src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return pr_error_set (err, errno, "clone `%s` for the verifier's root", path);
  int r = pr_sys_move_mount (tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  int e = errno;
  close (tree);
  if (r < 0)
    return pr_error_set (err, e, "bind `%s` into the verifier's root", path);
  return 0;
}

static bool
strv_has (char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

static void
unescape (char *s)
{
  char *w = s;
  for (char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7')
        {
          *w++ = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
          p += 3;
        }
      else
        *w++ = *p;
    }
  *w = '\0';
}

/* The mount points of the mounts directly on the root mount, in mount
 * order, from /proc/self/mountinfo (proc(5)): the engine's /proc, /dev,
 * /etc/hosts ... and whatever the agent mounted. */
static char **
root_children (pid_t pid, pr_error **err)
{
  struct statx sx;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  errno = 0;
  if (statx (AT_FDCWD, path, 0, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
    {
      pr_error_set (err, errno ? errno : ENOTSUP, "find the container's root mount");
      return NULL;
    }
  snprintf (path, sizeof path, "/proc/%d/mountinfo", (int) pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      pr_error_set (err, errno, "read %s", path);
      return NULL;
    }
  char **out = xmalloc0 (sizeof (char *));
  char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    {
      unsigned long long id, parent;
      char mp[4096];
      if (sscanf (line, "%llu %llu %*s %*s %4095s", &id, &parent, mp) != 3 || parent != sx.stx_mnt_id
          || id == sx.stx_mnt_id)
        continue;
      unescape (mp);
      if (strcmp (mp, "/") != 0 && !strv_has (out, mp))
        out = pr_strv_append (out, mp);
    }
  free (line);
  fclose (f);
  return out;
}

static bool
under_any (char *const *tops, const char *path)
{
  char buf[256];
  const char *t = top_name (path, buf, sizeof buf);
  for (size_t i = 0; tops && tops[i]; i++)
    if (strcmp (tops[i], t) == 0)
      return true;
  return false;
}

/* Over the overlay just attached at /: the recorded top-level directories
 * that are still directories and hold no view path, then the submounts of
 * the container's root not below one of them. */
static int
bind_live (const struct pr_verifier_view *v, int oldroot, int newroot, char **children, pr_error **err)
{
  _cleanup_strv_ char **bound = xmalloc0 (sizeof (char *));
  for (size_t i = 0; v->tops && v->tops[i]; i++)
    {
      struct stat st;
      const char *name = v->tops[i];
      if (is_view_top (v, name) || fstatat (oldroot, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
        continue;
      if (bind_back (oldroot, newroot, name, err) < 0)
        return -1;
      bound = pr_strv_append (bound, name);
    }
  for (size_t i = 0; children && children[i]; i++)
    if (!under_any (bound, children[i]) && bind_back (oldroot, newroot, children[i], err) < 0)
      return -1;
  return 0;
}

/* Attaches the overlay over / and binds the live tree back into it. */
static int
build_root (const struct pr_verifier_view *v, int *newroot_out, pr_error **err)
{
  _cleanup_close_ int oldroot = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (oldroot < 0)
    return pr_error_set (err, errno, "open /");
  if (!v->has_root)
    return pr_error_set (err, EINVAL, "the verifier's root was not prepared");
  _cleanup_close_ int newroot = dup (v->root_fd);
  if (newroot < 0)
    return pr_error_set (err, errno, "dup");
  if (attach (newroot, AT_FDCWD, "/", "the verifier's root", err) < 0)
    return -1;
  if (bind_live (v, oldroot, newroot, v->children, err) < 0)
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
  if (v->has_root)
    close (v->root_fd);
  v->has_root = false;
  pr_strv_free (v->tops);
  v->tops = NULL;
  pr_strv_free (v->children);
  v->children = NULL;
}
