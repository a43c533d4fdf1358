/* pause.c - `proctor pause` / `proctor resume`: the cgroup freezer. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../cgroup/cgroup.h"
#include "../lifecycle/state.h"

#include <string.h>

static int
no_flags (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
freeze (const struct pr_command *cmd, struct pr_global *g, int argc, char **argv, bool on)
{
  pr_error *err = NULL;
  _cleanup_state_ struct pr_state *st = NULL;
  int first = pr_cmd_parse (cmd, argc, argv, no_flags, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (cmd, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  /* Shared, not exclusive: the freezer is all this writes (the kernel
   * serialises it), and an `exec --ignore-paused` waiting in the frozen
   * cgroup holds a shared lock until it is resumed. */
  if (pr_state_load (g->root, argv[first], false, &st, &err) < 0)
    return pr_cmd_fail (err);
  const char *status = pr_state_status (st);
  if (strcmp (status, on ? "running" : "paused") != 0)
    {
      pr_error_set (&err, 0, "container %s is not %s: %s", st->id, on ? "running" : "paused", status);
      return pr_cmd_fail (err);
    }
  if (pr_cgroup_freeze (st->cgroup_path, on, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
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
