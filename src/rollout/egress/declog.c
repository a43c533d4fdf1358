/* declog.c - the egress decision log, bounded: one JSON object per line,
 * appended with a single write(2) so a reader never sees half a line.
 * A decision is written when its connection ends; a decision that repeats
 * one already written (same phase, method, host, port, decision and
 * reason) is folded: its count, time span and bytes are summed in memory
 * and written as one line per key at most every PR_EGRESS_LOG_FOLD_S.  The
 * file stops growing at PR_EGRESS_LOG_MAX bytes; what is not written then
 * is still counted in the per-phase totals, a file of fixed-width lines
 * rewritten in place.  Formats: egress.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

static void
rfc3339 (time_t when, char ts[32])
{
  struct tm tm;
  gmtime_r (&when, &tm);
  strftime (ts, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *
pr_declog_format (const struct pr_decision *d, time_t first, time_t last, uint64_t count)
{
  char ts[32], te[32];

  rfc3339 (first, ts);
  rfc3339 (last, te);
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
  gen_num (g, "count", count);
  gen_kv (g, "last", te);
  yajl_gen_map_close (g);
  return pr_json_gen_finish_line (g);
}

/* ---- the fold table ---- */

struct fold
{
  struct fold *next;         /* hash chain */
  struct fold *lru_prev, *lru_next;
  char *phase, *method, *host, *reason;
  unsigned port;
  bool allow;
  uint64_t hash;
  uint64_t count;            /* pending: seen since the key's last line */
  uint64_t bytes_up, bytes_down;
  time_t first, last;        /* of the pending ones */
  time_t touched;
};

static uint64_t
fnv (uint64_t h, const char *s)
{
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
  return (h ^ 0xff) * 0x100000001b3ULL;
}

static uint64_t
key_hash (const struct pr_decision *d)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv (h, d->phase);
  h = fnv (h, d->method);
  h = fnv (h, d->host);
  h = fnv (h, d->reason);
  return (h ^ d->port ^ (d->allow ? 0x8000000 : 0)) * 0x100000001b3ULL;
}

static bool
key_equal (const struct fold *f, const struct pr_decision *d, uint64_t h)
{
  return f->hash == h && f->port == d->port && f->allow == d->allow && strcmp (f->phase, d->phase) == 0
         && strcmp (f->method, d->method) == 0 && strcmp (f->host, d->host) == 0 && strcmp (f->reason, d->reason) == 0;
}

static void
lru_unlink (struct pr_declog *l, struct fold *f)
{
  if (f->lru_prev)
    f->lru_prev->lru_next = f->lru_next;
  else
    l->lru_head = f->lru_next;
  if (f->lru_next)
    f->lru_next->lru_prev = f->lru_prev;
  else
    l->lru_tail = f->lru_prev;
  f->lru_prev = f->lru_next = NULL;
}

static void
lru_push_front (struct pr_declog *l, struct fold *f)
{
  f->lru_next = l->lru_head;
  if (l->lru_head)
    l->lru_head->lru_prev = f;
  l->lru_head = f;
  if (l->lru_tail == NULL)
    l->lru_tail = f;
}

static int
phase_index (const char *phase)
{
  static const char *const names[] = { "agent", "setup", "verifier", "peer" };
  for (int i = 0; i < PR_DECLOG_PHASES; i++)
    if (strcmp (phase, names[i]) == 0)
      return i;
  return 0;
}

/* Appends line if it fits under the cap; counts it as unlogged otherwise. */
static void
append (struct pr_declog *l, const char *line, const char *phase, uint64_t count)
{
  size_t n = strlen (line);
  if (l->fd < 0)
    return;
  if (l->size + n > l->max)
    {
      l->totals[phase_index (phase)].unlogged += count;
      l->totals_dirty = true;
      return;
    }
  /* One write: a reader sees whole lines.  Errors are ignored: logging
   * must not stop traffic. */
  ssize_t w = write (l->fd, line, n);
  if (w > 0)
    l->size += (size_t) w;
}

static void
fold_write (struct pr_declog *l, struct fold *f)
{
  if (f->count == 0)
    return;
  struct pr_decision d = {
    .phase = f->phase, .method = f->method, .host = f->host, .port = f->port,
    .allow = f->allow, .reason = f->reason, .bytes_up = f->bytes_up, .bytes_down = f->bytes_down,
  };
  _cleanup_free_ char *line = pr_declog_format (&d, f->first, f->last, f->count);
  append (l, line, f->phase, f->count);
  f->count = f->bytes_up = f->bytes_down = 0;
}

static void
fold_drop (struct pr_declog *l, struct fold *f)
{
  fold_write (l, f);
  struct fold **pp = &l->buckets[f->hash % PR_DECLOG_BUCKETS];
  while (*pp && *pp != f)
    pp = &(*pp)->next;
  if (*pp)
    *pp = f->next;
  lru_unlink (l, f);
  free (f->phase);
  free (f->method);
  free (f->host);
  free (f->reason);
  free (f);
  l->n_folds--;
}

/* ---- totals ---- */

/* Fixed-width lines (numbers padded with spaces, which JSON allows), so a
 * rewrite in place never changes the file's layout and a reader racing it
 * still reads valid JSON. */
