/*
 * The DNS response reader (RFC 1035 §4.1). One spfkit__cur walks the
 * message; its base is the first header byte, so every offset is a
 * message offset. A broken rule fails the cursor with a static reason,
 * later reads do nothing, and the caller turns the reason into a
 * TEMPFAIL detail. Nothing is trusted: counts, label lengths, pointers
 * and RDLENGTHs are all checked against the end of the message.
 */
#include <string.h>

#include <spfkit/reason.h>

#include "msg.h"

/* Where one RR of the answer section sits, for the CNAME walk. */
struct rrref {
	size_t owner;   /* offset of the owner name */
	uint64_t hash;  /* of the lowercased owner in wire form */
	uint32_t ttl;
	uint16_t type, cls;
	size_t rdata;   /* offset of RDATA */
	uint16_t rdlen;
};

/* The names an answer may be about: the question, then CNAME targets. */
struct chain {
	unsigned char name[SPFKIT__DNS_CNAME_MAX + 1][SPFKIT__DNS_NAME_MAX];
	size_t len[SPFKIT__DNS_CNAME_MAX + 1];
	uint64_t hash[SPFKIT__DNS_CNAME_MAX + 1];
	size_t n;
};

struct rd {
	struct spfkit__cur c; /* end may be narrowed to one RDATA */
	size_t msglen;        /* pointers may reach anywhere before this */
	struct spfkit__dns_reply *r;
	uint16_t qtype;
	int keep_strings; /* SPFKIT_RR_TXT_STRINGS asked: TXT RDATA as it came */
	struct rrref *an;     /* the answer section, an_n of them */
	size_t an_n;
	struct chain chain;
	uint32_t ttl;         /* smallest TTL seen among the RRs used */
	size_t decoded;       /* output bytes so far, against the cap */
};

static void fail(struct rd *p, const char *why)
{
	spfkit__cur_fail(&p->c, SPFKIT_ESYNTAX, why);
}

/* Fail naming the offset of the bad byte, which may lie behind a pointer. */
static void fail_at(struct rd *p, size_t pos, const char *why)
{
	if (p->c.err)
		return;
	p->c.p = p->c.base + (pos < p->msglen ? pos : p->msglen);
	fail(p, why);
}

/* ---- fixed-size fields ------------------------------------------------ */

static int need(struct rd *p, size_t n, const char *why)
{
	if (p->c.err)
		return 0;
	if (spfkit__cur_left(&p->c) < n) {
		fail(p, why);
		return 0;
	}
	return 1;
}

static unsigned get_u8(struct rd *p, const char *why)
{
	if (!need(p, 1, why))
		return 0;
	return *p->c.p++;
}

static uint16_t get_u16(struct rd *p, const char *why)
{
	uint16_t v;

	if (!need(p, 2, why))
		return 0;
	v = (uint16_t)((unsigned)p->c.p[0] << 8 | p->c.p[1]);
	p->c.p += 2;
	return v;
}

static uint32_t get_u32(struct rd *p, const char *why)
{
	uint32_t v;

	if (!need(p, 4, why))
		return 0;
	v = (uint32_t)p->c.p[0] << 24 | (uint32_t)p->c.p[1] << 16 | (uint32_t)p->c.p[2] << 8 |
	    p->c.p[3];
	p->c.p += 4;
	return v;
}

static void skip(struct rd *p, size_t n, const char *why)
{
	if (need(p, n, why))
		p->c.p += n;
}

/* RFC 2181 §8: a TTL with the top bit set is read as zero. */
static uint32_t ttl_fix(uint32_t ttl)
{
	return (ttl & 0x80000000u) ? 0 : ttl;
}

/* ---- names ------------------------------------------------------------ */

/*
 * Read the name at the cursor into `wire` (uncompressed, root included)
 * and move the cursor past the name as stored here. Each compression
 * pointer must point strictly before the start of the name part read so
 * far (first the name's own start, then the previous target): targets
 * strictly decrease, so no loop can exist; the hop cap is a second
 * guard. Labels read in place must lie before the cursor's end (which
 * may be an RDATA's end); labels reached through a pointer before the
 * end of the message.
 */
