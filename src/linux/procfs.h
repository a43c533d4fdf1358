/* procfs.h - writes to procfs files (sysctls, LSM exec labels,
 * oom_score_adj) that no mount made by anyone else can redirect.
 *
 * CVE-2025-52881: a runtime that opens "/proc/sys/..." or
 * "/proc/self/attr/..." by path inside the container can be sent to
 * another file: a mount racing in through a shared mount (the container's
 * /proc a symlink into a volume shared with the host or another
 * container, whose peer then mounts on top of the procfs) puts a file of
 * the attacker's choice, even another procfs file such as
 * /proc/sys/kernel/core_pattern, under the name the runtime writes.  A
 * check that the file is on procfs does not help against the latter.
 * So the file is opened from a procfs instance of our own that is attached
 * nowhere (fsopen(2)/fsmount(2): no mount can be placed on it), and the
 * path below it must cross no mount point and no symlink (openat2(2)
 * RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH).  Where a new
 * procfs cannot be made, the visible /proc is used only when it is the
 * root of a procfs, with the same resolution rules. */
#ifndef PROCTOR_PROCFS_H
#define PROCTOR_PROCFS_H

#include <stddef.h>

#include "../base/error.h"

/* Opens subpath (relative, e.g. "sys/kernel/domainname"; use
 * pr_procfs_self_path for per-thread files) below a procfs root as above,
 * with open flags (O_CLOEXEC added), in *fd_out.  The procfs shows the
 * caller's pid namespace.  Errors: fsopen/fsmount errno only when the
 * fallback /proc is not a procfs root either (EPERM then); the openat2
 * errno naming subpath (EXDEV: a mount is in the way; ELOOP: a symlink;
 * ENOENT). */
int pr_procfs_open (const char *subpath, int flags, int *fd_out, pr_error **err);

/* Writes "PID/task/TID/" + rest (rest like "attr/apparmor/exec") for the
 * calling thread into buf of len bytes: the symlink-free form of
 * /proc/thread-self/REST for pr_procfs_open. */
void pr_procfs_self_path (char *buf, size_t len, const char *rest);

/* Writes len bytes of data to subpath opened with pr_procfs_open
 * (O_WRONLY), what naming it in messages.  Errors: those of
 * pr_procfs_open, and the write errno. */
int pr_procfs_write (const char *subpath, const void *data, size_t len, const char *what, pr_error **err);

#endif
