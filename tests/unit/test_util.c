/* test_util.c - unit tests for src/base/: util.c (files, string vectors,
 * integer parsing, mkdir -p, paths under a directory), error.c
 * (pr_error), proc.c (process start times), json.c (yajl generator text)
 * and env.c (KEY=VALUE vectors). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../src/base/env.h"
#include "../../src/base/error.h"
#include "../../src/base/json.h"
#include "../../src/base/proc.h"
#include "../../src/base/util.h"

/* A fresh temporary directory per test, removed (recursively, it is
 * shallow) by the teardown. */
static int
setup_tmpdir (void **state)
{
  char *dir = xstrdup ("/tmp/test_util.XXXXXX");
  if (mkdtemp (dir) == NULL)
    return -1;
  *state = dir;
  return 0;
}

static int
teardown_tmpdir (void **state)
{
  _cleanup_free_ char *cmd = xasprintf ("rm -rf '%s'", (char *) *state);
  free (*state);
  return system (cmd) == 0 ? 0 : -1;
}

static void
test_file_round_trip (void **state)
{
  const char *dir = *state;
  pr_error *err = NULL;
  _cleanup_close_ int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (dfd >= 0);

  /* Binary data with NULs, larger than the read buffer's first chunk. */
  size_t n = 10000;
  _cleanup_free_ char *data = xmalloc (n);
  for (size_t i = 0; i < n; i++)
    data[i] = (char) (i * 7);
  mode_t old = umask (0);
  assert_int_equal (pr_write_file_at (dfd, "blob", data, n, 0640, &err), 0);
  umask (old);
  assert_null (err);

  struct stat st;
  assert_int_equal (fstatat (dfd, "blob", &st, 0), 0);
  assert_int_equal (st.st_mode & 07777, 0640);
  assert_int_equal (st.st_size, n);

  _cleanup_free_ char *back = NULL;
  size_t len = 0;
  assert_int_equal (pr_read_file_at (dfd, "blob", &back, &len, &err), 0);
  assert_int_equal (len, n);
  assert_memory_equal (back, data, n);
  assert_int_equal (back[len], '\0');

  /* Rewriting truncates; the absolute-path variants agree. */
  _cleanup_free_ char *path = xasprintf ("%s/blob", dir);
  assert_int_equal (pr_write_file (path, "hi", 2, &err), 0);
  _cleanup_free_ char *small = NULL;
  assert_int_equal (pr_read_file (path, &small, NULL, &err), 0);
  assert_string_equal (small, "hi");

  /* An empty file reads as "". */
  assert_int_equal (pr_write_file_at (dfd, "empty", "", 0, 0600, &err), 0);
  _cleanup_free_ char *empty = NULL;
  assert_int_equal (pr_read_file_at (dfd, "empty", &empty, &len, &err), 0);
  assert_int_equal (len, 0);
  assert_string_equal (empty, "");
}

static void
test_file_errors (void **state)
{
  const char *dir = *state;
  pr_error *err = NULL;
  char *out = NULL;

  _cleanup_free_ char *missing = xasprintf ("%s/nope", dir);
  assert_int_equal (pr_read_file (missing, &out, NULL, &err), -1);
  assert_null (out);
  assert_int_equal (err->errnum, ENOENT);
  assert_non_null (strstr (err->msg, missing));
  assert_non_null (strstr (err->msg, "no such file or directory"));
  pr_error_free (&err);

  _cleanup_free_ char *nodir = xasprintf ("%s/no/such/file", dir);
  assert_int_equal (pr_write_file (nodir, "x", 1, &err), -1);
  assert_int_equal (err->errnum, ENOENT);
  pr_error_free (&err);

  /* Reading a directory fails with EISDIR at read(2). */
  assert_int_equal (pr_read_file (dir, &out, NULL, &err), -1);
  assert_int_equal (err->errnum, EISDIR);
  pr_error_free (&err);
}

