/* sandbox.c - the egress helper's least privilege: once its sockets, log
 * and resolver files are open, the helper parses what the agent sends as
 * an unprivileged uid and gid with no supplementary groups, no
 * capabilities (none permitted, none in the bounding or ambient sets),
 * no_new_privs, a root that is an empty read-only tmpfs in a mount
 * namespace of its own, and a seccomp allowlist of the system calls its
 * event loop makes (anything else kills it).
 * Source: SPEC section 2 "Network"; capabilities(7), prctl(2)
 * PR_SET_NO_NEW_PRIVS / PR_CAPBSET_DROP / PR_CAP_AMBIENT, pivot_root(2)
 * (the pivot_root(".", ".") form), seccomp(2), seccomp_rule_add(3). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress-internal.h"
#include "../../base/syscall.h"
#include "../../base/util.h"

/* A root of nothing: a read-only tmpfs mounted on dir inside a new mount
 * namespace, made the root with pivot_root(".", ".") and the old root
 * detached, so no path the helper could name reaches a host file. */
static int
empty_root (const char *dir, pr_error **err)
{
  if (unshare (CLONE_NEWNS) < 0)
    return pr_error_set (err, errno, "egress sandbox: unshare the mount namespace");
  /* Nothing done here may propagate back to the host's mounts. */
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return pr_error_set (err, errno, "egress sandbox: make mounts private");
  if (mount ("none", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=4,mode=0555") < 0)
    return pr_error_set (err, errno, "egress sandbox: mount an empty tmpfs on `%s`", dir);
  if (chdir (dir) < 0)
    return pr_error_set (err, errno, "egress sandbox: chdir `%s`", dir);
  if (pr_sys_pivot_root (".", ".") < 0)
    return pr_error_set (err, errno, "egress sandbox: pivot_root");
  if (umount2 (".", MNT_DETACH) < 0)
    return pr_error_set (err, errno, "egress sandbox: detach the old root");
  if (chdir ("/") < 0)
    return pr_error_set (err, errno, "egress sandbox: chdir /");
  if (mount (NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    return pr_error_set (err, errno, "egress sandbox: make the empty root read-only");
  return 0;
}

static int
drop_identity (uid_t uid, gid_t gid, pr_error **err)
{
  /* The bounding set first: dropping from it needs CAP_SETPCAP, which
   * goes with the uid change below. */
  for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
    if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
      return pr_error_set (err, errno, "egress sandbox: drop capability %d from the bounding set", cap);
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return pr_error_set (err, errno, "egress sandbox: clear the ambient capabilities");
  if (setgroups (0, NULL) < 0)
    return pr_error_set (err, errno, "egress sandbox: drop the supplementary groups");
  if (setresgid (gid, gid, gid) < 0)
    return pr_error_set (err, errno, "egress sandbox: setresgid %u", (unsigned) gid);
  if (setresuid (uid, uid, uid) < 0)
    return pr_error_set (err, errno, "egress sandbox: setresuid %u", (unsigned) uid);
  /* The uid change cleared the permitted and effective sets (no
   * SECBIT_KEEP_CAPS); clearing them with libcap says so explicitly and
   * covers a uid of 0 given on purpose. */
  cap_t none = cap_init ();
  if (none == NULL)
    return pr_error_set (err, errno, "egress sandbox: cap_init");
  int r = cap_set_proc (none);
  cap_free (none);
  if (r < 0)
    return pr_error_set (err, errno, "egress sandbox: clear the capability sets");
  return 0;
}

/* The system calls of the event loop, the relay, the resolver and the
 * allocator, found by running every egress suite under the filter.  The
 * argument checks narrow the wide ones: new sockets only for TCP/UDP over
 * IPv4 and IPv6 (upstream connects, never netlink or unix), ioctl only
 * FIONREAD, no executable mappings.  open(2) in any form fails with EACCES
 * rather than killing (nothing in the root to open anyway). */
static int
load_filter (pr_error **err)
{
  static const char *const allow[] = {
    "read", "write", "readv", "writev", "pread64", "pwrite64", "close", "fstat", "newfstatat", "lseek",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl", "poll", "ppoll",
    "connect", "accept", "accept4", "getsockname", "getpeername", "setsockopt", "getsockopt", "shutdown",
    "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
    "splice", "pipe2", "fcntl",
    "clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
    "brk", "munmap", "mremap", "madvise",
    "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack", "restart_syscall",
    "getpid", "gettid", "getuid", "geteuid", "getgid", "getegid", "tgkill", "exit", "exit_group",
    "getrandom", "pidfd_open", "futex", "sched_yield", "getrlimit", "prlimit64", "uname",
  };
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_KILL_PROCESS);
  int r = 0;

  if (ctx == NULL)
    return pr_error_set (err, ENOMEM, "egress sandbox: seccomp_init");
  /* A binary tree of the rules rather than a list: every system call of
   * the relay goes through the filter (best effort: older libseccomp
   * builds the list). */
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (size_t i = 0; i < PR_ARRAY_SIZE (allow) && r == 0; i++)
    {
      int nr = seccomp_syscall_resolve_name (allow[i]);
      if (nr == __NR_SCMP_ERROR)
        continue; /* not on this architecture */
      r = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, nr, 0);
    }
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (socket), 1, SCMP_A0 (SCMP_CMP_EQ, AF_INET));
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (socket), 1, SCMP_A0 (SCMP_CMP_EQ, AF_INET6));
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (ioctl), 1, SCMP_A1 (SCMP_CMP_EQ, FIONREAD));
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (mmap), 1, SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (mprotect), 1, SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EACCES), SCMP_SYS (openat), 0);
  if (r == 0 && seccomp_syscall_resolve_name ("open") != __NR_SCMP_ERROR)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EACCES), SCMP_SYS (open), 0);
  if (r == 0)
    r = seccomp_load (ctx);
  seccomp_release (ctx);
  if (r < 0)
    return pr_error_set (err, -r, "egress sandbox: load the seccomp filter");
  return 0;
}

int
pr_egress_sandbox (const struct pr_egress_config *cfg, pr_error **err)
{
  /* no_new_privs first: it makes the filter loadable without
   * CAP_SYS_ADMIN and keeps any execve from gaining privileges. */
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return pr_error_set (err, errno, "egress sandbox: no_new_privs");
  if (empty_root (cfg->sandbox_dir ? cfg->sandbox_dir : "/tmp", err) < 0)
    return -1;
  if (drop_identity (cfg->uid, cfg->gid, err) < 0)
    return -1;
  return load_filter (err);
}
