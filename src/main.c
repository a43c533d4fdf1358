/* main.c - global flags (runc's spellings) and dispatch to a command. */
#define _GNU_SOURCE
#include "config.h"
#include "base/log.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "cgroup/manager.h"
#include "cmd/cmd.h"
#include "linux/exeguard.h"

#include <errno.h>
#include <getopt.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

extern char **environ;

static const struct pr_command *const commands[] = {
  &pr_cmd_create, &pr_cmd_start, &pr_cmd_run, &pr_cmd_state, &pr_cmd_kill, &pr_cmd_delete,
  &pr_cmd_list, &pr_cmd_ps, &pr_cmd_exec, &pr_cmd_features, &pr_cmd_spec, &pr_cmd_pause,
  &pr_cmd_resume, &pr_cmd_update, &pr_cmd_events, &pr_cmd_rollout, NULL,
};

enum { G_ROOT = 1, G_LOG, G_LOG_FORMAT, G_DEBUG, G_SYSTEMD_CGROUP, G_ROOTLESS, G_CGROUP_MANAGER, G_ROLLOUT_POLICY, G_VERSION, G_HELP };

static const struct option global_opts[] = {
  { "root", required_argument, NULL, G_ROOT },
  { "log", required_argument, NULL, G_LOG },
  { "log-format", required_argument, NULL, G_LOG_FORMAT },
  { "debug", no_argument, NULL, G_DEBUG },
  { "systemd-cgroup", no_argument, NULL, G_SYSTEMD_CGROUP },
  { "rootless", required_argument, NULL, G_ROOTLESS },
  { "cgroup-manager", required_argument, NULL, G_CGROUP_MANAGER },
  { "rollout-policy", required_argument, NULL, G_ROLLOUT_POLICY },
  { "version", no_argument, NULL, G_VERSION },
  { "help", no_argument, NULL, G_HELP },
  { NULL, 0, NULL, 0 },
};

static void
print_version (void)
{
  const struct scmp_version *v = seccomp_version ();
  printf ("proctor version %s\nspec: 1.2.0\n", PACKAGE_VERSION);
  if (v)
    printf ("libseccomp: %u.%u.%u\n", v->major, v->minor, v->micro);
}

static void
print_help (void)
{
  printf ("NAME:\n   proctor - an OCI container runtime with graded agent rollouts\n\n"
          "USAGE:\n   proctor [global options] command [command options] [arguments...]\n\n"
          "COMMANDS:\n");
  for (size_t i = 0; commands[i]; i++)
    printf ("   %-10s %s\n", commands[i]->name, commands[i]->summary);
  printf ("\nGLOBAL OPTIONS:\n"
          "   --root DIR                 root directory for container state (default: /run/proctor)\n"
          "   --log FILE                 log file (default: stderr)\n"
          "   --log-format text|json     log format (default: text)\n"
          "   --debug                    enable debug logging\n"
          "   --systemd-cgroup           treat linux.cgroupsPath as slice:prefix:name\n"
          "   --rootless true|false|auto accepted for runc compatibility\n"
          "   --cgroup-manager cgroupfs|systemd|disabled  crun's cgroup manager flag\n"
          "   --rollout-policy FILE      make every container a rollout under this policy\n"
          "   --version, -v              print the version\n"
          "   --help, -h                 show help\n");
}

/* Commands that enter a container run from a file no container can write
 * (CVE-2019-5736; linux/exeguard.h). */
static bool
enters_container (const char *cmd)
{
  return strcmp (cmd, "create") == 0 || strcmp (cmd, "run") == 0 || strcmp (cmd, "exec") == 0;
}

static int
parse_globals (int argc, char **argv, struct pr_global *g, int *first, pr_error **err)
{
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long_only (argc, argv, "+:vh", global_opts, NULL)) != -1)
    {
      switch (c)
        {
        case G_ROOT: g->root = optarg; break;
        case G_LOG: g->log = optarg; break;
        case G_LOG_FORMAT: g->log_format = optarg; break;
        case G_DEBUG: g->debug = true; break;
        case G_SYSTEMD_CGROUP: g->systemd_cgroup = true; break;
        case G_ROOTLESS: g->rootless = optarg; break;
        case G_ROLLOUT_POLICY: g->rollout_policy = optarg; break;
        case G_CGROUP_MANAGER:
          {
            /* validated here, chosen at create (cgroup/manager.h) */
            enum pr_cgroup_driver d;
            if (pr_cgroup_driver_choose (optarg, false, &d, err) < 0)
              return -1;
            g->cgroup_manager = optarg;
            /* kept for readers of the flag; the choice is the manager's */
            g->systemd_cgroup = g->systemd_cgroup || d == PR_CGROUP_DRIVER_SYSTEMD;
            break;
          }
        case 'v':
        case G_VERSION: print_version (); return 1;
        case 'h':
        case G_HELP: print_help (); return 1;
        case ':': return pr_error_invalid (err, "missing value for flag `%s`", argv[optind - 1]);
        default: return pr_error_invalid (err, "unknown global flag `%s`", argv[optind - 1]);
        }
    }
  *first = optind;
  return 0;
}

int
main (int argc, char **argv)
{
  struct pr_global g = { .root = "/run/proctor" };
  pr_error *err = NULL;
  int first = 0;

  int r = parse_globals (argc, argv, &g, &first, &err);
  if (r > 0)
    return 0;
  /* Only the commands that start a container process preserve fds, and
   * they must see the caller's fds before anything is opened (fds.h):
   * parse_globals opens nothing, pr_log_init opens the log. */
  if (r == 0 && first < argc && enters_container (argv[first]))
    pr_caller_fds_snapshot (&g.caller_fds);
  if (r == 0 && pr_log_init (g.log, g.log_format, g.debug, &err) < 0)
    r = -1;
  if (r < 0)
    {
      pr_log_fatal_error (err);
      return 1;
    }
  if (first >= argc)
    {
      print_help ();
      return 0;
    }
  const char *name = argv[first];
  /* runc's `help` command: the same text as --help. */
  if (strcmp (name, "help") == 0)
    {
      print_help ();
      return 0;
    }
  for (size_t i = 0; commands[i]; i++)
    {
      if (strcmp (commands[i]->name, name) != 0)
        continue;
      if (enters_container (name) && pr_exeguard_ensure_protected (argv, environ, &err) < 0)
        return pr_cmd_fail (err);
      /* One runtime call: its cgroup mounts stay as they are while it runs. */
      pr_cgroup_mounts_memo ();
      return commands[i]->run (&g, argc - first, argv + first);
    }
  pr_error_invalid (&err, "unknown command `%s`", name);
  return pr_cmd_fail (err);
}
