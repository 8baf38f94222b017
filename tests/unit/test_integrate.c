/*
 * Unit tests of what integrators need (issue 8, item 5): addresses from
 * a struct sockaddr, the allocator's alignment contract, DNS replies
 * read from wire format, and a record given as text.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

/* ---- (e) spfkit_ip_from_sockaddr ------------------------------------ */

static void ip_from_sockaddr(void **state)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct sockaddr_storage ss;
	struct spfkit_ip ip, want;
	char buf[SPFKIT_IP_TEXT_MAX];

	(void)state;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(25);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.7", &sin.sin_addr), 1);
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin, sizeof(sin), &ip), 0);
	assert_int_equal(ip.family, 4);
	assert_string_equal(spfkit_ip_format(&ip, buf, sizeof(buf)), "192.0.2.7");
	assert_int_equal(spfkit_ip_parse("192.0.2.7", 9, &want), 0);
	assert_memory_equal(&ip, &want, sizeof(ip));

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_scope_id = 3;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr), 1);
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin6, sizeof(sin6), &ip), 0);
	assert_int_equal(ip.family, 6);
	assert_string_equal(spfkit_ip_format(&ip, buf, sizeof(buf)), "2001:db8::1");

	/* IPv4-mapped: IPv4, exactly as spfkit_ip_parse() gives it */
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.0.2.9", &sin6.sin6_addr), 1);
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin6, sizeof(sin6), &ip), 0);
	assert_int_equal(spfkit_ip_parse("::ffff:192.0.2.9", 16, &want), 0);
	assert_int_equal(ip.family, 4);
	assert_memory_equal(&ip, &want, sizeof(ip));

	/* a sockaddr_storage as accept() fills it */
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, &sin, sizeof(sin));
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&ss, sizeof(ss), &ip), 0);
	assert_int_equal(ip.family, 4);

	/* errors leave *out untouched */
	memset(&want, 0xa5, sizeof(want));
	ip = want;
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin, sizeof(sin) - 1, &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin6, sizeof(sin6) - 1, &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin, 0, &ip), SPFKIT_EINVAL);
	ss.ss_family = AF_UNIX;
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&ss, sizeof(ss), &ip), SPFKIT_EINVAL);
	ss.ss_family = AF_UNSPEC;
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&ss, sizeof(ss), &ip), SPFKIT_EINVAL);
	assert_memory_equal(&ip, &want, sizeof(ip));
	assert_int_equal(spfkit_ip_from_sockaddr(NULL, sizeof(sin), &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_from_sockaddr((struct sockaddr *)&sin, sizeof(sin), NULL), SPFKIT_EINVAL);
}

/* ---- (c) the allocator's alignment ---------------------------------- */

/*
 * An allocator that gives exactly what common.h promises and no more:
 * every block aligned to max_align_t but never to twice that, so any
 * place that assumed more (a 32-byte SIMD load, a 2*max_align_t packed
 * layout) would be caught by UBSan's alignment check or the assertions.
 */
#define SKEW_ALIGN _Alignof(max_align_t)

struct skew_head {
	void *raw;
	size_t size;
};

static long skew_live;

static void *skew_alloc(void *u, size_t n)
{
	unsigned char *raw, *p;
	uintptr_t at;

	(void)u;
	assert_true(n > 0);
	raw = malloc(n + 3 * SKEW_ALIGN + sizeof(struct skew_head));
	if (raw == NULL)
		return NULL;
	at = ((uintptr_t)raw + sizeof(struct skew_head) + 2 * SKEW_ALIGN - 1) & ~(uintptr_t)(2 * SKEW_ALIGN - 1);
	p = (unsigned char *)at + SKEW_ALIGN; /* aligned to max_align_t, never to 2x */
	memcpy(p - sizeof(struct skew_head), &(struct skew_head){raw, n}, sizeof(struct skew_head));
	skew_live++;
	return p;
}

static void skew_free(void *u, void *p)
{
	struct skew_head h;

	(void)u;
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % SKEW_ALIGN, 0);
	memcpy(&h, (unsigned char *)p - sizeof(h), sizeof(h));
	skew_live--;
	free(h.raw);
}

