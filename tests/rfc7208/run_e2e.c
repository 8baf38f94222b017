/*
 * The RFC 7208 test suite end to end: each scenario's zone is served for
 * real by tests/dnsd on 127.0.0.1 (a port it picks), and every case is
 * evaluated through the c-ares backend, strict and with lookahead. A
 * case passes when both results are accepted by the suite (explanation
 * included). Short c-ares timeouts keep the TIMEOUT cases fast.
 * Prints "N passed, N failed"; exit status 0 only when all passed.
 */
#include <stdio.h>
#include <string.h>

#include <spfkit/cares.h>

#include "dnsd.h"
#include "live.h"
#include "suite.h"

#define E2E_TIMEOUT_MS 150

struct counts {
	unsigned passed, failed;
	unsigned long long queries[2];
};

static void run_case(struct spfkit_ctx *const ctx[2], struct spfkit_resolver *r, struct dnsd *d,
		     const struct suite_scenario *sc, const struct suite_case *c, struct counts *n)
{
	static const char *const mode[2] = {"strict", "lookahead"};
	char why[1024] = "";
	int i, ok = 1;

	for (i = 0; i < 2 && ok; i++) {
		struct spfkit_eval *ev = NULL;
		uint64_t before = dnsd_queries(d);
		int rc = suite_evaluate(ctx[i], r, c, &ev);

		if (rc != 0)
			snprintf(why, sizeof(why), "spfkit_check: %s", spfkit_strerror(rc));
		ok = rc == 0 && suite_case_ok(c, spfkit_eval_result(ev), why, sizeof(why));
		n->queries[i] += dnsd_queries(d) - before;
		if (!ok)
			printf("FAIL %s [%s] (%s): %s\n", c->name, mode[i], sc->description, why);
		spfkit_eval_free(ev);
	}
	if (ok)
		n->passed++;
	else
		n->failed++;
}

/* Is v an entry "TXT: [ ]" or "SPF: [ ]", a record with no strings at all? */
static int no_strings(yaml_document_t *doc, yaml_node_t *v)
{
	yaml_node_pair_t *p;
	yaml_node_t *k, *val;

	if (v == NULL || v->type != YAML_MAPPING_NODE)
		return 0;
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(doc, p->key);
		val = yaml_document_get_node(doc, p->value);
		if (k == NULL || val == NULL || k->type != YAML_SCALAR_NODE ||
		    val->type != YAML_SEQUENCE_NODE ||
		    val->data.sequence.items.top != val->data.sequence.items.start)
			continue;
		if (strcmp((const char *)k->data.scalar.value, "TXT") == 0 ||
		    strcmp((const char *)k->data.scalar.value, "SPF") == 0)
			return 1;
	}
	return 0;
}

/*
 * The zone keeps a TXT as its joined text, so `[ ]` (no strings) and
 * `""` (one empty string) look alike there; on the wire they differ
 * (RDLENGTH 0 against one zero byte). Names holding a `[ ]` entry get
 * dnsd's txt-no-strings rule, so they are sent as other servers send
 * them (the null-text case, issue 7 item 2). 0, or -1 with a message.
 */
static int mark_no_strings(struct dnsd *d, const struct suite_scenario *sc)
{
	yaml_node_pair_t *p;
	yaml_node_item_t *it;
	yaml_node_t *name, *entries;

	if (sc->zonedata == NULL || sc->zonedata->type != YAML_MAPPING_NODE)
		return 0;
	for (p = sc->zonedata->data.mapping.pairs.start; p < sc->zonedata->data.mapping.pairs.top;
	     p++) {
		name = yaml_document_get_node(sc->doc, p->key);
		entries = yaml_document_get_node(sc->doc, p->value);
		if (name == NULL || entries == NULL || name->type != YAML_SCALAR_NODE ||
		    entries->type != YAML_SEQUENCE_NODE)
			continue;
		for (it = entries->data.sequence.items.start; it < entries->data.sequence.items.top;
		     it++) {
			if (!no_strings(sc->doc, yaml_document_get_node(sc->doc, *it)))
				continue;
			if (dnsd_fault(d, (const char *)name->data.scalar.value, 0,
				       DNSD_TXT_NO_STRINGS) != 0) {
				printf("FAIL scenario '%s': cannot set a dnsd rule\n", sc->description);
				return -1;
			}
			break;
		}
	}
	return 0;
}

static void run_scenario(struct spfkit_ctx *const ctx[2], struct spfkit_resolver *r,
			 struct dnsd *d, const struct suite_scenario *sc, struct counts *n)
{
	struct spfkit_zone *zone = NULL;
	size_t i;

	if (spfkit_zone_new(NULL, &zone) != 0 || suite_fill_zone(sc, zone) != 0 ||
	    mark_no_strings(d, sc) != 0) {
		printf("FAIL scenario '%s': cannot build its zone\n", sc->description);
		n->failed += (unsigned)sc->ncases;
		dnsd_clear_faults(d);
		spfkit_zone_free(zone);
		return;
	}
	dnsd_set_zone(d, zone);
	for (i = 0; i < sc->ncases; i++)
		run_case(ctx, r, d, sc, &sc->cases[i], n);
	dnsd_set_zone(d, NULL);
	dnsd_clear_faults(d);
	spfkit_zone_free(zone);
}

int main(int argc, char **argv)
{
	static struct suite suite;
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx[2] = {NULL, NULL};
	struct spfkit_cares_options copt = {.size = sizeof(struct spfkit_cares_options), .timeout_ms = E2E_TIMEOUT_MS, .tries = 1};
	struct spfkit_resolver *r = NULL;
	struct dnsd *d = NULL;
	struct counts n;
	size_t i;
	int rc = 1;
	const char *name;
	int name_len;

	if (argc < 2) {
		fprintf(stderr, "usage: %s rfc7208-tests.yml\n", argv[0]);
		return 2;
	}
	memset(&n, 0, sizeof(n));
	if (suite_load(&suite, argv[1]) != 0)
		return 1;
	if (suite_contexts(&cfg, ctx) != 0 || live_dns_start(NULL, &copt, &d, &r) != 0)
		goto out;
	for (i = 0; i < suite.nscenarios; i++)
		run_scenario(ctx, r, d, &suite.scenarios[i], &n);
	name = suite_name(argv[1], &name_len);
	printf("%.*s end-to-end over c-ares and tests/dnsd on 127.0.0.1:%d: %u cases, "
	       "each strict (%llu queries) and with lookahead (%llu queries)\n",
	       name_len, name, dnsd_port(d), n.passed + n.failed, n.queries[0], n.queries[1]);
	printf("%u passed, %u failed\n", n.passed, n.failed);
	rc = n.failed == 0 && n.passed > 0 ? 0 : 1;
out:
	live_dns_stop(d, r);
	spfkit_ctx_free(ctx[0]);
	spfkit_ctx_free(ctx[1]);
	suite_free(&suite);
	return rc;
}
