/* test_config.c - unit tests for the config.json parser (src/config/) and
 * the `proctor spec` template. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "../../src/base/util.h"
#include "../../src/config/config.h"
#include "../../src/config/spec.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Every section of the runtime-spec, with values the test can check. */
static const char full_config[] = "{"
  "\"ociVersion\": \"1.2.0\","
  "\"root\": {\"path\": \"rootfs\", \"readonly\": true},"
  "\"mounts\": ["
  "  {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},"
  "  {\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"/srv\", \"options\": [\"rbind\", \"ro\"],"
  "   \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 65536}],"
  "   \"gidMappings\": [{\"containerID\": 0, \"hostID\": 2000, \"size\": 10}]}"
  "],"
  "\"process\": {"
  "  \"terminal\": true, \"consoleSize\": {\"height\": 24, \"width\": 80},"
  "  \"user\": {\"uid\": 1, \"gid\": 2, \"umask\": 18, \"additionalGids\": [5, 6], \"username\": \"bin\"},"
  "  \"args\": [\"/bin/sh\", \"-c\", \"true\"],"
  "  \"env\": [\"PATH=/bin\", \"A=b\"],"
  "  \"cwd\": \"/tmp\","
  "  \"capabilities\": {\"bounding\": [\"CAP_KILL\"], \"effective\": [\"CAP_KILL\", \"CAP_CHOWN\"],"
  "     \"inheritable\": [], \"permitted\": [\"CAP_KILL\"], \"ambient\": [\"CAP_KILL\"]},"
  "  \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 4096, \"soft\": 1024},"
  "               {\"type\": \"RLIMIT_CORE\", \"hard\": 18446744073709551615, \"soft\": 0}],"
  "  \"noNewPrivileges\": true,"
  "  \"apparmorProfile\": \"unconfined\","
  "  \"oomScoreAdj\": -500,"
  "  \"selinuxLabel\": \"system_u:system_r:container_t:s0\","
  "  \"scheduler\": {\"policy\": \"SCHED_BATCH\", \"nice\": -5, \"priority\": 0, \"flags\": [\"SCHED_FLAG_RESET_ON_FORK\"],"
  "                 \"runtime\": 10, \"deadline\": 20, \"period\": 30},"
  "  \"ioPriority\": {\"class\": \"IOPRIO_CLASS_BE\", \"priority\": 4}"
  "},"
  "\"hostname\": \"box\", \"domainname\": \"example.org\","
  "\"hooks\": {"
  "  \"prestart\": [{\"path\": \"/bin/pre\", \"args\": [\"pre\", \"x\"], \"env\": [\"K=v\"], \"timeout\": 5}],"
  "  \"createRuntime\": [{\"path\": \"/bin/cr\"}],"
  "  \"createContainer\": [{\"path\": \"/bin/cc\"}, {\"path\": \"/bin/cc2\"}],"
  "  \"startContainer\": [{\"path\": \"/bin/sc\"}],"
  "  \"poststart\": [{\"path\": \"/bin/ps\"}],"
  "  \"poststop\": [{\"path\": \"/bin/pst\", \"timeout\": 1}]"
  "},"
  "\"annotations\": {\"org.example.key\": \"value\", \"run.oci.keep\": \"1\"},"
  "\"unknownTopLevel\": {\"whatever\": [1, 2, 3]},"
  "\"linux\": {"
  "  \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\", \"path\": \"/var/run/netns/x\"},"
  "                 {\"type\": \"mount\"}, {\"type\": \"user\"}, {\"type\": \"time\"}, {\"type\": \"ipc\", \"path\": \"\"}],"
  "  \"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}],"
  "  \"gidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536},"
  "                  {\"containerID\": 65536, \"hostID\": 4294967295, \"size\": 1}],"
  "  \"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229, \"fileMode\": 438,"
  "               \"uid\": 0, \"gid\": 0}, {\"path\": \"/dev/fifo\", \"type\": \"p\"}],"
  "  \"cgroupsPath\": \"/proctor/test\","
  "  \"resources\": {\"memory\": {\"limit\": 1048576}, \"pids\": {\"limit\": 10}},"
  "  \"rootfsPropagation\": \"rslave\","
  "  \"maskedPaths\": [\"/proc/kcore\"],"
  "  \"readonlyPaths\": [\"/proc/sys\", \"/proc/bus\"],"
  "  \"mountLabel\": \"system_u:object_r:container_file_t:s0\","
  "  \"sysctl\": {\"net.ipv4.ip_forward\": \"1\"},"
  "  \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 38,"
  "     \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\"], \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"],"
  "     \"listenerPath\": \"/run/notify.sock\", \"listenerMetadata\": \"meta\","
  "     \"syscalls\": [{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\"},"
  "                  {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1,"
  "                   \"args\": [{\"index\": 0, \"value\": 8, \"valueTwo\": 18446744073709551615, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}]},"
  "  \"personality\": {\"domain\": \"LINUX32\", \"flags\": []},"
  "  \"timeOffsets\": {\"monotonic\": {\"secs\": -86400, \"nanosecs\": 5}, \"boottime\": {\"secs\": 3600, \"nanosecs\": 999999999}},"
  "  \"intelRdt\": {\"closID\": \"ignored\"}"
  "}"
  "}";

