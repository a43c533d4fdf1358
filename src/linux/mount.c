/* mount.c - the container's root filesystem: propagation of "/", the rootfs
 * bind mount, config.json mounts (options parsed in mount_options.c) (bind, tmpcopyup,
 * other filesystems; "cgroup" mounts are in mount_cgroup.c), devices,
 * pivot_root (masked and readonly paths, readonly root after it are in
 * mount_finalize.c; see mount.h).
 * Every target inside the rootfs is opened with RESOLVE_IN_ROOT and
 * mounted on through /proc/self/fd/N. */
#define _GNU_SOURCE
#include "mount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "devices.h"
#include "idmount.h"
#include "lsm.h"
#include "mount-internal.h"
#include "safepath.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

/* ---- helpers ----------------------------------------------------------- */

static uint64_t
ms_to_attr (unsigned long ms, bool *atime)
{
  uint64_t a = 0;
  if (ms & MS_RDONLY)
    a |= MOUNT_ATTR_RDONLY;
  if (ms & MS_NOSUID)
    a |= MOUNT_ATTR_NOSUID;
  if (ms & MS_NODEV)
    a |= MOUNT_ATTR_NODEV;
  if (ms & MS_NOEXEC)
    a |= MOUNT_ATTR_NOEXEC;
  if (ms & MS_NODIRATIME)
    a |= MOUNT_ATTR_NODIRATIME;
  if (ms & MS_NOSYMFOLLOW)
    a |= MOUNT_ATTR_NOSYMFOLLOW;
  *atime = false;
  if (ms & MS_NOATIME)
    a |= MOUNT_ATTR_NOATIME, *atime = true;
  else if (ms & MS_STRICTATIME)
    a |= MOUNT_ATTR_STRICTATIME, *atime = true;
  else if (ms & MS_RELATIME)
    a |= MOUNT_ATTR_RELATIME, *atime = true;
  return a;
}

/* Per-mount flags the kernel may have locked (a mount inherited from a more
 * privileged user namespace): MS_REMOUNT|MS_BIND must repeat them or fails
 * with EPERM.  Source: mount(2) EPERM, runc's getMountFlags-on-remount. */
static unsigned long
locked_flags (const char *path)
{
  struct statvfs sv;
  unsigned long r = 0;
  if (statvfs (path, &sv) < 0)
    return 0;
  if (sv.f_flag & ST_RDONLY)
    r |= MS_RDONLY;
  if (sv.f_flag & ST_NOSUID)
    r |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV)
    r |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC)
    r |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME)
    r |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME)
    r |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME)
    r |= MS_RELATIME;
  return r;
}

/* See mount-internal.h: mount_setattr(2) only touches the named attributes
 * and can recurse over submounts (rbind). */
int
bind_remount (int fd, const char *fdpath, unsigned long set, unsigned long clr, bool recursive, const char *what,
              pr_error **err)
{
  bool set_atime, clr_atime;
  struct mount_attr attr = { 0 };
  attr.attr_set = ms_to_attr (set, &set_atime);
  /* The atime mode is one field: mount_setattr(2) wants all of
   * MOUNT_ATTR__ATIME cleared whenever it changes. */
  attr.attr_clr = ms_to_attr (clr, &clr_atime) & ~(uint64_t) MOUNT_ATTR__ATIME;
  if (set_atime || clr_atime)
    attr.attr_clr |= MOUNT_ATTR__ATIME;

  unsigned int at = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  if (mount_setattr (fd, "", at, &attr, sizeof attr) == 0)
    return 0;
  if (errno == EPERM && (attr.attr_clr & MOUNT_ATTR__ATIME))
    {
      /* A mount inherited from a more privileged user namespace has its
       * atime mode locked (mount_namespaces(7)): keep it, apply the rest. */
      pr_warn ("cannot change the atime mode of `%s` (locked mount), keeping it", what);
      attr.attr_clr &= ~(uint64_t) MOUNT_ATTR__ATIME;
      attr.attr_set &= ~(uint64_t) MOUNT_ATTR__ATIME;
      if (mount_setattr (fd, "", at, &attr, sizeof attr) == 0)
        return 0;
    }
  if (errno != ENOSYS)
    return pr_error_set (err, errno, "remount `%s` with new flags", what);

  unsigned long flags = MS_REMOUNT | MS_BIND | ((locked_flags (fdpath) | set) & ~clr);
  if (mount (NULL, fdpath, NULL, flags, NULL) < 0)
    return pr_error_set (err, errno, "remount `%s` with new flags", what);
  return 0;
}

