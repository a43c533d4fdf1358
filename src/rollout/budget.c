/* budget.c - the verifier and setup sessions' own cgroup, a sibling of
 * the container's with its own memory and pids limits (see budget.h).
 * Only the public cgroup API (cgroup/cgroup.h) is used.
 * Source: SPEC section 2 "Out of the agent's reach"; runtime-spec
 * config-linux.md "Memory", "pids"; cgroups(7). */
#define _GNU_SOURCE
#include "budget.h"

#include <errno.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "../base/log.h"
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
