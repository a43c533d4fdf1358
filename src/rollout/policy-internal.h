/* policy-internal.h - what policy.c (the document, messages, yajl-tree
 * helpers) and policy_fields.c (each field's checks) share.  Not part of
 * the policy API (that is policy.h). */
#ifndef PROCTOR_POLICY_INTERNAL_H
#define PROCTOR_POLICY_INTERNAL_H

#include <stdbool.h>
#include <yajl/yajl_tree.h>

#include "policy.h"
#include "../base/error.h"

/* Messages and yajl-tree helpers (policy.c) ------------------------------ */

/* Always -1: sets *err to "rollout policy: " and the formatted message,
 * with control characters escaped so it stays one line; errnum 0 for
 * pr_policy_perr. */
int pr_policy_perr (pr_error **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
int pr_policy_perr_errno (pr_error **err, int errnum, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* Always -1: "FIELD: expected WANT, got <JSON type of got>". */
int pr_policy_type_err (pr_error **err, const char *field, const char *want, yajl_val got);

/* Rejects (-1) a key of the object obj not in the NULL-terminated allowed,
 * or a key given twice; where is obj's field path for the message, NULL
 * for the top level. */
int pr_policy_check_keys (yajl_val obj, const char *where, const char *const *allowed, pr_error **err);

/* The member key of the object obj, NULL when absent or JSON null. */
yajl_val pr_policy_member (yajl_val obj, const char *key);

/* Field parsers (policy_fields.c) ---------------------------------------
 * Each checks one top-level member v and stores it in p; 0, or -1 with a
 * pr_policy_perr message naming the field.  Partially filled members are
 * freed by pr_policy_free. */

/* The table name ("environment", "agent" or "verifier") into ph; for the
 * verifier also its "mounts" into p, whose sources must exist when
 * check_sources. */
int pr_policy_parse_phase (yajl_val v, const char *name, struct pr_phase_policy *ph, struct pr_policy *p,
                           bool check_sources, pr_error **err);
int pr_policy_parse_hide (yajl_val v, struct pr_policy *p, pr_error **err);
int pr_policy_parse_peers (yajl_val v, struct pr_policy *p, pr_error **err);
int pr_policy_parse_drop_env (yajl_val v, struct pr_policy *p, pr_error **err);
int pr_policy_parse_phase_secret (yajl_val v, struct pr_policy *p, pr_error **err);

/* Shared checks (policy_fields.c) ---------------------------------------- */

/* Rejects (-1) v unless it is an array, naming field. */
int pr_policy_get_array (yajl_val v, const char *field, pr_error **err);
/* An absolute path with "." and repeated '/' removed and no trailing '/'
 * (malloc'd), or NULL with *why saying what is wrong (relative, "..",
 * empty). */
char *pr_policy_normalise_abs (const char *in, const char **why);
/* "/proc", "/sys" or "/dev" when path is at or under it, else NULL. */
const char *pr_policy_pseudo_fs_prefix (const char *path);

/* verifier.base and verifier.base_paths (policy_base.c). */
int pr_policy_parse_base (yajl_val v, enum pr_verifier_base *out, pr_error **err);
int pr_policy_parse_base_paths (yajl_val v, struct pr_policy *p, pr_error **err);

#endif
