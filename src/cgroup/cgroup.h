/* cgroup.h - placing containers in cgroups on v1, hybrid and v2 hosts.
 *
 * Layout is detected from /proc/self/mountinfo: "unified" (cgroup2 at
 * /sys/fs/cgroup), "hybrid" (v1 controllers plus a cgroup2 mount, usually
 * /sys/fs/cgroup/unified) or "legacy" (v1 only).  A container's cgroup is
 * one relative path created in every mounted hierarchy (each v1 controller
 * mount, the name=systemd one, and the unified one on hybrid hosts).
 * Source: runtime-spec config-linux.md "Control groups"; cgroups(7). */
#ifndef PROCTOR_CGROUP_H
#define PROCTOR_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../base/error.h"
#include "../config/config.h"

enum pr_cgroup_layout { PR_CGROUP_LEGACY, PR_CGROUP_HYBRID, PR_CGROUP_UNIFIED };

/* Turns on, for the rest of this process, the reuse of the first read of
 * /proc/self/mountinfo by every later cgroup lookup of the same process
 * (forked children read their own).  For a runtime call, whose cgroup
 * mounts do not change while it runs; a long-lived caller (the library)
 * leaves it off and sees every change of the mount table. */
void pr_cgroup_mounts_memo (void);

/* Detects the host layout.  Errors: no cgroup filesystem mounted (ENOENT). */
int pr_cgroup_detect (enum pr_cgroup_layout *out, pr_error **err);

/* Computes the container's cgroup path from linux.cgroupsPath: absolute
 * paths are used as is; relative ones are placed under the runtime's own
 * cgroup; when empty, "/proctor/ID" style default "/ID" under the caller's
 * cgroup.  With systemd=true the "slice:prefix:name" form is accepted and
 * mapped to "/slice/prefix-name.scope".  Returns a malloc'd path starting
 * with "/".  Errors: EINVAL for a malformed systemd path; with systemd=true
 * on a host where systemd is not running, pr_cgroup_systemd_check's
 * ENOTSUP (the cgroup is then never created). */
int pr_cgroup_path (const char *cgroups_path, const char *id, bool systemd, char **out, pr_error **err);

/* Creates the cgroup in every hierarchy and moves pid into it (pid 0 =
 * only create).  Errors: mkdir/write errno naming the hierarchy file. */
int pr_cgroup_create (const char *path, pid_t pid, pr_error **err);

/* The directory of cgroup path in the cgroup2 hierarchy (the unified
 * mount of a hybrid host), malloc'd into *out.  Errors: ENOENT when no
 * cgroup2 hierarchy is mounted; mountinfo read errors. */
int pr_cgroup_unified_dir (const char *path, char **out, pr_error **err);

/* The path of the sibling PATH-NAME of cgroup path (trailing slashes of
 * path dropped first), malloc'd: where the runtime keeps cgroups of a
 * container's that must not be its children (an agent that mounts cgroup2
 * in a cgroup namespace of its own reaches children only). */
char *pr_cgroup_sibling_path (const char *path, const char *name);

/* Where controller is on a cgroup v1 hierarchy (v1 and hybrid hosts):
 * creates cgroup path in that one hierarchy (EEXIST is fine) and moves pid
 * into it, leaving pid's cgroups in every other hierarchy as they are;
 * returns 1.  Returns 0, doing nothing, where controller is on the cgroup2
 * hierarchy or nowhere (one cgroup per process there: no way to move a
 * single controller).  Errors: mountinfo read errors, mkdir and
 * cgroup.procs write errno naming the directory.
 * Source: Documentation/admin-guide/cgroup-v1/cgroups.rst (each hierarchy
 * places a task on its own). */
int pr_cgroup_enter_v1_controller (const char *path, const char *controller, pid_t pid, pr_error **err);

/* Moves pid into an existing cgroup in every hierarchy (used by exec). */
int pr_cgroup_enter (const char *path, pid_t pid, pr_error **err);

/* exec --cgroup: moves pid into sub-cgroups of the container's cgroup.
 * specs is a NULL-terminated list of "SUB" (every hierarchy) or
 * "CTRL[,CTRL]:SUB" (the hierarchies carrying one of those controllers;
 * "unified" names the cgroup2 one); hierarchies no spec names get the
 * container's cgroup itself.  SUB is relative, without "..".  Errors:
 * EINVAL for a bad SUB, ENOENT when a named sub-cgroup does not exist
 * (it is never created: runc exec --cgroup semantics), write errno. */
int pr_cgroup_enter_sub (const char *path, char *const *specs, pid_t pid, pr_error **err);

/* Sends sig to every process in the cgroup (the pids hierarchy, else the
 * unified one, else any).  Missing cgroup is not an error. */
int pr_cgroup_kill (const char *path, int sig, pr_error **err);

/* Lists pids in the cgroup (malloc'd array).  Errors: read errno. */
int pr_cgroup_pids (const char *path, pid_t **pids_out, size_t *n_out, pr_error **err);

/* Removes the cgroup from every hierarchy, killing anything left with
 * SIGKILL and retrying rmdir while it is EBUSY (bounded: 5 s).  Missing
 * directories are fine.  Errors: rmdir errno naming the directory. */
int pr_cgroup_destroy (const char *path, pr_error **err);

/* Kills every process of the cgroup2 directory dir (a host path, e.g. a
 * cgroup made in the unified hierarchy only) and of the cgroups nested
 * below it (cgroup.kill, Linux 5.14; else SIGKILL to each pid listed),
 * then removes dir and those cgroups, deepest first; retried every 10 ms
 * while a dying task keeps a cgroup busy, for at most 5 s.  No errors: a
 * cgroup still busy then stays (best effort, for a caller that has
 * nobody to report to).  Source: cgroups(7), cgroup-v2.rst "cgroup.kill". */
