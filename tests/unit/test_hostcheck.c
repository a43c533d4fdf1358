/* test_hostcheck.c - unit tests for src/rollout/egress/hostcheck.c: the
 * special-purpose ranges, IPv6 forms carrying IPv4 addresses, and the
 * host's own addresses. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
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
    { "198.18.0.2", PR_ADDR_PUBLIC },        { "192.0.2.1", PR_ADDR_PUBLIC },
    { "::", PR_ADDR_UNSPECIFIED },           { "::1", PR_ADDR_LOOPBACK },
    { "fe80::1", PR_ADDR_LINK_LOCAL },       { "febf::1", PR_ADDR_LINK_LOCAL },
    { "fc00::1", PR_ADDR_PRIVATE },          { "fd12:3456::1", PR_ADDR_PRIVATE },
    { "fec0::1", PR_ADDR_PRIVATE },          { "ff02::1", PR_ADDR_MULTICAST },
    { "2001:4860:4860::8888", PR_ADDR_PUBLIC },
    { "::ffff:127.0.0.1", PR_ADDR_LOOPBACK }, { "::ffff:10.1.2.3", PR_ADDR_PRIVATE },
    { "::ffff:8.8.8.8", PR_ADDR_PUBLIC },    { "::127.0.0.1", PR_ADDR_LOOPBACK },
    { "64:ff9b::a9fe:a9fe", PR_ADDR_LINK_LOCAL }, { "2002:c0a8:0101::1", PR_ADDR_PRIVATE },
    { "2002:0808:0808::1", PR_ADDR_PUBLIC },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (cases); i++)
    if (cls (cases[i].a) != cases[i].c)
      fail_msg ("%s: got %s, want %s", cases[i].a, pr_addr_class_name (cls (cases[i].a)),
                pr_addr_class_name (cases[i].c));
}

static void
test_own (void **state)
{
  struct sockaddr_storage own4 = addr ("203.0.113.7"), own6 = addr ("2001:db8::7");
  struct ifaddrs i6 = { .ifa_next = NULL, .ifa_addr = (struct sockaddr *) &own6 };
  struct ifaddrs i4 = { .ifa_next = &i6, .ifa_addr = (struct sockaddr *) &own4 };
  struct sockaddr_storage a = addr ("203.0.113.7"), b = addr ("203.0.113.8"), c = addr ("::ffff:203.0.113.7"),
                          d = addr ("2001:db8::7");

  assert_true (pr_hostcheck_is_own ((struct sockaddr *) &a, &i4));
  assert_false (pr_hostcheck_is_own ((struct sockaddr *) &b, &i4));
  assert_true (pr_hostcheck_is_own ((struct sockaddr *) &c, &i4));
  assert_true (pr_hostcheck_is_own ((struct sockaddr *) &d, &i4));
  assert_false (pr_hostcheck_is_own ((struct sockaddr *) &a, NULL));
}

/* The live check sees this host's real addresses: every configured
 * address is refused, whatever its range. */
static void
test_live (void **state)
{
  struct ifaddrs *ifa;
  assert_int_equal (getifaddrs (&ifa), 0);
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
      assert_int_not_equal (pr_hostcheck (i->ifa_addr), PR_ADDR_PUBLIC);
  freeifaddrs (ifa);
  struct sockaddr_storage pub = addr ("198.51.100.200");
  assert_int_equal (pr_hostcheck ((struct sockaddr *) &pub), PR_ADDR_PUBLIC);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ranges),
    cmocka_unit_test (test_own),
    cmocka_unit_test (test_live),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
