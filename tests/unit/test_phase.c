/* test_phase.c - unit tests for src/rollout/phase.c: the proctor-phase argv
 * switch (right secret strips the prefix; wrong secret, malformed prefix,
 * unknown phase and a policy without a secret are refused with their
 * messages and leave argv alone) and the PROCTOR_PHASE env rule (a value
 * the container inherited never selects). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/rollout/phase.h"
#include "../../src/rollout/policy.h"

static const char secret_policy[]
    = "{\"version\": 1, \"phase_secret_sha256\": \"7a02b70d29e473e3417655c55f4e3f9f0bdcf6d2f90cf046e508a5ce49575df9\"}";

/* The policy above: its digest is `printf %s harness-secret | sha256sum`. */
static struct pr_policy *
secret_policy_parsed (void)
{
  struct pr_policy *p = NULL;
  pr_error *err = NULL;
  assert_int_equal (pr_policy_parse (secret_policy, strlen (secret_policy), &p, &err), 0);
  return p;
}

static char **
argv_of (const char *const *words)
{
  char **v = xmalloc0 (sizeof (char *));
  for (size_t i = 0; words[i]; i++)
    v = pr_strv_append (v, words[i]);
  return v;
}

static void
expect_refused (const struct pr_policy *p, const char *const *words, const char *msg)
{
  _cleanup_strv_ char **argv = argv_of (words);
  enum pr_phase ph = PR_PHASE_AGENT;
  bool sw = true;
  pr_error *err = NULL;
  assert_int_equal (pr_phase_from_argv (p, argv, &ph, &sw, &err), -1);
  assert_false (sw);
  assert_int_equal (ph, PR_PHASE_AGENT);
  assert_non_null (err);
  assert_string_equal (err->msg, msg);
  /* argv is left as it was: nothing runs from a half-stripped prefix */
  for (size_t i = 0; words[i]; i++)
    assert_string_equal (argv[i], words[i]);
  pr_error_free (&err);
}

static void
test_argv_switch (void **state)
{
  _cleanup_policy_ struct pr_policy *p = secret_policy_parsed ();
  enum pr_phase ph = PR_PHASE_AGENT;
  bool sw = false;
  pr_error *err = NULL;

  const char *const ok[] = { "proctor-phase", "verifier", "harness-secret", "--", "sh", "-c", "id", NULL };
  _cleanup_strv_ char **argv = argv_of (ok);
  assert_int_equal (pr_phase_from_argv (p, argv, &ph, &sw, &err), 0);
  assert_true (sw);
  assert_int_equal (ph, PR_PHASE_VERIFIER);
  assert_string_equal (argv[0], "sh");
  assert_string_equal (argv[1], "-c");
  assert_string_equal (argv[2], "id");
  assert_null (argv[3]);

  const char *const setup[] = { "proctor-phase", "setup", "harness-secret", "--", "true", NULL };
  _cleanup_strv_ char **argv2 = argv_of (setup);
  assert_int_equal (pr_phase_from_argv (p, argv2, &ph, &sw, &err), 0);
  assert_int_equal (ph, PR_PHASE_SETUP);
  assert_string_equal (argv2[0], "true");
  assert_null (argv2[1]);

  /* not the switch: argv[0] must be exactly proctor-phase */
  const char *const other[] = { "/usr/bin/proctor-phase", "verifier", "harness-secret", "--", "id", NULL };
  _cleanup_strv_ char **argv3 = argv_of (other);
  ph = PR_PHASE_AGENT;
  assert_int_equal (pr_phase_from_argv (p, argv3, &ph, &sw, &err), 0);
  assert_false (sw);
  assert_int_equal (ph, PR_PHASE_AGENT);
  assert_string_equal (argv3[0], "/usr/bin/proctor-phase");
  assert_int_equal (pr_phase_from_argv (p, NULL, &ph, &sw, &err), 0);
  assert_false (sw);

  const char *const wrong[] = { "proctor-phase", "verifier", "harness-secreT", "--", "id", NULL };
  expect_refused (p, wrong, "proctor-phase: wrong secret: the exec is refused");
  const char *const empty[] = { "proctor-phase", "verifier", "", "--", "id", NULL };
  expect_refused (p, empty, "proctor-phase: wrong secret: the exec is refused");
  /* the digest itself is not the secret */
  const char *const digest[] = { "proctor-phase", "verifier",
                                 "7a02b70d29e473e3417655c55f4e3f9f0bdcf6d2f90cf046e508a5ce49575df9", "--", "id", NULL };
  expect_refused (p, digest, "proctor-phase: wrong secret: the exec is refused");
  const char *const bad_wrong[] = { "proctor-phase", "root", "nope", "--", "id", NULL };
  expect_refused (p, bad_wrong, "proctor-phase: wrong secret: the exec is refused");
  const char *const bad_phase[] = { "proctor-phase", "root", "harness-secret", "--", "id", NULL };
  expect_refused (p, bad_phase, "proctor-phase: unknown phase `root` (expected agent, setup or verifier)");
  static const char usage[] = "proctor-phase: expected `proctor-phase PHASE SECRET -- COMMAND [ARG...]`";
  const char *const no_dash[] = { "proctor-phase", "verifier", "harness-secret", "id", NULL };
  expect_refused (p, no_dash, usage);
  const char *const no_cmd[] = { "proctor-phase", "verifier", "harness-secret", "--", NULL };
  expect_refused (p, no_cmd, usage);
  const char *const bare[] = { "proctor-phase", NULL };
  expect_refused (p, bare, usage);

  /* a policy without a digest refuses every use of the switch */
  _cleanup_policy_ struct pr_policy *none = NULL;
  const char *doc = "{\"version\": 1}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &none, &err), 0);
  expect_refused (none, ok,
                  "proctor-phase: this rollout's policy has no phase_secret_sha256, so an exec cannot choose its "
                  "phase by argv (set one, or use PROCTOR_PHASE or `proctor rollout phase`)");
}

