/* fuzz_policy.c - libFuzzer target for the rollout policy parser (SPEC
 * section 2): the input is a policy document.  Checks, beyond "no crash, no
 * leak, no UB": a policy that parses serialises (pr_policy_to_json) to a
 * document that pr_policy_parse_saved accepts again, since exec and delete
 * re-read the saved form and must never fail on what create accepted.
 * Built by tests/fuzz/run.sh, never by automake. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "rollout/policy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
query (const struct pr_policy *p)
{
  static const enum pr_phase phases[] = { PR_PHASE_AGENT, PR_PHASE_SETUP, PR_PHASE_VERIFIER };
  for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
    {
      (void) pr_net_mode_name (pr_policy_net_mode (p, phases[i]));
      char *const *list = pr_policy_allowed_hosts (p, phases[i]);
      (void) pr_policy_host_allowed (list, "example.com");
      (void) pr_policy_host_allowed (list, "a.b.example.com");
    }
  (void) pr_policy_env_dropped (p, "HUD_TOKEN");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *buf = malloc (size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy (buf, data, size);

  struct pr_policy *p = NULL;
  pr_error *err = NULL;
  if (pr_policy_parse_saved (buf, size, &p, &err) == 0)
    {
      query (p);
      char *json = pr_policy_to_json (p);
      struct pr_policy *again = NULL;
      if (pr_policy_parse_saved (json, strlen (json), &again, &err) < 0)
        {
          fprintf (stderr, "saved policy does not re-parse: %s\n%s\n", err->msg, json);
          abort ();
        }
      pr_policy_free (again);
      free (json);
      pr_policy_free (p);
    }
  else
    pr_error_free (&err);

  /* The create-time parser also stat()s verifier mount sources. */
  if (pr_policy_parse (buf, size, &p, &err) == 0)
    pr_policy_free (p);
  else
    pr_error_free (&err);
  free (buf);
  return 0;
}
