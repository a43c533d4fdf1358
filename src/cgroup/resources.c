/* resources.c - linux.resources onto cgroup files (see cgroup.h): each
 * runtime-spec controller is written to the v1 hierarchy carrying it, or
 * to the unified one (converted to cgroup2's interface) when no v1
 * hierarchy does, which is how a hybrid host gets e.g. hugetlb.
 * Source: runtime-spec config-linux.md "Control groups" and its v1->v2
 * conversions; Documentation/admin-guide/cgroup-v1/{memory,cpusets,
 * blkio-controller,devices,hugetlb,net_cls,net_prio,rdma}.rst,
 * cgroup-v2.rst; sched-bwc.rst (cpu quota/period/burst). */
#define _GNU_SOURCE
#include "cgroup.h"
#include "cgroup-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/log.h"
#include "../core/util.h"

/* ------------------------------------------------------------ conversions */

uint64_t
pr_cgroup_shares_to_weight (uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t
pr_cgroup_blkio_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  if (weight > 1000)
    weight = 1000;
  return 1 + (weight - 10) * 9999 / 990;
}

int
pr_cgroup_swap_v2 (int64_t swap, bool has_limit, int64_t limit, char *buf, size_t size, pr_error **err)
{
  if (swap == 0)
    return 0;
  if (swap < 0)
    {
      snprintf (buf, size, "max");
      return 1;
    }
  /* v2 limits swap alone; the spec's value is memory + swap. */
  if (!has_limit || limit == 0)
    return pr_error_set (err, EINVAL, "memory.swap: a swap limit needs a memory limit on cgroup v2");
  if (limit < 0)
    {
      snprintf (buf, size, "max");
      return 1;
    }
  if (swap < limit)
    return pr_error_set (err, EINVAL, "memory.swap (%" PRId64 ") must not be below memory.limit (%" PRId64 ")",
                         swap, limit);
  snprintf (buf, size, "%" PRId64, swap - limit);
  return 1;
}

void
pr_cgroup_hugepage_name (uint64_t bytes, char *buf, size_t size)
{
  static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "PB" };
  size_t u = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && u + 1 < PR_ARRAY_SIZE (units))
    {
      bytes /= 1024;
      u++;
    }
  snprintf (buf, size, "%" PRIu64 "%s", bytes, units[u]);
}

int
pr_cgroup_v2_enable (const struct pr_cgroup_hier *h, const char *dir, const char *controller, pr_error **err)
{
  size_t ml = strlen (h->mountpoint);
  _cleanup_free_ char *cur = xstrdup (dir);
  _cleanup_free_ char *op = xasprintf ("+%s", controller);
  for (char *s = cur + ml;; s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      if (*s == '\0')
        break; /* the leaf itself holds the processes */
      *s = '\0';
      _cleanup_free_ char *enabled = NULL;
      if (pr_cgroup_read (cur, "cgroup.subtree_control", &enabled, err) < 0)
        return -1;
      bool on = false;
      char *save = NULL;
      for (char *t = strtok_r (enabled, " \n", &save); t && !on; t = strtok_r (NULL, " \n", &save))
        on = strcmp (t, controller) == 0;
      if (!on && pr_cgroup_write (cur, "cgroup.subtree_control", op, err) < 0)
        return -1;
      *s = '/';
    }
  return 0;
}

/* ------------------------------------------------------------ JSON access */

static yajl_val
field (yajl_val obj, const char *key)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return YAJL_IS_NULL (obj->u.object.values[i]) ? NULL : obj->u.object.values[i];
  return NULL;
}

/* Reads an integer field.  yajl keeps the literal, so values above
 * INT64_MAX (Go's uint64 "unlimited") are recognised and mapped to -1.
 * Returns 1 when present, 0 when absent, -1 on a wrong type. */
static int
get_int (yajl_val obj, const char *key, const char *ctx, int64_t *out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_NUMBER (v) || v->u.number.r == NULL || strpbrk (v->u.number.r, ".eE"))
    return pr_error_set (err, EINVAL, "linux.resources.%s.%s: expected an integer", ctx, key);
  const char *r = v->u.number.r;
  errno = 0;
  if (r[0] == '-')
    {
      long long x = strtoll (r, NULL, 10);
      if (errno)
        return pr_error_set (err, EINVAL, "linux.resources.%s.%s: `%s` out of range", ctx, key, r);
      *out = x;
      return 1;
    }
  unsigned long long x = strtoull (r, NULL, 10);
  if (errno)
    return pr_error_set (err, EINVAL, "linux.resources.%s.%s: `%s` out of range", ctx, key, r);
  *out = x > INT64_MAX ? -1 : (int64_t) x;
  return 1;
}

static int
get_bool (yajl_val obj, const char *key, const char *ctx, bool *out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return pr_error_set (err, EINVAL, "linux.resources.%s.%s: expected a boolean", ctx, key);
  *out = YAJL_IS_TRUE (v);
  return 1;
}

static int
get_str (yajl_val obj, const char *key, const char *ctx, const char **out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_STRING (v))
    return pr_error_set (err, EINVAL, "linux.resources.%s.%s: expected a string", ctx, key);
  *out = v->u.string;
  return 1;
}

static int
get_array (yajl_val obj, const char *key, const char *ctx, yajl_val *out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return pr_error_set (err, EINVAL, "linux.resources.%s.%s: expected an array", ctx, key);
  *out = v;
  return 1;
}

/* ------------------------------------------------------------ context */

struct rctx
{
  struct pr_cgroup_mounts m;
  const char *path;
  bool update;
};

/* Where controller lives: the v1 hierarchy named v1 (not on unified
 * hosts), else the unified hierarchy when it offers v2 (enabled down the
 * tree on hybrid hosts, where nothing is enabled by default).  *dir is
 * NULL when neither exists.  Errors: enabling v2 on a hybrid host. */
