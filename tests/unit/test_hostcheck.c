/* test_hostcheck.c - unit tests for src/rollout/egress/hostcheck.c: the
 * special-purpose table (every line), IPv6 forms carrying IPv4 addresses,
 * the host's networks, the operator's reachable ranges, and the live host. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/rollout/egress/hostcheck.h"

static struct sockaddr_storage
addr (const char *s)
{
  struct sockaddr_storage ss = { 0 };
  if (strchr (s, ':'))
    {
      struct sockaddr_in6 *a = (struct sockaddr_in6 *) &ss;
      a->sin6_family = AF_INET6;
      assert_int_equal (inet_pton (AF_INET6, s, &a->sin6_addr), 1);
    }
  else
    {
      struct sockaddr_in *a = (struct sockaddr_in *) &ss;
      a->sin_family = AF_INET;
      assert_int_equal (inet_pton (AF_INET, s, &a->sin_addr), 1);
    }
  return ss;
}

static enum pr_addr_class
cls (const char *s)
{
  struct sockaddr_storage ss = addr (s);
  return pr_hostcheck_classify ((struct sockaddr *) &ss);
}

static void
test_ranges (void **state)
{
  static const struct
  {
    const char *a;
    enum pr_addr_class c;
  } cases[] = {
    { "0.0.0.0", PR_ADDR_UNSPECIFIED },      { "0.1.2.3", PR_ADDR_UNSPECIFIED },
    { "127.0.0.1", PR_ADDR_LOOPBACK },       { "127.255.255.254", PR_ADDR_LOOPBACK },
    { "169.254.169.254", PR_ADDR_LINK_LOCAL }, { "10.0.0.1", PR_ADDR_PRIVATE },
    { "172.16.0.1", PR_ADDR_PRIVATE },       { "172.31.255.255", PR_ADDR_PRIVATE },
    { "172.32.0.1", PR_ADDR_PUBLIC },        { "192.168.1.1", PR_ADDR_PRIVATE },
    { "100.64.0.1", PR_ADDR_CGNAT },         { "100.127.255.255", PR_ADDR_CGNAT },
    { "100.128.0.1", PR_ADDR_PUBLIC },       { "224.0.0.1", PR_ADDR_MULTICAST },
    { "239.255.255.250", PR_ADDR_MULTICAST }, { "240.0.0.1", PR_ADDR_RESERVED },
    { "255.255.255.255", PR_ADDR_RESERVED }, { "8.8.8.8", PR_ADDR_PUBLIC },
    { "198.18.0.2", PR_ADDR_BENCHMARKING },  { "198.19.255.255", PR_ADDR_BENCHMARKING },
    { "198.20.0.1", PR_ADDR_PUBLIC },        { "192.0.2.1", PR_ADDR_DOCUMENTATION },
    { "198.51.100.7", PR_ADDR_DOCUMENTATION }, { "203.0.113.80", PR_ADDR_DOCUMENTATION },
    { "192.0.0.9", PR_ADDR_PROTOCOL },       { "192.0.0.170", PR_ADDR_PROTOCOL },
    { "192.88.99.1", PR_ADDR_RESERVED },     { "192.31.196.1", PR_ADDR_PUBLIC },
    { "192.52.193.1", PR_ADDR_PUBLIC },      { "192.175.48.1", PR_ADDR_PUBLIC },
    { "2001:db8::1", PR_ADDR_DOCUMENTATION }, { "3fff:fff::1", PR_ADDR_DOCUMENTATION },
    { "2001:2::1", PR_ADDR_BENCHMARKING },   { "100::1", PR_ADDR_DISCARD },
    { "2001:10::1", PR_ADDR_RESERVED },      { "2001:20::1", PR_ADDR_RESERVED },
    { "2001:1::1", PR_ADDR_PROTOCOL },       { "2001:3::1", PR_ADDR_PUBLIC },
    { "2001:4:112::1", PR_ADDR_PUBLIC },     { "2001:30::1", PR_ADDR_PUBLIC },
    { "64:ff9b:1::1", PR_ADDR_TRANSLATION }, { "5f00::1", PR_ADDR_RESERVED },
    { "4000::1", PR_ADDR_RESERVED },         { "::ffff:0:1.2.3.4", PR_ADDR_RESERVED },
    { "2620:4f:8000::1", PR_ADDR_PUBLIC },
    { "::", PR_ADDR_UNSPECIFIED },           { "::1", PR_ADDR_LOOPBACK },
    { "fe80::1", PR_ADDR_LINK_LOCAL },       { "febf::1", PR_ADDR_LINK_LOCAL },
    { "fc00::1", PR_ADDR_PRIVATE },          { "fd12:3456::1", PR_ADDR_PRIVATE },
    { "fec0::1", PR_ADDR_PRIVATE },          { "ff02::1", PR_ADDR_MULTICAST },
    { "2001:4860:4860::8888", PR_ADDR_PUBLIC },
    { "::ffff:127.0.0.1", PR_ADDR_LOOPBACK }, { "::ffff:10.1.2.3", PR_ADDR_PRIVATE },
    { "::ffff:8.8.8.8", PR_ADDR_PUBLIC },    { "::127.0.0.1", PR_ADDR_LOOPBACK },
    { "64:ff9b::a9fe:a9fe", PR_ADDR_LINK_LOCAL }, { "2002:c0a8:0101::1", PR_ADDR_PRIVATE },
    { "2002:0808:0808::1", PR_ADDR_PUBLIC },  { "::8.8.8.8", PR_ADDR_RESERVED },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    if (cls (cases[i].a) != cases[i].c)
      fail_msg ("%s: got %s, want %s", cases[i].a, pr_addr_class_name (cls (cases[i].a)),
                pr_addr_class_name (cases[i].c));
}

/* Every line of the table: its first and last address get its class,
 * unless a longer line inside it says otherwise (then that line's). */
