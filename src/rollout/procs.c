/* procs.c - the rollout's process plan (see procs.h): the container
 * process's host pid in the state directory, and the procfs of the outer
 * pid namespace that verifier and setup sessions mount at /proc, and
 * verifier.agent_processes (freeze or kill the agent's processes). */
#define _GNU_SOURCE
#include "procs.h"
#include "../base/proc.h"
#include "../base/syscall.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------ agent init state */

int
pr_procs_save_agent_init (int state_dirfd, pid_t outer, pid_t *inner_out, pr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/task/%d/children", outer, outer);
  _cleanup_free_ char *text = NULL;
  if (pr_read_file (path, &text, NULL, err) < 0)
    return -1;
  long a = 0, b = 0;
  int n = sscanf (text, "%ld %ld", &a, &b);
  if (n < 1 || a <= 0)
    return pr_error_set (err, ESRCH, "the outer init has no child (the container process exited)");
  if (n > 1)
    return pr_error_set (err, EIO, "the outer init has more than one child at create");
  unsigned long long start = pr_proc_start_time ((pid_t) a);
  _cleanup_free_ char *line = xasprintf ("%ld %llu\n", a, start);
  if (pr_write_file_at (state_dirfd, PR_PROCS_AGENT_INIT_FILE, line, strlen (line), 0600, err) < 0)
    return -1;
  *inner_out = (pid_t) a;
  return 0;
}

int
pr_procs_agent_init (int state_dirfd, pid_t *pid_out, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  *pid_out = 0;
  if (faccessat (state_dirfd, PR_PROCS_AGENT_INIT_FILE, F_OK, 0) < 0)
    return 0;
  if (pr_read_file_at (state_dirfd, PR_PROCS_AGENT_INIT_FILE, &text, NULL, err) < 0)
    return -1;
  long pid = 0;
  unsigned long long start = 0;
  if (sscanf (text, "%ld %llu", &pid, &start) != 2 || pid <= 0)
    return pr_error_set (err, EINVAL, "%s: cannot parse `%s`", PR_PROCS_AGENT_INIT_FILE, text);
  if (pr_proc_start_time ((pid_t) pid) != start)
    return pr_error_set (err, ESRCH, "the container's process is gone");
  *pid_out = (pid_t) pid;
  return 0;
}

/* ------------------------------------------------------ outer procfs */