static void *skew_realloc(void *u, void *p, size_t n)
{
	struct skew_head h;
	void *q = skew_alloc(u, n);

	if (q == NULL || p == NULL)
		return q;
	memcpy(&h, (unsigned char *)p - sizeof(h), sizeof(h));
	memcpy(q, p, h.size < n ? h.size : n);
	skew_free(u, p);
	return q;
}

static const struct spfkit_allocator skew = {skew_alloc, skew_realloc, skew_free, NULL};

static void zone_txt(struct spfkit_zone *z, const char *name, const char *text)
{
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_TXT, 300, text, strlen(text), 0), 0);
}

static void zone_a(struct spfkit_zone *z, const char *name, const char *ip)
{
	unsigned char a[4];

	assert_int_equal(inet_pton(AF_INET, ip, a), 1);
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_A, 300, a, 4, 0), 0);
}

static void allocator_alignment(void **state)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &skew, .default_explanation = "DEFAULT"};
	struct spfkit_zone *z;
	struct spfkit_cache *cache;
	struct spfkit_resolver *zr, *cr;
	struct spfkit_ctx *ctx;
	struct spfkit_eval *ev;
	struct spfkit_request req;
	struct spfkit_record *rec;
	const char *senders[] = {"a@example.org", "b@example.org", "c@other.example"};
	size_t i;
	int look;

	(void)state;
	assert_int_equal(spfkit_record_parse("v=spf1 a:%{d} ip6:2001:db8::/32 -all", 36, &skew, &rec, NULL), 0);
	spfkit_record_free(rec);
	assert_int_equal(spfkit_zone_new(&skew, &z), 0);
	zone_txt(z, "example.org", "v=spf1 include:inc.example.org mx exp=exp.example.org -all");
	zone_txt(z, "inc.example.org", "v=spf1 a:host.example.org ~all");
	zone_txt(z, "exp.example.org", "not from %{i} at %{d}");
	zone_txt(z, "other.example", "v=spf1 redirect=example.org");
	zone_a(z, "host.example.org", "192.0.2.10");
	assert_int_equal(spfkit_cache_new(NULL, &skew, &cache), 0);
	for (look = 0; look < 2; look++) {
		cfg.no_lookahead = look;
		assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
		for (i = 0; i < sizeof(senders) / sizeof(senders[0]); i++) {
			spfkit_request_init(&req);
			assert_int_equal(spfkit_ip_parse("192.0.2.99", 10, &req.ip), 0);
			req.sender = senders[i];
			req.sender_len = strlen(senders[i]);
			req.helo = "helo.example.org";
			req.helo_len = 16;
			assert_int_equal(spfkit_zone_resolver(z, &zr), 0);
			assert_int_equal(spfkit_cache_resolver(cache, zr, &cr), 0);
			assert_int_equal(spfkit_check(ctx, cr, &req, &ev), 0);
			assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_FAIL);
			assert_string_equal(spfkit_eval_result(ev)->explanation, "not from 192.0.2.99 at example.org");
			spfkit_eval_free(ev);
			spfkit_resolver_free(cr);
			spfkit_resolver_free(zr);
		}
		spfkit_ctx_free(ctx);
	}
	spfkit_cache_free(cache);
	spfkit_zone_free(z);
	assert_int_equal(skew_live, 0);
}

/* ---- (b) spfkit_dns_answer_from_wire ------------------------------- */

/* Counts live blocks; fails the allocation numbered fail_at (0: never). */
static long cnt_live, cnt_calls, cnt_fail_at;

static void *c_alloc(void *u, size_t n)
{
	void *p;

	(void)u;
	if (cnt_fail_at != 0 && ++cnt_calls == cnt_fail_at)
		return NULL;
	p = malloc(n);
	if (p != NULL)
		cnt_live++;
	return p;
}

static void *c_realloc(void *u, void *p, size_t n)
{
	void *q = realloc(p, n);

	(void)u;
	if (q != NULL && p == NULL)
		cnt_live++;
	return q;
}

