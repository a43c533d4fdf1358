/* test_policy.c - unit tests for src/rollout/policy.c: every rejection of
 * an invalid rollout policy with its exact one-line message, a full valid
 * policy's values, the defaults, the phase fallbacks, host matching,
 * drop_env patterns, "@/path" loading and the normalised JSON form. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/rollout/policy.h"

struct bad_case
{
  const char *json;
  const char *msg; /* the exact error message */
};

static const struct bad_case bad_cases[] = {
  { "{\"version\": 1,", "rollout policy: malformed JSON: parse error: premature EOF" },
  { "[1]", "rollout policy: expected a JSON object, got an array" },
  { "{\"version\": 1, \"hide\": [\"/tests\\u0000/x\"]}",
    "rollout policy: malformed JSON: \\u0000 (NUL) in a string at offset 31" },
  { "{}", "rollout policy: version: missing (expected 1)" },
  { "{\"version\": 2}", "rollout policy: version: unsupported version 2 (expected 1)" },
  { "{\"version\": \"1\"}", "rollout policy: version: expected the integer 1, got a string" },
  { "{\"version\": 1, \"agnet\": {}}", "rollout policy: unknown key \"agnet\"" },
  { "{\"version\": 1, \"version\": 1}", "rollout policy: key \"version\" given twice" },
  { "{\"version\": 1, \"a\\nb\": 1}", "rollout policy: unknown key \"a\\nb\"" },
  { "{\"version\": 1, \"agent\": {\"usr\": \"1000\"}}", "rollout policy: agent: unknown key \"usr\"" },
  { "{\"version\": 1, \"agent\": []}", "rollout policy: agent: expected an object, got an array" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"open\"}}",
    "rollout policy: agent.network_mode: unknown mode \"open\" (expected no-network, none, allowlist or public)" },
  { "{\"version\": 1, \"environment\": {\"network_mode\": 1}}",
    "rollout policy: environment.network_mode: expected a string, got an integer" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"\" empty host name" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"http://example.com\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"http://example.com\" is a URL; give the host name only, without a "
    "scheme" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"ok.com\", \"example.com:443\"]}}",
    "rollout policy: agent.allowed_hosts[1]: \"example.com:443\" has a port (or is an IPv6 literal); give the host "
    "name only" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"example.com/x\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"example.com/x\" has a path; give the host name only" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"exa mple.com\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"exa mple.com\" contains a space" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"*.example.com\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"*.example.com\" wildcards other than a lone \"*\" are not supported "
    "(an entry already matches its subdomains)" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"a..b\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"a..b\" has an empty label" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"0.0.1\"]}}",
    "rollout policy: agent.allowed_hosts[0]: \"0.0.1\" is neither a host name nor an IPv4 address" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [1]}}",
    "rollout policy: agent.allowed_hosts[0]: expected a string, got an integer" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"public\", \"allowed_hosts\": [\"a.com\"]}}",
    "rollout policy: agent.allowed_hosts: only used with network_mode \"allowlist\" (agent.network_mode is "
    "\"public\")" },
  { "{\"version\": 1, \"agent\": {\"allowed_hosts\": [\"a.com\"]}}",
    "rollout policy: agent.allowed_hosts: needs \"network_mode\": \"allowlist\" in the same table" },
  { "{\"version\": 1, \"agent\": {\"env\": {\"A=B\": \"x\"}}}",
    "rollout policy: agent.env: \"A=B\" is not a valid variable name (non-empty, no '=', no spaces)" },
  { "{\"version\": 1, \"agent\": {\"env\": {\"\": \"x\"}}}",
    "rollout policy: agent.env: \"\" is not a valid variable name (non-empty, no '=', no spaces)" },
  { "{\"version\": 1, \"agent\": {\"env\": {\"N\": 1}}}", "rollout policy: agent.env.N: expected a string, got an integer" },
  { "{\"version\": 1, \"agent\": {\"env\": [\"N=1\"]}}", "rollout policy: agent.env: expected an object, got an array" },
  { "{\"version\": 1, \"verifier\": {\"env\": {\"PROCTOR_PHASE\": \"agent\"}}}",
    "rollout policy: verifier.env: \"PROCTOR_PHASE\": PROCTOR_* variables are reserved" },
  { "{\"version\": 1, \"agent\": {\"user\": \"\"}}", "rollout policy: agent.user: empty user" },
  { "{\"version\": 1, \"agent\": {\"user\": 1000}}", "rollout policy: agent.user: expected a string, got an integer" },
  { "{\"version\": 1, \"agent\": {\"user\": \"a:b:c\"}}",
    "rollout policy: agent.user: \"a:b:c\" is not of the form user[:group]" },
  { "{\"version\": 1, \"hide\": [\"/\"]}", "rollout policy: hide[0]: \"/\" cannot be hidden" },
  { "{\"version\": 1, \"hide\": [\"//\"]}", "rollout policy: hide[0]: \"/\" cannot be hidden" },
  { "{\"version\": 1, \"hide\": [\"tests\"]}", "rollout policy: hide[0]: \"tests\" must be an absolute path" },
  { "{\"version\": 1, \"hide\": [\"/a/../etc\"]}", "rollout policy: hide[0]: \"/a/../etc\" must not contain \"..\"" },
  { "{\"version\": 1, \"hide\": [\"/proc/self\"]}",
    "rollout policy: hide[0]: \"/proc/self\" is under /proc, which cannot be hidden" },
  { "{\"version\": 1, \"hide\": [\"/sys\"]}", "rollout policy: hide[0]: \"/sys\" is under /sys, which cannot be hidden" },
  { "{\"version\": 1, \"hide\": [\"/dev/shm\"]}",
    "rollout policy: hide[0]: \"/dev/shm\" is under /dev, which cannot be hidden" },
  { "{\"version\": 1, \"hide\": [\"/tests\", \"/tests/\"]}",
    "rollout policy: hide[1]: \"/tests/\" is listed twice (hide[0])" },
  { "{\"version\": 1, \"hide\": [\"/logs\", \"/logs/verifier\"]}",
    "rollout policy: hide[1]: \"/logs/verifier\" is inside \"/logs\" (hide[0]), which is already hidden" },
  { "{\"version\": 1, \"hide\": \"/tests\"}", "rollout policy: hide: expected an array, got a string" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/\", \"destination\": \"/t\"}, "
    "{\"source\": \"/nope\", \"destination\": \"/u\"}]}}",
    "rollout policy: verifier.mounts[1].source: \"/nope\" does not exist" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"tmp\", \"destination\": \"/t\"}]}}",
    "rollout policy: verifier.mounts[0].source: \"tmp\" must be an absolute path" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"destination\": \"/t\"}]}}",
    "rollout policy: verifier.mounts[0].source: missing" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/\", \"destination\": \"t\"}]}}",
    "rollout policy: verifier.mounts[0].destination: \"t\" must be an absolute path" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/\", \"destination\": \"/\"}]}}",
    "rollout policy: verifier.mounts[0].destination: cannot mount over \"/\"" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/\", \"destination\": \"/t\"}, "
    "{\"source\": \"/tmp\", \"destination\": \"/t/\"}]}}",
    "rollout policy: verifier.mounts[1].destination: \"/t/\" is already the destination of verifier.mounts[0]" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/\", \"destination\": \"/t\", \"readonly\": "
    "\"yes\"}]}}",
    "rollout policy: verifier.mounts[0].readonly: expected a boolean, got a string" },
  { "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/\", \"destination\": \"/t\", \"rw\": true}]}}",
    "rollout policy: verifier.mounts[0]: unknown key \"rw\"" },
  { "{\"version\": 1, \"agent\": {\"mounts\": []}}", "rollout policy: agent: unknown key \"mounts\"" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db_1\", \"port\": 5432, \"target\": \"tcp:10.0.0.5:5432\"}]}",
    "rollout policy: peers[0].name: \"db_1\" contains a character other than letters, digits, '-' and '.'" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 0, \"target\": \"tcp:10.0.0.5:5432\"}]}",
    "rollout policy: peers[0].port: 0 is not in 1-65535" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 70000, \"target\": \"tcp:10.0.0.5:5432\"}]}",
    "rollout policy: peers[0].port: 70000 is not in 1-65535" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": \"5432\", \"target\": \"tcp:10.0.0.5:5432\"}]}",
    "rollout policy: peers[0].port: expected an integer, got a string" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"tcp:10.0.0.5:5432\"}, "
    "{\"name\": \"DB\", \"port\": 5432, \"target\": \"tcp:10.0.0.6:5432\"}]}",
    "rollout policy: peers[1].port: \"db\" port 5432 is already declared by peers[0]" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"udp:10.0.0.5:5432\"}]}",
    "rollout policy: peers[0].target: \"udp:10.0.0.5:5432\" must be \"tcp:HOST:PORT\" (HOST an IPv4 address, [IPv6] "
    "address or host name)" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"tcp:10.0.0.5\"}]}",
    "rollout policy: peers[0].target: \"tcp:10.0.0.5\" must be \"tcp:HOST:PORT\" (HOST an IPv4 address, [IPv6] "
    "address or host name)" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"tcp:fd00::1:5432\"}]}",
    "rollout policy: peers[0].target: \"tcp:fd00::1:5432\": an IPv6 address must be in brackets, as "
    "\"tcp:[fd00::1]:PORT\"" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"tcp:[zz::1]:5432\"}]}",
    "rollout policy: peers[0].target: \"tcp:[zz::1]:5432\": \"zz::1\" is not an IPv6 address" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"tcp:999.0.0.1:5432\"}]}",
    "rollout policy: peers[0].target: \"tcp:999.0.0.1:5432\": host \"999.0.0.1\" is neither a host name nor an IPv4 "
    "address" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432, \"target\": \"tcp:db.internal:0\"}]}",
    "rollout policy: peers[0].target: \"tcp:db.internal:0\": port \"0\" is not in 1-65535" },
  { "{\"version\": 1, \"peers\": [{\"name\": \"db\", \"port\": 5432}]}", "rollout policy: peers[0].target: missing" },
  { "{\"version\": 1, \"drop_env\": [\"\"]}", "rollout policy: drop_env[0]: empty pattern" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"public\", \"allowed_ports\": [0]}}",
    "rollout policy: agent.allowed_ports[0]: 0 is not a port (1-65535)" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"public\", \"allowed_ports\": [65536]}}",
    "rollout policy: agent.allowed_ports[0]: 65536 is not a port (1-65535)" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"public\", \"allowed_ports\": [\"21\"]}}",
    "rollout policy: agent.allowed_ports[0]: expected an integer, got a string" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"public\", \"allowed_ports\": 21}}",
    "rollout policy: agent.allowed_ports: expected an array, got an integer" },
  { "{\"version\": 1, \"verifier\": {\"agent_processes\": \"pause\"}}",
    "rollout policy: verifier.agent_processes: \"pause\" must be \"keep\", \"freeze\" or \"kill\"" },
  { "{\"version\": 1, \"verifier\": {\"agent_processes\": true}}",
    "rollout policy: verifier.agent_processes: expected a string, got a boolean" },
  { "{\"version\": 1, \"verifier\": {\"resources\": {\"memory\": 1024}}}",
    "rollout policy: verifier.resources.memory: 1024 must be -1 (no limit) or at least 4194304" },
  { "{\"version\": 1, \"verifier\": {\"resources\": {\"pids\": 0}}}",
    "rollout policy: verifier.resources.pids: 0 must be -1 (no limit) or at least 8" },
  { "{\"version\": 1, \"verifier\": {\"resources\": {\"cpu\": 1}}}",
    "rollout policy: verifier.resources: unknown key \"cpu\"" },
  { "{\"version\": 1, \"agent\": {\"agent_processes\": \"kill\"}}",
    "rollout policy: agent: unknown key \"agent_processes\"" },
  { "{\"version\": 1, \"agent\": {\"network_mode\": \"none\", \"allowed_ports\": [21]}}",
    "rollout policy: agent.allowed_ports: only used with network_mode \"allowlist\" or \"public\" (agent.network_mode is "
    "\"no-network\")" },
  { "{\"version\": 1, \"environment\": {\"network_mode\": \"public\"}, \"verifier\": {\"allowed_ports\": [21]}}",
    "rollout policy: verifier.allowed_ports: needs \"network_mode\": \"allowlist\" or \"public\" in the same table" },
  { "{\"version\": 1, \"drop_env\": [\"A=*\"]}",
    "rollout policy: drop_env[0]: \"A=*\": a pattern matches variable names and cannot contain '='" },
  { "{\"version\": 1, \"phase_secret_sha256\": 1}",
    "rollout policy: phase_secret_sha256: expected a string of 64 hex digits, got an integer" },
  { "{\"version\": 1, \"phase_secret_sha256\": \"abc\"}",
    "rollout policy: phase_secret_sha256: expected 64 hex digits (a sha256 digest), got 3 characters" },
  { "{\"version\": 1, \"phase_secret_sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\"}",
    "rollout policy: phase_secret_sha256: expected 64 hex digits (a sha256 digest), got a non-hex character" },
  { "{\"version\": 1, \"phase_secret_sha256\": \"0x23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}",
    "rollout policy: phase_secret_sha256: expected 64 hex digits (a sha256 digest), got a non-hex character" },
  { "{\"version\": 1, \"network\": true}", "rollout policy: network: expected an object, got a boolean" },
  { "{\"version\": 1, \"network\": {\"transparent\": \"yes\"}}", "rollout policy: network.transparent: expected true or false, got a string" },
  { "{\"version\": 1, \"network\": {\"tproxy\": true}}", "rollout policy: network: unknown key \"tproxy\"" },
};

