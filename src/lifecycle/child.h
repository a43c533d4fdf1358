/* child.h - the link between the runtime and the child it forks to set a
 * process up, shared by create (stage 1) and exec (the joiner): the
 * id-map handshake over the sync pair (sync.h) and the child's last step,
 * clone-and-report-pid.  Issue 14 item 3; the fds themselves (sync pair,
 * console) still live in each side's context. */
#ifndef PROCTOR_LIFECYCLE_CHILD_H
#define PROCTOR_LIFECYCLE_CHILD_H

#include <sys/types.h>

#include "../base/error.h"

/* The fds between the runtime and the child: the sync pair (sync.h;
 * sync_parent is the runtime's end, sync_child the child's) and the
 * console (console_fd: the container's end of the console socket or pty,
 * local_console: the runtime's end when it proxies its own tty).  -1:
 * none. */
struct pr_child_link
{
  int console_fd;
  int local_console;
  int sync_parent;
  int sync_child;
};

#define PR_CHILD_LINK_INIT { .console_fd = -1, .local_console = -1, .sync_parent = -1, .sync_child = -1 }

/* Closes the link's open fds and sets them to -1. */
void pr_child_link_close (struct pr_child_link *l);

/* The child's first step, right after the fork: closes the runtime's ends
 * (sync_parent, local_console) and waits for the runtime's PR_SYNC_GO
 * (sent once the child is in the container's cgroup).  Exits 1 without a
 * message when the runtime went away. */
void pr_child_link_enter (struct pr_child_link *l);

/* The child's half of the id-map handshake, right after it unshared a
 * user namespace: tells the runtime (PR_SYNC_USERNS_READY) and waits
 * until the runtime has written the maps (PR_SYNC_MAPS_DONE).  sync_fd:
 * the child's end of the sync pair.  Errors: those of pr_sync_send and
 * pr_sync_expect (the runtime went away or sent something else). */
int pr_child_userns_ready (int sync_fd, pr_error **err);

/* The runtime's half of it: waits for the child's PR_SYNC_USERNS_READY
 * (who: the child's name in messages), calls write_maps (arg, err) to
 * write /proc/PID/{uid,gid}_map, then sends PR_SYNC_MAPS_DONE.  Errors:
 * those of pr_sync_expect, write_maps, pr_sync_send. */
int pr_child_write_maps (int sync_fd, const char *who, int (*write_maps) (void *arg, pr_error **err), void *arg,
                         pr_error **err);

/* The child's last step: clones the process that will run (CLONE_PARENT,
 * pr_clone_parent, so that it is the runtime's child) and returns 0 in it.
 * In the child itself it never returns: it sends the new pid
 * (PR_SYNC_PID) and exits 0; when the clone fails it sends the error
 * "clone WHAT: ..." (PR_SYNC_ERROR) and exits 1. */
pid_t pr_child_clone_and_report (int sync_fd, const char *what);

#endif
