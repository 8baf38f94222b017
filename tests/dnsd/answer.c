/*
 * Building the response to one parsed query, from the zone and the fault
 * chosen for it. Pure: no sockets, no clock, no locking (the caller holds
 * the lock that keeps the zone alive).
 */
#include <string.h>

#include <spfkit/resolver.h>
#include <spfkit/zone.h>

#include "dnsd_impl.h"

/* The SOA names of negative answers; .invalid never clashes with test data. */
static const char soa_mname[] = "dnsd.invalid";
static const char soa_rname[] = "hostmaster.dnsd.invalid";

unsigned dnsd__reply_flags(const struct dnsd_wire_msg *q, unsigned rcode)
{
	return DNSD_F_QR | DNSD_F_AA | DNSD_F_RA | (q->h.flags & (DNSD_F_RD | DNSD_F_OPCODE)) |
	       (rcode & DNSD_F_RCODE);
}

int dnsd__put_head(struct spfkit__buf *b, const struct dnsd_wire_msg *q, unsigned flags,
		   unsigned an, unsigned ns)
{
	struct dnsd_wire_hdr h = { q->h.id, (uint16_t)flags, (uint16_t)(q->has_question ? 1 : 0),
				   (uint16_t)an, (uint16_t)ns, (uint16_t)(q->has_opt ? 1 : 0) };

	spfkit__buf_reset(b);
	dnsd_wire_put_header(b, &h);
	if (q->has_question) { /* the name's bytes as asked: case and all (DNS 0x20) */
		spfkit__buf_append(b, q->qwire, q->qwire_len);
		dnsd_wire_put16(b, q->qtype);
		dnsd_wire_put16(b, q->qclass);
	}
	return b->err;
}

/* RFC 6891 §7: a responder answers an OPT with an OPT. */
static int put_opt(struct spfkit__buf *b, const struct dnsd_wire_msg *q, unsigned rcode)
{
	if (!q->has_opt)
		return b->err;
	return dnsd_wire_put_opt(b, DNSD_EDNS_SIZE, (uint8_t)(rcode >> 4), 0);
}

/* Header, question and OPT, no records: SERVFAIL, FORMERR, TC=1 ... */
int dnsd__reply_empty(struct spfkit__buf *b, const struct dnsd_wire_msg *q, unsigned rcode,
		      unsigned extra_flags)
{
	dnsd__put_head(b, q, dnsd__reply_flags(q, rcode) | extra_flags, 0, 0);
	return put_opt(b, q, rcode);
}

/* Owner of the SOA: the last two labels of the question (an ancestor of it). */
static size_t soa_owner(const unsigned char *wire)
{
	size_t i = 0, prev = 0, prev2 = 0;

	while (wire[i] != 0) {
		prev2 = prev;
		prev = i;
		i += wire[i] + 1u;
	}
	return prev == 0 ? 0 : prev2;
}

static int put_soa(struct spfkit__buf *b, const struct dnsd_wire_msg *q, uint32_t ttl)
{
	size_t start = soa_owner(q->qwire), rdlen_off;

	spfkit__buf_append(b, q->qwire + start, q->qwire_len - start);
	dnsd_wire_put16(b, SPFKIT_RR_SOA);
	dnsd_wire_put16(b, DNSD_CLASS_IN);
	dnsd_wire_put32(b, ttl);
	rdlen_off = b->len;
	dnsd_wire_put16(b, 0);
	dnsd_wire_put_name(b, soa_mname, sizeof(soa_mname) - 1);
	dnsd_wire_put_name(b, soa_rname, sizeof(soa_rname) - 1);
	dnsd_wire_put32(b, 1);     /* serial */
	dnsd_wire_put32(b, 3600);  /* refresh */
	dnsd_wire_put32(b, 600);   /* retry */
	dnsd_wire_put32(b, 86400); /* expire */
	dnsd_wire_put32(b, ttl);   /* minimum: the negative TTL, RFC 2308 §4 */
	return dnsd_wire_rr_end(b, rdlen_off);
}

/* RDATA of one record, from the zone's form (include/spfkit/resolver.h). */
static int put_rdata(struct spfkit__buf *b, const struct spfkit_dns_rr *rr,
		     enum dnsd_action action)
{
	switch (rr->type) {
	case SPFKIT_RR_A:
	case SPFKIT_RR_AAAA:
		if (rr->len != (rr->type == SPFKIT_RR_A ? 4u : 16u))
			return SPFKIT_EINVAL;
		return spfkit__buf_append(b, rr->data, rr->len);
	/* The zone holds target names as raw label bytes: a '\\' in one is
	 * data, not an escape (resolver.h). */
	case SPFKIT_RR_MX:
		dnsd_wire_put16(b, rr->pref);
		return dnsd_wire_put_raw_name(b, (const char *)rr->data, rr->len);
	case SPFKIT_RR_PTR:
	case SPFKIT_RR_CNAME:
		return dnsd_wire_put_raw_name(b, (const char *)rr->data, rr->len);
	case SPFKIT_RR_TXT:
	case SPFKIT_RR_SPF:
		return dnsd__put_txt(b, rr->data, rr->len, action);
	case SPFKIT_RR_TXT_STRINGS: /* the strings as the zone file wrote them */
		return spfkit__buf_append(b, rr->data, rr->len);
	default:
		return spfkit__buf_append(b, rr->data, rr->len);
	}
}