static void
test_invalid_policies (void **state)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (bad_cases); i++)
    {
      struct pr_policy *p = NULL;
      pr_error *err = NULL;
      int r = pr_policy_parse (bad_cases[i].json, strlen (bad_cases[i].json), &p, &err);
      if (r != -1 || err == NULL || strcmp (err->msg, bad_cases[i].msg) != 0)
        {
          print_error ("case %zu: %s\n  want: %s\n  got:  %s\n", i, bad_cases[i].json, bad_cases[i].msg,
                       err ? err->msg : "(success)");
          fail ();
        }
      assert_null (p);
      assert_null (strchr (err->msg, '\n'));
      pr_error_free (&err);
    }
  print_message ("%zu invalid policies rejected with their messages\n", PR_ARRAY_SIZE (bad_cases));
}

static const char full_policy[]
    = "{\"version\": 1,"
      " \"environment\": {\"network_mode\": \"public\", \"env\": {\"K\": \"V\"}, \"user\": \"0\"},"
      " \"agent\": {\"user\": \"1000:1000\", \"env\": {\"B\": \"2\", \"A\": \"1\"},"
      "   \"network_mode\": \"allowlist\", \"allowed_hosts\": [\"Example.COM.\", \"pypi.org\", \"example.com\"]},"
      " \"verifier\": {\"user\": \"root\", \"env\": {\"SECRET\": \"s\"}, \"network_mode\": \"public\","
      "   \"mounts\": [{\"source\": \"/tmp/\", \"destination\": \"/tests\", \"readonly\": true},"
      "                {\"source\": \"/\", \"destination\": \"//logs//verifier/\"}]},"
      " \"hide\": [\"/tests/\", \"/logs\", \"/opt/./grader\"],"
      " \"peers\": [{\"name\": \"DB\", \"port\": 5432, \"target\": \"tcp:10.88.0.5:5432\"},"
      "             {\"name\": \"cache.local\", \"port\": 6379, \"target\": \"tcp:[fd00::5]:6380\"},"
      "             {\"name\": \"db\", \"port\": 5433, \"target\": \"tcp:Redis.Internal:1\"}],"
      " \"drop_env\": [\"HUD_*\", \"SECRET_?\"]}";

