/* container.c - the runtime side of create, and start, kill and delete
 * (see container.h; the container side of create is init.c, run is run.c).
 *
 * Process model of create (all three talk over one SOCK_SEQPACKET pair):
 *
 *   runtime ──fork──> stage 1 ──clone(CLONE_PARENT)──> container init
 *
 * The runtime puts stage 1 in the cgroup and writes its id maps.  Stage 1
 * joins the namespaces given by path (user first), unshares the user
 * namespace (waiting for the maps), then the other new namespaces, and
 * clones the init: CLONE_NEWPID and CLONE_NEWTIME only take effect for
 * children, and CLONE_PARENT makes the init our child, so `run` can wait
 * for it and engines that are subreapers inherit it after create exits.
 * The init sets up the rootfs, asks the runtime to run the runtime-side
 * hooks, finalises the process and blocks opening exec.fifo until start.
 *
 * A rollout with its own pid namespace has one more process (procs.h):
 *
 *   stage 1 ──clone(CLONE_PARENT)──> outer init ──fork──> container init
 *
 * The outer init (pid 1 of the outer pid namespace) is the state pid, the
 * engine's child: it forwards signals to the container's process and
 * exits with its status.  The container init is pid 1 of the agent's pid
 * namespace, nested in the outer one; its host pid is saved in the state
 * directory (rollout-agent-init) for agent execs. */
#define _GNU_SOURCE
#include "config.h" /* configure's: PROCTOR_FAULT_INJECTION */
#include "container.h"
#include "console.h"
#include "hooks.h"
#include "state.h"
#include "sync.h"
#include "../base/log.h"
#include "../base/proc.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "../cgroup/manager.h"
#include "../config/config.h"
#include "../../libcrun-compat/annotations.h"
#include "../linux/caps.h"
#include "../linux/idmount.h"
#include "../linux/mount.h"
#include "../linux/namespace.h"
#include "../linux/procattr.h"
#include "../linux/seccomp.h"
#include "../rollout/lifecycle.h"
#include "child.h"
#include "finalize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "create-internal.h"

/* ---------------------------------------------------------------- helpers */

/* TEST-ONLY fault injection for tests/security/faults.bats, compiled in
 * only by `configure --enable-fault-injection` (the test build of
 * tests/run-all.sh; release builds lack it, and the variable's name is not
 * even in their binary): when PROCTOR_TEST_CRASH_AT names this step of
 * create, the runtime SIGKILLs itself there, as a crash or an OOM kill
 * would, so the tests can check that `delete --force` and a fresh create
 * with the same id recover.  A no-op when the variable is unset (the
 * container's environment comes from config.json, never from ours).
 * Steps, in order: state-dir, cgroup, fork, init-pid, hooks, network,
 * state-saved. */
#ifdef PROCTOR_FAULT_INJECTION
static void
test_crash_at (const char *step)
{
  const char *at = getenv ("PROCTOR_TEST_CRASH_AT");
  if (at != NULL && strcmp (at, step) == 0)
    raise (SIGKILL);
}
#else
static inline void
test_crash_at (const char *step)
{
}
#endif

static char *
now_rfc3339 (void)
{
  struct timespec ts;
  struct tm tm;
  char buf[64];
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  size_t n = strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf + n, sizeof buf - n, ".%09ldZ", ts.tv_nsec);
  return xstrdup (buf);
}

static char **
annotations_flat (const struct pr_config *cfg)
{
  char **v = xmalloc0 ((2 * cfg->n_annotations + 1) * sizeof (char *));
  for (size_t i = 0; i < cfg->n_annotations; i++)
    {
      v[2 * i] = xstrdup (cfg->annotations[i].key);
      v[2 * i + 1] = xstrdup (cfg->annotations[i].value);
    }
  return v;
}

static char *
state_path (const struct pr_global *g, const char *id, const char *file)
{
  return xasprintf ("%s/%s/%s", g->root, id, file);
}

