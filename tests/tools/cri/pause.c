/* pause.c - the pod sandbox's process for tests/engines/cri.bats: holds the
 * pod's namespaces open until SIGTERM or SIGINT, and reaps the children
 * that end up under it (a pod sharing its pid namespace makes this pid 1).
 * Built static by tests/tools/cri/containerd.sh into a one-file image. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (void)
{
  sigset_t set;
  int sig = 0;

  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGCHLD);
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
    return 1;
  for (;;)
    {
      if (sigwait (&set, &sig) != 0)
        return 1;
      if (sig != SIGCHLD)
        return 0;
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
    }
}