static void c_free(void *u, void *p)
{
	(void)u;
	cnt_live--;
	free(p);
}

static const struct spfkit_allocator counting = {c_alloc, c_realloc, c_free, NULL};

static size_t put_name(unsigned char *m, const char *name)
{
	size_t n = 0, l;

	while (*name != '\0') {
		l = strcspn(name, ".");
		m[n++] = (unsigned char)l;
		memcpy(m + n, name, l);
		n += l;
		name += l;
		if (*name == '.')
			name++;
	}
	m[n++] = 0;
	return n;
}

static size_t put16(unsigned char *m, unsigned v)
{
	m[0] = (unsigned char)(v >> 8);
	m[1] = (unsigned char)v;
	return 2;
}

/* A reply with id 7, the given rcode, question (qname, qtype) and, when
 * txt is not NULL, one TXT answer at the question's name (TTL 300). */
static size_t build_reply(unsigned char *m, unsigned rcode, const char *qname, uint16_t qtype,
			  const char *txt)
{
	size_t n = 0, tl;

	n += put16(m + n, 7);
	n += put16(m + n, 0x8180 | rcode); /* QR RD RA */
	n += put16(m + n, 1);
	n += put16(m + n, txt != NULL);
	n += put16(m + n, 0);
	n += put16(m + n, 0);
	n += put_name(m + n, qname);
	n += put16(m + n, qtype);
	n += put16(m + n, 1);
	if (txt == NULL)
		return n;
	tl = strlen(txt);
	n += put16(m + n, 0xc00c); /* the question's name */
	n += put16(m + n, SPFKIT_RR_TXT);
	n += put16(m + n, 1);
	n += put16(m + n, 0);
	n += put16(m + n, 300);
	n += put16(m + n, (unsigned)tl + 1);
	m[n++] = (unsigned char)tl;
	memcpy(m + n, txt, tl);
	return n + tl;
}

static void answer_from_wire(void **state)
{
	unsigned char m[512];
	struct spfkit_dns_answer *a;
	char longname[80];
	size_t n;

	(void)state;
	n = build_reply(m, 0, "example.org", SPFKIT_RR_TXT, "v=spf1 -all");
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->ttl, 300);
	assert_int_equal(a->rrs[0].len, 11);
	assert_memory_equal(a->rrs[0].data, "v=spf1 -all", 11);
	spfkit_dns_answer_free(a);
	assert_int_equal(cnt_live, 0);

	/* the name as submit() takes it: a final dot, any case */
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "EXAMPLE.org.", 12, SPFKIT_RR_TXT, NULL, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_OK);
	spfkit_dns_answer_free(a);

	/* NOERROR with no record of the type, NXDOMAIN */
	n = build_reply(m, 0, "example.org", SPFKIT_RR_TXT, NULL);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_NODATA);
	assert_int_equal(a->count, 0);
	spfkit_dns_answer_free(a);
	n = build_reply(m, 3, "example.org", SPFKIT_RR_TXT, NULL);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_NXDOMAIN);
	spfkit_dns_answer_free(a);
	n = build_reply(m, 2, "example.org", SPFKIT_RR_TXT, NULL);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(a->detail, "SERVFAIL");
	spfkit_dns_answer_free(a);

	/* malformed: cut inside the answer; a header alone; nothing */
	n = build_reply(m, 0, "example.org", SPFKIT_RR_TXT, "v=spf1 -all");
	assert_int_equal(spfkit_dns_answer_from_wire(m, n - 3, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	assert_non_null(strstr(a->detail, "malformed"));
	spfkit_dns_answer_free(a);
	assert_int_equal(spfkit_dns_answer_from_wire(m, 5, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	spfkit_dns_answer_free(a);
	assert_int_equal(spfkit_dns_answer_from_wire(NULL, 0, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	spfkit_dns_answer_free(a);

	/* the reply is to another question: name, then type */
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.com", 11, SPFKIT_RR_TXT, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	assert_int_equal(a->count, 0);
	spfkit_dns_answer_free(a);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_MX, &counting, &a), 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	spfkit_dns_answer_free(a);
	assert_int_equal(cnt_live, 0);

	/* caller errors: *out is NULL, nothing allocated */
	a = (struct spfkit_dns_answer *)m;
	assert_int_equal(spfkit_dns_answer_from_wire(NULL, n, "example.org", 11, SPFKIT_RR_TXT, &counting, &a), SPFKIT_EINVAL);
	assert_null(a);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, NULL, 11, SPFKIT_RR_TXT, &counting, &a), SPFKIT_EINVAL);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_TXT, &counting, NULL), SPFKIT_EINVAL);
	memset(longname, 'x', sizeof(longname));
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, longname, 70, SPFKIT_RR_TXT, &counting, &a), SPFKIT_EINVAL);
	assert_null(a);
	assert_int_equal(spfkit_dns_answer_from_wire(m, n, "a..b", 4, SPFKIT_RR_TXT, &counting, &a), SPFKIT_EINVAL);
	assert_int_equal(cnt_live, 0);
	spfkit_dns_answer_free(NULL);

	/* out of memory at each allocation: SPFKIT_ENOMEM, nothing kept */
	for (cnt_fail_at = 1;; cnt_fail_at++) {
		int rc;

		cnt_calls = 0;
		rc = spfkit_dns_answer_from_wire(m, n, "example.org", 11, SPFKIT_RR_TXT, &counting, &a);
		if (rc == 0) {
			assert_int_equal(a->status, SPFKIT_DNS_OK);
			spfkit_dns_answer_free(a);
			break;
		}
		assert_int_equal(rc, SPFKIT_ENOMEM);
		assert_null(a);
		assert_int_equal(cnt_live, 0);
	}
	cnt_fail_at = 0;
	assert_int_equal(cnt_live, 0);
}