static size_t read_name(struct rd *p, unsigned char *wire)
{
	size_t pos = spfkit__cur_off(&p->c), limit = pos, resume = SIZE_MAX, w = 0;
	size_t end = (size_t)(p->c.end - p->c.base), next;
	unsigned hops = 0, n;

	if (p->c.err)
		return 0;
	for (;;) {
		if (pos >= end) {
			fail_at(p, pos, "malformed reply: name runs past the end");
			return 0;
		}
		n = p->c.base[pos];
		if ((n & 0xc0u) == 0xc0u) {
			if (pos + 1 >= end) {
				fail_at(p, pos, "malformed reply: compression pointer cut short");
				return 0;
			}
			if (resume == SIZE_MAX)
				resume = pos + 2;
			next = (size_t)(n & 0x3fu) << 8 | p->c.base[pos + 1];
			if (next >= limit) {
				fail_at(p, pos, "malformed reply: compression pointer does not point backwards");
				return 0;
			}
			if (++hops > SPFKIT__DNS_PTR_HOPS) {
				fail_at(p, pos, "malformed reply: too many compression pointers");
				return 0;
			}
			pos = limit = next;
			end = p->msglen;
			continue;
		}
		if (n > SPFKIT__DNS_LABEL_MAX) {
			fail_at(p, pos, "malformed reply: reserved label type");
			return 0;
		}
		if (w + 1 + n > SPFKIT__DNS_NAME_MAX) {
			fail_at(p, pos, "malformed reply: name longer than 255 octets");
			return 0;
		}
		if (n >= end - pos) {
			fail_at(p, pos, "malformed reply: label runs past the end");
			return 0;
		}
		memcpy(wire + w, p->c.base + pos, n + 1);
		w += n + 1;
		pos += n + 1;
		if (n == 0)
			break;
	}
	p->c.p = p->c.base + (resume == SIZE_MAX ? pos : resume);
	return w;
}

static uint64_t wire_hash(const unsigned char *wire, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)spfkit__lower(wire[i]);
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Label length bytes are < 64, so lowering them changes nothing. */
static int wire_eq(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	return spfkit__memcaseeq(a, alen, b, blen);
}

/* ---- RDATA ------------------------------------------------------------ */

/* Point the cursor at one RR's RDATA, ending there. */
static void rdata_enter(struct rd *p, const struct rrref *ref)
{
	p->c.p = p->c.base + ref->rdata;
	p->c.end = p->c.base + ref->rdata + ref->rdlen;
}

/* Back to the whole message, just after the RDATA; the content must
 * have filled RDLENGTH exactly (RFC 1035 §3.2.1). */
static void rdata_leave(struct rd *p, const struct rrref *ref)
{
	if (!p->c.err && p->c.p != p->c.end)
		fail(p, "malformed reply: RDATA length does not match its content");
	p->c.end = p->c.base + p->msglen;
	if (!p->c.err)
		p->c.p = p->c.base + ref->rdata + ref->rdlen;
}

/*
 * Character-strings (RFC 1035 §3.3), each length-prefixed. With `out`,
 * they are joined with no separator (RFC 7208 §3.3). §3.3.14 asks for
 * one or more, but an RDATA of length 0 is read as a TXT with no
 * strings, as other SPF implementations do: an empty record, never an
 * SPF record, and no reason to fail the other records of the answer
 * (the RFC 7208 test suite's null-text case).
 */
static size_t read_strings(struct rd *p, unsigned char *out)
{
	size_t total = 0;
	unsigned n;

	while (p->c.err == 0 && !spfkit__cur_eof(&p->c)) {
		n = get_u8(p, "malformed reply: TXT string runs past the end");
		if (!need(p, n, "malformed reply: TXT string runs past the end"))
			return 0;
		if (out != NULL)
			memcpy(out + total, p->c.p, n);
		p->c.p += n;
		total += n;
	}
	return total;
}

/* Check the RDATA of the types we know; others are opaque bytes. */
static void check_rdata(struct rd *p, const struct rrref *ref)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];

	if (ref->cls != SPFKIT__DNS_CLASS_IN)
		return;
	rdata_enter(p, ref);
	switch (ref->type) {
	case SPFKIT_RR_A:
		skip(p, 4, "malformed reply: A record is not 4 octets");
		break;
	case SPFKIT_RR_AAAA:
		skip(p, 16, "malformed reply: AAAA record is not 16 octets");
		break;
	case SPFKIT_RR_CNAME:
	case SPFKIT_RR_PTR:
		(void)read_name(p, wire);
		break;
	case SPFKIT_RR_MX:
		(void)get_u16(p, "malformed reply: MX record too short");
		(void)read_name(p, wire);
		break;
	case SPFKIT_RR_TXT:
	case SPFKIT_RR_SPF:
		(void)read_strings(p, NULL);
		break;
	case SPFKIT_RR_SOA:
		(void)read_name(p, wire);
		(void)read_name(p, wire);
		skip(p, 20, "malformed reply: SOA record too short");
		break;
	default:
		p->c.p = p->c.end;
		break;
	}
	if (p->c.err == 0 && (ref->type == SPFKIT_RR_A || ref->type == SPFKIT_RR_AAAA) &&
	    !spfkit__cur_eof(&p->c))
		fail(p, ref->type == SPFKIT_RR_A ? "malformed reply: A record is not 4 octets"
						 : "malformed reply: AAAA record is not 16 octets");
	rdata_leave(p, ref);
}

