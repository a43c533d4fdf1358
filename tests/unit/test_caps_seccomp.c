/* test_caps_seccomp.c - unit tests for capability name handling and
 * validation (src/linux/caps.c), seccomp config validation and a real
 * filter load in a forked child (src/linux/seccomp.c), and the input
 * checks of src/linux/procattr.c that need no privileges. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/linux/caps.h"
#include "../../src/linux/procattr.h"
#include "../../src/linux/seccomp.h"

/* Asserts err is set and its message contains needle, then frees it. */
static void
assert_error_contains (pr_error **err, const char *needle)
{
  assert_non_null (*err);
  if (strstr ((*err)->msg, needle) == NULL)
    fail_msg ("error `%s` does not mention `%s`", (*err)->msg, needle);
  pr_error_free (err);
}

static void
test_cap_from_name (void **state)
{
  assert_int_equal (pr_cap_from_name ("CAP_CHOWN"), 0);
  assert_int_equal (pr_cap_from_name ("CAP_SYS_ADMIN"), 21);
  assert_int_equal (pr_cap_from_name ("CAP_NET_BIND_SERVICE"), 10);
  assert_int_equal (pr_cap_from_name ("CAP_NOT_A_CAP"), -1);
  /* libcap takes numbers and bare names; config.json must not. */
  assert_int_equal (pr_cap_from_name ("12"), -1);
  assert_int_equal (pr_cap_from_name ("chown"), -1);
  assert_int_equal (pr_cap_from_name ("CAP_"), -1);
  assert_int_equal (pr_cap_from_name (""), -1);
  assert_int_equal (pr_cap_from_name (NULL), -1);
}

static void
test_caps_validate (void **state)
{
  char *good[] = { "CAP_CHOWN", "CAP_KILL", "CAP_AUDIT_WRITE", NULL };
  char *bad[] = { "CAP_CHOWN", "CAP_BOGUS", NULL };
  struct pr_capabilities empty = { 0 };
  struct pr_capabilities ok = { .bounding = good, .effective = good, .permitted = good };
  struct pr_capabilities in_ambient = { .bounding = good, .ambient = bad };
  pr_error *err = NULL;

  assert_int_equal (pr_caps_validate (&empty, &err), 0);
  assert_null (err);
  assert_int_equal (pr_caps_validate (&ok, &err), 0);
  assert_null (err);
  /* runtime-spec 1.1+: an unknown name is a warning, not a failure. */
  assert_int_equal (pr_caps_validate (&in_ambient, &err), 0);
  assert_null (err);
}

/* A small valid profile the cases below each break in one place. */
struct profile
{
  char *names[4];
  char *arches[4];
  char *flags[3];
  struct pr_seccomp_arg arg;
  struct pr_seccomp_syscall sys;
  struct pr_seccomp sc;
};

static void
profile_init (struct profile *p)
{
  memset (p, 0, sizeof *p);
  p->names[0] = "mkdir";
  p->names[1] = "mkdirat";
  p->names[2] = "not_a_syscall_at_all"; /* skipped, not an error */
  p->arches[0] = "SCMP_ARCH_X86_64";
  p->arches[1] = "SCMP_ARCH_X86";
  p->arches[2] = "SCMP_ARCH_AARCH64";
  p->flags[0] = "SECCOMP_FILTER_FLAG_LOG";
  p->arg = (struct pr_seccomp_arg) { .index = 1, .value = 0777, .value_two = 0700, .op = "SCMP_CMP_MASKED_EQ" };
  p->sys = (struct pr_seccomp_syscall) { .names = p->names, .action = "SCMP_ACT_ERRNO",
                                         .has_errno_ret = true, .errno_ret = EROFS };
  p->sc = (struct pr_seccomp) { .default_action = "SCMP_ACT_ALLOW", .architectures = p->arches,
                                .flags = p->flags, .syscalls = &p->sys, .n_syscalls = 1 };
}

static void
expect_invalid (struct profile *p, const char *needle)
{
  pr_error *err = NULL;
  assert_int_equal (pr_seccomp_validate (&p->sc, &err), -1);
  assert_error_contains (&err, needle);
}

