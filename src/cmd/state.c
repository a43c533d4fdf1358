/* state.c - `proctor state`: runtime-spec "state" operation. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/util.h"
#include "../lifecycle/state.h"

#include <stdio.h>

static int
no_flags (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
run_state (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  _cleanup_state_ struct pr_state *st = NULL;
  int first = pr_cmd_parse (&pr_cmd_state, argc, argv, no_flags, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_state, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  if (pr_state_load (g->root, argv[first], false, &st, &err) < 0)
    return pr_cmd_fail (err);
  _cleanup_free_ char *json = pr_state_to_json (st, pr_state_status (st));
  printf ("%s\n", json);
  return 0;
}

static const struct pr_opt opts[] = { { NULL } };

const struct pr_command pr_cmd_state = {
  "state", "<container-id>", "output the state of a container", opts, run_state,
};
