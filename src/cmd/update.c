/* update.c - `proctor update`: change a live container's cgroup limits
 * (runc update).  The new values come from --resources FILE (a
 * linux.resources object, "-" = stdin) and/or the single-value flags
 * (flags win); only what is given changes.  This file parses the flags
 * (runc's byte suffixes) into resource values and reads the file;
 * pr_container_update (lifecycle/ops.h) merges them, writes the cgroup and
 * the state's config.json.
 * Source: runc update(8) flags and semantics; runtime-spec config-linux.md
 * "Control groups". */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/util.h"
#include "../lifecycle/ops.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum
{
  F_MEMORY = 4001,
  F_MEMORY_SWAP,
  F_MEMORY_RES,
  F_CPU_SHARES,
  F_CPU_QUOTA,
  F_CPU_PERIOD,
  F_CPUSET_CPUS,
  F_CPUSET_MEMS,
  F_PIDS,
  F_BLKIO_WEIGHT,
  F_KMEM,
  F_KMEM_TCP,
  F_RT_RUNTIME,
  F_RT_PERIOD,
  F_L3,
  F_MEMBW,
  F__END
};

struct update_opts
{
  const char *resources;
  const char *val[F__END - F_MEMORY]; /* flag values by key - F_MEMORY */
};

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  struct update_opts *o = data;
  if (key == 'r')
    o->resources = arg;
  else if (key == F_L3 || key == F_MEMBW)
    return pr_error_set (err, ENOTSUP, "update: --%s: Intel RDT is not supported by proctor",
                         key == F_L3 ? "l3-cache-schema" : "mem-bw-schema");
  else if (key >= F_MEMORY && key < F__END)
    o->val[key - F_MEMORY] = arg;
  return 0;
}

/* Byte sizes as runc accepts them: a number with an optional binary
 * suffix (k, m, g, t, optionally followed by "b"/"ib"), or -1. */
static int
parse_bytes (const char *flag, const char *s, int64_t *out, pr_error **err)
{
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (errno || end == s)
    return pr_error_invalid (err, "update: invalid value `%s` for --%s", s, flag);
  if (v == -1 && *end == '\0')
    {
      *out = -1;
      return 0;
    }
  if (v < 0)
    return pr_error_invalid (err, "update: invalid value `%s` for --%s", s, flag);
  int shift = 0;
  switch (*end | 0x20)
    {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    case 't': shift = 40; break;
    default: break;
    }
  if (shift)
    end++;
  if (strcasecmp (end, "") != 0 && strcasecmp (end, "b") != 0 && strcasecmp (end, "ib") != 0)
    return pr_error_invalid (err, "update: invalid value `%s` for --%s", s, flag);
  if (shift && v > (INT64_MAX >> shift))
    return pr_error_set (err, ERANGE, "update: value `%s` for --%s is too large", s, flag);
  *out = (int64_t) v << shift;
  return 0;
}

static int
parse_int (const char *flag, const char *s, int64_t *out, pr_error **err)
{
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (errno || end == s || *end)
    return pr_error_invalid (err, "update: invalid value `%s` for --%s", s, flag);
  *out = v;
  return 0;
}

struct flagdef
{
  int key;
  const char *flag, *section, *field;
  bool bytes, string;
};

static const struct flagdef flagdefs[] = {
  { F_MEMORY, "memory", "memory", "limit", true, false },
  { F_MEMORY_SWAP, "memory-swap", "memory", "swap", true, false },
  { F_MEMORY_RES, "memory-reservation", "memory", "reservation", true, false },
  { F_KMEM, "kernel-memory", "memory", "kernel", true, false },
  { F_KMEM_TCP, "kernel-memory-tcp", "memory", "kernelTCP", true, false },
  { F_CPU_SHARES, "cpu-shares", "cpu", "shares", false, false },
  { F_CPU_QUOTA, "cpu-quota", "cpu", "quota", false, false },
  { F_CPU_PERIOD, "cpu-period", "cpu", "period", false, false },
  { F_RT_RUNTIME, "cpu-rt-runtime", "cpu", "realtimeRuntime", false, false },
  { F_RT_PERIOD, "cpu-rt-period", "cpu", "realtimePeriod", false, false },
  { F_CPUSET_CPUS, "cpuset-cpus", "cpu", "cpus", false, true },
  { F_CPUSET_MEMS, "cpuset-mems", "cpu", "mems", false, true },
  { F_PIDS, "pids-limit", "pids", "limit", false, false },
  { F_BLKIO_WEIGHT, "blkio-weight", "blockIO", "weight", false, false },
};

/* The flags as resource values (vals holds PR_ARRAY_SIZE (flagdefs),
 * strs the numbers' text), grouped by section as linux.resources has
 * them.  Errors: EINVAL/ERANGE for a bad number. */
