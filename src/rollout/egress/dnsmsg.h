/* dnsmsg.h - the one DNS message shape the transparent resolver answers
 * (transparent.c): a standard query with one question, parsed strictly,
 * and the reply to it (an address record, no data, or an error code).
 * Pure functions on byte buffers, fuzzed by tests/fuzz/fuzz_dnsmsg.c.
 * Source: RFC 1035 section 4 (message format), RFC 6891 (an OPT record in
 * the additional section is skipped, never echoed). */
#ifndef PROCTOR_DNSMSG_H
#define PROCTOR_DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define PR_DNS_TYPE_A 1
#define PR_DNS_TYPE_AAAA 28
#define PR_DNS_CLASS_IN 1
#define PR_DNS_RCODE_FORMERR 1
#define PR_DNS_RCODE_NXDOMAIN 3
#define PR_DNS_RCODE_NOTIMP 4
#define PR_DNS_RCODE_REFUSED 5
#define PR_DNS_MAX_NAME 253
/* Replies never exceed the 512 bytes every client accepts over UDP. */
#define PR_DNS_MAX_REPLY 512

struct pr_dnsq
{
  uint16_t id;
  uint16_t flags;                    /* the query's header flags */
  char name[PR_DNS_MAX_NAME + 1];    /* lower-cased, dotted, no trailing dot; "" for the root */
  uint16_t qtype, qclass;
  size_t qend;                       /* offset just past the question */
};

/* Parses the query of len bytes in buf into *q.  Returns 0 for a standard
 * query (QR clear, opcode 0) with exactly one question, no answer or
 * authority records, and a name of uncompressed labels of letters, digits,
 * '-' and '_' (1-63 bytes each, at most 253 in all); an rcode
 * (PR_DNS_RCODE_FORMERR, PR_DNS_RCODE_NOTIMP for another opcode) when the
 * header is readable but the rest is not what a resolver asks (q->id and
 * q->flags are then set, q->qend is 0); -1 when the message is shorter
 * than a header or is itself a reply (QR set): no answer at all, so two
 * resolvers cannot be made to echo each other. */
int pr_dnsmsg_parse_query (const uint8_t *buf, size_t len, struct pr_dnsq *q);

/* Writes the reply to query (the bytes parsed into q) into out (cap bytes,
 * at least PR_DNS_MAX_REPLY): the id, RD copied, QR, RA, rcode, the
 * question copied when q->qend is set, and one answer record for the
 * question's name when addr is not NULL (addr_len 4: type A; 16: AAAA;
 * TTL ttl seconds).  Returns the reply's length, or 0 when cap is too
 * small. */
size_t pr_dnsmsg_reply (const uint8_t *query, const struct pr_dnsq *q, int rcode, const uint8_t *addr, size_t addr_len,
                        uint32_t ttl, uint8_t *out, size_t cap);

#endif
