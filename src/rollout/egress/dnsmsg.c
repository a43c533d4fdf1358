/* dnsmsg.c - parsing the transparent resolver's queries and building its
 * replies (see dnsmsg.h).  Source: RFC 1035 sections 3.1, 4.1. */
#include "dnsmsg.h"

#include <ctype.h>
#include <string.h>

#define HDR 12
#define QR 0x8000u
#define OPCODE(f) (((f) >> 11) & 0xfu)
#define RD 0x0100u
#define RA 0x0080u

static uint16_t
get16 (const uint8_t *p)
{
  return (uint16_t) ((p[0] << 8) | p[1]);
}

static void
put16 (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t) (v >> 8);
  p[1] = (uint8_t) v;
}

static int
name_char (int c)
{
  return isascii (c) && (isalnum (c) || c == '-' || c == '_');
}

/* The question's name from off on: returns the offset past it, or 0. */
static size_t
parse_name (const uint8_t *buf, size_t len, size_t off, char *name)
{
  size_t n = 0;
  for (;;)
    {
      if (off >= len)
        return 0;
      unsigned l = buf[off++];
      if (l == 0)
        break;
      /* 0xc0: a compression pointer, 0x40/0x80: reserved label types;
       * a question that is the first name in its message has no use for
       * either. */
      if (l > 63 || off + l > len || n + (n > 0) + l > PR_DNS_MAX_NAME)
        return 0;
      if (n > 0)
        name[n++] = '.';
      for (unsigned i = 0; i < l; i++)
        {
          int c = buf[off + i];
          if (!name_char (c))
            return 0;
          name[n++] = (char) tolower (c);
        }
      off += l;
    }
  name[n] = '\0';
  return off;
}

int
pr_dnsmsg_parse_query (const uint8_t *buf, size_t len, struct pr_dnsq *q)
{
  memset (q, 0, sizeof *q);
  if (len < HDR)
    return -1;
  q->id = get16 (buf);
  q->flags = get16 (buf + 2);
  if (q->flags & QR)
    return -1;
  if (OPCODE (q->flags) != 0)
    return PR_DNS_RCODE_NOTIMP;
  if (get16 (buf + 4) != 1 || get16 (buf + 6) != 0 || get16 (buf + 8) != 0)
    return PR_DNS_RCODE_FORMERR;
  size_t off = parse_name (buf, len, HDR, q->name);
  if (off == 0 || off + 4 > len)
    return PR_DNS_RCODE_FORMERR;
  q->qtype = get16 (buf + off);
  q->qclass = get16 (buf + off + 2);
  q->qend = off + 4;
  return 0;
}

size_t
pr_dnsmsg_reply (const uint8_t *query, const struct pr_dnsq *q, int rcode, const uint8_t *addr, size_t addr_len,
                 uint32_t ttl, uint8_t *out, size_t cap)
{
  size_t qlen = q->qend > HDR ? q->qend - HDR : 0;
  if (addr && addr_len != 4 && addr_len != 16)
    return 0;
  size_t ans = addr && qlen ? 12 + addr_len : 0;
  if (cap < PR_DNS_MAX_REPLY || HDR + qlen + ans > cap)
    return 0;
  memset (out, 0, HDR);
  put16 (out, q->id);
  put16 (out + 2, (uint16_t) (QR | (q->flags & RD) | RA | (rcode & 0xf)));
  put16 (out + 4, qlen ? 1 : 0);
  put16 (out + 6, ans ? 1 : 0);
  memcpy (out + HDR, query + HDR, qlen);
  size_t n = HDR + qlen;
  if (ans)
    {
      uint8_t *a = out + n;
      put16 (a, 0xc000 | HDR); /* the question's name */
      put16 (a + 2, addr_len == 4 ? PR_DNS_TYPE_A : PR_DNS_TYPE_AAAA);
      put16 (a + 4, PR_DNS_CLASS_IN);
      put16 (a + 6, (uint16_t) (ttl >> 16));
      put16 (a + 8, (uint16_t) ttl);
      put16 (a + 10, (uint16_t) addr_len);
      memcpy (a + 12, addr, addr_len);
      n += ans;
    }
  return n;
}