static struct pr_config *
parse_ok (const char *json)
{
  struct pr_config *cfg = NULL;
  pr_error *err = NULL;
  int r = pr_config_parse (json, strlen (json), &cfg, &err);
  if (r < 0)
    fail_msg ("unexpected parse error: %s", err->msg);
  assert_non_null (cfg);
  return cfg;
}

/* Parses json, which must fail with a message containing want. */
static void
expect_error (const char *json, const char *want)
{
  struct pr_config *cfg = NULL;
  pr_error *err = NULL;
  int r = pr_config_parse (json, strlen (json), &cfg, &err);
  assert_int_equal (r, -1);
  assert_null (cfg);
  assert_non_null (err);
  if (strstr (err->msg, want) == NULL)
    fail_msg ("error \"%s\" does not contain \"%s\"", err->msg, want);
  assert_null (strchr (err->msg, '\n'));
  assert_int_equal (err->errnum, 0);
  pr_error_free (&err);
}

/* A minimal valid document with `extra` spliced in as more top-level
 * members (extra starts with a comma). */
static void
expect_error_with (const char *extra, const char *want)
{
  _cleanup_free_ char *json = xasprintf ("{\"ociVersion\": \"1.2.0\"%s}", extra);
  expect_error (json, want);
}

static void
test_full_config_top (void **state)
{
  struct pr_config *cfg = parse_ok (full_config);
  assert_string_equal (cfg->oci_version, "1.2.0");
  assert_string_equal (cfg->root_path, "rootfs");
  assert_true (cfg->root_readonly);
  assert_string_equal (cfg->hostname, "box");
  assert_string_equal (cfg->domainname, "example.org");
  assert_int_equal (cfg->n_mounts, 2);
  assert_string_equal (cfg->mounts[0].destination, "/proc");
  assert_non_null (cfg->mounts[0].options);
  assert_null (cfg->mounts[0].options[0]);
  assert_null (cfg->mounts[0].uid_mappings);
  assert_string_equal (cfg->mounts[1].source, "/srv");
  assert_string_equal (cfg->mounts[1].type, "bind");
  assert_string_equal (cfg->mounts[1].options[1], "ro");
  assert_int_equal (cfg->mounts[1].n_uid_mappings, 1);
  assert_int_equal (cfg->mounts[1].uid_mappings[0].host_id, 1000);
  assert_int_equal (cfg->mounts[1].uid_mappings[0].size, 65536);
  assert_int_equal (cfg->mounts[1].gid_mappings[0].host_id, 2000);
  assert_int_equal (cfg->hooks[PR_HOOK_PRESTART].n, 1);
  assert_string_equal (cfg->hooks[PR_HOOK_PRESTART].v[0].path, "/bin/pre");
  assert_string_equal (cfg->hooks[PR_HOOK_PRESTART].v[0].args[1], "x");
  assert_string_equal (cfg->hooks[PR_HOOK_PRESTART].v[0].env[0], "K=v");
  assert_true (cfg->hooks[PR_HOOK_PRESTART].v[0].has_timeout);
  assert_int_equal (cfg->hooks[PR_HOOK_PRESTART].v[0].timeout, 5);
  assert_int_equal (cfg->hooks[PR_HOOK_CREATE_RUNTIME].n, 1);
  assert_false (cfg->hooks[PR_HOOK_CREATE_RUNTIME].v[0].has_timeout);
  assert_null (cfg->hooks[PR_HOOK_CREATE_RUNTIME].v[0].args);
  assert_int_equal (cfg->hooks[PR_HOOK_CREATE_CONTAINER].n, 2);
  assert_string_equal (cfg->hooks[PR_HOOK_CREATE_CONTAINER].v[1].path, "/bin/cc2");
  assert_int_equal (cfg->hooks[PR_HOOK_START_CONTAINER].n, 1);
  assert_int_equal (cfg->hooks[PR_HOOK_POSTSTART].n, 1);
  assert_int_equal (cfg->hooks[PR_HOOK_POSTSTOP].v[0].timeout, 1);
  assert_int_equal (cfg->n_annotations, 2);
  pr_config_free (cfg);
}