static void
test_seccomp_validate_good (void **state)
{
  static const char *actions[] = { "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
                                   "SCMP_ACT_TRAP", "SCMP_ACT_ERRNO", "SCMP_ACT_TRACE",
                                   "SCMP_ACT_LOG", "SCMP_ACT_ALLOW" };
  static const char *ops[] = { "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
                               "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ" };
  struct profile p;
  pr_error *err = NULL;

  profile_init (&p);
  assert_int_equal (pr_seccomp_validate (&p.sc, &err), 0);
  assert_null (err);

  /* Every action, as a rule and as the default (a rule equal to the
   * default is skipped, not an error). */
  for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
    {
      profile_init (&p);
      p.sys.action = (char *) actions[i];
      assert_int_equal (pr_seccomp_validate (&p.sc, &err), 0);
      p.sc.default_action = (char *) actions[i];
      p.sys.action = "SCMP_ACT_ALLOW";
      assert_int_equal (pr_seccomp_validate (&p.sc, &err), 0);
      assert_null (err);
    }

  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    {
      profile_init (&p);
      p.arg.op = (char *) ops[i];
      p.sys.args = &p.arg;
      p.sys.n_args = 1;
      assert_int_equal (pr_seccomp_validate (&p.sc, &err), 0);
      assert_null (err);
    }

  /* NOTIFY is fine as a rule when a listener is configured. */
  profile_init (&p);
  p.sys.action = "SCMP_ACT_NOTIFY";
  p.sc.listener_path = "/run/listener.sock";
  assert_int_equal (pr_seccomp_validate (&p.sc, &err), 0);
  assert_null (err);

  /* Two conditions on one argument: accepted (one rule each). */
  struct pr_seccomp_arg two[2] = {
    { .index = 0, .value = 1, .op = "SCMP_CMP_EQ" },
    { .index = 0, .value = 2, .op = "SCMP_CMP_EQ" },
  };
  profile_init (&p);
  p.sys.args = two;
  p.sys.n_args = 2;
  assert_int_equal (pr_seccomp_validate (&p.sc, &err), 0);
  assert_null (err);
}

static void
test_seccomp_validate_bad (void **state)
{
  struct profile p;

  profile_init (&p);
  p.sys.action = "SCMP_ACT_MAYBE";
  expect_invalid (&p, "unknown action `SCMP_ACT_MAYBE`");

  profile_init (&p);
  p.sc.default_action = "ALLOW";
  expect_invalid (&p, "unknown action `ALLOW`");

  profile_init (&p);
  p.sc.default_action = NULL;
  expect_invalid (&p, "missing defaultAction");

  profile_init (&p);
  p.arg.op = "SCMP_CMP_ABOUT";
  p.sys.args = &p.arg;
  p.sys.n_args = 1;
  expect_invalid (&p, "unknown operator `SCMP_CMP_ABOUT`");

  profile_init (&p);
  p.arg.index = 6;
  p.sys.args = &p.arg;
  p.sys.n_args = 1;
  expect_invalid (&p, "argument index 6");

  profile_init (&p);
  p.arches[1] = "SCMP_ARCH_VAX";
  expect_invalid (&p, "unknown architecture `SCMP_ARCH_VAX`");

  profile_init (&p);
  p.arches[1] = "x86_64"; /* libseccomp's spelling, not the spec's */
  expect_invalid (&p, "unknown architecture `x86_64`");

  profile_init (&p);
  p.flags[1] = "SECCOMP_FILTER_FLAG_FAST";
  expect_invalid (&p, "unknown flag `SECCOMP_FILTER_FLAG_FAST`");

  profile_init (&p);
  p.sys.action = "SCMP_ACT_NOTIFY";
  expect_invalid (&p, "listenerPath");

  profile_init (&p);
  p.sc.default_action = "SCMP_ACT_NOTIFY";
  p.sc.listener_path = "/run/listener.sock";
  expect_invalid (&p, "cannot be the default action");
}

/* Loads the profile (mkdir/mkdirat -> EROFS) in a child and returns the
 * errno its mkdir got, or a value >= 1000 on setup failure. */
