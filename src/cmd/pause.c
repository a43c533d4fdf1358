/* pause.c - `proctor pause` / `proctor resume`: the cgroup freezer
 * (pr_container_pause / pr_container_resume, lifecycle/ops.h). */
#define _GNU_SOURCE
#include "cmd.h"
#include "../lifecycle/ops.h"

static int
no_flags (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
freeze (const struct pr_command *cmd, struct pr_global *g, int argc, char **argv, bool on)
{
  pr_error *err = NULL;
  int first = pr_cmd_parse (cmd, argc, argv, no_flags, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (cmd, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  int r = on ? pr_container_pause (g, argv[first], &err) : pr_container_resume (g, argv[first], &err);
  return r < 0 ? pr_cmd_fail (err) : 0;
}

static int
run_pause (struct pr_global *g, int argc, char **argv)
{
  return freeze (&pr_cmd_pause, g, argc, argv, true);
}

static int
run_resume (struct pr_global *g, int argc, char **argv)
{
  return freeze (&pr_cmd_resume, g, argc, argv, false);
}

static const struct pr_opt opts[] = { { NULL } };

const struct pr_command pr_cmd_pause = {
  "pause", "<container-id>", "suspend all processes of the container (cgroup freezer)", opts, run_pause,
};
const struct pr_command pr_cmd_resume = {
  "resume", "<container-id>", "resume all processes of a paused container", opts, run_resume,
};
