/* v2_enabled.c - what proctor turned on in cgroup2's cgroup.subtree_control
 * of levels it does not own, and turning it off again when no container of
 * proctor's needs it any more (issue: a hybrid host's hugetlb stayed on up
 * to the unified root after the last container was gone).
 *
 * cgroup.subtree_control is host-wide state: whatever --root a runtime
 * runs with, the unified root is one.  So the record is host-wide too:
 * PR_CGROUP_V2_RECORD, one line per (level, controller, container leaf)
 * that needed it, written under an flock of the same file.  A level's
 * controller is proctor's only when proctor's write turned it on (a line
 * exists); one already on without a line is someone else's and is never
 * touched.  When the last line of a (level, controller) goes, proctor
 * writes "-controller" there, deepest level first; a refusal (EBUSY: a
 * cgroup below enabled it for its own children since) leaves it on.
 * A container that died without delete keeps its lines: the controller
 * then stays on, the safe direction.
 *
 * Format of a line: LEVEL<TAB>CONTROLLER<TAB>LEAF\n, all absolute paths
 * under the unified mount (no tab or newline in cgroup paths proctor
 * makes: config.c refuses them in cgroupsPath). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "../base/fds.h"
#include "../base/log.h"
#include "../base/util.h"

static bool
same_pair (const char *line, const char *level, const char *controller)
{
  size_t ll = strlen (level), cl = strlen (controller);
  return strncmp (line, level, ll) == 0 && line[ll] == '\t' && strncmp (line + ll + 1, controller, cl) == 0
         && line[ll + 1 + cl] == '\t';
}

static bool
has_leaf (const char *line, const char *leaf)
{
  const char *t = strrchr (line, '\t');
  return t && strcmp (t + 1, leaf) == 0;
}

bool
pr_cgroup_v2_record_has (char **lines, size_t n, const char *level, const char *controller)
{
  for (size_t i = 0; i < n; i++)
    if (lines[i] && same_pair (lines[i], level, controller))
      return true;
  return false;
}

size_t
pr_cgroup_v2_record_drop (char **lines, size_t n, const char *leaf, char ***freed_pairs)
{
  size_t nfreed = 0;
  char **freed = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    {
      if (!lines[i] || !has_leaf (lines[i], leaf))
        continue;
      /* The pair "LEVEL\tCONTROLLER" of the dropped line. */
      char *pair = xstrdup (lines[i]);
      *strrchr (pair, '\t') = '\0';
      free (lines[i]);
      lines[i] = NULL;
      char *tab = strchr (pair, '\t');
      *tab = '\0';
      bool still = pr_cgroup_v2_record_has (lines, n, pair, tab + 1);
      *tab = '\t';
      bool listed = false;
      for (size_t j = 0; j < nfreed && !listed; j++)
        listed = strcmp (freed[j], pair) == 0;
      if (still || listed)
        free (pair);
      else
        freed[nfreed++] = pair;
    }
  /* Deepest level first: a parent cannot drop a controller that a child
   * level still has in its own subtree_control (EBUSY). */
  for (size_t a = 0; a < nfreed; a++)
    for (size_t b = a + 1; b < nfreed; b++)
      if (strchr (freed[b], '\t') - freed[b] > strchr (freed[a], '\t') - freed[a])
        {
          char *t = freed[a];
          freed[a] = freed[b];
          freed[b] = t;
        }
  *freed_pairs = freed;
  return nfreed;
}

/* ------------------------------------------------------------ I/O shell */

struct record
{
  int fd;        /* the record file, flock'ed exclusively */
  char **lines;  /* NULL entries are dropped lines */
  size_t n;
};

static void
record_close (struct record *r)
{
  for (size_t i = 0; i < r->n; i++)
    free (r->lines[i]);
  free (r->lines);
  if (r->fd >= 0)
    close (r->fd); /* drops the flock */
}

static int
record_open (struct record *r, pr_error **err)
{
  *r = (struct record){ .fd = -1 };
  if (mkdir (PR_CGROUP_V2_RECORD_DIR, 0700) < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "mkdir `%s`", PR_CGROUP_V2_RECORD_DIR);
  r->fd = open (PR_CGROUP_V2_RECORD, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (r->fd < 0)
    return pr_error_set (err, errno, "open `%s`", PR_CGROUP_V2_RECORD);
  if (flock (r->fd, LOCK_EX) < 0)
    return pr_error_set (err, errno, "flock `%s`", PR_CGROUP_V2_RECORD);
  _cleanup_fclose_ FILE *f = fdopen (dup (r->fd), "r");
  if (!f)
    return pr_error_set (err, errno, "read `%s`", PR_CGROUP_V2_RECORD);
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline (&line, &cap, f)) > 0)
    {
      if (line[len - 1] == '\n')
        line[len - 1] = '\0';
      if (line[0] == '\0')
        continue;
      r->lines = xrealloc (r->lines, (r->n + 1) * sizeof (char *));
      r->lines[r->n++] = xstrdup (line);
    }
  return 0;
}

