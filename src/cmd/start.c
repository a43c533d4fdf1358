/* start.c - `proctor start`: runtime-spec "start" operation. */
#define _GNU_SOURCE
#include "cmd.h"

static int
no_flags (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
run_start (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  int first = pr_cmd_parse (&pr_cmd_start, argc, argv, no_flags, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_start, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  if (pr_container_start (g, argv[first], &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

static const struct pr_opt opts[] = { { NULL } };

const struct pr_command pr_cmd_start = {
  "start", "<container-id>", "execute the user process of a created container", opts, run_start,
};
