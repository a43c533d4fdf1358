/* fds.c - the snapshot of the caller's file descriptors (see fds.h). */
#define _GNU_SOURCE
#include "fds.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

int
pr_caller_fds_snapshot (struct pr_caller_fds *out)
{
  memset (out, 0, sizeof *out);
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return -1;
  int self = dirfd (d);
  struct dirent *de;
  while ((de = readdir (d)))
    {
      char *end;
      long fd = strtol (de->d_name, &end, 10);
      if (*end != '\0' || fd < 3 || fd == self || fd >= 3 + PR_CALLER_FDS_MAX)
        continue;
      out->bits[(fd - 3) / 64] |= UINT64_C (1) << ((fd - 3) % 64);
    }
  closedir (d);
  return 0;
}

bool
pr_caller_fd_passed (const struct pr_caller_fds *s, int fd)
{
  if (s == NULL || fd < 3 || fd >= 3 + PR_CALLER_FDS_MAX)
    return false;
  return (s->bits[(fd - 3) / 64] >> ((fd - 3) % 64)) & 1;
}