static int
flag_values (const struct update_opts *o, struct pr_update_value *vals, char (*strs)[32], size_t *n, pr_error **err)
{
  static const char *const sections[] = { "memory", "cpu", "pids", "blockIO" };
  *n = 0;
  for (size_t s = 0; s < PR_ARRAY_SIZE (sections); s++)
    for (size_t i = 0; i < PR_ARRAY_SIZE (flagdefs); i++)
      {
        const struct flagdef *d = &flagdefs[i];
        const char *v = o->val[d->key - F_MEMORY];
        if (v == NULL || strcmp (d->section, sections[s]) != 0)
          continue;
        struct pr_update_value *u = &vals[(*n)++];
        *u = (struct pr_update_value){ .section = d->section, .name = d->field, .numeric = !d->string, .value = v };
        if (d->string)
          continue;
        int64_t num = 0;
        if ((d->bytes ? parse_bytes (d->flag, v, &num, err) : parse_int (d->flag, v, &num, err)) < 0)
          return -1;
        snprintf (strs[*n - 1], sizeof strs[0], "%" PRId64, num);
        u->value = strs[*n - 1];
      }
  return 0;
}

static int
read_resources_file (const char *path, char **out, pr_error **err)
{
  if (strcmp (path, "-") != 0)
    return pr_read_file (path, out, NULL, err);
  size_t cap = 4096, len = 0;
  char *buf = xmalloc (cap);
  for (;;)
    {
      if (len + 1 >= cap)
        buf = xrealloc (buf, cap *= 2);
      ssize_t r = read (STDIN_FILENO, buf + len, cap - len - 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          free (buf);
          return pr_error_set (err, errno, "update: read resources from stdin");
        }
      if (r == 0)
        break;
      len += (size_t) r;
    }
  buf[len] = '\0';
  *out = buf;
  return 0;
}

static int
update (struct pr_global *g, const char *id, const struct update_opts *o, pr_error **err)
{
  struct pr_update_value vals[PR_ARRAY_SIZE (flagdefs)];
  char strs[PR_ARRAY_SIZE (flagdefs)][32];
  size_t n = 0;
  _cleanup_free_ char *file_text = NULL;
  if (flag_values (o, vals, strs, &n, err) < 0)
    return -1;
  if (o->resources && read_resources_file (o->resources, &file_text, err) < 0)
    return -1;
  return pr_container_update (g, id, file_text, o->resources, vals, n, err);
}

static int
run_update (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct update_opts o = { 0 };
  int first = pr_cmd_parse (&pr_cmd_update, argc, argv, handle, &o, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_update, argc, first, 1, 1, &err) < 0)
    return pr_cmd_fail (err);
  if (update (g, argv[first], &o, &err) < 0)
    return pr_cmd_fail (err);
  return 0;
}

static const struct pr_opt opts[] = {
  { "resources", required_argument, 'r', "FILE", "path to a linux.resources JSON file (- for stdin)" },
  { "memory", required_argument, F_MEMORY, "BYTES", "memory limit (k/m/g suffixes, -1 = unlimited)" },
  { "memory-swap", required_argument, F_MEMORY_SWAP, "BYTES", "memory plus swap limit" },
  { "memory-reservation", required_argument, F_MEMORY_RES, "BYTES", "memory soft limit" },
  { "kernel-memory", required_argument, F_KMEM, "BYTES", "kernel memory limit (deprecated, v1 only)" },
  { "kernel-memory-tcp", required_argument, F_KMEM_TCP, "BYTES", "kernel TCP buffer limit (deprecated, v1 only)" },
  { "cpu-shares", required_argument, F_CPU_SHARES, "N", "CPU shares (relative weight)" },
  { "cpu-quota", required_argument, F_CPU_QUOTA, "USEC", "CPU CFS quota per period" },
  { "cpu-period", required_argument, F_CPU_PERIOD, "USEC", "CPU CFS period" },
  { "cpu-rt-runtime", required_argument, F_RT_RUNTIME, "USEC", "CPU realtime runtime per period" },
  { "cpu-rt-period", required_argument, F_RT_PERIOD, "USEC", "CPU realtime period" },
  { "cpuset-cpus", required_argument, F_CPUSET_CPUS, "LIST", "CPUs to use" },
  { "cpuset-mems", required_argument, F_CPUSET_MEMS, "LIST", "memory nodes to use" },
  { "pids-limit", required_argument, F_PIDS, "N", "maximum number of pids (-1 = unlimited)" },
  { "blkio-weight", required_argument, F_BLKIO_WEIGHT, "N", "block IO weight (10-1000)" },
  { "l3-cache-schema", required_argument, F_L3, "SCHEMA", "Intel RDT L3 cache schema (not supported)" },
  { "mem-bw-schema", required_argument, F_MEMBW, "SCHEMA", "Intel RDT memory bandwidth schema (not supported)" },
  { NULL },
};

const struct pr_command pr_cmd_update = {
  "update", "[command options] <container-id>", "update container resource constraints", opts, run_update,
};
