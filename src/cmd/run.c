/* run.c - `proctor run`: create + start, then wait and delete (runc run). */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <string.h>

int pr_create_opt_handle (int key, const char *arg, void *data, pr_error **err);

enum { OPT_DETACH = 'd', OPT_KEEP = 2000 };

struct run_opts
{
  struct pr_create_opts c;
  bool detach;
  bool keep;
};

static const struct pr_opt opts[] = {
  { "bundle", required_argument, 'b', "DIR", "path to the root of the bundle directory (default: current dir)" },
  { "pid-file", required_argument, 1001, "FILE", "file to write the container process id to" },
  { "console-socket", required_argument, 1002, "PATH", "unix socket that receives the pty master (SCM_RIGHTS)" },
  { "no-pivot", no_argument, 1003, NULL, "do not use pivot_root to jail the process inside the rootfs" },
  { "no-new-keyring", no_argument, 1004, NULL, "do not create a new session keyring" },
  { "preserve-fds", required_argument, 1005, "N", "pass N additional file descriptors (from 3) to the container" },
  { "config", required_argument, 1006, "FILE", "read the config from FILE instead of BUNDLE/config.json (crun)" },
  { "no-subreaper", no_argument, 1007, NULL, "accepted for runc compatibility; has no effect" },
  { "detach", no_argument, OPT_DETACH, NULL, "detach from the container's process" },
  { "keep", no_argument, OPT_KEEP, NULL, "do not delete the container after it exits" },
  { NULL },
};

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  struct run_opts *r = data;
  if (key == OPT_DETACH)
    r->detach = true;
  else if (key == OPT_KEEP)
    r->keep = true;
  else
    return pr_create_opt_handle (key, arg, &r->c, err);
  return 0;
}

static int
run_run (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct run_opts r = { .c = { .bundle = "." } };
  int first = pr_cmd_parse (&pr_cmd_run, argc, argv, handle, &r, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_run, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  r.c.id = argv[first];
  int code = 0;
  pr_debug ("run: container `%s` from bundle `%s`%s", r.c.id, r.c.bundle, r.detach ? " (detached)" : "");
  if (pr_container_run (g, &r.c, r.detach, r.keep, &code, &err) < 0)
    return pr_cmd_fail (err);
  if (r.detach)
    pr_debug ("run: container `%s` started", r.c.id);
  else
    pr_debug ("run: container `%s` exited with status %d", r.c.id, code);
  return code;
}

const struct pr_command pr_cmd_run = {
  "run", "[command options] <container-id>", "create and run a container", opts, run_run,
};
