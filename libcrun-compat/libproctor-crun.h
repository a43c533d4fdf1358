/* libproctor-crun.h - a libcrun-shaped C API over proctor's runtime core,
 * for programs that embed a container runtime instead of executing one.
 *
 * The names, argument order and conventions follow libcrun's public
 * container.h/error.h (crun 1.x) so code written against libcrun ports by
 * changing the include and the pkg-config name (libproctor-crun); the
 * differences are listed at each function and under "Not provided".
 *
 * Conventions: functions returning int give a negative value on failure and
 * fill *err (when err is non-NULL) with a newly allocated error that the
 * caller frees with libcrun_error_release(); the status is the errno value
 * (0 when the failure is not a system error) and msg one line naming the
 * failing step, as `proctor` prints it.  Pointer-returning functions give
 * NULL on failure.  Every call needs the privileges `proctor` needs (root,
 * or a user namespace where it owns the cgroups it is asked to use).
 *
 * Security note: the proctor binary re-executes itself from a sealed memfd
 * before it enters a container (CVE-2019-5736); a library cannot re-execute
 * its host program, so a program that execs into untrusted containers with
 * this library should itself be started from a sealed or read-only binary.
 *
 * Not provided (link errors rather than silent no-ops): checkpoint/restore,
 * features, custom handlers, libcrun_container_stats's struct (stats come
 * as runc's JSON instead), the libocispec runtime_spec_* types (exec takes
 * the process as JSON instead). */
#ifndef LIBPROCTOR_CRUN_H
#define LIBPROCTOR_CRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- errors */

struct libcrun_error_s
{
  int status; /* errno value, 0 when not a system error */
  char *msg;  /* one line, malloc'd */
};
typedef struct libcrun_error_s *libcrun_error_t;

/* Frees *err (NULL-safe) and sets it to NULL.  Returns 0. */
int libcrun_error_release (libcrun_error_t *err);

/* ------------------------------------------------------------ context */

/* What `proctor [global options] create [options] ID` takes on its command
 * line.  Callers fill it directly (zero-initialise it first); the library
 * never keeps or frees these pointers. */
struct libcrun_context_s
{
  const char *state_root;     /* --root; NULL = /run/proctor */
  const char *id;             /* the container id (create/run) */
  const char *bundle;         /* --bundle; NULL = the current directory */
  const char *console_socket; /* --console-socket */
  const char *pid_file;       /* --pid-file */
  const char *notify_socket;  /* sd_notify proxying: must be NULL (not supported, EOPNOTSUPP) */
  int preserve_fds;           /* --preserve-fds, 0..65535 (EINVAL otherwise) */
  bool systemd_cgroup;        /* --systemd-cgroup */
  bool detach;                /* run/exec: return once the process runs */
  bool no_new_keyring;        /* --no-new-keyring */
  bool force_no_cgroup;       /* --cgroup-manager disabled */
  bool no_pivot;              /* --no-pivot */
};
typedef struct libcrun_context_s libcrun_context_t;

/* ---------------------------------------------------------- container */

/* A loaded (parsed and type-checked) config.json; opaque. */
typedef struct libcrun_container_s libcrun_container_t;

/* Loads config.json from path (relative to the current directory).
 * Errors: open/read errno naming the file, the config parse errors
 * ("process.args: expected an array of strings"). */
libcrun_container_t *libcrun_container_load_from_file (const char *path, libcrun_error_t *err);

/* Loads config.json from a NUL-terminated string.  Errors as above. */
libcrun_container_t *libcrun_container_load_from_memory (const char *json, libcrun_error_t *err);

/* Frees a container returned by the loaders.  NULL-safe. */
void libcrun_container_free (libcrun_container_t *container);

/* The config text as loaded (owned by container). */
const char *libcrun_container_get_config_json (libcrun_container_t *container);

/* The value of annotation key in the config, or NULL (owned by container). */
const char *libcrun_container_get_annotation (libcrun_container_t *container, const char *key);

enum
{
  LIBCRUN_RUN_OPTIONS_PREFORK = 1 << 0, /* accepted; proctor never needs the extra fork */
  LIBCRUN_RUN_OPTIONS_KEEP = 1 << 1,    /* run --keep: leave the stopped container for `delete` */
};

enum
{
  LIBCRUN_CREATE_OPTIONS_PREFORK = 1 << 0, /* accepted, no effect */
};

/* create + start (`proctor run`), with context->id and context->bundle.
 * With context->detach returns 0 once the process runs; otherwise proxies
 * the caller's stdio (a pty when process.terminal and no console socket),
 * forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2/SIGWINCH to the
 * container, waits, deletes the container unless LIBCRUN_RUN_OPTIONS_KEEP,
 * and returns the process's exit status (128+N for signal N).  The calling
 * process is the container init's parent.  Errors: any create error; then
 * nothing is left behind. */
int libcrun_container_run (libcrun_context_t *context, libcrun_container_t *container, unsigned int options,
                           libcrun_error_t *err);

/* `proctor create`: the container waits for libcrun_container_start().
 * Returns 0.  Errors: invalid id, id in use, config validation, any setup
 * step (nothing is left behind). */
int libcrun_container_create (libcrun_context_t *context, libcrun_container_t *container, unsigned int options,
                              libcrun_error_t *err);

/* `proctor start ID`.  Errors: does not exist, not in created state. */
int libcrun_container_start (libcrun_context_t *context, const char *id, libcrun_error_t *err);

/* `proctor kill ID SIGNAL`; signal is "TERM", "SIGTERM" or "15" (NULL =
 * SIGTERM).  killall: `kill --all` (every process of the cgroup).  Errors:
 * unknown signal (EINVAL), does not exist, "container not running". */
