/* finalize.c - the last steps before execve in the container (see
 * finalize.h). */
#define _GNU_SOURCE
#include "finalize.h"
#include "../base/env.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../linux/caps.h"
#include "../linux/lsm.h"
#include "../linux/procattr.h"
#include "../linux/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool
is_executable_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode) && access (path, X_OK) == 0;
}

int
pr_find_executable (const char *name, char *const *env, char **out, pr_error **err)
{
  if (name == NULL || *name == '\0')
    return pr_error_invalid (err, "process.args[0] is empty");
  if (strchr (name, '/'))
    {
      struct stat st;
      if (stat (name, &st) < 0)
        return pr_error_set (err, errno, "exec: \"%s\": stat %s", name, name);
      if (!S_ISREG (st.st_mode) || access (name, X_OK) < 0)
        return pr_error_set (err, EACCES, "exec: \"%s\"", name);
      *out = xstrdup (name);
      return 0;
    }
  const char *path = pr_env_get (env, "PATH");
  _cleanup_free_ char *copy = xstrdup (path ? path : DEFAULT_PATH);
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir; dir = strtok_r (NULL, ":", &save))
    {
      _cleanup_free_ char *cand = xasprintf ("%s/%s", *dir ? dir : ".", name);
      if (is_executable_file (cand))
        {
          *out = steal_pointer (&cand);
          return 0;
        }
    }
  return pr_error_set (err, 0, "exec: \"%s\": executable file not found in $PATH", name);
}

/* HOME from the container's /etc/passwd, read by us (never by a tool from
 * the image), falling back to "/" as runc does. */
static char *
home_for_uid (uint32_t uid)
{
  _cleanup_fclose_ FILE *f = fopen ("/etc/passwd", "re");
  char line[1024];
  while (f && fgets (line, sizeof line, f))
    {
      char *fields[7] = { 0 };
      char *save = NULL, *p = line;
      int n = 0;
      for (char *tok = strsep (&p, ":"); tok && n < 7; tok = strsep (&p, ":"))
        fields[n++] = tok;
      (void) save;
      if (n < 6)
        continue;
      uint64_t u;
      if (pr_parse_u64 (fields[2], &u) == 0 && u == uid)
        return xstrdup (fields[5]);
    }
  return xstrdup ("/");
}

static int
apply_cwd (const struct pr_process *p, pr_error **err)
{
  const char *cwd = p->cwd && *p->cwd ? p->cwd : "/";
  if (strncmp (cwd, "/proc/self/fd", 13) == 0 || strncmp (cwd, "/proc/thread-self/fd", 20) == 0)
    return pr_error_set (err, EPERM, "cwd `%s` is not allowed: it points at a file descriptor", cwd);
  if (chdir (cwd) < 0)
    return pr_error_set (err, errno, "chdir to cwd (\"%s\") set in config.json failed", cwd);
  /* A cwd that resolves outside the root (a leaked host directory fd, as in
   * CVE-2024-21626) makes getcwd(2) fail with ENOENT "(unreachable)". */
  char buf[4096];
  if (getcwd (buf, sizeof buf) == NULL && errno == ENOENT)
    return pr_error_set (err, EPERM, "cwd `%s` is outside the container root", cwd);
  return 0;
}

int
pr_finalize_prepare (const struct pr_process *p, const struct pr_config *cfg, char **exe_out, char ***env_out,
                     pr_error **err)
{
  if (pr_rlimits_apply (p, err) < 0 || pr_oom_score_adj_apply (p, err) < 0 || pr_scheduler_apply (p, err) < 0
      || pr_io_priority_apply (p, err) < 0 || pr_personality_apply (cfg, err) < 0)
    return -1;
  umask (p->user.has_umask ? p->user.umask : 022);
  if (apply_cwd (p, err) < 0)
    return -1;
  _cleanup_strv_ char **env = pr_strv_dup (p->env);
  if (pr_env_get (env, "HOME") == NULL)
    {
      _cleanup_free_ char *home = home_for_uid (p->user.uid);
      env = pr_env_set (env, "HOME", home);
    }
  if (p->args == NULL || p->args[0] == NULL)
    return pr_error_invalid (err, "process.args must not be empty");
  if (pr_find_executable (p->args[0], env, exe_out, err) < 0)
    return -1;
  if (pr_lsm_set_exec_labels (p->apparmor_profile, p->selinux_label, err) < 0)
    return -1;
  *env_out = steal_pointer (&env);
  return 0;
}

