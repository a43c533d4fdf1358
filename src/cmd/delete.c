/* delete.c - `proctor delete`: runtime-spec "delete" operation. */
#define _GNU_SOURCE
#include "cmd.h"

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  *(bool *) data = true;
  return 0;
}

static int
run_delete (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  bool force = false;
  int first = pr_cmd_parse (&pr_cmd_delete, argc, argv, handle, &force, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_delete, argc, first, 1, -1, &err) < 0)
    return pr_cmd_fail (err);
  int rc = 0;
  for (int i = first; i < argc; i++)
    if (pr_container_delete (g, argv[i], force, &err) < 0)
      {
        rc = pr_cmd_fail (err);
        err = NULL;
      }
  return rc;
}

static const struct pr_opt opts[] = {
  { "force", no_argument, 'f', NULL, "kill the container first if it is still running" },
  { NULL },
};

const struct pr_command pr_cmd_delete = {
  "delete", "[command options] <container-id> [container-id...]", "delete a container and the resources it holds", opts, run_delete,
};