static void
test_full_policy (void **state)
{
  _cleanup_policy_ struct pr_policy *p = NULL;
  pr_error *err = NULL;
  assert_int_equal (pr_policy_parse (full_policy, strlen (full_policy), &p, &err), 0);
  assert_null (err);
  assert_int_equal (p->version, 1);

  assert_int_equal (p->environment.network_mode, PR_NET_PUBLIC);
  assert_string_equal (p->environment.user, "0");
  assert_int_equal (p->environment.n_env, 1);
  assert_null (p->environment.allowed_hosts);

  assert_string_equal (p->agent.user, "1000:1000");
  assert_int_equal (p->agent.n_env, 2);
  assert_string_equal (p->agent.env[0].key, "B"); /* order given */
  assert_string_equal (p->agent.env[0].value, "2");
  assert_string_equal (p->agent.env[1].key, "A");
  assert_int_equal (p->agent.network_mode, PR_NET_ALLOWLIST);
  assert_int_equal (pr_strv_len (p->agent.allowed_hosts), 2); /* lower-cased, dot dropped, deduplicated */
  assert_string_equal (p->agent.allowed_hosts[0], "example.com");
  assert_string_equal (p->agent.allowed_hosts[1], "pypi.org");

  assert_string_equal (p->verifier.user, "root");
  assert_int_equal (p->verifier.network_mode, PR_NET_PUBLIC);
  assert_int_equal (p->n_verifier_mounts, 2);
  assert_string_equal (p->verifier_mounts[0].source, "/tmp");
  assert_string_equal (p->verifier_mounts[0].destination, "/tests");
  assert_true (p->verifier_mounts[0].readonly);
  assert_string_equal (p->verifier_mounts[1].source, "/");
  assert_string_equal (p->verifier_mounts[1].destination, "/logs/verifier");
  assert_false (p->verifier_mounts[1].readonly);

  assert_int_equal (pr_strv_len (p->hide), 3);
  assert_string_equal (p->hide[0], "/tests");
  assert_string_equal (p->hide[1], "/logs");
  assert_string_equal (p->hide[2], "/opt/grader");

  assert_int_equal (p->n_peers, 3);
  assert_string_equal (p->peers[0].name, "db");
  assert_int_equal (p->peers[0].port, 5432);
  assert_string_equal (p->peers[0].target_host, "10.88.0.5");
  assert_int_equal (p->peers[0].target_port, 5432);
  assert_string_equal (p->peers[1].target_host, "fd00::5");
  assert_int_equal (p->peers[1].target_port, 6380);
  assert_string_equal (p->peers[2].name, "db"); /* same name, other port */
  assert_string_equal (p->peers[2].target_host, "redis.internal");
  assert_int_equal (p->peers[2].target_port, 1);

  assert_int_equal (pr_strv_len (p->drop_env), 2);

  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_AGENT), PR_NET_ALLOWLIST);
  assert_ptr_equal (pr_policy_allowed_hosts (p, PR_PHASE_AGENT), p->agent.allowed_hosts);
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_SETUP), PR_NET_PUBLIC);
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_VERIFIER), PR_NET_PUBLIC);
}

