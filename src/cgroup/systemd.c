/* systemd.c - the systemd cgroup driver: the container's cgroup as a
 * transient scope unit that systemd creates and owns, asked for over D-Bus
 * with libsystemd's sd-bus (StartTransientUnit, StopUnit), the way runc's
 * systemd driver does.  systemd only creates the unit's cgroup and puts the
 * first pid in it; resources, exec, kill, freeze and destroy of leftovers
 * stay with the cgroupfs code in ops.c and resources.c, on the directories
 * systemd made ("/slice/prefix-name.scope" in every hierarchy it manages).
 * Built without libsystemd, the entry points fail with "built without
 * systemd support" (configure --with-systemd).
 * Source: org.freedesktop.systemd1(5) (Manager.StartTransientUnit,
 * StopUnit, Subscribe, JobRemoved; Scope.ControlGroup); systemd.scope(5);
 * systemd.resource-control(5) (Delegate=, *Accounting=). */
#define _GNU_SOURCE
#include "config.h"

#include "cgroup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../base/util.h"

#ifdef HAVE_SYSTEMD
#include <dlfcn.h>
#include <systemd/sd-bus.h>

/* libsystemd is opened when the driver is first used, not linked: linked,
 * it and what it needs (libgcrypt, liblzma, libzstd, liblz4, ...) would be
 * loaded by every proctor exec, twice per create and exec (exeguard.c's
 * re-exec), while only --systemd-cgroup needs it.  The sd-bus API is used
 * as declared in <systemd/sd-bus.h>, through these pointers. */
#define SD_FUNCS(X)                                                                                                    \
  X (sd_bus_open_system)                                                                                               \
  X (sd_bus_new)                                                                                                       \
  X (sd_bus_set_address)                                                                                               \
  X (sd_bus_start)                                                                                                     \
  X (sd_bus_flush_close_unref)                                                                                         \
  X (sd_bus_process)                                                                                                   \
  X (sd_bus_wait)                                                                                                      \
  X (sd_bus_match_signal)                                                                                              \
  X (sd_bus_slot_unref)                                                                                                \
  X (sd_bus_call)                                                                                                      \
  X (sd_bus_call_method)                                                                                               \
  X (sd_bus_get_property_string)                                                                                       \
  X (sd_bus_path_encode)                                                                                               \
  X (sd_bus_message_new_method_call)                                                                                   \
  X (sd_bus_message_append)                                                                                            \
  X (sd_bus_message_open_container)                                                                                    \
  X (sd_bus_message_close_container)                                                                                   \
  X (sd_bus_message_read)                                                                                              \
  X (sd_bus_message_unref)                                                                                             \
  X (sd_bus_error_free)                                                                                                \
  X (sd_bus_error_has_name)

#define SD_DECLARE(f) __typeof__ (f) *f;
static struct
{
  SD_FUNCS (SD_DECLARE)
} sdb;

/* Opens libsystemd.so.0 once and resolves SD_FUNCS.  Errors: ENOTSUP
 * naming dlerror() when the library or a symbol is missing. */
