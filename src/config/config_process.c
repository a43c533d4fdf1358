/* config_process.c - the runtime-spec "process" object into struct
 * pr_process: user, capabilities, rlimits, scheduler, ioPriority and the
 * rest, for config.json and for a standalone `exec --process` document
 * (pr_process_parse), plus pr_process_free_contents.
 * Source: OCI runtime-spec 1.2 config.md "Process". */
#define _GNU_SOURCE
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>

#include "config-internal.h"
#include "config.h"
#include "../base/util.h"

static const struct
{
  const char *name;
  int resource;
} rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
  { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
};

static int
rlimit_resource (const char *name)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (rlimit_names); i++)
    if (strcmp (rlimit_names[i].name, name) == 0)
      return rlimit_names[i].resource;
  return -1;
}

static int
parse_user (yajl_val proc, const char *parent, struct pr_user *u, pr_error **err)
{
  char path[PR_JPATH_MAX], elem[PR_JPATH_MAX];
  yajl_val obj, gids;

  if (pr_json_get_object (proc, parent, "user", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  pr_jpath (path, parent, "user");
  if (pr_json_get_u32 (obj, path, "uid", &u->uid, NULL, err) < 0
      || pr_json_get_u32 (obj, path, "gid", &u->gid, NULL, err) < 0
      || pr_json_get_u32 (obj, path, "umask", &u->umask, &u->has_umask, err) < 0
      || pr_json_get_string (obj, path, "username", &u->username, err) < 0
      || pr_json_get_array (obj, path, "additionalGids", &gids, err) < 0)
    return -1;
  if (u->has_umask && u->umask > 0777)
    return pr_error_set (err, 0, "%s.umask: %" PRIu32 " is not a permission mask (at most 0777)", path, u->umask);
  if (gids == NULL)
    return 0;
  char gpath[PR_JPATH_MAX];
  pr_jpath (gpath, path, "additionalGids");
  u->additional_gids = xmalloc0 (gids->u.array.len * sizeof (uint32_t));
  for (size_t i = 0; i < gids->u.array.len; i++)
    {
      uint64_t g;
      if (pr_json_unsigned (gids->u.array.values[i], pr_jpath_index (elem, gpath, i), UINT32_MAX, &g, err) < 0)
        return -1;
      u->additional_gids[u->n_additional_gids++] = (uint32_t) g;
    }
  return 0;
}

static int
parse_capabilities (yajl_val proc, const char *parent, struct pr_process *p, pr_error **err)
{
  char path[PR_JPATH_MAX];
  yajl_val obj;
  struct pr_capabilities *c = &p->capabilities;

  if (pr_json_get_object (proc, parent, "capabilities", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  p->has_capabilities = true;
  pr_jpath (path, parent, "capabilities");
  /* Capability names are resolved (and unknown ones warned about, as runc
   * does) by the capability code, not here. */
  if (pr_json_get_strv (obj, path, "bounding", &c->bounding, err) < 0
      || pr_json_get_strv (obj, path, "effective", &c->effective, err) < 0
      || pr_json_get_strv (obj, path, "inheritable", &c->inheritable, err) < 0
      || pr_json_get_strv (obj, path, "permitted", &c->permitted, err) < 0
      || pr_json_get_strv (obj, path, "ambient", &c->ambient, err) < 0)
    return -1;
  return 0;
}

static int
parse_rlimits (yajl_val proc, const char *parent, struct pr_process *p, pr_error **err)
{
  char path[PR_JPATH_MAX], elem[PR_JPATH_MAX];
  yajl_val arr;

  if (pr_json_get_array (proc, parent, "rlimits", &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  pr_jpath (path, parent, "rlimits");
  p->rlimits = xmalloc0 (arr->u.array.len * sizeof *p->rlimits);
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val o = arr->u.array.values[i];
      struct pr_rlimit *r = &p->rlimits[p->n_rlimits++];
      bool have_hard, have_soft;

      pr_jpath_index (elem, path, i);
      if (pr_json_expect_object (o, elem, err) < 0
          || pr_json_get_string (o, elem, "type", &r->type, err) < 0
          || pr_json_get_u64 (o, elem, "hard", &r->hard, &have_hard, err) < 0
          || pr_json_get_u64 (o, elem, "soft", &r->soft, &have_soft, err) < 0)
        return -1;
      if (r->type == NULL)
        return pr_json_missing (elem, "type", err);
      if (!have_hard)
        return pr_json_missing (elem, "hard", err);
      if (!have_soft)
        return pr_json_missing (elem, "soft", err);
      r->resource = rlimit_resource (r->type);
      if (r->resource < 0)
        return pr_error_set (err, 0, "%s.type: unknown rlimit \"%s\"", elem, r->type);
      /* runtime-spec: "Entries in the array MUST have unique type". */
      for (size_t j = 0; j < i; j++)
        if (p->rlimits[j].resource == r->resource)
          return pr_error_set (err, 0, "%s.type: duplicate rlimit \"%s\"", elem, r->type);
    }
  return 0;
}

static int
parse_scheduler (yajl_val proc, const char *parent, struct pr_process *p, pr_error **err)
{
  static const char *const policies[] = { "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR",      "SCHED_BATCH",
                                          "SCHED_ISO",   "SCHED_IDLE", "SCHED_DEADLINE" };
  char path[PR_JPATH_MAX];
  yajl_val obj;
  struct pr_scheduler *s = &p->scheduler;
  int64_t nice = 0, prio = 0;

  if (pr_json_get_object (proc, parent, "scheduler", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  p->has_scheduler = true;
  pr_jpath (path, parent, "scheduler");
  if (pr_json_get_string (obj, path, "policy", &s->policy, err) < 0
      || pr_json_get_i64 (obj, path, "nice", -20, 19, &nice, NULL, err) < 0
      || pr_json_get_i64 (obj, path, "priority", INT32_MIN, INT32_MAX, &prio, NULL, err) < 0
      || pr_json_get_strv (obj, path, "flags", &s->flags, err) < 0
      || pr_json_get_u64 (obj, path, "runtime", &s->runtime, NULL, err) < 0
      || pr_json_get_u64 (obj, path, "deadline", &s->deadline, NULL, err) < 0
      || pr_json_get_u64 (obj, path, "period", &s->period, NULL, err) < 0)
    return -1;
  s->nice = (int32_t) nice;
  s->priority = (int32_t) prio;
  if (s->policy == NULL)
    return pr_json_missing (path, "policy", err);
  for (size_t i = 0; i < PR_ARRAY_SIZE (policies); i++)
    if (strcmp (s->policy, policies[i]) == 0)
      return 0;
  return pr_error_set (err, 0, "%s.policy: unknown scheduler policy \"%s\"", path, s->policy);
}

static int
parse_io_priority (yajl_val proc, const char *parent, struct pr_process *p, pr_error **err)
{
  char path[PR_JPATH_MAX];
  yajl_val obj;
  int64_t prio = 0;

  if (pr_json_get_object (proc, parent, "ioPriority", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  p->has_io_priority = true;
  pr_jpath (path, parent, "ioPriority");
  /* ioprio_set(2): class data is 0 (highest) to 7 for RT and BE. */
  if (pr_json_get_string (obj, path, "class", &p->io_priority_class, err) < 0
      || pr_json_get_i64 (obj, path, "priority", 0, 7, &prio, NULL, err) < 0)
    return -1;
  p->io_priority = (int32_t) prio;
  if (p->io_priority_class == NULL)
    return pr_json_missing (path, "class", err);
  if (strcmp (p->io_priority_class, "IOPRIO_CLASS_RT") != 0 && strcmp (p->io_priority_class, "IOPRIO_CLASS_BE") != 0
      && strcmp (p->io_priority_class, "IOPRIO_CLASS_IDLE") != 0)
    return pr_error_set (err, 0, "%s.class: unknown I/O priority class \"%s\"", path, p->io_priority_class);
  return 0;
}

int
pr_config_parse_process (yajl_val obj, const char *parent, struct pr_process *p, pr_error **err)
{
  char path[PR_JPATH_MAX];
  yajl_val cs;
  int64_t oom = 0;

  if (pr_json_expect_object (obj, parent, err) < 0
      || pr_json_get_bool (obj, parent, "terminal", &p->terminal, NULL, err) < 0
      || pr_json_get_object (obj, parent, "consoleSize", &cs, err) < 0)
    return -1;
  if (cs)
    {
      bool have_h, have_w;
      pr_jpath (path, parent, "consoleSize");
      if (pr_json_get_u32 (cs, path, "height", &p->console_height, &have_h, err) < 0
          || pr_json_get_u32 (cs, path, "width", &p->console_width, &have_w, err) < 0)
        return -1;
      if (!have_h)
        return pr_json_missing (path, "height", err);
      if (!have_w)
        return pr_json_missing (path, "width", err);
      p->has_console_size = true;
    }
  if (parse_user (obj, parent, &p->user, err) < 0
      || pr_json_get_strv (obj, parent, "args", &p->args, err) < 0
      || pr_json_get_string (obj, parent, "commandLine", &p->command_line, err) < 0
      || pr_json_get_strv (obj, parent, "env", &p->env, err) < 0
      || pr_json_get_string (obj, parent, "cwd", &p->cwd, err) < 0
      || parse_capabilities (obj, parent, p, err) < 0 || parse_rlimits (obj, parent, p, err) < 0
      || pr_json_get_bool (obj, parent, "noNewPrivileges", &p->no_new_privileges, NULL, err) < 0
      || pr_json_get_string (obj, parent, "apparmorProfile", &p->apparmor_profile, err) < 0
      || pr_json_get_i64 (obj, parent, "oomScoreAdj", -1000, 1000, &oom, &p->has_oom_score_adj, err) < 0
      || pr_json_get_string (obj, parent, "selinuxLabel", &p->selinux_label, err) < 0
      || parse_scheduler (obj, parent, p, err) < 0 || parse_io_priority (obj, parent, p, err) < 0)
    return -1;
  p->oom_score_adj = (int) oom;
  if (p->args == NULL || p->args[0] == NULL)
    return pr_error_set (err, 0, "%s: args must not be empty", pr_jpath (path, parent, "args"));
  /* runtime-spec config.md "process": env entries are KEY=VALUE; one
   * without '=' would be dropped without a word (runc refuses it too). */
  for (size_t i = 0; p->env && p->env[i]; i++)
    if (strchr (p->env[i], '=') == NULL || p->env[i][0] == '=')
      return pr_error_invalid (err, "%s[%zu]: `%s` is not KEY=VALUE", pr_jpath (path, parent, "env"), i, p->env[i]);
  if (p->env == NULL)
    p->env = xmalloc0 (sizeof (char *));
  /* runtime-spec: cwd is REQUIRED and MUST be absolute.  Engines always
   * send it; a hand-written process.json without it gets "/" as crun
   * does, rather than a NULL for every consumer to check. */
  if (p->cwd == NULL)
    p->cwd = xstrdup ("/");
  if (p->cwd[0] != '/')
    return pr_error_set (err, 0, "%s: \"%s\" is not an absolute path", pr_jpath (path, parent, "cwd"), p->cwd);
  return 0;
}

void
pr_process_free_contents (struct pr_process *p)
{
  if (p == NULL)
    return;
  free (p->user.additional_gids);
  free (p->user.username);
  pr_strv_free (p->args);
  free (p->command_line);
  pr_strv_free (p->env);
  free (p->cwd);
  pr_strv_free (p->capabilities.bounding);
  pr_strv_free (p->capabilities.effective);
  pr_strv_free (p->capabilities.inheritable);
  pr_strv_free (p->capabilities.permitted);
  pr_strv_free (p->capabilities.ambient);
  for (size_t i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p->scheduler.policy);
  pr_strv_free (p->scheduler.flags);
  free (p->io_priority_class);
  memset (p, 0, sizeof *p);
}

int
pr_process_parse (const char *data, size_t len, struct pr_process *out, yajl_val *tree_out, pr_error **err)
{
  yajl_val tree = NULL;

  memset (out, 0, sizeof *out);
  if (tree_out)
    *tree_out = NULL;
  if (pr_config_parse_tree (data, len, "process JSON", &tree, err) < 0)
    return -1;
  if (pr_config_parse_process (tree, "process", out, err) < 0)
    {
      pr_process_free_contents (out);
      yajl_tree_free (tree);
      return -1;
    }
  if (tree_out)
    *tree_out = tree;
  else
    yajl_tree_free (tree);
  return 0;
}
