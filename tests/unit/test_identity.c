/* test_identity.c - unit tests for src/linux/identity.c: user specs
 * resolved against a temporary rootfs's /etc/passwd and /etc/group (names,
 * numeric ids, supplementary groups, unknown users and groups, malformed
 * lines), symlinked files that point out of the rootfs (which must resolve
 * inside it, never to the host file), non-regular and oversized files, and
 * the highest ids for the agent's id map. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/linux/identity.h"

static const char passwd[] = "# a comment line\n"
                             "root:x:0:0:root:/root:/bin/sh\n"
                             "\n"
                             "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                             "broken line without colons\n"
                             "short:x:5\n"
                             "badid:x:notanumber:0::/home/badid:/bin/sh\n"
                             "huge:x:4294967295:0::/:/bin/sh\n"
                             "+nisuser::::::\n"
                             "agent:x:1000:1000:Agent,,,:/home/agent:/bin/bash\r\n"
                             "nohome:x:1001:1001:::/bin/sh\n"
                             "agent:x:9999:9999:duplicate, ignored:/nowhere:/bin/sh\n"
                             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin";

static const char group[] = "root:x:0:\n"
                            "daemon:x:1:\n"
                            "# comment:x:77:agent\n"
                            "wheel:x:10:root,agent\n"
                            "docker:x:999:agent\n"
                            "dup:x:10:agent\n"
                            "malformed:x:11\n"
                            "others:x:20:nohome,daemon\n"
                            "agent:x:1000:\n"
                            "staff:x:50:agentx,xagent\n"
                            "nogroup:x:65534:\n";

struct fixture
{
  char base[64];
  char root[PATH_MAX];
  int rootfd;
};

static void
write_at (const char *dir, const char *name, const char *data)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", dir, name);
  assert_int_equal (pr_write_file (p, data, strlen (data), NULL), 0);
}

static void
mkdir_at (const char *dir, const char *name)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", dir, name);
  assert_int_equal (mkdir (p, 0755), 0);
}

static void
symlink_at (const char *target, const char *dir, const char *name)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", dir, name);
  assert_int_equal (symlink (target, p), 0);
}

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof *f);
  strcpy (f->base, "/tmp/test-identity-XXXXXX");
  assert_non_null (mkdtemp (f->base));
  snprintf (f->root, sizeof f->root, "%s/root", f->base);
  assert_int_equal (mkdir (f->root, 0755), 0);
  mkdir_at (f->root, "etc");
  f->rootfd = open (f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (f->rootfd >= 0);
  *state = f;
  return 0;
}

static int
setup_image (void **state)
{
  setup (state);
  struct fixture *f = *state;
  char etc[PATH_MAX + 8];
  snprintf (etc, sizeof etc, "%s/etc", f->root);
  write_at (etc, "passwd", passwd);
  write_at (etc, "group", group);
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  close (f->rootfd);
  char cmd[256];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", f->base);
  assert_int_equal (system (cmd), 0);
  free (f);
  return 0;
}

static bool
has_group (const struct pr_identity *id, uint32_t g)
{
  for (size_t i = 0; i < id->n_groups; i++)
    if (id->groups[i] == g)
      return true;
  return false;
}

static void
test_by_name (void **state)
{
  struct fixture *f = *state;
  struct pr_identity id;
  pr_error *err = NULL;

  assert_int_equal (pr_identity_resolve (f->rootfd, "agent", &id, &err), 0);
  assert_int_equal (id.uid, 1000);
  assert_int_equal (id.gid, 1000);
  assert_string_equal (id.home, "/home/agent");
  /* wheel and docker list agent; dup shares gid 10 with wheel; staff lists
   * only look-alike names */
  assert_int_equal (id.n_groups, 2);
  assert_true (has_group (&id, 10));
  assert_true (has_group (&id, 999));
  assert_false (has_group (&id, 50));
  assert_false (has_group (&id, 77)); /* commented-out line */
  pr_identity_free_contents (&id);

  assert_int_equal (pr_identity_resolve (f->rootfd, "root", &id, &err), 0);
  assert_int_equal (id.uid, 0);
  assert_int_equal (id.gid, 0);
  assert_string_equal (id.home, "/root");
  assert_int_equal (id.n_groups, 1);
  assert_true (has_group (&id, 10));
  pr_identity_free_contents (&id);

  /* empty home field gives "/" */
  assert_int_equal (pr_identity_resolve (f->rootfd, "nohome", &id, &err), 0);
  assert_int_equal (id.uid, 1001);
  assert_string_equal (id.home, "/");
  assert_int_equal (id.n_groups, 1);
  assert_true (has_group (&id, 20));
  pr_identity_free_contents (&id);

  /* name:group and name:gid */
  assert_int_equal (pr_identity_resolve (f->rootfd, "agent:docker", &id, &err), 0);
  assert_int_equal (id.uid, 1000);
  assert_int_equal (id.gid, 999);
  pr_identity_free_contents (&id);
  assert_int_equal (pr_identity_resolve (f->rootfd, "daemon:4242", &id, &err), 0);
  assert_int_equal (id.uid, 1);
  assert_int_equal (id.gid, 4242);
  assert_string_equal (id.home, "/usr/sbin");
  assert_true (has_group (&id, 20));
  pr_identity_free_contents (&id);
  assert_null (err);
}