static int
load_libsystemd (pr_error **err)
{
  static void *handle;
  if (handle)
    return 0;
  void *h = dlopen ("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return pr_error_set (err, ENOTSUP, "systemd cgroup driver: cannot load libsystemd.so.0: %s", dlerror ());
#define SD_RESOLVE(f)                                                                                                  \
  if ((sdb.f = dlsym (h, #f)) == NULL)                                                                                 \
    {                                                                                                                  \
      pr_error_set (err, ENOTSUP, "systemd cgroup driver: libsystemd.so.0 lacks %s", #f);                              \
      dlclose (h);                                                                                                     \
      return -1;                                                                                                       \
    }
  SD_FUNCS (SD_RESOLVE)
#undef SD_RESOLVE
  handle = h;
  return 0;
}

/* How long a start or stop job may take before we give up on it. */
#define JOB_TIMEOUT_USEC (10ULL * 1000 * 1000)

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

/* The cleanup helpers run only where load_libsystemd succeeded or the
 * object is still NULL. */
static void
bus_unrefp (sd_bus **b)
{
  if (*b)
    sdb.sd_bus_flush_close_unref (*b);
}
#define _cleanup_bus_ __attribute__ ((cleanup (bus_unrefp)))

static void
msg_unrefp (sd_bus_message **m)
{
  if (*m)
    sdb.sd_bus_message_unref (*m);
}
#define _cleanup_msg_ __attribute__ ((cleanup (msg_unrefp)))

static void
slot_unrefp (sd_bus_slot **s)
{
  if (*s)
    sdb.sd_bus_slot_unref (*s);
}
#define _cleanup_slot_ __attribute__ ((cleanup (slot_unrefp)))

static void
bus_error_freep (sd_bus_error *e)
{
  if (sdb.sd_bus_error_free)
    sdb.sd_bus_error_free (e);
}
#define _cleanup_bus_error_ __attribute__ ((cleanup (bus_error_freep)))

/* The unit and its slice from the cgroup path pr_cgroup_path() computed:
 * "/a.slice/a-b.slice/p-n.scope" -> unit "p-n.scope", slice "a-b.slice";
 * directly under the root the slice is "-.slice".  The path already passed
 * systemd's unit-name rules (cgroup.c systemd_path). */
static int
unit_names (const char *path, char **unit, char **slice, pr_error **err)
{
  const char *last = strrchr (path, '/');
  if (last == NULL || last[1] == '\0')
    return pr_error_invalid (err, "systemd cgroup path `%s` names no unit", path);
  *unit = xstrdup (last + 1);
  const char *prev = last;
  while (prev > path && prev[-1] != '/')
    prev--;
  *slice = prev == last ? xstrdup ("-.slice") : strndup (prev, last - prev);
  if (*slice == NULL)
    abort ();
  return 0;
}

/* The system bus as root; systemd's private socket when no bus daemon
 * runs (systemd answers the same API there, to root only). */
static int
bus_open (sd_bus **out, pr_error **err)
{
  int r = sdb.sd_bus_open_system (out);
  if (r >= 0)
    return 0;
  pr_debug ("systemd: system bus: %s; trying /run/systemd/private", strerror (-r));
  _cleanup_bus_ sd_bus *b = NULL;
  int r2 = sdb.sd_bus_new (&b);
  if (r2 >= 0)
    r2 = sdb.sd_bus_set_address (b, "unix:path=/run/systemd/private");
  if (r2 >= 0)
    r2 = sdb.sd_bus_start (b);
  if (r2 < 0)
    return pr_error_set (err, -r, "systemd: connect to the system bus (and /run/systemd/private)");
  *out = steal_pointer (&b);
  return 0;
}

/* What the JobRemoved match waits for. */
struct job_wait
{
  const char *job;  /* object path returned by the method; NULL until then */
  char *result;     /* "done", "failed", "timeout", ... once removed */
};

static int
on_job_removed (sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
  struct job_wait *w = userdata;
  uint32_t id;
  const char *path, *unit, *result;
  if (sdb.sd_bus_message_read (m, "uoss", &id, &path, &unit, &result) < 0)
    return 0;
  /* sd_bus_call queues the signals that arrive before its reply and
   * sd_bus_process dispatches them only later, so w->job is known here
   * even when the job ended before the method returned. */
  if (w->job && strcmp (path, w->job) == 0 && w->result == NULL)
    w->result = xstrdup (result);
  return 0;
}

static uint64_t
now_usec (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/* Processes bus traffic until w->job is removed or the timeout passes.
 * Errors: ETIMEDOUT, the bus errno; EIO when the job ended other than
 * "done" (its result is named). */
static int
job_wait (sd_bus *bus, struct job_wait *w, const char *what, pr_error **err)
{
  uint64_t deadline = now_usec () + JOB_TIMEOUT_USEC;
  while (w->result == NULL)
    {
      int r = sdb.sd_bus_process (bus, NULL);
      if (r < 0)
        return pr_error_set (err, -r, "systemd: %s: wait for job %s", what, w->job);
      if (r > 0)
        continue;
      uint64_t now = now_usec ();
      if (now >= deadline)
        return pr_error_set (err, ETIMEDOUT, "systemd: %s: job %s did not finish in %llu s", what, w->job,
                             (unsigned long long) (JOB_TIMEOUT_USEC / 1000000));
      r = sdb.sd_bus_wait (bus, deadline - now);
      if (r < 0)
        return pr_error_set (err, -r, "systemd: %s: wait for job %s", what, w->job);
    }
  if (strcmp (w->result, "done") != 0)
    return pr_error_set (err, EIO, "systemd: %s: job %s", what, w->result);
  return 0;
}

static void
job_wait_clear (struct job_wait *w)
{
  free (w->result);
}

/* Subscribes to JobRemoved before the job exists, so its end cannot be
 * missed.  Subscribe() makes systemd emit job signals to this client at
 * all; a failure there is only logged, since systemd also signals the
 * client that queued the job. */
static int
watch_jobs (sd_bus *bus, struct job_wait *w, sd_bus_slot **slot, pr_error **err)
{
  int r = sdb.sd_bus_match_signal (bus, slot, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved", on_job_removed, w);
  if (r < 0)
    return pr_error_set (err, -r, "systemd: subscribe to JobRemoved");
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  if (sdb.sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", &e, NULL, "") < 0)
    pr_debug ("systemd Subscribe: %s", e.message ? e.message : "failed");
  return 0;
}

/* Appends the scope's properties (a(sv)) to m. */
static int
append_properties (sd_bus_message *m, const char *unit, const char *slice, pid_t pid)
{
  bool is_slice = pr_cgroup_is_slice_name (unit);
  _cleanup_free_ char *desc = xasprintf ("proctor container %s", unit);
  int r = sdb.sd_bus_message_open_container (m, 'a', "(sv)");
  if (r >= 0)
    r = sdb.sd_bus_message_append (m, "(sv)", "Description", "s", desc);
  /* Without this the scope would be ordered after basic.target and be
   * stopped at shutdown before the engine that manages it. */
  if (r >= 0)
    r = sdb.sd_bus_message_append (m, "(sv)", "DefaultDependencies", "b", 0);
  if (r >= 0)
    r = sdb.sd_bus_message_append (m, "(sv)(sv)(sv)", "MemoryAccounting", "b", 1, "CPUAccounting", "b", 1,
                               "TasksAccounting", "b", 1);
  /* A slice's parent is encoded in its name and it holds no processes
   * itself; only a scope takes Slice=, PIDs= and Delegate=. */
  if (r >= 0 && !is_slice)
    r = sdb.sd_bus_message_append (m, "(sv)(sv)", "Slice", "s", slice, "PIDs", "au", 1, (uint32_t) pid);
  /* Delegate: the container's own cgroup tree (nested cgroups, limits we
   * write through cgroupfs) is ours, not systemd's to reset. */
  if (r >= 0 && !is_slice)
    r = sdb.sd_bus_message_append (m, "(sv)", "Delegate", "b", 1);
  if (r >= 0)
    r = sdb.sd_bus_message_close_container (m);
  return r;
}

/* Checks that systemd placed the unit where cgroupfs will look for it:
 * systemd names cgroups relative to its own root, which is "/" of our view
 * only when we share its cgroup namespace and mounts. */
static int
check_control_group (sd_bus *bus, const char *unit, const char *path, pr_error **err)
{
  _cleanup_free_ char *obj = NULL;
  _cleanup_free_ char *cg = NULL;
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  bool is_slice = pr_cgroup_is_slice_name (unit);
  int r = sdb.sd_bus_path_encode ("/org/freedesktop/systemd1/unit", unit, &obj);
  if (r < 0)
    return pr_error_set (err, -r, "systemd: unit %s: object path", unit);
  r = sdb.sd_bus_get_property_string (bus, SD_DEST, obj, is_slice ? "org.freedesktop.systemd1.Slice"
                                                              : "org.freedesktop.systemd1.Scope",
                                  "ControlGroup", &e, &cg);
  if (r < 0)
    return pr_error_set (err, -r, "systemd: unit %s: read ControlGroup: %s", unit, e.message ? e.message : "");
  if (strcmp (cg, path) != 0)
    return pr_error_set (err, EXDEV, "systemd placed unit %s in cgroup `%s`, not `%s` (another cgroup namespace?)",
                         unit, cg, path);
  return 0;
}

/* *started is set once systemd accepted the unit (it then exists until
 * stopped, whatever happens next). */
static int
start_unit (sd_bus *bus, const char *unit, const char *slice, pid_t pid, const char *path, bool *started,
            pr_error **err)
{
  struct job_wait w = { 0 };
  _cleanup_slot_ sd_bus_slot *slot = NULL;
  _cleanup_msg_ sd_bus_message *m = NULL;
  _cleanup_msg_ sd_bus_message *reply = NULL;
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  int ret = -1;

  if (watch_jobs (bus, &w, &slot, err) < 0)
    return -1;
  int r = sdb.sd_bus_message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
  if (r >= 0)
    r = sdb.sd_bus_message_append (m, "ss", unit, "replace");
  if (r >= 0)
    r = append_properties (m, unit, slice, pid);
  if (r >= 0)
    r = sdb.sd_bus_message_append (m, "a(sa(sv))", 0);
  if (r < 0)
    return pr_error_set (err, -r, "systemd: build StartTransientUnit(%s)", unit);
  r = sdb.sd_bus_call (bus, m, JOB_TIMEOUT_USEC, &e, &reply);
  if (r < 0)
    {
      if (sdb.sd_bus_error_has_name (&e, "org.freedesktop.systemd1.UnitExists"))
        return pr_error_set (err, EEXIST, "systemd: unit %s already exists", unit);
      return pr_error_set (err, -r, "systemd: start unit %s: %s", unit, e.message ? e.message : "call failed");
    }
  *started = true;
  r = sdb.sd_bus_message_read (reply, "o", &w.job);
  if (r < 0)
    pr_error_set (err, -r, "systemd: start unit %s: read job path", unit);
  else if (job_wait (bus, &w, unit, err) == 0)
    ret = check_control_group (bus, unit, path, err);
  job_wait_clear (&w);
  return ret;
}

int
pr_cgroup_systemd_start (const char *path, pid_t pid, pr_error **err)
{
  _cleanup_free_ char *unit = NULL;
  _cleanup_free_ char *slice = NULL;
  _cleanup_bus_ sd_bus *bus = NULL;
  if (load_libsystemd (err) < 0 || unit_names (path, &unit, &slice, err) < 0 || bus_open (&bus, err) < 0)
    return -1;
  bool started = false;
  if (start_unit (bus, unit, slice, pid, path, &started, err) == 0)
    return 0;
  /* A unit that started but failed a later check must not outlive the
   * failed create; one that never started may be someone else's. */
  if (started)
    {
      _cleanup_error_ pr_error *e = NULL;
      if (pr_cgroup_systemd_stop (path, &e) < 0)
        pr_warn ("cleanup: %s", e->msg);
    }
  return -1;
}

int
pr_cgroup_systemd_stop (const char *path, pr_error **err)
{
  _cleanup_free_ char *unit = NULL;
  _cleanup_free_ char *slice = NULL;
  _cleanup_bus_ sd_bus *bus = NULL;
  _cleanup_slot_ sd_bus_slot *slot = NULL;
  _cleanup_msg_ sd_bus_message *reply = NULL;
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  struct job_wait w = { 0 };

  if (load_libsystemd (err) < 0 || unit_names (path, &unit, &slice, err) < 0 || bus_open (&bus, err) < 0
      || watch_jobs (bus, &w, &slot, err) < 0)
    return -1;
  int r = sdb.sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", &e, &reply, "ss", unit, "replace");
  if (r < 0)
    {
      /* Already gone: a scope is garbage-collected once it is empty. */
      if (sdb.sd_bus_error_has_name (&e, "org.freedesktop.systemd1.NoSuchUnit"))
        return 0;
      return pr_error_set (err, -r, "systemd: stop unit %s: %s", unit, e.message ? e.message : "call failed");
    }
  int ret = -1;
  r = sdb.sd_bus_message_read (reply, "o", &w.job);
  if (r < 0)
    pr_error_set (err, -r, "systemd: stop unit %s: read job path", unit);
  else
    ret = job_wait (bus, &w, unit, err);
  job_wait_clear (&w);
  return ret;
}

int
pr_cgroup_systemd_supported (pr_error **err)
{
  return load_libsystemd (err);
}

#else /* !HAVE_SYSTEMD */

static int
unsupported (pr_error **err)
{
  return pr_error_set (err, ENOTSUP,
                       "systemd cgroup driver requested but proctor was built without systemd support "
                       "(configure --with-systemd, needs libsystemd)");
}

int
pr_cgroup_systemd_start (const char *path, pid_t pid, pr_error **err)
{
  return unsupported (err);
}

int
pr_cgroup_systemd_stop (const char *path, pr_error **err)
{
  /* No unit can have been started by this build; cgroupfs destroy does the rest. */
  return 0;
}

int
pr_cgroup_systemd_supported (pr_error **err)
{
  return unsupported (err);
}

#endif
