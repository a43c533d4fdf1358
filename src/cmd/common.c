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

/* One getopt pass over sub[1..]: sub[0] is a placeholder (getopt skips
 * it), the stretch of flags runs until the first operand or "--".  Returns
 * the index in sub where it stopped, -1 on a bad flag, -2 after help. */
static int
parse_flags (const struct pr_command *cmd, int argc, char **sub, const char *shortopts, const struct option *lo,
             int (*handle) (int key, const char *arg, void *data, pr_error **err), void *data, pr_error **err)
{
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long_only (argc, sub, shortopts, lo, NULL)) != -1)
    {
      if (c == 'h')
        {
          pr_cmd_help (cmd);
          return -2;
        }
      if (c == '?' || c == ':')
        {
          const char *bad = sub[optind - 1] ? sub[optind - 1] : "?";
          return pr_error_invalid (err, "%s: %s `%s`", cmd->name, c == ':' ? "missing value for flag" : "unknown flag",
                                   bad);
        }
      if (handle (c, optarg, data, err) < 0)
        return -1;
    }
  return optind;
}

/* Moves the operands found between flags (ops[0..n-1], ascending indexes
 * below stop) to just before argv[stop], keeping the order of both, and
 * returns the index of the first of them. */
static int
gather_operands (char **argv, int stop, const int *ops, int n)
{
  char **keep = xmalloc0 ((size_t) (stop + 1) * sizeof *keep);
  int k = 0, o = 0;

  for (int i = 1; i < stop; i++)
    {
      if (o < n && ops[o] == i)
        {
          o++;
          continue;
        }
      keep[k++] = argv[i];
    }
  for (o = 0; o < n; o++)
    keep[k++] = argv[ops[o]];
  memcpy (argv + 1, keep, (size_t) k * sizeof *keep);
  free (keep);
  return stop - n;
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

  /* Flags may follow operands, as runc accepts (`update ID --cpu-period
   * N`): each stretch of flags is parsed in order ("+" mode, so getopt
   * never reorders argv itself) and the operands between them are moved
   * together afterwards.  A command whose operands are followed by
   * arguments of their own (exec's command, ps's options) stops looking
   * for flags after max_operands operands; "--" always ends the flags. */
  int *ops = xmalloc0 ((size_t) argc * sizeof *ops);
  int n_ops = 0, base = 0, stop;
  for (;;)
    {
      int r = parse_flags (cmd, argc - base, argv + base, shortopts, lo, handle, data, err);
      if (r < 0)
        {
          free (ops);
          free (lo);
          return r;
        }
      stop = base + r;
      if (stop >= argc || (strcmp (argv[stop - 1], "--") == 0 && stop - 1 > base))
        break;
      if (cmd->max_operands > 0 && n_ops + 1 >= cmd->max_operands)
        break;
      ops[n_ops++] = stop;
      base = stop;
    }
  int first = gather_operands (argv, stop, ops, n_ops);
  free (ops);
  free (lo);
  return first;
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
