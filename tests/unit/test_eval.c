/*
 * Unit tests of the evaluator (lib/spf/eval.c and friends) against small
 * zones built in code: every mechanism, every limit at its value and one
 * past it, every permerror reason, the sans-I/O contract, hostile input,
 * and allocation failure. Allocations go through cmocka's test_malloc,
 * so each test also fails on a leak.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

#include "eval_int.h"
#include "ipaddr.h" /* spfkit__ipaddr_match(); spfkit__query_record_bytes(): parsed records held */

/* Counts live blocks; teardown checks that every evaluation, zone and
 * context gave back all it took. */
static atomic_long live_blocks; /* threads allocate too */

static void *t_alloc(void *u, size_t n)
{
	void *p = malloc(n);

	(void)u;
	if (p != NULL)
		live_blocks++;
	return p;
}

static void *t_realloc(void *u, void *p, size_t n)
{
	void *q = realloc(p, n);

	(void)u;
	if (q != NULL && p == NULL)
		live_blocks++;
	return q;
}

static void t_free(void *u, void *p)
{
	(void)u;
	if (p != NULL)
		live_blocks--;
	free(p);
}

static const struct spfkit_allocator test_alloc = {t_alloc, t_realloc, t_free, NULL};

struct fixture {
	struct spfkit_zone *zone;
	struct spfkit_ctx *ctx;
	struct spfkit_eval *ev;
	const struct spfkit_result *res;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc, .default_explanation = "DEFAULT",
				    .receiver = "mx.receiver.example"};

	assert_non_null(fx);
	assert_int_equal(spfkit_zone_new(&test_alloc, &fx->zone), 0);
	assert_int_equal(spfkit_ctx_new(&cfg, &fx->ctx), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	spfkit_eval_free(fx->ev);
	spfkit_ctx_free(fx->ctx);
	spfkit_zone_free(fx->zone);
	free(fx);
	assert_int_equal(atomic_load(&live_blocks), 0);
	return 0;
}

static void txt(struct fixture *fx, const char *name, const char *text)
{
	assert_int_equal(spfkit_zone_add(fx->zone, name, strlen(name), SPFKIT_RR_TXT, 300, text,
					 strlen(text), 0), 0);
}

static void addr(struct fixture *fx, const char *name, const char *ip)
{
	unsigned char a[16];
	int v6 = strchr(ip, ':') != NULL;

	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, ip, a), 1);
	assert_int_equal(spfkit_zone_add(fx->zone, name, strlen(name),
					 v6 ? SPFKIT_RR_AAAA : SPFKIT_RR_A, 300, a, v6 ? 16 : 4, 0), 0);
}

static void name_rr(struct fixture *fx, const char *name, uint16_t type, const char *target,
		    uint16_t pref)
{
	assert_int_equal(spfkit_zone_add(fx->zone, name, strlen(name), type, 300, target,
					 strlen(target), pref), 0);
}

/* Evaluate through the zone resolver; returns the result code. */
static enum spfkit_result_code check_id(struct fixture *fx, const char *ip, const char *sender,
					const char *helo, enum spfkit_identity id)
{
	struct spfkit_resolver *r;
	struct spfkit_request req;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse(ip, strlen(ip), &req.ip), 0);
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = helo;
	req.helo_len = strlen(helo);
	req.identity = id;
	req.now = 1700000000;
	spfkit_eval_free(fx->ev);
	fx->ev = NULL;
	assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
	assert_int_equal(spfkit_check(fx->ctx, r, &req, &fx->ev), 0);
	spfkit_resolver_free(r);
	fx->res = spfkit_eval_result(fx->ev);
	assert_non_null(fx->res);
	return fx->res->code;
}

static enum spfkit_result_code check(struct fixture *fx, const char *ip, const char *sender)
{
	return check_id(fx, ip, sender, "helo.example.org", SPFKIT_IDENTITY_MAILFROM);
}

#define assert_result(got, want) assert_string_equal(spfkit_result_name(got), spfkit_result_name(want))
#define assert_problem_has(fx, text)                                                     \
	do {                                                                             \
		assert_non_null((fx)->res->problem);                                     \
		if (strstr((fx)->res->problem, (text)) == NULL)                          \
			fail_msg("problem \"%s\" lacks \"%s\"", (fx)->res->problem, (text)); \
	} while (0)

/* ---- issue 7: API misuse, results that differ from peers, OOM ------- */

/* Item 5: every misuse of the public API is SPFKIT_EINVAL (or the
 * documented harmless result), never a crash. */
static void h4_api_misuse(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_ip ip;
	struct spfkit_cache_stats st;
	struct spfkit_cache *cache;
	struct spfkit_smtp_reply reply;
	struct spfkit_result res;
	struct spfkit_request req;
	struct spfkit_question q;
	struct spfkit_eval *ev = NULL;
	struct spfkit_config bad_exp = {.size = sizeof(struct spfkit_config), .default_explanation = "%{z}"};
	struct spfkit_ctx *ctx = NULL;
	char buf[64];

	/* a NUL inside a length-delimited input is invalid */
	assert_int_equal(spfkit_ip_parse("1.2.3.4\0junk", 12, &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse("1.2.3.4\0", 8, &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse("::1\0", 4, &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse(NULL, 7, &ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse("1.2.3.4", 7, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse("1.2.3.4", 7, &ip), 0);
	assert_null(spfkit_ip_format(NULL, buf, sizeof(buf)));
	assert_null(spfkit_ip_format(&ip, NULL, sizeof(buf)));
	assert_string_equal(spfkit_ip_format(&ip, buf, 6), "1.2.3"); /* cut to fit */
	memset(&ip, 0, sizeof(ip));                  /* family 0 */
	assert_null(spfkit_ip_format(&ip, buf, sizeof(buf)));
	assert_int_equal(spfkit_result_from_name(NULL, 4), -1);
	assert_int_equal(spfkit_result_from_name(NULL, 0), -1);
	assert_int_equal(spfkit_result_from_name("pass\0", 5), -1);
	assert_int_equal(spfkit_result_from_name("PASS", 4), SPFKIT_RESULT_PASS);
	/* NULL cache: zeros; NULL out: nothing */
	memset(&st, 0xff, sizeof(st));
	spfkit_cache_stats(NULL, &st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(spfkit_cache_new(NULL, NULL, &cache), 0);
	spfkit_cache_stats(cache, NULL);
	spfkit_cache_free(cache);
	memset(&res, 0, sizeof(res));
	res.code = SPFKIT_RESULT_FAIL;
	spfkit_smtp_reply_for(&res, NULL);
	spfkit_smtp_reply_for(NULL, &reply);
	assert_int_equal(reply.code, 0);
	assert_int_equal(spfkit_format_smtp_reply(NULL, buf, sizeof(buf)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_format_smtp_reply(&res, NULL, 10), SPFKIT_EINVAL);
	assert_int_equal(spfkit_format_received_spf(NULL, 1, buf, sizeof(buf)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_format_auth_results(NULL, "x", 1, buf, sizeof(buf)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_record_is_spf(NULL, 6), 0);
	assert_string_equal(spfkit_rrtype_name(SPFKIT_RR_TXT, NULL, 4), "");
	assert_int_equal(spfkit_resolver_submit(NULL, "x", 1, SPFKIT_RR_A, NULL, NULL, NULL),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_resolver_wait(NULL, 0), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ctx_new(NULL, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ctx_new(&bad_exp, &ctx), SPFKIT_EINVAL);
	assert_null(ctx);
	assert_int_equal(spfkit_check(NULL, NULL, NULL, &ev), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new(fx->ctx, NULL, &ev), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_step(NULL, &q), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_answer(NULL, 1, NULL), SPFKIT_EINVAL);
	assert_null(spfkit_eval_result(NULL));
	/* identities with a NUL inside */
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = "a\0b@x.example";
	req.sender_len = 13;
	req.helo = "h.example";
	req.helo_len = 9;
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), SPFKIT_EINVAL);
	assert_null(ev);
	req.sender = "a@x.example";
	req.sender_len = 11;
	req.helo = "h.exa\0mple";
	req.helo_len = 10;
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), SPFKIT_EINVAL);
	assert_null(ev);
}

/* Item 5: answers the evaluator cannot hold are refused before any byte
 * is read; the question stays open, and a good answer still finishes it. */
static void h4_answer_misuse(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = "a@x.example", .sender_len = 11, .helo = "h.example", .helo_len = 9};
	static const char rec[] = "v=spf1 ip4:192.0.2.0/24 -all";
	struct spfkit_dns_rr rr = {.type = SPFKIT_RR_TXT, .ttl = 60};
	struct spfkit_dns_answer ans = {.status = SPFKIT_DNS_OK, .rrs = NULL, .count = 1};
	struct spfkit_question q;
	struct spfkit_eval *ev;

	assert_int_equal(spfkit_ip_parse("192.0.2.7", 9, &req.ip), 0);
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_QUERY);
	/* records pointer NULL with a count */
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), SPFKIT_EINVAL);
	/* a record with NULL data and a length */
	ans.rrs = &rr;
	rr.data = NULL;
	rr.len = 5;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), SPFKIT_EINVAL);
	/* count * sizeof and len + 1 would wrap */
	rr.data = (const unsigned char *)rec;
	rr.len = SIZE_MAX;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), SPFKIT_EINVAL);
	rr.len = sizeof(rec) - 1;
	ans.count = SIZE_MAX / sizeof(rr) + 2;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), SPFKIT_EINVAL);
	/* the question is still open: the good answer is taken */
	ans.count = 1;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_DONE);
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_PASS);
	spfkit_eval_free(ev);
}

/* Item 6: a record of 2,000 terms (26 KiB, far below 64 KiB) evaluates,
 * as pyspf and Mail::SPF do: pass on its last ip4. */
