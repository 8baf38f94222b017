/*
 * Lookahead changes nothing but the number of questions: every query of
 * a corpus is evaluated strict and with lookahead through the zone
 * resolver, and the two results must be identical (code, explanation,
 * mechanism, domain, problem, DNS-term, void and depth counters).
 *
 *   lookahead_equal --zone FILE --queries FILE
 *
 * Prints each difference and "N passed, N failed"; exit 0 when none.
 * Also prints what lookahead costs and gains (issue 7): questions per
 * evaluation in each mode (mean and maximum), and round trips as the
 * zone resolver gives them (each wait() answers every question asked
 * before it: one round) against spfkit_result.depth, the minimum.
 */
#include <stdio.h>
#include <string.h>

#include <spfkit/resolver.h>

#include <spfkit/spfkit.h>

#include "bench_common.h"

static int same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int identical(const struct spfkit_result *a, const struct spfkit_result *b)
{
	return a->code == b->code && same_text(a->explanation, b->explanation) &&
	       same_text(a->mechanism, b->mechanism) && same_text(a->domain, b->domain) &&
	       same_text(a->problem, b->problem) && a->dns_terms == b->dns_terms &&
	       a->void_lookups == b->void_lookups && a->depth == b->depth;
}

/* The zone resolver, its wait() calls counted: one round trip each. */
struct counted {
	struct spfkit_resolver *inner;
	unsigned waits;
};

static int counted_submit(void *impl, const char *name, size_t len, uint16_t type,
			  spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	struct counted *c = impl;

	return spfkit_resolver_submit(c->inner, name, len, type, cb, arg, handle);
}

static void counted_cancel(void *impl, uint64_t handle)
{
	struct counted *c = impl;

	spfkit_resolver_cancel(c->inner, handle);
}

static int counted_wait(void *impl, int timeout_ms)
{
	struct counted *c = impl;
	int rc = spfkit_resolver_wait(c->inner, timeout_ms);

	if (rc > 0)
		c->waits++;
	return rc;
}

static void counted_destroy(void *impl)
{
	(void)impl; /* the inner resolver is freed by its owner */
}

static const struct spfkit_resolver_ops counted_ops = {
	counted_submit, counted_cancel, counted_wait, counted_destroy,
};

/* What one mode cost over the corpus. */
struct cost {
	double questions, rounds, depth;
	unsigned max_questions;
};

static void add_cost(struct cost *c, const struct spfkit_result *res, unsigned rounds)
{
	c->questions += res->queries;
	c->rounds += rounds;
	c->depth += res->depth;
	if (res->queries > c->max_questions)
		c->max_questions = res->queries;
}

static void print_costs(const struct cost c[2], size_t n)
{
	double k = n > 0 ? (double)n : 1.0;

	printf("questions/eval: strict %.2f (max %u), lookahead %.2f (max %u): "
	       "lookahead/strict = %.2fx\n",
	       c[0].questions / k, c[0].max_questions, c[1].questions / k, c[1].max_questions,
	       c[0].questions > 0 ? c[1].questions / c[0].questions : 0.0);
	printf("round trips/eval (zone resolver, one per wait): strict %.2f, lookahead %.2f, "
	       "minimum %.2f: lookahead/minimum = %.2fx\n",
	       c[0].rounds / k, c[1].rounds / k, c[0].depth / k,
	       c[0].depth > 0 ? c[1].rounds / c[0].depth : 0.0);
}

static int compare(struct spfkit_ctx *const ctx[2], struct counted *cr, struct cost cost[2],
		   const struct bench_query *q)
{
	struct spfkit_resolver r = {&counted_ops, cr};
	struct spfkit_request req;
	struct spfkit_eval *ev[2] = {NULL, NULL};
	const struct spfkit_result *res[2];
	int i, ok = 0;

	if (bench_request("lookahead_equal", q, &req) != 0)
		return 0;
	for (i = 0; i < 2; i++) {
		cr->waits = 0;
		if (spfkit_check(ctx[i], &r, &req, &ev[i]) != 0)
			goto out;
		res[i] = spfkit_eval_result(ev[i]);
		add_cost(&cost[i], res[i], cr->waits);
	}
	ok = identical(res[0], res[1]);
	if (!ok)
		printf("line %u (%s %s): strict %s/%u/%u/%u, lookahead %s/%u/%u/%u\n", q->line, q->ip,
		       q->sender, spfkit_result_name(res[0]->code), res[0]->dns_terms,
		       res[0]->void_lookups, res[0]->depth, spfkit_result_name(res[1]->code),
		       res[1]->dns_terms, res[1]->void_lookups, res[1]->depth);
out:
	spfkit_eval_free(ev[0]);
	spfkit_eval_free(ev[1]);
	return ok;
}

static int setup(const char *zone_path, struct spfkit_zone **zone, struct spfkit_ctx *ctx[2],
		 struct spfkit_resolver **r)
{
	struct spfkit_config cfg;
	int i;

	if (bench_zone_load("lookahead_equal", zone_path, zone) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		spfkit_config_init(&cfg);
		cfg.no_lookahead = i == 0;
		if (spfkit_ctx_new(&cfg, &ctx[i]) != 0)
			return -1;
	}
	return spfkit_zone_resolver(*zone, r);
}

int main(int argc, char **argv)
{
	struct spfkit_zone *zone = NULL;
	struct spfkit_ctx *ctx[2] = {NULL, NULL};
	struct spfkit_resolver *r = NULL;
	struct counted cr;
	struct cost cost[2];
	struct bench_queries qs;
	unsigned passed = 0, failed = 0;
	char err[512];
	size_t i;
	int rc = 1;

	memset(&qs, 0, sizeof(qs));
	memset(cost, 0, sizeof(cost));
	if (argc != 5 || strcmp(argv[1], "--zone") != 0 || strcmp(argv[3], "--queries") != 0) {
		fprintf(stderr, "usage: lookahead_equal --zone FILE --queries FILE\n");
		return 2;
	}
	if (bench_queries_load(&qs, argv[4], err, sizeof(err)) != 0) {
		fprintf(stderr, "lookahead_equal: %s\n", err);
		return 2;
	}
	if (setup(argv[2], &zone, ctx, &r) == 0) {
		cr.inner = r;
		for (i = 0; i < qs.count; i++)
			if (compare(ctx, &cr, cost, &qs.q[i]))
				passed++;
			else
				failed++;
		printf("strict and lookahead evaluation of %zu corpus queries\n", qs.count);
		printf("%u passed, %u failed\n", passed, failed);
		print_costs(cost, qs.count);
		rc = failed == 0 && passed > 0 ? 0 : 1;
	}
	spfkit_resolver_free(r);
	spfkit_ctx_free(ctx[0]);
	spfkit_ctx_free(ctx[1]);
	spfkit_zone_free(zone);
	bench_queries_free(&qs);
	return rc;
}
