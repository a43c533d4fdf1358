/* annotations.c - crun's run.oci.* annotations (see annotations.h): the
 * implemented ones become standard config before create validates it, so
 * the rest of proctor never needs to know about them. */
#define _GNU_SOURCE
#include "annotations.h"
#include "../src/base/log.h"
#include "../src/base/syscall.h"
#include "../src/base/util.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_SUPPORTED(key) pr_error_set (err, 0, "%s is not supported by proctor", key)

/* Annotations whose behaviour proctor does not have; running without it
 * would give the engine a different container than it asked for. */
static const char *const refused[] = {
  "run.oci.seccomp.receiver",      "run.oci.seccomp.plugins", "run.oci.seccomp_bpf_data",
  "run.oci.systemd.force_cgroup_v1", "run.oci.delegate-cgroup", "run.oci.hooks.stdout",
  "run.oci.hooks.stderr",          "run.oci.handler",         NULL,
};

/* ------------------------------------------------- keep_original_groups */

/* Maps a host gid into the new user namespace through linux.gidMappings. */
static int
gid_to_container (const struct pr_linux *l, gid_t host, uint32_t *out)
{
  for (size_t i = 0; i < l->n_gid_mappings; i++)
    {
      const struct pr_idmap *m = &l->gid_mappings[i];
      if ((uint64_t) host >= m->host_id && (uint64_t) host < (uint64_t) m->host_id + m->size)
        {
          *out = m->container_id + (host - m->host_id);
          return 0;
        }
    }
  return -1;
}

static int
keep_original_groups (struct pr_config *cfg, pr_error **err)
{
  const struct pr_namespace *userns = pr_config_namespace (cfg, CLONE_NEWUSER);
  if (userns && userns->path)
    return pr_error_set (err, 0, "run.oci.keep_original_groups with a user namespace joined by path "
                                       "is not supported by proctor");
  int n = getgroups (0, NULL);
  if (n < 0)
    return pr_error_set (err, errno, "run.oci.keep_original_groups: getgroups");
  _cleanup_free_ gid_t *host = xmalloc0 ((size_t) (n + 1) * sizeof (gid_t));
  n = getgroups (n, host);
  if (n < 0)
    return pr_error_set (err, errno, "run.oci.keep_original_groups: getgroups");
  uint32_t *gids = xmalloc0 ((size_t) (n + 1) * sizeof (uint32_t));
  for (int i = 0; i < n; i++)
    {
      gids[i] = host[i];
      if (userns && gid_to_container (&cfg->linux, host[i], &gids[i]) < 0)
        {
          free (gids);
          return pr_error_set (err, 0,
                               "run.oci.keep_original_groups: group %u of the runtime is not mapped in "
                               "linux.gidMappings",
                               (unsigned) host[i]);
        }
    }
  /* crun skips setgroups(2) altogether, so additionalGids lose too. */
  if (cfg->process.user.n_additional_gids)
    pr_debug ("run.oci.keep_original_groups: ignoring process.user.additionalGids");
  free (cfg->process.user.additional_gids);
  cfg->process.user.additional_gids = gids;
  cfg->process.user.n_additional_gids = (size_t) n;
  return 0;
}

/* ------------------------------------------------------- timens_offset */

static int
parse_offset_entry (const char *entry, struct pr_linux *l, pr_error **err)
{
  char clock[32];
  long long secs;
  long nsecs;
  int end = 0;
  if (sscanf (entry, " %31s %lld %ld %n", clock, &secs, &nsecs, &end) != 3 || entry[end] != '\0')
    return pr_error_set (err, 0, "run.oci.timens_offset: expected `CLOCK SECS NSECS`, got `%s`", entry);
  if (nsecs < 0 || nsecs > 999999999)
    return pr_error_set (err, 0, "run.oci.timens_offset: nanoseconds out of range in `%s`", entry);
  /* timens_offsets(5) names clocks by name or by their clockid. */
  if (strcmp (clock, "monotonic") == 0 || strcmp (clock, "1") == 0)
    {
      l->monotonic_secs = secs;
      l->monotonic_nanosecs = (uint32_t) nsecs;
    }
  else if (strcmp (clock, "boottime") == 0 || strcmp (clock, "7") == 0)
    {
      l->boottime_secs = secs;
      l->boottime_nanosecs = (uint32_t) nsecs;
    }
  else
    return pr_error_set (err, 0, "run.oci.timens_offset: unknown clock `%s` (monotonic or boottime)", clock);
  return 0;
}

static int
timens_offset (struct pr_config *cfg, const char *value, pr_error **err)
{
  const struct pr_namespace *t = pr_config_namespace (cfg, CLONE_NEWTIME);
  if (t == NULL || t->path != NULL)
    return pr_error_set (err, 0, "run.oci.timens_offset requires a new time namespace in linux.namespaces");
  _cleanup_free_ char *copy = xstrdup (value);
  char *save = NULL;
  size_t n = 0;
  for (char *e = strtok_r (copy, "\n,", &save); e; e = strtok_r (NULL, "\n,", &save))
    {
      if (strspn (e, " \t") == strlen (e))
        continue;
      if (parse_offset_entry (e, &cfg->linux, err) < 0)
        return -1;
      n++;
    }
  if (n == 0)
    return pr_error_set (err, 0, "run.oci.timens_offset: empty value");
  cfg->linux.has_time_offsets = true;
  return 0;
}

/* ------------------------------------------- seccomp_fail_unknown_syscall */

static int
seccomp_fail_unknown (const struct pr_config *cfg, pr_error **err)
{
  if (!cfg->linux.has_seccomp)
    return 0;
  for (size_t i = 0; i < cfg->linux.seccomp.n_syscalls; i++)
    for (char **n = cfg->linux.seccomp.syscalls[i].names; n && *n; n++)
      if (seccomp_syscall_resolve_name (*n) == __NR_SCMP_ERROR)
        return pr_error_set (err, 0, "run.oci.seccomp_fail_unknown_syscall: unknown syscall `%s`", *n);
  return 0;
}

/* ---------------------------------------------------------------- entry */

int
pr_crun_annotations_apply (struct pr_config *cfg, pr_error **err)
{
  for (size_t i = 0; i < cfg->n_annotations; i++)
    {
      const char *k = cfg->annotations[i].key;
      const char *v = cfg->annotations[i].value ? cfg->annotations[i].value : "";
      if (strncmp (k, "run.oci.", 8) != 0)
        continue;
      for (size_t j = 0; refused[j]; j++)
        if (strcmp (k, refused[j]) == 0)
          return NOT_SUPPORTED (k);
      if (strcmp (k, "run.oci.keep_original_groups") == 0)
        {
          if (keep_original_groups (cfg, err) < 0)
            return -1;
        }
      else if (strcmp (k, "run.oci.timens_offset") == 0)
        {
          if (timens_offset (cfg, v, err) < 0)
            return -1;
        }
      else if (strcmp (k, "run.oci.seccomp_fail_unknown_syscall") == 0)
        {
          if (seccomp_fail_unknown (cfg, err) < 0)
            return -1;
        }
      else if (strcmp (k, "run.oci.mount_context_type") == 0)
        {
          if (strcmp (v, "context") != 0)
            return pr_error_set (err, 0, "run.oci.mount_context_type=%s is not supported by proctor "
                                                  "(only `context`)", v);
        }
      else if (strcmp (k, "run.oci.systemd.subgroup") == 0)
        {
          if (*v)
            return pr_error_set (err, 0, "run.oci.systemd.subgroup is not supported by proctor "
                                                  "(only the empty value: no sub-cgroup)");
        }
    }
  return 0;
}
