/* test_cgroup_path.c - pure parts of src/cgroup: container cgroup path
 * computation (cgroupfs and systemd forms), /proc/self/cgroup parsing and
 * mountinfo layout detection. */
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
#include "../../src/cgroup/manager.h"

static void
expect_path (const char *cgroups_path, const char *id, bool systemd, const char *own, const char *want)
{
  pr_error *err = NULL;
  char *out = NULL;
  int r = pr_cgroup_path_compute (cgroups_path, id, systemd, own, &out, &err);
  if (r != 0)
    fail_msg ("path `%s` failed: %s", cgroups_path ? cgroups_path : "(null)", err ? err->msg : "?");
  assert_string_equal (out, want);
  free (out);
}

static void
expect_einval (const char *cgroups_path, const char *id, bool systemd, const char *own)
{
  pr_error *err = NULL;
  char *out = NULL;
  int r = pr_cgroup_path_compute (cgroups_path, id, systemd, own, &out, &err);
  if (r == 0)
    fail_msg ("path `%s` accepted as `%s`", cgroups_path ? cgroups_path : "(null)", out);
  assert_non_null (err);
  assert_int_equal (err->errnum, EINVAL);
  pr_error_free (&err);
}

static void
test_absolute (void **state)
{
  expect_path ("/proctor/c1", "c1", false, "/user/1", "/proctor/c1");
  expect_path ("/a//b/./c/", "x", false, "/", "/a/b/c");
  /* ".." never climbs out of the hierarchy */
  expect_path ("/../../etc", "x", false, "/", "/etc");
  expect_path ("/a/../b", "x", false, "/", "/b");
}

static void
test_relative (void **state)
{
  expect_path ("foo/bar", "c1", false, "/", "/foo/bar");
  expect_path ("foo", "c1", false, "/user.slice/session-1.scope", "/user.slice/session-1.scope/foo");
  expect_path ("../sib", "c1", false, "/parent/me", "/parent/sib");
  /* not systemd: colons are just characters */
  expect_path ("machine.slice:libpod:abc", "c1", false, "/", "/machine.slice:libpod:abc");
}

static void
test_empty (void **state)
{
  expect_path ("", "c1", false, "/", "/c1");
  expect_path (NULL, "c1", false, "/", "/c1");
  expect_path (NULL, "c1", false, "/runner/x", "/runner/x/c1");
  expect_einval ("", "", false, "/");
  expect_einval (NULL, NULL, false, "/");
}

static void
test_root_refused (void **state)
{
  expect_einval ("/", "c1", false, "/");
  expect_einval ("/a/..", "c1", false, "/");
  expect_einval ("..", "c1", false, "/a");
}

static void
test_systemd_valid (void **state)
{
  expect_path ("machine.slice:libpod:abc", "c1", true, NULL, "/machine.slice/libpod-abc.scope");
  expect_path ("system.slice:docker:0123", "c1", true, NULL, "/system.slice/docker-0123.scope");
  expect_path ("a-b-c.slice:p:n", "c1", true, NULL, "/a.slice/a-b.slice/a-b-c.slice/p-n.scope");
  expect_path ("kubepods-besteffort-pod12.slice:cri-containerd:cid", "c1", true, NULL,
               "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12.slice/cri-containerd-cid.scope");
  expect_path ("-.slice:p:n", "c1", true, NULL, "/p-n.scope");
  expect_path (":p:n", "c1", true, NULL, "/system.slice/p-n.scope");
  expect_path ("user.slice::n", "c1", true, NULL, "/user.slice/n.scope");
  /* a slice unit is placed by its own name */
  expect_path ("system.slice:p:foo-bar.slice", "c1", true, NULL, "/foo.slice/foo-bar.slice");
  /* empty: runc-like default */
  expect_path ("", "c1", true, NULL, "/system.slice/proctor-c1.scope");
  expect_path (NULL, "c1", true, NULL, "/system.slice/proctor-c1.scope");
}