static void
test_defaults (void **state)
{
  _cleanup_policy_ struct pr_policy *p = NULL;
  pr_error *err = NULL;
  const char *doc = "{\"version\": 1}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (pr_strv_len (p->hide), 2);
  assert_string_equal (p->hide[0], "/tests");
  assert_string_equal (p->hide[1], "/logs");
  assert_null (p->drop_env);
  assert_null (p->agent.user);
  assert_int_equal (p->n_peers, 0);
  assert_int_equal (p->n_verifier_mounts, 0);
  for (int ph = PR_PHASE_AGENT; ph <= PR_PHASE_VERIFIER; ph++)
    {
      assert_int_equal (pr_policy_net_mode (p, (enum pr_phase) ph), PR_NET_NONE);
      assert_null (pr_policy_allowed_hosts (p, (enum pr_phase) ph));
    }
  assert_false (pr_policy_env_dropped (p, "HUD_TOKEN"));

  /* An explicit empty list hides nothing; null means absent. */
  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"hide\": [], \"agent\": {\"user\": null, \"network_mode\": \"none\"}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_non_null (p->hide);
  assert_null (p->hide[0]);
  assert_null (p->agent.user);
  assert_int_equal (p->agent.network_mode, PR_NET_NONE);

  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"hide\": null}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (pr_strv_len (p->hide), 2);
}

