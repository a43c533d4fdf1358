/* cgroup-internal.h - what cgroup.c, ops.c, v1.c, v2.c, resources.c and
 * stats.c share: the table of mounted cgroup hierarchies parsed from mountinfo, the
 * pure path computation (unit-testable without /proc), per-controller
 * directory lookup, and the v1/v2 specific primitives.
 *
 * A container cgroup "path" here is always the absolute, cleaned path that
 * pr_cgroup_path() returns (e.g. "/proctor-test" or "/system.slice/x.scope");
 * it is the same in every hierarchy.  Its directory in one hierarchy is the
 * hierarchy's mount point joined with path (minus the mount's root when the
 * mount is a subtree, e.g. inside a cgroup namespace or a bind mount).
 * Source: cgroups(7) "/proc/[pid]/cgroup", proc(5) "/proc/[pid]/mountinfo". */
#ifndef PROCTOR_CGROUP_INTERNAL_H
#define PROCTOR_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

/* One mounted hierarchy. */
struct pr_cgroup_hier
{
  char *mountpoint;    /* e.g. "/sys/fs/cgroup/memory", unescaped */
  char *root;          /* mountinfo field 4: the hierarchy path at the mount ("/" usually) */
  char **controllers;  /* v1: {"cpu","cpuacct"} or {"name=systemd"}; v2: empty vector */
  bool is_v2;
};

/* Every hierarchy that matters, in mountinfo order, one entry per
 * hierarchy (bind mounts of the same hierarchy are dropped). */
struct pr_cgroup_mounts
{
  enum pr_cgroup_layout layout;
  struct pr_cgroup_hier *h;
  size_t n;
};

/* Parses mountinfo text (pure).  Layout rules: a cgroup2 mount at
 * /sys/fs/cgroup, or cgroup2 with no v1 hierarchy at all => UNIFIED (v1
 * mounts are then ignored); v1 hierarchies plus a cgroup2 mount => HYBRID;
 * v1 only => LEGACY.  Errors: no cgroup/cgroup2 mount (ENOENT), a line
 * that cannot be parsed (EINVAL). */
int pr_cgroup_mounts_parse (const char *mountinfo, struct pr_cgroup_mounts *out, pr_error **err);

/* Reads /proc/self/mountinfo and parses it.  Errors: read errno, as above. */
int pr_cgroup_mounts_load (struct pr_cgroup_mounts *out, pr_error **err);

/* Frees the table's contents (the struct itself is the caller's). */
void pr_cgroup_mounts_clear (struct pr_cgroup_mounts *m);

/* The v1 hierarchy carrying controller (exact match against the mount's
 * controller list, e.g. "memory", "cpuacct", "name=systemd"); on UNIFIED
 * layouts any controller name maps to the unified hierarchy.  On HYBRID,
 * a controller not bound to v1 maps to the unified hierarchy when
 * controller is "" or "unified".  NULL when none. */
const struct pr_cgroup_hier *pr_cgroup_mounts_find (const struct pr_cgroup_mounts *m, const char *controller);

/* The unified (cgroup2) hierarchy, or NULL. */
const struct pr_cgroup_hier *pr_cgroup_mounts_unified (const struct pr_cgroup_mounts *m);

/* Directory of container cgroup path in hierarchy h (malloc'd). */
char *pr_cgroup_hier_dir (const struct pr_cgroup_hier *h, const char *path);

/* For resources.c: the absolute directory of the container cgroup path
 * for controller (as pr_cgroup_mounts_find), e.g. ("/c1", "memory") ->
 * "/sys/fs/cgroup/memory/c1" on v1/hybrid, "/sys/fs/cgroup/c1" on unified.
 * The directory is not checked for existence.  Errors: no hierarchy
 * carries the controller (ENOENT), mountinfo errors. */
int pr_cgroup_controller_dir (const char *path, const char *controller, char **out, pr_error **err);

/* Lexically cleans an absolute path (malloc'd): no "//", ".", trailing
 * "/"; ".." pops a component but never climbs above "/" (so a cgroupsPath
 * cannot leave the hierarchy's mount).  Shared by cgroup.c (path
 * computation) and ops.c (path checks).  Never fails. */
char *pr_cgroup_clean_path (const char *in);

