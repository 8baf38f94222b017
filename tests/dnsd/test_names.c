/*
 * The resolver's name contract (include/spfkit/resolver.h, issue 8): a
 * question name is raw label bytes joined by '.', never presentation
 * text. A macro (RFC 7208 §7.3) that expands a local part holding '\',
 * '"', ';', '(' and a space must ask the same question of the zone
 * backend and of c-ares against tests/dnsd. (A non-ASCII local part
 * makes no name at all: RFC 8616 §4, tests/unit/test_idna.c.)
 *
 * The zone holds each name only in its exact-bytes form, and a decoy at
 * the name an escape-reading encoder would ask instead ("\046" read as a
 * '.' inside a label, "\c" as "c"): asking the decoy turns the result
 * into fail, and dnsd's query log must show the exact bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/cares.h>
#include <spfkit/eval.h>
#include <spfkit/resolver.h>
#include <spfkit/zone.h>

#include "dnsd.h"
#include "live.h"

/* The local part, and the names its expansion makes. */
#define LOCAL "a\\046b\\c\"d;e(f g"
#define SENDER LOCAL "@names.example"
#define HOST LOCAL ".host.example"
#define BAD LOCAL ".bad.example"
/* What reading the escapes would ask: "a" "." "b" "c" ... in one label. */
#define DECOY_LABEL "a.bc\"d;e(f g"
#define SPF "v=spf1 -exists:%{l}.bad.example a:%{l}.host.example -all"

/* An MX target with a '\\' and a '"' in its first label. */
#define MXT "m\\x\"y.example"

#define MAX_ASKED 16

/* The questions one backend was asked, in order. */
struct asked {
	size_t n;
	uint16_t type[MAX_ASKED];
	char name[MAX_ASKED][256];
};

/* A resolver that writes down each question, then hands it on. */
struct recorder {
	struct spfkit_resolver pub;
	struct spfkit_resolver *inner;
	struct asked *log;
};

static void note(struct asked *log, const char *name, size_t len, uint16_t type)
{
	assert_true(log->n < MAX_ASKED);
	assert_true(len < sizeof(log->name[0]));
	memcpy(log->name[log->n], name, len);
	log->name[log->n][len] = '\0';
	log->type[log->n] = type;
	log->n++;
}

static int rec_submit(void *impl, const char *name, size_t len, uint16_t type, spfkit_dns_cb *cb,
		      void *arg, uint64_t *handle)
{
	struct recorder *r = impl;

	note(r->log, name, len, type);
	return spfkit_resolver_submit(r->inner, name, len, type, cb, arg, handle);
}

static void rec_cancel(void *impl, uint64_t handle)
{
	struct recorder *r = impl;

	spfkit_resolver_cancel(r->inner, handle);
}

static int rec_wait(void *impl, int timeout_ms)
{
	struct recorder *r = impl;

	return spfkit_resolver_wait(r->inner, timeout_ms);
}

static void rec_destroy(void *impl)
{
	struct recorder *r = impl;

	spfkit_resolver_free(r->inner);
	free(r);
}

static const struct spfkit_resolver_ops rec_ops = { rec_submit, rec_cancel, rec_wait,
						    rec_destroy };

static struct spfkit_resolver *recorder_new(struct spfkit_resolver *inner, struct asked *log)
{
	struct recorder *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->pub.ops = &rec_ops;
	r->pub.impl = r;
	r->inner = inner;
	r->log = log;
	return &r->pub;
}

static void add(struct spfkit_zone *z, const char *name, uint16_t type, const void *data,
		size_t len)
{
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), type, 300, data, len, 0), 0);
}

static struct spfkit_zone *make_zone(void)
{
	static const unsigned char client[4] = { 192, 0, 2, 1 };
	static const unsigned char other[4] = { 192, 0, 2, 99 };
	struct spfkit_zone *z = NULL;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	add(z, "names.example", SPFKIT_RR_TXT, SPF, strlen(SPF));
	add(z, HOST, SPFKIT_RR_A, client, 4);
	/* decoys: the names an escape-reading encoder asks */
	add(z, DECOY_LABEL ".bad.example", SPFKIT_RR_A, other, 4);
	add(z, DECOY_LABEL ".host.example", SPFKIT_RR_A, other, 4);
	return z;
}

static enum spfkit_result_code check_as(struct spfkit_resolver *r, const char *sender)
{
	struct spfkit_ctx *ctx = NULL;
	struct spfkit_eval *ev = NULL;
	struct spfkit_request req;
	enum spfkit_result_code code;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = "helo.example";
	req.helo_len = strlen(req.helo);
	req.now = 1700000000;
	assert_int_equal(spfkit_ctx_new(NULL, &ctx), 0);
	assert_int_equal(spfkit_check(ctx, r, &req, &ev), 0);
	code = spfkit_eval_result(ev)->code;
	spfkit_eval_free(ev);
	spfkit_ctx_free(ctx);
	return code;
}