static void h4_record_of_2000_terms(void **state)
{
	struct fixture *fx = *state;
	enum { N = 2000 };
	char *rec = malloc(20 * N + 64);
	size_t n = 0, i;

	assert_non_null(rec);
	n += (size_t)sprintf(rec, "v=spf1");
	for (i = 0; i < N - 1; i++)
		n += (size_t)sprintf(rec + n, " ip4:10.%u.%u.0/24", (unsigned)(i / 256), (unsigned)(i % 256));
	sprintf(rec + n, " ip4:192.0.2.77 -all");
	txt(fx, "many.example", rec);
	free(rec);
	assert_result(check(fx, "192.0.2.77", "a@many.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->mechanism, "ip4:192.0.2.77");
	assert_result(check(fx, "192.0.2.78", "a@many.example"), SPFKIT_RESULT_FAIL);
}

/* Item 6: an exists: target of 9,012 octets is cut from the left to the
 * last 253 (§7.3), looked up, and matches; it is not a permerror. */
static void h4_long_expansion_is_cut(void **state)
{
	struct fixture *fx = *state;
	char local[3001], sender[3100], want[254];
	size_t i;

	memcpy(local, "x1", 2);
	for (i = 2; i < 3000; i += 2)
		memcpy(local + i, ".y", 2);
	local[3000] = '\0';
	snprintf(sender, sizeof(sender), "%s@cut.example", local);
	for (i = 0; i < 244; i += 2)
		memcpy(want + i, "y.", 2);
	memcpy(want + 244, "t.example", 10); /* 122 labels "y" + "t.example": 253 octets */
	assert_int_equal(strlen(want), 253);
	txt(fx, "cut.example", "v=spf1 exists:%{l}.%{l}.%{l}.t.example -all");
	addr(fx, want, "127.0.0.2");
	assert_result(check(fx, "192.0.2.1", sender), SPFKIT_RESULT_PASS);
	/* the same through redirect= */
	txt(fx, "redir.example", "v=spf1 redirect=%{l}.%{l}.%{l}.t.example");
	txt(fx, want, "v=spf1 +all");
	snprintf(sender, sizeof(sender), "%s@redir.example", local);
	assert_result(check(fx, "192.0.2.1", sender), SPFKIT_RESULT_PASS);
}

/* Item 9: the default explanation names an IPv6 client in its readable
 * form (%{c}, RFC 5952), not as 32 dotted nibbles. */
static void h4_default_explanation_ipv6(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc};
	struct spfkit_ctx *ctx = fx->ctx;

	assert_int_equal(spfkit_ctx_new(&cfg, &fx->ctx), 0);
	txt(fx, "v6.example", "v=spf1 -all");
	assert_result(check(fx, "2001:db8::1", "a@v6.example"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation,
			    "v6.example does not designate 2001:db8::1 as permitted sender");
	assert_result(check(fx, "192.0.2.1", "a@v6.example"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation,
			    "v6.example does not designate 192.0.2.1 as permitted sender");
	spfkit_eval_free(fx->ev);
	fx->ev = NULL;
	spfkit_ctx_free(fx->ctx);
	fx->ctx = ctx;
}

/* Item 9: out of memory while taking an answer is SPFKIT_ENOMEM, not a
 * temperror result; nothing changed, so the same answer can come again. */
struct h4_fail {
	int fail; /* nonzero: every allocation fails */
};

static void *h4_alloc(void *u, size_t n)
{
	return ((struct h4_fail *)u)->fail ? NULL : t_alloc(NULL, n);
}

static void *h4_realloc(void *u, void *p, size_t n)
{
	return ((struct h4_fail *)u)->fail ? NULL : t_realloc(NULL, p, n);
}

static void h4_answer_out_of_memory(void **state)
{
	struct h4_fail fl = {0};
	struct spfkit_allocator fa = {h4_alloc, h4_realloc, t_free, &fl};
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &fa, .no_lookahead = 1};
	struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = "a@x.example", .sender_len = 11, .helo = "h.example", .helo_len = 9};
	static unsigned char big[20000]; /* more than the evaluation's first arena chunk */
	struct spfkit_dns_rr rr[2] = {
		{.type = SPFKIT_RR_TXT, .ttl = 60, .data = big, .len = sizeof(big)},
		{.type = SPFKIT_RR_TXT, .ttl = 60, .data = (const unsigned char *)"v=spf1 +all", .len = 11},
	};
	struct spfkit_dns_answer ans = {.status = SPFKIT_DNS_OK, .rrs = rr, .count = 2};
	struct spfkit_ctx *ctx;
	struct spfkit_question q;
	struct spfkit_eval *ev;

	(void)state;
	memset(big, 'a', sizeof(big));
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(spfkit_ip_parse("192.0.2.7", 9, &req.ip), 0);
	assert_int_equal(spfkit_eval_new(ctx, &req, &ev), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_QUERY);
	fl.fail = 1;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), SPFKIT_ENOMEM);
	fl.fail = 0;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_DONE);
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_PASS);
	spfkit_eval_free(ev);
	spfkit_ctx_free(ctx);
}

/* ---- mechanisms ---------------------------------------------------- */

static void all_and_qualifiers(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "p.example", "v=spf1 +all");
	txt(fx, "f.example", "v=spf1 -all");
	txt(fx, "s.example", "v=spf1 ~all");
	txt(fx, "n.example", "v=spf1 ?all");
	txt(fx, "d.example", "v=spf1");
	assert_result(check(fx, "192.0.2.1", "a@p.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.2.1", "a@f.example"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->mechanism, "-all");
	assert_string_equal(fx->res->explanation, "DEFAULT");
	assert_result(check(fx, "192.0.2.1", "a@s.example"), SPFKIT_RESULT_SOFTFAIL);
	assert_null(fx->res->explanation);
	assert_result(check(fx, "192.0.2.1", "a@n.example"), SPFKIT_RESULT_NEUTRAL);
	assert_result(check(fx, "192.0.2.1", "a@d.example"), SPFKIT_RESULT_NEUTRAL);
	assert_string_equal(fx->res->mechanism, "default");
}

static void ip4_ip6_cidr(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "ip.example", "v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all");
	assert_result(check(fx, "192.0.2.200", "a@ip.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.3.1", "a@ip.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "2001:db8:1::5", "a@ip.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "2001:db9::5", "a@ip.example"), SPFKIT_RESULT_FAIL);
	/* an IPv4-mapped IPv6 client is an IPv4 client */
	assert_result(check(fx, "::ffff:192.0.2.9", "a@ip.example"), SPFKIT_RESULT_PASS);
}

static void a_with_dual_cidr(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "a.example", "v=spf1 a/24//64 a:host.a.example -all");
	addr(fx, "a.example", "198.51.100.1");
	addr(fx, "a.example", "2001:db8:5::1");
	addr(fx, "host.a.example", "203.0.113.7");
	assert_result(check(fx, "198.51.100.77", "a@a.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "2001:db8:5::ffff", "a@a.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "2001:db8:6::1", "a@a.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "203.0.113.7", "a@a.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->mechanism, "a:host.a.example");
	assert_int_equal(fx->res->dns_terms, 2);
}

