/* ops.h - the operations on an existing container that go through its
 * cgroup (cgroup/manager.h): update, pause/resume, ps, stats, events.  The
 * commands (src/cmd) parse their flags and print; libproctor-crun wraps
 * the same calls.  Each loads the container's state by id under --root.
 * Source: runc update(8), pause(8), resume(8), ps(8), events(8);
 * runtime-spec config-linux.md "Control groups". */
#ifndef PROCTOR_LIFECYCLE_OPS_H
#define PROCTOR_LIFECYCLE_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../base/error.h"
#include "container.h"

/* One resource value for pr_container_update, the shape of crun's
 * libcrun_update_value_s: linux.resources.SECTION.NAME := value, where
 * value is a JSON number's text when numeric (e.g. "104857600", "-1"),
 * else a string ("0-1" for cpu.cpus). */
struct pr_update_value
{
  const char *section; /* "memory", "cpu", "pids", "blockIO", ... */
  const char *name;    /* "limit", "quota", "cpus", ... */
  bool numeric;
  const char *value;
};

/* Changes the live container's cgroup limits (runc update): the values
 * (n of them; the later one wins for a repeated key) are laid over
 * resources_json (a linux.resources object as text, or NULL), only the
 * keys present are written to the cgroup, then the state directory's
 * config.json gets them merged into its linux.resources (atomically) so
 * later commands see them.  what names resources_json in errors (a file
 * name, "-").  Errors: EINVAL "update: nothing to update" when both are
 * empty; pr_state_load's; EINVAL "update: container ID is STATUS" when it
 * is stopped or has no cgroup; EINVAL for invalid JSON or a non-object;
 * the cgroup writes' errors (pr_cgroup_apply_resources); the config
 * rewrite's errno. */
int pr_container_update (const struct pr_global *g, const char *id, const char *resources_json, const char *what,
                         const struct pr_update_value *values, size_t n, pr_error **err);

/* Freezes (pause) or thaws (resume) every process of the container (the
 * v1 freezer or cgroup.freeze).  Errors: pr_state_load's; "container ID is
 * not running: STATUS" (pause) / "... is not paused: STATUS" (resume),
 * errnum 0; the freezer's (ETIMEDOUT, ENOTSUP, EINVAL without a cgroup). */
int pr_container_pause (const struct pr_global *g, const char *id, pr_error **err);
int pr_container_resume (const struct pr_global *g, const char *id, pr_error **err);

/* The host pids of the container's processes (every process of its cgroup
 * and the cgroups below, minus a rollout's egress helper, which is charged
 * to the container but is none of its processes).  *pids_out is malloc'd
 * (n_out entries; NULL when empty).  Errors: pr_state_load's; the cgroup
 * read's errno; EINVAL without a cgroup. */
int pr_container_ps (const struct pr_global *g, const char *id, pid_t **pids_out, size_t *n_out, pr_error **err);

/* The container's statistics as runc's types.Stats JSON object
 * (pr_cgroup_stats_json), malloc'd in *json_out.  Errors: pr_state_load's;
 * "container ID is not running" (errnum 0) when stopped or without a
 * cgroup; the stats read's. */
int pr_container_stats (const struct pr_global *g, const char *id, char **json_out, pr_error **err);

/* An event for pr_container_events: type "stats" with data_json the
 * types.Stats object, or "oom" with data_json NULL.  A non-zero return
 * stops the stream (pr_container_events then returns 0). */
typedef int (*pr_event_fn) (const char *type, const char *id, const char *data_json, void *arg);

/* runc events: with stats_once one "stats" event; otherwise a "stats"
 * event every interval_ms (>= 1) and an "oom" event per OOM kill the
 * cgroup counts (polled every 200 ms), until the container stops.  The
 * state lock is held only while the state is read (events must not block
 * delete).  Errors: as pr_container_stats; a stats read failing while the
 * container still runs. */
int pr_container_events (const struct pr_global *g, const char *id, bool stats_once, long long interval_ms,
                         pr_event_fn fn, void *arg, pr_error **err);

#endif
