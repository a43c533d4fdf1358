/* update.c - `proctor update`: cgroup resource updates.  Resource limits
 * are not implemented yet (they land with the cgroup resources work), so
 * this refuses with a clear error rather than pretending to succeed. */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>

static int
ignore (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
run_update (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  int first = pr_cmd_parse (&pr_cmd_update, argc, argv, ignore, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0)
    return pr_cmd_fail (err);
  pr_error_set (&err, ENOTSUP, "update: cgroup resource updates are not implemented yet");
  return pr_cmd_fail (err);
}

static const struct pr_opt opts[] = {
  { "resources", required_argument, 'r', "FILE", "path to a linux.resources JSON file (- for stdin)" },
  { "memory", required_argument, 4001, "BYTES", "memory limit" },
  { "memory-swap", required_argument, 4002, "BYTES", "memory plus swap limit" },
  { "memory-reservation", required_argument, 4003, "BYTES", "memory soft limit" },
  { "cpu-shares", required_argument, 4004, "N", "CPU shares" },
  { "cpu-quota", required_argument, 4005, "USEC", "CPU CFS quota" },
  { "cpu-period", required_argument, 4006, "USEC", "CPU CFS period" },
  { "cpuset-cpus", required_argument, 4007, "LIST", "CPUs to use" },
  { "cpuset-mems", required_argument, 4008, "LIST", "memory nodes to use" },
  { "pids-limit", required_argument, 4009, "N", "maximum number of pids" },
  { "blkio-weight", required_argument, 4010, "N", "block IO weight" },
  { NULL },
};

const struct pr_command pr_cmd_update = {
  "update", "[command options] <container-id>", "update container resource constraints", opts, run_update,
};
