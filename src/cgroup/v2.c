/* v2.c - cgroup2 specifics: creating the container's directory in the
 * unified hierarchy (enabling controllers down the tree on unified hosts),
 * cgroup.kill and the cgroup.freeze / cgroup.events freezer.
 * Source: Documentation/admin-guide/cgroup-v2.rst ("Enabling and
 * Disabling", "cgroup.kill", "cgroup.freeze", "cgroup.events"). */
#define _GNU_SOURCE
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../base/log.h"
#include "../base/util.h"

#define FREEZE_TIMEOUT_MS 5000

static bool
word_in (const char *list, const char *word)
{
  size_t wl = strlen (word);
  for (const char *p = list; (p = strstr (p, word)); p += wl)
    if ((p == list || p[-1] == ' ') && (p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\0'))
      return true;
  return false;
}

/* Enables in level/cgroup.subtree_control every controller level offers.
 * One write per controller: one refused controller (e.g. cpuset with
 * threaded children, or "no internal processes" on a busy level) must not
 * hide the others.  Best effort: failures are logged at debug level. */
static void
enable_controllers (const char *level)
{
  _cleanup_error_ pr_error *err = NULL;
  _cleanup_free_ char *avail = NULL, *enabled = NULL;
  if (pr_cgroup_read (level, "cgroup.controllers", &avail, &err) < 0
      || pr_cgroup_read (level, "cgroup.subtree_control", &enabled, &err) < 0)
    {
      pr_debug ("%s", err->msg);
      return;
    }
  char *save = NULL;
  for (char *c = strtok_r (avail, " \n", &save); c; c = strtok_r (NULL, " \n", &save))
    {
      if (word_in (enabled, c))
        continue;
      _cleanup_error_ pr_error *e = NULL;
      _cleanup_free_ char *op = xasprintf ("+%s", c);
      if (pr_cgroup_write (level, "cgroup.subtree_control", op, &e) < 0)
        pr_debug ("%s", e->msg);
    }
}

int
pr_cgroup_v2_prepare (const struct pr_cgroup_hier *h, const char *dir, bool enable, bool *created, pr_error **err)
{
  struct stat st;
  *created = stat (dir, &st) < 0 && errno == ENOENT;
  size_t ml = strlen (h->mountpoint);
  if (strcmp (dir, h->mountpoint) == 0)
    return 0;
  _cleanup_free_ char *cur = xstrdup (dir);
  /* Walk mount, mount/a, mount/a/b, ... : controllers are enabled on each
   * level before its child is made, the leaf itself gets none enabled (it
   * holds the processes). */
  for (char *s = cur + ml; ; s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      char saved = *s;
      *s = '\0';
      if (s != cur + ml && mkdir (cur, 0755) < 0 && errno != EEXIST)
        return pr_error_set (err, errno, "mkdir `%s`", cur);
      if (enable && saved != '\0')
        enable_controllers (cur);
      *s = saved;
      if (saved == '\0')
        break;
    }
  return 0;
}

int
pr_cgroup_v2_kill (const char *dir, pr_error **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/cgroup.kill", dir);
  _cleanup_close_ int fd = open (p, O_WRONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s`", p);
  if (pr_write_all (fd, "1", 1) < 0)
    return pr_error_set (err, errno, "write `%s`", p);
  return 1;
}

int
pr_cgroup_v2_is_frozen (const char *dir, bool *frozen)
{
  _cleanup_error_ pr_error *err = NULL;
  _cleanup_free_ char *events = NULL;
  if (pr_cgroup_read (dir, "cgroup.events", &events, &err) < 0)
    {
      errno = err->errnum;
      return -1;
    }
  const char *p = strstr (events, "frozen ");
  *frozen = p && (p == events || p[-1] == '\n') && p[7] == '1';
  return 0;
}

int
pr_cgroup_v2_freeze (const char *dir, bool freeze, pr_error **err)
{
  struct stat st;
  _cleanup_free_ char *file = xasprintf ("%s/cgroup.freeze", dir);
  if (stat (file, &st) < 0)
    {
      if (errno == ENOENT && stat (dir, &st) == 0)
        return pr_error_set (err, ENOTSUP, "freeze `%s`: no cgroup.freeze (kernel < 5.2)", dir);
      return pr_error_set (err, errno, "stat `%s`", file);
    }
  if (pr_cgroup_write (dir, "cgroup.freeze", freeze ? "1" : "0", err) < 0)
    return -1;
  long long deadline = pr_cgroup_now_ms () + FREEZE_TIMEOUT_MS;
  for (;;)
    {
      bool frozen = false;
      if (pr_cgroup_v2_is_frozen (dir, &frozen) < 0)
        return pr_error_set (err, errno, "read `%s/cgroup.events`", dir);
      if (frozen == freeze)
        return 0;
      if (pr_cgroup_now_ms () >= deadline)
        break;
      struct timespec ts = { 0, 10 * 1000000L };
      nanosleep (&ts, NULL);
    }
  if (freeze)
    {
      _cleanup_error_ pr_error *e = NULL;
      pr_cgroup_write (dir, "cgroup.freeze", "0", &e);
    }
  return pr_error_set (err, ETIMEDOUT, "%s `%s/cgroup.freeze`", freeze ? "freeze" : "thaw", dir);
}