static int
set_identity (const struct pr_user *u, pr_error **err)
{
  gid_t *gids = xmalloc0 ((u->n_additional_gids + 1) * sizeof (gid_t));
  for (size_t i = 0; i < u->n_additional_gids; i++)
    gids[i] = u->additional_gids[i];
  int r = setgroups (u->n_additional_gids, gids);
  int e = errno;
  free (gids);
  /* setgroups is denied in a user namespace whose setgroups file says
   * "deny"; that is only fatal when groups were asked for. */
  if (r < 0 && !(e == EPERM && u->n_additional_gids == 0))
    return pr_error_set (err, e, "setgroups");
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return pr_error_set (err, errno, "setgid %u", u->gid);
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return pr_error_set (err, errno, "setuid %u", u->uid);
  return 0;
}

/* Loads the filter.  With SCMP_ACT_NOTIFY the process's own syscalls
 * after the load (close, read, write of the sync socket and exec.fifo...)
 * may be notified, and nobody answers them until the listener has the fd:
 * the runtime connected listener_sock on the host before it started this
 * process (listenerPath is a host path, runtime-spec config-linux.md
 * "Seccomp"), the fd and state are sent at once after the load, and
 * neither fd is closed (both are close-on-exec), so no notified syscall
 * can wait on a listener that has nothing yet. */
static int
load_seccomp (const struct pr_config *cfg, int listener_sock, const char *state_json, pr_error **err)
{
  const struct pr_seccomp *sc = &cfg->linux.seccomp;
  int notify_fd = -1;
  if (!cfg->linux.has_seccomp)
    return 0;
  if (pr_seccomp_load (sc, &notify_fd, err) < 0)
    return -1;
  if (notify_fd < 0)
    return 0; /* listener_sock is close-on-exec; close(2) may be filtered */
  if (listener_sock < 0)
    return pr_error_invalid (err, "seccomp: SCMP_ACT_NOTIFY requires linux.seccomp.listenerPath");
  return pr_seccomp_send_listener (sc, listener_sock, notify_fd, state_json, err);
}

int
pr_finalize_seccomp_connect (const struct pr_config *cfg, pr_error **err)
{
  const struct pr_seccomp *sc = &cfg->linux.seccomp;
  if (!cfg->linux.has_seccomp || sc->listener_path == NULL || sc->listener_path[0] == '\0')
    return -2;
  return pr_seccomp_listener_connect (sc, err);
}

int
pr_finalize_security (const struct pr_process *p, const struct pr_config *cfg, int listener_sock,
                      const char *state_json, pr_error **err)
{
  static const struct pr_capabilities none = { 0 };
  const struct pr_capabilities *caps = p->has_capabilities ? &p->capabilities : &none;

  if (pr_caps_prepare (caps, err) < 0)
    return -1;
  if (!p->no_new_privileges && load_seccomp (cfg, listener_sock, state_json, err) < 0)
    return -1;
  if (set_identity (&p->user, err) < 0)
    return -1;
  if (pr_caps_apply (caps, err) < 0)
    return -1;
  if (p->no_new_privileges && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return pr_error_set (err, errno, "set no_new_privs");
  return 0;
}

int
pr_finalize_seccomp_last (const struct pr_process *p, const struct pr_config *cfg, int listener_sock,
                          const char *state_json, pr_error **err)
{
  if (!p->no_new_privileges)
    return 0; /* loaded by pr_finalize_security, while CAP_SYS_ADMIN was held */
  return load_seccomp (cfg, listener_sock, state_json, err);
}

void
pr_finalize_fds (int preserve_fds, const struct pr_caller_fds *caller)
{
  for (int fd = 3; fd < 3 + preserve_fds; fd++)
    {
      int fl = fcntl (fd, F_GETFD);
      if (fl < 0)
        continue;
      if (pr_caller_fd_passed (caller, fd))
        fcntl (fd, F_SETFD, fl & ~FD_CLOEXEC);
      else
        fcntl (fd, F_SETFD, fl | FD_CLOEXEC);
    }
  pr_cloexec_fds_from (3 + preserve_fds);
}