static void
test_full_config_process (void **state)
{
  struct pr_config *cfg = parse_ok (full_config);
  struct pr_process *p = &cfg->process;
  assert_true (cfg->has_process);
  assert_true (p->terminal);
  assert_true (p->has_console_size);
  assert_int_equal (p->console_height, 24);
  assert_int_equal (p->console_width, 80);
  assert_int_equal (p->user.uid, 1);
  assert_int_equal (p->user.gid, 2);
  assert_true (p->user.has_umask);
  assert_int_equal (p->user.umask, 022);
  assert_int_equal (p->user.n_additional_gids, 2);
  assert_int_equal (p->user.additional_gids[1], 6);
  assert_string_equal (p->user.username, "bin");
  assert_int_equal (pr_strv_len (p->args), 3);
  assert_string_equal (p->args[0], "/bin/sh");
  assert_string_equal (p->env[1], "A=b");
  assert_string_equal (p->cwd, "/tmp");
  assert_true (p->has_capabilities);
  assert_string_equal (p->capabilities.effective[1], "CAP_CHOWN");
  assert_non_null (p->capabilities.inheritable);
  assert_null (p->capabilities.inheritable[0]);
  assert_string_equal (p->capabilities.ambient[0], "CAP_KILL");
  assert_int_equal (p->n_rlimits, 2);
  assert_int_equal (p->rlimits[0].resource, RLIMIT_NOFILE);
  assert_int_equal (p->rlimits[0].hard, 4096);
  assert_int_equal (p->rlimits[0].soft, 1024);
  assert_int_equal (p->rlimits[1].resource, RLIMIT_CORE);
  assert_true (p->rlimits[1].hard == UINT64_MAX);
  assert_true (p->no_new_privileges);
  assert_string_equal (p->apparmor_profile, "unconfined");
  assert_true (p->has_oom_score_adj);
  assert_int_equal (p->oom_score_adj, -500);
  assert_string_equal (p->selinux_label, "system_u:system_r:container_t:s0");
  assert_true (p->has_scheduler);
  assert_string_equal (p->scheduler.policy, "SCHED_BATCH");
  assert_int_equal (p->scheduler.nice, -5);
  assert_string_equal (p->scheduler.flags[0], "SCHED_FLAG_RESET_ON_FORK");
  assert_int_equal (p->scheduler.runtime, 10);
  assert_int_equal (p->scheduler.deadline, 20);
  assert_int_equal (p->scheduler.period, 30);
  assert_true (p->has_io_priority);
  assert_string_equal (p->io_priority_class, "IOPRIO_CLASS_BE");
  assert_int_equal (p->io_priority, 4);
  pr_config_free (cfg);
}

static void
test_full_config_linux (void **state)
{
  struct pr_config *cfg = parse_ok (full_config);
  struct pr_linux *l = &cfg->linux;
  assert_int_equal (l->n_namespaces, 6);
  assert_int_equal (l->namespaces[0].type, CLONE_NEWPID);
  assert_null (l->namespaces[0].path);
  assert_int_equal (l->namespaces[1].type, CLONE_NEWNET);
  assert_string_equal (l->namespaces[1].path, "/var/run/netns/x");
  assert_int_equal (l->namespaces[4].type, CLONE_NEWTIME);
  assert_null (l->namespaces[5].path); /* "" means a new namespace */
  assert_int_equal (l->n_uid_mappings, 1);
  assert_int_equal (l->uid_mappings[0].host_id, 100000);
  assert_int_equal (l->n_gid_mappings, 2);
  assert_int_equal (l->gid_mappings[1].host_id, 4294967295U);
  assert_int_equal (l->n_devices, 2);
  assert_int_equal (l->devices[0].type, 'c');
  assert_int_equal (l->devices[0].major, 10);
  assert_int_equal (l->devices[0].minor, 229);
  assert_true (l->devices[0].has_file_mode);
  assert_int_equal (l->devices[0].file_mode, 0666);
  assert_true (l->devices[0].has_uid);
  assert_int_equal (l->devices[1].type, 'p');
  assert_false (l->devices[1].has_file_mode);
  assert_string_equal (l->cgroups_path, "/proctor/test");
  assert_non_null (l->resources);
  const char *mem_limit[] = { "memory", "limit", NULL };
  yajl_val v = yajl_tree_get (l->resources, mem_limit, yajl_t_number);
  assert_non_null (v);
  assert_int_equal (YAJL_GET_INTEGER (v), 1048576);
  assert_string_equal (l->rootfs_propagation, "rslave");
  assert_string_equal (l->masked_paths[0], "/proc/kcore");
  assert_int_equal (pr_strv_len (l->readonly_paths), 2);
  assert_string_equal (l->mount_label, "system_u:object_r:container_file_t:s0");
  assert_int_equal (l->n_sysctl, 1);
  assert_string_equal (l->sysctl[0].key, "net.ipv4.ip_forward");
  assert_string_equal (l->sysctl[0].value, "1");
  assert_true (l->has_personality);
  assert_string_equal (l->personality_domain, "LINUX32");
  assert_non_null (l->personality_flags);
  assert_true (l->has_time_offsets);
  assert_int_equal (l->monotonic_secs, -86400);
  assert_int_equal (l->monotonic_nanosecs, 5);
  assert_int_equal (l->boottime_secs, 3600);
  assert_int_equal (l->boottime_nanosecs, 999999999);
  pr_config_free (cfg);
}

static void
test_full_config_seccomp (void **state)
{
  struct pr_config *cfg = parse_ok (full_config);
  struct pr_seccomp *s = &cfg->linux.seccomp;
  assert_true (cfg->linux.has_seccomp);
  assert_string_equal (s->default_action, "SCMP_ACT_ERRNO");
  assert_true (s->has_default_errno_ret);
  assert_int_equal (s->default_errno_ret, 38);
  assert_string_equal (s->architectures[1], "SCMP_ARCH_X86");
  assert_string_equal (s->flags[0], "SECCOMP_FILTER_FLAG_LOG");
  assert_string_equal (s->listener_path, "/run/notify.sock");
  assert_string_equal (s->listener_metadata, "meta");
  assert_int_equal (s->n_syscalls, 2);
  assert_string_equal (s->syscalls[0].names[1], "write");
  assert_string_equal (s->syscalls[0].action, "SCMP_ACT_ALLOW");
  assert_false (s->syscalls[0].has_errno_ret);
  assert_int_equal (s->syscalls[0].n_args, 0);
  assert_true (s->syscalls[1].has_errno_ret);
  assert_int_equal (s->syscalls[1].errno_ret, 1);
  assert_int_equal (s->syscalls[1].n_args, 1);
  assert_int_equal (s->syscalls[1].args[0].index, 0);
  assert_int_equal (s->syscalls[1].args[0].value, 8);
  assert_true (s->syscalls[1].args[0].value_two == UINT64_MAX);
  assert_string_equal (s->syscalls[1].args[0].op, "SCMP_CMP_MASKED_EQ");
  pr_config_free (cfg);
}

