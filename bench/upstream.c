/* upstream.c - benchmark helper: the origin server behind the proxies in
 * bench/run.sh.  One process, one epoll loop, listening on 127.0.0.1:PORT;
 * `GET /N` (absolute-form `GET http://host:port/N` too, as a forward proxy
 * would send it if it does not rewrite) answers N zero bytes with a
 * Content-Length and closes the connection.  The body is sendfile(2)d
 * over and over from a 256 KiB memfd, as a static file server (nginx,
 * Apache's EnableSendfile) serves a large download: the kernel sends the
 * same page-cache pages without copying them, so on a 2-CPU machine the
 * origin takes as little as it can of the CPU the client and the proxy
 * need.  Whatever limits the 1 GB throughput test or the short-request
 * test is the client, the proxy or the network path.
 *
 *   upstream PORT [SECONDS [ADDR [CC]]]
 *       serve on ADDR:PORT (default 127.0.0.1) until SIGTERM or SECONDS
 *       (default 900); with CC, set the listener's TCP congestion control
 *       to CC (TCP_CONGESTION, tcp(7)); accepted sockets inherit it.
 *
 * Why CC: bench/run.sh wants the origin on cubic whatever the host's
 * default is.  Setting the namespace's default (the sysctl
 * net.ipv4.tcp_congestion_control) to an algorithm outside
 * net.ipv4.tcp_allowed_congestion_control fails with EPERM in any network
 * namespace but the initial one, and some hosts allow only "reno bbr";
 * the socket option checks CAP_NET_ADMIN in the socket's network
 * namespace instead (tcp_set_congestion_control()), which root has.
 * It prints the algorithm the listener ended up with on stderr
 * ("upstream: congestion control NAME") so the caller can say what it used.
 *
 * It stops by itself so a benchmark that dies never leaves it behind. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 4096
#define CHUNK (256 * 1024)

struct conn
{
  int fd;
  char req[2048];
  size_t req_len;
  char head[128];
  size_t head_len, head_off;
  unsigned long long body_left;
  int writing;
};

static char zeros[CHUNK];
static int body_fd; /* memfd holding CHUNK zero bytes */
static struct conn *conns[MAX_CONN];

static void
conn_close (int ep, struct conn *c)
{
  epoll_ctl (ep, EPOLL_CTL_DEL, c->fd, NULL);
  close (c->fd);
  if (c->fd < MAX_CONN)
    conns[c->fd] = NULL;
  free (c);
}

/* Parses the request line once the head is complete; returns 1 when the
 * response is ready to go, 0 when more bytes are needed, -1 on garbage. */
static int
parse_request (struct conn *c)
{
  c->req[c->req_len] = '\0';
  if (strstr (c->req, "\r\n\r\n") == NULL)
    return c->req_len + 1 >= sizeof c->req ? -1 : 0;
  const char *sp = strchr (c->req, ' ');
  if (sp == NULL)
    return -1;
  const char *path = sp + 1;
  if (strncmp (path, "http://", 7) == 0)
    {
      path = strchr (path + 7, '/');
      if (path == NULL)
        return -1;
    }
  if (*path != '/')
    return -1;
  c->body_left = strtoull (path + 1, NULL, 10);
  c->head_len = (size_t) snprintf (c->head, sizeof c->head,
                                   "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n"
                                   "Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                                   c->body_left);
  c->writing = 1;
  return 1;
}

/* Writes as much as the socket takes; returns 1 when done, 0 on EAGAIN. */
static int
pump (struct conn *c)
{
  while (c->head_off < c->head_len)
    {
      ssize_t n = send (c->fd, c->head + c->head_off, c->head_len - c->head_off, MSG_NOSIGNAL);
      if (n < 0)
        return errno == EAGAIN ? 0 : -1;
      c->head_off += (size_t) n;
    }
  while (c->body_left > 0)
    {
      size_t want = c->body_left < CHUNK ? (size_t) c->body_left : CHUNK;
      off_t off = 0;
      ssize_t n = sendfile (c->fd, body_fd, &off, want);
      if (n < 0)
        return errno == EAGAIN ? 0 : -1;
      c->body_left -= (unsigned long long) n;
    }
  return 1;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: upstream PORT [SECONDS [ADDR [CC]]]\n");
      return 2;
    }
  int port = atoi (argv[1]);
  int limit = argc > 2 ? atoi (argv[2]) : 900;
  signal (SIGPIPE, SIG_IGN);
  body_fd = memfd_create ("upstream-body", MFD_CLOEXEC);
  if (body_fd < 0 || write (body_fd, zeros, CHUNK) != CHUNK)
    {
      perror ("upstream: memfd");
      return 1;
    }
  alarm ((unsigned) limit);

  int ls = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt (ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (argc > 3 && inet_pton (AF_INET, argv[3], &sa.sin_addr) != 1)
    {
      fprintf (stderr, "upstream: bad address %s\n", argv[3]);
      return 2;
    }
  if (argc > 4 && setsockopt (ls, IPPROTO_TCP, TCP_CONGESTION, argv[4], (socklen_t) strlen (argv[4])) < 0)
    {
      fprintf (stderr, "upstream: TCP_CONGESTION %s: %s\n", argv[4], strerror (errno));
      return 1;
    }
  if (bind (ls, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (ls, 4096) < 0)
    {
      perror ("upstream: bind/listen");
      return 1;
    }
  char cc[32] = "";
  socklen_t cclen = sizeof cc - 1;
  if (getsockopt (ls, IPPROTO_TCP, TCP_CONGESTION, cc, &cclen) == 0)
    fprintf (stderr, "upstream: congestion control %s\n", cc);
  int ep = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
  epoll_ctl (ep, EPOLL_CTL_ADD, ls, &ev);

  struct epoll_event evs[256];
  for (;;)
    {
      int n = epoll_wait (ep, evs, 256, -1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return 1;
      for (int i = 0; i < n; i++)
        {
          struct conn *c = evs[i].data.ptr;
          if (c == NULL)
            {
              int fd;
              while ((fd = accept4 (ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
                {
                  if (fd >= MAX_CONN)
                    {
                      close (fd);
                      continue;
                    }
                  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                  c = calloc (1, sizeof *c);
                  c->fd = fd;
                  conns[fd] = c;
                  struct epoll_event cev = { .events = EPOLLIN, .data.ptr = c };
                  epoll_ctl (ep, EPOLL_CTL_ADD, fd, &cev);
                }
              continue;
            }
          if (!c->writing)
            {
              ssize_t r = recv (c->fd, c->req + c->req_len, sizeof c->req - 1 - c->req_len, 0);
              if (r <= 0)
                {
                  if (r < 0 && errno == EAGAIN)
                    continue;
                  conn_close (ep, c);
                  continue;
                }
              c->req_len += (size_t) r;
              int p = parse_request (c);
              if (p < 0)
                {
                  conn_close (ep, c);
                  continue;
                }
              if (p == 0)
                continue;
            }
          int done = pump (c);
          if (done != 0)
            {
              /* done or error: either way the exchange is over */
              shutdown (c->fd, SHUT_WR);
              conn_close (ep, c);
            }
          else
            {
              struct epoll_event wev = { .events = EPOLLOUT, .data.ptr = c };
              epoll_ctl (ep, EPOLL_CTL_MOD, c->fd, &wev);
            }
        }
    }
}
