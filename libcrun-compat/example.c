/* example.c - a program embedding proctor through libproctor-crun, the
 * way a libcrun user would: load a config, then drive the container.
 *
 *   example run ROOT BUNDLE ID        load BUNDLE/config.json from the file,
 *                                     run it in the foreground, exit with
 *                                     the container's status
 *   example lifecycle ROOT BUNDLE ID  load the config from memory, then
 *                                     create, state, start, exec, kill,
 *                                     delete, printing each step
 *   example cgroup ROOT BUNDLE ID     load the config from the file, create
 *                                     ID and ID-b from it, start ID, pause
 *                                     and resume it, update its pids limit
 *                                     (70 by values, then 80 by JSON), list
 *                                     its pids, read its stats and one
 *                                     stats event; ID is left running, ID-b
 *                                     is deleted
 *   example bad-config                show the error of an invalid config
 *
 * EXAMPLE_PRESERVE_FDS=N in the environment sets the context's
 * preserve_fds (fds 3 .. 3+N-1 of this program pass to the container). */
#define _GNU_SOURCE
#include <libproctor-crun.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
fail (const char *step, libcrun_error_t *err)
{
  fprintf (stderr, "%s: %s (status %d)\n", step, *err ? (*err)->msg : "?", *err ? (*err)->status : 0);
  libcrun_error_release (err);
  return 1;
}

static char *
read_all (const char *path)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream (&buf, &len);
  char chunk[4096];
  size_t n;
  while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
    fwrite (chunk, 1, n, m);
  fclose (f);
  fclose (m);
  return buf;
}

static int
do_run (libcrun_context_t *ctx, const char *config)
{
  libcrun_error_t err = NULL;
  libcrun_container_t *c = libcrun_container_load_from_file (config, &err);
  if (c == NULL)
    return fail ("load", &err);
  int r = libcrun_container_run (ctx, c, 0, &err);
  libcrun_container_free (c);
  if (r < 0)
    return fail ("run", &err);
  printf ("exit status %d\n", r);
  return r;
}

/* Polls the state until the container reports want (10 s at most). */
static int
wait_status (libcrun_context_t *ctx, const char *want)
{
  char needle[64], spaced[64];
  snprintf (needle, sizeof needle, "\"status\":\"%s\"", want);
  snprintf (spaced, sizeof spaced, "\"status\": \"%s\"", want);
  for (int i = 0; i < 200; i++)
    {
      libcrun_error_t err = NULL;
      char *json = NULL;
      if (libcrun_container_state_json (ctx, ctx->id, &json, &err) < 0)
        return fail ("state", &err);
      int found = strstr (json, needle) || strstr (json, spaced);
      free (json);
      if (found)
        return 0;
      usleep (50000);
    }
  fprintf (stderr, "container did not reach %s\n", want);
  return 1;
}

static int
do_lifecycle (libcrun_context_t *ctx, const char *config)
{
  libcrun_error_t err = NULL;
  char *json = read_all (config);
  if (json == NULL)
    {
      perror (config);
      return 1;
    }
  libcrun_container_t *c = libcrun_container_load_from_memory (json, &err);
  free (json);
  if (c == NULL)
    return fail ("load", &err);
  const char *note = libcrun_container_get_annotation (c, "org.example.note");
  printf ("annotation org.example.note=%s\n", note ? note : "(none)");
  int r = libcrun_container_create (ctx, c, 0, &err);
  libcrun_container_free (c);
  if (r < 0)
    return fail ("create", &err);
  printf ("created\n");
  if (libcrun_container_state (ctx, ctx->id, stdout, &err) < 0)
    return fail ("state", &err);
  if (libcrun_container_start (ctx, ctx->id, &err) < 0)
    return fail ("start", &err);
  if (wait_status (ctx, "running"))
    return 1;
  printf ("started\n");
  fflush (stdout);
  r = libcrun_container_exec_json (ctx, ctx->id,
                                   "{\"args\":[\"sh\",\"-c\",\"echo exec-output; exit 3\"],\"cwd\":\"/\","
                                   "\"env\":[\"PATH=/bin:/usr/bin\"],\"user\":{\"uid\":0,\"gid\":0}}",
                                   &err);
  if (r < 0)
    return fail ("exec", &err);
  printf ("exec status %d\n", r);
  if (libcrun_container_kill (ctx, ctx->id, "KILL", &err) < 0)
    return fail ("kill", &err);
  if (wait_status (ctx, "stopped"))
    return 1;
  printf ("stopped\n");
  if (libcrun_container_delete (ctx, ctx->id, false, &err) < 0)
    return fail ("delete", &err);
  printf ("deleted\n");
  if (libcrun_container_state (ctx, ctx->id, stdout, &err) == 0)
    {
      fprintf (stderr, "state succeeded after delete\n");
      return 1;
    }
  printf ("state after delete: %s\n", err->msg);
  libcrun_error_release (&err);
  return 0;
}

