/* common.c - option parsing and help shared by every command. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Keys that are letters double as one-letter flags (-d, -t ...). */
static bool
is_short (int key)
{
  return (key >= 'a' && key <= 'z') || (key >= 'A' && key <= 'Z');
}

int
pr_cmd_parse (const struct pr_command *cmd, int argc, char **argv,
              int (*handle) (int key, const char *arg, void *data, pr_error **err), void *data, pr_error **err)
{
  size_t n = 0;
  while (cmd->opts && cmd->opts[n].name)
    n++;
  struct option *lo = xmalloc0 ((n + 2) * sizeof *lo);
  char shortopts[128] = "+:h";
  size_t sl = strlen (shortopts);
  for (size_t i = 0; i < n; i++)
    {
      lo[i].name = cmd->opts[i].name;
      lo[i].has_arg = cmd->opts[i].has_arg;
      lo[i].val = cmd->opts[i].key;
      int k = cmd->opts[i].key;
      if (is_short (k) && sl < sizeof shortopts - 3)
        {
          shortopts[sl++] = (char) k;
          if (cmd->opts[i].has_arg == required_argument)
            shortopts[sl++] = ':';
          shortopts[sl] = '\0';
        }
    }
  lo[n].name = "help";
  lo[n].val = 'h';
  optind = 0;
  opterr = 0;
  int c, ret = 0;
  while ((c = getopt_long_only (argc, argv, shortopts, lo, NULL)) != -1)
    {
      if (c == 'h')
        {
          pr_cmd_help (cmd);
          ret = -2;
          break;
        }
      if (c == '?' || c == ':')
        {
          const char *bad = argv[optind - 1] ? argv[optind - 1] : "?";
          pr_error_invalid (err, "%s: %s `%s`", cmd->name, c == ':' ? "missing value for flag" : "unknown flag", bad);
          ret = -1;
          break;
        }
      if (handle (c, optarg, data, err) < 0)
        {
          ret = -1;
          break;
        }
    }
  free (lo);
  return ret < 0 ? ret : optind;
}

void
pr_cmd_help (const struct pr_command *cmd)
{
  printf ("NAME:\n   proctor %s - %s\n\nUSAGE:\n   proctor %s %s\n", cmd->name, cmd->summary, cmd->name, cmd->usage);
  if (cmd->opts && cmd->opts[0].name)
    printf ("\nOPTIONS:\n");
  for (size_t i = 0; cmd->opts && cmd->opts[i].name; i++)
    {
      const struct pr_opt *o = &cmd->opts[i];
      char left[96];
      int k = o->key;
      if (is_short (k))
        snprintf (left, sizeof left, "--%s%s%s, -%c", o->name, o->arg ? " " : "", o->arg ? o->arg : "", k);
      else
        snprintf (left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
      printf ("   %-36s %s\n", left, o->help);
    }
}

int
pr_cmd_fail (pr_error *err)
{
  pr_log_fatal_error (err);
  pr_error_free (&err);
  return 1;
}

int
pr_cmd_need_args (const struct pr_command *cmd, int argc, int first, int min, int max, pr_error **err)
{
  int n = argc - first;
  if (n < min || (max >= 0 && n > max))
    {
      if (min == max)
        return pr_error_invalid (err, "\"%s\" requires exactly %d argument(s)", cmd->name, min);
      return pr_error_invalid (err, "\"%s\" requires at least %d argument(s)", cmd->name, min);
    }
  return 0;
}
