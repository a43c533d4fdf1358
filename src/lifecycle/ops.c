/* ops.c - update, pause/resume, ps, stats and events of an existing
 * container (ops.h): its state by id, its cgroup through the manager face
 * (cgroup/manager.h), and for update the rewrite of the state directory's
 * config.json copy.  The CLI flags and the printing are the commands'.
 * Source: runc update(8), pause(8), ps(8), events(8); runc
 * types/events.go. */
#define _GNU_SOURCE
#include "ops.h"
#include "state.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../cgroup/manager.h"
#include "../rollout/lifecycle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define OOM_POLL_MS 200

/* ---------------------------------------------------------------- update */

static void
gen_key (yajl_gen g, const char *k)
{
  yajl_gen_string (g, (const unsigned char *) k, strlen (k));
}

/* True when a later value sets the same key (the last one wins). */
static bool
overridden (const struct pr_update_value *v, size_t n, size_t i)
{
  for (size_t j = i + 1; j < n; j++)
    if (strcmp (v[j].section, v[i].section) == 0 && strcmp (v[j].name, v[i].name) == 0)
      return true;
  return false;
}

/* The values as a linux.resources JSON text ("{}" when none): one object
 * per section, in the order the sections first appear. */
static char *
values_json (const struct pr_update_value *v, size_t n)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  for (size_t s = 0; s < n; s++)
    {
      bool first = true;
      for (size_t k = 0; k < s && first; k++)
        first = strcmp (v[k].section, v[s].section) != 0;
      if (!first)
        continue;
      gen_key (g, v[s].section);
      yajl_gen_map_open (g);
      for (size_t i = s; i < n; i++)
        {
          if (strcmp (v[i].section, v[s].section) != 0 || overridden (v, n, i))
            continue;
          gen_key (g, v[i].name);
          if (v[i].numeric)
            yajl_gen_number (g, v[i].value, strlen (v[i].value));
          else
            yajl_gen_string (g, (const unsigned char *) v[i].value, strlen (v[i].value));
        }
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  return pr_json_gen_finish (g);
}

static int
parse_json (const char *text, const char *what, yajl_val *out, pr_error **err)
{
  char ebuf[256] = "";
  *out = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (*out == NULL)
    {
      ebuf[strcspn (ebuf, "\n")] = '\0';
      return pr_error_invalid (err, "update: invalid JSON in %s: %s", what, ebuf);
    }
  return 0;
}

/* The "linux" object of config.json with its resources merged with res. */
static void
gen_linux_with (yajl_gen g, yajl_val linux, yajl_val res)
{
  yajl_gen_map_open (g);
  for (size_t j = 0; linux && j < linux->u.object.len; j++)
    {
      gen_key (g, linux->u.object.keys[j]);
      if (strcmp (linux->u.object.keys[j], "resources") == 0)
        pr_json_gen_merged (g, linux->u.object.values[j], res);
      else
        pr_json_gen_value (g, linux->u.object.values[j]);
    }
  if (pr_json_object_get (linux, "resources") == NULL)
    {
      gen_key (g, "resources");
      pr_json_gen_value (g, res);
    }
  yajl_gen_map_close (g);
}

/* config.json with linux.resources merged with res, everything else kept. */
static char *
config_with (yajl_val cfg, yajl_val res)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_val linux = pr_json_object_get (cfg, "linux");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < cfg->u.object.len; i++)
    {
      const char *k = cfg->u.object.keys[i];
      gen_key (g, k);
      if (strcmp (k, "linux") != 0 || !YAJL_IS_OBJECT (linux))
        pr_json_gen_value (g, cfg->u.object.values[i]);
      else
        gen_linux_with (g, linux, res);
    }
  if (linux == NULL)
    {
      gen_key (g, "linux");
      gen_linux_with (g, NULL, res);
    }
  yajl_gen_map_close (g);
  return pr_json_gen_finish (g);
}