static int
errno_in_filtered_child (struct pr_seccomp *sc)
{
  int pipefd[2];
  int result = -1, status;
  pid_t pid;

  assert_int_equal (pipe (pipefd), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      pr_error *err = NULL;
      int notify_fd, e;
      char dir[] = "/tmp/test_caps_seccomp.XXXXXX";

      close (pipefd[0]);
      /* The filter does not set NNP itself; without CAP_SYS_ADMIN the
       * kernel needs it. */
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (mkdtemp (dir) == NULL)
        e = 1000;
      else if (pr_seccomp_load (sc, &notify_fd, &err) < 0)
        e = 1001;
      else
        {
          char sub[64];
          snprintf (sub, sizeof sub, "%s/sub", dir);
          e = mkdir (sub, 0700) < 0 ? errno : 0;
          rmdir (sub);
          if (notify_fd != -1)
            e = 1002;
        }
      rmdir (dir);
      if (write (pipefd[1], &e, sizeof e) != sizeof e)
        _exit (2);
      _exit (0);
    }
  close (pipefd[1]);
  assert_int_equal (read (pipefd[0], &result, sizeof result), (ssize_t) sizeof result);
  close (pipefd[0]);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return result;
}

static void
test_seccomp_load_errno (void **state)
{
  struct profile p;

  profile_init (&p);
  assert_int_equal (errno_in_filtered_child (&p.sc), EROFS);

  /* errnoRet absent: EPERM, as the runtime-spec says. */
  profile_init (&p);
  p.sys.has_errno_ret = false;
  assert_int_equal (errno_in_filtered_child (&p.sc), EPERM);

  /* Argument filter on the mode (MASKED_EQ: value is the mask, valueTwo
   * the datum).  glibc's mkdir() is the mkdir syscall (mode = arg 1) or
   * mkdirat (mode = arg 2) depending on the architecture: cover both. */
  char *mkdir_name[] = { "mkdir", NULL };
  char *mkdirat_name[] = { "mkdirat", NULL };
  struct pr_seccomp_arg mode1 = { .index = 1, .value = 0777, .value_two = 0755, .op = "SCMP_CMP_MASKED_EQ" };
  struct pr_seccomp_arg mode2 = mode1;
  struct pr_seccomp_syscall rules[2] = {
    { .names = mkdir_name, .action = "SCMP_ACT_ERRNO", .has_errno_ret = true, .errno_ret = EROFS,
      .args = &mode1, .n_args = 1 },
    { .names = mkdirat_name, .action = "SCMP_ACT_ERRNO", .has_errno_ret = true, .errno_ret = EROFS,
      .args = &mode2, .n_args = 1 },
  };
  struct pr_seccomp sc = { .default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 2 };
  mode2.index = 2;
  /* the child creates with 0700: (0700 & 0777) != 0755, so allowed */
  assert_int_equal (errno_in_filtered_child (&sc), 0);
  mode1.value_two = mode2.value_two = 0700;
  assert_int_equal (errno_in_filtered_child (&sc), EROFS);
}

static void
test_procattr_input_checks (void **state)
{
  struct pr_config cfg = { 0 };
  struct pr_keyval bad[] = { { "net..ipv4.ip_forward", "1" }, { "../../etc/hostname", "x" },
                             { "net.ipv4/../../x", "1" }, { "kernel.", "1" } };
  pr_error *err = NULL;

  cfg.hostname = "box";
  assert_int_equal (pr_uts_apply (&cfg, false, &err), -1);
  assert_error_contains (&err, "setting hostname requires a new UTS namespace");

  /* Rejected before anything is opened, so this never writes. */
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      cfg.linux.sysctl = &bad[i];
      cfg.linux.n_sysctl = 1;
      assert_int_equal (pr_sysctl_apply (&cfg, &err), -1);
      assert_error_contains (&err, "invalid sysctl key");
    }

  cfg.linux.has_personality = true;
  cfg.linux.personality_domain = "LINUX64";
  assert_int_equal (pr_personality_apply (&cfg, &err), -1);
  assert_error_contains (&err, "unknown personality domain `LINUX64`");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cap_from_name),
    cmocka_unit_test (test_caps_validate),
    cmocka_unit_test (test_seccomp_validate_good),
    cmocka_unit_test (test_seccomp_validate_bad),
    cmocka_unit_test (test_seccomp_load_errno),
    cmocka_unit_test (test_procattr_input_checks),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
