/* test_tlshello.c - unit tests for src/rollout/egress/tlshello.c: the
 * server name of a ClientHello, one record or fragmented, every prefix of
 * one (MORE), and the refusals (not TLS, malformed, ambiguous names). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/rollout/egress/tlshello.h"

struct buf
{
  uint8_t b[40000];
  size_t n;
};

static void
put (struct buf *o, const void *p, size_t n)
{
  memcpy (o->b + o->n, p, n);
  o->n += n;
}

static void
put16 (struct buf *o, unsigned v)
{
  uint8_t b[2] = { (uint8_t) (v >> 8), (uint8_t) v };
  put (o, b, 2);
}

/* An extension: type, then data. */
static void
ext (struct buf *o, unsigned type, const void *data, size_t n)
{
  put16 (o, type);
  put16 (o, (unsigned) n);
  put (o, data, n);
}

/* server_name data with the given host names (NULL-terminated list). */
static size_t
sni_data (uint8_t *out, const char *const *names)
{
  struct buf b = { .n = 0 };
  struct buf list = { .n = 0 };
  for (size_t i = 0; names[i]; i++)
    {
      uint8_t t = 0;
      put (&list, &t, 1);
      put16 (&list, (unsigned) strlen (names[i]));
      put (&list, names[i], strlen (names[i]));
    }
  put16 (&b, (unsigned) list.n);
  put (&b, list.b, list.n);
  memcpy (out, b.b, b.n);
  return b.n;
}

/* A ClientHello with extensions exts (exts_len bytes, or none when
 * exts_len is SIZE_MAX), cut into records of at most frag bytes. */
static void
hello (struct buf *o, const uint8_t *exts, size_t exts_len, size_t frag)
{
  struct buf body = { .n = 0 };
  static const uint8_t random[32] = { 1 };
  put16 (&body, 0x0303);
  put (&body, random, 32);
  uint8_t sid = 0;
  put (&body, &sid, 1);
  put16 (&body, 2);
  put16 (&body, 0x1301);
  uint8_t comp[2] = { 1, 0 };
  put (&body, comp, 2);
  if (exts_len != SIZE_MAX)
    {
      put16 (&body, (unsigned) exts_len);
      put (&body, exts, exts_len);
    }
  struct buf hs = { .n = 0 };
  uint8_t h[4] = { 1, (uint8_t) (body.n >> 16), (uint8_t) (body.n >> 8), (uint8_t) body.n };
  put (&hs, h, 4);
  put (&hs, body.b, body.n);
  o->n = 0;
  for (size_t off = 0; off < hs.n; off += frag)
    {
      size_t n = hs.n - off < frag ? hs.n - off : frag;
      uint8_t r[5] = { 22, 3, 1, (uint8_t) (n >> 8), (uint8_t) n };
      put (o, r, 5);
      put (o, hs.b + off, n);
    }
}

static int
parse (const struct buf *o, struct pr_tlshello *h)
{
  const char *why = NULL;
  int r = pr_tlshello_parse (o->b, o->n, h, &why);
  if (r < 0)
    assert_non_null (why);
  return r;
}

static void
test_sni (void **state)
{
  static struct buf o, e;
  struct pr_tlshello h;
  uint8_t d[512];
  const char *names[] = { "Example.COM.", NULL };

  e.n = 0;
  ext (&e, 0x002b, "\x02\x03\x04", 3); /* supported_versions */
  ext (&e, 0x0000, d, sni_data (d, names));
  ext (&e, 0x0010, "\x00\x03\x02h2", 5); /* ALPN */
  hello (&o, e.b, e.n, 16384);
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_OK);
  assert_true (h.has_sni);
  assert_string_equal (h.sni, "example.com");
  assert_false (h.encrypted);
  assert_int_equal (h.len, o.n);

  /* Every proper prefix: more is needed. */
  for (size_t n = 0; n < o.n; n++)
    {
      const char *why;
      struct buf p = o;
      p.n = n;
      if (pr_tlshello_parse (p.b, p.n, &h, &why) != PR_TLSHELLO_MORE)
        fail_msg ("prefix of %zu bytes", n);
    }

  /* Fragmented into 7-byte records, and followed by other bytes. */
  hello (&o, e.b, e.n, 7);
  size_t len = o.n;
  put (&o, "\x17\x03\x03", 3);
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_OK);
  assert_string_equal (h.sni, "example.com");
  assert_int_equal (h.len, len);

  /* No extensions at all (TLS 1.2 allows it): no name. */
  hello (&o, NULL, SIZE_MAX, 16384);
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_OK);
  assert_false (h.has_sni);

  /* Encrypted ClientHello: flagged. */
  ext (&e, 0xfe0d, "\x00\x01", 2);
  hello (&o, e.b, e.n, 16384);
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_OK);
  assert_true (h.encrypted);
}