void pr_cgroup_v2_kill_tree (const char *dir);

/* Freezer: pause/resume (v1 freezer.state, v2 cgroup.freeze). frozen_out:
 * current state. Errors: no freezer hierarchy (ENOTSUP), write errno. */
int pr_cgroup_freeze (const char *path, bool freeze, pr_error **err);
int pr_cgroup_is_frozen (const char *path, bool *frozen_out);

/* Refuses a cgroup path (absolute, as for pr_cgroup_create) that is frozen
 * or being frozen, or below one that is, in the v1 freezer or cgroup2
 * (cgroup.freeze; on hybrid hosts both are checked): a process placed there
 * stops at once, and create would wait on it forever (runc refuses too).
 * Called before anything is created, so a refusal leaves nothing and never
 * touches a cgroup someone else made.  Returns 0, or -1 with EBUSY naming
 * the frozen directory, or the errors of reading the cgroup mounts.
 * Missing directories are not frozen. */
int pr_cgroup_check_not_frozen (const char *path, pr_error **err);

/* Applies linux.resources (the raw runtime-spec object, may be NULL) to the
 * container's cgroup on whatever layout the host has, converting values
 * between v1 and v2 as the runtime-spec and engines expect.  With update,
 * only the keys present are changed (runc update).  Errors: a write errno
 * naming the file and value; EINVAL for a malformed value; ENOTSUP for a
 * resource the host has no controller for when a limit was asked for. */
int pr_cgroup_apply_resources (const char *path, yajl_val resources, bool update, pr_error **err);

/* Writes the container's statistics as runc's types.Stats JSON object
 * ({"cpu":{"usage":..,"throttling":..},"memory":{"usage":..,"swap":..,
 * "kernel":..,"kernelTCP":..,"raw":..},"pids":..,"blkio":..,"hugetlb":..})
 * to *json_out (malloc'd), from whichever hierarchy carries each
 * controller.  CPU times are nanoseconds, memory bytes.  Files a kernel
 * lacks are reported as 0 or left out.  Errors: the cgroup does not exist
 * in the memory/pids hierarchy (ENOENT), mountinfo errors.
 * Source: runc types/events.go (the shape containerd and podman read). */
int pr_cgroup_stats_json (const char *path, char **json_out, pr_error **err);

/* The number of OOM kills seen in the cgroup so far (v1 memory.oom_control
 * "oom_kill", v2 memory.events "oom_kill"), for `events` to report OOM
 * events.  Errors: read errno (ENOENT when the cgroup is gone). */
int pr_cgroup_oom_kills (const char *path, uint64_t *out, pr_error **err);

/* The systemd cgroup driver's precondition: systemd is PID 1's manager
 * (sd_booted(3): /run/systemd/system exists) and this build has the driver.
 * pr_cgroup_path() calls it when systemd=true, before anything is created.
 * Errors: ENOTSUP "systemd cgroup driver requested but systemd is not
 * running (no /run/systemd/system)"; ENOTSUP "... built without systemd
 * support" when configured without libsystemd (never a silent fallback to
 * cgroupfs). */
int pr_cgroup_systemd_check (pr_error **err);

/* True when name is a systemd slice unit name: a non-empty stem and the
 * ".slice" suffix (systemd.slice(5)).  "-.slice", the root, counts. */
bool pr_cgroup_is_slice_name (const char *name);

/* systemd.c: the systemd cgroup driver over D-Bus (sd-bus). ----------------
 * path is what pr_cgroup_path() computed with systemd=true, e.g.
 * "/system.slice/proctor-t1.scope": its last component is the unit, the one
 * before it the slice ("-.slice" at the root). */

/* Creates the container's cgroup as a transient unit: on the system bus
 * (systemd's private socket /run/systemd/private when there is no bus
 * daemon), StartTransientUnit(unit, "replace", [Description,
 * DefaultDependencies=false, Memory/CPU/TasksAccounting=true and, for a
 * scope, Slice=slice, PIDs=[pid], Delegate=true], []), then waits (10 s)
 * for the job's JobRemoved signal with result "done", and checks that the
 * unit's ControlGroup is path, so cgroupfs finds it.  pid must be alive (a
 * scope cannot start empty); it is not put in hierarchies systemd does not
 * manage (pr_cgroup_create does that).  A unit that started but failed a
 * later step is stopped again.  Errors: ENOTSUP without systemd support;
 * EEXIST when the unit exists (UnitExists); bus errno with systemd's message
 * for a refused call; ETIMEDOUT when the job does not finish; EIO naming the
 * job result ("failed", "dependency", ...); EXDEV when systemd placed the
 * unit elsewhere.  Source: org.freedesktop.systemd1(5); systemd.scope(5). */
int pr_cgroup_systemd_start (const char *path, pid_t pid, pr_error **err);

/* Stops the unit of path (StopUnit(unit, "replace"), waiting 10 s for the
 * job; systemd kills what is still in it).  A unit that does not exist
 * (NoSuchUnit: empty scopes are garbage-collected) is fine, and so is a
 * build without systemd support (it never started one).  Leftover cgroup
 * directories are pr_cgroup_destroy's.  Errors: the bus connection errno,
 * bus errno with systemd's message, ETIMEDOUT, EIO naming the job result.
 * Source: org.freedesktop.systemd1(5) Manager.StopUnit. */
int pr_cgroup_systemd_stop (const char *path, pr_error **err);

/* 0 when built with the driver, else ENOTSUP "... built without systemd
 * support". */
int pr_cgroup_systemd_supported (pr_error **err);

#endif
