/* container.h - the container lifecycle: create, start, run, kill, delete,
 * as in runtime-spec runtime.md "Lifecycle" and "Operations", with runc's
 * command semantics (create/start split through exec.fifo). */
#ifndef PROCTOR_CONTAINER_H
#define PROCTOR_CONTAINER_H

#include <stdbool.h>
#include <signal.h>
#include <sys/types.h>

#include "../base/error.h"
#include "../base/fds.h"
#include "../config/config.h"

/* Global options (runc's global flags). */
struct pr_global
{
  const char *root;           /* --root, default /run/proctor */
  const char *log;            /* --log */
  const char *log_format;     /* --log-format */
  bool debug;                 /* --debug */
  bool systemd_cgroup;        /* --systemd-cgroup */
  const char *rootless;       /* --rootless true|false|auto */
  const char *cgroup_manager; /* crun's --cgroup-manager */
  const char *rollout_policy; /* --rollout-policy FILE: every container is a rollout */
  struct pr_caller_fds caller_fds; /* fds the caller passed in (fds.h) */
};

struct pr_create_opts
{
  const char *id;
  const char *bundle;         /* default "." */
  const char *config_path;    /* crun's --config; default BUNDLE/config.json */
  /* A config.json already parsed (libproctor-crun): create takes it over
   * and frees it, whether it succeeds or not, and reads no file; its text
   * (config_len bytes) is what the state directory keeps.  NULL: read
   * config_path. */
  struct pr_config *config;
  const char *config_text;
  size_t config_len;
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool local_tty;             /* run in the foreground with a terminal and no
                                 console socket: proxy our own stdio */
};

/* Creates the container: validates config.json, makes the state directory,
 * cgroup and namespaces, sets up the rootfs and the process, runs prestart,
 * createRuntime and createContainer hooks, and leaves the container process
 * waiting on exec.fifo.  *pid_out (may be NULL) receives its host pid and
 * *console_master_out (may be NULL) the pty master when o->local_tty.
 * Errors: any of the steps; on failure nothing is left behind (process,
 * cgroup, state directory).  The calling process is the container
 * process's parent. */
int pr_container_create (const struct pr_global *g, const struct pr_create_opts *o, pid_t *pid_out,
                         int *console_master_out, pr_error **err);

/* Lets a created container run its process (opens exec.fifo), then runs
 * poststart hooks (failures logged).  Errors: "container `ID` does not
 * exist", "cannot start a container that has stopped" / "... is not in
 * created state: STATUS". */
int pr_container_start (const struct pr_global *g, const char *id, pr_error **err);

/* create + start + wait + delete (runc run).  With detach, returns after
 * start.  *exit_code receives the container process's exit status (128+N
 * when killed by signal N).  keep: do not delete after exit. */
int pr_container_run (const struct pr_global *g, const struct pr_create_opts *o, bool detach, bool keep,
                      int *exit_code, pr_error **err);

/* Sends sig to the container process, or to every process of its cgroup
 * with all.  Errors: does not exist; "container not running" when stopped. */
int pr_container_kill (const struct pr_global *g, const char *id, int sig, bool all, pr_error **err);

/* Deletes a stopped or created container (force: any state, killing it):
 * kills what is left in its cgroup, removes the cgroup, runs poststop
 * hooks, removes the state directory.  With force, a container without
 * state (pr_state_load's ENOENT: no state directory, or one without
 * state.json) is no error, as in runc: its directory is removed.  Errors:
 * ENOENT "does not exist" without force; a corrupt state.json (EINVAL),
 * with or without force; "cannot delete container ID that is not stopped:
 * STATUS" without force. */
int pr_container_delete (const struct pr_global *g, const char *id, bool force, pr_error **err);

/* Waits for our child pid to exit while forwarding the signals in mask
 * (which the caller has blocked) to it; returns its exit code (128+N when
 * killed by signal N).  Used by run and foreground exec. */
int pr_wait_forwarding (pid_t pid, sigset_t *mask);

/* Fills mask with the signals a foreground run/exec forwards (and SIGCHLD). */
void pr_forward_sigset (sigset_t *mask);

/* Parses a signal given as a number, "KILL" or "SIGKILL".  -1 if unknown. */
int pr_parse_signal (const char *s);

#endif