/* ---- sections --------------------------------------------------------- */

/* One RR: owner, fixed fields, RDATA bounds and content. */
static void read_rr(struct rd *p, struct rrref *ref)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t wl;

	ref->owner = spfkit__cur_off(&p->c);
	wl = read_name(p, wire);
	ref->hash = wire_hash(wire, wl);
	ref->type = get_u16(p, "malformed reply: record header cut short");
	ref->cls = get_u16(p, "malformed reply: record header cut short");
	ref->ttl = ttl_fix(get_u32(p, "malformed reply: record header cut short"));
	ref->rdlen = get_u16(p, "malformed reply: record header cut short");
	ref->rdata = spfkit__cur_off(&p->c);
	skip(p, ref->rdlen, "malformed reply: RDATA runs past the end");
	if (p->c.err == 0)
		check_rdata(p, ref);
}

/* The smallest RR is 11 octets (root owner, 10 fixed); a count that
 * cannot fit is refused before anything is allocated for it. */
static int count_fits(struct rd *p, unsigned count)
{
	if (p->c.err)
		return 0;
	if (count > spfkit__cur_left(&p->c) / 11) {
		fail(p, "malformed reply: record count larger than the message");
		return 0;
	}
	return 1;
}

static void read_answers(struct rd *p, unsigned count)
{
	size_t i;

	if (!count_fits(p, count) || count == 0)
		return;
	p->an = spfkit__arena_alloc(&p->r->arena, count * sizeof(*p->an));
	if (p->an == NULL) {
		spfkit__cur_fail(&p->c, SPFKIT_ENOMEM, "out of memory");
		return;
	}
	for (i = 0; i < count && p->c.err == 0; i++)
		read_rr(p, &p->an[i]);
	p->an_n = i;
}

/* RFC 2308 §5: the negative TTL is min(SOA TTL, SOA MINIMUM). */
static uint32_t soa_negative_ttl(struct rd *p, const struct rrref *ref)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	uint32_t min;

	rdata_enter(p, ref);
	(void)read_name(p, wire);
	(void)read_name(p, wire);
	skip(p, 16, "malformed reply: SOA record too short");
	min = ttl_fix(get_u32(p, "malformed reply: SOA record too short"));
	rdata_leave(p, ref);
	return min < ref->ttl ? min : ref->ttl;
}

/* Returns the negative TTL of the first SOA, or 0 when none. */
static uint32_t read_authority(struct rd *p, unsigned count)
{
	struct rrref ref;
	uint32_t neg = 0;
	int have_soa = 0;
	unsigned i;

	if (!count_fits(p, count))
		return 0;
	for (i = 0; i < count && p->c.err == 0; i++) {
		read_rr(p, &ref);
		if (p->c.err == 0 && !have_soa && ref.type == SPFKIT_RR_SOA &&
		    ref.cls == SPFKIT__DNS_CLASS_IN) {
			neg = soa_negative_ttl(p, &ref);
			have_soa = 1;
		}
	}
	return neg;
}

/* ---- the CNAME chain and the records asked for ----------------------- */

/* Is the owner of `ref` the chain's name k? Hash first, then the bytes. */
static int owner_is(struct rd *p, const struct rrref *ref, size_t k)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t wl;

	if (ref->hash != p->chain.hash[k])
		return 0;
	p->c.p = p->c.base + ref->owner;
	wl = read_name(p, wire);
	return p->c.err == 0 && wire_eq(wire, wl, p->chain.name[k], p->chain.len[k]);
}

static int in_chain(struct rd *p, const struct rrref *ref)
{
	size_t k;

	for (k = 0; k < p->chain.n; k++)
		if (owner_is(p, ref, k))
			return 1;
	return 0;
}

static int chain_has(const struct chain *ch, const unsigned char *wire, size_t len)
{
	size_t k;

	for (k = 0; k < ch->n; k++)
		if (wire_eq(ch->name[k], ch->len[k], wire, len))
			return 1;
	return 0;
}

