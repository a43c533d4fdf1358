/* res_memory_cpu.c - the compute controllers of linux.resources (see
 * resources.c for the dispatcher): memory (v1 memory.* / v2 memory.*,
 * swap conversion, kernel and tcp limits), hugepageLimits (hugetlb),
 * cpu and cpuset (shares/weight, quota/period/burst, realtime, cpus and
 * mems) and pids.  Source: runtime-spec config-linux.md "Control groups";
 * Documentation/admin-guide/cgroup-v1/{memory,cpusets,hugetlb}.rst,
 * cgroup-v2.rst, scheduler/sched-bwc.rst. */
#define _GNU_SOURCE
#include "cgroup-internal.h"
#include "cgroup.h"
#include "resources-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/log.h"
#include "../base/util.h"

/* ------------------------------------------------------------ helpers */

/* v2 files spell "no limit" as "max". */
static int
write_max (const char *dir, const char *file, int64_t v, pr_error **err)
{
  if (v < 0)
    return pr_cgroup_write (dir, file, "max", err);
  return pr_res_write_i64 (dir, file, v, err);
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
  if ((r = pr_res_get_int (o, key, "memory", &m->var, err)) < 0)                                                       \
    return -1;                                                                                                         \
  m->has = r == 1;
  GI ("limit", limit, has_limit);
  GI ("swap", swap, has_swap);
  GI ("reservation", reservation, has_res);
  GI ("kernel", kernel, has_kernel);
  GI ("kernelTCP", kernel_tcp, has_ktcp);
  GI ("swappiness", swappiness, has_swappiness);
#undef GI
  if ((r = pr_res_get_bool (o, "disableOOMKiller", "memory", &m->disable_oom, err)) < 0)
    return -1;
  m->has_oom = r == 1;
  if ((r = pr_res_get_bool (o, "useHierarchy", "memory", &m->use_hierarchy, err)) < 0)
    return -1;
  m->has_hier = r == 1;
  if (pr_res_get_bool (o, "checkBeforeUpdate", "memory", &m->check_before, err) < 0)
    return -1;
  /* Go runtimes send swappiness as uint64: "unset" arrives as -1 or huge. */
  if (m->has_swappiness && m->swappiness < 0)
    m->has_swappiness = false;
  if (m->has_swappiness && m->swappiness > 100)
    return pr_error_invalid (err, "linux.resources.memory.swappiness: %" PRId64 " is not in 0..100",
                             m->swappiness);
  /* -1 is the spec's "unlimited"; anything below would reach the kernel
   * and come back as a bare EINVAL from a write. */
  const struct
  {
    const char *key;
    bool has;
    int64_t v;
  } bytes[] = {
    { "limit", m->has_limit, m->limit },        { "swap", m->has_swap, m->swap },
    { "reservation", m->has_res, m->reservation }, { "kernel", m->has_kernel, m->kernel },
    { "kernelTCP", m->has_ktcp, m->kernel_tcp },
  };
  for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++)
    if (bytes[i].has && bytes[i].v < -1)
      return pr_error_invalid (err, "linux.resources.memory.%s: %" PRId64 " is not a byte count (-1 means unlimited)",
                               bytes[i].key, bytes[i].v);
  return 0;
}

/* Limits the kernel accounts only when the file exists and the kernel
 * still honours it (kmem limits are refused since Linux 5.16, and the
 * runtime-spec marks them deprecated): best effort. */
