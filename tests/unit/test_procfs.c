/* test_procfs.c - unit tests for src/linux/procfs.c: files are read from a
 * private procfs, symlinks and ".." are refused, and a mount placed over
 * the visible /proc/sys/kernel/ostype (as a racing shared mount would,
 * CVE-2025-52881) does not change what is opened. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/linux/procfs.h"

/* Reads up to len-1 bytes of the procfs file sub into buf; returns the
 * errno of pr_procfs_open, 0 on success. */
static int
read_proc (const char *sub, char *buf, size_t len)
{
  pr_error *err = NULL;
  int fd = -1;
  if (pr_procfs_open (sub, O_RDONLY, &fd, &err) < 0)
    {
      int e = err->errnum;
      pr_error_free (&err);
      return e;
    }
  ssize_t n = read (fd, buf, len - 1);
  close (fd);
  buf[n > 0 ? n : 0] = '\0';
  return 0;
}

static void
test_reads_a_sysctl (void **state)
{
  (void) state;
  char buf[64];
  assert_int_equal (read_proc ("sys/kernel/ostype", buf, sizeof buf), 0);
  assert_string_equal (buf, "Linux\n");
}

static void
test_refuses_symlinks_and_dotdot (void **state)
{
  (void) state;
  char buf[64];
  assert_int_equal (read_proc ("self/status", buf, sizeof buf), ELOOP);
  assert_int_equal (read_proc ("../etc/hostname", buf, sizeof buf), EXDEV);
}

/* In a private mount namespace, a file is bind-mounted over the visible
 * /proc/sys/kernel/ostype; pr_procfs_open must still open the sysctl. */
static void
test_mount_over_visible_proc_is_ignored (void **state)
{
  (void) state;
  if (geteuid () != 0)
    skip ();
  char tmpl[] = "/tmp/prt-procfs-XXXXXX";
  int tfd = mkstemp (tmpl);
  assert_true (tfd >= 0);
  assert_int_equal (write (tfd, "Fake\n", 5), 5);
  close (tfd);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      char buf[64] = "";
      if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0
          || mount (tmpl, "/proc/sys/kernel/ostype", NULL, MS_BIND, NULL) < 0)
        _exit (2);
      int fd = open ("/proc/sys/kernel/ostype", O_RDONLY);
      if (fd < 0 || read (fd, buf, sizeof buf - 1) <= 0 || strcmp (buf, "Fake\n") != 0)
        _exit (3); /* the mount is not in the way: the test would prove nothing */
      close (fd);
      memset (buf, 0, sizeof buf);
      _exit (read_proc ("sys/kernel/ostype", buf, sizeof buf) == 0 && strcmp (buf, "Linux\n") == 0 ? 0 : 1);
    }
  int status = 0;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  unlink (tmpl);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_reads_a_sysctl),
    cmocka_unit_test (test_refuses_symlinks_and_dotdot),
    cmocka_unit_test (test_mount_over_visible_proc_is_ignored),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
