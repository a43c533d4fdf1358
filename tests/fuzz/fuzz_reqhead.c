/* fuzz_reqhead.c - libFuzzer target for the egress proxy's request-head
 * parser (src/rollout/egress/reqhead.c): the input is what a client sends.
 * It runs the proxy's own sequence: find the end of the head, parse it,
 * build the upstream head, read the proxy token, then feed the rest to the
 * body framing tracker in uneven pieces (so chunk-size lines split across
 * reads are covered); then transparent egress's (pr_reqhead_parse_origin,
 * the rewrite, the body).  Checks the documented contracts: find_end never
 * points past the buffer, pr_body_feed never claims more than it was given
 * and stops consuming once done.  Built by tests/fuzz/run.sh. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/egress/reqhead.h"

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

static void
feed_body (const struct pr_reqhead *rh, const char *body, size_t len, unsigned seed)
{
  struct pr_body_tracker t;
  pr_body_init (&t, rh);
  size_t off = 0, step = 1 + seed % 7;
  while (off < len && !t.done)
    {
      size_t n = len - off < step ? len - off : step;
      ssize_t used = pr_body_feed (&t, body + off, n);
      if (used < 0)
        return;
      CHECK ((size_t) used <= n);
      if ((size_t) used < n)
        CHECK (t.done);
      off += (size_t) used;
      step = step * 3 % 11 + 1;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Exact-size copy: a read past the end is an ASan report. */
  char *buf = malloc (size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy (buf, data, size);

  char host[PR_REQHEAD_MAX_HOST + 1];
  bool is_ip, is_v6;
  (void) pr_reqhead_norm_host (buf, size < 300 ? size : 300, host, &is_ip, &is_v6);

  ssize_t end = pr_reqhead_find_end (buf, size, PR_REQHEAD_MAX_BYTES);
  CHECK (end <= (ssize_t) size);
  if (end > 0)
    {
      struct pr_reqhead *rh = calloc (1, sizeof *rh);
      const char *reason = NULL;
      int st = pr_reqhead_parse (buf, (size_t) end, rh, &reason);
      if (st == 0)
        {
          CHECK (rh->n_fields <= PR_REQHEAD_MAX_HEADERS);
          CHECK (strlen (rh->host) <= PR_REQHEAD_MAX_HOST);
          if (!rh->is_connect)
            {
              size_t out_len = 0;
              char *out = pr_reqhead_rewrite (rh, &out_len);
              CHECK (out != NULL);
              free (out);
            }
          char tok[128];
          int r = pr_reqhead_proxy_token (rh, tok, sizeof tok);
          if (r == 1)
            CHECK (memchr (tok, '\0', sizeof tok) != NULL);
          feed_body (rh, buf + end, size - (size_t) end, (unsigned) size);
        }
      else
        CHECK (st >= 400 && st < 600 && reason != NULL);
      /* The same head as transparent egress reads it (sent to an origin). */
      reason = NULL;
      st = pr_reqhead_parse_origin (buf, (size_t) end, rh, &reason);
      if (st == 0)
        {
          CHECK (rh->n_fields <= PR_REQHEAD_MAX_HEADERS);
          CHECK (rh->host[0] != '\0' && strlen (rh->host) <= PR_REQHEAD_MAX_HOST);
          CHECK (!rh->is_connect && rh->path != NULL);
          size_t out_len = 0;
          char *out = pr_reqhead_rewrite (rh, &out_len);
          CHECK (out != NULL && strstr (out, "\r\nConnection: close\r\n\r\n") != NULL);
          free (out);
          feed_body (rh, buf + end, size - (size_t) end, (unsigned) size);
        }
      else
        CHECK (st >= 400 && st < 600 && reason != NULL);
      free (rh);
    }
  else
    {
      /* A chunked body on its own, as if the head had said so. */
      struct pr_reqhead rh0;
      memset (&rh0, 0, sizeof rh0);
      rh0.body = PR_BODY_CHUNKED;
      feed_body (&rh0, buf, size, (unsigned) size);
    }
  free (buf);
  return 0;
}