static void
test_phase_fallbacks (void **state)
{
  _cleanup_policy_ struct pr_policy *p = NULL;
  pr_error *err = NULL;
  const char *doc = "{\"version\": 1,"
                    " \"environment\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"deb.debian.org\"]},"
                    " \"verifier\": {\"network_mode\": \"no-network\"}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  /* agent has no table: the environment's mode and list */
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_AGENT), PR_NET_ALLOWLIST);
  assert_string_equal (pr_policy_allowed_hosts (p, PR_PHASE_AGENT)[0], "deb.debian.org");
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_SETUP), PR_NET_ALLOWLIST);
  assert_ptr_equal (pr_policy_allowed_hosts (p, PR_PHASE_SETUP), p->environment.allowed_hosts);
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_VERIFIER), PR_NET_NONE);
  assert_null (pr_policy_allowed_hosts (p, PR_PHASE_VERIFIER));

  /* setup takes the environment table even when the agent has its own */
  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"agent\": {\"network_mode\": \"public\"}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_AGENT), PR_NET_PUBLIC);
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_SETUP), PR_NET_NONE);
  assert_int_equal (pr_policy_net_mode (p, PR_PHASE_VERIFIER), PR_NET_NONE);

  assert_string_equal (pr_net_mode_name (PR_NET_NONE), "no-network");
  assert_string_equal (pr_net_mode_name (PR_NET_ALLOWLIST), "allowlist");
  assert_string_equal (pr_net_mode_name (PR_NET_PUBLIC), "public");
  assert_string_equal (pr_phase_name (PR_PHASE_SETUP), "setup");
  assert_string_equal (pr_phase_name (PR_PHASE_VERIFIER), "verifier");
}

static void
test_host_matching (void **state)
{
  static char *list[] = { "example.com", "pypi.org", "10.1.2.3", NULL };
  static char *star[] = { "nothing.test", "*", NULL };
  static char *empty[] = { NULL };
  static const struct
  {
    char **list;
    const char *host;
    bool allowed;
  } t[] = {
    { list, "example.com", true },
    { list, "a.example.com", true },
    { list, "a.b.example.com", true },
    { list, "example.com.", true },
    { list, "EXAMPLE.com", true },
    { list, "badexample.com", false },
    { list, "example.com.evil.net", false },
    { list, "example.org", false },
    { list, "com", false },
    { list, "files.pypi.org", true },
    { list, "10.1.2.3", true },
    { list, "110.1.2.3", false },
    { list, "0.10.1.2.3", false },
    { list, "", false },
    { star, "anything.at.all", true },
    { star, "1.1.1.1", true },
    { empty, "example.com", false },
    { NULL, "example.com", false },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (t); i++)
    if (pr_policy_host_allowed (t[i].list, t[i].host) != t[i].allowed)
      {
        print_error ("host case %zu: %s should be %s\n", i, t[i].host, t[i].allowed ? "allowed" : "denied");
        fail ();
      }

  /* an IP literal is never a "subdomain" of a name-shaped entry */
  char *suffix[] = { "2.3.4", NULL };
  assert_false (pr_policy_host_allowed (suffix, "1.2.3.4"));
}

