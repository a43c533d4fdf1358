/* config_linux.c - the "linux" object of config.json into struct pr_linux:
 * namespaces, id mappings, devices, cgroupsPath/resources, propagation,
 * masked/readonly paths, sysctl, seccomp, personality and time offsets,
 * plus the namespace name <-> CLONE_NEW* mapping.
 * Source: OCI runtime-spec 1.2 config-linux.md. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <sched.h>
#include <string.h>

#include "config-internal.h"
#include "config.h"
#include "../base/syscall.h"
#include "../base/util.h"

/* ---- namespace names ------------------------------------------------- */

static const struct
{
  const char *name;      /* runtime-spec type */
  const char *proc_name; /* /proc/PID/ns entry */
  int flag;
} ns_names[] = {
  { "pid", "pid", CLONE_NEWPID },       { "network", "net", CLONE_NEWNET }, { "mount", "mnt", CLONE_NEWNS },
  { "ipc", "ipc", CLONE_NEWIPC },       { "uts", "uts", CLONE_NEWUTS },     { "user", "user", CLONE_NEWUSER },
  { "cgroup", "cgroup", CLONE_NEWCGROUP }, { "time", "time", CLONE_NEWTIME },
};

int
pr_namespace_type (const char *name)
{
  for (size_t i = 0; name && i < PR_ARRAY_SIZE (ns_names); i++)
    if (strcmp (ns_names[i].name, name) == 0)
      return ns_names[i].flag;
  return -1;
}

const char *
pr_namespace_name (int type)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (ns_names); i++)
    if (ns_names[i].flag == type)
      return ns_names[i].name;
  return NULL;
}

const char *
pr_namespace_proc_name (int type)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (ns_names); i++)
    if (ns_names[i].flag == type)
      return ns_names[i].proc_name;
  return NULL;
}

const struct pr_namespace *
pr_config_namespace (const struct pr_config *cfg, int type)
{
  for (size_t i = 0; cfg && i < cfg->linux.n_namespaces; i++)
    if (cfg->linux.namespaces[i].type == type)
      return &cfg->linux.namespaces[i];
  return NULL;
}

/* ---- sections -------------------------------------------------------- */

