/* mount-internal.h - what mount.c, mount_options.c and mount_cgroup.c share: mount option
 * data accumulation, bind-mount flag and propagation changes, mountinfo
 * unescaping, and the "cgroup" mount entry point.  Not part of the public
 * API (see mount.h); all paths are inside the rootfs and resolved with
 * RESOLVE_IN_ROOT through safepath.h. */
#ifndef PROCTOR_MOUNT_INTERNAL_H
#define PROCTOR_MOUNT_INTERNAL_H

#include <stdbool.h>
#include <sys/mount.h>

#include "mount.h"
#include "../base/error.h"
#include "../config/config.h"

/* Flags that a plain MS_BIND ignores and that need a second pass. */
#define BIND_ATTR_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME \
                         | MS_RELATIME | MS_STRICTATIME | MS_NOSYMFOLLOW)

/* True when the NULL-terminated options (may be NULL) contain name
 * exactly.  (mount_options.c) */
bool has_option (char *const *options, const char *name);

/* Frees what pr_mount_parse_options allocated in f (the data string); for
 * _cleanup_mount_flags_.  Never fails.  (mount_options.c) */
void mount_flags_free (struct pr_mount_flags *f);
#define _cleanup_mount_flags_ __attribute__ ((cleanup (mount_flags_free)))

/* Appends opt to the comma-separated *data (NULL means empty), replacing
 * *data with a new allocation.  Aborts on out-of-memory; never fails.
 * (mount_options.c) */
void data_append (char **data, const char *opt);

/* The propagation flag (MS_SHARED, MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE,
 * with MS_REC for the r* names) that name ("rshared", "private", ...)
 * stands for, in *out.  Returns 0, or -1 for NULL or any other name.
 * (mount_options.c; runtime-spec config-linux.md "Rootfs Mount
 * Propagation") */
int parse_propagation (const char *name, unsigned long *out);

/* Applies per-mount flags (MS_* in set, removed in clr) to an existing bind
 * mount: fd is an O_PATH fd of the mount, fdpath its /proc/self/fd/N path
 * (or "/"), recursive also covers submounts, what names it in messages.
 * Uses mount_setattr(2); a locked atime mode (mount_namespaces(7)) is kept
 * with a warning; falls back to MS_REMOUNT|MS_BIND repeating the locked
 * flags (mount(2) EPERM) when mount_setattr is ENOSYS.  Returns 0, or -1
 * with the errno of the failing call in *err.  (mount.c) */
int bind_remount (int fd, const char *fdpath, unsigned long set, unsigned long clr, bool recursive, const char *what,
                  pr_error **err);

/* The second half of a bind mount already attached at m->destination
 * inside rootfd: the per-mount flags of f (ro, nosuid, nodev, noexec,
 * atime) on the top mount only, as runc and crun do for rbind, then the
 * recursive attributes (rro, rnosuid, ...) over every submount, through
 * bind_remount, then f's propagation.  Returns 0, or -1 when the mount cannot be reopened inside
 * the rootfs or either step fails.  (mount.c) */
int bind_finish (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, pr_error **err);

/* True when m is a bind mount: type "bind", or a bind/rbind option (the
 * type is then a dummy, runtime-spec config.md "Mounts").  (mount.c) */
bool pr_mount_is_bind (const struct pr_mount *m);

/* Sets propagation prop (MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE,
 * optionally | MS_REC; 0 does nothing) on dest inside rootfd.  Returns 0,
 * or -1 if dest cannot be opened in the rootfs or mount(2) fails.
 * (mount.c) */
int apply_propagation (int rootfd, const char *dest, unsigned long prop, pr_error **err);

/* Decodes in place the octal escapes (\040 for space...) of a mountinfo
 * field, proc(5).  Never fails.  (mount_cgroup.c) */
void unescape_mountinfo (char *s);

/* Performs one config.json mount of type "cgroup" (runtime-spec config.md
 * "Mounts", config-linux.md cgroup mounts) at m->destination inside rootfd,
 * with the parsed options f.  Unified host: a cgroup2 mount when
 * new_cgroupns, else a bind of this process's own cgroup2 directory.  v1
 * and hybrid hosts: a tmpfs with one directory per /sys/fs/cgroup/<name>
 * hierarchy (fresh mount with new_cgroupns, else a bind of our own cgroup),
 * symlinks for co-mounted controllers, tmpfs remounted read-only for "ro".
 * Returns 0, or -1 with *err naming the path when /proc/self/cgroup,
 * /proc/self/mountinfo or statfs("/sys/fs/cgroup") cannot be read or a
 * mkdir/mount fails.  (mount_cgroup.c) */
int do_cgroup_mount (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, bool new_cgroupns,
                     pr_error **err);

#endif
