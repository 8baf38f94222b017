/*
 * Unit tests of address plans (lib/spf/record_plan.c): through the record
 * memo, a domain's tree that depends on the client address alone gives
 * its result in one pass, and every field of it (code, explanation,
 * mechanism, domain, problem, DNS-term, void, question and depth
 * counters) is what evaluation without the memo gives, down every path:
 * includes that end without a pass, redirects, "a" and "mx" through the
 * memo's answers, void lookups. Where a plan cannot say the same (an
 * "exp" at the top, a macro, a question met twice, a limit) evaluation
 * goes on as usual; plans end with the TTL of what they were built from,
 * and are charged to the record cache's budget.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

#include "ctx.h"              /* the context's record cache ... */
#include "record_cache_int.h" /* ... and its byte count */
#include "zone_text.h"

#define T0 1700000000

/* A result with its strings copied out of the evaluation. */
struct full {
	enum spfkit_result_code code;
	char explanation[256], mechanism[128], domain[256], problem[256];
	unsigned dns_terms, void_lookups, queries, depth, planned;
};

static void copy_text(char *to, size_t size, const char *from)
{
	snprintf(to, size, "%s", from != NULL ? from : "(null)");
}

static struct full check(const struct spfkit_ctx *ctx, const struct spfkit_zone *z,
			 const char *ip, const char *sender, int64_t now)
{
	struct spfkit_resolver *r = NULL;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	const struct spfkit_result *res;
	struct full f;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse(ip, strlen(ip), &req.ip), 0);
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = "helo.example";
	req.helo_len = 12;
	req.now = now;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	assert_int_equal(spfkit_check(ctx, r, &req, &ev), 0);
	res = spfkit_eval_result(ev);
	memset(&f, 0, sizeof(f));
	f.code = res->code;
	copy_text(f.explanation, sizeof(f.explanation), res->explanation);
	copy_text(f.mechanism, sizeof(f.mechanism), res->mechanism);
	copy_text(f.domain, sizeof(f.domain), res->domain);
	copy_text(f.problem, sizeof(f.problem), res->problem);
	f.dns_terms = res->dns_terms;
	f.void_lookups = res->void_lookups;
	f.queries = res->queries;
	f.depth = res->depth;
	f.planned = res->planned;
	spfkit_eval_free(ev);
	spfkit_resolver_free(r);
	return f;
}

static void assert_same(const struct full *plain, const struct full *memo, const char *ip)
{
	if (plain->code != memo->code || strcmp(plain->explanation, memo->explanation) != 0 ||
	    strcmp(plain->mechanism, memo->mechanism) != 0 ||
	    strcmp(plain->domain, memo->domain) != 0 || strcmp(plain->problem, memo->problem) != 0 ||
	    plain->dns_terms != memo->dns_terms || plain->void_lookups != memo->void_lookups ||
	    plain->queries != memo->queries || plain->depth != memo->depth)
		fail_msg("%s: plain %s '%s' %s %u/%u/%u/%u, planned=%u %s '%s' %s %u/%u/%u/%u", ip,
			 spfkit_result_name(plain->code), plain->mechanism, plain->domain,
			 plain->dns_terms, plain->void_lookups, plain->queries, plain->depth,
			 memo->planned, spfkit_result_name(memo->code), memo->mechanism,
			 memo->domain, memo->dns_terms, memo->void_lookups, memo->queries,
			 memo->depth);
}

static struct spfkit_ctx *new_ctx(int memo, int lookahead)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx = NULL;

	spfkit_config_init(&cfg);
	cfg.record_memo = memo;
	cfg.no_lookahead = !lookahead;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	return ctx;
}

/*
 * Every client, twice through the memo (the first pass fills it, and the
 * plans are built after each evaluation), against evaluation without it;
 * returns how many of the second pass a plan gave.
 */
static unsigned compare_all(const struct spfkit_zone *z, const char *sender,
			    const char *const *ips, size_t n, int lookahead)
{
	struct spfkit_ctx *plain = new_ctx(0, 0), *memo = new_ctx(1, lookahead);
	struct full a, b;
	unsigned planned = 0;
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			a = check(plain, z, ips[i], sender, T0 + pass);
			b = check(memo, z, ips[i], sender, T0 + pass);
			if (!lookahead)
				assert_same(&a, &b, ips[i]);
			else /* lookahead may ask more questions; a plan asks none */
				b.queries = a.queries, assert_same(&a, &b, ips[i]);
			assert_int_equal(a.planned, 0);
			planned += pass == 1 && b.planned;
		}
	spfkit_ctx_free(plain);
	spfkit_ctx_free(memo);
	return planned;
}

