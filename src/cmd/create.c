/* create.c - `proctor create`: runtime-spec "create" operation. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/util.h"

#include <errno.h>
#include <stdlib.h>

enum { OPT_BUNDLE = 'b', OPT_PID_FILE = 1001, OPT_CONSOLE_SOCKET, OPT_NO_PIVOT, OPT_NO_NEW_KEYRING,
       OPT_PRESERVE_FDS, OPT_CONFIG, OPT_NO_SUBREAPER };

/* Shared with run.c: the create flags. */
const struct pr_opt pr_create_opts_table[] = {
  { "bundle", required_argument, OPT_BUNDLE, "DIR", "path to the root of the bundle directory (default: current dir)" },
  { "pid-file", required_argument, OPT_PID_FILE, "FILE", "file to write the container process id to" },
  { "console-socket", required_argument, OPT_CONSOLE_SOCKET, "PATH", "unix socket that receives the pty master (SCM_RIGHTS)" },
  { "no-pivot", no_argument, OPT_NO_PIVOT, NULL, "do not use pivot_root to jail the process inside the rootfs" },
  { "no-new-keyring", no_argument, OPT_NO_NEW_KEYRING, NULL, "do not create a new session keyring" },
  { "preserve-fds", required_argument, OPT_PRESERVE_FDS, "N", "pass N additional file descriptors (from 3) to the container" },
  { "config", required_argument, OPT_CONFIG, "FILE", "read the config from FILE instead of BUNDLE/config.json (crun)" },
  { "no-subreaper", no_argument, OPT_NO_SUBREAPER, NULL, "accepted for runc compatibility; has no effect" },
  { NULL },
};

int
pr_create_opt_handle (int key, const char *arg, void *data, pr_error **err)
{
  struct pr_create_opts *o = data;
  uint64_t n;
  switch (key)
    {
    case OPT_BUNDLE: o->bundle = arg; return 0;
    case OPT_PID_FILE: o->pid_file = arg; return 0;
    case OPT_CONSOLE_SOCKET: o->console_socket = arg; return 0;
    case OPT_NO_PIVOT: o->no_pivot = true; return 0;
    case OPT_NO_NEW_KEYRING: o->no_new_keyring = true; return 0;
    case OPT_CONFIG: o->config_path = arg; return 0;
    case OPT_NO_SUBREAPER: return 0;
    case OPT_PRESERVE_FDS:
      if (pr_parse_u64 (arg, &n) < 0 || n > 65535)
        return pr_error_invalid (err, "invalid --preserve-fds `%s`", arg);
      o->preserve_fds = (int) n;
      return 0;
    }
  return pr_error_invalid (err, "unhandled flag");
}

static int
run_create (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct pr_create_opts o = { .bundle = "." };
  int first = pr_cmd_parse (&pr_cmd_create, argc, argv, pr_create_opt_handle, &o, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_create, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  o.id = argv[first];
  if (pr_container_create (g, &o, NULL, NULL, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

const struct pr_command pr_cmd_create = {
  "create", "[command options] <container-id>", "create a container", pr_create_opts_table, run_create,
};
