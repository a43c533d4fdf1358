#define _GNU_SOURCE
/* console.c - the container's terminal: connecting to a --console-socket,
 * creating the pty inside the container and handing its master over with
 * SCM_RIGHTS (runc's console-socket protocol), and, for a foreground
 * `run -t` / `exec -t` without a console socket, receiving the master over a
 * socketpair and relaying it to our own stdin/stdout. */

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "console.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "../linux/safepath.h"
#include "../linux/identity.h"

/* ---- connecting ---------------------------------------------------------- */

static int
connect_path (int fd, const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  if (len >= sizeof sa.sun_path)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  memcpy (sa.sun_path, path, len + 1);
  for (;;)
    {
      if (connect (fd, (struct sockaddr *) &sa, offsetof (struct sockaddr_un, sun_path) + len + 1) == 0)
        return 0;
      if (errno != EINTR)
        return -1;
    }
}

int
pr_console_socket_connect (const char *path, int *fd_out, pr_error **err)
{
  if (path == NULL || path[0] == '\0')
    return pr_error_invalid (err, "connect to console socket: empty path");

  _cleanup_close_ int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "create socket for console socket `%s`", path);

  if (strlen (path) < sizeof ((struct sockaddr_un *) 0)->sun_path)
    {
      if (connect_path (fd, path) < 0)
        return pr_error_set (err, errno, "connect to console socket `%s`", path);
      *fd_out = steal_fd (&fd);
      return 0;
    }

  /* sun_path holds 108 bytes, but bundle/state paths are often deeper: go
   * through an O_PATH fd of the directory, which keeps the name short and
   * still resolves the same socket inode. */
  _cleanup_free_ char *dcopy = xstrdup (path);
  _cleanup_free_ char *bcopy = xstrdup (path);
  const char *dir = dirname (dcopy);
  const char *base = basename (bcopy);
  _cleanup_close_ int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return pr_error_set (err, errno, "open directory of console socket `%s`", path);
  _cleanup_free_ char *short_path = xasprintf ("/proc/self/fd/%d/%s", dfd, base);
  if (connect_path (fd, short_path) < 0)
    return pr_error_set (err, errno, "connect to console socket `%s`", path);
  *fd_out = steal_fd (&fd);
  return 0;
}

/* ---- container side -------------------------------------------------------- */

static int
send_fd (int sock, int fd, const char *name)
{
  char cbuf[CMSG_SPACE (sizeof (int))];
  memset (cbuf, 0, sizeof cbuf);
  struct iovec iov = { .iov_base = (void *) name, .iov_len = strlen (name) };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = cbuf,
    .msg_controllen = sizeof cbuf,
  };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof (int));
  for (;;)
    {
      /* MSG_NOSIGNAL: a receiver that went away must be an error, not a
       * SIGPIPE that kills the container's init before it can report. */
      if (sendmsg (sock, &msg, MSG_NOSIGNAL) >= 0)
        return 0;
      if (errno != EINTR)
        return -1;
    }
}

/* The gid of the image's "tty" group (group(5), read through the root with
 * the identity parser: a FIFO, device or huge file is not read), or -1 when
 * the image has none. */
static gid_t
image_tty_gid (void)
{
  _cleanup_close_ int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct pr_identity id = { 0 };
  pr_error *e = NULL;
  gid_t gid = (gid_t) -1;

  if (rootfd >= 0 && pr_identity_resolve (rootfd, "0:tty", &id, &e) == 0)
    gid = id.gid;
  pr_error_free (&e);
  pr_identity_free_contents (&id);
  return gid;
}

/* The slave belongs to the process's user and the tty group, as a login's
 * terminal does (runc and crun do the same): a non-root user must be able
 * to reopen /dev/pts/N and /dev/tty, and write(1)/mesg(1) go by the group.
 * A tty gid outside the user namespace's map (EINVAL) keeps devpts's gid. */
static int
chown_slave (int slave, uid_t uid, const char *name, pr_error **err)
{
  gid_t tty = image_tty_gid ();

  if (tty != (gid_t) -1 && fchown (slave, uid, tty) == 0)
    return 0;
  if (fchown (slave, uid, (gid_t) -1) < 0)
    return pr_error_set (err, errno, "chown `%s` to uid %u", name, (unsigned) uid);
  return 0;
}

/* True when fd is on a devpts filesystem (statfs(2) DEVPTS_SUPER_MAGIC). */
static bool
on_devpts (int fd)
{
  struct statfs sfs;
  return fstatfs (fd, &sfs) == 0 && sfs.f_type == DEVPTS_SUPER_MAGIC;
}