/* The use it is for: an evaluation driven by replies read off the wire. */
static void eval_with_wire_answers(void **state)
{
	struct spfkit_ctx *ctx;
	struct spfkit_eval *ev;
	struct spfkit_request req;
	struct spfkit_question q;
	struct spfkit_dns_answer *a;
	unsigned char m[512];
	size_t n;
	int s, asked = 0;

	(void)state;
	assert_int_equal(spfkit_ctx_new(NULL, &ctx), 0);
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = "a@example.org";
	req.sender_len = 13;
	req.helo = "mx.example.org";
	req.helo_len = 14;
	assert_int_equal(spfkit_eval_new(ctx, &req, &ev), 0);
	while ((s = spfkit_eval_step(ev, &q)) != SPFKIT_STEP_DONE) {
		assert_int_equal(s, SPFKIT_STEP_QUERY);
		assert_int_equal(q.type, SPFKIT_RR_TXT);
		assert_memory_equal(q.name, "example.org", 11);
		n = build_reply(m, 0, "example.org", SPFKIT_RR_TXT, "v=spf1 ip4:192.0.2.0/24 -all");
		assert_int_equal(spfkit_dns_answer_from_wire(m, n, q.name, q.name_len, q.type, NULL, &a), 0);
		assert_int_equal(spfkit_eval_answer(ev, q.id, a), 0);
		spfkit_dns_answer_free(a);
		asked++;
	}
	assert_int_equal(asked, 1);
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_PASS);
	spfkit_eval_free(ev);
	spfkit_ctx_free(ctx);
}

/* ---- (a) a record given as text ------------------------------------ */

struct given_fx {
	struct spfkit_zone *zone;  /* what DNS holds */
	struct spfkit_ctx *ctx[2]; /* lookahead on, off */
	struct spfkit_eval *ev;
};

static void given_setup(struct given_fx *fx)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &counting, .default_explanation = "DEFAULT"};

	memset(fx, 0, sizeof(*fx));
	assert_int_equal(spfkit_zone_new(&counting, &fx->zone), 0);
	assert_int_equal(spfkit_ctx_new(&cfg, &fx->ctx[0]), 0);
	cfg.no_lookahead = 1;
	assert_int_equal(spfkit_ctx_new(&cfg, &fx->ctx[1]), 0);
}

