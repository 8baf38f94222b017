/*
 * The c-ares backend against dnsd's hostile answers (issue 7): each
 * misbehaviour a server, a middlebox or an attacker can show, over
 * 127.0.0.1, with the outcome the backend must give. Nothing may be
 * taken for an answer it is not: a mismatched id or question is
 * ignored until the timeout, a loop or a pointer trick is a TEMPFAIL,
 * TC is retried over TCP, and 200 randomly corrupted answers end in a
 * well-formed outcome each (ASan and UBSan watch the reader).
 * Timeouts are 100 ms, one try: every case ends within a second.
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
#include <spfkit/resolver.h>
#include <spfkit/zone.h>

#include "dnsd.h"
#include "live.h"

#define TIMEOUT_MS 100
#define CORRUPT_NAMES 50u
#define CORRUPT_SEEDS 4u /* 200 corrupted answers in all */

/* What one callback saw, copied out (the answer is only valid inside it). */
struct got {
	int done;
	uint16_t type;
	enum spfkit_dns_status status;
	size_t count;
	size_t len[4];
	unsigned char data[4][64];
	char detail[96];
	int bad; /* the answer broke a promise of struct spfkit_dns_answer */
};

static const char spf[] = "v=spf1 ip4:192.0.2.0/24 -all";

static void add(struct spfkit_zone *z, const char *name, uint16_t type, const void *data,
		size_t len)
{
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), type, 300, data, len, 0), 0);
}

static struct spfkit_zone *make_zone(void)
{
	struct spfkit_zone *z = NULL;
	unsigned char a[4] = { 192, 0, 2, 1 };
	char name[32];
	unsigned i;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	add(z, "a.example", SPFKIT_RR_A, a, 4);
	/* The null-text answer: an empty TXT beside an SPF record. */
	add(z, "txt.example", SPFKIT_RR_TXT, "", 0);
	add(z, "txt.example", SPFKIT_RR_TXT, "v=spf1 -all", 11);
	for (i = 0; i < CORRUPT_NAMES; i++) {
		snprintf(name, sizeof(name), "c%u.example", i);
		add(z, name, SPFKIT_RR_TXT, spf, sizeof(spf) - 1);
		add(z, name, SPFKIT_RR_TXT, "unrelated text", 14);
		a[3] = (unsigned char)i;
		add(z, name, SPFKIT_RR_A, a, 4);
		a[3] = (unsigned char)(i + 100);
		add(z, name, SPFKIT_RR_A, a, 4);
	}
	return z;
}

static int setup(void **state)
{
	struct spfkit_cares_options co;
	spfkit_cares_options_init(&co);
	co.timeout_ms = TIMEOUT_MS;
	co.tries = 1;
	return live_fx_setup(state, make_zone(), &co);
}

/* The promises of include/spfkit/resolver.h, checked on every answer. */
static int answer_broken(const struct spfkit_dns_answer *a, uint16_t type)
{
	size_t i;

	if ((a->status == SPFKIT_DNS_OK) != (a->count > 0))
		return 1;
	if (a->status == SPFKIT_DNS_TEMPFAIL && a->detail == NULL)
		return 1;
	for (i = 0; i < a->count; i++) {
		if (a->rrs[i].type != type || a->rrs[i].data == NULL)
			return 1;
		if (type == SPFKIT_RR_A && a->rrs[i].len != 4)
			return 1;
	}
	return 0;
}

static void on_answer(void *arg, const struct spfkit_dns_answer *a)
{
	struct got *g = arg;
	size_t i;

	g->done = 1;
	g->status = a->status;
	g->count = a->count;
	g->bad = answer_broken(a, g->type);
	for (i = 0; i < a->count && i < 4 && !g->bad; i++) {
		g->len[i] = a->rrs[i].len;
		memcpy(g->data[i], a->rrs[i].data, a->rrs[i].len < 64 ? a->rrs[i].len : 64);
	}
	if (a->detail != NULL)
		snprintf(g->detail, sizeof(g->detail), "%s", a->detail);
}

static void submit(struct live_fx *f, const char *name, uint16_t type, struct got *g)
{
	memset(g, 0, sizeof(*g));
	g->type = type;
	assert_int_equal(spfkit_resolver_submit(f->r, name, strlen(name), type, on_answer, g, NULL),
			 0);
}

/* Wait until all n have their callback; bounded (a few timeouts at most). */
static void wait_all(struct live_fx *f, struct got *g, size_t n)
{
	size_t i, left = n;
	int rounds;

	for (rounds = 0; rounds < 50 && left > 0; rounds++) {
		assert_true(spfkit_resolver_wait(f->r, 100) >= 0);
		for (i = 0, left = 0; i < n; i++)
			left += !g[i].done;
	}
	if (left > 0)
		fail_msg("%zu of %zu questions got no callback within 5 s", left, n);
}

