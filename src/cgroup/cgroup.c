/* cgroup.c - cgroup layout detection (mountinfo), container cgroup path
 * computation, and the public operations of cgroup.h dispatched over every
 * mounted hierarchy (v1 specifics in v1.c, cgroup2 specifics in v2.c).
 * Source: runtime-spec config-linux.md "Control groups"; cgroups(7);
 * proc(5) mountinfo; Documentation/admin-guide/cgroup-v2.rst. */
#define _GNU_SOURCE
#include "cgroup.h"
#include "cgroup-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../core/log.h"
#include "../core/util.h"

#define DESTROY_TIMEOUT_MS 5000

/* ---------------------------------------------------------------- helpers */

long long
pr_cgroup_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
pr_cgroup_write (const char *dir, const char *file, const char *value, pr_error **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  _cleanup_close_ int fd = open (p, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s`", p);
  /* cgroupfs files take one value per write(2): never split it. */
  ssize_t r;
  do
    r = write (fd, value, strlen (value));
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return pr_error_set (err, errno, "write `%s` to `%s`", value, p);
  return 0;
}

int
pr_cgroup_read (const char *dir, const char *file, char **out, pr_error **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  return pr_read_file (p, out, NULL, err);
}

int
pr_cgroup_write_procs (const char *dir, pid_t pid, pr_error **err)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%d", (int) pid);
  return pr_cgroup_write (dir, "cgroup.procs", buf, err);
}

/* Undoes the octal escapes (\040 etc.) mountinfo uses for blanks. */
static char *
unescape_octal (const char *s)
{
  char *r = xmalloc (strlen (s) + 1), *d = r;
  while (*s)
    {
      if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7')
        {
          *d++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
          s += 4;
        }
      else
        *d++ = *s++;
    }
  *d = '\0';
  return r;
}

/* ---------------------------------------------------------------- mounts */

void
pr_cgroup_mounts_clear (struct pr_cgroup_mounts *m)
{
  for (size_t i = 0; i < m->n; i++)
    {
      free (m->h[i].mountpoint);
      free (m->h[i].root);
      pr_strv_free (m->h[i].controllers);
    }
  free (m->h);
  m->h = NULL;
  m->n = 0;
}

/* Mount options of a v1 cgroup superblock that are not controllers. */
static bool
is_v1_option (const char *o)
{
  static const char *const opts[] = { "rw", "ro", "clone_children", "noprefix", "xattr", "cpuset_v2_mode",
                                      "favordynmods" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (opts); i++)
    if (strcmp (o, opts[i]) == 0)
      return true;
  return strchr (o, '=') != NULL && strncmp (o, "name=", 5) != 0;
}

static char **
parse_v1_controllers (const char *superopts)
{
  _cleanup_free_ char *s = xstrdup (superopts);
  char **v = xmalloc0 (sizeof (char *));
  char *save = NULL;
  for (char *tok = strtok_r (s, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    if (!is_v1_option (tok))
      v = pr_strv_append (v, tok);
  return v;
}

struct mi_entry
{
  char *dev, *root, *mnt, *fstype, *superopts;
};

/* Splits one mountinfo line into the fields we use; pointers into line. */
static int
split_mountinfo_line (char *line, struct mi_entry *e)
{
  char *f[64];
  size_t n = 0;
  char *save = NULL;
  for (char *tok = strtok_r (line, " ", &save); tok && n < PR_ARRAY_SIZE (f); tok = strtok_r (NULL, " ", &save))
    f[n++] = tok;
  size_t sep = 6;
  while (sep < n && strcmp (f[sep], "-") != 0)
    sep++;
  if (sep + 3 >= n)
    return -1;
  e->dev = f[2];
  e->root = f[3];
  e->mnt = f[4];
  e->fstype = f[sep + 1];
  e->superopts = f[sep + 3];
  return 0;
}

/* A mount is hidden when a later one sits on its mount point or on an
 * ancestor of it (e.g. cgroup2 mounted over the tmpfs at /sys/fs/cgroup
 * in a container's mount namespace): mountinfo lists mounts in order. */
static bool
shadowed (const struct mi_entry *all, size_t n, size_t i)
{
  const char *mi = all[i].mnt;
  for (size_t j = i + 1; j < n; j++)
    {
      size_t l = strlen (all[j].mnt);
      /* "/" listed late (odd pivot_root orders) is not taken as a cover */
      if (strcmp (all[j].mnt, "/") != 0 && strncmp (mi, all[j].mnt, l) == 0 && (mi[l] == '/' || mi[l] == '\0'))
        return true;
    }
  return false;
}

static void
push_hier (struct pr_cgroup_mounts *m, char ***devs, const struct mi_entry *e, bool v2)
{
  m->h = xrealloc (m->h, (m->n + 1) * sizeof *m->h);
  struct pr_cgroup_hier *h = &m->h[m->n++];
  h->mountpoint = unescape_octal (e->mnt);
  h->root = unescape_octal (e->root);
  h->controllers = v2 ? xmalloc0 (sizeof (char *)) : parse_v1_controllers (e->superopts);
  h->is_v2 = v2;
  *devs = pr_strv_append (*devs, e->dev);
}

int
pr_cgroup_mounts_parse (const char *mountinfo, struct pr_cgroup_mounts *out, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  _cleanup_strv_ char **devs = xmalloc0 (sizeof (char *));
  _cleanup_free_ char *text = xstrdup (mountinfo);
  char *save = NULL;
  ssize_t v2_idx = -1;
  bool v2_at_root = false, v2_canonical = false;
  size_t n_v1 = 0;

  _cleanup_free_ struct mi_entry *all = NULL;
  size_t n_all = 0;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      all = xrealloc (all, (n_all + 1) * sizeof *all);
      if (split_mountinfo_line (line, &all[n_all]) < 0)
        return pr_error_set (err, EINVAL, "parse mountinfo line %zu", n_all + 1);
      n_all++;
    }

  for (size_t k = 0; k < n_all; k++)
    {
      struct mi_entry e = all[k];
      if (shadowed (all, n_all, k))
        continue;
      bool v2 = strcmp (e.fstype, "cgroup2") == 0;
      if (!v2 && strcmp (e.fstype, "cgroup") != 0)
        continue;
      if (v2)
        {
          /* Keep only one unified mount, preferring the canonical places. */
          bool canonical = strcmp (e.mnt, "/sys/fs/cgroup") == 0 || strcmp (e.mnt, "/sys/fs/cgroup/unified") == 0;
          if (v2_idx >= 0 && (!canonical || v2_canonical))
            continue;
          v2_canonical = canonical;
          if (v2_idx >= 0)
            {
              struct pr_cgroup_hier *old = &m.h[v2_idx];
              free (old->mountpoint);
              free (old->root);
              old->mountpoint = unescape_octal (e.mnt);
              old->root = unescape_octal (e.root);
            }
          else
            {
              v2_idx = (ssize_t) m.n;
              push_hier (&m, &devs, &e, true);
            }
          v2_at_root = v2_at_root || strcmp (e.mnt, "/sys/fs/cgroup") == 0;
          continue;
        }
      /* The same v1 hierarchy mounted twice (bind mounts) has one device. */
      bool dup = false;
      for (size_t i = 0; devs[i]; i++)
        dup = dup || strcmp (devs[i], e.dev) == 0;
      if (dup)
        continue;
      push_hier (&m, &devs, &e, false);
      n_v1++;
    }

  if (m.n == 0)
    return pr_error_set (err, ENOENT, "no cgroup filesystem mounted");

  if (v2_idx >= 0 && (v2_at_root || n_v1 == 0))
    {
      /* Unified: v1 mounts left around (e.g. a name=systemd for old
       * containers) are not part of the host's layout. */
      struct pr_cgroup_hier keep = m.h[v2_idx];
      for (size_t i = 0; i < m.n; i++)
        if ((ssize_t) i != v2_idx)
          {
            free (m.h[i].mountpoint);
            free (m.h[i].root);
            pr_strv_free (m.h[i].controllers);
          }
      m.h[0] = keep;
      m.n = 1;
      m.layout = PR_CGROUP_UNIFIED;
    }
  else
    m.layout = v2_idx >= 0 ? PR_CGROUP_HYBRID : PR_CGROUP_LEGACY;

  *out = m;
  return 0;
}

int
pr_cgroup_mounts_load (struct pr_cgroup_mounts *out, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (pr_read_file ("/proc/self/mountinfo", &text, NULL, err) < 0)
    return -1;
  return pr_cgroup_mounts_parse (text, out, err);
}

const struct pr_cgroup_hier *
pr_cgroup_mounts_unified (const struct pr_cgroup_mounts *m)
{
  for (size_t i = 0; i < m->n; i++)
    if (m->h[i].is_v2)
      return &m->h[i];
  return NULL;
}

const struct pr_cgroup_hier *
pr_cgroup_mounts_find (const struct pr_cgroup_mounts *m, const char *controller)
{
  if (m->layout == PR_CGROUP_UNIFIED)
    return pr_cgroup_mounts_unified (m);
  for (size_t i = 0; i < m->n; i++)
    for (char **c = m->h[i].controllers; !m->h[i].is_v2 && c && *c; c++)
      if (strcmp (*c, controller) == 0)
        return &m->h[i];
  if (controller[0] == '\0' || strcmp (controller, "unified") == 0)
    return pr_cgroup_mounts_unified (m);
  return NULL;
}

char *
pr_cgroup_hier_dir (const struct pr_cgroup_hier *h, const char *path)
{
  /* A subtree mount (cgroup namespace, bind mount) shows path's prefix
   * `root` at the mount point itself. */
  size_t rl = strlen (h->root);
  if (strcmp (h->root, "/") != 0 && strncmp (path, h->root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
    path += rl;
  if (path[0] == '\0' || strcmp (path, "/") == 0)
    return xstrdup (h->mountpoint);
  return xasprintf ("%s%s", h->mountpoint, path);
}

int
pr_cgroup_controller_dir (const char *path, const char *controller, char **out, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (pr_cgroup_mounts_load (&m, err) < 0)
    return -1;
  const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (&m, controller);
  if (h == NULL)
    {
      pr_cgroup_mounts_clear (&m);
      return pr_error_set (err, ENOENT, "no cgroup hierarchy for controller `%s`", controller);
    }
  *out = pr_cgroup_hier_dir (h, path);
  pr_cgroup_mounts_clear (&m);
  return 0;
}

int
pr_cgroup_detect (enum pr_cgroup_layout *out, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (pr_cgroup_mounts_load (&m, err) < 0)
    return -1;
  *out = m.layout;
  pr_cgroup_mounts_clear (&m);
  return 0;
}

/* ---------------------------------------------------------------- paths */

/* Lexically cleans an absolute path: no "//", ".", trailing "/"; ".."
 * pops a component but never climbs above "/" (so a cgroupsPath cannot
 * leave the hierarchy's mount). */
static char *
clean_path (const char *in)
{
  _cleanup_free_ char *s = xstrdup (in);
  char *out = xmalloc (strlen (in) + 2);
  size_t len = 0;
  char *save = NULL;
  out[0] = '\0';
  for (char *c = strtok_r (s, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          while (len > 0 && out[len - 1] != '/')
            len--;
          if (len > 0)
            len--;
          out[len] = '\0';
          continue;
        }
      out[len++] = '/';
      strcpy (out + len, c);
      len += strlen (c);
    }
  if (len == 0)
    strcpy (out, "/");
  return out;
}

/* systemd unit-name characters (systemd.unit(5) "valid unit names"). */
static bool
valid_unit_chars (const char *s)
{
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr ("-_.\\@", *s)))
      return false;
  return true;
}

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" -> "".
 * systemd.slice(5): the dashes of a slice name encode its ancestors. */
static int
expand_slice (const char *slice, char **out, pr_error **err)
{
  size_t n = strlen (slice);
  if (strcmp (slice, "-.slice") == 0)
    {
      *out = xstrdup ("");
      return 0;
    }
  if (n <= 6 || strcmp (slice + n - 6, ".slice") != 0)
    return pr_error_set (err, EINVAL, "invalid systemd slice `%s`: must end in .slice", slice);
  _cleanup_free_ char *stem = strndup (slice, n - 6);
  if (stem == NULL)
    abort ();
  size_t sl = strlen (stem);
  if (!valid_unit_chars (stem) || stem[0] == '-' || stem[sl - 1] == '-' || strstr (stem, "--"))
    return pr_error_set (err, EINVAL, "invalid systemd slice `%s`", slice);

  char *r = xstrdup ("");
  for (size_t i = 0; i <= sl; i++)
    {
      if (stem[i] != '-' && stem[i] != '\0')
        continue;
      char *next = xasprintf ("%s/%.*s.slice", r, (int) i, stem);
      free (r);
      r = next;
    }
  *out = r;
  return 0;
}

static int
systemd_path (const char *cgroups_path, const char *id, char **out, pr_error **err)
{
  _cleanup_free_ char *spec = NULL;
  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    {
      if (id == NULL || id[0] == '\0')
        return pr_error_set (err, EINVAL, "empty cgroupsPath needs a container id");
      spec = xasprintf ("system.slice:proctor:%s", id);
    }
  else
    spec = xstrdup (cgroups_path);

  char *c1 = strchr (spec, ':');
  char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':') != NULL)
    return pr_error_set (err, EINVAL,
                         "invalid cgroupsPath `%s`: expected \"slice:prefix:name\" for systemd cgroups", spec);
  *c1 = *c2 = '\0';
  const char *slice = spec[0] ? spec : "system.slice";
  const char *prefix = c1 + 1, *name = c2 + 1;
  if (name[0] == '\0' || !valid_unit_chars (name) || !valid_unit_chars (prefix))
    return pr_error_set (err, EINVAL, "invalid cgroupsPath `%s:%s:%s`: bad unit name", spec, prefix, name);

  size_t nl = strlen (name);
  if (nl > 6 && strcmp (name + nl - 6, ".slice") == 0)
    {
      /* The container asked for a slice unit: its place is its name. */
      if (expand_slice (name, out, err) < 0)
        return -1;
      return 0;
    }

  _cleanup_free_ char *parent = NULL;
  if (expand_slice (slice, &parent, err) < 0)
    return -1;
  _cleanup_free_ char *unit = prefix[0] ? xasprintf ("%s-%s.scope", prefix, name) : xasprintf ("%s.scope", name);
  if (strlen (unit) > 255)
    return pr_error_set (err, EINVAL, "invalid cgroupsPath: unit name `%s` too long", unit);
  *out = xasprintf ("%s/%s", parent, unit);
  return 0;
}

int
pr_cgroup_path_compute (const char *cgroups_path, const char *id, bool systemd, const char *own, char **out,
                        pr_error **err)
{
  _cleanup_free_ char *raw = NULL;
  if (systemd)
    {
      if (systemd_path (cgroups_path, id, &raw, err) < 0)
        return -1;
    }
  else if (cgroups_path && cgroups_path[0] == '/')
    raw = xstrdup (cgroups_path);
  else if (cgroups_path && cgroups_path[0])
    raw = xasprintf ("%s/%s", own ? own : "/", cgroups_path);
  else
    {
      if (id == NULL || id[0] == '\0')
        return pr_error_set (err, EINVAL, "empty cgroupsPath needs a container id");
      raw = xasprintf ("%s/%s", own ? own : "/", id);
    }

  char *clean = clean_path (raw);
  if (strcmp (clean, "/") == 0)
    {
      free (clean);
      return pr_error_set (err, EINVAL, "cgroupsPath `%s` resolves to the root cgroup",
                           cgroups_path ? cgroups_path : "");
    }
  *out = clean;
  return 0;
}

int
pr_cgroup_own_parse (const char *proc_cgroup, char **out, pr_error **err)
{
  /* "hierarchy-ID:controller-list:cgroup-path"; the path may hold ':'. */
  const char *line = proc_cgroup;
  while (line && *line)
    {
      const char *end = strchrnul (line, '\n');
      const char *c1 = memchr (line, ':', end - line);
      const char *c2 = c1 ? memchr (c1 + 1, ':', end - c1 - 1) : NULL;
      if (c2 && c2[1] == '/')
        {
          _cleanup_free_ char *p = strndup (c2 + 1, end - c2 - 1);
          if (p == NULL)
            abort ();
          *out = clean_path (p);
          return 0;
        }
      line = *end ? end + 1 : NULL;
    }
  return pr_error_set (err, EINVAL, "parse /proc/self/cgroup: no cgroup line");
}

int
pr_cgroup_systemd_check (pr_error **err)
{
  /* sd_booted(3)'s test: only a running systemd creates this directory.
   * Without it nobody would own the scope unit, so refuse rather than
   * silently fall back to cgroupfs. */
  struct stat st;
  if (lstat ("/run/systemd/system", &st) == 0 && S_ISDIR (st.st_mode))
    return 0;
  return pr_error_set (err, ENOTSUP,
                       "systemd cgroup driver requested but systemd is not running (no /run/systemd/system)");
}

int
pr_cgroup_path (const char *cgroups_path, const char *id, bool systemd, char **out, pr_error **err)
{
  _cleanup_free_ char *own = NULL;
  if (systemd && pr_cgroup_systemd_check (err) < 0)
    return -1;
  bool relative = !systemd && !(cgroups_path && cgroups_path[0] == '/');
  if (relative)
    {
      _cleanup_free_ char *text = NULL;
      if (pr_read_file ("/proc/self/cgroup", &text, NULL, err) < 0)
        return -1;
      if (pr_cgroup_own_parse (text, &own, err) < 0)
        return -1;
    }
  return pr_cgroup_path_compute (cgroups_path, id, systemd, own, out, err);
}

/* ---------------------------------------------------------------- pids */

static void
append_pids (const char *text, pid_t **pids, size_t *n)
{
  for (const char *p = text; *p;)
    {
      char *end;
      long v = strtol (p, &end, 10);
      if (end == p)
        {
          p++;
          continue;
        }
      /* pid 0 (a task outside our pid namespace) must never reach kill(2). */
      if (v > 0)
        {
          *pids = xrealloc (*pids, (*n + 1) * sizeof (pid_t));
          (*pids)[(*n)++] = (pid_t) v;
        }
      p = end;
    }
}

static bool
is_subdir (int dfd, const struct dirent *de)
{
  if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
    return false;
  if (de->d_type == DT_DIR)
    return true;
  if (de->d_type != DT_UNKNOWN)
    return false;
  struct stat st;
  return fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
}

int
pr_cgroup_collect_pids (const char *dir, pid_t **pids, size_t *n, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (pr_cgroup_read (dir, "cgroup.procs", &text, err) < 0)
    return -1;
  append_pids (text, pids, n);

  /* cgroup.procs lists direct members only; nested cgroups (systemd or a
   * cgroupns user inside the container) hold the rest. */
  DIR *d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT ? 0 : pr_error_set (err, errno, "opendir `%s`", dir);
  struct dirent *de;
  int ret = 0;
  while ((de = readdir (d)) && ret == 0)
    {
      if (!is_subdir (dirfd (d), de))
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", dir, de->d_name);
      pr_error *e = NULL;
      if (pr_cgroup_collect_pids (sub, pids, n, &e) < 0)
        {
          /* a child cgroup removed meanwhile is fine */
          if (e->errnum != ENOENT)
            ret = pr_error_set (err, e->errnum, "%s", e->msg);
          pr_error_free (&e);
        }
    }
  closedir (d);
  return ret;
}

/* The hierarchy whose cgroup.procs we trust for listing the container:
 * pids, then freezer, memory, the unified one, then any. */
static const struct pr_cgroup_hier *
procs_hier (const struct pr_cgroup_mounts *m)
{
  static const char *const pref[] = { "pids", "freezer", "memory" };
  if (m->layout != PR_CGROUP_UNIFIED)
    for (size_t i = 0; i < PR_ARRAY_SIZE (pref); i++)
      {
        const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (m, pref[i]);
        if (h)
          return h;
      }
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (m);
  return u ? u : (m->n ? &m->h[0] : NULL);
}

/* ---------------------------------------------------------------- public */

/* Refuses paths that would act on a hierarchy's root or outside it: a
 * kill or rmdir there would hit the whole host. */
static int
check_path (const char *path, pr_error **err)
{
  if (path == NULL || path[0] != '/' || path[1] == '\0')
    return pr_error_set (err, EINVAL, "invalid cgroup path `%s`", path ? path : "");
  _cleanup_free_ char *c = clean_path (path);
  if (strcmp (c, path) != 0)
    return pr_error_set (err, EINVAL, "invalid cgroup path `%s`: not clean", path);
  return 0;
}

static int
load_checked (const char *path, struct pr_cgroup_mounts *m, pr_error **err)
{
  if (check_path (path, err) < 0)
    return -1;
  return pr_cgroup_mounts_load (m, err);
}

int
pr_cgroup_create (const char *path, pid_t pid, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  _cleanup_free_ bool *created = xmalloc0 (m.n * sizeof (bool));
  int ret = 0;
  size_t i;

  for (i = 0; i < m.n && ret == 0; i++)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (&m.h[i], path);
      if (m.h[i].is_v2)
        ret = pr_cgroup_v2_prepare (&m.h[i], dir, m.layout == PR_CGROUP_UNIFIED, &created[i], err);
      else
        ret = pr_cgroup_v1_prepare (&m.h[i], dir, &created[i], err);
    }
  for (i = 0; i < m.n && ret == 0 && pid > 0; i++)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (&m.h[i], path);
      ret = pr_cgroup_write_procs (dir, pid, err);
    }

  if (ret < 0)
    /* Leave nothing behind (SPEC "bad input"): drop the leaves we made.
     * A leaf pid already joined keeps busy; the caller's destroy after
     * killing pid takes care of it. */
    for (i = 0; i < m.n; i++)
      if (created[i])
        {
          _cleanup_free_ char *dir = pr_cgroup_hier_dir (&m.h[i], path);
          if (rmdir (dir) < 0)
            pr_debug ("rmdir `%s` after failed create: %s", dir, strerror (errno));
        }
  pr_cgroup_mounts_clear (&m);
  return ret;
}

int
pr_cgroup_enter (const char *path, pid_t pid, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  int ret = 0;
  for (size_t i = 0; i < m.n && ret == 0; i++)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (&m.h[i], path);
      ret = pr_cgroup_write_procs (dir, pid, err);
    }
  pr_cgroup_mounts_clear (&m);
  return ret;
}

/* The sub-cgroup a --cgroup spec list names for hierarchy h, or NULL. */
static const char *
sub_for (const struct pr_cgroup_hier *h, char *const *specs)
{
  const char *any = NULL;
  for (size_t i = 0; specs && specs[i]; i++)
    {
      const char *colon = strchr (specs[i], ':');
      if (colon == NULL)
        {
          any = specs[i];
          continue;
        }
      /* "cpu,cpuacct:sub" names hierarchies by one of their controllers */
      _cleanup_free_ char *ctrls = strndup (specs[i], colon - specs[i]);
      if (ctrls == NULL)
        abort ();
      char *save = NULL;
      for (char *c = strtok_r (ctrls, ",", &save); c; c = strtok_r (NULL, ",", &save))
        {
          /* on hybrid hosts the cgroup2 hierarchy has no controllers */
          if (h->is_v2 && strcmp (c, "unified") == 0)
            return colon + 1;
          for (char **hc = h->controllers; hc && *hc; hc++)
            if (strcmp (*hc, c) == 0)
              return colon + 1;
        }
    }
  return any;
}

int
pr_cgroup_enter_sub (const char *path, char *const *specs, pid_t pid, pr_error **err)
{
  for (size_t i = 0; specs && specs[i]; i++)
    {
      const char *sub = strchr (specs[i], ':') ? strchr (specs[i], ':') + 1 : specs[i];
      _cleanup_free_ char *probe = xasprintf ("/%s", sub);
      _cleanup_free_ char *clean = clean_path (probe);
      if (sub[0] == '\0' || strcmp (clean, probe) != 0 || strstr (sub, ".."))
        return pr_error_set (err, EINVAL, "invalid sub-cgroup `%s`", specs[i]);
    }
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  int ret = 0;
  for (size_t i = 0; i < m.n && ret == 0; i++)
    {
      const char *sub = sub_for (&m.h[i], specs);
      _cleanup_free_ char *full = sub ? xasprintf ("%s/%s", path, sub) : xstrdup (path);
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (&m.h[i], full);
      struct stat st;
      if (sub && stat (dir, &st) < 0)
        ret = pr_error_set (err, errno, "sub-cgroup `%s`", dir);
      else
        ret = pr_cgroup_write_procs (dir, pid, err);
    }
  pr_cgroup_mounts_clear (&m);
  return ret;
}

/* Frozen tasks do not act on SIGKILL until thawed; thaw so they die. */
static void
thaw_if_frozen (const struct pr_cgroup_mounts *m, const char *path)
{
  const struct pr_cgroup_hier *fz = m->layout == PR_CGROUP_UNIFIED ? NULL : pr_cgroup_mounts_find (m, "freezer");
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (m);
  _cleanup_error_ pr_error *e = NULL;
  bool frozen = false;
  if (fz)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (fz, path);
      if (pr_cgroup_v1_is_frozen (dir, &frozen) == 0 && frozen && pr_cgroup_v1_freeze (dir, false, &e) < 0)
        pr_warn ("%s", e->msg);
    }
  if (u)
    {
      /* On hybrid hosts someone may have used cgroup.freeze directly. */
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (u, path);
      if (pr_cgroup_v2_is_frozen (dir, &frozen) == 0 && frozen && pr_cgroup_v2_freeze (dir, false, &e) < 0)
        pr_warn ("%s", e->msg);
    }
}

/* True once pid has exited (zombie, dead or reaped).  A killed task
 * leaves its cgroups before it turns into a zombie, so an empty cgroup
 * does not yet mean its processes are gone. */
static bool
pid_exited (pid_t pid)
{
  char p[64], buf[512];
  snprintf (p, sizeof p, "/proc/%d/stat", (int) pid);
  _cleanup_close_ int fd = open (p, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return true;
  buf[n] = '\0';
  const char *rp = strrchr (buf, ')');
  return rp == NULL || rp[1] == '\0' || rp[2] == 'Z' || rp[2] == 'X' || rp[2] == 'x';
}

/* Waits (bounded by deadline) until every pid has exited. */
static void
wait_exited (const pid_t *pids, size_t n, long long deadline)
{
  for (size_t i = 0; i < n; i++)
    while (!pid_exited (pids[i]) && pr_cgroup_now_ms () < deadline)
      {
        struct timespec ts = { 0, 2 * 1000000L };
        nanosleep (&ts, NULL);
      }
}

static int
kill_with (const struct pr_cgroup_mounts *m, const char *path, int sig, pr_error **err)
{
  const struct pr_cgroup_hier *h = procs_hier (m);
  if (h == NULL)
    return 0;
  _cleanup_free_ char *dir = pr_cgroup_hier_dir (h, path);
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  pr_error *e = NULL;
  if (pr_cgroup_collect_pids (dir, &pids, &n, &e) < 0)
    {
      if (e->errnum == ENOENT)
        {
          pr_error_free (&e);
          return 0;
        }
      *err = e;
      return -1;
    }

  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (m);
  bool done = false;
  if (m->layout == PR_CGROUP_UNIFIED && sig == SIGKILL && u)
    {
      /* cgroup.kill also reaches tasks forked after our listing */
      _cleanup_free_ char *udir = pr_cgroup_hier_dir (u, path);
      int r = pr_cgroup_v2_kill (udir, err);
      if (r < 0)
        return -1;
      done = r == 1;
    }
  for (size_t i = 0; i < n && !done; i++)
    if (kill (pids[i], sig) < 0 && errno != ESRCH)
      return pr_error_set (err, errno, "kill pid %d of cgroup `%s`", (int) pids[i], path);
  if (sig == SIGKILL)
    {
      thaw_if_frozen (m, path);
      /* A killed task leaves its cgroup before it has finished exiting:
       * callers (delete, kill --all, engines) expect it gone on return. */
      wait_exited (pids, n, pr_cgroup_now_ms () + DESTROY_TIMEOUT_MS);
    }
  return 0;
}

int
pr_cgroup_kill (const char *path, int sig, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  int ret = kill_with (&m, path, sig, err);
  pr_cgroup_mounts_clear (&m);
  return ret;
}

int
pr_cgroup_pids (const char *path, pid_t **pids_out, size_t *n_out, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  const struct pr_cgroup_hier *h = procs_hier (&m);
  _cleanup_free_ char *dir = pr_cgroup_hier_dir (h, path);
  pid_t *pids = NULL;
  size_t n = 0;
  int ret = pr_cgroup_collect_pids (dir, &pids, &n, err);
  pr_cgroup_mounts_clear (&m);
  if (ret < 0)
    {
      free (pids);
      return -1;
    }
  *pids_out = pids;
  *n_out = n;
  return 0;
}

/* rmdir of dir and of any nested cgroup below it, deepest first (cgroupfs
 * dirs hold only control files, which rmdir removes with them). */
static int
rmdir_tree (const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return -1;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (!is_subdir (dirfd (d), de))
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", dir, de->d_name);
      if (rmdir_tree (sub) < 0 && errno != ENOENT)
        {
          int saved = errno;
          closedir (d);
          errno = saved;
          return -1;
        }
    }
  closedir (d);
  return rmdir (dir);
}

int
pr_cgroup_destroy (const char *path, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  long long deadline = pr_cgroup_now_ms () + DESTROY_TIMEOUT_MS;
  _cleanup_error_ pr_error *kerr = NULL;
  if (kill_with (&m, path, SIGKILL, &kerr) < 0)
    pr_debug ("%s", kerr->msg);

  int ret = 0;
  for (size_t i = 0; i < m.n && ret == 0; i++)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (&m.h[i], path);
      long delay_ms = 5;
      for (;;)
        {
          if (rmdir_tree (dir) == 0 || errno == ENOENT)
            break;
          /* EBUSY: dying tasks are still attached (or a fork raced the
           * kill); EAGAIN/EINTR can show up under load on v1. */
          if ((errno != EBUSY && errno != EAGAIN && errno != EINTR) || pr_cgroup_now_ms () >= deadline)
            {
              ret = pr_error_set (err, errno, "rmdir `%s`", dir);
              break;
            }
          _cleanup_error_ pr_error *again = NULL;
          kill_with (&m, path, SIGKILL, &again);
          struct timespec ts = { 0, delay_ms * 1000000L };
          nanosleep (&ts, NULL);
          if (delay_ms < 100)
            delay_ms *= 2;
        }
    }
  pr_cgroup_mounts_clear (&m);
  return ret;
}

int
pr_cgroup_freeze (const char *path, bool freeze, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  /* Hybrid and legacy hosts pause through the v1 freezer (cgroup.freeze
   * is used only when no v1 freezer is mounted). */
  const struct pr_cgroup_hier *fz = m.layout == PR_CGROUP_UNIFIED ? NULL : pr_cgroup_mounts_find (&m, "freezer");
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&m);
  int ret;
  if (fz)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (fz, path);
      ret = pr_cgroup_v1_freeze (dir, freeze, err);
    }
  else if (u)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (u, path);
      ret = pr_cgroup_v2_freeze (dir, freeze, err);
    }
  else
    ret = pr_error_set (err, ENOTSUP, "freeze cgroup `%s`: no freezer hierarchy", path);
  pr_cgroup_mounts_clear (&m);
  return ret;
}

int
pr_cgroup_is_frozen (const char *path, bool *frozen_out)
{
  _cleanup_error_ pr_error *err = NULL;
  struct pr_cgroup_mounts m = { 0 };
  *frozen_out = false;
  if (load_checked (path, &m, &err) < 0)
    {
      errno = err->errnum ? err->errnum : EINVAL;
      return -1;
    }
  const struct pr_cgroup_hier *fz = m.layout == PR_CGROUP_UNIFIED ? NULL : pr_cgroup_mounts_find (&m, "freezer");
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&m);
  int ret;
  if (fz || u)
    {
      _cleanup_free_ char *dir = pr_cgroup_hier_dir (fz ? fz : u, path);
      ret = fz ? pr_cgroup_v1_is_frozen (dir, frozen_out) : pr_cgroup_v2_is_frozen (dir, frozen_out);
      /* No cgroup (container gone or never placed) is simply not frozen. */
      if (ret < 0 && errno == ENOENT)
        ret = 0;
    }
  else
    {
      errno = ENOTSUP;
      ret = -1;
    }
  pr_cgroup_mounts_clear (&m);
  return ret;
}
