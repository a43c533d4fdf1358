/* budget.c - the verifier and setup sessions' own cgroup, a sibling of
 * the container's with its own memory and pids limits (see budget.h).
 * Only the public cgroup API (cgroup/cgroup.h) is used.
 * Source: SPEC section 2 "Out of the agent's reach"; runtime-spec
 * config-linux.md "Memory", "pids"; cgroups(7). */
#define _GNU_SOURCE
#include "budget.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "../cgroup/cgroup.h"

char *
pr_budget_path (const char *cgroup_path)
{
  return xasprintf ("%s-verifier", cgroup_path);
}

static long long
limit_or (int64_t v, long long dflt)
{
  return v == 0 ? dflt : (long long) v;
}

/* The budget as a linux.resources object for pr_cgroup_apply_resources. */
static yajl_val
budget_resources (const struct pr_policy *p)
{
  _cleanup_free_ char *json = xasprintf ("{\"memory\": {\"limit\": %lld}, \"pids\": {\"limit\": %lld}}",
                                         limit_or (p->verifier_memory, PR_BUDGET_MEMORY_DEFAULT),
                                         limit_or (p->verifier_pids, PR_BUDGET_PIDS_DEFAULT));
  return yajl_tree_parse (json, NULL, 0);
}

int
pr_budget_enter (const struct pr_policy *p, const char *cgroup_path, pid_t pid, pr_error **err)
{
  _cleanup_free_ char *path = pr_budget_path (cgroup_path);
  /* Limits first, then the pid: the session never runs unbudgeted. */
  if (pr_cgroup_create (path, 0, err) < 0)
    return pr_error_wrap (err, "verifier cgroup `%s`", path);
  yajl_val res = budget_resources (p);
  int r = pr_cgroup_apply_resources (path, res, false, err);
  yajl_tree_free (res);
  if (r == 0)
    r = pr_cgroup_enter (path, pid, err);
  if (r < 0)
    {
      pr_error_wrap (err, "verifier cgroup `%s`", path);
      pr_budget_release (cgroup_path);
      return -1;
    }
  return 0;
}

void
pr_budget_release (const char *cgroup_path)
{
  _cleanup_free_ char *path = pr_budget_path (cgroup_path);
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  _cleanup_error_ pr_error *e = NULL;
  if (pr_cgroup_pids (path, &pids, &n, &e) < 0 || n > 0)
    return;
  if (pr_cgroup_destroy (path, &e) < 0)
    pr_debug ("%s", e->msg);
}

int
pr_budget_destroy (const char *cgroup_path, pr_error **err)
{
  _cleanup_free_ char *path = pr_budget_path (cgroup_path);
  return pr_cgroup_destroy (path, err);
}

/* The 0:: line of /proc/PID/cgroup: pid's cgroup in the cgroup2
 * hierarchy, malloc'd.  Source: cgroups(7) "/proc/[pid]/cgroup". */
static char *
unified_of (pid_t pid, pr_error **err)
{
  _cleanup_free_ char *proc = xasprintf ("/proc/%d/cgroup", pid);
  _cleanup_free_ char *text = NULL;
  if (pr_read_file (proc, &text, NULL, err) < 0)
    return NULL;
  char *line = strstr (text, "0::");
  if (line != text && (line == NULL || line[-1] != '\n'))
    {
      pr_error_set (err, ENOENT, "%s: no cgroup2 line", proc);
      return NULL;
    }
  line += 3;
  line[strcspn (line, "\n")] = '\0';
  return xstrdup (line);
}

char *
pr_budget_session_enter (pid_t pid, pr_error **err)
{
  _cleanup_free_ char *cur = unified_of (pid, err);
  if (cur == NULL)
    return NULL;
  _cleanup_free_ char *sub = xasprintf ("%s/session-%d", strcmp (cur, "/") == 0 ? "" : cur, pid);
  char *dir = NULL;
  if (pr_cgroup_unified_dir (sub, &dir, err) < 0)
    return NULL;
  _cleanup_free_ char *procs = xasprintf ("%s/cgroup.procs", dir);
  _cleanup_free_ char *text = xasprintf ("%d", pid);
  if ((mkdir (dir, 0755) < 0 && errno != EEXIST) || pr_write_file (procs, text, strlen (text), err) < 0)
    {
      if (err && *err == NULL)
        pr_error_set (err, errno, "mkdir `%s`", dir);
      rmdir (dir);
      free (dir);
      return NULL;
    }
  return dir;
}

/* The watcher: waits for the leader's pidfd to turn readable (it ended),
 * then kills the session's cgroup.  Never returns. */
static _Noreturn void
watch (int pidfd, const char *dir)
{
  if (pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      while (poll (&p, 1, -1) < 0 && errno == EINTR)
        ;
    }
  pr_cgroup_v2_kill_tree (dir);
  _exit (0);
}

void
pr_budget_session_watch (const char *dir, pid_t pid)
{
  /* A leader already reaped: no pidfd, the session is killed at once. */
  int pidfd = pr_sys_pidfd_open (pid, 0);
  pid_t c = fork ();
  if (c == 0)
    {
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      setsid ();
      if (fork () != 0)
        _exit (0);
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      for (int fd = 0; fd < 3; fd++)
        dup2 (null, fd);
      /* Only the pidfd stays (as fd 3): the watcher must hold none of the
       * engine's pipes, or an engine waiting for their end would wait for
       * the session's. */
      if (pidfd >= 0 && pidfd != 3)
        pidfd = dup2 (pidfd, 3);
      pr_close_fds_from (pidfd >= 0 ? 4 : 3);
      watch (pidfd, dir);
    }
  if (c > 0)
    waitpid (c, NULL, 0);
  else
    pr_cgroup_v2_kill_tree (dir);
  if (pidfd >= 0)
    close (pidfd);
}