static void mx_hosts(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "mx.example", "v=spf1 mx -all");
	name_rr(fx, "mx.example", SPFKIT_RR_MX, "m1.mx.example", 10);
	name_rr(fx, "mx.example", SPFKIT_RR_MX, "m2.mx.example", 20);
	addr(fx, "m1.mx.example", "192.0.2.10");
	addr(fx, "m2.mx.example", "192.0.2.20");
	txt(fx, "nomx.example", "v=spf1 mx -all");
	addr(fx, "nomx.example", "192.0.2.30"); /* no implicit MX (§5.4) */
	txt(fx, "nullmx.example", "v=spf1 mx ?all");
	name_rr(fx, "nullmx.example", SPFKIT_RR_MX, ".", 0);
	assert_result(check(fx, "192.0.2.20", "a@mx.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(fx->res->depth, 3); /* TXT, MX, then the hosts' A */
	assert_result(check(fx, "192.0.2.30", "a@mx.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "192.0.2.30", "a@nomx.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "192.0.2.30", "a@nullmx.example"), SPFKIT_RESULT_NEUTRAL);
}

static void ptr_validated_names(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "ptr.example", "v=spf1 ptr -all");
	name_rr(fx, "1.2.0.192.in-addr.arpa", SPFKIT_RR_PTR, "mail.ptr.example", 0);
	name_rr(fx, "2.2.0.192.in-addr.arpa", SPFKIT_RR_PTR, "forged.ptr.example", 0);
	addr(fx, "mail.ptr.example", "192.0.2.1");
	addr(fx, "forged.ptr.example", "192.0.2.99"); /* does not point back */
	assert_result(check(fx, "192.0.2.1", "a@ptr.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.2.2", "a@ptr.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "192.0.2.3", "a@ptr.example"), SPFKIT_RESULT_FAIL);
}

static void exists_and_macros(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "ex.example", "v=spf1 exists:%{ir}.%{l1r+}.list.ex.example -all");
	addr(fx, "1.2.0.192.bob.list.ex.example", "127.0.0.2");
	assert_result(check(fx, "192.0.2.1", "bob@ex.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.2.1", "alice@ex.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "192.0.2.2", "bob@ex.example"), SPFKIT_RESULT_FAIL);
}

static void include_results_map(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "inc.example", "v=spf1 include:prov.example -all");
	txt(fx, "prov.example", "v=spf1 ip4:192.0.2.0/28 ~all");
	txt(fx, "none.example", "v=spf1 include:nothing.example -all");
	txt(fx, "temp.example", "v=spf1 include:slow.example -all");
	assert_int_equal(spfkit_zone_add_timeout(fx->zone, "slow.example", 12), 0);
	assert_result(check(fx, "192.0.2.5", "a@inc.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->mechanism, "include:prov.example");
	assert_int_equal(fx->res->depth, 2); /* TXT inc.example, then TXT prov.example */
	/* the included softfail is only "no match" (§5.2) */
	assert_result(check(fx, "192.0.2.200", "a@inc.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "192.0.2.5", "a@none.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "no SPF record");
	assert_result(check(fx, "192.0.2.5", "a@temp.example"), SPFKIT_RESULT_TEMPERROR);
	assert_problem_has(fx, "timeout");
}

static void redirect_and_exp(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "r.example", "v=spf1 exp=why.r.example redirect=_spf.r.example");
	txt(fx, "_spf.r.example", "v=spf1 ip4:192.0.2.1 -all exp=why2.r.example");
	txt(fx, "why.r.example", "not used");
	txt(fx, "why2.r.example", "%{i} may not send for %{d} (%{l}@%{o})");
	txt(fx, "rnone.example", "v=spf1 redirect=nothing.example");
	assert_result(check(fx, "192.0.2.1", "a@r.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.2.9", "joe@r.example"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation, "192.0.2.9 may not send for _spf.r.example (joe@r.example)");
	assert_string_equal(fx->res->domain, "_spf.r.example");
	assert_result(check(fx, "192.0.2.9", "joe@rnone.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "redirect");
}

/* ---- identities (§2.3, §2.4, §4.3) --------------------------------- */

static void identities(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "helo.example.org", "v=spf1 ip4:192.0.2.1 -all exp=e.helo.example.org");
	txt(fx, "e.helo.example.org", "%{l} %{s}");
	/* empty MAIL FROM: postmaster@helo */
	assert_result(check(fx, "192.0.2.2", ""), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation, "postmaster postmaster@helo.example.org");
	assert_string_equal(fx->res->sender, "postmaster@helo.example.org");
	/* no local part: postmaster */
	assert_result(check(fx, "192.0.2.2", "@helo.example.org"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation, "postmaster @helo.example.org");
	/* the domain follows the last '@'; the local part keeps the others */
	assert_result(check(fx, "192.0.2.2", "a@b@helo.example.org"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation, "a@b a@b@helo.example.org");
	assert_string_equal(fx->res->identity_domain, "helo.example.org");
	assert_result(check(fx, "192.0.2.2", "@@helo.example.org"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->explanation, "@ @@helo.example.org");
	/* the HELO identity */
	assert_result(check_id(fx, "192.0.2.1", "x@y.example", "helo.example.org", SPFKIT_IDENTITY_HELO),
		      SPFKIT_RESULT_PASS);
	assert_int_equal(fx->res->identity, SPFKIT_IDENTITY_HELO);
	/* malformed domains are "none" before any DNS (§4.3) */
	assert_result(check(fx, "192.0.2.1", "a@nodots"), SPFKIT_RESULT_NONE);
	assert_result(check(fx, "192.0.2.1", "a@[192.0.2.1]"), SPFKIT_RESULT_NONE);
	assert_result(check(fx, "192.0.2.1", "a@x.0123456789012345678901234567890123456789012345678901234567890123.example"),
		      SPFKIT_RESULT_NONE);
	assert_int_equal(fx->res->queries, 0);
	assert_result(check(fx, "192.0.2.1", "a@unpublished.example"), SPFKIT_RESULT_NONE);
}

/* ---- limits (§4.6.4): at the limit, and one past it ---------------- */

static void dns_term_limit(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "ten.example", "v=spf1 a a a a a a a a a a ip4:192.0.2.1 -all");
	txt(fx, "eleven.example", "v=spf1 a a a a a a a a a a a ip4:192.0.2.1 -all");
	addr(fx, "ten.example", "198.51.100.1");
	addr(fx, "eleven.example", "198.51.100.1");
	assert_result(check(fx, "192.0.2.1", "a@ten.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(fx->res->dns_terms, 10);
	assert_result(check(fx, "192.0.2.1", "a@eleven.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "more than 10 DNS-querying terms");
}

static void redirect_counts_as_term(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "loop.example", "v=spf1 redirect=loop.example");
	assert_result(check(fx, "192.0.2.1", "a@loop.example"), SPFKIT_RESULT_PERMERROR);
	assert_int_equal(fx->res->dns_terms, 11);
}

static void void_lookup_limit(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "two.example", "v=spf1 a:v1.two.example mx:v2.two.example ?all");
	txt(fx, "three.example", "v=spf1 a:v1.two.example mx:v2.two.example exists:v3.two.example ?all");
	assert_result(check(fx, "192.0.2.1", "a@two.example"), SPFKIT_RESULT_NEUTRAL);
	assert_int_equal(fx->res->void_lookups, 2);
	assert_result(check(fx, "192.0.2.1", "a@three.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "void");
}

/*
 * A target with %{p} needs the PTR answer (§5.5) before its own lookup;
 * when answers come one round at a time the term runs again with its
 * target already expanded, and its own lookup must still count as a
 * void lookup (§4.6.4) exactly once.
 */
static void void_lookups_after_ptr_macro(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "p2.example", "v=spf1 exists:%{p}.one.example exists:%{p}.two.example ?all");
	txt(fx, "p3.example", "v=spf1 exists:%{p}.one.example exists:%{p}.two.example "
			      "exists:%{p}.three.example ?all");
	assert_result(check(fx, "192.0.2.1", "a@p2.example"), SPFKIT_RESULT_NEUTRAL);
	assert_int_equal(fx->res->void_lookups, 2);
	assert_result(check(fx, "192.0.2.1", "a@p3.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "void");
}

static void mx_name_limit(void **state)
{
	struct fixture *fx = *state;
	char host[64];
	int i;

	txt(fx, "mx10.example", "v=spf1 mx -all");
	txt(fx, "mx11.example", "v=spf1 mx -all");
	for (i = 0; i < 11; i++) {
		snprintf(host, sizeof(host), "h%d.mx.example", i);
		addr(fx, host, "198.51.100.1");
		if (i < 10)
			name_rr(fx, "mx10.example", SPFKIT_RR_MX, host, (uint16_t)i);
		name_rr(fx, "mx11.example", SPFKIT_RR_MX, host, (uint16_t)i);
	}
	addr(fx, "h9.mx.example", "192.0.2.1");
	assert_result(check(fx, "192.0.2.1", "a@mx10.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.2.2", "a@mx10.example"), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "192.0.2.2", "a@mx11.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "MX hosts");
}

static void ptr_name_limit(void **state)
{
	struct fixture *fx = *state;
	char host[64];
	int i;

	txt(fx, "ptr10.example", "v=spf1 ptr -all");
	for (i = 0; i < 11; i++) {
		snprintf(host, sizeof(host), "h%d.other.example", i);
		if (i == 10)
			snprintf(host, sizeof(host), "mail.ptr10.example");
		name_rr(fx, "1.2.0.192.in-addr.arpa", SPFKIT_RR_PTR, host, 0);
		addr(fx, host, "192.0.2.1");
	}
	/* the 11th name would validate, but past the first 10 names are ignored */
	assert_result(check(fx, "192.0.2.1", "a@ptr10.example"), SPFKIT_RESULT_FAIL);
}

/* The question table grows while a term holds answers from it (MX hosts
 * after the MX answer; lookahead filing more): nothing may move. ASan
 * catches a use after free here. */
static void question_table_growth(void **state)
{
	struct fixture *fx = *state;
	char host[64], rec[1024];
	size_t n = 0;
	int i;

	n += (size_t)snprintf(rec, sizeof(rec), "v=spf1");
	for (i = 0; i < 8; i++)
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, " a:a%d.grow.example", i);
	snprintf(rec + n, sizeof(rec) - n, " mx -all");
	txt(fx, "grow.example", rec);
	for (i = 0; i < 10; i++) {
		snprintf(host, sizeof(host), "m%d.grow.example", i);
		name_rr(fx, "grow.example", SPFKIT_RR_MX, host, (uint16_t)i);
		addr(fx, host, i == 9 ? "192.0.2.9" : "198.51.100.1");
	}
	for (i = 0; i < 8; i++) {
		snprintf(host, sizeof(host), "a%d.grow.example", i);
		addr(fx, host, "198.51.100.2");
	}
	assert_result(check(fx, "192.0.2.9", "a@grow.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->mechanism, "mx");
	assert_true(fx->res->queries > 16);
}

/* ---- permerror reasons ---------------------------------------------- */

static void permerror_reasons(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "syntax.example", "v=spf1 ip4:192.0.2.1 foo=%{z} -all");
	txt(fx, "two.example", "v=spf1 -all");
	txt(fx, "two.example", "v=spf1 +all");
	txt(fx, "badinc.example", "v=spf1 include:%{l}.example -all");
	assert_result(check(fx, "192.0.2.1", "a@syntax.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "foo=%{z}");
	assert_problem_has(fx, "offset");
	assert_result(check(fx, "192.0.2.1", "a@two.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "2 SPF records");
	assert_result(check(fx, "192.0.2.1", "a..b@badinc.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "not a valid domain");
}

static void temperror_on_dns_failure(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(spfkit_zone_add_timeout(fx->zone, "down.example", 12), 0);
	txt(fx, "aslow.example", "v=spf1 a:down.example -all");
	assert_result(check(fx, "192.0.2.1", "a@down.example"), SPFKIT_RESULT_TEMPERROR);
	assert_result(check(fx, "192.0.2.1", "a@aslow.example"), SPFKIT_RESULT_TEMPERROR);
	assert_problem_has(fx, "down.example");
}

/* ---- hostile input ------------------------------------------------- */

static void huge_and_binary_records(void **state)
{
	struct fixture *fx = *state;
	size_t n = 65000, i;
	char *big = malloc(n + 1);
	static const char nul_record[] = "v=spf1 ip4:192.0.2.1\0 -all";

	assert_non_null(big);
	memcpy(big, "v=spf1", 6);
	for (i = 6; i + 7 <= n; i += 7)
		memcpy(big + i, " %{i}%{", 7);
	big[i] = '\0';
	txt(fx, "big.example", big);
	free(big);
	assert_result(check(fx, "192.0.2.1", "a@big.example"), SPFKIT_RESULT_PERMERROR);
	assert_int_equal(spfkit_zone_add(fx->zone, "nul.example", 11, SPFKIT_RR_TXT, 300, nul_record,
					 sizeof(nul_record) - 1, 0), 0);
	assert_result(check(fx, "192.0.2.1", "a@nul.example"), SPFKIT_RESULT_PERMERROR);
}

static void expansion_is_bounded(void **state)
{
	struct fixture *fx = *state;
	char rec[8000];
	size_t i, n = 0;

	n += (size_t)snprintf(rec, sizeof(rec), "v=spf1 exists:");
	for (i = 0; i < 1500; i++)
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, "%%{i}");
	snprintf(rec + n, sizeof(rec) - n, ".example -all");
	txt(fx, "macro.example", rec);
	/* §7.3: cut to 253 octets from the left, looked up, no match: -all */
	assert_result(check(fx, "2001:db8::1", "a@macro.example"), SPFKIT_RESULT_FAIL);
}

/* Non-ASCII identities are evaluated (DNS can carry the bytes), never
 * crash; a non-ASCII byte in a record is a precise permerror. */
static void non_ascii_input(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "xn--bcher-kva.example", "v=spf1 ip4:192.0.2.1 -all");
	txt(fx, "utf8.example", "v=spf1 a:m\xc3\xa4" "il.utf8.example -all");
	assert_result(check(fx, "192.0.2.1", "j\xc3\xbc" "rgen@b\xc3\xbc" "cher.example"), SPFKIT_RESULT_PASS);
	assert_result(check(fx, "192.0.2.2", "x@\xff\xfe" ".example"), SPFKIT_RESULT_NONE);
	assert_result(check_id(fx, "192.0.2.1", "", "h\xc3\xa9" "lo.example", SPFKIT_IDENTITY_HELO),
		      SPFKIT_RESULT_NONE);
	assert_result(check(fx, "192.0.2.1", "a@utf8.example"), SPFKIT_RESULT_PERMERROR);
	assert_problem_has(fx, "offset 10: non-ASCII byte");
}

/* A 64 KiB TXT answer of many strings and records, from a hostile server,
 * through the sans-I/O calls: one record is found, the rest ignored. */
static void answer_of_64k(void **state)
{
	struct fixture *fx = *state;
	enum { N = 260, LEN = 250 };
	static unsigned char junk[N][LEN];
	static struct spfkit_dns_rr rrs[N];
	const char rec[] = "v=spf1 ip4:192.0.2.0/24 -all";
	struct spfkit_dns_answer ans = {.status = SPFKIT_DNS_OK, .rrs = rrs, .count = N};
	struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = "a@big.example", .sender_len = 13, .helo = "h.example", .helo_len = 9};
	struct spfkit_question q;
	struct spfkit_eval *ev;
	size_t i;

	for (i = 0; i < N; i++) {
		memset(junk[i], 'a' + (int)(i % 26), LEN);
		junk[i][0] = (unsigned char)i; /* NUL and control bytes too */
		rrs[i] = (struct spfkit_dns_rr){.type = SPFKIT_RR_TXT, .ttl = 60, .data = junk[i], .len = LEN};
	}
	rrs[N / 2].data = (const unsigned char *)rec;
	rrs[N / 2].len = sizeof(rec) - 1;
	assert_int_equal(spfkit_ip_parse("192.0.2.7", 9, &req.ip), 0);
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_QUERY);
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_DONE);
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_PASS);
	spfkit_eval_free(ev);
}

/* ---- one context, many threads ------------------------------------- */

struct worker {
	struct fixture *fx;
	struct spfkit_ctx *ctx;
	int failures;
};

static const char *const thread_senders[] = {"a@t0.example", "a@t1.example", "a@t2.example",
					     "a@t3.example", "a@t4.example", "a@t5.example"};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct spfkit_resolver *r = NULL;
	int i;

	if (spfkit_zone_resolver(w->fx->zone, &r) != 0) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 3000; i++) {
		const char *sender = thread_senders[i % 6];
		struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = sender, .sender_len = strlen(sender),
					     .helo = "h.example", .helo_len = 9};
		struct spfkit_eval *ev = NULL;

		assert_int_equal(spfkit_ip_parse(i % 2 ? "192.0.2.1" : "192.0.2.2", 9, &req.ip), 0);
		if (spfkit_check(w->ctx, r, &req, &ev) != 0 ||
		    spfkit_eval_result(ev)->code != (i % 2 ? SPFKIT_RESULT_PASS : SPFKIT_RESULT_FAIL))
			w->failures++;
		spfkit_eval_free(ev);
	}
	spfkit_resolver_free(r);
	return NULL;
}

/* The parsed-record cache is shared: 4 threads, a cache of 2 records for
 * 12 distinct ones, so entries are evicted while others hold them. */
static void threads_share_a_context(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc, .record_cache_size = 2};
	struct worker w[4];
	pthread_t tid[4];
	char name[32], rec[64];
	int i;

	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "t%d.example", i);
		snprintf(rec, sizeof(rec), "v=spf1 include:p%d.example -all", i);
		txt(fx, name, rec);
		snprintf(name, sizeof(name), "p%d.example", i);
		snprintf(rec, sizeof(rec), "v=spf1 ip4:192.0.2.1 ?all");
		txt(fx, name, rec);
	}
	for (i = 0; i < 4; i++) {
		w[i].fx = fx;
		w[i].failures = 0;
	}
	assert_int_equal(spfkit_ctx_new(&cfg, &w[0].ctx), 0);
	for (i = 0; i < 4; i++) {
		w[i].ctx = w[0].ctx;
		assert_int_equal(pthread_create(&tid[i], NULL, worker_run, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	spfkit_ctx_free(w[0].ctx);
}

/* ---- the time budget of spfkit_check() (§4.6.4) --------------------- */

/* A resolver whose server never answers: wait() only lets time pass. */
static int silent_submit(void *impl, const char *name, size_t len, uint16_t type,
			 spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	(void)impl; (void)name; (void)len; (void)type; (void)cb; (void)arg;
	*handle = 1;
	return 0;
}

static void silent_cancel(void *impl, uint64_t handle) { (void)impl; (void)handle; }

static int silent_wait(void *impl, int timeout_ms)
{
	struct timespec ts = {0, 20 * 1000000L};

	(void)impl;
	if (timeout_ms >= 0 && timeout_ms < 20)
		ts.tv_nsec = (long)timeout_ms * 1000000L;
	nanosleep(&ts, NULL);
	return 0;
}

static void silent_destroy(void *impl) { (void)impl; }

static void time_budget_gives_temperror(void **state)
{
	static const struct spfkit_resolver_ops ops = {silent_submit, silent_cancel, silent_wait,
						       silent_destroy};
	struct spfkit_resolver silent = {&ops, NULL};
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc, .time_budget_ms = 100};
	struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = "a@slow.example", .sender_len = 14, .helo = "h.example", .helo_len = 9};
	struct spfkit_ctx *ctx;
	struct spfkit_eval *ev = NULL;
	struct timespec t0, t1;
	long ms;

	(void)state;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(spfkit_check(ctx, &silent, &req, &ev), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_TEMPERROR);
	assert_non_null(strstr(spfkit_eval_result(ev)->problem, "time budget"));
	/* the budget, give or take the clocks' millisecond rounding; no hang */
	if (ms < 95 || ms > 2000)
		fail_msg("returned after %ld ms with a 100 ms budget", ms);
	spfkit_eval_free(ev);
	spfkit_ctx_free(ctx);
}

/* ---- the sans-I/O contract ------------------------------------------ */

static void step_and_answer_contract(void **state)
{
	struct fixture *fx = *state;
	static const unsigned char a_rr[4] = {192, 0, 2, 1};
	const char rec[] = "v=spf1 a -all";
	struct spfkit_dns_rr txt_rr = {.type = SPFKIT_RR_TXT, .ttl = 60,
				       .data = (const unsigned char *)rec, .len = sizeof(rec) - 1};
	struct spfkit_dns_rr addr_rr = {.type = SPFKIT_RR_A, .ttl = 60, .data = a_rr, .len = 4};
	struct spfkit_dns_answer ans = {.status = SPFKIT_DNS_OK, .rrs = &txt_rr, .count = 1};
	struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = "a@s.example", .sender_len = 11, .helo = "h.example", .helo_len = 9};
	struct spfkit_question q;
	struct spfkit_eval *ev;
	uint32_t first;

	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), 0);
	assert_null(spfkit_eval_result(ev));
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_QUERY);
	assert_int_equal(q.type, SPFKIT_RR_TXT);
	assert_memory_equal(q.name, "s.example", 9);
	first = q.id;
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_WAIT);
	assert_int_equal(spfkit_eval_answer(ev, first + 100, &ans), SPFKIT_ENOTFOUND);
	assert_int_equal(spfkit_eval_answer(ev, first, &ans), 0);
	assert_int_equal(spfkit_eval_answer(ev, first, &ans), SPFKIT_ENOTFOUND); /* once only */
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_QUERY);
	assert_int_equal(q.type, SPFKIT_RR_A);
	ans.rrs = &addr_rr;
	assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), 0);
	assert_int_equal(spfkit_eval_step(ev, &q), SPFKIT_STEP_DONE);
	assert_int_equal(spfkit_eval_result(ev)->code, SPFKIT_RESULT_PASS);
	assert_int_equal(spfkit_eval_result(ev)->queries, 2);
	spfkit_eval_free(ev);
}

static void bad_requests(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_request req;
	struct spfkit_eval *ev = (void *)1;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), SPFKIT_EINVAL); /* no address */
	assert_null(ev);
	assert_int_equal(spfkit_ip_parse("192.0.2.256", 11, &req.ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse("", 0, &req.ip), SPFKIT_EINVAL);
	assert_int_equal(spfkit_ip_parse("2001:db8::1::2", 14, &req.ip), SPFKIT_EINVAL);
}

