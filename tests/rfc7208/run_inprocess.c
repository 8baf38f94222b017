/*
 * Every case of the RFC 7208 test suite, in-process through the zone
 * backend. Prints each failure with the reason and one summary line
 * "N passed, N failed". Exit status 0 only when every case passed.
 *
 *   run_inprocess rfc7208-tests.yml [case-name]
 */
#include <stdio.h>
#include <string.h>

#include "suite.h"

struct counts {
	unsigned passed, failed;
};

static int run_case(const struct spfkit_ctx *ctx, struct spfkit_resolver *r,
		    const struct suite_scenario *sc, const struct suite_case *c, struct counts *n)
{
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	char why[1024];
	int rc;

	memset(&req, 0, sizeof(req));
	if (spfkit_ip_parse(c->host, strlen(c->host), &req.ip) != 0) {
		printf("FAIL %s: bad host %s in the suite\n", c->name, c->host);
		n->failed++;
		return -1;
	}
	req.sender = c->mailfrom;
	req.sender_len = c->mailfrom_len;
	req.helo = c->helo;
	req.helo_len = c->helo_len;
	req.now = 1700000000;
	rc = spfkit_check(ctx, r, &req, &ev);
	if (rc != 0) {
		printf("FAIL %s (%s): spfkit_check: %s\n", c->name, sc->description, spfkit_strerror(rc));
		n->failed++;
		return -1;
	}
	if (suite_case_ok(c, spfkit_eval_result(ev), why, sizeof(why))) {
		n->passed++;
	} else {
		printf("FAIL %s [spec %s] (%s): %s\n", c->name, c->spec ? c->spec : "?",
		       sc->description, why);
		n->failed++;
	}
	spfkit_eval_free(ev);
	return 0;
}

static int run_scenario(const struct spfkit_ctx *ctx, const struct suite_scenario *sc,
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
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx = NULL;
	struct counts n = {0, 0};
	struct suite *s;
	static struct suite suite;
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s rfc7208-tests.yml [case]\n", argv[0]);
		return 2;
	}
	s = &suite;
	if (suite_load(s, argv[1]) != 0)
		return 1;
	memset(&cfg, 0, sizeof(cfg));
	/* The suite expects the literal DEFAULT where no exp= gives a text. */
	cfg.default_explanation = "DEFAULT";
	if (spfkit_ctx_new(&cfg, &ctx) != 0) {
		suite_free(s);
		return 1;
	}
	for (i = 0; i < s->nscenarios; i++)
		run_scenario(ctx, &s->scenarios[i], argc > 2 ? argv[2] : NULL, &n);
	spfkit_ctx_free(ctx);
	suite_free(s);
	printf("rfc7208 in-process: %u cases run\n", n.passed + n.failed);
	printf("%u passed, %u failed\n", n.passed, n.failed);
	return n.failed == 0 && n.passed > 0 ? 0 : 1;
}
