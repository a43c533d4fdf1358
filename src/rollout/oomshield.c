/* oomshield.c - the rollout's runtime processes out of the OOM killer's
 * choice (see oomshield.h).
 * Source: Documentation/admin-guide/cgroup-v1/memory.rst (OOM victims are
 * the tasks of the memory cgroup), proc(5) /proc/pid/oom_score_adj. */
#define _GNU_SOURCE
#include "oomshield.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../cgroup/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* cgroup2: the lowest score there is; refused without CAP_SYS_RESOURCE. */
static void
lowest_oom_score (pid_t pid)
{
  char file[64];
  snprintf (file, sizeof file, "/proc/%d/oom_score_adj", (int) pid);
  int fd = open (file, O_WRONLY | O_CLOEXEC);
  if (fd >= 0 && write (fd, "-1000", 5) == 5)
    {
      close (fd);
      return;
    }
  int e = errno;
  if (fd >= 0)
    close (fd);
  pr_warn ("rollout: cannot keep pid %d out of the OOM killer's choice (oom_score_adj -1000: %s; it needs "
           "CAP_SYS_RESOURCE): an agent that fills the container's memory limit can have it killed",
           (int) pid, strerror (e));
}

int
pr_oomshield_apply (const char *cgroup_path, const pid_t *pids, size_t n, pr_error **err)
{
  if (cgroup_path == NULL)
    return 0;
  _cleanup_free_ char *sib = pr_cgroup_sibling_path (cgroup_path, PR_OOMSHIELD_CGROUP);
  for (size_t i = 0; i < n; i++)
    {
      if (pids[i] <= 0)
        continue;
      int r = pr_cgroup_enter_v1_controller (sib, "memory", pids[i], err);
      if (r < 0)
        return pr_error_wrap (err, "rollout: the runtime's own memory cgroup");
      if (r == 0)
        lowest_oom_score (pids[i]);
    }
  return 0;
}

void
pr_oomshield_remove (const char *cgroup_path)
{
  _cleanup_free_ char *sib = pr_cgroup_sibling_path (cgroup_path, PR_OOMSHIELD_CGROUP);
  pr_error *e = NULL;
  if (pr_cgroup_destroy (sib, &e) < 0)
    {
      pr_warn ("rollout: %s", e->msg);
      pr_error_free (&e);
    }
}