static int put_records(struct spfkit__buf *b, const struct spfkit_dns_answer *a,
		       enum dnsd_action action)
{
	size_t i, rdlen_off;
	int rc;

	for (i = 0; i < a->count; i++) {
		const struct spfkit_dns_rr *rr = &a->rrs[i];

		dnsd_wire_rr_begin(b, DNSD_WIRE_HDR,
				   rr->type == SPFKIT_RR_TXT_STRINGS ? SPFKIT_RR_TXT : rr->type,
				   DNSD_CLASS_IN, rr->ttl, &rdlen_off);
		rc = put_rdata(b, rr, action);
		if (rc == 0)
			rc = dnsd_wire_rr_end(b, rdlen_off);
		if (rc != 0)
			return rc;
	}
	return b->err;
}

/* The whole answer for a zone outcome other than TEMPFAIL. */
static int encode_zone_answer(struct spfkit__buf *b, const struct dnsd_wire_msg *q,
			      const struct spfkit_dns_answer *a, const struct dnsd_reply_in *in)
{
	int positive = a->status == SPFKIT_DNS_OK && a->count > 0;
	unsigned rcode = a->status == SPFKIT_DNS_NXDOMAIN ? DNSD_RCODE_NXDOMAIN : DNSD_RCODE_NOERROR;
	int rc;

	if (a->count > 0xffff)
		return SPFKIT_E2BIG;
	dnsd__put_head(b, q, dnsd__reply_flags(q, rcode), positive ? (unsigned)a->count : 0,
		       positive ? 0 : 1);
	rc = positive ? put_records(b, a, in->action) : put_soa(b, q, in->neg_ttl);
	if (rc != 0)
		return rc;
	return put_opt(b, q, rcode);
}

static int udp_limit(const struct dnsd_wire_msg *q)
{
	if (q->has_opt && q->udp_size > DNSD_WIRE_UDP_MIN)
		return q->udp_size;
	return DNSD_WIRE_UDP_MIN; /* RFC 6891 §6.2.5: below 512 counts as 512 */
}

/*
 * Look the question up and encode it. Returns DNSD_SEND, DNSD_SILENT
 * (the zone says "timeout") or a negative error for the caller to turn
 * into SERVFAIL.
 */
int dnsd__zone_reply(struct spfkit__buf *b, const struct dnsd_reply_in *in,
		     const struct dnsd_wire_msg *q)
{
	struct spfkit_dns_answer a;
	uint16_t ask = in->q->qtype;
	int rc;

	memset(&a, 0, sizeof(a));
	if (in->zone == NULL)
		return SPFKIT_ESTATE;
	/* TXT goes out split as the zone file wrote it, unless a hostile
	 * action reshapes the strings itself */
	if (ask == SPFKIT_RR_TXT && in->action < DNSD_TXT_NO_STRINGS)
		ask = SPFKIT_RR_TXT_STRINGS;
	/* Raw text: the zone keys names by their bytes, escapes uninterpreted. */
	if (spfkit_zone_lookup(in->zone, in->q->qraw, in->q->qraw_len, ask, &a) != 0) {
		dnsd__reply_empty(b, q, DNSD_RCODE_REFUSED, 0); /* a name the zone cannot hold */
		return b->err ? b->err : DNSD_SEND;
	}
	if (a.status == SPFKIT_DNS_TEMPFAIL)
		return DNSD_SILENT;
	rc = encode_zone_answer(b, q, &a, in);
	if (rc == SPFKIT_E2BIG && !in->tcp)
		return DNSD_TRUNC; /* over 64 KiB: TC=1, and TCP will say SERVFAIL */
	if (rc != 0)
		return rc;
	if (!in->tcp && b->len > (size_t)udp_limit(q))
		return DNSD_TRUNC;
	return DNSD_SEND;
}

/* ---- malformed answers ---------------------------------------------- */

/* One A record whose owner name is a pointer to itself. */
static void mal_loop(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	size_t self;

	dnsd__put_head(b, q, dnsd__reply_flags(q, 0), 1, 0);
	self = b->len;
	dnsd_wire_put16(b, 0xc000u | (unsigned)(self & 0x3fff));
	dnsd_wire_put16(b, SPFKIT_RR_A);
	dnsd_wire_put16(b, DNSD_CLASS_IN);
	dnsd_wire_put32(b, 300);
	dnsd_wire_put16(b, 4);
	dnsd_wire_put32(b, 0xc0000201u); /* 192.0.2.1 */
}

/* One A record that claims 200 bytes of RDATA and has 4. */
static void mal_past_end(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	size_t rdlen_off;

	dnsd__put_head(b, q, dnsd__reply_flags(q, 0), 1, 0);
	dnsd_wire_rr_begin(b, DNSD_WIRE_HDR, SPFKIT_RR_A, DNSD_CLASS_IN, 300, &rdlen_off);
	dnsd_wire_put32(b, 0xc0000201u);
	if (!b->err)
		dnsd_wire_set16(b, rdlen_off, 200);
}