/* Loads the config.json copy that create stored in the state directory,
 * for start and delete, which need it only for one kind of hook: when the
 * text cannot hold that hook ("poststart" / "poststop" never appears, and
 * no \u escape could spell it), *out stays NULL and the parse is skipped.
 * Parsing a podman config.json (11 KB with its seccomp profile) costs
 * ~0.2 ms, and start and delete each paid it for nothing on every container
 * without hooks.  A false positive only costs the parse. */
static int
load_state_config_for_hook (const struct pr_global *g, const char *id, const char *hook, struct pr_config **out,
                            pr_error **err)
{
  _cleanup_free_ char *p = state_path (g, id, "config.json");
  _cleanup_free_ char *text = NULL;
  _cleanup_free_ char *quoted = xasprintf ("\"%s\"", hook);
  size_t len = 0;

  *out = NULL;
  if (pr_read_file (p, &text, &len, err) < 0)
    return -1;
  if (memmem (text, len, quoted, strlen (quoted)) == NULL && memmem (text, len, "\\u", 2) == NULL)
    return 0;
  if (pr_config_parse (text, len, out, err) < 0)
    return pr_error_wrap (err, "%s", p);
  return 0;
}

static int
pidfd_open_checked (const struct pr_state *st)
{
  int fd = pr_sys_pidfd_open (st->pid, 0);
  if (fd < 0)
    return -1;
  /* The pidfd pins the process we opened; if its start time still matches,
   * it is the container's init and not a recycled pid. */
  if (pr_proc_start_time (st->pid) != st->start_time)
    {
      close (fd);
      errno = ESRCH;
      return -1;
    }
  return fd;
}

/* Socket activation (sd_listen_fds(3)): when the runtime itself was
 * started with LISTEN_FDS=N for its own pid, fds 3..3+N-1 go to the
 * container ahead of any --preserve-fds, and the process sees LISTEN_FDS=N
 * and LISTEN_PID=1, as runc does.  Returns N (0 when not activated). */
static int
take_listen_fds (struct pr_config *cfg)
{
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  uint64_t n, p;
  if (fds == NULL || pid == NULL || pr_parse_u64 (fds, &n) < 0 || pr_parse_u64 (pid, &p) < 0
      || p != (uint64_t) getpid () || n == 0 || n > 1024)
    return 0;
  _cleanup_free_ char *kv = xasprintf ("LISTEN_FDS=%d", (int) n);
  cfg->process.env = pr_strv_append (cfg->process.env, kv);
  cfg->process.env = pr_strv_append (cfg->process.env, "LISTEN_PID=1");
  return (int) n;
}

/* ------------------------------------------------------------ validation */

/* runtime-spec config-linux.md "Namespaces": a type not listed is
 * inherited, the mount namespace too.  The container then only chroot()s
 * into its rootfs; anything that would be a mount (mounts, maskedPaths,
 * readonlyPaths, a read-only root, rootfsPropagation) or a device node
 * would be made in the runtime's own, the host's, mount namespace and
 * outlive the container: refused, with that reason. */
static int
validate_no_mountns (const struct pr_config *cfg, pr_error **err)
{
  const char *what = cfg->n_mounts ? "mounts"
                     : pr_strv_len (cfg->linux.masked_paths) ? "linux.maskedPaths"
                     : pr_strv_len (cfg->linux.readonly_paths) ? "linux.readonlyPaths"
                     : cfg->linux.n_devices ? "linux.devices"
                     : cfg->root_readonly ? "root.readonly"
                     : cfg->linux.rootfs_propagation && *cfg->linux.rootfs_propagation ? "linux.rootfsPropagation"
                     : NULL;
  if (what)
    return pr_error_invalid (err, "config.json: %s without a mount namespace would change the host's mount "
                             "namespace: add {\"type\": \"mount\"} to linux.namespaces", what);
  return 0;
}

