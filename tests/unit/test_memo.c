/*
 * Unit tests of the record memo (spfkit_config.record_memo, kept by
 * lib/spf/record_memo.c): a later evaluation takes a record, or any other
 * answer, from the memo instead of asking, within the TTL of the answer that brought it
 * and by the requests' `now`; the result and its counters stay those of
 * asking, for every name that publishes the same record; traced evaluations, `now` 0 and contexts without the memo or
 * without a record cache ask as before; a name's bucket holds a bounded
 * number of names, and bound names are charged to the cache's budget.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/cache.h>
#include <spfkit/spfkit.h>

#include "ctx.h"              /* the context's record cache ... */
#include "record_cache_int.h" /* ... and its memo's counts */
#include "cache_stats.h"       /* tests/support */
#include "zone_text.h"

#define T0 1700000000
#define TTL 300u

struct outcome {
	enum spfkit_result_code code;
	unsigned asked; /* questions handed to the caller */
	unsigned queries, memo_answers, depth, dns_terms;
};

static void zone_txt(struct spfkit_zone *z, const char *name, const char *text)
{
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_TXT, TTL, text,
					 strlen(text), 0), 0);
}

static struct spfkit_zone *test_zone(const char *include_target_record)
{
	struct spfkit_zone *z = NULL;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	zone_txt(z, "example.com", "v=spf1 include:_spf.example.net -all");
	zone_txt(z, "_spf.example.net", include_target_record);
	zone_txt(z, "two.example", "v=spf1 ip4:198.51.100.1 -all");
	zone_txt(z, "two.example", "site-verification=1234");
	/* customers of one provider publish the same text */
	zone_txt(z, "c1.example", "v=spf1 include:_spf.example.net -all");
	zone_txt(z, "c2.example", "v=spf1 include:_spf.example.net -all");
	return z;
}

static void note_trace(void *arg, const struct spfkit_trace_event *e)
{
	(void)e;
	(*(unsigned *)arg)++;
}

/* Answers given this TTL instead of the zone's, when not 0 (hostile TTLs). */
static uint32_t ttl_override;

static struct outcome run_at(const struct spfkit_ctx *ctx, const struct spfkit_zone *z,
			     const char *ip, const char *sender, int64_t now, int traced)
{
	struct outcome o;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	struct spfkit_question q;
	struct spfkit_dns_answer ans;
	const struct spfkit_result *res;
	unsigned events = 0;
	int step;

	memset(&o, 0, sizeof(o));
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse(ip, strlen(ip), &req.ip), 0);
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = "helo.example";
	req.helo_len = 12;
	req.now = now;
	if (traced) {
		req.trace = note_trace;
		req.trace_arg = &events;
	}
	assert_int_equal(spfkit_eval_new(ctx, &req, &ev), 0);
	while ((step = spfkit_eval_step(ev, &q)) == SPFKIT_STEP_QUERY) {
		o.asked++;
		assert_int_equal(spfkit_zone_lookup(z, q.name, q.name_len, q.type, &ans), 0);
		if (ttl_override != 0)
			ans.ttl = ttl_override;
		assert_int_equal(spfkit_eval_answer(ev, q.id, &ans), 0);
	}
	assert_int_equal(step, SPFKIT_STEP_DONE);
	res = spfkit_eval_result(ev);
	o.code = res->code;
	o.queries = res->queries;
	o.memo_answers = res->memo_answers;
	o.depth = res->depth;
	o.dns_terms = res->dns_terms;
	if (traced)
		assert_true(events > 0);
	spfkit_eval_free(ev);
	return o;
}

static struct outcome run(const struct spfkit_ctx *ctx, const struct spfkit_zone *z, int64_t now)
{
	return run_at(ctx, z, "192.0.2.7", "a@example.com", now, 0);
}

static struct spfkit_ctx *memo_ctx(int lookahead, int no_record_cache)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx = NULL;

	spfkit_config_init(&cfg);
	cfg.record_memo = 1;
	cfg.no_lookahead = !lookahead;
	cfg.no_record_cache = no_record_cache;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	return ctx;
}

