/* manager.c - the cgroup manager face (manager.h): the driver choice, made
 * once, and the three drivers' operation tables (cgroupfs, systemd,
 * disabled) over the cgroup.h primitives of ops.c, resources.c, stats.c
 * and systemd.c.  The choice itself (pr_cgroup_driver_choose) is pure; the
 * tables are the thin I/O shell.
 * Source: runtime-spec config-linux.md "Control groups"; runc's
 * --systemd-cgroup; crun(1) --cgroup-manager. */
#define _GNU_SOURCE
#include "manager.h"
#include "cgroup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/util.h"

/* ------------------------------------------------------------- choice */

int
pr_cgroup_driver_choose (const char *manager_flag, bool systemd_flag, enum pr_cgroup_driver *out, pr_error **err)
{
  if (manager_flag && strcmp (manager_flag, "disabled") == 0)
    *out = PR_CGROUP_DRIVER_DISABLED;
  else if (manager_flag && strcmp (manager_flag, "systemd") == 0)
    *out = PR_CGROUP_DRIVER_SYSTEMD;
  else if (manager_flag && strcmp (manager_flag, "cgroupfs") != 0)
    return pr_error_invalid (err, "unknown --cgroup-manager `%s`", manager_flag);
  else
    /* runc's --systemd-cgroup still asks for systemd next to crun's
     * `--cgroup-manager cgroupfs`, as it always did. */
    *out = systemd_flag ? PR_CGROUP_DRIVER_SYSTEMD : PR_CGROUP_DRIVER_CGROUPFS;
  return 0;
}

/* ------------------------------------------------------------ cgroupfs */

static int
fs_setup (struct pr_cgroup_manager *m, yajl_val resources, pr_error **err)
{
  if (pr_cgroup_check_not_frozen (m->path, err) < 0)
    return -1;
  if (pr_cgroup_create (m->path, 0, err) < 0)
    return -1;
  m->created = true;
  return pr_cgroup_apply_resources (m->path, resources, false, err);
}

static int
fs_start (struct pr_cgroup_manager *m, pid_t pid, yajl_val resources, pr_error **err)
{
  /* setup made the cgroup and wrote the limits already */
  return pr_cgroup_enter (m->path, pid, err);
}

static int
fs_enter (const struct pr_cgroup_manager *m, pid_t pid, char *const *specs, pr_error **err)
{
  return specs && specs[0] ? pr_cgroup_enter_sub (m->path, specs, pid, err) : pr_cgroup_enter (m->path, pid, err);
}

static int
fs_update (const struct pr_cgroup_manager *m, yajl_val resources, pr_error **err)
{
  return pr_cgroup_apply_resources (m->path, resources, true, err);
}

static int
fs_freeze (const struct pr_cgroup_manager *m, bool freeze, pr_error **err)
{
  return pr_cgroup_freeze (m->path, freeze, err);
}

static int
fs_is_frozen (const struct pr_cgroup_manager *m, bool *frozen)
{
  return pr_cgroup_is_frozen (m->path, frozen);
}

static int
fs_stats_json (const struct pr_cgroup_manager *m, char **json_out, pr_error **err)
{
  return pr_cgroup_stats_json (m->path, json_out, err);
}

static int
fs_oom_kills (const struct pr_cgroup_manager *m, uint64_t *out, pr_error **err)
{
  return pr_cgroup_oom_kills (m->path, out, err);
}

static int
fs_pids (const struct pr_cgroup_manager *m, pid_t **pids_out, size_t *n_out, pr_error **err)
{
  return pr_cgroup_pids (m->path, pids_out, n_out, err);
}

static int
fs_kill (const struct pr_cgroup_manager *m, int sig, pr_error **err)
{
  return pr_cgroup_kill (m->path, sig, err);
}

static int
fs_teardown (const struct pr_cgroup_manager *m, const char *warn_prefix, pr_error **err)
{
  /* pr_cgroup_destroy kills what is left in the cgroup before removing it */
  return pr_cgroup_destroy (m->path, err);
}

static const struct pr_cgroup_manager_ops cgroupfs_ops = {
  .name = "cgroupfs",
  .setup = fs_setup,
  .start = fs_start,
  .enter = fs_enter,
  .update = fs_update,
  .freeze = fs_freeze,
  .is_frozen = fs_is_frozen,
  .stats_json = fs_stats_json,
  .oom_kills = fs_oom_kills,
  .pids = fs_pids,
  .kill = fs_kill,
  .teardown = fs_teardown,
};

/* ------------------------------------------------------------- systemd */

static int
sd_setup (struct pr_cgroup_manager *m, yajl_val resources, pr_error **err)
{
  /* A scope cannot start empty: it is made with the first process. */
  return 0;
}

/* systemd creates the scope in the hierarchies it manages;
 * pr_cgroup_create adds the others (cpuset, freezer, ...) and puts pid
 * there too, and the limits go on through cgroupfs before pid is let go. */
static int
sd_start (struct pr_cgroup_manager *m, pid_t pid, yajl_val resources, pr_error **err)
{
  if (pr_cgroup_systemd_start (m->path, pid, err) < 0)
    return -1;
  m->created = true;
  if (pr_cgroup_create (m->path, pid, err) < 0)
    return -1;
  return pr_cgroup_apply_resources (m->path, resources, false, err);
}

