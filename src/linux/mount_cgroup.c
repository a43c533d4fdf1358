/* mount_cgroup.c - config.json mounts of type "cgroup" (runtime-spec
 * config.md): a cgroup2 mount or bind of the container's own cgroup on a
 * unified host, and on v1/hybrid hosts the emulated /sys/fs/cgroup (a tmpfs
 * with one directory per host hierarchy, each the container's own cgroup,
 * plus co-mount symlinks).  Also owns the mountinfo octal unescaping that
 * mount.c shares.  Called only from mount.c (see mount-internal.h). */
#define _GNU_SOURCE
#include "mount.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mount-internal.h"
#include "safepath.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

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
void
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
  if (strcmp (h->root, "/") != 0 && pr_path_is_under (rel, h->root))
    sub = rel + strlen (h->root);
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
int
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
