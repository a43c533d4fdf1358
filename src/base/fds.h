/* fds.h - which file descriptors above stdio the runtime's caller passed
 * in.  --preserve-fds N and LISTEN_FDS name fds by number (3 .. 3+N-1);
 * only those the caller actually left open may reach the container.  A
 * number the caller left free can be taken by one of the runtime's own
 * fds (the state directory, exec.fifo), and handing that on would give
 * the container a host directory to escape through (the CVE-2024-21626
 * class).  So main() takes this snapshot before it opens anything. */
#ifndef PROCTOR_FDS_H
#define PROCTOR_FDS_H

#include <stdbool.h>
#include <stdint.h>

/* fds 3 .. 3 + PR_CALLER_FDS_MAX - 1; a caller fd above that is never
 * preserved. */
#define PR_CALLER_FDS_MAX 4096

struct pr_caller_fds
{
  uint64_t bits[PR_CALLER_FDS_MAX / 64]; /* bit i: fd 3 + i was open */
};

/* Records in *out which fds from 3 up were open (listing /proc/self/fd;
 * the listing's own fd is not counted).  Call it before the process opens
 * anything.  Returns 0, or -1 with errno when /proc/self/fd cannot be read
 * (then *out is empty: nothing will be preserved). */
int pr_caller_fds_snapshot (struct pr_caller_fds *out);

/* True when fd was open in the snapshot s (NULL: none was). */
bool pr_caller_fd_passed (const struct pr_caller_fds *s, int fd);

#endif
