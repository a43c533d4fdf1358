/* child.c - the runtime-child link shared by create and exec (child.h). */
#define _GNU_SOURCE
#include "child.h"
#include "sync.h"
#include "../linux/namespace.h"

#include <errno.h>
#include <unistd.h>

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

void
pr_child_link_close (struct pr_child_link *l)
{
  close_fd (&l->console_fd);
  close_fd (&l->local_console);
  close_fd (&l->sync_parent);
  close_fd (&l->sync_child);
}

void
pr_child_link_enter (struct pr_child_link *l)
{
  close_fd (&l->sync_parent);
  close_fd (&l->local_console);
  pr_error *err = NULL;
  if (pr_sync_expect (l->sync_child, PR_SYNC_GO, "runtime", NULL, NULL, &err) < 0)
    _exit (1);
}

int
pr_child_userns_ready (int sync_fd, pr_error **err)
{
  if (pr_sync_send (sync_fd, PR_SYNC_USERNS_READY, 0, NULL, err) < 0)
    return -1;
  return pr_sync_expect (sync_fd, PR_SYNC_MAPS_DONE, "runtime", NULL, NULL, err);
}

int
pr_child_write_maps (int sync_fd, const char *who, int (*write_maps) (void *arg, pr_error **err), void *arg,
                     pr_error **err)
{
  if (pr_sync_expect (sync_fd, PR_SYNC_USERNS_READY, who, NULL, NULL, err) < 0)
    return -1;
  if (write_maps (arg, err) < 0)
    return -1;
  return pr_sync_send (sync_fd, PR_SYNC_MAPS_DONE, 0, NULL, err);
}

pid_t
pr_child_clone_and_report (int sync_fd, const char *what)
{
  pr_error *err = NULL;
  pid_t pid = pr_clone_parent ();
  if (pid < 0)
    {
      pr_error_set (&err, errno, "clone %s", what);
      pr_sync_send_error (sync_fd, err);
      _exit (1);
    }
  if (pid == 0)
    return 0;
  pr_sync_send (sync_fd, PR_SYNC_PID, pid, NULL, NULL);
  _exit (0);
}