static void
test_minimal_defaults (void **state)
{
  struct pr_config *cfg = parse_ok ("{\"ociVersion\": \"1.0.0\", \"process\": {\"args\": [\"x\"]}}");
  assert_null (cfg->root_path);
  assert_int_equal (cfg->n_mounts, 0);
  assert_null (cfg->mounts);
  assert_true (cfg->has_process);
  assert_non_null (cfg->process.env);
  assert_null (cfg->process.env[0]);
  assert_string_equal (cfg->process.cwd, "/");
  assert_false (cfg->process.has_capabilities);
  assert_null (cfg->process.capabilities.bounding);
  assert_false (cfg->process.has_oom_score_adj);
  assert_false (cfg->linux.has_seccomp);
  assert_null (cfg->linux.resources);
  assert_null (cfg->linux.masked_paths);
  for (int k = 0; k < PR_HOOK__MAX; k++)
    assert_int_equal (cfg->hooks[k].n, 0);
  pr_config_free (cfg);

  /* JSON null is "not set" too, and a config without process is valid. */
  cfg = parse_ok ("{\"ociVersion\": \"1.0.0\", \"hostname\": null, \"linux\": {\"maskedPaths\": null}}");
  assert_false (cfg->has_process);
  assert_null (cfg->hostname);
  assert_null (cfg->linux.masked_paths);
  pr_config_free (cfg);
}

static void
test_malformed_json (void **state)
{
  expect_error ("{\"ociVersion\": \"1.2.0\",", "invalid config.json: ");
  expect_error ("{\"ociVersion\": \n\n tru }", "invalid config.json: ");
  expect_error ("", "invalid config.json");
  expect_error ("{} trailing", "invalid config.json");
  expect_error ("[1, 2]", "invalid config.json: expected a JSON object");
  /* An embedded NUL must not silently cut the document short. */
  struct pr_config *cfg = NULL;
  pr_error *err = NULL;
  assert_int_equal (pr_config_parse ("{\"ociVersion\":\"1\"}\0junk", 23, &cfg, &err), -1);
  assert_non_null (strstr (err->msg, "NUL byte"));
  pr_error_free (&err);
  /* Nor may the escaped form: yajl would hand over "/a" for "/a\u0000/b". */
  expect_error ("{\"ociVersion\": \"1.0.0\", \"hostname\": \"a\\u0000b\"}",
                "invalid config.json: \\u0000 (NUL) in a string at offset 38");
  /* An escaped backslash before "u0000" is text. */
  cfg = parse_ok ("{\"ociVersion\": \"1.0.0\", \"hostname\": \"a\\\\u0000b\"}");
  assert_string_equal (cfg->hostname, "a\\u0000b");
  pr_config_free (cfg);
}

static void
test_deep_nesting (void **state)
{
  size_t n = 100000;
  char *json = xmalloc (2 * n + 64);
  strcpy (json, "{\"ociVersion\": \"1\", \"x\": ");
  size_t off = strlen (json);
  memset (json + off, '[', n);
  memset (json + off + n, ']', n);
  strcpy (json + off + 2 * n, "}");
  expect_error (json, "nested deeper than");
  free (json);
  /* A comment full of closing brackets must not hide real nesting. */
  char *hidden = xmalloc (7 * 600 + 64);
  strcpy (hidden, "{\"ociVersion\": \"1\", \"x\": ");
  for (int i = 0; i < 600; i++)
    strcat (hidden, "[/*]*/");
  for (int i = 0; i < 600; i++)
    strcat (hidden, "]");
  strcat (hidden, "}");
  expect_error (hidden, "nested deeper than");
  free (hidden);
  /* Brackets inside strings do not count. */
  struct pr_config *cfg = parse_ok ("{\"ociVersion\": \"[[[[{{{{\\\"[[[\"}");
  assert_string_equal (cfg->oci_version, "[[[[{{{{\"[[[");
  pr_config_free (cfg);
}

static void
test_oci_version_required (void **state)
{
  expect_error ("{}", "ociVersion: missing required field");
  expect_error ("{\"ociVersion\": 1}", "ociVersion: expected a string");
}

static void
test_root (void **state)
{
  expect_error_with (",\"root\": {\"readonly\": true}", "root.path: missing required field");
  expect_error_with (",\"root\": {\"path\": \"r\", \"readonly\": \"yes\"}", "root.readonly: expected a boolean");
  expect_error_with (",\"root\": \"rootfs\"", "root: expected an object");
}