static void
test_systemd_invalid (void **state)
{
  expect_einval ("/abs/path", "c1", true, NULL);
  expect_einval ("machine.slice:libpod", "c1", true, NULL);
  expect_einval ("a:b:c:d", "c1", true, NULL);
  expect_einval ("machine:libpod:abc", "c1", true, NULL);
  expect_einval ("-a.slice:p:n", "c1", true, NULL);
  expect_einval ("a-.slice:p:n", "c1", true, NULL);
  expect_einval ("a--b.slice:p:n", "c1", true, NULL);
  expect_einval ("a/b.slice:p:n", "c1", true, NULL);
  expect_einval (".slice:p:n", "c1", true, NULL);
  expect_einval ("machine.slice:p:", "c1", true, NULL);
  expect_einval ("machine.slice:p:a/b", "c1", true, NULL);
  expect_einval ("machine.slice:p/x:n", "c1", true, NULL);
  expect_einval ("", "", true, NULL);
}

static void
test_own_parse (void **state)
{
  pr_error *err = NULL;
  char *out = NULL;
  assert_int_equal (pr_cgroup_own_parse ("9:name=systemd:/a/b\n8:pids:/\n0::/\n", &out, &err), 0);
  assert_string_equal (out, "/a/b");
  free (out);
  assert_int_equal (pr_cgroup_own_parse ("0::/user.slice/x.scope\n", &out, &err), 0);
  assert_string_equal (out, "/user.slice/x.scope");
  free (out);
  assert_int_equal (pr_cgroup_own_parse ("1:cpu:/weird:name\n", &out, &err), 0);
  assert_string_equal (out, "/weird:name");
  free (out);
  assert_int_equal (pr_cgroup_own_parse ("garbage\n", &out, &err), -1);
  assert_int_equal (err->errnum, EINVAL);
  pr_error_free (&err);
}

static const char hybrid_mi[]
    = "22 1 0:21 / /sys rw - sysfs sysfs rw\n"
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
      "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset,clone_children\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
      "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup "
      "rw,xattr,release_agent=/lib/x,name=systemd\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
      "99 1 0:35 /docker/x /mnt/mem rw - cgroup cgroup rw,memory\n"
      "98 1 0:32 /sub /mnt/mem2 rw - cgroup cgroup rw,memory\n";

static void
test_mounts_hybrid (void **state)
{
  pr_error *err = NULL;
  struct pr_cgroup_mounts m = { 0 };
  assert_int_equal (pr_cgroup_mounts_parse (hybrid_mi, &m, &err), 0);
  assert_int_equal (m.layout, PR_CGROUP_HYBRID);
  /* cpu,cpuacct  cpuset  memory  pids  systemd  unified  /mnt/mem(0:35) ; 0:32 dup dropped */
  assert_int_equal (m.n, 7);
  const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (&m, "cpuacct");
  assert_non_null (h);
  assert_string_equal (h->mountpoint, "/sys/fs/cgroup/cpu,cpuacct");
  assert_ptr_equal (h, pr_cgroup_mounts_find (&m, "cpu"));
  h = pr_cgroup_mounts_find (&m, "name=systemd");
  assert_non_null (h);
  assert_null (h->controllers[1]); /* xattr / release_agent are options */
  h = pr_cgroup_mounts_find (&m, "cpuset");
  assert_string_equal (h->controllers[0], "cpuset");
  assert_null (h->controllers[1]);
  assert_null (pr_cgroup_mounts_find (&m, "hugetlb"));
  h = pr_cgroup_mounts_find (&m, "unified");
  assert_non_null (h);
  assert_true (h->is_v2);
  assert_string_equal (h->mountpoint, "/sys/fs/cgroup/unified");

  char *d = pr_cgroup_hier_dir (pr_cgroup_mounts_find (&m, "memory"), "/c1");
  assert_string_equal (d, "/sys/fs/cgroup/memory/c1");
  free (d);
  /* a subtree mount strips its root */
  struct pr_cgroup_hier sub = { .mountpoint = "/mnt/mem", .root = "/docker/x" };
  d = pr_cgroup_hier_dir (&sub, "/docker/x/c1");
  assert_string_equal (d, "/mnt/mem/c1");
  free (d);
  pr_cgroup_mounts_clear (&m);
}

