/* procattr.c - owns the per-process attributes set just before execve:
 * rlimits, oom_score_adj, scheduler, I/O priority, personality, UTS names
 * and sysctls.  Each function does nothing when its attribute is unset. */
#define _GNU_SOURCE
#include "procattr.h"

#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "namespace.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <string.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <unistd.h>

int
pr_rlimits_apply (const struct pr_process *p, pr_error **err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      const struct pr_rlimit *r = &p->rlimits[i];
      struct rlimit lim = { .rlim_cur = r->soft, .rlim_max = r->hard };

      /* prlimit rather than setrlimit: glibc's setrlimit may clamp the
       * 64-bit values on some ABIs; prlimit64 takes them as given. */
      if (prlimit (0, (__rlimit_resource_t) r->resource, &lim, NULL) < 0)
        return pr_error_set (err, errno, "setrlimit `%s`", r->type ? r->type : "?");
    }
  return 0;
}

int
pr_oom_score_adj_apply (const struct pr_process *p, pr_error **err)
{
  char buf[32];
  int len;

  if (!p->has_oom_score_adj)
    return 0;
  len = snprintf (buf, sizeof buf, "%d", p->oom_score_adj);
  /* Through a procfs of our own (procfs.h, CVE-2025-52881). */
  char path[64];
  snprintf (path, sizeof path, "%d/oom_score_adj", (int) getpid ());
  if (pr_procfs_write (path, buf, (size_t) len, "set oomScoreAdj", err) < 0)
    return pr_error_wrap (err, "set oomScoreAdj %d", p->oom_score_adj);
  return 0;
}

struct name_value
{
  const char *name;
  uint64_t value;
};

