/*
 * Every case of the RFC 7208 test suite, in-process through the zone
 * backend: strict sequential evaluation, with lookahead, and twice with
 * the record memo. A case passes when the strict result is accepted by
 * the suite, the lookahead evaluation gives the identical result (code,
 * explanation, mechanism, problem, counters) and both memo runs that
 * and the same question count. Prints each failure with the reason and
 * one summary line "N passed, N failed"; exit status 0 only when all passed.
 *
 *   run_inprocess rfc7208-tests.yml [case-name]
 */
#include <stdio.h>
#include <string.h>

#include "suite.h"

struct counts {
	unsigned passed, failed;
	unsigned memo_answers; /* in the memo's second runs */
	unsigned planned;      /* of those runs, results an address plan gave */
};

static int same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Lookahead must change nothing but the number of questions asked; the
 * record memo not even that (`questions`). */
static int identical(const struct spfkit_result *a, const struct spfkit_result *b,
		     const char *what, int questions, char *why, size_t size)
{
	if (a->code == b->code && same_text(a->explanation, b->explanation) &&
	    same_text(a->mechanism, b->mechanism) && same_text(a->problem, b->problem) &&
	    same_text(a->domain, b->domain) && a->dns_terms == b->dns_terms &&
	    a->void_lookups == b->void_lookups && a->depth == b->depth &&
	    (!questions || a->queries == b->queries))
		return 1;
	snprintf(why, size, "%s differs: %s/%u/%u/%u/%u vs strict %s/%u/%u/%u/%u", what,
		 spfkit_result_name(b->code), b->dns_terms, b->void_lookups, b->queries, b->depth,
		 spfkit_result_name(a->code), a->dns_terms, a->void_lookups, a->queries, a->depth);
	return 0;
}

/* Contexts: strict, lookahead, and strict with the record memo, made per
 * scenario (names repeat across scenarios) and run over each case twice:
 * the second run takes the records the first left in the memo. */
enum { STRICT = 0, LOOKAHEAD, MEMO, NCTX };

static void run_case(const struct spfkit_ctx *const ctx[NCTX], struct spfkit_resolver *r,
		     const struct suite_scenario *sc, const struct suite_case *c, struct counts *n)
{
	struct spfkit_eval *ev[NCTX + 1] = {NULL, NULL, NULL, NULL};
	char why[1024] = "";
	int i, rc = 0, ok;

	for (i = 0; i < NCTX + 1 && rc == 0; i++)
		rc = suite_evaluate(ctx[i < NCTX ? i : MEMO], r, c, &ev[i]);
	if (rc != 0)
		snprintf(why, sizeof(why), "spfkit_check: %s", spfkit_strerror(rc));
	ok = rc == 0 && suite_case_ok(c, spfkit_eval_result(ev[0]), why, sizeof(why)) &&
	     identical(spfkit_eval_result(ev[0]), spfkit_eval_result(ev[1]), "lookahead", 0, why,
		       sizeof(why)) &&
	     identical(spfkit_eval_result(ev[0]), spfkit_eval_result(ev[2]), "memo (first run)", 1,
		       why, sizeof(why)) &&
	     identical(spfkit_eval_result(ev[0]), spfkit_eval_result(ev[3]), "memo (second run)", 1,
		       why, sizeof(why));
	if (rc == 0) {
		n->memo_answers += spfkit_eval_result(ev[3])->memo_answers;
		n->planned += spfkit_eval_result(ev[3])->planned != 0;
	}
	if (ok) {
		n->passed++;
	} else {
		printf("FAIL %s [spec %s] (%s): %s\n", c->name, c->spec ? c->spec : "?",
		       sc->description, why);
		n->failed++;
	}
	for (i = 0; i < NCTX + 1; i++)
		spfkit_eval_free(ev[i]);
}

static int run_scenario(struct spfkit_ctx *ctx[NCTX], const struct spfkit_config *memo_cfg,
			const struct suite_scenario *sc, const char *only, struct counts *n)
{
	struct spfkit_zone *zone = NULL;
	struct spfkit_resolver *r = NULL;
	size_t i;

	if (spfkit_ctx_new(memo_cfg, &ctx[MEMO]) != 0 || spfkit_zone_new(NULL, &zone) != 0 ||
	    suite_fill_zone(sc, zone) != 0 || spfkit_zone_resolver(zone, &r) != 0) {
		printf("FAIL scenario '%s': cannot build its zone\n", sc->description);
		n->failed += (unsigned)sc->ncases;
		spfkit_zone_free(zone);
		spfkit_ctx_free(ctx[MEMO]);
		ctx[MEMO] = NULL;
		return -1;
	}
	for (i = 0; i < sc->ncases; i++)
		if (only == NULL || strcmp(only, sc->cases[i].name) == 0)
			run_case((const struct spfkit_ctx *const *)ctx, r, sc, &sc->cases[i], n);
	spfkit_resolver_free(r);
	spfkit_zone_free(zone);
	spfkit_ctx_free(ctx[MEMO]);
	ctx[MEMO] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	static struct suite suite;
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx[NCTX] = {NULL, NULL, NULL};
	struct counts n = {0, 0, 0, 0};
	size_t i;
	int rc = 1;
	const char *name;
	int name_len;

	if (argc < 2) {
		fprintf(stderr, "usage: %s rfc7208-tests.yml [case]\n", argv[0]);
		return 2;
	}
	if (suite_load(&suite, argv[1]) != 0)
		return 1;
	if (suite_contexts(&cfg, ctx) != 0)
		goto out;
	cfg.no_lookahead = 1;
	cfg.record_memo = 1;
	for (i = 0; i < suite.nscenarios; i++)
		run_scenario(ctx, &cfg, &suite.scenarios[i], argc > 2 ? argv[2] : NULL, &n);
	name = suite_name(argv[1], &name_len);
	printf("%.*s in-process: %u cases run, each strict, with lookahead and twice with "
	       "the record memo (%u questions answered from it, %u results from address plans)\n",
	       name_len, name, n.passed + n.failed, n.memo_answers, n.planned);
	if (argc == 2 && (n.memo_answers == 0 || n.planned == 0)) {
		printf("FAIL the record memo answered nothing, or no address plan gave a result: "
		       "not tested\n");
		n.failed++;
	}
	printf("%u passed, %u failed\n", n.passed, n.failed);
	rc = n.failed == 0 && n.passed > 0 ? 0 : 1;
out:
	spfkit_ctx_free(ctx[0]);
	spfkit_ctx_free(ctx[1]);
	suite_free(&suite);
	return rc;
}
