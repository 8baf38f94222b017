/*
 * Unit tests of lib/dns: the DNS response reader, names, the builder.
 * Most messages are hostile, built byte by byte: compression loops,
 * forward pointers, lengths past the end, a 64 KiB TXT, wrong types.
 * All allocation goes through a counting allocator, so each test also
 * checks for leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msg.h"
#include "dns_build.h" /* tests/support */

/* ---- allocators ------------------------------------------------------- */

/*
 * Counts live blocks; teardown asserts none is left. (cmocka's
 * test_malloc would treat blocks freed in teardown as leaks of the test.)
 * With `left` >= 0, allocation fails once `left` successes are used up.
 */
struct counter {
	long live;
	long left;
};

static void *t_alloc(void *user, size_t n)
{
	struct counter *c = user;
	void *p;

	if (c->left == 0)
		return NULL;
	p = malloc(n);
	if (p != NULL) {
		c->live++;
		if (c->left > 0)
			c->left--;
	}
	return p;
}

static void *t_realloc(void *user, void *old, size_t n)
{
	struct counter *c = user;
	void *p;

	if (old == NULL)
		return t_alloc(user, n);
	if (c->left == 0)
		return NULL;
	p = realloc(old, n);
	if (p != NULL && c->left > 0)
		c->left--;
	return p;
}

static void t_free(void *user, void *p)
{
	struct counter *c = user;

	if (p != NULL)
		c->live--;
	free(p);
}

/* ---- message helpers -------------------------------------------------- */

#define QR_RA (SPFKIT__DNS_F_QR | SPFKIT__DNS_F_RD | SPFKIT__DNS_F_RA)
#define QNAME "example.com"
#define QLEN (sizeof(QNAME) - 1)

struct t {
	struct counter cnt;
	struct spfkit_allocator alloc;
	struct spfkit__dnsb b;
	struct spfkit__dns_reply r;
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->cnt.left = -1;
	t->alloc = (struct spfkit_allocator){ t_alloc, t_realloc, t_free, &t->cnt };
	spfkit__dnsb_init(&t->b, &t->alloc, SPFKIT__DNS_MSG_MAX + 16);
	spfkit__dns_reply_init(&t->r, &t->alloc);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;
	long live;

	spfkit__dnsb_free(&t->b);
	spfkit__dns_reply_free(&t->r);
	live = t->cnt.live;
	free(t);
	assert_int_equal(live, 0); /* got live blocks, want none: a leak */
	return 0;
}

/* Start the message over, empty. */
static void restart(struct t *t, size_t max)
{
	spfkit__dnsb_free(&t->b);
	spfkit__dnsb_init(&t->b, &t->alloc, max);
}

/* Header (id 7, given flags and counts) and the question QNAME/type. */
static void start(struct t *t, unsigned flags, unsigned an, unsigned ns, uint16_t type)
{
	spfkit__dnsb_header(&t->b, 7, (uint16_t)flags, 1, (uint16_t)an, (uint16_t)ns, 0);
	spfkit__dnsb_question(&t->b, QNAME, QLEN, type);
}

static void rr_a(struct t *t, const char *owner, uint32_t ttl, const char *addr4)
{
	spfkit__dnsb_rr_begin(&t->b, owner, strlen(owner), SPFKIT_RR_A, ttl);
	spfkit__dnsb_bytes(&t->b, addr4, 4);
	spfkit__dnsb_rr_end(&t->b);
}

static void rr_txt(struct t *t, const char *owner, uint32_t ttl, const char *data, size_t len)
{
	spfkit__dnsb_rr_begin(&t->b, owner, strlen(owner), SPFKIT_RR_TXT, ttl);
	spfkit__dnsb_txt(&t->b, data, len);
	spfkit__dnsb_rr_end(&t->b);
}

static void rr_name(struct t *t, const char *owner, uint16_t type, uint32_t ttl, const char *target)
{
	spfkit__dnsb_rr_begin(&t->b, owner, strlen(owner), type, ttl);
	if (type == SPFKIT_RR_MX)
		spfkit__dnsb_u16(&t->b, 10);
	spfkit__dnsb_name(&t->b, target, strlen(target));
	spfkit__dnsb_rr_end(&t->b);
}

/* SOA for the authority section: mname, rname, serial..minimum. */
static void rr_soa(struct t *t, uint32_t ttl, uint32_t minimum)
{
	spfkit__dnsb_rr_begin(&t->b, "com", 3, SPFKIT_RR_SOA, ttl);
	spfkit__dnsb_name(&t->b, "ns.com", 6);
	spfkit__dnsb_name(&t->b, "hostmaster.com", 14);
	spfkit__dnsb_u32(&t->b, 1);
	spfkit__dnsb_u32(&t->b, 7200);
	spfkit__dnsb_u32(&t->b, 900);
	spfkit__dnsb_u32(&t->b, 604800);
	spfkit__dnsb_u32(&t->b, minimum);
	spfkit__dnsb_rr_end(&t->b);
}

