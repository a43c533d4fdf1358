/* init.c - the container side of create: stage 1 (joins and creates the
 * namespaces, clones the init) and the container's init (rootfs, hooks in
 * the container, pivot_root, sysctl, console, process attributes, then the
 * wait on exec.fifo and execve).  The runtime side is container.c; the
 * process model is described there. */
#define _GNU_SOURCE
#include "console.h"
#include "create-internal.h"
#include "finalize.h"
#include "hooks.h"
#include "sync.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "../linux/devices.h"
#include "../linux/idmount.h"
#include "../linux/mount.h"
#include "../linux/namespace.h"
#include "../linux/netlink.h"
#include "../linux/procattr.h"
#include "../rollout/lifecycle.h"
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* --------------------------------------------------------- container side */

static void __attribute__ ((noreturn))
child_fail (struct create_ctx *c, pr_error *err)
{
  pr_sync_send_error (c->link.sync_child, err);
  _exit (1);
}

static int
wait_for_start (struct create_ctx *c, pr_error **err)
{
  /* Blocks until `start` opens the fifo for reading.  The fd stays open
   * (close-on-exec) until execve, so `start` sees EOF only once the user
   * process runs, and poststart hooks run after it as the spec requires. */
  int fd = openat (c->fifo_dirfd, "exec.fifo", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open exec.fifo");
  if (pr_write_all (fd, "0", 1) < 0)
    return pr_error_set (err, errno, "write exec.fifo");
  close (c->fifo_dirfd);
  c->fifo_dirfd = -1;
  return 0;
}

/* No mount namespace (inherited): chroot(2) rather than pivot_root, which
 * would move the root of every process of the host's mount namespace. */
static int
enter_root_without_mountns (const char *rootfs, pr_error **err)
{
  if (chdir (rootfs) < 0)
    return pr_error_set (err, errno, "chdir to rootfs `%s`", rootfs);
  if (chroot (".") < 0)
    return pr_error_set (err, errno, "chroot to rootfs `%s`", rootfs);
  if (chdir ("/") < 0)
    return pr_error_set (err, errno, "chdir to / in the rootfs");
  return 0;
}

static void __attribute__ ((noreturn))
container_init (struct create_ctx *c)
{
  pr_error *err = NULL;
  const struct pr_config *cfg = c->cfg;
  const struct pr_process *p = &cfg->process;
  _cleanup_free_ char *exe = NULL;
  _cleanup_free_ char *created_json = NULL;
  _cleanup_strv_ char **env = NULL;
  struct pr_rootfs_opts ro = {
    .rootfs = c->rootfs,
    .in_userns = pr_config_namespace (cfg, CLONE_NEWUSER) != NULL,
    .new_cgroupns = (c->new_flags & CLONE_NEWCGROUP) != 0,
    .no_pivot = c->o->no_pivot,
    .bind_fds = c->bind_fds,
    .dev_fds = c->dev_fds,
  };
  /* validate_config allowed no mount namespace only with nothing to mount. */
  bool own_mountns = pr_config_namespace (cfg, CLONE_NEWNS) != NULL;

  if (pr_sync_expect (c->link.sync_child, PR_SYNC_GO, "runtime", NULL, NULL, &err) < 0)
    _exit (1);
  if (setsid () < 0)
    pr_error_set (&err, errno, "setsid");
  if (err == NULL)
    pr_rollout_init_network (c->rollout, &err);
  if (err == NULL && chdir (c->bundle) < 0)
    pr_error_set (&err, errno, "chdir to bundle `%s`", c->bundle);
  if (err == NULL && own_mountns)
    pr_rootfs_prepare (cfg, &ro, &err);
  if (err == NULL)
    pr_rollout_init_rootfs (c->rollout, c->rootfs, &err);
  if (err == NULL)
    pr_uts_apply (cfg, pr_config_namespace (cfg, CLONE_NEWUTS) != NULL, &err);
  if (err == NULL)
    pr_sync_send (c->link.sync_child, PR_SYNC_HOOKS, 0, NULL, &err);
  if (err == NULL)
    pr_sync_expect (c->link.sync_child, PR_SYNC_HOOKS_DONE, "runtime", NULL, &c->state_json, &err);
  if (err == NULL)
    pr_hooks_run (&cfg->hooks[PR_HOOK_CREATE_CONTAINER], "createContainer", c->state_json, &err);
  if (err == NULL)
    pr_sync_expect (c->link.sync_child, PR_SYNC_STATE, "runtime", NULL, &created_json, &err);
  if (err == NULL && own_mountns)
    pr_rootfs_pivot (cfg, &ro, &err);
  else if (err == NULL)
    enter_root_without_mountns (c->rootfs, &err);
  /* sysctls before readonlyPaths turns /proc/sys read-only. */
  if (err == NULL)
    pr_sysctl_apply (cfg, &err);
  if (err == NULL && own_mountns)
    pr_rootfs_finalize (cfg, &ro, &err);
  if (err == NULL && p->terminal)
    pr_console_setup_slave (c->link.console_fd, p->has_console_size, p->console_height, p->console_width,
                                p->user.uid, &err);
  /* fd 0 is the slave now. */
  if (err == NULL && p->terminal && own_mountns)
    pr_console_mount_dev_console (STDIN_FILENO, &err);
  if (err == NULL)
    pr_finalize_prepare (p, cfg, &exe, &env, &err);
  if (err == NULL)
    pr_finalize_security (p, cfg, c->seccomp_listener, c->state_json, &err);
  if (err)
    child_fail (c, err);
  if (c->link.console_fd >= 0)
    close (c->link.console_fd);
  if (pr_sync_send (c->link.sync_child, PR_SYNC_READY, 0, NULL, &err) < 0)
    _exit (1);
  close (c->link.sync_child);

  if (wait_for_start (c, &err) < 0 ||
      pr_hooks_run (&cfg->hooks[PR_HOOK_START_CONTAINER], "startContainer", created_json, &err) < 0)
    {
      pr_log_fatal_error (err);
      _exit (1);
    }
  pr_finalize_fds (c->listen_fds + c->o->preserve_fds, &c->g->caller_fds);
  if (pr_finalize_seccomp_last (p, cfg, c->seccomp_listener, created_json, &err) < 0)
    {
      pr_log_fatal_error (err);
      _exit (1);
    }
  execve (exe, p->args, env);
  pr_error_set (&err, errno, "exec `%s`", exe);
  pr_log_fatal_error (err);
  _exit (127);
}

/* ------------------------------------------------------------ outer init */

/* The exit code the outer init reports for the container process's wait
 * status: its own exit code, or 128+N when signal N ended it.  A pid 1
 * cannot die by a signal it sends itself (the kernel drops signals with
 * the default action to a namespace's init), and 128+N is what conmon,
 * containerd's shim and `proctor run` report for a process killed by N. */
static int
outer_exit_code (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return 255;
}

/* Pid 1 of the outer pid namespace P_O (procs.h): reaps every process
 * that ends up its child (sessions' orphans in P_O), forwards each signal
 * it is sent to the container's process, and exits with that process's
 * status.  SIGKILL cannot be forwarded, nor does it need to be: the outer
 * init's death kills every process of P_O, the container's included
 * (pid_namespaces(7)).  Holds no fd: stdio is /dev/null. */
static void __attribute__ ((noreturn))
outer_loop (pid_t inner, const sigset_t *all)
{
  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (all, &si);
      if (sig < 0)
        continue;
      if (sig != SIGCHLD)
        {
          kill (inner, sig);
          continue;
        }
      int status;
      pid_t w;
      while ((w = waitpid (-1, &status, WNOHANG)) > 0)
        if (w == inner)
          _exit (outer_exit_code (status));
    }
}

