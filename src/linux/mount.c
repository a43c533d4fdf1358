/* mount.c - the container's root filesystem: propagation of "/", the rootfs
 * bind mount, config.json mounts (incl. cgroup on v1, hybrid and v2 hosts),
 * devices, pivot_root, masked and readonly paths, readonly root (see
 * mount.h).  Every target inside the rootfs is opened with
 * RESOLVE_IN_ROOT and mounted on through /proc/self/fd/N. */
#define _GNU_SOURCE
#include "mount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/log.h"
#include "../core/util.h"
#include "devices.h"
#include "lsm.h"
#include "safepath.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* ---- option parsing ------------------------------------------------- */

enum opt_kind { OPT_FLAG, OPT_CLEAR, OPT_PROP, OPT_BIND, OPT_RBIND, OPT_IDMAP, OPT_IGNORE };

struct mount_opt
{
  const char *name;
  enum opt_kind kind;
  unsigned long flag;
};

/* mount(8) FILESYSTEM-INDEPENDENT MOUNT OPTIONS, as runc and crun accept
 * them.  "tmpcopyup" is proctor's to handle (it is refused in mount.c) and
 * never reaches the filesystem. */
static const struct mount_opt mount_opts[] = {
  { "defaults", OPT_IGNORE, 0 },
  { "ro", OPT_FLAG, MS_RDONLY },
  { "rw", OPT_CLEAR, MS_RDONLY },
  { "nosuid", OPT_FLAG, MS_NOSUID },
  { "suid", OPT_CLEAR, MS_NOSUID },
  { "nodev", OPT_FLAG, MS_NODEV },
  { "dev", OPT_CLEAR, MS_NODEV },
  { "noexec", OPT_FLAG, MS_NOEXEC },
  { "exec", OPT_CLEAR, MS_NOEXEC },
  { "sync", OPT_FLAG, MS_SYNCHRONOUS },
  { "async", OPT_CLEAR, MS_SYNCHRONOUS },
  { "remount", OPT_FLAG, MS_REMOUNT },
  { "mand", OPT_FLAG, MS_MANDLOCK },
  { "nomand", OPT_CLEAR, MS_MANDLOCK },
  { "dirsync", OPT_FLAG, MS_DIRSYNC },
  { "noatime", OPT_FLAG, MS_NOATIME },
  { "atime", OPT_CLEAR, MS_NOATIME },
  { "nodiratime", OPT_FLAG, MS_NODIRATIME },
  { "diratime", OPT_CLEAR, MS_NODIRATIME },
  { "relatime", OPT_FLAG, MS_RELATIME },
  { "norelatime", OPT_CLEAR, MS_RELATIME },
  { "strictatime", OPT_FLAG, MS_STRICTATIME },
  { "nostrictatime", OPT_CLEAR, MS_STRICTATIME },
  { "nosymfollow", OPT_FLAG, MS_NOSYMFOLLOW },
  { "symfollow", OPT_CLEAR, MS_NOSYMFOLLOW },
  { "silent", OPT_FLAG, MS_SILENT },
  { "loud", OPT_CLEAR, MS_SILENT },
  { "iversion", OPT_FLAG, MS_I_VERSION },
  { "noiversion", OPT_CLEAR, MS_I_VERSION },
  { "lazytime", OPT_FLAG, MS_LAZYTIME },
  { "nolazytime", OPT_CLEAR, MS_LAZYTIME },
  { "bind", OPT_BIND, MS_BIND },
  { "rbind", OPT_RBIND, MS_BIND | MS_REC },
  { "private", OPT_PROP, MS_PRIVATE },
  { "rprivate", OPT_PROP, MS_PRIVATE | MS_REC },
  { "shared", OPT_PROP, MS_SHARED },
  { "rshared", OPT_PROP, MS_SHARED | MS_REC },
  { "slave", OPT_PROP, MS_SLAVE },
  { "rslave", OPT_PROP, MS_SLAVE | MS_REC },
  { "unbindable", OPT_PROP, MS_UNBINDABLE },
  { "runbindable", OPT_PROP, MS_UNBINDABLE | MS_REC },
  { "idmap", OPT_IDMAP, 0 },
  { "ridmap", OPT_IDMAP, MS_REC },
  { "tmpcopyup", OPT_IGNORE, 0 },
};

static const struct mount_opt *
find_opt (const char *name)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (mount_opts); i++)
    if (strcmp (mount_opts[i].name, name) == 0)
      return &mount_opts[i];
  return NULL;
}

