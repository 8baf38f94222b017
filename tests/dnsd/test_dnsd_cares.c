/*
 * dnsd against its real client: spfkit's c-ares backend
 * (<spfkit/cares.h>) asking tests/dnsd over 127.0.0.1. Each outcome the
 * RFC 7208 suite and the benchmarks rely on, end to end: records,
 * NXDOMAIN versus NODATA with the negative TTL, TCP fallback after
 * truncation, 60 KB over TCP, SERVFAIL / silence / malformed answers as
 * TEMPFAIL, and the query counters seeing what the client sent.
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

/* What one callback saw, copied out (the answer is only valid inside it). */
struct got {
	int done;
	enum spfkit_dns_status status;
	uint32_t ttl;
	size_t count;
	unsigned char first[65536];
	size_t first_len;
	char detail[64];
};

static char long_txt[600];
static char huge_txt[60000];

static void add(struct spfkit_zone *z, const char *name, uint16_t type, const void *data,
		size_t len)
{
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), type, 3600, data, len, 0), 0);
}

static struct spfkit_zone *make_zone(void)
{
	struct spfkit_zone *z = NULL;
	unsigned char a[4] = { 192, 0, 2, 1 };
	int i;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	add(z, "a.example", SPFKIT_RR_A, a, 4);
	add(z, "macro%percent  space%20url-space.example", SPFKIT_RR_TXT, "v=spf1 -all", 11);
	for (i = 0; i < (int)sizeof(long_txt); i++)
		long_txt[i] = (char)('a' + i % 26);
	add(z, "long.example", SPFKIT_RR_TXT, long_txt, sizeof(long_txt));
	for (i = 0; i < (int)sizeof(huge_txt); i++)
		huge_txt[i] = (char)('A' + i % 26);
	add(z, "huge.example", SPFKIT_RR_TXT, huge_txt, sizeof(huge_txt));
	for (i = 0; i < 40; i++) {
		a[2] = 3;
		a[3] = (unsigned char)i;
		add(z, "big.example", SPFKIT_RR_A, a, 4);
	}
	return z;
}

/* Short timeouts so the silent cases end fast; 512 bytes so big.example truncates. */
static int setup(void **state)
{
	struct spfkit_cares_options co;
	spfkit_cares_options_init(&co);
	co.timeout_ms = 150;
	co.tries = 1;
	co.edns_udp_size = 512;
	return live_fx_setup(state, make_zone(), &co);
}

static void on_answer(void *arg, const struct spfkit_dns_answer *a)
{
	struct got *g = arg;

	g->done = 1;
	g->status = a->status;
	g->ttl = a->ttl;
	g->count = a->count;
	if (a->count > 0 && a->rrs[0].len <= sizeof(g->first)) {
		memcpy(g->first, a->rrs[0].data, a->rrs[0].len);
		g->first_len = a->rrs[0].len;
	}
	if (a->detail != NULL)
		snprintf(g->detail, sizeof(g->detail), "%s", a->detail);
}

static struct got *resolve(struct live_fx *f, const char *name, uint16_t type)
{
	struct got *g = calloc(1, sizeof(*g));
	uint64_t h = 0;
	int i;

	assert_non_null(g);
	assert_int_equal(spfkit_resolver_submit(f->r, name, strlen(name), type, on_answer, g, &h), 0);
	for (i = 0; i < 100 && !g->done; i++)
		assert_true(spfkit_resolver_wait(f->r, 100) >= 0);
	if (!g->done)
		fail_msg("%s: no callback within 10 s", name);
	return g;
}

static void want_status(const struct got *g, const char *name, enum spfkit_dns_status want)
{
	if (g->status != want)
		fail_msg("%s: got status %d (%s), want %d", name, (int)g->status, g->detail,
			 (int)want);
}

static void a_records(void **state)
{
	struct live_fx *f = *state;
	struct got *g = resolve(f, "a.example", SPFKIT_RR_A);

	want_status(g, "a.example", SPFKIT_DNS_OK);
	assert_int_equal(g->count, 1);
	assert_memory_equal(g->first, "\xc0\x00\x02\x01", 4);
	free(g);
}