static void
outer_detach_fds (void)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; null >= 0 && fd < 3; fd++)
    dup2 (null, fd);
  pr_close_fds_from (3);
}

/* The process stage 1 clones for a rollout: it makes the agent's pid
 * namespace P_A nested in its own, forks the container's init as P_A's
 * pid 1, then becomes the outer init.  Signals are blocked before the
 * fork so none is lost between it and the loop; the container's init gets
 * the mask stage 1 had. */
static void __attribute__ ((noreturn))
outer_init (struct create_ctx *c)
{
  pr_error *err = NULL;
  sigset_t all, old;
  sigfillset (&all);
  sigdelset (&all, SIGKILL);
  sigdelset (&all, SIGSTOP);
  sigprocmask (SIG_BLOCK, &all, &old);
  if (unshare (CLONE_NEWPID) < 0)
    {
      pr_error_set (&err, errno, "unshare the agent's pid namespace");
      child_fail (c, err);
    }
  pid_t inner = fork ();
  if (inner < 0)
    {
      pr_error_set (&err, errno, "fork the container process");
      child_fail (c, err);
    }
  if (inner == 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      container_init (c);
    }
  prctl (PR_SET_NAME, "init", 0, 0, 0);
  outer_detach_fds ();
  outer_loop (inner, &all);
}