static void
test_process_args (void **state)
{
  expect_error_with (",\"process\": {\"args\": \"sh\"}", "process.args: expected an array of strings");
  expect_error_with (",\"process\": {\"args\": [\"sh\", 1]}", "process.args: expected an array of strings");
  expect_error_with (",\"process\": {\"args\": []}", "process.args: args must not be empty");
  expect_error_with (",\"process\": {\"cwd\": \"/\"}", "process.args");
  expect_error_with (",\"process\": 5", "process: expected an object");
}

static void
test_process_cwd_env (void **state)
{
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"cwd\": \"tmp\"}", "process.cwd: \"tmp\" is not an absolute path");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"cwd\": \"\"}", "process.cwd");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"env\": {\"A\": \"b\"}}", "process.env: expected an array of strings");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"terminal\": 1}", "process.terminal: expected a boolean");
}

static void
test_user_numbers (void **state)
{
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"user\": {\"uid\": -1}}",
                     "process.user.uid: expected an unsigned 32-bit integer");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"user\": {\"uid\": 4294967296}}",
                     "process.user.uid: expected an unsigned 32-bit integer");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"user\": {\"gid\": 1.5}}", "process.user.gid");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"user\": {\"gid\": \"0\"}}", "process.user.gid");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"user\": {\"additionalGids\": [1, -2]}}",
                     "process.user.additionalGids[1]: expected an unsigned 32-bit integer");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"user\": {\"umask\": 4096}}", "process.user.umask");

  struct pr_config *cfg
      = parse_ok ("{\"ociVersion\": \"1\", \"process\": {\"args\": [\"sh\"], \"user\": {\"uid\": 4294967295}}}");
  assert_int_equal (cfg->process.user.uid, UINT32_MAX);
  assert_false (cfg->process.user.has_umask);
  pr_config_free (cfg);
}

static void
test_rlimits (void **state)
{
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_FOO\", \"hard\": 1, \"soft\": 1}]}",
                     "process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": -1, \"soft\": 1}]}",
                     "process.rlimits[0].hard: expected an unsigned 64-bit integer");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 18446744073709551616, \"soft\": 1}]}",
                     "process.rlimits[0].hard");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1}]}",
                     "process.rlimits[0].hard: missing required field");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_NPROC\", \"hard\": 1, \"soft\": 1},"
                     "{\"type\": \"RLIMIT_NPROC\", \"hard\": 2, \"soft\": 2}]}",
                     "process.rlimits[1].type: duplicate rlimit");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"rlimits\": {}}", "process.rlimits: expected an array");
}

static void
test_oom_score_adj (void **state)
{
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"oomScoreAdj\": 1001}", "process.oomScoreAdj: 1001 is out of range");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"oomScoreAdj\": -1001}", "process.oomScoreAdj");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"oomScoreAdj\": \"5\"}", "process.oomScoreAdj: expected an integer");
  struct pr_config *cfg
      = parse_ok ("{\"ociVersion\": \"1\", \"process\": {\"args\": [\"sh\"], \"oomScoreAdj\": -1000}}");
  assert_true (cfg->process.has_oom_score_adj);
  assert_int_equal (cfg->process.oom_score_adj, -1000);
  pr_config_free (cfg);
}

static void
test_scheduler_iopriority (void **state)
{
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"scheduler\": {\"policy\": \"SCHED_FOO\"}}",
                     "process.scheduler.policy: unknown scheduler policy");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"scheduler\": {\"nice\": 0}}",
                     "process.scheduler.policy: missing required field");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"scheduler\": {\"policy\": \"SCHED_OTHER\", \"nice\": 40}}",
                     "process.scheduler.nice");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"ioPriority\": {\"class\": \"IOPRIO_CLASS_X\"}}",
                     "process.ioPriority.class: unknown I/O priority class");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"ioPriority\": {\"class\": \"IOPRIO_CLASS_RT\", \"priority\": 8}}",
                     "process.ioPriority.priority");
}

static void
test_capabilities_type (void **state)
{
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"capabilities\": {\"bounding\": \"CAP_KILL\"}}",
                     "process.capabilities.bounding: expected an array of strings");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"capabilities\": []}", "process.capabilities: expected an object");
  expect_error_with (",\"process\": {\"args\": [\"sh\"], \"consoleSize\": {\"height\": 1}}",
                     "process.consoleSize.width: missing required field");
}

static void
test_mounts (void **state)
{
  expect_error_with (",\"mounts\": [{\"type\": \"tmpfs\"}]", "mounts[0].destination: missing required field");
  expect_error_with (",\"mounts\": [{\"destination\": \"/a\"}, {\"destination\": \"rel\"}]",
                     "mounts[1].destination: \"rel\" is not an absolute path");
  expect_error_with (",\"mounts\": [{\"destination\": \"/a\", \"options\": \"ro\"}]",
                     "mounts[0].options: expected an array of strings");
  expect_error_with (",\"mounts\": [\"/a\"]", "mounts[0]: expected an object");
  expect_error_with (",\"mounts\": [{\"destination\": \"/a\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1}]}]",
                     "mounts[0].uidMappings[0].size: missing required field");
}

