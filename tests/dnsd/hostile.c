/*
 * The hostile answers (issue 7): the forms other servers send that our
 * zone-driven encoder would not (a TXT with no strings, empty strings),
 * CNAME loops and over-long chains, compression tricks, truncation
 * without TCP relief, a datagram cut short, and seeded random
 * corruption. Pure, like answer.c: no sockets, no clock, no locking.
 *
 * Every owner and CNAME target here lies under dnsd.invalid (RFC 2606
 * §2), so no test data can ever clash with them.
 */
#include <stdio.h>
#include <string.h>

#include <spfkit/resolver.h>

#include "dnsd_impl.h"

#define OPT_RR_LEN 11u /* root owner, type, class, ttl, rdlength 0 */

/* ---- TXT forms ---------------------------------------------------------- */

/* "" then each string of at most 255 bytes followed by "": the same text once joined. */
static int put_txt_with_empties(struct spfkit__buf *b, const unsigned char *data, size_t len)
{
	size_t off = 0;

	dnsd_wire_put8(b, 0);
	while (off < len) {
		size_t n = len - off > 255 ? 255 : len - off;

		dnsd_wire_put8(b, (unsigned)n);
		spfkit__buf_append(b, data + off, n);
		dnsd_wire_put8(b, 0);
		off += n;
	}
	return b->err;
}

int dnsd__put_txt(struct spfkit__buf *b, const unsigned char *data, size_t len,
		  enum dnsd_action action)
{
	/* RFC 1035 §3.3.14 asks for one string or more; real servers still
	 * send RDLENGTH 0 for a TXT with no strings (the RFC 7208 suite's
	 * `SPF: [ ]`, as dnspython encodes it). */
	if (action == DNSD_TXT_NO_STRINGS && len == 0)
		return b->err;
	if (action == DNSD_TXT_EMPTY_STRINGS)
		return put_txt_with_empties(b, data, len);
	return dnsd_wire_put_txt(b, data, len);
}

/* ---- CNAME trouble ------------------------------------------------------- */

/* A CNAME owned by the name at owner_off whose target is `target`; returns the target's offset. */
static size_t put_cname(struct spfkit__buf *b, unsigned owner_off, const char *target)
{
	size_t rdlen_off, at;

	dnsd_wire_rr_begin(b, owner_off, SPFKIT_RR_CNAME, DNSD_CLASS_IN, 300, &rdlen_off);
	at = b->len;
	dnsd_wire_put_name(b, target, strlen(target));
	dnsd_wire_rr_end(b, rdlen_off);
	return at;
}

/* name CNAME loop.dnsd.invalid, loop.dnsd.invalid CNAME name (RFC 1034 §3.6.2 forbids it). */
static void cname_loop(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	size_t mid, rdlen_off;

	dnsd__put_head(b, q, dnsd__reply_flags(q, DNSD_RCODE_NOERROR), 2, 0);
	mid = put_cname(b, DNSD_WIRE_HDR, "loop.dnsd.invalid");
	dnsd_wire_rr_begin(b, (unsigned)mid, SPFKIT_RR_CNAME, DNSD_CLASS_IN, 300, &rdlen_off);
	dnsd_wire_put16(b, 0xc000u | DNSD_WIRE_HDR); /* back to the question name */
	dnsd_wire_rr_end(b, rdlen_off);
}

/* name -> c1 -> ... -> cN, then an A record at cN: a chain no client should follow to its end. */
static void cname_chain(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	char target[32];
	size_t owner = DNSD_WIRE_HDR, rdlen_off;
	unsigned i;

	dnsd__put_head(b, q, dnsd__reply_flags(q, DNSD_RCODE_NOERROR), DNSD_CNAME_CHAIN + 1, 0);
	for (i = 1; i <= DNSD_CNAME_CHAIN; i++) {
		snprintf(target, sizeof(target), "c%u.dnsd.invalid", i);
		owner = put_cname(b, (unsigned)owner, target);
	}
	dnsd_wire_rr_begin(b, (unsigned)owner, SPFKIT_RR_A, DNSD_CLASS_IN, 300, &rdlen_off);
	dnsd_wire_put32(b, 0xc0000201u); /* 192.0.2.1 */
	dnsd_wire_rr_end(b, rdlen_off);
}

/* ---- compression tricks (RFC 1035 §4.1.4: a pointer names a *prior* occurrence) ---- */

/* A record with the owner's 2-byte pointer (or label + pointer) already written. */
static void put_a_rest(struct spfkit__buf *b, uint32_t addr)
{
	dnsd_wire_put16(b, SPFKIT_RR_A);
	dnsd_wire_put16(b, DNSD_CLASS_IN);
	dnsd_wire_put32(b, 300);
	dnsd_wire_put16(b, 4);
	dnsd_wire_put32(b, addr);
}

/*
 * Two A records: the first owned by a pointer forward to the second's
 * owner, the question name written out. A reader that follows forward
 * pointers takes 192.0.2.1 as an address of the name.
 */
static void ptr_forward(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	size_t second;

	dnsd__put_head(b, q, dnsd__reply_flags(q, DNSD_RCODE_NOERROR), 2, 0);
	second = b->len + 2 + 10 + 4; /* after this record */
	dnsd_wire_put16(b, 0xc000u | (unsigned)(second & 0x3fffu));
	put_a_rest(b, 0xc0000201u);
	spfkit__buf_append(b, q->qwire, q->qwire_len);
	put_a_rest(b, 0xc0000202u);
}