/* Issue 33 finding 7: a sender past 4096 bytes was refused (SPFKIT_EINVAL)
 * and the front ends accepted it unchecked. Any sender an SMTP line can
 * carry is evaluated: the local part reaches nothing but macros, whose
 * expansion §7.3 cuts; a HELO name that long is no domain (§4.3). */
static char *long_local(size_t local, const char *domain, char unit)
{
	size_t dlen = strlen(domain), i;
	char *s = malloc(local + 1 + dlen + 1);

	assert_non_null(s);
	for (i = 0; i < local; i++)
		s[i] = (i % 8 == 7) ? '.' : unit;
	s[local] = '@';
	memcpy(s + local + 1, domain, dlen + 1);
	return s;
}

static void long_identities_are_evaluated(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	static char rec[24000];
	char *s, *helo;
	size_t n = 0, i;
	clock_t t0;
	double secs;

	txt(fx, "forged.example", "v=spf1 ip4:198.51.100.0/24 -all");
	s = long_local(5000, "forged.example", 'a');
	assert_result(check(fx, "192.0.2.1", s), SPFKIT_RESULT_FAIL);
	assert_result(check(fx, "198.51.100.7", s), SPFKIT_RESULT_PASS);
	free(s);
	/* the longest accepted, and one past it */
	s = long_local(SPFKIT_IDENTITY_MAX - 1 - strlen("forged.example"), "forged.example", 'b');
	assert_int_equal(strlen(s), SPFKIT_IDENTITY_MAX);
	assert_result(check(fx, "192.0.2.1", s), SPFKIT_RESULT_FAIL);
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = s;
	req.sender_len = SPFKIT_IDENTITY_MAX + 1; /* the NUL: refused for its length first */
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), SPFKIT_EINVAL);
	assert_null(ev);
	free(s);

	/* every letter of the local part expanded, reversed and split, many
	 * times over: each expansion is cut to 253 octets (§7.3), and the
	 * work is bounded by the bytes read, not their square */
	n += (size_t)snprintf(rec, sizeof(rec), "v=spf1 exists:");
	for (i = 0; i < 3000; i++)
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, "%%{lr-.}");
	snprintf(rec + n, sizeof(rec) - n, ".m.example exists:%%{s}.m.example exists:%%{L}.m.example -all");
	txt(fx, "macro.example", rec);
	s = long_local(SPFKIT_IDENTITY_MAX - 1 - strlen("macro.example"), "macro.example", '-');
	t0 = clock();
	assert_result(check(fx, "192.0.2.1", s), SPFKIT_RESULT_FAIL);
	secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	print_message("3,000 expansions of a 64 KiB local part: %.3f s of CPU\n", secs);
	/* 2.7 s at -O2 when each read the whole value */
	if (secs > 1.0)
		fail_msg("expansion took %.1f s", secs);
	free(s);

	/* a 5,000-byte HELO name is no domain: none, as §4.3 says */
	helo = long_local(5000, "helo.example", 'h');
	helo[5000] = '.';
	assert_result(check_id(fx, "192.0.2.1", "", helo, SPFKIT_IDENTITY_HELO), SPFKIT_RESULT_NONE);
	free(helo);
}

