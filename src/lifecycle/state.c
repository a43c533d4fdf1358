/* state.c - the per-container state directory and state.json (see state.h). */
#define _GNU_SOURCE
#include "state.h"
#include "../base/json.h"
#include "../base/proc.h"
#include "../base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

int
pr_state_check_id (const char *id, pr_error **err)
{
  size_t n = id ? strlen (id) : 0;
  if (n == 0 || n > 1024 || strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return pr_error_invalid (err, "invalid container id `%s`", id ? id : "");
  for (size_t i = 0; i < n; i++)
    if (!isalnum ((unsigned char) id[i]) && strchr ("_+.-", id[i]) == NULL)
      return pr_error_invalid (err, "invalid container id `%s`", id);
  return 0;
}

int
pr_state_dir_create (const char *root, const char *id, int *dirfd_out, pr_error **err)
{
  if (pr_mkdir_p (root, 0700) < 0)
    return pr_error_set (err, errno, "create state root `%s`", root);
  _cleanup_free_ char *dir = xasprintf ("%s/%s", root, id);
  if (mkdir (dir, 0711) < 0)
    {
      if (errno == EEXIST)
        return pr_error_set (err, 0, "container with id exists: %s", id);
      return pr_error_set (err, errno, "create state directory `%s`", dir);
    }
  int fd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      rmdir (dir);
      return pr_error_set (err, e, "open state directory `%s`", dir);
    }
  flock (fd, LOCK_EX);
  *dirfd_out = fd;
  return 0;
}

int
pr_state_dir_remove (const char *root, const char *id, pr_error **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s", root, id);
  DIR *d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT ? 0 : pr_error_set (err, errno, "open state directory `%s`", dir);
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      unlinkat (dirfd (d), de->d_name, 0);
    }
  closedir (d);
  if (rmdir (dir) < 0 && errno != ENOENT)
    return pr_error_set (err, errno, "remove state directory `%s`", dir);
  return 0;
}

bool
pr_state_pid_alive (const struct pr_state *st)
{
  if (st->pid <= 0)
    return false;
  unsigned long long t = pr_proc_start_time (st->pid);
  return t != 0 && t == st->start_time;
}

const char *
pr_state_status (const struct pr_state *st)
{
  if (!pr_state_pid_alive (st))
    return "stopped";
  if (st->state_dirfd >= 0 && faccessat (st->state_dirfd, "exec.fifo", F_OK, 0) == 0)
    return "created";
  bool frozen = false;
  _cleanup_cgroup_manager_ struct pr_cgroup_manager cg;
  pr_state_cgroup (st, &cg);
  if (cg.ops->is_frozen (&cg, &frozen) == 0 && frozen)
    return "paused";
  return "running";
}

void
pr_state_cgroup (const struct pr_state *st, struct pr_cgroup_manager *out)
{
  pr_cgroup_manager_open (st->cgroup_path, st->systemd_cgroup, out);
}

#define GEN_STR(g, s) yajl_gen_string (g, (const unsigned char *) (s), strlen (s))

static void
gen_kv (yajl_gen g, const char *k, const char *v)
{
  GEN_STR (g, k);
  GEN_STR (g, v ? v : "");
}

static void
gen_annotations (yajl_gen g, char **ann)
{
  GEN_STR (g, "annotations");
  yajl_gen_map_open (g);
  for (size_t i = 0; ann && ann[i] && ann[i + 1]; i += 2)
    gen_kv (g, ann[i], ann[i + 1]);
  yajl_gen_map_close (g);
}

char *
pr_state_to_json (const struct pr_state *st, const char *status)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_map_open (g);
  gen_kv (g, "ociVersion", "1.2.0");
  gen_kv (g, "id", st->id);
  gen_kv (g, "status", status);
  GEN_STR (g, "pid");
  yajl_gen_integer (g, strcmp (status, "stopped") == 0 ? 0 : st->pid);
  gen_kv (g, "bundle", st->bundle);
  gen_kv (g, "rootfs", st->rootfs);
  gen_kv (g, "created", st->created);
  gen_kv (g, "owner", st->owner);
  gen_annotations (g, st->annotations);
  yajl_gen_map_close (g);
  return pr_json_gen_finish (g);
}

static char *
state_file_json (const struct pr_state *st)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  gen_kv (g, "id", st->id);
  GEN_STR (g, "pid");
  yajl_gen_integer (g, st->pid);
  GEN_STR (g, "start_time");
  yajl_gen_integer (g, (long long) st->start_time);
  gen_kv (g, "bundle", st->bundle);
  gen_kv (g, "rootfs", st->rootfs);
  gen_kv (g, "created", st->created);
  gen_kv (g, "owner", st->owner);
  gen_kv (g, "cgroup_path", st->cgroup_path);
  GEN_STR (g, "systemd_cgroup");
  yajl_gen_bool (g, st->systemd_cgroup);
  gen_annotations (g, st->annotations);
  yajl_gen_map_close (g);
  return pr_json_gen_finish (g);
}

int
pr_state_save (const struct pr_state *st, pr_error **err)
{
  _cleanup_free_ char *json = state_file_json (st);
  if (pr_write_file_at (st->state_dirfd, "state.json.tmp", json, strlen (json), 0600, err) < 0)
    return -1;
  if (renameat (st->state_dirfd, "state.json.tmp", st->state_dirfd, "state.json") < 0)
    return pr_error_set (err, errno, "rename state.json");
  return 0;
}

