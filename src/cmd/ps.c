/* ps.c - `proctor ps`: processes of a container (pr_container_ps,
 * lifecycle/ops.h), runc's output: `--format json` prints the pid array,
 * table mode runs ps(1) on the host and keeps the header plus the
 * container's rows. */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/util.h"
#include "../lifecycle/ops.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  *(const char **) data = arg;
  return 0;
}

static bool
has_pid (const pid_t *pids, size_t n, pid_t p)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == p)
      return true;
  return false;
}

/* Runs the host's ps with the caller's arguments and prints the header and
 * the lines whose PID column belongs to the container. */
static int
print_table (char **psargs, const pid_t *pids, size_t n, pr_error **err)
{
  _cleanup_free_ char *cmd = xstrdup ("ps");
  bool any = false;
  for (size_t i = 0; psargs && psargs[i]; i++)
    {
      char *next = xasprintf ("%s '%s'", cmd, psargs[i]);
      free (cmd);
      cmd = next;
      any = true;
    }
  if (!any)
    {
      free (cmd);
      cmd = xstrdup ("ps -ef");
    }
  FILE *f = popen (cmd, "r");
  if (f == NULL)
    return pr_error_set (err, errno, "run `%s`", cmd);
  char line[4096];
  int pid_col = -1, lineno = 0;
  while (fgets (line, sizeof line, f))
    {
      if (lineno++ == 0)
        {
          char copy[4096];
          snprintf (copy, sizeof copy, "%s", line);
          int col = 0;
          for (char *save = NULL, *t = strtok_r (copy, " \t\n", &save); t; t = strtok_r (NULL, " \t\n", &save), col++)
            if (strcmp (t, "PID") == 0)
              pid_col = col;
          fputs (line, stdout);
          continue;
        }
      char copy[4096];
      snprintf (copy, sizeof copy, "%s", line);
      int col = 0;
      for (char *save = NULL, *t = strtok_r (copy, " \t\n", &save); t; t = strtok_r (NULL, " \t\n", &save), col++)
        if (col == pid_col && has_pid (pids, n, atoi (t)))
          fputs (line, stdout);
    }
  int st = pclose (f);
  if (pid_col < 0)
    return pr_error_invalid (err, "couldn't find PID field in ps output");
  return st == 0 ? 0 : pr_error_set (err, 0, "`%s` failed", cmd);
}

static int
run_ps (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  const char *format = "table";
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  int first = pr_cmd_parse (&pr_cmd_ps, argc, argv, handle, &format, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_ps, argc, first, 1, -1, &err) < 0)
    return pr_cmd_fail (err);
  if (pr_container_ps (g, argv[first], &pids, &n, &err) < 0)
    return pr_cmd_fail (err);
  if (strcmp (format, "json") == 0)
    {
      printf ("[");
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", pids[i]);
      printf ("]\n");
      return 0;
    }
  if (strcmp (format, "table") != 0)
    {
      pr_error_invalid (&err, "invalid format option `%s`: expected `table` or `json`", format);
      return pr_cmd_fail (err);
    }
  fflush (stdout);
  if (print_table (argv + first + 1, pids, n, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

static const struct pr_opt opts[] = {
  { "format", required_argument, 'f', "table|json", "select one of: table or json (default: table)" },
  { NULL },
};

const struct pr_command pr_cmd_ps = {
  "ps", "[command options] <container-id> [ps options]", "display the processes running inside a container", opts, run_ps, 1,
};
