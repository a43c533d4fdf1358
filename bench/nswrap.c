/* nswrap.c - benchmark helper: the one extra exec every runtime invocation
 * in bench/run.sh goes through, so the three runtimes pay the same wrapper.
 *
 *   nswrap RUNTIME ARGS...      exec RUNTIME unchanged (proctor, runc)
 *   nswrap -u RUNTIME ARGS...   first unshare(CLONE_NEWNS) and detach
 *                               /sys/fs/cgroup/unified in the new mount
 *                               namespace, then exec (crun)
 *
 * Why -u: crun 1.8 refuses hybrid hosts whose cgroup2 mount still holds a
 * controller ("cgroups in hybrid mode not supported, drop all controllers
 * from cgroupv2"; here hugetlb sits on the unified hierarchy), and it does
 * so even with --cgroup-manager=disabled.  Hiding the unified mount in a
 * private mount namespace makes crun see a plain cgroup v1 host without
 * touching the host's cgroup layout; the container keeps the mount
 * namespace it is cloned from, so nothing leaks to the host.  The cost of
 * -u (one unshare + one umount2) is measured by run.sh as its own row.
 * Built static so its own start-up is as small as an exec gets. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  int first = 1;

  if (argc > 1 && strcmp (argv[1], "-u") == 0)
    {
      if (unshare (CLONE_NEWNS) < 0)
        {
          perror ("nswrap: unshare(CLONE_NEWNS)");
          return 125;
        }
      /* On hosts with shared propagation (systemd makes / shared) the
       * umount below would otherwise propagate back to the host. */
      if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
        {
          perror ("nswrap: make / rslave");
          return 125;
        }
      /* Not an error when absent: a pure v1 or pure v2 host has nothing
       * to hide and crun accepts it as it is. */
      umount2 ("/sys/fs/cgroup/unified", MNT_DETACH);
      first = 2;
    }
  if (first >= argc)
    {
      fprintf (stderr, "usage: nswrap [-u] RUNTIME [ARGS...]\n");
      return 125;
    }
  execv (argv[first], argv + first);
  perror (argv[first]);
  return 127;
}
