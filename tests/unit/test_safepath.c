/* test_safepath.c - unit tests for src/linux/safepath.c: lookups inside a
 * hostile rootfs (absolute and relative symlinks pointing at the host,
 * symlink loops, dangling symlinks, a /dev/null symlink to a host file)
 * never touch anything outside the rootfs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/linux/safepath.h"

struct fixture
{
  char base[128]; /* temp dir holding root/ and host/ */
  char root[PATH_MAX];
  char host[PATH_MAX];
  char host_file[PATH_MAX];
  int rootfd;
};

static void
xsymlink (const char *target, const char *dir, const char *name)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", dir, name);
  assert_int_equal (symlink (target, p), 0);
}

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof *f);
  strcpy (f->base, "/tmp/test-safepath-XXXXXX");
  assert_non_null (mkdtemp (f->base));
  snprintf (f->root, sizeof f->root, "%s/root", f->base);
  snprintf (f->host, sizeof f->host, "%s/host", f->base);
  snprintf (f->host_file, sizeof f->host_file, "%s/host/secret", f->base);
  assert_int_equal (mkdir (f->root, 0755), 0);
  assert_int_equal (mkdir (f->host, 0755), 0);
  assert_int_equal (pr_write_file (f->host_file, "HOST", 4, NULL), 0);

  char dev[PATH_MAX + 8];
  snprintf (dev, sizeof dev, "%s/dev", f->root);
  assert_int_equal (mkdir (dev, 0755), 0);

  xsymlink (f->host, f->root, "abs");                   /* /abs -> host dir (absolute) */
  xsymlink ("../../../../../../../../..", f->root, "up"); /* /up -> far above the root */
  xsymlink (f->host_file, dev, "null");                /* /dev/null -> host file */
  xsymlink ("loop2", f->root, "loop1");
  xsymlink ("loop1", f->root, "loop2");
  xsymlink ("/target/dir", f->root, "dangling");       /* dangling, absolute */
  xsymlink ("../run/resolv.conf", f->root, "resolv.conf"); /* dangling file link */

  f->rootfd = open (f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (f->rootfd >= 0);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  close (f->rootfd);
  char cmd[PATH_MAX + 16];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", f->base);
  assert_int_equal (system (cmd), 0);
  free (f);
  return 0;
}

/* The host directory must still hold exactly the one file put there. */
static void
assert_host_untouched (struct fixture *f)
{
  _cleanup_free_ char *data = NULL;
  assert_int_equal (pr_read_file (f->host_file, &data, NULL, NULL), 0);
  assert_string_equal (data, "HOST");
  char p[PATH_MAX * 2];
  struct stat st;
  snprintf (p, sizeof p, "%s/a", f->host);
  assert_int_equal (lstat (p, &st), -1);
  snprintf (p, sizeof p, "%s/x", f->base);
  assert_int_equal (lstat (p, &st), -1);
  assert_int_equal (lstat ("/target", &st), -1);
}

static bool
inside_root (struct fixture *f, int fd)
{
  char link[64], real[PATH_MAX];
  pr_fd_path (fd, link, sizeof link);
  ssize_t n = readlink (link, real, sizeof real - 1);
  assert_true (n > 0);
  real[n] = '\0';
  size_t l = strlen (f->root);
  return strncmp (real, f->root, l) == 0 && (real[l] == '/' || real[l] == '\0');
}

static void
test_fd_path (void **state)
{
  char buf[32];
  pr_fd_path (42, buf, sizeof buf);
  assert_string_equal (buf, "/proc/self/fd/42");
}

static void
test_open_absolute_symlink_stays_inside (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  /* /abs/secret would be the host file if the link were followed on the host. */
  assert_int_equal (pr_safe_open (f->rootfd, "/abs/secret", O_RDONLY, 0, &fd, &err), -1);
  assert_non_null (err);
  assert_int_equal (err->errnum, ENOENT);
  assert_non_null (strstr (err->msg, "/abs/secret"));
  pr_error_free (&err);
  assert_host_untouched (f);
}

static void
test_open_dotdot_clamped_to_root (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_open (f->rootfd, "/up/../..", O_PATH | O_DIRECTORY, 0, &fd, &err), 0);
  assert_null (err);
  struct stat a, b;
  assert_int_equal (fstat (fd, &a), 0);
  assert_int_equal (stat (f->root, &b), 0);
  assert_int_equal (a.st_ino, b.st_ino);
  close (fd);
}

static void
test_open_loop (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_open (f->rootfd, "/loop1", O_PATH, 0, &fd, &err), -1);
  assert_int_equal (err->errnum, ELOOP);
  pr_error_free (&err);
}

