/* exeguard.h - protection of the runtime binary against being overwritten
 * from inside a container through /proc/PID/exe (CVE-2019-5736).
 *
 * Before entering any container namespace, proctor re-executes itself from
 * a sealed memfd copy (F_SEAL_SEAL|F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE),
 * so the /proc/PID/exe a container process can reach is the immutable copy.
 * Source: CVE-2019-5736; memfd_create(2), fcntl(2) file sealing. */
#ifndef PROCTOR_EXEGUARD_H
#define PROCTOR_EXEGUARD_H

#include "../base/error.h"

/* If the current executable is not already a sealed memfd, copies
 * /proc/self/exe into one, seals it and fexecve()s it with the same argv and
 * environ (never returns on success).  Returns 0 when already sealed, or
 * when the executable is on a read-only mount (statvfs ST_RDONLY: nothing
 * can open it for writing through /proc/PID/exe, so there is nothing to
 * protect against and the re-exec is skipped).
 * Errors: memfd_create/copy/fcntl/fexecve errno. */
int pr_exeguard_ensure_sealed (char **argv, char **envp, pr_error **err);

#endif
