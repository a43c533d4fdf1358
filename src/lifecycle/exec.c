/* exec.c - `exec`: a new process in a running container (see exec.h).
 *
 *   runtime ──fork──> joiner ──clone(CLONE_PARENT)──> process
 *
 * The joiner setns()es into the init's namespaces (user first, but after
 * any the container joined from outside its user namespace; mount last);
 * the process is cloned so that a joined pid or time namespace
 * applies to it, and CLONE_PARENT makes it the runtime's child so a
 * foreground exec can wait for it.
 *
 * In a rollout with nested pid namespaces (rollout/procs.h) an agent exec
 * joins the pid namespace of the container's process (the agent's); a
 * verifier or setup exec joins the state pid's (the outer one), in a mount
 * namespace of its own whose /proc is a procfs of that namespace. */
#define _GNU_SOURCE
#include "exec.h"
#include "console.h"
#include "finalize.h"
#include "state.h"
#include "sync.h"
#include "../base/env.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../cgroup/manager.h"
#include "../config/config.h"
#include "../linux/caps.h"
#include "../linux/namespace.h"
#include "../rollout/lifecycle.h"
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <yajl/yajl_tree.h>

struct exec_ctx
{
  const struct pr_global *g;
  const struct pr_exec_opts *o;
  struct pr_state *st;
  struct pr_config *cfg;
  int ns_fds[8]; /* indexed like pr_ns_join_order */
  int root_fd;   /* the init's root when it shares our mount namespace, else -1 */
  struct pr_child_link link; /* sync pair and console fds (child.h) */
  struct pr_rollout_exec_plan plan;   /* the rollout's choices (empty: not a rollout) */
  int seccomp_listener;               /* connected listenerPath socket, or -1 */
};

/* ------------------------------------------------------- process building */

static int
parse_user (const char *spec, struct pr_user *u, pr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (spec);
  char *colon = strchr (copy, ':');
  uint64_t uid, gid = 0;
  if (colon)
    *colon = '\0';
  if (pr_parse_u64 (copy, &uid) < 0 || uid > UINT32_MAX
      || (colon && (pr_parse_u64 (colon + 1, &gid) < 0 || gid > UINT32_MAX)))
    return pr_error_invalid (err, "invalid --user `%s`: expected UID[:GID]", spec);
  u->uid = uid;
  u->gid = colon ? gid : 0;
  return 0;
}

static char **
caps_add (char **set, char **add)
{
  for (size_t i = 0; add && add[i]; i++)
    set = pr_strv_append (set ? set : xmalloc0 (sizeof (char *)), add[i]);
  return set;
}

static int
apply_cli_overrides (struct pr_process *p, const struct pr_exec_opts *o, pr_error **err)
{
  if (o->args && o->args[0])
    {
      pr_strv_free (p->args);
      p->args = pr_strv_dup (o->args);
    }
  p->terminal = o->tty;
  for (size_t i = 0; o->env && o->env[i]; i++)
    p->env = pr_env_override (p->env, o->env[i]);
  if (o->cwd)
    {
      free (p->cwd);
      p->cwd = xstrdup (o->cwd);
    }
  if (o->user && parse_user (o->user, &p->user, err) < 0)
    return -1;
  if (o->additional_gids && o->additional_gids[0])
    {
      size_t n = pr_strv_len (o->additional_gids);
      free (p->user.additional_gids);
      p->user.additional_gids = xmalloc0 (n * sizeof (uint32_t));
      for (size_t i = 0; i < n; i++)
        {
          uint64_t g;
          if (pr_parse_u64 (o->additional_gids[i], &g) < 0 || g > UINT32_MAX)
            return pr_error_invalid (err, "invalid --additional-gids `%s`", o->additional_gids[i]);
          p->user.additional_gids[i] = g;
        }
      p->user.n_additional_gids = n;
    }
  if (o->caps && o->caps[0])
    {
      struct pr_capabilities *c = &p->capabilities;
      p->has_capabilities = true;
      c->bounding = caps_add (c->bounding, o->caps);
      c->effective = caps_add (c->effective, o->caps);
      c->permitted = caps_add (c->permitted, o->caps);
      c->inheritable = caps_add (c->inheritable, o->caps);
      c->ambient = caps_add (c->ambient, o->caps);
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->apparmor)
    {
      free (p->apparmor_profile);
      p->apparmor_profile = xstrdup (o->apparmor);
    }
  if (o->process_label)
    {
      free (p->selinux_label);
      p->selinux_label = xstrdup (o->process_label);
    }
  if (p->args == NULL || p->args[0] == NULL)
    return pr_error_invalid (err, "exec: no command given");
  /* Warns once for names that will be ignored (--cap or process.json). */
  if (p->has_capabilities && pr_caps_validate (&p->capabilities, err) < 0)
    return -1;
  return 0;
}

