#define _GNU_SOURCE
/* hooks.c - runs OCI hooks (runtime-spec config.md "POSIX-platform Hooks"):
 * fork + execve of each hook with the state JSON on a stdin pipe, waiting on
 * a pidfd with poll() so the timeout needs no signal handler or alarm(). */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

/* Without a pidfd (kernel < 5.3) we poll waitpid() at this interval. */
#define FALLBACK_POLL_MS 10

struct hook_ctx
{
  const char *kind;  /* "prestart " (with the space) or "", never NULL */
  const char *path;
};

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Moves fd above the stdio range, so the dup2()s in the child can never
 * clobber it or leave a CLOEXEC copy on 0..2 when the runtime was started
 * with a closed stdio fd. */
static int
move_above_stdio (int *fd)
{
  if (*fd > 2)
    return 0;
  int n = fcntl (*fd, F_DUPFD_CLOEXEC, 3);
  if (n < 0)
    return -1;
  close (*fd);
  *fd = n;
  return 0;
}

/* In the forked child: only async-signal-safe calls from here to execve. */
static void __attribute__ ((noreturn))
exec_hook (const struct pr_hook *h, int stdin_r, int errpipe_w)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* Ignored dispositions survive execve; a hook must start with defaults
   * (SIGPIPE in particular). */
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      signal (s, SIG_DFL);

  if (dup2 (stdin_r, 0) < 0)
    goto fail;
  /* The hook is a host program: it must not see the runtime's fds (state
   * dir locks, log file, console sockets); fd 0..2 stay. */
  pr_cloexec_fds_from (3);

  char *default_argv[] = { h->path, NULL };
  char *empty_env[] = { NULL };
  char **argv = (h->args && h->args[0]) ? h->args : default_argv;
  char **envp = h->env ? h->env : empty_env;
  execve (h->path, argv, envp);

fail:;
  int e = errno;
  (void) !write (errpipe_w, &e, sizeof e);
  _exit (127);
}

static int
status_error (const struct hook_ctx *c, int status, pr_error **err)
{
  if (WIFEXITED (status))
    {
      if (WEXITSTATUS (status) == 0)
        return 0;
      return pr_error_set (err, 0, "%shook `%s` exited with status %d", c->kind, c->path,
                           WEXITSTATUS (status));
    }
  if (WIFSIGNALED (status))
    return pr_error_set (err, 0, "%shook `%s` killed by signal %d", c->kind, c->path, WTERMSIG (status));
  return pr_error_set (err, 0, "%shook `%s` ended with wait status %#x", c->kind, c->path, status);
}

static int
reap (pid_t pid, int *status)
{
  for (;;)
    {
      pid_t r = waitpid (pid, status, 0);
      if (r == pid)
        return 0;
      if (r < 0 && errno != EINTR)
        return -1;
    }
}

/* Feeds state (nonblocking) and waits for the child, killing it at the
 * deadline (-1 = none).  We keep the pipe's read end open ourselves so a hook
 * that exits without reading makes our write block (EAGAIN), never raise
 * SIGPIPE: no signal disposition games needed. */
static int
feed_and_wait (const struct hook_ctx *c, pid_t pid, int pidfd, int *stdin_w, const char *data,
               size_t len, int timeout_s, int *status, pr_error **err)
{
  size_t off = 0;
  int64_t deadline = timeout_s > 0 ? now_ms () + (int64_t) timeout_s * 1000 : -1;

  if (len == 0)
    {
      close (*stdin_w);
      *stdin_w = -1;
    }

  for (;;)
    {
      if (pidfd < 0)
        {
          pid_t r = waitpid (pid, status, WNOHANG);
          if (r == pid)
            return 0;
          if (r < 0 && errno != EINTR)
            return pr_error_set (err, errno, "wait for %shook `%s`", c->kind, c->path);
        }

      struct pollfd fds[2];
      nfds_t n = 0;
      if (pidfd >= 0)
        fds[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
      if (*stdin_w >= 0)
        fds[n++] = (struct pollfd){ .fd = *stdin_w, .events = POLLOUT };

      int wait_ms = -1;
      if (deadline >= 0)
        {
          int64_t left = deadline - now_ms ();
          if (left <= 0)
            {
              kill (pid, SIGKILL);
              if (reap (pid, status) < 0)
                return pr_error_set (err, errno, "wait for %shook `%s`", c->kind, c->path);
              return pr_error_set (err, 0, "%shook `%s` timed out after %d seconds", c->kind, c->path,
                                   timeout_s);
            }
          wait_ms = left > 1000000 ? 1000000 : (int) left;
        }
      if (pidfd < 0 && (wait_ms < 0 || wait_ms > FALLBACK_POLL_MS))
        wait_ms = FALLBACK_POLL_MS;

      int r = poll (fds, n, wait_ms);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          int e = errno;
          kill (pid, SIGKILL);
          reap (pid, status);
          return pr_error_set (err, e, "poll on %shook `%s`", c->kind, c->path);
        }

      for (nfds_t i = 0; i < n; i++)
        {
          if (fds[i].revents == 0)
            continue;
          if (fds[i].fd == pidfd)
            {
              if (reap (pid, status) < 0)
                return pr_error_set (err, errno, "wait for %shook `%s`", c->kind, c->path);
              return 0;
            }
          ssize_t w = write (*stdin_w, data + off, len - off);
          if (w > 0)
            off += (size_t) w;
          else if (w < 0 && errno != EAGAIN && errno != EINTR)
            off = len; /* the hook does not want its stdin: stop feeding */
          if (off == len)
            {
              /* EOF on the hook's stdin. */
              close (*stdin_w);
              *stdin_w = -1;
            }
        }
    }
}