/* Our formatter against the C library's, and RFC 5952 by example. */
static void ip_text_forms(void **state)
{
	static const char *const cases[] = {
		"192.0.2.1", "0.0.0.0", "255.255.255.255", "10.0.100.9", "2001:db8::1", "::",
		"::1", "1::", "2001:db8:0:0:1:0:0:1", "2001:0:0:1:0:0:0:1", "fe80::1:2:3:4",
		"1:2:3:4:5:6:7:8", "2001:db8::ffff:0:1", "1:0:2:0:3:0:4:0",
	};
	static const char *const want[] = {
		"192.0.2.1", "0.0.0.0", "255.255.255.255", "10.0.100.9", "2001:db8::1", "::",
		"::1", "1::", "2001:db8::1:0:0:1", "2001:0:0:1::1", "fe80::1:2:3:4",
		"1:2:3:4:5:6:7:8", "2001:db8::ffff:0:1", "1:0:2:0:3:0:4:0",
	};
	struct spfkit_ip ip;
	char buf[48], small[5];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(spfkit_ip_parse(cases[i], strlen(cases[i]), &ip), 0);
		assert_string_equal(spfkit_ip_format(&ip, buf, sizeof(buf)), want[i]);
	}
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &ip), 0);
	assert_string_equal(spfkit_ip_format(&ip, small, sizeof(small)), "192.");
	/* the parser makes a mapped address IPv4; given as IPv6 it keeps its
	 * dotted quad (RFC 5952 §5), as %{c} writes it */
	memset(&ip, 0, sizeof(ip));
	ip.family = 6;
	memcpy(ip.addr + 10, "\xff\xff\xc0\x00\x02\xfe", 6);
	assert_string_equal(spfkit_ip_format(&ip, buf, sizeof(buf)), "::ffff:192.0.2.254");
}

/* Every octet value in every place, and random IPv6 addresses heavy in
 * zero groups, against the C library (which agrees with RFC 5952 but for
 * "::a.b.c.d", left out). */
static void ip_text_every_octet_and_group(void **state)
{
	struct spfkit_ip ip;
	char buf[SPFKIT_IP_TEXT_MAX], want[INET6_ADDRSTRLEN];
	uint64_t x = 88172645463325252ull;
	unsigned v, i, k;

	(void)state;
	memset(&ip, 0, sizeof(ip));
	ip.family = 4;
	for (v = 0; v < 256; v++) {
		for (k = 0; k < 4; k++)
			ip.addr[k] = (unsigned char)((v + 37 * k) & 0xff);
		snprintf(want, sizeof(want), "%u.%u.%u.%u", ip.addr[0], ip.addr[1], ip.addr[2],
			 ip.addr[3]);
		assert_string_equal(spfkit_ip_format(&ip, buf, sizeof(buf)), want);
	}
	ip.family = 6;
	for (i = 0; i < 20000; i++) {
		for (k = 0; k < 8; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v = (x & 3) == 0 ? (unsigned)(x >> 8) & 0xffff : (x & 3) == 1 ? 0
			    : (unsigned)(x >> 8) & (0xfu << 4 * ((x >> 4) & 3));
			ip.addr[2 * k] = (unsigned char)(v >> 8);
			ip.addr[2 * k + 1] = (unsigned char)v;
		}
		if (memcmp(ip.addr, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) == 0)
			continue;
		assert_non_null(inet_ntop(AF_INET6, ip.addr, want, sizeof(want)));
		assert_string_equal(spfkit_ip_format(&ip, buf, sizeof(buf)), want);
	}
}

/* The prefix of every length matches where the first bits agree, and
 * only there, for addresses differing in one bit and at random. */
static int ip_match_by_bits(const unsigned char *a, const unsigned char *b, unsigned prefix)
{
	unsigned i;

	for (i = 0; i < prefix; i++)
		if (((a[i / 8] ^ b[i / 8]) >> (7 - i % 8)) & 1)
			return 0;
	return 1;
}

static void ip_match_every_prefix(void **state)
{
	struct spfkit_ip ip;
	unsigned char net[16];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned fam, prefix, bit, k, max;

	(void)state;
	for (fam = 4; fam <= 6; fam += 2) {
		max = fam == 4 ? 32 : 128;
		memset(&ip, 0, sizeof(ip));
		ip.family = (int)fam;
		for (k = 0; k < 16; k++)
			ip.addr[k] = (unsigned char)(0xa5 ^ k * 29);
		for (bit = 0; bit <= max; bit++) { /* bit == max: the same address */
			memcpy(net, ip.addr, 16);
			if (bit < max)
				net[bit / 8] ^= (unsigned char)(0x80 >> bit % 8);
			for (prefix = 0; prefix <= max + 1; prefix++)
				assert_int_equal(spfkit__ipaddr_match(&ip, (int)fam, net, prefix),
						 prefix <= max && ip_match_by_bits(ip.addr, net, prefix));
		}
		for (k = 0; k < 20000; k++) {
			unsigned j;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memcpy(net, ip.addr, 16);
			for (j = 0; j < 3; j++) /* a few bits flipped anywhere */
				net[(x >> (8 * j)) % (max / 8)] ^= (unsigned char)(x >> (24 + 8 * j));
			prefix = (unsigned)(x >> 56) % (max + 1);
			assert_int_equal(spfkit__ipaddr_match(&ip, (int)fam, net, prefix),
					 ip_match_by_bits(ip.addr, net, prefix));
		}
		assert_int_equal(spfkit__ipaddr_match(&ip, fam == 4 ? 6 : 4, ip.addr, 0), 0);
	}
}

/* ---- allocation failure: fail allocation N for every N -------------- */

struct failing {
	unsigned left; /* allocations that still succeed */
};

static void *f_alloc(void *u, size_t n)
{
	struct failing *f = u;

	if (f->left == 0)
		return NULL;
	f->left--;
	return t_alloc(NULL, n);
}

static void *f_realloc(void *u, void *p, size_t n)
{
	struct failing *f = u;

	if (f->left == 0)
		return NULL;
	f->left--;
	return t_realloc(NULL, p, n);
}

static void allocation_failures(void **state)
{
	struct fixture *fx = *state;
	struct failing fl;
	struct spfkit_allocator fa = {f_alloc, f_realloc, t_free, &fl};
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &fa, .default_explanation = "%{i} DEFAULT"};
	struct spfkit_request req = {.size = sizeof(struct spfkit_request), .sender = "a@inc.example", .sender_len = 13, .helo = "h.example", .helo_len = 9};
	unsigned n;
	int ok = 0;

	txt(fx, "inc.example", "v=spf1 include:prov.example mx exp=e.inc.example -all");
	txt(fx, "prov.example", "v=spf1 a:%{d} ~all");
	txt(fx, "e.inc.example", "no %{i} for %{o}");
	name_rr(fx, "inc.example", SPFKIT_RR_MX, "m.inc.example", 1);
	addr(fx, "m.inc.example", "198.51.100.1");
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	for (n = 0; n < 400 && !ok; n++) {
		struct spfkit_ctx *ctx = NULL;
		struct spfkit_resolver *r = NULL;
		struct spfkit_eval *ev = NULL;
		int rc;

		fl.left = n;
		rc = spfkit_ctx_new(&cfg, &ctx);
		if (rc == 0) {
			assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
			rc = spfkit_check(ctx, r, &req, &ev);
			spfkit_resolver_free(r);
		}
		if (rc == 0) {
			const struct spfkit_result *res = spfkit_eval_result(ev);

			/* a result is always the right one: running out of memory
			 * is SPFKIT_ENOMEM, never a temperror (eval.h) */
			assert_int_equal(res->code, SPFKIT_RESULT_FAIL);
			assert_string_equal(res->explanation, "no 192.0.2.1 for inc.example");
			ok = 1;
		} else {
			assert_int_equal(rc, SPFKIT_ENOMEM);
		}
		spfkit_eval_free(ev);
		spfkit_ctx_free(ctx);
	}
	assert_true(ok);
}

/* ---- lookahead's speculative traffic (issue 7, item 4) -------------
 * The lookup limits exist to bound the load one evaluation puts on DNS
 * (RFC 7208 §4.6.4, §11.1): lookahead may ask early, but not for terms
 * strict evaluation could never reach. Questions are counted through
 * the trace (one QUERY event per question sent), strict and with
 * lookahead, through the zone resolver, which answers in rounds. */

struct la_count {
	unsigned questions;
	const char *avoid; /* questions whose name holds this are counted apart */
	unsigned avoided;
};

static void la_trace(void *arg, const struct spfkit_trace_event *e)
{
	struct la_count *c = arg;

	if (e->kind != SPFKIT_TRACE_QUERY)
		return;
	c->questions++;
	if (c->avoid != NULL && strstr(e->name, c->avoid) != NULL)
		c->avoided++;
}

/* The MAIL FROM request of these tests, from ip and sender. */
static void la_request(struct spfkit_request *req, const char *ip, const char *sender)
{
	spfkit_request_init(req);
	assert_int_equal(spfkit_ip_parse(ip, strlen(ip), &req->ip), 0);
	req->sender = sender;
	req->sender_len = strlen(sender);
	req->helo = "helo.example.org";
	req->helo_len = strlen(req->helo);
	req->identity = SPFKIT_IDENTITY_MAILFROM;
	req->now = 1700000000;
}