static void
test_strv (void **state)
{
  assert_int_equal (pr_strv_len (NULL), 0);
  pr_strv_free (NULL);

  _cleanup_strv_ char **v = NULL;
  v = pr_strv_append (v, "a");
  v = pr_strv_append (v, "b");
  v = pr_strv_append (v, "");
  assert_int_equal (pr_strv_len (v), 3);
  assert_string_equal (v[0], "a");
  assert_string_equal (v[2], "");
  assert_null (v[3]);

  _cleanup_strv_ char **d = pr_strv_dup (v);
  assert_int_equal (pr_strv_len (d), 3);
  assert_ptr_not_equal (d[0], v[0]);
  assert_string_equal (d[1], "b");

  _cleanup_strv_ char **e = pr_strv_dup (NULL);
  assert_non_null (e);
  assert_null (e[0]);
}

static void
test_alloc_helpers (void **state)
{
  assert_null (xstrdup (NULL));
  _cleanup_free_ char *s = xasprintf ("%s-%d", "x", 42);
  assert_string_equal (s, "x-42");
  _cleanup_free_ int *z = xmalloc0 (4 * sizeof (int));
  assert_int_equal (z[3], 0);

  char *p = xstrdup ("owned");
  char *q = steal_pointer (&p);
  assert_null (p);
  assert_string_equal (q, "owned");
  free (q);

  int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int fd2 = steal_fd (&fd);
  assert_int_equal (fd, -1);
  assert_true (fd2 >= 0);
  close (fd2);
}

static void
test_parse_u64 (void **state)
{
  uint64_t v = 7;

  assert_int_equal (pr_parse_u64 ("0", &v), 0);
  assert_int_equal (v, 0);
  assert_int_equal (pr_parse_u64 ("1024", &v), 0);
  assert_int_equal (v, 1024);
  assert_int_equal (pr_parse_u64 ("18446744073709551615", &v), 0);
  assert_true (v == UINT64_MAX);

  static const struct
  {
    const char *s;
    int err;
  } bad[] = {
    { "18446744073709551616", ERANGE },
    { "99999999999999999999999", ERANGE },
    { "-1", EINVAL },
    { "", EINVAL },
    { "12a", EINVAL },
    { "5 ", EINVAL },
    { "0x10", EINVAL },
    { "1.5", EINVAL },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (bad); i++)
    {
      v = 7;
      errno = 0;
      if (pr_parse_u64 (bad[i].s, &v) != -1)
        fail_msg ("pr_parse_u64 (\"%s\") succeeded", bad[i].s);
      assert_int_equal (errno, bad[i].err);
      assert_int_equal (v, 7); /* untouched on error */
    }
  errno = 0;
  assert_int_equal (pr_parse_u64 (NULL, &v), -1);
  assert_int_equal (errno, EINVAL);
}

/* strtoull() alone would skip leading white space and accept a sign, so
 * " -1" would parse as UINT64_MAX and "+5" as 5. */
static void
test_parse_u64_strict (void **state)
{
  static const char *const bad[] = { " -1", "+5", " 5", "\t7" };
  uint64_t v;
  for (size_t i = 0; i < PR_ARRAY_SIZE (bad); i++)
    {
      errno = 0;
      assert_int_equal (pr_parse_u64 (bad[i], &v), -1);
      assert_int_equal (errno, EINVAL);
    }
}

static void
test_mkdir_p (void **state)
{
  const char *dir = *state;
  struct stat st;

  _cleanup_free_ char *deep = xasprintf ("%s/a/b/c", dir);
  assert_int_equal (pr_mkdir_p (deep, 0750), 0);
  assert_int_equal (stat (deep, &st), 0);
  assert_true (S_ISDIR (st.st_mode));
  /* Existing directories are fine, also with a trailing slash. */
  assert_int_equal (pr_mkdir_p (deep, 0750), 0);
  _cleanup_free_ char *slash = xasprintf ("%s/a/b/d/", dir);
  mode_t old = umask (0);
  int r = pr_mkdir_p (slash, 0701);
  umask (old);
  assert_int_equal (r, 0);
  assert_int_equal (stat (slash, &st), 0);
  assert_true (S_ISDIR (st.st_mode));
  assert_int_equal (st.st_mode & 0777, 0701);

  /* A regular file in the middle of the path is an error. */
  _cleanup_free_ char *file = xasprintf ("%s/file", dir);
  pr_error *err = NULL;
  assert_int_equal (pr_write_file (file, "", 0, &err), 0);
  _cleanup_free_ char *under = xasprintf ("%s/file/sub", dir);
  errno = 0;
  assert_int_equal (pr_mkdir_p (under, 0755), -1);
  assert_int_equal (errno, ENOTDIR);
}

