/* test_passwd.c - unit tests for src/rollout/passwd.c: the verifier's
 * /etc/passwd under verifier.base "image" takes home and shell of each
 * image user from the image (the agent's changed shell and home are gone),
 * keeps every other field and line of the live file (users a task added,
 * comments, malformed lines), and matches users by whole name only. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/rollout/passwd.h"

static char *
merge (const char *live, const char *image)
{
  size_t n = 0;
  char *out = pr_passwd_merge_login (live, strlen (live), image, strlen (image), &n);
  assert_int_equal (strlen (out), n);
  return out;
}

static const char image[] = "root:x:0:0:root:/root:/bin/bash\n"
                            "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                            "agent:x:1000:1000::/home/agent:/bin/sh\n";

/* The trial's attack: root's and agent's shells (and root's home) pointed
 * at the agent's files. */
static void
test_shell_and_home_from_image (void **state)
{
  (void) state;
  char *out = merge ("root:x:0:0:root:/work:/tmp/evil\n"
                     "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                     "agent:x:1000:1000::/home/agent:/tmp/evilsh\n",
                     image);
  assert_string_equal (out, image);
  free (out);
}

/* uid, gid, GECOS and password field stay the live file's; a task's new
 * user, a comment and a line with no ':' are kept, in their order; an
 * image user's line with eight fields (glibc's shell: "c:d") is merged. */
static void
test_live_fields_and_lines_kept (void **state)
{
  (void) state;
  char *out = merge ("# comment\n"
                     "root:*:0:0:Super User:/root:/bin/zsh\n"
                     "bob:x:1001:1001::/home/bob:/bin/bash\n"
                     "broken line\n"
                     "agent:x:1000:1000:a:b:c:d\n",
                     image);
  assert_string_equal (out, "# comment\n"
                            "root:*:0:0:Super User:/root:/bin/bash\n"
                            "bob:x:1001:1001::/home/bob:/bin/bash\n"
                            "broken line\n"
                            "agent:x:1000:1000:a:/home/agent:/bin/sh\n");
  free (out);
}

/* A name that is a prefix of an image user's ("age" of "agent") is another
 * user; duplicates each get the image's first entry; a compat "+root" line
 * is root's; an empty name is matched by its uid only. */
static void
test_match_by_whole_name (void **state)
{
  (void) state;
  char *out = merge ("age:x:5:5::/tmp:/tmp/x\n"
                     "+root::::::/tmp/evil\n"
                     ":x:7:7::/tmp:/tmp/evil\n"
                     "root:x:0:0::/tmp:/tmp/a\n"
                     "root:x:0:0::/tmp:/tmp/b\n",
                     image);
  assert_string_equal (out, "age:x:5:5::/tmp:/tmp/x\n"
                            "+root:::::/root:/bin/bash\n"
                            ":x:7:7::/tmp:/tmp/evil\n"
                            "root:x:0:0::/root:/bin/bash\n"
                            "root:x:0:0::/root:/bin/bash\n");
  free (out);
}

/* The attacker's trial of 2026-12-04: lines glibc reads as root's but a
 * strict passwd(5) parser does not (a shell with a colon, a leading
 * blank, a NUL before junk), and another name with root's uid (what
 * getpwuid(0) may find first): each gets root's home and shell. */
static void
test_glibc_reading (void **state)
{
  (void) state;
  static const char live[] = "root:x:0:0:root:/root:/tmp/ev:il\n"
                             " root:x:0:0:root:/root:/tmp/evilsh\n"
                             "root:x:0:0:root:/root:/tmp/evilsh\0:x\n"
                             "toor:x:0:0::/tmp:/tmp/evil\n"
                             ":x:1000:1000::/tmp:/tmp/evil\n"
                             "\t# root:x:0:0::/tmp:/tmp/evil\n";
  size_t n = 0;
  char *out = pr_passwd_merge_login (live, sizeof live - 1, image, strlen (image), &n);
  assert_int_equal (strlen (out), n);
  assert_string_equal (out, "root:x:0:0:root:/root:/bin/bash\n"
                            "root:x:0:0:root:/root:/bin/bash\n"
                            "root:x:0:0:root:/root:/bin/bash\n"
                            "toor:x:0:0::/root:/bin/bash\n"
                            ":x:1000:1000::/home/agent:/bin/sh\n"
                            "\t# root:x:0:0::/tmp:/tmp/evil\n");
  free (out);
}

/* A last line without a newline gets one; an empty live file stays empty;
 * an empty image changes nothing. */
static void
test_edges (void **state)
{
  (void) state;
  char *out = merge ("root:x:0:0::/tmp:/tmp/evil", image);
  assert_string_equal (out, "root:x:0:0::/root:/bin/bash\n");
  free (out);
  out = merge ("", image);
  assert_string_equal (out, "");
  free (out);
  out = merge ("root:x:0:0::/tmp:/tmp/evil\n", "");
  assert_string_equal (out, "root:x:0:0::/tmp:/tmp/evil\n");
  free (out);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_shell_and_home_from_image),
    cmocka_unit_test (test_live_fields_and_lines_kept),
    cmocka_unit_test (test_match_by_whole_name),
    cmocka_unit_test (test_glibc_reading),
    cmocka_unit_test (test_edges),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