static void
test_numeric (void **state)
{
  struct fixture *f = *state;
  struct pr_identity id;
  pr_error *err = NULL;

  /* a uid with an entry takes its gid, home and groups */
  assert_int_equal (pr_identity_resolve (f->rootfd, "1000", &id, &err), 0);
  assert_int_equal (id.uid, 1000);
  assert_int_equal (id.gid, 1000);
  assert_string_equal (id.home, "/home/agent");
  assert_int_equal (id.n_groups, 2);
  pr_identity_free_contents (&id);

  /* a uid without an entry is allowed: gid 0, HOME "/", no groups */
  assert_int_equal (pr_identity_resolve (f->rootfd, "4321", &id, &err), 0);
  assert_int_equal (id.uid, 4321);
  assert_int_equal (id.gid, 0);
  assert_string_equal (id.home, "/");
  assert_int_equal (id.n_groups, 0);
  pr_identity_free_contents (&id);

  assert_int_equal (pr_identity_resolve (f->rootfd, "4321:4322", &id, &err), 0);
  assert_int_equal (id.uid, 4321);
  assert_int_equal (id.gid, 4322);
  pr_identity_free_contents (&id);

  /* uid:group name */
  assert_int_equal (pr_identity_resolve (f->rootfd, "1000:wheel", &id, &err), 0);
  assert_int_equal (id.gid, 10);
  pr_identity_free_contents (&id);

  /* the largest valid id */
  assert_int_equal (pr_identity_resolve (f->rootfd, "4294967294:4294967294", &id, &err), 0);
  assert_int_equal (id.uid, 4294967294U);
  assert_int_equal (id.gid, 4294967294U);
  pr_identity_free_contents (&id);
  assert_null (err);
}

static void
test_errors (void **state)
{
  struct fixture *f = *state;
  struct pr_identity id;
  pr_error *err = NULL;
  static const struct
  {
    const char *spec;
    const char *msg;
  } t[] = {
    { "mallory", "unknown user `mallory` in the image's /etc/passwd" },
    { "agent:nogroup2", "unknown group `nogroup2` in the image's /etc/group" },
    { "1000:malformed", "unknown group `malformed` in the image's /etc/group" },
    { "short", "unknown user `short` in the image's /etc/passwd" },   /* malformed line skipped */
    { "badid", "unknown user `badid` in the image's /etc/passwd" },   /* non-numeric uid skipped */
    { "huge", "unknown user `huge` in the image's /etc/passwd" },     /* (uid_t)-1 skipped */
    { "+nisuser", "unknown user `+nisuser` in the image's /etc/passwd" },
    { "", "empty user" },
    { ":0", "malformed user `:0` (expected uid[:gid] or name[:group])" },
    { "agent:", "malformed user `agent:` (expected uid[:gid] or name[:group])" },
    { "a:b:c", "malformed user `a:b:c` (expected uid[:gid] or name[:group])" },
    { "4294967295", "user `4294967295`: uid out of range (0-4294967294)" },
    { "99999999999", "user `99999999999`: uid out of range (0-4294967294)" },
    { "0:4294967295", "user `0:4294967295`: gid out of range (0-4294967294)" },
    { "evil\nlevel=error", "unknown user `evil\\x0alevel=error` in the image's /etc/passwd" },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (t); i++)
    {
      if (pr_identity_resolve (f->rootfd, t[i].spec, &id, &err) != -1 || strcmp (err->msg, t[i].msg) != 0)
        {
          print_error ("spec \"%s\": want \"%s\", got \"%s\"\n", t[i].spec, t[i].msg, err ? err->msg : "(success)");
          fail ();
        }
      assert_int_equal (err->errnum, EINVAL);
      pr_error_free (&err);
    }
}

