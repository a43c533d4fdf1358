/* state.h - the container state directory under --root (default
 * /run/proctor): <root>/<id>/{state.json,config.json,exec.fifo}.
 *
 * state.json holds what later commands need (pid and its start time so a
 * recycled pid is never mistaken for the container, bundle, rootfs,
 * creation time, cgroup path, annotations).  config.json is the bundle's
 * config as parsed at create, so exec/delete see the same spec even if the
 * bundle changes.  Concurrent commands on one id serialise on flock(2) of
 * the directory.  Source: runtime-spec runtime.md "State"; runc's layout. */
#ifndef PROCTOR_STATE_H
#define PROCTOR_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "../base/error.h"
#include "../cgroup/manager.h"

struct pr_state
{
  char *id;
  pid_t pid;                     /* container init, host pid ns; 0 if none */
  unsigned long long start_time; /* /proc/PID/stat field 22, clock ticks */
  char *bundle;                  /* absolute */
  char *rootfs;                  /* absolute */
  char *created;                 /* RFC 3339, UTC */
  char *owner;                   /* "" (runc writes the user name; "" = root) */
  char *cgroup_path;             /* the cgroup path relative to each hierarchy's root */
  bool systemd_cgroup;
  char **annotations;            /* flattened k,v,k,v,...,NULL; may be NULL */
  int state_dirfd;               /* open O_DIRECTORY fd of <root>/<id>, or -1 */
};

/* Validates an id: non-empty, at most 1024 bytes, [A-Za-z0-9_+.-] only, not
 * "." or "..".  Errors: EINVAL "invalid container id `X`". */
int pr_state_check_id (const char *id, pr_error **err);

/* Creates <root>/<id> (mode 0711) and returns its fd.  <root> is created
 * with 0700 if missing.  Errors: EEXIST "container with id exists: ID";
 * other mkdir/open errnos with the path. */
int pr_state_dir_create (const char *root, const char *id, int *dirfd_out, pr_error **err);

/* Removes <root>/<id> and its files.  Missing directory is not an error. */
int pr_state_dir_remove (const char *root, const char *id, pr_error **err);

/* Loads <root>/<id>/state.json and takes a shared/exclusive flock on the
 * directory (released when st->state_dirfd is closed by pr_state_free).
 * Errors: ENOENT "container `ID` does not exist"; malformed state (EINVAL). */
int pr_state_load (const char *root, const char *id, bool exclusive, struct pr_state **out, pr_error **err);

/* Writes state.json atomically (temp file + rename) into st->state_dirfd. */
int pr_state_save (const struct pr_state *st, pr_error **err);

/* The runtime-spec status: "creating", "created", "running", "paused" or
 * "stopped", derived from the live process (pid alive with the same start
 * time), exec.fifo presence and the freezer state. */
const char *pr_state_status (const struct pr_state *st);

/* The container's cgroup manager as state.json recorded it (the driver
 * create chose; disabled when there is no cgroup path).  *out is the
 * caller's (pr_cgroup_manager_clear).  Never fails. */
void pr_state_cgroup (const struct pr_state *st, struct pr_cgroup_manager *out);

/* Returns true if st->pid is alive and is still the same process. */
bool pr_state_pid_alive (const struct pr_state *st);

/* Runtime-spec state JSON ({"ociVersion","id","status","pid","bundle",
 * "annotations"} plus runc's "rootfs","created","owner"), malloc'd. */
char *pr_state_to_json (const struct pr_state *st, const char *status);

/* Lists ids under root (NULL-terminated, malloc'd); missing root = empty. */
int pr_state_list (const char *root, char ***ids_out, pr_error **err);

/* Writes pid in decimal to path (--pid-file), atomically (a temp file
 * renamed over it) so an engine polling the file never reads it half
 * written.  path NULL is a no-op.  Errors: write/rename errno with the path. */
int pr_state_write_pid_file (const char *path, pid_t pid, pr_error **err);

void pr_state_free (struct pr_state *st);
static inline void pr_state_freep (struct pr_state **s) { if (*s) pr_state_free (*s); }
#define _cleanup_state_ __attribute__ ((cleanup (pr_state_freep)))

#endif