static const struct spfkit_dns_answer *parse(struct t *t, uint16_t type)
{
	assert_int_equal(spfkit__dnsb_err(&t->b), 0);
	assert_int_equal(spfkit__dns_reply_parse(&t->r, spfkit__dnsb_data(&t->b),
						 spfkit__dnsb_len(&t->b), QNAME, QLEN, type),
			 0);
	return &t->r.answer;
}

static void want_malformed(struct t *t, uint16_t type, const char *detail)
{
	const struct spfkit_dns_answer *a = parse(t, type);

	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	assert_int_equal(t->r.malformed, 1);
	assert_string_equal(a->detail, detail);
	assert_int_equal(a->count, 0);
}

static void want_tempfail(struct t *t, uint16_t type, const char *detail)
{
	const struct spfkit_dns_answer *a = parse(t, type);

	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	assert_int_equal(t->r.malformed, 0);
	assert_string_equal(a->detail, detail);
}

/* Overwrite the message bytes at `off` (to break what the builder made). */
static void poke(struct t *t, size_t off, const void *bytes, size_t n)
{
	assert_true(off + n <= t->b.buf.len);
	memcpy(t->b.buf.data + off, bytes, n);
}

/* Offset of the question name (right after the 12-octet header). */
#define QOFF 12u
/* Offset right after the question (name + type + class). */
#define AFTER_Q (QOFF + 13u + 4u)

/* ---- names ------------------------------------------------------------ */

static void name_escapes_round_trip(void **state)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	char text[SPFKIT__DNS_TEXT_MAX];
	size_t wl, tl;

	(void)state;
	assert_int_equal(spfkit__dns_name_wire("a\\.b\\032c.Example.", 18, wire, &wl), 0);
	assert_int_equal(wl, 1 + 5 + 1 + 7 + 1);
	assert_memory_equal(wire, "\005a.b c\007Example\000", wl);
	tl = spfkit__dns_name_text(wire, wl, text);
	assert_string_equal(text, "a\\046b\\032c.Example");
	assert_int_equal(tl, strlen(text));
	/* reading the text back gives the same wire form */
	assert_int_equal(spfkit__dns_name_wire(text, tl, wire + 0, &wl), 0);
	assert_memory_equal(wire, "\005a.b c\007Example\000", wl);
}

static void name_root_and_final_dot(void **state)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	char text[SPFKIT__DNS_TEXT_MAX];
	size_t wl;

	(void)state;
	assert_int_equal(spfkit__dns_name_wire(".", 1, wire, &wl), 0);
	assert_int_equal(wl, 1);
	assert_int_equal(spfkit__dns_name_text(wire, wl, text), 0);
	assert_string_equal(text, "");
	/* "a\\." : an escaped backslash, then the final dot */
	assert_int_equal(spfkit__dns_name_wire("a\\\\.", 4, wire, &wl), 0);
	assert_memory_equal(wire, "\002a\\\000", 4);
	/* "a\." : an escaped dot is part of the label */
	assert_int_equal(spfkit__dns_name_wire("a\\.", 3, wire, &wl), 0);
	assert_memory_equal(wire, "\002a.\000", 4);
}

static void name_rejects_bad_text(void **state)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	char big[300];
	size_t wl;

	(void)state;
	assert_int_equal(spfkit__dns_name_wire("a..b", 4, wire, &wl), SPFKIT_EINVAL);
	assert_int_equal(spfkit__dns_name_wire(".a", 2, wire, &wl), SPFKIT_EINVAL);
	assert_int_equal(spfkit__dns_name_wire("a\\256", 5, wire, &wl), SPFKIT_EINVAL);
	assert_int_equal(spfkit__dns_name_wire("a\\2", 3, wire, &wl), SPFKIT_EINVAL);
	assert_int_equal(spfkit__dns_name_wire("a\\", 2, wire, &wl), SPFKIT_EINVAL);
	memset(big, 'x', 64);
	assert_int_equal(spfkit__dns_name_wire(big, 63, wire, &wl), 0);
	assert_int_equal(spfkit__dns_name_wire(big, 64, wire, &wl), SPFKIT_EINVAL);
	/* 63+1+63+1+63+1+61 = 253 text octets: 255 on the wire, the maximum */
	memset(big, 'x', sizeof(big));
	big[63] = big[127] = big[191] = '.';
	assert_int_equal(spfkit__dns_name_wire(big, 253, wire, &wl), 0);
	assert_int_equal(wl, 255);
	assert_int_equal(spfkit__dns_name_wire(big, 254, wire, &wl), SPFKIT_EINVAL);
}