static void
test_mkdir_p_through_absolute_symlink (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_mkdir_p (f->rootfd, "/abs/a/b", 0755, &fd, &err), 0);
  assert_true (inside_root (f, fd));
  close (fd);
  /* created as root/<host path>/a/b */
  char p[PATH_MAX * 3];
  struct stat st;
  snprintf (p, sizeof p, "%s%s/a/b", f->root, f->host);
  assert_int_equal (stat (p, &st), 0);
  assert_true (S_ISDIR (st.st_mode));
  assert_host_untouched (f);
}

static void
test_mkdir_p_through_relative_escape (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_mkdir_p (f->rootfd, "up/x", 0755, &fd, &err), 0);
  assert_true (inside_root (f, fd));
  close (fd);
  char p[PATH_MAX * 2];
  struct stat st;
  snprintf (p, sizeof p, "%s/x", f->root);
  assert_int_equal (stat (p, &st), 0);
  assert_host_untouched (f);
}

static void
test_mkdir_p_dangling_symlink_created_inside (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_mkdir_p (f->rootfd, "/dangling/sub", 0755, &fd, &err), 0);
  assert_true (inside_root (f, fd));
  close (fd);
  char p[PATH_MAX * 2];
  struct stat st;
  snprintf (p, sizeof p, "%s/target/dir/sub", f->root);
  assert_int_equal (stat (p, &st), 0);
  assert_host_untouched (f);
}

static void
test_mkdir_p_loop (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_mkdir_p (f->rootfd, "/loop1/x", 0755, &fd, &err), -1);
  assert_int_equal (err->errnum, ELOOP);
  assert_non_null (strstr (err->msg, "/loop1"));
  pr_error_free (&err);
}

static void
test_mkdir_p_not_a_dir (void **state)
{
  struct fixture *f = *state;
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/file", f->root);
  assert_int_equal (pr_write_file (p, "x", 1, NULL), 0);
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_mkdir_p (f->rootfd, "/file/sub", 0755, &fd, &err), -1);
  assert_int_equal (err->errnum, ENOTDIR);
  pr_error_free (&err);
}

static void
test_create_target_kinds (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  struct stat st;
  assert_int_equal (pr_safe_create_target (f->rootfd, "/etc/hostname", false, &fd, NULL), 0);
  assert_int_equal (fstat (fd, &st), 0);
  assert_true (S_ISREG (st.st_mode));
  close (fd);
  assert_int_equal (pr_safe_create_target (f->rootfd, "/mnt/data/", true, &fd, NULL), 0);
  assert_int_equal (fstat (fd, &st), 0);
  assert_true (S_ISDIR (st.st_mode));
  assert_true (inside_root (f, fd));
  close (fd);
  /* existing file is reused */
  assert_int_equal (pr_safe_create_target (f->rootfd, "etc/hostname", false, &fd, NULL), 0);
  close (fd);
}

static void
test_create_target_devnull_symlink_to_host (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_create_target (f->rootfd, "/dev/null", false, &fd, &err), 0);
  assert_null (err);
  assert_true (inside_root (f, fd));
  struct stat a, b;
  assert_int_equal (fstat (fd, &a), 0);
  assert_int_equal (stat (f->host_file, &b), 0);
  assert_true (a.st_ino != b.st_ino);
  close (fd);
  assert_host_untouched (f);
}

static void
test_create_target_dangling_file_link (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  assert_int_equal (pr_safe_create_target (f->rootfd, "/resolv.conf", false, &fd, NULL), 0);
  assert_true (inside_root (f, fd));
  close (fd);
  char p[PATH_MAX * 2];
  struct stat st;
  snprintf (p, sizeof p, "%s/run/resolv.conf", f->root);
  assert_int_equal (lstat (p, &st), 0);
  assert_true (S_ISREG (st.st_mode));
}

static void
test_create_target_loop (void **state)
{
  struct fixture *f = *state;
  int fd = -1;
  pr_error *err = NULL;
  assert_int_equal (pr_safe_create_target (f->rootfd, "/loop1", false, &fd, &err), -1);
  assert_int_equal (err->errnum, ELOOP);
  pr_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fd_path),
    cmocka_unit_test_setup_teardown (test_open_absolute_symlink_stays_inside, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_dotdot_clamped_to_root, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_loop, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdir_p_through_absolute_symlink, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdir_p_through_relative_escape, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdir_p_dangling_symlink_created_inside, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdir_p_loop, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdir_p_not_a_dir, setup, teardown),
    cmocka_unit_test_setup_teardown (test_create_target_kinds, setup, teardown),
    cmocka_unit_test_setup_teardown (test_create_target_devnull_symlink_to_host, setup, teardown),
    cmocka_unit_test_setup_teardown (test_create_target_dangling_file_link, setup, teardown),
    cmocka_unit_test_setup_teardown (test_create_target_loop, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
