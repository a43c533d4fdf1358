/* libproctor-crun.c - the libcrun-shaped API (libproctor-crun.h) as thin
 * wrappers over proctor's lifecycle (src/lifecycle): a libcrun context
 * becomes a pr_global plus pr_create_opts, a pr_error becomes a
 * libcrun_error_t, a loaded container's parsed config goes to create as
 * it is (pr_create_opts.config). */
#define _GNU_SOURCE
#include "libproctor-crun.h"
#include "../src/base/util.h"
#include "../src/config/config.h"
#include "../src/lifecycle/container.h"
#include "../src/lifecycle/exec.h"
#include "../src/lifecycle/ops.h"
#include "../src/lifecycle/state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct libcrun_container_s
{
  char *text;            /* config.json as loaded: what create runs */
  size_t len;
  struct pr_config *cfg; /* parsed at load; create takes it over (then NULL
                            until a second create parses text again) */
  struct pr_keyval *annotations; /* copied at load: they outlive cfg */
  size_t n_annotations;
};

/* Moves a proctor error into a libcrun one (and frees it).  Returns -1. */
static int
to_crun_error (pr_error *e, libcrun_error_t *err)
{
  if (err && *err == NULL && e)
    {
      struct libcrun_error_s *c = malloc (sizeof *c);
      if (c)
        {
          c->status = e->errnum;
          c->msg = steal_pointer (&e->msg);
          *err = c;
        }
    }
  pr_error_free (&e);
  return -1;
}

int
libcrun_error_release (libcrun_error_t *err)
{
  if (err == NULL || *err == NULL)
    return 0;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
  return 0;
}

static struct pr_global
global_of (const libcrun_context_t *ctx)
{
  struct pr_global g = {
    .root = ctx->state_root && *ctx->state_root ? ctx->state_root : "/run/proctor",
    .systemd_cgroup = ctx->systemd_cgroup,
    .cgroup_manager = ctx->force_no_cgroup ? "disabled" : NULL,
  };
  return g;
}

/* ----------------------------------------------------------- containers */

static libcrun_container_t *
load_text (char *text, size_t len, libcrun_error_t *err)
{
  pr_error *e = NULL;
  struct pr_config *cfg = NULL;
  if (pr_config_parse (text, len, &cfg, &e) < 0)
    {
      free (text);
      to_crun_error (e, err);
      return NULL;
    }
  libcrun_container_t *c = xmalloc0 (sizeof *c);
  c->text = text;
  c->len = len;
  c->cfg = cfg;
  c->annotations = xmalloc0 ((cfg->n_annotations + 1) * sizeof *c->annotations);
  for (size_t i = 0; i < cfg->n_annotations; i++)
    {
      c->annotations[i].key = xstrdup (cfg->annotations[i].key);
      c->annotations[i].value = xstrdup (cfg->annotations[i].value);
    }
  c->n_annotations = cfg->n_annotations;
  return c;
}

libcrun_container_t *
libcrun_container_load_from_file (const char *path, libcrun_error_t *err)
{
  pr_error *e = NULL;
  char *text = NULL;
  size_t len = 0;
  if (path == NULL)
    {
      pr_error_invalid (&e, "config file path is NULL");
      to_crun_error (e, err);
      return NULL;
    }
  if (pr_read_file (path, &text, &len, &e) < 0)
    {
      to_crun_error (e, err);
      return NULL;
    }
  libcrun_container_t *c = load_text (text, len, err);
  if (c == NULL && err && *err)
    {
      /* Name the file, as `proctor create` does. */
      char *m = xasprintf ("%s: %s", path, (*err)->msg);
      free ((*err)->msg);
      (*err)->msg = m;
    }
  return c;
}

libcrun_container_t *
libcrun_container_load_from_memory (const char *json, libcrun_error_t *err)
{
  if (json == NULL)
    {
      pr_error *e = NULL;
      pr_error_invalid (&e, "config json is NULL");
      to_crun_error (e, err);
      return NULL;
    }
  return load_text (xstrdup (json), strlen (json), err);
}