/* ---- builder ---------------------------------------------------------- */

static void query_has_opt_last(void **state)
{
	struct t *t = *state;
	const unsigned char *q;
	size_t n;

	assert_int_equal(spfkit__dns_query(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 1232), 0);
	q = spfkit__dnsb_data(&t->b);
	n = spfkit__dnsb_len(&t->b);
	assert_int_equal(n, 12 + 13 + 4 + 11);
	assert_memory_equal(q, "\000\000\001\000\000\001\000\000\000\000\000\001", 12);
	/* OPT: root, type 41, class = UDP size 1232 (0x04d0), ttl 0, rdlen 0 */
	assert_memory_equal(q + n - 11, "\000\000\051\004\320\000\000\000\000\000\000", 11);
}

static void query_rejects_bad_name(void **state)
{
	struct t *t = *state;

	assert_int_equal(spfkit__dns_query(&t->b, "a..b", 4, SPFKIT_RR_A, 0), SPFKIT_EINVAL);
}

/* ---- good answers ----------------------------------------------------- */

static void a_records_and_min_ttl(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 2, 0, SPFKIT_RR_A);
	rr_a(t, QNAME, 300, "\300\000\002\001");
	rr_a(t, "EXAMPLE.com", 60, "\300\000\002\002");
	a = parse(t, SPFKIT_RR_A);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->ttl, 60);
	assert_null(a->detail);
	assert_int_equal(a->rrs[0].len, 4);
	assert_memory_equal(a->rrs[0].data, "\300\000\002\001", 4);
	assert_memory_equal(a->rrs[1].data, "\300\000\002\002", 4);
	assert_int_equal(a->rrs[1].ttl, 60);
	assert_int_equal(t->r.hdr.id, 7);
}

static void aaaa_record(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA | SPFKIT__DNS_F_AD, 1, 0, SPFKIT_RR_AAAA);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_AAAA, 30);
	spfkit__dnsb_bytes(&t->b, "\040\001\015\270\000\000\000\000\000\000\000\000\000\000\000\001",
			   16);
	spfkit__dnsb_rr_end(&t->b);
	a = parse(t, SPFKIT_RR_AAAA);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->rrs[0].len, 16);
	assert_int_equal(a->rrs[0].data[15], 1);
	assert_true(t->r.hdr.flags & SPFKIT__DNS_F_AD);
}

static void txt_strings_joined(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 300);
	spfkit__dnsb_bytes(&t->b, "\006v=spf1\005 -all\003a\000b\000", 18);
	spfkit__dnsb_rr_end(&t->b);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->rrs[0].len, 14);
	/* RFC 7208 §3.3: no separator; a NUL byte survives; empty string ok */
	assert_memory_equal(a->rrs[0].data, "v=spf1 -alla\000b", 14);
}

static void txt_64k(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;
	size_t len = 65535 - (AFTER_Q + 13 + 10) - 257; /* whole message: 65535 octets */
	char *data = malloc(len);
	size_t i;

	for (i = 0; i < len; i++)
		data[i] = (char)('a' + i % 26);
	/* 255-octet strings: every 256 octets of RDATA carry 255 of text */
	len = (len / 256) * 255;
	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	rr_txt(t, QNAME, 300, data, len);
	assert_true(spfkit__dnsb_len(&t->b) <= 65535);
	assert_true(spfkit__dnsb_len(&t->b) > 65000);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->rrs[0].len, len);
	assert_memory_equal(a->rrs[0].data, data, len);
	free(data);
}

static void mx_with_compressed_exchange(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 0, SPFKIT_RR_MX);
	spfkit__dnsb_ptr(&t->b, QOFF); /* owner: the question name */
	spfkit__dnsb_u16(&t->b, SPFKIT_RR_MX);
	spfkit__dnsb_u16(&t->b, 1);
	spfkit__dnsb_u32(&t->b, 3600);
	spfkit__dnsb_u16(&t->b, 2 + 6 + 2);
	spfkit__dnsb_u16(&t->b, 20);
	spfkit__dnsb_bytes(&t->b, "\005mail1", 6);
	spfkit__dnsb_ptr(&t->b, QOFF);
	a = parse(t, SPFKIT_RR_MX);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->rrs[0].pref, 20);
	assert_int_equal(a->rrs[0].len, 17);
	assert_string_equal((const char *)a->rrs[0].data, "mail1.example.com");
}

static void null_mx_is_empty_name(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 0, SPFKIT_RR_MX);
	rr_name(t, QNAME, SPFKIT_RR_MX, 60, ".");
	a = parse(t, SPFKIT_RR_MX);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->rrs[0].len, 0);
	assert_string_equal((const char *)a->rrs[0].data, "");
}

/* Target names come raw, as a question takes them (resolver.h); a '.'
 * inside a label cannot be written so and leaves its record out. */
