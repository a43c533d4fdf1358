/* resources.c - linux.resources onto cgroup files (see cgroup.h): the
 * dispatcher pr_cgroup_apply_resources, the pure v1->v2 conversions, the
 * JSON readers and write/locate helpers the controller files share
 * (resources-internal.h), and linux.resources.unified.  Each runtime-spec
 * controller is written to the v1 hierarchy carrying it, or to the
 * unified one (converted to cgroup2's interface) when no v1 hierarchy
 * does, which is how a hybrid host gets e.g. hugetlb.  The controllers
 * themselves live in res_memory_cpu.c and res_io_devices.c.
 * Source: runtime-spec config-linux.md "Control groups" and its v1->v2
 * conversions; Documentation/admin-guide/cgroup-v2.rst. */
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
    return pr_error_invalid (err, "memory.swap: a swap limit needs a memory limit on cgroup v2");
  if (limit < 0)
    {
      snprintf (buf, size, "max");
      return 1;
    }
  if (swap < limit)
    return pr_error_invalid (err, "memory.swap (%" PRId64 ") must not be below memory.limit (%" PRId64 ")",
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
int
pr_res_get_int (yajl_val obj, const char *key, const char *ctx, int64_t *out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_NUMBER (v) || v->u.number.r == NULL || strpbrk (v->u.number.r, ".eE"))
    return pr_error_invalid (err, "linux.resources.%s.%s: expected an integer", ctx, key);
  const char *r = v->u.number.r;
  errno = 0;
  if (r[0] == '-')
    {
      long long x = strtoll (r, NULL, 10);
      if (errno)
        return pr_error_invalid (err, "linux.resources.%s.%s: `%s` out of range", ctx, key, r);
      *out = x;
      return 1;
    }
  unsigned long long x = strtoull (r, NULL, 10);
  if (errno)
    return pr_error_invalid (err, "linux.resources.%s.%s: `%s` out of range", ctx, key, r);
  *out = x > INT64_MAX ? -1 : (int64_t) x;
  return 1;
}

int
pr_res_get_bool (yajl_val obj, const char *key, const char *ctx, bool *out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return pr_error_invalid (err, "linux.resources.%s.%s: expected a boolean", ctx, key);
  *out = YAJL_IS_TRUE (v);
  return 1;
}

int
pr_res_get_str (yajl_val obj, const char *key, const char *ctx, const char **out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_STRING (v))
    return pr_error_invalid (err, "linux.resources.%s.%s: expected a string", ctx, key);
  *out = v->u.string;
  return 1;
}

int
pr_res_get_array (yajl_val obj, const char *key, const char *ctx, yajl_val *out, pr_error **err)
{
  yajl_val v = field (obj, key);
  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return pr_error_invalid (err, "linux.resources.%s.%s: expected an array", ctx, key);
  *out = v;
  return 1;
}

/* ------------------------------------------------------------ context */

/* Where controller lives: the v1 hierarchy named v1 (not on unified
 * hosts), else the unified hierarchy when it offers v2 (enabled down the
 * tree on hybrid hosts, where nothing is enabled by default).  *dir is
 * NULL when neither exists.  Errors: enabling v2 on a hybrid host. */
int
pr_res_locate (struct rctx *c, const char *v1, const char *v2, char **dir, bool *is_v2, pr_error **err)
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

int
pr_res_no_controller (const char *field, const char *controller, const char *path, pr_error **err)
{
  return pr_error_set (err, ENOTSUP, "cannot apply linux.resources.%s to cgroup `%s`: no %s controller on this host",
                       field, path, controller);
}

bool
pr_res_file_exists (const char *dir, const char *file)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  return access (p, F_OK) == 0;
}

int
pr_res_write_i64 (const char *dir, const char *file, int64_t v, pr_error **err)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%" PRId64, v);
  return pr_cgroup_write (dir, file, buf, err);
}

/* ------------------------------------------------------------ unified */

