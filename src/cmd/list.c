/* list.c - `proctor list`: the containers under --root (runc list). */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../lifecycle/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

struct list_opts
{
  const char *format;
  bool quiet;
};

static int
handle (int key, const char *arg, void *data, pr_error **err)
{
  struct list_opts *o = data;
  if (key == 'f')
    o->format = arg;
  else
    o->quiet = true;
  return 0;
}

static int
cmp_ids (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

#define GS(g, s) yajl_gen_string (g, (const unsigned char *) (s), strlen (s))

static void
gen_entry (yajl_gen g, const struct pr_state *st, const char *status)
{
  yajl_gen_map_open (g);
  GS (g, "ociVersion");
  GS (g, "1.2.0");
  GS (g, "id");
  GS (g, st->id);
  GS (g, "pid");
  yajl_gen_integer (g, strcmp (status, "stopped") ? st->pid : 0);
  GS (g, "status");
  GS (g, status);
  GS (g, "bundle");
  GS (g, st->bundle ? st->bundle : "");
  GS (g, "rootfs");
  GS (g, st->rootfs ? st->rootfs : "");
  GS (g, "created");
  GS (g, st->created ? st->created : "");
  GS (g, "owner");
  GS (g, st->owner ? st->owner : "");
  yajl_gen_map_close (g);
}

static int
run_list (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  struct list_opts o = { .format = "table" };
  _cleanup_strv_ char **ids = NULL;
  int first = pr_cmd_parse (&pr_cmd_list, argc, argv, handle, &o, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_list, argc, first, 0, 0, &err) < 0)
    return pr_cmd_fail (err);
  bool json = strcmp (o.format, "json") == 0;
  if (!json && strcmp (o.format, "table") != 0)
    {
      pr_error_invalid (&err, "invalid format option `%s`: expected `table` or `json`", o.format);
      return pr_cmd_fail (err);
    }
  if (pr_state_list (g->root, &ids, &err) < 0)
    return pr_cmd_fail (err);
  /* Sorted by id, as runc's list is (readdir order is the filesystem's). */
  qsort (ids, pr_strv_len (ids), sizeof *ids, cmp_ids);
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_array_open (gen);
  /* Engines use 64-character ids: the column grows to the longest one so
   * the table stays aligned, as runc's tabwriter output does. */
  int idw = 20;
  for (size_t i = 0; ids[i]; i++)
    if ((int) strlen (ids[i]) > idw)
      idw = (int) strlen (ids[i]);
  if (!json && !o.quiet)
    printf ("%-*s %-8s %-10s %-40s %-30s %s\n", idw, "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
  for (size_t i = 0; ids[i]; i++)
    {
      _cleanup_state_ struct pr_state *st = NULL;
      pr_error *e = NULL;
      if (pr_state_load (g->root, ids[i], false, &st, &e) < 0)
        {
          pr_error_free (&e);
          continue;
        }
      const char *status = pr_state_status (st);
      if (json)
        gen_entry (gen, st, status);
      else if (o.quiet)
        printf ("%s\n", st->id);
      else
        printf ("%-*s %-8d %-10s %-40s %-30s %s\n", idw, st->id, strcmp (status, "stopped") ? st->pid : 0, status,
                st->bundle, st->created, *st->owner ? st->owner : "root");
    }
  yajl_gen_array_close (gen);
  _cleanup_free_ char *text = pr_json_gen_finish (gen);
  /* runc prints "null" for an empty list; engines accept both. */
  if (json)
    printf ("%s\n", text);
  return 0;
}

static const struct pr_opt opts[] = {
  { "format", required_argument, 'f', "table|json", "select one of: table or json (default: table)" },
  { "quiet", no_argument, 'q', NULL, "display only container IDs" },
  { NULL },
};

const struct pr_command pr_cmd_list = {
  "list", "[command options]", "list containers started by proctor with the given root", opts, run_list,
};