static void
test_ports (void **state)
{
  _cleanup_policy_ struct pr_policy *p = NULL;
  pr_error *err = NULL;
  const char *doc = "{\"version\": 1, \"environment\": {\"network_mode\": \"public\", \"allowed_ports\": [8080]},"
                    " \"agent\": {\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"a.org\"],"
                    " \"allowed_ports\": [21, 21, 2222]}, \"verifier\": {\"network_mode\": \"public\"}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  size_t n;
  const uint16_t *ports = pr_policy_allowed_ports (p, PR_PHASE_AGENT, &n);
  assert_int_equal (n, 2);
  assert_true (pr_policy_port_allowed (ports, n, 21));
  assert_true (pr_policy_port_allowed (ports, n, 2222));
  assert_true (pr_policy_port_allowed (ports, n, 80));
  assert_true (pr_policy_port_allowed (ports, n, 443));
  assert_false (pr_policy_port_allowed (ports, n, 8080));
  /* setup takes the environment table's ports, the verifier its own (none). */
  ports = pr_policy_allowed_ports (p, PR_PHASE_SETUP, &n);
  assert_true (pr_policy_port_allowed (ports, n, 8080));
  ports = pr_policy_allowed_ports (p, PR_PHASE_VERIFIER, &n);
  assert_int_equal (n, 0);
  assert_false (pr_policy_port_allowed (ports, n, 21));
  assert_true (pr_policy_port_allowed (NULL, 0, 443));
  _cleanup_free_ char *json = pr_policy_to_json (p);
  assert_non_null (strstr (json, "\"allowed_hosts\":[\"a.org\"],\"allowed_ports\":[21,2222]}"));
  _cleanup_policy_ struct pr_policy *q = NULL;
  assert_int_equal (pr_policy_parse (json, strlen (json), &q, &err), 0);
  _cleanup_free_ char *json2 = pr_policy_to_json (q);
  assert_string_equal (json, json2);
}

static void
test_env_drop (void **state)
{
  _cleanup_policy_ struct pr_policy *p = NULL;
  pr_error *err = NULL;
  const char *doc = "{\"version\": 1, \"drop_env\": [\"HUD_*\", \"SECRET_?\", \"EXACT\", \"[AB]KEY\"]}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_true (pr_policy_env_dropped (p, "HUD_TOKEN"));
  assert_true (pr_policy_env_dropped (p, "HUD_"));
  assert_false (pr_policy_env_dropped (p, "XHUD_TOKEN"));
  assert_false (pr_policy_env_dropped (p, "hud_token"));
  assert_true (pr_policy_env_dropped (p, "SECRET_1"));
  assert_false (pr_policy_env_dropped (p, "SECRET_12"));
  assert_true (pr_policy_env_dropped (p, "EXACT"));
  assert_false (pr_policy_env_dropped (p, "EXACTLY"));
  assert_true (pr_policy_env_dropped (p, "BKEY"));
  assert_false (pr_policy_env_dropped (p, "CKEY"));
  assert_false (pr_policy_env_dropped (p, "PATH"));
  assert_false (pr_policy_env_dropped (NULL, "HUD_TOKEN"));
}

/* verifier.resources: parsed, defaults 0 (= budget.h defaults), and kept
 * by the normalised JSON the verifier and delete re-read. */
static void
test_resources (void **state)
{
  (void) state;
  const char *doc = "{\"version\": 1, \"verifier\": {\"resources\": {\"memory\": 67108864, \"pids\": -1}}}";
  struct pr_policy *p = NULL, *q = NULL;
  pr_error *err = NULL;
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (p->verifier_memory, 67108864);
  assert_int_equal (p->verifier_pids, -1);
  char *json = pr_policy_to_json (p);
  assert_int_equal (pr_policy_parse_saved (json, strlen (json), &q, &err), 0);
  assert_int_equal (q->verifier_memory, 67108864);
  assert_int_equal (q->verifier_pids, -1);
  free (json);
  pr_policy_free (p);
  pr_policy_free (q);
  assert_int_equal (pr_policy_parse ("{\"version\": 1}", 14, &p, &err), 0);
  assert_int_equal (p->verifier_memory, 0);
  assert_int_equal (p->verifier_pids, 0);
  pr_policy_free (p);
}