static void ttl_min(struct rd *p, uint32_t ttl)
{
	if (ttl < p->ttl)
		p->ttl = ttl;
}

/*
 * Follow CNAMEs from the question name through the answer section
 * (RFC 1034 §3.6.2: a server puts the chain before the data). Returns
 * NULL, or a static TEMPFAIL detail for a loop or an over-long chain.
 */
static const char *follow_cnames(struct rd *p)
{
	struct chain *ch = &p->chain;
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t i, wl;

	if (p->qtype == SPFKIT_RR_CNAME)
		return NULL; /* asking for the CNAME itself: nothing to follow */
	for (;;) {
		for (i = 0; i < p->an_n; i++)
			if (p->an[i].type == SPFKIT_RR_CNAME && p->an[i].cls == SPFKIT__DNS_CLASS_IN &&
			    owner_is(p, &p->an[i], ch->n - 1))
				break;
		if (p->c.err || i == p->an_n)
			return NULL;
		if (ch->n > SPFKIT__DNS_CNAME_MAX)
			return "CNAME chain too long";
		rdata_enter(p, &p->an[i]);
		wl = read_name(p, wire);
		rdata_leave(p, &p->an[i]);
		if (p->c.err)
			return NULL;
		if (chain_has(ch, wire, wl))
			return "CNAME loop";
		memcpy(ch->name[ch->n], wire, wl);
		ch->len[ch->n] = wl;
		ch->hash[ch->n] = wire_hash(wire, wl);
		ch->n++;
		ttl_min(p, p->an[i].ttl);
	}
}

/* Output space from the arena (16-byte aligned), under the per-reply cap. */
static void *out_alloc(struct rd *p, size_t n)
{
	void *o;

	if (p->c.err)
		return NULL;
	if (n > SPFKIT__DNS_DECODED_MAX - p->decoded) {
		spfkit__cur_fail(&p->c, SPFKIT_E2BIG, "reply too large to decode");
		return NULL;
	}
	p->decoded += n;
	o = spfkit__arena_alloc(&p->r->arena, n ? n : 1);
	if (o == NULL)
		spfkit__cur_fail(&p->c, SPFKIT_ENOMEM, "out of memory");
	return o;
}

/*
 * A name in RDATA (PTR, CNAME, MX exchange) in the form a question name
 * takes (resolver.h): raw label bytes joined by '.', so the evaluator can
 * ask it back unchanged. A label holding a '.' cannot be written so; the
 * record is then left out: 0, else 1.
 */
static int decode_name(struct rd *p, struct spfkit_dns_rr *rr)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	unsigned char *o;
	size_t wl, i, n = 0;

	wl = read_name(p, wire);
	if (p->c.err)
		return 1;
	o = out_alloc(p, wl);
	if (o == NULL)
		return 1;
	for (i = 0; i < wl && wire[i] != 0; i += (size_t)wire[i] + 1) {
		if (memchr(wire + i + 1, '.', wire[i]) != NULL)
			return 0;
		if (n > 0)
			o[n++] = '.';
		memcpy(o + n, wire + i + 1, wire[i]);
		n += wire[i];
	}
	o[n] = 0;
	rr->data = o;
	rr->len = n;
	return 1;
}

/* 0 when the record cannot be given in resolver.h's form (decode_name()). */
static int decode_rr(struct rd *p, const struct rrref *ref, struct spfkit_dns_rr *rr)
{
	unsigned char *o;
	size_t n;
	int ok = 1;

	rr->type = ref->type;
	rr->pref = 0;
	rr->ttl = ref->ttl;
	rdata_enter(p, ref);
	switch (ref->type) {
	case SPFKIT_RR_MX:
		rr->pref = get_u16(p, "malformed reply: MX record too short");
		/* fall through */
	case SPFKIT_RR_CNAME:
	case SPFKIT_RR_PTR:
		ok = decode_name(p, rr);
		break;
	case SPFKIT_RR_TXT:
		if (p->keep_strings) {
			o = out_alloc(p, (size_t)ref->rdlen + 1);
			if (o == NULL)
				break;
			(void)read_strings(p, NULL); /* checks them */
			memcpy(o, p->c.base + ref->rdata, ref->rdlen);
			o[ref->rdlen] = 0;
			rr->type = SPFKIT_RR_TXT_STRINGS;
			rr->data = o;
			rr->len = ref->rdlen;
			break;
		}
		/* fall through */
	case SPFKIT_RR_SPF:
		/* Joined, the strings are never longer than their RDATA. */
		o = out_alloc(p, (size_t)ref->rdlen + 1);
		if (o == NULL)
			break;
		n = read_strings(p, o);
		o[n] = 0;
		rr->data = o;
		rr->len = n;
		break;
	default:
		o = out_alloc(p, ref->rdlen);
		if (o == NULL)
			break;
		memcpy(o, p->c.p, ref->rdlen);
		p->c.p = p->c.end;
		rr->data = o;
		rr->len = ref->rdlen;
		break;
	}
	rdata_leave(p, ref);
	return ok;
}

