/* exec.h - running an additional process in a running container (runc
 * exec): join every namespace of the container's init, its cgroup, and
 * apply the process settings.  Source: runtime-spec runtime.md (exec is a
 * runc extension); setns(2). */
#ifndef PROCTOR_EXEC_H
#define PROCTOR_EXEC_H

#include <stdbool.h>

#include "container.h"
#include "../base/error.h"

struct pr_exec_opts
{
  const char *id;
  const char *process_path;   /* --process FILE, or NULL */
  char **args;                /* command and arguments when no --process */
  bool tty;                   /* --tty */
  bool detach;                /* --detach */
  const char *console_socket; /* --console-socket */
  const char *pid_file;       /* --pid-file */
  const char *cwd;            /* --cwd */
  char **env;                 /* --env K=V (NULL-terminated) */
  const char *user;           /* --user UID[:GID] */
  char **caps;                /* --cap CAP_X (added to all sets) */
  char **additional_gids;     /* --additional-gids */
  bool no_new_privs;          /* --no-new-privs */
  int preserve_fds;           /* --preserve-fds */
  const char *apparmor;       /* --apparmor */
  const char *process_label;  /* --process-label */
  const char *cgroup;         /* crun/runc --cgroup (sub-cgroup), may be NULL */
  bool ignore_paused;         /* --ignore-paused */
};

/* Runs the process.  Without detach, waits and sets *exit_code (128+N for
 * signal N); with detach, returns once execve succeeded in the container.
 * Errors: "container `ID` does not exist"; "cannot exec in a stopped
 * container"; "cannot exec in a paused container" (unless ignore_paused:
 * the process then starts when the container is resumed); process file
 * parse errors; the container-side errors
 * (executable not found, chdir, setuid ...) carried back over the sync
 * socket.  A failed exec leaves the container and its cgroup intact. */
int pr_container_exec (const struct pr_global *g, const struct pr_exec_opts *o, int *exit_code, pr_error **err);

#endif