static void
test_refused (void **state)
{
  static struct buf o, e;
  struct pr_tlshello h;
  uint8_t d[512];
  const char *two[] = { "a.test", "b.test", NULL };
  const char *ip[] = { "192.0.2.1", NULL };
  const char *bad[] = { "a..test", NULL };
  const char *one[] = { "a.test", NULL };

  memcpy (o.b, "GET / HTTP/1.1\r\n", 16);
  o.n = 16;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_NOT_TLS);
  o.n = 1;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_NOT_TLS);
  memcpy (o.b, "\x15\x03\x01\x00\x02\x02\x28", 7); /* an alert */
  o.n = 7;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_NOT_TLS);
  memcpy (o.b, "\x16\x02", 2);
  o.n = 2;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_NOT_TLS);

  const char *const *lists[] = { two, ip, bad };
  for (size_t i = 0; i < PR_ARRAY_SIZE (lists); i++)
    {
      e.n = 0;
      ext (&e, 0x0000, d, sni_data (d, lists[i]));
      hello (&o, e.b, e.n, 16384);
      assert_int_equal (parse (&o, &h), PR_TLSHELLO_BAD);
    }
  /* A repeated extension. */
  e.n = 0;
  ext (&e, 0x0000, d, sni_data (d, one));
  ext (&e, 0x0000, d, sni_data (d, one));
  hello (&o, e.b, e.n, 16384);
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_BAD);
  /* Extensions longer than the hello. */
  e.n = 0;
  ext (&e, 0x0000, d, sni_data (d, one));
  hello (&o, e.b, e.n, 16384);
  o.b[o.n - e.n - 1] += 1;
  assert_true (parse (&o, &h) < 0 || parse (&o, &h) == PR_TLSHELLO_MORE);
  /* A handshake message other than client_hello. */
  hello (&o, e.b, e.n, 16384);
  o.b[5] = 2;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_BAD);
  /* A zero-length record, an oversized one. */
  memcpy (o.b, "\x16\x03\x01\x00\x00", 5);
  o.n = 5;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_BAD);
  memcpy (o.b, "\x16\x03\x01\x40\x01", 5);
  o.n = 5;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_BAD);
  /* A hello announced larger than the limit. */
  memcpy (o.b, "\x16\x03\x01\x00\x04\x01\x01\x00\x00", 9);
  o.n = 9;
  assert_int_equal (parse (&o, &h), PR_TLSHELLO_BAD);
  /* Never complete within the input bound. */
  o.n = 0;
  while (o.n + 5 + 16 < PR_TLSHELLO_MAX_INPUT)
    {
      uint8_t r[5] = { 22, 3, 1, 0, 16 };
      put (&o, r, 5);
      memset (o.b + o.n, 0, 16);
      if (o.n == 5)
        {
          o.b[5] = 1;
          o.b[6] = 0;
          o.b[7] = 0x3f;
          o.b[8] = 0xf0;
        }
      o.n += 16;
    }
  int r = parse (&o, &h);
  assert_true (r == PR_TLSHELLO_BAD || r == PR_TLSHELLO_MORE);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sni),
    cmocka_unit_test (test_refused),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
