/* declog.c - the egress decision log: one JSON object per line, appended
 * with a single write(2) so lines from concurrent writers never interleave
 * (O_APPEND).  Format: egress.h. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "egress-internal.h"
#include "../../base/json.h"
#include "../../base/util.h"

static void
gen_str (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

static void
gen_kv (yajl_gen g, const char *k, const char *v)
{
  gen_str (g, k);
  gen_str (g, v ? v : "");
}

static void
gen_num (yajl_gen g, const char *k, uint64_t v)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%llu", (unsigned long long) v);
  gen_str (g, k);
  yajl_gen_number (g, buf, n);
}

char *
pr_declog_format (const struct pr_decision *d, time_t when)
{
  struct tm tm;
  char ts[32];

  gmtime_r (&when, &tm);
  strftime (ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);

  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  yajl_gen_map_open (g);
  gen_kv (g, "time", ts);
  gen_kv (g, "phase", d->phase);
  gen_kv (g, "method", d->method);
  gen_kv (g, "host", d->host);
  gen_num (g, "port", d->port);
  gen_kv (g, "decision", d->allow ? "allow" : "deny");
  gen_kv (g, "reason", d->reason);
  gen_num (g, "bytes_up", d->bytes_up);
  gen_num (g, "bytes_down", d->bytes_down);
  yajl_gen_map_close (g);
  return pr_json_gen_finish_line (g);
}

void
pr_declog_write (int fd, const struct pr_decision *d)
{
  if (fd < 0)
    return;
  _cleanup_free_ char *line = pr_declog_format (d, time (NULL));
  /* One write: O_APPEND makes it atomic with respect to other appenders. */
  if (write (fd, line, strlen (line)) < 0)
    return;
}
