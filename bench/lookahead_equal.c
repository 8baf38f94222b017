/*
 * Lookahead changes nothing but the number of questions: every query of
 * a corpus is evaluated strict and with lookahead through the zone
 * resolver, and the two results must be identical (code, explanation,
 * mechanism, domain, problem, DNS-term, void and depth counters).
 *
 *   lookahead_equal --zone FILE --queries FILE
 *
 * Prints each difference and "N passed, N failed"; exit 0 when none.
 */
#include <stdio.h>
#include <string.h>

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

static int compare(struct spfkit_ctx *const ctx[2], struct spfkit_resolver *r,
		   const struct bench_query *q)
{
	struct spfkit_request req;
	struct spfkit_eval *ev[2] = {NULL, NULL};
	const struct spfkit_result *res[2];
	int i, ok = 0;

	if (bench_request("lookahead_equal", q, &req) != 0)
		return 0;
	for (i = 0; i < 2; i++)
		if (spfkit_check(ctx[i], r, &req, &ev[i]) != 0)
			goto out;
	res[0] = spfkit_eval_result(ev[0]);
	res[1] = spfkit_eval_result(ev[1]);
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
		memset(&cfg, 0, sizeof(cfg));
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
	struct bench_queries qs;
	unsigned passed = 0, failed = 0;
	char err[512];
	size_t i;
	int rc = 1;

	memset(&qs, 0, sizeof(qs));
	if (argc != 5 || strcmp(argv[1], "--zone") != 0 || strcmp(argv[3], "--queries") != 0) {
		fprintf(stderr, "usage: lookahead_equal --zone FILE --queries FILE\n");
		return 2;
	}
	if (bench_queries_load(&qs, argv[4], err, sizeof(err)) != 0) {
		fprintf(stderr, "lookahead_equal: %s\n", err);
		return 2;
	}
	if (setup(argv[2], &zone, ctx, &r) == 0) {
		for (i = 0; i < qs.count; i++)
			if (compare(ctx, r, &qs.q[i]))
				passed++;
			else
				failed++;
		printf("strict and lookahead evaluation of %zu corpus queries\n", qs.count);
		printf("%u passed, %u failed\n", passed, failed);
		rc = failed == 0 && passed > 0 ? 0 : 1;
	}
	spfkit_resolver_free(r);
	spfkit_ctx_free(ctx[0]);
	spfkit_ctx_free(ctx[1]);
	spfkit_zone_free(zone);
	bench_queries_free(&qs);
	return rc;
}