static struct got *ask(struct live_fx *f, const char *name, uint16_t type, enum dnsd_action act)
{
	struct got *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	assert_int_equal(dnsd_fault(f->d, name, 0, act), 0);
	submit(f, name, type, g);
	wait_all(f, g, 1);
	if (g->bad)
		fail_msg("%s: the answer broke the resolver's promises", dnsd_action_name(act));
	return g;
}

static void want(const struct got *g, enum dnsd_action act, enum spfkit_dns_status st,
		 const char *detail)
{
	if (g->status != st)
		fail_msg("%s: got status %d (%s), want %d", dnsd_action_name(act), (int)g->status,
			 g->detail, (int)st);
	if (detail != NULL && strncmp(g->detail, detail, strlen(detail)) != 0)
		fail_msg("%s: got detail '%s', want '%s...'", dnsd_action_name(act), g->detail,
			 detail);
}

/* ---- empty TXT forms (issue 7 item 2) --------------------------------------- */

static void want_null_text(const struct got *g, enum dnsd_action act)
{
	want(g, act, SPFKIT_DNS_OK, NULL);
	assert_int_equal(g->count, 2);
	assert_int_equal(g->len[0], 0);
	assert_int_equal(g->len[1], 11);
	assert_memory_equal(g->data[1], "v=spf1 -all", 11);
}

/* RDLENGTH 0: a TXT with no strings, kept as an empty record; the answer stands. */
static void txt_no_strings(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "txt.example", SPFKIT_RR_TXT, DNSD_TXT_NO_STRINGS);

	want_null_text(g, DNSD_TXT_NO_STRINGS);
	free(g);
}

static void txt_empty_strings(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "txt.example", SPFKIT_RR_TXT, DNSD_TXT_EMPTY_STRINGS);

	want_null_text(g, DNSD_TXT_EMPTY_STRINGS);
	free(g);
}

/* ---- answers that must not be taken ------------------------------------------- */

/* c-ares matches the id and the question (RFC 5452 §4.3), so both are dropped: a timeout. */
static void mismatch_ignored_until_timeout(void **state)
{
	static const enum dnsd_action acts[] = { DNSD_MAL_BAD_ID, DNSD_MAL_WRONG_QUESTION };
	struct live_fx *f = *state;
	size_t i;

	for (i = 0; i < 2; i++) {
		struct got *g = ask(f, "a.example", SPFKIT_RR_A, acts[i]);

		want(g, acts[i], SPFKIT_DNS_TEMPFAIL, "timeout");
		assert_int_equal(g->count, 0);
		free(g);
	}
}

static void cname_loop_and_chain(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "a.example", SPFKIT_RR_A, DNSD_MAL_CNAME_LOOP);

	want(g, DNSD_MAL_CNAME_LOOP, SPFKIT_DNS_TEMPFAIL, "CNAME loop");
	free(g);
	g = ask(f, "a.example", SPFKIT_RR_A, DNSD_MAL_CNAME_CHAIN);
	want(g, DNSD_MAL_CNAME_CHAIN, SPFKIT_DNS_TEMPFAIL, "CNAME chain too long");
	free(g);
}

/* RFC 1035 §4.1.4: a pointer names a prior occurrence; anything else is malformed. */
static void compression_tricks(void **state)
{
	static const enum dnsd_action acts[] = { DNSD_MAL_LOOP, DNSD_MAL_PTR_FORWARD,
						 DNSD_MAL_PTR_LOOP2, DNSD_MAL_PTR_BEYOND };
	struct live_fx *f = *state;
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		struct got *g = ask(f, "a.example", SPFKIT_RR_A, acts[i]);

		want(g, acts[i], SPFKIT_DNS_TEMPFAIL,
		     "malformed reply: compression pointer does not point backwards");
		free(g);
	}
}

/* TC over UDP: c-ares asks again over TCP, where dnsd answers whole. */
static void tc_retried_over_tcp(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "a.example", SPFKIT_RR_A, DNSD_TRUNCATE);
	struct dnsd_counters c;

	want(g, DNSD_TRUNCATE, SPFKIT_DNS_OK, NULL);
	assert_int_equal(g->count, 1);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.udp_queries, 1);
	assert_int_equal(c.tcp_queries, 1);
	free(g);
}

