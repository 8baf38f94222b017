/*
 * Unit tests of the in-memory zone and its resolver (lib/resolver/zone.c,
 * resolver.c): lookups per type, case, NXDOMAIN / NODATA / timeout,
 * CNAME chains, caps, allocation failure, the resolver's queue contract,
 * and lookups from four threads at once.
 * Every zone is made with an allocator routed to cmocka's test_malloc, so
 * each test also checks that nothing leaks.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/zone.h>

#include "cmocka_alloc.h" /* tests/support */
#include "core.h"

/* ---- helpers --------------------------------------------------------- */

static struct spfkit_zone *zone_new(void)
{
	struct spfkit_zone *z = NULL;

	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	assert_non_null(z);
	return z;
}

static void add(struct spfkit_zone *z, const char *name, uint16_t type, uint32_t ttl,
		const void *data, size_t len, uint16_t pref)
{
	int rc = spfkit_zone_add(z, name, strlen(name), type, ttl, data, len, pref);

	if (rc != 0)
		fail_msg("add %s type %u: got %d, want 0", name, (unsigned)type, rc);
}

static void add_text(struct spfkit_zone *z, const char *name, uint16_t type, const char *text)
{
	add(z, name, type, 3600, text, strlen(text), 0);
}

static struct spfkit_dns_answer look(const struct spfkit_zone *z, const char *name, uint16_t type)
{
	struct spfkit_dns_answer a;

	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(spfkit_zone_lookup(z, name, strlen(name), type, &a), 0);
	return a;
}

static void want_status(const struct spfkit_zone *z, const char *name, uint16_t type,
			enum spfkit_dns_status want)
{
	struct spfkit_dns_answer a = look(z, name, type);

	if (a.status != want)
		fail_msg("lookup %s type %u: got status %s, want %s", name, (unsigned)type,
			 spfkit_dns_status_name(a.status), spfkit_dns_status_name(want));
	if ((a.count > 0) != (want == SPFKIT_DNS_OK))
		fail_msg("lookup %s: got count %zu with status %s", name, a.count,
			 spfkit_dns_status_name(a.status));
}

static const unsigned char ip_192_0_2_1[4] = { 192, 0, 2, 1 };
static const unsigned char ip_192_0_2_2[4] = { 192, 0, 2, 2 };
static const unsigned char ip6_db8_1[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
					     0,    0,    0,    0,    0, 0, 0, 1 };

/* ---- lookups per type ------------------------------------------------ */

static void lookup_a_gives_all_addresses_in_order(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "mail.example.com", SPFKIT_RR_A, 600, ip_192_0_2_1, 4, 0);
	add(z, "mail.example.com", SPFKIT_RR_A, 300, ip_192_0_2_2, 4, 0);
	a = look(z, "mail.example.com", SPFKIT_RR_A);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.count, 2);
	assert_int_equal(a.rrs[0].type, SPFKIT_RR_A);
	assert_int_equal(a.rrs[0].len, 4);
	assert_memory_equal(a.rrs[0].data, ip_192_0_2_1, 4);
	assert_memory_equal(a.rrs[1].data, ip_192_0_2_2, 4);
	assert_int_equal(a.rrs[0].ttl, 600);
	assert_int_equal(a.ttl, 300); /* the smallest TTL of the set */
	assert_null(a.detail);
	spfkit_zone_free(z);
}

static void lookup_aaaa(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "mail.example.com", SPFKIT_RR_AAAA, 60, ip6_db8_1, 16, 0);
	a = look(z, "mail.example.com", SPFKIT_RR_AAAA);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.rrs[0].len, 16);
	assert_memory_equal(a.rrs[0].data, ip6_db8_1, 16);
	want_status(z, "mail.example.com", SPFKIT_RR_A, SPFKIT_DNS_NODATA);
	spfkit_zone_free(z);
}

static void lookup_mx_keeps_preference_and_drops_final_dot(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "example.com", SPFKIT_RR_MX, 3600, "mx1.example.com.", 16, 10);
	add(z, "example.com", SPFKIT_RR_MX, 3600, "mx2.example.com", 15, 20);
	a = look(z, "example.com", SPFKIT_RR_MX);
	assert_int_equal(a.count, 2);
	assert_int_equal(a.rrs[0].pref, 10);
	assert_int_equal(a.rrs[0].len, 15);
	assert_memory_equal(a.rrs[0].data, "mx1.example.com", 15);
	assert_int_equal(a.rrs[1].pref, 20);
	spfkit_zone_free(z);
}

static void lookup_null_mx_is_an_empty_name(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "nomail.example.com", SPFKIT_RR_MX, 3600, ".", 1, 0);
	a = look(z, "nomail.example.com", SPFKIT_RR_MX);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.rrs[0].len, 0);
	assert_non_null(a.rrs[0].data);
	spfkit_zone_free(z);
}

static void lookup_ptr(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "1.2.0.192.in-addr.arpa", SPFKIT_RR_PTR, "mail.Example.com");
	a = look(z, "1.2.0.192.IN-ADDR.ARPA.", SPFKIT_RR_PTR);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.rrs[0].len, 16);
	assert_memory_equal(a.rrs[0].data, "mail.Example.com", 16); /* case kept */
	spfkit_zone_free(z);
}

static void lookup_txt_holds_any_byte(void **state)
{
	static const char data[] = "v=spf1 ip4:192.0.2.0/24\0 -all";
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "example.com", SPFKIT_RR_TXT, 3600, data, sizeof(data) - 1, 0);
	a = look(z, "example.com", SPFKIT_RR_TXT);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.rrs[0].len, sizeof(data) - 1);
	assert_memory_equal(a.rrs[0].data, data, sizeof(data) - 1);
	spfkit_zone_free(z);
}

static void lookup_spf_type_is_separate_from_txt(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, "spfonly.example.net", SPFKIT_RR_SPF, "v=spf1 -all");
	want_status(z, "spfonly.example.net", SPFKIT_RR_SPF, SPFKIT_DNS_OK);
	want_status(z, "spfonly.example.net", SPFKIT_RR_TXT, SPFKIT_DNS_NODATA);
	spfkit_zone_free(z);
}

