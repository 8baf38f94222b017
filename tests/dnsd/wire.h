/*
 * DNS wire format for the test server and its tests (RFC 1035 §4, EDNS0
 * per RFC 6891). Test code, deliberately separate from lib/dns: the
 * server must not share its bugs with the reader it is used to test.
 *
 * Reading: dnsd_wire_parse() takes a whole message and checks every
 * length against the message end; names follow compression pointers,
 * which must point strictly backwards (so a loop cannot exist) and the
 * decoded name must fit in 255 bytes (RFC 1035 §3.1). Names come out in
 * presentation form without the final dot: "." "\\" and bytes outside
 * %x21-7E of a label are written as \DDD; the root is "". The question
 * name is also kept as its uncompressed wire form and as "raw" text
 * (label bytes as they are, joined by dots), the form the zone and the
 * RFC 7208 suite use for names such as "macro%percent  space.example".
 *
 * Writing: into a struct spfkit__buf whose cap is the message limit
 * (65535 for DNS), so an over-long answer fails with SPFKIT_E2BIG and
 * never writes past anything.
 */
#ifndef DNSD_WIRE_H
#define DNSD_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

#define DNSD_WIRE_MAX 65535u      /* a DNS message, RFC 1035 §4.2.2 (TCP length) */
#define DNSD_WIRE_HDR 12u         /* header size, RFC 1035 §4.1.1 */
#define DNSD_WIRE_UDP_MIN 512u    /* UDP payload without EDNS0, RFC 1035 §4.2.1 */
#define DNSD_WIRE_NAME_MAX 255u   /* wire length of a name, RFC 1035 §3.1 */
#define DNSD_WIRE_LABEL_MAX 63u
/* Presentation text of the longest name when every byte is \DDD. */
#define DNSD_WIRE_TEXT_MAX (4u * DNSD_WIRE_NAME_MAX)

/* Header flag bits (RFC 1035 §4.1.1, RFC 4035 §3.2 for AD/CD). */
#define DNSD_F_QR 0x8000u
#define DNSD_F_OPCODE 0x7800u
#define DNSD_F_AA 0x0400u
#define DNSD_F_TC 0x0200u
#define DNSD_F_RD 0x0100u
#define DNSD_F_RA 0x0080u
#define DNSD_F_RCODE 0x000fu

enum dnsd_rcode {
	DNSD_RCODE_NOERROR = 0,
	DNSD_RCODE_FORMERR = 1,
	DNSD_RCODE_SERVFAIL = 2,
	DNSD_RCODE_NXDOMAIN = 3,
	DNSD_RCODE_NOTIMP = 4,
	DNSD_RCODE_REFUSED = 5,
	DNSD_RCODE_BADVERS = 16, /* extended, carried half in the OPT RR (RFC 6891 §9) */
};

#define DNSD_TYPE_OPT 41u
#define DNSD_CLASS_IN 1u

struct dnsd_wire_hdr {
	uint16_t id, flags, qdcount, ancount, nscount, arcount;
};

/* One resource record as read: owner decoded, RDATA left in place. */
struct dnsd_wire_rr {
	char name[DNSD_WIRE_TEXT_MAX + 1];
	size_t name_len;
	uint16_t type, rclass;
	uint32_t ttl;
	size_t rdoff; /* offset of the RDATA in the message */
	size_t rdlen;
	int section;  /* 1 answer, 2 authority, 3 additional */
};

struct dnsd_wire_msg {
	struct dnsd_wire_hdr h;
	int has_question; /* qdcount >= 1: the first question is below */
	char qname[DNSD_WIRE_TEXT_MAX + 1]; /* presentation form */
	size_t qname_len;
	unsigned char qwire[DNSD_WIRE_NAME_MAX]; /* uncompressed wire form */
	size_t qwire_len;
	char qraw[DNSD_WIRE_NAME_MAX + 1];       /* raw text, NUL-ended (may hold NULs) */
	size_t qraw_len;
	uint16_t qtype, qclass;
	int has_opt;        /* an OPT RR was in the additional section */
	uint16_t udp_size;  /* its CLASS field: the sender's UDP payload size */
	uint8_t edns_version;
	uint8_t ext_rcode;  /* upper 8 bits of the 12-bit rcode */
	size_t nrr;         /* records stored into the caller's array */
	size_t end;         /* offset after the last byte parsed */
	const char *why;    /* static text: what was wrong, on error */
	size_t err_off;     /* where */
};