static void
test_mounts_unified_and_legacy (void **state)
{
  pr_error *err = NULL;
  struct pr_cgroup_mounts m = { 0 };
  assert_int_equal (pr_cgroup_mounts_parse ("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
                                            "50 30 0:40 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n",
                                            &m, &err),
                    0);
  assert_int_equal (m.layout, PR_CGROUP_UNIFIED);
  assert_int_equal (m.n, 1);
  const struct pr_cgroup_hier *h = pr_cgroup_mounts_find (&m, "memory");
  assert_non_null (h);
  char *d = pr_cgroup_hier_dir (h, "/system.slice/x.scope");
  assert_string_equal (d, "/sys/fs/cgroup/system.slice/x.scope");
  free (d);
  pr_cgroup_mounts_clear (&m);

  assert_int_equal (pr_cgroup_mounts_parse ("35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
                                            "36 31 0:33 / /sys/fs/cgroup/my\\040dir rw - cgroup cgroup rw,devices\n",
                                            &m, &err),
                    0);
  assert_int_equal (m.layout, PR_CGROUP_LEGACY);
  assert_null (pr_cgroup_mounts_unified (&m));
  assert_string_equal (pr_cgroup_mounts_find (&m, "devices")->mountpoint, "/sys/fs/cgroup/my dir");
  pr_cgroup_mounts_clear (&m);

  /* cgroup2 mounted over a hybrid tree (container mount namespace): the
   * v1 mounts and the old unified one are hidden. */
  char *over = NULL;
  if (asprintf (&over, "%s65 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 none rw\n", hybrid_mi) < 0)
    fail ();
  assert_int_equal (pr_cgroup_mounts_parse (over, &m, &err), 0);
  free (over);
  assert_int_equal (m.layout, PR_CGROUP_UNIFIED);
  assert_int_equal (m.n, 1);
  assert_string_equal (m.h[0].mountpoint, "/sys/fs/cgroup");
  pr_cgroup_mounts_clear (&m);

  assert_int_equal (pr_cgroup_mounts_parse ("22 1 0:21 / /sys rw - sysfs sysfs rw\n", &m, &err), -1);
  assert_int_equal (err->errnum, ENOENT);
  pr_error_free (&err);
}

/* The driver is chosen in one place from runc's and crun's flags. */
static void
expect_driver (const char *flag, bool systemd, enum pr_cgroup_driver want)
{
  pr_error *err = NULL;
  enum pr_cgroup_driver d = (enum pr_cgroup_driver) -1;
  if (pr_cgroup_driver_choose (flag, systemd, &d, &err) != 0)
    fail_msg ("driver `%s` failed: %s", flag ? flag : "(null)", err ? err->msg : "?");
  assert_int_equal (d, want);
}

static void
test_driver_choose (void **state)
{
  (void) state;
  expect_driver (NULL, false, PR_CGROUP_DRIVER_CGROUPFS);
  expect_driver (NULL, true, PR_CGROUP_DRIVER_SYSTEMD);
  expect_driver ("cgroupfs", false, PR_CGROUP_DRIVER_CGROUPFS);
  /* --systemd-cgroup next to --cgroup-manager cgroupfs: systemd, as before */
  expect_driver ("cgroupfs", true, PR_CGROUP_DRIVER_SYSTEMD);
  expect_driver ("systemd", false, PR_CGROUP_DRIVER_SYSTEMD);
  /* disabled wins over --systemd-cgroup: no cgroup at all */
  expect_driver ("disabled", true, PR_CGROUP_DRIVER_DISABLED);
  expect_driver ("disabled", false, PR_CGROUP_DRIVER_DISABLED);

  pr_error *err = NULL;
  enum pr_cgroup_driver d;
  assert_int_equal (pr_cgroup_driver_choose ("nonsense", false, &d, &err), -1);
  assert_int_equal (err->errnum, EINVAL);
  assert_non_null (strstr (err->msg, "unknown --cgroup-manager `nonsense`"));
  pr_error_free (&err);
  assert_int_equal (pr_cgroup_driver_choose ("", false, &d, &err), -1);
  pr_error_free (&err);
}

/* A container without a cgroup (state.json's "" path) gets the disabled
 * driver whatever systemd_cgroup says; its lifecycle steps do nothing and
 * what asks the cgroup itself fails with EINVAL rather than touching a
 * path. */
