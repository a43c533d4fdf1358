/* exec.c - `proctor exec`: run a new process inside a container (runc). */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/util.h"
#include "../lifecycle/exec.h"
#include "../rollout/phase.h"

#include <errno.h>
#include <string.h>

enum { OPT_CONSOLE = 3001, OPT_CWD, OPT_PID_FILE, OPT_LABEL, OPT_APPARMOR, OPT_NNP, OPT_PRESERVE, OPT_CGROUP,
       OPT_IGNORE_PAUSED };

struct exec_cli
{
  struct pr_exec_opts o;
  char **env;
  char **caps;
  char **gids;
  char **args; /* the command, copied out of argv */
};

/* `proctor exec ID proctor-phase PHASE SECRET -- CMD...` (the rollout's
 * argv phase switch, src/rollout/phase.h): the secret is wiped from our
 * own argv memory once copied, so neither this process's
 * /proc/PID/cmdline nor that of the exec's child (which shows the same
 * memory until it calls execve, from inside the container's pid
 * namespace) holds it. */
static void
scrub_phase_secret (char **args)
{
  if (args[0] && strcmp (args[0], PR_PHASE_ARGV0) == 0 && args[1] && args[2])
    explicit_bzero (args[2], strlen (args[2]));
}

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  struct exec_cli *c = data;
  uint64_t n;
  switch (key)
    {
    case OPT_CONSOLE: c->o.console_socket = arg; break;
    case OPT_CWD: c->o.cwd = arg; break;
    case 'e': c->env = pr_strv_append (c->env, arg); break;
    case 't': c->o.tty = true; break;
    case 'u': c->o.user = arg; break;
    case 'g': c->gids = pr_strv_append (c->gids, arg); break;
    case 'p': c->o.process_path = arg; break;
    case 'd': c->o.detach = true; break;
    case OPT_PID_FILE: c->o.pid_file = arg; break;
    case OPT_LABEL: c->o.process_label = arg; break;
    case OPT_APPARMOR: c->o.apparmor = arg; break;
    case OPT_NNP: c->o.no_new_privs = true; break;
    case 'c': c->caps = pr_strv_append (c->caps, arg); break;
    case OPT_CGROUP: c->o.cgroup = arg; break;
    case OPT_IGNORE_PAUSED: c->o.ignore_paused = true; break;
    case OPT_PRESERVE:
      if (pr_parse_u64 (arg, &n) < 0 || n > 65535)
        return pr_error_invalid (err, "invalid --preserve-fds `%s`", arg);
      c->o.preserve_fds = (int) n;
      break;
    }
  return 0;
}

static int
run_exec (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct exec_cli c = { 0 };
  int first = pr_cmd_parse (&pr_cmd_exec, argc, argv, handle, &c, &err);
  int code = 0;
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_exec, argc, first, c.o.process_path ? 1 : 2, -1, &err) < 0)
    {
      code = pr_cmd_fail (err);
      goto out;
    }
  c.o.id = argv[first];
  c.args = pr_strv_dup (argv + first + 1);
  c.o.args = c.args;
  scrub_phase_secret (argv + first + 1);
  c.o.env = c.env;
  c.o.caps = c.caps;
  c.o.additional_gids = c.gids;
  if (pr_container_exec (g, &c.o, &code, &err) < 0)
    code = pr_cmd_fail (err);
out:
  pr_strv_free (c.args);
  pr_strv_free (c.env);
  pr_strv_free (c.caps);
  pr_strv_free (c.gids);
  return code;
}

static const struct pr_opt opts[] = {
  { "console-socket", required_argument, OPT_CONSOLE, "PATH", "unix socket that receives the pty master (SCM_RIGHTS)" },
  { "cwd", required_argument, OPT_CWD, "DIR", "current working directory in the container" },
  { "env", required_argument, 'e', "K=V", "set an environment variable (repeatable)" },
  { "tty", no_argument, 't', NULL, "allocate a pseudo-TTY" },
  { "user", required_argument, 'u', "UID[:GID]", "user id and group id to run as" },
  { "additional-gids", required_argument, 'g', "GID", "additional group id (repeatable)" },
  { "process", required_argument, 'p', "FILE", "path to a process.json (runtime-spec process object)" },
  { "detach", no_argument, 'd', NULL, "detach from the process once it runs" },
  { "pid-file", required_argument, OPT_PID_FILE, "FILE", "file to write the process id to" },
  { "process-label", required_argument, OPT_LABEL, "LABEL", "SELinux label for the process" },
  { "apparmor", required_argument, OPT_APPARMOR, "PROFILE", "AppArmor profile for the process" },
  { "no-new-privs", no_argument, OPT_NNP, NULL, "set no_new_privs for the process" },
  { "cap", required_argument, 'c', "CAP", "add a capability to every set (repeatable)" },
  { "preserve-fds", required_argument, OPT_PRESERVE, "N", "pass N additional file descriptors (from 3)" },
  { "cgroup", required_argument, OPT_CGROUP, "PATH", "run in an existing sub-cgroup of the container ([CTRL[,CTRL]:]SUB)" },
  { "ignore-paused", no_argument, OPT_IGNORE_PAUSED, NULL, "allow exec in a paused container (it starts once resumed)" },
  { NULL },
};

const struct pr_command pr_cmd_exec = {
  "exec", "[command options] <container-id> <command> [args...]", "execute a new process inside the container", opts, run_exec,
};
