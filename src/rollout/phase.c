/* phase.c - the phase of a rollout exec from its request: the
 * `proctor-phase` argv switch bound to the policy's secret, and
 * PROCTOR_PHASE in the exec's env minus what the container inherited (see
 * phase.h). */
#define _GNU_SOURCE
#include "phase.h"
#include "../base/env.h"
#include "../base/util.h"

#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <string.h>

int
pr_phase_parse (const char *s, enum pr_phase *out)
{
  static const enum pr_phase all[] = { PR_PHASE_AGENT, PR_PHASE_SETUP, PR_PHASE_VERIFIER };
  for (size_t i = 0; s && i < PR_ARRAY_SIZE (all); i++)
    if (strcmp (s, pr_phase_name (all[i])) == 0)
      {
        *out = all[i];
        return 0;
      }
  return -1;
}

/* ------------------------------------------------------------ argv switch */

/* Whether sha256(secret) is the policy's digest.  The comparison takes
 * the same time whatever the bytes (Nettle's memeql_sec), so the exec's
 * latency tells a guesser nothing about how close a guess was. */
static bool
secret_matches (const struct pr_policy *p, const char *secret)
{
  struct sha256_ctx ctx;
  uint8_t md[SHA256_DIGEST_SIZE];
  _Static_assert (SHA256_DIGEST_SIZE == PR_PHASE_SECRET_LEN, "phase_secret_sha256 is a sha256 digest");
  sha256_init (&ctx);
  sha256_update (&ctx, strlen (secret), (const uint8_t *) secret);
  sha256_digest (&ctx, sizeof md, md);
  bool ok = memeql_sec (md, p->phase_secret_sha256, sizeof md) != 0;
  explicit_bzero (&ctx, sizeof ctx);
  return ok;
}

int
pr_phase_from_argv (const struct pr_policy *p, char **args, enum pr_phase *phase, bool *switched,
                    pr_error **err)
{
  *switched = false;
  if (args == NULL || args[0] == NULL || strcmp (args[0], PR_PHASE_ARGV0) != 0)
    return 0;
  /* A rollout without a secret refuses rather than running a command
   * named proctor-phase as the agent: the harness asked for a phase and
   * must learn that it did not get it. */
  if (!p->has_phase_secret)
    return pr_error_invalid (err, "proctor-phase: this rollout's policy has no phase_secret_sha256, so an exec "
                                  "cannot choose its phase by argv (set one, or use PROCTOR_PHASE or "
                                  "`proctor rollout phase`)");
  if (args[1] == NULL || args[2] == NULL || args[3] == NULL || strcmp (args[3], "--") != 0 || args[4] == NULL)
    return pr_error_invalid (err, "proctor-phase: expected `proctor-phase PHASE SECRET -- COMMAND [ARG...]`");
  if (!secret_matches (p, args[2]))
    return pr_error_invalid (err, "proctor-phase: wrong secret: the exec is refused");
  enum pr_phase ph;
  if (pr_phase_parse (args[1], &ph) < 0)
    return pr_error_invalid (err, "proctor-phase: unknown phase `%s` (expected agent, setup or verifier)",
                             args[1]);
  /* The secret leaves the exec's memory with the prefix: the command's
   * /proc/PID/cmdline and environ never held it. */
  explicit_bzero (args[2], strlen (args[2]));
  for (size_t i = 0; i < 4; i++)
    free (args[i]);
  size_t n = 4;
  while (args[n])
    n++;
  memmove (args, args + 4, (n - 4 + 1) * sizeof (char *));
  *phase = ph;
  *switched = true;
  return 0;
}

/* ------------------------------------------------------------ env channel */

static bool
inherited_value (const char *v, char *const *inherited, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (v, inherited[i]) == 0)
      return true;
  return false;
}

int
pr_phase_from_env (char *const *env, char *const *inherited, size_t n_inherited, enum pr_phase *phase,
                   bool *selected, pr_error **err)
{
  *selected = false;
  for (size_t i = 0; env && env[i]; i++)
    {
      const char *v = pr_env_entry_value (env[i], PR_PHASE_ENV);
      if (v == NULL || inherited_value (v, inherited, n_inherited))
        continue;
      if (pr_phase_parse (v, phase) < 0)
        return pr_error_invalid (err, "%s: unknown phase `%s` (expected agent, setup or verifier)", PR_PHASE_ENV, v);
      *selected = true;
    }
  return 0;
}