int
apply_propagation (int rootfd, const char *dest, unsigned long prop, pr_error **err)
{
  if (prop == 0)
    return 0;
  _cleanup_close_ int fd = -1;
  if (pr_safe_open (rootfd, dest, O_PATH, 0, &fd, err) < 0)
    return -1;
  char p[32];
  pr_fd_path (fd, p, sizeof p);
  if (mount (NULL, p, NULL, prop, NULL) < 0)
    return pr_error_set (err, errno, "set propagation of `%s`", dest);
  return 0;
}

/* Adds context="LABEL" for SELinux (runtime-spec linux.mountLabel). */
static char *
labeled_data (const char *data, const char *label)
{
  if (label == NULL || *label == '\0' || !pr_selinux_enabled ())
    return xstrdup (data);
  if (data == NULL || *data == '\0')
    return xasprintf ("context=\"%s\"", label);
  return xasprintf ("%s,context=\"%s\"", data, label);
}

/* ---- bind mounts ------------------------------------------------------ */

static int
do_bind_mount (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, pr_error **err)
{
  const char *src = m->source;
  if (src == NULL || *src == '\0')
    return pr_error_invalid (err, "bind mount to `%s`: no source", m->destination);

  /* The source is a host path (relative ones are relative to the bundle,
   * the current directory), trusted by definition. */
  struct stat st;
  if (stat (src, &st) < 0)
    return pr_error_set (err, errno, "bind mount `%s` to `%s`: stat source", src, m->destination);

  _cleanup_close_ int target = -1;
  if (pr_safe_create_target (rootfd, m->destination, S_ISDIR (st.st_mode), &target, err) < 0)
    return pr_error_wrap (err, "bind mount `%s` to `%s`", src, m->destination);
  char p[32];
  pr_fd_path (target, p, sizeof p);
  if (mount (src, p, NULL, MS_BIND | (f->recursive ? MS_REC : 0), NULL) < 0)
    return pr_error_set (err, errno, "mount `%s` to `%s`", src, m->destination);
  return bind_finish (rootfd, m, f, err);
}

/* See mount-internal.h. */
/* Applies the recursive attributes (rro, rnosuid, ...) of f to the mount
 * at m->destination and all its submounts (mount_setattr AT_RECURSIVE). */
static int
apply_rec_attrs (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, pr_error **err)
{
  if (((f->rec_flags | f->rec_clear_flags) & BIND_ATTR_FLAGS) == 0)
    return 0;
  _cleanup_close_ int mnt = -1;
  if (pr_safe_open (rootfd, m->destination, O_PATH, 0, &mnt, err) < 0)
    return -1;
  char p[32];
  pr_fd_path (mnt, p, sizeof p);
  return bind_remount (mnt, p, f->rec_flags & BIND_ATTR_FLAGS, f->rec_clear_flags & BIND_ATTR_FLAGS, true,
                       m->destination, err);
}

int
bind_finish (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, pr_error **err)
{
  if ((f->flags | f->clear_flags) & BIND_ATTR_FLAGS)
    {
      /* The target fd of the caller names the covered directory: reopen to
       * reach the mount. */
      _cleanup_close_ int mnt = -1;
      if (pr_safe_open (rootfd, m->destination, O_PATH, 0, &mnt, err) < 0)
        return -1;
      char p[32];
      pr_fd_path (mnt, p, sizeof p);
      /* Only the top mount: "rbind,ro" leaves the submounts' own flags
       * (runc, crun); "rro" is the recursive form. */
      if (bind_remount (mnt, p, f->flags & BIND_ATTR_FLAGS, f->clear_flags & BIND_ATTR_FLAGS, false,
                        m->destination, err) < 0)
        return -1;
    }
  if (apply_rec_attrs (rootfd, m, f, err) < 0)
    return -1;
  return apply_propagation (rootfd, m->destination, f->propagation, err);
}