static void
test_hooks (void **state)
{
  expect_error_with (",\"hooks\": {\"prestart\": [{\"path\": \"/x\", \"timeout\": 0}]}",
                     "hooks.prestart[0].timeout: must be greater than zero");
  expect_error_with (",\"hooks\": {\"poststop\": [{\"path\": \"/x\", \"timeout\": -3}]}", "hooks.poststop[0].timeout");
  expect_error_with (",\"hooks\": {\"createRuntime\": [{\"args\": []}]}", "hooks.createRuntime[0].path: missing required field");
  expect_error_with (",\"hooks\": {\"startContainer\": [{\"path\": \"rel\"}]}", "hooks.startContainer[0].path");
  expect_error_with (",\"hooks\": {\"createContainer\": {}}", "hooks.createContainer: expected an array");
  expect_error_with (",\"hooks\": {\"poststart\": [{\"path\": \"/x\", \"env\": [1]}]}",
                     "hooks.poststart[0].env: expected an array of strings");
}

static void
test_annotations (void **state)
{
  struct pr_config *cfg = parse_ok (full_config);
  assert_string_equal (pr_config_annotation (cfg, "org.example.key"), "value");
  assert_string_equal (pr_config_annotation (cfg, "run.oci.keep"), "1");
  assert_null (pr_config_annotation (cfg, "missing"));
  pr_config_free (cfg);
  expect_error_with (",\"annotations\": {\"a\": \"b\", \"c\": 1}", "annotations.c: expected a string");
  expect_error_with (",\"annotations\": [\"a\"]", "annotations: expected an object");
}

static void
test_namespaces (void **state)
{
  expect_error_with (",\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"uts\"}, {\"type\": \"foo\"}]}",
                     "linux.namespaces[2].type: unknown namespace type \"foo\"");
  expect_error_with (",\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"pid\"}]}",
                     "linux.namespaces[1].type: duplicate namespace type \"pid\"");
  expect_error_with (",\"linux\": {\"namespaces\": [{\"path\": \"/x\"}]}", "linux.namespaces[0].type: missing required field");
  expect_error_with (",\"linux\": {\"namespaces\": [{\"type\": \"pid\", \"path\": 3}]}", "linux.namespaces[0].path: expected a string");

  struct pr_config *cfg = parse_ok (full_config);
  const struct pr_namespace *ns = pr_config_namespace (cfg, CLONE_NEWNET);
  assert_non_null (ns);
  assert_string_equal (ns->path, "/var/run/netns/x");
  assert_non_null (pr_config_namespace (cfg, CLONE_NEWUSER));
  assert_null (pr_config_namespace (cfg, CLONE_NEWUTS));
  assert_null (pr_config_namespace (cfg, CLONE_NEWCGROUP));
  pr_config_free (cfg);
}

static void
test_namespace_names (void **state)
{
  static const struct
  {
    const char *name, *proc;
    int flag;
  } t[] = {
    { "pid", "pid", CLONE_NEWPID },   { "network", "net", CLONE_NEWNET },     { "mount", "mnt", CLONE_NEWNS },
    { "ipc", "ipc", CLONE_NEWIPC },   { "uts", "uts", CLONE_NEWUTS },         { "user", "user", CLONE_NEWUSER },
    { "cgroup", "cgroup", CLONE_NEWCGROUP }, { "time", "time", CLONE_NEWTIME },
  };
  for (size_t i = 0; i < PR_ARRAY_SIZE (t); i++)
    {
      assert_int_equal (pr_namespace_type (t[i].name), t[i].flag);
      assert_string_equal (pr_namespace_name (t[i].flag), t[i].name);
      assert_string_equal (pr_namespace_proc_name (t[i].flag), t[i].proc);
    }
  assert_int_equal (pr_namespace_type ("net"), -1);
  assert_int_equal (pr_namespace_type (""), -1);
  assert_int_equal (pr_namespace_type (NULL), -1);
  assert_null (pr_namespace_name (0));
  assert_null (pr_namespace_proc_name (CLONE_VM));
}

static void
test_idmaps (void **state)
{
  expect_error_with (",\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": -1, \"size\": 1}]}",
                     "linux.uidMappings[0].hostID: expected an unsigned 32-bit integer");
  expect_error_with (",\"linux\": {\"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 4294967296}]}",
                     "linux.gidMappings[0].size");
  expect_error_with (",\"linux\": {\"uidMappings\": {}}", "linux.uidMappings: expected an array");
}

static void
test_devices (void **state)
{
  expect_error_with (",\"linux\": {\"devices\": [{\"path\": \"/dev/x\", \"type\": \"x\", \"major\": 1, \"minor\": 1}]}",
                     "linux.devices[0].type: invalid device type \"x\"");
  expect_error_with (",\"linux\": {\"devices\": [{\"path\": \"/dev/x\", \"type\": \"cc\", \"major\": 1, \"minor\": 1}]}",
                     "linux.devices[0].type: invalid device type \"cc\"");
  expect_error_with (",\"linux\": {\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"minor\": 1}]}",
                     "linux.devices[0].major: missing required field");
  expect_error_with (",\"linux\": {\"devices\": [{\"path\": \"dev/x\", \"type\": \"b\", \"major\": 1, \"minor\": 1}]}",
                     "linux.devices[0].path");
  expect_error_with (",\"linux\": {\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"major\": 1, \"minor\": 1, \"fileMode\": -1}]}",
                     "linux.devices[0].fileMode");
  expect_error_with (",\"linux\": {\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"major\": 1, \"minor\": 1, \"uid\": \"0\"}]}",
                     "linux.devices[0].uid");
}

