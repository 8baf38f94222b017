/*
 * Every case of the RFC 7208 test suite, in-process through the zone
 * backend, twice: strict sequential evaluation and with lookahead. A case
 * passes when the strict result is accepted by the suite and the
 * lookahead evaluation gives the identical result (code, explanation,
 * mechanism, problem, counters). Prints each failure with the reason and
 * one summary line "N passed, N failed"; exit status 0 only when all passed.
 *
 *   run_inprocess rfc7208-tests.yml [case-name]
 */
#include <stdio.h>
#include <string.h>

#include "suite.h"

struct counts {
	unsigned passed, failed;
};

static int same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Lookahead must change nothing but the number of questions asked. */
static int identical(const struct spfkit_result *a, const struct spfkit_result *b, char *why,
		     size_t size)
{
	if (a->code == b->code && same_text(a->explanation, b->explanation) &&
	    same_text(a->mechanism, b->mechanism) && same_text(a->problem, b->problem) &&
	    same_text(a->domain, b->domain) && a->dns_terms == b->dns_terms &&
	    a->void_lookups == b->void_lookups && a->depth == b->depth)
		return 1;
	snprintf(why, size, "lookahead differs: %s/%u/%u vs strict %s/%u/%u",
		 spfkit_result_name(b->code), b->dns_terms, b->void_lookups,
		 spfkit_result_name(a->code), a->dns_terms, a->void_lookups);
	return 0;
}

static void run_case(const struct spfkit_ctx *const ctx[2], struct spfkit_resolver *r,
		     const struct suite_scenario *sc, const struct suite_case *c, struct counts *n)
{
	struct spfkit_eval *ev[2] = {NULL, NULL};
	char why[1024] = "";
	int i, rc = 0, ok;

	for (i = 0; i < 2 && rc == 0; i++)
		rc = suite_evaluate(ctx[i], r, c, &ev[i]);
	if (rc != 0)
		snprintf(why, sizeof(why), "spfkit_check: %s", spfkit_strerror(rc));
	ok = rc == 0 && suite_case_ok(c, spfkit_eval_result(ev[0]), why, sizeof(why)) &&
	     identical(spfkit_eval_result(ev[0]), spfkit_eval_result(ev[1]), why, sizeof(why));
	if (ok) {
		n->passed++;
	} else {
		printf("FAIL %s [spec %s] (%s): %s\n", c->name, c->spec ? c->spec : "?",
		       sc->description, why);
		n->failed++;
	}
	spfkit_eval_free(ev[0]);
	spfkit_eval_free(ev[1]);
}

static int run_scenario(const struct spfkit_ctx *const ctx[2], const struct suite_scenario *sc,
			const char *only, struct counts *n)
{
	struct spfkit_zone *zone = NULL;
	struct spfkit_resolver *r = NULL;
	size_t i;

	if (spfkit_zone_new(NULL, &zone) != 0 || suite_fill_zone(sc, zone) != 0 ||
	    spfkit_zone_resolver(zone, &r) != 0) {
		printf("FAIL scenario '%s': cannot build its zone\n", sc->description);
		n->failed += (unsigned)sc->ncases;
		spfkit_zone_free(zone);
		return -1;
	}
	for (i = 0; i < sc->ncases; i++)
		if (only == NULL || strcmp(only, sc->cases[i].name) == 0)
			run_case(ctx, r, sc, &sc->cases[i], n);
	spfkit_resolver_free(r);
	spfkit_zone_free(zone);
	return 0;
}

int main(int argc, char **argv)
{
	static struct suite suite;
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx[2] = {NULL, NULL};
	struct counts n = {0, 0};
	size_t i;
	int rc = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: %s rfc7208-tests.yml [case]\n", argv[0]);
		return 2;
	}
	if (suite_load(&suite, argv[1]) != 0)
		return 1;
	spfkit_config_init(&cfg);
	/* The suite expects the literal DEFAULT where no exp= gives a text. */
	cfg.default_explanation = "DEFAULT";
	cfg.no_lookahead = 1;
	if (spfkit_ctx_new(&cfg, &ctx[0]) != 0)
		goto out;
	cfg.no_lookahead = 0;
	if (spfkit_ctx_new(&cfg, &ctx[1]) != 0)
		goto out;
	for (i = 0; i < suite.nscenarios; i++)
		run_scenario((const struct spfkit_ctx *const *)ctx, &suite.scenarios[i],
			     argc > 2 ? argv[2] : NULL, &n);
	printf("rfc7208 in-process: %u cases run, each strict and with lookahead\n",
	       n.passed + n.failed);
	printf("%u passed, %u failed\n", n.passed, n.failed);
	rc = n.failed == 0 && n.passed > 0 ? 0 : 1;
out:
	spfkit_ctx_free(ctx[0]);
	spfkit_ctx_free(ctx[1]);
	suite_free(&suite);
	return rc;
}
