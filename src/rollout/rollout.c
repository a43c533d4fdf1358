/* rollout.c - create-time rewrite of config.json for a rollout and the
 * exec-time phase choice (see rollout.h). */
#define _GNU_SOURCE
#include "rollout.h"
#include "base.h"
#include "hidden.h"
#include "namespaces.h"
#include "network.h"
#include "phase.h"
#include "verifier.h"
#include "netfiles.h"
#include "../base/env.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>

#define POLICY_FILE "rollout-policy.json"
#define PHASE_FILE "rollout-phase"
#define ENGINE_USER_FILE "rollout-engine-user"
#define CONFIG_PHASE_FILE "rollout-config-phase"

bool
pr_rollout_is_pod_sandbox (const struct pr_config *cfg)
{
  /* containerd's CRI plugin, then CRI-O (annotations.ContainerType). */
  static const char *const keys[] = { "io.kubernetes.cri.container-type", "io.kubernetes.cri-o.ContainerType" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (keys); i++)
    {
      const char *kind = pr_config_annotation (cfg, keys[i]);
      if (kind && strcmp (kind, "sandbox") == 0)
        return true;
    }
  return false;
}

char *
pr_rollout_policy_source (const struct pr_config *cfg, const char *policy_file)
{
  if (pr_rollout_is_pod_sandbox (cfg))
    return NULL;
  const char *v = pr_config_annotation (cfg, PR_ROLLOUT_ANNOTATION);
  if (v)
    return xstrdup (v);
  if (policy_file)
    return xasprintf ("@%s", policy_file);
  return NULL;
}

/* ------------------------------------------------------------ environment */

/* Removes PROCTOR_* and drop_env variables: nothing in a session names
 * the harness. */
static char **
env_filter (const struct pr_policy *p, char **env)
{
  size_t w = 0;
  for (size_t i = 0; env && env[i]; i++)
    {
      _cleanup_free_ char *name = xstrdup (env[i]);
      char *eq = strchr (name, '=');
      if (eq)
        *eq = '\0';
      if (strncmp (name, "PROCTOR_", 8) == 0 || pr_policy_env_dropped (p, name))
        {
          free (env[i]);
          continue;
        }
      env[w++] = env[i];
    }
  if (env)
    env[w] = NULL;
  return env;
}

static char **
env_layer (char **env, const struct pr_phase_policy *t)
{
  for (size_t i = 0; i < t->n_env; i++)
    env = pr_env_set (env, t->env[i].key, t->env[i].value);
  return env;
}

/* ---------------------------------------------------------------- identity */

static int
apply_user (int rootfd, const char *spec, struct pr_process *proc, pr_error **err)
{
  struct pr_identity id = { 0 };
  if (pr_identity_resolve (rootfd, spec, &id, err) < 0)
    return -1;
  proc->user.uid = id.uid;
  proc->user.gid = id.gid;
  free (proc->user.additional_gids);
  proc->user.additional_gids = id.groups;
  proc->user.n_additional_gids = id.n_groups;
  id.groups = NULL;
  proc->env = pr_env_set (proc->env, "HOME", id.home ? id.home : "/");
  pr_identity_free_contents (&id);
  return 0;
}

/* Under verifier.base "image", the verifier user's HOME as the image's
 * /etc/passwd has it (the top layer that holds the file), not the live
 * one: an agent that points root's home at a directory of its own (its
 * ~/.local/lib/python3*, ~/.bashrc) would otherwise choose what the
 * verifier's tools read.  uid, gid and groups stay the live passwd's (a
 * task may add users; running the verifier as another uid gains an agent
 * nothing).  The image lacking the user or the file leaves HOME as it is:
 * that depends on the image only, never on the agent. */
