#define _GNU_SOURCE
/* recvtty.c - test receiver for the --console-socket protocol: listens on a
 * unix stream socket, accepts one connection, takes the pty master that the
 * runtime sends with SCM_RIGHTS, and either relays it to our stdin/stdout
 * ("single") or just drains it ("null").  Exits 0 when the pty hangs up
 * (master read gives EOF/EIO: every process holding the slave is gone).
 *
 *   recvtty [--mode single|null] [--pid-file FILE] SOCKET_PATH
 *
 * Only the pty's output goes to stdout; diagnostics go to stderr.  The
 * pid file is written once the socket is listening, so a test can wait for
 * it before starting the container.  Depends on libc only. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

static const char *prog = "recvtty";

static void __attribute__ ((noreturn, format (printf, 1, 2)))
die (const char *fmt, ...)
{
  int e = errno;
  va_list ap;
  fprintf (stderr, "%s: ", prog);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  if (e)
    fprintf (stderr, ": %s", strerror (e));
  fputc ('\n', stderr);
  exit (1);
}

static void __attribute__ ((noreturn))
usage (FILE *f, int code)
{
  fprintf (f, "usage: %s [--mode single|null] [--pid-file FILE] SOCKET_PATH\n", prog);
  exit (code);
}

/* Fills sa for path; a path longer than sun_path is reached through an
 * O_PATH fd of its directory (kept open in *dirfd until after bind). */
static socklen_t
make_addr (const char *path, struct sockaddr_un *sa, int *dirfd)
{
  char buf[sizeof sa->sun_path];
  const char *use = path;
  *dirfd = -1;
  memset (sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof sa->sun_path)
    {
      char *d = strdup (path), *b = strdup (path);
      if (!d || !b)
        die ("out of memory");
      *dirfd = open (dirname (d), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (*dirfd < 0)
        die ("open directory of `%s`", path);
      int n = snprintf (buf, sizeof buf, "/proc/self/fd/%d/%s", *dirfd, basename (b));
      free (d);
      free (b);
      if (n < 0 || (size_t) n >= sizeof buf)
        {
          errno = ENAMETOOLONG;
          die ("socket path `%s`", path);
        }
      use = buf;
    }
  strcpy (sa->sun_path, use);
  return (socklen_t) (offsetof (struct sockaddr_un, sun_path) + strlen (use) + 1);
}

static int
listen_on (const char *path)
{
  struct stat st;
  /* A leftover socket from an earlier run would make bind fail; anything
   * else at that path is not ours to remove. */
  if (lstat (path, &st) == 0 && S_ISSOCK (st.st_mode))
    unlink (path);

  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    die ("socket");
  struct sockaddr_un sa;
  int dirfd;
  socklen_t len = make_addr (path, &sa, &dirfd);
  if (bind (fd, (struct sockaddr *) &sa, len) < 0)
    die ("bind `%s`", path);
  if (dirfd >= 0)
    close (dirfd);
  if (listen (fd, 1) < 0)
    die ("listen on `%s`", path);
  return fd;
}

static int
receive_master (int conn)
{
  char buf[4096];
  union
  {
    char c[CMSG_SPACE (sizeof (int) * 4)];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.c, .msg_controllen = sizeof ctl.c };
  ssize_t n;
  do
    n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    die ("recvmsg");

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
            close (fd);
        }
    }
  errno = 0;
  if (master < 0)
    die ("connection carried no file descriptor");
  if (!isatty (master))
    die ("received fd is not a terminal");
  if (n > 0)
    fprintf (stderr, "%s: received pty master (%.*s)\n", prog, (int) n, buf);
  return master;
}

static int
write_all (int fd, const char *p, size_t len)
{
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno == EAGAIN)
            {
              struct pollfd pf = { .fd = fd, .events = POLLOUT };
              poll (&pf, 1, -1);
              continue;
            }
          return -1;
        }
      p += w;
      len -= (size_t) w;
    }
  return 0;
}

/* Relays until the master hangs up.  single: master -> stdout and
 * stdin -> master; null: master output discarded, stdin ignored. */
static int
relay (int master, bool single)
{
  char buf[8192];
  bool stdin_open = single;

  for (;;)
    {
      struct pollfd p[2] = {
        { .fd = master, .events = POLLIN },
        { .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
      };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (p[0].revents)
        {
          ssize_t n = read (master, buf, sizeof buf);
          if (n == 0 || (n < 0 && errno == EIO))
            return 0;
          if (n < 0 && errno != EINTR && errno != EAGAIN)
            die ("read pty master");
          if (n > 0 && single && write_all (STDOUT_FILENO, buf, (size_t) n) < 0)
            die ("write stdout");
        }
      if (p[1].revents)
        {
          ssize_t n = read (STDIN_FILENO, buf, sizeof buf);
          if (n > 0)
            {
              /* A blocking write is fine here: a tty input queue that stays
               * full means the container stopped reading, and a test would
               * time out either way. */
              if (write_all (master, buf, (size_t) n) < 0)
                {
                  if (errno == EIO)
                    return 0;
                  die ("write pty master");
                }
            }
          else if (n == 0 || (errno != EINTR && errno != EAGAIN))
            stdin_open = false;
        }
    }
}

int
main (int argc, char **argv)
{
  const char *mode = "single", *pid_file = NULL;
  static const struct option opts[] = {
    { "mode", required_argument, NULL, 'm' },
    { "pid-file", required_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  while ((c = getopt_long (argc, argv, "m:p:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'm': mode = optarg; break;
      case 'p': pid_file = optarg; break;
      case 'h': usage (stdout, 0);
      default: usage (stderr, 2);
      }
  if (optind + 1 != argc)
    usage (stderr, 2);
  bool single;
  if (strcmp (mode, "single") == 0)
    single = true;
  else if (strcmp (mode, "null") == 0)
    single = false;
  else
    {
      fprintf (stderr, "%s: unknown mode `%s` (single or null)\n", prog, mode);
      return 2;
    }
  const char *path = argv[optind];

  /* A test that closes our stdout early must not turn into a signal death. */
  signal (SIGPIPE, SIG_IGN);

  int lfd = listen_on (path);
  if (pid_file)
    {
      char tmp[4096];
      snprintf (tmp, sizeof tmp, "%s.tmp", pid_file);
      FILE *f = fopen (tmp, "we");
      if (!f || fprintf (f, "%d", (int) getpid ()) < 0 || fclose (f) != 0)
        die ("write pid file `%s`", pid_file);
      /* rename: a test polling for the file never reads it half-written. */
      if (rename (tmp, pid_file) < 0)
        die ("rename pid file to `%s`", pid_file);
    }

  int conn;
  do
    conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
  while (conn < 0 && errno == EINTR);
  if (conn < 0)
    die ("accept on `%s`", path);
  close (lfd);

  int master = receive_master (conn);
  close (conn);

  struct termios saved;
  bool raw = single && isatty (STDIN_FILENO) && tcgetattr (STDIN_FILENO, &saved) == 0;
  if (raw)
    {
      struct termios t = saved;
      cfmakeraw (&t);
      tcsetattr (STDIN_FILENO, TCSANOW, &t);
    }
  int rc = relay (master, single);
  if (raw)
    tcsetattr (STDIN_FILENO, TCSADRAIN, &saved);
  close (master);
  return rc;
}
