/* reqhead.h - HTTP/1.x request-head parser for the egress proxy: request
 * line, absolute-form and authority-form targets, header fields, limits,
 * the origin-form rewrite sent upstream, the proxy token, and a request
 * body framing tracker.  Pure functions over byte buffers (no I/O, no
 * globals) so they can be unit-tested and fuzzed.
 * Also the heads transparent egress reads, which the client sent to what
 * it takes for the origin (origin-form targets).
 * Source: RFC 9112 sections 2-3, 5-7 (message format, request line,
 * request target forms, field syntax, chunked coding); RFC 9110 section 7.6.1
 * (hop-by-hop fields) and 9.3.6 (CONNECT); RFC 3986 section 3.2 (authority);
 * RFC 7617 (Basic authentication). */
#ifndef PROCTOR_EGRESS_REQHEAD_H
#define PROCTOR_EGRESS_REQHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Limits.  16 KiB covers every real client's head (browsers cap around
 * 8-16 KiB; curl/apt/pip send well under 2 KiB); 100 fields is far above
 * what clients send and keeps parsing linear and bounded. */
#define PR_REQHEAD_MAX_BYTES 16384
#define PR_REQHEAD_MAX_HEADERS 100
#define PR_REQHEAD_MAX_HOST 253

struct pr_reqhead_field
{
  const char *name; /* points into the caller's buffer; not NUL-terminated */
  size_t name_len;
  const char *value; /* leading/trailing whitespace stripped */
  size_t value_len;
};

enum pr_body_kind
{
  PR_BODY_NONE,    /* no body (no Content-Length / Transfer-Encoding, or CONNECT) */
  PR_BODY_LENGTH,  /* Content-Length bytes */
  PR_BODY_CHUNKED, /* Transfer-Encoding: chunked */
};

struct pr_reqhead
{
  char method[32];
  bool is_connect;
  char host[PR_REQHEAD_MAX_HOST + 1]; /* lower-case, no trailing dot, IPv6 without brackets */
  bool host_is_ip;                    /* an IPv4 or IPv6 literal */
  bool host_is_ipv6;
  uint16_t port;
  const char *path; /* origin-form target (path and query) into the buffer; NULL for CONNECT */
  size_t path_len;
  bool origin_form; /* the request line had the origin-form (pr_reqhead_parse_origin only) */
  int minor;        /* HTTP/1.<minor>: 0 or 1 */
  struct pr_reqhead_field fields[PR_REQHEAD_MAX_HEADERS];
  size_t n_fields;
  enum pr_body_kind body;
  uint64_t content_length;
};

/* Finds the end of a request head in buf[0..len): the offset just past
 * the empty line (CRLF CRLF, or LF LF which RFC 9112 section 2.2 lets a
 * recipient accept).  Returns that length (> 0), 0 when the head is not
 * complete yet and len < max, or -1 when no end is found within max bytes
 * (the caller answers 431). */
ssize_t pr_reqhead_find_end (const char *buf, size_t len, size_t max);

/* Parses a complete head buf[0..len) (as delimited by pr_reqhead_find_end)
 * into *rh; rh's pointers point into buf, which must outlive rh.  Returns 0,
 * or an HTTP status with *reason set to a static one-line explanation:
 * 400 malformed request line, target, field or framing (origin-form or
 * asterisk-form targets, userinfo in the authority, a scheme other than
 * http, bad host or port, obs-fold, control characters, Content-Length and
 * Transfer-Encoding together, conflicting Content-Length, more than
 * PR_REQHEAD_MAX_HEADERS fields -> 431), 501 a transfer coding other than
 * chunked, 505 an HTTP version other than 1.0/1.1. */
int pr_reqhead_parse (const char *buf, size_t len, struct pr_reqhead *rh, const char **reason);