/* A provider's tree: includes ending with and without a pass, a redirect
 * at the top, "a" and "mx", IPv4 and IPv6 clients. */
static const char tree_zone[] =
	"example.com. 300 IN TXT \"v=spf1 ip4:192.0.2.0/28 include:_a.example.net "
	"~include:_b.example.net redirect=_r.example.org\"\n"
	"_a.example.net. 300 IN TXT \"v=spf1 -ip4:192.0.2.16/28 ip4:192.0.2.32/27 ?all\"\n"
	"_b.example.net. 300 IN TXT \"v=spf1 include:_c.example.net -all\"\n"
	"_c.example.net. 300 IN TXT \"v=spf1 ip6:2001:db8::/32 ip4:198.51.100.0/24\"\n"
	"_r.example.org. 300 IN TXT \"v=spf1 a mx/24 ip4:203.0.113.0/24 ip6:2001:db8:1::/48 -all\"\n"
	"_r.example.org. 300 IN A 203.0.113.200\n"
	"_r.example.org. 300 IN MX 10 mx1.example.org.\n"
	"_r.example.org. 300 IN MX 20 mx2.example.org.\n"
	"mx1.example.org. 300 IN A 198.18.0.1\n"
	"mx2.example.org. 300 IN A 198.18.7.1\n"
	"mx2.example.org. 300 IN AAAA 2001:db8:ffff::1\n";

static const char *const tree_ips[] = {
	"192.0.2.1",    /* the first ip4: pass */
	"192.0.2.20",   /* -ip4 in _a: its check_host() fails, the includer goes on */
	"192.0.2.40",   /* ip4 in _a: pass */
	"198.51.100.9", /* _c passes, so _b, so ~include: softfail */
	"2001:db8::1",  /* the same through ip6 */
	"203.0.113.200", /* the redirect target's "a" */
	"198.18.7.99",  /* its "mx/24", the second host */
	"203.0.113.9",  /* its ip4 */
	"2001:db8:ffff::1", /* an MX host's AAAA, but mx/24 takes the /128 default for IPv6 */
	"2001:db8:1::5",    /* ip6 of the redirect target */
	"10.0.0.1",     /* -all of the redirect target: fail, the default explanation */
	"2001:db8:2::1",    /* the same for IPv6 */
};

static void tree_results_equal(void **state)
{
	struct spfkit_zone *z = zone_of(tree_zone);
	size_t n = sizeof(tree_ips) / sizeof(tree_ips[0]);

	(void)state;
	/* every path is one a plan can take */
	assert_int_equal(compare_all(z, "a@example.com", tree_ips, n, 0), n);
	assert_int_equal(compare_all(z, "a@example.com", tree_ips, n, 1), n);
	spfkit_zone_free(z);
}

/* What a plan cannot say, evaluation says: an "exp" at the top, "exists"
 * with a macro, the same name twice, past the void-lookup limit. */
static void stops_where_it_cannot_say(void **state)
{
	struct spfkit_zone *z = zone_of(
		"exp.example. 300 IN TXT \"v=spf1 ip4:192.0.2.0/24 -all exp=why.exp.example\"\n"
		"why.exp.example. 300 IN TXT \"%{i} is not allowed\"\n"
		"ex.example. 300 IN TXT \"v=spf1 ip4:192.0.2.0/25 exists:%{i}.ex.example -all\"\n"
		"twice.example. 300 IN TXT \"v=spf1 include:_x.twice.example "
		"include:_x.twice.example -all\"\n"
		"_x.twice.example. 300 IN TXT \"v=spf1 -ip4:192.0.2.0/25\"\n"
		"voids.example. 300 IN TXT \"v=spf1 ip4:192.0.2.1 a:nx1.voids.example "
		"a:nx2.voids.example a:nx3.voids.example -all\"\n");
	const char *const ips[] = {"192.0.2.1", "192.0.2.200", "203.0.113.5"};
	const char *const senders[] = {"a@exp.example", "a@ex.example", "a@twice.example",
				       "a@voids.example"};
	/* how many of the three clients a plan takes, for each */
	const unsigned planned[] = {0, 1, 0, 1};
	unsigned got;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(senders) / sizeof(senders[0]); i++)
		if ((got = compare_all(z, senders[i], ips, 3, 0)) != planned[i])
			fail_msg("%s: a plan gave %u results, expected %u", senders[i], got,
				 planned[i]);
	spfkit_zone_free(z);
}

