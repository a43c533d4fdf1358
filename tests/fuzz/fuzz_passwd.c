/* fuzz_passwd.c - libFuzzer target for the verifier's /etc/passwd merge
 * (src/rollout/passwd.c: the live file is the agent's, the image's file
 * the image author's).  Input layout: "LIVE\0IMAGE" (no NUL: an empty
 * image).  Checks what passwd.h promises: the result has as many lines as
 * the live file, each ending in '\n', and each line is the live line or
 * differs from it only after its fifth ':' (name, password, uid, gid and
 * GECOS are the live file's).  Built by tests/fuzz/run.sh, never by
 * automake. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/passwd.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Length of line's prefix up to and including its fifth ':' (the whole
 * line when it has fewer). */
static size_t
five_fields (const char *line, size_t n)
{
  size_t colons = 0;
  for (size_t i = 0; i < n; i++)
    if (line[i] == ':' && ++colons == 5)
      return i + 1;
  return n;
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
  size_t lp = 0, op = 0;
  while (lp < live_len)
    {
      const char *lnl = memchr (s + lp, '\n', live_len - lp);
      size_t ln = (lnl ? (size_t) (lnl - s) : live_len) - lp;
      const char *onl = memchr (out + op, '\n', out_len - op);
      if (onl == NULL)
        abort (); /* a live line without its output line */
      size_t on = (size_t) (onl - out) - op;
      size_t keep = five_fields (s + lp, ln);
      if (on < keep || memcmp (out + op, s + lp, keep) != 0)
        abort (); /* the live line's first five fields changed */
      if (keep == ln && (on != ln))
        abort (); /* a line with fewer than six fields changed */
      lp += ln + 1;
      op += on + 1;
    }
  if (op != out_len)
    abort (); /* output lines beyond the live file's */
  free (out);
  return 0;
}
