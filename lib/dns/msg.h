/*
 * DNS messages on the wire (RFC 1035 §4): a bounded reader that turns a
 * response into the SPF-facing struct spfkit_dns_answer, and a small
 * builder for queries (the tests add the fields of hostile responses).
 * Internal API; the c-ares backend and the tests use it.
 *
 * The reader trusts nothing: every length is checked against the end of
 * the message, compression pointers must go strictly backwards, and a
 * message that breaks a rule gives SPFKIT_DNS_TEMPFAIL with a static
 * detail text naming the rule ("malformed reply: ..."), never a crash.
 */
#ifndef SPFKIT_DNS_MSG_H
#define SPFKIT_DNS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/resolver.h>

#include "core.h"

/* Sizes and limits of RFC 1035 §2.3.4 and §4.1, and our own caps. */
#define SPFKIT__DNS_HDR_LEN 12u
#define SPFKIT__DNS_MSG_MAX 65535u   /* a TCP message length is 16 bits */
#define SPFKIT__DNS_LABEL_MAX 63u
#define SPFKIT__DNS_NAME_MAX 255u    /* wire octets, root label included */
#define SPFKIT__DNS_PTR_HOPS 128u    /* compression pointers followed per name */
#define SPFKIT__DNS_CNAME_MAX 16u    /* CNAME links followed inside one reply */
/* Presentation form of the longest name: every octet as \DDD. */
#define SPFKIT__DNS_TEXT_MAX (4u * SPFKIT__DNS_NAME_MAX + 1u)
/* Decoded output of one reply (names expand, TXT joins): a hard cap. */
#define SPFKIT__DNS_DECODED_MAX (1024u * 1024u)

/* Header flag bits (RFC 1035 §4.1.1; AD and CD from RFC 4035 §3.2). */
#define SPFKIT__DNS_F_QR 0x8000u
#define SPFKIT__DNS_F_OPCODE 0x7800u
#define SPFKIT__DNS_F_AA 0x0400u
#define SPFKIT__DNS_F_TC 0x0200u
#define SPFKIT__DNS_F_RD 0x0100u
#define SPFKIT__DNS_F_RA 0x0080u
#define SPFKIT__DNS_F_AD 0x0020u
#define SPFKIT__DNS_F_CD 0x0010u
#define SPFKIT__DNS_RCODE(flags) ((unsigned)(flags)&0x000fu)

enum spfkit__dns_rcode {
	SPFKIT__DNS_NOERROR = 0,
	SPFKIT__DNS_FORMERR = 1,
	SPFKIT__DNS_SERVFAIL = 2,
	SPFKIT__DNS_NXDOMAIN = 3,
	SPFKIT__DNS_NOTIMP = 4,
	SPFKIT__DNS_REFUSED = 5,
};

#define SPFKIT__DNS_CLASS_IN 1u
#define SPFKIT__DNS_TYPE_OPT 41u

struct spfkit__dns_hdr {
	uint16_t id;
	uint16_t flags; /* QR, opcode, AA, TC, RD, RA, AD, CD, rcode */
	uint16_t qdcount, ancount, nscount, arcount;
};

/*
 * A parsed reply. `answer` and everything it points to live in `arena`
 * until the next parse or spfkit__dns_reply_free().
 */
struct spfkit__dns_reply {
	struct spfkit_dns_answer answer;
	struct spfkit__dns_hdr hdr; /* valid when have_hdr */
	int have_hdr;
	int malformed;  /* 1 when the message broke a wire rule */
	size_t err_off; /* then: offset of the first bad byte */
	struct spfkit__arena arena;
};

void spfkit__dns_reply_init(struct spfkit__dns_reply *r, const struct spfkit_allocator *a);
void spfkit__dns_reply_free(struct spfkit__dns_reply *r);