/* The first 7 bytes of a header: id, flags, QDCOUNT and half of ANCOUNT. */
static void mal_short(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	spfkit__buf_reset(b);
	dnsd_wire_put16(b, q->h.id);
	dnsd_wire_put16(b, dnsd__reply_flags(q, 0));
	dnsd_wire_put16(b, 1);
	dnsd_wire_put8(b, 0);
}

/* The right id, then noise (xorshift32 seeded by the id: reproducible). */
static void mal_garbage(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	uint32_t x = 0x9e3779b9u ^ q->h.id;
	int i;

	spfkit__buf_reset(b);
	dnsd_wire_put16(b, q->h.id);
	for (i = 0; i < 62; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		dnsd_wire_put8(b, x & 0xff);
	}
}

static int mal_reply(struct spfkit__buf *b, const struct dnsd_reply_in *in)
{
	static const char wrong[] = "wrong-question.invalid";
	struct dnsd_wire_msg other;
	int rc;

	switch (in->action) {
	case DNSD_MAL_LOOP:
		mal_loop(b, in->q);
		break;
	case DNSD_MAL_PAST_END:
		mal_past_end(b, in->q);
		break;
	case DNSD_MAL_SHORT:
		mal_short(b, in->q);
		break;
	case DNSD_MAL_GARBAGE:
		mal_garbage(b, in->q);
		break;
	case DNSD_MAL_BAD_ID:
		rc = dnsd__zone_reply(b, in, in->q);
		if (rc == DNSD_SEND)
			dnsd_wire_set16(b, 0, in->q->h.id ^ 0xffffu);
		return rc;
	default: /* DNSD_MAL_WRONG_QUESTION: the records owned by the name in the question */
		other = *in->q;
		if (dnsd_wire_name_from_text(wrong, sizeof(wrong) - 1, other.qwire, &other.qwire_len))
			return SPFKIT_EINVAL;
		return dnsd__zone_reply(b, in, &other);
	}
	return b->err ? b->err : DNSD_SEND;
}

static int build_reply(struct spfkit__buf *b, const struct dnsd_reply_in *in)
{
	const struct dnsd_wire_msg *q = in->q;
	int rc;

	switch (in->action) {
	case DNSD_TIMEOUT:
		return DNSD_SILENT;
	case DNSD_SERVFAIL:
		rc = dnsd__reply_empty(b, q, DNSD_RCODE_SERVFAIL, 0);
		return rc ? rc : DNSD_SEND;
	case DNSD_TRUNCATE:
		if (!in->tcp)
			return DNSD_TRUNC;
		rc = dnsd__zone_reply(b, in, q);
		break;
	case DNSD_ANSWER:
		rc = dnsd__zone_reply(b, in, q);
		break;
	default:
		rc = in->action >= DNSD_TXT_NO_STRINGS ? dnsd__hostile(b, in) : mal_reply(b, in);
		break;
	}
	return rc;
}

/*
 * Everything before the zone: a query this server will not look up.
 * RFC 6891 §6.1.3: an unknown EDNS version gets BADVERS.
 */
static int precheck(struct spfkit__buf *b, const struct dnsd_wire_msg *q)
{
	unsigned opcode = (q->h.flags & DNSD_F_OPCODE) >> 11;

	if (opcode != 0)
		return dnsd__reply_empty(b, q, DNSD_RCODE_NOTIMP, 0) ? SPFKIT_E2BIG : DNSD_SEND;
	if (q->has_opt && q->edns_version > 0)
		return dnsd__reply_empty(b, q, DNSD_RCODE_BADVERS, 0) ? SPFKIT_E2BIG : DNSD_SEND;
	if (q->h.qdcount != 1)
		return dnsd__reply_empty(b, q, DNSD_RCODE_FORMERR, 0) ? SPFKIT_E2BIG : DNSD_SEND;
	if (q->qclass != DNSD_CLASS_IN)
		return dnsd__reply_empty(b, q, DNSD_RCODE_REFUSED, 0) ? SPFKIT_E2BIG : DNSD_SEND;
	return DNSD_GO;
}

static int finish(struct spfkit__buf *b, const struct dnsd_reply_in *in, int rc)
{
	if (rc == DNSD_TRUNC) {
		rc = dnsd__reply_empty(b, in->q, DNSD_RCODE_NOERROR, DNSD_F_TC);
		return rc ? rc : DNSD_TRUNC;
	}
	if (rc < 0) {
		rc = dnsd__reply_empty(b, in->q, DNSD_RCODE_SERVFAIL, 0);
		return rc ? rc : DNSD_SEND;
	}
	return rc;
}

int dnsd__respond(struct spfkit__buf *b, const struct dnsd_reply_in *in)
{
	int rc = precheck(b, in->q);

	if (rc != DNSD_GO)
		return rc;
	return finish(b, in, build_reply(b, in));
}