/* The master must be a devpts instance's own ptmx (character 5:2): a
 * /dev/ptmx swapped for something else (another file, a node on a mount
 * raced in over /dev/pts) is refused, never used (CVE-2025-52565 class). */
static int
check_ptmx (int master, pr_error **err)
{
  struct stat st;
  if (fstat (master, &st) < 0)
    return pr_error_set (err, errno, "stat `/dev/ptmx`");
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (5, 2) || !on_devpts (master))
    return pr_error_set (err, EPERM, "`/dev/ptmx` is not the ptmx of a devpts mount");
  return 0;
}

int
pr_console_setup_slave (int socket_fd, bool has_size, uint32_t rows, uint32_t cols, uid_t uid, pr_error **err)
{
  _cleanup_close_ int master = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return pr_error_set (err, errno, "open `/dev/ptmx`");
  if (check_ptmx (master, err) < 0)
    return -1;
  if (unlockpt (master) < 0)
    return pr_error_set (err, errno, "unlockpt on `/dev/ptmx`");

  char name[64] = "";
  if (ptsname_r (master, name, sizeof name) != 0)
    snprintf (name, sizeof name, "/dev/pts/?");

  /* TIOCGPTPEER opens the peer through the master's own devpts instance,
   * so a /dev/pts/N of another devpts (or a planted symlink) can not be
   * substituted; the ptsname path is only a fallback for old kernels.  The
   * slave is opened without O_CLOEXEC: its dup2 copies must survive exec,
   * and dup2(fd, fd) would keep the flag if it landed on 0..2. */
  int slave_raw = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
  if (slave_raw < 0)
    {
      if (errno != EINVAL && errno != ENOTTY)
        return pr_error_set (err, errno, "open pty peer of `/dev/ptmx`");
      slave_raw = open (name, O_RDWR | O_NOCTTY | O_NOFOLLOW);
      if (slave_raw < 0)
        return pr_error_set (err, errno, "open pty slave `%s`", name);
      if (!on_devpts (slave_raw) || !isatty (slave_raw))
        {
          close (slave_raw);
          return pr_error_set (err, EPERM, "pty slave `%s` is not on devpts", name);
        }
    }
  _cleanup_close_ int slave = slave_raw;

  if (chown_slave (slave, uid, name, err) < 0)
    return -1;

  if (has_size)
    {
      struct winsize ws = { .ws_row = (unsigned short) rows, .ws_col = (unsigned short) cols };
      if (ioctl (slave, TIOCSWINSZ, &ws) < 0)
        return pr_error_set (err, errno, "set window size of `%s`", name);
    }

  if (send_fd (socket_fd, master, name) < 0)
    return pr_error_set (err, errno, "send pty master to console socket");
  /* The receiver owns the master now; our copy would keep the pty open
   * after the container's processes exit, so the receiver never sees EIO. */
  close (steal_fd (&master));

  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return pr_error_set (err, errno, "make `%s` the controlling terminal", name);

  for (int i = 0; i <= 2; i++)
    if (slave != i && dup2 (slave, i) < 0)
      return pr_error_set (err, errno, "dup2 `%s` onto fd %d", name, i);
  if (slave <= 2)
    slave = -1; /* it is one of the stdio fds now: keep it */
  return 0;
}

/* An O_PATH fd of the /dev/console mount target in the container's root:
 * an empty regular file made in /dev, which itself must be a directory
 * crossing no mount and no symlink from "/".  Whatever the image or a
 * racing process put at /dev/console (a symlink to /proc/sysrq-trigger, a
 * device) is removed first, never followed. */
