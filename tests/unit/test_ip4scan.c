/*
 * Unit tests of lib/spf/ip4_scan.c: four terms at a time must stop where
 * a term-by-term reading of the record stops (an ip4 term covering the
 * client, or any term that is neither ip4, ip6 nor a modifier), from any
 * starting term, on records of every length around the group size.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

#include "core.h"
#include "ip4_scan.h"

/* The term loop's own reading, one term at a time. */
static size_t reference(const struct spfkit_record *rec, size_t from, uint32_t client)
{
	size_t i;

	for (i = from; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];
		uint32_t net, mask;

		if (t->is_modifier || t->mech == SPFKIT_MECH_IP6)
			continue;
		if (t->mech != SPFKIT_MECH_IP4)
			return i;
		memcpy(&net, t->ip, 4);
		mask = t->cidr4 == 0 ? 0 : htonl(0xffffffffu << (32 - t->cidr4));
		if (((client ^ net) & mask) == 0)
			return i;
	}
	return rec->count;
}

static void random_term(char *out, size_t size, unsigned *seed)
{
	unsigned r = (unsigned)rand_r(seed);

	switch (r % 8) {
	case 0: snprintf(out, size, " ip6:2001:db8::/%u", r % 129); break;
	case 1: snprintf(out, size, " exp=e%u.example", r % 10); break;
	case 2: snprintf(out, size, " a:h%u.example", r % 10); break;
	case 3: snprintf(out, size, " ~all"); break;
	default: /* most terms: ip4, in a small space so clients hit them */
		snprintf(out, size, " ip4:10.%u.%u.0/%u", r % 4, (r >> 3) % 4, (r >> 6) % 33);
		break;
	}
}

static void matches_term_by_term(void **state)
{
	char text[2048], term[64];
	unsigned seed = 7, n, k, trial;

	(void)state;
	for (trial = 0; trial < 3000; trial++) {
		struct spfkit_record *rec = NULL;
		struct spfkit__ip4_group *g;
		struct spfkit_parse_error pe;
		size_t from;

		n = trial % 23; /* 0 to 22 terms: every remainder of 4 */
		snprintf(text, sizeof(text), "v=spf1");
		for (k = 0; k < n; k++) {
			random_term(term, sizeof(term), &seed);
			strncat(text, term, sizeof(text) - strlen(text) - 1);
		}
		if (spfkit_record_parse(text, strlen(text), NULL, &rec, &pe) != 0)
			continue; /* e.g. two exp= modifiers */
		g = spfkit__ip4_scan_build(rec, NULL);
		assert_true(g != NULL || rec->count == 0);
		for (k = 0; k < 20 && g != NULL; k++) {
			uint32_t client = htonl(0x0a000000u | ((unsigned)rand_r(&seed) & 0x0003ffffu));

			for (from = 0; from <= rec->count; from++)
				assert_int_equal(spfkit__ip4_scan(g, from, rec->count, client),
						 reference(rec, from, client));
		}
		spfkit__free(NULL, g);
		spfkit_record_free(rec);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_term_by_term),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
