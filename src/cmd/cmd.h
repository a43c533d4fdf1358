/* cmd.h - the CLI commands.  Each command parses its own flags (runc's
 * spellings; Go-style "-flag", "--flag", "--flag=value" all accepted) and
 * calls the lifecycle (src/lifecycle); it returns the process exit status. */
#ifndef PROCTOR_CMD_H
#define PROCTOR_CMD_H

#include <getopt.h>

#include "../base/error.h"
#include "../lifecycle/container.h"

struct pr_opt
{
  const char *name;  /* long name, without dashes */
  int has_arg;       /* no_argument / required_argument / optional_argument */
  int key;           /* returned to the handler; single letters double as -X */
  const char *arg;   /* argument name in help, or NULL */
  const char *help;  /* one line */
};

struct pr_command
{
  const char *name;
  const char *usage;       /* "[command options] <container-id>" */
  const char *summary;     /* one line */
  const struct pr_opt *opts; /* terminated by {NULL} */
  int (*run) (struct pr_global *g, int argc, char **argv);
  /* 0: flags may stand anywhere among the operands (runc's `update ID
   * --cpu-period N`).  N > 0: the Nth operand starts arguments of their
   * own (exec's command, ps's options) and flag parsing stops there. */
  int max_operands;
};

/* Parses argv (argv[0] is the command name) with opts, calling
 * handle(key, optarg, data) for each in order.  Flags may come before,
 * between and after the operands (up to cmd->max_operands, see there, and
 * never after "--"); argv is reordered so that the operands follow the
 * flags.  Returns the index of the first operand, or -1 with a usage error
 * (EINVAL) in err.  "--help"/"-h" anywhere among the flags prints help and
 * returns -2. */
int pr_cmd_parse (const struct pr_command *cmd, int argc, char **argv,
                  int (*handle) (int key, const char *arg, void *data, pr_error **err), void *data,
                  pr_error **err);

void pr_cmd_help (const struct pr_command *cmd);

/* Reports err (log + stderr) and returns exit status 1. */
int pr_cmd_fail (pr_error *err);

/* Checks that exactly/at least n operands remain. */
int pr_cmd_need_args (const struct pr_command *cmd, int argc, int first, int min, int max, pr_error **err);

extern const struct pr_command pr_cmd_create, pr_cmd_start, pr_cmd_run, pr_cmd_state, pr_cmd_kill,
    pr_cmd_delete, pr_cmd_list, pr_cmd_ps, pr_cmd_exec, pr_cmd_features, pr_cmd_spec, pr_cmd_pause,
    pr_cmd_resume, pr_cmd_update, pr_cmd_events, pr_cmd_rollout;

#endif