static void given_teardown(struct given_fx *fx)
{
	spfkit_eval_free(fx->ev);
	spfkit_ctx_free(fx->ctx[0]);
	spfkit_ctx_free(fx->ctx[1]);
	spfkit_zone_free(fx->zone);
	assert_int_equal(cnt_live, 0);
}

/* Check sender@example.org from ip; record NULL: fetched from the zone. */
static const struct spfkit_result *given_check(struct given_fx *fx, int ctx, const char *ip,
					       const char *record)
{
	struct spfkit_resolver *r;
	struct spfkit_request req;
	int rc;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse(ip, strlen(ip), &req.ip), 0);
	req.sender = "someone@example.org";
	req.sender_len = strlen(req.sender);
	req.helo = "mx.example.net";
	req.helo_len = strlen(req.helo);
	req.now = 1700000000;
	spfkit_eval_free(fx->ev);
	fx->ev = NULL;
	assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
	if (record != NULL)
		rc = spfkit_check_record(fx->ctx[ctx], r, &req, record, strlen(record), &fx->ev);
	else
		rc = spfkit_check(fx->ctx[ctx], r, &req, &fx->ev);
	spfkit_resolver_free(r);
	assert_int_equal(rc, 0);
	assert_non_null(spfkit_eval_result(fx->ev));
	return spfkit_eval_result(fx->ev);
}

static void given_record_basics(void **state)
{
	struct given_fx fx;
	const struct spfkit_result *res;
	int c;

	(void)state;
	given_setup(&fx);
	zone_txt(fx.zone, "inc.example.net", "v=spf1 ip4:198.51.100.0/24 -all");
	zone_txt(fx.zone, "red.example.net", "v=spf1 a -all");
	zone_a(fx.zone, "red.example.net", "203.0.113.7");
	zone_txt(fx.zone, "exp.example.net", "%{i} is not welcome here");
	for (c = 0; c < 2; c++) {
		/* no TXT for example.org at all: without the record, none */
		assert_int_equal(given_check(&fx, c, "192.0.2.1", NULL)->code, SPFKIT_RESULT_NONE);
		res = given_check(&fx, c, "192.0.2.1", "v=spf1 ip4:192.0.2.0/24 -all");
		assert_int_equal(res->code, SPFKIT_RESULT_PASS);
		assert_string_equal(res->domain, "example.org");
		assert_int_equal(res->queries, 0);
		res = given_check(&fx, c, "198.51.100.1", "v=spf1 ip4:192.0.2.0/24 -all");
		assert_int_equal(res->code, SPFKIT_RESULT_FAIL);
		assert_string_equal(res->explanation, "DEFAULT");
		/* an include is looked up */
		res = given_check(&fx, c, "198.51.100.1", "v=spf1 include:inc.example.net ~all");
		assert_int_equal(res->code, SPFKIT_RESULT_PASS);
		assert_int_equal(res->dns_terms, 1);
		assert_int_equal(res->queries, 1);
		assert_int_equal(res->depth, 1);
		assert_int_equal(given_check(&fx, c, "192.0.2.1", "v=spf1 include:inc.example.net ~all")->code,
				 SPFKIT_RESULT_SOFTFAIL);
		/* a redirect too, and the redirect's record decides */
		res = given_check(&fx, c, "203.0.113.7", "v=spf1 redirect=red.example.net");
		assert_int_equal(res->code, SPFKIT_RESULT_PASS);
		assert_string_equal(res->domain, "red.example.net");
		assert_int_equal(given_check(&fx, c, "203.0.113.8", "v=spf1 redirect=red.example.net")->code,
				 SPFKIT_RESULT_FAIL);
		/* exp= is fetched */
		res = given_check(&fx, c, "203.0.113.8", "v=spf1 exp=exp.example.net -all");
		assert_int_equal(res->code, SPFKIT_RESULT_FAIL);
		assert_string_equal(res->explanation, "203.0.113.8 is not welcome here");
		/* a syntax error is the permerror a fetched record gives */
		res = given_check(&fx, c, "192.0.2.1", "v=spf1 ip4:192.0.2.0/33 -all");
		assert_int_equal(res->code, SPFKIT_RESULT_PERMERROR);
		assert_non_null(strstr(res->problem, "example.org"));
		/* include of the checked domain reads its published record (none here) */
		res = given_check(&fx, c, "192.0.2.1", "v=spf1 include:example.org -all");
		assert_int_equal(res->code, SPFKIT_RESULT_PERMERROR);
		assert_non_null(strstr(res->problem, "has no SPF record"));
	}
	given_teardown(&fx);
}