/* Pure part of pr_cgroup_path: own is the caller's own cgroup (as in
 * /proc/self/cgroup, absolute).  Rules:
 *  - systemd=false: absolute cgroups_path is taken as is, relative is
 *    joined under own, empty becomes own + "/" + id.  The result is cleaned
 *    lexically ("//", ".", ".." never above "/").
 *  - systemd=true: "slice:prefix:name" -> expanded slice ("a-b.slice" ->
 *    "/a.slice/a-b.slice"; an empty slice means "system.slice", "-.slice"
 *    is the root) + "/prefix-name.scope" ("name.scope" when
 *    prefix is empty; a name ending in ".slice" is itself a slice and is
 *    expanded instead).  Empty cgroups_path -> "system.slice:proctor:ID".
 * Errors (EINVAL): not three ':'-separated fields, a slice not ending in
 * ".slice" or with "/", "--", a leading/trailing '-', an empty name, a
 * result that is the root cgroup "/", empty path with empty id.
 * Source: runtime-spec config-linux.md "cgroupsPath"; systemd.slice(5). */
int pr_cgroup_path_compute (const char *cgroups_path, const char *id, bool systemd, const char *own, char **out,
                            pr_error **err);

/* Pure: the caller's own cgroup from /proc/self/cgroup text: the path of
 * the first line ("9:name=systemd:/x" -> "/x"; on unified hosts the only
 * line is "0::/x").  Errors: no parsable line (EINVAL). */
int pr_cgroup_own_parse (const char *proc_cgroup, char **out, pr_error **err);

/* Writes value to dir/file without O_CREAT (so a missing cgroup never
 * turns into a regular file on the tmpfs above it).  For resources.c too.
 * Errors: open/write errno naming dir/file. */
int pr_cgroup_write (const char *dir, const char *file, const char *value, pr_error **err);

/* Reads dir/file into a malloc'd NUL-terminated string.  Errors: errno. */
int pr_cgroup_read (const char *dir, const char *file, char **out, pr_error **err);

/* Writes pid into dir/cgroup.procs.  Errors: open/write errno. */
int pr_cgroup_write_procs (const char *dir, pid_t pid, pr_error **err);

/* Appends every pid of dir/cgroup.procs and of every descendant cgroup to
 * *pids (realloc'd, *n updated).  A missing dir is ENOENT. */
int pr_cgroup_collect_pids (const char *dir, pid_t **pids, size_t *n, pr_error **err);

/* Polling helper: monotonic milliseconds. */
long long pr_cgroup_now_ms (void);

/* v1.c ------------------------------------------------------------------ */

/* mkdir -p dir in hierarchy h; on a cpuset hierarchy every level from the
 * mount down to dir gets cpuset.cpus / cpuset.mems copied from its parent
 * when empty (a task cannot join a cpuset with no cpus or mems).
 * *created is set when the leaf did not exist before.  Errors: mkdir or
 * cpuset file errno naming the path. */
int pr_cgroup_v1_prepare (const struct pr_cgroup_hier *h, const char *dir, bool *created, pr_error **err);

/* Writes FROZEN/THAWED to dir/freezer.state and polls until it reads back
 * (5 s bound; a stuck freeze is reverted to THAWED).  Errors: write errno,
 * ETIMEDOUT. */
int pr_cgroup_v1_freeze (const char *dir, bool freeze, pr_error **err);

/* dir/freezer.state == "FROZEN".  -1 with errno on read failure. */
int pr_cgroup_v1_is_frozen (const char *dir, bool *frozen);

/* v2.c ------------------------------------------------------------------ */

/* mkdir -p dir in the unified hierarchy; when enable_controllers, every
 * ancestor from the mount down to dir's parent gets the controllers it
 * offers (cgroup.controllers) enabled in cgroup.subtree_control, best
 * effort, so resource files appear in dir.  Errors: mkdir errno. */
int pr_cgroup_v2_prepare (const struct pr_cgroup_hier *h, const char *dir, bool enable_controllers, bool *created,
                          pr_error **err);

/* Writes "1" to dir/cgroup.kill (kernel 5.14+).  Returns 1 when done, 0
 * when the file does not exist (old kernel: caller falls back), -1 on
 * another error. */
int pr_cgroup_v2_kill (const char *dir, pr_error **err);

/* Writes 1/0 to dir/cgroup.freeze and polls cgroup.events until "frozen"
 * matches (5 s bound).  Errors: ENOTSUP without cgroup.freeze, write errno,
 * ETIMEDOUT. */
int pr_cgroup_v2_freeze (const char *dir, bool freeze, pr_error **err);

/* "frozen 1" in dir/cgroup.events.  -1 with errno on read failure. */
int pr_cgroup_v2_is_frozen (const char *dir, bool *frozen);

/* resources.c: pure conversions (unit-tested) ---------------------------- */

/* cpu.shares (v1, 2..262144) to cpu.weight (v2, 1..10000), the mapping the
 * OCI runtimes and engines agree on: 1 + ((shares - 2) * 9999) / 262142.
 * shares 0 means unset and maps to 0; out-of-range shares are clamped.
 * Source: runtime-spec config-linux.md; kubernetes KEP-2254. */