/* No /etc/passwd or /etc/group at all (scratch, busybox-static images). */
static void
test_missing_files (void **state)
{
  struct fixture *f = *state;
  struct pr_identity id;
  pr_error *err = NULL;
  assert_int_equal (pr_identity_resolve (f->rootfd, "1000:1000", &id, &err), 0);
  assert_int_equal (id.uid, 1000);
  assert_int_equal (id.gid, 1000);
  assert_string_equal (id.home, "/");
  pr_identity_free_contents (&id);

  /* "root" is uid 0 even without a passwd entry */
  assert_int_equal (pr_identity_resolve (f->rootfd, "root:root", &id, &err), 0);
  assert_int_equal (id.uid, 0);
  assert_int_equal (id.gid, 0);
  pr_identity_free_contents (&id);

  assert_int_equal (pr_identity_resolve (f->rootfd, "agent", &id, &err), -1);
  assert_string_equal (err->msg, "unknown user `agent` in the image's /etc/passwd");
  pr_error_free (&err);

  uint32_t mu = 7, mg = 7;
  assert_int_equal (pr_identity_max_ids (f->rootfd, &mu, &mg, &err), 0);
  assert_int_equal (mu, 0);
  assert_int_equal (mg, 0);

  /* /etc itself missing or a file */
  char etc[PATH_MAX + 8];
  snprintf (etc, sizeof etc, "%s/etc", f->root);
  assert_int_equal (rmdir (etc), 0);
  assert_int_equal (pr_identity_max_ids (f->rootfd, &mu, &mg, &err), 0);
  write_at (f->root, "etc", "not a dir");
  assert_int_equal (pr_identity_max_ids (f->rootfd, &mu, &mg, &err), 0);
  assert_int_equal (pr_identity_resolve (f->rootfd, "5", &id, &err), 0);
  pr_identity_free_contents (&id);
}

/* /etc/passwd -> absolute and relative paths that, followed on the host,
 * would reach a "host" passwd defining `evil`.  Resolved inside the root
 * they reach the image's own file (or nothing). */
static void
test_symlink_escape (void **state)
{
  struct fixture *f = *state;
  struct pr_identity id;
  pr_error *err = NULL;
  char host[PATH_MAX + 8], etc[PATH_MAX + 8], hostpw[PATH_MAX * 2];
  snprintf (host, sizeof host, "%s/host", f->base);
  snprintf (etc, sizeof etc, "%s/etc", f->root);
  assert_int_equal (mkdir (host, 0755), 0);
  write_at (host, "passwd", "evil:x:0:0::/host:/bin/sh\n");
  write_at (host, "group", "evilgrp:x:0:\n");
  snprintf (hostpw, sizeof hostpw, "%s/passwd", host);

  /* absolute symlink to the host file: inside the root that path does not
   * exist, so there is no passwd at all */
  symlink_at (hostpw, etc, "passwd");
  symlink_at ("../../../../../../../../host/group", etc, "group");
  assert_int_equal (pr_identity_resolve (f->rootfd, "evil", &id, &err), -1);
  assert_string_equal (err->msg, "unknown user `evil` in the image's /etc/passwd");
  pr_error_free (&err);
  assert_int_equal (pr_identity_resolve (f->rootfd, "0:evilgrp", &id, &err), -1);
  assert_string_equal (err->msg, "unknown group `evilgrp` in the image's /etc/group");
  pr_error_free (&err);

  /* now create the same path inside the root: that file is read */
  char *inroot = xasprintf ("mkdir -p '%s%s' && printf 'image:x:77:78::/img:/bin/sh\\n' > '%s%s/passwd'", f->root,
                            host, f->root, host);
  assert_int_equal (system (inroot), 0);
  free (inroot);
  assert_int_equal (pr_identity_resolve (f->rootfd, "image", &id, &err), 0);
  assert_int_equal (id.uid, 77);
  assert_string_equal (id.home, "/img");
  pr_identity_free_contents (&id);
  assert_int_equal (pr_identity_resolve (f->rootfd, "evil", &id, &err), -1);
  pr_error_free (&err);

  /* the relative escape "../../../../../../../../host/group" clamps at the
   * root: it names the image's /host/group, which does not exist */
  uint32_t mu, mg;
  assert_int_equal (pr_identity_max_ids (f->rootfd, &mu, &mg, &err), 0);
  assert_int_equal (mu, 77);
  assert_int_equal (mg, 78);

  /* a symlink loop is an error, not the host's file */
  char pw[PATH_MAX * 2];
  snprintf (pw, sizeof pw, "%s/passwd", etc);
  assert_int_equal (unlink (pw), 0);
  symlink_at ("/etc/passwd", etc, "passwd");
  assert_int_equal (pr_identity_resolve (f->rootfd, "evil", &id, &err), -1);
  assert_int_equal (err->errnum, ELOOP);
  pr_error_free (&err);
}