static int
validate_config (struct create_ctx *c, pr_error **err)
{
  const struct pr_config *cfg = c->cfg;
  if (!cfg->has_process)
    return pr_error_invalid (err, "config.json: process is required to create a container");
  if (cfg->root_path == NULL)
    return pr_error_invalid (err, "config.json: root.path is required");
  if (pr_config_namespace (cfg, CLONE_NEWNS) == NULL && validate_no_mountns (cfg, err) < 0)
    return -1;
  /* A uts entry with a path is the container's UTS namespace too
   * (runtime-spec config.md "hostname": it may be one the container joins;
   * runc sets the hostname there): only an inherited one, or the runtime's
   * own joined by path, refuses it, and likewise for sysctls. */
  if (pr_host_ns_check (cfg, err) < 0)
    return pr_error_wrap (err, "config.json");
  const struct pr_namespace *user = pr_config_namespace (cfg, CLONE_NEWUSER);
  if (user && user->path == NULL && (cfg->linux.n_uid_mappings == 0 || cfg->linux.n_gid_mappings == 0))
    return pr_error_invalid (err, "config.json: a new user namespace needs linux.uidMappings and linux.gidMappings");
  if (cfg->linux.has_time_offsets)
    {
      const struct pr_namespace *t = pr_config_namespace (cfg, CLONE_NEWTIME);
      if (t == NULL || t->path != NULL)
        return pr_error_invalid (err, "config.json: linux.timeOffsets requires a new time namespace");
    }
  if (cfg->process.has_capabilities && pr_caps_validate (&cfg->process.capabilities, err) < 0)
    return pr_error_wrap (err, "config.json: process.capabilities");
  if (cfg->linux.has_seccomp && pr_seccomp_validate (&cfg->linux.seccomp, err) < 0)
    return pr_error_wrap (err, "config.json: linux.seccomp");
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      struct pr_mount_flags mf = { 0 };
      int r = pr_mount_parse_options (cfg->mounts[i].options, &mf, err);
      free (mf.data);
      if (r < 0)
        return pr_error_wrap (err, "config.json: mounts[%zu] (%s)", i, cfg->mounts[i].destination);
    }
  if (pr_idmount_validate (cfg, err) < 0)
    return -1;
  if (cfg->process.terminal && c->o->console_socket == NULL && !c->o->local_tty)
    return pr_error_invalid (err, "cannot allocate tty if proctor will detach without setting console socket");
  if (!cfg->process.terminal && c->o->console_socket != NULL)
    return pr_error_invalid (err, "cannot use console socket if proctor will not detach or allocate tty");
  return 0;
}

static int
resolve_paths (struct create_ctx *c, pr_error **err)
{
  const char *bundle = c->o->bundle && *c->o->bundle ? c->o->bundle : ".";
  char buf[PATH_MAX];
  if (realpath (bundle, buf) == NULL)
    return pr_error_set (err, errno, "bundle `%s`", bundle);
  c->bundle = xstrdup (buf);
  _cleanup_free_ char *root = c->cfg->root_path[0] == '/' ? xstrdup (c->cfg->root_path)
                                                          : xasprintf ("%s/%s", c->bundle, c->cfg->root_path);
  if (realpath (root, buf) == NULL)
    return pr_error_set (err, errno, "rootfs `%s` does not exist or cannot be resolved", root);
  struct stat st;
  if (stat (buf, &st) < 0 || !S_ISDIR (st.st_mode))
    return pr_error_set (err, ENOTDIR, "rootfs `%s` is not a directory", buf);
  c->rootfs = xstrdup (buf);
  return 0;
}

static int
load_config (struct create_ctx *c, pr_error **err)
{
  _cleanup_free_ char *path = NULL;
  if (c->cfg)
    return 0; /* handed over parsed (pr_create_opts.config) */
  if (c->o->config_path)
    path = xstrdup (c->o->config_path);
  else
    path = xasprintf ("%s/config.json", c->o->bundle && *c->o->bundle ? c->o->bundle : ".");
  if (pr_read_file (path, &c->config_text, &c->config_len, err) < 0)
    return -1;
  if (pr_config_parse (c->config_text, c->config_len, &c->cfg, err) < 0)
    return pr_error_wrap (err, "%s", path);
  return 0;
}

/* ----------------------------------------------------------- runtime side */

