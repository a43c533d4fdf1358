/* fuzz_identity.c - libFuzzer target for the image passwd/group reader
 * (src/linux/identity.c: a rollout phase's `user` resolved against the
 * image's /etc/passwd and /etc/group, read through openat2 RESOLVE_IN_ROOT).
 * Input layout: "SPEC\0PASSWD\0GROUP" (missing parts are empty files).  The
 * files are written to a private rootfs on tmpfs each run, then
 * pr_identity_resolve and pr_identity_max_ids read them for real.
 * Built by tests/fuzz/run.sh, never by automake. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "linux/identity.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int rootfd = -1;
static int etcfd = -1;

static void
put (const char *name, const uint8_t *d, size_t n)
{
  int fd = openat (etcfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    abort ();
  while (n > 0)
    {
      ssize_t w = write (fd, d, n);
      if (w <= 0)
        abort ();
      d += w;
      n -= (size_t) w;
    }
  close (fd);
}

static char root_path[64];

/* libFuzzer ends a bounded run with exit(), so this leaves nothing in
 * /dev/shm (a crash leaves the directory for inspection). */
static void
remove_root (void)
{
  unlinkat (etcfd, "passwd", 0);
  unlinkat (etcfd, "group", 0);
  unlinkat (rootfd, "etc", AT_REMOVEDIR);
  rmdir (root_path);
}

static void
setup_root (void)
{
  char tmpl[] = "/dev/shm/fuzz-identity.XXXXXX";
  const char *dir = mkdtemp (tmpl);
  if (dir == NULL)
    {
      snprintf (tmpl, sizeof tmpl, "/tmp/fuzz-identity.XXXXXX");
      dir = mkdtemp (tmpl);
    }
  if (dir == NULL)
    abort ();
  rootfd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (rootfd < 0 || mkdirat (rootfd, "etc", 0755) < 0)
    abort ();
  etcfd = openat (rootfd, "etc", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (etcfd < 0)
    abort ();
  snprintf (root_path, sizeof root_path, "%s", dir);
  atexit (remove_root);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (rootfd < 0)
    setup_root ();
  const uint8_t *end = data + size;
  const uint8_t *z1 = memchr (data, 0, size);
  const uint8_t *pw = z1 ? z1 + 1 : end;
  const uint8_t *z2 = pw < end ? memchr (pw, 0, (size_t) (end - pw)) : NULL;
  const uint8_t *gr = z2 ? z2 + 1 : end;
  size_t spec_len = (size_t) ((z1 ? z1 : end) - data);
  if (spec_len > 256)
    return 0;
  char spec[257];
  memcpy (spec, data, spec_len);
  spec[spec_len] = '\0';
  put ("passwd", pw, (size_t) ((z2 ? z2 : end) - pw));
  put ("group", gr, (size_t) (end - gr));

  struct pr_identity id = { 0 };
  pr_error *err = NULL;
  if (pr_identity_resolve (rootfd, spec, &id, &err) == 0)
    {
      if (id.home == NULL || (id.n_groups > 0 && id.groups == NULL))
        abort ();
      pr_identity_free_contents (&id);
    }
  else
    pr_error_free (&err);
  uint32_t mu = 0, mg = 0;
  if (pr_identity_max_ids (rootfd, &mu, &mg, &err) < 0)
    pr_error_free (&err);
  return 0;
}
