/* update.c - `proctor update`: change a live container's cgroup limits
 * (runc update).  The new values come from --resources FILE (a
 * linux.resources object, "-" = stdin) and/or the single-value flags
 * (flags win); only what is given changes.  After the cgroup files are
 * written, the state directory's config.json copy gets the values merged
 * into its linux.resources so later commands see them.
 * Source: runc update(8) flags and semantics; runtime-spec config-linux.md
 * "Control groups". */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../cgroup/cgroup.h"
#include "../lifecycle/state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

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

static void
gkey (yajl_gen g, const char *k)
{
  yajl_gen_string (g, (const unsigned char *) k, strlen (k));
}

static void
gint (yajl_gen g, const char *k, int64_t v)
{
  gkey (g, k);
  yajl_gen_integer (g, v);
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

/* The flags as a linux.resources JSON text ("{}" when none). */
static int
flags_json (const struct update_opts *o, char **out, pr_error **err)
{
  static const char *const sections[] = { "memory", "cpu", "pids", "blockIO" };
  yajl_gen g = yajl_gen_alloc (NULL);
  int ret = 0;
  yajl_gen_map_open (g);
  for (size_t s = 0; s < PR_ARRAY_SIZE (sections) && ret == 0; s++)
    {
      bool open = false;
      for (size_t i = 0; i < PR_ARRAY_SIZE (flagdefs) && ret == 0; i++)
        {
          const struct flagdef *d = &flagdefs[i];
          const char *v = o->val[d->key - F_MEMORY];
          if (v == NULL || strcmp (d->section, sections[s]) != 0)
            continue;
          if (!open)
            {
              gkey (g, sections[s]);
              yajl_gen_map_open (g);
              open = true;
            }
          int64_t n = 0;
          if (d->string)
            {
              gkey (g, d->field);
              yajl_gen_string (g, (const unsigned char *) v, strlen (v));
            }
          else if ((ret = (d->bytes ? parse_bytes (d->flag, v, &n, err) : parse_int (d->flag, v, &n, err))) == 0)
            gint (g, d->field, n);
        }
      if (open)
        yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  _cleanup_free_ char *text = pr_json_gen_finish (g);
  if (ret == 0)
    *out = steal_pointer (&text);
  return ret;
}

/* ------------------------------------------------------------ JSON merge */

static void gen_value (yajl_gen g, yajl_val v);

static void
gen_value (yajl_gen g, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          gkey (g, v->u.object.keys[i]);
          gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_STRING (v))
    yajl_gen_string (g, (const unsigned char *) v->u.string, strlen (v->u.string));
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    yajl_gen_bool (g, YAJL_IS_TRUE (v));
  else
    yajl_gen_null (g);
}

static yajl_val
obj_get (yajl_val o, const char *key)
{
  for (size_t i = 0; o && YAJL_IS_OBJECT (o) && i < o->u.object.len; i++)
    if (strcmp (o->u.object.keys[i], key) == 0)
      return o->u.object.values[i];
  return NULL;
}

/* Objects merge key by key (over wins); anything else is replaced. */
static void
gen_merged (yajl_gen g, yajl_val base, yajl_val over)
{
  if (over == NULL)
    {
      gen_value (g, base);
      return;
    }
  if (base == NULL || !YAJL_IS_OBJECT (base) || !YAJL_IS_OBJECT (over))
    {
      gen_value (g, over);
      return;
    }
  yajl_gen_map_open (g);
  for (size_t i = 0; i < base->u.object.len; i++)
    {
      gkey (g, base->u.object.keys[i]);
      gen_merged (g, base->u.object.values[i], obj_get (over, base->u.object.keys[i]));
    }
  for (size_t i = 0; i < over->u.object.len; i++)
    if (obj_get (base, over->u.object.keys[i]) == NULL)
      {
        gkey (g, over->u.object.keys[i]);
        gen_value (g, over->u.object.values[i]);
      }
  yajl_gen_map_close (g);
}

static int
parse_json (const char *text, const char *what, yajl_val *out, pr_error **err)
{
  char ebuf[256] = "";
  *out = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (*out == NULL)
    {
      ebuf[strcspn (ebuf, "\n")] = '\0';
      return pr_error_invalid (err, "update: invalid JSON in %s: %s", what, ebuf);
    }
  return 0;
}

/* config.json with linux.resources merged with res, everything else kept. */
static char *
config_with (yajl_val cfg, yajl_val res)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_val linux = obj_get (cfg, "linux");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < cfg->u.object.len; i++)
    {
      const char *k = cfg->u.object.keys[i];
      gkey (g, k);
      if (strcmp (k, "linux") != 0 || !YAJL_IS_OBJECT (linux))
        {
          gen_value (g, cfg->u.object.values[i]);
          continue;
        }
      yajl_gen_map_open (g);
      for (size_t j = 0; j < linux->u.object.len; j++)
        {
          gkey (g, linux->u.object.keys[j]);
          if (strcmp (linux->u.object.keys[j], "resources") == 0)
            gen_merged (g, linux->u.object.values[j], res);
          else
            gen_value (g, linux->u.object.values[j]);
        }
      if (obj_get (linux, "resources") == NULL)
        {
          gkey (g, "resources");
          gen_value (g, res);
        }
      yajl_gen_map_close (g);
    }
  if (linux == NULL)
    {
      gkey (g, "linux");
      yajl_gen_map_open (g);
      gkey (g, "resources");
      gen_value (g, res);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  return pr_json_gen_finish (g);
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

/* Rewrites <root>/<id>/config.json atomically with the merged resources. */
static int
save_config (const struct pr_state *st, yajl_val res, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (pr_read_file_at (st->state_dirfd, "config.json", &text, NULL, err) < 0)
    return -1;
  yajl_val cfg;
  if (parse_json (text, "the state's config.json", &cfg, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (cfg))
    {
      yajl_tree_free (cfg);
      return pr_error_invalid (err, "update: the state's config.json is not an object");
    }
  _cleanup_free_ char *out = config_with (cfg, res);
  yajl_tree_free (cfg);
  if (pr_write_file_at (st->state_dirfd, "config.json.tmp", out, strlen (out), 0600, err) < 0)
    return -1;
  if (renameat (st->state_dirfd, "config.json.tmp", st->state_dirfd, "config.json") < 0)
    return pr_error_set (err, errno, "update: rename config.json");
  return 0;
}

static int
update (struct pr_global *g, const char *id, const struct update_opts *o, pr_error **err)
{
  _cleanup_free_ char *file_text = NULL, *flag_text = NULL, *merged = NULL;
  yajl_val file_res = NULL, flag_res = NULL, res = NULL;
  _cleanup_state_ struct pr_state *st = NULL;
  int ret = -1;

  if (flags_json (o, &flag_text, err) < 0)
    return -1;
  if (o->resources == NULL && strcmp (flag_text, "{}") == 0)
    return pr_error_invalid (err, "update: nothing to update: give --resources or a resource flag");
  if (pr_state_load (g->root, id, true, &st, err) < 0)
    return -1;
  const char *status = pr_state_status (st);
  if (strcmp (status, "stopped") == 0 || st->cgroup_path == NULL)
    return pr_error_invalid (err, "update: container %s is %s", id, status);

  if (o->resources && read_resources_file (o->resources, &file_text, err) < 0)
    return -1;
  if (file_text && parse_json (file_text, o->resources, &file_res, err) < 0)
    goto out;
  if (file_res && !YAJL_IS_OBJECT (file_res))
    {
      pr_error_invalid (err, "update: %s: expected a linux.resources object", o->resources);
      goto out;
    }
  if (parse_json (flag_text, "flags", &flag_res, err) < 0)
    goto out;
  yajl_gen gen = yajl_gen_alloc (NULL);
  gen_merged (gen, file_res, flag_res);
  merged = pr_json_gen_finish (gen);
  if (parse_json (merged, "merged resources", &res, err) < 0)
    goto out;
  if (pr_cgroup_apply_resources (st->cgroup_path, res, true, err) < 0)
    goto out;
  ret = save_config (st, res, err);
out:
  if (file_res)
    yajl_tree_free (file_res);
  if (flag_res)
    yajl_tree_free (flag_res);
  if (res)
    yajl_tree_free (res);
  return ret;
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