static void
test_env_rule (void **state)
{
  enum pr_phase ph;
  bool sel;
  pr_error *err = NULL;
  char *env[] = { "PATH=/bin", "PROCTOR_PHASE=verifier", NULL };
  char *inherited[] = { "verifier" };

  /* nothing inherited: the exec request's value selects */
  ph = PR_PHASE_AGENT;
  assert_int_equal (pr_phase_from_env (env, NULL, 0, &ph, &sel, &err), 0);
  assert_true (sel);
  assert_int_equal (ph, PR_PHASE_VERIFIER);

  /* the image's ENV PROCTOR_PHASE=verifier copied into the exec: ignored */
  ph = PR_PHASE_AGENT;
  assert_int_equal (pr_phase_from_env (env, inherited, 1, &ph, &sel, &err), 0);
  assert_false (sel);
  assert_int_equal (ph, PR_PHASE_AGENT);

  /* a value other than the inherited one (an engine that appends -e after
   * the container's env, without deduplicating) selects */
  char *both[] = { "PROCTOR_PHASE=verifier", "PROCTOR_PHASE=setup", NULL };
  assert_int_equal (pr_phase_from_env (both, inherited, 1, &ph, &sel, &err), 0);
  assert_true (sel);
  assert_int_equal (ph, PR_PHASE_SETUP);

  /* an inherited invalid value is skipped; the request's invalid one is refused */
  char *bogus_env[] = { "PROCTOR_PHASE=bogus", NULL };
  char *bogus[] = { "bogus" };
  ph = PR_PHASE_AGENT;
  assert_int_equal (pr_phase_from_env (bogus_env, bogus, 1, &ph, &sel, &err), 0);
  assert_false (sel);
  assert_int_equal (pr_phase_from_env (bogus_env, NULL, 0, &ph, &sel, &err), -1);
  assert_string_equal (err->msg, "PROCTOR_PHASE: unknown phase `bogus` (expected agent, setup or verifier)");
  pr_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_argv_switch),
    cmocka_unit_test (test_env_rule),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