/* TC over TCP too: nothing complete to read, a TEMPFAIL (RFC 2181 §9). */
static void tc_over_tcp_too(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "a.example", SPFKIT_RR_A, DNSD_MAL_TC_ALWAYS);
	struct dnsd_counters c;

	want(g, DNSD_MAL_TC_ALWAYS, SPFKIT_DNS_TEMPFAIL, "truncated reply");
	dnsd_counters(f->d, &c);
	assert_int_equal(c.tcp_queries, 1);
	free(g);
}

/* A datagram cut inside its last record, TC=0: malformed, not a shorter answer. */
static void udp_datagram_cut_short(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "c1.example", SPFKIT_RR_TXT, DNSD_MAL_CUT);

	want(g, DNSD_MAL_CUT, SPFKIT_DNS_TEMPFAIL, "malformed reply: ");
	free(g);
}

/* Under 12 bytes, or noise after the id: c-ares cannot match it to the question. */
static void short_and_garbage(void **state)
{
	static const enum dnsd_action acts[] = { DNSD_MAL_SHORT, DNSD_MAL_GARBAGE };
	struct live_fx *f = *state;
	size_t i;

	for (i = 0; i < 2; i++) {
		struct got *g = ask(f, "a.example", SPFKIT_RR_A, acts[i]);

		want(g, acts[i], SPFKIT_DNS_TEMPFAIL, "timeout");
		free(g);
	}
}

static void rdlength_past_end(void **state)
{
	struct live_fx *f = *state;
	struct got *g = ask(f, "a.example", SPFKIT_RR_A, DNSD_MAL_PAST_END);

	want(g, DNSD_MAL_PAST_END, SPFKIT_DNS_TEMPFAIL, "malformed reply: RDATA runs past the end");
	free(g);
}

/* ---- random corruption ---------------------------------------------------------- */

struct tally {
	unsigned ok, nodata, nxdomain, malformed, timeout, other;
};

static void count_outcome(struct tally *t, const struct got *g)
{
	if (g->status == SPFKIT_DNS_OK)
		t->ok++;
	else if (g->status == SPFKIT_DNS_NODATA)
		t->nodata++;
	else if (g->status == SPFKIT_DNS_NXDOMAIN)
		t->nxdomain++;
	else if (strncmp(g->detail, "malformed reply", 15) == 0)
		t->malformed++;
	else if (strcmp(g->detail, "timeout") == 0)
		t->timeout++;
	else
		t->other++; /* rcodes: "unexpected rcode", c-ares' SERVFAIL/REFUSED text */
}

/* One seed: every name asked at once (TXT for even, A for odd), all corrupted. */
static void corrupt_round(struct live_fx *f, uint32_t seed, struct got *g, struct tally *t)
{
	char name[32];
	unsigned i;

	dnsd_set_seed(f->d, seed);
	for (i = 0; i < CORRUPT_NAMES; i++) {
		snprintf(name, sizeof(name), "c%u.example", i);
		submit(f, name, (i & 1) ? SPFKIT_RR_A : SPFKIT_RR_TXT, &g[i]);
	}
	wait_all(f, g, CORRUPT_NAMES);
	for (i = 0; i < CORRUPT_NAMES; i++) {
		if (g[i].bad)
			fail_msg("seed %u, c%u.example: the answer broke the resolver's promises",
				 (unsigned)seed, i);
		count_outcome(t, &g[i]);
	}
}

static void random_corruption(void **state)
{
	struct live_fx *f = *state;
	struct got *g = calloc(CORRUPT_NAMES, sizeof(*g));
	struct tally t;
	char name[32];
	uint32_t seed;
	unsigned i;

	assert_non_null(g);
	memset(&t, 0, sizeof(t));
	for (i = 0; i < CORRUPT_NAMES; i++) {
		snprintf(name, sizeof(name), "c%u.example", i);
		assert_int_equal(dnsd_fault(f->d, name, 0, DNSD_MAL_CORRUPT), 0);
	}
	for (seed = 1; seed <= CORRUPT_SEEDS; seed++)
		corrupt_round(f, seed, g, &t);
	printf("# %u corrupted answers: %u ok, %u nodata, %u nxdomain, %u malformed, %u timeout, "
	       "%u other tempfail\n",
	       CORRUPT_NAMES * CORRUPT_SEEDS, t.ok, t.nodata, t.nxdomain, t.malformed, t.timeout,
	       t.other);
	/* The reader must have been reached and must have refused some. */
	assert_true(t.malformed > 0);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(txt_no_strings, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(txt_empty_strings, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(mismatch_ignored_until_timeout, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(cname_loop_and_chain, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(compression_tricks, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(tc_retried_over_tcp, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(tc_over_tcp_too, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(udp_datagram_cut_short, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(short_and_garbage, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(rdlength_past_end, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(random_corruption, setup, live_fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
