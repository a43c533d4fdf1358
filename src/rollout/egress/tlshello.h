/* tlshello.h - TLS ClientHello parser for the egress proxy: finds the
 * server name (SNI) a client asks for at the start of a CONNECT tunnel to
 * port 443, so the tunnel goes only to the host the request named.  Pure
 * functions over byte buffers (no I/O, no globals), unit-tested and fuzzed
 * like reqhead.h.
 * Source: RFC 8446 sections 4.1.2 (ClientHello), 4.2 (extensions, no
 * duplicates) and 5.1 (record layer, fragmentation); RFC 5246 section
 * 7.4.1.2 (TLS 1.2 ClientHello, extensions optional); RFC 6066 section 3
 * (server_name: one host_name, no IP literals); draft-ietf-tls-esni
 * (encrypted_client_hello, 0xfe0d). */
#ifndef PROCTOR_EGRESS_TLSHELLO_H
#define PROCTOR_EGRESS_TLSHELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reqhead.h"

/* The most ClientHello bytes (handshake message, all records) read: real
 * hellos are 200 bytes to ~2 KiB (post-quantum key shares included). */
#define PR_TLSHELLO_MAX_BYTES 16384
/* The most input read while looking for it: the hello plus the 5-byte
 * headers of the records it may be split into. */
#define PR_TLSHELLO_MAX_INPUT (PR_TLSHELLO_MAX_BYTES + 5 * 64)

enum pr_tlshello_status
{
  PR_TLSHELLO_OK = 1,      /* complete and well-formed: see struct pr_tlshello */
  PR_TLSHELLO_MORE = 0,    /* well-formed so far; not complete yet */
  PR_TLSHELLO_NOT_TLS = -1, /* the bytes do not start a TLS handshake record */
  PR_TLSHELLO_BAD = -2,    /* a malformed or oversized ClientHello */
};

struct pr_tlshello
{
  bool has_sni;
  char sni[PR_REQHEAD_MAX_HOST + 1]; /* lower-case, no trailing dot */
  bool encrypted;                    /* carries encrypted_client_hello (or the older ESNI): the name is hidden */
  size_t len;                        /* input bytes up to the end of the record that completes the hello */
};

/* Parses the start of a client's byte stream buf[0..len).  Returns a
 * status above; for OK fills *out; for NOT_TLS and BAD sets *reason to a
 * static one-line explanation.  BAD: a record other than handshake or of
 * a length 0 or over 2^14, a first handshake message other than
 * client_hello, a hello over PR_TLSHELLO_MAX_BYTES (or no hello within
 * PR_TLSHELLO_MAX_INPUT bytes), fields that overrun their vector, a
 * repeated extension, a server_name extension without exactly one valid
 * host name (an IP literal is not one), or bytes after the extensions. */
int pr_tlshello_parse (const uint8_t *buf, size_t len, struct pr_tlshello *out, const char **reason);

#endif
