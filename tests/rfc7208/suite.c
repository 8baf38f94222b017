/* Reading rfc7208-tests.yml with libyaml's document API. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);

		if (k != NULL && k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static const char *scalar(yaml_node_t *n, size_t *len)
{
	if (n == NULL || n->type != YAML_SCALAR_NODE)
		return NULL;
	if (len != NULL)
		*len = n->data.scalar.length;
	return (const char *)n->data.scalar.value;
}

static int parse_results(yaml_document_t *doc, yaml_node_t *n, struct suite_case *c)
{
	yaml_node_item_t *it;
	const char *s;

	if (n != NULL && n->type == YAML_SEQUENCE_NODE) {
		for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
			s = scalar(yaml_document_get_node(doc, *it), NULL);
			if (s == NULL || c->nresults == SUITE_MAX_RESULTS)
				return -1;
			c->results[c->nresults++] = spfkit_result_from_name(s, strlen(s));
		}
		return 0;
	}
	s = scalar(n, NULL);
	if (s == NULL)
		return -1;
	c->results[c->nresults++] = spfkit_result_from_name(s, strlen(s));
	return c->results[0] < 0 ? -1 : 0;
}

static int load_case(yaml_document_t *doc, yaml_node_t *key, yaml_node_t *val, struct suite_case *c)
{
	memset(c, 0, sizeof(*c));
	c->name = scalar(key, NULL);
	c->spec = scalar(map_get(doc, val, "spec"), NULL);
	c->helo = scalar(map_get(doc, val, "helo"), &c->helo_len);
	c->host = scalar(map_get(doc, val, "host"), NULL);
	c->mailfrom = scalar(map_get(doc, val, "mailfrom"), &c->mailfrom_len);
	c->explanation = scalar(map_get(doc, val, "explanation"), NULL);
	if (c->name == NULL || c->helo == NULL || c->host == NULL || c->mailfrom == NULL)
		return -1;
	return parse_results(doc, map_get(doc, val, "result"), c);
}

static int load_scenario(yaml_document_t *doc, struct suite_scenario *sc)
{
	yaml_node_t *root = yaml_document_get_root_node(doc), *tests;
	yaml_node_pair_t *p;
	size_t n;

	sc->doc = doc;
	sc->description = scalar(map_get(doc, root, "description"), NULL);
	sc->zonedata = map_get(doc, root, "zonedata");
	tests = map_get(doc, root, "tests");
	if (tests == NULL || tests->type != YAML_MAPPING_NODE)
		return -1;
	n = (size_t)(tests->data.mapping.pairs.top - tests->data.mapping.pairs.start);
	sc->cases = calloc(n, sizeof(*sc->cases));
	if (sc->cases == NULL)
		return -1;
	for (p = tests->data.mapping.pairs.start; p < tests->data.mapping.pairs.top; p++) {
		if (load_case(doc, yaml_document_get_node(doc, p->key),
			      yaml_document_get_node(doc, p->value), &sc->cases[sc->ncases]) != 0) {
			fprintf(stderr, "suite: bad test case in '%s'\n",
				sc->description ? sc->description : "?");
			return -1;
		}
		sc->ncases++;
	}
	return 0;
}

const char *suite_name(const char *path, int *len)
{
	const char *base = strrchr(path, '/');

	base = base != NULL ? base + 1 : path;
	*len = (int)strcspn(base, "-.");
	return base;
}

int suite_load(struct suite *s, const char *path)
{
	yaml_parser_t parser;
	FILE *f = fopen(path, "rb");
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (f == NULL) {
		perror(path);
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	while (s->ndocs < sizeof(s->docs) / sizeof(s->docs[0])) {
		yaml_document_t *doc = &s->docs[s->ndocs];

		if (!yaml_parser_load(&parser, doc)) {
			fprintf(stderr, "%s:%zu: YAML error: %s\n", path,
				parser.problem_mark.line + 1, parser.problem ? parser.problem : "?");
			rc = -1;
			break;
		}
		if (yaml_document_get_root_node(doc) == NULL) {
			yaml_document_delete(doc);
			break;
		}
		s->ndocs++;
		if (load_scenario(doc, &s->scenarios[s->nscenarios]) != 0) {
			rc = -1;
			break;
		}
		s->nscenarios++;
	}
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

void suite_free(struct suite *s)
{
	size_t i;

	for (i = 0; i < s->nscenarios; i++)
		free(s->scenarios[i].cases);
	for (i = 0; i < s->ndocs; i++)
		yaml_document_delete(&s->docs[i]);
}

/* "v=spf1 ..." or [ "part", "part" ] joined (RFC 7208 §3.3). */
static int join_strings(yaml_document_t *doc, yaml_node_t *v, char *buf, size_t size, size_t *len)
{
	yaml_node_item_t *it;
	const char *s;
	size_t n;

	*len = 0;
	if (v->type == YAML_SCALAR_NODE) {
		s = scalar(v, &n);
		if (n > size)
			return -1;
		memcpy(buf, s, n);
		*len = n;
		return 0;
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return -1;
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		s = scalar(yaml_document_get_node(doc, *it), &n);
		if (s == NULL || n > size - *len)
			return -1;
		memcpy(buf + *len, s, n);
		*len += n;
	}
	return 0;
}