static void
create_cleanup (struct create_ctx *c)
{
  pr_error *e = NULL;
  if (c->init_pid > 0)
    {
      kill (c->init_pid, SIGKILL);
      waitpid (c->init_pid, NULL, 0);
    }
  if (c->stage1 > 0)
    {
      kill (c->stage1, SIGKILL);
      waitpid (c->stage1, NULL, 0);
    }
  pr_rollout_create_failed (c->rollout, c->state_dirfd, c->rootfs);
  if (c->cg.created && c->cg.ops->teardown (&c->cg, "cleanup", &e) < 0)
    {
      pr_warn ("cleanup: %s", e->msg);
      pr_error_free (&e);
    }
  if (c->cg.created && c->cg.path && pr_rollout_delete_cgroup (c->cg.path, &e) < 0)
    {
      pr_warn ("cleanup: %s", e->msg);
      pr_error_free (&e);
    }
  if (c->state_created && pr_state_dir_remove (c->g->root, c->o->id, &e) < 0)
    {
      pr_warn ("cleanup: %s", e->msg);
      pr_error_free (&e);
    }
}

static void
create_ctx_free (struct create_ctx *c)
{
  if (c->cfg)
    pr_config_free (c->cfg);
  free (c->config_text);
  free (c->bundle);
  free (c->rootfs);
  pr_cgroup_manager_clear (&c->cg);
  free (c->state_json);
  pr_closep (&c->seccomp_listener);
  pr_closep (&c->network_ready);
  pr_rollout_free (c->rollout);
  if (c->state_dirfd >= 0)
    close (c->state_dirfd);
  if (c->fifo_dirfd >= 0)
    close (c->fifo_dirfd);
  pr_child_link_close (&c->link);
}

static struct pr_state
make_state (struct create_ctx *c, char **annotations)
{
  struct pr_state st = {
    .id = (char *) c->o->id,
    .pid = c->init_pid,
    .start_time = pr_proc_start_time (c->init_pid),
    .bundle = c->bundle,
    .rootfs = c->rootfs,
    .owner = (char *) "",
    .cgroup_path = c->cg.path,
    .systemd_cgroup = c->cg.driver == PR_CGROUP_DRIVER_SYSTEMD,
    .annotations = annotations,
    .state_dirfd = c->state_dirfd,
  };
  return st;
}

static int
run_runtime_hooks (struct create_ctx *c, char **annotations, pr_error **err)
{
  struct pr_state st = make_state (c, annotations);
  c->state_json = pr_state_to_json (&st, "creating");
  if (pr_hooks_run (&c->cfg->hooks[PR_HOOK_PRESTART], "prestart", c->state_json, err) < 0)
    return -1;
  if (pr_hooks_run (&c->cfg->hooks[PR_HOOK_CREATE_RUNTIME], "createRuntime", c->state_json, err) < 0)
    return -1;
  if (pr_sync_send (c->link.sync_parent, PR_SYNC_HOOKS_DONE, 0, c->state_json, err) < 0)
    return -1;
  /* startContainer hooks run after start, when the state is "created". */
  _cleanup_free_ char *created = pr_state_to_json (&st, "created");
  return pr_sync_send (c->link.sync_parent, PR_SYNC_STATE, 0, created, err);
}

/* Saves state.json as far as create knows it (pid 0 until the init
 * exists), so a runtime killed at any later step of create leaves a
 * container that `delete --force` finds and cleans up (cgroup, hidden
 * paths, egress helper, state dir) and whose id can be used again.  It is
 * written twice: before anything outside the state dir exists (cgroup path
 * known, pid 0), and once the init's pid is known, which completes it;
 * `state` and `delete` wait on the state lock until create is done. */
static int
save_partial_state (struct create_ctx *c, pr_error **err)
{
  _cleanup_strv_ char **annotations = annotations_flat (c->cfg);
  struct pr_state st = make_state (c, annotations);
  st.created = now_rfc3339 ();
  int r = pr_state_save (&st, err);
  free (st.created);
  return r;
}

/* A setup process killed by the kernel's OOM killer only shows as "exited
 * before it was ready": say so when the container's cgroup counted an OOM
 * kill (a memory limit below what the runtime needs, e.g. 1 byte). */