/* One evaluation in a context of its own; returns the questions sent. */
static unsigned la_questions(struct fixture *fx, int lookahead, const char *ip,
			     const char *sender, enum spfkit_result_code want, struct la_count *c)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc, .receiver = "mx.receiver.example",
				    .no_lookahead = !lookahead};
	struct spfkit_ctx *ctx;
	struct spfkit_resolver *r;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	const struct spfkit_result *res;
	unsigned n;

	c->questions = c->avoided = 0;
	la_request(&req, ip, sender);
	req.trace = la_trace;
	req.trace_arg = c;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
	assert_int_equal(spfkit_check(ctx, r, &req, &ev), 0);
	res = spfkit_eval_result(ev);
	assert_non_null(res);
	assert_result(res->code, want);
	assert_int_equal(res->queries, c->questions);
	n = res->queries;
	spfkit_eval_free(ev);
	spfkit_resolver_free(r);
	spfkit_ctx_free(ctx);
	return n;
}

/* An ip4/ip6 term that covers the client decides without DNS: nothing
 * after it may be asked. */
static void la_stops_at_matching_ip(void **state)
{
	struct fixture *fx = *state;
	struct la_count c = {0};

	txt(fx, "first.la.example",
	    "v=spf1 ip4:192.0.2.1 a mx include:inc.la.example exists:e.la.example "
	    "a:h.la.example mx:m.la.example include:inc2.la.example -all");
	assert_int_equal(la_questions(fx, 0, "192.0.2.1", "a@first.la.example",
				      SPFKIT_RESULT_PASS, &c), 1);
	assert_int_equal(la_questions(fx, 1, "192.0.2.1", "a@first.la.example",
				      SPFKIT_RESULT_PASS, &c), 1);
	/* the DNS terms before the match are strict's too */
	txt(fx, "third.la.example",
	    "v=spf1 a:x1.la.example a:x2.la.example ip4:192.0.2.0/24 mx mx:y.la.example "
	    "include:z.la.example exists:w.la.example -all");
	addr(fx, "x1.la.example", "198.51.100.1");
	addr(fx, "x2.la.example", "198.51.100.2");
	assert_int_equal(la_questions(fx, 0, "192.0.2.7", "a@third.la.example",
				      SPFKIT_RESULT_PASS, &c), 3);
	assert_int_equal(la_questions(fx, 1, "192.0.2.7", "a@third.la.example",
				      SPFKIT_RESULT_PASS, &c), 3);
	txt(fx, "six.la.example", "v=spf1 ip6:2001:db8::/32 a mx include:inc.la.example -all");
	assert_int_equal(la_questions(fx, 1, "2001:db8::1", "a@six.la.example",
				      SPFKIT_RESULT_PASS, &c), 1);
	/* an included record that passes on an ip4 term decides its includer */
	txt(fx, "outer.la.example", "v=spf1 include:inner.la.example -all");
	txt(fx, "inner.la.example", "v=spf1 ip4:192.0.2.1 a:never.la.example mx:never.la.example");
	c.avoid = "never.la.example";
	assert_int_equal(la_questions(fx, 1, "192.0.2.1", "a@outer.la.example",
				      SPFKIT_RESULT_PASS, &c), 2);
	assert_int_equal(c.avoided, 0);
}

/* 60 includes, each record with an "a" term: strict evaluation reaches
 * the first 5 includes and their "a" terms at most (10 terms, §4.6.4). */
/* At `top`: "v=spf1 include:i0.<top> ... include:i<n-1>.<top> -all". */
static void include_fan(struct fixture *fx, const char *top, int n)
{
	char rec[4096];
	size_t len = 0;
	int i;

	len += (size_t)snprintf(rec, sizeof(rec), "v=spf1");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(rec + len, sizeof(rec) - len, " include:i%d.%s", i, top);
	snprintf(rec + len, sizeof(rec) - len, " -all");
	txt(fx, top, rec);
}

static void la_sixty_includes(void **state)
{
	struct fixture *fx = *state;
	struct la_count c = {.avoid = "never-"};
	char name[64], child[128];
	unsigned strict, look;
	int i;

	include_fan(fx, "sixty.example", 60);
	for (i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "i%d.sixty.example", i);
		snprintf(child, sizeof(child), "v=spf1 ip4:198.51.100.%d a:%s-a%d.sixty.example -all",
			 i + 1, i < 5 ? "reach" : "never", i);
		txt(fx, name, child);
		snprintf(name, sizeof(name), "%s-a%d.sixty.example", i < 5 ? "reach" : "never", i);
		addr(fx, name, "203.0.113.1");
	}
	/* the 5th include passes on its ip4 term: strict asks the top
	 * record, 5 included records and 4 "a" names */
	strict = la_questions(fx, 0, "198.51.100.5", "a@sixty.example", SPFKIT_RESULT_PASS, &c);
	assert_int_equal(strict, 10);
	look = la_questions(fx, 1, "198.51.100.5", "a@sixty.example", SPFKIT_RESULT_PASS, &c);
	assert_int_equal(c.avoided, 0);
	/* what lookahead adds: the records of includes 6 to 10, asked with
	 * the first ones (each could have held no DNS term) */
	if (look > strict + 5)
		fail_msg("lookahead asked %u questions, strict %u", look, strict);
	/* no include passes: the 11th term is a permerror */
	strict = la_questions(fx, 0, "192.0.2.1", "a@sixty.example", SPFKIT_RESULT_PERMERROR, &c);
	assert_int_equal(strict, 11);
	look = la_questions(fx, 1, "192.0.2.1", "a@sixty.example", SPFKIT_RESULT_PERMERROR, &c);
	assert_int_equal(c.avoided, 0);
	if (look > strict + 5)
		fail_msg("lookahead asked %u questions, strict %u", look, strict);
}

/*
 * Issue 33, finding 8: 60 includes whose records each look up names that
 * do not exist. Strict evaluation asks the top record, then per include
 * its record and its void names, and stops at the third void (§4.6.4:
 * more than 2 void lookups is a permerror). Lookahead asked 14 where
 * strict asks 7: the records of the first ten includes, and the terms
 * of the first five (15 where strict asks 6 with two void names per
 * include). It now stops where the answers it waits for, all void, would
 * end the evaluation, with one to spare (lookahead.c, LA_VOID_SPARE).
 */
static void la_sixty_includes_failing_on_voids(void **state)
{
	struct fixture *fx = *state;
	struct la_count c = {0};
	char name[64], child[128];
	unsigned strict, look, k, worst = 0;
	int i;

	include_fan(fx, "voids.example", 60);
	for (i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "i%d.voids.example", i);
		snprintf(child, sizeof(child), "v=spf1 a:nx%d.voids.example -all", i);
		txt(fx, name, child);
	}
	/* one void name per include: strict asks 7; two (as in the issue): 6 */
	for (k = 1; k <= 2; k++) {
		const char *sender = k == 1 ? "a@voids.example" : "a@voids2.example";

		if (k == 2) {
			for (i = 0; i < 60; i++) {
				snprintf(name, sizeof(name), "i%d.voids2.example", i);
				snprintf(child, sizeof(child),
					 "v=spf1 a:nx%d.voids2.example a:ny%d.voids2.example -all", i, i);
				txt(fx, name, child);
			}
			include_fan(fx, "voids2.example", 60);
			sender = "a@voids2.example";
		}
		strict = la_questions(fx, 0, "192.0.2.1", sender, SPFKIT_RESULT_PERMERROR, &c);
		look = la_questions(fx, 1, "192.0.2.1", sender, SPFKIT_RESULT_PERMERROR, &c);
		print_message("%s: strict %u questions, lookahead %u\n", sender, strict, look);
		assert_int_equal(strict, k == 1 ? 7 : 6);
		worst = look > worst ? look : worst;
	}
	/* strict's 7 or 6, and the 2 or 3 the walk asks past the voids it
	 * waits for (see LA_VOID_SPARE) */
	if (worst > 9)
		fail_msg("lookahead asked up to %u questions; at most 9", worst);
}

/* Includes of records full of mx terms: strict evaluation reaches the
 * first two records' mx terms (terms 2-5 and 7-10) and stops at the third
 * include; nothing of the third and fourth records may be asked. */
static void la_include_tree_with_mx(void **state)
{
	struct fixture *fx = *state;
	struct la_count c = {0};
	char name[64], rec[256], host[64];
	unsigned strict, look;
	int i, j, k;

	txt(fx, "tree.example",
	    "v=spf1 include:t1.tree.example include:t2.tree.example include:t3.tree.example "
	    "include:t4.tree.example -all");
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "t%d.tree.example", i);
		snprintf(rec, sizeof(rec),
			 "v=spf1 mx:m1.t%d.tree.example mx:m2.t%d.tree.example "
			 "mx:m3.t%d.tree.example mx:m4.t%d.tree.example -all",
			 i, i, i, i);
		txt(fx, name, rec);
		for (j = 1; j <= 4; j++) {
			snprintf(name, sizeof(name), "m%d.t%d.tree.example", j, i);
			for (k = 1; k <= 3; k++) {
				snprintf(host, sizeof(host), "h%d.m%d.t%d.tree.example", k, j, i);
				name_rr(fx, name, SPFKIT_RR_MX, host, (uint16_t)k);
				addr(fx, host, "198.51.100.1");
			}
		}
	}
	strict = la_questions(fx, 0, "192.0.2.1", "a@tree.example", SPFKIT_RESULT_PERMERROR, &c);
	assert_int_equal(strict, 1 + 2 * (1 + 4 * (1 + 3)));
	c.avoid = ".t3.tree.example";
	look = la_questions(fx, 1, "192.0.2.1", "a@tree.example", SPFKIT_RESULT_PERMERROR, &c);
	assert_int_equal(c.avoided, 0);
	c.avoid = ".t4.tree.example";
	look = la_questions(fx, 1, "192.0.2.1", "a@tree.example", SPFKIT_RESULT_PERMERROR, &c);
	assert_int_equal(c.avoided, 0);
	/* at most the TXT of the two includes past the budget, asked with the
	 * first two before their records told how many terms those hold */
	if (look > strict + 2)
		fail_msg("lookahead asked %u questions, strict %u", look, strict);
}


/* Rounds of questions an evaluation needs when every question asked
 * before a round is answered in it (a resolver sending them at once):
 * step until WAIT, answer all that was asked, again until DONE. */
/* spfkit_result.depth of la_rounds()' last evaluation */
static unsigned la_depth;