static void
test_table (void **state)
{
  size_t n;
  const struct pr_addr_range *t = pr_hostcheck_table (&n);
  assert_true (n > 30);
  for (size_t i = 0; i < n; i++)
    {
      unsigned full = t[i].family == AF_INET ? 32 : 128;
      assert_true (t[i].len <= full);
      assert_non_null (t[i].name);
      assert_non_null (strstr (t[i].source, "RFC"));
      for (int last = 0; last < 2; last++)
        {
          struct sockaddr_storage ss = { 0 };
          uint8_t *b;
          ss.ss_family = t[i].family;
          b = t[i].family == AF_INET ? (uint8_t *) &((struct sockaddr_in *) &ss)->sin_addr
                                     : ((struct sockaddr_in6 *) &ss)->sin6_addr.s6_addr;
          memcpy (b, t[i].addr, full / 8);
          for (unsigned bit = t[i].len; last && bit < full; bit++)
            b[bit / 8] |= (uint8_t) (0x80 >> (bit % 8));
          /* The most specific line holding this address. */
          const struct pr_addr_range *want = &t[i];
          for (size_t j = 0; j < n; j++)
            {
              if (t[j].family != t[i].family || t[j].len <= want->len)
                continue;
              bool in = true;
              for (unsigned bit = 0; bit < t[j].len && in; bit++)
                in = ((b[bit / 8] ^ t[j].addr[bit / 8]) & (0x80 >> (bit % 8))) == 0;
              if (in)
                want = &t[j];
            }
          enum pr_addr_class got = pr_hostcheck_classify ((struct sockaddr *) &ss);
          /* Lines whose class comes from the IPv4 address they carry (IPv4-mapped,
           * NAT64, Teredo) are checked by test_embedded. */
          if (want->cls == PR_ADDR_PUBLIC && got != PR_ADDR_PUBLIC && t[i].family == AF_INET6)
            continue;
          if (got != want->cls)
            fail_msg ("table line %zu (%s, %s) %s address: got %s, want %s", i, t[i].name, t[i].source,
                      last ? "last" : "first", pr_addr_class_name (got), pr_addr_class_name (want->cls));
        }
    }
}

/* Each IPv6 form of a refused IPv4 address is refused; of a public one,
 * follows the IPv6 rules. */