static int
run_one (const struct pr_hook *h, const char *kind, const char *state_json, pr_error **err)
{
  struct hook_ctx c = { .kind = kind, .path = h->path ? h->path : "" };
  int in[2], ep[2];

  if (h->path == NULL || h->path[0] == '\0')
    return pr_error_invalid (err, "%shook has no path", kind);

  if (pipe2 (in, O_CLOEXEC) < 0)
    return pr_error_set (err, errno, "pipe for %shook `%s`", kind, c.path);
  _cleanup_close_ int in_r = in[0], in_w = in[1];
  if (pipe2 (ep, O_CLOEXEC) < 0)
    return pr_error_set (err, errno, "pipe for %shook `%s`", kind, c.path);
  _cleanup_close_ int ep_r = ep[0], ep_w = ep[1];
  if (move_above_stdio (&in_r) < 0 || move_above_stdio (&in_w) < 0 || move_above_stdio (&ep_r) < 0
      || move_above_stdio (&ep_w) < 0)
    return pr_error_set (err, errno, "dup fd for %shook `%s`", kind, c.path);

  size_t len = state_json ? strlen (state_json) : 0;

  pid_t pid = fork ();
  if (pid < 0)
    return pr_error_set (err, errno, "fork %shook `%s`", kind, c.path);
  if (pid == 0)
    exec_hook (h, in_r, ep_w);

  close (ep_w);
  ep_w = -1;

  /* No reuse race: the pid stays ours until we reap it. */
  _cleanup_close_ int pidfd = pr_sys_pidfd_open (pid, 0);
  if (pidfd < 0)
    pr_debug ("pidfd_open for %shook `%s`: %s; polling waitpid", kind, c.path, strerror (errno));

  int fl = fcntl (in_w, F_GETFL);
  if (fl >= 0)
    fcntl (in_w, F_SETFL, fl | O_NONBLOCK);

  int status = 0;
  int timeout_s = h->has_timeout ? h->timeout : 0;
  if (feed_and_wait (&c, pid, pidfd, &in_w, state_json, len, timeout_s, &status, err) < 0)
    return -1;

  int exec_errno = 0;
  if (read (ep_r, &exec_errno, sizeof exec_errno) == (ssize_t) sizeof exec_errno)
    return pr_error_set (err, exec_errno, "exec %shook `%s`", kind, c.path);

  return status_error (&c, status, err);
}

int
pr_hooks_run (const struct pr_hook_list *hooks, const char *kind_name, const char *state_json, pr_error **err)
{
  if (hooks == NULL || hooks->n == 0)
    return 0;
  /* Messages read "prestart hook `/x` ..." or, without a kind, "hook `/x` ...". */
  _cleanup_free_ char *kind = kind_name ? xasprintf ("%s ", kind_name) : xstrdup ("");
  for (size_t i = 0; i < hooks->n; i++)
    {
      pr_debug ("running %shook `%s`", kind, hooks->v[i].path ? hooks->v[i].path : "");
      if (run_one (&hooks->v[i], kind, state_json, err) < 0)
        return -1;
    }
  return 0;
}