static int
build_process (struct exec_ctx *c, pr_error **err)
{
  if (c->o->process_path == NULL)
    return apply_cli_overrides (&c->cfg->process, c->o, err);
  _cleanup_free_ char *text = NULL;
  size_t len;
  struct pr_process p = { 0 };
  yajl_val tree = NULL;
  if (pr_read_file (c->o->process_path, &text, &len, err) < 0)
    return -1;
  if (pr_process_parse (text, len, &p, &tree, err) < 0)
    return pr_error_wrap (err, "%s", c->o->process_path);
  if (tree)
    yajl_tree_free (tree);
  pr_process_free_contents (&c->cfg->process);
  c->cfg->process = p;
  if (c->o->tty)
    c->cfg->process.terminal = true;
  if (c->o->no_new_privs)
    c->cfg->process.no_new_privileges = true;
  return 0;
}

/* ------------------------------------------------------- container side */

static void __attribute__ ((noreturn))
fail (struct exec_ctx *c, pr_error *err)
{
  pr_sync_send_error (c->link.sync_child, err);
  _exit (1);
}

static void __attribute__ ((noreturn))
exec_process (struct exec_ctx *c)
{
  pr_error *err = NULL;
  const struct pr_process *p = &c->cfg->process;
  _cleanup_free_ char *exe = NULL;
  _cleanup_strv_ char **env = NULL;
  _cleanup_free_ char *json = pr_state_to_json (c->st, "running");

  /* The plan may need the process held until the runtime has done its
   * part (an egress token registered at the helper). */
  if (pr_rollout_exec_holds_start (&c->plan) && pr_sync_expect (c->link.sync_child, PR_SYNC_GO, "runtime", NULL, NULL, &err) < 0)
    fail (c, err);
  if (p->terminal)
    {
      if (setsid () < 0)
        pr_error_set (&err, errno, "setsid");
      if (err == NULL)
        pr_console_setup_slave (c->link.console_fd, p->has_console_size, p->console_height, p->console_width,
                                p->user.uid, &err);
    }
  if (err == NULL)
    pr_finalize_prepare (p, c->cfg, &exe, &env, &err);
  if (err == NULL)
    pr_finalize_security (p, c->cfg, c->seccomp_listener, json, &err);
  if (err)
    fail (c, err);
  if (c->link.console_fd >= 0)
    close (c->link.console_fd);
  pr_finalize_fds (c->o->preserve_fds, &c->g->caller_fds);
  if (pr_finalize_seccomp_last (p, c->cfg, c->seccomp_listener, json, &err) < 0)
    fail (c, err);
  execve (exe, p->args, env);
  pr_error_set (&err, errno, "exec `%s`", exe);
  fail (c, err);
}

/* After joining the container's namespaces but its user namespace, when
 * the plan gives the exec a user namespace of its own: a new one (the
 * runtime copies the container's id map into it), then the plan's steps
 * inside it. */
static int
enter_own_userns (struct exec_ctx *c, pr_error **err)
{
  if (unshare (CLONE_NEWUSER) < 0)
    return pr_error_set (err, errno, "create the verifier's user namespace");
  if (pr_child_userns_ready (c->link.sync_child, err) < 0)
    return -1;
  return pr_rollout_exec_in_own_userns (&c->plan, err);
}

static int
join_ns (struct exec_ctx *c, size_t i, pr_error **err)
{
  if (setns (c->ns_fds[i], pr_ns_join_order[i]) < 0)
    return pr_error_set (err, errno, "join the container's %s namespace", pr_namespace_name (pr_ns_join_order[i]));
  close (c->ns_fds[i]);
  c->ns_fds[i] = -1;
  return 0;
}