static unsigned la_rounds(struct fixture *fx, int lookahead, const char *ip, const char *sender,
			  enum spfkit_result_code want, const char **explanation_out)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc,
				    .receiver = "mx.receiver.example", .no_lookahead = !lookahead};
	struct spfkit_ctx *ctx;
	struct spfkit_request req;
	struct spfkit_eval *ev;
	struct spfkit_question q, asked[64];
	struct spfkit_dns_answer a;
	static char explanation[256];
	unsigned rounds = 0;
	size_t n, i;
	int step;

	la_request(&req, ip, sender);
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(spfkit_eval_new(ctx, &req, &ev), 0);
	for (;;) {
		n = 0;
		while ((step = spfkit_eval_step(ev, &q)) == SPFKIT_STEP_QUERY) {
			assert_true(n < 64);
			asked[n++] = q;
		}
		if (step == SPFKIT_STEP_DONE)
			break;
		assert_int_equal(step, SPFKIT_STEP_WAIT);
		assert_true(n > 0);
		rounds++;
		for (i = 0; i < n; i++) {
			assert_int_equal(spfkit_zone_lookup(fx->zone, asked[i].name, asked[i].name_len,
							    asked[i].type, &a),
					 0);
			assert_int_equal(spfkit_eval_answer(ev, asked[i].id, &a), 0);
		}
	}
	assert_result(spfkit_eval_result(ev)->code, want);
	la_depth = spfkit_eval_result(ev)->depth;
	snprintf(explanation, sizeof(explanation), "%s",
		 spfkit_eval_result(ev)->explanation ? spfkit_eval_result(ev)->explanation : "");
	*explanation_out = explanation;
	spfkit_eval_free(ev);
	spfkit_ctx_free(ctx);
	return rounds;
}

/* The exp= TXT of a record that will fail is asked with the questions
 * still open before the fail (issue 11, item 4): one round less, the
 * same explanation. Where the top record passes, it is never asked. */
static void la_prefetches_exp_of_a_failing_record(void **state)
{
	struct fixture *fx = *state;
	struct la_count c = {.avoid = "why.exp.example"};
	const char *e1, *e2;
	char strict_exp[256];
	unsigned strict, look;

	txt(fx, "exp.example",
	    "v=spf1 include:i1.exp.example include:i2.exp.example -all exp=why.exp.example");
	txt(fx, "i1.exp.example", "v=spf1 a:h1.exp.example -all");
	txt(fx, "i2.exp.example", "v=spf1 a:h2.exp.example -all");
	addr(fx, "h1.exp.example", "198.51.100.1");
	addr(fx, "h2.exp.example", "198.51.100.2");
	txt(fx, "why.exp.example", "%{i} may not send for %{d}");
	/* strict: top, i1, h1, i2, h2, exp; lookahead: top, i1+i2, h1+h2 (+exp) */
	strict = la_rounds(fx, 0, "192.0.2.9", "a@exp.example", SPFKIT_RESULT_FAIL, &e1);
	snprintf(strict_exp, sizeof(strict_exp), "%s", e1);
	assert_string_equal(strict_exp, "192.0.2.9 may not send for exp.example");
	assert_int_equal(strict, 6);
	look = la_rounds(fx, 1, "192.0.2.9", "a@exp.example", SPFKIT_RESULT_FAIL, &e2);
	assert_string_equal(e2, strict_exp);
	assert_int_equal(look, 3);
	/* a pass decided by an answer still out when the fail looked
	 * likely: the speculative exp question is the one question more
	 * than strict evaluation asks, and it changes nothing */
	strict = la_questions(fx, 0, "198.51.100.2", "a@exp.example", SPFKIT_RESULT_PASS, &c);
	assert_int_equal(c.avoided, 0);
	look = la_questions(fx, 1, "198.51.100.2", "a@exp.example", SPFKIT_RESULT_PASS, &c);
	assert_int_equal(c.avoided, 1);
	assert_int_equal(look, strict + 1);
	/* a pass on an address term of the top record: no fail in sight */
	txt(fx, "exp2.example", "v=spf1 ip4:192.0.2.0/24 include:i1.exp.example -all exp=why.exp.example");
	la_questions(fx, 1, "192.0.2.1", "a@exp2.example", SPFKIT_RESULT_PASS, &c);
	assert_int_equal(c.avoided, 0);
}


/* spfkit_result.depth is the chain strict evaluation walks, in both
 * modes: lookahead asks leaf. with mid. (the top record names both), yet
 * the result came through mid.'s include of it (found by fuzz_eval). */
static void la_depth_is_strict_chain(void **state)
{
	struct fixture *fx = *state;
	const char *e;

	txt(fx, "top.depth.example",
	    "v=spf1 include:mid.depth.example include:leaf.depth.example -all");
	txt(fx, "mid.depth.example", "v=spf1 include:leaf.depth.example ~all");
	txt(fx, "leaf.depth.example", "v=spf1 ip4:192.0.2.9 -all");
	assert_int_equal(la_rounds(fx, 0, "192.0.2.9", "a@top.depth.example", SPFKIT_RESULT_PASS, &e),
			 3);
	assert_int_equal(la_depth, 3);
	assert_int_equal(la_rounds(fx, 1, "192.0.2.9", "a@top.depth.example", SPFKIT_RESULT_PASS, &e),
			 2);
	assert_int_equal(la_depth, 3);
}

/* Step ev until it waits or is done; the questions it sent in q[], their count. */
static unsigned la_drain(struct spfkit_eval *ev, struct spfkit_question *q, unsigned room,
			 int *done)
{
	unsigned n = 0;
	int s;

	while ((s = spfkit_eval_step(ev, &q[n])) == SPFKIT_STEP_QUERY)
		assert_true(++n < room);
	assert_true(s == SPFKIT_STEP_WAIT || s == SPFKIT_STEP_DONE);
	*done = s == SPFKIT_STEP_DONE;
	return n;
}

/*
 * spfkit_eval_set_lookahead(): off, one question at a time; switched on
 * with three includes still ahead, the next step asks for all of them
 * at once; the result and its counters are those of strict evaluation.
 */
static void la_switched_on_late(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_request req;
	struct spfkit_question q[16];
	struct spfkit_dns_answer ans;
	struct spfkit_eval *ev;
	const struct spfkit_result *res;
	unsigned n, i;
	int done;

	txt(fx, "late.la.example",
	    "v=spf1 include:l1.la.example include:l2.la.example include:l3.la.example "
	    "include:l4.la.example -all");
	txt(fx, "l1.la.example", "v=spf1 ip4:198.51.100.1 -all");
	txt(fx, "l2.la.example", "v=spf1 ip4:198.51.100.2 -all");
	txt(fx, "l3.la.example", "v=spf1 ip4:198.51.100.3 -all");
	txt(fx, "l4.la.example", "v=spf1 ip4:192.0.2.4 -all");
	la_request(&req, "192.0.2.4", "a@late.la.example");
	assert_int_equal(spfkit_eval_set_lookahead(NULL, 1), SPFKIT_EINVAL);
	assert_int_equal(spfkit_eval_new(fx->ctx, &req, &ev), 0);
	assert_int_equal(spfkit_eval_set_lookahead(ev, 0), 0);
	assert_int_equal(la_drain(ev, q, 16, &done), 1); /* the record */
	assert_int_equal(spfkit_zone_lookup(fx->zone, q[0].name, q[0].name_len, q[0].type, &ans), 0);
	assert_int_equal(spfkit_eval_answer(ev, q[0].id, &ans), 0);
	assert_int_equal(la_drain(ev, q, 16, &done), 1); /* l1 alone: strict */
	assert_memory_equal(q[0].name, "l1.la.example", 13);
	assert_int_equal(spfkit_eval_set_lookahead(ev, 1), 0);
	n = 1 + la_drain(ev, q + 1, 15, &done); /* l2, l3, l4 at once */
	assert_int_equal(n, 4);
	assert_false(done);
	for (i = 0; i < n; i++) {
		assert_int_equal(spfkit_zone_lookup(fx->zone, q[i].name, q[i].name_len, q[i].type,
						    &ans), 0);
		assert_int_equal(spfkit_eval_answer(ev, q[i].id, &ans), 0);
	}
	assert_int_equal(la_drain(ev, q, 16, &done), 0);
	assert_true(done);
	res = spfkit_eval_result(ev);
	assert_non_null(res);
	assert_result(res->code, SPFKIT_RESULT_PASS);
	assert_int_equal(res->queries, 5);
	assert_int_equal(res->dns_terms, 4);
	spfkit_eval_free(ev);
}

/* A target made of request macros (no %{p}) is asked as early as a
 * literal one (issue 11, item 4), expanded as strict evaluation will;
 * %{p} still waits for strict evaluation's PTR lookups. */
static void la_prefetches_macro_targets(void **state)
{
	struct fixture *fx = *state;
	struct la_count c = {.avoid = "_ptr."};
	const char *e;
	unsigned strict, look;

	txt(fx, "mac.example",
	    "v=spf1 include:i1.mac.example exists:%{ir}._allow.%{d} -all");
	txt(fx, "i1.mac.example", "v=spf1 a:h1.mac.example -all");
	addr(fx, "h1.mac.example", "198.51.100.1");
	addr(fx, "9.2.0.192._allow.mac.example", "127.0.0.2");
	/* strict: top, i1, h1, exists; lookahead: top, i1+exists, h1 */
	strict = la_rounds(fx, 0, "192.0.2.9", "a@mac.example", SPFKIT_RESULT_PASS, &e);
	assert_int_equal(strict, 4);
	look = la_rounds(fx, 1, "192.0.2.9", "a@mac.example", SPFKIT_RESULT_PASS, &e);
	assert_int_equal(look, 3);
	txt(fx, "macp.example", "v=spf1 exists:%{p}._ptr.macp.example -all");
	la_questions(fx, 1, "192.0.2.9", "a@macp.example", SPFKIT_RESULT_FAIL, &c);
	assert_int_equal(c.avoided, 1); /* strict's own question, after the PTR */
	assert_int_equal(la_questions(fx, 0, "192.0.2.9", "a@macp.example", SPFKIT_RESULT_FAIL, &c),
			 la_questions(fx, 1, "192.0.2.9", "a@macp.example", SPFKIT_RESULT_FAIL, &c));
}

/* ---- parsed records one evaluation holds ---------------------------
 * A record of 64 KiB parses to some 5 MB (record.h). Lookahead asks for
 * every include target at once; it must not parse and hold what strict
 * evaluation has not reached past EVAL_SPEC_RECORD_BYTES. */