/*
 * Read the response msg[0..len) to the question (qname, qtype). qname is
 * written as submit() takes it (resolver.h): raw label bytes joined by
 * '.', final dot optional, no escapes; the reply's question must carry
 * exactly those octets (ASCII case aside). NULL takes the question from
 * the message unchecked (fuzzing).
 *
 * Always fills r->answer:
 *  NOERROR with RRs of qtype at qname or along its CNAME chain: OK, ttl =
 *    the smallest TTL of those RRs and of the CNAMEs followed;
 *  NOERROR without: NODATA; NXDOMAIN: NXDOMAIN; both with ttl = the
 *    negative TTL min(SOA TTL, SOA MINIMUM) of RFC 2308 §5, or 0 when
 *    the authority section has no SOA;
 *  any other rcode, TC set, a question that does not match, a CNAME
 *    chain over SPFKIT__DNS_CNAME_MAX, a malformed message: TEMPFAIL,
 *    with a static detail text.
 * Returns 0; SPFKIT_EINVAL for a bad qname, SPFKIT_ENOMEM: the answer
 * is then a TEMPFAIL too ("invalid question name", "out of memory"), so
 * a backend can always deliver it.
 */
int spfkit__dns_reply_parse(struct spfkit__dns_reply *r, const void *msg, size_t len,
			    const char *qname, size_t qlen, uint16_t qtype);

/*
 * Names. Presentation text -> uncompressed wire form (labels, then the
 * root's zero): 0, or SPFKIT_EINVAL for an empty label, a label over 63
 * octets, a name over 255, a bad escape. "" and "." are the root.
 * `wire` holds SPFKIT__DNS_NAME_MAX bytes.
 */
int spfkit__dns_name_wire(const char *text, size_t len, unsigned char *wire, size_t *wlen);
/*
 * A question name as the resolver contract writes it (resolver.h): raw
 * label bytes joined by '.', final dot optional, no escapes ('\\' is a
 * label byte like any other). Same errors and `wire` size as above.
 */
int spfkit__dns_name_wire_raw(const char *name, size_t len, unsigned char *wire, size_t *wlen);
/*
 * Wire form (as produced above or by the reader) -> presentation text
 * without the final dot, NUL-terminated; "." and "\" and every byte
 * outside %x21-7E are written \DDD so the text reads back unchanged.
 * `text` holds SPFKIT__DNS_TEXT_MAX bytes. Returns the text length.
 */
size_t spfkit__dns_name_text(const unsigned char *wire, size_t wlen, char *text);

/* ---- builder (build.c) --------------------------------------------- */

/*
 * Writes a message field by field into a capped buffer. Errors stick
 * (like spfkit__buf): check spfkit__dnsb_err() once at the end. Counts
 * in the header are whatever the caller writes, so tests can lie: names,
 * records and TXT data of a response are the tests' own fields
 * (tests/support/dns_build.h).
 */
struct spfkit__dnsb {
	struct spfkit__buf buf;
	size_t rdlen_at; /* the tests' open RR's RDLENGTH offset, or SIZE_MAX */
};

void spfkit__dnsb_init(struct spfkit__dnsb *b, const struct spfkit_allocator *a, size_t max);
void spfkit__dnsb_free(struct spfkit__dnsb *b);
int spfkit__dnsb_err(const struct spfkit__dnsb *b);
const unsigned char *spfkit__dnsb_data(const struct spfkit__dnsb *b);
size_t spfkit__dnsb_len(const struct spfkit__dnsb *b);

void spfkit__dnsb_u8(struct spfkit__dnsb *b, unsigned v);
void spfkit__dnsb_u16(struct spfkit__dnsb *b, unsigned v);
void spfkit__dnsb_u32(struct spfkit__dnsb *b, uint32_t v);
void spfkit__dnsb_bytes(struct spfkit__dnsb *b, const void *p, size_t n);
void spfkit__dnsb_header(struct spfkit__dnsb *b, uint16_t id, uint16_t flags, uint16_t qd,
			 uint16_t an, uint16_t ns, uint16_t ar);
/* An OPT pseudo-RR (RFC 6891 §6.1.2) advertising `udp_size`. */
void spfkit__dnsb_opt(struct spfkit__dnsb *b, uint16_t udp_size);

/*
 * A whole recursive query for (name, type), name in the raw form of
 * spfkit__dns_name_wire_raw() (what submit() takes), id 0, with an OPT RR when
 * edns_udp_size > 0 (it is then the last 11 octets, as c-ares expects
 * when it retries without EDNS). 0, SPFKIT_EINVAL (bad name), or
 * SPFKIT_ENOMEM.
 */
int spfkit__dns_query(struct spfkit__dnsb *b, const char *name, size_t len, uint16_t type,
		      uint16_t edns_udp_size);

#endif