static void
data_append (char **data, const char *opt)
{
  char *old = *data;
  *data = old ? xasprintf ("%s,%s", old, opt) : xstrdup (opt);
  free (old);
}

int
pr_mount_parse_options (char *const *options, struct pr_mount_flags *out, pr_error **err)
{
  memset (out, 0, sizeof *out);
  for (size_t i = 0; options && options[i]; i++)
    {
      const char *o = options[i];
      if (*o == '\0')
        continue;
      const struct mount_opt *m = find_opt (o);
      if (m == NULL)
        {
          data_append (&out->data, o);
          continue;
        }
      switch (m->kind)
        {
        case OPT_FLAG:
          out->flags |= m->flag;
          out->clear_flags &= ~m->flag;
          break;
        case OPT_CLEAR:
          out->flags &= ~m->flag;
          out->clear_flags |= m->flag;
          break;
        case OPT_PROP:
          out->propagation = m->flag;
          break;
        case OPT_BIND:
          out->bind = true;
          out->flags |= MS_BIND;
          break;
        case OPT_RBIND:
          out->bind = true;
          out->recursive = true;
          out->flags |= MS_BIND | MS_REC;
          break;
        case OPT_IDMAP:
          out->idmap = true;
          if (m->flag & MS_REC)
            out->recursive = true;
          break;
        case OPT_IGNORE:
          break;
        }
    }
  return 0;
}

static void
mount_flags_free (struct pr_mount_flags *f)
{
  free (f->data);
  f->data = NULL;
}
#define _cleanup_mount_flags_ __attribute__ ((cleanup (mount_flags_free)))

static bool
has_option (char *const *options, const char *name)
{
  for (size_t i = 0; options && options[i]; i++)
    if (strcmp (options[i], name) == 0)
      return true;
  return false;
}

static int
parse_propagation (const char *name, unsigned long *out)
{
  const struct mount_opt *m = name ? find_opt (name) : NULL;
  if (m == NULL || m->kind != OPT_PROP)
    return -1;
  *out = m->flag;
  return 0;
}

/* ---- helpers ----------------------------------------------------------- */

/* Flags that a plain MS_BIND ignores and that need a second pass. */
#define BIND_ATTR_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME \
                         | MS_RELATIME | MS_STRICTATIME | MS_NOSYMFOLLOW)

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

/* Applies per-mount flags to an existing bind mount at fdpath (a
 * /proc/self/fd/N path or "/").  Uses mount_setattr(2), which only touches
 * the named attributes and can recurse over submounts (rbind); falls back
 * to MS_REMOUNT|MS_BIND on kernels without it. */
static int
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

static int
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
    return pr_error_set (err, EINVAL, "bind mount to `%s`: no source", m->destination);

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

  if ((f->flags | f->clear_flags) & BIND_ATTR_FLAGS)
    {
      /* The old fd names the covered directory: reopen to reach the mount. */
      _cleanup_close_ int mnt = -1;
      if (pr_safe_open (rootfd, m->destination, O_PATH, 0, &mnt, err) < 0)
        return -1;
      pr_fd_path (mnt, p, sizeof p);
      if (bind_remount (mnt, p, f->flags & BIND_ATTR_FLAGS, f->clear_flags & BIND_ATTR_FLAGS, f->recursive,
                        m->destination, err) < 0)
        return -1;
    }
  return apply_propagation (rootfd, m->destination, f->propagation, err);
}

/* ---- cgroup mounts ---------------------------------------------------- */

struct cg_hier
{
  char *mountpoint; /* host mount point, e.g. /sys/fs/cgroup/memory */
  char *root;       /* mountinfo root of that mount */
  char *fstype;     /* cgroup or cgroup2 */
  char *controllers; /* v1 super options naming the hierarchy ("cpu,cpuacct", "name=systemd") */
};

static void
cg_hiers_free (struct cg_hier **hs)
{
  for (struct cg_hier *h = *hs; h && h->mountpoint; h++)
    {
      free (h->mountpoint);
      free (h->root);
      free (h->fstype);
      free (h->controllers);
    }
  free (*hs);
}

/* Decodes the octal escapes mountinfo uses for spaces and such. */
static void
unescape_mountinfo (char *s)
{
  char *w = s;
  for (char *r = s; *r; r++)
    {
      if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7')
        {
          *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
          r += 3;
        }
      else
        *w++ = *r;
    }
  *w = '\0';
}