static void
explain_oom (const struct create_ctx *c, pr_error **err)
{
  pr_error *e = NULL;
  uint64_t kills = 0;
  if (!c->cg.created)
    return;
  if (c->cg.ops->oom_kills (&c->cg, &kills, &e) < 0)
    {
      pr_error_free (&e);
      return;
    }
  if (kills > 0)
    pr_error_wrap (err, "the container's cgroup ran out of memory (%llu OOM kill%s; see linux.resources.memory.limit)",
                   (unsigned long long) kills, kills == 1 ? "" : "s");
}

/* Stage 1's new user namespace gets the config's id maps. */
static int
write_maps (void *arg, pr_error **err)
{
  const struct create_ctx *c = arg;
  return pr_idmap_write (c->stage1, c->cfg, err);
}

static int
drive_children (struct create_ctx *c, pr_error **err)
{
  _cleanup_strv_ char **annotations = annotations_flat (c->cfg);
  int pid = 0;

  /* Stage 1 joins the cgroup before it is let go (the systemd driver's
   * scope is made here: it needs a live pid). */
  if (c->cg.ops->start (&c->cg, c->stage1, c->cfg->linux.resources, err) < 0)
    return -1;
  test_crash_at ("fork");
  if (pr_sync_send (c->link.sync_parent, PR_SYNC_GO, 0, NULL, err) < 0)
    return -1;
  if (c->new_flags & CLONE_NEWUSER)
    {
      if (pr_child_write_maps (c->link.sync_parent, "container setup", write_maps, c, err) < 0)
        return -1;
    }
  if (pr_sync_expect (c->link.sync_parent, PR_SYNC_PID, "container setup", &pid, NULL, err) < 0)
    return -1;
  c->init_pid = pid;
  waitpid (c->stage1, NULL, 0);
  c->stage1 = 0;
  /* Stage 1 and the init share the socket: the init waits for this so its
   * first message cannot overtake stage 1's PID message. */
  if (pr_sync_send (c->link.sync_parent, PR_SYNC_GO, 0, NULL, err) < 0)
    return -1;
  if (save_partial_state (c, err) < 0)
    return -1;
  test_crash_at ("init-pid");
  /* The init's namespaces are final once it exists: the egress helper
   * sets itself up while the init sets up its rootfs (create waits for
   * both before it returns). */
  _cleanup_free_ char *dir = xasprintf ("%s/%s", c->g->root, c->o->id);
  if (pr_rollout_network_begin (c->rollout, c->init_pid, c->state_dirfd, dir, c->cg.path, &c->network_ready, err) < 0)
    return -1;
  if (pr_sync_expect (c->link.sync_parent, PR_SYNC_HOOKS, "container process", NULL, NULL, err) < 0)
    return -1;
  /* The container process has reported, so the outer init has forked it. */
  if (pr_rollout_container_started (c->nested_pidns, c->state_dirfd, c->init_pid, &c->agent_init, err) < 0)
    return -1;
  if (run_runtime_hooks (c, annotations, err) < 0)
    return -1;
  test_crash_at ("hooks");
  if (pr_sync_expect (c->link.sync_parent, PR_SYNC_READY, "container process", NULL, NULL, err) < 0)
    return -1;
  int started = pr_rollout_ready (c->rollout, c->init_pid, c->state_dirfd, c->cg.path, steal_fd (&c->network_ready), err);
  if (started < 0)
    return -1;
  if (started > 0)
    test_crash_at ("network");
  /* state.json has been complete since the init's pid was saved above:
   * nothing after that changes it, so it is not written again (each
   * rename over an existing file costs a data flush on ext4, auto_da_alloc). */
  test_crash_at ("state-saved");
  return pr_state_write_pid_file (c->o->pid_file, c->init_pid, err);
}