/* Rewrites <root>/<id>/config.json atomically with the merged resources. */
static int
save_config (const struct pr_state *st, yajl_val res, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (pr_read_file_at (st->state_dirfd, "config.json", &text, NULL, err) < 0)
    return -1;
  yajl_val cfg;
  if (parse_json (text, "the state's config.json", &cfg, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (cfg))
    {
      yajl_tree_free (cfg);
      return pr_error_invalid (err, "update: the state's config.json is not an object");
    }
  _cleanup_free_ char *out = config_with (cfg, res);
  yajl_tree_free (cfg);
  if (pr_write_file_at (st->state_dirfd, "config.json.tmp", out, strlen (out), 0600, err) < 0)
    return -1;
  if (renameat (st->state_dirfd, "config.json.tmp", st->state_dirfd, "config.json") < 0)
    return pr_error_set (err, errno, "update: rename config.json");
  return 0;
}

/* resources_json (may be NULL) with the values laid over it, parsed. */
static int
merged_resources (const char *resources_json, const char *what, const char *values_text, yajl_val *out,
                  pr_error **err)
{
  yajl_val file_res = NULL, flag_res = NULL;
  int ret = -1;
  if (resources_json && parse_json (resources_json, what, &file_res, err) < 0)
    goto out;
  if (file_res && !YAJL_IS_OBJECT (file_res))
    {
      pr_error_invalid (err, "update: %s: expected a linux.resources object", what);
      goto out;
    }
  if (parse_json (values_text, "flags", &flag_res, err) < 0)
    goto out;
  yajl_gen gen = yajl_gen_alloc (NULL);
  pr_json_gen_merged (gen, file_res, flag_res);
  char *merged = pr_json_gen_finish (gen);
  ret = parse_json (merged, "merged resources", out, err);
  free (merged);
out:
  if (file_res)
    yajl_tree_free (file_res);
  if (flag_res)
    yajl_tree_free (flag_res);
  return ret;
}

int
pr_container_update (const struct pr_global *g, const char *id, const char *resources_json, const char *what,
                     const struct pr_update_value *values, size_t n, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_free_ char *values_text = values_json (values, n);
  if (resources_json == NULL && n == 0)
    return pr_error_invalid (err, "update: nothing to update: give --resources or a resource flag");
  if (pr_state_load (g->root, id, true, &st, err) < 0)
    return -1;
  const char *status = pr_state_status (st);
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
  pr_state_cgroup (st, &cg);
  if (strcmp (status, "stopped") == 0 || !pr_cgroup_manager_has_cgroup (&cg))
    return pr_error_invalid (err, "update: container %s is %s", id, status);

  yajl_val res = NULL;
  if (merged_resources (resources_json, what ? what : "resources", values_text, &res, err) < 0)
    return -1;
  int ret = cg.ops->update (&cg, res, err);
  if (ret == 0)
    ret = save_config (st, res, err);
  yajl_tree_free (res);
  return ret;
}

/* ---------------------------------------------------------- pause/resume */

static int
freeze (const struct pr_global *g, const char *id, bool on, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  /* Shared, not exclusive: the freezer is all this writes (the kernel
   * serialises it), and an `exec --ignore-paused` waiting in the frozen
   * cgroup holds a shared lock until it is resumed. */
  if (pr_state_load (g->root, id, false, &st, err) < 0)
    return -1;
  const char *status = pr_state_status (st);
  if (strcmp (status, on ? "running" : "paused") != 0)
    return pr_error_set (err, 0, "container %s is not %s: %s", st->id, on ? "running" : "paused", status);
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
  pr_state_cgroup (st, &cg);
  return cg.ops->freeze (&cg, on, err);
}

int
pr_container_pause (const struct pr_global *g, const char *id, pr_error **err)
{
  return freeze (g, id, true, err);
}

int
pr_container_resume (const struct pr_global *g, const char *id, pr_error **err)
{
  return freeze (g, id, false, err);
}

/* -------------------------------------------------------------------- ps */

int
pr_container_ps (const struct pr_global *g, const char *id, pid_t **pids_out, size_t *n_out, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  if (pr_state_load (g->root, id, false, &st, err) < 0)
    return -1;
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
  pr_state_cgroup (st, &cg);
  pid_t *pids = NULL;
  size_t n = 0;
  if (cg.ops->pids (&cg, &pids, &n, err) < 0)
    return -1;
  pr_rollout_ps_filter (st->state_dirfd, pids, &n); /* the egress helper is none of its processes */
  *pids_out = pids;
  *n_out = n;
  return 0;
}

/* ------------------------------------------------------- stats and events */

static long long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
gone (const struct pr_state *st)
{
  return strcmp (pr_state_status (st), "stopped") == 0;
}

/* The running container's state, its lock already released (events run
 * for a long time and must not block delete), and its cgroup. */
static int
load_running (const struct pr_global *g, const char *id, struct pr_state **st, struct pr_cgroup_manager *cg,
              pr_error **err)
{
  if (pr_state_load (g->root, id, false, st, err) < 0)
    return -1;
  if ((*st)->state_dirfd >= 0)
    {
      close ((*st)->state_dirfd);
      (*st)->state_dirfd = -1;
    }
  pr_state_cgroup (*st, cg);
  if (gone (*st) || !pr_cgroup_manager_has_cgroup (cg))
    return pr_error_set (err, 0, "container %s is not running", (*st)->id);
  return 0;
}

int
pr_container_stats (const struct pr_global *g, const char *id, char **json_out, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg = { 0 };
  if (load_running (g, id, &st, &cg, err) < 0)
    return -1;
  return cg.ops->stats_json (&cg, json_out, err);
}

static int
emit_stats (const struct pr_state *st, const struct pr_cgroup_manager *cg, pr_event_fn fn, void *arg, bool *stop,
            pr_error **err)
{
  _cleanup_free_ char *data = NULL;
  if (cg->ops->stats_json (cg, &data, err) < 0)
    return -1;
  *stop = fn ("stats", st->id, data, arg) != 0;
  return 0;
}

static int
stream (const struct pr_state *st, const struct pr_cgroup_manager *cg, long long interval_ms, pr_event_fn fn,
        void *arg, pr_error **err)
{
  uint64_t ooms = 0;
  bool stop = false;
  _cleanup_error_ pr_error *e = NULL;
  bool watch_oom = cg->ops->oom_kills (cg, &ooms, &e) == 0;
  long long next_stats = now_ms ();
  while (!stop && !gone (st))
    {
      if (watch_oom)
        {
          uint64_t now_ooms = 0;
          _cleanup_error_ pr_error *oe = NULL;
          if (cg->ops->oom_kills (cg, &now_ooms, &oe) < 0)
            break; /* cgroup gone: the container is over */
          for (; ooms < now_ooms && !stop; ooms++)
            stop = fn ("oom", st->id, NULL, arg) != 0;
        }
      if (!stop && now_ms () >= next_stats)
        {
          if (emit_stats (st, cg, fn, arg, &stop, err) < 0)
            return gone (st) ? 0 : -1;
          next_stats = now_ms () + interval_ms;
        }
      long long wait = next_stats - now_ms ();
      if (watch_oom && wait > OOM_POLL_MS)
        wait = OOM_POLL_MS;
      if (!stop && wait > 0)
        {
          struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
          nanosleep (&ts, NULL);
        }
    }
  return 0;
}

int
pr_container_events (const struct pr_global *g, const char *id, bool stats_once, long long interval_ms,
                     pr_event_fn fn, void *arg, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg = { 0 };
  bool stop = false;
  if (interval_ms < 1)
    return pr_error_invalid (err, "events: interval must be at least 1ms");
  if (load_running (g, id, &st, &cg, err) < 0)
    return -1;
  if (stats_once)
    return emit_stats (st, &cg, fn, arg, &stop, err);
  return stream (st, &cg, interval_ms, fn, arg, err);
}
