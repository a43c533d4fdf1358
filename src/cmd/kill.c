/* kill.c - `proctor kill`: runtime-spec "kill" operation, runc's --all. */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <signal.h>

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  *(bool *) data = true;
  return 0;
}

static int
run_kill (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  bool all = false;
  int first = pr_cmd_parse (&pr_cmd_kill, argc, argv, handle, &all, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_kill, argc, first, 1, 2, &err) < 0)
    return pr_cmd_fail (err);
  int sig = pr_parse_signal (first + 1 < argc ? argv[first + 1] : "SIGTERM");
  if (sig < 0)
    {
      pr_error_invalid (&err, "unknown signal `%s`", argv[first + 1]);
      return pr_cmd_fail (err);
    }
  if (pr_container_kill (g, argv[first], sig, all, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

static const struct pr_opt opts[] = {
  { "all", no_argument, 'a', NULL, "send the signal to every process of the container's cgroup" },
  { NULL },
};

const struct pr_command pr_cmd_kill = {
  "kill", "[command options] <container-id> [signal]", "send a signal (default SIGTERM) to the container's init process", opts, run_kill,
};