static const char *
tree_str (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_string);
  return v ? YAJL_GET_STRING (v) : NULL;
}

static long long
tree_int (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_number);
  return v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : 0;
}

static int
parse_state (const char *json, struct pr_state *st, pr_error **err)
{
  char ebuf[256];
  yajl_val root = yajl_tree_parse (json, ebuf, sizeof ebuf);
  if (root == NULL)
    return pr_error_invalid (err, "corrupt state.json: %s", ebuf);
  st->pid = tree_int (root, "pid");
  st->start_time = tree_int (root, "start_time");
  st->bundle = xstrdup (tree_str (root, "bundle"));
  st->rootfs = xstrdup (tree_str (root, "rootfs"));
  st->created = xstrdup (tree_str (root, "created"));
  st->owner = xstrdup (tree_str (root, "owner"));
  const char *cg = tree_str (root, "cgroup_path");
  st->cgroup_path = cg && *cg ? xstrdup (cg) : NULL; /* "" = no cgroup (--cgroup-manager disabled) */
  const char *sp[] = { "systemd_cgroup", NULL };
  st->systemd_cgroup = YAJL_IS_TRUE (yajl_tree_get (root, sp, yajl_t_any));
  const char *ap[] = { "annotations", NULL };
  yajl_val ann = yajl_tree_get (root, ap, yajl_t_object);
  if (ann)
    {
      size_t n = YAJL_GET_OBJECT (ann)->len;
      st->annotations = xmalloc0 ((2 * n + 1) * sizeof (char *));
      for (size_t i = 0; i < n; i++)
        {
          yajl_val v = YAJL_GET_OBJECT (ann)->values[i];
          st->annotations[2 * i] = xstrdup (YAJL_GET_OBJECT (ann)->keys[i]);
          st->annotations[2 * i + 1] = xstrdup (YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : "");
        }
    }
  yajl_tree_free (root);
  return 0;
}

/* The error for a container with no state: errnum ENOENT, so that callers
 * decide on it (a forced delete succeeds), with the message runc gives and
 * engines look for ("does not exist"), without ": No such file or
 * directory" appended. */
static int
no_such_container (pr_error **err, const char *id)
{
  pr_error_set (err, 0, "container `%s` does not exist", id);
  if (err && *err)
    (*err)->errnum = ENOENT;
  return -1;
}

int
pr_state_load (const char *root, const char *id, bool exclusive, struct pr_state **out, pr_error **err)
{
  if (pr_state_check_id (id, err) < 0)
    return -1;
  _cleanup_free_ char *dir = xasprintf ("%s/%s", root, id);
  int fd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return no_such_container (err, id);
      return pr_error_set (err, errno, "open state directory `%s`", dir);
    }
  struct pr_state *st = xmalloc0 (sizeof *st);
  st->state_dirfd = fd;
  st->id = xstrdup (id);
  flock (fd, exclusive ? LOCK_EX : LOCK_SH);
  _cleanup_free_ char *json = NULL;
  if (pr_read_file_at (fd, "state.json", &json, NULL, err) < 0 || parse_state (json, st, err) < 0)
    {
      pr_state_free (st);
      if (err && *err && (*err)->errnum == ENOENT)
        {
          pr_error_free (err);
          return no_such_container (err, id);
        }
      return -1;
    }
  *out = st;
  return 0;
}

int
pr_state_list (const char *root, char ***ids_out, pr_error **err)
{
  char **ids = xmalloc0 (sizeof (char *));
  DIR *d = opendir (root);
  if (d == NULL)
    {
      if (errno == ENOENT)
        {
          *ids_out = ids;
          return 0;
        }
      free (ids);
      return pr_error_set (err, errno, "open state root `%s`", root);
    }
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (de->d_name[0] == '.')
        continue;
      if (faccessat (dirfd (d), de->d_name, F_OK, 0) == 0)
        {
          _cleanup_free_ char *sf = xasprintf ("%s/state.json", de->d_name);
          if (faccessat (dirfd (d), sf, F_OK, 0) == 0)
            ids = pr_strv_append (ids, de->d_name);
        }
    }
  closedir (d);
  *ids_out = ids;
  return 0;
}

int
pr_state_write_pid_file (const char *path, pid_t pid, pr_error **err)
{
  if (path == NULL)
    return 0;
  _cleanup_free_ char *tmp = xasprintf ("%s.tmp", path);
  _cleanup_free_ char *text = xasprintf ("%d", pid);
  if (pr_write_file_at (AT_FDCWD, tmp, text, strlen (text), 0644, err) < 0)
    return -1;
  if (rename (tmp, path) < 0)
    return pr_error_set (err, errno, "rename pid file `%s`", path);
  return 0;
}

void
pr_state_free (struct pr_state *st)
{
  if (st == NULL)
    return;
  if (st->state_dirfd >= 0)
    close (st->state_dirfd);
  free (st->id);
  free (st->bundle);
  free (st->rootfs);
  free (st->created);
  free (st->owner);
  free (st->cgroup_path);
  pr_strv_free (st->annotations);
  free (st);
}
