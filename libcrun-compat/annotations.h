/* annotations.h - crun's run.oci.* annotations (crun(1) "Extensions to
 * OCI"): the ones that change how a container is created are either
 * implemented by rewriting the parsed config before create validates it,
 * or refused, so a container never silently runs without a behaviour its
 * engine asked crun for. */
#ifndef PROCTOR_CRUN_ANNOTATIONS_H
#define PROCTOR_CRUN_ANNOTATIONS_H

#include "../src/base/error.h"
#include "../src/config/config.h"

/* Applies the run.oci.* annotations of cfg to cfg itself; called by create
 * right after config.json is parsed, before it is validated, in the
 * runtime process (whose supplementary groups are the "original" ones).
 *
 * Implemented (crun semantics, rewritten as standard config):
 *   run.oci.keep_original_groups (present)  process.user.additionalGids :=
 *       the runtime's own supplementary groups (getgroups(2)), translated
 *       through linux.gidMappings when the container gets a new user
 *       namespace, so the setgroups(2) at exec keeps them;
 *   run.oci.timens_offset="ID SEC NSEC[\nID SEC NSEC]"  ID monotonic|boottime
 *       (or the clock numbers 1|7), entries separated by newlines or
 *       commas: merged into linux.timeOffsets (a new time namespace is
 *       required, as for timeOffsets);
 *   run.oci.seccomp_fail_unknown_syscall (present)  every syscall name in
 *       linux.seccomp.syscalls must be known to libseccomp for the native
 *       architecture (by default unknown names are skipped);
 *   run.oci.mount_context_type="context"  what proctor does already;
 *   run.oci.systemd.subgroup=""  no sub-cgroup, which is what proctor does.
 * Refused ("run.oci.X is not supported by proctor"):
 *   run.oci.seccomp.receiver, run.oci.seccomp.plugins,
 *   run.oci.seccomp_bpf_data, run.oci.systemd.force_cgroup_v1,
 *   run.oci.delegate-cgroup, run.oci.hooks.stdout, run.oci.hooks.stderr,
 *   run.oci.handler, and any other value of run.oci.mount_context_type or
 *   run.oci.systemd.subgroup.  Other run.oci.* keys are informational
 *   (crun ignores them too) and are left alone.
 * Errors (errnum 0, as for other config errors, unless noted): a refused
 * annotation; a malformed timens_offset; timens offset without a new time
 * namespace; keep_original_groups when a runtime group is not mapped in
 * the new user namespace or the user namespace is joined by path;
 * seccomp_fail_unknown_syscall with an unknown name
 * ("run.oci.seccomp_fail_unknown_syscall: unknown syscall `X`");
 * getgroups(2) failing (its errno). */
int pr_crun_annotations_apply (struct pr_config *cfg, pr_error **err);

#endif
