/* seccomp-listener.c - a seccomp notify agent for the tests: listens on a
 * unix socket (a linux.seccomp.listenerPath), receives from each runtime
 * connection the notify fd (SCM_RIGHTS) and the containerProcessState JSON
 * (read to EOF), appends that JSON as one line to STATEFILE, and answers
 * every notification: with --errno N > 0 the syscall fails with N, with
 * --errno 0 (the default) it continues (runs as if not filtered).  With
 * --hold-first-ms MS the first notification on each notify fd is answered
 * only MS ms after it arrived, while the others are answered at once (the
 * held process waits inside its syscall: for an exec's filter that is the
 * runtime's execve of the process, the moment tests/security/exe.bats
 * wants to hold open).  Each answered syscall's number is appended to
 * STATEFILE.log.  Runs until killed.  Standalone: only the kernel's interface, nothing of proctor's
 * or libseccomp's, so it judges what the runtime sent.
 * Source: runtime-spec config-linux.md "Seccomp" (listenerPath,
 * containerProcessState); seccomp_unotify(2). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 64

static int answer_errno;
static long hold_first_ms = -1; /* -1: hold nothing */
static const char *state_file;

/* One notify fd's hold: whether its first notification came, and the
 * one being held (id, syscall number, when it is due in ms). */
struct hold
{
  int first_seen;
  int held;
  __u64 id;
  int nr;
  long due_ms;
};

static long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void
die (const char *what)
{
  perror (what);
  exit (1);
}

/* Receives the fd with the first chunk and the rest of the JSON to EOF. */
static int
take_connection (int conn)
{
  char buf[65536];
  size_t len = 0;
  int fd = -1;
  union
  {
    char b[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;

  for (;;)
    {
      struct iovec iov = { buf + len, sizeof buf - 1 - len };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b };
      ssize_t n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die ("recvmsg");
      for (struct cmsghdr *cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
          memcpy (&fd, CMSG_DATA (cm), sizeof fd);
      if (n == 0 || len + (size_t) n >= sizeof buf - 1)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  /* One line per connection: a newline in JSON is whitespace (never
   * inside a string, where it is escaped). */
  for (char *c = buf; *c; c++)
    if (*c == '\n')
      *c = ' ';
  FILE *f = fopen (state_file, "a");
  if (f == NULL)
    die (state_file);
  fprintf (f, "%s\n", fd >= 0 ? buf : "NO-FD");
  fclose (f);
  close (conn);
  return fd;
}

static size_t
resp_size (void)
{
  struct seccomp_notif_sizes sizes;
  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    die ("SECCOMP_GET_NOTIF_SIZES");
  return sizes.seccomp_notif_resp > sizeof (struct seccomp_notif_resp) ? sizes.seccomp_notif_resp
                                                                        : sizeof (struct seccomp_notif_resp);
}

/* Sends the answer to notification ID and logs its syscall number. */
static void
send_answer (int nfd, __u64 id, int nr)
{
  struct seccomp_notif_resp *resp = calloc (1, resp_size ());
  if (resp == NULL)
    die ("calloc");
  resp->id = id;
  if (answer_errno > 0)
    resp->error = -answer_errno;
  else
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl (nfd, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: the process died meanwhile */
  free (resp);
  char log[4096];
  snprintf (log, sizeof log, "%s.log", state_file);
  FILE *f = fopen (log, "a");
  if (f)
    {
      fprintf (f, "%d\n", nr);
      fclose (f);
    }
}

/* Receives one notification: answers it, or holds it when it is the
 * fd's first and --hold-first-ms is given. */
static void
answer (int nfd, struct hold *h)
{
  struct seccomp_notif_sizes sizes;
  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    die ("SECCOMP_GET_NOTIF_SIZES");
  struct seccomp_notif *req = calloc (1, sizes.seccomp_notif > sizeof *req ? sizes.seccomp_notif : sizeof *req);
  if (req == NULL)
    die ("calloc");
  if (ioctl (nfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
    goto out; /* the process died meanwhile (ENOENT) */
  if (hold_first_ms >= 0 && !h->first_seen)
    {
      *h = (struct hold){ .first_seen = 1, .held = 1, .id = req->id, .nr = req->data.nr,
                          .due_ms = now_ms () + hold_first_ms };
      goto out;
    }
  h->first_seen = 1;
  send_answer (nfd, req->id, req->data.nr);
out:
  free (req);
}

/* Answers the held notifications that are due; returns the poll timeout
 * until the next one in ms, or -1 when none is held. */
static int
release_due (struct pollfd *fds, struct hold *holds, nfds_t n)
{
  long next = -1, now = now_ms ();
  for (nfds_t i = 1; i < n; i++)
    {
      if (!holds[i].held)
        continue;
      if (holds[i].due_ms <= now)
        {
          holds[i].held = 0;
          send_answer (fds[i].fd, holds[i].id, holds[i].nr);
        }
      else if (next < 0 || holds[i].due_ms - now < next)
        next = holds[i].due_ms - now;
    }
  return (int) next;
}

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  struct pollfd fds[MAX_FDS];
  struct hold holds[MAX_FDS] = { { 0 } };
  nfds_t n = 1;

  while (argc >= 5 && (strcmp (argv[1], "--errno") == 0 || strcmp (argv[1], "--hold-first-ms") == 0))
    {
      if (strcmp (argv[1], "--errno") == 0)
        answer_errno = atoi (argv[2]);
      else
        hold_first_ms = atol (argv[2]);
      argv += 2;
      argc -= 2;
    }
  if (argc != 3 || strlen (argv[1]) >= sizeof addr.sun_path)
    {
      fprintf (stderr, "usage: seccomp-listener [--errno N] [--hold-first-ms MS] SOCKET STATEFILE\n");
      return 2;
    }
  state_file = argv[2];
  strcpy (addr.sun_path, argv[1]);
  int l = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || bind (l, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (l, 8) < 0)
    die ("listen");
  fds[0] = (struct pollfd){ .fd = l, .events = POLLIN };
  for (;;)
    {
      if (poll (fds, n, release_due (fds, holds, n)) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (fds[0].revents & POLLIN)
        {
          int c = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
          int nfd = c >= 0 ? take_connection (c) : -1;
          if (nfd >= 0 && n < MAX_FDS)
            {
              holds[n] = (struct hold){ 0 };
              fds[n++] = (struct pollfd){ .fd = nfd, .events = POLLIN };
            }
        }
      for (nfds_t i = 1; i < n; i++)
        {
          if (fds[i].revents & POLLIN)
            answer (fds[i].fd, &holds[i]);
          else if (fds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
            {
              /* Every filtered process is gone. */
              close (fds[i].fd);
              --n;
              holds[i] = holds[n];
              fds[i--] = fds[n];
            }
        }
    }
}
