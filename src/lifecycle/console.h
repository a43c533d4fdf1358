/* console.h - the container's terminal (runtime-spec config.md
 * "process.terminal", runc's --console-socket protocol).
 *
 * The container side opens /dev/ptmx inside the container (so the pts
 * belongs to the container's devpts), sends the master fd to the console
 * socket with SCM_RIGHTS (runc sends a 1-byte-or-more name payload; the
 * receiver ignores it), makes the slave its controlling terminal and its
 * stdin/stdout/stderr, and applies process.consoleSize. */
#ifndef PROCTOR_CONSOLE_H
#define PROCTOR_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../base/error.h"

/* Connects to the AF_UNIX stream socket at path, returning the fd in *fd_out
 * (O_CLOEXEC).  Errors: socket/connect errno with the path. */
int pr_console_socket_connect (const char *path, int *fd_out, pr_error **err);

/* In the container's init, after pr_console_setup_slave: bind-mounts the
 * pty slave slave_fd onto /dev/console (runtime-spec config-linux.md
 * "Default Devices": /dev/console is the pty when process.terminal is
 * set).  The source is the fd (open_tree(2) AT_EMPTY_PATH, move_mount(2)),
 * the target an empty regular file created in /dev without following any
 * symlink or crossing a mount; an existing non-regular entry is removed
 * (CVE-2025-52565: a runtime that bound the path /dev/pts/N, or followed a
 * swapped /dev/console, could put a procfs file, writable, at
 * /dev/console or the pty over one).  Errors: EPERM when slave_fd is not
 * a devpts pty or /dev/console changes type while it is made; openat2
 * errno for /dev; unlink/open/open_tree/move_mount errno. */
int pr_console_mount_dev_console (int slave_fd, pr_error **err);

/* Container side, after pivot_root and setsid(), before the process's
 * identity is taken: opens a new pty from /dev/ptmx, gives the slave to
 * uid (the process user) and the image's "tty" group (its /etc/group;
 * devpts's gid when it has none or the gid is not mapped), as runc does,
 * sets the window size (rows, cols) if has_size, sends the master over
 * socket_fd, makes the slave the controlling terminal (TIOCSCTTY) and
 * dup2s it onto fds 0,1,2.  The master must be character 5:2 on devpts
 * (EPERM otherwise: a swapped /dev/ptmx).  Errors: open/ioctl/sendmsg
 * errno; fchown errno ("chown `/dev/pts/N` to uid U": EINVAL when uid is
 * not mapped); EPERM as said. */
int pr_console_setup_slave (int socket_fd, bool has_size, uint32_t rows, uint32_t cols, uid_t uid,
                            pr_error **err);

/* Runtime side, when a terminal is wanted but no --console-socket was
 * given (runc's `run -t` / `exec -t` in the foreground): returns a socketpair
 * end to pass to the container side as its console socket; after the
 * container sends the master, pr_console_proxy() relays between our
 * stdin/stdout and the master until the master hangs up, with our terminal in
 * raw mode and SIGWINCH applied to the pty; SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to forward_pid when > 0 (the
 * caller keeps them blocked). */
int pr_console_local_socket (int *runtime_end, int *container_end, pr_error **err);
int pr_console_receive_master (int runtime_end, int *master_out, pr_error **err);
int pr_console_proxy (int master_fd, pid_t forward_pid, pr_error **err);

#endif
