/* phase.h - which phase a rollout exec runs in (SPEC section 2, "Phases
 * and identity"; issues #15 item 6 and #16).  Two channels, both carried
 * by the exec request, never by the container:
 *
 *  - the argv switch `proctor-phase PHASE SECRET -- COMMAND [ARG...]`,
 *    for engines whose exec request carries no environment (CRI's
 *    ExecSync and Exec: kubectl exec).  SECRET is checked against the
 *    policy's phase_secret_sha256; the four leading words are removed
 *    before the command runs.  Only argv[0] of the exec request itself is
 *    looked at: a shell the agent runs that names proctor-phase is just a
 *    command that does not exist.
 *  - PROCTOR_PHASE=agent|setup|verifier in the exec request's env (podman
 *    and docker `exec -e`, `proctor exec --env`), except a value the
 *    container's own config env carried at create: engines copy the
 *    container's env (image ENV, a pod's env) into every exec, so such a
 *    value is the image's, not the exec request's. */
#ifndef PROCTOR_ROLLOUT_PHASE_H
#define PROCTOR_ROLLOUT_PHASE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "../base/error.h"

#define PR_PHASE_ENV "PROCTOR_PHASE"
#define PR_PHASE_ARGV0 "proctor-phase"

/* Parses "agent", "setup" or "verifier" into *out.  Returns 0, or -1 for
 * any other string (nothing set, no error object: callers word it). */
int pr_phase_parse (const char *s, enum pr_phase *out);

/* The argv switch.  When args[0] is exactly "proctor-phase": checks the
 * form `proctor-phase PHASE SECRET -- COMMAND [ARG...]`, then
 * sha256(SECRET) against the policy's phase_secret_sha256 in constant time
 * (Nettle's sha256 and memeql_sec), then PHASE; on success removes the four leading words
 * from *args (in place: COMMAND becomes args[0]), sets *phase and
 * *switched = true.  Any other args[0] (or args NULL or empty): *switched =
 * false, nothing changed.
 * Errors (EINVAL, one line, never the secret itself): "proctor-phase: this
 * rollout's policy has no phase_secret_sha256 ..."; "proctor-phase:
 * expected `proctor-phase PHASE SECRET -- COMMAND [ARG...]`"; "proctor-phase:
 * wrong secret: the exec is refused"; "proctor-phase: unknown phase `X`
 * ...".  The secret is checked before the phase name, so a wrong secret
 * learns nothing about the rest.  Source: issue #16; SPEC section 2. */
int pr_phase_from_argv (const struct pr_policy *p, char **args, enum pr_phase *phase, bool *switched,
                        pr_error **err);

/* The env channel.  For each PROCTOR_PHASE=V in env (the exec request's
 * merged env) whose V is not one of the n_inherited values of inherited
 * (what the container's config env carried at create): V selects, the
 * last such one winning; *selected tells whether one did.  Values equal to
 * an inherited one are skipped, valid or not.  Nothing is removed here
 * (pr_rollout_exec_prepare filters PROCTOR_* afterwards).
 * Errors: EINVAL "PROCTOR_PHASE: unknown phase `V` (expected agent, setup
 * or verifier)" for a selecting V. */
int pr_phase_from_env (char *const *env, char *const *inherited, size_t n_inherited, enum pr_phase *phase,
                       bool *selected, pr_error **err);

#endif