static void
test_seccomp_errors (void **state)
{
  expect_error_with (",\"linux\": {\"seccomp\": {}}", "linux.seccomp.defaultAction: missing required field");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"KILL\"}}",
                     "linux.seccomp.defaultAction: unknown seccomp action \"KILL\"");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_BOGUS\"}]}}",
                     "linux.seccomp.syscalls[0].action: unknown seccomp action");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [], \"action\": \"SCMP_ACT_LOG\"}]}}",
                     "linux.seccomp.syscalls[0].names");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_LOG\","
                     "\"args\": [{\"index\": 0, \"value\": -1, \"op\": \"SCMP_CMP_EQ\"}]}]}}",
                     "linux.seccomp.syscalls[0].args[0].value: expected an unsigned 64-bit integer");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_LOG\","
                     "\"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}}",
                     "linux.seccomp.syscalls[0].args[0].index");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_LOG\","
                     "\"args\": [{\"index\": 0, \"value\": 1, \"op\": \"EQ\"}]}]}}",
                     "linux.seccomp.syscalls[0].args[0].op");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"x86_64\"]}}",
                     "linux.seccomp.architectures[0]");
  expect_error_with (",\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultErrnoRet\": -1}}",
                     "linux.seccomp.defaultErrnoRet");
}

static void
test_linux_misc_errors (void **state)
{
  expect_error_with (",\"linux\": {\"rootfsPropagation\": \"sideways\"}", "linux.rootfsPropagation: invalid propagation");
  expect_error_with (",\"linux\": {\"sysctl\": {\"a\": 1}}", "linux.sysctl.a: expected a string");
  expect_error_with (",\"linux\": {\"personality\": {\"domain\": \"BSD\"}}", "linux.personality.domain: unknown personality domain");
  expect_error_with (",\"linux\": {\"personality\": {}}", "linux.personality.domain: missing required field");
  expect_error_with (",\"linux\": {\"timeOffsets\": {\"monotonic\": {\"secs\": 1, \"nanosecs\": 1000000000}}}",
                     "linux.timeOffsets.monotonic.nanosecs");
  expect_error_with (",\"linux\": {\"timeOffsets\": {\"boottime\": {\"secs\": \"1\"}}}",
                     "linux.timeOffsets.boottime.secs: expected an integer");
  expect_error_with (",\"linux\": {\"resources\": []}", "linux.resources: expected an object");
  expect_error_with (",\"linux\": {\"maskedPaths\": [\"/a\", null]}", "linux.maskedPaths: expected an array of strings");
  expect_error_with (",\"linux\": []", "linux: expected an object");
}

static void
test_spec_template (void **state)
{
  for (int rootless = 0; rootless <= 1; rootless++)
    {
      _cleanup_free_ char *json = pr_spec_default_json (rootless);
      struct pr_config *cfg = parse_ok (json);
      assert_string_equal (cfg->oci_version, "1.2.0");
      assert_string_equal (cfg->root_path, "rootfs");
      assert_true (cfg->process.terminal);
      assert_string_equal (cfg->process.args[0], "sh");
      assert_string_equal (cfg->process.capabilities.bounding[2], "CAP_NET_BIND_SERVICE");
      assert_int_equal (cfg->process.n_rlimits, 1);
      assert_int_equal (cfg->process.rlimits[0].resource, RLIMIT_NOFILE);
      assert_int_equal (cfg->process.rlimits[0].hard, 1024);
      assert_non_null (pr_config_namespace (cfg, CLONE_NEWPID));
      assert_non_null (pr_config_namespace (cfg, CLONE_NEWCGROUP));
      assert_non_null (cfg->linux.masked_paths);
      assert_non_null (cfg->linux.readonly_paths);
      if (rootless)
        {
          assert_non_null (pr_config_namespace (cfg, CLONE_NEWUSER));
          assert_null (pr_config_namespace (cfg, CLONE_NEWNET));
          assert_int_equal (cfg->linux.n_uid_mappings, 1);
          assert_int_equal (cfg->linux.uid_mappings[0].host_id, geteuid ());
          assert_int_equal (cfg->linux.gid_mappings[0].host_id, getegid ());
          assert_null (cfg->linux.resources);
          for (size_t i = 0; i < cfg->n_mounts; i++)
            assert_string_not_equal (cfg->mounts[i].destination, "/sys/fs/cgroup");
          assert_int_equal (cfg->n_mounts, 6);
        }
      else
        {
          assert_null (pr_config_namespace (cfg, CLONE_NEWUSER));
          assert_non_null (pr_config_namespace (cfg, CLONE_NEWNET));
          assert_int_equal (cfg->n_mounts, 7);
          assert_string_equal (cfg->mounts[6].type, "cgroup");
          assert_non_null (cfg->linux.resources);
        }
      pr_config_free (cfg);
    }
}