static int
record_save (struct record *r, pr_error **err)
{
  _cleanup_free_ char *text = xstrdup ("");
  for (size_t i = 0; i < r->n; i++)
    if (r->lines[i])
      {
        char *t = xasprintf ("%s%s\n", text, r->lines[i]);
        free (text);
        text = t;
      }
  if (ftruncate (r->fd, 0) < 0 || pwrite (r->fd, text, strlen (text), 0) != (ssize_t) strlen (text))
    return pr_error_set (err, errno, "write `%s`", PR_CGROUP_V2_RECORD);
  return 0;
}

static void
record_add (struct record *r, const char *level, const char *controller, const char *leaf)
{
  r->lines = xrealloc (r->lines, (r->n + 1) * sizeof (char *));
  r->lines[r->n++] = xasprintf ("%s\t%s\t%s", level, controller, leaf);
}

int
pr_cgroup_v2_enable (const struct pr_cgroup_hier *h, const char *dir, const char *controller, pr_error **err)
{
  struct record r;
  int ret = record_open (&r, err);
  size_t ml = strlen (h->mountpoint);
  _cleanup_free_ char *cur = xstrdup (dir);
  _cleanup_free_ char *op = xasprintf ("+%s", controller);
  bool changed = false;
  for (char *s = cur + ml; ret == 0; s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      if (*s == '\0')
        break; /* the leaf itself holds the processes */
      *s = '\0';
      _cleanup_free_ char *enabled = NULL;
      ret = pr_cgroup_read (cur, "cgroup.subtree_control", &enabled, err);
      bool on = false;
      char *save = NULL;
      for (char *t = ret < 0 ? NULL : strtok_r (enabled, " \n", &save); t && !on; t = strtok_r (NULL, " \n", &save))
        on = strcmp (t, controller) == 0;
      if (ret == 0 && !on)
        ret = pr_cgroup_write (cur, "cgroup.subtree_control", op, err);
      /* Ours when our write turned it on, or when a line says an earlier
       * write of ours did: then this leaf needs it too. */
      if (ret == 0 && (!on || pr_cgroup_v2_record_has (r.lines, r.n, cur, controller)))
        {
          record_add (&r, cur, controller, dir);
          changed = true;
        }
      *s = '/';
    }
  /* Record even after a failed level: the levels above were turned on. */
  if (changed)
    {
      _cleanup_error_ pr_error *e = NULL;
      if (record_save (&r, ret < 0 ? &e : err) < 0 && ret == 0)
        ret = -1;
      if (e)
        pr_debug ("%s", e->msg);
    }
  record_close (&r);
  return ret;
}

void
pr_cgroup_v2_release (const char *leaf)
{
  struct record r;
  _cleanup_error_ pr_error *err = NULL;
  struct stat st;
  if (stat (PR_CGROUP_V2_RECORD, &st) < 0)
    return; /* nothing was ever turned on */
  if (record_open (&r, &err) < 0)
    {
      pr_warn ("cgroup2 controllers proctor enabled stay on: %s", err->msg);
      record_close (&r);
      return;
    }
  char **freed = NULL;
  size_t before = r.n;
  size_t nfreed = pr_cgroup_v2_record_drop (r.lines, r.n, leaf, &freed);
  bool dropped = false;
  for (size_t i = 0; i < before; i++)
    dropped |= r.lines[i] == NULL;
  if (dropped && record_save (&r, &err) < 0)
    pr_warn ("%s", err->msg);
  for (size_t i = 0; i < nfreed; i++)
    {
      char *tab = strchr (freed[i], '\t');
      *tab = '\0';
      _cleanup_free_ char *op = xasprintf ("-%s", tab + 1);
      _cleanup_error_ pr_error *e = NULL;
      if (pr_cgroup_write (freed[i], "cgroup.subtree_control", op, &e) < 0)
        pr_debug ("leave %s on in `%s`: %s", tab + 1, freed[i], e->msg);
      free (freed[i]);
    }
  free (freed);
  record_close (&r);
}