static int
prepare_runtime_side (struct create_ctx *c, pr_error **err)
{
  if (pr_state_dir_create (c->g->root, c->o->id, &c->state_dirfd, err) < 0)
    return -1;
  c->state_created = true;
  if (pr_write_file_at (c->state_dirfd, "config.json", c->config_text, c->config_len, 0600, err) < 0)
    return -1;
  /* The cgroup driver is chosen here, once (cgroup/manager.h); crun's
   * --cgroup-manager disabled leaves the container in our cgroup. */
  if (pr_cgroup_manager_new (c->g->cgroup_manager, c->g->systemd_cgroup, c->cfg->linux.cgroups_path, c->o->id, &c->cg,
                             err) < 0)
    return -1;
  if (save_partial_state (c, err) < 0)
    return -1;
  test_crash_at ("state-dir");
  if (pr_rollout_config (c->cfg, c->g->rollout_policy, c->rootfs, c->state_dirfd, &c->rollout, err) < 0)
    return -1;
  c->new_flags = pr_ns_new_flags (c->cfg);
  /* The container's pid namespace may become two (an outer init, then the
   * container process's own nested one): the rollout decides. */
  c->nested_pidns = pr_rollout_nests_pidns (c->rollout, c->new_flags);
  /* The init opens the fifo after switching to the process user, which
   * in a user namespace maps to an unprivileged host uid. */
  if (mkfifoat (c->state_dirfd, "exec.fifo", 0622) < 0)
    return pr_error_set (err, errno, "create exec.fifo");
  if (fchmodat (c->state_dirfd, "exec.fifo", 0622, 0) < 0)
    return pr_error_set (err, errno, "chmod exec.fifo");
  c->fifo_dirfd = openat (c->state_dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (c->fifo_dirfd < 0)
    return pr_error_set (err, errno, "open state directory");
  if (pr_ns_open_paths (c->cfg, &c->ns_fds, err) < 0)
    return -1;
  if (c->o->console_socket && pr_console_socket_connect (c->o->console_socket, &c->link.console_fd, err) < 0)
    return -1;
  if ((c->seccomp_listener = pr_finalize_seccomp_connect (c->cfg, err)) == -1) /* a host path */
    return -1;
  if (c->o->local_tty && c->cfg->process.terminal
      && pr_console_local_socket (&c->link.local_console, &c->link.console_fd, err) < 0)
    return -1;
  /* cgroupfs: the cgroup and its limits, before the fork; the systemd
   * driver's scope is made after it (drive_children). */
  if (c->cg.ops->setup (&c->cg, c->cfg->linux.resources, err) < 0)
    return -1;
  test_crash_at ("cgroup");
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    return pr_error_set (err, errno, "socketpair");
  c->link.sync_parent = sp[0];
  c->link.sync_child = sp[1];
  return 0;
}

int
pr_container_create (const struct pr_global *g, const struct pr_create_opts *o, pid_t *pid_out,
                     int *console_master_out, pr_error **err)
{
  struct create_ctx c = { .g = g, .o = o, .state_dirfd = -1, .fifo_dirfd = -1, .link = PR_CHILD_LINK_INIT,
                          .seccomp_listener = -1, .network_ready = -1 };
  int ret = -1;

  /* A parsed config is ours from here on, even when create fails early. */
  if (o->config)
    {
      c.cfg = o->config;
      c.config_text = xmalloc (o->config_len + 1);
      memcpy (c.config_text, o->config_text, o->config_len);
      c.config_text[o->config_len] = '\0';
      c.config_len = o->config_len;
    }

  if (pr_state_check_id (o->id, err) < 0 || load_config (&c, err) < 0
      || pr_crun_annotations_apply (c.cfg, err) < 0 || validate_config (&c, err) < 0
      || resolve_paths (&c, err) < 0)
    goto out;
  c.listen_fds = take_listen_fds (c.cfg);
  if (prepare_runtime_side (&c, err) < 0)
    goto fail;
  c.stage1 = fork ();
  if (c.stage1 < 0)
    {
      pr_error_set (err, errno, "fork");
      goto fail;
    }
  if (c.stage1 == 0)
    pr_create_stage1 (&c);
  if (c.seccomp_listener >= 0)
    close (steal_fd (&c.seccomp_listener));
  close (c.link.sync_child);
  c.link.sync_child = -1;
  if (c.link.console_fd >= 0)
    close (c.link.console_fd);
  c.link.console_fd = -1;
  if (drive_children (&c, err) < 0)
    {
      explain_oom (&c, err);
      goto fail;
    }
  if (c.link.local_console >= 0 && console_master_out
      && pr_console_receive_master (c.link.local_console, console_master_out, err) < 0)
    goto fail;
  if (pid_out)
    *pid_out = c.init_pid;
  ret = 0;
  goto out;
fail:
  create_cleanup (&c);
out:
  if (c.cfg)
    pr_ns_close_fds (c.ns_fds, c.cfg->linux.n_namespaces);
  c.ns_fds = NULL;
  create_ctx_free (&c);
  return ret;
}

/* ------------------------------------------------------------------ start */

static int
open_fifo_and_release (struct pr_state *st, pr_error **err)
{
  _cleanup_close_ int fd = openat (st->state_dirfd, "exec.fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open exec.fifo");
  /* The init is blocked in open(O_WRONLY) until this open; then it writes
   * one byte.  Until its write lands, reads see EOF or EAGAIN.  After the
   * byte, EOF means the init reached execve (its fd is close-on-exec). */
  bool released = false;
  for (;;)
    {
      char b;
      ssize_t r = read (fd, &b, 1);
      if (r == 1)
        {
          released = true;
          continue;
        }
      if (r == 0 && released)
        break;
      if (r < 0 && errno != EAGAIN && errno != EINTR)
        return pr_error_set (err, errno, "read exec.fifo");
      if (!pr_state_pid_alive (st))
        {
          if (released)
            break;
          return pr_error_set (err, 0, "container process exited before start");
        }
      struct pollfd pfd = { fd, POLLIN, 0 };
      if (poll (&pfd, 1, 10) < 0 && errno != EINTR)
        return pr_error_set (err, errno, "poll exec.fifo");
      /* Before the init has opened its end, a FIFO without a writer polls
       * as POLLHUP at once: pace that wait instead of spinning.  After the
       * byte, POLLHUP is the EOF we wait for and the next read returns it. */
      if ((pfd.revents & POLLHUP) && !released)
        usleep (100);
    }
  unlinkat (st->state_dirfd, "exec.fifo", 0);
  return 0;
}

static void
run_warn_hooks (const struct pr_config *cfg, int kind, const char *name, const char *json)
{
  /* runtime-spec runtime.md "Lifecycle": a failed poststart or poststop hook
   * is only a warning and the remaining hooks still run, so run them one by
   * one instead of stopping at the first failure as pr_hooks_run does. */
  const struct pr_hook_list *all = &cfg->hooks[kind];
  for (size_t i = 0; i < all->n; i++)
    {
      struct pr_hook_list one = { .v = &all->v[i], .n = 1 };
      pr_error *e = NULL;
      if (pr_hooks_run (&one, name, json, &e) < 0)
        {
          pr_warn ("%s", e->msg);
          pr_error_free (&e);
        }
    }
}

int
pr_container_start (const struct pr_global *g, const char *id, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_config_ struct pr_config *cfg = NULL;

  if (pr_state_load (g->root, id, true, &st, err) < 0)
    return -1;
  const char *status = pr_state_status (st);
  if (strcmp (status, "stopped") == 0)
    return pr_error_set (err, 0, "cannot start a container that has stopped");
  if (strcmp (status, "created") != 0)
    return pr_error_set (err, 0, "cannot start an already running container");
  if (load_state_config_for_hook (g, id, "poststart", &cfg, err) < 0)
    return -1;
  if (open_fifo_and_release (st, err) < 0)
    return -1;
  if (cfg == NULL)
    return 0;
  _cleanup_free_ char *json = pr_state_to_json (st, "running");
  run_warn_hooks (cfg, PR_HOOK_POSTSTART, "poststart", json);
  return 0;
}

/* ------------------------------------------------------------ kill/delete */

int
pr_parse_signal (const char *s)
{
  uint64_t n;
  if (s == NULL)
    return SIGTERM;
  if (pr_parse_u64 (s, &n) == 0)
    return n > 0 && n < (uint64_t) SIGRTMAX + 1 ? (int) n : -1;
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (int sig = 1; sig < NSIG; sig++)
    {
      const char *name = sigabbrev_np (sig);
      if (name && strcasecmp (name, s) == 0)
        return sig;
    }
  return -1;
}

int
pr_container_kill (const struct pr_global *g, const char *id, int sig, bool all, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  if (pr_state_load (g->root, id, false, &st, err) < 0)
    return -1;
  if (all && st->cgroup_path)
    {
      /* kill --all without a cgroup of its own signals the process only */
      _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
      pr_state_cgroup (st, &cg);
      return cg.ops->kill (&cg, sig, err);
    }
  _cleanup_close_ int pfd = pidfd_open_checked (st);
  if (pfd < 0)
    return pr_error_set (err, 0, "container not running");
  if (pr_sys_pidfd_send_signal (pfd, sig) < 0)
    {
      if (errno == ESRCH)
        return pr_error_set (err, 0, "container not running");
      return pr_error_set (err, errno, "kill container `%s`", id);
    }
  return 0;
}

static void
kill_and_wait (const struct pr_state *st)
{
  _cleanup_close_ int pfd = pidfd_open_checked (st);
  if (pfd < 0)
    return;
  pr_sys_pidfd_send_signal (pfd, SIGKILL);
  struct pollfd p = { pfd, POLLIN, 0 };
  poll (&p, 1, 5000);
}

int
pr_container_delete (const struct pr_global *g, const char *id, bool force, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_config_ struct pr_config *cfg = NULL;

  if (pr_state_load (g->root, id, true, &st, err) < 0)
    {
      /* runc's contract: a forced delete of a container that does not
       * exist (engines clean up after a failed create this way) succeeds,
       * removing a state directory left without state.json.  Decided on
       * the errno (pr_state_load's ENOENT), never on the message text. */
      if (!force || pr_state_check_id (id, NULL) < 0 || (*err)->errnum != ENOENT)
        return -1;
      pr_error_free (err);
      return pr_state_dir_remove (g->root, id, err);
    }
  const char *status = pr_state_status (st);
  if (!force && strcmp (status, "stopped") != 0 && strcmp (status, "created") != 0)
    return pr_error_set (err, 0, "cannot delete container %s that is not stopped: %s", id, status);
  _cleanup_free_ char *json = pr_state_to_json (st, "stopped");
  if (load_state_config_for_hook (g, id, "poststop", &cfg, err) < 0)
    {
      pr_warn ("delete %s: %s", id, (*err)->msg);
      pr_error_free (err);
    }
  kill_and_wait (st);
  /* The egress helper runs in the container's cgroup: stopped with
   * SIGTERM before the cgroup's leftovers get SIGKILL, so it writes its
   * folded log lines and totals. */
  pr_rollout_stop (st->state_dirfd);
  /* The cgroup's teardown kills what is left in it before removing it
   * (a systemd unit is stopped first; its failure only warns). */
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
  pr_state_cgroup (st, &cg);
  _cleanup_free_ char *warn_prefix = xasprintf ("delete %s", id);
  if (cg.ops->teardown (&cg, warn_prefix, err) < 0)
    return -1;
  if (st->cgroup_path && pr_rollout_delete_cgroup (st->cgroup_path, err) < 0)
    return -1;
  if (cfg)
    run_warn_hooks (cfg, PR_HOOK_POSTSTOP, "poststop", json);
  if (pr_rollout_delete (st->state_dirfd, st->rootfs, err) < 0)
    {
      /* A rootfs the engine already unmounted (ENOENT) takes no hidden
       * paths back; failing would leave a state dir no delete removes. */
      if (!force && (*err)->errnum != ENOENT)
        return -1;
      pr_warn ("delete %s: the hidden paths were not put back: %s", id, (*err)->msg);
      pr_error_free (err);
    }
  return pr_state_dir_remove (g->root, id, err);
}
