/* passwd.c - the verifier's /etc/passwd under verifier.base "image" (see
 * passwd.h): a pure merge of two passwd(5) files. */
#define _GNU_SOURCE
#include "passwd.h"
#include "../base/util.h"

#include <string.h>

/* One passwd(5) line split at its six colons: field i is
 * [f[i], f[i] + n[i]).  Returns false when it has not exactly seven. */
struct pwline
{
  const char *f[7];
  size_t n[7];
};

static bool
split_line (const char *s, size_t len, struct pwline *out)
{
  size_t field = 0;
  out->f[0] = s;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] != ':')
        continue;
      if (field == 6)
        return false;
      out->n[field] = (size_t) (s + i - out->f[field]);
      out->f[++field] = s + i + 1;
    }
  if (field != 6)
    return false;
  out->n[6] = (size_t) (s + len - out->f[6]);
  /* An empty name is no user (and "+"/"-" NIS lines are not ours). */
  return out->n[0] > 0 && s[0] != '+' && s[0] != '-';
}

/* The image's first seven-field entry named like name, or false. */
static bool
find_user (const char *text, size_t len, const char *name, size_t name_len, struct pwline *out)
{
  for (size_t pos = 0; pos < len;)
    {
      const char *nl = memchr (text + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - text) : len;
      if (split_line (text + pos, end - pos, out) && out->n[0] == name_len && memcmp (out->f[0], name, name_len) == 0)
        return true;
      pos = end + 1;
    }
  return false;
}

static void
append (char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
  if (*len + n + 1 > *cap)
    {
      *cap = (*len + n + 1) * 2;
      *buf = xrealloc (*buf, *cap);
    }
  memcpy (*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = '\0';
}

char *
pr_passwd_merge_login (const char *live, size_t live_len, const char *image, size_t image_len, size_t *out_len)
{
  size_t len = 0, cap = live_len + 64;
  char *buf = xmalloc0 (cap);
  for (size_t pos = 0; pos < live_len;)
    {
      const char *nl = memchr (live + pos, '\n', live_len - pos);
      size_t end = nl ? (size_t) (nl - live) : live_len;
      const char *line = live + pos;
      size_t n = end - pos;
      struct pwline l, img;
      if (split_line (line, n, &l) && find_user (image, image_len, l.f[0], l.n[0], &img))
        {
          /* name:passwd:uid:gid:gecos: as live, then the image's home:shell */
          append (&buf, &len, &cap, line, (size_t) (l.f[5] - line));
          append (&buf, &len, &cap, img.f[5], img.n[5]);
          append (&buf, &len, &cap, ":", 1);
          append (&buf, &len, &cap, img.f[6], img.n[6]);
        }
      else
        append (&buf, &len, &cap, line, n);
      append (&buf, &len, &cap, "\n", 1);
      pos = end + 1;
    }
  *out_len = len;
  return buf;
}