static void
test_load (void **state)
{
  char path[] = "/tmp/test-policy-XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  const char *doc = "{\"version\": 1, \"agent\": {\"network_mode\": \"public\"}, \"hide\": [\"/grader\"]}";
  assert_int_equal (pr_write_all (fd, doc, strlen (doc)), 0);
  close (fd);

  struct pr_policy *p = NULL;
  pr_error *err = NULL;
  char *value = xasprintf ("@%s", path);
  assert_int_equal (pr_policy_load (value, &p, &err), 0);
  assert_int_equal (p->agent.network_mode, PR_NET_PUBLIC);
  assert_string_equal (p->hide[0], "/grader");
  pr_policy_free (p);
  p = NULL;
  free (value);

  /* inline */
  assert_int_equal (pr_policy_load (doc, &p, &err), 0);
  pr_policy_free (p);
  p = NULL;

  /* relative path */
  assert_int_equal (pr_policy_load ("@policy.json", &p, &err), -1);
  assert_string_equal (err->msg,
                       "rollout policy: \"@policy.json\": a policy file must be given as \"@/absolute/path\"");
  pr_error_free (&err);

  /* missing file */
  assert_int_equal (pr_policy_load ("@/nonexistent/policy.json", &p, &err), -1);
  assert_int_equal (err->errnum, ENOENT);
  assert_string_equal (err->msg, "rollout policy: policy file `/nonexistent/policy.json` is missing");
  pr_error_free (&err);

  /* a directory */
  assert_int_equal (pr_policy_load ("@/tmp", &p, &err), -1);
  assert_string_equal (err->msg, "rollout policy: read `/tmp`: not a regular file");
  pr_error_free (&err);

  /* a bad file names the file, prefix first */
  fd = open (path, O_WRONLY | O_TRUNC);
  assert_true (fd >= 0);
  assert_int_equal (pr_write_all (fd, "{\"version\": 1, \"x\": 1}", 22), 0);
  close (fd);
  value = xasprintf ("@%s", path);
  assert_int_equal (pr_policy_load (value, &p, &err), -1);
  char *want = xasprintf ("rollout policy: %s: unknown key \"x\"", path);
  assert_string_equal (err->msg, want);
  free (want);
  free (value);
  pr_error_free (&err);
  assert_null (p);
  unlink (path);
}

static void
test_to_json_roundtrip (void **state)
{
  _cleanup_policy_ struct pr_policy *p = NULL;
  _cleanup_policy_ struct pr_policy *q = NULL;
  pr_error *err = NULL;
  assert_int_equal (pr_policy_parse (full_policy, strlen (full_policy), &p, &err), 0);
  _cleanup_free_ char *json = pr_policy_to_json (p);
  assert_non_null (strstr (json, "\"agent\":{\"user\":\"1000:1000\",\"env\":{\"B\":\"2\",\"A\":\"1\"},"
                                 "\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"example.com\",\"pypi.org\"]}"));
  assert_non_null (strstr (json, "\"target\":\"tcp:[fd00::5]:6380\""));
  assert_non_null (strstr (json, "\"hide\":[\"/tests\",\"/logs\",\"/opt/grader\"]"));
  /* the normalised form is itself a valid policy with the same meaning */
  assert_int_equal (pr_policy_parse (json, strlen (json), &q, &err), 0);
  _cleanup_free_ char *json2 = pr_policy_to_json (q);
  assert_string_equal (json, json2);

  /* effective modes are written out */
  pr_policy_free (steal_pointer (&p));
  const char *doc = "{\"version\": 1}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  _cleanup_free_ char *j3 = pr_policy_to_json (p);
  assert_string_equal (j3, "{\"version\":1,"
                           "\"environment\":{\"user\":null,\"env\":{},\"network_mode\":\"no-network\",\"allowed_hosts\":[]},"
                           "\"agent\":{\"user\":null,\"env\":{},\"network_mode\":\"no-network\",\"allowed_hosts\":[]},"
                           "\"verifier\":{\"user\":null,\"env\":{},\"network_mode\":\"no-network\",\"allowed_hosts\":[],"
                           "\"mounts\":[]},"
                           "\"hide\":[\"/tests\",\"/logs\"],\"peers\":[],\"drop_env\":[]}");

  /* network.transparent: on by default (not written, so the default reads
   * back as the default), an explicit true or false written and read back
   * as given */
  assert_int_equal (p->transparent, PR_TRANSPARENT_DEFAULT);
  assert_null (strstr (j3, "transparent"));
  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"network\": {\"transparent\": true}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (p->transparent, PR_TRANSPARENT_ON);
  _cleanup_free_ char *j5 = pr_policy_to_json (p);
  assert_non_null (strstr (j5, ",\"network\":{\"transparent\":true}}"));
  pr_policy_free (steal_pointer (&q));
  assert_int_equal (pr_policy_parse (j5, strlen (j5), &q, &err), 0);
  assert_int_equal (q->transparent, PR_TRANSPARENT_ON);
  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"network\": {\"transparent\": false}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (p->transparent, PR_TRANSPARENT_OFF);
  _cleanup_free_ char *j6 = pr_policy_to_json (p);
  assert_non_null (strstr (j6, ",\"network\":{\"transparent\":false}}"));
  pr_policy_free (steal_pointer (&q));
  assert_int_equal (pr_policy_parse (j6, strlen (j6), &q, &err), 0);
  assert_int_equal (q->transparent, PR_TRANSPARENT_OFF);
  _cleanup_free_ char *j7 = pr_policy_to_json (q);
  assert_string_equal (j6, j7);
  /* {"network": {}} is the default too */
  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"network\": {}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (p->transparent, PR_TRANSPARENT_DEFAULT);

  /* phase_secret_sha256 is written lower-case, only when given */
  pr_policy_free (steal_pointer (&p));
  doc = "{\"version\": 1, \"phase_secret_sha256\": \"ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789\"}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_true (p->has_phase_secret);
  assert_int_equal (p->phase_secret_sha256[0], 0xab);
  assert_int_equal (p->phase_secret_sha256[31], 0x89);
  _cleanup_free_ char *j4 = pr_policy_to_json (p);
  assert_non_null (
      strstr (j4, ",\"phase_secret_sha256\":\"abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789\"}"));
}

static void
test_len_and_nul (void **state)
{
  struct pr_policy *p = NULL;
  pr_error *err = NULL;
  /* len bounds the document: trailing bytes after len are not read */
  const char doc[] = "{\"version\": 1}GARBAGE";
  assert_int_equal (pr_policy_parse (doc, 14, &p, &err), 0);
  pr_policy_free (p);
  p = NULL;
  const char nul[] = "{\"version\": 1}\0{";
  assert_int_equal (pr_policy_parse (nul, sizeof nul - 1, &p, &err), -1);
  assert_string_equal (err->msg, "rollout policy: malformed JSON: NUL byte in the document");
  pr_error_free (&err);
}

static void
test_parse_saved (void **state)
{
  struct pr_policy *p = NULL;
  pr_error *err = NULL;
  const char *doc = "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"/gone\", \"destination\": \"/tests\"}]}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), -1);
  assert_string_equal (err->msg, "rollout policy: verifier.mounts[0].source: \"/gone\" does not exist");
  pr_error_free (&err);
  assert_int_equal (pr_policy_parse_saved (doc, strlen (doc), &p, &err), 0);
  assert_string_equal (p->verifier_mounts[0].source, "/gone");
  pr_policy_free (p);
  p = NULL;
  /* everything else is still checked */
  doc = "{\"version\": 1, \"verifier\": {\"mounts\": [{\"source\": \"gone\", \"destination\": \"/tests\"}]}}";
  assert_int_equal (pr_policy_parse_saved (doc, strlen (doc), &p, &err), -1);
  assert_string_equal (err->msg, "rollout policy: verifier.mounts[0].source: \"gone\" must be an absolute path");
  pr_error_free (&err);
}

/* verifier.base and base_paths survive the normalised copy the state dir
 * keeps (pr_policy_to_json, then pr_policy_parse_saved at exec): losing
 * them would turn `image` back into `rollout` for every verifier exec. */
static void
test_base_round_trip (void **state)
{
  struct pr_policy *p = NULL, *q = NULL;
  pr_error *err = NULL;
  const char *doc = "{\"version\": 1, \"verifier\": {\"base\": \"image\", \"base_paths\": [\"/usr/\", \"/opt/tools\"]}}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (p->base, PR_BASE_IMAGE);
  assert_string_equal (p->base_paths[0], "/usr");
  char *text = pr_policy_to_json (p);
  assert_int_equal (pr_policy_parse_saved (text, strlen (text), &q, &err), 0);
  assert_int_equal (q->base, PR_BASE_IMAGE);
  assert_string_equal (pr_policy_base_paths (q)[1], "/opt/tools");
  assert_null (pr_policy_base_paths (q)[2]);
  free (text);
  pr_policy_free (p);
  pr_policy_free (q);
  /* The default: rollout, the default paths. */
  doc = "{\"version\": 1}";
  assert_int_equal (pr_policy_parse (doc, strlen (doc), &p, &err), 0);
  assert_int_equal (p->base, PR_BASE_ROLLOUT);
  assert_string_equal (pr_policy_base_paths (p)[0], "/usr");
  pr_policy_free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_invalid_policies),
    cmocka_unit_test (test_full_policy),
    cmocka_unit_test (test_defaults),
    cmocka_unit_test (test_phase_fallbacks),
    cmocka_unit_test (test_host_matching),
    cmocka_unit_test (test_env_drop),
    cmocka_unit_test (test_load),
    cmocka_unit_test (test_resources),
    cmocka_unit_test (test_to_json_roundtrip),
    cmocka_unit_test (test_ports),
    cmocka_unit_test (test_len_and_nul),
    cmocka_unit_test (test_parse_saved),
    cmocka_unit_test (test_base_round_trip),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
