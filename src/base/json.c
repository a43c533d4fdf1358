/* json.c - taking the text out of a yajl generator, and generating parsed
 * trees back (as they were, or merged) (see json.h). */
#include "json.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The generated text plus `tail` (a NUL-terminated suffix), malloc'd, and
 * g freed. */
static char *
finish (yajl_gen g, const char *tail)
{
  const unsigned char *buf;
  size_t len;
  if (yajl_gen_get_buf (g, &buf, &len) != yajl_gen_status_ok)
    abort ();
  size_t tlen = strlen (tail);
  char *out = xmalloc (len + tlen + 1);
  /* An empty generator's buffer may be NULL; memcpy from NULL is
   * undefined even for 0 bytes (UBSan reports it). */
  if (len > 0)
    memcpy (out, buf, len);
  memcpy (out + len, tail, tlen + 1);
  yajl_gen_free (g);
  return out;
}

char *
pr_json_gen_finish (yajl_gen g)
{
  return finish (g, "");
}

char *
pr_json_gen_finish_line (yajl_gen g)
{
  return finish (g, "\n");
}

static void
gen_key (yajl_gen g, const char *k)
{
  yajl_gen_string (g, (const unsigned char *) k, strlen (k));
}

void
pr_json_gen_value (yajl_gen g, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          gen_key (g, v->u.object.keys[i]);
          pr_json_gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        pr_json_gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_STRING (v))
    yajl_gen_string (g, (const unsigned char *) v->u.string, strlen (v->u.string));
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    yajl_gen_bool (g, YAJL_IS_TRUE (v));
  else
    yajl_gen_null (g);
}

yajl_val
pr_json_object_get (yajl_val o, const char *key)
{
  for (size_t i = 0; o && YAJL_IS_OBJECT (o) && i < o->u.object.len; i++)
    if (strcmp (o->u.object.keys[i], key) == 0)
      return o->u.object.values[i];
  return NULL;
}

void
pr_json_gen_merged (yajl_gen g, yajl_val base, yajl_val over)
{
  if (over == NULL)
    {
      pr_json_gen_value (g, base);
      return;
    }
  if (base == NULL || !YAJL_IS_OBJECT (base) || !YAJL_IS_OBJECT (over))
    {
      pr_json_gen_value (g, over);
      return;
    }
  yajl_gen_map_open (g);
  for (size_t i = 0; i < base->u.object.len; i++)
    {
      gen_key (g, base->u.object.keys[i]);
      pr_json_gen_merged (g, base->u.object.values[i], pr_json_object_get (over, base->u.object.keys[i]));
    }
  for (size_t i = 0; i < over->u.object.len; i++)
    if (pr_json_object_get (base, over->u.object.keys[i]) == NULL)
      {
        gen_key (g, over->u.object.keys[i]);
        pr_json_gen_value (g, over->u.object.values[i]);
      }
  yajl_gen_map_close (g);
}
