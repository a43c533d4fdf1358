/* fuzz_dnsmsg.c - libFuzzer target for the transparent resolver's query
 * parser and reply builder (src/rollout/egress/dnsmsg.c): the input is one
 * UDP datagram from inside the container.  Checks the documented
 * contracts: a result from the documented set; for a query, a name of
 * lower-case letters, digits, '-', '_' and single dots within 253 bytes
 * and a question end inside the input; every reply (each rcode, with and
 * without an A and an AAAA record) fits PR_DNS_MAX_REPLY, carries the
 * query's id and the QR bit, and echoes the question byte for byte.
 * Built by tests/fuzz/run.sh. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/egress/dnsmsg.h"

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
check_name (const char *n)
{
  size_t len = strlen (n);
  CHECK (len <= PR_DNS_MAX_NAME);
  CHECK (len == 0 || (n[0] != '.' && n[len - 1] != '.' && strstr (n, "..") == NULL));
  for (size_t i = 0; i < len; i++)
    CHECK ((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-' || n[i] == '_'
           || n[i] == '.');
}

static void
check_reply (const uint8_t *buf, size_t len, const struct pr_dnsq *q, int rcode, const uint8_t *addr, size_t alen)
{
  uint8_t out[PR_DNS_MAX_REPLY];
  size_t n = pr_dnsmsg_reply (buf, q, rcode, addr, alen, 60, out, sizeof out);
  CHECK (n >= 12 && n <= sizeof out);
  CHECK (((out[0] << 8) | out[1]) == q->id);
  CHECK (out[2] & 0x80);
  CHECK ((out[3] & 0xf) == rcode);
  if (q->qend)
    CHECK (memcmp (out + 12, buf + 12, q->qend - 12) == 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t *buf = malloc (size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy (buf, data, size);
  struct pr_dnsq q;
  int r = pr_dnsmsg_parse_query (buf, size, &q);
  CHECK (r == -1 || r == 0 || r == PR_DNS_RCODE_FORMERR || r == PR_DNS_RCODE_NOTIMP);
  if (r == 0)
    {
      CHECK (q.qend > 12 && q.qend <= size && q.qend - 12 <= 4 + 255);
      check_name (q.name);
    }
  else
    CHECK (q.qend == 0);
  if (r >= 0)
    {
      static const uint8_t a4[4] = { 100, 64, 0, 1 }, a6[16] = { 0xfd };
      check_reply (buf, size, &q, r, NULL, 0);
      check_reply (buf, size, &q, PR_DNS_RCODE_NXDOMAIN, NULL, 0);
      check_reply (buf, size, &q, 0, a4, 4);
      check_reply (buf, size, &q, 0, a6, 16);
    }
  free (buf);
  return 0;
}
