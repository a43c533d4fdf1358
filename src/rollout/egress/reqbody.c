/* reqbody.c - the request body framing tracker of reqhead.h
 * (pr_body_init, pr_body_feed): where a request's body ends, by its
 * Content-Length or its chunked coding, so that the egress helper forwards
 * exactly one request per client connection and discards whatever follows
 * it (request smuggling, RFC 9112 section 11.2).  A pure function over
 * bytes, fuzzed with the head parser (tests/fuzz/fuzz_reqhead.c).
 * Source: RFC 9112 sections 6.3 (message body length) and 7.1 (chunked). */
#define _GNU_SOURCE
#include "reqhead.h"

#include <ctype.h>
#include <string.h>

enum
{
  CH_SIZE,
  CH_EXT,
  CH_SIZE_LF,
  CH_DATA,
  CH_DATA_CR,
  CH_DATA_LF,
  CH_TRAILER_START,
  CH_TRAILER_LINE,
  CH_TRAILER_LF,
  CH_END_LF,
};

#define CH_MAX_LINE 4096

void
pr_body_init (struct pr_body_tracker *t, const struct pr_reqhead *rh)
{
  memset (t, 0, sizeof *t);
  t->kind = rh->body;
  t->remaining = rh->body == PR_BODY_LENGTH ? rh->content_length : 0;
  t->done = rh->body == PR_BODY_NONE;
  t->state = CH_SIZE;
}

static int
hexval (unsigned char c)
{
  if (isdigit (c))
    return c - '0';
  c = tolower (c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The chunk-size line ended: data follows, or the trailer after the last
 * (size 0) chunk. */
static void
size_line_done (struct pr_body_tracker *t)
{
  t->digits = 0;
  t->state = t->remaining == 0 ? CH_TRAILER_START : CH_DATA;
}

/* One byte of a chunk-size line (RFC 9112 section 7.1: chunk-size
 * [chunk-ext] CRLF; a bare LF is accepted, as on the request side).
 * Returns 1 (consumed) or -1 (malformed). */
static int
size_line_byte (struct pr_body_tracker *t, unsigned char c)
{
  switch (t->state)
    {
    case CH_SIZE:
      if (hexval (c) >= 0)
        {
          if (++t->digits > 15)
            return -1;
          t->remaining = t->remaining * 16 + hexval (c);
        }
      else if (t->digits == 0)
        return -1;
      else if (c == ';' || c == ' ' || c == '\t')
        t->state = CH_EXT, t->line = 0;
      else if (c == '\r')
        t->state = CH_SIZE_LF;
      else if (c == '\n')
        size_line_done (t);
      else
        return -1;
      return 1;
    case CH_EXT:
      if (++t->line > CH_MAX_LINE)
        return -1;
      if (c == '\r')
        t->state = CH_SIZE_LF;
      else if (c == '\n')
        size_line_done (t);
      return 1;
    default: /* CH_SIZE_LF */
      if (c != '\n')
        return -1;
      size_line_done (t);
      return 1;
    }
}

/* One byte after a chunk's data (its CRLF) or of the trailer section.
 * Returns the bytes consumed (0 when the state changes without consuming
 * c, 1 otherwise) or -1 (malformed, or a trailer over the head limit). */
static int
after_data_byte (struct pr_body_tracker *t, unsigned char c)
{
  switch (t->state)
    {
    case CH_DATA_CR:
      if (c == '\r')
        t->state = CH_DATA_LF;
      else if (c == '\n')
        t->state = CH_SIZE;
      else
        return -1;
      return 1;
    case CH_DATA_LF:
      if (c != '\n')
        return -1;
      t->state = CH_SIZE;
      return 1;
    case CH_TRAILER_START:
      if (c == '\r')
        t->state = CH_END_LF;
      else if (c == '\n')
        t->done = true;
      else
        {
          t->state = CH_TRAILER_LINE;
          return 0;
        }
      return 1;
    case CH_TRAILER_LINE:
      if (++t->trailer > PR_REQHEAD_MAX_BYTES)
        return -1;
      if (c == '\n')
        t->state = CH_TRAILER_START;
      return 1;
    case CH_END_LF:
      if (c != '\n')
        return -1;
      t->done = true;
      return 1;
    default:
      return -1;
    }
}

ssize_t
pr_body_feed (struct pr_body_tracker *t, const char *buf, size_t len)
{
  size_t i = 0;

  if (t->done)
    return 0;
  if (t->kind == PR_BODY_LENGTH)
    {
      size_t n = len < t->remaining ? len : (size_t) t->remaining;
      t->remaining -= n;
      t->done = t->remaining == 0;
      return n;
    }

  while (i < len && !t->done)
    {
      int used;
      if (t->state == CH_DATA)
        {
          size_t n = len - i < t->remaining ? len - i : (size_t) t->remaining;
          i += n;
          t->remaining -= n;
          if (t->remaining == 0)
            t->state = CH_DATA_CR;
          continue;
        }
      if (t->state == CH_SIZE || t->state == CH_EXT || t->state == CH_SIZE_LF)
        used = size_line_byte (t, (unsigned char) buf[i]);
      else
        used = after_data_byte (t, (unsigned char) buf[i]);
      if (used < 0)
        return -1;
      i += (size_t) used;
    }
  return i;
}
