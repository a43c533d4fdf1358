/* ops.c - the public cgroup.h operations over a container's cgroup in
 * every mounted hierarchy: create, enter (and enter a sub-cgroup), kill,
 * list pids, destroy, freeze/thaw; plus the recursive pid collection they
 * share.  Layout detection and path computation live in cgroup.c, v1 and
 * cgroup2 primitives in v1.c / v2.c.
 * Source: runtime-spec config-linux.md "Control groups"; cgroups(7);
 * Documentation/admin-guide/cgroup-v2.rst. */
#define _GNU_SOURCE
#include "cgroup-internal.h"
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/util.h"

#define DESTROY_TIMEOUT_MS 5000

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
    return pr_error_invalid (err, "invalid cgroup path `%s`", path ? path : "");
  _cleanup_free_ char *c = pr_cgroup_clean_path (path);
  if (strcmp (c, path) != 0)
    return pr_error_invalid (err, "invalid cgroup path `%s`: not clean", path);
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
      _cleanup_free_ char *clean = pr_cgroup_clean_path (probe);
      if (sub[0] == '\0' || strcmp (clean, probe) != 0 || strstr (sub, ".."))
        return pr_error_invalid (err, "invalid sub-cgroup `%s`", specs[i]);
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
 * dirs hold only control files, which rmdir removes with them).  The plain
 * rmdir is tried first: a container's cgroup rarely has children, and the
 * directory walk costs an opendir and a getdents per hierarchy on every
 * delete. */
static int
rmdir_tree (const char *dir)
{
  if (rmdir (dir) == 0)
    return 0;
  if (errno != EBUSY && errno != ENOTEMPTY)
    return -1;
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
  /* The leaf is gone: what proctor turned on above it for this container
   * goes off again when no other container of proctor's needs it. */
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&m);
  if (ret == 0 && u)
    {
      _cleanup_free_ char *udir = pr_cgroup_hier_dir (u, path);
      pr_cgroup_v2_release (udir);
    }
  pr_cgroup_mounts_clear (&m);
  return ret;
}

void
pr_cgroup_v2_kill_tree (const char *dir)
{
  long long deadline = pr_cgroup_now_ms () + DESTROY_TIMEOUT_MS;
  for (;;)
    {
      _cleanup_error_ pr_error *e = NULL;
      if (pr_cgroup_v2_kill (dir, &e) != 1)
        {
          _cleanup_free_ pid_t *pids = NULL;
          size_t n = 0;
          _cleanup_error_ pr_error *ce = NULL;
          if (pr_cgroup_collect_pids (dir, &pids, &n, &ce) == 0)
            for (size_t i = 0; i < n; i++)
              kill (pids[i], SIGKILL);
        }
      if (rmdir_tree (dir) == 0 || errno == ENOENT || pr_cgroup_now_ms () >= deadline)
        return;
      struct timespec ts = { 0, 10 * 1000000L };
      nanosleep (&ts, NULL);
    }
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

/* True when dir (a v1 freezer or a cgroup2 directory) is frozen or being
 * frozen.  A missing directory or file is not frozen. */
static bool
dir_is_frozen (const char *dir, bool v1)
{
  bool frozen = false;
  if (!v1)
    return pr_cgroup_v2_is_frozen (dir, &frozen) == 0 && frozen;
  _cleanup_error_ pr_error *e = NULL;
  _cleanup_free_ char *state = NULL;
  if (pr_cgroup_read (dir, "freezer.state", &state, &e) < 0)
    return false;
  return strncmp (state, "FROZEN", 6) == 0 || strncmp (state, "FREEZING", 8) == 0;
}

int
pr_cgroup_check_not_frozen (const char *path, pr_error **err)
{
  struct pr_cgroup_mounts m = { 0 };
  if (load_checked (path, &m, err) < 0)
    return -1;
  const struct pr_cgroup_hier *fz = m.layout == PR_CGROUP_UNIFIED ? NULL : pr_cgroup_mounts_find (&m, "freezer");
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&m);
  _cleanup_free_ char *p = xstrdup (path);
  int ret = 0;
  /* The cgroup itself, then each ancestor below the root: a child of a
   * frozen cgroup is frozen too (v1 parent_freezing, v2 cgroup.events). */
  while (ret == 0 && p[0] == '/' && p[1] != '\0')
    {
      for (int v1 = 0; v1 < 2 && ret == 0; v1++)
        {
          const struct pr_cgroup_hier *h = v1 ? fz : u;
          if (h == NULL)
            continue;
          _cleanup_free_ char *dir = pr_cgroup_hier_dir (h, p);
          if (dir_is_frozen (dir, v1))
            ret = pr_error_set (err, EBUSY, "cgroup `%s` is frozen (%s): cannot create a container in it; thaw it first",
                                dir, v1 ? "freezer.state" : "cgroup.freeze");
        }
      char *slash = strrchr (p, '/');
      if (slash == NULL)
        break;
      *slash = '\0';
    }
  pr_cgroup_mounts_clear (&m);
  return ret;
}