static void ptr_odd_bytes_raw(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 2, 0, SPFKIT_RR_PTR);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_PTR, 60);
	spfkit__dnsb_bytes(&t->b, "\004a.b\001\004mail\000", 11);
	spfkit__dnsb_rr_end(&t->b);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_PTR, 60);
	spfkit__dnsb_bytes(&t->b, "\004a\\b\001\004mail\000", 11);
	spfkit__dnsb_rr_end(&t->b);
	a = parse(t, SPFKIT_RR_PTR);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->rrs[0].len, 9);
	assert_memory_equal(a->rrs[0].data, "a\\b\001.mail", 10);
}

static void cname_chain_followed(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 4, 0, SPFKIT_RR_TXT);
	rr_name(t, QNAME, SPFKIT_RR_CNAME, 100, "b.example.net");
	rr_txt(t, "other.example.org", 5, "not me", 6);
	rr_name(t, "b.example.net", SPFKIT_RR_CNAME, 50, "C.example.org");
	rr_txt(t, "c.example.org", 300, "v=spf1 -all", 11);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
	assert_memory_equal(a->rrs[0].data, "v=spf1 -all", 11);
	assert_int_equal(a->ttl, 50); /* the chain is only as good as its links */
}

static void cname_to_nothing_is_nodata(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 1, SPFKIT_RR_TXT);
	rr_name(t, QNAME, SPFKIT_RR_CNAME, 100, "b.example.net");
	rr_soa(t, 600, 400);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_NODATA);
	assert_int_equal(a->ttl, 100);
}

static void cname_loop_tempfails(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 2, 0, SPFKIT_RR_A);
	rr_name(t, QNAME, SPFKIT_RR_CNAME, 100, "b.example.net");
	rr_name(t, "b.example.net", SPFKIT_RR_CNAME, 100, QNAME);
	want_tempfail(t, SPFKIT_RR_A, "CNAME loop");
}

static void cname_chain_too_long(void **state)
{
	struct t *t = *state;
	char owner[16], target[16];
	unsigned i;

	start(t, QR_RA, SPFKIT__DNS_CNAME_MAX + 1, 0, SPFKIT_RR_A);
	rr_name(t, QNAME, SPFKIT_RR_CNAME, 100, "c0.example");
	for (i = 0; i < SPFKIT__DNS_CNAME_MAX; i++) {
		snprintf(owner, sizeof(owner), "c%u.example", i);
		snprintf(target, sizeof(target), "c%u.example", i + 1);
		rr_name(t, owner, SPFKIT_RR_CNAME, 100, target);
	}
	want_tempfail(t, SPFKIT_RR_A, "CNAME chain too long");
}

static void ttl_top_bit_reads_zero(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	rr_a(t, QNAME, 0x80000001u, "\300\000\002\001");
	a = parse(t, SPFKIT_RR_A);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->ttl, 0);
}

static void question_from_message_when_qname_null(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	rr_a(t, QNAME, 10, "\300\000\002\001");
	assert_int_equal(spfkit__dns_reply_parse(&t->r, spfkit__dnsb_data(&t->b),
						 spfkit__dnsb_len(&t->b), NULL, 0, SPFKIT_RR_A),
			 0);
	assert_int_equal(t->r.answer.status, SPFKIT_DNS_OK);
	assert_int_equal(t->r.answer.count, 1);
}

/* ---- void answers and their negative TTL ------------------------------ */

static void zero_answers_is_nodata_with_soa_minimum(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 0, 1, SPFKIT_RR_TXT);
	rr_soa(t, 3600, 300);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_NODATA);
	assert_int_equal(a->count, 0);
	assert_null(a->rrs);
	assert_int_equal(a->ttl, 300); /* RFC 2308 §5: min(TTL, MINIMUM) */
}

static void soa_ttl_smaller_than_minimum(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 0, 1, SPFKIT_RR_TXT);
	rr_soa(t, 120, 86400);
	assert_int_equal(parse(t, SPFKIT_RR_TXT)->ttl, 120);
}

static void nodata_without_soa_has_ttl_zero(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 0, 0, SPFKIT_RR_TXT);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_NODATA);
	assert_int_equal(a->ttl, 0);
}

static void wrong_type_records_are_nodata(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 2, 0, SPFKIT_RR_TXT);
	rr_a(t, QNAME, 10, "\300\000\002\001");
	rr_txt(t, "elsewhere.example.com", 10, "v=spf1", 6);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_NODATA);
	assert_int_equal(a->count, 0);
}

static void nxdomain(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA | SPFKIT__DNS_NXDOMAIN, 0, 1, SPFKIT_RR_A);
	rr_soa(t, 900, 600);
	a = parse(t, SPFKIT_RR_A);
	assert_int_equal(a->status, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(a->ttl, 600);
	assert_null(a->detail);
}