static int add_address(struct spfkit_zone *z, const char *name, uint16_t type, const char *text)
{
	unsigned char addr[16];
	int af = type == SPFKIT_RR_A ? AF_INET : AF_INET6;

	if (inet_pton(af, text, addr) != 1)
		return -1;
	return spfkit_zone_add(z, name, strlen(name), type, 300, addr,
			       type == SPFKIT_RR_A ? 4 : 16, 0);
}

static int add_mx(yaml_document_t *doc, struct spfkit_zone *z, const char *name, yaml_node_t *v)
{
	yaml_node_item_t *it;
	const char *pref, *host;
	size_t hlen;

	if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top - v->data.sequence.items.start != 2)
		return -1;
	it = v->data.sequence.items.start;
	pref = scalar(yaml_document_get_node(doc, it[0]), NULL);
	host = scalar(yaml_document_get_node(doc, it[1]), &hlen);
	if (pref == NULL || host == NULL)
		return -1;
	return spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_MX, 300, host, hlen,
			       (uint16_t)strtoul(pref, NULL, 10));
}

static int add_entry(yaml_document_t *doc, struct spfkit_zone *z, const char *name,
		     const char *type, yaml_node_t *v, int spf_as_txt)
{
	static char buf[70000];
	const char *s = scalar(v, NULL);
	size_t len;
	int rc;

	if (strcmp(type, "A") == 0 && s)
		return add_address(z, name, SPFKIT_RR_A, s);
	if (strcmp(type, "AAAA") == 0 && s)
		return add_address(z, name, SPFKIT_RR_AAAA, s);
	if (strcmp(type, "MX") == 0)
		return add_mx(doc, z, name, v);
	if ((strcmp(type, "PTR") == 0 || strcmp(type, "CNAME") == 0) && s)
		return spfkit_zone_add(z, name, strlen(name),
				       type[0] == 'P' ? SPFKIT_RR_PTR : SPFKIT_RR_CNAME, 300, s,
				       strlen(s), 0);
	if (strcmp(type, "TXT") == 0 && s != NULL && strcmp(s, "NONE") == 0)
		return spfkit_zone_add_empty(z, name, strlen(name));
	if (strcmp(type, "TXT") != 0 && strcmp(type, "SPF") != 0)
		return -1;
	if (join_strings(doc, v, buf, sizeof(buf), &len) != 0)
		return -1;
	rc = spfkit_zone_add(z, name, strlen(name), type[0] == 'T' ? SPFKIT_RR_TXT : SPFKIT_RR_SPF,
			     300, buf, len, 0);
	if (rc == 0 && type[0] == 'S' && spf_as_txt)
		rc = spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_TXT, 300, buf, len, 0);
	return rc;
}

/* Does this name list TXT entries of its own? Then SPF entries are not copied. */
static int has_txt(yaml_document_t *doc, yaml_node_t *entries)
{
	yaml_node_item_t *it;

	for (it = entries->data.sequence.items.start; it < entries->data.sequence.items.top; it++)
		if (map_get(doc, yaml_document_get_node(doc, *it), "TXT") != NULL)
			return 1;
	return 0;
}