/* setns() into the init's namespaces.  The user namespace comes first,
 * so that the namespaces it owns can be joined with the capabilities it
 * gives; but a namespace the container joined by path from outside it (a
 * Kubernetes pod's ipc and uts, owned by the initial user namespace) can
 * only be joined before: from inside the container's user namespace the
 * joiner holds no capability over it (setns(2): CAP_SYS_ADMIN in the
 * namespace's owning user namespace), so those go first. */
static int
join_namespaces (struct exec_ctx *c, bool own_userns, pr_error **err)
{
  int userfd = c->ns_fds[0]; /* pr_ns_join_order[0] is CLONE_NEWUSER */
  for (size_t i = 1; userfd >= 0 && i < PR_ARRAY_SIZE (pr_ns_join_order); i++)
    {
      bool owned;
      if (c->ns_fds[i] < 0)
        continue;
      if (pr_ns_owned_by (c->ns_fds[i], userfd, &owned, err) < 0)
        return -1;
      if (!owned && join_ns (c, i, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < PR_ARRAY_SIZE (pr_ns_join_order); i++)
    {
      /* An exec with a user namespace of its own (the verifier's: a
       * sibling with the same map, so that agent root holds no capability
       * over it) does not join the container's. */
      if (c->ns_fds[i] < 0 || (own_userns && pr_ns_join_order[i] == CLONE_NEWUSER))
        continue;
      if (join_ns (c, i, err) < 0)
        return -1;
    }
  return 0;
}

static int
pid_ns_index (void)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (pr_ns_join_order); i++)
    if (pr_ns_join_order[i] == CLONE_NEWPID)
      return (int) i;
  return -1;
}

static void __attribute__ ((noreturn))
joiner (struct exec_ctx *c)
{
  pr_error *err = NULL;
  pr_child_link_enter (&c->link);
  bool own_userns = pr_rollout_exec_own_userns (&c->plan);
  int proc_fd = -1;
  int pi = pid_ns_index ();
  if (pr_rollout_exec_before_join (&c->plan, pi >= 0 ? c->ns_fds[pi] : -1, &proc_fd, &err) < 0)
    fail (c, err);
  if (join_namespaces (c, own_userns, &err) < 0)
    fail (c, err);
  if (own_userns && enter_own_userns (c, &err) < 0)
    fail (c, err);
  if (c->root_fd >= 0 && (fchdir (c->root_fd) < 0 || chroot (".") < 0 || chdir ("/") < 0))
    {
      pr_error_set (&err, errno, "enter the container's root");
      fail (c, err);
    }
  if (pr_rollout_exec_after_root (&c->plan, proc_fd, &err) < 0)
    fail (c, err);
  pr_child_clone_and_report (c->link.sync_child, "exec process");
  exec_process (c);
}

/* ---------------------------------------------------------- runtime side */