/* ---- failures that are not malformed messages ------------------------- */

static void servfail_refused_formerr(void **state)
{
	struct t *t = *state;

	start(t, QR_RA | SPFKIT__DNS_SERVFAIL, 0, 0, SPFKIT_RR_A);
	want_tempfail(t, SPFKIT_RR_A, "SERVFAIL");
	restart(t, 512);
	start(t, QR_RA | SPFKIT__DNS_REFUSED, 0, 0, SPFKIT_RR_A);
	want_tempfail(t, SPFKIT_RR_A, "REFUSED");
	restart(t, 512);
	/* FORMERR often comes with no question at all */
	spfkit__dnsb_header(&t->b, 7, QR_RA | SPFKIT__DNS_FORMERR, 0, 0, 0, 0);
	want_tempfail(t, SPFKIT_RR_A, "FORMERR");
}

static void truncated_flag_tempfails(void **state)
{
	struct t *t = *state;

	start(t, QR_RA | SPFKIT__DNS_F_TC, 0, 0, SPFKIT_RR_TXT);
	want_tempfail(t, SPFKIT_RR_TXT, "truncated reply");
}

static void question_mismatch(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 0, 0, SPFKIT_RR_A);
	want_tempfail(t, SPFKIT_RR_TXT, "reply does not match the question");
}

/* ---- malformed messages ----------------------------------------------- */

static void not_a_response(void **state)
{
	struct t *t = *state;

	start(t, SPFKIT__DNS_F_RD, 0, 0, SPFKIT_RR_A);
	want_tempfail(t, SPFKIT_RR_A, "malformed reply: not a response");
}

static void truncated_header(void **state)
{
	struct t *t = *state;

	spfkit__dnsb_bytes(&t->b, "\000\007\201\200\000", 5);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: header cut short");
	assert_int_equal(t->r.have_hdr, 0);
	assert_int_equal(spfkit__dns_reply_parse(&t->r, "", 0, QNAME, QLEN, SPFKIT_RR_A), 0);
	assert_int_equal(t->r.answer.status, SPFKIT_DNS_TEMPFAIL);
}

static void question_count_zero(void **state)
{
	struct t *t = *state;

	spfkit__dnsb_header(&t->b, 7, QR_RA, 0, 0, 0, 0);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: question count is not 1");
}

static void pointer_to_itself(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	spfkit__dnsb_ptr(&t->b, AFTER_Q); /* points at its own first octet */
	spfkit__dnsb_bytes(&t->b, "\000\001\000\001\000\000\000\001\000\004\001\002\003\004", 14);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: compression pointer does not point backwards");
	assert_int_equal(t->r.err_off, AFTER_Q);
}

static void forward_pointer(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	spfkit__dnsb_ptr(&t->b, AFTER_Q + 2); /* at the type field that follows */
	spfkit__dnsb_bytes(&t->b, "\000\001\000\001\000\000\000\001\000\004\001\002\003\004", 14);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: compression pointer does not point backwards");
}

/* Label "x" at L, then a pointer back to L: each pointer points before
 * itself, yet following them never ends. */
static void loop_through_backward_pointer(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	spfkit__dnsb_bytes(&t->b, "\001x", 2);
	spfkit__dnsb_ptr(&t->b, AFTER_Q);
	spfkit__dnsb_bytes(&t->b, "\000\001\000\001\000\000\000\001\000\004\001\002\003\004", 14);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: compression pointer does not point backwards");
}

/*
 * An opaque first RR whose RDATA is a chain of pointers, each to the one
 * before it (the first to the question name); the A RR's owner points at
 * the last of them. Following the owner takes `hops` pointers, each one
 * strictly backwards.
 */
static void pointer_chain(struct t *t, size_t hops)
{
	size_t rd0 = AFTER_Q + 1 + 10; /* root owner and fixed fields */
	size_t i;

	spfkit__dnsb_header(&t->b, 7, QR_RA, 1, 2, 0, 0);
	spfkit__dnsb_question(&t->b, QNAME, QLEN, SPFKIT_RR_A);
	spfkit__dnsb_u8(&t->b, 0);
	spfkit__dnsb_u16(&t->b, 65280); /* private-use type: opaque RDATA */
	spfkit__dnsb_u16(&t->b, SPFKIT__DNS_CLASS_IN);
	spfkit__dnsb_u32(&t->b, 0);
	spfkit__dnsb_u16(&t->b, (unsigned)(2 * (hops - 1)));
	spfkit__dnsb_ptr(&t->b, QOFF);
	for (i = 1; i < hops - 1; i++)
		spfkit__dnsb_ptr(&t->b, rd0 + 2 * (i - 1));
	spfkit__dnsb_ptr(&t->b, rd0 + 2 * (hops - 2));
	spfkit__dnsb_bytes(&t->b, "\000\001\000\001\000\000\000\001\000\004\001\002\003\004", 14);
}

