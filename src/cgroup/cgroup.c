/* cgroup.c - cgroup layout detection (mountinfo parsing into the table of
 * mounted hierarchies), per-controller directory lookup, container cgroup
 * path computation (cgroupsPath, systemd slices, own cgroup) and the small
 * cgroupfs read/write helpers.  The operations over hierarchies (create,
 * enter, kill, pids, destroy, freeze) are in ops.c; v1 specifics in v1.c,
 * cgroup2 specifics in v2.c.
 * Source: runtime-spec config-linux.md "Control groups"; cgroups(7);
 * proc(5) mountinfo; Documentation/admin-guide/cgroup-v2.rst. */
#define _GNU_SOURCE
#include "cgroup.h"
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/util.h"

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
      /* "/" listed late (odd pivot_root orders) is not taken as a cover */
      if (strcmp (all[j].mnt, "/") != 0 && pr_path_is_under (mi, all[j].mnt))
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
        return pr_error_invalid (err, "parse mountinfo line %zu", n_all + 1);
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

/* The mount table as this process read it first, once pr_cgroup_mounts_memo
 * turned the memo on: one `run` asks for the hierarchies seven times (the
 * frozen check, create, the limits, the entry, and delete's three), and
 * each read makes the kernel print the whole table (show_mountinfo).  Only
 * the process that read it uses it: a child may sit in another mount
 * namespace (a container's, a verifier's), and so reads its own. */
static struct
{
  bool on;
  pid_t pid;
  char *text;
} memo;

void
pr_cgroup_mounts_memo (void)
{
  memo.on = true;
}

int
pr_cgroup_mounts_load (struct pr_cgroup_mounts *out, pr_error **err)
{
  pid_t self = getpid ();
  if (memo.on && memo.text && memo.pid == self)
    return pr_cgroup_mounts_parse (memo.text, out, err);
  _cleanup_free_ char *text = NULL;
  if (pr_read_file ("/proc/self/mountinfo", &text, NULL, err) < 0)
    return -1;
  if (pr_cgroup_mounts_parse (text, out, err) < 0)
    return -1;
  if (memo.on)
    {
      free (memo.text);
      memo.text = text;
      memo.pid = self;
      text = NULL;
    }
  return 0;
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
  if (strcmp (h->root, "/") != 0 && pr_path_is_under (path, h->root))
    path += strlen (h->root);
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

char *
pr_cgroup_sibling_path (const char *path, const char *name)
{
  size_t n = strlen (path);
  while (n > 1 && path[n - 1] == '/')
    n--;
  return xasprintf ("%.*s-%s", (int) n, path, name);
}

int
pr_cgroup_enter_v1_controller (const char *path, const char *controller, pid_t pid, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (pr_cgroup_mounts_load (&m, err) < 0)
    return -1;
  const struct pr_cgroup_hier *h = m.layout == PR_CGROUP_UNIFIED ? NULL : pr_cgroup_mounts_find (&m, controller);
  if (h == NULL || h->is_v2)
    {
      pr_cgroup_mounts_clear (&m);
      return 0;
    }
  _cleanup_free_ char *dir = pr_cgroup_hier_dir (h, path);
  pr_cgroup_mounts_clear (&m);
  if (mkdir (dir, 0755) < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "mkdir %s", dir);
  if (pr_cgroup_write_procs (dir, pid, err) < 0)
    return -1;
  return 1;
}

int
pr_cgroup_unified_dir (const char *path, char **out, pr_error **err)
{
  return pr_cgroup_controller_dir (path, "unified", out, err);
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
char *
pr_cgroup_clean_path (const char *in)
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

bool
pr_cgroup_is_slice_name (const char *name)
{
  size_t n = strlen (name);
  return n > 6 && strcmp (name + n - 6, ".slice") == 0;
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
  if (!pr_cgroup_is_slice_name (slice))
    return pr_error_invalid (err, "invalid systemd slice `%s`: must end in .slice", slice);
  _cleanup_free_ char *stem = strndup (slice, n - 6);
  if (stem == NULL)
    abort ();
  size_t sl = strlen (stem);
  if (!valid_unit_chars (stem) || stem[0] == '-' || stem[sl - 1] == '-' || strstr (stem, "--"))
    return pr_error_invalid (err, "invalid systemd slice `%s`", slice);

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
        return pr_error_invalid (err, "empty cgroupsPath needs a container id");
      spec = xasprintf ("system.slice:proctor:%s", id);
    }
  else
    spec = xstrdup (cgroups_path);

  char *c1 = strchr (spec, ':');
  char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':') != NULL)
    return pr_error_invalid (err,
                             "invalid cgroupsPath `%s`: expected \"slice:prefix:name\" for systemd cgroups", spec);
  *c1 = *c2 = '\0';
  const char *slice = spec[0] ? spec : "system.slice";
  const char *prefix = c1 + 1, *name = c2 + 1;
  if (name[0] == '\0' || !valid_unit_chars (name) || !valid_unit_chars (prefix))
    return pr_error_invalid (err, "invalid cgroupsPath `%s:%s:%s`: bad unit name", spec, prefix, name);

  if (pr_cgroup_is_slice_name (name))
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
    return pr_error_invalid (err, "invalid cgroupsPath: unit name `%s` too long", unit);
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
        return pr_error_invalid (err, "empty cgroupsPath needs a container id");
      raw = xasprintf ("%s/%s", own ? own : "/", id);
    }

  char *clean = pr_cgroup_clean_path (raw);
  if (strcmp (clean, "/") == 0)
    {
      free (clean);
      return pr_error_invalid (err, "cgroupsPath `%s` resolves to the root cgroup",
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
          *out = pr_cgroup_clean_path (p);
          return 0;
        }
      line = *end ? end + 1 : NULL;
    }
  return pr_error_invalid (err, "parse /proc/self/cgroup: no cgroup line");
}

int
pr_cgroup_systemd_check (pr_error **err)
{
  /* sd_booted(3)'s test: only a running systemd creates this directory.
   * Without it nobody would own the scope unit, so refuse rather than
   * silently fall back to cgroupfs. */
  struct stat st;
  if (lstat ("/run/systemd/system", &st) < 0 || !S_ISDIR (st.st_mode))
    return pr_error_set (err, ENOTSUP,
                         "systemd cgroup driver requested but systemd is not running (no /run/systemd/system)");
  return pr_cgroup_systemd_supported (err);
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