/* Keeps the super options that name a v1 hierarchy (controllers and
 * name=), dropping rw/ro and behaviour options. */
static char *
v1_controllers (const char *superopts)
{
  static const char *const skip[] = { "rw", "ro", "noprefix", "clone_children", "xattr", "cpuset_v2_mode",
                                      "favordynmods" };
  _cleanup_free_ char *copy = xstrdup (superopts);
  char *res = NULL, *save = NULL;
  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    {
      bool drop = strncmp (t, "release_agent=", 14) == 0;
      for (size_t i = 0; i < PR_ARRAY_SIZE (skip) && !drop; i++)
        drop = strcmp (t, skip[i]) == 0;
      if (!drop)
        data_append (&res, t);
    }
  return res;
}

/* Lists the cgroup and cgroup2 mounts of this mount namespace from
 * /proc/self/mountinfo (proc(5)). */
static int
read_cgroup_mounts (struct cg_hier **out, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (pr_read_file ("/proc/self/mountinfo", &text, NULL, err) < 0)
    return -1;
  size_t n = 0;
  struct cg_hier *hs = xmalloc0 (sizeof *hs);
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[10] = { 0 };
      char *lsave = NULL, *sep = strstr (line, " - ");
      if (sep == NULL)
        continue;
      *sep = '\0';
      size_t nf = 0;
      for (char *t = strtok_r (line, " ", &lsave); t && nf < 5; t = strtok_r (NULL, " ", &lsave))
        f[nf++] = t;
      char *fstype = strtok_r (sep + 3, " ", &lsave);
      strtok_r (NULL, " ", &lsave); /* source */
      char *superopts = strtok_r (NULL, " ", &lsave);
      if (nf < 5 || fstype == NULL || superopts == NULL)
        continue;
      if (strcmp (fstype, "cgroup") != 0 && strcmp (fstype, "cgroup2") != 0)
        continue;
      hs = xrealloc (hs, (n + 2) * sizeof *hs);
      memset (&hs[n + 1], 0, sizeof *hs);
      hs[n].root = xstrdup (f[3]);
      hs[n].mountpoint = xstrdup (f[4]);
      unescape_mountinfo (hs[n].root);
      unescape_mountinfo (hs[n].mountpoint);
      hs[n].fstype = xstrdup (fstype);
      hs[n].controllers = strcmp (fstype, "cgroup") == 0 ? v1_controllers (superopts) : NULL;
      n++;
    }
  *out = hs;
  return 0;
}

static bool
list_contains (const char *list, const char *item, size_t item_len)
{
  for (const char *p = list; p && *p;)
    {
      const char *e = strchrnul (p, ',');
      if ((size_t) (e - p) == item_len && strncmp (p, item, item_len) == 0)
        return true;
      p = *e ? e + 1 : e;
    }
  return false;
}

/* Finds this process's cgroup path (proc(7) /proc/self/cgroup) for the
 * hierarchy h: the v1 line whose first controller is one of h's, or the
 * "0::" line for cgroup2.  Returns a pointer into text or NULL. */
static const char *
own_cgroup_path (char *text, const struct cg_hier *h, size_t *len)
{
  for (char *line = text; line && *line;)
    {
      char *nl = strchrnul (line, '\n');
      char *c1 = memchr (line, ':', (size_t) (nl - line));
      char *c2 = c1 ? memchr (c1 + 1, ':', (size_t) (nl - c1 - 1)) : NULL;
      if (c2)
        {
          const char *ctrl = c1 + 1;
          size_t clen = (size_t) (c2 - ctrl);
          bool match;
          if (h->controllers == NULL)
            match = clen == 0 && strncmp (line, "0:", 2) == 0;
          else
            {
              size_t first = strcspn (ctrl, ",:");
              match = clen > 0 && list_contains (h->controllers, ctrl, first);
            }
          if (match)
            {
              *len = (size_t) (nl - c2 - 1);
              return c2 + 1;
            }
        }
      line = *nl ? nl + 1 : nl;
    }
  return NULL;
}

/* Bind-mounts the host directory of this process's own cgroup in hierarchy
 * h onto target (an fd path): without a cgroup namespace the container then
 * sees its own cgroup at the hierarchy's root, as with runc. */