/* Owner one is label "x" then a pointer to owner two, which points back at owner one. */
static void ptr_loop2(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	size_t first, second;

	dnsd__put_head(b, q, dnsd__reply_flags(q, DNSD_RCODE_NOERROR), 2, 0);
	first = b->len;
	second = first + 4 + 10 + 4;
	dnsd_wire_put8(b, 1);
	dnsd_wire_put8(b, 'x');
	dnsd_wire_put16(b, 0xc000u | (unsigned)(second & 0x3fffu));
	put_a_rest(b, 0xc0000201u);
	dnsd_wire_put16(b, 0xc000u | (unsigned)(first & 0x3fffu));
	put_a_rest(b, 0xc0000202u);
}

/* An A record whose owner points at offset 0x3fff, far past the end. */
static void ptr_beyond(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	dnsd__put_head(b, q, dnsd__reply_flags(q, DNSD_RCODE_NOERROR), 1, 0);
	dnsd_wire_put16(b, 0xffffu);
	put_a_rest(b, 0xc0000201u);
}

/* ---- cut and corrupted answers -------------------------------------------- */

/* Offset just after the question that dnsd__put_head() wrote for q. */
static size_t question_end(const struct dnsd_wire_msg *q)
{
	return DNSD_WIRE_HDR + q->qwire_len + 4u;
}

/*
 * A datagram cut short, as a broken middlebox leaves it: the OPT RR
 * (always last here) and the last byte of the record before it gone,
 * TC still 0. Over TCP the answer goes whole.
 */
static void cut(struct spfkit__buf *b, const struct dnsd_reply_in *in)
{
	size_t drop = (in->q->has_opt ? OPT_RR_LEN : 0) + 1;

	if (!in->tcp && b->len >= question_end(in->q) + drop)
		b->len -= drop;
}

static uint32_t xorshift32(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* FNV-1a over the seed, the question name as asked and the type: never the id. */
static uint32_t corrupt_state(uint32_t seed, const struct dnsd_wire_msg *q)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < 4; i++)
		h = (h ^ ((seed >> (8 * i)) & 0xffu)) * 16777619u;
	for (i = 0; i < q->qwire_len; i++)
		h = (h ^ q->qwire[i]) * 16777619u;
	h = (h ^ (q->qtype >> 8)) * 16777619u;
	h = (h ^ (q->qtype & 0xffu)) * 16777619u;
	return h != 0 ? h : 0x9e3779b9u;
}

/*
 * Change 1 to 8 bytes among the flags, the counts and everything after
 * the question; one time in four, cut the message somewhere after the
 * question. The id and the question stay, so a client takes the answer
 * as its own and has to read it.
 */
static void corrupt(struct spfkit__buf *b, const struct dnsd_reply_in *in)
{
	uint32_t x = corrupt_state(in->seed, in->q);
	size_t qend = question_end(in->q), span, pos, n, i;
	unsigned char *p = (unsigned char *)b->data;

	if (b->len < qend)
		return;
	span = (DNSD_WIRE_HDR - 2) + (b->len - qend);
	n = 1 + xorshift32(&x) % 8;
	for (i = 0; i < n && span > 0; i++) {
		pos = xorshift32(&x) % span;
		pos = pos < DNSD_WIRE_HDR - 2 ? pos + 2 : qend + (pos - (DNSD_WIRE_HDR - 2));
		p[pos] ^= (unsigned char)(1 + xorshift32(&x) % 255);
	}
	if (xorshift32(&x) % 4 == 0 && b->len > qend)
		b->len = qend + xorshift32(&x) % (b->len - qend);
}

/* The zone's answer, then `change` applied when there is one to change. */
static int altered(struct spfkit__buf *b, const struct dnsd_reply_in *in,
		   void (*change)(struct spfkit__buf *, const struct dnsd_reply_in *))
{
	int rc = dnsd__zone_reply(b, in, in->q);

	if (rc == DNSD_SEND)
		change(b, in);
	return rc;
}

int dnsd__hostile(struct spfkit__buf *b, const struct dnsd_reply_in *in)
{
	switch (in->action) {
	case DNSD_TXT_NO_STRINGS:
	case DNSD_TXT_EMPTY_STRINGS:
		return dnsd__zone_reply(b, in, in->q); /* put_rdata asks dnsd__put_txt */
	case DNSD_MAL_CNAME_LOOP:
		cname_loop(b, in->q);
		break;
	case DNSD_MAL_CNAME_CHAIN:
		cname_chain(b, in->q);
		break;
	case DNSD_MAL_PTR_FORWARD:
		ptr_forward(b, in->q);
		break;
	case DNSD_MAL_PTR_LOOP2:
		ptr_loop2(b, in->q);
		break;
	case DNSD_MAL_PTR_BEYOND:
		ptr_beyond(b, in->q);
		break;
	case DNSD_MAL_TC_ALWAYS:
		return DNSD_TRUNC;
	case DNSD_MAL_CUT:
		return altered(b, in, cut);
	case DNSD_MAL_CORRUPT:
		return altered(b, in, corrupt);
	default:
		return SPFKIT_EINVAL;
	}
	if (in->q->has_opt) /* RFC 6891 §7: the header counted it */
		dnsd_wire_put_opt(b, DNSD_EDNS_SIZE, 0, 0);
	return b->err ? b->err : DNSD_SEND;
}
