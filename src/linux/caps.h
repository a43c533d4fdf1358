/* caps.h - Linux capabilities of the container process with libcap:
 * bounding, effective, permitted, inheritable and ambient sets.
 * Source: runtime-spec config.md "process.capabilities"; capabilities(7). */
#ifndef PROCTOR_CAPS_H
#define PROCTOR_CAPS_H

#include "../base/error.h"
#include "../config/config.h"

/* Checks every name ("CAP_SYS_ADMIN") of the five sets: a name libcap does
 * not know ("unknown capability `X`, ignored") or the running kernel lacks
 * is logged as a warning on stderr and ignored by the later steps, as the
 * runtime-spec (1.1+, config.md "capabilities") asks and runc does.  Never
 * fails today; the error slot stays for callers. */
int pr_caps_validate (const struct pr_capabilities *caps, pr_error **err);

/* Step 1, while still root: sets PR_SET_KEEPCAPS and drops every capability
 * not in caps->bounding from the bounding set.  Errors: prctl errno. */
int pr_caps_prepare (const struct pr_capabilities *caps, pr_error **err);

/* Step 2, after setuid/setgid: sets effective, permitted and inheritable
 * exactly to the configured sets, clears KEEPCAPS, then raises each ambient
 * capability.  Errors: capset/prctl errno. */
int pr_caps_apply (const struct pr_capabilities *caps, pr_error **err);

/* Resolves a name to its number; -1 when unknown. */
int pr_cap_from_name (const char *name);

#endif