static int
send_fd (int sock, int fd)
{
  char cbuf[CMSG_SPACE (sizeof (int))];
  char byte = 'p';
  memset (cbuf, 0, sizeof cbuf);
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof (int));
  return sendmsg (sock, &msg, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* Receives one fd, or the errno the maker sent as a 4-byte payload. */
static int
recv_fd (int sock, int *fd_out)
{
  char cbuf[CMSG_SPACE (sizeof (int))];
  int payload = 0;
  struct iovec iov = { .iov_base = &payload, .iov_len = sizeof payload };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  ssize_t n;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return n == 0 ? ECHILD : errno;
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
  if (cm == NULL || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
    return (size_t) n == sizeof payload && payload != 0 ? payload : EIO;
  memcpy (fd_out, CMSG_DATA (cm), sizeof (int));
  return 0;
}

/* In a process whose active pid namespace is the one wanted. */
static void __attribute__ ((noreturn))
make_proc (int sock)
{
  int fs = pr_sys_fsopen ("proc", FSOPEN_CLOEXEC);
  int m = -1;
  if (fs >= 0 && pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
    m = pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (m < 0)
    {
      int e = errno ? errno : EIO;
      (void) !write (sock, &e, sizeof e);
      _exit (1);
    }
  _exit (send_fd (sock, m) < 0 ? 1 : 0);
}

/* setns(CLONE_NEWPID) only moves the caller's future children, so the
 * joiner forks the maker. */
static void __attribute__ ((noreturn))
join_and_make (int pidns_fd, int sock)
{
  if (setns (pidns_fd, CLONE_NEWPID) < 0)
    {
      int e = errno;
      (void) !write (sock, &e, sizeof e);
      _exit (1);
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      (void) !write (sock, &e, sizeof e);
      _exit (1);
    }
  if (pid == 0)
    make_proc (sock);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 1);
}

int
pr_procs_open_proc (int pidns_fd, int *fd_out, pr_error **err)
{
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    return pr_error_set (err, errno, "socketpair");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (sp[0]);
      close (sp[1]);
      return pr_error_set (err, e, "fork");
    }
  if (pid == 0)
    {
      close (sp[0]);
      join_and_make (pidns_fd, sp[1]);
    }
  close (sp[1]);
  int fd = -1;
  int e = recv_fd (sp[0], &fd);
  close (sp[0]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (e != 0)
    return pr_error_set (err, e, "make a procfs of the container's outer pid namespace");
  *fd_out = fd;
  return 0;
}

int
pr_procs_mount_proc (int proc_fd, pr_error **err)
{
  _cleanup_close_ int fd = proc_fd;
  if (pr_sys_move_mount (fd, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "mount the session's procfs at `/proc`");
  /* The container's /proc/sys is read-only (readonlyPaths); the session's
   * new procfs must not be a way around that. */
  _cleanup_close_ int sys = pr_sys_open_tree (AT_FDCWD, "/proc/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (sys < 0)
    return pr_error_set (err, errno, "clone `/proc/sys`");
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
  if (pr_sys_mount_setattr (sys, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
    return pr_error_set (err, errno, "make `/proc/sys` read-only");
  if (pr_sys_move_mount (sys, "", AT_FDCWD, "/proc/sys", MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "mount `/proc/sys` read-only");
  return 0;
}

/* ------------------------------------------------- verifier.agent_processes */

/* Whether the pid namespace at fd is target (device and inode) or nested
 * in it.  Consumes fd. */
static bool
ns_within (int fd, dev_t dev, ino_t ino)
{
  while (fd >= 0)
    {
      struct stat st;
      if (fstat (fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
        {
          close (fd);
          return true;
        }
      int parent = ioctl (fd, NS_GET_PARENT);
      close (fd);
      fd = parent;
    }
  return false;
}

/* The state letter of /proc/PID/stat (after the parenthesised comm), or 0. */
static char
proc_state (pid_t pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof path, "/proc/%d/stat", pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  char *paren = strrchr (buf, ')');
  return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* One pass over /proc: SIGSTOP to every agent process not yet stopped
 * (and SIGKILL too when kill, but never to agent_init).  *running counts
 * the ones found running. */
static int
sweep (dev_t dev, ino_t ino, pid_t agent_init, bool kill_them, int *running, pr_error **err)
{
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return pr_error_set (err, errno, "open /proc");
  struct dirent *de;
  *running = 0;
  while ((de = readdir (d)))
    {
      if (!pr_str_is_digits (de->d_name, strlen (de->d_name)))
        continue;
      pid_t pid = (pid_t) strtol (de->d_name, NULL, 10);
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/pid", pid);
      if (!ns_within (open (path, O_RDONLY | O_CLOEXEC), dev, ino))
        continue;
      char state = proc_state (pid);
      if (state == 0 || state == 'Z' || state == 'X')
        continue;
      if (kill_them && pid != agent_init)
        {
          kill (pid, SIGKILL);
          continue;
        }
      if (state == 'T' || state == 't')
        continue;
      (*running)++;
      kill (pid, SIGSTOP);
    }
  closedir (d);
  return 0;
}

int
pr_procs_agent_processes (enum pr_agent_processes mode, pid_t agent_init, pr_error **err)
{
  if (mode == PR_AGENT_PROCS_KEEP)
    return 0;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/pid", agent_init);
  _cleanup_close_ int nsfd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (nsfd < 0 || fstat (nsfd, &st) < 0)
    return pr_error_set (err, errno, "open the agent's pid namespace (%s)", path);
  /* Stopped first, killed after: a process stopped cannot fork, so the
   * kill pass meets every one of them. */
  int running = 0;
  for (int pass = 0;; pass++)
    {
      if (sweep (st.st_dev, st.st_ino, agent_init, false, &running, err) < 0)
        return -1;
      if (running == 0)
        break;
      if (pass == 100)
        return pr_error_set (err, EAGAIN, "%d agent processes still running after 100 passes", running);
    }
  if (mode == PR_AGENT_PROCS_FREEZE)
    return 0;
  if (sweep (st.st_dev, st.st_ino, agent_init, true, &running, err) < 0)
    return -1;
  kill (agent_init, SIGCONT);
  return 0;
}
