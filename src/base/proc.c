/* proc.c - facts about a process from /proc/PID (see proc.h). */
#define _GNU_SOURCE
#include "proc.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

unsigned long long
pr_proc_start_time (pid_t pid)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/stat", pid);
  _cleanup_free_ char *buf = NULL;
  if (pid <= 0 || pr_read_file (path, &buf, NULL, NULL) < 0)
    return 0;
  /* comm (field 2) may contain spaces and parentheses: parse after the
   * last ')'.  Field 3 is the state; starttime is field 22. */
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  p += 2;
  if (*p == 'Z' || *p == 'X')
    return 0;
  for (int field = 3; field < 22 && p; field++)
    {
      p = strchr (p, ' ');
      if (p)
        p++;
    }
  return p ? strtoull (p, NULL, 10) : 0;
}