static int
console_target (int *fd_out, pr_error **err)
{
  _cleanup_close_ int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return pr_error_set (err, errno, "open `/`");
  _cleanup_close_ int dev = -1;
  if (pr_safe_open (root, "dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &dev, err) < 0)
    return pr_error_wrap (err, "/dev/console");
  struct stat st;
  if (fstatat (dev, "console", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG (st.st_mode)
      && unlinkat (dev, "console", 0) < 0)
    return pr_error_set (err, errno, "remove `/dev/console` to bind the pty there");
  int made = openat (dev, "console", O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (made < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "create `/dev/console`");
  if (made >= 0)
    close (made);
  int fd = openat (dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open `/dev/console`");
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return pr_error_set (err, EPERM, "`/dev/console` was swapped while it was being made");
    }
  *fd_out = fd;
  return 0;
}

int
pr_console_mount_dev_console (int slave_fd, pr_error **err)
{
  if (!on_devpts (slave_fd) || !isatty (slave_fd))
    return pr_error_set (err, EPERM, "bind `/dev/console`: the console is not a devpts pty");
  _cleanup_close_ int target = -1;
  if (console_target (&target, err) < 0)
    return -1;
  /* The source is the slave fd itself (open_tree of the fd), never the
   * name /dev/pts/N, which a mount raced in over /dev/pts could replace. */
  _cleanup_close_ int tree = pr_sys_open_tree (slave_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return pr_error_set (err, errno, "bind `/dev/console`: open_tree of the pty");
  if (pr_sys_move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "bind the pty onto `/dev/console`");
  return 0;
}

/* ---- runtime side -------------------------------------------------------- */

int
pr_console_local_socket (int *runtime_end, int *container_end, pr_error **err)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return pr_error_set (err, errno, "create console socketpair");
  *runtime_end = sv[0];
  *container_end = sv[1];
  return 0;
}

int
pr_console_receive_master (int runtime_end, int *master_out, pr_error **err)
{
  char buf[4096];
  char cbuf[CMSG_SPACE (sizeof (int) * 4)];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = cbuf,
    .msg_controllen = sizeof cbuf,
  };
  ssize_t n;
  do
    n = recvmsg (runtime_end, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return pr_error_set (err, errno, "receive pty master from console socket");

  int master = -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
    {
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        continue;
      size_t nfds = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < nfds; i++)
        {
          int fd;
          memcpy (&fd, CMSG_DATA (cm) + i * sizeof (int), sizeof fd);
          if (master < 0)
            master = fd;
          else
            close (fd); /* only one is expected; never leak extras */
        }
    }
  if (master < 0)
    return pr_error_set (err, n == 0 ? EPIPE : EBADMSG,
                         n == 0 ? "console socket closed before the pty master was sent"
                                : "console socket message carries no pty master");
  if (msg.msg_flags & MSG_CTRUNC)
    pr_warn ("console socket message had its control data truncated");
  if (!isatty (master))
    {
      close (master);
      return pr_error_set (err, ENOTTY, "fd received on console socket is not a terminal");
    }
  *master_out = master;
  return 0;
}

/* Our terminal's settings, restored whatever path pr_console_proxy takes. */
struct saved_tty
{
  int fd;
  struct termios tio;
};

static void
restore_tty (struct saved_tty *s)
{
  if (s->fd >= 0)
    tcsetattr (s->fd, TCSADRAIN, &s->tio);
}

struct saved_mask
{
  bool set;
  sigset_t old;
};

static void
restore_mask (struct saved_mask *m)
{
  if (m->set)
    sigprocmask (SIG_SETMASK, &m->old, NULL);
}

static void
copy_winsize (int master)
{
  struct winsize ws;
  for (int fd = 0; fd <= 2; fd++)
    if (ioctl (fd, TIOCGWINSZ, &ws) == 0)
      {
        ioctl (master, TIOCSWINSZ, &ws);
        return;
      }
}

/* A master read failing with EIO means every slave fd is closed: the
 * container's processes are gone (pty(7)). */
static bool
master_gone (ssize_t n)
{
  return n == 0 || (n < 0 && errno == EIO);
}

/* The relay's state between poll rounds: stdin bytes read but not yet
 * written to the master (in[in_off..in_len)), and whether stdin is open. */
struct relay
{
  int master;
  pid_t forward_pid;
  char in[8192];
  size_t in_len, in_off;
  bool stdin_open;
};

/* Blocks SIGWINCH (and the forwarded signals when forward_pid > 0) into a
 * signalfd, stored in *sfd; the old mask is kept in *mask for the caller's
 * cleanup.  Returns 0 or -1 with err set (sigprocmask, signalfd errno). */
static int
block_signals (pid_t forward_pid, struct saved_mask *mask, int *sfd, pr_error **err)
{
  static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGWINCH);
  for (size_t i = 0; forward_pid > 0 && i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  if (sigprocmask (SIG_BLOCK, &set, &mask->old) < 0)
    return pr_error_set (err, errno, "block SIGWINCH");
  mask->set = true;
  *sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (*sfd < 0)
    return pr_error_set (err, errno, "signalfd for SIGWINCH");
  return 0;
}

/* Puts our stdin terminal (if it is one) in raw mode, its settings kept in
 * *tty for the caller's cleanup.  Raw: keystrokes (^C, ^Z, arrows) go to
 * the container's pty, whose own line discipline echoes and turns them
 * into signals.  Returns 0 or -1 with err set (tcgetattr/tcsetattr). */
static int
stdin_raw (struct saved_tty *tty, pr_error **err)
{
  if (!isatty (STDIN_FILENO))
    return 0;
  struct termios raw;
  if (tcgetattr (STDIN_FILENO, &tty->tio) < 0)
    return pr_error_set (err, errno, "get terminal attributes of stdin");
  raw = tty->tio;
  cfmakeraw (&raw);
  if (tcsetattr (STDIN_FILENO, TCSANOW, &raw) < 0)
    return pr_error_set (err, errno, "set stdin terminal to raw mode");
  tty->fd = STDIN_FILENO;
  return 0;
}

static void
on_signals (struct relay *r, int sfd)
{
  struct signalfd_siginfo si;
  while (read (sfd, &si, sizeof si) == (ssize_t) sizeof si)
    if (si.ssi_signo != SIGWINCH && r->forward_pid > 0)
      kill (r->forward_pid, (int) si.ssi_signo);
  copy_winsize (r->master);
}

/* Master output to stdout.  Returns 1 when the container's side is gone,
 * 0 to go on, -1 with err set. */
static int
on_master_readable (struct relay *r, pr_error **err)
{
  char out[8192];
  ssize_t n = read (r->master, out, sizeof out);
  if (n > 0)
    return pr_write_all (STDOUT_FILENO, out, (size_t) n) < 0
               ? pr_error_set (err, errno, "write console output to stdout")
               : 0;
  if (master_gone (n))
    return 1;
  if (errno != EAGAIN && errno != EINTR)
    return pr_error_set (err, errno, "read from pty master");
  return 0;
}

/* Pending stdin bytes to the master.  Returns as on_master_readable. */
static int
on_master_writable (struct relay *r, pr_error **err)
{
  ssize_t w = write (r->master, r->in + r->in_off, r->in_len - r->in_off);
  if (w > 0)
    r->in_off += (size_t) w;
  else if (w < 0 && errno == EIO)
    return 1;
  else if (w < 0 && errno != EAGAIN && errno != EINTR)
    return pr_error_set (err, errno, "write stdin to pty master");
  return 0;
}

static void
on_stdin (struct relay *r)
{
  ssize_t n = read (STDIN_FILENO, r->in, sizeof r->in);
  if (n > 0)
    {
      r->in_len = (size_t) n;
      r->in_off = 0;
    }
  else if (n == 0 || (errno != EAGAIN && errno != EINTR))
    r->stdin_open = false; /* keep relaying output until the container ends */
}

int
pr_console_proxy (int master_fd, pid_t forward_pid, pr_error **err)
{
  __attribute__ ((cleanup (restore_mask))) struct saved_mask mask = { .set = false };
  __attribute__ ((cleanup (restore_tty))) struct saved_tty tty = { .fd = -1 };
  _cleanup_close_ int sfd = -1;

  if (block_signals (forward_pid, &mask, &sfd, err) < 0 || stdin_raw (&tty, err) < 0)
    return -1;
  copy_winsize (master_fd);

  /* The master is nonblocking so input the container does not read can
   * never block us from draining its output (which would deadlock both). */
  int fl = fcntl (master_fd, F_GETFL);
  if (fl < 0 || fcntl (master_fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return pr_error_set (err, errno, "set pty master nonblocking");

  struct relay r = { .master = master_fd, .forward_pid = forward_pid, .stdin_open = true };
  int done = 0; /* 1: the container's side is gone; -1: err is set */
  while (done == 0)
    {
      bool pending = r.in_len > r.in_off;
      struct pollfd p[3] = {
        { .fd = master_fd, .events = POLLIN | (pending ? POLLOUT : 0) },
        { .fd = sfd, .events = POLLIN },
        { .fd = (r.stdin_open && !pending) ? STDIN_FILENO : -1, .events = POLLIN },
      };
      if (poll (p, 3, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return pr_error_set (err, errno, "poll on console");
        }
      if (p[1].revents & POLLIN)
        on_signals (&r, sfd);
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
        done = on_master_readable (&r, err);
      if (done == 0 && (p[0].revents & POLLOUT) && pending)
        done = on_master_writable (&r, err);
      if (done == 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
        on_stdin (&r);
      if (r.in_off == r.in_len)
        r.in_off = r.in_len = 0;
    }
  return done < 0 ? -1 : 0;
}