static int
apply_unified (struct rctx *c, yajl_val o, pr_error **err)
{
  if (!YAJL_IS_OBJECT (o))
    return pr_error_invalid (err, "linux.resources.unified: expected an object");
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
        return pr_error_invalid (err, "linux.resources.unified: invalid key `%s`", key);
      if (!YAJL_IS_STRING (v))
        return pr_error_invalid (err, "linux.resources.unified.%s: expected a string", key);
      _cleanup_free_ char *ctrl = strndup (key, strchr (key, '.') - key);
      if (ctrl == NULL)
        abort ();
      if (c->m.layout == PR_CGROUP_HYBRID && strcmp (ctrl, "cgroup") != 0)
        {
          /* On hybrid hosts only controllers not bound to v1 exist here. */
          _cleanup_free_ char *cdir = NULL;
          bool v2;
          if (pr_res_locate (c, NULL, ctrl, &cdir, &v2, err) < 0)
            return -1;
          if (cdir == NULL)
            return pr_error_set (err, ENOTSUP, "linux.resources.unified.%s: controller `%s` is not available in the "
                                               "cgroup2 hierarchy of this hybrid host", key, ctrl);
        }
      if (!pr_res_file_exists (dir, key))
        return pr_error_set (err, ENOENT, "linux.resources.unified.%s: no such file in cgroup `%s`", key, c->path);
      if (pr_cgroup_write (dir, key, v->u.string, err) < 0)
        return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ entry */

int
pr_cgroup_apply_resources (const char *path, yajl_val resources, bool update, pr_error **err)
{
  if (resources == NULL || YAJL_IS_NULL (resources))
    return 0;
  if (!YAJL_IS_OBJECT (resources))
    return pr_error_invalid (err, "linux.resources: expected an object");
  struct rctx c = { .path = path, .update = update };
  if (pr_cgroup_mounts_load (&c.m, err) < 0)
    return -1;
  int ret = 0;
  yajl_val v;
  /* update leaves devices alone, as runc update does: engines resend
   * their whole resources object, and replaying the device list on a live
   * container would drop access granted since (e.g. podman --device). */
  if (ret == 0 && !update && (v = field (resources, "devices")))
    ret = pr_res_apply_devices (&c, v, err);
  if (ret == 0 && (v = field (resources, "memory")))
    ret = YAJL_IS_OBJECT (v) ? pr_res_apply_memory (&c, v, err) : pr_error_invalid (err, "linux.resources.memory: "
                                                                                           "expected an object");
  if (ret == 0 && (v = field (resources, "cpu")))
    ret = YAJL_IS_OBJECT (v) ? pr_res_apply_cpu (&c, v, err) : pr_error_invalid (err, "linux.resources.cpu: "
                                                                                        "expected an object");
  if (ret == 0 && (v = field (resources, "pids")))
    ret = YAJL_IS_OBJECT (v) ? pr_res_apply_pids (&c, v, err) : pr_error_invalid (err, "linux.resources.pids: "
                                                                                         "expected an object");
  if (ret == 0 && (v = field (resources, "blockIO")))
    ret = YAJL_IS_OBJECT (v) ? pr_res_apply_blkio (&c, v, err) : pr_error_invalid (err, "linux.resources.blockIO: "
                                                                                          "expected an object");
  if (ret == 0 && (v = field (resources, "hugepageLimits")))
    ret = pr_res_apply_hugetlb (&c, v, err);
  if (ret == 0 && (v = field (resources, "network")))
    ret = YAJL_IS_OBJECT (v) ? pr_res_apply_network (&c, v, err)
                             : pr_error_invalid (err, "linux.resources.network: expected an object");
  if (ret == 0 && (v = field (resources, "rdma")))
    ret = pr_res_apply_rdma (&c, v, err);
  if (ret == 0 && (v = field (resources, "unified")))
    ret = apply_unified (&c, v, err);
  pr_cgroup_mounts_clear (&c.m);
  return ret;
}
