/* reqhead.c - the egress proxy's HTTP request-head parser, the upstream
 * head rewrite and the proxy token extraction (the request body framing
 * tracker is reqbody.c), for the proxy's requests and the heads transparent egress
 * reads (pr_reqhead_parse_origin: the same rules, origin-form targets).
 * Strict where leniency would let a client and the origin disagree about
 * where a request ends (request smuggling, RFC 9112 section 11.2) or which
 * host it is for; the head sent upstream is always rebuilt, never passed
 * through. */
#define _GNU_SOURCE
#include "reqhead.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "../../base/util.h"

/* RFC 9110 section 5.6.2 tchar. */
static bool
is_tchar (unsigned char c)
{
  if (isalnum (c))
    return true;
  return c != 0 && strchr ("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool
is_field_vchar (unsigned char c)
{
  return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

ssize_t
pr_reqhead_find_end (const char *buf, size_t len, size_t max)
{
  size_t lim = len < max ? len : max;

  for (size_t i = 0; i < lim; i++)
    {
      if (buf[i] != '\n')
        continue;
      if (i + 1 < len && buf[i + 1] == '\n')
        return i + 2 <= max ? (ssize_t) (i + 2) : -1;
      if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
        return i + 3 <= max ? (ssize_t) (i + 3) : -1;
    }
  return len >= max ? -1 : 0;
}

int
pr_reqhead_norm_host (const char *in, size_t len, char out[PR_REQHEAD_MAX_HOST + 1], bool *is_ip,
                      bool *is_ipv6)
{
  unsigned char tmp[sizeof (struct in6_addr)];
  char buf[PR_REQHEAD_MAX_HOST + 2];

  *is_ip = *is_ipv6 = false;
  /* An embedded NUL would make the C-string checks below (inet_pton) see a
   * shorter host than the one copied out. */
  if (len == 0 || len > PR_REQHEAD_MAX_HOST + 1 || memchr (in, '\0', len) != NULL)
    return -1;
  memcpy (buf, in, len);
  buf[len] = '\0';

  if (memchr (buf, ':', len) != NULL)
    {
      /* Only the trailing-dot form of a name may use the extra byte. */
      if (len > PR_REQHEAD_MAX_HOST)
        return -1;
      /* Zone ids ("%eth0") are refused by inet_pton, which is what we want:
       * they only name link-local scopes. */
      if (inet_pton (AF_INET6, buf, tmp) != 1)
        return -1;
      *is_ip = *is_ipv6 = true;
      for (size_t i = 0; i <= len; i++)
        out[i] = tolower ((unsigned char) buf[i]);
      return 0;
    }

  if (buf[len - 1] == '.')
    buf[--len] = '\0';
  if (len == 0 || len > PR_REQHEAD_MAX_HOST)
    return -1;

  size_t label = 0;
  bool label_numeric = true;
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = buf[i];
      if (c == '.')
        {
          if (label == 0)
            return -1;
          label = 0;
          label_numeric = true;
          out[i] = '.';
          continue;
        }
      if (!(isalnum (c) || c == '-' || c == '_'))
        return -1;
      if (!isdigit (c))
        label_numeric = false;
      if (++label > 63)
        return -1;
      out[i] = tolower (c);
    }
  out[len] = '\0';
  if (label == 0)
    return -1;
  if (label_numeric)
    {
      /* Only a strict dotted quad may end in a numeric label; every other
       * numeric spelling (inet_aton's octal/hex/short forms) is refused. */
      if (inet_pton (AF_INET, out, tmp) != 1)
        return -1;
      *is_ip = true;
    }
  return 0;
}

static int
parse_port (const char *s, size_t len, uint16_t *port)
{
  unsigned v = 0;

  if (len == 0 || len > 5)
    return -1;
  for (size_t i = 0; i < len; i++)
    {
      if (!isdigit ((unsigned char) s[i]))
        return -1;
      v = v * 10 + (s[i] - '0');
    }
  if (v == 0 || v > 65535)
    return -1;
  *port = v;
  return 0;
}

/* authority = host [":" port], host = reg-name / IPv4 / "[" IPv6 "]".
 * need_port: authority-form (CONNECT) requires a port. */
static int
parse_authority (const char *a, size_t len, bool need_port, struct pr_reqhead *rh, const char **reason)
{
  const char *host, *port = NULL;
  size_t host_len, port_len = 0;

  if (memchr (a, '@', len) != NULL)
    return *reason = "userinfo in the request target is not accepted", 400;
  if (len > 0 && a[0] == '[')
    {
      const char *end = memchr (a, ']', len);
      if (end == NULL)
        return *reason = "unterminated IPv6 literal in the request target", 400;
      host = a + 1;
      host_len = end - host;
      size_t rest = len - (end + 1 - a);
      if (rest > 0)
        {
          if (end[1] != ':')
            return *reason = "bad authority in the request target", 400;
          port = end + 2;
          port_len = rest - 1;
        }
      if (memchr (host, ':', host_len) == NULL)
        return *reason = "bad IPv6 literal in the request target", 400;
    }
  else
    {
      const char *colon = memrchr (a, ':', len);
      host = a;
      host_len = colon ? (size_t) (colon - a) : len;
      if (colon)
        {
          port = colon + 1;
          port_len = len - host_len - 1;
        }
      if (memchr (host, ':', host_len) != NULL)
        return *reason = "bad authority in the request target", 400;
    }

  if (pr_reqhead_norm_host (host, host_len, rh->host, &rh->host_is_ip, &rh->host_is_ipv6) < 0)
    return *reason = "bad host name in the request target", 400;
  if (port != NULL && port_len > 0)
    {
      if (parse_port (port, port_len, &rh->port) < 0)
        return *reason = "bad port in the request target", 400;
    }
  else if (need_port)
    return *reason = "CONNECT target needs host:port", 400;
  else
    rh->port = 80;
  return 0;
}

/* The target of the request line.  to_origin: the head was sent to an
 * origin server, not to a proxy (pr_reqhead_parse_origin), so origin-form
 * ("/path?query") is the normal form and CONNECT has no meaning. */
static int
parse_target (const char *t, size_t len, bool to_origin, struct pr_reqhead *rh, const char **reason)
{
  for (size_t i = 0; i < len; i++)
    if ((unsigned char) t[i] <= 0x20 || (unsigned char) t[i] >= 0x7f)
      return *reason = "bad character in the request target", 400;

  if (rh->is_connect && to_origin)
    return *reason = "CONNECT sent to an origin server", 400;
  if (rh->is_connect)
    return parse_authority (t, len, true, rh, reason);

  if (len > 0 && t[0] == '/' && to_origin)
    {
      if (memchr (t, '#', len) != NULL)
        return *reason = "fragment in the request target", 400;
      /* The host and port come from the Host field (origin_host). */
      rh->origin_form = true;
      rh->path = t;
      rh->path_len = len;
      return 0;
    }
  if (len > 0 && t[0] == '/')
    return *reason = "origin-form request to a proxy: send an absolute http:// URL", 400;
  if (len == 1 && t[0] == '*')
    return *reason = "asterisk-form requests are not proxied", 400;
  if (len >= 8 && strncasecmp (t, "https://", 8) == 0)
    return *reason = "https:// targets must use CONNECT", 400;
  if (len < 7 || strncasecmp (t, "http://", 7) != 0)
    return *reason = "request target is not an http:// URL", 400;
  if (memchr (t, '#', len) != NULL)
    return *reason = "fragment in the request target", 400;

  const char *a = t + 7;
  size_t alen = 0;
  while (alen < len - 7 && a[alen] != '/' && a[alen] != '?')
    alen++;
  int r = parse_authority (a, alen, false, rh, reason);
  if (r != 0)
    return r;
  rh->path = a + alen;
  rh->path_len = len - 7 - alen;
  return 0;
}

static bool
name_is (const struct pr_reqhead_field *f, const char *name)
{
  return f->name_len == strlen (name) && strncasecmp (f->name, name, f->name_len) == 0;
}

static int
parse_framing (struct pr_reqhead *rh, const char **reason)
{
  bool have_cl = false;
  size_t n_te = 0;

  rh->body = PR_BODY_NONE;
  rh->content_length = 0;
  for (size_t i = 0; i < rh->n_fields; i++)
    {
      const struct pr_reqhead_field *f = &rh->fields[i];
      if (name_is (f, "content-length"))
        {
          uint64_t v = 0;
          if (f->value_len == 0 || f->value_len > 18)
            return *reason = "bad Content-Length", 400;
          for (size_t j = 0; j < f->value_len; j++)
            {
              if (!isdigit ((unsigned char) f->value[j]))
                return *reason = "bad Content-Length", 400;
              v = v * 10 + (f->value[j] - '0');
            }
          if (have_cl && v != rh->content_length)
            return *reason = "conflicting Content-Length fields", 400;
          have_cl = true;
          rh->content_length = v;
        }
      else if (name_is (f, "transfer-encoding"))
        {
          if (++n_te > 1)
            return *reason = "repeated Transfer-Encoding field", 400;
          if (f->value_len != 7 || strncasecmp (f->value, "chunked", 7) != 0)
            return *reason = "only the chunked transfer coding is supported", 501;
        }
    }
  if (rh->is_connect)
    return 0;
  if (n_te > 0 && have_cl)
    return *reason = "both Content-Length and Transfer-Encoding", 400;
  if (n_te > 0 && rh->minor == 0)
    return *reason = "Transfer-Encoding in an HTTP/1.0 request", 400;
  if (n_te > 0)
    rh->body = PR_BODY_CHUNKED;
  else if (have_cl && rh->content_length > 0)
    rh->body = PR_BODY_LENGTH;
  return 0;
}

static int
parse_request_line (const char *l, size_t len, bool to_origin, struct pr_reqhead *rh, const char **reason)
{
  const char *sp1 = memchr (l, ' ', len);
  if (sp1 == NULL || sp1 == l)
    return *reason = "malformed request line", 400;
  size_t mlen = sp1 - l;
  if (mlen >= sizeof rh->method)
    return *reason = "method too long", 400;
  for (size_t i = 0; i < mlen; i++)
    if (!is_tchar ((unsigned char) l[i]))
      return *reason = "bad method", 400;
  memcpy (rh->method, l, mlen);
  rh->method[mlen] = '\0';
  rh->is_connect = strcmp (rh->method, "CONNECT") == 0;

  const char *t = sp1 + 1;
  const char *sp2 = memchr (t, ' ', len - (t - l));
  if (sp2 == NULL || sp2 == t)
    return *reason = "malformed request line", 400;
  const char *v = sp2 + 1;
  size_t vlen = len - (v - l);
  if (vlen != 8 || memcmp (v, "HTTP/", 5) != 0 || !isdigit ((unsigned char) v[5]) || v[6] != '.'
      || !isdigit ((unsigned char) v[7]))
    return *reason = "malformed HTTP version", 400;
  if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
    return *reason = "only HTTP/1.0 and HTTP/1.1 are supported", 505;
  rh->minor = v[7] - '0';
  return parse_target (t, sp2 - t, to_origin, rh, reason);
}

static int
parse_field (const char *l, size_t len, struct pr_reqhead *rh, const char **reason)
{
  if (l[0] == ' ' || l[0] == '\t')
    return *reason = "obsolete line folding in a header field", 400;
  const char *colon = memchr (l, ':', len);
  if (colon == NULL || colon == l)
    return *reason = "malformed header field", 400;
  for (const char *p = l; p < colon; p++)
    if (!is_tchar ((unsigned char) *p))
      return *reason = "bad header field name", 400;
  const char *v = colon + 1, *end = l + len;
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  for (const char *p = v; p < end; p++)
    if (!is_field_vchar ((unsigned char) *p))
      return *reason = "bad character in a header field value", 400;
  if (rh->n_fields >= PR_REQHEAD_MAX_HEADERS)
    return *reason = "too many header fields", 431;
  rh->fields[rh->n_fields++] = (struct pr_reqhead_field){ l, colon - l, v, end - v };
  return 0;
}

/* pr_reqhead_parse and pr_reqhead_parse_origin: the same syntax and
 * framing rules; to_origin only changes which targets are accepted. */
static int
parse_head (const char *buf, size_t len, bool to_origin, struct pr_reqhead *rh, const char **reason)
{
  size_t off = 0;
  bool first = true;

  memset (rh, 0, sizeof *rh);
  *reason = NULL;
  if (len > PR_REQHEAD_MAX_BYTES)
    return *reason = "request head too large", 431;
  while (off < len)
    {
      const char *l = buf + off;
      const char *nl = memchr (l, '\n', len - off);
      if (nl == NULL)
        return *reason = "unterminated request head", 400;
      size_t llen = nl - l;
      off += llen + 1;
      if (llen > 0 && l[llen - 1] == '\r')
        llen--;
      if (memchr (l, '\r', llen) != NULL || memchr (l, '\0', llen) != NULL)
        return *reason = "bare CR or NUL in the request head", 400;
      if (llen == 0)
        {
          if (first)
            return *reason = "empty request line", 400;
          if (off != len)
            return *reason = "data after the end of the request head", 400;
          return parse_framing (rh, reason);
        }
      int r = first ? parse_request_line (l, llen, to_origin, rh, reason) : parse_field (l, llen, rh, reason);
      if (r != 0)
        return r;
      first = false;
    }
  return *reason = "unterminated request head", 400;
}

int
pr_reqhead_parse (const char *buf, size_t len, struct pr_reqhead *rh, const char **reason)
{
  return parse_head (buf, len, false, rh, reason);
}

/* The one Host field of rh, or NULL with *reason and *status set (none,
 * or more than one: two parsers, the origin's and ours, could each pick
 * another of them). */
static const struct pr_reqhead_field *
sole_host_field (const struct pr_reqhead *rh, int *status, const char **reason)
{
  const struct pr_reqhead_field *host = NULL;

  for (size_t i = 0; i < rh->n_fields; i++)
    if (name_is (&rh->fields[i], "host"))
      {
        if (host != NULL)
          return *status = 400, *reason = "more than one Host field", NULL;
        host = &rh->fields[i];
      }
  if (host == NULL)
    return *status = 400, *reason = "no Host field", NULL;
  return host;
}

int
pr_reqhead_parse_origin (const char *buf, size_t len, struct pr_reqhead *rh, const char **reason)
{
  int status = parse_head (buf, len, true, rh, reason);
  if (status != 0)
    return status;
  const struct pr_reqhead_field *host = sole_host_field (rh, &status, reason);
  if (host == NULL)
    return status;
  if (!rh->origin_form)
    return pr_reqhead_check_host (rh, reason);
  const char *why = NULL;
  if (host->value_len == 0 || parse_authority (host->value, host->value_len, false, rh, &why) != 0)
    {
      rh->host[0] = '\0';
      return *reason = "malformed Host field", 400;
    }
  return 0;
}

int
pr_reqhead_check_host (const struct pr_reqhead *rh, const char **reason)
{
  const struct pr_reqhead_field *host = NULL;

  for (size_t i = 0; i < rh->n_fields; i++)
    if (name_is (&rh->fields[i], "host"))
      {
        if (host != NULL)
          return *reason = "more than one Host field", 400;
        host = &rh->fields[i];
      }
  if (host == NULL)
    return 0;
  struct pr_reqhead h;
  memset (&h, 0, sizeof h);
  const char *why = NULL;
  if (host->value_len == 0 || parse_authority (host->value, host->value_len, false, &h, &why) != 0)
    return *reason = "malformed Host field", 400;
  if (strcmp (h.host, rh->host) != 0 || h.port != rh->port)
    return *reason = "the Host field names another host than the request target", 403;
  return 0;
}

bool
pr_reqhead_is_ipv4 (const char *s)
{
  struct in_addr a;
  return inet_pton (AF_INET, s, &a) == 1;
}

/* True when field name n (len) is listed in any Connection field's value. */
static bool
named_by_connection (const struct pr_reqhead *rh, const char *n, size_t nlen)
{
  for (size_t i = 0; i < rh->n_fields; i++)
    {
      const struct pr_reqhead_field *f = &rh->fields[i];
      if (!name_is (f, "connection"))
        continue;
      const char *p = f->value, *end = f->value + f->value_len;
      while (p < end)
        {
          while (p < end && (*p == ',' || *p == ' ' || *p == '\t'))
            p++;
          const char *s = p;
          while (p < end && *p != ',' && *p != ' ' && *p != '\t')
            p++;
          if ((size_t) (p - s) == nlen && nlen > 0 && strncasecmp (s, n, nlen) == 0)
            return true;
        }
    }
  return false;
}

static bool
is_hop_by_hop (const struct pr_reqhead *rh, const struct pr_reqhead_field *f)
{
  static const char *const hop[] = { "connection", "keep-alive", "proxy-connection", "proxy-authorization",
                                     "proxy-authenticate", "te", "trailer", "upgrade", "host" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (hop); i++)
    if (name_is (f, hop[i]))
      return true;
  /* Transfer-Encoding is hop-by-hop too, but the body is forwarded in the
   * client's coding, so its framing field must go with it. */
  if (name_is (f, "transfer-encoding") || name_is (f, "content-length"))
    return false;
  return named_by_connection (rh, f->name, f->name_len);
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

#define APPEND_STR(s) append (&out, &len, &cap, (s), strlen (s))

char *
pr_reqhead_rewrite (const struct pr_reqhead *rh, size_t *out_len)
{
  char *out = NULL;
  size_t len = 0, cap = 0;
  char port[16];

  APPEND_STR (rh->method);
  APPEND_STR (" ");
  if (rh->path_len == 0 || rh->path[0] != '/')
    APPEND_STR ("/");
  append (&out, &len, &cap, rh->path, rh->path_len);
  APPEND_STR (rh->minor == 0 ? " HTTP/1.0\r\nHost: " : " HTTP/1.1\r\nHost: ");
  if (rh->host_is_ipv6)
    APPEND_STR ("[");
  APPEND_STR (rh->host);
  if (rh->host_is_ipv6)
    APPEND_STR ("]");
  if (rh->port != 80)
    {
      snprintf (port, sizeof port, ":%u", rh->port);
      APPEND_STR (port);
    }
  APPEND_STR ("\r\n");
  for (size_t i = 0; i < rh->n_fields; i++)
    {
      const struct pr_reqhead_field *f = &rh->fields[i];
      if (is_hop_by_hop (rh, f))
        continue;
      append (&out, &len, &cap, f->name, f->name_len);
      APPEND_STR (": ");
      append (&out, &len, &cap, f->value, f->value_len);
      APPEND_STR ("\r\n");
    }
  APPEND_STR ("Connection: close\r\n\r\n");
  *out_len = len;
  return out;
}

static int
b64_val (unsigned char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/* Decodes standard base64 (RFC 4648 section 4, padding optional). */
static ssize_t
b64_decode (const char *in, size_t len, unsigned char *out, size_t outsz)
{
  size_t o = 0;
  unsigned acc = 0, bits = 0;

  while (len > 0 && in[len - 1] == '=')
    len--;
  for (size_t i = 0; i < len; i++)
    {
      int v = b64_val ((unsigned char) in[i]);
      if (v < 0)
        return -1;
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8)
        {
          bits -= 8;
          if (o >= outsz)
            return -1;
          out[o++] = (acc >> bits) & 0xff;
        }
    }
  return o;
}

int
pr_reqhead_proxy_token (const struct pr_reqhead *rh, char *out, size_t outsz)
{
  const struct pr_reqhead_field *found = NULL;
  unsigned char dec[512];

  for (size_t i = 0; i < rh->n_fields; i++)
    if (name_is (&rh->fields[i], "proxy-authorization"))
      {
        if (found != NULL)
          return -1;
        found = &rh->fields[i];
      }
  if (found == NULL)
    return 0;
  if (found->value_len < 6 || strncasecmp (found->value, "basic", 5) != 0
      || (found->value[5] != ' ' && found->value[5] != '\t'))
    return -1;
  const char *b = found->value + 6;
  size_t blen = found->value_len - 6;
  while (blen > 0 && (*b == ' ' || *b == '\t'))
    b++, blen--;
  ssize_t n = b64_decode (b, blen, dec, sizeof dec);
  if (n <= 0)
    return -1;
  unsigned char *colon = memchr (dec, ':', n);
  size_t ulen = colon ? (size_t) (colon - dec) : (size_t) n;
  if (ulen == 0 || ulen >= outsz)
    return -1;
  for (size_t i = 0; i < ulen; i++)
    if (dec[i] < 0x21 || dec[i] >= 0x7f)
      return -1;
  memcpy (out, dec, ulen);
  out[ulen] = '\0';
  return 1;
}