static int
locate (struct rctx *c, const char *v1, const char *v2, char **dir, bool *is_v2, pr_error **err)
{
  *dir = NULL;
  *is_v2 = false;
  if (c->m.layout != PR_CGROUP_UNIFIED && v1)
    {
      const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (&c->m, v1);
      if (h && !h->is_v2)
        {
          *dir = pr_cgroup_hier_dir (h, c->path);
          return 0;
        }
    }
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&c->m);
  if (u == NULL || v2 == NULL)
    return 0;
  _cleanup_free_ char *udir = pr_cgroup_hier_dir (u, c->path);
  _cleanup_free_ char *avail = NULL;
  _cleanup_error_ pr_error *e = NULL;
  /* What the hierarchy offers at its top can be enabled down to us. */
  if (pr_cgroup_read (u->mountpoint, "cgroup.controllers", &avail, &e) < 0)
    return 0;
  bool offered = false;
  char *save = NULL;
  for (char *t = strtok_r (avail, " \n", &save); t && !offered; t = strtok_r (NULL, " \n", &save))
    offered = strcmp (t, v2) == 0;
  if (!offered)
    return 0;
  if (c->m.layout == PR_CGROUP_HYBRID && pr_cgroup_v2_enable (u, udir, v2, err) < 0)
    return -1;
  *dir = steal_pointer (&udir);
  *is_v2 = true;
  return 0;
}

static int
no_controller (const char *what, const char *path, pr_error **err)
{
  return pr_error_set (err, ENOTSUP, "cannot apply linux.resources.%s to cgroup `%s`: no %s controller on this host",
                       what, path, what);
}

static bool
file_exists (const char *dir, const char *file)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  return access (p, F_OK) == 0;
}

static int
write_i64 (const char *dir, const char *file, int64_t v, pr_error **err)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%" PRId64, v);
  return pr_cgroup_write (dir, file, buf, err);
}

/* v2 files spell "no limit" as "max". */
static int
write_max (const char *dir, const char *file, int64_t v, pr_error **err)
{
  if (v < 0)
    return pr_cgroup_write (dir, file, "max", err);
  return write_i64 (dir, file, v, err);
}

static int64_t
read_i64 (const char *dir, const char *file, int64_t dflt)
{
  _cleanup_free_ char *s = NULL;
  _cleanup_error_ pr_error *e = NULL;
  if (pr_cgroup_read (dir, file, &s, &e) < 0)
    return dflt;
  if (strncmp (s, "max", 3) == 0)
    return -1;
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  return errno || end == s ? dflt : v;
}

/* ------------------------------------------------------------ memory */

struct mem
{
  int64_t limit, swap, reservation, kernel, kernel_tcp, swappiness;
  bool disable_oom, use_hierarchy, check_before;
  bool has_limit, has_swap, has_res, has_kernel, has_ktcp, has_swappiness, has_oom, has_hier;
};

static int
parse_memory (yajl_val o, struct mem *m, pr_error **err)
{
  int r;
#define GI(key, var, has)                                                                                             \
  if ((r = get_int (o, key, "memory", &m->var, err)) < 0)                                                              \
    return -1;                                                                                                         \
  m->has = r == 1;
  GI ("limit", limit, has_limit);
  GI ("swap", swap, has_swap);
  GI ("reservation", reservation, has_res);
  GI ("kernel", kernel, has_kernel);
  GI ("kernelTCP", kernel_tcp, has_ktcp);
  GI ("swappiness", swappiness, has_swappiness);
#undef GI
  if ((r = get_bool (o, "disableOOMKiller", "memory", &m->disable_oom, err)) < 0)
    return -1;
  m->has_oom = r == 1;
  if ((r = get_bool (o, "useHierarchy", "memory", &m->use_hierarchy, err)) < 0)
    return -1;
  m->has_hier = r == 1;
  if (get_bool (o, "checkBeforeUpdate", "memory", &m->check_before, err) < 0)
    return -1;
  /* Go runtimes send swappiness as uint64: "unset" arrives as -1 or huge. */
  if (m->has_swappiness && m->swappiness < 0)
    m->has_swappiness = false;
  if (m->has_swappiness && m->swappiness > 100)
    return pr_error_set (err, EINVAL, "linux.resources.memory.swappiness: %" PRId64 " is not in 0..100",
                         m->swappiness);
  return 0;
}

/* Limits the kernel accounts only when the file exists and the kernel
 * still honours it (kmem limits are refused since Linux 5.16, and the
 * runtime-spec marks them deprecated): best effort. */
static void
write_optional (const char *dir, const char *file, int64_t v)
{
  _cleanup_error_ pr_error *e = NULL;
  if (!file_exists (dir, file))
    {
      pr_debug ("cgroup: %s/%s not present, ignored", dir, file);
      return;
    }
  if (write_i64 (dir, file, v, &e) < 0)
    pr_warn ("cgroup: ignoring deprecated limit: %s", e->msg);
}