static int
bind_own_cgroup (const struct cg_hier *h, char *proc_cgroup, const char *target, const char *what, pr_error **err)
{
  size_t len = 0;
  const char *path = own_cgroup_path (proc_cgroup, h, &len);
  _cleanup_free_ char *rel = path ? strndup (path, len) : xstrdup ("/");
  if (rel == NULL)
    abort ();
  /* The hierarchy may itself be mounted from a subdirectory (nested
   * runtimes): strip that prefix. */
  const char *sub = rel;
  size_t rl = strlen (h->root);
  if (strcmp (h->root, "/") != 0 && strncmp (rel, h->root, rl) == 0 && (rel[rl] == '/' || rel[rl] == '\0'))
    sub = rel + rl;
  _cleanup_free_ char *src = xasprintf ("%s%s", h->mountpoint, sub);
  if (mount (src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
    return pr_error_set (err, errno, "bind mount cgroup `%s` to `%s`", src, what);
  return 0;
}

static int
mount_one_hierarchy (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f,
                     const struct cg_hier *h, char *proc_cgroup, bool new_cgroupns, pr_error **err)
{
  const char *name = strrchr (h->mountpoint, '/');
  name = name ? name + 1 : h->mountpoint;
  if (*name == '\0')
    return 0;
  _cleanup_free_ char *dest = xasprintf ("%s/%s", m->destination, name);
  _cleanup_close_ int fd = -1;
  if (pr_safe_mkdir_p (rootfd, dest, 0755, &fd, err) < 0)
    return -1;
  char p[32];
  pr_fd_path (fd, p, sizeof p);

  unsigned long mflags = (f->flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME | MS_NOATIME | MS_STRICTATIME));
  if (new_cgroupns)
    {
      /* Inside a new cgroup namespace a fresh mount of the hierarchy is
       * rooted at the namespace's root, i.e. the container's cgroup. */
      bool v2 = h->controllers == NULL;
      if (mount (v2 ? "cgroup2" : "cgroup", p, v2 ? "cgroup2" : "cgroup", mflags | (f->flags & MS_RDONLY),
                 v2 ? NULL : h->controllers) < 0)
        return pr_error_set (err, errno, "mount cgroup `%s` to `%s`", v2 ? "cgroup2" : h->controllers, dest);
      return 0;
    }
  if (bind_own_cgroup (h, proc_cgroup, p, dest, err) < 0)
    return -1;
  _cleanup_close_ int mnt = -1;
  if (pr_safe_open (rootfd, dest, O_PATH, 0, &mnt, err) < 0)
    return -1;
  pr_fd_path (mnt, p, sizeof p);
  return bind_remount (mnt, p, mflags | (f->flags & MS_RDONLY), 0, true, dest, err);
}

/* Co-mounted controllers ("cpu,cpuacct") get a symlink per controller
 * name, as on the host. */
static void
link_comounted (int rootfd, const char *dest, const struct cg_hier *h)
{
  const char *name = strrchr (h->mountpoint, '/');
  name = name ? name + 1 : h->mountpoint;
  if (strchr (name, ',') == NULL)
    return;
  _cleanup_close_ int dfd = -1;
  pr_error *e = NULL;
  if (pr_safe_open (rootfd, dest, O_PATH | O_DIRECTORY, 0, &dfd, &e) < 0)
    {
      pr_error_free (&e);
      return;
    }
  _cleanup_free_ char *copy = xstrdup (name);
  char *save = NULL;
  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    if (symlinkat (name, dfd, t) < 0 && errno != EEXIST)
      pr_debug ("symlink %s/%s: %s", dest, t, strerror (errno));
}

/* runtime-spec config.md "cgroup" mounts.  Unified host: one cgroup2 mount
 * (or, without a cgroup namespace, a bind of our own cgroup2 directory).
 * v1 and hybrid hosts: a tmpfs holding one directory per hierarchy, each
 * the container's own cgroup, mirroring the host's /sys/fs/cgroup layout. */
static int
do_cgroup_mount (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, bool new_cgroupns,
                 pr_error **err)
{
  _cleanup_free_ char *proc_cgroup = NULL;
  if (pr_read_file ("/proc/self/cgroup", &proc_cgroup, NULL, err) < 0)
    return -1;

  struct statfs sfs;
  if (statfs ("/sys/fs/cgroup", &sfs) < 0)
    return pr_error_set (err, errno, "statfs `/sys/fs/cgroup`");

  _cleanup_close_ int fd = -1;
  if (pr_safe_mkdir_p (rootfd, m->destination, 0755, &fd, err) < 0)
    return -1;
  char p[32];
  pr_fd_path (fd, p, sizeof p);

  if (sfs.f_type == CGROUP2_SUPER_MAGIC)
    {
      struct cg_hier h = { .mountpoint = (char *) "/sys/fs/cgroup", .root = (char *) "/" };
      if (new_cgroupns)
        {
          if (mount ("cgroup2", p, "cgroup2", f->flags & ~(MS_BIND | MS_REC), f->data) < 0)
            return pr_error_set (err, errno, "mount `cgroup2` to `%s`", m->destination);
          return apply_propagation (rootfd, m->destination, f->propagation, err);
        }
      if (bind_own_cgroup (&h, proc_cgroup, p, m->destination, err) < 0)
        return -1;
      _cleanup_close_ int mnt = -1;
      if (pr_safe_open (rootfd, m->destination, O_PATH, 0, &mnt, err) < 0)
        return -1;
      pr_fd_path (mnt, p, sizeof p);
      if (bind_remount (mnt, p, f->flags & BIND_ATTR_FLAGS, 0, true, m->destination, err) < 0)
        return -1;
      return apply_propagation (rootfd, m->destination, f->propagation, err);
    }

  struct cg_hier *hs __attribute__ ((cleanup (cg_hiers_free))) = NULL;
  if (read_cgroup_mounts (&hs, err) < 0)
    return -1;

  unsigned long tflags = f->flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME | MS_NOATIME | MS_STRICTATIME);
  if (mount ("tmpfs", p, "tmpfs", tflags, "mode=755") < 0)
    return pr_error_set (err, errno, "mount tmpfs for cgroups to `%s`", m->destination);

  for (struct cg_hier *h = hs; h->mountpoint; h++)
    {
      /* Only the hierarchies mounted at the usual place: other cgroup
       * mounts (a nested runtime's, a bind elsewhere) are not duplicated. */
      const char *slash = strrchr (h->mountpoint, '/');
      if (slash == NULL || (size_t) (slash - h->mountpoint) != strlen ("/sys/fs/cgroup")
          || strncmp (h->mountpoint, "/sys/fs/cgroup", slash - h->mountpoint) != 0)
        continue;
      if (mount_one_hierarchy (rootfd, m, f, h, proc_cgroup, new_cgroupns, err) < 0)
        return -1;
      link_comounted (rootfd, m->destination, h);
    }

  if (f->flags & MS_RDONLY)
    {
      _cleanup_close_ int mnt = -1;
      if (pr_safe_open (rootfd, m->destination, O_PATH, 0, &mnt, err) < 0)
        return -1;
      pr_fd_path (mnt, p, sizeof p);
      if (mount ("tmpfs", p, "tmpfs", MS_REMOUNT | MS_RDONLY | tflags, "mode=755") < 0)
        return pr_error_set (err, errno, "remount cgroup tmpfs `%s` read-only", m->destination);
    }
  return apply_propagation (rootfd, m->destination, f->propagation, err);
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

static int
do_fs_mount (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, const struct pr_config *cfg,
             bool in_userns, pr_error **err)
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

  int r = mount (src, p, type, f->flags, data);
  if (r < 0 && errno == EPERM && in_userns && strcmp (type, "sysfs") == 0)
    {
      /* A user namespace without its own network namespace may not mount
       * sysfs: bind the host's, as runc does. */
      pr_debug ("sysfs mount refused, binding host /sys to %s", m->destination);
      struct pr_mount_flags bf = *f;
      bf.recursive = true;
      bf.bind = true;
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
    r = mount (src, p, type, f->flags, f->data);
  if (r < 0)
    return pr_error_set (err, errno, "mount `%s` to `%s`", src, m->destination);
  if (has_option (m->options, "tmpcopyup") && tmpcopyup (rootfd, target, m->destination, err) < 0)
    return -1;
  return apply_propagation (rootfd, m->destination, f->propagation, err);
}

static int
do_mount (int rootfd, const struct pr_config *cfg, const struct pr_mount *m, const struct pr_rootfs_opts *o,
          pr_error **err)
{
  if (m->destination == NULL || m->destination[0] != '/')
    return pr_error_set (err, EINVAL, "mount destination `%s` is not absolute", m->destination ? m->destination : "");

  _cleanup_mount_flags_ struct pr_mount_flags f;
  if (pr_mount_parse_options (m->options, &f, err) < 0)
    return -1;
  if (f.idmap || m->n_uid_mappings || m->n_gid_mappings)
    return pr_error_set (err, ENOTSUP, "mount to `%s`: idmapped mounts are not supported yet", m->destination);
  if (has_option (m->options, "tmpcopyup") && (m->type == NULL || strcmp (m->type, "tmpfs") != 0))
    return pr_error_set (err, EINVAL, "mount to `%s`: option tmpcopyup needs type tmpfs", m->destination);

  const char *type = m->type;
  if (f.bind || (type && strcmp (type, "bind") == 0))
    return do_bind_mount (rootfd, m, &f, err);
  if (type == NULL || *type == '\0')
    return pr_error_set (err, EINVAL, "mount to `%s`: no type and not a bind mount", m->destination);
  if (strcmp (type, "cgroup") == 0)
    return do_cgroup_mount (rootfd, m, &f, o->new_cgroupns, err);
  return do_fs_mount (rootfd, m, &f, cfg, o->in_userns, err);
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
      bool prefix = strcmp (mp, "/") == 0
                    || (strncmp (path, mp, l) == 0 && (path[l] == '/' || path[l] == '\0'));
      if (prefix && l >= best_len)
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
      if (m->destination == NULL || strcmp (m->destination, "/dev") != 0)
        continue;
      if ((m->type && strcmp (m->type, "bind") == 0) || has_option (m->options, "bind")
          || has_option (m->options, "rbind"))
        return true;
    }
  return false;
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
        return pr_error_set (err, EINVAL, "invalid linux.rootfsPropagation `%s`", rp);
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
      /* pivot_root(2) refuses a new root whose parent mount is shared. */
      _cleanup_free_ char *parent = xstrdup (o->rootfs);
      char *slash = strrchr (parent, '/');
      if (slash && slash != parent)
        *slash = '\0';
      _cleanup_free_ char *mp = mount_point_of (parent);
      if (mp && mount (NULL, mp, NULL, MS_PRIVATE, NULL) < 0)
        return pr_error_set (err, errno, "make `%s` private", mp);
    }

  if (mount (o->rootfs, o->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return pr_error_set (err, errno, "bind mount rootfs `%s` onto itself", o->rootfs);

  _cleanup_close_ int rootfd = open (o->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return pr_error_set (err, errno, "open rootfs `%s`", o->rootfs);

  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      pr_debug ("mounting %s (%s) to %s", cfg->mounts[i].source ? cfg->mounts[i].source : "",
                cfg->mounts[i].type ? cfg->mounts[i].type : "", cfg->mounts[i].destination);
      if (do_mount (rootfd, cfg, &cfg->mounts[i], o, err) < 0)
        return -1;
    }

  if (dev_is_bind_mounted (cfg))
    return 0;
  return pr_devices_create (cfg, rootfd, o->in_userns, err);
}

int
pr_rootfs_pivot (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err)
{
  if (chdir (o->rootfs) < 0)
    return pr_error_set (err, errno, "chdir to rootfs `%s`", o->rootfs);

  if (o->no_pivot)
    {
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
      if (syscall (SYS_pivot_root, ".", ".") < 0)
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

static int
mask_path (int rootfd, const char *path, const char *label, pr_error **err)
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
  char p[32];
  pr_fd_path (fd, p, sizeof p);
  int r;
  if (S_ISDIR (st.st_mode))
    {
      _cleanup_free_ char *data = labeled_data (NULL, label);
      r = mount ("tmpfs", p, "tmpfs", MS_RDONLY, data);
    }
  else
    r = mount ("/dev/null", p, NULL, MS_BIND, NULL);
  if (r < 0)
    return pr_error_set (err, errno, "mask `%s`", path);
  return 0;
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
  return bind_remount (mnt, p, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 0, true, path, err);
}

int
pr_rootfs_finalize (const struct pr_config *cfg, const struct pr_rootfs_opts *o, pr_error **err)
{
  _cleanup_close_ int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return pr_error_set (err, errno, "open `/`");

  for (char **p = cfg->linux.masked_paths; p && *p; p++)
    if (mask_path (rootfd, *p, cfg->linux.mount_label, err) < 0)
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
        return pr_error_set (err, EINVAL, "invalid linux.rootfsPropagation `%s`", rp);
      if (mount (NULL, "/", NULL, prop, NULL) < 0)
        return pr_error_set (err, errno, "set propagation `%s` on `/`", rp);
    }
  return 0;
}