/* Void lookups through the plan count as asked, up to the limit. */
static void void_lookups_counted(void **state)
{
	struct spfkit_zone *z = zone_of(
		"v2.example. 300 IN TXT \"v=spf1 a:nx1.v2.example mx:nx2.v2.example "
		"ip4:192.0.2.0/24 -all\"\n");
	const char *const ips[] = {"192.0.2.1", "203.0.113.5", "2001:db8::1"};

	(void)state;
	assert_int_equal(compare_all(z, "a@v2.example", ips, 3, 0), 3);
	spfkit_zone_free(z);
}

/* A walk reads a bounded number of terms (it holds the cache's lock):
 * past them, a 40 KB record of modifiers is evaluated as usual. */
static void walk_bounded(void **state)
{
	static char text[40000];
	struct spfkit_zone *z = NULL;
	const char *const ips[] = {"192.0.2.1", "192.0.2.2", "203.0.113.5"};
	size_t len, i;

	(void)state;
	len = (size_t)snprintf(text, sizeof(text), "v=spf1 ip4:192.0.2.1");
	for (i = 0; i < 9000; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, " x=%zu", i % 10);
	len += (size_t)snprintf(text + len, sizeof(text) - len, " ip4:192.0.2.2 -all");
	assert_true(len < sizeof(text) - 1);
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	assert_int_equal(spfkit_zone_add(z, "big.example", 11, SPFKIT_RR_TXT, 300, text, len, 0), 0);
	/* only the first term comes before the bound */
	assert_int_equal(compare_all(z, "a@big.example", ips, 3, 0), 1);
	spfkit_zone_free(z);
}

/* A plan ends with the TTL of its first answer to expire, and is built
 * again after; what it holds is charged to the record cache and given
 * back with its name. */
static void ends_with_ttl_and_is_charged(void **state)
{
	struct spfkit_zone *z = zone_of(
		"t.example. 300 IN TXT \"v=spf1 include:_n.t.example -all\"\n"
		"_n.t.example. 60 IN TXT \"v=spf1 ip4:192.0.2.0/24\"\n");
	struct spfkit_ctx *ctx = new_ctx(1, 0);
	struct spfkit__record_cache *c = ctx->records;
	struct spfkit__record_cache_name *n;
	size_t cost;
	struct full f;

	(void)state;
	f = check(ctx, z, "192.0.2.1", "a@t.example", T0);
	assert_int_equal(f.planned, 0);
	/* built after that evaluation, for IPv4 clients, and charged */
	n = spfkit__record_memo_find(c, SPFKIT_RR_TXT, "t.example", 9, spfkit__namehash("t.example",
											9));
	assert_non_null(n);
	assert_non_null(n->plan[0]);
	assert_null(n->plan[1]);
	cost = n->cost;
	assert_true(cost > spfkit__record_cache_block_cost(sizeof(*n) + n->len));
	f = check(ctx, z, "192.0.2.9", "a@t.example", T0 + 59);
	assert_int_equal(f.planned, 1);
	assert_int_equal(f.code, SPFKIT_RESULT_PASS);
	assert_int_equal(f.queries, 2);
	/* _n.t.example's 60 s are over: asked again, and planned again after */
	f = check(ctx, z, "192.0.2.9", "a@t.example", T0 + 60);
	assert_int_equal(f.planned, 0);
	f = check(ctx, z, "192.0.2.9", "a@t.example", T0 + 61);
	assert_int_equal(f.planned, 1);
	/* the node's charge is its own and its plan's, in the cache's count */
	assert_int_equal(n->cost, cost);
	assert_true(c->bytes >= n->cost);
	/* a clock gone back uses no plan */
	f = check(ctx, z, "192.0.2.9", "a@t.example", T0 + 30);
	assert_int_equal(f.planned, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_results_equal),
		cmocka_unit_test(stops_where_it_cannot_say),
		cmocka_unit_test(void_lookups_counted),
		cmocka_unit_test(walk_bounded),
		cmocka_unit_test(ends_with_ttl_and_is_charged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
