/* stats.c - container statistics from cgroup files, as runc's
 * types.Stats JSON (what `events --stats` prints and engines parse), and
 * the OOM-kill counter `events` watches.
 * Source: runc types/events.go (field names, omitempty, units: CPU in ns);
 * Documentation/admin-guide/cgroup-v1/{cpuacct,memory,blkio-controller,
 * hugetlb,pids}.rst and cgroup-v2.rst (cpu.stat, memory.stat,
 * memory.events, io.stat, hugetlb.*, pids.*). */
#define _GNU_SOURCE
#include "cgroup-internal.h"
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "../base/json.h"
#include "../base/util.h"

struct sctx
{
  struct pr_cgroup_mounts m;
  const char *path;
  yajl_gen g;
};

/* The directory of controller (v1 name, then the unified hierarchy if it
 * has file probe), NULL when none; *v2 tells which. */
static char *
ctl_dir (struct sctx *c, const char *v1, const char *probe, bool *v2)
{
  *v2 = false;
  if (c->m.layout != PR_CGROUP_UNIFIED)
    {
      const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (&c->m, v1);
      if (h && !h->is_v2)
        return pr_cgroup_hier_dir (h, c->path);
    }
  const struct pr_cgroup_hier *u = pr_cgroup_mounts_unified (&c->m);
  if (u == NULL)
    return NULL;
  char *d = pr_cgroup_hier_dir (u, c->path);
  _cleanup_free_ char *f = xasprintf ("%s/%s", d, probe);
  if (access (f, F_OK) < 0)
    {
      free (d);
      return NULL;
    }
  *v2 = true;
  return d;
}

static char *
slurp (const char *dir, const char *file)
{
  char *s = NULL;
  _cleanup_error_ pr_error *e = NULL;
  if (pr_cgroup_read (dir, file, &s, &e) < 0)
    return NULL;
  return s;
}

/* A single-number file; "max" is reported as UINT64_MAX like runc does. */
static uint64_t
u64_file (const char *dir, const char *file)
{
  _cleanup_free_ char *s = slurp (dir, file);
  if (s == NULL)
    return 0;
  if (strncmp (s, "max", 3) == 0)
    return UINT64_MAX;
  return strtoull (s, NULL, 10);
}