static int
parse_namespaces (yajl_val lx, struct pr_linux *l, pr_error **err)
{
  char elem[PR_JPATH_MAX];
  yajl_val arr;

  if (pr_json_get_array (lx, "linux", "namespaces", &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  l->namespaces = xmalloc0 (arr->u.array.len * sizeof *l->namespaces);
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val o = arr->u.array.values[i];
      struct pr_namespace *ns = &l->namespaces[l->n_namespaces++];
      _cleanup_free_ char *type = NULL;

      pr_jpath_index (elem, "linux.namespaces", i);
      if (pr_json_expect_object (o, elem, err) < 0 || pr_json_get_string (o, elem, "type", &type, err) < 0
          || pr_json_get_string (o, elem, "path", &ns->path, err) < 0)
        return -1;
      if (type == NULL)
        return pr_json_missing (elem, "type", err);
      ns->type = pr_namespace_type (type);
      if (ns->type < 0)
        return pr_error_set (err, 0, "%s.type: unknown namespace type \"%s\"", elem, type);
      /* runtime-spec: "If a namespace type is specified more than once,
       * the runtime MUST generate an error". */
      for (size_t j = 0; j < i; j++)
        if (l->namespaces[j].type == ns->type)
          return pr_error_set (err, 0, "%s.type: duplicate namespace type \"%s\"", elem, type);
      /* An empty path is how Go-written configs spell "not set". */
      if (ns->path && ns->path[0] == '\0')
        {
          free (ns->path);
          ns->path = NULL;
        }
    }
  return 0;
}

static bool
device_type_ok (const char *t)
{
  return t[0] != '\0' && t[1] == '\0' && strchr ("cbup", t[0]) != NULL;
}

static int
parse_device (yajl_val o, const char *elem, struct pr_device *d, pr_error **err)
{
  _cleanup_free_ char *type = NULL;
  bool have_major, have_minor;

  if (pr_json_expect_object (o, elem, err) < 0 || pr_json_get_string (o, elem, "path", &d->path, err) < 0
      || pr_json_get_string (o, elem, "type", &type, err) < 0
      || pr_json_get_i64 (o, elem, "major", INT64_MIN, INT64_MAX, &d->major, &have_major, err) < 0
      || pr_json_get_i64 (o, elem, "minor", INT64_MIN, INT64_MAX, &d->minor, &have_minor, err) < 0
      || pr_json_get_u32 (o, elem, "fileMode", &d->file_mode, &d->has_file_mode, err) < 0
      || pr_json_get_u32 (o, elem, "uid", &d->uid, &d->has_uid, err) < 0
      || pr_json_get_u32 (o, elem, "gid", &d->gid, &d->has_gid, err) < 0)
    return -1;
  if (d->path == NULL)
    return pr_json_missing (elem, "path", err);
  if (d->path[0] != '/')
    return pr_error_set (err, 0, "%s.path: \"%s\" is not an absolute path", elem, d->path);
  if (type == NULL)
    return pr_json_missing (elem, "type", err);
  if (!device_type_ok (type))
    return pr_error_set (err, 0, "%s.type: invalid device type \"%s\"", elem, type);
  d->type = type[0];
  /* runtime-spec: major/minor are REQUIRED unless type is p (a fifo). */
  if (d->type != 'p' && !have_major)
    return pr_json_missing (elem, "major", err);
  if (d->type != 'p' && !have_minor)
    return pr_json_missing (elem, "minor", err);
  if (d->has_file_mode && d->file_mode > 07777)
    return pr_error_set (err, 0, "%s.fileMode: %" PRIu32 " has bits outside 07777", elem, d->file_mode);
  return 0;
}

static int
parse_devices (yajl_val lx, struct pr_linux *l, pr_error **err)
{
  char elem[PR_JPATH_MAX];
  yajl_val arr;

  if (pr_json_get_array (lx, "linux", "devices", &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  l->devices = xmalloc0 (arr->u.array.len * sizeof *l->devices);
  for (size_t i = 0; i < arr->u.array.len; i++)
    if (parse_device (arr->u.array.values[i], pr_jpath_index (elem, "linux.devices", i), &l->devices[l->n_devices++],
                      err)
        < 0)
      return -1;
  return 0;
}

static int
check_prefix (const char *path, const char *value, const char *prefix, const char *what, pr_error **err)
{
  if (strncmp (value, prefix, strlen (prefix)) != 0 || value[strlen (prefix)] == '\0')
    return pr_error_set (err, 0, "%s: invalid %s \"%s\"", path, what, value);
  return 0;
}

static int
check_prefix_strv (const char *path, char **v, const char *prefix, const char *what, pr_error **err)
{
  char elem[PR_JPATH_MAX];
  for (size_t i = 0; v && v[i]; i++)
    if (check_prefix (pr_jpath_index (elem, path, i), v[i], prefix, what, err) < 0)
      return -1;
  return 0;
}

/* The action names of runtime-spec config-linux.md#seccomp. */
static int
check_action (const char *path, const char *value, pr_error **err)
{
  static const char *const actions[] = { "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
                                         "SCMP_ACT_TRAP",  "SCMP_ACT_ERRNO",        "SCMP_ACT_TRACE",
                                         "SCMP_ACT_ALLOW", "SCMP_ACT_LOG",          "SCMP_ACT_NOTIFY" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (actions); i++)
    if (strcmp (value, actions[i]) == 0)
      return 0;
  return pr_error_set (err, 0, "%s: unknown seccomp action \"%s\"", path, value);
}

static int
parse_seccomp_arg (yajl_val o, const char *elem, struct pr_seccomp_arg *a, pr_error **err)
{
  char path[PR_JPATH_MAX];
  bool have_index, have_value;

  if (pr_json_expect_object (o, elem, err) < 0
      || pr_json_get_u32 (o, elem, "index", &a->index, &have_index, err) < 0
      || pr_json_get_u64 (o, elem, "value", &a->value, &have_value, err) < 0
      || pr_json_get_u64 (o, elem, "valueTwo", &a->value_two, NULL, err) < 0
      || pr_json_get_string (o, elem, "op", &a->op, err) < 0)
    return -1;
  if (!have_index)
    return pr_json_missing (elem, "index", err);
  /* seccomp_data.args has six entries. */
  if (a->index > 5)
    return pr_error_set (err, 0, "%s.index: %" PRIu32 " is out of range [0, 5]", elem, a->index);
  if (!have_value)
    return pr_json_missing (elem, "value", err);
  if (a->op == NULL)
    return pr_json_missing (elem, "op", err);
  return check_prefix (pr_jpath (path, elem, "op"), a->op, "SCMP_CMP_", "seccomp operator", err);
}

static int
parse_seccomp_syscall (yajl_val o, const char *elem, struct pr_seccomp_syscall *s, pr_error **err)
{
  char path[PR_JPATH_MAX], aelem[PR_JPATH_MAX];
  yajl_val args;

  if (pr_json_expect_object (o, elem, err) < 0 || pr_json_get_strv (o, elem, "names", &s->names, err) < 0
      || pr_json_get_string (o, elem, "action", &s->action, err) < 0
      || pr_json_get_u32 (o, elem, "errnoRet", &s->errno_ret, &s->has_errno_ret, err) < 0
      || pr_json_get_array (o, elem, "args", &args, err) < 0)
    return -1;
  if (s->names == NULL || s->names[0] == NULL)
    return pr_error_set (err, 0, "%s.names: must be a non-empty array of strings", elem);
  if (s->action == NULL)
    return pr_json_missing (elem, "action", err);
  if (check_action (pr_jpath (path, elem, "action"), s->action, err) < 0)
    return -1;
  if (args == NULL)
    return 0;
  pr_jpath (path, elem, "args");
  s->args = xmalloc0 (args->u.array.len * sizeof *s->args);
  for (size_t i = 0; i < args->u.array.len; i++)
    if (parse_seccomp_arg (args->u.array.values[i], pr_jpath_index (aelem, path, i), &s->args[s->n_args++], err) < 0)
      return -1;
  return 0;
}

static int
parse_seccomp (yajl_val lx, struct pr_linux *l, pr_error **err)
{
  const char *P = "linux.seccomp";
  char elem[PR_JPATH_MAX];
  yajl_val obj, calls;
  struct pr_seccomp *s = &l->seccomp;

  if (pr_json_get_object (lx, "linux", "seccomp", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  l->has_seccomp = true;
  if (pr_json_get_string (obj, P, "defaultAction", &s->default_action, err) < 0
      || pr_json_get_u32 (obj, P, "defaultErrnoRet", &s->default_errno_ret, &s->has_default_errno_ret, err) < 0
      || pr_json_get_strv (obj, P, "architectures", &s->architectures, err) < 0
      || pr_json_get_strv (obj, P, "flags", &s->flags, err) < 0
      || pr_json_get_string (obj, P, "listenerPath", &s->listener_path, err) < 0
      || pr_json_get_string (obj, P, "listenerMetadata", &s->listener_metadata, err) < 0
      || pr_json_get_array (obj, P, "syscalls", &calls, err) < 0)
    return -1;
  if (s->default_action == NULL)
    return pr_json_missing (P, "defaultAction", err);
  if (check_action ("linux.seccomp.defaultAction", s->default_action, err) < 0
      || check_prefix_strv ("linux.seccomp.architectures", s->architectures, "SCMP_ARCH_", "seccomp architecture",
                            err)
             < 0
      || check_prefix_strv ("linux.seccomp.flags", s->flags, "SECCOMP_FILTER_FLAG_", "seccomp flag", err) < 0)
    return -1;
  if (calls == NULL)
    return 0;
  s->syscalls = xmalloc0 (calls->u.array.len * sizeof *s->syscalls);
  for (size_t i = 0; i < calls->u.array.len; i++)
    if (parse_seccomp_syscall (calls->u.array.values[i], pr_jpath_index (elem, "linux.seccomp.syscalls", i),
                               &s->syscalls[s->n_syscalls++], err)
        < 0)
      return -1;
  return 0;
}

static int
parse_personality (yajl_val lx, struct pr_linux *l, pr_error **err)
{
  const char *P = "linux.personality";
  yajl_val obj;

  if (pr_json_get_object (lx, "linux", "personality", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  l->has_personality = true;
  if (pr_json_get_string (obj, P, "domain", &l->personality_domain, err) < 0
      || pr_json_get_strv (obj, P, "flags", &l->personality_flags, err) < 0)
    return -1;
  if (l->personality_domain == NULL)
    return pr_json_missing (P, "domain", err);
  if (strcmp (l->personality_domain, "LINUX") != 0 && strcmp (l->personality_domain, "LINUX32") != 0)
    return pr_error_set (err, 0, "%s.domain: unknown personality domain \"%s\"", P, l->personality_domain);
  return 0;
}

static int
parse_time_offset (yajl_val offs, const char *key, int64_t *secs, uint32_t *nsecs, pr_error **err)
{
  char path[PR_JPATH_MAX];
  yajl_val obj;

  if (pr_json_get_object (offs, "linux.timeOffsets", key, &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  pr_jpath (path, "linux.timeOffsets", key);
  if (pr_json_get_i64 (obj, path, "secs", INT64_MIN, INT64_MAX, secs, NULL, err) < 0
      || pr_json_get_u32 (obj, path, "nanosecs", nsecs, NULL, err) < 0)
    return -1;
  /* time_namespaces(7): nanoseconds are 0..999999999. */
  if (*nsecs >= 1000000000U)
    return pr_error_set (err, 0, "%s.nanosecs: %" PRIu32 " is not below one second", path, *nsecs);
  return 0;
}

static int
parse_time_offsets (yajl_val lx, struct pr_linux *l, pr_error **err)
{
  yajl_val obj;

  if (pr_json_get_object (lx, "linux", "timeOffsets", &obj, err) < 0)
    return -1;
  if (obj == NULL)
    return 0;
  l->has_time_offsets = true;
  if (parse_time_offset (obj, "monotonic", &l->monotonic_secs, &l->monotonic_nanosecs, err) < 0
      || parse_time_offset (obj, "boottime", &l->boottime_secs, &l->boottime_nanosecs, err) < 0)
    return -1;
  return 0;
}

static int
check_propagation (const char *value, pr_error **err)
{
  static const char *const ok[] = { "shared",  "slave",  "private",  "unbindable",
                                    "rshared", "rslave", "rprivate", "runbindable" };
  if (value == NULL || value[0] == '\0')
    return 0;
  for (size_t i = 0; i < PR_ARRAY_SIZE (ok); i++)
    if (strcmp (value, ok[i]) == 0)
      return 0;
  return pr_error_set (err, 0, "linux.rootfsPropagation: invalid propagation \"%s\"", value);
}

int
pr_config_parse_linux (yajl_val lx, struct pr_linux *l, pr_error **err)
{
  yajl_val res;

  if (pr_json_expect_object (lx, "linux", err) < 0 || parse_namespaces (lx, l, err) < 0
      || pr_json_get_idmaps (lx, "linux", "uidMappings", &l->uid_mappings, &l->n_uid_mappings, err) < 0
      || pr_json_get_idmaps (lx, "linux", "gidMappings", &l->gid_mappings, &l->n_gid_mappings, err) < 0
      || parse_devices (lx, l, err) < 0 || pr_json_get_string (lx, "linux", "cgroupsPath", &l->cgroups_path, err) < 0
      || pr_json_get_object (lx, "linux", "resources", &res, err) < 0
      || pr_json_get_string (lx, "linux", "rootfsPropagation", &l->rootfs_propagation, err) < 0
      || check_propagation (l->rootfs_propagation, err) < 0
      || pr_json_get_strv (lx, "linux", "maskedPaths", &l->masked_paths, err) < 0
      || pr_json_get_strv (lx, "linux", "readonlyPaths", &l->readonly_paths, err) < 0
      || pr_json_get_string (lx, "linux", "mountLabel", &l->mount_label, err) < 0
      || pr_json_get_keyvals (lx, "linux", "sysctl", &l->sysctl, &l->n_sysctl, err) < 0
      || parse_seccomp (lx, l, err) < 0 || parse_personality (lx, l, err) < 0 || parse_time_offsets (lx, l, err) < 0)
    return -1;
  l->resources = res;
  return 0;
}

static void
seccomp_free_contents (struct pr_seccomp *s)
{
  free (s->default_action);
  pr_strv_free (s->architectures);
  pr_strv_free (s->flags);
  free (s->listener_path);
  free (s->listener_metadata);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      struct pr_seccomp_syscall *c = &s->syscalls[i];
      pr_strv_free (c->names);
      free (c->action);
      for (size_t j = 0; j < c->n_args; j++)
        free (c->args[j].op);
      free (c->args);
    }
  free (s->syscalls);
}

void
pr_linux_free_contents (struct pr_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    free (l->namespaces[i].path);
  free (l->namespaces);
  free (l->uid_mappings);
  free (l->gid_mappings);
  for (size_t i = 0; i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  free (l->cgroups_path);
  free (l->rootfs_propagation);
  pr_strv_free (l->masked_paths);
  pr_strv_free (l->readonly_paths);
  free (l->mount_label);
  pr_keyvals_free (l->sysctl, l->n_sysctl);
  seccomp_free_contents (&l->seccomp);
  free (l->personality_domain);
  pr_strv_free (l->personality_flags);
  memset (l, 0, sizeof *l);
}