static int
open_namespaces (struct exec_ctx *c, pr_error **err)
{
  /* Join every namespace the init does not share with us, whether
   * config.json listed it or the runtime added it (rollouts add a user and
   * a network namespace). */
  for (size_t i = 0; i < PR_ARRAY_SIZE (pr_ns_join_order); i++)
    {
      int type = pr_ns_join_order[i];
      int self = -1;
      struct stat a, b;
      c->ns_fds[i] = -1;
      if (pr_ns_open_pid (c->st->pid, type, &c->ns_fds[i], err) < 0)
        {
          if ((*err)->errnum != ENOENT)
            return -1;
          pr_error_free (err); /* the kernel lacks this namespace type */
          continue;
        }
      if (pr_ns_open_pid (getpid (), type, &self, NULL) == 0 && fstat (self, &a) == 0
          && fstat (c->ns_fds[i], &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        {
          close (c->ns_fds[i]);
          c->ns_fds[i] = -1;
        }
      if (self >= 0)
        close (self);
    }
  /* A container without a mount namespace of its own (it chroot()ed into
   * its rootfs) has no mount namespace to join: the process takes the
   * init's root instead, never the runtime's. */
  if (c->ns_fds[PR_ARRAY_SIZE (pr_ns_join_order) - 1] < 0)
    {
      _cleanup_free_ char *root = xasprintf ("/proc/%d/root", (int) c->st->pid);
      c->root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (c->root_fd < 0)
        return pr_error_set (err, errno, "open `%s`", root);
    }
  /* The plan may name another process's pid namespace to join (a
   * rollout's agent exec: the agent's, nested in the state pid's). */
  int pi = pid_ns_index ();
  pid_t pidns_pid = pr_rollout_exec_pidns_pid (&c->plan);
  if (pidns_pid > 0 && pi >= 0)
    {
      if (c->ns_fds[pi] >= 0)
        close (c->ns_fds[pi]);
      c->ns_fds[pi] = -1;
      if (pr_ns_open_pid (pidns_pid, CLONE_NEWPID, &c->ns_fds[pi], err) < 0)
        return -1;
    }
  if (pr_rollout_exec_needs_pidns (&c->plan) && (pi < 0 || c->ns_fds[pi] < 0))
    return pr_error_set (err, EINVAL, "the container's pid namespace is the runtime's");
  /* The pid could have been recycled between loading the state and
   * opening its namespaces. */
  if (!pr_state_pid_alive (c->st))
    return pr_error_set (err, 0, "cannot exec in a stopped container");
  return 0;
}

static int
prepare (struct exec_ctx *c, const struct pr_global *g, pr_error **err)
{
  if (pr_state_load (g->root, c->o->id, false, &c->st, err) < 0)
    return -1;
  const char *status = pr_state_status (c->st);
  if (strcmp (status, "stopped") == 0)
    return pr_error_set (err, 0, "cannot exec in a stopped container");
  /* A process joining a frozen cgroup freezes before it can report back:
   * without this check exec would hang until someone resumes (runc's rule
   * and message). */
  if (strcmp (status, "paused") == 0 && !c->o->ignore_paused)
    return pr_error_set (err, 0, "cannot exec in a paused container (use --ignore-paused to override)");
  _cleanup_free_ char *cfgpath = xasprintf ("%s/%s/config.json", g->root, c->o->id);
  if (pr_config_load (cfgpath, &c->cfg, err) < 0)
    return -1;
  if (build_process (c, err) < 0)
    return -1;
  _cleanup_free_ char *state_dir = xasprintf ("%s/%s", g->root, c->o->id);
  if (pr_rollout_exec_plan (c->st->state_dirfd, c->st->rootfs, state_dir, c->o->id, c->st->pid, &c->cfg->process,
                            &c->plan, err) < 0)
    return -1;
  bool tty = c->cfg->process.terminal;
  if (tty && c->o->console_socket == NULL && c->o->detach)
    return pr_error_invalid (err, "cannot allocate tty if proctor will detach without setting console socket");
  if (c->o->console_socket && pr_console_socket_connect (c->o->console_socket, &c->link.console_fd, err) < 0)
    return -1;
  if (tty && c->o->console_socket == NULL && pr_console_local_socket (&c->link.local_console, &c->link.console_fd, err) < 0)
    return -1;
  if (open_namespaces (c, err) < 0)
    return -1;
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    return pr_error_set (err, errno, "socketpair");
  c->link.sync_parent = sp[0];
  c->link.sync_child = sp[1];
  return 0;
}

static void
ctx_free (struct exec_ctx *c)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (c->ns_fds); i++)
    if (c->ns_fds[i] >= 0)
      close (c->ns_fds[i]);
  if (c->root_fd >= 0)
    close (c->root_fd);
  pr_child_link_close (&c->link);
  pr_rollout_exec_plan_free (&c->plan);
  if (c->cfg)
    pr_config_free (c->cfg);
  if (c->st)
    pr_state_free (c->st);
}

/* The exec's own user namespace gets the container's id map. */
struct copy_maps
{
  pid_t from, to;
};

static int
copy_maps (void *arg, pr_error **err)
{
  const struct copy_maps *cm = arg;
  return pr_idmap_copy (cm->from, cm->to, err);
}