/* "key value" lines (memory.stat, cpu.stat, ...): value of key or 0. */
static uint64_t
keyed (const char *text, const char *key)
{
  size_t kl = strlen (key);
  for (const char *p = text; p && *p;)
    {
      if (strncmp (p, key, kl) == 0 && p[kl] == ' ')
        return strtoull (p + kl + 1, NULL, 10);
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return 0;
}

static void
gstr (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

static void
gu64 (yajl_gen g, const char *key, uint64_t v)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%" PRIu64, v);
  gstr (g, key);
  yajl_gen_number (g, buf, n);
}

/* runc's omitempty: zero values are left out for most fields. */
static void
gu64_nz (yajl_gen g, const char *key, uint64_t v)
{
  if (v)
    gu64 (g, key, v);
}

/* ------------------------------------------------------------ cpu */

static void
percpu_array (yajl_gen g, const char *key, const char *text, uint64_t mult)
{
  if (text == NULL)
    return;
  gstr (g, key);
  yajl_gen_array_open (g);
  for (const char *p = text; *p;)
    {
      char *end;
      unsigned long long v = strtoull (p, &end, 10);
      if (end == p)
        break;
      char buf[32];
      int n = snprintf (buf, sizeof buf, "%" PRIu64, (uint64_t) v * mult);
      yajl_gen_number (g, buf, n);
      p = end + strspn (end, " \n");
    }
  yajl_gen_array_close (g);
}

static void
cpu_stats (struct sctx *c)
{
  bool v2;
  yajl_gen g = c->g;
  gstr (g, "cpu");
  yajl_gen_map_open (g);
  _cleanup_free_ char *acct = ctl_dir (c, "cpuacct", "cpu.stat", &v2);
  if (acct && !v2)
    {
      /* cpuacct.stat is in USER_HZ ticks; runc reports ns. */
      long hz = sysconf (_SC_CLK_TCK);
      uint64_t tick_ns = hz > 0 ? 1000000000ULL / (uint64_t) hz : 10000000ULL;
      _cleanup_free_ char *st = slurp (acct, "cpuacct.stat");
      _cleanup_free_ char *pc = slurp (acct, "cpuacct.usage_percpu");
      _cleanup_free_ char *pk = slurp (acct, "cpuacct.usage_percpu_sys");
      _cleanup_free_ char *pu = slurp (acct, "cpuacct.usage_percpu_user");
      gstr (g, "usage");
      yajl_gen_map_open (g);
      gu64_nz (g, "total", u64_file (acct, "cpuacct.usage"));
      percpu_array (g, "percpu", pc, 1);
      percpu_array (g, "percpu_kernel", pk, 1);
      percpu_array (g, "percpu_user", pu, 1);
      gu64 (g, "kernel", st ? keyed (st, "system") * tick_ns : 0);
      gu64 (g, "user", st ? keyed (st, "user") * tick_ns : 0);
      yajl_gen_map_close (g);
    }
  else if (acct)
    {
      _cleanup_free_ char *st = slurp (acct, "cpu.stat");
      gstr (g, "usage");
      yajl_gen_map_open (g);
      gu64_nz (g, "total", st ? keyed (st, "usage_usec") * 1000 : 0);
      gu64 (g, "kernel", st ? keyed (st, "system_usec") * 1000 : 0);
      gu64 (g, "user", st ? keyed (st, "user_usec") * 1000 : 0);
      yajl_gen_map_close (g);
    }
  /* Throttling: v1 cpu.stat (throttled_time in ns), v2 cpu.stat (usec).
   * On hybrid hosts the v1 cpu controller is the one enforcing quotas. */
  _cleanup_free_ char *cpu = ctl_dir (c, "cpu", "cpu.stat", &v2);
  _cleanup_free_ char *st = cpu ? slurp (cpu, "cpu.stat") : NULL;
  if (st)
    {
      gstr (g, "throttling");
      yajl_gen_map_open (g);
      gu64_nz (g, "periods", keyed (st, "nr_periods"));
      gu64_nz (g, "throttledPeriods", keyed (st, "nr_throttled"));
      gu64_nz (g, "throttledTime", v2 ? keyed (st, "throttled_usec") * 1000 : keyed (st, "throttledTime"));
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------ memory */

static void
mem_entry (yajl_gen g, const char *key, uint64_t limit, uint64_t usage, uint64_t max, uint64_t failcnt)
{
  gstr (g, key);
  yajl_gen_map_open (g);
  gu64 (g, "limit", limit);
  gu64_nz (g, "usage", usage);
  gu64_nz (g, "max", max);
  gu64 (g, "failcnt", failcnt);
  yajl_gen_map_close (g);
}

static void
v1_mem_entry (yajl_gen g, const char *key, const char *dir, const char *prefix)
{
  _cleanup_free_ char *lim = xasprintf ("%s.limit_in_bytes", prefix);
  _cleanup_free_ char *use = xasprintf ("%s.usage_in_bytes", prefix);
  _cleanup_free_ char *max = xasprintf ("%s.max_usage_in_bytes", prefix);
  _cleanup_free_ char *fc = xasprintf ("%s.failcnt", prefix);
  _cleanup_free_ char *probe = xasprintf ("%s/%s", dir, use);
  if (access (probe, F_OK) < 0)
    return;
  mem_entry (g, key, u64_file (dir, lim), u64_file (dir, use), u64_file (dir, max), u64_file (dir, fc));
}

static void
raw_map (yajl_gen g, const char *text)
{
  gstr (g, "raw");
  yajl_gen_map_open (g);
  for (const char *p = text; p && *p;)
    {
      const char *sp = strchr (p, ' ');
      const char *nl = strchrnul (p, '\n');
      if (sp && sp < nl)
        {
          _cleanup_free_ char *k = strndup (p, sp - p);
          if (k == NULL)
            abort ();
          gu64 (g, k, strtoull (sp + 1, NULL, 10));
        }
      p = *nl ? nl + 1 : nl;
    }
  yajl_gen_map_close (g);
}

static void
memory_stats (struct sctx *c)
{
  bool v2;
  _cleanup_free_ char *dir = ctl_dir (c, "memory", "memory.current", &v2);
  yajl_gen g = c->g;
  gstr (g, "memory");
  yajl_gen_map_open (g);
  if (dir == NULL)
    {
      yajl_gen_map_close (g);
      return;
    }
  _cleanup_free_ char *st = slurp (dir, "memory.stat");
  if (!v2)
    {
      gu64_nz (g, "cache", st ? keyed (st, "total_cache") : 0);
      v1_mem_entry (g, "usage", dir, "memory");
      v1_mem_entry (g, "swap", dir, "memory.memsw");
      v1_mem_entry (g, "kernel", dir, "memory.kmem");
      v1_mem_entry (g, "kernelTCP", dir, "memory.kmem.tcp");
    }
  else
    {
      _cleanup_free_ char *ev = slurp (dir, "memory.events");
      uint64_t usage = u64_file (dir, "memory.current"), limit = u64_file (dir, "memory.max");
      gu64_nz (g, "cache", st ? keyed (st, "file") : 0);
      mem_entry (g, "usage", limit, usage, u64_file (dir, "memory.peak"), ev ? keyed (ev, "max") : 0);
      /* runc reports v2 swap as memory + swap, the v1 meaning. */
      _cleanup_free_ char *sw = xasprintf ("%s/memory.swap.current", dir);
      if (access (sw, F_OK) == 0)
        {
          uint64_t su = u64_file (dir, "memory.swap.current"), sl = u64_file (dir, "memory.swap.max");
          uint64_t tl = (sl == UINT64_MAX || limit == UINT64_MAX) ? UINT64_MAX : sl + limit;
          mem_entry (g, "swap", tl, su + usage, 0, 0);
        }
    }
  if (st)
    raw_map (g, st);
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------ pids */

static void
pids_stats (struct sctx *c)
{
  bool v2;
  _cleanup_free_ char *dir = ctl_dir (c, "pids", "pids.current", &v2);
  gstr (c->g, "pids");
  yajl_gen_map_open (c->g);
  if (dir == NULL)
    {
      yajl_gen_map_close (c->g);
      return;
    }
  uint64_t lim = u64_file (dir, "pids.max");
  gu64_nz (c->g, "current", u64_file (dir, "pids.current"));
  /* runc: "max" (no limit) is 0 */
  gu64_nz (c->g, "limit", lim == UINT64_MAX ? 0 : lim);
  yajl_gen_map_close (c->g);
}

/* ------------------------------------------------------------ blkio */

static void
blkio_entry (yajl_gen g, unsigned maj, unsigned min, const char *op, uint64_t v)
{
  yajl_gen_map_open (g);
  gu64_nz (g, "major", maj);
  gu64_nz (g, "minor", min);
  if (op)
    {
      gstr (g, "op");
      gstr (g, op);
    }
  gu64_nz (g, "value", v);
  yajl_gen_map_close (g);
}

/* v1 "MAJ:MIN Op value" lines ("Total N" last line has no device). */
static void
v1_blkio_list (yajl_gen g, const char *key, const char *text)
{
  gstr (g, key);
  yajl_gen_array_open (g);
  for (const char *p = text; p && *p;)
    {
      unsigned maj, min;
      char op[16];
      unsigned long long v;
      if (sscanf (p, "%u:%u %15s %llu", &maj, &min, op, &v) == 4)
        blkio_entry (g, maj, min, op, v);
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  yajl_gen_array_close (g);
}

static void
blkio_stats (struct sctx *c)
{
  bool v2;
  _cleanup_free_ char *dir = ctl_dir (c, "blkio", "io.stat", &v2);
  yajl_gen g = c->g;
  gstr (g, "blkio");
  yajl_gen_map_open (g);
  if (dir == NULL)
    ;
  else if (!v2)
    {
      /* CFQ/BFQ counters when present, else the throttle layer's. */
      static const char *const bytes[] = { "blkio.io_service_bytes_recursive", "blkio.bfq.io_service_bytes_recursive",
                                           "blkio.throttle.io_service_bytes_recursive" };
      static const char *const ios[] = { "blkio.io_serviced_recursive", "blkio.bfq.io_serviced_recursive",
                                         "blkio.throttle.io_serviced_recursive" };
      for (size_t i = 0; i < PR_ARRAY_SIZE (bytes); i++)
        {
          _cleanup_free_ char *b = slurp (dir, bytes[i]);
          _cleanup_free_ char *s = slurp (dir, ios[i]);
          if (b == NULL)
            continue;
          v1_blkio_list (g, "ioServiceBytesRecursive", b);
          if (s)
            v1_blkio_list (g, "ioServicedRecursive", s);
          break;
        }
    }
  else
    {
      /* io.stat: "MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. ..." */
      _cleanup_free_ char *st = slurp (dir, "io.stat");
      static const char *const sets[2][3] = { { "ioServiceBytesRecursive", "rbytes=", "wbytes=" },
                                              { "ioServicedRecursive", "rios=", "wios=" } };
      for (size_t s = 0; s < 2; s++)
        {
          gstr (g, sets[s][0]);
          yajl_gen_array_open (g);
          for (const char *p = st; p && *p;)
            {
              unsigned maj, min;
              const char *nl = strchrnul (p, '\n');
              _cleanup_free_ char *line = strndup (p, nl - p);
              if (line && sscanf (line, "%u:%u", &maj, &min) == 2)
                {
                  const char *r = strstr (line, sets[s][1]), *w = strstr (line, sets[s][2]);
                  uint64_t rv = r ? strtoull (r + strlen (sets[s][1]), NULL, 10) : 0;
                  uint64_t wv = w ? strtoull (w + strlen (sets[s][2]), NULL, 10) : 0;
                  blkio_entry (g, maj, min, "Read", rv);
                  blkio_entry (g, maj, min, "Write", wv);
                  blkio_entry (g, maj, min, "Total", rv + wv);
                }
              p = *nl ? nl + 1 : nl;
            }
          yajl_gen_array_close (g);
        }
    }
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------ hugetlb */

static void
hugetlb_stats (struct sctx *c)
{
  bool v2;
  _cleanup_free_ char *dir = NULL;
  yajl_gen g = c->g;
  gstr (g, "hugetlb");
  yajl_gen_map_open (g);
  DIR *d = opendir ("/sys/kernel/mm/hugepages");
  if (d == NULL)
    {
      yajl_gen_map_close (g);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)))
    {
      unsigned long long kb;
      if (sscanf (de->d_name, "hugepages-%llukB", &kb) != 1)
        continue;
      char name[16];
      pr_cgroup_hugepage_name ((uint64_t) kb * 1024, name, sizeof name);
      _cleanup_free_ char *probe = xasprintf ("hugetlb.%s.current", name);
      if (dir == NULL)
        dir = ctl_dir (c, "hugetlb", probe, &v2);
      if (dir == NULL)
        break;
      _cleanup_free_ char *usage = xasprintf (v2 ? "hugetlb.%s.current" : "hugetlb.%s.usage_in_bytes", name);
      _cleanup_free_ char *usage_path = xasprintf ("%s/%s", dir, usage);
      if (access (usage_path, F_OK) < 0)
        continue;
      gstr (g, name);
      yajl_gen_map_open (g);
      gu64_nz (g, "usage", u64_file (dir, usage));
      if (v2)
        {
          _cleanup_free_ char *evf = xasprintf ("hugetlb.%s.events", name);
          _cleanup_free_ char *ev = slurp (dir, evf);
          gu64 (g, "failcnt", ev ? keyed (ev, "max") : 0);
        }
      else
        {
          _cleanup_free_ char *maxf = xasprintf ("hugetlb.%s.max_usage_in_bytes", name);
          _cleanup_free_ char *fcf = xasprintf ("hugetlb.%s.failcnt", name);
          gu64_nz (g, "max", u64_file (dir, maxf));
          gu64 (g, "failcnt", u64_file (dir, fcf));
        }
      yajl_gen_map_close (g);
    }
  closedir (d);
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------ public */

int
pr_cgroup_stats_json (const char *path, char **json_out, pr_error **err)
{
  struct sctx c = { .path = path };
  if (pr_cgroup_mounts_load (&c.m, err) < 0)
    return -1;
  /* The container must still have its cgroup: stats of nothing would
   * silently read as zeros. */
  bool v2;
  _cleanup_free_ char *probe = ctl_dir (&c, "pids", "cgroup.procs", &v2);
  if (probe == NULL)
    probe = ctl_dir (&c, "memory", "cgroup.procs", &v2);
  if (probe == NULL || access (probe, F_OK) < 0)
    {
      pr_cgroup_mounts_clear (&c.m);
      return pr_error_set (err, ENOENT, "cgroup `%s` does not exist", path);
    }
  c.g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (c.g);
  cpu_stats (&c);
  memory_stats (&c);
  pids_stats (&c);
  blkio_stats (&c);
  hugetlb_stats (&c);
  yajl_gen_map_close (c.g);
  *json_out = pr_json_gen_finish (c.g);
  pr_cgroup_mounts_clear (&c.m);
  return 0;
}

int
pr_cgroup_oom_kills (const char *path, uint64_t *out, pr_error **err)
{
  struct sctx c = { .path = path };
  if (pr_cgroup_mounts_load (&c.m, err) < 0)
    return -1;
  bool v2;
  _cleanup_free_ char *dir = ctl_dir (&c, "memory", "memory.events", &v2);
  pr_cgroup_mounts_clear (&c.m);
  if (dir == NULL)
    return pr_error_set (err, ENOTSUP, "no memory controller for cgroup `%s`", path);
  _cleanup_free_ char *text = NULL;
  if (pr_cgroup_read (dir, v2 ? "memory.events" : "memory.oom_control", &text, err) < 0)
    return -1;
  /* "oom_kill" exists since Linux 4.13 (v1) / 4.13 (v2); older kernels
   * only say "under_oom", which we count as one event. */
  if (strstr (text, "oom_kill "))
    *out = keyed (text, "oom_kill");
  else
    *out = keyed (text, "under_oom");
  return 0;
}