static int
memory_v1 (struct rctx *c, const char *dir, const struct mem *m, pr_error **err)
{
  if (m->check_before && c->update && m->has_limit && m->limit > 0)
    {
      int64_t usage = read_i64 (dir, "memory.usage_in_bytes", 0);
      if (m->limit < usage)
        return pr_error_set (err, EBUSY, "memory limit %" PRId64 " is below the current usage %" PRId64, m->limit,
                             usage);
    }
  bool have_memsw = file_exists (dir, "memory.memsw.limit_in_bytes");
  if (m->has_swap && m->swap != 0 && !have_memsw && m->swap > 0)
    return pr_error_set (err, ENOTSUP, "linux.resources.memory.swap: no swap accounting (memory.memsw.*) on this host");
  if (m->has_limit && m->has_swap && m->swap != 0 && have_memsw)
    {
      if (m->swap > 0 && m->limit > m->swap)
        return pr_error_set (err, EINVAL, "memory.swap (%" PRId64 ") must not be below memory.limit (%" PRId64 ")",
                             m->swap, m->limit);
      /* The kernel keeps limit <= memsw at every step: raise memsw first
       * when the new limit would exceed the current memsw. */
      int64_t cur = read_i64 (dir, "memory.memsw.limit_in_bytes", -1);
      bool swap_first = m->limit < 0 || (cur >= 0 && m->limit > cur);
      if (swap_first)
        {
          if (write_i64 (dir, "memory.memsw.limit_in_bytes", m->swap, err) < 0
              || write_i64 (dir, "memory.limit_in_bytes", m->limit, err) < 0)
            return -1;
        }
      else if (write_i64 (dir, "memory.limit_in_bytes", m->limit, err) < 0
               || write_i64 (dir, "memory.memsw.limit_in_bytes", m->swap, err) < 0)
        return -1;
    }
  else
    {
      if (m->has_limit && m->limit != 0 && write_i64 (dir, "memory.limit_in_bytes", m->limit, err) < 0)
        return -1;
      if (m->has_swap && m->swap != 0 && have_memsw
          && write_i64 (dir, "memory.memsw.limit_in_bytes", m->swap, err) < 0)
        return -1;
    }
  if (m->has_res && m->reservation != 0 && write_i64 (dir, "memory.soft_limit_in_bytes", m->reservation, err) < 0)
    return -1;
  if (m->has_kernel && m->kernel != 0)
    write_optional (dir, "memory.kmem.limit_in_bytes", m->kernel);
  if (m->has_ktcp && m->kernel_tcp != 0)
    write_optional (dir, "memory.kmem.tcp.limit_in_bytes", m->kernel_tcp);
  if (m->has_swappiness && write_i64 (dir, "memory.swappiness", m->swappiness, err) < 0)
    return -1;
  if (m->has_oom && (m->disable_oom || c->update)
      && pr_cgroup_write (dir, "memory.oom_control", m->disable_oom ? "1" : "0", err) < 0)
    return -1;
  if (m->has_hier && m->use_hierarchy)
    {
      /* Always on since Linux 5.x; writing 1 is harmless, 0 is refused. */
      _cleanup_error_ pr_error *e = NULL;
      if (pr_cgroup_write (dir, "memory.use_hierarchy", "1", &e) < 0)
        pr_debug ("%s", e->msg);
    }
  return 0;
}

static int
memory_v2 (struct rctx *c, const char *dir, const struct mem *m, pr_error **err)
{
  if (m->check_before && c->update && m->has_limit && m->limit > 0)
    {
      int64_t usage = read_i64 (dir, "memory.current", 0);
      if (m->limit < usage)
        return pr_error_set (err, EBUSY, "memory limit %" PRId64 " is below the current usage %" PRId64, m->limit,
                             usage);
    }
  int64_t limit = m->limit;
  bool has_limit = m->has_limit && m->limit != 0;
  if (!has_limit && c->update && m->has_swap)
    {
      /* update --memory-swap alone: convert against the limit in force */
      limit = read_i64 (dir, "memory.max", -1);
      has_limit = true;
    }
  char swapbuf[32];
  int swap_set = 0;
  if (m->has_swap && (swap_set = pr_cgroup_swap_v2 (m->swap, has_limit, limit, swapbuf, sizeof swapbuf, err)) < 0)
    return -1;
  if (swap_set && !file_exists (dir, "memory.swap.max"))
    {
      if (strcmp (swapbuf, "max") != 0 && strcmp (swapbuf, "0") != 0)
        return pr_error_set (err, ENOTSUP, "linux.resources.memory.swap: no memory.swap.max on this host");
      swap_set = 0;
    }
  /* Lower the swap first when lowering limits, raise memory first when
   * raising: neither order is refused by v2 (the two are independent). */
  if (m->has_limit && m->limit != 0 && write_max (dir, "memory.max", m->limit, err) < 0)
    return -1;
  if (swap_set && pr_cgroup_write (dir, "memory.swap.max", swapbuf, err) < 0)
    return -1;
  if (m->has_res && m->reservation != 0 && write_max (dir, "memory.low", m->reservation, err) < 0)
    return -1;
  if (m->has_swappiness)
    pr_warn ("cgroup: linux.resources.memory.swappiness is not supported on cgroup v2, ignored");
  if (m->has_oom && m->disable_oom)
    pr_warn ("cgroup: linux.resources.memory.disableOOMKiller is not supported on cgroup v2, ignored");
  if ((m->has_kernel && m->kernel > 0) || (m->has_ktcp && m->kernel_tcp > 0))
    pr_debug ("cgroup: kernel memory limits do not exist on cgroup v2, ignored");
  return 0;
}

