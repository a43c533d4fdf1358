/* error.c - construction and chaining of pr_error values (see error.h). */
#define _GNU_SOURCE
#include "error.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
error_vset (pr_error **err, int errnum, bool append_reason, const char *fmt, va_list ap)
{
  char *text = NULL;

  if (err == NULL || *err != NULL)
    return -1;
  if (vasprintf (&text, fmt, ap) < 0)
    abort ();
  pr_error *e = xmalloc0 (sizeof *e);
  e->errnum = errnum;
  if (errnum != 0 && append_reason)
    {
      /* Lower-case, as runc's (Go's) errno strings are: engines match the
       * text case-sensitively (docker 20.10 maps "no such file or directory"
       * to exit 127, containerd's shim "no such process" to not-found). */
      e->msg = xasprintf ("%s: %s", text, strerror (errnum));
      char *reason = e->msg + strlen (text) + 2;
      if (*reason >= 'A' && *reason <= 'Z')
        *reason = (char) (*reason - 'A' + 'a');
      free (text);
    }
  else
    e->msg = text;
  *err = e;
  return -1;
}

int
pr_error_set (pr_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int r = error_vset (err, errnum, true, fmt, ap);
  va_end (ap);
  return r;
}

int
pr_error_invalid (pr_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int r = error_vset (err, EINVAL, false, fmt, ap);
  va_end (ap);
  return r;
}

int
pr_error_wrap (pr_error **err, const char *fmt, ...)
{
  va_list ap;
  char *ctx = NULL;

  if (err == NULL || *err == NULL)
    return -1;
  va_start (ap, fmt);
  if (vasprintf (&ctx, fmt, ap) < 0)
    abort ();
  va_end (ap);
  char *m = xasprintf ("%s: %s", ctx, (*err)->msg);
  free (ctx);
  free ((*err)->msg);
  (*err)->msg = m;
  return -1;
}

void
pr_error_free (pr_error **err)
{
  if (err == NULL || *err == NULL)
    return;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
}