static void fill_zone(struct spfkit_zone *z)
{
	char name[32];
	size_t i;

	zone_txt(z, "inc.example.net", "v=spf1 ip4:198.51.100.0/24 -all");
	zone_txt(z, "exp.example.net", "%{i} is not welcome here");
	zone_txt(z, "mx1.example.net", "unrelated");
	assert_int_equal(spfkit_zone_add(z, "example.org", 11, SPFKIT_RR_MX, 300, "mx1.example.net", 15, 10), 0);
	zone_a(z, "mx1.example.net", "203.0.113.9");
	zone_a(z, "host.example.net", "192.0.2.1");
	for (i = 1; i <= 11; i++) {
		snprintf(name, sizeof(name), "i%zu.example.net", i);
		zone_txt(z, name, "v=spf1 ?a:nothing.example.net");
	}
}

/* The same record fetched and given: the same result, counters, text. */
static void given_record_equals_fetched(void **state)
{
	static const char *records[] = {
		"v=spf1 ip4:192.0.2.0/24 -all",
		"v=spf1 mx a:host.example.net ip4:203.0.113.0/24 ~all",
		"v=spf1 include:inc.example.net exp=exp.example.net -all",
		"v=spf1 include:inc.example.net include:inc.example.net ?all", /* twice */
		"v=spf1 a:v1.example.net a:v2.example.net a:v3.example.net -all", /* void limit */
		"v=spf1 include:i1.example.net include:i2.example.net include:i3.example.net "
		"include:i4.example.net include:i5.example.net include:i6.example.net "
		"include:i7.example.net include:i8.example.net include:i9.example.net "
		"include:i10.example.net include:i11.example.net -all", /* 11 terms */
		"v=spf1 redirect=inc.example.net",
		"v=spf1 a:%{l}.example.net/33 -all",
		"v=spf1 ?all",
		"v=spf1 exists:%{i}.bl.example.net -all",
	};
	static const char *ips[] = {"192.0.2.1", "203.0.113.9", "198.51.100.1", "2001:db8::1"};
	struct given_fx fx;
	struct spfkit_zone *bare, *full;
	struct spfkit_result want;
	const struct spfkit_result *res;
	size_t i, j;
	int c;

	(void)state;
	given_setup(&fx);
	bare = fx.zone;
	fill_zone(bare);
	for (i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
		/* the same zone with the record published */
		assert_int_equal(spfkit_zone_new(&counting, &full), 0);
		fill_zone(full);
		zone_txt(full, "example.org", records[i]);
		for (j = 0; j < sizeof(ips) / sizeof(ips[0]); j++) {
			for (c = 0; c < 2; c++) {
				fx.zone = full;
				want = *given_check(&fx, c, ips[j], NULL);
				want.problem = want.problem ? strdup(want.problem) : NULL;
				want.explanation = want.explanation ? strdup(want.explanation) : NULL;
				want.mechanism = want.mechanism ? strdup(want.mechanism) : NULL;
				want.domain = want.domain ? strdup(want.domain) : NULL;
				fx.zone = bare;
				res = given_check(&fx, c, ips[j], records[i]);
				if (res->code != want.code || res->dns_terms != want.dns_terms ||
				    res->void_lookups != want.void_lookups)
					fail_msg("%s from %s (lookahead %s): %s %u %u given, %s %u %u fetched", records[i],
						 ips[j], c ? "off" : "on", spfkit_result_name(res->code), res->dns_terms,
						 res->void_lookups, spfkit_result_name(want.code), want.dns_terms,
						 want.void_lookups);
#define SAME(f) assert_true((res->f == NULL) == (want.f == NULL) && (res->f == NULL || strcmp(res->f, want.f) == 0))
				SAME(problem);
				SAME(explanation);
				SAME(mechanism);
				SAME(domain);
#undef SAME
				free((void *)want.problem);
				free((void *)want.explanation);
				free((void *)want.mechanism);
				free((void *)want.domain);
			}
		}
		spfkit_eval_free(fx.ev);
		fx.ev = NULL;
		spfkit_zone_free(full);
	}
	given_teardown(&fx);
}