static void
test_manager_open (void **state)
{
  (void) state;
  struct pr_cgroup_manager m;
  pr_cgroup_manager_open ("", true, &m);
  assert_int_equal (m.driver, PR_CGROUP_DRIVER_DISABLED);
  assert_null (m.path);
  assert_false (pr_cgroup_manager_has_cgroup (&m));
  pr_error *err = NULL;
  assert_int_equal (m.ops->setup (&m, NULL, &err), 0);
  assert_int_equal (m.ops->start (&m, 1, NULL, &err), 0);
  assert_int_equal (m.ops->teardown (&m, "test", &err), 0);
  bool frozen = true;
  assert_int_equal (m.ops->is_frozen (&m, &frozen), 0);
  assert_false (frozen);
  assert_int_equal (m.ops->freeze (&m, true, &err), -1);
  assert_int_equal (err->errnum, EINVAL);
  pr_error_free (&err);
  assert_int_equal (m.ops->kill (&m, 9, &err), -1);
  pr_error_free (&err);
  pr_cgroup_manager_clear (&m);

  pr_cgroup_manager_open (NULL, false, &m);
  assert_int_equal (m.driver, PR_CGROUP_DRIVER_DISABLED);
  pr_cgroup_manager_clear (&m);

  pr_cgroup_manager_open ("/system.slice/proctor-x.scope", true, &m);
  assert_int_equal (m.driver, PR_CGROUP_DRIVER_SYSTEMD);
  assert_string_equal (m.ops->name, "systemd");
  assert_string_equal (m.path, "/system.slice/proctor-x.scope");
  pr_cgroup_manager_clear (&m);

  pr_cgroup_manager_open ("/c1", false, &m);
  assert_int_equal (m.driver, PR_CGROUP_DRIVER_CGROUPFS);
  assert_string_equal (m.ops->name, "cgroupfs");
  assert_true (pr_cgroup_manager_has_cgroup (&m));
  pr_cgroup_manager_clear (&m);
}

/* The record of controllers proctor turned on: dropping a leaf frees only
 * the (level, controller) pairs no other leaf needs, deepest level first. */
static void
test_v2_record_drop (void **state)
{
  (void) state;
  char *lines[] = {
    strdup ("/u\thugetlb\t/u/p/a"), strdup ("/u/p\thugetlb\t/u/p/a"),
    strdup ("/u\thugetlb\t/u/q/b"), strdup ("/u/q\thugetlb\t/u/q/b"),
  };
  assert_true (pr_cgroup_v2_record_has (lines, 4, "/u", "hugetlb"));
  assert_false (pr_cgroup_v2_record_has (lines, 4, "/u", "huge"));
  assert_false (pr_cgroup_v2_record_has (lines, 4, "/u/p", "pids"));
  char **freed = NULL;
  /* a: /u/p goes, /u stays (b needs it). */
  size_t n = pr_cgroup_v2_record_drop (lines, 4, "/u/p/a", &freed);
  assert_int_equal (n, 1);
  assert_string_equal (freed[0], "/u/p\thugetlb");
  assert_null (lines[0]);
  assert_null (lines[1]);
  free (freed[0]);
  free (freed);
  /* An unknown leaf frees nothing. */
  n = pr_cgroup_v2_record_drop (lines, 4, "/u/p/zz", &freed);
  assert_int_equal (n, 0);
  free (freed);
  /* b: both of its levels go, the deeper one first. */
  n = pr_cgroup_v2_record_drop (lines, 4, "/u/q/b", &freed);
  assert_int_equal (n, 2);
  assert_string_equal (freed[0], "/u/q\thugetlb");
  assert_string_equal (freed[1], "/u\thugetlb");
  for (size_t i = 0; i < n; i++)
    free (freed[i]);
  free (freed);
  for (size_t i = 0; i < 4; i++)
    assert_null (lines[i]);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_absolute),
    cmocka_unit_test (test_relative),
    cmocka_unit_test (test_empty),
    cmocka_unit_test (test_root_refused),
    cmocka_unit_test (test_systemd_valid),
    cmocka_unit_test (test_systemd_invalid),
    cmocka_unit_test (test_own_parse),
    cmocka_unit_test (test_mounts_hybrid),
    cmocka_unit_test (test_mounts_unified_and_legacy),
    cmocka_unit_test (test_driver_choose),
    cmocka_unit_test (test_manager_open),
    cmocka_unit_test (test_v2_record_drop),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
