/* spec.c - `proctor spec`: writes a starting config.json (runc spec). */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/util.h"
#include "../config/spec.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

struct spec_opts
{
  const char *bundle;
  bool rootless;
};

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  struct spec_opts *o = data;
  if (key == 'b')
    o->bundle = arg;
  else
    o->rootless = true;
  return 0;
}

static int
run_spec (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct spec_opts o = { .bundle = "." };
  int first = pr_cmd_parse (&pr_cmd_spec, argc, argv, handle, &o, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_spec, argc, first, 0, 0, &err) < 0)
    return pr_cmd_fail (err);
  _cleanup_free_ char *path = xasprintf ("%s/config.json", o.bundle);
  if (access (path, F_OK) == 0)
    {
      pr_error_set (&err, EEXIST, "File %s exists. Remove it first", path);
      return pr_cmd_fail (err);
    }
  _cleanup_free_ char *json = pr_spec_default_json (o.rootless);
  if (pr_write_file_at (AT_FDCWD, path, json, strlen (json), 0666, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

static const struct pr_opt opts[] = {
  { "bundle", required_argument, 'b', "DIR", "path to the root of the bundle directory" },
  { "rootless", no_argument, 1, NULL, "generate a configuration for a rootless container" },
  { NULL },
};

const struct pr_command pr_cmd_spec = {
  "spec", "[command options]", "create a new specification file (config.json)", opts, run_spec,
};
