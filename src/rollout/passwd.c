/* passwd.c - the verifier's /etc/passwd under verifier.base "image" (see
 * passwd.h): a pure merge of two passwd(5) files.
 *
 * A line is read as glibc's files backend reads it, not as passwd(5)
 * writes it, since glibc is what su and runuser ask: the line ends at its
 * first NUL, leading blanks are skipped, a line that is then empty or
 * starts with '#' is no entry, the name runs to the first ':', and the
 * shell is everything after the sixth ':' (colons included).  An agent's
 * " root:...", "root:...:/tmp/ev:il" or "root:...\0..." is root to glibc
 * (an attacker's trial of 2026-12-04), so it is root here too. */
#define _GNU_SOURCE
#include "passwd.h"
#include "../base/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct span
{
  const char *p;
  size_t n;
};

/* One entry as glibc sees it: f[0] name ... f[6] shell; nf fields found
 * (the seventh takes the rest of the line). */
struct pwline
{
  struct span f[7];
  size_t nf;
};

/* Parses the line [s, s + len) glibc's way; false when it is no entry
 * (empty, a comment, no ':' after the name). */
static bool
parse_line (const char *s, size_t len, struct pwline *out)
{
  const char *nul = memchr (s, '\0', len);
  if (nul)
    len = (size_t) (nul - s);
  while (len > 0 && isspace ((unsigned char) *s))
    s++, len--;
  if (len == 0 || *s == '#')
    return false;
  out->nf = 0;
  const char *start = s, *end = s + len;
  for (const char *q = s; q <= end; q++)
    {
      if (q < end && (*q != ':' || out->nf == 6))
        continue;
      out->f[out->nf++] = (struct span){ start, (size_t) (q - start) };
      start = q + 1;
    }
  return out->nf >= 2;
}

static bool
span_eq (struct span a, struct span b)
{
  return a.n == b.n && memcmp (a.p, b.p, a.n) == 0;
}

/* The uid field as a number, or -1 when it is not one. */
static long long
span_uid (struct span u)
{
  if (u.n == 0 || u.n > 10 || !pr_str_is_digits (u.p, u.n))
    return -1;
  char buf[16];
  memcpy (buf, u.p, u.n);
  buf[u.n] = '\0';
  return strtoll (buf, NULL, 10);
}

/* The image's first full (seven-field) entry named name, else, when uid
 * >= 0, its first full entry with that uid. */
static bool
find_user (const char *text, size_t len, struct span name, long long uid, struct pwline *out)
{
  for (int pass = 0; pass < 2; pass++)
    for (size_t pos = 0; pos < len;)
      {
        const char *nl = memchr (text + pos, '\n', len - pos);
        size_t end = nl ? (size_t) (nl - text) : len;
        if (parse_line (text + pos, end - pos, out) && out->nf == 7)
          {
            if (pass == 0 && name.n > 0 && span_eq (out->f[0], name))
              return true;
            if (pass == 1 && uid >= 0 && span_uid (out->f[2]) == uid)
              return true;
          }
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

/* Appends the entry l with the image entry img's home and shell, in
 * passwd(5)'s form: live name, password, uid, gid and GECOS (the image's
 * where the live line lacks them). */
static void
append_merged (char **buf, size_t *len, size_t *cap, const struct pwline *l, const struct pwline *img)
{
  for (size_t i = 0; i < 7; i++)
    {
      struct span v = i < 5 && i < l->nf ? l->f[i] : img->f[i];
      if (i == 0)
        v = l->f[0];
      append (buf, len, cap, v.p, v.n);
      append (buf, len, cap, i < 6 ? ":" : "\n", 1);
    }
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
      struct pwline l = { .nf = 0 }, img;
      struct span name;
      /* An image user by name; else a user of the agent's sharing an
       * image user's uid (what getpwuid finds first may be it). */
      bool entry = parse_line (live + pos, end - pos, &l);
      /* compat's "+name" and "-name" lines name the same user. */
      name = l.f[0];
      if (entry && name.n > 0 && (name.p[0] == '+' || name.p[0] == '-'))
        name = (struct span){ name.p + 1, name.n - 1 };
      if (entry && find_user (image, image_len, name, l.nf > 2 ? span_uid (l.f[2]) : -1, &img))
        append_merged (&buf, &len, &cap, &l, &img);
      else
        {
          append (&buf, &len, &cap, live + pos, end - pos);
          append (&buf, &len, &cap, "\n", 1);
        }
      pos = end + 1;
    }
  *out_len = len;
  return buf;
}