/* A name of the RFC 7208 suite with spaces in a label, through c-ares and back. */
static void name_with_spaces(void **state)
{
	struct live_fx *f = *state;
	struct got *g = resolve(f, "macro%percent  space%20url-space.example", SPFKIT_RR_TXT);

	want_status(g, "macro%percent  space", SPFKIT_DNS_OK);
	assert_int_equal(g->first_len, 11);
	assert_memory_equal(g->first, "v=spf1 -all", 11);
	free(g);
}

static void long_txt_joined(void **state)
{
	struct live_fx *f = *state;
	struct got *g = resolve(f, "long.example", SPFKIT_RR_TXT);

	want_status(g, "long.example", SPFKIT_DNS_OK);
	assert_int_equal(g->first_len, sizeof(long_txt));
	assert_memory_equal(g->first, long_txt, sizeof(long_txt));
	free(g);
}

static void truncated_then_tcp(void **state)
{
	struct live_fx *f = *state;
	struct got *g = resolve(f, "big.example", SPFKIT_RR_A);
	struct dnsd_counters c;

	want_status(g, "big.example", SPFKIT_DNS_OK);
	assert_int_equal(g->count, 40);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.truncated, 1);
	assert_int_equal(c.tcp_queries, 1);
	free(g);
}

static void huge_txt_over_tcp(void **state)
{
	struct live_fx *f = *state;
	struct got *g = resolve(f, "huge.example", SPFKIT_RR_TXT);

	want_status(g, "huge.example", SPFKIT_DNS_OK);
	assert_int_equal(g->first_len, sizeof(huge_txt));
	assert_memory_equal(g->first, huge_txt, sizeof(huge_txt));
	free(g);
}

static void nxdomain_and_nodata(void **state)
{
	struct live_fx *f = *state;
	struct got *g = resolve(f, "no.example", SPFKIT_RR_TXT);

	want_status(g, "no.example", SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(g->ttl, DNSD_DEFAULT_NEG_TTL);
	free(g);
	g = resolve(f, "a.example", SPFKIT_RR_MX);
	want_status(g, "a.example/MX", SPFKIT_DNS_NODATA);
	assert_int_equal(g->ttl, DNSD_DEFAULT_NEG_TTL);
	free(g);
}

static void forced_truncation_uses_tcp(void **state)
{
	struct live_fx *f = *state;
	struct got *g;

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_TRUNCATE), 0);
	g = resolve(f, "a.example", SPFKIT_RR_A);
	want_status(g, "a.example", SPFKIT_DNS_OK);
	assert_int_equal(dnsd_query_count(f->d, "a.example", 0), 2); /* UDP, then TCP */
	free(g);
}

/* Every fault a client must take as a temporary failure. */
static void faults_are_tempfail(void **state)
{
	static const enum dnsd_action faults[] = {
		DNSD_SERVFAIL, DNSD_TIMEOUT,	  DNSD_MAL_LOOP,    DNSD_MAL_PAST_END,
		DNSD_MAL_SHORT, DNSD_MAL_BAD_ID, DNSD_MAL_GARBAGE, DNSD_MAL_WRONG_QUESTION,
	};
	struct live_fx *f = *state;
	size_t i;

	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		struct got *g;

		assert_int_equal(dnsd_fault(f->d, "a.example", 0, faults[i]), 0);
		g = resolve(f, "a.example", SPFKIT_RR_A);
		if (g->status != SPFKIT_DNS_TEMPFAIL)
			fail_msg("fault %s: got status %d, want TEMPFAIL",
				 dnsd_action_name(faults[i]), (int)g->status);
		free(g);
	}
}

static void delay_within_timeout_answers(void **state)
{
	struct live_fx *f = *state;
	struct got *g;

	dnsd_set_delay(f->d, 60);
	g = resolve(f, "a.example", SPFKIT_RR_A);
	want_status(g, "a.example", SPFKIT_DNS_OK);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_records, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(name_with_spaces, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(long_txt_joined, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(truncated_then_tcp, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(huge_txt_over_tcp, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(nxdomain_and_nodata, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(forced_truncation_uses_tcp, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(faults_are_tempfail, setup, live_fx_teardown),
		cmocka_unit_test_setup_teardown(delay_within_timeout_answers, setup, live_fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
