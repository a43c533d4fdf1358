/* lsm.h - AppArmor profile and SELinux labels for the container process and
 * its mounts.  When the LSM is not enabled on the host, a configured
 * profile/label is ignored (runc's behaviour), logged at debug level.
 * Source: runtime-spec config.md "apparmorProfile", "selinuxLabel",
 * config-linux.md "mountLabel"; libselinux setexeccon(3). */
#ifndef PROCTOR_LSM_H
#define PROCTOR_LSM_H

#include "../base/error.h"

/* Sets the label the next execve() runs under (AppArmor: writes
 * "exec PROFILE" to /proc/self/attr/apparmor/exec or /proc/self/attr/exec;
 * SELinux: setexeccon).  Errors: write/setexeccon errno naming the label. */
int pr_lsm_set_exec_labels (const char *apparmor_profile, const char *selinux_label, pr_error **err);

/* True when SELinux is enabled (libselinux is_selinux_enabled), so mounts
 * get context="mountLabel". */
int pr_selinux_enabled (void);

#endif
