/* tlshello.c - the egress proxy's TLS ClientHello parser (see tlshello.h).
 * Strict: anything a server might read differently from us (a second
 * server name, a repeated extension, trailing bytes) is refused rather
 * than guessed at. */
#define _GNU_SOURCE
#include "tlshello.h"

#include <string.h>

#define TLS_RECORD_HANDSHAKE 22
#define TLS_HANDSHAKE_CLIENT_HELLO 1
#define TLS_RECORD_MAX 16384
#define EXT_SERVER_NAME 0x0000
#define EXT_ENCRYPTED_CLIENT_HELLO 0xfe0d
#define EXT_ENCRYPTED_SERVER_NAME 0xffce /* ESNI drafts */
#define SNI_HOST_NAME 0

/* A bounded reader over one vector. */
struct rd
{
  const uint8_t *p;
  size_t left;
};

static bool
take (struct rd *r, size_t n, const uint8_t **out)
{
  if (r->left < n)
    return false;
  if (out)
    *out = r->p;
  r->p += n;
  r->left -= n;
  return true;
}

static bool
u8 (struct rd *r, unsigned *v)
{
  const uint8_t *b;
  if (!take (r, 1, &b))
    return false;
  *v = b[0];
  return true;
}

static bool
u16 (struct rd *r, unsigned *v)
{
  const uint8_t *b;
  if (!take (r, 2, &b))
    return false;
  *v = (unsigned) b[0] << 8 | b[1];
  return true;
}

/* A vector with a 1- or 2-byte length prefix, as a sub-reader. */
static bool
vec (struct rd *r, int prefix, struct rd *sub)
{
  unsigned n;
  if (!(prefix == 1 ? u8 (r, &n) : u16 (r, &n)))
    return false;
  sub->p = r->p;
  sub->left = n;
  return take (r, n, NULL);
}

static int
bad (const char **reason, const char *why)
{
  *reason = why;
  return PR_TLSHELLO_BAD;
}

static int
parse_sni (struct rd ext, struct pr_tlshello *out, const char **reason)
{
  struct rd list;
  if (!vec (&ext, 2, &list) || ext.left != 0 || list.left == 0)
    return bad (reason, "malformed server_name extension");
  bool seen = false;
  while (list.left > 0)
    {
      unsigned type;
      struct rd name;
      if (!u8 (&list, &type) || !vec (&list, 2, &name))
        return bad (reason, "malformed server_name extension");
      if (type != SNI_HOST_NAME)
        continue;
      if (seen)
        return bad (reason, "more than one host name in server_name");
      seen = true;
      bool is_ip, is_v6;
      if (pr_reqhead_norm_host ((const char *) name.p, name.left, out->sni, &is_ip, &is_v6) < 0)
        return bad (reason, "server_name is not a valid host name");
      if (is_ip)
        return bad (reason, "server_name is an IP literal");
    }
  if (!seen)
    return bad (reason, "server_name without a host name");
  out->has_sni = true;
  return PR_TLSHELLO_OK;
}

/* body: the ClientHello message's body (after the 4-byte header). */
static int
parse_hello (struct rd body, struct pr_tlshello *out, const char **reason)
{
  struct rd session, suites, comp, exts;
  unsigned version;

  if (!u16 (&body, &version) || !take (&body, 32, NULL) || !vec (&body, 1, &session) || session.left > 32
      || !vec (&body, 2, &suites) || suites.left < 2 || suites.left % 2 != 0 || !vec (&body, 1, &comp)
      || comp.left < 1)
    return bad (reason, "malformed ClientHello");
  if ((version >> 8) != 3)
    return bad (reason, "ClientHello of an unknown TLS version");
  if (body.left == 0)
    return PR_TLSHELLO_OK; /* TLS 1.2 and older: extensions are optional */
  if (!vec (&body, 2, &exts) || body.left != 0)
    return bad (reason, "malformed ClientHello extensions");

  /* Extension types seen so far, to refuse repeats: at most one of each,
   * and a hello has well under 64 of them in practice. */
  unsigned seen[64];
  size_t n_seen = 0;
  while (exts.left > 0)
    {
      unsigned type;
      struct rd data;
      if (!u16 (&exts, &type) || !vec (&exts, 2, &data))
        return bad (reason, "malformed ClientHello extensions");
      for (size_t i = 0; i < n_seen; i++)
        if (seen[i] == type)
          return bad (reason, "repeated ClientHello extension");
      if (n_seen == sizeof seen / sizeof seen[0])
        return bad (reason, "too many ClientHello extensions");
      seen[n_seen++] = type;
      if (type == EXT_ENCRYPTED_CLIENT_HELLO || type == EXT_ENCRYPTED_SERVER_NAME)
        out->encrypted = true;
      if (type == EXT_SERVER_NAME)
        {
          int r = parse_sni (data, out, reason);
          if (r != PR_TLSHELLO_OK)
            return r;
        }
    }
  return PR_TLSHELLO_OK;
}

int
pr_tlshello_parse (const uint8_t *buf, size_t len, struct pr_tlshello *out, const char **reason)
{
  /* The handshake bytes gathered from the records so far. */
  uint8_t hs[PR_TLSHELLO_MAX_BYTES + 4];
  size_t hs_len = 0, off = 0;

  memset (out, 0, sizeof *out);
  *reason = NULL;
  /* Refuse a plaintext protocol at its first byte, not after 5. */
  if (len >= 1 && buf[0] != TLS_RECORD_HANDSHAKE)
    return *reason = "the tunnel does not start with a TLS handshake", PR_TLSHELLO_NOT_TLS;
  if (len >= 2 && buf[1] != 3)
    return *reason = "the tunnel does not start with a TLS handshake", PR_TLSHELLO_NOT_TLS;

  while (off + 5 <= len)
    {
      const uint8_t *h = buf + off;
      size_t rlen = (size_t) h[3] << 8 | h[4];
      if (h[0] != TLS_RECORD_HANDSHAKE)
        return bad (reason, "a record other than handshake inside the ClientHello");
      if (h[1] != 3)
        return bad (reason, "a TLS record of an unknown version");
      if (rlen == 0 || rlen > TLS_RECORD_MAX)
        return bad (reason, "a TLS record of a bad length");
      if (off + 5 + rlen > len)
        break;
      size_t room = sizeof hs - hs_len;
      if (rlen > room)
        return bad (reason, "ClientHello too large");
      memcpy (hs + hs_len, h + 5, rlen);
      hs_len += rlen;
      off += 5 + rlen;
      if (hs[0] != TLS_HANDSHAKE_CLIENT_HELLO)
        return bad (reason, "the first handshake message is not a ClientHello");
      if (hs_len < 4)
        continue;
      size_t mlen = (size_t) hs[1] << 16 | (size_t) hs[2] << 8 | hs[3];
      if (mlen > PR_TLSHELLO_MAX_BYTES)
        return bad (reason, "ClientHello too large");
      if (hs_len < 4 + mlen)
        continue;
      struct rd body = { hs + 4, mlen };
      int r = parse_hello (body, out, reason);
      if (r == PR_TLSHELLO_OK)
        out->len = off;
      return r;
    }
  if (len >= PR_TLSHELLO_MAX_INPUT)
    return bad (reason, "no complete ClientHello");
  return PR_TLSHELLO_MORE;
}
