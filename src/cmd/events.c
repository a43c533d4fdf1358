/* events.c - `proctor events`: container statistics and OOM events as
 * runc prints them, one JSON object per line:
 *   {"type":"stats","id":ID,"data":{...types.Stats...}}
 *   {"type":"oom","id":ID}
 * --stats prints one stats object and exits; otherwise stats are printed
 * every --interval (default 5s) and OOM kills as they are seen (the cgroup's
 * oom_kill counter, polled), until the container stops: the stream is
 * pr_container_events (lifecycle/ops.h); this file parses the flags and
 * prints.
 * Source: runc events(8); runc types/events.go. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../lifecycle/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

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

static int
print_event (const char *type, const char *id, const char *data_json, void *arg)
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
  return 0;
}

static int
run_events (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct events_opts o = { .interval_ms = 5000 };
  int first = pr_cmd_parse (&pr_cmd_events, argc, argv, handle, &o, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_events, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  if (pr_container_events (g, argv[first], o.stats, o.interval_ms, print_event, NULL, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

static const struct pr_opt opts[] = {
  { "interval", required_argument, 'i', "DURATION", "interval between stats (default 5s)" },
  { "stats", no_argument, 's', NULL, "print the container's stats once and exit" },
  { NULL },
};

const struct pr_command pr_cmd_events = {
  "events", "[command options] <container-id>", "display container events such as OOM notifications and stats", opts, run_events,
};