static void lookup_empty_txt_is_a_record(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "null.example.com", SPFKIT_RR_TXT, 3600, NULL, 0, 0);
	a = look(z, "null.example.com", SPFKIT_RR_TXT);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.rrs[0].len, 0);
	assert_non_null(a.rrs[0].data);
	spfkit_zone_free(z);
}

static void lookup_is_zero_copy(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a, b;

	(void)state;
	add_text(z, "example.com", SPFKIT_RR_TXT, "v=spf1 -all");
	a = look(z, "example.com", SPFKIT_RR_TXT);
	b = look(z, "EXAMPLE.com.", SPFKIT_RR_TXT);
	assert_ptr_equal(a.rrs, b.rrs);
	assert_ptr_equal(a.rrs[0].data, b.rrs[0].data);
	spfkit_zone_free(z);
}

/* ---- names ----------------------------------------------------------- */

static void names_ignore_case_and_final_dot(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	add(z, "Mail.Example.COM.", SPFKIT_RR_A, 60, ip_192_0_2_1, 4, 0);
	want_status(z, "mail.example.com", SPFKIT_RR_A, SPFKIT_DNS_OK);
	want_status(z, "MAIL.EXAMPLE.COM.", SPFKIT_RR_A, SPFKIT_DNS_OK);
	want_status(z, "mail.example.com..", SPFKIT_RR_A, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(spfkit_zone_size(z), 1);
	spfkit_zone_free(z);
}

static void names_may_hold_odd_bytes(void **state)
{
	/* The RFC 7208 suite has names with spaces, '%', ':' and '/'. */
	static const char name[] = "macro%percent  space%20url-space.example.com";
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, name, SPFKIT_RR_TXT, "v=spf1 -all");
	want_status(z, name, SPFKIT_RR_TXT, SPFKIT_DNS_OK);
	add_text(z, "foo:bar/baz.example.com", SPFKIT_RR_TXT, "x");
	want_status(z, "FOO:BAR/BAZ.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_OK);
	spfkit_zone_free(z);
}

static void names_fold_only_ascii_letters(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	/* long enough for the word-at-a-time compare, and a byte-wise tail */
	add_text(z, "abcdefgh@[xyz\xc1.example.com", SPFKIT_RR_TXT, "x");
	want_status(z, "ABCDEFGH@[XYZ\xc1.EXAMPLE.COM", SPFKIT_RR_TXT, SPFKIT_DNS_OK);
	/* '@' and '`', '[' and '{' differ by 0x20 but are not letters */
	want_status(z, "abcdefgh`[xyz\xc1.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	want_status(z, "abcdefgh@{xyz\xc1.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	/* bytes over 0x7f are not folded (0xc1 vs 0xe1) */
	want_status(z, "abcdefgh@[xyz\xe1.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	want_status(z, "abcdefgh@[xyz\xc1.example.coM", SPFKIT_RR_TXT, SPFKIT_DNS_OK);
	want_status(z, "abcdefgh@[xyz\xc1.example.con", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	want_status(z, "Abcdefgh@[xyz\xc1.example.co", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

/* Every byte of names of every length to 24 is compared, the last word
 * read again from the end too: '@' for '`' (one the hash folds alike)
 * anywhere is another name, 'Q' for 'q' the same. */
static void names_compare_every_byte(void **state)
{
	char name[32], ask[32];
	size_t len, k;

	(void)state;
	for (len = 1; len <= 24; len++) {
		struct spfkit_zone *z = zone_new();

		memset(name, 'q', len);
		name[len] = '\0';
		for (k = 0; k < len; k++)
			name[k] = k % 3 == 0 ? '@' : 'q';
		add_text(z, name, SPFKIT_RR_TXT, "x");
		for (k = 0; k < len; k++) {
			memcpy(ask, name, len + 1);
			ask[k] = name[k] == '@' ? '`' : 'Q';
			want_status(z, ask, SPFKIT_RR_TXT,
				    name[k] == '@' ? SPFKIT_DNS_NXDOMAIN : SPFKIT_DNS_OK);
		}
		spfkit_zone_free(z);
	}
}

static void add_refuses_names_dns_cannot_carry(void **state)
{
	char big[300], label64[64];
	struct spfkit_zone *z = zone_new();

	(void)state;
	memset(label64, 'a', sizeof(label64));
	memset(big, 'a', sizeof(big));
	big[63] = '.';
	big[127] = '.';
	big[191] = '.';
	assert_int_equal(spfkit_zone_add_empty(z, "", 0), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add_empty(z, ".", 1), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add_empty(z, "a..b", 4), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add_empty(z, ".a", 2), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add_empty(z, label64, 64), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add_empty(z, label64, 63), 0);
	assert_int_equal(spfkit_zone_add_empty(z, big, 254), SPFKIT_EINVAL); /* 254 bytes */
	assert_int_equal(spfkit_zone_add_empty(z, big, 253), 0);
	assert_int_equal(spfkit_zone_add_empty(z, NULL, 3), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_size(z), 2);
	spfkit_zone_free(z);
}

static void lookup_of_impossible_names_is_nxdomain(void **state)
{
	char big[400];
	struct spfkit_zone *z = zone_new();

	(void)state;
	memset(big, 'a', sizeof(big));
	add_text(z, "example.com", SPFKIT_RR_TXT, "v=spf1 -all");
	want_status(z, "a..example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	want_status(z, "", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	want_status(z, ".", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	big[sizeof(big) - 1] = '\0';
	want_status(z, big, SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

static void lookup_bad_arguments_are_einval(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	assert_int_equal(spfkit_zone_lookup(NULL, "a", 1, SPFKIT_RR_A, &a), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_lookup(z, "a", 1, SPFKIT_RR_A, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_lookup(z, NULL, 1, SPFKIT_RR_A, &a), SPFKIT_EINVAL);
	spfkit_zone_free(z);
}

/* ---- NXDOMAIN, NODATA, empty, timeout --------------------------------- */

static void missing_name_is_nxdomain_with_negative_ttl(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "example.com", SPFKIT_RR_TXT, "v=spf1 -all");
	a = look(z, "nosuch.example.com", SPFKIT_RR_TXT);
	assert_int_equal(a.status, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(a.count, 0);
	assert_null(a.rrs);
	assert_int_equal(a.ttl, SPFKIT_ZONE_NEGATIVE_TTL);
	spfkit_zone_free(z);
}

static void other_type_is_nodata_with_negative_ttl(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "example.com", SPFKIT_RR_TXT, "v=spf1 -all");
	a = look(z, "example.com", SPFKIT_RR_A);
	assert_int_equal(a.status, SPFKIT_DNS_NODATA);
	assert_int_equal(a.ttl, SPFKIT_ZONE_NEGATIVE_TTL);
	want_status(z, "example.com", SPFKIT_RR_SOA, SPFKIT_DNS_NODATA);
	spfkit_zone_free(z);
}

static void name_above_an_existing_name_is_nodata(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, "_spf.mail.example.com", SPFKIT_RR_TXT, "v=spf1 -all");
	want_status(z, "mail.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NODATA);
	want_status(z, "example.com", SPFKIT_RR_A, SPFKIT_DNS_NODATA);
	want_status(z, "com", SPFKIT_RR_TXT, SPFKIT_DNS_NODATA);
	want_status(z, "other.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	/* only names added count, not the names above them */
	assert_int_equal(spfkit_zone_size(z), 1);
	spfkit_zone_free(z);
}

static void add_empty_makes_nodata(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	want_status(z, "txtnone.example.net", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(spfkit_zone_add_empty(z, "txtnone.example.net", 19), 0);
	want_status(z, "txtnone.example.net", SPFKIT_RR_TXT, SPFKIT_DNS_NODATA);
	assert_int_equal(spfkit_zone_add_empty(z, "TXTNONE.example.net.", 20), 0);
	assert_int_equal(spfkit_zone_size(z), 1);
	spfkit_zone_free(z);
}

static void timeout_name_tempfails_every_type(void **state)
{
	static const uint16_t types[] = { SPFKIT_RR_A,   SPFKIT_RR_AAAA, SPFKIT_RR_MX, SPFKIT_RR_TXT,
					  SPFKIT_RR_PTR, SPFKIT_RR_SPF,  SPFKIT_RR_CNAME };
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;
	size_t i;

	(void)state;
	assert_int_equal(spfkit_zone_add_timeout(z, "slow.example.com", 16), 0);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		a = look(z, "slow.example.com", types[i]);
		assert_int_equal(a.status, SPFKIT_DNS_TEMPFAIL);
		assert_string_equal(a.detail, "timeout");
		assert_int_equal(a.count, 0);
	}
	spfkit_zone_free(z);
}

static void timeout_name_still_answers_its_records(void **state)
{
	/* RFC 7208 suite "spftimeout": TXT present + TIMEOUT gives fail. */
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, "spftimeout.example.net", SPFKIT_RR_TXT, "v=spf1 -all");
	assert_int_equal(spfkit_zone_add_timeout(z, "spftimeout.example.net", 22), 0);
	want_status(z, "spftimeout.example.net", SPFKIT_RR_TXT, SPFKIT_DNS_OK);
	want_status(z, "spftimeout.example.net", SPFKIT_RR_SPF, SPFKIT_DNS_TEMPFAIL);
	spfkit_zone_free(z);
}

/* ---- CNAME ----------------------------------------------------------- */

static void cname_is_followed_for_other_types(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "alias.example.com", SPFKIT_RR_CNAME, 100, "Real.example.com.", 17, 0);
	add(z, "real.example.com", SPFKIT_RR_A, 500, ip_192_0_2_1, 4, 0);
	a = look(z, "alias.example.com", SPFKIT_RR_A);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.rrs[0].type, SPFKIT_RR_A);
	assert_memory_equal(a.rrs[0].data, ip_192_0_2_1, 4);
	assert_int_equal(a.ttl, 100); /* the smallest TTL along the chain */
	spfkit_zone_free(z);
}

static void cname_question_gets_the_cname(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "alias.example.com", SPFKIT_RR_CNAME, "real.example.com");
	a = look(z, "alias.example.com", SPFKIT_RR_CNAME);
	assert_int_equal(a.count, 1);
	assert_memory_equal(a.rrs[0].data, "real.example.com", 16);
	spfkit_zone_free(z);
}

static void cname_to_missing_name_is_nxdomain(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, "alias.example.com", SPFKIT_RR_CNAME, "gone.example.org");
	want_status(z, "alias.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	add_text(z, "alias2.example.com", SPFKIT_RR_CNAME, "alias.example.com");
	want_status(z, "alias2.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

static void cname_to_name_without_the_type_is_nodata(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, "alias.example.com", SPFKIT_RR_CNAME, "real.example.com");
	add(z, "real.example.com", SPFKIT_RR_A, 60, ip_192_0_2_1, 4, 0);
	want_status(z, "alias.example.com", SPFKIT_RR_TXT, SPFKIT_DNS_NODATA);
	spfkit_zone_free(z);
}

/* c0 -> c1 -> ... -> c<n> -> A record */
static struct spfkit_zone *chain(unsigned n)
{
	struct spfkit_zone *z = zone_new();
	char from[32], to[32];
	unsigned i;

	for (i = 0; i < n; i++) {
		snprintf(from, sizeof(from), "c%u.example.com", i);
		snprintf(to, sizeof(to), "c%u.example.com", i + 1);
		add_text(z, from, SPFKIT_RR_CNAME, to);
	}
	snprintf(to, sizeof(to), "c%u.example.com", n);
	add(z, to, SPFKIT_RR_A, 60, ip_192_0_2_1, 4, 0);
	return z;
}

static void cname_chain_of_8_is_followed(void **state)
{
	struct spfkit_zone *z = chain(SPFKIT_ZONE_MAX_CNAME);

	(void)state;
	want_status(z, "c0.example.com", SPFKIT_RR_A, SPFKIT_DNS_OK);
	spfkit_zone_free(z);
}

static void cname_chain_of_9_is_tempfail(void **state)
{
	struct spfkit_zone *z = chain(SPFKIT_ZONE_MAX_CNAME + 1);
	struct spfkit_dns_answer a;

	(void)state;
	a = look(z, "c0.example.com", SPFKIT_RR_A);
	assert_int_equal(a.status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(a.detail, "CNAME chain too long");
	want_status(z, "c1.example.com", SPFKIT_RR_A, SPFKIT_DNS_OK);
	spfkit_zone_free(z);
}

static void cname_loop_is_tempfail(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "loop4.example.com", SPFKIT_RR_CNAME, "CNAME.example.com.");
	add_text(z, "cname.example.com", SPFKIT_RR_CNAME, "CNAME.example.com.");
	a = look(z, "loop4.example.com", SPFKIT_RR_A);
	assert_int_equal(a.status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(a.detail, "CNAME loop");
	spfkit_zone_free(z);
}

static void cname_and_other_data_refused(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	add_text(z, "alias.example.com", SPFKIT_RR_CNAME, "real.example.com");
	assert_int_equal(spfkit_zone_add(z, "alias.example.com", 17, SPFKIT_RR_TXT, 1, "x", 1, 0),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add(z, "alias.example.com", 17, SPFKIT_RR_CNAME, 1, "b.c", 3, 0),
			 SPFKIT_EINVAL);
	add_text(z, "real.example.com", SPFKIT_RR_TXT, "x");
	assert_int_equal(spfkit_zone_add(z, "real.example.com", 16, SPFKIT_RR_CNAME, 1, "b.c", 3, 0),
			 SPFKIT_EINVAL);
	spfkit_zone_free(z);
}

/* ---- add: data checks and caps --------------------------------------- */

/*
 * RFC 2181 §5: identical records (owner in any case, type, data) are one
 * record; the smallest TTL stays (§5.2). Names in the data of MX, PTR
 * and CNAME compare ignoring case and a final dot, text byte for byte.
 */
static void add_drops_exact_duplicates(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add(z, "d.example", SPFKIT_RR_TXT, 600, "v=spf1 -all", 11, 0);
	add(z, "D.EXAMPLE.", SPFKIT_RR_TXT, 60, "v=spf1 -all", 11, 0);
	add(z, "d.example", SPFKIT_RR_TXT, 900, "v=spf1 -all", 11, 0);
	a = look(z, "d.example", SPFKIT_RR_TXT);
	if (a.count != 1)
		fail_msg("TXT d.example: got %zu records, want 1", a.count);
	assert_int_equal(a.rrs[0].ttl, 60);
	assert_int_equal(a.ttl, 60);
	add(z, "d.example", SPFKIT_RR_MX, 300, "mx.example.", 11, 10);
	add(z, "d.example", SPFKIT_RR_MX, 300, "MX.example", 10, 10);
	add(z, "d.example", SPFKIT_RR_MX, 300, "mx.example", 10, 20);
	a = look(z, "d.example", SPFKIT_RR_MX);
	if (a.count != 2)
		fail_msg("MX d.example: got %zu records, want 2", a.count);
	add(z, "d.example", SPFKIT_RR_A, 300, ip_192_0_2_1, 4, 0);
	add(z, "d.example", SPFKIT_RR_A, 300, ip_192_0_2_1, 4, 0);
	add(z, "d.example", SPFKIT_RR_A, 300, ip_192_0_2_2, 4, 0);
	a = look(z, "d.example", SPFKIT_RR_A);
	if (a.count != 2)
		fail_msg("A d.example: got %zu records, want 2", a.count);
	/* a second identical CNAME is the same one, not "more than one" */
	add(z, "c.example", SPFKIT_RR_CNAME, 300, "d.example", 9, 0);
	add(z, "c.example", SPFKIT_RR_CNAME, 300, "D.example.", 10, 0);
	a = look(z, "c.example", SPFKIT_RR_CNAME);
	assert_int_equal(a.count, 1);
	assert_int_equal(spfkit_zone_add(z, "c.example", 9, SPFKIT_RR_CNAME, 1, "e.example", 9, 0),
			 SPFKIT_EINVAL);
	/* empty data (a null MX, a TXT with no strings) twice is one record (fuzz_zonefile found a memcmp of NULL) */
	add(z, "n.example", SPFKIT_RR_MX, 300, ".", 1, 0);
	add(z, "n.example", SPFKIT_RR_MX, 300, ".", 1, 0);
	add(z, "n.example", SPFKIT_RR_TXT, 300, NULL, 0, 0);
	add(z, "n.example", SPFKIT_RR_TXT, 300, NULL, 0, 0);
	assert_int_equal(look(z, "n.example", SPFKIT_RR_MX).count, 1);
	assert_int_equal(look(z, "n.example", SPFKIT_RR_TXT).count, 1);
	/* text is compared byte for byte: case makes another record */
	add(z, "d.example", SPFKIT_RR_TXT, 600, "V=SPF1 -ALL", 11, 0);
	a = look(z, "d.example", SPFKIT_RR_TXT);
	assert_int_equal(a.count, 2);
	assert_int_equal(spfkit_zone_size(z), 3);
	spfkit_zone_free(z);
}

static void add_checks_data_length_per_type(void **state)
{
	struct spfkit_zone *z = zone_new();

	(void)state;
	assert_int_equal(spfkit_zone_add(z, "a.example", 9, SPFKIT_RR_A, 1, ip6_db8_1, 16, 0),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add(z, "a.example", 9, SPFKIT_RR_AAAA, 1, ip_192_0_2_1, 4, 0),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add(z, "a.example", 9, SPFKIT_RR_PTR, 1, "a..b", 4, 0),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add(z, "a.example", 9, SPFKIT_RR_TXT, 1, NULL, 3, 0),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add(z, "a.example", 9, SPFKIT_RR_SOA, 1, "x", 1, 0),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_add(NULL, "a.example", 9, SPFKIT_RR_TXT, 1, "x", 1, 0),
			 SPFKIT_EINVAL);
	/* nothing refused became a name */
	want_status(z, "a.example", SPFKIT_RR_A, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

static void add_caps_text_at_65535_bytes(void **state)
{
	struct spfkit_zone *z = zone_new();
	char *big = test_malloc(65536);

	(void)state;
	memset(big, 'x', 65536);
	assert_int_equal(spfkit_zone_add(z, "t.example", 9, SPFKIT_RR_TXT, 1, big, 65536, 0),
			 SPFKIT_E2BIG);
	assert_int_equal(spfkit_zone_add(z, "t.example", 9, SPFKIT_RR_TXT, 1, big, 65535, 0), 0);
	test_free(big);
	spfkit_zone_free(z);
}

/* One RRset holds what one DNS message can carry; this also bounds the duplicate scan. */
static void add_caps_records_per_set(void **state)
{
	struct spfkit_zone *z = zone_new();
	unsigned char ip[4] = { 10, 0, 0, 0 };
	struct spfkit_dns_answer a;
	unsigned i;

	(void)state;
	for (i = 0; i < SPFKIT_ZONE_MAX_RRSET; i++) {
		ip[1] = (unsigned char)(i >> 16);
		ip[2] = (unsigned char)(i >> 8);
		ip[3] = (unsigned char)i;
		add(z, "big.example", SPFKIT_RR_A, 60, ip, 4, 0);
	}
	ip[1] = 0xff;
	assert_int_equal(spfkit_zone_add(z, "big.example", 11, SPFKIT_RR_A, 60, ip, 4, 0),
			 SPFKIT_E2BIG);
	/* a duplicate of a record already there is still taken (and dropped) */
	ip[1] = ip[2] = ip[3] = 0;
	assert_int_equal(spfkit_zone_add(z, "big.example", 11, SPFKIT_RR_A, 60, ip, 4, 0), 0);
	/* another type at the same name has its own room */
	add(z, "big.example", SPFKIT_RR_TXT, 60, "v=spf1 -all", 11, 0);
	a = look(z, "big.example", SPFKIT_RR_A);
	assert_int_equal(a.count, SPFKIT_ZONE_MAX_RRSET);
	spfkit_zone_free(z);
}

static void many_names_all_found(void **state)
{
	struct spfkit_zone *z = zone_new();
	char name[64];
	unsigned char ip[4] = { 198, 51, 100, 0 };
	struct spfkit_dns_answer a;
	unsigned i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "h%u.example.org", i);
		ip[3] = (unsigned char)i;
		add(z, name, SPFKIT_RR_A, 60, ip, 4, 0);
	}
	assert_int_equal(spfkit_zone_size(z), 5000);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "H%u.EXAMPLE.org", i);
		a = look(z, name, SPFKIT_RR_A);
		assert_int_equal(a.count, 1);
		assert_int_equal(a.rrs[0].data[3], (unsigned char)i);
	}
	spfkit_zone_free(z);
}

static void allocation_failure_changes_nothing(void **state)
{
	struct test_alloc_failing f;
	struct spfkit_allocator fa = test_alloc_failing(&f);
	struct spfkit_zone *z;
	long n;
	int rc = SPFKIT_ENOMEM;

	(void)state;
	for (n = 0; rc == SPFKIT_ENOMEM; n++) {
		f.left = 1000;
		assert_int_equal(spfkit_zone_new(&fa, &z), 0);
		add_text(z, "example.com", SPFKIT_RR_TXT, "v=spf1 -all");
		f.left = n;
		rc = spfkit_zone_add(z, "a.b.c.example.org", 17, SPFKIT_RR_TXT, 1, "x", 1, 0);
		if (rc == SPFKIT_ENOMEM) {
			want_status(z, "a.b.c.example.org", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
			want_status(z, "example.org", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
			want_status(z, "example.com", SPFKIT_RR_TXT, SPFKIT_DNS_OK);
			assert_int_equal(spfkit_zone_size(z), 1);
		}
		spfkit_zone_free(z);
	}
	assert_int_equal(rc, 0);
	assert_true(n > 1); /* some allocation really failed */
	f.left = 0;
	assert_int_equal(spfkit_zone_new(&fa, &z), SPFKIT_ENOMEM);
	assert_null(z);
}

/* ---- the zone resolver ------------------------------------------------ */

struct seen {
	int calls;
	char order[16];
	enum spfkit_dns_status status[16];
	size_t count[16];
	struct spfkit_resolver *r; /* for callbacks that act on the resolver */
	uint64_t other;            /* a handle to cancel from a callback */
	int wait_rc;               /* what wait() said when called from a callback */
	void *again;               /* the tag of a question a callback asks */
};

struct tag {
	struct seen *seen;
	char name;
};

static void record_cb(void *arg, const struct spfkit_dns_answer *a)
{
	struct tag *t = arg;
	struct seen *s = t->seen;

	if (s->calls < 16) {
		s->order[s->calls] = t->name;
		s->status[s->calls] = a->status;
		s->count[s->calls] = a->count;
	}
	s->calls++;
}

static struct spfkit_zone *small_zone(void)
{
	struct spfkit_zone *z = zone_new();

	add_text(z, "example.com", SPFKIT_RR_TXT, "v=spf1 mx -all");
	add(z, "example.com", SPFKIT_RR_MX, 60, "mx.example.com", 14, 10);
	add(z, "mx.example.com", SPFKIT_RR_A, 60, ip_192_0_2_1, 4, 0);
	return z;
}

static void submit(struct spfkit_resolver *r, const char *name, uint16_t type, spfkit_dns_cb *cb,
		   struct tag *t, uint64_t *h)
{
	assert_int_equal(spfkit_resolver_submit(r, name, strlen(name), type, cb, t, h), 0);
}

static void resolver_delivers_in_wait_in_order(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct spfkit_resolver *r = NULL;
	struct seen s = { 0 };
	struct tag a = { &s, 'a' }, b = { &s, 'b' }, c = { &s, 'c' };
	uint64_t ha, hb, hc;

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	submit(r, "example.com", SPFKIT_RR_TXT, record_cb, &a, &ha);
	submit(r, "nosuch.example.com", SPFKIT_RR_TXT, record_cb, &b, &hb);
	submit(r, "mx.example.com", SPFKIT_RR_A, record_cb, &c, &hc);
	assert_int_equal(s.calls, 0); /* never from inside submit() */
	assert_true(ha != hb && hb != hc && ha != hc);
	assert_int_equal(spfkit_resolver_wait(r, -1), 3);
	assert_int_equal(s.calls, 3);
	assert_memory_equal(s.order, "abc", 3);
	assert_int_equal(s.status[0], SPFKIT_DNS_OK);
	assert_int_equal(s.status[1], SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(s.count[2], 1);
	assert_int_equal(spfkit_resolver_wait(r, 0), 0); /* nothing left: at once */
	spfkit_resolver_free(r);
	spfkit_zone_free(z);
}

static void resolver_cancel_means_no_callback(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct spfkit_resolver *r = NULL;
	struct seen s = { 0 };
	struct tag a = { &s, 'a' }, b = { &s, 'b' }, c = { &s, 'c' };
	uint64_t ha, hb, hc;

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	submit(r, "example.com", SPFKIT_RR_TXT, record_cb, &a, &ha);
	submit(r, "example.com", SPFKIT_RR_MX, record_cb, &b, &hb);
	submit(r, "example.com", SPFKIT_RR_A, record_cb, &c, &hc);
	spfkit_resolver_cancel(r, hb);
	spfkit_resolver_cancel(r, hb);      /* twice: no-op */
	spfkit_resolver_cancel(r, 999999);  /* unknown: no-op */
	assert_int_equal(spfkit_resolver_wait(r, -1), 2);
	assert_memory_equal(s.order, "ac", 2);
	spfkit_resolver_cancel(r, ha); /* already delivered: no-op */
	assert_int_equal(spfkit_resolver_wait(r, -1), 0);
	assert_int_equal(s.calls, 2);
	spfkit_resolver_free(r);
	spfkit_zone_free(z);
}

static void resubmit_cb(void *arg, const struct spfkit_dns_answer *a)
{
	struct tag *t = arg;

	record_cb(arg, a);
	if (t->name == 'a')
		assert_int_equal(spfkit_resolver_submit(t->seen->r, "mx.example.com", 14, SPFKIT_RR_A,
							record_cb, t->seen->again, NULL),
				 0);
}

static void resolver_callback_may_submit(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct seen s = { 0 };
	struct tag a = { &s, 'a' }, b = { &s, 'b' }, n = { &s, 'n' };

	(void)state;
	s.again = &n;
	assert_int_equal(spfkit_zone_resolver(z, &s.r), 0);
	submit(s.r, "example.com", SPFKIT_RR_TXT, resubmit_cb, &a, NULL);
	submit(s.r, "example.com", SPFKIT_RR_MX, resubmit_cb, &b, NULL);
	/* what a callback asks is delivered by the next wait(), not this one */
	assert_int_equal(spfkit_resolver_wait(s.r, -1), 2);
	assert_memory_equal(s.order, "ab", 2);
	assert_int_equal(spfkit_resolver_wait(s.r, -1), 1);
	assert_int_equal(s.order[2], 'n');
	assert_int_equal(s.status[2], SPFKIT_DNS_OK);
	spfkit_resolver_free(s.r);
	spfkit_zone_free(z);
}

static void many_submits_from_callback_cb(void *arg, const struct spfkit_dns_answer *a)
{
	struct tag *t = arg;
	int i;

	record_cb(arg, a);
	/* enough to make the queue move and grow while wait() runs */
	for (i = 0; i < 40; i++)
		assert_int_equal(spfkit_resolver_submit(t->seen->r, "example.com", 11, SPFKIT_RR_TXT,
							record_cb, arg, NULL),
				 0);
}

static void resolver_queue_may_grow_during_wait(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct seen s = { 0 };
	struct tag a = { &s, 'a' }, b = { &s, 'b' }, c = { &s, 'c' };

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &s.r), 0);
	submit(s.r, "example.com", SPFKIT_RR_TXT, record_cb, &a, NULL);
	submit(s.r, "example.com", SPFKIT_RR_TXT, many_submits_from_callback_cb, &b, NULL);
	submit(s.r, "example.com", SPFKIT_RR_TXT, record_cb, &c, NULL);
	assert_int_equal(spfkit_resolver_wait(s.r, -1), 3);
	assert_memory_equal(s.order, "abc", 3);
	assert_int_equal(spfkit_resolver_wait(s.r, -1), 40);
	assert_int_equal(s.calls, 43);
	spfkit_resolver_free(s.r);
	spfkit_zone_free(z);
}

static void cancel_other_cb(void *arg, const struct spfkit_dns_answer *a)
{
	struct tag *t = arg;

	record_cb(arg, a);
	spfkit_resolver_cancel(t->seen->r, t->seen->other);
	t->seen->wait_rc = spfkit_resolver_wait(t->seen->r, 0);
}

static void resolver_callback_may_cancel_a_queued_question(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct seen s = { 0 };
	struct tag a = { &s, 'a' }, b = { &s, 'b' };

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &s.r), 0);
	submit(s.r, "example.com", SPFKIT_RR_TXT, cancel_other_cb, &a, NULL);
	submit(s.r, "example.com", SPFKIT_RR_MX, record_cb, &b, &s.other);
	assert_int_equal(spfkit_resolver_wait(s.r, -1), 1);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.wait_rc, SPFKIT_ESTATE); /* wait() inside a callback */
	spfkit_resolver_free(s.r);
	spfkit_zone_free(z);
}

static void resolver_free_with_pending_never_calls_back(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct spfkit_resolver *r = NULL;
	struct seen s = { 0 };
	struct tag a = { &s, 'a' };

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	submit(r, "example.com", SPFKIT_RR_TXT, record_cb, &a, NULL);
	spfkit_resolver_free(r);
	assert_int_equal(s.calls, 0);
	spfkit_zone_free(z);
}

static void resolver_refused_submit_never_calls_back(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct spfkit_resolver *r = NULL;
	struct seen s = { 0 };
	struct tag a = { &s, 'a' };

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	assert_int_equal(spfkit_resolver_submit(r, "x", 1, SPFKIT_RR_A, NULL, &a, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_resolver_submit(r, NULL, 1, SPFKIT_RR_A, record_cb, &a, NULL),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_resolver_wait(r, -1), 0);
	assert_int_equal(s.calls, 0);
	spfkit_resolver_free(r);
	spfkit_zone_free(z);
}

static void resolver_caps_pending_questions(void **state)
{
	struct spfkit_zone *z = small_zone();
	struct spfkit_resolver *r = NULL;
	struct seen s = { 0 };
	struct tag a = { &s, 'a' };
	unsigned i;

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	for (i = 0; i < SPFKIT_ZONE_MAX_PENDING; i++)
		assert_int_equal(spfkit_resolver_submit(r, "a", 1, SPFKIT_RR_A, record_cb, &a, NULL), 0);
	assert_int_equal(spfkit_resolver_submit(r, "a", 1, SPFKIT_RR_A, record_cb, &a, NULL),
			 SPFKIT_E2BIG);
	assert_int_equal(spfkit_resolver_wait(r, -1), (int)SPFKIT_ZONE_MAX_PENDING);
	spfkit_resolver_free(r);
	spfkit_zone_free(z);
}

static void resolver_wrappers_are_null_safe(void **state)
{
	struct spfkit_resolver *r = (struct spfkit_resolver *)1;

	(void)state;
	spfkit_resolver_free(NULL);
	spfkit_resolver_cancel(NULL, 1);
	assert_int_equal(spfkit_resolver_wait(NULL, 0), SPFKIT_EINVAL);
	assert_int_equal(spfkit_resolver_submit(NULL, "a", 1, 1, record_cb, NULL, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_resolver(NULL, &r), SPFKIT_EINVAL);
	assert_null(r);
}

static void names_of_types_and_statuses(void **state)
{
	char buf[16], tiny[3];

	(void)state;
	assert_string_equal(spfkit_rrtype_name(SPFKIT_RR_TXT, buf, sizeof(buf)), "TXT");
	assert_string_equal(spfkit_rrtype_name(SPFKIT_RR_AAAA, buf, sizeof(buf)), "AAAA");
	assert_string_equal(spfkit_rrtype_name(65535, buf, sizeof(buf)), "TYPE65535");
	assert_string_equal(spfkit_rrtype_name(SPFKIT_RR_CNAME, tiny, sizeof(tiny)), "CN");
	assert_string_equal(spfkit_rrtype_name(1, NULL, 0), "");
	assert_string_equal(spfkit_dns_status_name(SPFKIT_DNS_OK), "ok");
	assert_string_equal(spfkit_dns_status_name(SPFKIT_DNS_NODATA), "no data");
	assert_string_equal(spfkit_dns_status_name(SPFKIT_DNS_NXDOMAIN), "NXDOMAIN");
	assert_string_equal(spfkit_dns_status_name(SPFKIT_DNS_TEMPFAIL), "temporary failure");
	assert_string_equal(spfkit_dns_status_name((enum spfkit_dns_status)42), "unknown");
}

/* ---- threads --------------------------------------------------------- */

#define THREAD_NAMES 2000u

struct thread_arg {
	const struct spfkit_zone *zone;
	unsigned seed;
	unsigned bad; /* wrong answers seen */
};

static void *lookup_thread(void *p)
{
	struct thread_arg *t = p;
	struct spfkit_dns_answer a;
	char name[64];
	unsigned i, k;

	for (i = 0; i < 20000; i++) {
		k = (i * 7919u + t->seed) % (THREAD_NAMES + 100); /* some misses */
		snprintf(name, sizeof(name), "N%u.Example.org.", k);
		if (spfkit_zone_lookup(t->zone, name, strlen(name), SPFKIT_RR_TXT, &a) != 0) {
			t->bad++;
			continue;
		}
		if (k < THREAD_NAMES)
			t->bad += a.status != SPFKIT_DNS_OK || a.count != 1 ||
				  a.rrs[0].len != sizeof(k) || memcmp(a.rrs[0].data, &k, sizeof(k)) != 0;
		else
			t->bad += a.status != SPFKIT_DNS_NXDOMAIN;
	}
	return NULL;
}

static void concurrent_lookups_from_4_threads(void **state)
{
	struct spfkit_zone *z;
	struct thread_arg args[4];
	pthread_t th[4];
	char name[64];
	unsigned i;

	(void)state;
	/* libc allocator here: cmocka's test_malloc is not thread-safe */
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	for (i = 0; i < THREAD_NAMES; i++) {
		snprintf(name, sizeof(name), "n%u.example.org", i);
		assert_int_equal(spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_TXT, 60, &i,
						 sizeof(i), 0),
				 0);
	}
	for (i = 0; i < 4; i++) {
		args[i].zone = z;
		args[i].seed = i * 101u;
		args[i].bad = 0;
		assert_int_equal(pthread_create(&th[i], NULL, lookup_thread, &args[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].bad, 0);
	}
	spfkit_zone_free(z);
}

/*
 * RFC 4592 §3.3.1, with the zone of its §2.2.1 example cut to what SPF
 * asks: a wildcard answers names that do not exist below its parent,
 * at any depth, but not names that exist (empty non-terminals
 * included), nor names below an existing name other than its parent.
 */
static void wildcard_answers_only_names_that_do_not_exist(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "*.example", SPFKIT_RR_TXT, "v=spf1 -all");
	add(z, "*.example", SPFKIT_RR_MX, 3600, "host1.example", 13, 10);
	add_text(z, "host1.example", SPFKIT_RR_TXT, "v=spf1 a -all");
	add_text(z, "sub.*.example", SPFKIT_RR_TXT, "v=spf1 ?all");
	add_text(z, "_ssh._tcp.host1.example", SPFKIT_RR_TXT, "srv");
	add_text(z, "subdel.example", SPFKIT_RR_TXT, "v=spf1 ~all");
	add(z, "example", SPFKIT_RR_A, 3600, ip_192_0_2_1, 4, 0);

	a = look(z, "host3.example", SPFKIT_RR_TXT); /* synthesised */
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.count, 1);
	assert_memory_equal(a.rrs[0].data, "v=spf1 -all", 11);
	a = look(z, "a.b.c.example", SPFKIT_RR_MX); /* any depth */
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.rrs[0].pref, 10);
	want_status(z, "host3.example", SPFKIT_RR_A, SPFKIT_DNS_NODATA);
	a = look(z, "host1.example", SPFKIT_RR_TXT); /* exists: its own record */
	assert_memory_equal(a.rrs[0].data, "v=spf1 a -all", 13);
	want_status(z, "host1.example", SPFKIT_RR_MX, SPFKIT_DNS_NODATA);
	/* an empty non-terminal exists: no synthesis at it */
	want_status(z, "_tcp.host1.example", SPFKIT_RR_TXT, SPFKIT_DNS_NODATA);
	/* below an existing name the encloser is that name: *.example does not apply */
	want_status(z, "foo.host1.example", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	want_status(z, "_foo._tcp.host1.example", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	/* the wildcard's own name answers as itself; a name below it by its own records */
	a = look(z, "*.example", SPFKIT_RR_TXT);
	assert_memory_equal(a.rrs[0].data, "v=spf1 -all", 11);
	a = look(z, "sub.*.example", SPFKIT_RR_TXT);
	assert_memory_equal(a.rrs[0].data, "v=spf1 ?all", 11);
	/* outside the wildcard's parent: nothing */
	want_status(z, "host3.other", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

/* Without a "*" label no lookup pays for wildcards, and a zone with only
 * "*" at the root answers every missing name. */
static void wildcard_at_the_root_and_none(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;

	(void)state;
	add_text(z, "a.example", SPFKIT_RR_TXT, "v=spf1 -all");
	want_status(z, "b.example", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	add_text(z, "*", SPFKIT_RR_TXT, "root wildcard");
	a = look(z, "b.other", SPFKIT_RR_TXT);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_memory_equal(a.rrs[0].data, "root wildcard", 13);
	/* example exists (above a.example): its encloser is example, and *.example is absent */
	want_status(z, "b.example", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

/* TXT kept joined and as strings, in lockstep (resolver.h
 * SPFKIT_RR_TXT_STRINGS): joined text added from code is cut into
 * 255-octet strings; strings added are joined for TXT; a duplicate's
 * TTL reaches both; strings that run past their data are refused. */
static void txt_kept_joined_and_as_strings(void **state)
{
	struct spfkit_zone *z = zone_new();
	struct spfkit_dns_answer a;
	char text[300];

	(void)state;
	memset(text, 'x', sizeof(text));
	add(z, "long.example", SPFKIT_RR_TXT, 3600, text, sizeof(text), 0);
	a = look(z, "long.example", SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.rrs[0].type, SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(a.rrs[0].len, 302);
	assert_int_equal(a.rrs[0].data[0], 255);
	assert_int_equal(a.rrs[0].data[256], 45);
	add(z, "s.example", SPFKIT_RR_TXT_STRINGS, 3600, "\003ab \003-al\001l", 10, 0);
	a = look(z, "s.example", SPFKIT_RR_TXT);
	assert_int_equal(a.count, 1);
	assert_memory_equal(a.rrs[0].data, "ab -all", 7);
	assert_int_equal(a.rrs[0].len, 7);
	/* the same joined text again, split otherwise: one record, the smaller TTL */
	add(z, "s.example", SPFKIT_RR_TXT_STRINGS, 60, "\007ab -all", 8, 0);
	a = look(z, "s.example", SPFKIT_RR_TXT);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.ttl, 60);
	a = look(z, "s.example", SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.ttl, 60);
	assert_int_equal(a.rrs[0].len, 10);
	add(z, "empty.example", SPFKIT_RR_TXT, 3600, "", 0, 0);
	a = look(z, "empty.example", SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(a.rrs[0].len, 1);
	assert_int_equal(a.rrs[0].data[0], 0);
	assert_int_equal(spfkit_zone_add(z, "bad.example", 11, SPFKIT_RR_TXT_STRINGS, 1, "\005ab", 3, 0),
			 SPFKIT_EINVAL);
	want_status(z, "bad.example", SPFKIT_RR_TXT, SPFKIT_DNS_NXDOMAIN);
	spfkit_zone_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(txt_kept_joined_and_as_strings),
		cmocka_unit_test(wildcard_answers_only_names_that_do_not_exist),
		cmocka_unit_test(wildcard_at_the_root_and_none),
		cmocka_unit_test(lookup_a_gives_all_addresses_in_order),
		cmocka_unit_test(lookup_aaaa),
		cmocka_unit_test(lookup_mx_keeps_preference_and_drops_final_dot),
		cmocka_unit_test(lookup_null_mx_is_an_empty_name),
		cmocka_unit_test(lookup_ptr),
		cmocka_unit_test(lookup_txt_holds_any_byte),
		cmocka_unit_test(lookup_spf_type_is_separate_from_txt),
		cmocka_unit_test(lookup_empty_txt_is_a_record),
		cmocka_unit_test(lookup_is_zero_copy),
		cmocka_unit_test(names_ignore_case_and_final_dot),
		cmocka_unit_test(names_may_hold_odd_bytes),
		cmocka_unit_test(names_fold_only_ascii_letters),
		cmocka_unit_test(names_compare_every_byte),
		cmocka_unit_test(add_refuses_names_dns_cannot_carry),
		cmocka_unit_test(lookup_of_impossible_names_is_nxdomain),
		cmocka_unit_test(lookup_bad_arguments_are_einval),
		cmocka_unit_test(missing_name_is_nxdomain_with_negative_ttl),
		cmocka_unit_test(other_type_is_nodata_with_negative_ttl),
		cmocka_unit_test(name_above_an_existing_name_is_nodata),
		cmocka_unit_test(add_empty_makes_nodata),
		cmocka_unit_test(timeout_name_tempfails_every_type),
		cmocka_unit_test(timeout_name_still_answers_its_records),
		cmocka_unit_test(cname_is_followed_for_other_types),
		cmocka_unit_test(cname_question_gets_the_cname),
		cmocka_unit_test(cname_to_missing_name_is_nxdomain),
		cmocka_unit_test(cname_to_name_without_the_type_is_nodata),
		cmocka_unit_test(cname_chain_of_8_is_followed),
		cmocka_unit_test(cname_chain_of_9_is_tempfail),
		cmocka_unit_test(cname_loop_is_tempfail),
		cmocka_unit_test(cname_and_other_data_refused),
		cmocka_unit_test(add_drops_exact_duplicates),
		cmocka_unit_test(add_checks_data_length_per_type),
		cmocka_unit_test(add_caps_text_at_65535_bytes),
		cmocka_unit_test(add_caps_records_per_set),
		cmocka_unit_test(many_names_all_found),
		cmocka_unit_test(allocation_failure_changes_nothing),
		cmocka_unit_test(resolver_delivers_in_wait_in_order),
		cmocka_unit_test(resolver_cancel_means_no_callback),
		cmocka_unit_test(resolver_callback_may_submit),
		cmocka_unit_test(resolver_queue_may_grow_during_wait),
		cmocka_unit_test(resolver_callback_may_cancel_a_queued_question),
		cmocka_unit_test(resolver_free_with_pending_never_calls_back),
		cmocka_unit_test(resolver_refused_submit_never_calls_back),
		cmocka_unit_test(resolver_caps_pending_questions),
		cmocka_unit_test(resolver_wrappers_are_null_safe),
		cmocka_unit_test(names_of_types_and_statuses),
		cmocka_unit_test(concurrent_lookups_from_4_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
