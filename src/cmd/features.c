/* features.c - `proctor features`: runtime-spec features.md document, the
 * JSON podman and containerd read to learn what the runtime supports. */
#define _GNU_SOURCE
#include "config.h"
#include "cmd.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../linux/caps.h"

#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <yajl/yajl_gen.h>

#define GS(g, s) yajl_gen_string (g, (const unsigned char *) (s), strlen (s))

static void
gen_strs (yajl_gen g, const char *key, const char *const *v)
{
  GS (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; v[i]; i++)
    GS (g, v[i]);
  yajl_gen_array_close (g);
}

static void
gen_bool_obj (yajl_gen g, const char *key, bool enabled)
{
  GS (g, key);
  yajl_gen_map_open (g);
  GS (g, "enabled");
  yajl_gen_bool (g, enabled);
  yajl_gen_map_close (g);
}

static void
gen_caps (yajl_gen g)
{
  GS (g, "capabilities");
  yajl_gen_array_open (g);
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    {
      char *name = cap_to_name (c);
      char up[64];
      size_t i;
      for (i = 0; name && name[i] && i < sizeof up - 1; i++)
        up[i] = (name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i];
      up[i] = '\0';
      GS (g, up);
      cap_free (name);
    }
  yajl_gen_array_close (g);
}

static const char *const hooks[] = { "prestart", "createRuntime", "createContainer", "startContainer",
                                     "poststart", "poststop", NULL };
/* Every option src/linux/mount.c knows (its option table), sorted. */
static const char *const mount_opts[] = {
  "async",      "atime",      "bind",       "defaults",  "dev",           "diratime",   "dirsync",  "exec",
  "idmap",      "iversion",   "lazytime",   "loud",      "mand",          "noatime",    "nodev",    "nodiratime",
  "noexec",     "noiversion", "nolazytime", "nomand",    "norelatime",    "nostrictatime", "nosuid", "nosymfollow",
  "private",    "ratime",     "rbind",      "rdev",      "rdiratime",     "relatime",   "remount",  "rexec",
  "ridmap",     "rnoatime",   "rnodev",     "rnodiratime", "rnoexec",     "rnorelatime", "rnostrictatime",
  "rnosuid",    "rnosymfollow", "ro",       "rprivate",  "rrelatime",     "rro",        "rrw",      "rshared",
  "rslave",     "rstrictatime", "rsuid",    "rsymfollow", "runbindable",  "rw",         "shared",   "silent",
  "slave",      "strictatime", "suid",      "symfollow", "sync",          "tmpcopyup",  "unbindable", NULL
};
static const char *const namespaces[] = { "cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts", NULL };
static const char *const actions[] = { "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
                                       "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY", "SCMP_ACT_TRACE",
                                       "SCMP_ACT_TRAP", NULL };
static const char *const operators[] = { "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE", "SCMP_CMP_LT",
                                         "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE", NULL };
static const char *const archs[] = { "SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64",
                                     "SCMP_ARCH_ARM", NULL };

static int
no_flags (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
run_features (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  int first = pr_cmd_parse (&pr_cmd_features, argc, argv, no_flags, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_features, argc, first, 0, 0, &err) < 0)
    return pr_cmd_fail (err);
  yajl_gen y = yajl_gen_alloc (NULL);
  yajl_gen_config (y, yajl_gen_beautify, 1);
  yajl_gen_map_open (y);
  GS (y, "ociVersionMin");
  GS (y, "1.0.0");
  GS (y, "ociVersionMax");
  GS (y, "1.2.0");
  gen_strs (y, "hooks", hooks);
  gen_strs (y, "mountOptions", mount_opts);
  GS (y, "linux");
  yajl_gen_map_open (y);
  gen_strs (y, "namespaces", namespaces);
  gen_caps (y);
  GS (y, "cgroup");
  yajl_gen_map_open (y);
  GS (y, "v1");
  yajl_gen_bool (y, 1);
  GS (y, "v2");
  yajl_gen_bool (y, 1);
  /* Whether the systemd cgroup driver is built in (runc's meaning); it
   * still needs systemd running when a container asks for it. */
  GS (y, "systemd");
#ifdef HAVE_SYSTEMD
  yajl_gen_bool (y, 1);
#else
  yajl_gen_bool (y, 0);
#endif
  GS (y, "systemdUser");
  yajl_gen_bool (y, 0);
  yajl_gen_map_close (y);
  GS (y, "seccomp");
  yajl_gen_map_open (y);
  GS (y, "enabled");
  yajl_gen_bool (y, 1);
  gen_strs (y, "actions", actions);
  gen_strs (y, "operators", operators);
  gen_strs (y, "archs", archs);
  yajl_gen_map_close (y);
  gen_bool_obj (y, "apparmor", true);
  gen_bool_obj (y, "selinux", true);
  yajl_gen_map_close (y);
  GS (y, "annotations");
  yajl_gen_map_open (y);
  GS (y, "run.proctor.version");
  GS (y, PACKAGE_VERSION);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
  _cleanup_free_ char *text = pr_json_gen_finish (y);
  printf ("%s\n", text);
  return 0;
}

static const struct pr_opt opts[] = { { NULL } };

const struct pr_command pr_cmd_features = {
  "features", "", "show the enabled features (runtime-spec features.md)", opts, run_features,
};