static void
image_home (const struct pr_rollout *r, const char *spec, struct pr_process *p)
{
  _cleanup_strv_ char **lowers = NULL;
  _cleanup_free_ char *upper = NULL;
  pr_base_load (r->state_dirfd, &lowers, &upper);
  for (size_t i = 0; lowers && lowers[i]; i++)
    {
      _cleanup_close_ int fd = open (lowers[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0 || faccessat (fd, "etc/passwd", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      struct pr_identity id = { 0 };
      _cleanup_error_ pr_error *e = NULL;
      if (pr_identity_resolve (fd, spec, &id, &e) == 0 && id.home)
        p->env = pr_env_set (p->env, "HOME", id.home);
      pr_identity_free_contents (&id);
      return;
    }
}

/* ------------------------------------------------------------------ state */

static int
write_phase (int state_dirfd, enum pr_phase phase, pr_error **err)
{
  const char *name = pr_phase_name (phase);
  return pr_write_file_at (state_dirfd, PHASE_FILE, name, strlen (name), 0600, err);
}

int
pr_rollout_set_phase (int state_dirfd, enum pr_phase phase, pr_error **err)
{
  return write_phase (state_dirfd, phase, err);
}

/* Records the PROCTOR_PHASE values config.json's process.env carries (the
 * image's ENV, a pod's env): engines copy that env into every exec
 * request, so an exec carrying one of these values did not choose it.
 * The values are kept NUL-separated (an env entry holds no NUL); no file
 * when there are none. */
static int
write_config_phase (int state_dirfd, char *const *env, pr_error **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  for (size_t i = 0; env && env[i]; i++)
    {
      const char *v = pr_env_entry_value (env[i], PR_PHASE_ENV);
      if (v == NULL)
        continue;
      size_t n = strlen (v) + 1;
      buf = xrealloc (buf, len + n);
      memcpy (buf + len, v, n);
      len += n;
    }
  if (buf == NULL)
    return 0;
  return pr_write_file_at (state_dirfd, CONFIG_PHASE_FILE, buf, len, 0600, err);
}

/* Reads what write_config_phase wrote into r->config_phase. */
static int
load_config_phase (int state_dirfd, struct pr_rollout *r, pr_error **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  if (faccessat (state_dirfd, CONFIG_PHASE_FILE, F_OK, 0) < 0)
    return 0;
  if (pr_read_file_at (state_dirfd, CONFIG_PHASE_FILE, &buf, &len, err) < 0)
    return -1;
  for (size_t off = 0; off < len; off += strlen (buf + off) + 1)
    {
      r->config_phase = xrealloc (r->config_phase, (r->n_config_phase + 1) * sizeof (char *));
      r->config_phase[r->n_config_phase++] = xstrdup (buf + off);
    }
  return 0;
}

/* Agent and setup processes run in the user namespace that owns the
 * rollout's network namespace, which the verifier shares: CAP_NET_RAW
 * there would let an agent sniff the verifier's proxy token off loopback
 * (AF_PACKET, raw sockets; docker grants it by default), and CAP_NET_ADMIN
 * would let it reroute 127.0.0.1:3129 or take lo down under the verifier.
 * Neither is in any set of theirs (capabilities(7)); nothing else of the
 * process's capabilities changes.  A user namespace the agent makes
 * itself gains them only over network namespaces it owns. */
static const char *const net_caps[] = { "CAP_NET_RAW", "CAP_NET_ADMIN" };

static bool
is_net_cap (const char *name)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (net_caps); i++)
    if (strcasecmp (name, net_caps[i]) == 0 || strcasecmp (name, net_caps[i] + 4) == 0)
      return true;
  return false;
}

static void
drop_net_caps_from (char **set)
{
  if (set == NULL)
    return;
  size_t k = 0;
  for (size_t i = 0; set[i]; i++)
    {
      if (is_net_cap (set[i]))
        free (set[i]);
      else
        set[k++] = set[i];
    }
  set[k] = NULL;
}

static void
drop_net_caps (struct pr_process *p)
{
  struct pr_capabilities *c = &p->capabilities;
  drop_net_caps_from (c->bounding);
  drop_net_caps_from (c->effective);
  drop_net_caps_from (c->inheritable);
  drop_net_caps_from (c->permitted);
  drop_net_caps_from (c->ambient);
}

int
pr_rollout_create (const char *source, struct pr_config *cfg, const char *rootfs, int state_dirfd,
                   struct pr_rollout **out, pr_error **err)
{
  _cleanup_policy_ struct pr_policy *policy = NULL;
  _cleanup_close_ int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return pr_error_set (err, errno, "open rootfs `%s`", rootfs);
  if (pr_policy_load (source, &policy, err) < 0)
    return -1;
  /* First: a host that lacks what the policy's network needs fails here,
   * with nothing made yet. */
  if (pr_network_check (policy, err) < 0)
    return -1;
  if (policy->verifier.user)
    {
      struct pr_identity id = { 0 };
      if (pr_identity_resolve (rootfd, policy->verifier.user, &id, err) < 0)
        return pr_error_wrap (err, "rollout policy: %s%sverifier.user", source[0] == '@' ? source + 1 : "",
                              source[0] == '@' ? ": " : "");
      pr_identity_free_contents (&id);
    }
  /* Before anything is moved out of the rootfs: a refused verifier.base
   * leaves the image as it was. */
  if (pr_base_record (rootfs, policy, state_dirfd, err) < 0)
    return -1;
  if (pr_rollout_namespaces (cfg, err) < 0)
    return -1;
  struct pr_process *proc = &cfg->process;
  /* Before env_filter removes it from the container's env. */
  if (write_config_phase (state_dirfd, proc->env, err) < 0)
    return -1;
  _cleanup_free_ char *engine_user = xasprintf ("%u:%u", proc->user.uid, proc->user.gid);
  if (pr_write_file_at (state_dirfd, ENGINE_USER_FILE, engine_user, strlen (engine_user), 0600, err) < 0)
    return -1;
  if (policy->agent.user && apply_user (rootfd, policy->agent.user, proc, err) < 0)
    return pr_error_wrap (err, "rollout policy: %s%sagent.user", source[0] == '@' ? source + 1 : "",
                          source[0] == '@' ? ": " : "");
  proc->env = env_layer (proc->env, &policy->environment);
  proc->env = env_layer (proc->env, &policy->agent);
  proc->env = env_filter (policy, proc->env);
  proc->env = pr_network_proxy_env (policy, PR_PHASE_AGENT, NULL, proc->env);
  drop_net_caps (proc);

  /* Store the policy as validated (normalised), not the source again: an
   * @file could change between the two reads. */
  _cleanup_free_ char *text = pr_policy_to_json (policy);
  size_t len = strlen (text);
  if (pr_write_file_at (state_dirfd, POLICY_FILE, text, len, 0600, err) < 0
      || write_phase (state_dirfd, PR_PHASE_AGENT, err) < 0)
    return -1;
  if (pr_hidden_take_mounts (cfg, policy->hide, state_dirfd, err) < 0
      || pr_hidden_stash (rootfd, policy->hide, state_dirfd, err) < 0)
    return -1;
  if (pr_verifier_view_record (rootfd, state_dirfd, err) < 0)
    return -1;
  /* Before the agent runs: the resolver files as the engine made them,
   * with the peers' lines that init adds to /etc/hosts. */
  _cleanup_free_ char *peer_lines = pr_network_hosts_lines (policy);
  if (pr_netfiles_record (cfg, rootfd, state_dirfd, peer_lines, err) < 0)
    return -1;

  struct pr_rollout *r = xmalloc0 (sizeof *r);
  r->policy = steal_pointer (&policy);
  r->policy_text = steal_pointer (&text);
  r->state_dirfd = state_dirfd;
  r->rootfs = xstrdup (rootfs);
  r->default_phase = PR_PHASE_AGENT;
  r->engine_uid = cfg->process.user.uid;
  r->engine_gid = cfg->process.user.gid;
  sscanf (engine_user, "%u:%u", &r->engine_uid, &r->engine_gid);
  *out = r;
  return 0;
}

int
pr_rollout_load (int state_dirfd, const char *rootfs, struct pr_rollout **out, pr_error **err)
{
  _cleanup_free_ char *text = NULL, *phase = NULL;
  size_t len = 0;
  *out = NULL;
  if (faccessat (state_dirfd, POLICY_FILE, F_OK, 0) < 0)
    return 0;
  if (pr_read_file_at (state_dirfd, POLICY_FILE, &text, &len, err) < 0)
    return -1;
  struct pr_rollout *r = xmalloc0 (sizeof *r);
  if (pr_policy_parse_saved (text, len, &r->policy, err) < 0)
    {
      free (r);
      return -1;
    }
  r->policy_text = steal_pointer (&text);
  r->state_dirfd = state_dirfd;
  r->rootfs = xstrdup (rootfs);
  r->default_phase = PR_PHASE_AGENT;
  if (pr_read_file_at (state_dirfd, PHASE_FILE, &phase, NULL, NULL) == 0)
    pr_phase_parse (phase, &r->default_phase);
  _cleanup_free_ char *eu = NULL;
  if (pr_read_file_at (state_dirfd, ENGINE_USER_FILE, &eu, NULL, NULL) == 0)
    sscanf (eu, "%u:%u", &r->engine_uid, &r->engine_gid);
  if (load_config_phase (state_dirfd, r, err) < 0)
    {
      pr_rollout_free (r);
      return -1;
    }
  *out = r;
  return 0;
}

int
pr_rollout_restore_hidden (int state_dirfd, const char *rootfs, pr_error **err)
{
  _cleanup_rollout_ struct pr_rollout *r = NULL;
  if (pr_rollout_load (state_dirfd, rootfs, &r, err) < 0)
    return -1;
  if (r == NULL)
    return 0;
  _cleanup_close_ int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    {
      /* Nothing to put back into: drop the stash, and say so (ENOENT). */
      int e = errno;
      if (e == ENOENT && pr_hidden_discard (state_dirfd, err) < 0)
        return -1;
      return pr_error_set (err, e, "open rootfs `%s`", rootfs);
    }
  return pr_hidden_restore (rootfd, r->policy->hide, state_dirfd, err);
}

/* ------------------------------------------------------------------- exec */

/* The phase an exec request chose: the argv switch first (it is bound to
 * the policy's secret, and an engine without an exec env has only it),
 * then PROCTOR_PHASE values the container did not inherit, then the
 * container's default (rollout-phase). */
static int
choose_phase (const struct pr_rollout *r, struct pr_process *p, enum pr_phase *phase, pr_error **err)
{
  bool chosen;
  *phase = r->default_phase;
  if (pr_phase_from_argv (r->policy, p->args, phase, &chosen, err) < 0)
    return -1;
  if (chosen)
    return 0;
  return pr_phase_from_env (p->env, r->config_phase, r->n_config_phase, phase, &chosen, err);
}

int
pr_rollout_exec_prepare (const struct pr_rollout *r, struct pr_process *p, enum pr_phase *phase_out, pr_error **err)
{
  enum pr_phase phase;
  if (choose_phase (r, p, &phase, err) < 0)
    return -1;
  const struct pr_policy *pol = r->policy;
  const struct pr_phase_policy *table = phase == PR_PHASE_VERIFIER ? &pol->verifier : &pol->agent;
  bool default_user = p->user.uid == r->engine_uid && p->user.gid == r->engine_gid;
  if (table->user && default_user)
    {
      _cleanup_close_ int rootfd = open (r->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (rootfd < 0)
        return pr_error_set (err, errno, "open rootfs `%s`", r->rootfs);
      if (apply_user (rootfd, table->user, p, err) < 0)
        return pr_error_wrap (err, "rollout policy: %s.user", phase == PR_PHASE_VERIFIER ? "verifier" : "agent");
      if (phase == PR_PHASE_VERIFIER && pol->base == PR_BASE_IMAGE)
        image_home (r, table->user, p);
    }
  p->env = env_layer (p->env, &pol->environment);
  p->env = env_layer (p->env, table);
  p->env = env_filter (pol, p->env);
  if (phase != PR_PHASE_VERIFIER)
    drop_net_caps (p);
  *phase_out = phase;
  return 0;
}

void
pr_rollout_free (struct pr_rollout *r)
{
  if (r == NULL)
    return;
  if (r->policy)
    pr_policy_free (r->policy);
  free (r->policy_text);
  free (r->rootfs);
  for (size_t i = 0; i < r->n_config_phase; i++)
    free (r->config_phase[i]);
  free (r->config_phase);
  free (r);
}