int libcrun_container_kill (libcrun_context_t *context, const char *id, const char *signal, libcrun_error_t *err);
int libcrun_container_killall (libcrun_context_t *context, const char *id, const char *signal,
                               libcrun_error_t *err);

/* `proctor delete [--force] ID`.  Errors: does not exist; not stopped
 * without force. */
int libcrun_container_delete (libcrun_context_t *context, const char *id, bool force, libcrun_error_t *err);

/* `proctor state ID`: writes the runtime-spec state JSON and a newline to
 * out (state_json: a malloc'd string without the newline).  Errors: does
 * not exist. */
int libcrun_container_state (libcrun_context_t *context, const char *id, FILE *out, libcrun_error_t *err);
int libcrun_container_state_json (libcrun_context_t *context, const char *id, char **out, libcrun_error_t *err);

/* `proctor exec --process FILE ID` with the runtime-spec process object
 * given as JSON (exec_json), as a file (exec_process_file), or with a
 * sub-cgroup of the container (opts->cgroup, `exec --cgroup`).  Honours
 * context->detach, console_socket, pid_file and preserve_fds.  Returns the
 * process's exit status, or 0 when detached.  Errors: does not exist,
 * stopped, process parse errors, the container-side errors (executable
 * not found, ...). */
struct libcrun_exec_options_s
{
  size_t struct_size;       /* sizeof (struct libcrun_exec_options_s) */
  const char *process_json; /* OCI process object */
  const char *cgroup;       /* sub-cgroup of the container, or NULL */
};
int libcrun_container_exec_json (libcrun_context_t *context, const char *id, const char *process_json,
                                 libcrun_error_t *err);
int libcrun_container_exec_with_options_json (libcrun_context_t *context, const char *id,
                                              const struct libcrun_exec_options_s *opts, libcrun_error_t *err);
int libcrun_container_exec_process_file (libcrun_context_t *context, const char *id, const char *path,
                                         libcrun_error_t *err);

/* ------------------------------------------- operations on the cgroup */

/* `proctor pause ID` / `proctor resume ID`: freezes or thaws every process
 * of the container (its cgroup's freezer).  Errors: does not exist; "container
 * ID is not running: STATUS" / "... is not paused: STATUS"; the freezer's
 * (ETIMEDOUT when it does not settle in 5 s; EINVAL when the container has
 * no cgroup of its own: force_no_cgroup). */
int libcrun_container_pause (libcrun_context_t *context, const char *id, libcrun_error_t *err);
int libcrun_container_unpause (libcrun_context_t *context, const char *id, libcrun_error_t *err);

/* `proctor update --resources FILE ID` with the linux.resources object as
 * JSON text (content, len bytes): only the keys present change, in the
 * cgroup and in the state's copy of config.json.  Errors: does not exist;
 * "update: container ID is STATUS" when stopped or without a cgroup;
 * invalid JSON or not an object (EINVAL); the cgroup write's errno naming
 * the file (EINVAL for an impossible value, ENOTSUP for a controller the
 * host lacks). */
int libcrun_container_update (libcrun_context_t *context, const char *id, const char *content, size_t len,
                              libcrun_error_t *err);

/* One linux.resources value for libcrun_container_update_from_values:
 * SECTION.NAME := value, a JSON number's text when numeric ("104857600",
 * "-1"), else a string ("0-1").  As crun's struct libcrun_update_value_s. */
struct libcrun_update_value_s
{
  const char *section; /* "memory", "cpu", "pids", "blockIO", ... */
  const char *name;    /* "limit", "quota", "cpus", ... */
  bool numeric;
  const char *value;
};

/* `proctor update --memory ... ID`: the len values (the last one wins for a
 * repeated key).  Errors: as libcrun_container_update; EINVAL "update:
 * nothing to update" for len 0. */
int libcrun_container_update_from_values (libcrun_context_t *context, const char *id,
                                          struct libcrun_update_value_s *values, size_t len, libcrun_error_t *err);

/* `proctor ps --format json ID`: the host pids of the container's processes
 * (its cgroup and those below it, whatever recurse says; a rollout's
 * egress helper left out) as a malloc'd array ending with 0 in *pids (the
 * caller frees it).  Errors: does not exist; the cgroup read's errno;
 * EINVAL without a cgroup. */
int libcrun_container_read_pids (libcrun_context_t *context, const char *id, bool recurse, pid_t **pids,
                                 libcrun_error_t *err);

/* `proctor events --stats ID`'s data: runc's types.Stats JSON object
 * (cpu, memory, pids, blkio, hugetlb; nanoseconds and bytes) in *json (the
 * caller frees it).  A proctor extension in place of crun's struct-filling
 * libcrun_container_stats.  Errors: does not exist; "container ID is not
 * running"; the cgroup read's errno. */
int libcrun_container_stats_json (libcrun_context_t *context, const char *id, char **json, libcrun_error_t *err);

/* `proctor events ID` (a proctor extension): calls cb with type "stats"
 * (data_json the types.Stats object) every interval_ms (>= 1; stats_once:
 * once, then returns) and with type "oom" (data_json NULL) per OOM kill
 * of the container's cgroup, until the container stops or cb returns
 * non-zero; then returns 0.  The strings are valid during the call only.
 * Errors: as libcrun_container_stats_json; EINVAL for interval_ms < 1. */
typedef int (*libcrun_event_cb) (const char *type, const char *id, const char *data_json, void *arg);
int libcrun_container_events (libcrun_context_t *context, const char *id, bool stats_once, long long interval_ms,
                              libcrun_event_cb cb, void *arg, libcrun_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