static void
test_not_regular_and_large (void **state)
{
  struct fixture *f = *state;
  struct pr_identity id;
  pr_error *err = NULL;
  char p[PATH_MAX * 2];

  /* a fifo must not block the runtime */
  snprintf (p, sizeof p, "%s/etc/passwd", f->root);
  assert_int_equal (unlink (p), 0);
  assert_int_equal (mkfifo (p, 0644), 0);
  assert_int_equal (pr_identity_resolve (f->rootfd, "agent", &id, &err), -1);
  assert_string_equal (err->msg, "the image's `/etc/passwd` is not a regular file");
  pr_error_free (&err);
  assert_int_equal (unlink (p), 0);

  /* a symlink to a device resolves in the root (to nothing here) */
  assert_int_equal (symlink ("/dev/zero", p), 0);
  assert_int_equal (pr_identity_resolve (f->rootfd, "7", &id, &err), 0);
  pr_identity_free_contents (&id);
  assert_int_equal (unlink (p), 0);

  /* over the cap: refused */
  int fd = open (p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true (fd >= 0);
  assert_int_equal (ftruncate (fd, 5 * 1024 * 1024), 0);
  close (fd);
  assert_int_equal (pr_identity_resolve (f->rootfd, "agent", &id, &err), -1);
  assert_int_equal (err->errnum, EFBIG);
  pr_error_free (&err);

  /* a long comment line and a very long member list are fine */
  size_t n = 200000;
  char *big = xmalloc (2 * n + 256);
  memset (big, 'x', n);
  big[0] = '#';
  strcpy (big + n, "\nagent:x:1000:1000::/home/agent:/bin/sh\n");
  fd = open (p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_int_equal (pr_write_all (fd, big, strlen (big)), 0);
  close (fd);
  char *members = xmalloc (n + 64);
  size_t o = (size_t) sprintf (members, "big:x:4000:");
  while (o < n)
    o += (size_t) sprintf (members + o, "u%zu,", o);
  strcpy (members + o, "agent\n");
  snprintf (p, sizeof p, "%s/etc/group", f->root);
  assert_int_equal (pr_write_file (p, members, strlen (members), NULL), 0);
  assert_int_equal (pr_identity_resolve (f->rootfd, "agent", &id, &err), 0);
  assert_int_equal (id.uid, 1000);
  assert_int_equal (id.n_groups, 1);
  assert_int_equal (id.groups[0], 4000);
  pr_identity_free_contents (&id);
  free (big);
  free (members);
}

static void
test_max_ids (void **state)
{
  struct fixture *f = *state;
  uint32_t mu = 0, mg = 0;
  pr_error *err = NULL;
  assert_int_equal (pr_identity_max_ids (f->rootfd, &mu, &mg, &err), 0);
  /* nobody 65534; duplicate agent 9999; "huge" (-1) is not an id */
  assert_int_equal (mu, 65534);
  assert_int_equal (mg, 65534);

  char etc[PATH_MAX + 8];
  snprintf (etc, sizeof etc, "%s/etc", f->root);
  write_at (etc, "passwd", "a:x:100:200::/:/bin/sh\n");
  write_at (etc, "group", "g:x:300:\nbad:x:999999999999:\n");
  assert_int_equal (pr_identity_max_ids (f->rootfd, &mu, &mg, &err), 0);
  assert_int_equal (mu, 100);
  assert_int_equal (mg, 300);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_by_name, setup_image, teardown),
    cmocka_unit_test_setup_teardown (test_numeric, setup_image, teardown),
    cmocka_unit_test_setup_teardown (test_errors, setup_image, teardown),
    cmocka_unit_test_setup_teardown (test_missing_files, setup, teardown),
    cmocka_unit_test_setup_teardown (test_symlink_escape, setup, teardown),
    cmocka_unit_test_setup_teardown (test_not_regular_and_large, setup_image, teardown),
    cmocka_unit_test_setup_teardown (test_max_ids, setup_image, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