/* Parses a complete head buf[0..len) that a client sent straight to an
 * origin server, believing it talks to the origin (transparent egress:
 * the runtime's rules led the connection to the helper).  The rules of
 * pr_reqhead_parse (syntax, limits, obs-fold, framing: the same statuses),
 * except for the target: origin-form ("GET /p?q HTTP/1.1") is the normal
 * form, its host and port taken from the Host field (port 80 when it has
 * none); absolute-form http:// is accepted too, and its Host field must
 * name the same host and port (403 otherwise, as
 * pr_reqhead_check_host).  Exactly one Host field, a valid authority, is
 * required either way (400: none, more than one, malformed); CONNECT,
 * asterisk-form and https:// targets are 400.  On success rh->host and
 * rh->port are the request's target and rh->path its origin-form target,
 * so pr_reqhead_rewrite builds the head to send upstream. */
int pr_reqhead_parse_origin (const char *buf, size_t len, struct pr_reqhead *rh, const char **reason);

/* Builds the head sent upstream for a forward (non-CONNECT) request:
 * "METHOD origin-form HTTP/1.x", a Host field naming the target (the
 * client's Host is replaced, RFC 9112 section 3.2.2), the client's fields
 * minus hop-by-hop ones (Connection and the fields it names, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Trailer,
 * Upgrade) and "Connection: close".  Returns a malloc'd buffer, its length
 * in *out_len.  Never fails (aborts on out-of-memory). */
char *pr_reqhead_rewrite (const struct pr_reqhead *rh, size_t *out_len);

/* Checks a forward request's Host field against its target: absent, or
 * one field whose host and port (80 when omitted) are the target's.
 * Returns 0, 400 (*reason set) for more than one Host field or one that
 * is not a valid authority (RFC 9112 section 3.2), 403 when it names
 * another host or port: the origin would answer for that one. */
int pr_reqhead_check_host (const struct pr_reqhead *rh, const char **reason);

/* True when s is a dotted-quad IPv4 literal. */
bool pr_reqhead_is_ipv4 (const char *s);

/* Extracts the proxy token: the user part of "Proxy-Authorization: Basic
 * base64(user:password)" (the password, if any, is ignored).  Returns 1 and
 * copies the NUL-terminated user into out (size outsz) when present and
 * well-formed, 0 when the field is absent, -1 when it is malformed, not
 * Basic, or the user does not fit. */
int pr_reqhead_proxy_token (const struct pr_reqhead *rh, char *out, size_t outsz);

/* Request body framing tracker: tells how many bytes the client sends as
 * the body, so nothing after it (a pipelined request for another host) is
 * forwarded upstream unchecked. */
struct pr_body_tracker
{
  enum pr_body_kind kind;
  bool done;
  uint64_t remaining; /* LENGTH: bytes left; CHUNKED: bytes left in the chunk data */
  int state;          /* CHUNKED parser state (private) */
  unsigned digits;    /* hex digits seen in the chunk-size */
  size_t line;        /* bytes in the current chunk-ext or trailer line */
  size_t trailer;     /* bytes of trailer section */
};

void pr_body_init (struct pr_body_tracker *t, const struct pr_reqhead *rh);

/* Consumes bytes buf[0..len) of the body.  Returns how many of them belong
 * to the body (<= len; fewer only when the body ends inside buf, and then
 * t->done is set), or -1 when a chunked body is malformed (bad chunk-size,
 * a chunk-size over 15 hex digits, a missing CRLF, a chunk-ext line over
 * 4096 bytes or trailers over PR_REQHEAD_MAX_BYTES). */
ssize_t pr_body_feed (struct pr_body_tracker *t, const char *buf, size_t len);

/* Validates and normalises a host name or IP literal (no brackets) into
 * out (lower-case, trailing dot removed).  Host names: LDH labels (plus
 * '_'), 1-63 bytes each, 253 total, the last label not all-numeric (so
 * "0x7f.1" or "2130706433" never reach the resolver).  Returns 0, or -1
 * when invalid.  *is_ip / *is_ipv6 tell what it was. */
int pr_reqhead_norm_host (const char *in, size_t len, char out[PR_REQHEAD_MAX_HOST + 1], bool *is_ip,
                          bool *is_ipv6);

#endif