/* An existing last component that is not a directory is ENOTDIR, not a
 * silent success. */
static void
test_mkdir_p_existing_file (void **state)
{
  const char *dir = *state;
  pr_error *err = NULL;
  _cleanup_free_ char *file = xasprintf ("%s/file", dir);
  assert_int_equal (pr_write_file (file, "", 0, &err), 0);
  errno = 0;
  assert_int_equal (pr_mkdir_p (file, 0755), -1);
  assert_int_equal (errno, ENOTDIR);
}

static void
test_error_set (void **state)
{
  pr_error *err = NULL;

  assert_int_equal (pr_error_set (&err, 0, "bad field `%s`", "x"), -1);
  assert_non_null (err);
  assert_int_equal (err->errnum, 0);
  assert_string_equal (err->msg, "bad field `x`");

  /* The first error wins. */
  assert_int_equal (pr_error_set (&err, EPERM, "second"), -1);
  assert_string_equal (err->msg, "bad field `x`");
  pr_error_free (&err);
  assert_null (err);
  pr_error_free (&err);
  pr_error_free (NULL);

  assert_int_equal (pr_error_set (&err, ENOENT, "open `%s`", "/x"), -1);
  assert_int_equal (err->errnum, ENOENT);
  _cleanup_free_ char *want = xstrdup ("open `/x`: no such file or directory");
  assert_string_equal (err->msg, want);
  pr_error_free (&err);

  /* A NULL destination is allowed: the error is dropped. */
  assert_int_equal (pr_error_set (NULL, EIO, "ignored"), -1);
}

static void
test_error_wrap (void **state)
{
  _cleanup_error_ pr_error *err = NULL;

  /* Wrapping nothing is a no-op. */
  assert_int_equal (pr_error_wrap (&err, "ctx"), -1);
  assert_null (err);
  assert_int_equal (pr_error_wrap (NULL, "ctx"), -1);

  pr_error_set (&err, EACCES, "open `%s`", "f");
  assert_int_equal (pr_error_wrap (&err, "load %s", "config"), -1);
  assert_int_equal (pr_error_wrap (&err, "create"), -1);
  _cleanup_free_ char *want = xstrdup ("create: load config: open `f`: permission denied");
  assert_string_equal (err->msg, want);
  assert_int_equal (err->errnum, EACCES);
}

static void
test_write_read_all (void **state)
{
  int p[2];
  assert_int_equal (pipe (p), 0);
  assert_int_equal (pr_write_all (p[1], "hello", 5), 0);
  close (p[1]);
  char buf[16] = "";
  /* Short input: returns what there was, at EOF. */
  assert_int_equal (pr_read_all (p[0], buf, sizeof buf), 5);
  assert_memory_equal (buf, "hello", 5);
  close (p[0]);
  errno = 0;
  assert_int_equal (pr_write_all (-1, "x", 1), -1);
  assert_int_equal (errno, EBADF);
}

/* pr_proc_start_time: this process has a start time, stable across
 * reads; a zombie, a reaped pid and pids <= 0 have none (0). */
static void
test_proc_start_time (void **state)
{
  unsigned long long self = pr_proc_start_time (getpid ());
  assert_true (self > 0);
  assert_true (self == pr_proc_start_time (getpid ()));
  assert_true (pr_proc_start_time (0) == 0);
  assert_true (pr_proc_start_time (-1) == 0);

  pid_t child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    _exit (0);
  /* Unreaped, the child is a zombie: its pid no longer names a live
   * process.  Poll until it has exited (state Z), bounded. */
  for (int i = 0; i < 1000 && pr_proc_start_time (child) != 0; i++)
    usleep (1000);
  assert_true (pr_proc_start_time (child) == 0);
  assert_int_equal (waitpid (child, NULL, 0), child);
  assert_true (pr_proc_start_time (child) == 0);
}

/* pr_json_gen_finish / _line: the generated text, NUL-terminated, with a
 * NUL inside a string escaped (so strlen is its length); nothing
 * generated gives "". */