void
libcrun_container_free (libcrun_container_t *c)
{
  if (c == NULL)
    return;
  if (c->cfg)
    pr_config_free (c->cfg);
  for (size_t i = 0; i < c->n_annotations; i++)
    {
      free (c->annotations[i].key);
      free (c->annotations[i].value);
    }
  free (c->annotations);
  free (c->text);
  free (c);
}

const char *
libcrun_container_get_config_json (libcrun_container_t *c)
{
  return c ? c->text : NULL;
}

const char *
libcrun_container_get_annotation (libcrun_container_t *c, const char *key)
{
  for (size_t i = 0; c && key && i < c->n_annotations; i++)
    if (strcmp (c->annotations[i].key, key) == 0)
      return c->annotations[i].value;
  return NULL;
}

/* The lifecycle reads exec's process files by path, in this process and
 * before any fork; a sealed memfd gives in-memory JSON a path without a
 * temporary file to clean up, and nobody can change it under us. */
static int
memfd_with (const char *name, const char *data, size_t len, int *fd_out, char **path_out, pr_error **err)
{
  _cleanup_close_ int fd = memfd_create (name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return pr_error_set (err, errno, "memfd_create for %s", name);
  if (pr_write_all (fd, data, len) < 0)
    return pr_error_set (err, errno, "write %s to memfd", name);
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
    return pr_error_set (err, errno, "seal memfd for %s", name);
  *path_out = xasprintf ("/proc/self/fd/%d", fd);
  *fd_out = steal_fd (&fd);
  return 0;
}

static int
check_context (const libcrun_context_t *ctx, bool need_id, pr_error **err)
{
  if (ctx == NULL)
    return pr_error_invalid (err, "context is NULL");
  if (need_id && (ctx->id == NULL || *ctx->id == '\0'))
    return pr_error_invalid (err, "context: container id is not set");
  if (ctx->notify_socket)
    return pr_error_set (err, EOPNOTSUPP, "context: notify_socket is not supported by proctor");
  /* The CLI's --preserve-fds bound: a negative count would make fds 0-2
   * close-on-exec, a huge one overflow 3 + preserve_fds. */
  if (ctx->preserve_fds < 0 || ctx->preserve_fds > 65535)
    return pr_error_invalid (err, "context: preserve_fds %d is not in 0..65535", ctx->preserve_fds);
  return 0;
}

/* The parsed config create takes over: the one parsed at load the first
 * time, a new parse of the same text for a second create (create rewrites
 * what it is given: crun annotations, a rollout's mounts). */
static int
take_config (libcrun_container_t *container, struct pr_config **out, pr_error **err)
{
  if (container->cfg == NULL && pr_config_parse (container->text, container->len, &container->cfg, err) < 0)
    return -1;
  *out = steal_pointer (&container->cfg);
  return 0;
}

/* Shared by run and create: builds the create options around the loaded
 * container's parsed config. */
static int
create_or_run (libcrun_context_t *ctx, libcrun_container_t *container, bool run, bool keep, int *exit_code,
               libcrun_error_t *err)
{
  pr_error *e = NULL;
  struct pr_config *cfg = NULL;
  /* In a library the fds open at the call are the caller's, the ones
   * preserve_fds may pass (fds.h). */
  struct pr_caller_fds caller;
  pr_caller_fds_snapshot (&caller);
  if (check_context (ctx, true, &e) < 0)
    return to_crun_error (e, err);
  if (container == NULL)
    {
      pr_error_invalid (&e, "container is NULL");
      return to_crun_error (e, err);
    }
  if (take_config (container, &cfg, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  g.caller_fds = caller;
  struct pr_create_opts o = {
    .id = ctx->id,
    .bundle = ctx->bundle,
    .config = cfg, /* create frees it */
    .config_text = container->text,
    .config_len = container->len,
    .pid_file = ctx->pid_file,
    .console_socket = ctx->console_socket,
    .no_pivot = ctx->no_pivot,
    .no_new_keyring = ctx->no_new_keyring,
    .preserve_fds = ctx->preserve_fds,
  };
  int r = run ? pr_container_run (&g, &o, ctx->detach, keep, exit_code, &e)
              : pr_container_create (&g, &o, NULL, NULL, &e);
  if (r < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_run (libcrun_context_t *ctx, libcrun_container_t *container, unsigned int options,
                       libcrun_error_t *err)
{
  int code = 0;
  if (create_or_run (ctx, container, true, (options & LIBCRUN_RUN_OPTIONS_KEEP) != 0, &code, err) < 0)
    return -1;
  return ctx->detach ? 0 : code;
}

int
libcrun_container_create (libcrun_context_t *ctx, libcrun_container_t *container, unsigned int options,
                          libcrun_error_t *err)
{
  return create_or_run (ctx, container, false, false, NULL, err);
}

/* ------------------------------------------------------ by-id operations */

int
libcrun_container_start (libcrun_context_t *ctx, const char *id, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_container_start (&g, id, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

static int
kill_common (libcrun_context_t *ctx, const char *id, const char *signal, bool all, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  int sig = pr_parse_signal (signal);
  if (sig < 0)
    {
      pr_error_invalid (&e, "unknown signal `%s`", signal);
      return to_crun_error (e, err);
    }
  struct pr_global g = global_of (ctx);
  if (pr_container_kill (&g, id, sig, all, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_kill (libcrun_context_t *ctx, const char *id, const char *signal, libcrun_error_t *err)
{
  return kill_common (ctx, id, signal, false, err);
}

int
libcrun_container_killall (libcrun_context_t *ctx, const char *id, const char *signal, libcrun_error_t *err)
{
  return kill_common (ctx, id, signal, true, err);
}

int
libcrun_container_delete (libcrun_context_t *ctx, const char *id, bool force, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_container_delete (&g, id, force, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_state_json (libcrun_context_t *ctx, const char *id, char **out, libcrun_error_t *err)
{
  pr_error *e = NULL;
  _cleanup_state_ struct pr_state *st = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_state_load (g.root, id, false, &st, &e) < 0)
    return to_crun_error (e, err);
  *out = pr_state_to_json (st, pr_state_status (st));
  return 0;
}

int
libcrun_container_state (libcrun_context_t *ctx, const char *id, FILE *out, libcrun_error_t *err)
{
  _cleanup_free_ char *json = NULL;
  if (libcrun_container_state_json (ctx, id, &json, err) < 0)
    return -1;
  if (fprintf (out, "%s\n", json) < 0 || fflush (out) != 0)
    {
      pr_error *e = NULL;
      pr_error_set (&e, errno, "write state of `%s`", id);
      return to_crun_error (e, err);
    }
  return 0;
}

/* ------------------------------------------------------------------ exec */

static int
exec_path (libcrun_context_t *ctx, const char *id, const char *process_path, const char *cgroup,
           libcrun_error_t *err)
{
  pr_error *e = NULL;
  char *no_args[] = { NULL };
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  /* The caller's fds, the ones preserve_fds may pass (fds.h). */
  pr_caller_fds_snapshot (&g.caller_fds);
  struct pr_exec_opts o = {
    .id = id,
    .process_path = process_path,
    .args = no_args,
    .detach = ctx->detach,
    .console_socket = ctx->console_socket,
    .pid_file = ctx->pid_file,
    .preserve_fds = ctx->preserve_fds,
    .cgroup = cgroup,
  };
  int code = 0;
  if (pr_container_exec (&g, &o, &code, &e) < 0)
    return to_crun_error (e, err);
  return ctx->detach ? 0 : code;
}

int
libcrun_container_exec_process_file (libcrun_context_t *ctx, const char *id, const char *path,
                                     libcrun_error_t *err)
{
  return exec_path (ctx, id, path, NULL, err);
}

int
libcrun_container_exec_with_options_json (libcrun_context_t *ctx, const char *id,
                                          const struct libcrun_exec_options_s *opts, libcrun_error_t *err)
{
  pr_error *e = NULL;
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *path = NULL;
  /* struct_size lets a newer caller's larger struct work with this
   * library; a smaller one cannot carry the fields we read. */
  if (opts == NULL || opts->struct_size < sizeof (struct libcrun_exec_options_s) || opts->process_json == NULL)
    {
      pr_error_invalid (&e, "exec options: struct_size or process_json not set");
      return to_crun_error (e, err);
    }
  if (memfd_with ("process.json", opts->process_json, strlen (opts->process_json), &fd, &path, &e) < 0)
    return to_crun_error (e, err);
  return exec_path (ctx, id, path, opts->cgroup, err);
}

int
libcrun_container_exec_json (libcrun_context_t *ctx, const char *id, const char *process_json,
                             libcrun_error_t *err)
{
  struct libcrun_exec_options_s o = { .struct_size = sizeof o, .process_json = process_json };
  return libcrun_container_exec_with_options_json (ctx, id, &o, err);
}

/* ---------------------------------------------- operations on the cgroup */

int
libcrun_container_pause (libcrun_context_t *ctx, const char *id, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_container_pause (&g, id, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_unpause (libcrun_context_t *ctx, const char *id, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_container_resume (&g, id, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_update (libcrun_context_t *ctx, const char *id, const char *content, size_t len,
                          libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  if (content == NULL)
    {
      pr_error_invalid (&e, "update: content is NULL");
      return to_crun_error (e, err);
    }
  /* content need not be NUL-terminated */
  _cleanup_free_ char *text = xmalloc (len + 1);
  memcpy (text, content, len);
  text[len] = '\0';
  struct pr_global g = global_of (ctx);
  if (pr_container_update (&g, id, text, "resources", NULL, 0, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_update_from_values (libcrun_context_t *ctx, const char *id, struct libcrun_update_value_s *values,
                                      size_t len, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  _cleanup_free_ struct pr_update_value *v = xmalloc0 ((len + 1) * sizeof *v);
  for (size_t i = 0; i < len; i++)
    {
      if (values[i].section == NULL || values[i].name == NULL || values[i].value == NULL)
        {
          pr_error_invalid (&e, "update: value %zu has a NULL section, name or value", i);
          return to_crun_error (e, err);
        }
      v[i] = (struct pr_update_value){ values[i].section, values[i].name, values[i].numeric, values[i].value };
    }
  struct pr_global g = global_of (ctx);
  if (pr_container_update (&g, id, NULL, NULL, v, len, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_read_pids (libcrun_context_t *ctx, const char *id, bool recurse, pid_t **pids,
                             libcrun_error_t *err)
{
  pr_error *e = NULL;
  _cleanup_free_ pid_t *found = NULL;
  size_t n = 0;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_container_ps (&g, id, &found, &n, &e) < 0)
    return to_crun_error (e, err);
  pid_t *out = xmalloc ((n + 1) * sizeof *out);
  for (size_t i = 0; i < n; i++)
    out[i] = found[i];
  out[n] = 0;
  *pids = out;
  return 0;
}

int
libcrun_container_stats_json (libcrun_context_t *ctx, const char *id, char **json, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  struct pr_global g = global_of (ctx);
  if (pr_container_stats (&g, id, json, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}

int
libcrun_container_events (libcrun_context_t *ctx, const char *id, bool stats_once, long long interval_ms,
                          libcrun_event_cb cb, void *arg, libcrun_error_t *err)
{
  pr_error *e = NULL;
  if (check_context (ctx, false, &e) < 0)
    return to_crun_error (e, err);
  if (cb == NULL)
    {
      pr_error_invalid (&e, "events: callback is NULL");
      return to_crun_error (e, err);
    }
  struct pr_global g = global_of (ctx);
  if (pr_container_events (&g, id, stats_once, interval_ms, cb, arg, &e) < 0)
    return to_crun_error (e, err);
  return 0;
}
