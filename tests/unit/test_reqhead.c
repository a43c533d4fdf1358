/* test_reqhead.c - unit tests for src/rollout/egress/reqhead.c: head
 * delimiting, request line and target forms, field syntax and limits,
 * framing, the upstream rewrite, the proxy token, the body tracker, and
 * the heads sent straight to an origin (pr_reqhead_parse_origin). */
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
#include "../../src/rollout/egress/reqhead.h"

static int
parse (const char *s, struct pr_reqhead *rh)
{
  const char *why;
  return pr_reqhead_parse (s, strlen (s), rh, &why);
}

static void
test_find_end (void **state)
{
  const char *a = "GET http://a/ HTTP/1.1\r\nX: y\r\n\r\nBODY";
  assert_int_equal (pr_reqhead_find_end (a, strlen (a), 16384), strlen (a) - 4);
  assert_int_equal (pr_reqhead_find_end (a, 20, 16384), 0);
  const char *b = "GET http://a/ HTTP/1.1\nX: y\n\n";
  assert_int_equal (pr_reqhead_find_end (b, strlen (b), 16384), strlen (b));
  assert_int_equal (pr_reqhead_find_end (a, strlen (a), 10), -1);
}

static void
test_absolute_form (void **state)
{
  struct pr_reqhead rh;
  assert_int_equal (parse ("GET http://Example.COM./a/b?q=1 HTTP/1.1\r\nHost: x\r\n\r\n", &rh), 0);
  assert_string_equal (rh.method, "GET");
  assert_string_equal (rh.host, "example.com");
  assert_int_equal (rh.port, 80);
  assert_int_equal (rh.path_len, 8);
  assert_memory_equal (rh.path, "/a/b?q=1", 8);
  assert_false (rh.is_connect);
  assert_int_equal (parse ("GET http://h:8080 HTTP/1.0\r\n\r\n", &rh), 0);
  assert_int_equal (rh.port, 8080);
  assert_int_equal (rh.path_len, 0);
  assert_int_equal (rh.minor, 0);
  assert_int_equal (parse ("GET http://[2001:db8::1]:81/ HTTP/1.1\r\n\r\n", &rh), 0);
  assert_string_equal (rh.host, "2001:db8::1");
  assert_true (rh.host_is_ipv6);
  assert_int_equal (rh.port, 81);
}

static void
test_connect (void **state)
{
  struct pr_reqhead rh;
  assert_int_equal (parse ("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", &rh), 0);
  assert_true (rh.is_connect);
  assert_string_equal (rh.host, "pypi.org");
  assert_int_equal (rh.port, 443);
  assert_int_equal (parse ("CONNECT [::1]:22 HTTP/1.1\r\n\r\n", &rh), 0);
  assert_string_equal (rh.host, "::1");
  assert_int_equal (parse ("CONNECT pypi.org HTTP/1.1\r\n\r\n", &rh), 400);
  assert_int_equal (parse ("CONNECT pypi.org:0 HTTP/1.1\r\n\r\n", &rh), 400);
  assert_int_equal (parse ("CONNECT pypi.org:65536 HTTP/1.1\r\n\r\n", &rh), 400);
  assert_int_equal (parse ("CONNECT a:b:443 HTTP/1.1\r\n\r\n", &rh), 400);
}

static void
test_bad_requests (void **state)
{
  struct pr_reqhead rh;
  static const char *const bad400[] = {
    "GET /x HTTP/1.1\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\n\r\n",
    "GET https://a/ HTTP/1.1\r\n\r\n",
    "GET ftp://a/ HTTP/1.1\r\n\r\n",
    "GET http://u:p@a/ HTTP/1.1\r\n\r\n",
    "GET http://a/#f HTTP/1.1\r\n\r\n",
    "GET http://0x7f.1/ HTTP/1.1\r\n\r\n",
    "GET http://2130706433/ HTTP/1.1\r\n\r\n",
    "GET http://127.1/ HTTP/1.1\r\n\r\n",
    "GET http://a..b/ HTTP/1.1\r\n\r\n",
    "GET http://a%2eb/ HTTP/1.1\r\n\r\n",
    "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\n folded\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nX : y\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nX: a\x01\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
    "GET http://a/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
    "GET  http://a/ HTTP/1.1\r\n\r\n",
    "GET http://a/ http/1.1\r\n\r\n",
    "\r\n\r\n",
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (bad400); i++)
    {
      int r = parse (bad400[i], &rh);
      if (r != 400)
        fail_msg ("case %zu: %d for %s", i, r, bad400[i]);
    }
  assert_int_equal (parse ("GET http://a/ HTTP/2.0\r\n\r\n", &rh), 505);
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &rh), 501);
}