static void
test_json_gen_finish (void **state)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  assert_non_null (g);
  yajl_gen_map_open (g);
  yajl_gen_string (g, (const unsigned char *) "k", 1);
  yajl_gen_string (g, (const unsigned char *) "a\0b", 3);
  yajl_gen_string (g, (const unsigned char *) "n", 1);
  yajl_gen_integer (g, 42);
  yajl_gen_map_close (g);
  _cleanup_free_ char *text = pr_json_gen_finish (g);
  assert_string_equal (text, "{\"k\":\"a\\u0000b\",\"n\":42}");

  g = yajl_gen_alloc (NULL);
  yajl_gen_array_open (g);
  yajl_gen_bool (g, 1);
  yajl_gen_array_close (g);
  _cleanup_free_ char *line = pr_json_gen_finish_line (g);
  assert_string_equal (line, "[true]\n");

  g = yajl_gen_alloc (NULL);
  _cleanup_free_ char *empty = pr_json_gen_finish (g);
  assert_string_equal (empty, "");
}

/* pr_env_*: names match whole (KEY, not KEYX or a prefix), the first
 * entry wins, set/override replace in place or append, unset removes
 * every copy and keeps the order. */
static void
test_env (void **state)
{
  assert_string_equal (pr_env_entry_value ("HOME=/root", "HOME"), "/root");
  assert_string_equal (pr_env_entry_value ("HOME=", "HOME"), "");
  assert_null (pr_env_entry_value ("HOMEX=/x", "HOME"));
  assert_null (pr_env_entry_value ("HOM=/x", "HOME"));
  assert_null (pr_env_entry_value ("HOME", "HOME"));

  assert_null (pr_env_get (NULL, "A"));
  char **env = pr_env_set (NULL, "A", "1");
  env = pr_env_set (env, "AB", "2");
  env = pr_env_set (env, "A", "3");
  assert_int_equal (pr_strv_len (env), 2);
  assert_string_equal (env[0], "A=3");
  assert_string_equal (env[1], "AB=2");
  assert_string_equal (pr_env_get (env, "A"), "3");
  assert_string_equal (pr_env_get (env, "AB"), "2");
  assert_null (pr_env_get (env, "B"));

  env = pr_env_override (env, "AB=x=y");
  env = pr_env_override (env, "C=");
  env = pr_env_override (env, "D");
  assert_int_equal (pr_strv_len (env), 4);
  assert_string_equal (env[1], "AB=x=y");
  assert_string_equal (pr_env_get (env, "AB"), "x=y");
  assert_string_equal (env[2], "C=");
  assert_string_equal (env[3], "D");
  assert_null (pr_env_get (env, "D"));

  /* A duplicate: get sees the first, unset removes both. */
  env = pr_strv_append (env, "A=4");
  assert_string_equal (pr_env_get (env, "A"), "3");
  env = pr_env_unset (env, "A");
  assert_int_equal (pr_strv_len (env), 3);
  assert_string_equal (env[0], "AB=x=y");
  assert_string_equal (env[1], "C=");
  assert_string_equal (env[2], "D");
  env = pr_env_unset (env, "NONE");
  assert_int_equal (pr_strv_len (env), 3);
  assert_null (pr_env_unset (NULL, "A"));
  pr_strv_free (env);
}

/* pr_path_is_under: whole components only; "/" holds every absolute
 * path; a trailing '/' on dir changes nothing. */
static void
test_path_is_under (void **state)
{
  assert_true (pr_path_is_under ("/a", "/a"));
  assert_true (pr_path_is_under ("/a/b", "/a"));
  assert_true (pr_path_is_under ("/a/b/c", "/a/b"));
  assert_false (pr_path_is_under ("/ab", "/a"));
  assert_false (pr_path_is_under ("/a", "/a/b"));
  assert_false (pr_path_is_under ("/b/a", "/a"));
  assert_true (pr_path_is_under ("/a/b", "/a/"));
  assert_true (pr_path_is_under ("/", "/"));
  assert_true (pr_path_is_under ("/x/y", "/"));
  assert_true (pr_path_is_under ("/proc/self", "/proc"));
  assert_false (pr_path_is_under ("/processes", "/proc"));
}

/* base/json.c's tree writer and merge, the rule `update` keeps the
 * state's config.json with: objects merge key by key (over wins; base's
 * keys first, in order), anything else is replaced; numbers keep their
 * text. */