/*
 * Parse a whole message. Every question is read (only the first kept);
 * every record of the three sections is read and, up to `max`, stored
 * into rrs (NULL with max 0 to skip storing). Bytes after the last
 * record are an error, like records missing against the counts.
 * 0, or SPFKIT_ESYNTAX with m->why / m->err_off set.
 */
int dnsd_wire_parse(const unsigned char *msg, size_t len, struct dnsd_wire_msg *m,
		    struct dnsd_wire_rr *rrs, size_t max);

/*
 * Read one (possibly compressed) name at *off in msg; *off moves past
 * it in the place it was found. out gets presentation text, NUL-ended,
 * out_size >= DNSD_WIRE_TEXT_MAX + 1. 0, or SPFKIT_ESYNTAX with *why.
 */
int dnsd_wire_read_name(const unsigned char *msg, size_t len, size_t *off, char *out,
			size_t out_size, size_t *out_len, const char **why);

/*
 * The same walk, giving the uncompressed wire form (wire has room for
 * DNSD_WIRE_NAME_MAX bytes). 0, or SPFKIT_ESYNTAX with *why.
 */
int dnsd_wire_read_wire(const unsigned char *msg, size_t len, size_t *off, unsigned char *wire,
			size_t *wire_len, const char **why);
/* Presentation text -> wire form, as dnsd_wire_put_name(); wire holds 255 bytes. */
int dnsd_wire_name_from_text(const char *text, size_t len, unsigned char *wire, size_t *wire_len);

/* Big-endian loads; the caller has checked the bounds. */
uint16_t dnsd_wire_get16(const unsigned char *p);
uint32_t dnsd_wire_get32(const unsigned char *p);

/* ---- writing ------------------------------------------------------- */

int dnsd_wire_put8(struct spfkit__buf *b, unsigned v);
int dnsd_wire_put16(struct spfkit__buf *b, unsigned v);
int dnsd_wire_put32(struct spfkit__buf *b, uint32_t v);
/* Overwrite 2 bytes at off (< b->len - 1): counts, RDLENGTH. */
void dnsd_wire_set16(struct spfkit__buf *b, size_t off, unsigned v);
int dnsd_wire_put_header(struct spfkit__buf *b, const struct dnsd_wire_hdr *h);
/*
 * Presentation text -> uncompressed wire name. Accepts \DDD and \X
 * escapes, an optional final dot, "" or "." for the root. SPFKIT_EINVAL
 * for an empty label, a label over 63 or a name over 255 bytes, a bad
 * escape; SPFKIT_E2BIG / SPFKIT_ENOMEM from the buffer.
 */
int dnsd_wire_put_name(struct spfkit__buf *b, const char *text, size_t len);
/*
 * A name as the zone holds it and resolver.h writes it: raw label bytes
 * joined by '.', no escapes ('\\' is a label byte). Same errors.
 */
int dnsd_wire_put_raw_name(struct spfkit__buf *b, const char *name, size_t len);
int dnsd_wire_put_question(struct spfkit__buf *b, const char *name, size_t len, uint16_t type,
			   uint16_t qclass);
/*
 * Start a record whose owner is the compression pointer `owner_ptr`
 * (e.g. 12, the question name), RDLENGTH left 0; returns its offset in
 * *rdlen_off for dnsd_wire_rr_end() to patch.
 */
int dnsd_wire_rr_begin(struct spfkit__buf *b, unsigned owner_ptr, uint16_t type, uint16_t rclass,
		       uint32_t ttl, size_t *rdlen_off);
/* Patch RDLENGTH from the bytes written since begin; E2BIG past 65535. */
int dnsd_wire_rr_end(struct spfkit__buf *b, size_t rdlen_off);
/* TXT RDATA: data cut into character-strings of at most 255 bytes (RFC 1035 §3.3.14). */
int dnsd_wire_put_txt(struct spfkit__buf *b, const unsigned char *data, size_t len);
/* An OPT pseudo-RR (RFC 6891 §6.1.2): root owner, no options. */
int dnsd_wire_put_opt(struct spfkit__buf *b, uint16_t udp_size, uint8_t ext_rcode,
		      uint8_t version);

/* "A", "TXT", ... or NULL for a type this server has no name for. */
const char *dnsd_wire_type_name(uint16_t type);
/* Mnemonic (any case) or decimal 1-65535 -> type; 0 on success, else SPFKIT_EINVAL. */
int dnsd_wire_type_parse(const char *s, size_t len, uint16_t *type);

#endif