static enum spfkit_result_code check(struct spfkit_resolver *r)
{
	return check_as(r, SENDER);
}

static int has(const struct asked *log, const char *name, uint16_t type)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		if (log->type[i] == type && strcmp(log->name[i], name) == 0)
			return 1;
	return 0;
}

/* Every question of a was asked in b (order aside: lookahead may differ). */
static void all_in(const struct asked *a, const struct asked *b, const char *what)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (!has(b, a->name[i], a->type[i]))
			fail_msg("%s: '%s' type %u not asked", what, a->name[i], a->type[i]);
}

static void same_question_offline_and_live(void **state)
{
	struct spfkit_cares_options co = {.size = sizeof(struct spfkit_cares_options), .timeout_ms = 500, .tries = 2};
	struct spfkit_zone *zone = make_zone();
	struct spfkit_resolver *zr = NULL, *cr = NULL;
	struct dnsd_query q[MAX_ASKED];
	struct asked offline = { 0 }, live = { 0 }, served = { 0 };
	struct dnsd *d = NULL;
	size_t i, n;

	(void)state;
	/* offline: the zone backend */
	assert_int_equal(spfkit_zone_resolver(zone, &zr), 0);
	zr = recorder_new(zr, &offline);
	assert_int_equal(check(zr), SPFKIT_RESULT_PASS);
	spfkit_resolver_free(zr);
	assert_true(has(&offline, BAD, SPFKIT_RR_A));
	assert_true(has(&offline, HOST, SPFKIT_RR_A));

	/* live: c-ares asking dnsd, which serves the same zone */
	assert_int_equal(live_dns_start(zone, &co, &d, &cr), 0);
	cr = recorder_new(cr, &live);
	assert_int_equal(check(cr), SPFKIT_RESULT_PASS);
	spfkit_resolver_free(cr);

	/* dnsd's log: the label bytes that arrived on the wire */
	n = dnsd_query_log(d, q, MAX_ASKED);
	for (i = 0; i < n; i++)
		note(&served, q[i].name, strlen(q[i].name), q[i].type);
	dnsd_stop(d);
	spfkit_zone_free(zone);

	all_in(&offline, &live, "c-ares");
	all_in(&live, &offline, "zone");
	all_in(&live, &served, "dnsd");
	all_in(&served, &live, "submit");
	assert_false(has(&served, DECOY_LABEL ".bad.example", SPFKIT_RR_A));
	assert_false(has(&served, DECOY_LABEL ".host.example", SPFKIT_RR_A));
}

/*
 * An MX target holding a '\\' comes back from c-ares in the form a
 * question takes (resolver.h), so the evaluator asks the A question of
 * the same bytes the zone holds, not of "m\\092x..." or "mx...".
 */
static void mx_target_asked_back_unchanged(void **state)
{
	static const unsigned char client[4] = { 192, 0, 2, 1 };
	static const unsigned char other[4] = { 192, 0, 2, 99 };
	struct spfkit_cares_options co = {.size = sizeof(struct spfkit_cares_options), .timeout_ms = 500, .tries = 2};
	struct spfkit_zone *zone = NULL;
	struct spfkit_resolver *cr = NULL;
	struct asked live = { 0 };
	struct dnsd *d = NULL;

	(void)state;
	assert_int_equal(spfkit_zone_new(NULL, &zone), 0);
	add(zone, "mx.names.example", SPFKIT_RR_TXT, "v=spf1 mx -all", 14);
	assert_int_equal(spfkit_zone_add(zone, "mx.names.example", 16, SPFKIT_RR_MX, 300,
					 MXT, strlen(MXT), 10), 0);
	add(zone, MXT, SPFKIT_RR_A, client, 4);
	add(zone, "m\\092x\"y.example", SPFKIT_RR_A, other, 4); /* the presentation form */
	assert_int_equal(live_dns_start(zone, &co, &d, &cr), 0);
	cr = recorder_new(cr, &live);
	assert_int_equal(check_as(cr, "u@mx.names.example"), SPFKIT_RESULT_PASS);
	spfkit_resolver_free(cr);
	dnsd_stop(d);
	spfkit_zone_free(zone);
	assert_true(has(&live, MXT, SPFKIT_RR_A));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_question_offline_and_live),
		cmocka_unit_test(mx_target_asked_back_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