static int
sd_teardown (const struct pr_cgroup_manager *m, const char *warn_prefix, pr_error **err)
{
  /* The unit first: systemd would otherwise recreate or hold on to the
   * scope's cgroup while cgroupfs removes it.  systemd gone or not
   * answering: the unit is then not ours to fix, and the container's
   * cgroups still get cleaned. */
  pr_error *e = NULL;
  if (pr_cgroup_systemd_stop (m->path, &e) < 0)
    {
      pr_warn ("%s: %s", warn_prefix, e->msg);
      pr_error_free (&e);
    }
  return fs_teardown (m, warn_prefix, err);
}

static const struct pr_cgroup_manager_ops systemd_ops = {
  .name = "systemd",
  .setup = sd_setup,
  .start = sd_start,
  .enter = fs_enter,
  .update = fs_update,
  .freeze = fs_freeze,
  .is_frozen = fs_is_frozen,
  .stats_json = fs_stats_json,
  .oom_kills = fs_oom_kills,
  .pids = fs_pids,
  .kill = fs_kill,
  .teardown = sd_teardown,
};

/* ------------------------------------------------------------ disabled */

/* The lifecycle's own steps (setup, start, enter, teardown) have nothing
 * to do without a cgroup; what a caller asks of the cgroup itself fails. */
static int
no_cgroup (pr_error **err)
{
  return pr_error_invalid (err, "the container has no cgroup of its own (--cgroup-manager disabled)");
}

static int
off_setup (struct pr_cgroup_manager *m, yajl_val resources, pr_error **err)
{
  return 0;
}

static int
off_start (struct pr_cgroup_manager *m, pid_t pid, yajl_val resources, pr_error **err)
{
  return 0;
}

static int
off_enter (const struct pr_cgroup_manager *m, pid_t pid, char *const *specs, pr_error **err)
{
  return 0;
}

static int
off_update (const struct pr_cgroup_manager *m, yajl_val resources, pr_error **err)
{
  return no_cgroup (err);
}

static int
off_freeze (const struct pr_cgroup_manager *m, bool freeze, pr_error **err)
{
  return no_cgroup (err);
}

static int
off_is_frozen (const struct pr_cgroup_manager *m, bool *frozen)
{
  *frozen = false;
  return 0;
}

static int
off_stats_json (const struct pr_cgroup_manager *m, char **json_out, pr_error **err)
{
  return no_cgroup (err);
}

static int
off_oom_kills (const struct pr_cgroup_manager *m, uint64_t *out, pr_error **err)
{
  return no_cgroup (err);
}

static int
off_pids (const struct pr_cgroup_manager *m, pid_t **pids_out, size_t *n_out, pr_error **err)
{
  return no_cgroup (err);
}

static int
off_kill (const struct pr_cgroup_manager *m, int sig, pr_error **err)
{
  return no_cgroup (err);
}

static int
off_teardown (const struct pr_cgroup_manager *m, const char *warn_prefix, pr_error **err)
{
  return 0;
}

static const struct pr_cgroup_manager_ops disabled_ops = {
  .name = "disabled",
  .setup = off_setup,
  .start = off_start,
  .enter = off_enter,
  .update = off_update,
  .freeze = off_freeze,
  .is_frozen = off_is_frozen,
  .stats_json = off_stats_json,
  .oom_kills = off_oom_kills,
  .pids = off_pids,
  .kill = off_kill,
  .teardown = off_teardown,
};

/* ------------------------------------------------------------- objects */

static const struct pr_cgroup_manager_ops *
ops_of (enum pr_cgroup_driver d)
{
  switch (d)
    {
    case PR_CGROUP_DRIVER_SYSTEMD: return &systemd_ops;
    case PR_CGROUP_DRIVER_DISABLED: return &disabled_ops;
    case PR_CGROUP_DRIVER_CGROUPFS: break;
    }
  return &cgroupfs_ops;
}

int
pr_cgroup_manager_new (const char *manager_flag, bool systemd_flag, const char *cgroups_path, const char *id,
                       struct pr_cgroup_manager *out, pr_error **err)
{
  enum pr_cgroup_driver d;
  *out = (struct pr_cgroup_manager){ .ops = &disabled_ops, .driver = PR_CGROUP_DRIVER_DISABLED };
  if (pr_cgroup_driver_choose (manager_flag, systemd_flag, &d, err) < 0)
    return -1;
  if (d != PR_CGROUP_DRIVER_DISABLED
      && pr_cgroup_path (cgroups_path, id, d == PR_CGROUP_DRIVER_SYSTEMD, &out->path, err) < 0)
    return -1;
  out->driver = d;
  out->ops = ops_of (d);
  return 0;
}

void
pr_cgroup_manager_open (const char *path, bool systemd, struct pr_cgroup_manager *out)
{
  enum pr_cgroup_driver d = path == NULL || path[0] == '\0' ? PR_CGROUP_DRIVER_DISABLED
                            : systemd                       ? PR_CGROUP_DRIVER_SYSTEMD
                                                            : PR_CGROUP_DRIVER_CGROUPFS;
  *out = (struct pr_cgroup_manager){
    .ops = ops_of (d),
    .driver = d,
    .path = d == PR_CGROUP_DRIVER_DISABLED ? NULL : xstrdup (path),
  };
}

void
pr_cgroup_manager_clear (struct pr_cgroup_manager *m)
{
  if (m == NULL)
    return;
  free (m->path);
  m->path = NULL;
}

bool
pr_cgroup_manager_has_cgroup (const struct pr_cgroup_manager *m)
{
  return m->driver != PR_CGROUP_DRIVER_DISABLED;
}
