/* events.c - `proctor events`: container statistics and OOM events as
 * runc prints them, one JSON object per line:
 *   {"type":"stats","id":ID,"data":{...types.Stats...}}
 *   {"type":"oom","id":ID}
 * --stats prints one stats object and exits; otherwise stats are printed
 * every --interval (default 5s) and OOM kills as they are seen (the cgroup's
 * oom_kill counter, polled), until the container stops.
 * Source: runc events(8); runc types/events.go. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../cgroup/cgroup.h"
#include "../lifecycle/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#define OOM_POLL_MS 200

struct events_opts
{
  bool stats;
  long long interval_ms;
};

/* Go durations as runc takes them: "5s", "500ms", "1m", "1m30s", "2h",
 * "100us"; a bare number is seconds. */
static int
parse_duration (const char *s, long long *ms, pr_error **err)
{
  double total = 0;
  const char *p = s;
  if (*p == '\0')
    return pr_error_invalid (err, "events: invalid --interval `%s`", s);
  while (*p)
    {
      char *end;
      double v = strtod (p, &end);
      if (end == p || v < 0)
        return pr_error_invalid (err, "events: invalid --interval `%s`", s);
      p = end;
      double unit = 1000;
      if (strncmp (p, "ms", 2) == 0)
        unit = 1, p += 2;
      else if (strncmp (p, "us", 2) == 0 || strncmp (p, "µs", 3) == 0)
        unit = 0.001, p += p[0] == 'u' ? 2 : 3;
      else if (strncmp (p, "ns", 2) == 0)
        unit = 0.000001, p += 2;
      else if (*p == 's')
        p++;
      else if (*p == 'm')
        unit = 60000, p++;
      else if (*p == 'h')
        unit = 3600000, p++;
      else if (*p != '\0')
        return pr_error_invalid (err, "events: invalid --interval `%s`", s);
      total += v * unit;
    }
  if (total < 1)
    return pr_error_invalid (err, "events: --interval `%s` must be at least 1ms", s);
  *ms = (long long) total;
  return 0;
}

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  struct events_opts *o = data;
  if (key == 's')
    o->stats = true;
  else if (key == 'i')
    return parse_duration (arg, &o->interval_ms, err);
  return 0;
}

static void
print_event (const char *type, const char *id, const char *data_json)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  yajl_gen_string (g, (const unsigned char *) "type", 4);
  yajl_gen_string (g, (const unsigned char *) type, strlen (type));
  yajl_gen_string (g, (const unsigned char *) "id", 2);
  yajl_gen_string (g, (const unsigned char *) id, strlen (id));
  yajl_gen_map_close (g);
  _cleanup_free_ char *text = pr_json_gen_finish (g);
  /* data is already JSON text: splice it in before the closing brace */
  if (data_json)
    printf ("%.*s,\"data\":%s}\n", (int) strlen (text) - 1, text, data_json);
  else
    printf ("%s\n", text);
  fflush (stdout);
}

static int
print_stats (const struct pr_state *st, pr_error **err)
{
  _cleanup_free_ char *data = NULL;
  if (pr_cgroup_stats_json (st->cgroup_path, &data, err) < 0)
    return -1;
  print_event ("stats", st->id, data);
  return 0;
}

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

static int
stream (const struct pr_state *st, long long interval_ms, pr_error **err)
{
  uint64_t ooms = 0;
  _cleanup_error_ pr_error *e = NULL;
  bool watch_oom = pr_cgroup_oom_kills (st->cgroup_path, &ooms, &e) == 0;
  long long next_stats = now_ms ();
  while (!gone (st))
    {
      if (watch_oom)
        {
          uint64_t now_ooms = 0;
          _cleanup_error_ pr_error *oe = NULL;
          if (pr_cgroup_oom_kills (st->cgroup_path, &now_ooms, &oe) < 0)
            break; /* cgroup gone: the container is over */
          for (; ooms < now_ooms; ooms++)
            print_event ("oom", st->id, NULL);
        }
      if (now_ms () >= next_stats)
        {
          if (print_stats (st, err) < 0)
            return gone (st) ? 0 : -1;
          next_stats = now_ms () + interval_ms;
        }
      long long wait = next_stats - now_ms ();
      if (watch_oom && wait > OOM_POLL_MS)
        wait = OOM_POLL_MS;
      if (wait > 0)
        {
          struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
          nanosleep (&ts, NULL);
        }
    }
  return 0;
}

static int
run_events (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct events_opts o = { .interval_ms = 5000 };
  _cleanup_state_ struct pr_state *st = NULL;
  int first = pr_cmd_parse (&pr_cmd_events, argc, argv, handle, &o, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_events, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  /* shared lock only while reading state: events runs for a long time and
   * must not block delete */
  if (pr_state_load (g->root, argv[first], false, &st, &err) < 0)
    return pr_cmd_fail (err);
  if (st->state_dirfd >= 0)
    {
      close (st->state_dirfd);
      st->state_dirfd = -1;
    }
  if (gone (st) || st->cgroup_path == NULL)
    {
      pr_error_set (&err, 0, "container %s is not running", st->id);
      return pr_cmd_fail (err);
    }
  if (o.stats)
    return print_stats (st, &err) < 0 ? pr_cmd_fail (err) : 0;
  return stream (st, o.interval_ms, &err) < 0 ? pr_cmd_fail (err) : 0;
}

static const struct pr_opt opts[] = {
  { "interval", required_argument, 'i', "DURATION", "interval between stats (default 5s)" },
  { "stats", no_argument, 's', NULL, "print the container's stats once and exit" },
  { NULL },
};

const struct pr_command pr_cmd_events = {
  "events", "[command options] <container-id>", "display container events such as OOM notifications and stats", opts, run_events,
};
