/* v1.c - cgroup v1 specifics: creating a container's directory in one v1
 * hierarchy (with the cpuset initialisation v1 needs) and the v1 freezer.
 * Source: Documentation/admin-guide/cgroup-v1/cpusets.rst (a new cpuset
 * starts with empty cpus/mems and refuses tasks until they are set),
 * Documentation/admin-guide/cgroup-v1/freezer-subsystem.rst. */
#define _GNU_SOURCE
#include "cgroup-internal.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../base/util.h"

#define FREEZE_TIMEOUT_MS 5000

static bool
has_controller (const struct pr_cgroup_hier *h, const char *name)
{
  for (char **c = h->controllers; c && *c; c++)
    if (strcmp (*c, name) == 0)
      return true;
  return false;
}

static bool
blank (const char *s)
{
  return s[strspn (s, " \t\n")] == '\0';
}

/* Copies parent/file into dir/file when dir's value is empty. */
static int
inherit_cpuset_file (const char *parent, const char *dir, const char *file, pr_error **err)
{
  _cleanup_free_ char *cur = NULL, *pval = NULL;
  if (pr_cgroup_read (dir, file, &cur, err) < 0)
    return -1;
  if (!blank (cur))
    return 0;
  if (pr_cgroup_read (parent, file, &pval, err) < 0)
    return -1;
  if (blank (pval))
    return 0;
  pval[strcspn (pval, "\n")] = '\0';
  return pr_cgroup_write (dir, file, pval, err);
}

/* mkdir each level below the mount, initialising cpuset levels on the way
 * down so the leaf's parent already has cpus/mems to copy. */
static int
mkdir_levels (const struct pr_cgroup_hier *h, const char *dir, bool cpuset, pr_error **err)
{
  size_t ml = strlen (h->mountpoint);
  _cleanup_free_ char *cur = xstrdup (dir);
  for (char *s = cur + ml + 1; s <= cur + strlen (dir); s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      char saved = *s;
      *s = '\0';
      if (mkdir (cur, 0755) < 0 && errno != EEXIST)
        return pr_error_set (err, errno, "mkdir `%s`", cur);
      if (cpuset)
        {
          char *slash = strrchr (cur, '/');
          _cleanup_free_ char *parent = strndup (cur, slash - cur);
          if (parent == NULL)
            abort ();
          if (inherit_cpuset_file (parent, cur, "cpuset.cpus", err) < 0
              || inherit_cpuset_file (parent, cur, "cpuset.mems", err) < 0)
            return -1;
        }
      *s = saved;
      if (saved == '\0')
        break;
    }
  return 0;
}

int
pr_cgroup_v1_prepare (const struct pr_cgroup_hier *h, const char *dir, bool *created, pr_error **err)
{
  struct stat st;
  *created = stat (dir, &st) < 0 && errno == ENOENT;
  if (strcmp (dir, h->mountpoint) == 0)
    return 0;
  return mkdir_levels (h, dir, has_controller (h, "cpuset"), err);
}

int
pr_cgroup_v1_is_frozen (const char *dir, bool *frozen)
{
  _cleanup_error_ pr_error *err = NULL;
  _cleanup_free_ char *state = NULL;
  if (pr_cgroup_read (dir, "freezer.state", &state, &err) < 0)
    {
      errno = err->errnum;
      return -1;
    }
  *frozen = strncmp (state, "FROZEN", 6) == 0;
  return 0;
}

static bool
state_is (const char *dir, const char *want)
{
  _cleanup_error_ pr_error *err = NULL;
  _cleanup_free_ char *state = NULL;
  if (pr_cgroup_read (dir, "freezer.state", &state, &err) < 0)
    return false;
  return strncmp (state, want, strlen (want)) == 0;
}

int
pr_cgroup_v1_freeze (const char *dir, bool freeze, pr_error **err)
{
  const char *want = freeze ? "FROZEN" : "THAWED";
  long long start = pr_cgroup_now_ms (), last_write = 0;
  for (;;)
    {
      long long now = pr_cgroup_now_ms ();
      /* The kernel retries a stuck FREEZING only when FROZEN is written
       * again (tasks in vfork or uninterruptible sleep), so rewrite it. */
      if (last_write == 0 || now - last_write >= 100)
        {
          if (pr_cgroup_write (dir, "freezer.state", want, err) < 0)
            return -1;
          last_write = now;
        }
      if (state_is (dir, want))
        return 0;
      if (now - start >= FREEZE_TIMEOUT_MS)
        break;
      struct timespec ts = { 0, 10 * 1000000L };
      nanosleep (&ts, NULL);
    }
  if (freeze)
    {
      /* Do not leave a half-frozen container behind. */
      _cleanup_error_ pr_error *e = NULL;
      pr_cgroup_write (dir, "freezer.state", "THAWED", &e);
    }
  return pr_error_set (err, ETIMEDOUT, "%s `%s/freezer.state`", freeze ? "freeze" : "thaw", dir);
}
