/* spec.h - the default config.json written by `proctor spec`. */
#ifndef PROCTOR_SPEC_H
#define PROCTOR_SPEC_H

#include <stdbool.h>

/* Returns a new malloc'd, NUL-terminated, indented JSON text of a default
 * OCI config: ociVersion "1.2.0"; process "sh" on a terminal in "/" as
 * uid/gid 0 with PATH and TERM set, the capabilities CAP_AUDIT_WRITE,
 * CAP_KILL and CAP_NET_BIND_SERVICE, RLIMIT_NOFILE 1024 and
 * noNewPrivileges; a read-only "rootfs" root; the usual proc, /dev tmpfs,
 * devpts, shm, mqueue, sysfs and cgroup mounts; masked and read-only
 * /proc and /sys paths; new pid, network, ipc, uts, mount and cgroup
 * namespaces; and a deny-all device cgroup rule.
 *
 * With rootless, the config is one an unprivileged user can run (the shape
 * `runc spec --rootless` gives): a user namespace mapping container root to
 * the caller's effective uid and gid (size 1), no network namespace (an
 * unprivileged user could not configure it), /sys bind-mounted from the
 * host instead of a new sysfs (a sysfs mount needs a network namespace
 * owned by the user namespace), devpts without gid=5 (gid 5 is unmapped),
 * and no cgroup mount and no resources (the caller usually cannot manage
 * cgroups).
 *
 * The result parses with pr_config_parse().  Never fails (aborts on
 * out-of-memory).  Source: runtime-spec 1.2 config.md and config-linux.md,
 * the defaults of runc(8) spec. */
char *pr_spec_default_json (bool rootless);

#endif