static int
start_process (struct exec_ctx *c, pid_t *pid_out, pr_error **err)
{
  int pid = 0;
  c->seccomp_listener = pr_finalize_seccomp_connect (c->cfg, err);
  if (c->seccomp_listener == -1)
    return -1;
  pid_t j = fork ();
  if (j < 0)
    {
      pr_error_set (err, errno, "fork");
      if (c->seccomp_listener >= 0)
        close (c->seccomp_listener);
      return -1;
    }
  if (j == 0)
    joiner (c);
  if (c->seccomp_listener >= 0)
    close (steal_fd (&c->seccomp_listener));
  close (c->link.sync_child);
  c->link.sync_child = -1;
  if (c->link.console_fd >= 0)
    close (c->link.console_fd);
  c->link.console_fd = -1;
  char *sub[] = { (char *) c->o->cgroup, NULL }; /* exec --cgroup (crun, runc) */
  /* The plan may place the process in a cgroup of its own. */
  int placed = c->st->cgroup_path ? pr_rollout_exec_enter_cgroup (&c->plan, c->st->cgroup_path, j, err) : 0;
  /* A verifier or setup session under transparent egress also joins its
   * phase's cgroup in the cgroup2 hierarchy, by whose sockets the rules
   * pick the phase's resolver and policy. */
  if (placed >= 0 && c->st->cgroup_path && pr_rollout_exec_transparent_cgroup (&c->plan, c->st->cgroup_path, j, err) < 0)
    placed = -1;
  /* A verifier session in a cgroup of its own, killed when it ends. */
  _cleanup_free_ char *session = NULL;
  if (placed > 0 && (session = pr_rollout_exec_session_cgroup (&c->plan, j, err)) == NULL && *err != NULL)
    placed = -1;
  if (placed < 0)
    {
      kill (j, SIGKILL);
      waitpid (j, NULL, 0);
      return -1;
    }
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
  pr_state_cgroup (c->st, &cg);
  if (!placed && cg.ops->enter (&cg, j, sub, err) < 0)
    {
      kill (j, SIGKILL);
      waitpid (j, NULL, 0);
      return -1;
    }
  int r = pr_sync_send (c->link.sync_parent, PR_SYNC_GO, 0, NULL, err);
  struct copy_maps cm = { .from = c->st->pid, .to = j };
  if (r == 0 && pr_rollout_exec_own_userns (&c->plan))
    r = pr_child_write_maps (c->link.sync_parent, "exec setup", copy_maps, &cm, err);
  if (r == 0)
    r = pr_sync_expect (c->link.sync_parent, PR_SYNC_PID, "exec setup", &pid, NULL, err);
  waitpid (j, NULL, 0);
  if (r < 0)
    {
      if (session)
        rmdir (session);
      if (placed)
        pr_rollout_exec_failed_cgroup (&c->plan, c->st->cgroup_path);
      return -1;
    }
  *pid_out = pid;
  pr_rollout_exec_watch_session (session, pid);
  if (pr_rollout_exec_holds_start (&c->plan)
      && (pr_rollout_exec_started (&c->plan, pid, err) < 0 || pr_sync_send (c->link.sync_parent, PR_SYNC_GO, 0, NULL, err) < 0))
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      return -1;
    }
  if (pr_sync_wait_exec (c->link.sync_parent, err) < 0)
    {
      waitpid (pid, NULL, 0);
      return -1;
    }
  return 0;
}

int
pr_container_exec (const struct pr_global *g, const struct pr_exec_opts *o, int *exit_code, pr_error **err)
{
  struct exec_ctx c = { .g = g, .o = o, .link = PR_CHILD_LINK_INIT,
                        .root_fd = -1, .seccomp_listener = -1 };
  for (size_t i = 0; i < PR_ARRAY_SIZE (c.ns_fds); i++)
    c.ns_fds[i] = -1;
  sigset_t mask, old;
  pid_t pid = 0;
  int ret = -1, master = -1;

  *exit_code = 0;
  pr_forward_sigset (&mask);
  if (!o->detach)
    sigprocmask (SIG_BLOCK, &mask, &old);
  if (prepare (&c, g, err) < 0 || start_process (&c, &pid, err) < 0)
    goto out;
  /* The shared state lock kept delete from pulling the container away
   * while the process joined it; held for the process's lifetime it would
   * block pause, resume, update and delete until a long exec ends.  LOCK_UN
   * drops it for the open file description, which the child shares. */
  flock (c.st->state_dirfd, LOCK_UN);
  if (pr_state_write_pid_file (o->pid_file, pid, err) < 0)
    goto out;
  ret = 0;
  if (o->detach)
    goto out;
  if (c.link.local_console >= 0 && pr_console_receive_master (c.link.local_console, &master, err) == 0)
    {
      pr_error *e = NULL;
      if (pr_console_proxy (master, pid, &e) < 0)
        pr_error_free (&e);
      close (master);
    }
  *exit_code = pr_wait_forwarding (pid, &mask);
out:
  if (!o->detach)
    sigprocmask (SIG_SETMASK, &old, NULL);
  ctx_free (&c);
  return ret;
}
