/* spec.c - generates the default config.json of `proctor spec` with
 * yajl_gen (see spec.h for what the template contains and why the rootless
 * variant differs). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "spec.h"
#include "../base/json.h"
#include "../base/util.h"

/* yajl_gen only fails on misuse (unbalanced maps/arrays) or out-of-memory,
 * both programming errors here, so the helpers abort instead of returning
 * errors nobody could handle. */
static void
check (yajl_gen_status st)
{
  if (st != yajl_gen_status_ok)
    abort ();
}

static void
str (yajl_gen g, const char *s)
{
  check (yajl_gen_string (g, (const unsigned char *) s, strlen (s)));
}

static void
key_str (yajl_gen g, const char *k, const char *v)
{
  str (g, k);
  str (g, v);
}

static void
key_int (yajl_gen g, const char *k, long long v)
{
  str (g, k);
  check (yajl_gen_integer (g, v));
}

static void
key_bool (yajl_gen g, const char *k, bool v)
{
  str (g, k);
  check (yajl_gen_bool (g, v));
}

static void
open_map (yajl_gen g, const char *k)
{
  if (k)
    str (g, k);
  check (yajl_gen_map_open (g));
}

static void
close_map (yajl_gen g)
{
  check (yajl_gen_map_close (g));
}

static void
open_array (yajl_gen g, const char *k)
{
  if (k)
    str (g, k);
  check (yajl_gen_array_open (g));
}

static void
close_array (yajl_gen g)
{
  check (yajl_gen_array_close (g));
}

/* k: [v...], v NULL-terminated. */
static void
key_strv (yajl_gen g, const char *k, const char *const *v)
{
  open_array (g, k);
  for (; *v; v++)
    str (g, *v);
  close_array (g);
}

static void
gen_process (yajl_gen g)
{
  static const char *const args[] = { "sh", NULL };
  static const char *const env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL };
  static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

  open_map (g, "process");
  key_bool (g, "terminal", true);
  open_map (g, "user");
  key_int (g, "uid", 0);
  key_int (g, "gid", 0);
  close_map (g);
  key_strv (g, "args", args);
  key_strv (g, "env", env);
  key_str (g, "cwd", "/");
  open_map (g, "capabilities");
  key_strv (g, "bounding", caps);
  key_strv (g, "effective", caps);
  key_strv (g, "permitted", caps);
  close_map (g);
  open_array (g, "rlimits");
  open_map (g, NULL);
  key_str (g, "type", "RLIMIT_NOFILE");
  key_int (g, "hard", 1024);
  key_int (g, "soft", 1024);
  close_map (g);
  close_array (g);
  key_bool (g, "noNewPrivileges", true);
  close_map (g);
}

static void
gen_mount (yajl_gen g, const char *dest, const char *type, const char *source, const char *const *options)
{
  open_map (g, NULL);
  key_str (g, "destination", dest);
  key_str (g, "type", type);
  key_str (g, "source", source);
  if (options)
    key_strv (g, "options", options);
  close_map (g);
}

static void
gen_mounts (yajl_gen g, bool rootless)
{
  static const char *const dev_opts[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts_opts[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  /* Without gid=5: that gid is not mapped in a rootless user namespace. */
  static const char *const pts_opts_rootless[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
  static const char *const shm_opts[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static const char *const mq_opts[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const sys_opts[] = { "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const sys_bind_opts[] = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const cg_opts[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };

  open_array (g, "mounts");
  gen_mount (g, "/proc", "proc", "proc", NULL);
  gen_mount (g, "/dev", "tmpfs", "tmpfs", dev_opts);
  gen_mount (g, "/dev/pts", "devpts", "devpts", rootless ? pts_opts_rootless : pts_opts);
  gen_mount (g, "/dev/shm", "tmpfs", "shm", shm_opts);
  gen_mount (g, "/dev/mqueue", "mqueue", "mqueue", mq_opts);
  if (rootless)
    gen_mount (g, "/sys", "none", "/sys", sys_bind_opts);
  else
    {
      gen_mount (g, "/sys", "sysfs", "sysfs", sys_opts);
      gen_mount (g, "/sys/fs/cgroup", "cgroup", "cgroup", cg_opts);
    }
  close_array (g);
}

static void
gen_idmap (yajl_gen g, const char *k, unsigned host_id)
{
  open_array (g, k);
  open_map (g, NULL);
  key_int (g, "containerID", 0);
  key_int (g, "hostID", host_id);
  key_int (g, "size", 1);
  close_map (g);
  close_array (g);
}

static void
gen_linux (yajl_gen g, bool rootless)
{
  static const char *const ns_root[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
  static const char *const ns_rootless[] = { "pid", "ipc", "uts", "mount", "cgroup", "user", NULL };
  static const char *const masked[]
      = { "/proc/acpi",         "/proc/asound",      "/proc/kcore",     "/proc/keys",
          "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
          "/proc/scsi",         "/sys/firmware",     "/sys/devices/virtual/powercap", NULL };
  static const char *const readonly[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };

  open_map (g, "linux");
  if (rootless)
    {
      gen_idmap (g, "uidMappings", geteuid ());
      gen_idmap (g, "gidMappings", getegid ());
    }
  else
    {
      open_map (g, "resources");
      open_array (g, "devices");
      open_map (g, NULL);
      key_bool (g, "allow", false);
      key_str (g, "access", "rwm");
      close_map (g);
      close_array (g);
      close_map (g);
    }
  open_array (g, "namespaces");
  for (const char *const *ns = rootless ? ns_rootless : ns_root; *ns; ns++)
    {
      open_map (g, NULL);
      key_str (g, "type", *ns);
      close_map (g);
    }
  close_array (g);
  key_strv (g, "maskedPaths", masked);
  key_strv (g, "readonlyPaths", readonly);
  close_map (g);
}

char *
pr_spec_default_json (bool rootless)
{
  yajl_gen g = yajl_gen_alloc (NULL);

  if (g == NULL)
    abort ();
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "\t");
  open_map (g, NULL);
  key_str (g, "ociVersion", "1.2.0");
  gen_process (g);
  open_map (g, "root");
  key_str (g, "path", "rootfs");
  key_bool (g, "readonly", true);
  close_map (g);
  key_str (g, "hostname", "proctor");
  gen_mounts (g, rootless);
  gen_linux (g, rootless);
  close_map (g);
  return pr_json_gen_finish (g);
}