uint64_t pr_cgroup_shares_to_weight (uint64_t shares);

/* blkio.weight (v1, 10..1000) to io.weight (v2, 1..10000):
 * 1 + (weight - 10) * 9999 / 990; 0 stays 0 (unset). */
uint64_t pr_cgroup_blkio_to_io_weight (uint64_t weight);

/* memory.swap.max from the runtime-spec's v1-style swap (memory + swap)
 * and memory limit.  Writes "max" or a byte count to buf (size >= 32).
 * Returns 1 when a value must be written, 0 when swap is unset (0), -1
 * with err on an impossible combination: swap without a memory limit
 * (EINVAL), swap < limit (EINVAL). */
int pr_cgroup_swap_v2 (int64_t swap, bool has_limit, int64_t limit, char *buf, size_t size, pr_error **err);

/* "2MB" / "1GB" / "64KB" hugetlb page-size names from a size in bytes, as
 * the kernel's hugetlb.<size>.* files spell them.  buf size >= 16. */
void pr_cgroup_hugepage_name (uint64_t bytes, char *buf, size_t size);

/* v2_enabled.c ---------------------------------------------------------- */

/* The host-wide record of the cgroup2 controllers proctor turned on
 * (v2_enabled.c): one line LEVEL\tCONTROLLER\tLEAF per container leaf
 * that needed LEVEL's controller, under an flock of the file. */
#define PR_CGROUP_V2_RECORD_DIR "/run/proctor-cgroup"
#define PR_CGROUP_V2_RECORD PR_CGROUP_V2_RECORD_DIR "/subtree-enabled"

/* Enables controller in cgroup.subtree_control of every level of the
 * unified hierarchy h from its mount down to dir's parent (hybrid hosts
 * do not enable anything by default), and records, under the record's
 * flock, each level where proctor's write turned it on (or an earlier
 * write of proctor's had) as needed by dir.  A level where it was already
 * on without a record is someone else's and stays unrecorded.  Errors:
 * the write errno naming the level (e.g. EBUSY/ENOTSUP when a level holds
 * processes); open/flock/write errnos of the record. */
int pr_cgroup_v2_enable (const struct pr_cgroup_hier *h, const char *dir, const char *controller, pr_error **err);

/* After the container leaf (an absolute unified-hierarchy dir) is gone:
 * drops its record lines and writes "-controller" into every level whose
 * controller no container of proctor's needs any more, deepest level
 * first.  Best effort, never fails: a refused write (EBUSY: a cgroup below
 * enabled it for its own children) leaves the controller on (debug log);
 * an unreadable record is a warning. */
void pr_cgroup_v2_release (const char *leaf);

/* Pure core of the record, over its lines (NULL = already dropped).
 * pr_cgroup_v2_record_has: whether a line for (level, controller) exists.
 * pr_cgroup_v2_record_drop: sets every line of leaf to NULL (freeing it)
 * and returns in *freed (malloc'd array of malloc'd "LEVEL\tCONTROLLER"
 * strings) the pairs no remaining line needs, deepest level first; the
 * return value is their count. */
bool pr_cgroup_v2_record_has (char **lines, size_t n, const char *level, const char *controller);
size_t pr_cgroup_v2_record_drop (char **lines, size_t n, const char *leaf, char ***freed);

/* devices_bpf.c ---------------------------------------------------------- */

struct pr_dev_rule
{
  bool allow;
  char type;     /* 'a', 'c' or 'b' */
  int64_t major; /* -1 = any */
  int64_t minor; /* -1 = any */
  char access[4]; /* subset of "rwm" */
};

/* Builds and attaches (BPF_F_ALLOW_MULTI) a BPF_PROG_TYPE_CGROUP_DEVICE
 * program to the cgroup2 directory dir implementing rules (the last
 * matching rule wins, default deny unless a rule allows all), replacing
 * a program proctor attached before (pinned nowhere: the old one is found
 * with BPF_PROG_QUERY and detached after the new one is in).  Errors:
 * open errno, bpf(2) errno with the verifier log's first line.
 * Source: Documentation/bpf/prog_cgroup_device (include/uapi/linux/bpf.h
 * struct bpf_cgroup_dev_ctx). */
int pr_cgroup_devices_bpf (const char *dir, const struct pr_dev_rule *rules, size_t n, pr_error **err);

/* Whether a device access (type 'c'/'b', major, minor, one access letter)
 * is allowed by rules, with the same semantics the BPF program has (pure;
 * used by unit tests and to keep the two in agreement). */
bool pr_cgroup_devices_allowed (const struct pr_dev_rule *rules, size_t n, char type, int64_t major, int64_t minor,
                                char access);

#endif
