/* manager.h - the cgroup manager face: the one object through which the
 * lifecycle and the commands act on a container's cgroup, whatever driver
 * placed it.  Three drivers sit behind one table of operations:
 *
 *   cgroupfs  the runtime creates the cgroup directories itself (ops.c) and
 *             writes the limits (resources.c);
 *   systemd   the cgroup is a transient scope unit that systemd creates with
 *             the container's first process (systemd.c); the hierarchies
 *             systemd does not manage, the limits, exec, kill, freeze and
 *             the removal of leftovers are cgroupfs work on its directories;
 *   disabled  crun's `--cgroup-manager disabled`: no cgroup of its own, the
 *             container stays in the runtime's cgroup; every operation that
 *             needs one says so (or, for the lifecycle's steps, does nothing).
 *
 * The driver is chosen once, from the global flags at create
 * (pr_cgroup_manager_new) or from what state.json recorded afterwards
 * (pr_cgroup_manager_open); nothing else tests the flags.
 * Source: runtime-spec config-linux.md "Control groups"; runc's
 * --systemd-cgroup; crun(1) --cgroup-manager. */
#ifndef PROCTOR_CGROUP_MANAGER_H
#define PROCTOR_CGROUP_MANAGER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "../base/error.h"

enum pr_cgroup_driver
{
  PR_CGROUP_DRIVER_CGROUPFS,
  PR_CGROUP_DRIVER_SYSTEMD,
  PR_CGROUP_DRIVER_DISABLED,
};

struct pr_cgroup_manager;

/* One driver's operations.  Every one takes the manager and fills err on
 * failure (-1); the table of each driver is in manager.c. */
struct pr_cgroup_manager_ops
{
  const char *name; /* "cgroupfs", "systemd", "disabled" (--cgroup-manager) */
  /* Before the container's first process exists: refuse a frozen place,
   * create the cgroup, write linux.resources (resources may be NULL). */
  int (*setup) (struct pr_cgroup_manager *m, yajl_val resources, pr_error **err);
  /* Places the container's first process (create's stage 1). */
  int (*start) (struct pr_cgroup_manager *m, pid_t pid, yajl_val resources, pr_error **err);
  /* Moves a later process in (exec, the egress helper); specs as
   * pr_cgroup_enter_sub's `exec --cgroup` list, NULL for the cgroup itself. */
  int (*enter) (const struct pr_cgroup_manager *m, pid_t pid, char *const *specs, pr_error **err);
  /* `update`: only the keys present in resources change. */
  int (*update) (const struct pr_cgroup_manager *m, yajl_val resources, pr_error **err);
  int (*freeze) (const struct pr_cgroup_manager *m, bool freeze, pr_error **err);
  /* 0 and *frozen, or -1 with errno (no err: `state` asks on every call). */
  int (*is_frozen) (const struct pr_cgroup_manager *m, bool *frozen);
  int (*stats_json) (const struct pr_cgroup_manager *m, char **json_out, pr_error **err);
  int (*oom_kills) (const struct pr_cgroup_manager *m, uint64_t *out, pr_error **err);
  int (*pids) (const struct pr_cgroup_manager *m, pid_t **pids_out, size_t *n_out, pr_error **err);
  int (*kill) (const struct pr_cgroup_manager *m, int sig, pr_error **err);
  /* Removes what setup/start made; a failure that must not stop the rest
   * of a teardown (systemd not answering) is logged with warn_prefix. */
  int (*teardown) (const struct pr_cgroup_manager *m, const char *warn_prefix, pr_error **err);
};

struct pr_cgroup_manager
{
  const struct pr_cgroup_manager_ops *ops;
  enum pr_cgroup_driver driver;
  char *path;   /* as pr_cgroup_path computed it; NULL for disabled */
  bool created; /* setup or start made the cgroup (create's cleanup undoes it) */
};

/* Pure: the driver the global flags ask for.  manager_flag is crun's
 * --cgroup-manager value (NULL when absent), systemd_flag runc's
 * --systemd-cgroup.  "disabled" wins, then "systemd" or systemd_flag, then
 * cgroupfs.  Errors: EINVAL for another manager_flag value. */
int pr_cgroup_driver_choose (const char *manager_flag, bool systemd_flag, enum pr_cgroup_driver *out, pr_error **err);

/* For create: chooses the driver (pr_cgroup_driver_choose) and computes
 * the container's cgroup path from linux.cgroupsPath and id
 * (pr_cgroup_path; none for disabled).  Nothing is created yet.  *out is
 * the caller's; free its contents with pr_cgroup_manager_clear.  Errors:
 * those of the two. */
int pr_cgroup_manager_new (const char *manager_flag, bool systemd_flag, const char *cgroups_path, const char *id,
                           struct pr_cgroup_manager *out, pr_error **err);

/* For a container that exists: the manager state.json recorded (path NULL
 * or "" = disabled; systemd = the systemd driver placed it).  Never fails. */
void pr_cgroup_manager_open (const char *path, bool systemd, struct pr_cgroup_manager *out);

/* Frees the manager's contents (the struct is the caller's).  NULL-safe. */
void pr_cgroup_manager_clear (struct pr_cgroup_manager *m);

/* True for a manager with a cgroup of its own (not disabled). */
bool pr_cgroup_manager_has_cgroup (const struct pr_cgroup_manager *m);

#define _cleanup_cgroup_manager_ __attribute__ ((cleanup (pr_cgroup_manager_clear)))

#endif