static void too_many_pointers(void **state)
{
	struct t *t = *state;

	pointer_chain(t, SPFKIT__DNS_PTR_HOPS + 1);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: too many compression pointers");
}

static void pointer_hops_at_the_limit(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	pointer_chain(t, SPFKIT__DNS_PTR_HOPS);
	a = parse(t, SPFKIT_RR_A);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
}

static void reserved_label_type(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	spfkit__dnsb_bytes(&t->b, "\100abc\000", 5); /* 0x40: extended label type */
	spfkit__dnsb_bytes(&t->b, "\000\001\000\001\000\000\000\001\000\004\001\002\003\004", 14);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: reserved label type");
}

static void name_over_255(void **state)
{
	struct t *t = *state;
	char label[64];
	int i;

	memset(label, 'x', sizeof(label));
	label[0] = 63;
	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	for (i = 0; i < 4; i++) /* 4 * 64 = 256 octets before the root */
		spfkit__dnsb_bytes(&t->b, label, 64);
	spfkit__dnsb_bytes(&t->b, "\000\000\001\000\001\000\000\000\001\000\004\001\002\003\004", 15);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: name longer than 255 octets");
}

static void label_past_end(void **state)
{
	struct t *t = *state;

	spfkit__dnsb_header(&t->b, 7, QR_RA, 1, 0, 0, 0);
	spfkit__dnsb_bytes(&t->b, "\011short", 6); /* a 9-octet label, 5 there */
	want_malformed(t, SPFKIT_RR_A, "malformed reply: label runs past the end");
}

static void rdlength_past_end(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	rr_txt(t, QNAME, 10, "v=spf1", 6);
	/* RDLENGTH sits 2 octets before the 7 octets of RDATA */
	poke(t, spfkit__dnsb_len(&t->b) - 9, "\000\010", 2);
	want_malformed(t, SPFKIT_RR_TXT, "malformed reply: RDATA runs past the end");
}

static void txt_string_past_rdata(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	rr_txt(t, QNAME, 10, "v=spf1", 6);
	poke(t, spfkit__dnsb_len(&t->b) - 7, "\007", 1); /* string length 7 > 6 left */
	want_malformed(t, SPFKIT_RR_TXT, "malformed reply: TXT string runs past the end");
}

/*
 * Issue 7 item 2: RDLENGTH 0 is a TXT with no strings at all. RFC 1035
 * §3.3.14 wants one or more, but other readers take it as an empty
 * record, and the RFC 7208 suite's null-text case depends on it: it is
 * no SPF record and no reason to fail the answer.
 */
static void txt_empty_rdata(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 10);
	spfkit__dnsb_rr_end(&t->b);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(t->r.malformed, 0);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->rrs[0].len, 0);
	assert_non_null(a->rrs[0].data);
	assert_int_equal(a->rrs[0].data[0], 0);
}

/* The null-text answer: {no strings, "v=spf1 -all"}, both kept in order. */
static void txt_empty_rdata_beside_spf(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 2, 0, SPFKIT_RR_TXT);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 10);
	spfkit__dnsb_rr_end(&t->b);
	rr_txt(t, QNAME, 20, "v=spf1 -all", 11);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->ttl, 10);
	assert_int_equal(a->rrs[0].len, 0);
	assert_int_equal(a->rrs[1].len, 11);
	assert_memory_equal(a->rrs[1].data, "v=spf1 -all", 11);
}

/* One zero-length string (what a server sends for TXT ""), and only empty strings. */
static void txt_empty_strings(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 3, 0, SPFKIT_RR_TXT);
	rr_txt(t, QNAME, 10, "", 0);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 10);
	spfkit__dnsb_bytes(&t->b, "\000\000\000", 3);
	spfkit__dnsb_rr_end(&t->b);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 10);
	spfkit__dnsb_bytes(&t->b, "\000\007v=spf1 \000\004-all\000", 15);
	spfkit__dnsb_rr_end(&t->b);
	a = parse(t, SPFKIT_RR_TXT);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 3);
	assert_int_equal(a->rrs[0].len, 0);
	assert_int_equal(a->rrs[1].len, 0);
	assert_int_equal(a->rrs[2].len, 11);
	assert_memory_equal(a->rrs[2].data, "v=spf1 -all", 11);
}

/* Zero-length RDATA of a TXT that is not the type asked is fine too (check_rdata). */
static void txt_empty_rdata_other_name(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 2, 0, SPFKIT_RR_A);
	spfkit__dnsb_rr_begin(&t->b, "other.example", 13, SPFKIT_RR_TXT, 10);
	spfkit__dnsb_rr_end(&t->b);
	rr_a(t, QNAME, 30, "\300\000\002\001");
	a = parse(t, SPFKIT_RR_A);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
}