static void
test_field_limit (void **state)
{
  struct pr_reqhead rh;
  char *s = xstrdup ("GET http://a/ HTTP/1.1\r\n");
  for (int i = 0; i < PR_REQHEAD_MAX_HEADERS; i++)
    {
      char *n = xasprintf ("%sX-%d: v\r\n", s, i);
      free (s);
      s = n;
    }
  char *ok = xasprintf ("%s\r\n", s);
  assert_int_equal (parse (ok, &rh), 0);
  assert_int_equal (rh.n_fields, PR_REQHEAD_MAX_HEADERS);
  char *over = xasprintf ("%sY: v\r\n\r\n", s);
  assert_int_equal (parse (over, &rh), 431);
  free (s);
  free (ok);
  free (over);
}

static void
test_rewrite (void **state)
{
  struct pr_reqhead rh;
  const char *in = "POST http://h.test:8080?x HTTP/1.1\r\n"
                   "Host: evil.test\r\n"
                   "Connection: keep-alive, X-Hop\r\n"
                   "X-Hop: 1\r\n"
                   "Keep-Alive: 5\r\n"
                   "Proxy-Connection: keep-alive\r\n"
                   "Proxy-Authorization: Basic YWJjOg==\r\n"
                   "TE: trailers\r\n"
                   "Upgrade: websocket\r\n"
                   "Content-Length: 3\r\n"
                   "X-Keep: yes\r\n\r\n";
  size_t len;
  assert_int_equal (parse (in, &rh), 0);
  char *out = pr_reqhead_rewrite (&rh, &len);
  assert_int_equal (len, strlen (out));
  assert_string_equal (out, "POST /?x HTTP/1.1\r\n"
                            "Host: h.test:8080\r\n"
                            "Content-Length: 3\r\n"
                            "X-Keep: yes\r\n"
                            "Connection: close\r\n\r\n");
  assert_int_equal (rh.body, PR_BODY_LENGTH);
  assert_int_equal (rh.content_length, 3);
  free (out);
}

static void
test_token (void **state)
{
  struct pr_reqhead rh;
  char tok[64];
  /* "abc:" and "abc:secret" and "abc" */
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nProxy-Authorization: Basic YWJjOg==\r\n\r\n", &rh), 0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, sizeof tok), 1);
  assert_string_equal (tok, "abc");
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nproxy-authorization: basic YWJjOnNlY3JldA==\r\n\r\n", &rh), 0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, sizeof tok), 1);
  assert_string_equal (tok, "abc");
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\n\r\n", &rh), 0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, sizeof tok), 0);
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nProxy-Authorization: Bearer xyz\r\n\r\n", &rh), 0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, sizeof tok), -1);
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nProxy-Authorization: Basic !!!\r\n\r\n", &rh), 0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, sizeof tok), -1);
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nProxy-Authorization: Basic YWJjOg==\r\n"
                           "Proxy-Authorization: Basic YWJjOg==\r\n\r\n",
                           &rh),
                    0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, sizeof tok), -1);
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\nProxy-Authorization: Basic YWJjOg==\r\n\r\n", &rh), 0);
  assert_int_equal (pr_reqhead_proxy_token (&rh, tok, 3), -1);
}

