/* nswrap.c - benchmark helper: the one extra exec every runtime invocation
 * in bench/run.sh goes through, so the runtimes pay the same wrapper, and
 * the way it shows them a cgroup layout other than the host's.
 *
 *   nswrap RUNTIME ARGS...      exec RUNTIME unchanged: the host's layout
 *                               (hybrid here)
 *   nswrap -u RUNTIME ARGS...   v1-only view: first unshare(CLONE_NEWNS)
 *                               and detach /sys/fs/cgroup/unified in the
 *                               new mount namespace, then exec
 *   nswrap -2 RUNTIME ARGS...   v2-only view: unshare(CLONE_NEWNS) and
 *                               mount cgroup2 over /sys/fs/cgroup, then
 *                               exec
 *
 * Why -u: crun 1.8 refuses hybrid hosts whose cgroup2 mount still holds a
 * controller ("cgroups in hybrid mode not supported, drop all controllers
 * from cgroupv2"; here hugetlb sits on the unified hierarchy), and it does
 * so even with --cgroup-manager=disabled.  Hiding the unified mount in a
 * private mount namespace makes a runtime see a plain cgroup v1 host
 * without touching the host's cgroup layout; the container keeps the
 * mount namespace it is cloned from, so nothing leaks to the host.
 *
 * Why -2 is only a view: a controller bound to a v1 hierarchy cannot be
 * enabled on the unified one (cgroups(7), "Cgroups version 2"), so the
 * cgroup2 root mounted here offers only the controllers no v1 hierarchy
 * holds (hugetlb on this machine).  The runtimes see a v2-only host and
 * take their v2 paths (one mkdir, one cgroup.procs write, no per-hierarchy
 * walk); what a v2 host with memory, cpu, io and pids enabled costs on top
 * needs a boot with cgroup_no_v1=all, which a shared machine cannot get.
 *
 * The cost of -u and -2 (one unshare, one mount change) is measured by
 * run.sh as its own rows.  Built static so its own start-up is as small as
 * an exec gets. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/* private_mount_ns: unshare the mount namespace and stop propagation back
 * to the host; returns 0, or -1 after printing why. */
static int
private_mount_ns (void)
{
  if (unshare (CLONE_NEWNS) < 0)
    {
      perror ("nswrap: unshare(CLONE_NEWNS)");
      return -1;
    }
  /* On hosts with shared propagation (systemd makes / shared) the mount
   * changes below would otherwise propagate back to the host. */
  if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    {
      perror ("nswrap: make / rslave");
      return -1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  int first = 1;

  if (argc > 1 && strcmp (argv[1], "-u") == 0)
    {
      if (private_mount_ns () < 0)
        return 125;
      /* Not an error when absent: a pure v1 or pure v2 host has nothing
       * to hide. */
      umount2 ("/sys/fs/cgroup/unified", MNT_DETACH);
      first = 2;
    }
  else if (argc > 1 && strcmp (argv[1], "-2") == 0)
    {
      if (private_mount_ns () < 0)
        return 125;
      if (mount ("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        {
          perror ("nswrap: mount cgroup2 on /sys/fs/cgroup");
          return 125;
        }
      first = 2;
    }
  if (first >= argc)
    {
      fprintf (stderr, "usage: nswrap [-u|-2] RUNTIME [ARGS...]\n");
      return 125;
    }
  execv (argv[first], argv + first);
  perror (argv[first]);
  return 127;
}