static void given_record_errors(void **state)
{
	struct given_fx fx;
	struct spfkit_request req;
	struct spfkit_eval *ev;
	struct spfkit_resolver *r;
	char *big;
	int rc;

	(void)state;
	given_setup(&fx);
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = "a@example.org";
	req.sender_len = 13;
	ev = (struct spfkit_eval *)&req;
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, NULL, 5, &ev), SPFKIT_EINVAL);
	assert_null(ev);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, "", 0, &ev), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, "hello", 5, &ev), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, "v=spf10 -all", 12, &ev), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, "v=spf1 -all", 11, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new_record(NULL, &req, "v=spf1 -all", 11, &ev), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], NULL, "v=spf1 -all", 11, &ev), SPFKIT_EINVAL);
	big = malloc(SPFKIT_RECORD_TEXT_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', SPFKIT_RECORD_TEXT_MAX + 2);
	memcpy(big, "v=spf1", 6);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, big, SPFKIT_RECORD_TEXT_MAX + 1, &ev), SPFKIT_E2BIG);
	assert_int_equal(spfkit_eval_new_record(fx.ctx[0], &req, big, SPFKIT_RECORD_TEXT_MAX, &ev), 0);
	free(big);
	spfkit_eval_free(ev);
	assert_int_equal(spfkit_zone_resolver(fx.zone, &r), 0);
	ev = (struct spfkit_eval *)&req;
	assert_int_equal(spfkit_check_record(fx.ctx[0], r, &req, NULL, 0, &ev), SPFKIT_EINVAL);
	assert_null(ev);
	assert_int_equal(spfkit_check_record(fx.ctx[0], r, &req, "spf1", 4, &ev), SPFKIT_EINVAL);
	/* "v=spf1" alone is a record with no terms: neutral */
	assert_int_equal(spfkit_check_record(fx.ctx[0], r, &req, "V=SPF1", 6, &ev), 0);
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_NEUTRAL);
	spfkit_eval_free(ev);
	/* out of memory anywhere: SPFKIT_ENOMEM and nothing kept, or the result */
	for (cnt_fail_at = 1;; cnt_fail_at++) {
		cnt_calls = 0;
		rc = spfkit_check_record(fx.ctx[1], r, &req, "v=spf1 ip4:192.0.2.0/24 -all", 28, &ev);
		if (rc == 0)
			break;
		assert_int_equal(rc, SPFKIT_ENOMEM);
		assert_null(ev);
	}
	cnt_fail_at = 0;
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_PASS);
	spfkit_eval_free(ev);
	spfkit_resolver_free(r);
	given_teardown(&fx);
}