static void assert_same_result(const struct outcome *a, const struct outcome *b)
{
	assert_int_equal(a->code, b->code);
	assert_int_equal(a->queries, b->queries);
	assert_int_equal(a->depth, b->depth);
	assert_int_equal(a->dns_terms, b->dns_terms);
}

static void second_evaluation_asks_nothing(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);
	struct outcome first, second;

	(void)state;
	first = run(ctx, z, T0);
	assert_int_equal(first.code, SPFKIT_RESULT_PASS);
	assert_int_equal(first.asked, 2);
	assert_int_equal(first.memo_answers, 0);
	second = run(ctx, z, T0 + 10);
	assert_int_equal(second.asked, 0);
	assert_int_equal(second.memo_answers, 2);
	assert_same_result(&first, &second);
	/* a client the include does not cover: the same records, -all */
	second = run_at(ctx, z, "203.0.113.9", "a@example.com", T0 + 20, 0);
	assert_int_equal(second.code, SPFKIT_RESULT_FAIL);
	assert_int_equal(second.asked, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

static void expires_with_the_ttl(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);

	(void)state;
	assert_int_equal(run(ctx, z, T0).asked, 2);
	assert_int_equal(run(ctx, z, T0 + TTL - 1).asked, 0);
	/* expired: asked again, and remembered from that answer on */
	assert_int_equal(run(ctx, z, T0 + TTL).asked, 2);
	assert_int_equal(run(ctx, z, T0 + TTL + 1).asked, 0);
	assert_int_equal(run(ctx, z, T0 + 2 * TTL - 1).asked, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

static void clock_going_back_asks(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);

	(void)state;
	assert_int_equal(run(ctx, z, T0).asked, 2);
	assert_int_equal(run(ctx, z, T0 - 1).asked, 2);
	assert_int_equal(run(ctx, z, T0 - 1).asked, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

static void trace_and_no_time_ask(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);
	struct outcome o;

	(void)state;
	/* neither fills the memo ... */
	assert_int_equal(run_at(ctx, z, "192.0.2.7", "a@example.com", T0, 1).asked, 2);
	assert_int_equal(run(ctx, z, 0).asked, 2);
	assert_int_equal(run(ctx, z, T0).asked, 2);
	/* ... nor uses it */
	o = run_at(ctx, z, "192.0.2.7", "a@example.com", T0 + 1, 1);
	assert_int_equal(o.asked, 2);
	assert_int_equal(o.memo_answers, 0);
	assert_int_equal(run(ctx, z, 0).asked, 2);
	assert_int_equal(run(ctx, z, T0 + 1).asked, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

static void off_unless_asked_for_and_cached(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *plain = NULL, *uncached = memo_ctx(0, 1);

	(void)state;
	assert_int_equal(spfkit_ctx_new(NULL, &plain), 0);
	assert_int_equal(run(plain, z, T0).asked, 2);
	assert_int_equal(run(plain, z, T0 + 1).asked, 2);
	assert_int_equal(run(uncached, z, T0).asked, 2);
	assert_int_equal(run(uncached, z, T0 + 1).asked, 2);
	spfkit_ctx_free(plain);
	spfkit_ctx_free(uncached);
	spfkit_zone_free(z);
}

static void new_record_after_expiry(void **state)
{
	struct spfkit_zone *old = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_zone *changed = test_zone("v=spf1 ip4:198.51.100.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);

	(void)state;
	assert_int_equal(run(ctx, old, T0).code, SPFKIT_RESULT_PASS);
	/* within the TTL the remembered record holds, as a DNS cache's would */
	assert_int_equal(run(ctx, changed, T0 + 1).code, SPFKIT_RESULT_PASS);
	/* past it, the new one; remembered in turn */
	assert_int_equal(run(ctx, changed, T0 + TTL).code, SPFKIT_RESULT_FAIL);
	assert_int_equal(run(ctx, old, T0 + TTL + 1).code, SPFKIT_RESULT_FAIL);
	assert_int_equal(run(ctx, old, T0 + TTL + 1).asked, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(old);
	spfkit_zone_free(changed);
}

static void with_lookahead_and_other_txt(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(1, 0);
	struct outcome first, second;

	(void)state;
	first = run(ctx, z, T0);
	second = run(ctx, z, T0 + 1);
	assert_int_equal(second.asked, 0);
	assert_same_result(&first, &second);
	/* a name with a second TXT record: remembered with it */
	first = run_at(ctx, z, "198.51.100.1", "a@two.example", T0, 0);
	second = run_at(ctx, z, "198.51.100.1", "a@two.example", T0 + 1, 0);
	assert_int_equal(first.code, SPFKIT_RESULT_PASS);
	assert_int_equal(second.asked, 0);
	assert_same_result(&first, &second);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

static void one_record_many_names(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);
	const char *const senders[] = {"a@example.com", "a@c1.example", "a@c2.example"};
	unsigned round, i;

	(void)state;
	assert_int_equal(run(ctx, z, T0).asked, 2);
	assert_int_equal(run_at(ctx, z, "192.0.2.7", senders[1], T0, 0).asked, 1);
	assert_int_equal(run_at(ctx, z, "192.0.2.7", senders[2], T0, 0).asked, 1);
	for (round = 0; round < 2; round++)
		for (i = 0; i < 3; i++)
			assert_int_equal(run_at(ctx, z, "192.0.2.7", senders[i], T0 + 1, 0).asked, 0);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

/* Addresses, MX hosts, no such name, no data: each answer is kept too. */
static void other_answers_remembered(void **state)
{
	struct spfkit_zone *z = zone_of(
		"amx.example. 300 IN TXT \"v=spf1 a:host.example mx:mail.example -all\"\n"
		"host.example. 300 IN A 192.0.2.1\n"
		"mail.example. 300 IN MX 10 mx1.example.\n"
		"mx1.example. 300 IN A 192.0.2.2\n"
		"void.example. 300 IN TXT \"v=spf1 a:nothere.example a:host.example -all\"\n"
		"nodata.example. 300 IN A 192.0.2.9\n");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);
	struct outcome first, second;
	unsigned i;

	(void)state;
	first = run_at(ctx, z, "203.0.113.1", "a@amx.example", T0, 0);
	assert_int_equal(first.code, SPFKIT_RESULT_FAIL);
	assert_int_equal(first.asked, 4); /* TXT, A, MX, A */
	second = run_at(ctx, z, "192.0.2.2", "a@amx.example", T0 + 1, 0);
	assert_int_equal(second.code, SPFKIT_RESULT_PASS);
	assert_int_equal(second.asked, 0);
	assert_int_equal(second.memo_answers, 4);
	/* a void lookup (RFC 7208 section 4.6.4) from the memo still counts */
	first = run_at(ctx, z, "192.0.2.1", "a@void.example", T0, 0);
	second = run_at(ctx, z, "192.0.2.1", "a@void.example", T0 + 1, 0);
	assert_int_equal(first.code, SPFKIT_RESULT_PASS);
	assert_int_equal(second.asked, 0);
	assert_same_result(&first, &second);
	/* no SPF record: the TXT question's NODATA is remembered */
	for (i = 0; i < 2; i++) {
		first = run_at(ctx, z, "192.0.2.1", "a@nodata.example", T0 + i, 0);
		assert_int_equal(first.code, SPFKIT_RESULT_NONE);
		assert_int_equal(first.asked, i == 0 ? 1 : 0);
	}
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

/* An answer larger than SPFKIT__RECORD_MEMO_ANSWER_MAX is asked each time. */
static void large_answer_asked(void **state)
{
	struct spfkit_zone *z = NULL;
	struct spfkit_ctx *ctx = memo_ctx(0, 0);
	char big[SPFKIT__RECORD_MEMO_ANSWER_MAX + 16];
	unsigned i;

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	assert_int_equal(spfkit_zone_add(z, "big.example", 11, SPFKIT_RR_TXT, TTL, big,
					 sizeof(big), 0), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(run_at(ctx, z, "192.0.2.1", "a@big.example", T0 + i, 0).asked, 1);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

/* The memo keeps at most as many answers as the cache keeps records. */
static void answers_bounded(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx = NULL;
	char sender[64];
	size_t before, after, peak, max;
	unsigned i;

	(void)state;
	spfkit_config_init(&cfg);
	cfg.record_memo = 1;
	cfg.no_lookahead = 1;
	cfg.record_cache_size = 16;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	spfkit__record_cache_bytes(ctx->records, &before, &peak, &max);
	for (i = 0; i < 40; i++) {
		snprintf(sender, sizeof(sender), "a@missing%u.example", i);
		assert_int_equal(run_at(ctx, z, "192.0.2.1", sender, T0, 0).code, SPFKIT_RESULT_NONE);
	}
	assert_int_equal(ctx->records->nanswers, 16);
	spfkit__record_cache_bytes(ctx->records, &after, &peak, &max);
	assert_true(after > before);
	/* the most recent are kept, the oldest went */
	assert_int_equal(run_at(ctx, z, "192.0.2.1", "a@missing39.example", T0 + 1, 0).asked, 0);
	assert_int_equal(run_at(ctx, z, "192.0.2.1", "a@missing0.example", T0 + 1, 0).asked, 1);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

struct worker {
	const struct spfkit_ctx *ctx;
	const struct spfkit_zone *z;
	unsigned seed;
	int bad;
};

/* Evaluations on one context from several threads, across expiries, with
 * a byte budget small enough that records and answers are evicted. */
static void *work(void *arg)
{
	struct worker *w = arg;
	char sender[64];
	unsigned i;

	for (i = 0; i < 3000; i++) {
		unsigned r = (unsigned)rand_r(&w->seed);
		int64_t now = T0 + (int64_t)(i / 100) * TTL / 2;

		snprintf(sender, sizeof(sender), "a@%s", r % 3 == 0 ? "example.com" :
			 r % 3 == 1 ? "c1.example" : "two.example");
		if (run_at(w->ctx, w->z, r % 2 ? "192.0.2.7" : "198.51.100.1", sender, now, 0).code ==
		    SPFKIT_RESULT_NONE)
			w->bad = 1;
		snprintf(sender, sizeof(sender), "a@gone%u.example", r % 50);
		if (run_at(w->ctx, w->z, "192.0.2.7", sender, now, 0).code != SPFKIT_RESULT_NONE)
			w->bad = 1;
	}
	return NULL;
}

static void threads_share_the_memo(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx = NULL;
	struct worker w[4];
	pthread_t th[4];
	unsigned i;

	(void)state;
	spfkit_config_init(&cfg);
	cfg.record_memo = 1;
	cfg.no_lookahead = 1;
	cfg.record_cache_size = 8;
	cfg.record_cache_bytes = 16384;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ctx, z, i + 1, 0};
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_false(w[i].bad);
	}
	assert_true(ctx->records->nanswers <= 8);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

/* A hostile TTL is capped as the DNS cache caps it: a day for an answer,
 * an hour for no such name. */
static void ttls_capped(void **state)
{
	struct spfkit_zone *z = test_zone("v=spf1 ip4:192.0.2.0/24 ~all");
	struct spfkit_ctx *ctx = memo_ctx(0, 0);

	(void)state;
	ttl_override = 0x7fffffffu;
	assert_int_equal(run(ctx, z, T0).asked, 2);
	assert_int_equal(run(ctx, z, T0 + SPFKIT_CACHE_MAX_TTL - 1).asked, 0);
	assert_int_equal(run(ctx, z, T0 + SPFKIT_CACHE_MAX_TTL).asked, 2);
	assert_int_equal(run_at(ctx, z, "192.0.2.7", "a@nowhere.example", T0, 0).asked, 1);
	assert_int_equal(
		run_at(ctx, z, "192.0.2.7", "a@nowhere.example", T0 + SPFKIT_CACHE_MAX_NEG_TTL - 1, 0)
			.asked, 0);
	assert_int_equal(
		run_at(ctx, z, "192.0.2.7", "a@nowhere.example", T0 + SPFKIT_CACHE_MAX_NEG_TTL, 0)
			.asked, 1);
	ttl_override = 0;
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

/* Names whose hash lands in bucket 0 of a 16-bucket table. */
static void colliding_name(unsigned *seed, char *out, size_t size)
{
	for (;; (*seed)++) {
		snprintf(out, size, "n%u.example", *seed);
		if ((spfkit__namehash(out, strlen(out)) & 15) == 0) {
			(*seed)++;
			return;
		}
	}
}

static void bucket_bounded_and_charged(void **state)
{
	struct spfkit__record_cache *c = NULL;
	struct spfkit__record_cache_entry *e[SPFKIT__RECORD_MEMO_CHAIN + 1];
	struct spfkit__record_memo m;
	struct spfkit__arena arena;
	char names[SPFKIT__RECORD_MEMO_CHAIN + 1][32], text[64];
	size_t before, after, peak, max, i;
	unsigned seed = 0;

	(void)state;
	spfkit__arena_init(&arena, NULL, 1024, 0);
	/* 16 entries at most: the name table stays at 16 buckets for 9 names */
	assert_int_equal(spfkit__record_cache_new(NULL, 16, &c), 0);
	for (i = 0; i <= SPFKIT__RECORD_MEMO_CHAIN; i++) {
		snprintf(text, sizeof(text), "v=spf1 ip4:192.0.2.%zu -all", i);
		assert_int_equal(spfkit__record_cache_get(c, text, strlen(text), NULL, &e[i]), 0);
		assert_true(e[i]->cached);
		colliding_name(&seed, names[i], sizeof(names[i]));
	}
	spfkit__record_cache_bytes(c, &before, &peak, &max);
	for (i = 0; i <= SPFKIT__RECORD_MEMO_CHAIN; i++)
		spfkit__record_memo_put(c, e[i], names[i], strlen(names[i]),
					spfkit__namehash(names[i],
							 strlen(names[i])), T0, TTL, 1, 0);
	spfkit__record_cache_bytes(c, &after, &peak, &max);
	assert_true(after > before);
	for (i = 0; i <= SPFKIT__RECORD_MEMO_CHAIN; i++) {
		int hit = spfkit__record_memo_get(c, SPFKIT_RR_TXT, names[i], strlen(names[i]),
						  spfkit__namehash(names[i], strlen(names[i])),
						  T0 + 1, &arena, &m);

		/* the bucket's first names are bound, the one past the bound not */
		assert_int_equal(hit, i < SPFKIT__RECORD_MEMO_CHAIN);
		if (hit) {
			assert_ptr_equal(m.entry, e[i]);
			assert_int_equal(m.ttl, TTL - 1);
			spfkit__record_cache_release(c, m.entry);
		}
	}
	/* expired lookups forget their names, and what they were charged */
	for (i = 0; i < SPFKIT__RECORD_MEMO_CHAIN; i++)
		assert_false(spfkit__record_memo_get(c, SPFKIT_RR_TXT, names[i], strlen(names[i]),
						     spfkit__namehash(names[i], strlen(names[i])),
						     T0 + TTL, &arena, &m));
	spfkit__record_cache_bytes(c, &after, &peak, &max);
	assert_int_equal(after, before);
	for (i = 0; i <= SPFKIT__RECORD_MEMO_CHAIN; i++)
		spfkit__record_cache_release(c, e[i]);
	spfkit__record_cache_free(c);
	spfkit__arena_free(&arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(second_evaluation_asks_nothing),
		cmocka_unit_test(expires_with_the_ttl),
		cmocka_unit_test(clock_going_back_asks),
		cmocka_unit_test(trace_and_no_time_ask),
		cmocka_unit_test(off_unless_asked_for_and_cached),
		cmocka_unit_test(new_record_after_expiry),
		cmocka_unit_test(with_lookahead_and_other_txt),
		cmocka_unit_test(one_record_many_names),
		cmocka_unit_test(other_answers_remembered),
		cmocka_unit_test(large_answer_asked),
		cmocka_unit_test(answers_bounded),
		cmocka_unit_test(ttls_capped),
		cmocka_unit_test(threads_share_the_memo),
		cmocka_unit_test(bucket_bounded_and_charged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
