/* exeguard.h - protection of the runtime binary against being overwritten
 * from inside a container through /proc/PID/exe (CVE-2019-5736).
 *
 * Before entering any container namespace, proctor re-executes itself from
 * a file no container process can open for writing: the binary seen
 * through a private, detached, read-only overlayfs mount with no upper
 * layer (a write through it fails with EROFS, and there is no layer to
 * copy up into), or, where that mount cannot be made, a sealed memfd copy
 * (F_SEAL_SEAL|F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE).
 * Source: CVE-2019-5736; overlayfs (Documentation/filesystems/overlayfs.rst,
 * "multiple lower layers"); fsopen(2), fsconfig(2), fsmount(2);
 * memfd_create(2), fcntl(2) file sealing. */
#ifndef PROCTOR_EXEGUARD_H
#define PROCTOR_EXEGUARD_H

#include "../base/error.h"

/* Unless the current executable is already protected, re-executes it
 * (fexecve, same argv and envp; never returns on success) from the
 * read-only overlay view of its own file, or, when any step of that fails
 * (the reason is logged at debug level only), from a sealed memfd copy of
 * /proc/self/exe.  Returns 0 without re-executing when /proc/self/exe is a
 * sealed memfd or on a read-only mount (statvfs ST_RDONLY: the overlay view
 * after the re-exec, a read-only /usr, a read-only bind mount of the
 * binary: nothing can open it for writing through /proc/PID/exe).
 * Errors (only from the memfd fallback, or opening /proc/self/exe):
 * open/fstat of /proc/self/exe, memfd_create, copy, fcntl, fexecve errno;
 * EINVAL when the seals did not stick. */
int pr_exeguard_ensure_protected (char **argv, char **envp, pr_error **err);

#endif
