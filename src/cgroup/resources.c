/* resources.c - linux.resources onto cgroup files (see cgroup.h).
 * Placeholder until the resources work lands: limits are not applied. */
#define _GNU_SOURCE
#include "cgroup.h"

int
pr_cgroup_apply_resources (const char *path, yajl_val resources, bool update, pr_error **err)
{
  return 0;
}