static int wanted(struct rd *p, const struct rrref *ref)
{
	return ref->type == p->qtype && ref->cls == SPFKIT__DNS_CLASS_IN && in_chain(p, ref);
}

/* Collect the RRs of the asked type owned by a name of the chain. */
static void select_records(struct rd *p)
{
	struct spfkit_dns_answer *a = &p->r->answer;
	struct spfkit_dns_rr *rrs;
	size_t i, n = 0;

	for (i = 0; i < p->an_n && p->c.err == 0; i++)
		n += (size_t)wanted(p, &p->an[i]);
	if (n == 0 || p->c.err)
		return;
	rrs = out_alloc(p, n * sizeof(*rrs));
	if (rrs == NULL)
		return;
	for (i = 0, n = 0; i < p->an_n && p->c.err == 0; i++) {
		if (!wanted(p, &p->an[i]))
			continue;
		if (!decode_rr(p, &p->an[i], &rrs[n]))
			continue; /* a target no question can name: as if absent */
		ttl_min(p, p->an[i].ttl);
		n++;
	}
	a->rrs = rrs;
	a->count = p->c.err ? 0 : n;
}

/* ---- header, question, the whole reply ------------------------------- */

static void read_header(struct rd *p, struct spfkit__dns_hdr *h)
{
	const char *why = "malformed reply: header cut short";

	h->id = get_u16(p, why);
	h->flags = get_u16(p, why);
	h->qdcount = get_u16(p, why);
	h->ancount = get_u16(p, why);
	h->nscount = get_u16(p, why);
	h->arcount = get_u16(p, why);
}

/* Text for an rcode that makes the answer a TEMPFAIL; NULL for the two
 * that carry an SPF meaning (NOERROR, NXDOMAIN). */
static const char *rcode_detail(unsigned rcode)
{
	switch (rcode) {
	case SPFKIT__DNS_NOERROR:
	case SPFKIT__DNS_NXDOMAIN:
		return NULL;
	case SPFKIT__DNS_FORMERR: return "FORMERR";
	case SPFKIT__DNS_SERVFAIL: return spfkit_reason_text(SPFKIT_REASON_DNS_SERVFAIL);
	case SPFKIT__DNS_NOTIMP: return "NOTIMP";
	case SPFKIT__DNS_REFUSED: return spfkit_reason_text(SPFKIT_REASON_DNS_REFUSED);
	}
	return "unexpected rcode";
}

/* Header checks that make reading on pointless; NULL when all is well. */
static const char *header_verdict(const struct spfkit__dns_hdr *h)
{
	if (!(h->flags & SPFKIT__DNS_F_QR))
		return "malformed reply: not a response";
	if (h->flags & SPFKIT__DNS_F_OPCODE)
		return "malformed reply: opcode is not QUERY";
	/* RFC 2181 §9: a truncated answer may lack the very record SPF
	 * needs; over UDP c-ares retries on TCP, so here it is a failure. */
	if (h->flags & SPFKIT__DNS_F_TC)
		return "truncated reply";
	return rcode_detail(SPFKIT__DNS_RCODE(h->flags));
}

/* One question, and (unless qname was NULL) the one we asked. */
static const char *read_question(struct rd *p, unsigned qdcount, int check)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t wl;
	uint16_t type, cls;

	if (qdcount != 1) {
		fail(p, "malformed reply: question count is not 1");
		return NULL;
	}
	wl = read_name(p, wire);
	type = get_u16(p, "malformed reply: question cut short");
	cls = get_u16(p, "malformed reply: question cut short");
	if (p->c.err)
		return NULL;
	if (!check) {
		memcpy(p->chain.name[0], wire, wl);
		p->chain.len[0] = wl;
	} else if (type != p->qtype || cls != SPFKIT__DNS_CLASS_IN ||
		   !wire_eq(wire, wl, p->chain.name[0], p->chain.len[0])) {
		return "reply does not match the question";
	}
	p->chain.hash[0] = wire_hash(p->chain.name[0], p->chain.len[0]);
	p->chain.n = 1;
	return NULL;
}

