/* fuzz_passwd.c - libFuzzer target for the verifier's /etc/passwd merge
 * (src/rollout/passwd.c: the live file is the agent's, the image's file
 * the image author's).  Input layout: "LIVE\0IMAGE" (no NUL: an empty
 * image).  Checks the property the merge exists for, with a reader of its
 * own written from glibc's behaviour (not passwd.c's code): the result has
 * one line per live line, and every entry in it that names an image user
 * (or has an image user's uid) has that user's home and shell.  Built by
 * tests/fuzz/run.sh, never by automake. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/passwd.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Splits a line glibc's way into up to 7 fields (the last takes the
 * rest); returns the count, 0 for no entry. */
static size_t
fields (const char *s, size_t n, const char **f, size_t *fl)
{
  const char *z = memchr (s, '\0', n);
  if (z)
    n = (size_t) (z - s);
  while (n && isspace ((unsigned char) *s))
    s++, n--;
  if (n == 0 || *s == '#')
    return 0;
  size_t k = 0;
  const char *st = s;
  for (size_t i = 0; i <= n; i++)
    if (i == n || (s[i] == ':' && k < 6))
      {
        f[k] = st;
        fl[k++] = (size_t) (s + i - st);
        st = s + i + 1;
      }
  return k >= 2 ? k : 0;
}

static bool
eq (const char *a, size_t an, const char *b, size_t bn)
{
  return an == bn && memcmp (a, b, an) == 0;
}

static bool
is_uid (const char *u, size_t n)
{
  if (n == 0 || n > 10)
    return false;
  for (size_t i = 0; i < n; i++)
    if (u[i] < '0' || u[i] > '9')
      return false;
  return true;
}

/* The image's first full entry for name (n > 0), else for uid (when a
 * number). */
static bool
image_user (const char *img, size_t len, const char *name, size_t nn, const char *uid, size_t un, const char **f,
            size_t *fl)
{
  for (int pass = 0; pass < 2; pass++)
    for (size_t pos = 0; pos < len;)
      {
        const char *nl = memchr (img + pos, '\n', len - pos);
        size_t end = nl ? (size_t) (nl - img) : len;
        if (fields (img + pos, end - pos, f, fl) == 7)
          {
            if (pass == 0 && nn > 0 && eq (f[0], fl[0], name, nn))
              return true;
            if (pass == 1 && is_uid (uid, un) && is_uid (f[2], fl[2])
                && strtoll (strndupa (f[2], fl[2]), NULL, 10) == strtoll (strndupa (uid, un), NULL, 10))
              return true;
          }
        pos = end + 1;
      }
  return false;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *s = (const char *) data;
  const char *nul = memchr (s, '\0', size);
  size_t live_len = nul ? (size_t) (nul - s) : size;
  const char *image = nul ? nul + 1 : "";
  size_t image_len = nul ? size - live_len - 1 : 0;
  size_t out_len = 0;
  char *out = pr_passwd_merge_login (s, live_len, image, image_len, &out_len);
  size_t live_lines = 0, out_lines = 0;
  for (size_t i = 0; i < live_len; i++)
    live_lines += s[i] == '\n';
  if (live_len && s[live_len - 1] != '\n')
    live_lines++;
  for (size_t pos = 0; pos < out_len;)
    {
      const char *nl = memchr (out + pos, '\n', out_len - pos);
      if (nl == NULL)
        abort (); /* every output line ends in '\n' */
      size_t end = (size_t) (nl - out);
      const char *f[7], *g[7];
      size_t fl[7], gl[7];
      size_t k = fields (out + pos, end - pos, f, fl);
      if (k)
        {
          const char *name = f[0];
          size_t nn = fl[0];
          if (nn && (name[0] == '+' || name[0] == '-'))
            name++, nn--;
          if (image_user (image, image_len, name, nn, k > 2 ? f[2] : "", k > 2 ? fl[2] : 0, g, gl)
              && (k != 7 || !eq (f[5], fl[5], g[5], gl[5]) || !eq (f[6], fl[6], g[6], gl[6])))
            abort (); /* an image user's entry with the agent's home or shell */
        }
      out_lines++;
      pos = end + 1;
    }
  if (out_lines != live_lines)
    abort (); /* one output line per live line */
  free (out);
  return 0;
}