static void a_with_five_octets(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_A, 10);
	spfkit__dnsb_bytes(&t->b, "\001\002\003\004\005", 5);
	spfkit__dnsb_rr_end(&t->b);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: A record is not 4 octets");
}

static void aaaa_with_four_octets(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_AAAA);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_AAAA, 10);
	spfkit__dnsb_bytes(&t->b, "\001\002\003\004", 4);
	spfkit__dnsb_rr_end(&t->b);
	want_malformed(t, SPFKIT_RR_AAAA, "malformed reply: AAAA record is not 16 octets");
}

/* A wrong-size A record is malformed even when TXT was asked. */
static void bad_rdata_of_other_type(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 2, 0, SPFKIT_RR_TXT);
	rr_txt(t, QNAME, 10, "v=spf1", 6);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_A, 10);
	spfkit__dnsb_bytes(&t->b, "\001\002\003", 3);
	spfkit__dnsb_rr_end(&t->b);
	want_malformed(t, SPFKIT_RR_TXT, "malformed reply: A record is not 4 octets");
}

static void mx_name_shorter_than_rdata(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_MX);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_MX, 10);
	spfkit__dnsb_u16(&t->b, 5);
	spfkit__dnsb_name(&t->b, "mx.example.com", 14);
	spfkit__dnsb_u8(&t->b, 0xff); /* one stray octet after the name */
	spfkit__dnsb_rr_end(&t->b);
	want_malformed(t, SPFKIT_RR_MX, "malformed reply: RDATA length does not match its content");
}

static void name_in_rdata_cannot_run_past_rdata(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_PTR);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_PTR, 10);
	spfkit__dnsb_bytes(&t->b, "\004mail", 5); /* no root label inside RDATA */
	spfkit__dnsb_rr_end(&t->b);
	spfkit__dnsb_bytes(&t->b, "\000", 1);   /* the root just after it */
	want_malformed(t, SPFKIT_RR_PTR, "malformed reply: name runs past the end");
}

static void answer_count_too_large(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 2, 0, SPFKIT_RR_A);
	rr_a(t, QNAME, 10, "\300\000\002\001");
	want_malformed(t, SPFKIT_RR_A, "malformed reply: name runs past the end");
	restart(t, 512);
	start(t, QR_RA, 0xffff, 0, SPFKIT_RR_A);
	rr_a(t, QNAME, 10, "\300\000\002\001");
	want_malformed(t, SPFKIT_RR_A, "malformed reply: record count larger than the message");
}

static void record_header_cut_short(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	/* 11 octets: enough for the count check, not for the fixed fields */
	spfkit__dnsb_bytes(&t->b, "\001a\001b\000\000\001\000\001\000\000", 11);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: record header cut short");
}

static void authority_soa_too_short(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 0, 1, SPFKIT_RR_A);
	spfkit__dnsb_rr_begin(&t->b, "com", 3, SPFKIT_RR_SOA, 10);
	spfkit__dnsb_name(&t->b, "ns.com", 6);
	spfkit__dnsb_name(&t->b, "h.com", 5);
	spfkit__dnsb_u32(&t->b, 1);
	spfkit__dnsb_rr_end(&t->b);
	want_malformed(t, SPFKIT_RR_A, "malformed reply: SOA record too short");
}

static void message_over_64k(void **state)
{
	struct t *t = *state;
	unsigned char *big = calloc(1, 65536);

	assert_int_equal(spfkit__dns_reply_parse(&t->r, big, 65536, QNAME, QLEN, SPFKIT_RR_A), 0);
	assert_string_equal(t->r.answer.detail, "malformed reply: longer than 65535 octets");
	free(big);
}

/* ---- API edges -------------------------------------------------------- */

static void bad_qname_is_einval(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 0, 0, SPFKIT_RR_A);
	assert_int_equal(spfkit__dns_reply_parse(&t->r, spfkit__dnsb_data(&t->b),
						 spfkit__dnsb_len(&t->b), "a..b", 4, SPFKIT_RR_A),
			 SPFKIT_EINVAL);
	assert_int_equal(t->r.answer.status, SPFKIT_DNS_TEMPFAIL);
}

