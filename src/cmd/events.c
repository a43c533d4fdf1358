/* events.c - `proctor events`: container events and statistics.  Stats
 * need the cgroup resources work; until then this refuses clearly. */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>

static int
ignore (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
run_events (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  int first = pr_cmd_parse (&pr_cmd_events, argc, argv, ignore, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0)
    return pr_cmd_fail (err);
  pr_error_set (&err, ENOTSUP, "events: container statistics are not implemented yet");
  return pr_cmd_fail (err);
}

static const struct pr_opt opts[] = {
  { "interval", required_argument, 'i', "DURATION", "interval between stats (default 5s)" },
  { "stats", no_argument, 's', NULL, "print the container's stats once and exit" },
  { NULL },
};

const struct pr_command pr_cmd_events = {
  "events", "[command options] <container-id>", "display container events such as OOM notifications and stats", opts, run_events,
};
