/*
 * The record memo (spfkit_config.record_memo) changes nothing but which
 * questions reach the resolver: every query of a corpus is evaluated,
 * twice over so that the second pass finds the records remembered, on a
 * context without the memo and on two with it (strict and lookahead).
 * Strict with the memo must give exactly the plain result (code,
 * explanation, mechanism, domain, problem, DNS-term, void, question and
 * depth counters); lookahead with the memo the same but the question
 * count, which lookahead changes by design (lookahead_equal). Strict
 * with the memo also takes the results its address plans give
 * (spfkit_result.planned): they must be exactly the plain ones too. So
 * must a context without a record cache (no_record_cache: records parsed
 * in each evaluation's arena, spfkit__record_parse_loose(), and walked
 * without the cache's ip4 scan), question count included.
 *
 *   memo_equal --zone FILE --queries FILE
 *
 * Prints each difference and "N passed, N failed"; exit 0 when none, and
 * when the memo answered questions and plans gave results at all in the
 * second pass (else they were not tested).
 */
#include <stdio.h>
#include <string.h>

#include <spfkit/resolver.h>

#include <spfkit/spfkit.h>

#include "bench_common.h"

enum { PLAIN = 0, MEMO_STRICT, MEMO_LOOKAHEAD, NO_CACHE, NCTX };

static int same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int identical(const struct spfkit_result *a, const struct spfkit_result *b, int questions)
{
	return a->code == b->code && same_text(a->explanation, b->explanation) &&
	       same_text(a->mechanism, b->mechanism) && same_text(a->domain, b->domain) &&
	       same_text(a->problem, b->problem) && a->dns_terms == b->dns_terms &&
	       a->void_lookups == b->void_lookups && a->depth == b->depth &&
	       (!questions || a->queries == b->queries) && a->memo_answers <= a->queries &&
	       b->memo_answers <= b->queries;
}

static void report(const struct bench_query *q, const char *what, const struct spfkit_result *a,
		   const struct spfkit_result *b)
{
	printf("line %u (%s %s): plain %s/%u/%u/%u/%u, %s %s/%u/%u/%u/%u (memo %u)\n", q->line,
	       q->ip, q->sender, spfkit_result_name(a->code), a->dns_terms, a->void_lookups,
	       a->queries, a->depth, what, spfkit_result_name(b->code), b->dns_terms,
	       b->void_lookups, b->queries, b->depth, b->memo_answers);
}

/* What one pass over the corpus took from the memo. */
struct pass_counts {
	unsigned long memo_answers, planned, planned_lookahead;
};

static int compare(struct spfkit_ctx *const ctx[NCTX], struct spfkit_resolver *r,
		   const struct bench_query *q, struct pass_counts *counts)
{
	struct spfkit_request req;
	struct spfkit_eval *ev[NCTX] = {NULL};
	const struct spfkit_result *res[NCTX];
	int i, ok = 0;

	if (bench_request("memo_equal", q, &req) != 0)
		return 0;
	for (i = 0; i < NCTX; i++) {
		if (spfkit_check(ctx[i], r, &req, &ev[i]) != 0)
			goto out;
		res[i] = spfkit_eval_result(ev[i]);
	}
	/* plans are for evaluation through the memo only */
	ok = res[PLAIN]->memo_answers == 0 && !res[PLAIN]->planned;
	if (!identical(res[PLAIN], res[MEMO_STRICT], 1)) {
		report(q, "memo strict", res[PLAIN], res[MEMO_STRICT]);
		ok = 0;
	}
	if (!identical(res[PLAIN], res[MEMO_LOOKAHEAD], 0)) {
		report(q, "memo lookahead", res[PLAIN], res[MEMO_LOOKAHEAD]);
		ok = 0;
	}
	if (!identical(res[PLAIN], res[NO_CACHE], 1) || res[NO_CACHE]->memo_answers != 0) {
		report(q, "no record cache", res[PLAIN], res[NO_CACHE]);
		ok = 0;
	}
	counts->memo_answers += res[MEMO_STRICT]->memo_answers;
	counts->planned += res[MEMO_STRICT]->planned != 0;
	counts->planned_lookahead += res[MEMO_LOOKAHEAD]->planned != 0;
out:
	for (i = 0; i < NCTX; i++)
		spfkit_eval_free(ev[i]);
	return ok;
}

static int setup(const char *zone_path, struct spfkit_zone **zone, struct spfkit_ctx *ctx[NCTX],
		 struct spfkit_resolver **r)
{
	struct spfkit_config cfg;
	int i;

	if (bench_zone_load("memo_equal", zone_path, zone) != 0)
		return -1;
	for (i = 0; i < NCTX; i++) {
		spfkit_config_init(&cfg);
		cfg.no_lookahead = i != MEMO_LOOKAHEAD;
		cfg.record_memo = i == MEMO_STRICT || i == MEMO_LOOKAHEAD;
		cfg.no_record_cache = i == NO_CACHE;
		if (spfkit_ctx_new(&cfg, &ctx[i]) != 0)
			return -1;
	}
	return spfkit_zone_resolver(*zone, r);
}

int main(int argc, char **argv)
{
	struct spfkit_zone *zone = NULL;
	struct spfkit_ctx *ctx[NCTX] = {NULL};
	struct spfkit_resolver *r = NULL;
	struct bench_queries qs;
	unsigned passed = 0, failed = 0;
	struct pass_counts counts[2];
	char err[512];
	size_t i;
	int pass, rc = 1;

	memset(&qs, 0, sizeof(qs));
	memset(counts, 0, sizeof(counts));
	if (argc != 5 || strcmp(argv[1], "--zone") != 0 || strcmp(argv[3], "--queries") != 0) {
		fprintf(stderr, "usage: memo_equal --zone FILE --queries FILE\n");
		return 2;
	}
	if (bench_queries_load(&qs, argv[4], err, sizeof(err)) != 0) {
		fprintf(stderr, "memo_equal: %s\n", err);
		return 2;
	}
	if (setup(argv[2], &zone, ctx, &r) == 0) {
		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < qs.count; i++)
				if (compare(ctx, r, &qs.q[i], &counts[pass]))
					passed++;
				else
					failed++;
		printf("plain, record-memo and cache-less evaluation of %zu corpus queries, two passes\n",
		       qs.count);
		printf("questions answered from the memo: %lu in the first pass, %lu in the second\n",
		       counts[0].memo_answers, counts[1].memo_answers);
		printf("results given by address plans: %lu in the first pass, %lu in the second "
		       "(with lookahead: %lu, %lu)\n",
		       counts[0].planned, counts[1].planned, counts[0].planned_lookahead,
		       counts[1].planned_lookahead);
		if (counts[1].memo_answers == 0 || counts[1].planned == 0 ||
		    counts[1].planned_lookahead == 0) {
			printf("the memo answered nothing, or no plan gave a result: not tested\n");
			failed++;
		}
		printf("%u passed, %u failed\n", passed, failed);
		rc = failed == 0 && passed > 0 ? 0 : 1;
	}
	spfkit_resolver_free(r);
	for (i = 0; i < NCTX; i++)
		spfkit_ctx_free(ctx[i]);
	spfkit_zone_free(zone);
	bench_queries_free(&qs);
	return rc;
}