static int
print_event (const char *type, const char *id, const char *data_json, void *arg)
{
  printf ("event %s %s%s\n", type, id, data_json && strstr (data_json, "\"pids\"") ? " with pids" : "");
  return 0;
}

/* The operations on the cgroup, and a loaded container created twice. */
static int
do_cgroup (libcrun_context_t *ctx, const char *config)
{
  libcrun_error_t err = NULL;
  libcrun_container_t *c = libcrun_container_load_from_file (config, &err);
  if (c == NULL)
    return fail ("load", &err);
  if (libcrun_container_create (ctx, c, 0, &err) < 0)
    {
      libcrun_container_free (c);
      return fail ("create", &err);
    }
  char second[256];
  snprintf (second, sizeof second, "%s-b", ctx->id);
  libcrun_context_t ctx2 = *ctx;
  ctx2.id = second;
  int r = libcrun_container_create (&ctx2, c, 0, &err);
  const char *note = libcrun_container_get_annotation (c, "org.example.note");
  printf ("annotation after create org.example.note=%s\n", note ? note : "(none)");
  libcrun_container_free (c);
  if (r < 0)
    return fail ("second create", &err);
  printf ("created twice\n");
  if (libcrun_container_delete (&ctx2, second, true, &err) < 0)
    return fail ("delete second", &err);
  if (libcrun_container_start (ctx, ctx->id, &err) < 0)
    return fail ("start", &err);
  if (wait_status (ctx, "running"))
    return 1;
  if (libcrun_container_pause (ctx, ctx->id, &err) < 0)
    return fail ("pause", &err);
  if (wait_status (ctx, "paused"))
    return 1;
  printf ("paused\n");
  if (libcrun_container_unpause (ctx, ctx->id, &err) < 0)
    return fail ("unpause", &err);
  if (wait_status (ctx, "running"))
    return 1;
  printf ("resumed\n");
  struct libcrun_update_value_s v[] = { { "pids", "limit", true, "70" } };
  if (libcrun_container_update_from_values (ctx, ctx->id, v, 1, &err) < 0)
    return fail ("update from values", &err);
  printf ("updated by values\n");
  const char *res = "{\"pids\": {\"limit\": 80}}";
  if (libcrun_container_update (ctx, ctx->id, res, strlen (res), &err) < 0)
    return fail ("update", &err);
  printf ("updated by json\n");
  pid_t *pids = NULL;
  if (libcrun_container_read_pids (ctx, ctx->id, true, &pids, &err) < 0)
    return fail ("read pids", &err);
  int n = 0;
  while (pids[n] > 0)
    n++;
  free (pids);
  printf ("pids %d\n", n);
  char *stats = NULL;
  if (libcrun_container_stats_json (ctx, ctx->id, &stats, &err) < 0)
    return fail ("stats", &err);
  printf ("stats%s\n", strstr (stats, "\"pids\"") ? " with pids" : "");
  free (stats);
  if (libcrun_container_events (ctx, ctx->id, true, 1000, print_event, NULL, &err) < 0)
    return fail ("events", &err);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "bad-config") == 0)
    {
      libcrun_error_t err = NULL;
      if (libcrun_container_load_from_memory ("{\"ociVersion\":\"1.0.0\",\"process\":{\"args\":7}}", &err))
        return 1;
      printf ("error: %s\n", err->msg);
      libcrun_error_release (&err);
      return 0;
    }
  if (argc != 5)
    {
      fprintf (stderr, "usage: %s run|lifecycle|cgroup ROOT BUNDLE ID | bad-config\n", argv[0]);
      return 2;
    }
  char config[4096];
  snprintf (config, sizeof config, "%s/config.json", argv[3]);
  libcrun_context_t ctx = { .state_root = argv[2], .bundle = argv[3], .id = argv[4] };
  const char *preserve = getenv ("EXAMPLE_PRESERVE_FDS");
  if (preserve)
    ctx.preserve_fds = atoi (preserve);
  if (strcmp (argv[1], "run") == 0)
    return do_run (&ctx, config);
  if (strcmp (argv[1], "lifecycle") == 0)
    return do_lifecycle (&ctx, config);
  if (strcmp (argv[1], "cgroup") == 0)
    return do_cgroup (&ctx, config);
  fprintf (stderr, "unknown mode `%s`\n", argv[1]);
  return 2;
}