static char *
merged_text (const char *base, const char *over)
{
  yajl_val b = base ? yajl_tree_parse (base, NULL, 0) : NULL;
  yajl_val o = over ? yajl_tree_parse (over, NULL, 0) : NULL;
  yajl_gen g = yajl_gen_alloc (NULL);
  pr_json_gen_merged (g, b, o);
  if (b)
    yajl_tree_free (b);
  if (o)
    yajl_tree_free (o);
  return pr_json_gen_finish (g);
}

static void
test_json_merge (void **state)
{
  (void) state;
  char *t = merged_text ("{\"memory\":{\"limit\":1,\"swap\":2},\"pids\":{\"limit\":5},\"devices\":[1,2]}",
                         "{\"memory\":{\"limit\":3},\"cpu\":{\"cpus\":\"0-1\"},\"devices\":[9]}");
  assert_string_equal (t, "{\"memory\":{\"limit\":3,\"swap\":2},\"pids\":{\"limit\":5},\"devices\":[9],"
                          "\"cpu\":{\"cpus\":\"0-1\"}}");
  free (t);
  /* no base: over as it is; no over: base as it is (1e3 keeps its text) */
  t = merged_text (NULL, "{\"a\":true,\"b\":null}");
  assert_string_equal (t, "{\"a\":true,\"b\":null}");
  free (t);
  t = merged_text ("{\"a\":1e3,\"s\":\"x\\\"y\"}", NULL);
  assert_string_equal (t, "{\"a\":1e3,\"s\":\"x\\\"y\"}");
  free (t);
  /* a scalar over an object replaces it */
  t = merged_text ("{\"a\":{\"b\":1}}", "{\"a\":7}");
  assert_string_equal (t, "{\"a\":7}");
  free (t);

  yajl_val o = yajl_tree_parse ("{\"k\":1,\"k2\":[]}", NULL, 0);
  assert_non_null (pr_json_object_get (o, "k2"));
  assert_null (pr_json_object_get (o, "nope"));
  assert_null (pr_json_object_get (o->u.object.values[1], "k"));
  assert_null (pr_json_object_get (NULL, "k"));
  yajl_tree_free (o);
}

/* pr_close_fds_except keeps exactly the listed fds >= 3 (unsorted, with a
 * duplicate and a negative entry) and closes every other one, stdio
 * untouched; in a child, so the test runner's own fds are not closed. */
static void
test_close_fds_except (void **state)
{
  (void) state;
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      int fds[8];
      for (int i = 0; i < 8; i++)
        if ((fds[i] = open ("/dev/null", O_RDONLY)) < 0)
          _exit (10);
      int keep[] = { fds[5], -1, fds[1], fds[5], fds[7] };
      pr_close_fds_except (keep, 5);
      for (int i = 0; i < 8; i++)
        {
          bool open_now = fcntl (fds[i], F_GETFD) >= 0;
          bool kept = i == 1 || i == 5 || i == 7;
          if (open_now != kept)
            _exit (20 + i);
        }
      _exit (fcntl (0, F_GETFD) >= 0 && fcntl (2, F_GETFD) >= 0 ? 0 : 30);
    }
  int status = 0;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_file_round_trip, setup_tmpdir, teardown_tmpdir),
    cmocka_unit_test_setup_teardown (test_file_errors, setup_tmpdir, teardown_tmpdir),
    cmocka_unit_test (test_strv),
    cmocka_unit_test (test_alloc_helpers),
    cmocka_unit_test (test_parse_u64),
    cmocka_unit_test (test_parse_u64_strict),
    cmocka_unit_test_setup_teardown (test_mkdir_p, setup_tmpdir, teardown_tmpdir),
    cmocka_unit_test_setup_teardown (test_mkdir_p_existing_file, setup_tmpdir, teardown_tmpdir),
    cmocka_unit_test (test_error_set),
    cmocka_unit_test (test_error_wrap),
    cmocka_unit_test (test_write_read_all),
    cmocka_unit_test (test_proc_start_time),
    cmocka_unit_test (test_json_gen_finish),
    cmocka_unit_test (test_json_merge),
    cmocka_unit_test (test_env),
    cmocka_unit_test (test_path_is_under),
    cmocka_unit_test (test_close_fds_except),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