/* One evaluation; returns the peak bytes of parsed records it held. */
static size_t held_peak(struct fixture *fx, int lookahead, const char *sender,
			enum spfkit_result_code *code, const char **problem)
{
	/* a cache too small for these records: each is held by the
	 * evaluation alone, which is what its bound is about */
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &test_alloc, .receiver = "mx.receiver.example",
				    .no_lookahead = !lookahead, .record_cache_bytes = 65536};
	struct spfkit_ctx *ctx;
	struct spfkit_resolver *r;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	size_t now, peak;
	static char why[256];

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = "helo.example.org";
	req.helo_len = strlen(req.helo);
	req.identity = SPFKIT_IDENTITY_MAILFROM;
	req.now = 1700000000;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
	assert_int_equal(spfkit_check(ctx, r, &req, &ev), 0);
	*code = spfkit_eval_result(ev)->code;
	snprintf(why, sizeof(why), "%s", spfkit_eval_result(ev)->problem ? spfkit_eval_result(ev)->problem : "");
	*problem = why;
	spfkit__query_record_bytes(ev, &now, &peak);
	spfkit_eval_free(ev);
	spfkit_resolver_free(r);
	spfkit_ctx_free(ctx);
	return peak;
}

/* `top` includes 10 records of 64 KiB, each `term` repeated, then `end`. */
static void big_includes(struct fixture *fx, const char *top, const char *term, const char *end)
{
	static char rec[SPFKIT_RECORD_MAX_LEN + 1];
	char name[64], incs[512];
	size_t n = 0, m = 0, tl = strlen(term), el = strlen(end);
	int i;

	m += (size_t)snprintf(incs, sizeof(incs), "v=spf1");
	for (i = 0; i < 10; i++)
		m += (size_t)snprintf(incs + m, sizeof(incs) - m, " include:i%d.%s", i, top);
	snprintf(incs + m, sizeof(incs) - m, " -all");
	txt(fx, top, incs);
	n = (size_t)snprintf(rec, sizeof(rec), "v=spf1");
	while (n + tl + el + 8 < 65000) {
		memcpy(rec + n, term, tl);
		n += tl;
	}
	memcpy(rec + n, end, el + 1);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "i%d.%s", i, top);
		/* a different text each, so no two share a cache entry */
		snprintf(rec + n + el, 16, " x%d=", i);
		txt(fx, name, rec);
	}
}

static void held_records_are_bounded(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		const char *top, *term, *end;
		enum spfkit_result_code want;
	} shapes[] = {
		{"a.held.example", " a", "", SPFKIT_RESULT_PERMERROR},   /* 11th DNS term */
		{"x.held.example", " x=", " -all", SPFKIT_RESULT_FAIL},  /* all ten evaluated */
	};
	enum spfkit_result_code strict_code, look_code;
	const char *strict_why, *look_why;
	size_t strict, look, i;
	char sender[64], keep[256];

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		big_includes(fx, shapes[i].top, shapes[i].term, shapes[i].end);
		snprintf(sender, sizeof(sender), "a@%s", shapes[i].top);
		strict = held_peak(fx, 0, sender, &strict_code, &strict_why);
		print_message("%s strict: %zu bytes of parsed records\n", shapes[i].top, strict);
		snprintf(keep, sizeof(keep), "%s", strict_why);
		look = held_peak(fx, 1, sender, &look_code, &look_why);
		print_message("%s lookahead: %zu bytes of parsed records\n", shapes[i].top, look);
		assert_result(strict_code, shapes[i].want);
		assert_result(look_code, strict_code);
		assert_string_equal(look_why, keep);
		if (look > strict + EVAL_SPEC_RECORD_BYTES)
			fail_msg("%s: lookahead held %zu bytes of parsed records, strict %zu",
				 shapes[i].top, look, strict);
		/* the top record and one included record are open at a time */
		if (strict > ((size_t)8 << 20))
			fail_msg("%s: strict held %zu bytes of parsed records", shapes[i].top, strict);
	}
}

/* A 64 KiB record of " x=" terms, then `end`. */
static void big_record(struct fixture *fx, const char *name, const char *end)
{
	static char rec[SPFKIT_RECORD_MAX_LEN + 1];
	size_t n = (size_t)snprintf(rec, sizeof(rec), "v=spf1"), el = strlen(end);

	while (n + el + 8 < 65000) {
		memcpy(rec + n, " x=", 3);
		n += 3;
	}
	memcpy(rec + n, end, el + 1);
	txt(fx, name, rec);
}

/* A record given back when its include returns or it redirects is parsed
 * again when it comes up again; results stay those of strict evaluation. */
static void held_records_redirect_and_repeat(void **state)
{
	static const char *const senders[] = {"a@rep.held.example", "a@red.held.example",
					      "a@self.held.example"};
	static const enum spfkit_result_code want[] = {SPFKIT_RESULT_FAIL, SPFKIT_RESULT_FAIL,
						       SPFKIT_RESULT_PERMERROR};
	struct fixture *fx = *state;
	enum spfkit_result_code strict_code, look_code;
	const char *why;
	char name[64], end[64], keep[256];
	size_t strict, look;
	int i;

	txt(fx, "rep.held.example",
	    "v=spf1 include:big.rep.held.example include:big.rep.held.example "
	    "include:big.rep.held.example -all");
	big_record(fx, "big.rep.held.example", " -all");
	txt(fx, "red.held.example", "v=spf1 redirect=r0.red.held.example");
	for (i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "r%d.red.held.example", i);
		snprintf(end, sizeof(end), i < 8 ? " redirect=r%d.red.held.example" : " -all", i + 1);
		big_record(fx, name, end);
	}
	/* redirect to itself: a permerror at the 11th DNS term */
	big_record(fx, "self.held.example", " redirect=self.held.example");
	for (i = 0; i < 3; i++) {
		strict = held_peak(fx, 0, senders[i], &strict_code, &why);
		snprintf(keep, sizeof(keep), "%s", why);
		look = held_peak(fx, 1, senders[i], &look_code, &why);
		print_message("%s: strict %zu, lookahead %zu bytes of parsed records\n", senders[i],
			      strict, look);
		assert_result(strict_code, want[i]);
		assert_result(look_code, strict_code);
		assert_string_equal(why, keep);
		if (strict > ((size_t)8 << 20) || look > strict + EVAL_SPEC_RECORD_BYTES)
			fail_msg("%s: held %zu bytes strict, %zu lookahead", senders[i], strict, look);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ---- issue 10 item 4: pre-RFC modifiers named in the trace ----------- */

struct notes {
	char text[4][512];
	size_t n;
};

static void note_trace(void *arg, const struct spfkit_trace_event *e)
{
	struct notes *c = arg;

	if (e->kind != SPFKIT_TRACE_NOTE || c->n >= 4)
		return;
	snprintf(c->text[c->n++], sizeof(c->text[0]), "%.*s", (int)e->text_len, e->text);
}

static void trace_names_legacy_modifiers(void **state)
{
	struct fixture *fx = *state;
	struct spfkit_resolver *r;
	struct spfkit_request req;
	struct notes c;

	txt(fx, "old.example", "v=spf1 mx default=deny");
	name_rr(fx, "old.example", SPFKIT_RR_MX, "mx.old.example", 10);
	addr(fx, "mx.old.example", "192.0.2.1");
	txt(fx, "acc.example", "v=spf1 accredit=x.example DEFAULT=softdeny -all");
	memset(&c, 0, sizeof(c));
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("198.51.100.1", 12, &req.ip), 0);
	req.sender = "u@old.example";
	req.sender_len = strlen(req.sender);
	req.trace = note_trace;
	req.trace_arg = &c;
	assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
	assert_int_equal(spfkit_check(fx->ctx, r, &req, &fx->ev), 0);
	/* the result is the RFC's: the modifier is ignored */
	assert_result(spfkit_eval_result(fx->ev)->code, SPFKIT_RESULT_NEUTRAL);
	spfkit_eval_free(fx->ev);
	fx->ev = NULL;
	assert_int_equal(c.n, 1);
	assert_non_null(strstr(c.text[0], "default=deny ignored"));
	assert_non_null(strstr(c.text[0], "it meant -all"));
	assert_non_null(strstr(c.text[0], "ends neutral"));

	memset(&c, 0, sizeof(c));
	req.sender = "u@acc.example";
	req.sender_len = strlen(req.sender);
	assert_int_equal(spfkit_check(fx->ctx, r, &req, &fx->ev), 0);
	assert_result(spfkit_eval_result(fx->ev)->code, SPFKIT_RESULT_FAIL);
	assert_int_equal(c.n, 2);
	assert_non_null(strstr(c.text[0], "accredit=x.example ignored"));
	assert_non_null(strstr(c.text[1], "DEFAULT=softdeny ignored"));
	assert_non_null(strstr(c.text[1], "it meant ~all"));
	assert_null(strstr(c.text[1], "ends neutral")); /* it has -all */
	spfkit_resolver_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(h4_api_misuse), T(trace_names_legacy_modifiers), T(h4_answer_misuse), T(h4_record_of_2000_terms),
		T(h4_long_expansion_is_cut), T(h4_default_explanation_ipv6), T(h4_answer_out_of_memory),
		T(all_and_qualifiers), T(ip4_ip6_cidr), T(a_with_dual_cidr), T(mx_hosts),
		T(ptr_validated_names), T(exists_and_macros), T(include_results_map),
		T(redirect_and_exp), T(identities), T(dns_term_limit), T(redirect_counts_as_term),
		T(void_lookup_limit), T(void_lookups_after_ptr_macro), T(mx_name_limit), T(ptr_name_limit), T(question_table_growth), T(permerror_reasons),
		T(temperror_on_dns_failure), T(huge_and_binary_records), T(expansion_is_bounded), T(non_ascii_input), T(answer_of_64k),
		T(threads_share_a_context), T(time_budget_gives_temperror), T(step_and_answer_contract), T(bad_requests), T(long_identities_are_evaluated), T(ip_text_forms), T(ip_text_every_octet_and_group), T(ip_match_every_prefix), T(allocation_failures),
		/* lookahead's speculative traffic (issue 7, item 4) */
		T(la_stops_at_matching_ip), T(la_sixty_includes), T(la_sixty_includes_failing_on_voids), T(la_include_tree_with_mx),
		T(la_prefetches_exp_of_a_failing_record),
		T(la_prefetches_macro_targets),
		T(la_depth_is_strict_chain),
		T(la_switched_on_late),
		/* parsed records one evaluation holds */
		T(held_records_are_bounded), T(held_records_redirect_and_repeat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