static void
write_optional (const char *dir, const char *file, int64_t v)
{
  _cleanup_error_ pr_error *e = NULL;
  if (!pr_res_file_exists (dir, file))
    {
      pr_debug ("cgroup: %s/%s not present, ignored", dir, file);
      return;
    }
  if (pr_res_write_i64 (dir, file, v, &e) < 0)
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
  bool have_memsw = pr_res_file_exists (dir, "memory.memsw.limit_in_bytes");
  if (m->has_swap && m->swap != 0 && !have_memsw && m->swap > 0)
    return pr_error_set (err, ENOTSUP, "linux.resources.memory.swap: no swap accounting (memory.memsw.*) on this host");
  if (m->has_limit && m->has_swap && m->swap != 0 && have_memsw)
    {
      if (m->swap > 0 && m->limit > m->swap)
        return pr_error_invalid (err, "memory.swap (%" PRId64 ") must not be below memory.limit (%" PRId64 ")",
                                 m->swap, m->limit);
      /* The kernel keeps limit <= memsw at every step: raise memsw first
       * when the new limit would exceed the current memsw. */
      int64_t cur = read_i64 (dir, "memory.memsw.limit_in_bytes", -1);
      bool swap_first = m->limit < 0 || (cur >= 0 && m->limit > cur);
      if (swap_first)
        {
          if (pr_res_write_i64 (dir, "memory.memsw.limit_in_bytes", m->swap, err) < 0
              || pr_res_write_i64 (dir, "memory.limit_in_bytes", m->limit, err) < 0)
            return -1;
        }
      else if (pr_res_write_i64 (dir, "memory.limit_in_bytes", m->limit, err) < 0
               || pr_res_write_i64 (dir, "memory.memsw.limit_in_bytes", m->swap, err) < 0)
        return -1;
    }
  else
    {
      if (m->has_limit && m->limit != 0 && pr_res_write_i64 (dir, "memory.limit_in_bytes", m->limit, err) < 0)
        return -1;
      if (m->has_swap && m->swap != 0 && have_memsw
          && pr_res_write_i64 (dir, "memory.memsw.limit_in_bytes", m->swap, err) < 0)
        return -1;
    }
  if (m->has_res && m->reservation != 0
      && pr_res_write_i64 (dir, "memory.soft_limit_in_bytes", m->reservation, err) < 0)
    return -1;
  if (m->has_kernel && m->kernel != 0)
    write_optional (dir, "memory.kmem.limit_in_bytes", m->kernel);
  if (m->has_ktcp && m->kernel_tcp != 0)
    write_optional (dir, "memory.kmem.tcp.limit_in_bytes", m->kernel_tcp);
  if (m->has_swappiness && pr_res_write_i64 (dir, "memory.swappiness", m->swappiness, err) < 0)
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
  if (swap_set && !pr_res_file_exists (dir, "memory.swap.max"))
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

int
pr_res_apply_memory (struct rctx *c, yajl_val o, pr_error **err)
{
  struct mem m = { 0 };
  if (parse_memory (o, &m, err) < 0)
    return -1;
  bool wants = (m.has_limit && m.limit != 0) || (m.has_swap && m.swap != 0) || (m.has_res && m.reservation != 0)
               || m.has_swappiness || (m.has_oom && m.disable_oom);
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (pr_res_locate (c, "memory", "memory", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return wants ? pr_res_no_controller ("memory", "memory", c->path, err) : 0;
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
  if ((r = pr_res_get_int (o, key, "cpu", &p->var, err)) < 0)                                                          \
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
  if (pr_res_get_str (o, "cpus", "cpu", &p->cpus, err) < 0 || pr_res_get_str (o, "mems", "cpu", &p->mems, err) < 0)
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
      if (pr_res_write_i64 (dir, "cpu.shares", p->shares, err) < 0)
        return -1;
      /* The kernel clamps silently; runc reports it, so do we. */
      int64_t got = read_i64 (dir, "cpu.shares", p->shares);
      if (got != p->shares)
        return pr_error_invalid (err, "cpu.shares %" PRId64 " out of range (kernel set %" PRId64 ")", p->shares,
                                 got);
    }
  if (p->has_period)
    {
      /* A new period may be refused against the current quota (and the
       * other way round): on EINVAL retry after writing the quota. */
      _cleanup_error_ pr_error *e = NULL;
      if (pr_res_write_i64 (dir, "cpu.cfs_period_us", p->period, &e) < 0)
        {
          if (e->errnum != EINVAL || !p->has_quota)
            return pr_error_set (err, e->errnum, "%s", e->msg);
          if (pr_res_write_i64 (dir, "cpu.cfs_quota_us", p->quota, err) < 0
              || pr_res_write_i64 (dir, "cpu.cfs_period_us", p->period, err) < 0)
            return -1;
        }
    }
  if (p->has_quota && pr_res_write_i64 (dir, "cpu.cfs_quota_us", p->quota, err) < 0)
    return -1;
  if (p->has_burst)
    {
      if (!pr_res_file_exists (dir, "cpu.cfs_burst_us"))
        return pr_error_set (err, ENOTSUP, "linux.resources.cpu.burst: no cpu.cfs_burst_us on this kernel");
      if (pr_res_write_i64 (dir, "cpu.cfs_burst_us", p->burst, err) < 0)
        return -1;
    }
  if (p->has_rt_period && pr_res_write_i64 (dir, "cpu.rt_period_us", p->rt_period, err) < 0)
    return -1;
  if (p->has_rt_runtime && pr_res_write_i64 (dir, "cpu.rt_runtime_us", p->rt_runtime, err) < 0)
    return -1;
  if (p->has_idle)
    {
      if (!pr_res_file_exists (dir, "cpu.idle"))
        return pr_error_set (err, ENOTSUP, "linux.resources.cpu.idle: no cpu.idle on this kernel");
      if (pr_res_write_i64 (dir, "cpu.idle", p->idle, err) < 0)
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
  if (p->has_burst && pr_res_write_i64 (dir, "cpu.max.burst", p->burst, err) < 0)
    return -1;
  if (p->has_idle && pr_res_write_i64 (dir, "cpu.idle", p->idle, err) < 0)
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
  if (pr_res_locate (c, "cpuset", "cpuset", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return pr_res_no_controller ("cpu", "cpuset", c->path, err);
  /* mems before cpus is the order that keeps v1 happy when both shrink. */
  if (p->mems && pr_cgroup_write (dir, "cpuset.mems", p->mems, err) < 0)
    return -1;
  if (p->cpus && pr_cgroup_write (dir, "cpuset.cpus", p->cpus, err) < 0)
    return -1;
  return 0;
}

int
pr_res_apply_cpu (struct rctx *c, yajl_val o, pr_error **err)
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
      if (pr_res_locate (c, "cpu", "cpu", &dir, &v2, err) < 0)
        return -1;
      if (dir == NULL)
        return pr_res_no_controller ("cpu", "cpu", c->path, err);
      if ((v2 ? cpu_v2 (c, dir, &p, err) : cpu_v1 (dir, &p, err)) < 0)
        return -1;
    }
  return apply_cpuset (c, &p, err);
}

/* ------------------------------------------------------------ pids */

int
pr_res_apply_pids (struct rctx *c, yajl_val o, pr_error **err)
{
  int64_t limit;
  int r = pr_res_get_int (o, "limit", "pids", &limit, err);
  if (r <= 0)
    return r;
  /* runc: 0 leaves the limit alone, a negative value means unlimited. */
  if (limit == 0)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (pr_res_locate (c, "pids", "pids", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return pr_res_no_controller ("pids", "pids", c->path, err);
  return write_max (dir, "pids.max", limit, err);
}

/* ------------------------------------------------------------ hugetlb */

int
pr_res_apply_hugetlb (struct rctx *c, yajl_val a, pr_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return pr_error_invalid (err, "linux.resources.hugepageLimits: expected an array");
  if (a->u.array.len == 0)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (pr_res_locate (c, "hugetlb", "hugetlb", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return pr_res_no_controller ("hugepageLimits", "hugetlb", c->path, err);
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val e = a->u.array.values[i];
      const char *size = NULL;
      int64_t limit = 0;
      if (pr_res_get_str (e, "pageSize", "hugepageLimits", &size, err) != 1
          || pr_res_get_int (e, "limit", "hugepageLimits", &limit, err) != 1)
        return pr_error_invalid (err, "linux.resources.hugepageLimits[%zu]: pageSize and limit are required", i);
      if (strchr (size, '/') || strchr (size, '.'))
        return pr_error_invalid (err, "linux.resources.hugepageLimits: invalid pageSize `%s`", size);
      _cleanup_free_ char *file = xasprintf (v2 ? "hugetlb.%s.max" : "hugetlb.%s.limit_in_bytes", size);
      if (!pr_res_file_exists (dir, file))
        return pr_error_invalid (err, "linux.resources.hugepageLimits: page size `%s` not supported by the "
                                              "host (no %s)", size, file);
      if ((v2 ? write_max (dir, file, limit, err) : pr_res_write_i64 (dir, file, limit, err)) < 0)
        return -1;
    }
  return 0;
}