bool
pr_mount_is_bind (const struct pr_mount *m)
{
  return (m->type && strcmp (m->type, "bind") == 0) || has_option (m->options, "bind")
         || has_option (m->options, "rbind");
}

/* ---- tmpcopyup --------------------------------------------------------- */

static int copy_tree (int src_dir, int dst_dir, const char *what, int depth, pr_error **err);

static int
copy_regular (int src_dir, int dst_dir, const char *name, const struct stat *st, const char *what, pr_error **err)
{
  _cleanup_close_ int in = openat (src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: open `%s`", what, name);
  _cleanup_close_ int out = openat (dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: create `%s`", what, name);
  char buf[65536];
  ssize_t n;
  while ((n = read (in, buf, sizeof buf)) > 0)
    if (pr_write_all (out, buf, (size_t) n) < 0)
      return pr_error_set (err, errno, "tmpcopyup `%s`: write `%s`", what, name);
  if (n < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: read `%s`", what, name);
  return 0;
}

/* Copies one entry; only ever opens names relative to the two directory
 * fds with O_NOFOLLOW, so a symlink in the image is copied, never followed. */
static int
copy_entry (int src_dir, int dst_dir, const char *name, const char *what, int depth, pr_error **err)
{
  struct stat st;
  if (fstatat (src_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: stat `%s`", what, name);
  switch (st.st_mode & S_IFMT)
    {
    case S_IFDIR:
      {
        if (mkdirat (dst_dir, name, 0700) < 0)
          return pr_error_set (err, errno, "tmpcopyup `%s`: mkdir `%s`", what, name);
        _cleanup_close_ int s = openat (src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d = openat (dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0 || d < 0)
          return pr_error_set (err, errno, "tmpcopyup `%s`: open directory `%s`", what, name);
        if (copy_tree (s, d, what, depth + 1, err) < 0)
          return -1;
        break;
      }
    case S_IFREG:
      if (copy_regular (src_dir, dst_dir, name, &st, what, err) < 0)
        return -1;
      break;
    case S_IFLNK:
      {
        char target[4096];
        ssize_t n = readlinkat (src_dir, name, target, sizeof target - 1);
        if (n < 0)
          return pr_error_set (err, errno, "tmpcopyup `%s`: readlink `%s`", what, name);
        target[n] = '\0';
        if (symlinkat (target, dst_dir, name) < 0)
          return pr_error_set (err, errno, "tmpcopyup `%s`: symlink `%s`", what, name);
        break;
      }
    case S_IFCHR:
    case S_IFBLK:
    case S_IFIFO:
      if (mknodat (dst_dir, name, st.st_mode, st.st_rdev) < 0)
        return pr_error_set (err, errno, "tmpcopyup `%s`: mknod `%s`", what, name);
      break;
    default:
      return 0; /* sockets are not copied */
    }
  if (fchownat (dst_dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: chown `%s`", what, name);
  if (!S_ISLNK (st.st_mode))
    {
      _cleanup_close_ int fd = openat (dst_dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      char p[32];
      if (fd < 0)
        return pr_error_set (err, errno, "tmpcopyup `%s`: open `%s`", what, name);
      pr_fd_path (fd, p, sizeof p);
      if (chmod (p, st.st_mode & 07777) < 0)
        return pr_error_set (err, errno, "tmpcopyup `%s`: chmod `%s`", what, name);
    }
  return 0;
}

static int
copy_tree (int src_dir, int dst_dir, const char *what, int depth, pr_error **err)
{
  if (depth > 256)
    return pr_error_set (err, ELOOP, "tmpcopyup `%s`: tree too deep", what);
  int dfd = openat (src_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: open", what);
  DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return pr_error_set (err, errno, "tmpcopyup `%s`: opendir", what);
    }
  int r = 0;
  struct dirent *de;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      r = copy_entry (src_dir, dst_dir, de->d_name, what, depth, err);
    }
  closedir (d);
  return r;
}

/* "tmpcopyup" (crun/runc extension used by podman --tmpfs): the new tmpfs
 * starts with a copy of what the image had at the mount point.  under is
 * an fd of the covered directory, opened before the mount. */
static int
tmpcopyup (int rootfd, int under, const char *dest, pr_error **err)
{
  _cleanup_close_ int src = openat (under, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src < 0)
    return pr_error_set (err, errno, "tmpcopyup `%s`: open the covered directory", dest);
  _cleanup_close_ int mnt = -1;
  if (pr_safe_open (rootfd, dest, O_RDONLY | O_DIRECTORY, 0, &mnt, err) < 0)
    return -1;
  return copy_tree (src, mnt, dest, 0, err);
}

/* ---- other filesystems ------------------------------------------------ */

/* Makes the sysfs just mounted at dest inside rootfd read-only (the mount,
 * not its superblock).  Returns 0, or -1 when it cannot be reopened or
 * remounted. */
static int
sysfs_readonly (int rootfd, const char *dest, pr_error **err)
{
  _cleanup_close_ int fd = -1;
  if (pr_safe_open (rootfd, dest, O_PATH, 0, &fd, err) < 0)
    return -1;
  char p[32];
  pr_fd_path (fd, p, sizeof p);
  return bind_remount (fd, p, MS_RDONLY, 0, false, dest, err);
}

static int
do_fs_mount (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, const struct pr_config *cfg,
             bool in_userns, bool *dev_ro, pr_error **err)
{
  const char *type = m->type;
  const char *src = m->source && *m->source ? m->source : type;
  bool no_label = strcmp (type, "proc") == 0 || strcmp (type, "sysfs") == 0;
  _cleanup_free_ char *data = no_label ? xstrdup (f->data) : labeled_data (f->data, cfg->linux.mount_label);

  _cleanup_close_ int target = -1;
  if (pr_safe_create_target (rootfd, m->destination, true, &target, err) < 0)
    return pr_error_wrap (err, "mount `%s` to `%s`", src, m->destination);
  char p[32];
  pr_fd_path (target, p, sizeof p);

  unsigned long flags = f->flags;
  if (strcmp (m->destination, "/dev") == 0 && (flags & MS_RDONLY))
    {
      /* A read-only /dev: the later /dev/pts, /dev/shm... targets and the
       * default devices need it writable; pr_rootfs_prepare makes it
       * read-only once they exist. */
      flags &= ~MS_RDONLY;
      *dev_ro = true;
    }
  /* A read-only sysfs is mounted read-write and then made read-only on
   * the mount only, as crun does: its super options then read "rw" in
   * mountinfo, as a plain container's (SPEC section 2); no process of the
   * container runs before the remount below. */
  bool sysfs_ro = strcmp (type, "sysfs") == 0 && (flags & MS_RDONLY);
  int r = mount (src, p, type, sysfs_ro ? flags & ~MS_RDONLY : flags, data);
  if (r == 0 && sysfs_ro && sysfs_readonly (rootfd, m->destination, err) < 0)
    return -1;
  if (r < 0 && errno == EPERM && in_userns && strcmp (type, "sysfs") == 0)
    {
      /* A user namespace without its own network namespace may not mount
       * sysfs: bind the host's, as runc does. */
      pr_debug ("sysfs mount refused, binding host /sys to %s", m->destination);
      struct pr_mount_flags bf = *f;
      bf.recursive = true;
      bf.bind = true;
      /* The host's /sys carries submounts (cgroup, securityfs...): its
       * flags (ro) must hold over all of them, not only the top. */
      bf.rec_flags |= bf.flags & BIND_ATTR_FLAGS;
      /* Never send the container's later mounts (the cgroup tmpfs on
       * /sys/fs/cgroup) back to the host's /sys under a shared root. */
      if (bf.propagation == 0)
        bf.propagation = MS_SLAVE | MS_REC;
      struct pr_mount bm = *m;
      bm.source = (char *) "/sys";
      return do_bind_mount (rootfd, &bm, &bf, err);
    }
  if (r < 0 && data && strstr (data, "context=") && strcmp (type, "mqueue") == 0)
    /* Some kernels refuse a context= on mqueue: retry without the label. */
    r = mount (src, p, type, flags, f->data);
  if (r < 0)
    return pr_error_set (err, errno, "mount `%s` to `%s`", src, m->destination);
  if (has_option (m->options, "tmpcopyup") && tmpcopyup (rootfd, target, m->destination, err) < 0)
    return -1;
  if (apply_rec_attrs (rootfd, m, f, err) < 0)
    return -1;
  return apply_propagation (rootfd, m->destination, f->propagation, err);
}

static int
do_mount (int rootfd, const struct pr_config *cfg, const struct pr_mount *m, int bind_fd,
          const struct pr_rootfs_opts *o, bool *dev_ro, pr_error **err)
{
  if (m->destination == NULL || m->destination[0] != '/')
    return pr_error_invalid (err, "mount destination `%s` is not absolute", m->destination ? m->destination : "");

  _cleanup_mount_flags_ struct pr_mount_flags f;
  if (pr_mount_parse_options (m->options, &f, err) < 0)
    return -1;
  /* Cloned in stage 1, in the runtime's user namespace (idmount.h). */
  if (bind_fd >= 0)
    return pr_bind_source_attach (rootfd, m, &f, bind_fd, err);
  if (pr_idmount_wanted (m))
    return pr_error_set (err, EINVAL, "idmapped mount to `%s`: no idmapped source was prepared", m->destination);
  if (has_option (m->options, "tmpcopyup") && (m->type == NULL || strcmp (m->type, "tmpfs") != 0))
    return pr_error_invalid (err, "mount to `%s`: option tmpcopyup needs type tmpfs", m->destination);

  const char *type = m->type;
  if (f.bind || (type && strcmp (type, "bind") == 0))
    return do_bind_mount (rootfd, m, &f, err);
  if (type == NULL || *type == '\0')
    return pr_error_invalid (err, "mount to `%s`: no type and not a bind mount", m->destination);
  if (strcmp (type, "cgroup") == 0)
    return do_cgroup_mount (rootfd, m, &f, o->new_cgroupns, err);
  return do_fs_mount (rootfd, m, &f, cfg, o->in_userns, dev_ro, err);
}

/* ---- the three phases -------------------------------------------------- */

/* Finds the mount point holding path (longest matching mountinfo mount
 * point) so its propagation can be changed.  Returns NULL if unknown. */
static char *
mount_point_of (const char *path)
{
  _cleanup_free_ char *text = NULL;
  pr_error *e = NULL;
  if (pr_read_file ("/proc/self/mountinfo", &text, NULL, &e) < 0)
    {
      pr_error_free (&e);
      return NULL;
    }
  char *best = NULL;
  size_t best_len = 0;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *lsave = NULL, *mp = NULL;
      char *t = strtok_r (line, " ", &lsave);
      for (int i = 0; t && i < 4; i++)
        t = strtok_r (NULL, " ", &lsave);
      mp = t;
      if (mp == NULL)
        continue;
      unescape_mountinfo (mp);
      size_t l = strlen (mp);
      if (pr_path_is_under (path, mp) && l >= best_len)
        {
          free (best);
          best = xstrdup (mp);
          best_len = l;
        }
    }
  return best;
}

static bool
dev_is_bind_mounted (const struct pr_config *cfg)
{
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      const struct pr_mount *m = &cfg->mounts[i];
      if (m->destination != NULL && strcmp (m->destination, "/dev") == 0 && pr_mount_is_bind (m))
        return true;
    }
  return false;
}

/* An image whose /dev is a symlink is refused (runc's setupPtmx class,
 * issue #19 item 12).  Resolved inside the root it cannot reach the host,
 * but everything the runtime makes at /dev (the /dev tmpfs, devpts, the
 * device nodes, /dev/console) would then land wherever it points inside
 * the container: on /proc or /sys, covering kernel files before
 * maskedPaths and readonlyPaths are applied, so that those find other
 * files or none.  Returns 0, or -1 with ELOOP naming the link's target. */
static int
refuse_dev_symlink (int rootfd, pr_error **err)
{
  struct stat st;
  if (fstatat (rootfd, "dev", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK (st.st_mode))
    return 0;
  char target[256] = "";
  ssize_t n = readlinkat (rootfd, "dev", target, sizeof target - 1);
  target[n > 0 ? n : 0] = '\0';
  return pr_error_set (err, ELOOP, "the rootfs's `/dev` is a symlink (to `%s`): refused", target);
}

int
pr_rootfs_prepare (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err)
{
  unsigned long rootprop = MS_SLAVE | MS_REC;
  const char *rp = cfg->linux.rootfs_propagation;
  if (rp && *rp)
    {
      unsigned long prop;
      if (parse_propagation (rp, &prop) < 0)
        return pr_error_invalid (err, "invalid linux.rootfsPropagation `%s`", rp);
      /* private stays private; shared is applied as asked (runtime-spec:
       * the rootfs mount is shared with the host); slave/unbindable start
       * from rslave so nothing leaks back to the host. */
      if (prop & (MS_PRIVATE | MS_SHARED))
        rootprop = prop | MS_REC;
    }
  if (mount (NULL, "/", NULL, rootprop, NULL) < 0)
    return pr_error_set (err, errno, "set propagation of `/`");

  if (rootprop & MS_SHARED)
    {
      /* pivot_root(2) refuses a new root whose parent mount is shared.
       * The new root is the self-bind made below; its parent is the mount
       * holding the rootfs path itself, which is the rootfs when that is a
       * mount point (an overlay snapshot, a bind mount), not the one
       * holding its parent directory.  Only this namespace's copy changes;
       * the rbind,rshared volumes keep their own peer groups. */
      _cleanup_free_ char *mp = mount_point_of (o->rootfs);
      if (mp && mount (NULL, mp, NULL, MS_PRIVATE, NULL) < 0)
        return pr_error_set (err, errno, "make `%s` private", mp);
    }

  if (mount (o->rootfs, o->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return pr_error_set (err, errno, "bind mount rootfs `%s` onto itself", o->rootfs);

  _cleanup_close_ int rootfd = open (o->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return pr_error_set (err, errno, "open rootfs `%s`", o->rootfs);

  if (refuse_dev_symlink (rootfd, err) < 0)
    return -1;

  bool dev_ro = false;
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      pr_debug ("mounting %s (%s) to %s", cfg->mounts[i].source ? cfg->mounts[i].source : "",
                cfg->mounts[i].type ? cfg->mounts[i].type : "", cfg->mounts[i].destination);
      int idfd = o->bind_fds ? o->bind_fds[i] : -1;
      if (do_mount (rootfd, cfg, &cfg->mounts[i], idfd, o, &dev_ro, err) < 0)
        return -1;
    }

  if (!dev_is_bind_mounted (cfg) && pr_devices_create (cfg, rootfd, o->in_userns, o->dev_fds, err) < 0)
    return -1;
  if (!dev_ro)
    return 0;
  /* Only the /dev mount itself: /dev/pts, /dev/shm and /dev/mqueue keep
   * their own flags. */
  _cleanup_close_ int dev = -1;
  if (pr_safe_open (rootfd, "/dev", O_PATH, 0, &dev, err) < 0)
    return -1;
  char p[32];
  pr_fd_path (dev, p, sizeof p);
  return bind_remount (dev, p, MS_RDONLY, 0, false, "/dev", err);
}

/* True for a mountinfo line (split into fields) of a whole procfs or sysfs
 * (its root is the filesystem's root) mounted outside the rootfs. */
static bool
is_revealing_mount (char **f, size_t n, const char *rootfs)
{
  size_t dash = 0;
  for (size_t i = 6; i < n; i++)
    if (strcmp (f[i], "-") == 0)
      {
        dash = i;
        break;
      }
  if (dash == 0 || dash + 1 >= n)
    return false;
  const char *type = f[dash + 1];
  if (strcmp (type, "proc") != 0 && strcmp (type, "sysfs") != 0)
    return false;
  return strcmp (f[3], "/") == 0 && !pr_path_is_under (f[4], rootfs);
}

/* --no-pivot keeps the old root in the mount namespace, below the chroot.
 * The kernel lets a process in a new user namespace mount a fresh procfs
 * or sysfs only when one is fully visible somewhere in its mount namespace
 * (fs/namespace.c mount_too_revealing, mnt_already_visible): the host's
 * would be, and the fresh one has none of maskedPaths.  So every whole
 * procfs and sysfs outside the rootfs is detached (rslave first, so the
 * detach never propagates to the host), or covered by an empty read-only
 * tmpfs where it cannot be detached (a locked mount).  Deepest first, so
 * a covered parent never hides a child still to do.  Returns 0, or -1
 * with errno context when mountinfo cannot be read or a mount fails. */
static int
hide_revealing_mounts (const char *rootfs, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (pr_read_file ("/proc/self/mountinfo", &text, NULL, err) < 0)
    return pr_error_wrap (err, "--no-pivot: read mountinfo");
  _cleanup_strv_ char **targets = NULL;
  size_t nt = 0;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[64];
      size_t n = 0;
      char *lsave = NULL;
      for (char *t = strtok_r (line, " ", &lsave); t && n < PR_ARRAY_SIZE (f); t = strtok_r (NULL, " ", &lsave))
        f[n++] = t;
      if (n < 7)
        continue;
      unescape_mountinfo (f[3]);
      unescape_mountinfo (f[4]);
      if (!is_revealing_mount (f, n, rootfs))
        continue;
      targets = xrealloc (targets, (nt + 2) * sizeof *targets);
      targets[nt++] = xstrdup (f[4]);
      targets[nt] = NULL;
    }
  /* mountinfo lists parents before children: walk it backwards. */
  for (size_t i = nt; i-- > 0;)
    {
      const char *t = targets[i];
      if (mount (NULL, t, NULL, MS_SLAVE | MS_REC, NULL) < 0)
        {
          if (errno == ENOENT)
            continue; /* under a mount already detached */
          return pr_error_set (err, errno, "--no-pivot: make `%s` rslave", t);
        }
      if (umount2 (t, MNT_DETACH) == 0)
        continue;
      if (errno != EINVAL && errno != EPERM)
        return pr_error_set (err, errno, "--no-pivot: detach `%s`", t);
      if (mount ("tmpfs", t, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return pr_error_set (err, errno, "--no-pivot: cover `%s`", t);
    }
  return 0;
}

int
pr_rootfs_pivot (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err)
{
  if (chdir (o->rootfs) < 0)
    return pr_error_set (err, errno, "chdir to rootfs `%s`", o->rootfs);

  if (o->no_pivot)
    {
      if (hide_revealing_mounts (o->rootfs, err) < 0)
        return -1;
      if (mount (o->rootfs, "/", NULL, MS_MOVE, NULL) < 0)
        return pr_error_set (err, errno, "move rootfs `%s` to `/`", o->rootfs);
      if (chroot (".") < 0)
        return pr_error_set (err, errno, "chroot to rootfs `%s`", o->rootfs);
    }
  else
    {
      _cleanup_close_ int oldroot = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (oldroot < 0)
        return pr_error_set (err, errno, "open `/`");
      /* pivot_root(".", ".") stacks the old root on top of the new one;
       * detaching it then removes it without needing a put_old dir. */
      if (pr_sys_pivot_root (".", ".") < 0)
        return pr_error_set (err, errno, "pivot_root to `%s`", o->rootfs);
      /* Work on the old root explicitly (which mount "." names right after
       * pivot_root is not specified): the rslave below must not reach the
       * container's own mounts, whose propagation is already set. */
      if (fchdir (oldroot) < 0)
        return pr_error_set (err, errno, "fchdir to the old root");
      /* rslave first so the detach cannot propagate to the host. */
      if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return pr_error_set (err, errno, "make old root rslave");
      if (umount2 (".", MNT_DETACH) < 0)
        return pr_error_set (err, errno, "detach old root");
    }
  if (chdir ("/") < 0)
    return pr_error_set (err, errno, "chdir to `/`");
  return 0;
}