static const struct name_value sched_policies[] = {
  { "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 },  { "SCHED_RR", 2 },       { "SCHED_BATCH", 3 },
  { "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 },  { "SCHED_DEADLINE", 6 },
};

static const struct name_value sched_flags[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

static int
lookup (const struct name_value *tab, size_t n, const char *name, uint64_t *out)
{
  for (size_t i = 0; name && i < n; i++)
    if (strcmp (tab[i].name, name) == 0)
      {
        *out = tab[i].value;
        return 0;
      }
  return -1;
}

int
pr_scheduler_apply (const struct pr_process *p, pr_error **err)
{
  const struct pr_scheduler *s = &p->scheduler;
  struct pr_sched_attr attr = { .size = sizeof attr };
  uint64_t v;

  if (!p->has_scheduler)
    return 0;
  if (lookup (sched_policies, PR_ARRAY_SIZE (sched_policies), s->policy, &v) < 0)
    return pr_error_invalid (err, "unknown scheduler policy `%s`", s->policy ? s->policy : "");
  attr.sched_policy = (uint32_t) v;
  for (char **f = s->flags; f && *f; f++)
    {
      if (lookup (sched_flags, PR_ARRAY_SIZE (sched_flags), *f, &v) < 0)
        return pr_error_invalid (err, "unknown scheduler flag `%s`", *f);
      attr.sched_flags |= v;
    }
  attr.sched_nice = s->nice;
  attr.sched_priority = (uint32_t) s->priority;
  attr.sched_runtime = s->runtime;
  attr.sched_deadline = s->deadline;
  attr.sched_period = s->period;

  if (pr_sys_sched_setattr (0, &attr, 0) < 0)
    return pr_error_set (err, errno, "sched_setattr policy `%s`", s->policy);
  return 0;
}

int
pr_io_priority_apply (const struct pr_process *p, pr_error **err)
{
  static const struct name_value classes[] = {
    { "IOPRIO_CLASS_RT", 1 }, { "IOPRIO_CLASS_BE", 2 }, { "IOPRIO_CLASS_IDLE", 3 },
  };
  uint64_t cls;

  if (!p->has_io_priority)
    return 0;
  if (lookup (classes, PR_ARRAY_SIZE (classes), p->io_priority_class, &cls) < 0)
    return pr_error_invalid (err, "unknown ioPriority class `%s`",
                             p->io_priority_class ? p->io_priority_class : "");
  if (p->io_priority < 0 || p->io_priority > 7)
    return pr_error_invalid (err, "ioPriority priority %d out of range (0-7)", p->io_priority);
  if (pr_sys_ioprio_set (PR_IOPRIO_WHO_PROCESS, 0, (int) PR_IOPRIO_PRIO_VALUE (cls, (uint64_t) p->io_priority)) < 0)
    return pr_error_set (err, errno, "ioprio_set `%s` %d", p->io_priority_class, p->io_priority);
  return 0;
}

int
pr_personality_apply (const struct pr_config *cfg, pr_error **err)
{
  unsigned long persona;

  if (!cfg->linux.has_personality)
    return 0;
  if (cfg->linux.personality_domain && strcmp (cfg->linux.personality_domain, "LINUX") == 0)
    persona = PER_LINUX;
  else if (cfg->linux.personality_domain && strcmp (cfg->linux.personality_domain, "LINUX32") == 0)
    persona = PER_LINUX32;
  else
    return pr_error_invalid (err, "unknown personality domain `%s`",
                             cfg->linux.personality_domain ? cfg->linux.personality_domain : "");
  if (personality (persona) < 0)
    return pr_error_set (err, errno, "personality `%s`", cfg->linux.personality_domain);
  return 0;
}

int
pr_uts_apply (const struct pr_config *cfg, bool new_utsns, pr_error **err)
{
  /* An empty name means "unset", as runc reads it. */
  bool host = cfg->hostname && cfg->hostname[0];
  bool domain = cfg->domainname && cfg->domainname[0];

  if (host && !new_utsns)
    return pr_error_set (err, 0, "setting hostname requires a new UTS namespace");
  if (domain && !new_utsns)
    return pr_error_set (err, 0, "setting domainname requires a new UTS namespace");
  if (host && sethostname (cfg->hostname, strlen (cfg->hostname)) < 0)
    return pr_error_set (err, errno, "sethostname `%s`", cfg->hostname);
  if (domain && setdomainname (cfg->domainname, strlen (cfg->domainname)) < 0)
    return pr_error_set (err, errno, "setdomainname `%s`", cfg->domainname);
  return 0;
}

/* sysctl(8) key syntax: in the dotted form a '/' stands for a '.' inside one
 * component ("net.ipv4.conf.eth0/1.forwarding" is conf/eth0.1); a key whose
 * first separator is '/' is already a path.  Returns the path under
 * /proc/sys, or NULL when the key could name anything outside it. */
static char *
sysctl_path (const char *key)
{
  size_t first = strcspn (key, "./");
  bool dotted = key[first] == '.';
  char *path = xstrdup (key);
  const char *c;

  if (strstr (key, "..") != NULL)
    goto bad;
  if (dotted)
    for (char *q = path; *q; q++)
      *q = *q == '.' ? '/' : *q == '/' ? '.' : *q;

  /* Every component must be a plain name: no empty (leading, trailing or
   * doubled separator), "." or ".." component survives the conversion. */
  c = path;
  for (;;)
    {
      size_t len = strcspn (c, "/");
      if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
        goto bad;
      if (c[len] == '\0')
        break;
      c += len + 1;
    }
  return path;

bad:
  free (path);
  return NULL;
}

/* -------------------------------------------------- host namespace checks */

/* Whether the container would use the runtime's own namespace of `type`:
 * no linux.namespaces entry (inherited), or an entry whose path names the
 * namespace the runtime is in ("host" means "current" here, as in runc: a
 * runtime started inside a container protects that container's values).
 * A path naming another namespace (a pod's, another container's) is that
 * container's own. */
static int
ns_is_hosts (const struct pr_config *cfg, int type, const char *proc_name, bool *host, pr_error **err)
{
  const struct pr_namespace *ns = pr_config_namespace (cfg, type);
  _cleanup_close_ int mine = -1, theirs = -1;
  _cleanup_free_ char *self = NULL;

  *host = ns == NULL;
  if (ns == NULL || ns->path == NULL)
    return 0;
  self = xasprintf ("/proc/self/ns/%s", proc_name);
  mine = open (self, O_RDONLY | O_CLOEXEC);
  if (mine < 0)
    return pr_error_set (err, errno, "open `%s`", self);
  theirs = open (ns->path, O_RDONLY | O_CLOEXEC);
  if (theirs < 0)
    return pr_error_set (err, errno, "open namespace path `%s`", ns->path);
  return pr_ns_same (mine, theirs, host, err);
}

/* The key in dotted form ("net/ipv4/x" becomes "net.ipv4.x"), for the
 * namespace lookup only; the write uses sysctl_path. */
static char *
sysctl_dotted (const char *key)
{
  char *k = xstrdup (key);
  if (k[strcspn (k, "./")] == '/')
    for (char *q = k; *q; q++)
      *q = *q == '/' ? '.' : *q;
  return k;
}

/* The namespace a sysctl belongs to (CLONE_NEWIPC, CLONE_NEWNET,
 * CLONE_NEWUTS), 0 when it is not namespaced.  The ipc set is the one
 * ipc_namespaces(7) lists; net.* is per network namespace. */
static int
sysctl_namespace (const char *dotted)
{
  static const char *const ipc[] = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",  "kernel.sem",
                                     "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (ipc); i++)
    if (strcmp (dotted, ipc[i]) == 0)
      return CLONE_NEWIPC;
  if (strncmp (dotted, "fs.mqueue.", 10) == 0)
    return CLONE_NEWIPC;
  if (strncmp (dotted, "net.", 4) == 0)
    return CLONE_NEWNET;
  if (strcmp (dotted, "kernel.hostname") == 0 || strcmp (dotted, "kernel.domainname") == 0)
    return CLONE_NEWUTS;
  return 0;
}

int
pr_host_ns_check (const struct pr_config *cfg, pr_error **err)
{
  static const struct
  {
    int type;
    const char *proc, *what;
  } kinds[] = { { CLONE_NEWIPC, "ipc", "ipc" }, { CLONE_NEWNET, "net", "network" }, { CLONE_NEWUTS, "uts", "uts" } };
  bool host[3];

  for (size_t i = 0; i < PR_ARRAY_SIZE (kinds); i++)
    if (ns_is_hosts (cfg, kinds[i].type, kinds[i].proc, &host[i], err) < 0)
      return -1;
  if (cfg->hostname && cfg->hostname[0] && host[2])
    return pr_error_invalid (err, "hostname `%s` not allowed in host uts namespace", cfg->hostname);
  if (cfg->domainname && cfg->domainname[0] && host[2])
    return pr_error_invalid (err, "domainname `%s` not allowed in host uts namespace", cfg->domainname);
  for (size_t i = 0; i < cfg->linux.n_sysctl; i++)
    {
      const char *key = cfg->linux.sysctl[i].key ? cfg->linux.sysctl[i].key : "";
      _cleanup_free_ char *dotted = sysctl_dotted (key);
      int type = sysctl_namespace (dotted);
      size_t k;

      if (type == 0)
        return pr_error_invalid (err, "sysctl `%s` is not in a separate kernel namespace", key);
      for (k = 0; kinds[k].type != type; k++)
        ;
      if (host[k])
        return pr_error_invalid (err, "sysctl `%s` not allowed in host %s namespace", key, kinds[k].what);
    }
  return 0;
}

int
pr_sysctl_apply (const struct pr_config *cfg, pr_error **err)
{
  for (size_t i = 0; i < cfg->linux.n_sysctl; i++)
    {
      const struct pr_keyval *kv = &cfg->linux.sysctl[i];
      _cleanup_free_ char *path = sysctl_path (kv->key ? kv->key : "");
      const char *value = kv->value ? kv->value : "";

      if (path == NULL)
        return pr_error_invalid (err, "invalid sysctl key `%s`", kv->key ? kv->key : "");
      /* Never by a path in the container's /proc: a mount raced in over
       * /proc/sys/KEY (through a shared mount) would take the value
       * (procfs.h, CVE-2025-52881).  A sysctl file shows the namespace of
       * the process that opens it, whichever procfs it is on. */
      _cleanup_free_ char *sub = xasprintf ("sys/%s", path);
      _cleanup_free_ char *what = xasprintf ("write sysctl `%s` = `%s`", kv->key, value);
      if (pr_procfs_write (sub, value, strlen (value), what, err) < 0)
        return -1;
    }
  return 0;
}
