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
	struct spfkit_config cfg = {.alloc = &skew, .default_explanation = "DEFAULT"};
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
			memset(&req, 0, sizeof(req));
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
	memset(&req, 0, sizeof(req));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ip_from_sockaddr),
		cmocka_unit_test(allocator_alignment),
		cmocka_unit_test(answer_from_wire),
		cmocka_unit_test(eval_with_wire_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
