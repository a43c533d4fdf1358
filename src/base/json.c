/* json.c - taking the text out of a yajl generator (see json.h). */
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
