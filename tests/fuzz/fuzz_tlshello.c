/* fuzz_tlshello.c - libFuzzer target for the egress proxy's ClientHello
 * parser (src/rollout/egress/tlshello.c): the input is what a client sends
 * after its CONNECT to port 443.  It runs the parser on the whole input and
 * on every prefix the proxy could see as it arrives (in uneven steps), and
 * checks the documented contracts: a status from the enum, a reason for
 * every refusal, a hello never longer than the input, a server name that
 * is a valid normalised host (never an IP literal), and a prefix of an
 * accepted hello never refused.  Built by tests/fuzz/run.sh. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/egress/tlshello.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                    \
  do                                                                                                                   \
    {                                                                                                                  \
      if (!(cond))                                                                                                     \
        {                                                                                                              \
          fprintf (stderr, "contract violated: %s\n", #cond);                                                          \
          abort ();                                                                                                    \
        }                                                                                                              \
    }                                                                                                                  \
  while (0)

static int
check (const uint8_t *buf, size_t len, struct pr_tlshello *h)
{
  const char *why = NULL;
  int r = pr_tlshello_parse (buf, len, h, &why);
  CHECK (r == PR_TLSHELLO_OK || r == PR_TLSHELLO_MORE || r == PR_TLSHELLO_NOT_TLS || r == PR_TLSHELLO_BAD);
  if (r < 0)
    CHECK (why != NULL);
  if (r == PR_TLSHELLO_OK)
    {
      CHECK (h->len > 0 && h->len <= len);
      if (h->has_sni)
        {
          char norm[PR_REQHEAD_MAX_HOST + 1];
          bool is_ip, is_v6;
          size_t n = strlen (h->sni);
          CHECK (n > 0 && n <= PR_REQHEAD_MAX_HOST);
          CHECK (pr_reqhead_norm_host (h->sni, n, norm, &is_ip, &is_v6) == 0);
          CHECK (!is_ip && strcmp (norm, h->sni) == 0);
        }
    }
  return r;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Exact-size copy: a read past the end is an ASan report. */
  uint8_t *buf = malloc (size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy (buf, data, size);
  struct pr_tlshello whole, part;
  int r = check (buf, size, &whole);
  size_t step = 1 + size % 13;
  for (size_t n = 0; n < size; n += step, step = step * 5 % 17 + 1)
    {
      int rp = check (buf, n, &part);
      /* What the whole input accepts, no prefix of it refuses; a prefix
       * that completes the hello gives the same answer. */
      if (r == PR_TLSHELLO_OK && n < whole.len)
        CHECK (rp == PR_TLSHELLO_MORE);
      if (r == PR_TLSHELLO_OK && n >= whole.len)
        CHECK (rp == PR_TLSHELLO_OK && part.len == whole.len && strcmp (part.sni, whole.sni) == 0);
    }
  free (buf);
  return 0;
}