static void
test_body_chunked (void **state)
{
  struct pr_reqhead rh;
  struct pr_body_tracker t;
  const char *body = "5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\nGET http://evil/ HTTP/1.1\r\n\r\n";
  size_t blen = strlen ("5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n");

  assert_int_equal (parse ("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &rh), 0);
  assert_int_equal (rh.body, PR_BODY_CHUNKED);
  /* whole, and byte by byte */
  pr_body_init (&t, &rh);
  assert_int_equal (pr_body_feed (&t, body, strlen (body)), blen);
  assert_true (t.done);
  pr_body_init (&t, &rh);
  size_t n = 0;
  for (size_t i = 0; i < strlen (body) && !t.done; i++)
    n += pr_body_feed (&t, body + i, 1);
  assert_int_equal (n, blen);
  /* malformed */
  pr_body_init (&t, &rh);
  assert_int_equal (pr_body_feed (&t, "zz\r\n", 4), -1);
  pr_body_init (&t, &rh);
  assert_int_equal (pr_body_feed (&t, "1\r\nab\r\n", 7), -1);
  pr_body_init (&t, &rh);
  assert_int_equal (pr_body_feed (&t, "1234567890abcdef0\r\n", 19), -1);
}

static void
test_body_length (void **state)
{
  struct pr_reqhead rh;
  struct pr_body_tracker t;
  assert_int_equal (parse ("POST http://a/ HTTP/1.1\r\nContent-Length: 4\r\n\r\n", &rh), 0);
  pr_body_init (&t, &rh);
  assert_int_equal (pr_body_feed (&t, "ab", 2), 2);
  assert_false (t.done);
  assert_int_equal (pr_body_feed (&t, "cdEXTRA", 7), 2);
  assert_true (t.done);
  assert_int_equal (parse ("GET http://a/ HTTP/1.1\r\n\r\n", &rh), 0);
  pr_body_init (&t, &rh);
  assert_true (t.done);
  assert_int_equal (pr_body_feed (&t, "x", 1), 0);
}

static void
test_host_field (void **state)
{
  static const struct
  {
    const char *head;
    int status;
  } cases[] = {
    { "GET http://a.test:8081/ HTTP/1.1\r\nHost: a.test:8081\r\n\r\n", 0 },
    { "GET http://a.test:8081/ HTTP/1.1\r\nHost: A.Test.:8081\r\n\r\n", 0 },
    { "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 0 },
    { "GET http://a.test/ HTTP/1.1\r\nHost: a.test:80\r\n\r\n", 0 },
    { "GET http://a.test/ HTTP/1.0\r\n\r\n", 0 },
    { "GET http://[2001:db8::1]:8080/ HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n", 0 },
    { "GET http://a.test:8081/ HTTP/1.1\r\nHost: b.test:8081\r\n\r\n", 403 },
    { "GET http://a.test:8081/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 403 },
    { "GET http://a.test/ HTTP/1.1\r\nHost: sub.a.test\r\n\r\n", 403 },
    { "GET http://1.2.3.4/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 403 },
    { "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHOST: a.test\r\n\r\n", 400 },
    { "GET http://a.test/ HTTP/1.1\r\nHost:\r\n\r\n", 400 },
    { "GET http://a.test/ HTTP/1.1\r\nHost: a.test:x\r\n\r\n", 400 },
    { "GET http://a.test/ HTTP/1.1\r\nHost: u@a.test\r\n\r\n", 400 },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    {
      struct pr_reqhead rh;
      const char *why = NULL;
      assert_int_equal (parse (cases[i].head, &rh), 0);
      int r = pr_reqhead_check_host (&rh, &why);
      if (r != cases[i].status)
        fail_msg ("%s: got %d, want %d", cases[i].head, r, cases[i].status);
      if (r != 0)
        assert_non_null (why);
    }
}

static int
parse_origin (const char *s, struct pr_reqhead *rh)
{
  const char *why = NULL;
  int r = pr_reqhead_parse_origin (s, strlen (s), rh, &why);
  if (r != 0 && why == NULL)
    fail_msg ("%s: status %d without a reason", s, r);
  return r;
}

/* Transparent egress: heads a client sends to what it takes for the
 * origin.  Origin-form takes its target from the one Host field. */
static void
test_origin_form (void **state)
{
  struct pr_reqhead rh;
  assert_int_equal (parse_origin ("GET /a/b?q=1 HTTP/1.1\r\nHost: Agent.Test.\r\nAccept: */*\r\n\r\n", &rh), 0);
  assert_true (rh.origin_form);
  assert_string_equal (rh.host, "agent.test");
  assert_int_equal (rh.port, 80);
  assert_memory_equal (rh.path, "/a/b?q=1", 8);
  assert_int_equal (parse_origin ("GET / HTTP/1.0\r\nHost: agent.test:8080\r\n\r\n", &rh), 0);
  assert_int_equal (rh.port, 8080);
  assert_int_equal (rh.minor, 0);
  assert_int_equal (parse_origin ("GET / HTTP/1.1\r\nHost: [2001:db8::1]:81\r\n\r\n", &rh), 0);
  assert_true (rh.host_is_ipv6);
  /* Absolute-form is allowed (RFC 9112 section 3.2.2: a server accepts
   * it) when its Host field names the same host and port. */
  assert_int_equal (parse_origin ("GET http://agent.test/x HTTP/1.1\r\nHost: agent.test:80\r\n\r\n", &rh), 0);
  assert_false (rh.origin_form);
  assert_string_equal (rh.host, "agent.test");
  /* The upstream head: origin-form, Host rebuilt, hop-by-hop fields out,
   * one request per connection. */
  size_t len;
  assert_int_equal (parse_origin ("POST /up HTTP/1.1\r\nHost: agent.test:8080\r\nConnection: keep-alive\r\n"
                                  "Keep-Alive: 5\r\nContent-Length: 2\r\n\r\n",
                                  &rh),
                    0);
  char *out = pr_reqhead_rewrite (&rh, &len);
  assert_string_equal (out, "POST /up HTTP/1.1\r\nHost: agent.test:8080\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");
  assert_int_equal (rh.body, PR_BODY_LENGTH);
  free (out);
  assert_int_equal (parse_origin ("GET http://agent.test/ HTTP/1.1\r\nHost: agent.test\r\n\r\n", &rh), 0);
  out = pr_reqhead_rewrite (&rh, &len);
  assert_string_equal (out, "GET / HTTP/1.1\r\nHost: agent.test\r\nConnection: close\r\n\r\n");
  free (out);
}

/* What a fresh attacker sent on the transparent path, and the rest of the
 * proxy's refusals. */
static void
test_origin_refused (void **state)
{
  static const struct
  {
    const char *head;
    int status;
  } cases[] = {
    { "GET / HTTP/1.1\r\nHost: agent.test\r\nHost: denied.test\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: agent.test\r\nhost: agent.test\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: agent.test\r\n denied.test\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost:\r\n denied.test\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nX: y\r\n\tHost: denied.test\r\n\r\n", 400 },
    { "GET http://denied.test/ HTTP/1.1\r\nHost: agent.test\r\n\r\n", 403 },
    { "GET http://agent.test:81/ HTTP/1.1\r\nHost: agent.test\r\n\r\n", 403 },
    { "GET http://agent.test/ HTTP/1.1\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\n\r\n", 400 },
    { "GET / HTTP/1.0\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: u@agent.test\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: agent.test:x\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: agent.test/x\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: agent.test denied.test\r\n\r\n", 400 },
    { "GET /#f HTTP/1.1\r\nHost: agent.test\r\n\r\n", 400 },
    { "OPTIONS * HTTP/1.1\r\nHost: agent.test\r\n\r\n", 400 },
    { "CONNECT agent.test:443 HTTP/1.1\r\nHost: agent.test:443\r\n\r\n", 400 },
    { "GET https://agent.test/ HTTP/1.1\r\nHost: agent.test\r\n\r\n", 400 },
    { "POST / HTTP/1.1\r\nHost: agent.test\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400 },
    { "POST / HTTP/1.1\r\nHost: agent.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400 },
    { "POST / HTTP/1.0\r\nHost: agent.test\r\nTransfer-Encoding: chunked\r\n\r\n", 400 },
    { "POST / HTTP/1.1\r\nHost: agent.test\r\nTransfer-Encoding: gzip\r\n\r\n", 501 },
    { "GET / HTTP/2.0\r\nHost: agent.test\r\n\r\n", 505 },
    { "GET / HTTP/1.1\r\nHost: agent.test\r\n\r\nGET / HTTP/1.1\r\nHost: denied.test\r\n\r\n", 400 },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    {
      struct pr_reqhead rh;
      int r = parse_origin (cases[i].head, &rh);
      if (r != cases[i].status)
        fail_msg ("case %zu: got %d, want %d for %s", i, r, cases[i].status, cases[i].head);
    }
  /* The proxy's own parser still refuses origin-form. */
  struct pr_reqhead rh;
  assert_int_equal (parse ("GET / HTTP/1.1\r\nHost: agent.test\r\n\r\n", &rh), 400);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_find_end),     cmocka_unit_test (test_absolute_form), cmocka_unit_test (test_connect),
    cmocka_unit_test (test_bad_requests), cmocka_unit_test (test_field_limit),   cmocka_unit_test (test_rewrite),
    cmocka_unit_test (test_token),        cmocka_unit_test (test_body_chunked),  cmocka_unit_test (test_body_length),
    cmocka_unit_test (test_host_field),   cmocka_unit_test (test_origin_form),   cmocka_unit_test (test_origin_refused),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