static int fill_name(yaml_document_t *doc, struct spfkit_zone *z, const char *name,
		     yaml_node_t *entries)
{
	yaml_node_item_t *it;
	int spf_as_txt;

	if (entries->type != YAML_SEQUENCE_NODE)
		return -1;
	spf_as_txt = !has_txt(doc, entries);
	if (entries->data.sequence.items.top == entries->data.sequence.items.start)
		return spfkit_zone_add_empty(z, name, strlen(name));
	for (it = entries->data.sequence.items.start; it < entries->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *s = scalar(e, NULL);
		yaml_node_pair_t *p;

		if (s != NULL && strcmp(s, "TIMEOUT") == 0) {
			if (spfkit_zone_add_timeout(z, name, strlen(name)) != 0)
				return -1;
			continue;
		}
		if (e->type != YAML_MAPPING_NODE)
			return -1;
		p = e->data.mapping.pairs.start;
		if (add_entry(doc, z, name, scalar(yaml_document_get_node(doc, p->key), NULL),
			      yaml_document_get_node(doc, p->value), spf_as_txt) != 0) {
			fprintf(stderr, "suite: cannot load zone entry for %s\n", name);
			return -1;
		}
	}
	return 0;
}

int suite_fill_zone(const struct suite_scenario *sc, struct spfkit_zone *zone)
{
	yaml_node_pair_t *p;

	if (sc->zonedata == NULL)
		return 0;
	for (p = sc->zonedata->data.mapping.pairs.start; p < sc->zonedata->data.mapping.pairs.top;
	     p++) {
		const char *name = scalar(yaml_document_get_node(sc->doc, p->key), NULL);

		if (name == NULL ||
		    fill_name(sc->doc, zone, name, yaml_document_get_node(sc->doc, p->value)) != 0)
			return -1;
	}
	return 0;
}

int suite_contexts(struct spfkit_config *cfg, struct spfkit_ctx *ctx[2])
{
	spfkit_config_init(cfg);
	/* The suite expects the literal DEFAULT where no exp= gives a text. */
	cfg->default_explanation = "DEFAULT";
	cfg->no_lookahead = 1;
	if (spfkit_ctx_new(cfg, &ctx[0]) != 0)
		return -1;
	cfg->no_lookahead = 0;
	return spfkit_ctx_new(cfg, &ctx[1]) != 0 ? -1 : 0;
}

int suite_case_ok(const struct suite_case *c, const struct spfkit_result *got, char *why,
		  size_t size)
{
	size_t i;
	int result_ok = 0;

	for (i = 0; i < c->nresults; i++)
		if (c->results[i] == (int)got->code)
			result_ok = 1;
	if (!result_ok) {
		snprintf(why, size, "got %s, want %s%s (problem: %s)", spfkit_result_name(got->code),
			 spfkit_result_name(c->results[0]), c->nresults > 1 ? " or another" : "",
			 got->problem ? got->problem : "-");
		return 0;
	}
	if (c->explanation != NULL &&
	    (got->explanation == NULL || strcmp(got->explanation, c->explanation) != 0)) {
		snprintf(why, size, "explanation: got \"%s\", want \"%s\"",
			 got->explanation ? got->explanation : "(none)", c->explanation);
		return 0;
	}
	return 1;
}

int suite_evaluate(const struct spfkit_ctx *ctx, struct spfkit_resolver *r,
		   const struct suite_case *c, struct spfkit_eval **ev)
{
	struct spfkit_request req;

	spfkit_request_init(&req);
	if (spfkit_ip_parse(c->host, strlen(c->host), &req.ip) != 0)
		return SPFKIT_EINVAL;
	req.sender = c->mailfrom;
	req.sender_len = c->mailfrom_len;
	req.helo = c->helo;
	req.helo_len = c->helo_len;
	req.now = 1700000000; /* %{t}: fixed, so results never depend on the clock */
	return spfkit_check(ctx, r, &req, ev);
}
