/* test_cgroup_resources.c - pure parts of src/cgroup/resources.c and
 * devices_bpf.c: v1->v2 value conversions (cpu shares to weight, blkio to
 * io weight, memory swap), hugetlb page-size names, device rule matching;
 * plus argument checks of pr_cgroup_apply_resources that fail before any
 * cgroup file is touched. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/cgroup/cgroup-internal.h"

static void
test_shares_to_weight (void **state)
{
  assert_int_equal (pr_cgroup_shares_to_weight (0), 0);
  assert_int_equal (pr_cgroup_shares_to_weight (2), 1);
  assert_int_equal (pr_cgroup_shares_to_weight (1024), 39);
  assert_int_equal (pr_cgroup_shares_to_weight (512), 20);
  assert_int_equal (pr_cgroup_shares_to_weight (262144), 10000);
  /* clamped to the v1 range */
  assert_int_equal (pr_cgroup_shares_to_weight (1), 1);
  assert_int_equal (pr_cgroup_shares_to_weight (1000000), 10000);
}

static void
test_blkio_to_io_weight (void **state)
{
  assert_int_equal (pr_cgroup_blkio_to_io_weight (0), 0);
  assert_int_equal (pr_cgroup_blkio_to_io_weight (10), 1);
  assert_int_equal (pr_cgroup_blkio_to_io_weight (1000), 10000);
  assert_int_equal (pr_cgroup_blkio_to_io_weight (500), 1 + 490 * 9999 / 990);
  assert_int_equal (pr_cgroup_blkio_to_io_weight (5), 1);
}

static void
test_swap_v2 (void **state)
{
  char buf[32];
  pr_error *err = NULL;
  assert_int_equal (pr_cgroup_swap_v2 (0, true, 100, buf, sizeof buf, &err), 0);
  assert_int_equal (pr_cgroup_swap_v2 (-1, true, 100, buf, sizeof buf, &err), 1);
  assert_string_equal (buf, "max");
  assert_int_equal (pr_cgroup_swap_v2 (300, true, 100, buf, sizeof buf, &err), 1);
  assert_string_equal (buf, "200");
  assert_int_equal (pr_cgroup_swap_v2 (100, true, 100, buf, sizeof buf, &err), 1);
  assert_string_equal (buf, "0");
  assert_int_equal (pr_cgroup_swap_v2 (300, true, -1, buf, sizeof buf, &err), 1);
  assert_string_equal (buf, "max");
  assert_null (err);

  assert_int_equal (pr_cgroup_swap_v2 (50, true, 100, buf, sizeof buf, &err), -1);
  assert_int_equal (err->errnum, EINVAL);
  pr_error_free (&err);
  assert_int_equal (pr_cgroup_swap_v2 (50, false, 0, buf, sizeof buf, &err), -1);
  assert_int_equal (err->errnum, EINVAL);
  assert_non_null (strstr (err->msg, "memory limit"));
  pr_error_free (&err);
}

static void
test_hugepage_name (void **state)
{
  char buf[16];
  pr_cgroup_hugepage_name (2 * 1024 * 1024, buf, sizeof buf);
  assert_string_equal (buf, "2MB");
  pr_cgroup_hugepage_name (1024ULL * 1024 * 1024, buf, sizeof buf);
  assert_string_equal (buf, "1GB");
  pr_cgroup_hugepage_name (64 * 1024, buf, sizeof buf);
  assert_string_equal (buf, "64KB");
  pr_cgroup_hugepage_name (32ULL * 1024 * 1024 * 1024, buf, sizeof buf);
  assert_string_equal (buf, "32GB");
}

static void
test_devices_allowed (void **state)
{
  const struct pr_dev_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "rwm" },
    { true, 'c', 136, -1, "rw" },
    { true, 'b', -1, -1, "m" },
    { false, 'c', 136, 5, "w" },
  };
  size_t n = sizeof rules / sizeof rules[0];
  assert_true (pr_cgroup_devices_allowed (rules, n, 'c', 1, 3, 'r'));
  assert_true (pr_cgroup_devices_allowed (rules, n, 'c', 1, 3, 'm'));
  assert_false (pr_cgroup_devices_allowed (rules, n, 'c', 1, 5, 'r'));
  assert_false (pr_cgroup_devices_allowed (rules, n, 'b', 1, 3, 'r'));
  assert_true (pr_cgroup_devices_allowed (rules, n, 'c', 136, 7, 'w'));
  assert_false (pr_cgroup_devices_allowed (rules, n, 'c', 136, 7, 'm'));
  /* last match wins */
  assert_false (pr_cgroup_devices_allowed (rules, n, 'c', 136, 5, 'w'));
  assert_true (pr_cgroup_devices_allowed (rules, n, 'c', 136, 5, 'r'));
  assert_true (pr_cgroup_devices_allowed (rules, n, 'b', 8, 0, 'm'));
  assert_false (pr_cgroup_devices_allowed (rules, n, 'b', 8, 0, 'r'));
  /* no rule: deny */
  assert_false (pr_cgroup_devices_allowed (rules, 0, 'c', 1, 3, 'r'));
}

static yajl_val
parse (const char *text)
{
  char ebuf[128];
  yajl_val v = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (v == NULL)
    fail_msg ("bad test json: %s", ebuf);
  return v;
}

static void
expect_einval (const char *json, const char *needle)
{
  yajl_val v = parse (json);
  pr_error *err = NULL;
  /* a path that cannot exist: the checks must fail before any write */
  int r = pr_cgroup_apply_resources ("/proctor-unit-test-none/x", v, false, &err);
  yajl_tree_free (v);
  if (r == 0)
    fail_msg ("`%s` accepted", json);
  assert_int_equal (err->errnum, EINVAL);
  if (strstr (err->msg, needle) == NULL)
    fail_msg ("error `%s` does not name `%s`", err->msg, needle);
  pr_error_free (&err);
}

static void
test_apply_rejects_bad_values (void **state)
{
  pr_error *err = NULL;
  assert_int_equal (pr_cgroup_apply_resources ("/x", NULL, false, &err), 0);
  expect_einval ("[1]", "linux.resources");
  expect_einval ("{\"memory\": {\"limit\": \"64m\"}}", "memory.limit");
  expect_einval ("{\"memory\": {\"limit\": 1.5}}", "memory.limit");
  expect_einval ("{\"memory\": {\"swappiness\": 101}}", "swappiness");
  expect_einval ("{\"memory\": {\"disableOOMKiller\": 1}}", "disableOOMKiller");
  expect_einval ("{\"cpu\": {\"cpus\": 3}}", "cpu.cpus");
  expect_einval ("{\"pids\": {\"limit\": \"x\"}}", "pids.limit");
  expect_einval ("{\"devices\": [{\"access\": \"rwm\"}]}", "allow");
  expect_einval ("{\"devices\": [{\"allow\": true, \"type\": \"x\"}]}", "type");
  expect_einval ("{\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}", "access");
  expect_einval ("{\"hugepageLimits\": {}}", "hugepageLimits");
  expect_einval ("{\"unified\": []}", "unified");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_shares_to_weight),  cmocka_unit_test (test_blkio_to_io_weight),
    cmocka_unit_test (test_swap_v2),           cmocka_unit_test (test_hugepage_name),
    cmocka_unit_test (test_devices_allowed),   cmocka_unit_test (test_apply_rejects_bad_values),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