static int
write_time_offsets (const struct pr_config *cfg, pr_error **err)
{
  char buf[128];
  int n = snprintf (buf, sizeof buf, "monotonic %lld %u\nboottime %lld %u\n",
                    (long long) cfg->linux.monotonic_secs, cfg->linux.monotonic_nanosecs,
                    (long long) cfg->linux.boottime_secs, cfg->linux.boottime_nanosecs);
  _cleanup_close_ int fd = open ("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write (fd, buf, n) < 0)
    return pr_error_set (err, errno, "write timens_offsets");
  return 0;
}

static int
become_root_in_userns (pr_error **err)
{
  if (setresgid (0, 0, 0) < 0)
    return pr_error_set (err, errno, "setgid 0 in the user namespace (is 0 mapped?)");
  if (setresuid (0, 0, 0) < 0)
    return pr_error_set (err, errno, "setuid 0 in the user namespace (is 0 mapped?)");
  return 0;
}

void
pr_create_stage1 (struct create_ctx *c)
{
  pr_error *err = NULL;
  const struct pr_config *cfg = c->cfg;
  bool has_userns = pr_config_namespace (cfg, CLONE_NEWUSER) != NULL;

  /* Holding the locked fd would keep `start` and `delete` waiting on the
   * state lock for as long as the container lives. */
  close (c->state_dirfd);
  c->state_dirfd = -1;
  pr_child_link_enter (&c->link);
  /* Idmapped clones, and bind sources the container's root could not
   * reach, need the runtime's own user namespace and credentials: before
   * any namespace is joined or made.  The init inherits the fds. */
  if (pr_bind_sources_open (cfg, c->bundle, &c->bind_fds, &err) < 0)
    child_fail (c, err);
  /* The init cannot mknod in its user namespace: the nodes are made here,
   * as the host's root, when it will have a mount namespace of its own. */
  const struct pr_namespace *mntns = pr_config_namespace (cfg, CLONE_NEWNS);
  if (has_userns && mntns && mntns->path == NULL && pr_devices_open (cfg, &c->dev_fds, &err) < 0)
    child_fail (c, err);
  if (pr_ns_join (cfg, c->ns_fds, true, &err) < 0 || pr_ns_join (cfg, c->ns_fds, false, &err) < 0)
    child_fail (c, err);
  if (c->new_flags & CLONE_NEWUSER)
    {
      if (unshare (CLONE_NEWUSER) < 0)
        {
          pr_error_set (&err, errno, "unshare user namespace");
          child_fail (c, err);
        }
      if (pr_child_userns_ready (c->link.sync_child, &err) < 0)
        _exit (1);
    }
  if (has_userns && become_root_in_userns (&err) < 0)
    child_fail (c, err);
  if (c->new_flags & CLONE_NEWTIME)
    {
      if (unshare (CLONE_NEWTIME) < 0)
        {
          pr_error_set (&err, errno, "unshare time namespace");
          child_fail (c, err);
        }
      if (cfg->linux.has_time_offsets && write_time_offsets (cfg, &err) < 0)
        child_fail (c, err);
    }
  int rest = c->new_flags & ~(CLONE_NEWUSER | CLONE_NEWTIME);
  if (rest && unshare (rest) < 0)
    {
      pr_error_set (&err, errno, "unshare namespaces (flags 0x%x)", rest);
      child_fail (c, err);
    }
  pr_child_clone_and_report (c->link.sync_child, "container process");
  if (c->nested_pidns)
    outer_init (c);
  container_init (c);
}
