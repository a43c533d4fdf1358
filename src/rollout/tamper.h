/* tamper.h - the tamper report of `proctor rollout status` (SPEC section 2
 * "A tamper report"; docs/rollout.md "The tamper report"): what the agent
 * created, changed or removed under verifier.base_paths and at the known
 * injection points, read from the rootfs overlay's upper dir (exactly the
 * agent's changes), so no whole-tree walk; and the engine's bind-mounted
 * /etc/hosts, resolv.conf and hostname against their copies from create
 * (netfiles.h). */
#ifndef PROCTOR_TAMPER_H
#define PROCTOR_TAMPER_H

#include <yajl/yajl_gen.h>

#include "policy.h"

/* Entries of the upper dir visited before the report stops ("complete":
 * false). */
#define PR_TAMPER_MAX_ENTRIES 20000
/* Changes listed at most. */
#define PR_TAMPER_MAX_CHANGES 1000

/* The injection-point class of a path inside the container ("ld.so",
 * "python", "path", "shell", "pytest", "tool-config", "resolver", "pam", "login", "packages"), "base" for another
 * path under one of base_paths, or NULL. */
const char *pr_tamper_class (const char *path, const char *const *base_paths);

/* Generates "tamper": {...} (key and object) into g for the rollout whose
 * state dir is state_dirfd.  Never fails: an unreadable upper dir gives
 * "complete": false. */
void pr_tamper_gen (yajl_gen g, int state_dirfd, const struct pr_policy *p);

#endif