static void
test_embedded (void **state)
{
  static const struct
  {
    const char *a;
    enum pr_addr_class c;
  } cases[] = {
    { "::ffff:192.0.2.1", PR_ADDR_DOCUMENTATION },     { "::192.0.2.1", PR_ADDR_DOCUMENTATION },
    { "64:ff9b::192.0.2.1", PR_ADDR_DOCUMENTATION },   { "64:ff9b::198.18.0.1", PR_ADDR_BENCHMARKING },
    { "2002:cb00:7150::1", PR_ADDR_DOCUMENTATION },    { "2002:c612:1::1", PR_ADDR_BENCHMARKING },
    /* Teredo: server 192.0.2.1, then a public server and client
     * 203.0.113.80 stored inverted (34ff:8eaf). */
    { "2001:0:c000:201::1", PR_ADDR_DOCUMENTATION },   { "2001:0:808:808:0:0:34ff:8eaf", PR_ADDR_DOCUMENTATION },
    { "2001:0:808:808:0:0:f7f7:f7f7", PR_ADDR_PUBLIC }, { "::ffff:100.64.0.1", PR_ADDR_CGNAT },
    { "::ffff:8.8.4.4", PR_ADDR_PUBLIC },              { "64:ff9b::8.8.4.4", PR_ADDR_PUBLIC },
    { "::ffff:255.255.255.255", PR_ADDR_RESERVED },    { "2002:7f00:1::1", PR_ADDR_LOOPBACK },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    if (cls (cases[i].a) != cases[i].c)
      fail_msg ("%s: got %s, want %s", cases[i].a, pr_addr_class_name (cls (cases[i].a)),
                pr_addr_class_name (cases[i].c));
}

static struct pr_host_prefix
hp (const char *s, unsigned len, enum pr_host_prefix_kind kind)
{
  struct pr_host_prefix p = { .len = len, .kind = kind };
  p.family = strchr (s, ':') ? AF_INET6 : AF_INET;
  assert_int_equal (inet_pton (p.family, s, p.addr), 1);
  return p;
}

static void
test_host (void **state)
{
  struct pr_host_prefix h[] = {
    hp ("8.8.8.0", 24, PR_HOST_ONLINK), hp ("8.8.8.7", 32, PR_HOST_OWN), hp ("8.8.8.1", 32, PR_HOST_GATEWAY),
    hp ("2606:4700::", 64, PR_HOST_ONLINK), hp ("2606:4700::1", 128, PR_HOST_GATEWAY),
    hp ("2606:4700::7", 128, PR_HOST_OWN),
  };
  static const struct
  {
    const char *a;
    enum pr_addr_class c;
  } cases[] = {
    { "8.8.8.7", PR_ADDR_HOST_OWN },        { "8.8.8.1", PR_ADDR_HOST_GATEWAY },
    { "8.8.8.200", PR_ADDR_HOST_ONLINK },   { "8.8.9.1", PR_ADDR_PUBLIC },
    { "::ffff:8.8.8.7", PR_ADDR_HOST_OWN }, { "::ffff:8.8.8.9", PR_ADDR_HOST_ONLINK },
    { "2002:808:807::1", PR_ADDR_HOST_OWN }, { "2606:4700::7", PR_ADDR_HOST_OWN },
    { "2606:4700::1", PR_ADDR_HOST_GATEWAY }, { "2606:4700::99", PR_ADDR_HOST_ONLINK },
    { "2606:4700:1::1", PR_ADDR_PUBLIC },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    {
      struct sockaddr_storage ss = addr (cases[i].a);
      enum pr_addr_class got = pr_hostcheck_host ((struct sockaddr *) &ss, h, PR_ARRAY_SIZE (h));
      if (got != cases[i].c)
        fail_msg ("%s: got %s, want %s", cases[i].a, pr_addr_class_name (got), pr_addr_class_name (cases[i].c));
    }
}

static void
test_reachable_parse (void **state)
{
  struct pr_reachable r;
  pr_error *err = NULL;
  static const char *const bad[] = {
    "198.18.0.0/33", "198.18.0.1/15", "198.18.0.0/", "198.18.0.0/015", "nope", "198.18.0.0/15,,1.2.3.4",
    "127.0.0.0/8", "0.0.0.0/0", "169.254.169.254", "224.0.0.0/4", "::1", "::/0", "fe80::/10", "2001:db8::/129",
    "11.0.0.0/7",
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (bad); i++)
    {
      if (pr_reachable_parse (bad[i], &r, &err) == 0)
        fail_msg ("`%s` was accepted", bad[i]);
      assert_non_null (err);
      assert_non_null (strchr (err->msg, '`'));
      pr_error_free (&err);
      assert_int_equal (r.n, 0);
    }
  char many[64 * 20] = "";
  for (int i = 0; i < 65; i++)
    snprintf (many + strlen (many), sizeof many - strlen (many), "%s198.18.%d.0/24", i ? "," : "", i);
  assert_int_equal (pr_reachable_parse (many, &r, &err), -1);
  pr_error_free (&err);

  assert_int_equal (pr_reachable_parse ("", &r, &err), 0);
  assert_int_equal (r.n, 0);
  assert_int_equal (pr_reachable_parse (" 198.18.0.0/15 , 203.0.113.80,2001:db8::/32,10.1.0.0/16", &r, &err), 0);
  assert_int_equal (r.n, 4);
  _cleanup_free_ char *f = pr_reachable_format (&r);
  assert_string_equal (f, "198.18.0.0/15,203.0.113.80/32,2001:db8::/32,10.1.0.0/16");
  pr_reachable_free (&r);
}

/* The full decision: the table, the host's networks, and the operator's
 * ranges, which widen documentation, benchmarking, private, on-link and
 * gateway addresses but never the host's own, loopback or link-local. */
static void
test_decide (void **state)
{
  struct pr_host_prefix h[] = {
    hp ("192.0.2.0", 24, PR_HOST_ONLINK), hp ("192.0.2.2", 32, PR_HOST_OWN), hp ("192.0.2.1", 32, PR_HOST_GATEWAY),
    hp ("198.18.7.0", 24, PR_HOST_ONLINK), hp ("198.18.7.1", 32, PR_HOST_OWN), hp ("8.8.8.0", 24, PR_HOST_ONLINK),
  };
  struct pr_reachable r;
  pr_error *err = NULL;
  assert_int_equal (pr_reachable_parse ("198.18.0.0/15,203.0.113.80,8.8.8.0/24,10.0.0.0/8", &r, &err), 0);
  static const struct
  {
    const char *a;
    enum pr_addr_class without, with;
  } cases[] = {
    { "198.18.7.2", PR_ADDR_BENCHMARKING, PR_ADDR_PUBLIC },  { "198.18.7.1", PR_ADDR_HOST_OWN, PR_ADDR_HOST_OWN },
    { "203.0.113.80", PR_ADDR_DOCUMENTATION, PR_ADDR_PUBLIC },
    { "203.0.113.81", PR_ADDR_DOCUMENTATION, PR_ADDR_DOCUMENTATION },
    { "192.0.2.1", PR_ADDR_DOCUMENTATION, PR_ADDR_DOCUMENTATION }, { "192.0.2.2", PR_ADDR_HOST_OWN, PR_ADDR_HOST_OWN },
    { "8.8.8.8", PR_ADDR_HOST_ONLINK, PR_ADDR_PUBLIC },      { "8.8.4.4", PR_ADDR_PUBLIC, PR_ADDR_PUBLIC },
    { "10.1.2.3", PR_ADDR_PRIVATE, PR_ADDR_PUBLIC },         { "127.0.0.1", PR_ADDR_LOOPBACK, PR_ADDR_LOOPBACK },
    { "::ffff:198.18.7.2", PR_ADDR_BENCHMARKING, PR_ADDR_PUBLIC },
    { "::ffff:198.18.7.1", PR_ADDR_HOST_OWN, PR_ADDR_HOST_OWN },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    {
      struct sockaddr_storage ss = addr (cases[i].a);
      enum pr_addr_class a = pr_hostcheck_decide ((struct sockaddr *) &ss, h, PR_ARRAY_SIZE (h), NULL);
      enum pr_addr_class b = pr_hostcheck_decide ((struct sockaddr *) &ss, h, PR_ARRAY_SIZE (h), &r);
      if (a != cases[i].without || b != cases[i].with)
        fail_msg ("%s: got %s / %s, want %s / %s", cases[i].a, pr_addr_class_name (a), pr_addr_class_name (b),
                  pr_addr_class_name (cases[i].without), pr_addr_class_name (cases[i].with));
    }
  pr_reachable_free (&r);
}

/* The live check sees this host's real networks: every configured address
 * and the default gateway are refused, whatever their range. */
static void
test_live (void **state)
{
  struct pr_host_nets h;
  pr_error *err = NULL;
  struct ifaddrs *ifa;

  assert_int_equal (pr_host_nets_init (&h, &err), 0);
  assert_true (h.n > 0);
  assert_int_equal (getifaddrs (&ifa), 0);
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
      {
        /* Even with the whole address space of its family named reachable
         * (as far as the setting allows): own addresses never are. */
        assert_int_not_equal (pr_hostcheck_cached (&h, NULL, i->ifa_addr), PR_ADDR_PUBLIC);
        if (i->ifa_addr->sa_family == AF_INET && pr_hostcheck_classify (i->ifa_addr) == PR_ADDR_PUBLIC)
          assert_int_equal (pr_hostcheck_cached (&h, NULL, i->ifa_addr), PR_ADDR_HOST_OWN);
      }
  freeifaddrs (ifa);
  bool gw = false;
  for (size_t i = 0; i < h.n; i++)
    if (h.v[i].kind == PR_HOST_GATEWAY)
      {
        struct sockaddr_storage ss = { .ss_family = h.v[i].family };
        memcpy (h.v[i].family == AF_INET ? (void *) &((struct sockaddr_in *) &ss)->sin_addr
                                         : (void *) &((struct sockaddr_in6 *) &ss)->sin6_addr,
                h.v[i].addr, h.v[i].family == AF_INET ? 4 : 16);
        assert_int_not_equal (pr_hostcheck_cached (&h, NULL, (struct sockaddr *) &ss), PR_ADDR_PUBLIC);
        gw = true;
      }
  FILE *f = fopen ("/proc/net/route", "r");
  char line[256];
  bool has_default = false;
  while (f && fgets (line, sizeof line, f))
    if (strncmp (line + strcspn (line, "\t"), "\t00000000", 9) == 0)
      has_default = true;
  if (f)
    fclose (f);
  if (has_default)
    assert_true (gw);
  pr_host_nets_free (&h);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ranges),   cmocka_unit_test (test_table),          cmocka_unit_test (test_embedded),
    cmocka_unit_test (test_host),     cmocka_unit_test (test_reachable_parse), cmocka_unit_test (test_decide),
    cmocka_unit_test (test_live),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