static void ip_reverse_name(void **state)
{
	struct spfkit_ip ip;
	char buf[SPFKIT_IP_REVERSE_MAX];
	const char *v6 = "b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa";

	(void)state;
	assert_int_equal(spfkit_ip_parse("192.0.2.7", 9, &ip), 0);
	assert_int_equal(spfkit_ip_reverse_name(&ip, buf, sizeof(buf)), 22);
	assert_string_equal(buf, "7.2.0.192.in-addr.arpa");
	assert_int_equal(spfkit_ip_parse("255.10.0.100", 12, &ip), 0);
	assert_int_equal(spfkit_ip_reverse_name(&ip, buf, sizeof(buf)), 25);
	assert_string_equal(buf, "100.0.10.255.in-addr.arpa");
	assert_int_equal(spfkit_ip_parse("4321:0:1:2:3:4:567:89ab", 23, &ip), 0);
	assert_int_equal(spfkit_ip_reverse_name(&ip, buf, sizeof(buf)), strlen(v6));
	assert_string_equal(buf, v6);
	/* too small: nothing half-written */
	assert_int_equal(spfkit_ip_reverse_name(&ip, buf, strlen(v6)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(spfkit_ip_reverse_name(NULL, buf, sizeof(buf)), 0);
	ip.family = 5;
	assert_int_equal(spfkit_ip_reverse_name(&ip, buf, sizeof(buf)), 0);
}

/* ---- item 3: caller-filled structs carry their size ------------------ */

/* A newer caller's struct: this library's fields, then one it lacks. */
struct newer_config {
	struct spfkit_config known;
	uint64_t unknown;
};
struct newer_request {
	struct spfkit_request known;
	uint64_t unknown;
};

static void sized_structs(void **state)
{
	struct newer_config nc;
	struct newer_request nr;
	struct spfkit_cache_options co;
	struct spfkit_cares_options ro;
	struct spfkit_ctx *ctx = NULL;
	struct spfkit_eval *ev = NULL;
	struct spfkit_cache *cache = NULL;
	struct spfkit_resolver *r = NULL;

	(void)state;
	/* Zeroed without *_init(): refused, not read with a guessed layout. */
	memset(&nc, 0, sizeof(nc));
	assert_int_equal(spfkit_ctx_new(&nc.known, &ctx), SPFKIT_EINVAL);
	nc.known.size = offsetof(struct spfkit_config, receiver); /* below any release */
	assert_int_equal(spfkit_ctx_new(&nc.known, &ctx), SPFKIT_EINVAL);
	/* A newer caller that leaves the new field at its default: fine. */
	nc.known.size = sizeof(nc);
	nc.known.receiver = "mx.newer.example";
	assert_int_equal(spfkit_ctx_new(&nc.known, &ctx), 0);
	spfkit_ctx_free(ctx);
	ctx = NULL;
	/* ... that sets a field this library does not know: refused. */
	nc.unknown = 1;
	assert_int_equal(spfkit_ctx_new(&nc.known, &ctx), SPFKIT_EINVAL);
	assert_null(ctx);

	assert_int_equal(spfkit_ctx_new(NULL, &ctx), 0);
	memset(&nr, 0, sizeof(nr));
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &nr.known.ip), 0);
	assert_int_equal(spfkit_eval_new(ctx, &nr.known, &ev), SPFKIT_EINVAL);
	nr.known.size = sizeof(nr);
	assert_int_equal(spfkit_eval_new(ctx, &nr.known, &ev), 0);
	spfkit_eval_free(ev);
	ev = NULL;
	nr.unknown = 7;
	assert_int_equal(spfkit_eval_new(ctx, &nr.known, &ev), SPFKIT_EINVAL);
	assert_null(ev);
	spfkit_request_init(&nr.known);
	assert_int_equal(nr.known.size, sizeof(struct spfkit_request));
	assert_int_equal(nr.known.ip.family, 0);
	spfkit_ctx_free(ctx);

	memset(&co, 0, sizeof(co));
	assert_int_equal(spfkit_cache_new(&co, NULL, &cache), SPFKIT_EINVAL);
	spfkit_cache_options_init(&co);
	assert_int_equal(spfkit_cache_new(&co, NULL, &cache), 0);
	spfkit_cache_free(cache);
	memset(&ro, 0, sizeof(ro));
	ro.servers = "127.0.0.1:53";
	assert_int_equal(spfkit_cares_new(&ro, NULL, &r, NULL, 0), SPFKIT_EINVAL);
	assert_null(r);
	spfkit_cares_options_init(&ro);
	ro.servers = "127.0.0.1:53";
	assert_int_equal(spfkit_cares_new(&ro, NULL, &r, NULL, 0), 0);
	spfkit_resolver_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ip_from_sockaddr),
		cmocka_unit_test(allocator_alignment),
		cmocka_unit_test(answer_from_wire),
		cmocka_unit_test(eval_with_wire_answers),
		cmocka_unit_test(given_record_basics),
		cmocka_unit_test(given_record_equals_fetched),
		cmocka_unit_test(given_record_errors),
		cmocka_unit_test(sized_structs),
		cmocka_unit_test(ip_reverse_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