static int
apply_memory (struct rctx *c, yajl_val o, pr_error **err)
{
  struct mem m = { 0 };
  if (parse_memory (o, &m, err) < 0)
    return -1;
  bool wants = (m.has_limit && m.limit != 0) || (m.has_swap && m.swap != 0) || (m.has_res && m.reservation != 0)
               || m.has_swappiness || (m.has_oom && m.disable_oom);
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (locate (c, "memory", "memory", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return wants ? no_controller ("memory", c->path, err) : 0;
  return v2 ? memory_v2 (c, dir, &m, err) : memory_v1 (c, dir, &m, err);
}

/* ------------------------------------------------------------ cpu */

struct cpu
{
  int64_t shares, quota, period, rt_runtime, rt_period, idle, burst;
  bool has_shares, has_quota, has_period, has_rt_runtime, has_rt_period, has_idle, has_burst;
  const char *cpus, *mems;
};

static int
parse_cpu (yajl_val o, struct cpu *p, pr_error **err)
{
  int r;
#define GI(key, var, has)                                                                                             \
  if ((r = get_int (o, key, "cpu", &p->var, err)) < 0)                                                                 \
    return -1;                                                                                                         \
  p->has = r == 1;
  GI ("shares", shares, has_shares);
  GI ("quota", quota, has_quota);
  GI ("period", period, has_period);
  GI ("realtimeRuntime", rt_runtime, has_rt_runtime);
  GI ("realtimePeriod", rt_period, has_rt_period);
  GI ("idle", idle, has_idle);
  GI ("burst", burst, has_burst);
#undef GI
  if (get_str (o, "cpus", "cpu", &p->cpus, err) < 0 || get_str (o, "mems", "cpu", &p->mems, err) < 0)
    return -1;
  /* 0 means "unset" for these in every runtime (Go zero values). */
  p->has_shares = p->has_shares && p->shares != 0;
  p->has_quota = p->has_quota && p->quota != 0;
  p->has_period = p->has_period && p->period != 0;
  p->has_rt_runtime = p->has_rt_runtime && p->rt_runtime != 0;
  p->has_rt_period = p->has_rt_period && p->rt_period != 0;
  if (p->cpus && p->cpus[0] == '\0')
    p->cpus = NULL;
  if (p->mems && p->mems[0] == '\0')
    p->mems = NULL;
  return 0;
}

static int
cpu_v1 (const char *dir, const struct cpu *p, pr_error **err)
{
  if (p->has_shares)
    {
      if (write_i64 (dir, "cpu.shares", p->shares, err) < 0)
        return -1;
      /* The kernel clamps silently; runc reports it, so do we. */
      int64_t got = read_i64 (dir, "cpu.shares", p->shares);
      if (got != p->shares)
        return pr_error_set (err, EINVAL, "cpu.shares %" PRId64 " out of range (kernel set %" PRId64 ")", p->shares,
                             got);
    }
  if (p->has_period)
    {
      /* A new period may be refused against the current quota (and the
       * other way round): on EINVAL retry after writing the quota. */
      _cleanup_error_ pr_error *e = NULL;
      if (write_i64 (dir, "cpu.cfs_period_us", p->period, &e) < 0)
        {
          if (e->errnum != EINVAL || !p->has_quota)
            return pr_error_set (err, e->errnum, "%s", e->msg);
          if (write_i64 (dir, "cpu.cfs_quota_us", p->quota, err) < 0
              || write_i64 (dir, "cpu.cfs_period_us", p->period, err) < 0)
            return -1;
        }
    }
  if (p->has_quota && write_i64 (dir, "cpu.cfs_quota_us", p->quota, err) < 0)
    return -1;
  if (p->has_burst)
    {
      if (!file_exists (dir, "cpu.cfs_burst_us"))
        return pr_error_set (err, ENOTSUP, "linux.resources.cpu.burst: no cpu.cfs_burst_us on this kernel");
      if (write_i64 (dir, "cpu.cfs_burst_us", p->burst, err) < 0)
        return -1;
    }
  if (p->has_rt_period && write_i64 (dir, "cpu.rt_period_us", p->rt_period, err) < 0)
    return -1;
  if (p->has_rt_runtime && write_i64 (dir, "cpu.rt_runtime_us", p->rt_runtime, err) < 0)
    return -1;
  if (p->has_idle)
    {
      if (!file_exists (dir, "cpu.idle"))
        return pr_error_set (err, ENOTSUP, "linux.resources.cpu.idle: no cpu.idle on this kernel");
      if (write_i64 (dir, "cpu.idle", p->idle, err) < 0)
        return -1;
    }
  return 0;
}

static int
cpu_v2 (struct rctx *c, const char *dir, const struct cpu *p, pr_error **err)
{
  if (p->has_rt_runtime || p->has_rt_period)
    return pr_error_set (err, ENOTSUP, "linux.resources.cpu.realtime*: realtime scheduling limits are not "
                                       "supported on cgroup v2");
  if (p->has_shares)
    {
      char buf[32];
      snprintf (buf, sizeof buf, "%" PRIu64, pr_cgroup_shares_to_weight ((uint64_t) p->shares));
      if (pr_cgroup_write (dir, "cpu.weight", buf, err) < 0)
        return -1;
    }
  if (p->has_quota || p->has_period)
    {
      /* cpu.max is "QUOTA PERIOD" in one write: keep the part not given. */
      int64_t quota = p->quota, period = p->period;
      _cleanup_free_ char *cur = NULL;
      _cleanup_error_ pr_error *e = NULL;
      if (pr_cgroup_read (dir, "cpu.max", &cur, &e) == 0)
        {
          char q[32] = "";
          long long per = 100000;
          if (sscanf (cur, "%31s %lld", q, &per) >= 1)
            {
              if (!p->has_quota)
                quota = strcmp (q, "max") == 0 ? -1 : strtoll (q, NULL, 10);
              if (!p->has_period)
                period = per;
            }
        }
      if (!p->has_period && !c->update && period == 0)
        period = 100000;
      char buf[64];
      if (quota <= 0)
        snprintf (buf, sizeof buf, "max %" PRId64, period);
      else
        snprintf (buf, sizeof buf, "%" PRId64 " %" PRId64, quota, period);
      if (pr_cgroup_write (dir, "cpu.max", buf, err) < 0)
        return -1;
    }
  if (p->has_burst && write_i64 (dir, "cpu.max.burst", p->burst, err) < 0)
    return -1;
  if (p->has_idle && write_i64 (dir, "cpu.idle", p->idle, err) < 0)
    return -1;
  return 0;
}

static int
apply_cpuset (struct rctx *c, const struct cpu *p, pr_error **err)
{
  if (p->cpus == NULL && p->mems == NULL)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (locate (c, "cpuset", "cpuset", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return no_controller ("cpuset", c->path, err);
  /* mems before cpus is the order that keeps v1 happy when both shrink. */
  if (p->mems && pr_cgroup_write (dir, "cpuset.mems", p->mems, err) < 0)
    return -1;
  if (p->cpus && pr_cgroup_write (dir, "cpuset.cpus", p->cpus, err) < 0)
    return -1;
  return 0;
}

static int
apply_cpu (struct rctx *c, yajl_val o, pr_error **err)
{
  struct cpu p = { 0 };
  if (parse_cpu (o, &p, err) < 0)
    return -1;
  bool wants = p.has_shares || p.has_quota || p.has_period || p.has_rt_runtime || p.has_rt_period || p.has_idle
               || p.has_burst;
  if (wants)
    {
      _cleanup_free_ char *dir = NULL;
      bool v2;
      if (locate (c, "cpu", "cpu", &dir, &v2, err) < 0)
        return -1;
      if (dir == NULL)
        return no_controller ("cpu", c->path, err);
      if ((v2 ? cpu_v2 (c, dir, &p, err) : cpu_v1 (dir, &p, err)) < 0)
        return -1;
    }
  return apply_cpuset (c, &p, err);
}

/* ------------------------------------------------------------ pids */

static int
apply_pids (struct rctx *c, yajl_val o, pr_error **err)
{
  int64_t limit;
  int r = get_int (o, "limit", "pids", &limit, err);
  if (r <= 0)
    return r;
  /* runc: 0 leaves the limit alone, a negative value means unlimited. */
  if (limit == 0)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (locate (c, "pids", "pids", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return no_controller ("pids", c->path, err);
  return write_max (dir, "pids.max", limit, err);
}

/* ------------------------------------------------------------ blkio / io */

static int
dev_entry (yajl_val e, const char *ctx, int64_t *maj, int64_t *min, pr_error **err)
{
  if (!YAJL_IS_OBJECT (e))
    return pr_error_set (err, EINVAL, "linux.resources.blockIO.%s: expected objects", ctx);
  if (get_int (e, "major", ctx, maj, err) != 1 || get_int (e, "minor", ctx, min, err) != 1)
    return pr_error_set (err, EINVAL, "linux.resources.blockIO.%s: major and minor are required", ctx);
  return 0;
}

static const struct
{
  const char *key, *v1file, *v2key;
} throttles[] = {
  { "throttleReadBpsDevice", "blkio.throttle.read_bps_device", "rbps" },
  { "throttleWriteBpsDevice", "blkio.throttle.write_bps_device", "wbps" },
  { "throttleReadIOPSDevice", "blkio.throttle.read_iops_device", "riops" },
  { "throttleWriteIOPSDevice", "blkio.throttle.write_iops_device", "wiops" },
};

static int
blkio_v1 (const char *dir, yajl_val o, pr_error **err)
{
  int64_t w, lw;
  int r;
  /* BFQ (the only proportional scheduler left) names its files
   * blkio.bfq.*; CFQ kernels had blkio.weight. */
  const char *wfile = file_exists (dir, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight";
  const char *wdfile = file_exists (dir, "blkio.weight_device") ? "blkio.weight_device" : "blkio.bfq.weight_device";
  if ((r = get_int (o, "weight", "blockIO", &w, err)) < 0)
    return -1;
  if (r && w != 0)
    {
      if (!file_exists (dir, wfile))
        return pr_error_set (err, ENOTSUP, "linux.resources.blockIO.weight: no blkio weight file (no CFQ/BFQ "
                                           "scheduler) on this host");
      if (write_i64 (dir, wfile, w, err) < 0)
        return -1;
    }
  if ((r = get_int (o, "leafWeight", "blockIO", &lw, err)) < 0)
    return -1;
  if (r && lw != 0)
    {
      if (!file_exists (dir, "blkio.leaf_weight"))
        return pr_error_set (err, ENOTSUP, "linux.resources.blockIO.leafWeight: no blkio.leaf_weight on this host");
      if (write_i64 (dir, "blkio.leaf_weight", lw, err) < 0)
        return -1;
    }
  yajl_val a = NULL;
  if ((r = get_array (o, "weightDevice", "blockIO", &a, err)) < 0)
    return -1;
  for (size_t i = 0; r && i < a->u.array.len; i++)
    {
      int64_t maj, min, dw = 0, dlw = 0;
      if (dev_entry (a->u.array.values[i], "weightDevice", &maj, &min, err) < 0
          || get_int (a->u.array.values[i], "weight", "weightDevice", &dw, err) < 0
          || get_int (a->u.array.values[i], "leafWeight", "weightDevice", &dlw, err) < 0)
        return -1;
      char buf[64];
      if (dw)
        {
          if (!file_exists (dir, wdfile))
            return pr_error_set (err, ENOTSUP, "linux.resources.blockIO.weightDevice: no blkio weight_device file "
                                               "on this host");
          snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %" PRId64, maj, min, dw);
          if (pr_cgroup_write (dir, wdfile, buf, err) < 0)
            return -1;
        }
      if (dlw)
        {
          snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %" PRId64, maj, min, dlw);
          if (pr_cgroup_write (dir, "blkio.leaf_weight_device", buf, err) < 0)
            return -1;
        }
    }
  for (size_t t = 0; t < PR_ARRAY_SIZE (throttles); t++)
    {
      if ((r = get_array (o, throttles[t].key, "blockIO", &a, err)) < 0)
        return -1;
      for (size_t i = 0; r && i < a->u.array.len; i++)
        {
          int64_t maj, min, rate = 0;
          if (dev_entry (a->u.array.values[i], throttles[t].key, &maj, &min, err) < 0
              || get_int (a->u.array.values[i], "rate", throttles[t].key, &rate, err) < 0)
            return -1;
          char buf[64];
          snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %" PRId64, maj, min, rate < 0 ? 0 : rate);
          if (pr_cgroup_write (dir, throttles[t].v1file, buf, err) < 0)
            return -1;
        }
    }
  return 0;
}

static int
blkio_v2 (const char *dir, yajl_val o, pr_error **err)
{
  int64_t w;
  int r;
  /* io.bfq.weight takes the v1 range as is; io.weight wants 1..10000. */
  bool bfq = file_exists (dir, "io.bfq.weight");
  if ((r = get_int (o, "weight", "blockIO", &w, err)) < 0)
    return -1;
  if (r && w != 0)
    {
      char buf[32];
      if (bfq)
        snprintf (buf, sizeof buf, "%" PRId64, w);
      else
        snprintf (buf, sizeof buf, "default %" PRIu64, pr_cgroup_blkio_to_io_weight ((uint64_t) w));
      if (pr_cgroup_write (dir, bfq ? "io.bfq.weight" : "io.weight", buf, err) < 0)
        return -1;
    }
  yajl_val a = NULL;
  if ((r = get_array (o, "weightDevice", "blockIO", &a, err)) < 0)
    return -1;
  for (size_t i = 0; r && i < a->u.array.len; i++)
    {
      int64_t maj, min, dw = 0;
      if (dev_entry (a->u.array.values[i], "weightDevice", &maj, &min, err) < 0
          || get_int (a->u.array.values[i], "weight", "weightDevice", &dw, err) < 0)
        return -1;
      if (dw == 0)
        continue;
      char buf[64];
      snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %" PRIu64, maj, min,
                bfq ? (uint64_t) dw : pr_cgroup_blkio_to_io_weight ((uint64_t) dw));
      if (pr_cgroup_write (dir, bfq ? "io.bfq.weight" : "io.weight", buf, err) < 0)
        return -1;
    }
  for (size_t t = 0; t < PR_ARRAY_SIZE (throttles); t++)
    {
      if ((r = get_array (o, throttles[t].key, "blockIO", &a, err)) < 0)
        return -1;
      for (size_t i = 0; r && i < a->u.array.len; i++)
        {
          int64_t maj, min, rate = 0;
          if (dev_entry (a->u.array.values[i], throttles[t].key, &maj, &min, err) < 0
              || get_int (a->u.array.values[i], "rate", throttles[t].key, &rate, err) < 0)
            return -1;
          char buf[96];
          if (rate <= 0)
            snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %s=max", maj, min, throttles[t].v2key);
          else
            snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %s=%" PRId64, maj, min, throttles[t].v2key, rate);
          if (pr_cgroup_write (dir, "io.max", buf, err) < 0)
            return -1;
        }
    }
  return 0;
}

static int
apply_blkio (struct rctx *c, yajl_val o, pr_error **err)
{
  /* An object with nothing settable (e.g. {"weight":0}) needs no
   * controller. */
  bool wants = false;
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      yajl_val v = o->u.object.values[i];
      wants = wants || (YAJL_IS_ARRAY (v) && v->u.array.len > 0)
              || (YAJL_IS_NUMBER (v) && v->u.number.r && strcmp (v->u.number.r, "0") != 0);
    }
  if (!wants)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (locate (c, "blkio", "io", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return no_controller ("blockIO", c->path, err);
  return v2 ? blkio_v2 (dir, o, err) : blkio_v1 (dir, o, err);
}

/* ------------------------------------------------------------ hugetlb */

static int
apply_hugetlb (struct rctx *c, yajl_val a, pr_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return pr_error_set (err, EINVAL, "linux.resources.hugepageLimits: expected an array");
  if (a->u.array.len == 0)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (locate (c, "hugetlb", "hugetlb", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return no_controller ("hugetlb", c->path, err);
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val e = a->u.array.values[i];
      const char *size = NULL;
      int64_t limit = 0;
      if (get_str (e, "pageSize", "hugepageLimits", &size, err) != 1
          || get_int (e, "limit", "hugepageLimits", &limit, err) != 1)
        return pr_error_set (err, EINVAL, "linux.resources.hugepageLimits[%zu]: pageSize and limit are required", i);
      if (strchr (size, '/') || strchr (size, '.'))
        return pr_error_set (err, EINVAL, "linux.resources.hugepageLimits: invalid pageSize `%s`", size);
      _cleanup_free_ char *file = xasprintf (v2 ? "hugetlb.%s.max" : "hugetlb.%s.limit_in_bytes", size);
      if (!file_exists (dir, file))
        return pr_error_set (err, EINVAL, "linux.resources.hugepageLimits: page size `%s` not supported by the "
                                          "host (no %s)", size, file);
      if ((v2 ? write_max (dir, file, limit, err) : write_i64 (dir, file, limit, err)) < 0)
        return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ network */

static int
apply_network (struct rctx *c, yajl_val o, pr_error **err)
{
  int64_t classid = 0;
  int r;
  yajl_val prios = NULL;
  if ((r = get_int (o, "classID", "network", &classid, err)) < 0)
    return -1;
  if (get_array (o, "priorities", "network", &prios, err) < 0)
    return -1;
  if (c->m.layout == PR_CGROUP_UNIFIED)
    {
      /* cgroup2 has no net_cls/net_prio: classification is eBPF's job. */
      if ((r && classid) || (prios && prios->u.array.len))
        pr_warn ("cgroup: linux.resources.network is not supported on cgroup v2, ignored");
      return 0;
    }
  if (r && classid)
    {
      _cleanup_free_ char *dir = NULL;
      bool v2;
      if (locate (c, "net_cls", NULL, &dir, &v2, err) < 0)
        return -1;
      if (dir == NULL)
        return no_controller ("network (net_cls)", c->path, err);
      if (write_i64 (dir, "net_cls.classid", classid, err) < 0)
        return -1;
    }
  if (prios && prios->u.array.len)
    {
      _cleanup_free_ char *dir = NULL;
      bool v2;
      if (locate (c, "net_prio", NULL, &dir, &v2, err) < 0)
        return -1;
      if (dir == NULL)
        return no_controller ("network (net_prio)", c->path, err);
      for (size_t i = 0; i < prios->u.array.len; i++)
        {
          const char *name = NULL;
          int64_t prio = 0;
          if (get_str (prios->u.array.values[i], "name", "network.priorities", &name, err) != 1
              || get_int (prios->u.array.values[i], "priority", "network.priorities", &prio, err) != 1)
            return pr_error_set (err, EINVAL, "linux.resources.network.priorities[%zu]: name and priority are "
                                              "required", i);
          _cleanup_free_ char *line = xasprintf ("%s %" PRId64, name, prio);
          if (pr_cgroup_write (dir, "net_prio.ifpriomap", line, err) < 0)
            return -1;
        }
    }
  return 0;
}

/* ------------------------------------------------------------ rdma */

static int
apply_rdma (struct rctx *c, yajl_val o, pr_error **err)
{
  if (!YAJL_IS_OBJECT (o))
    return pr_error_set (err, EINVAL, "linux.resources.rdma: expected an object");
  if (o->u.object.len == 0)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (locate (c, "rdma", "rdma", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return no_controller ("rdma", c->path, err);
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *devname = o->u.object.keys[i];
      yajl_val e = o->u.object.values[i];
      int64_t handles = 0, objects = 0;
      int rh, ro;
      if ((rh = get_int (e, "hcaHandles", "rdma", &handles, err)) < 0
          || (ro = get_int (e, "hcaObjects", "rdma", &objects, err)) < 0)
        return -1;
      if (!rh && !ro)
        continue;
      _cleanup_free_ char *line = xasprintf ("%s", devname);
      if (rh)
        {
          char *n = xasprintf ("%s hca_handle=%" PRId64, line, handles);
          free (line);
          line = n;
        }
      if (ro)
        {
          char *n = xasprintf ("%s hca_object=%" PRId64, line, objects);
          free (line);
          line = n;
        }
      if (pr_cgroup_write (dir, "rdma.max", line, err) < 0)
        return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ unified */

static int
apply_unified (struct rctx *c, yajl_val o, pr_error **err)
{
  if (!YAJL_IS_OBJECT (o))
    return pr_error_set (err, EINVAL, "linux.resources.unified: expected an object");
  if (o->u.object.len == 0)
    return 0;
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&c->m);
  if (u == NULL)
    return pr_error_set (err, ENOTSUP, "linux.resources.unified needs cgroup v2: this host has no cgroup2 mount");
  _cleanup_free_ char *dir = pr_cgroup_hier_dir (u, c->path);
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *key = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      /* a key is one file of the container's own directory */
      if (key[0] == '\0' || key[0] == '.' || strchr (key, '/') || strchr (key, '.') == NULL)
        return pr_error_set (err, EINVAL, "linux.resources.unified: invalid key `%s`", key);
      if (!YAJL_IS_STRING (v))
        return pr_error_set (err, EINVAL, "linux.resources.unified.%s: expected a string", key);
      _cleanup_free_ char *ctrl = strndup (key, strchr (key, '.') - key);
      if (ctrl == NULL)
        abort ();
      if (c->m.layout == PR_CGROUP_HYBRID && strcmp (ctrl, "cgroup") != 0)
        {
          /* On hybrid hosts only controllers not bound to v1 exist here. */
          _cleanup_free_ char *cdir = NULL;
          bool v2;
          if (locate (c, NULL, ctrl, &cdir, &v2, err) < 0)
            return -1;
          if (cdir == NULL)
            return pr_error_set (err, ENOTSUP, "linux.resources.unified.%s: controller `%s` is not available in the "
                                               "cgroup2 hierarchy of this hybrid host", key, ctrl);
        }
      if (!file_exists (dir, key))
        return pr_error_set (err, ENOENT, "linux.resources.unified.%s: no such file in cgroup `%s`", key, c->path);
      if (pr_cgroup_write (dir, key, v->u.string, err) < 0)
        return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ devices */

static int
parse_dev_rule (yajl_val e, struct pr_dev_rule *r, pr_error **err)
{
  bool allow = false;
  const char *type = "a", *access = "rwm";
  int64_t maj = -1, min = -1;
  if (!YAJL_IS_OBJECT (e))
    return pr_error_set (err, EINVAL, "linux.resources.devices: expected objects");
  if (get_bool (e, "allow", "devices", &allow, err) != 1)
    return pr_error_set (err, EINVAL, "linux.resources.devices: `allow` is required");
  if (get_str (e, "type", "devices", &type, err) < 0 || get_int (e, "major", "devices", &maj, err) < 0
      || get_int (e, "minor", "devices", &min, err) < 0 || get_str (e, "access", "devices", &access, err) < 0)
    return -1;
  if (strlen (type) != 1 || !strchr ("acb", type[0]))
    return pr_error_set (err, EINVAL, "linux.resources.devices: invalid type `%s`", type);
  if (access[0] == '\0')
    access = "rwm";
  if (strlen (access) > 3 || access[strspn (access, "rwm")] != '\0')
    return pr_error_set (err, EINVAL, "linux.resources.devices: invalid access `%s`", access);
  r->allow = allow;
  r->type = type[0];
  r->major = maj;
  r->minor = min;
  snprintf (r->access, sizeof r->access, "%s", access);
  return 0;
}

/* What every container gets on top of its rules (runtime-spec config-
 * linux.md "Default Devices", plus mknod anywhere and the pty slaves the
 * engines rely on), the same set runc and crun append. */
static const struct pr_dev_rule default_rules[] = {
  { true, 'c', -1, -1, "m" },  { true, 'b', -1, -1, "m" },    { true, 'c', 1, 3, "rwm" },
  { true, 'c', 1, 5, "rwm" },  { true, 'c', 1, 7, "rwm" },    { true, 'c', 1, 8, "rwm" },
  { true, 'c', 1, 9, "rwm" },  { true, 'c', 5, 0, "rwm" },    { true, 'c', 5, 1, "rwm" },
  { true, 'c', 5, 2, "rwm" },  { true, 'c', 136, -1, "rwm" },
};

bool
pr_cgroup_devices_allowed (const struct pr_dev_rule *rules, size_t n, char type, int64_t major, int64_t minor,
                           char access)
{
  bool allowed = false;
  for (size_t i = 0; i < n; i++)
    {
      const struct pr_dev_rule *r = &rules[i];
      if (r->type != 'a' && r->type != type)
        continue;
      if (r->type != 'a' && ((r->major >= 0 && r->major != major) || (r->minor >= 0 && r->minor != minor)))
        continue;
      if (!strchr (r->access, access))
        continue;
      allowed = r->allow;
    }
  return allowed;
}

static void
rule_text (const struct pr_dev_rule *r, char *buf, size_t size)
{
  char maj[24] = "*", min[24] = "*";
  if (r->type == 'a')
    {
      snprintf (buf, size, "a");
      return;
    }
  if (r->major >= 0)
    snprintf (maj, sizeof maj, "%" PRId64, r->major);
  if (r->minor >= 0)
    snprintf (min, sizeof min, "%" PRId64, r->minor);
  snprintf (buf, size, "%c %s:%s %s", r->type, maj, min, r->access);
}

/* v1: the kernel keeps a default (allow/deny all) plus exceptions; a
 * wildcard "a" rule resets the default, specific rules edit exceptions.
 * Writing the rules in order reproduces "last match wins, default deny"
 * (what the v2 filter does) once the list starts with a reset to deny. */
static int
devices_v1 (const char *dir, const struct pr_dev_rule *rules, size_t n, pr_error **err)
{
  if (n == 0 || rules[0].type != 'a')
    if (pr_cgroup_write (dir, "devices.deny", "a", err) < 0)
      return -1;
  for (size_t i = 0; i < n; i++)
    {
      char buf[80];
      rule_text (&rules[i], buf, sizeof buf);
      if (pr_cgroup_write (dir, rules[i].allow ? "devices.allow" : "devices.deny", buf, err) < 0)
        return -1;
    }
  return 0;
}

static int
apply_devices (struct rctx *c, yajl_val a, pr_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return pr_error_set (err, EINVAL, "linux.resources.devices: expected an array");
  size_t n = a->u.array.len + PR_ARRAY_SIZE (default_rules);
  _cleanup_free_ struct pr_dev_rule *rules = xmalloc0 ((n ? n : 1) * sizeof *rules);
  for (size_t i = 0; i < a->u.array.len; i++)
    if (parse_dev_rule (a->u.array.values[i], &rules[i], err) < 0)
      return -1;
  memcpy (rules + a->u.array.len, default_rules, sizeof default_rules);

  _cleanup_free_ char *dir = NULL;
  bool v2 = false;
  if (c->m.layout != PR_CGROUP_UNIFIED)
    {
      const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (&c->m, "devices");
      if (h && !h->is_v2)
        dir = pr_cgroup_hier_dir (h, c->path);
    }
  if (dir == NULL && c->m.layout == PR_CGROUP_UNIFIED)
    {
      dir = pr_cgroup_hier_dir (pr_cgroup_mounts_unified (&c->m), c->path);
      v2 = true;
    }
  if (dir == NULL)
    {
      /* Hybrid/legacy without a devices hierarchy: nothing enforces the
       * list (a v2 filter would add to no v1 policy), say so. */
      pr_warn ("cgroup: no devices controller on this host, linux.resources.devices not enforced");
      return 0;
    }
  return v2 ? pr_cgroup_devices_bpf (dir, rules, n, err) : devices_v1 (dir, rules, n, err);
}

/* ------------------------------------------------------------ entry */

int
pr_cgroup_apply_resources (const char *path, yajl_val resources, bool update, pr_error **err)
{
  if (resources == NULL || YAJL_IS_NULL (resources))
    return 0;
  if (!YAJL_IS_OBJECT (resources))
    return pr_error_set (err, EINVAL, "linux.resources: expected an object");
  struct rctx c = { .path = path, .update = update };
  if (pr_cgroup_mounts_load (&c.m, err) < 0)
    return -1;
  int ret = 0;
  yajl_val v;
  /* update leaves devices alone, as runc update does: engines resend
   * their whole resources object, and replaying the device list on a live
   * container would drop access granted since (e.g. podman --device). */
  if (ret == 0 && !update && (v = field (resources, "devices")))
    ret = apply_devices (&c, v, err);
  if (ret == 0 && (v = field (resources, "memory")))
    ret = YAJL_IS_OBJECT (v) ? apply_memory (&c, v, err) : pr_error_set (err, EINVAL, "linux.resources.memory: "
                                                                                       "expected an object");
  if (ret == 0 && (v = field (resources, "cpu")))
    ret = YAJL_IS_OBJECT (v) ? apply_cpu (&c, v, err) : pr_error_set (err, EINVAL, "linux.resources.cpu: "
                                                                                    "expected an object");
  if (ret == 0 && (v = field (resources, "pids")))
    ret = YAJL_IS_OBJECT (v) ? apply_pids (&c, v, err) : pr_error_set (err, EINVAL, "linux.resources.pids: "
                                                                                     "expected an object");
  if (ret == 0 && (v = field (resources, "blockIO")))
    ret = YAJL_IS_OBJECT (v) ? apply_blkio (&c, v, err) : pr_error_set (err, EINVAL, "linux.resources.blockIO: "
                                                                                      "expected an object");
  if (ret == 0 && (v = field (resources, "hugepageLimits")))
    ret = apply_hugetlb (&c, v, err);
  if (ret == 0 && (v = field (resources, "network")))
    ret = YAJL_IS_OBJECT (v) ? apply_network (&c, v, err) : pr_error_set (err, EINVAL, "linux.resources.network: "
                                                                                        "expected an object");
  if (ret == 0 && (v = field (resources, "rdma")))
    ret = apply_rdma (&c, v, err);
  if (ret == 0 && (v = field (resources, "unified")))
    ret = apply_unified (&c, v, err);
  pr_cgroup_mounts_clear (&c.m);
  return ret;
}
