/* res_io_devices.c - the I/O and device controllers of linux.resources
 * (see resources.c for the dispatcher): blockIO (v1 blkio.* / v2 io.*
 * with the weight conversion), network (net_cls/net_prio), rdma, and the
 * devices allow-list (v1 devices.allow/deny, v2 via devices_bpf.c) with
 * its default rules.  Source: runtime-spec config-linux.md "Control
 * groups" and "Default Devices"; Documentation/admin-guide/cgroup-v1/
 * {blkio-controller,devices,net_cls,net_prio,rdma}.rst, cgroup-v2.rst. */
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

/* ------------------------------------------------------------ blkio / io */

static int
dev_entry (yajl_val e, const char *ctx, int64_t *maj, int64_t *min, pr_error **err)
{
  if (!YAJL_IS_OBJECT (e))
    return pr_error_invalid (err, "linux.resources.blockIO.%s: expected objects", ctx);
  if (pr_res_get_int (e, "major", ctx, maj, err) != 1 || pr_res_get_int (e, "minor", ctx, min, err) != 1)
    return pr_error_invalid (err, "linux.resources.blockIO.%s: major and minor are required", ctx);
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

/* Writes every throttle*Device entry of blockIO object o: to the per-rule
 * blkio.throttle.* file on v1 (a rate of 0 or below written as 0, which
 * clears the rule) or as "MAJ:MIN KEY=RATE" to io.max on v2 (0 or below
 * as KEY=max, no limit).  Returns 0, or -1 with err set when an entry is
 * malformed (dev_entry, pr_res_get_int) or the write fails
 * (pr_cgroup_write).  Source: Documentation/admin-guide/cgroup-v1/blkio-
 * controller.rst and cgroup-v2.rst "io.max". */
static int
write_throttles (const char *dir, yajl_val o, bool v2, pr_error **err)
{
  for (size_t t = 0; t < PR_ARRAY_SIZE (throttles); t++)
    {
      yajl_val a = NULL;
      int r = pr_res_get_array (o, throttles[t].key, "blockIO", &a, err);
      if (r < 0)
        return -1;
      for (size_t i = 0; r && i < a->u.array.len; i++)
        {
          int64_t maj, min, rate = 0;
          if (dev_entry (a->u.array.values[i], throttles[t].key, &maj, &min, err) < 0
              || pr_res_get_int (a->u.array.values[i], "rate", throttles[t].key, &rate, err) < 0)
            return -1;
          char buf[96];
          if (!v2)
            snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %" PRId64, maj, min, rate < 0 ? 0 : rate);
          else if (rate <= 0)
            snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %s=max", maj, min, throttles[t].v2key);
          else
            snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %s=%" PRId64, maj, min, throttles[t].v2key, rate);
          if (pr_cgroup_write (dir, v2 ? "io.max" : throttles[t].v1file, buf, err) < 0)
            return -1;
        }
    }
  return 0;
}

static int
blkio_v1 (const char *dir, yajl_val o, pr_error **err)
{
  int64_t w, lw;
  int r;
  /* BFQ (the only proportional scheduler left) names its files
   * blkio.bfq.*; CFQ kernels had blkio.weight. */
  const char *wfile = pr_res_file_exists (dir, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight";
  const char *wdfile
      = pr_res_file_exists (dir, "blkio.weight_device") ? "blkio.weight_device" : "blkio.bfq.weight_device";
  if ((r = pr_res_get_int (o, "weight", "blockIO", &w, err)) < 0)
    return -1;
  if (r && w != 0)
    {
      if (!pr_res_file_exists (dir, wfile))
        return pr_error_set (err, ENOTSUP, "linux.resources.blockIO.weight: no blkio weight file (no CFQ/BFQ "
                                           "scheduler) on this host");
      if (pr_res_write_i64 (dir, wfile, w, err) < 0)
        return -1;
    }
  if ((r = pr_res_get_int (o, "leafWeight", "blockIO", &lw, err)) < 0)
    return -1;
  if (r && lw != 0)
    {
      if (!pr_res_file_exists (dir, "blkio.leaf_weight"))
        return pr_error_set (err, ENOTSUP, "linux.resources.blockIO.leafWeight: no blkio.leaf_weight on this host");
      if (pr_res_write_i64 (dir, "blkio.leaf_weight", lw, err) < 0)
        return -1;
    }
  yajl_val a = NULL;
  if ((r = pr_res_get_array (o, "weightDevice", "blockIO", &a, err)) < 0)
    return -1;
  for (size_t i = 0; r && i < a->u.array.len; i++)
    {
      int64_t maj, min, dw = 0, dlw = 0;
      if (dev_entry (a->u.array.values[i], "weightDevice", &maj, &min, err) < 0
          || pr_res_get_int (a->u.array.values[i], "weight", "weightDevice", &dw, err) < 0
          || pr_res_get_int (a->u.array.values[i], "leafWeight", "weightDevice", &dlw, err) < 0)
        return -1;
      char buf[64];
      if (dw)
        {
          if (!pr_res_file_exists (dir, wdfile))
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
  return write_throttles (dir, o, false, err);
}

static int
blkio_v2 (const char *dir, yajl_val o, pr_error **err)
{
  int64_t w;
  int r;
  /* io.bfq.weight takes the v1 range as is; io.weight wants 1..10000. */
  bool bfq = pr_res_file_exists (dir, "io.bfq.weight");
  if ((r = pr_res_get_int (o, "weight", "blockIO", &w, err)) < 0)
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
  if ((r = pr_res_get_array (o, "weightDevice", "blockIO", &a, err)) < 0)
    return -1;
  for (size_t i = 0; r && i < a->u.array.len; i++)
    {
      int64_t maj, min, dw = 0;
      if (dev_entry (a->u.array.values[i], "weightDevice", &maj, &min, err) < 0
          || pr_res_get_int (a->u.array.values[i], "weight", "weightDevice", &dw, err) < 0)
        return -1;
      if (dw == 0)
        continue;
      char buf[64];
      snprintf (buf, sizeof buf, "%" PRId64 ":%" PRId64 " %" PRIu64, maj, min,
                bfq ? (uint64_t) dw : pr_cgroup_blkio_to_io_weight ((uint64_t) dw));
      if (pr_cgroup_write (dir, bfq ? "io.bfq.weight" : "io.weight", buf, err) < 0)
        return -1;
    }
  return write_throttles (dir, o, true, err);
}

int
pr_res_apply_blkio (struct rctx *c, yajl_val o, pr_error **err)
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
  if (pr_res_locate (c, "blkio", "io", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return pr_res_no_controller ("blockIO", "blkio", c->path, err);
  return v2 ? blkio_v2 (dir, o, err) : blkio_v1 (dir, o, err);
}

/* ------------------------------------------------------------ network */

int
pr_res_apply_network (struct rctx *c, yajl_val o, pr_error **err)
{
  int64_t classid = 0;
  int r;
  yajl_val prios = NULL;
  if ((r = pr_res_get_int (o, "classID", "network", &classid, err)) < 0)
    return -1;
  if (pr_res_get_array (o, "priorities", "network", &prios, err) < 0)
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
      if (pr_res_locate (c, "net_cls", NULL, &dir, &v2, err) < 0)
        return -1;
      if (dir == NULL)
        return pr_res_no_controller ("network.classID", "net_cls", c->path, err);
      if (pr_res_write_i64 (dir, "net_cls.classid", classid, err) < 0)
        return -1;
    }
  if (prios && prios->u.array.len)
    {
      _cleanup_free_ char *dir = NULL;
      bool v2;
      if (pr_res_locate (c, "net_prio", NULL, &dir, &v2, err) < 0)
        return -1;
      if (dir == NULL)
        return pr_res_no_controller ("network.priorities", "net_prio", c->path, err);
      for (size_t i = 0; i < prios->u.array.len; i++)
        {
          const char *name = NULL;
          int64_t prio = 0;
          if (pr_res_get_str (prios->u.array.values[i], "name", "network.priorities", &name, err) != 1
              || pr_res_get_int (prios->u.array.values[i], "priority", "network.priorities", &prio, err) != 1)
            return pr_error_invalid (err, "linux.resources.network.priorities[%zu]: name and priority are "
                                                  "required", i);
          _cleanup_free_ char *line = xasprintf ("%s %" PRId64, name, prio);
          if (pr_cgroup_write (dir, "net_prio.ifpriomap", line, err) < 0)
            return -1;
        }
    }
  return 0;
}

/* ------------------------------------------------------------ rdma */

int
pr_res_apply_rdma (struct rctx *c, yajl_val o, pr_error **err)
{
  if (!YAJL_IS_OBJECT (o))
    return pr_error_invalid (err, "linux.resources.rdma: expected an object");
  if (o->u.object.len == 0)
    return 0;
  _cleanup_free_ char *dir = NULL;
  bool v2;
  if (pr_res_locate (c, "rdma", "rdma", &dir, &v2, err) < 0)
    return -1;
  if (dir == NULL)
    return pr_res_no_controller ("rdma", "rdma", c->path, err);
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *devname = o->u.object.keys[i];
      yajl_val e = o->u.object.values[i];
      int64_t handles = 0, objects = 0;
      int rh, ro;
      if ((rh = pr_res_get_int (e, "hcaHandles", "rdma", &handles, err)) < 0
          || (ro = pr_res_get_int (e, "hcaObjects", "rdma", &objects, err)) < 0)
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

/* ------------------------------------------------------------ devices */

static int
parse_dev_rule (yajl_val e, struct pr_dev_rule *r, pr_error **err)
{
  bool allow = false;
  const char *type = "a", *access = "rwm";
  int64_t maj = -1, min = -1;
  if (!YAJL_IS_OBJECT (e))
    return pr_error_invalid (err, "linux.resources.devices: expected objects");
  if (pr_res_get_bool (e, "allow", "devices", &allow, err) != 1)
    return pr_error_invalid (err, "linux.resources.devices: `allow` is required");
  if (pr_res_get_str (e, "type", "devices", &type, err) < 0 || pr_res_get_int (e, "major", "devices", &maj, err) < 0
      || pr_res_get_int (e, "minor", "devices", &min, err) < 0
      || pr_res_get_str (e, "access", "devices", &access, err) < 0)
    return -1;
  if (strlen (type) != 1 || !strchr ("acb", type[0]))
    return pr_error_invalid (err, "linux.resources.devices: invalid type `%s`", type);
  if (access[0] == '\0')
    access = "rwm";
  if (strlen (access) > 3 || access[strspn (access, "rwm")] != '\0')
    return pr_error_invalid (err, "linux.resources.devices: invalid access `%s`", access);
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

int
pr_res_apply_devices (struct rctx *c, yajl_val a, pr_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return pr_error_invalid (err, "linux.resources.devices: expected an array");
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