static void
totals_write (struct pr_declog *l)
{
  static const char *const names[] = { "agent", "setup", "verifier", "peer" };
  char buf[PR_DECLOG_PHASES * 256];
  size_t off = 0;
  char ts[32];

  if (l->totals_fd < 0 || !l->totals_dirty)
    return;
  rfc3339 (time (NULL), ts);
  for (int i = 0; i < PR_DECLOG_PHASES; i++)
    {
      const struct pr_declog_totals *t = &l->totals[i];
      char phase[16];
      snprintf (phase, sizeof phase, "\"%s\",", names[i]);
      off += (size_t) snprintf (buf + off, sizeof buf - off,
                                "{\"time\":\"%s\",\"record\":\"totals\",\"phase\":%-11s\"allow\":%20llu,"
                                "\"deny\":%20llu,\"bytes_up\":%20llu,\"bytes_down\":%20llu,\"unlogged\":%20llu}\n",
                                ts, phase, (unsigned long long) t->allow, (unsigned long long) t->deny,
                                (unsigned long long) t->bytes_up, (unsigned long long) t->bytes_down,
                                (unsigned long long) t->unlogged);
    }
  if (pwrite (l->totals_fd, buf, off, 0) == (ssize_t) off)
    l->totals_dirty = false;
}

/* ---- the log ---- */

static void
flush_cb (evutil_socket_t fd, short what, void *arg)
{
  struct pr_declog *l = arg;
  time_t now = time (NULL);

  for (struct fold *f = l->lru_head, *next; f; f = next)
    {
      next = f->lru_next;
      fold_write (l, f);
      /* A key quiet for a while is forgotten: its next decision is
       * written at once again, as a first one. */
      if (now - f->touched > PR_EGRESS_LOG_FORGET_S)
        fold_drop (l, f);
    }
  totals_write (l);
  l->flush_armed = false;
}

int
pr_declog_open (struct pr_declog *l, struct event_base *base, const char *path, const char *totals_path,
                pr_error **err)
{
  struct stat st;

  memset (l, 0, sizeof *l);
  l->fd = l->totals_fd = -1;
  l->max = PR_EGRESS_LOG_MAX;
  if (path == NULL)
    return 0;
  l->fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
  if (l->fd < 0)
    return pr_error_set (err, errno, "egress: open decision log `%s`", path);
  if (fstat (l->fd, &st) == 0)
    l->size = (size_t) st.st_size;
  if (totals_path)
    {
      l->totals_fd = open (totals_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0640);
      if (l->totals_fd < 0)
        return pr_error_set (err, errno, "egress: open decision totals `%s`", totals_path);
    }
  l->flush_ev = evtimer_new (base, flush_cb, l);
  if (l->flush_ev == NULL)
    return pr_error_set (err, 0, "egress: cannot create the log timer");
  l->totals_dirty = true;
  totals_write (l);
  return 0;
}

void
pr_declog_record (struct pr_declog *l, const struct pr_decision *d)
{
  time_t now = time (NULL);
  struct pr_declog_totals *t = &l->totals[phase_index (d->phase)];

  if (d->allow)
    t->allow++;
  else
    t->deny++;
  t->bytes_up += d->bytes_up;
  t->bytes_down += d->bytes_down;
  l->totals_dirty = true;
  if (l->fd < 0)
    return;

  uint64_t h = key_hash (d);
  struct fold *f = l->buckets[h % PR_DECLOG_BUCKETS];
  while (f && !key_equal (f, d, h))
    f = f->next;
  if (f == NULL)
    {
      /* A first decision: written now (the common case, one connection
       * per request), and remembered for the repeats. */
      _cleanup_free_ char *line = pr_declog_format (d, now, now, 1);
      append (l, line, d->phase, 1);
      if (l->n_folds == PR_DECLOG_KEYS)
        fold_drop (l, l->lru_tail);
      f = xmalloc0 (sizeof *f);
      f->phase = xstrdup (d->phase);
      f->method = xstrdup (d->method);
      f->host = xstrdup (d->host);
      f->reason = xstrdup (d->reason);
      f->port = d->port;
      f->allow = d->allow;
      f->hash = h;
      f->next = l->buckets[h % PR_DECLOG_BUCKETS];
      l->buckets[h % PR_DECLOG_BUCKETS] = f;
      l->n_folds++;
    }
  else
    {
      if (f->count == 0)
        f->first = now;
      f->count++;
      f->last = now;
      f->bytes_up += d->bytes_up;
      f->bytes_down += d->bytes_down;
      lru_unlink (l, f);
    }
  f->touched = now;
  lru_push_front (l, f);
  if (!l->flush_armed && l->flush_ev)
    {
      struct timeval tv = { PR_EGRESS_LOG_FOLD_S, 0 };
      if (evtimer_add (l->flush_ev, &tv) == 0)
        l->flush_armed = true;
    }
}

void
pr_declog_close (struct pr_declog *l)
{
  while (l->lru_head)
    fold_drop (l, l->lru_head);
  l->totals_dirty = true;
  totals_write (l);
  if (l->flush_ev)
    event_free (l->flush_ev);
  if (l->fd >= 0)
    close (l->fd);
  if (l->totals_fd >= 0)
    close (l->totals_fd);
  l->flush_ev = NULL;
  l->fd = l->totals_fd = -1;
}
