/* run.c - `run` (create + start + wait + delete, as runc run) and the
 * signal forwarding a foreground run or exec needs. */
#define _GNU_SOURCE
#include "console.h"
#include "container.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* -------------------------------------------------------------------- run */

static int
exit_code_of (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return 255;
}

/* Forwards signals to the container process until it exits; returns its
 * exit code.  A signalfd keeps this free of global handlers. */
int
pr_wait_forwarding (pid_t pid, sigset_t *mask)
{
  int sfd = signalfd (-1, mask, SFD_CLOEXEC);
  int status = 0;
  for (;;)
    {
      pid_t r = waitpid (pid, &status, WNOHANG);
      if (r == pid)
        break;
      if (r < 0 && errno != EINTR)
        break;
      struct signalfd_siginfo si;
      if (sfd >= 0 && read (sfd, &si, sizeof si) == sizeof si && si.ssi_signo != SIGCHLD)
        kill (pid, si.ssi_signo);
      else if (sfd < 0)
        usleep (10000);
    }
  if (sfd >= 0)
    close (sfd);
  return exit_code_of (status);
}

void
pr_forward_sigset (sigset_t *mask)
{
  static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD };
  sigemptyset (mask);
  for (size_t i = 0; i < PR_ARRAY_SIZE (fwd); i++)
    sigaddset (mask, fwd[i]);
}

int
pr_container_run (const struct pr_global *g, const struct pr_create_opts *o, bool detach, bool keep,
                  int *exit_code, pr_error **err)
{
  pid_t pid = 0;
  int master = -1;
  sigset_t mask, old;

  pr_forward_sigset (&mask);
  if (!detach)
    sigprocmask (SIG_BLOCK, &mask, &old);
  struct pr_create_opts co = *o;
  co.local_tty = !detach && o->console_socket == NULL;
  if (pr_container_create (g, &co, &pid, &master, err) < 0)
    return -1;
  if (pr_container_start (g, o->id, err) < 0)
    {
      pr_container_delete (g, o->id, true, NULL);
      return -1;
    }
  *exit_code = 0;
  if (detach)
    return 0;
  if (master >= 0)
    {
      pr_error *e = NULL;
      if (pr_console_proxy (master, pid, &e) < 0)
        {
          pr_debug ("console proxy: %s", e->msg);
          pr_error_free (&e);
        }
      close (master);
    }
  *exit_code = pr_wait_forwarding (pid, &mask);
  /* The signals stay blocked until the container is deleted: unblocking
   * one that arrived meanwhile would kill us before the clean-up. */
  int r = keep ? 0 : pr_container_delete (g, o->id, true, err);
  sigprocmask (SIG_SETMASK, &old, NULL);
  return r;
}