static void out_of_memory_is_reported(void **state)
{
	struct t *t = *state;
	struct counter cnt = { 0, 0 };
	struct spfkit_allocator fail_alloc = { t_alloc, t_realloc, t_free, &cnt };
	struct spfkit__dns_reply r;
	int i, rc = SPFKIT_ENOMEM;

	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	rr_txt(t, QNAME, 10, "v=spf1 -all", 11);
	/* allow 0 allocations, then 1, ... until one run succeeds */
	for (i = 0; rc == SPFKIT_ENOMEM && i < 10; i++) {
		cnt.left = i;
		spfkit__dns_reply_init(&r, &fail_alloc);
		rc = spfkit__dns_reply_parse(&r, spfkit__dnsb_data(&t->b), spfkit__dnsb_len(&t->b),
					     QNAME, QLEN, SPFKIT_RR_TXT);
		if (rc == SPFKIT_ENOMEM) {
			assert_int_equal(r.answer.status, SPFKIT_DNS_TEMPFAIL);
			assert_string_equal(r.answer.detail, "out of memory");
		}
		spfkit__dns_reply_free(&r);
		assert_int_equal(cnt.live, 0);
	}
	assert_int_equal(rc, 0);
	assert_true(i > 1);
}

static void reply_reused(void **state)
{
	struct t *t = *state;

	start(t, QR_RA, 1, 0, SPFKIT_RR_A);
	rr_a(t, QNAME, 10, "\300\000\002\001");
	assert_int_equal(parse(t, SPFKIT_RR_A)->status, SPFKIT_DNS_OK);
	assert_int_equal(spfkit__dns_reply_parse(&t->r, "\000", 1, QNAME, QLEN, SPFKIT_RR_A), 0);
	assert_int_equal(t->r.answer.status, SPFKIT_DNS_TEMPFAIL);
	assert_int_equal(t->r.answer.count, 0);
	assert_int_equal(parse(t, SPFKIT_RR_A)->status, SPFKIT_DNS_OK);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* resolver.h's SPFKIT_RR_TXT_STRINGS: a TXT answer with its strings
 * kept, RDATA as it came, and the same checks on them. */
static void txt_strings_kept_for_txt_strings(void **state)
{
	struct t *t = *state;
	const struct spfkit_dns_answer *a;

	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 300);
	spfkit__dnsb_bytes(&t->b, "\006v=spf1\005 -all\003a\000b\000", 18);
	spfkit__dnsb_rr_end(&t->b);
	a = parse(t, SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->rrs[0].type, SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(a->rrs[0].len, 18);
	assert_memory_equal(a->rrs[0].data, "\006v=spf1\005 -all\003a\000b\000", 18);
	/* a string running past its RDATA is as malformed as for TXT */
	restart(t, 65535);
	start(t, QR_RA, 1, 0, SPFKIT_RR_TXT);
	spfkit__dnsb_rr_begin(&t->b, QNAME, QLEN, SPFKIT_RR_TXT, 300);
	spfkit__dnsb_bytes(&t->b, "\011v=spf1", 7);
	spfkit__dnsb_rr_end(&t->b);
	want_malformed(t, SPFKIT_RR_TXT_STRINGS, "malformed reply: TXT string runs past the end");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(name_escapes_round_trip),
		cmocka_unit_test(name_root_and_final_dot),
		cmocka_unit_test(name_rejects_bad_text),
		T(query_has_opt_last),
		T(txt_strings_kept_for_txt_strings),
		T(query_rejects_bad_name),
		T(a_records_and_min_ttl),
		T(aaaa_record),
		T(txt_strings_joined),
		T(txt_64k),
		T(mx_with_compressed_exchange),
		T(null_mx_is_empty_name),
		T(ptr_odd_bytes_raw),
		T(cname_chain_followed),
		T(cname_to_nothing_is_nodata),
		T(cname_loop_tempfails),
		T(cname_chain_too_long),
		T(ttl_top_bit_reads_zero),
		T(question_from_message_when_qname_null),
		T(zero_answers_is_nodata_with_soa_minimum),
		T(soa_ttl_smaller_than_minimum),
		T(nodata_without_soa_has_ttl_zero),
		T(wrong_type_records_are_nodata),
		T(nxdomain),
		T(servfail_refused_formerr),
		T(truncated_flag_tempfails),
		T(question_mismatch),
		T(not_a_response),
		T(truncated_header),
		T(question_count_zero),
		T(pointer_to_itself),
		T(forward_pointer),
		T(loop_through_backward_pointer),
		T(too_many_pointers),
		T(pointer_hops_at_the_limit),
		T(reserved_label_type),
		T(name_over_255),
		T(label_past_end),
		T(rdlength_past_end),
		T(txt_string_past_rdata),
		T(txt_empty_rdata),
		T(txt_empty_rdata_beside_spf),
		T(txt_empty_strings),
		T(txt_empty_rdata_other_name),
		T(a_with_five_octets),
		T(aaaa_with_four_octets),
		T(bad_rdata_of_other_type),
		T(mx_name_shorter_than_rdata),
		T(name_in_rdata_cannot_run_past_rdata),
		T(answer_count_too_large),
		T(record_header_cut_short),
		T(authority_soa_too_short),
		T(message_over_64k),
		T(bad_qname_is_einval),
		T(out_of_memory_is_reported),
		T(reply_reused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
