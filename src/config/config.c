/* config.c - config.json into struct pr_config: the document, root,
 * mounts, hostname, hooks and annotations, load/free, plus the typed yajl
 * accessors of config-internal.h.  The "process" object is parsed in
 * config_process.c and the "linux" object in config_linux.c.
 * Source: OCI runtime-spec 1.2 config.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "config-internal.h"
#include "config.h"
#include "../base/util.h"

/* yajl frees its tree recursively; bounding the depth before parsing keeps a
 * hostile "[[[[..." document from exhausting the stack. */
#define PR_JSON_MAX_DEPTH 512

/* ---- typed accessors ------------------------------------------------- */

const char *
pr_jpath (char *buf, const char *parent, const char *key)
{
  if (snprintf (buf, PR_JPATH_MAX, "%s%s%s", parent, *parent ? "." : "", key) >= PR_JPATH_MAX)
    strcpy (buf + PR_JPATH_MAX - 4, "...");
  return buf;
}

const char *
pr_jpath_index (char *buf, const char *parent, size_t i)
{
  if (snprintf (buf, PR_JPATH_MAX, "%s[%zu]", parent, i) >= PR_JPATH_MAX)
    strcpy (buf + PR_JPATH_MAX - 4, "...");
  return buf;
}

yajl_val
pr_json_get (yajl_val obj, const char *key)
{
  if (!YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    {
      if (strcmp (obj->u.object.keys[i], key) != 0)
        continue;
      yajl_val v = obj->u.object.values[i];
      return YAJL_IS_NULL (v) ? NULL : v;
    }
  return NULL;
}

int
pr_json_missing (const char *parent, const char *key, pr_error **err)
{
  char p[PR_JPATH_MAX];
  return pr_error_set (err, 0, "%s: missing required field", pr_jpath (p, parent, key));
}

int
pr_json_expect_object (yajl_val v, const char *path, pr_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return pr_error_set (err, 0, "%s: expected an object", path);
  return 0;
}

int
pr_json_string (yajl_val v, const char *path, char **out, pr_error **err)
{
  if (!YAJL_IS_STRING (v))
    return pr_error_set (err, 0, "%s: expected a string", path);
  *out = xstrdup (v->u.string);
  return 0;
}

int
pr_json_unsigned (yajl_val v, const char *path, uint64_t max, uint64_t *out, pr_error **err)
{
  const char *what = max <= UINT32_MAX ? "an unsigned 32-bit integer" : "an unsigned 64-bit integer";
  if (!YAJL_IS_NUMBER (v) || !pr_str_is_digits (v->u.number.r, strlen (v->u.number.r)))
    return pr_error_set (err, 0, "%s: expected %s", path, what);
  errno = 0;
  unsigned long long n = strtoull (v->u.number.r, NULL, 10);
  if (errno == ERANGE || n > max)
    return pr_error_set (err, 0, "%s: expected %s, %s is out of range", path, what, v->u.number.r);
  *out = n;
  return 0;
}

int
pr_json_signed (yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out, pr_error **err)
{
  const char *r = YAJL_IS_NUMBER (v) ? v->u.number.r : NULL;
  if (r == NULL || !pr_str_is_digits (r[0] == '-' ? r + 1 : r, strlen (r[0] == '-' ? r + 1 : r)))
    return pr_error_set (err, 0, "%s: expected an integer", path);
  errno = 0;
  long long n = strtoll (r, NULL, 10);
  if (errno == ERANGE || n < min || n > max)
    return pr_error_set (err, 0, "%s: %s is out of range [%" PRId64 ", %" PRId64 "]", path, r, min, max);
  *out = n;
  return 0;
}

int
pr_json_strv (yajl_val v, const char *path, char ***out, pr_error **err)
{
  if (!YAJL_IS_ARRAY (v))
    return pr_error_set (err, 0, "%s: expected an array of strings", path);
  size_t n = v->u.array.len;
  for (size_t i = 0; i < n; i++)
    if (!YAJL_IS_STRING (v->u.array.values[i]))
      return pr_error_set (err, 0, "%s: expected an array of strings", path);
  char **r = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup (v->u.array.values[i]->u.string);
  *out = r;
  return 0;
}

int
pr_json_get_string (yajl_val obj, const char *parent, const char *key, char **out, pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  if (v == NULL)
    return 0;
  free (*out);
  *out = NULL;
  return pr_json_string (v, pr_jpath (p, parent, key), out, err);
}

int
pr_json_get_bool (yajl_val obj, const char *parent, const char *key, bool *out, bool *present, pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  if (present)
    *present = false;
  if (v == NULL)
    return 0;
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return pr_error_set (err, 0, "%s: expected a boolean", pr_jpath (p, parent, key));
  *out = YAJL_IS_TRUE (v);
  if (present)
    *present = true;
  return 0;
}

static int
get_unsigned (yajl_val obj, const char *parent, const char *key, uint64_t max, uint64_t *out, bool *present,
              pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  if (present)
    *present = false;
  if (v == NULL)
    return 0;
  if (pr_json_unsigned (v, pr_jpath (p, parent, key), max, out, err) < 0)
    return -1;
  if (present)
    *present = true;
  return 0;
}

int
pr_json_get_u32 (yajl_val obj, const char *parent, const char *key, uint32_t *out, bool *present, pr_error **err)
{
  uint64_t n;
  bool have = false;
  if (get_unsigned (obj, parent, key, UINT32_MAX, &n, &have, err) < 0)
    return -1;
  if (present)
    *present = have;
  if (have)
    *out = (uint32_t) n;
  return 0;
}

int
pr_json_get_u64 (yajl_val obj, const char *parent, const char *key, uint64_t *out, bool *present, pr_error **err)
{
  return get_unsigned (obj, parent, key, UINT64_MAX, out, present, err);
}

int
pr_json_get_i64 (yajl_val obj, const char *parent, const char *key, int64_t min, int64_t max, int64_t *out,
                 bool *present, pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  if (present)
    *present = false;
  if (v == NULL)
    return 0;
  if (pr_json_signed (v, pr_jpath (p, parent, key), min, max, out, err) < 0)
    return -1;
  if (present)
    *present = true;
  return 0;
}

int
pr_json_get_strv (yajl_val obj, const char *parent, const char *key, char ***out, pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  if (v == NULL)
    return 0;
  pr_strv_free (*out);
  *out = NULL;
  return pr_json_strv (v, pr_jpath (p, parent, key), out, err);
}

int
pr_json_get_object (yajl_val obj, const char *parent, const char *key, yajl_val *out, pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  *out = NULL;
  if (v == NULL)
    return 0;
  if (!YAJL_IS_OBJECT (v))
    return pr_error_set (err, 0, "%s: expected an object", pr_jpath (p, parent, key));
  *out = v;
  return 0;
}

int
pr_json_get_array (yajl_val obj, const char *parent, const char *key, yajl_val *out, pr_error **err)
{
  char p[PR_JPATH_MAX];
  yajl_val v = pr_json_get (obj, key);
  *out = NULL;
  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return pr_error_set (err, 0, "%s: expected an array", pr_jpath (p, parent, key));
  *out = v;
  return 0;
}

int
pr_json_get_idmaps (yajl_val obj, const char *parent, const char *key, struct pr_idmap **out, size_t *n,
                    pr_error **err)
{
  static const char *const fields[] = { "containerID", "hostID", "size" };
  char path[PR_JPATH_MAX], elem[PR_JPATH_MAX];
  yajl_val arr;

  if (pr_json_get_array (obj, parent, key, &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  pr_jpath (path, parent, key);
  size_t len = arr->u.array.len;
  _cleanup_free_ struct pr_idmap *maps = xmalloc0 (len * sizeof *maps);
  for (size_t i = 0; i < len; i++)
    {
      yajl_val m = arr->u.array.values[i];
      pr_jpath_index (elem, path, i);
      if (pr_json_expect_object (m, elem, err) < 0)
        return -1;
      uint32_t *dst[] = { &maps[i].container_id, &maps[i].host_id, &maps[i].size };
      for (size_t f = 0; f < PR_ARRAY_SIZE (fields); f++)
        {
          bool have;
          if (pr_json_get_u32 (m, elem, fields[f], dst[f], &have, err) < 0)
            return -1;
          if (!have)
            return pr_json_missing (elem, fields[f], err);
        }
      /* What the kernel's uid_map/gid_map write would refuse with a bare
       * EINVAL (user_namespaces(7)): an empty range, one past 2^32. */
      if (maps[i].size == 0)
        return pr_error_invalid (err, "%s.size: must be at least 1", elem);
      if ((uint64_t) maps[i].container_id + maps[i].size > UINT64_C (1) << 32
          || (uint64_t) maps[i].host_id + maps[i].size > UINT64_C (1) << 32)
        return pr_error_invalid (err, "%s: the range ends past 4294967295", elem);
    }
  /* user_namespaces(7): at most 340 lines since Linux 4.15. */
  if (len > 340)
    return pr_error_invalid (err, "%s: %zu mappings, the kernel takes at most 340", path, len);
  for (size_t i = 0; i < len; i++)
    for (size_t j = i + 1; j < len; j++)
      {
        const struct pr_idmap *a = &maps[i], *b = &maps[j];
        bool inside = (uint64_t) a->container_id < (uint64_t) b->container_id + b->size
                      && (uint64_t) b->container_id < (uint64_t) a->container_id + a->size;
        bool outside = (uint64_t) a->host_id < (uint64_t) b->host_id + b->size
                       && (uint64_t) b->host_id < (uint64_t) a->host_id + a->size;
        if (inside || outside)
          return pr_error_invalid (err, "%s[%zu] and [%zu]: the ranges overlap", path, i, j);
      }
  *out = steal_pointer (&maps);
  *n = len;
  return 0;
}

int
pr_json_get_keyvals (yajl_val obj, const char *parent, const char *key, struct pr_keyval **out, size_t *n,
                     pr_error **err)
{
  char path[PR_JPATH_MAX];
  yajl_val o;

  if (pr_json_get_object (obj, parent, key, &o, err) < 0)
    return -1;
  if (o == NULL)
    return 0;
  pr_jpath (path, parent, key);
  size_t len = o->u.object.len;
  for (size_t i = 0; i < len; i++)
    if (!YAJL_IS_STRING (o->u.object.values[i]))
      return pr_error_set (err, 0, "%s.%s: expected a string", path, o->u.object.keys[i]);
  struct pr_keyval *kv = xmalloc0 (len * sizeof *kv);
  for (size_t i = 0; i < len; i++)
    {
      kv[i].key = xstrdup (o->u.object.keys[i]);
      kv[i].value = xstrdup (o->u.object.values[i]->u.string);
    }
  *out = kv;
  *n = len;
  return 0;
}

void
pr_keyvals_free (struct pr_keyval *kv, size_t n)
{
  for (size_t i = 0; kv && i < n; i++)
    {
      free (kv[i].key);
      free (kv[i].value);
    }
  free (kv);
}

/* ---- document -------------------------------------------------------- */

long
pr_json_nul_escape (const char *data, size_t len)
{
  bool in_string = false;
  for (size_t i = 0; i < len; i++)
    {
      if (!in_string)
        {
          in_string = data[i] == '"';
          continue;
        }
      if (data[i] == '"')
        in_string = false;
      else if (data[i] == '\\')
        {
          if (i + 5 < len && data[i + 1] == 'u' && memcmp (data + i + 2, "0000", 4) == 0)
            return (long) i;
          i++;
        }
    }
  return -1;
}

/* Rejects documents nested deeper than PR_JSON_MAX_DEPTH and embedded NUL
 * bytes (yajl_tree_parse takes a C string, so a NUL would silently end the
 * document early).  A cheap lexical scan: brackets inside strings and
 * inside comments (yajl_tree_parse accepts C and C++ comments) do not
 * count, so a comment full of ']' cannot hide real nesting. */
static int
check_json_shape (const char *data, size_t len, const char *what, pr_error **err)
{
  int depth = 0;
  const char *nul = memchr (data, '\0', len);
  if (nul)
    return pr_error_set (err, 0, "invalid %s: NUL byte at offset %zu", what, (size_t) (nul - data));
  long esc = pr_json_nul_escape (data, len);
  if (esc >= 0)
    return pr_error_set (err, 0, "invalid %s: \\u0000 (NUL) in a string at offset %ld", what, esc);
  for (size_t i = 0; i < len; i++)
    {
      char c = data[i];
      if (c == '"')
        {
          for (i++; i < len && data[i] != '"'; i++)
            if (data[i] == '\\')
              i++;
        }
      else if (c == '/' && i + 1 < len && data[i + 1] == '*')
        {
          const char *end = memmem (data + i + 2, len - i - 2, "*/", 2);
          i = end ? (size_t) (end - data) + 1 : len;
        }
      else if (c == '/' && i + 1 < len && data[i + 1] == '/')
        {
          const char *end = memchr (data + i, '\n', len - i);
          i = end ? (size_t) (end - data) : len;
        }
      else if (c == '[' || c == '{')
        {
          if (++depth > PR_JSON_MAX_DEPTH)
            return pr_error_set (err, 0, "invalid %s: nested deeper than %d levels", what, PR_JSON_MAX_DEPTH);
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return 0;
}

/* Folds whitespace runs (newlines included) of s into single spaces, in
 * place, and trims both ends. */
static void
fold_space (char *s)
{
  char *w = s;
  bool space = false;
  for (char *r = s; *r; r++)
    {
      if (*r == '\n' || *r == '\r' || *r == '\t' || *r == ' ')
        {
          space = true;
          continue;
        }
      if (space && w != s)
        *w++ = ' ';
      space = false;
      /* the excerpt is raw input: keep the log line printable */
      *w++ = ((unsigned char) *r < 0x20 || *r == 0x7f) ? '?' : *r;
    }
  *w = '\0';
}

/* yajl's verbose error spans several lines: the message, an excerpt of the
 * text before the error, and a caret line.  Errors here are one line, so
 * this returns "MESSAGE near `EXCERPT`" (malloc'd). */
static char *
yajl_error_one_line (char *errbuf)
{
  char *excerpt = strchr (errbuf, '\n');
  if (excerpt)
    *excerpt++ = '\0';
  fold_space (errbuf);
  if (*errbuf == '\0')
    return xstrdup ("parse error");
  char *caret = excerpt ? strstr (excerpt, "(right here)") : NULL;
  if (caret)
    *caret = '\0';
  if (excerpt)
    fold_space (excerpt);
  if (excerpt == NULL || *excerpt == '\0')
    return xstrdup (errbuf);
  return xasprintf ("%s near `%s`", errbuf, excerpt);
}

int
pr_config_parse_tree (const char *data, size_t len, const char *what, yajl_val *out, pr_error **err)
{
  char errbuf[1024] = "";

  if (check_json_shape (data, len, what, err) < 0)
    return -1;
  _cleanup_free_ char *text = xmalloc (len + 1);
  memcpy (text, data, len);
  text[len] = '\0';
  yajl_val tree = yajl_tree_parse (text, errbuf, sizeof errbuf);
  if (tree == NULL)
    {
      _cleanup_free_ char *msg = yajl_error_one_line (errbuf);
      return pr_error_set (err, 0, "invalid %s: %s", what, msg);
    }
  if (!YAJL_IS_OBJECT (tree))
    {
      yajl_tree_free (tree);
      return pr_error_set (err, 0, "invalid %s: expected a JSON object at the top level", what);
    }
  *out = tree;
  return 0;
}

/* ---- root, mounts, hooks --------------------------------------------- */

static int
parse_root (yajl_val doc, struct pr_config *cfg, pr_error **err)
{
  yajl_val root;

  if (pr_json_get_object (doc, "", "root", &root, err) < 0)
    return -1;
  if (root == NULL)
    return 0;
  if (pr_json_get_string (root, "root", "path", &cfg->root_path, err) < 0
      || pr_json_get_bool (root, "root", "readonly", &cfg->root_readonly, NULL, err) < 0)
    return -1;
  if (cfg->root_path == NULL)
    return pr_json_missing ("root", "path", err);
  if (cfg->root_path[0] == '\0')
    return pr_error_set (err, 0, "root.path: must not be empty");
  return 0;
}

static int
parse_mounts (yajl_val doc, struct pr_config *cfg, pr_error **err)
{
  char elem[PR_JPATH_MAX];
  yajl_val arr;

  if (pr_json_get_array (doc, "", "mounts", &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  cfg->mounts = xmalloc0 (arr->u.array.len * sizeof *cfg->mounts);
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val o = arr->u.array.values[i];
      struct pr_mount *m = &cfg->mounts[cfg->n_mounts++];

      pr_jpath_index (elem, "mounts", i);
      if (pr_json_expect_object (o, elem, err) < 0
          || pr_json_get_string (o, elem, "destination", &m->destination, err) < 0
          || pr_json_get_string (o, elem, "source", &m->source, err) < 0
          || pr_json_get_string (o, elem, "type", &m->type, err) < 0
          || pr_json_get_strv (o, elem, "options", &m->options, err) < 0
          || pr_json_get_idmaps (o, elem, "uidMappings", &m->uid_mappings, &m->n_uid_mappings, err) < 0
          || pr_json_get_idmaps (o, elem, "gidMappings", &m->gid_mappings, &m->n_gid_mappings, err) < 0)
        return -1;
      if (m->options == NULL)
        m->options = xmalloc0 (sizeof (char *));
      if (m->destination == NULL)
        return pr_json_missing (elem, "destination", err);
      if (m->destination[0] != '/')
        return pr_error_set (err, 0, "%s.destination: \"%s\" is not an absolute path", elem, m->destination);
    }
  return 0;
}

static const char *const hook_keys[PR_HOOK__MAX] = {
  [PR_HOOK_PRESTART] = "prestart",
  [PR_HOOK_CREATE_RUNTIME] = "createRuntime",
  [PR_HOOK_CREATE_CONTAINER] = "createContainer",
  [PR_HOOK_START_CONTAINER] = "startContainer",
  [PR_HOOK_POSTSTART] = "poststart",
  [PR_HOOK_POSTSTOP] = "poststop",
};

static int
parse_hook (yajl_val o, const char *elem, struct pr_hook *h, pr_error **err)
{
  int64_t timeout = 0;

  if (pr_json_expect_object (o, elem, err) < 0 || pr_json_get_string (o, elem, "path", &h->path, err) < 0
      || pr_json_get_strv (o, elem, "args", &h->args, err) < 0
      || pr_json_get_strv (o, elem, "env", &h->env, err) < 0
      || pr_json_get_i64 (o, elem, "timeout", INT64_MIN, INT64_MAX, &timeout, &h->has_timeout, err) < 0)
    return -1;
  if (h->path == NULL)
    return pr_json_missing (elem, "path", err);
  /* runtime-spec config.md#posix-platform-hooks: path MUST be absolute;
   * timeout MUST be greater than zero. */
  if (h->path[0] != '/')
    return pr_error_set (err, 0, "%s.path: \"%s\" is not an absolute path", elem, h->path);
  if (h->has_timeout && (timeout <= 0 || timeout > INT_MAX))
    return pr_error_set (err, 0, "%s.timeout: must be greater than zero (seconds), got %" PRId64, elem, timeout);
  h->timeout = (int) timeout;
  return 0;
}

static int
parse_hooks (yajl_val doc, struct pr_config *cfg, pr_error **err)
{
  char path[PR_JPATH_MAX], elem[PR_JPATH_MAX];
  yajl_val hooks;

  if (pr_json_get_object (doc, "", "hooks", &hooks, err) < 0)
    return -1;
  if (hooks == NULL)
    return 0;
  for (int k = 0; k < PR_HOOK__MAX; k++)
    {
      yajl_val arr;
      struct pr_hook_list *l = &cfg->hooks[k];

      if (pr_json_get_array (hooks, "hooks", hook_keys[k], &arr, err) < 0)
        return -1;
      if (arr == NULL)
        continue;
      pr_jpath (path, "hooks", hook_keys[k]);
      l->v = xmalloc0 (arr->u.array.len * sizeof *l->v);
      for (size_t i = 0; i < arr->u.array.len; i++)
        if (parse_hook (arr->u.array.values[i], pr_jpath_index (elem, path, i), &l->v[l->n++], err) < 0)
          return -1;
    }
  return 0;
}

/* ---- whole config ---------------------------------------------------- */

static int
parse_config (yajl_val doc, struct pr_config *cfg, pr_error **err)
{
  yajl_val proc, linux_obj;

  if (pr_json_get_string (doc, "", "ociVersion", &cfg->oci_version, err) < 0)
    return -1;
  if (cfg->oci_version == NULL)
    return pr_json_missing ("", "ociVersion", err);
  if (parse_root (doc, cfg, err) < 0 || parse_mounts (doc, cfg, err) < 0)
    return -1;
  proc = pr_json_get (doc, "process");
  if (proc)
    {
      cfg->has_process = true;
      if (pr_config_parse_process (proc, "process", &cfg->process, err) < 0)
        return -1;
    }
  if (pr_json_get_string (doc, "", "hostname", &cfg->hostname, err) < 0
      || pr_json_get_string (doc, "", "domainname", &cfg->domainname, err) < 0 || parse_hooks (doc, cfg, err) < 0
      || pr_json_get_keyvals (doc, "", "annotations", &cfg->annotations, &cfg->n_annotations, err) < 0
      || pr_json_get_object (doc, "", "linux", &linux_obj, err) < 0)
    return -1;
  if (linux_obj && pr_config_parse_linux (linux_obj, &cfg->linux, err) < 0)
    return -1;
  return 0;
}

int
pr_config_parse (const char *data, size_t len, struct pr_config **out, pr_error **err)
{
  yajl_val tree;

  if (pr_config_parse_tree (data, len, "config.json", &tree, err) < 0)
    return -1;
  struct pr_config *cfg = xmalloc0 (sizeof *cfg);
  cfg->tree = tree;
  if (parse_config (tree, cfg, err) < 0)
    {
      pr_config_free (cfg);
      return -1;
    }
  *out = cfg;
  return 0;
}

int
pr_config_load (const char *path, struct pr_config **out, pr_error **err)
{
  _cleanup_free_ char *data = NULL;
  size_t len;

  if (pr_read_file (path, &data, &len, err) < 0)
    return -1;
  if (pr_config_parse (data, len, out, err) < 0)
    return pr_error_wrap (err, "%s", path);
  return 0;
}

void
pr_mount_free_contents (struct pr_mount *m)
{
  free (m->destination);
  free (m->source);
  free (m->type);
  pr_strv_free (m->options);
  free (m->uid_mappings);
  free (m->gid_mappings);
}

void
pr_config_free (struct pr_config *cfg)
{
  if (cfg == NULL)
    return;
  free (cfg->oci_version);
  free (cfg->root_path);
  for (size_t i = 0; i < cfg->n_mounts; i++)
    pr_mount_free_contents (&cfg->mounts[i]);
  free (cfg->mounts);
  pr_process_free_contents (&cfg->process);
  free (cfg->hostname);
  free (cfg->domainname);
  for (int k = 0; k < PR_HOOK__MAX; k++)
    {
      for (size_t i = 0; i < cfg->hooks[k].n; i++)
        {
          free (cfg->hooks[k].v[i].path);
          pr_strv_free (cfg->hooks[k].v[i].args);
          pr_strv_free (cfg->hooks[k].v[i].env);
        }
      free (cfg->hooks[k].v);
    }
  pr_keyvals_free (cfg->annotations, cfg->n_annotations);
  pr_linux_free_contents (&cfg->linux);
  if (cfg->tree)
    yajl_tree_free (cfg->tree);
  free (cfg);
}

const char *
pr_config_annotation (const struct pr_config *cfg, const char *key)
{
  for (size_t i = 0; cfg && i < cfg->n_annotations; i++)
    if (strcmp (cfg->annotations[i].key, key) == 0)
      return cfg->annotations[i].value;
  return NULL;
}
