/*
 * The RFC 7208 test suite (rfc7208-tests.yml, unchanged) read with
 * libyaml into scenarios: zone data plus test cases. Shared by the
 * in-process runner and the end-to-end runner over loopback DNS.
 */
#ifndef SPFKIT_TEST_SUITE_H
#define SPFKIT_TEST_SUITE_H

#include <stddef.h>

#include <yaml.h>

#include <spfkit/spfkit.h>

#define SUITE_MAX_RESULTS 4

struct suite_case {
	const char *name;
	const char *spec;
	const char *helo;
	const char *host;
	const char *mailfrom;
	size_t helo_len, mailfrom_len;
	int results[SUITE_MAX_RESULTS]; /* accepted spfkit_result_code values */
	size_t nresults;
	const char *explanation; /* NULL: not checked */
};

struct suite_scenario {
	const char *description;
	yaml_document_t *doc;
	yaml_node_t *zonedata; /* mapping, or NULL */
	struct suite_case *cases;
	size_t ncases;
};

struct suite {
	yaml_document_t docs[32];
	size_t ndocs;
	struct suite_scenario scenarios[32];
	size_t nscenarios;
};

/* 0, or -1 with a message on stderr naming the file and the problem. */
int suite_load(struct suite *s, const char *path);
void suite_free(struct suite *s);

/* What the runners print the results under, for "%.*s": the file's name
 * without its folder and "-tests.yml" ("rfc7208", "rfc8616"). */
const char *suite_name(const char *path, int *len);

/*
 * Fill `zone` with a scenario's zonedata, the way the suite's drivers do:
 * each SPF entry also becomes a TXT record unless the name lists TXT
 * entries of its own; "TXT: NONE" is a name without TXT; TIMEOUT makes
 * every question for the name time out. 0, or -1 with a message.
 */
int suite_fill_zone(const struct suite_scenario *sc, struct spfkit_zone *zone);

/*
 * The two contexts every runner checks each case with, from the suite's
 * settings (the literal DEFAULT where no exp= gives a text): [0] strict,
 * without lookahead, [1] with it; `cfg` is left so. 0, or -1.
 */
int suite_contexts(struct spfkit_config *cfg, struct spfkit_ctx *ctx[2]);

/* Does `got` (and its explanation) satisfy the case? Writes why not into buf. */
int suite_case_ok(const struct suite_case *c, const struct spfkit_result *got, char *why,
		  size_t size);

/* Evaluate a case's MAIL FROM identity with spfkit_check(). */
int suite_evaluate(const struct spfkit_ctx *ctx, struct spfkit_resolver *r,
		   const struct suite_case *c, struct spfkit_eval **ev);

#endif
