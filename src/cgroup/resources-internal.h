/* resources-internal.h - what resources.c shares with the controller
 * files it dispatches to (res_memory_cpu.c, res_io_devices.c): the
 * per-call context, the linux.resources JSON readers, the write/locate
 * helpers and each controller's apply function.  Not part of the cgroup
 * API (that is cgroup.h / cgroup-internal.h). */
#ifndef PROCTOR_CGROUP_RESOURCES_INTERNAL_H
#define PROCTOR_CGROUP_RESOURCES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "cgroup-internal.h"

/* One pr_cgroup_apply_resources call: the host's hierarchies, the
 * container's cgroup path, and whether this is an update. */
struct rctx
{
  struct pr_cgroup_mounts m;
  const char *path;
  bool update;
};

/* JSON readers (resources.c) ---------------------------------------------
 * Each reads obj.key (a JSON null counts as absent); ctx names the
 * linux.resources member in messages.  Return 1 when present, 0 when
 * absent, -1 with EINVAL on a wrong type. */

/* Integers: yajl keeps the literal, so values above INT64_MAX (Go's
 * uint64 "unlimited") are recognised and mapped to -1.  Also EINVAL when
 * out of range. */
int pr_res_get_int (yajl_val obj, const char *key, const char *ctx, int64_t *out, pr_error **err);
int pr_res_get_bool (yajl_val obj, const char *key, const char *ctx, bool *out, pr_error **err);
/* *out points into obj (not copied). */
int pr_res_get_str (yajl_val obj, const char *key, const char *ctx, const char **out, pr_error **err);
int pr_res_get_array (yajl_val obj, const char *key, const char *ctx, yajl_val *out, pr_error **err);

/* Helpers (resources.c) -------------------------------------------------- */

/* Where a controller lives: the v1 hierarchy named v1 (not on unified
 * hosts), else the unified hierarchy when it offers v2 (enabled down the
 * tree on hybrid hosts).  *dir (malloc'd) is NULL when neither exists.
 * Errors: enabling v2 on a hybrid host (pr_cgroup_v2_enable). */
int pr_res_locate (struct rctx *c, const char *v1, const char *v2, char **dir, bool *is_v2, pr_error **err);

/* Always -1: ENOTSUP "cannot apply linux.resources.FIELD to cgroup `PATH`:
 * no CONTROLLER controller on this host" (field as config.json spells it,
 * controller as the kernel names it). */
int pr_res_no_controller (const char *field, const char *controller, const char *path, pr_error **err);

/* Whether dir/file exists (the kernel lacks many optional files). */
bool pr_res_file_exists (const char *dir, const char *file);

/* Writes v in decimal to dir/file.  Errors: as pr_cgroup_write. */
int pr_res_write_i64 (const char *dir, const char *file, int64_t v, pr_error **err);

/* Controllers ------------------------------------------------------------
 * Each applies one linux.resources member o (already checked to be an
 * object where the dispatcher says so) for c; 0 or -1 with err
 * (EINVAL on bad values, ENOTSUP without the controller, write errno). */

/* res_memory_cpu.c */
int pr_res_apply_memory (struct rctx *c, yajl_val o, pr_error **err);
int pr_res_apply_cpu (struct rctx *c, yajl_val o, pr_error **err);
int pr_res_apply_pids (struct rctx *c, yajl_val o, pr_error **err);
/* a is hugepageLimits (checked to be an array here). */
int pr_res_apply_hugetlb (struct rctx *c, yajl_val a, pr_error **err);

/* res_io_devices.c */
int pr_res_apply_blkio (struct rctx *c, yajl_val o, pr_error **err);
int pr_res_apply_network (struct rctx *c, yajl_val o, pr_error **err);
/* o is rdma (checked to be an object here). */
int pr_res_apply_rdma (struct rctx *c, yajl_val o, pr_error **err);
/* a is devices (checked to be an array here); skipped on update. */
int pr_res_apply_devices (struct rctx *c, yajl_val a, pr_error **err);

#endif