static void
test_process_parse (void **state)
{
  static const char json[] = "{\"terminal\": false, \"args\": [\"/bin/ls\", \"-l\"], \"cwd\": \"/root\","
                             " \"env\": [\"X=1\"], \"user\": {\"uid\": 3, \"gid\": 4},"
                             " \"capabilities\": {\"bounding\": [\"CAP_KILL\"]}, \"noNewPrivileges\": true}";
  struct pr_process p;
  yajl_val tree = NULL;
  pr_error *err = NULL;

  assert_int_equal (pr_process_parse (json, strlen (json), &p, &tree, &err), 0);
  assert_non_null (tree);
  assert_string_equal (p.args[1], "-l");
  assert_string_equal (p.cwd, "/root");
  assert_string_equal (p.env[0], "X=1");
  assert_int_equal (p.user.uid, 3);
  assert_true (p.has_capabilities);
  assert_true (p.no_new_privileges);
  /* Vectors are malloc'd and owned by p: appending must work. */
  p.env = pr_strv_append (p.env, "Y=2");
  assert_int_equal (pr_strv_len (p.env), 2);
  pr_process_free_contents (&p);
  yajl_tree_free (tree);

  assert_int_equal (pr_process_parse (json, strlen (json), &p, NULL, &err), 0);
  pr_process_free_contents (&p);

  static const char bad[] = "{\"args\": [\"ls\"], \"user\": {\"uid\": -5}}";
  tree = (yajl_val) 1;
  assert_int_equal (pr_process_parse (bad, strlen (bad), &p, &tree, &err), -1);
  assert_null (tree);
  assert_non_null (strstr (err->msg, "process.user.uid: expected an unsigned 32-bit integer"));
  pr_error_free (&err);

  assert_int_equal (pr_process_parse ("{", 1, &p, NULL, &err), -1);
  assert_non_null (strstr (err->msg, "invalid process JSON"));
  pr_error_free (&err);
}

static void
test_load_file (void **state)
{
  char dir[] = "/tmp/test_config.XXXXXX";
  pr_error *err = NULL;
  struct pr_config *cfg = NULL;

  assert_non_null (mkdtemp (dir));
  _cleanup_free_ char *path = xasprintf ("%s/config.json", dir);
  assert_int_equal (pr_config_load (path, &cfg, &err), -1);
  assert_int_equal (err->errnum, ENOENT);
  assert_non_null (strstr (err->msg, path));
  pr_error_free (&err);

  assert_int_equal (pr_write_file (path, full_config, strlen (full_config), &err), 0);
  assert_int_equal (pr_config_load (path, &cfg, &err), 0);
  assert_string_equal (cfg->hostname, "box");
  pr_config_free (cfg);
  cfg = NULL;

  static const char bad[] = "{\"ociVersion\": \"1\", \"process\": {\"args\": 1}}";
  assert_int_equal (pr_write_file (path, bad, strlen (bad), &err), 0);
  assert_int_equal (pr_config_load (path, &cfg, &err), -1);
  _cleanup_free_ char *want = xasprintf ("%s: process.args: expected an array of strings", path);
  assert_string_equal (err->msg, want);
  pr_error_free (&err);
  unlink (path);
  rmdir (dir);
}

static void
test_unknown_fields_ignored (void **state)
{
  struct pr_config *cfg = parse_ok ("{\"ociVersion\": \"1.3.0\", \"vm\": {\"hypervisor\": {}},"
                                    " \"process\": {\"args\": [\"a\"], \"futureField\": [1, {\"x\": null}]},"
                                    " \"linux\": {\"memoryPolicy\": {\"mode\": \"MPOL_BIND\"}, \"netDevices\": {}}}");
  assert_string_equal (cfg->oci_version, "1.3.0");
  pr_config_free (cfg);
  pr_config_free (NULL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_full_config_top),
    cmocka_unit_test (test_full_config_process),
    cmocka_unit_test (test_full_config_linux),
    cmocka_unit_test (test_full_config_seccomp),
    cmocka_unit_test (test_minimal_defaults),
    cmocka_unit_test (test_malformed_json),
    cmocka_unit_test (test_deep_nesting),
    cmocka_unit_test (test_oci_version_required),
    cmocka_unit_test (test_root),
    cmocka_unit_test (test_process_args),
    cmocka_unit_test (test_process_cwd_env),
    cmocka_unit_test (test_user_numbers),
    cmocka_unit_test (test_rlimits),
    cmocka_unit_test (test_oom_score_adj),
    cmocka_unit_test (test_scheduler_iopriority),
    cmocka_unit_test (test_capabilities_type),
    cmocka_unit_test (test_mounts),
    cmocka_unit_test (test_hooks),
    cmocka_unit_test (test_annotations),
    cmocka_unit_test (test_namespaces),
    cmocka_unit_test (test_namespace_names),
    cmocka_unit_test (test_idmaps),
    cmocka_unit_test (test_devices),
    cmocka_unit_test (test_seccomp_errors),
    cmocka_unit_test (test_linux_misc_errors),
    cmocka_unit_test (test_spec_template),
    cmocka_unit_test (test_process_parse),
    cmocka_unit_test (test_load_file),
    cmocka_unit_test (test_unknown_fields_ignored),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