static void set_tempfail(struct spfkit__dns_reply *r, const char *detail)
{
	r->answer.status = SPFKIT_DNS_TEMPFAIL;
	r->answer.ttl = 0;
	r->answer.rrs = NULL;
	r->answer.count = 0;
	r->answer.detail = detail;
}

/* Read everything; returns NULL or a TEMPFAIL detail that is not a
 * cursor error (rcode, TC, mismatch, CNAME trouble). */
static const char *read_reply(struct rd *p, int check, uint32_t *neg)
{
	struct spfkit__dns_hdr *h = &p->r->hdr;
	const char *why;

	read_header(p, h);
	if (p->c.err)
		return NULL;
	p->r->have_hdr = 1;
	why = header_verdict(h);
	if (why == NULL)
		why = read_question(p, h->qdcount, check);
	if (why != NULL || p->c.err)
		return why;
	read_answers(p, h->ancount);
	*neg = read_authority(p, h->nscount);
	if (p->c.err)
		return NULL;
	why = follow_cnames(p);
	if (why == NULL)
		select_records(p);
	return why;
}

void spfkit__dns_reply_init(struct spfkit__dns_reply *r, const struct spfkit_allocator *a)
{
	memset(r, 0, sizeof(*r));
	spfkit__arena_init(&r->arena, a, 4096, 0);
}

void spfkit__dns_reply_free(struct spfkit__dns_reply *r)
{
	spfkit__arena_free(&r->arena);
	memset(&r->answer, 0, sizeof(r->answer));
}

/* Turn a cursor failure into the answer; SPFKIT_ENOMEM stays an error. */
static int cursor_outcome(struct spfkit__dns_reply *r, const struct spfkit__cur *c)
{
	set_tempfail(r, c->err_why);
	if (c->err == SPFKIT_ENOMEM)
		return SPFKIT_ENOMEM;
	if (c->err == SPFKIT_ESYNTAX) {
		r->malformed = 1;
		r->err_off = c->err_off;
	}
	return 0;
}

int spfkit__dns_reply_parse(struct spfkit__dns_reply *r, const void *msg, size_t len,
			    const char *qname, size_t qlen, uint16_t qtype)
{
	struct rd *p;
	const char *why;
	uint32_t neg = 0;
	unsigned rcode;

	spfkit__arena_reset(&r->arena);
	r->have_hdr = r->malformed = 0;
	r->err_off = 0;
	memset(&r->answer, 0, sizeof(r->answer));
	/* The chain is 4 KiB: keep it off the stack, in the reply's arena. */
	p = spfkit__arena_alloc(&r->arena, sizeof(*p));
	if (p == NULL) {
		set_tempfail(r, "out of memory");
		return SPFKIT_ENOMEM;
	}
	memset(p, 0, sizeof(*p));
	if (qname != NULL &&
	    spfkit__dns_name_wire_raw(qname, qlen, p->chain.name[0], &p->chain.len[0]) != 0) {
		set_tempfail(r, "invalid question name");
		return SPFKIT_EINVAL;
	}
	spfkit__cur_init(&p->c, msg, len);
	p->msglen = len;
	p->r = r;
	p->qtype = qtype;
	if (qtype == SPFKIT_RR_TXT_STRINGS) { /* resolver.h: a TXT question */
		p->qtype = SPFKIT_RR_TXT;
		p->keep_strings = 1;
	}
	p->ttl = UINT32_MAX;
	if (len > SPFKIT__DNS_MSG_MAX)
		fail(p, "malformed reply: longer than 65535 octets");
	why = read_reply(p, qname != NULL, &neg);
	if (p->c.err)
		return cursor_outcome(r, &p->c);
	if (why != NULL) {
		set_tempfail(r, why);
		return 0;
	}
	rcode = SPFKIT__DNS_RCODE(r->hdr.flags);
	if (r->answer.count > 0 && rcode == SPFKIT__DNS_NOERROR) {
		r->answer.status = SPFKIT_DNS_OK;
		r->answer.ttl = p->ttl;
		return 0;
	}
	r->answer.rrs = NULL;
	r->answer.count = 0;
	r->answer.status = rcode == SPFKIT__DNS_NXDOMAIN ? SPFKIT_DNS_NXDOMAIN : SPFKIT_DNS_NODATA;
	r->answer.ttl = neg < p->ttl ? neg : p->ttl;
	return 0;
}
