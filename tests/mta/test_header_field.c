/*
 * mta/header_field.c: whose is an Authentication-Results field (RFC 8601
 * §2.2, §5; issue 33 finding 3). A table of fields claiming our id in
 * the forms lenient readers accept (OpenDMARC 1.4.2 read each of the
 * first ones as mx.test), fields of other hosts that must stay, fields
 * cut short (the OpenSMTPD filter judges a prefix), and bounded random
 * input: no crash, and the verdict on a prefix never differs from the
 * verdict on the whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "header_field.h"

#define ID "mx.test"

/* Each read as mx.test by Debian's OpenDMARC 1.4.2 (issue 33), or by a reader as lenient. */
static const char *const forged[] = {
	/* the plain forms */
	"mx.test; spf=pass smtp.mailfrom=example.com",
	"MX.TEST;spf=pass",
	"\r\n\tmx.test 1; none",
	"(comment) mx.test; spf=pass",
	"\"mx.test\"; spf=pass",
	"mx.test(c); spf=pass",
	"mx.test",
	/* issue 33: what OpenDMARC reads as mx.test */
	"mx . test; spf=pass smtp.mailfrom=example.com",
	"mx.\r\n test; spf=pass",
	"mx.\n\ttest; spf=pass",
	"mx\\.test; spf=pass",
	"m\\x.test; spf=pass",
	"mx.\"test\"; spf=pass",
	"((((((((((((((((((c)))))))))))))))))) mx.test; spf=pass", /* 18 deep */
	"(a (nested) one) other.example; spf=pass", /* nested: readers disagree */
	/* lenient readings beyond OpenDMARC's */
	"\"mx\".\"test\"; spf=pass",
	"\"mx.\" test; spf=pass",
	"mx.(c)test; spf=pass",
	"mx (c) . (d) test; spf=pass",
	"mx.te\"\"st; spf=pass",
	"m x.test; spf=pass",                 /* all white space stripped */
	"mx.test 1; spf=pass",                /* a version */
	"mx . test 1 ; spf=pass",
	"mx.test.; spf=pass",                 /* the root's dot */
	"mx.test. ; spf=pass",
	"mx.test..; spf=pass",
	"mx.test junk; spf=pass",             /* the first word */
	"mx.test .evil.example; spf=pass",
	"mx.test(c).evil.example; spf=pass",
	"\"mx.test\"evil; spf=pass",
	"\"mx.test x\"; spf=pass",            /* split at white space */
	"\"mx.test;x\" other; spf=pass",      /* split at any ';' */
	"mx.test/x; spf=pass",                /* no host name goes on with these */
	"mx.test:25; spf=pass",
	"mx.test@x; spf=pass",
	"mx.test=x; spf=pass",
	"mx.test\xc2\xa0x; spf=pass",         /* U+00A0 */
	"mx.te\xc2\xa0st; spf=pass",
	"\xef\xbb\xbfmx.test; spf=pass",      /* U+FEFF */
	"mx.test\x01; spf=pass",
	"mx.\x7ftest; spf=pass",
	"=?us-ascii?q?mx.test?=; spf=pass",   /* RFC 2047, decoded by some readers */
	"other (=?us-ascii?q?=29_mx.test?=); spf=pass",
	/* malformed, or parsed differently by different readers: deleted */
	"(unclosed mx.test",
	"(unclosed; spf=pass",
	"\"mx.test",
	"\"other.example; spf=pass",
	"other.example) mx.test; spf=pass",   /* ')' closes nothing */
	"other.example\\; spf=pass",           /* a backslash */
	"(\\) mx.test; spf=pass smtp.mailfrom=example.com)",
	"(x \" y) mx.test; spf=pass",          /* a quote mark in a comment */
	"\"(\" mx.test \")\"; spf=pass",       /* a parenthesis in quotes */
	"\"mx.receiver.\\test\"; spf=pass",
};

/* Fields of other hosts, and fields with no id at all: kept. */
static const char *const others[] = {
	"other.example; spf=pass",
	"mx.test.evil.example; spf=pass",
	"xmx.test; spf=pass",
	"mx.testx; spf=pass",
	"mx.test1; spf=pass",
	"mx.test-x; spf=pass",
	"mx.test_x; spf=pass",
	"mx.tes; spf=pass",
	"mx.test.x; spf=pass",
	"mx..test; spf=pass",
	"mx; spf=pass",
	"(mx.test) other; x",                  /* the id in a comment */
	"other (mx.test); spf=pass",
	"other.example 1; spf=pass smtp.mailfrom=mx.test",
	"other.example; spf=pass (mx.test) \\ ((((( =?x?q?y?= \"",  /* after the ';' */
	"\"other.example\"; spf=pass",
	"other.example (version 1.2); spf=pass",
	/* Microsoft's fields name no authserv-id */
	"spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=example.com; dkim=none",
	"",
	"   ",
	"; spf=pass",
	"\"\"; spf=pass",
	"()",
};

static void forged_forms_are_ours(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(forged) / sizeof(forged[0]); i++)
		if (!spfkit__mta_ar_is_ours(forged[i], ID))
			fail_msg("got not ours, want ours: [%s]", forged[i]);
}

static void other_hosts_are_kept(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (spfkit__mta_ar_is_ours(others[i], ID))
			fail_msg("got ours, want not ours: [%s]", others[i]);
	assert_false(spfkit__mta_ar_is_ours(NULL, ID));
	assert_false(spfkit__mta_ar_is_ours("mx.test", ""));
	assert_false(spfkit__mta_ar_is_ours("mx.test", NULL));
	assert_false(spfkit__mta_ar_is_ours(".", "..."));
}

static void our_id_with_a_trailing_dot(void **state)
{
	(void)state;
	assert_true(spfkit__mta_ar_is_ours("mx.test; spf=pass", "mx.test."));
	assert_true(spfkit__mta_ar_is_ours("mx.test.; spf=pass", "MX.Test."));
	assert_false(spfkit__mta_ar_is_ours("mx.test.x; spf=pass", "mx.test."));
}

static void a_nul_reads_as_space(void **state)
{
	static const char body[] = "mx.\0test; spf=pass";

	(void)state;
	assert_int_equal(spfkit__mta_ar_owner(body, sizeof(body) - 1, ID, 1), SPFKIT__MTA_AR_OURS);
	assert_int_equal(spfkit__mta_ar_owner("other\0mx.test", 13, ID, 1), SPFKIT__MTA_AR_OTHER);
}

/* The filter judges what it holds: known once the id's part has ended, or ours. */
static void prefixes(void **state)
{
	static const struct {
		const char *text;
		enum spfkit__mta_ar_owner want;
	} cases[] = {
		{"other.example;", SPFKIT__MTA_AR_OTHER},
		{"other.example", SPFKIT__MTA_AR_UNKNOWN}, /* ...mx.test could follow */
		{"mx.test\n", SPFKIT__MTA_AR_OURS},
		{"mx.test", SPFKIT__MTA_AR_UNKNOWN},       /* ...x could follow */
		{"mx.tes", SPFKIT__MTA_AR_UNKNOWN},
		{"(a)\n (b)\n", SPFKIT__MTA_AR_UNKNOWN},
		{"(unclosed\n", SPFKIT__MTA_AR_UNKNOWN},
		{"\"open\n", SPFKIT__MTA_AR_UNKNOWN},
		{"x\\", SPFKIT__MTA_AR_OURS},
		{"x=", SPFKIT__MTA_AR_UNKNOWN},
		{"", SPFKIT__MTA_AR_UNKNOWN},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum spfkit__mta_ar_owner got =
			spfkit__mta_ar_owner(cases[i].text, strlen(cases[i].text), ID, 0);

		if (got != cases[i].want)
			fail_msg("[%s]: got %d, want %d", cases[i].text, (int)got, (int)cases[i].want);
	}
}

/* 8 KiB of comments, then the id; and 1 MiB: linear, no limit of depth or length. */
static void long_fields(void **state)
{
	size_t n = 1u << 20, i;
	char *v = malloc(n + 64);

	(void)state;
	assert_non_null(v);
	for (i = 0; i + 12 < n; i += 12)
		memcpy(v + i, "(comment)\r\n ", 12);
	strcpy(v + i, "mx.test; spf=pass");
	assert_true(spfkit__mta_ar_is_ours(v, ID));
	strcpy(v + i, "other.example; spf=pass");
	assert_false(spfkit__mta_ar_is_ours(v, ID));
	assert_int_equal(spfkit__mta_ar_owner(v, 8192, ID, 0), SPFKIT__MTA_AR_UNKNOWN);
	free(v);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static unsigned next(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* Our id with white space, comments, folds and quote marks between its bytes: ours. */
static void random_splits_of_our_id(void **state)
{
	static const char *const cuts[] = {" ", "\r\n ", "\t", "(c)", " (a b) ", "\"\"", "\n\t(x)\n "};
	char v[512];
	int k;

	(void)state;
	for (k = 0; k < 20000; k++) {
		size_t n = 0, i;

		for (i = 0; ID[i] != '\0'; i++) {
			if (next(3) == 0) {
				const char *cut = cuts[next(sizeof(cuts) / sizeof(cuts[0]))];

				memcpy(v + n, cut, strlen(cut));
				n += strlen(cut);
			}
			v[n++] = next(2) ? ID[i] : (char)(ID[i] >= 'a' && ID[i] <= 'z' ? ID[i] - 32 : ID[i]);
		}
		memcpy(v + n, "; spf=pass", 11);
		if (!spfkit__mta_ar_is_ours(v, ID))
			fail_msg("got not ours, want ours: [%s]", v);
	}
}

/* Host names other than ours, written plainly: kept. */
static void random_other_hosts(void **state)
{
	static const char name[] = "abcmxtes.-_0123456789XT";
	char v[64];
	int k, kept = 0;

	(void)state;
	for (k = 0; k < 20000; k++) {
		size_t n = 1 + next(12), i;

		for (i = 0; i < n; i++)
			v[i] = name[next(sizeof(name) - 1)];
		v[n] = '\0';
		/* our id plus dots, alone, is ours; anything else spelled plainly is not */
		if (strncasecmp(v, ID, strlen(ID)) == 0 && strspn(v + strlen(ID), ".") == n - strlen(ID))
			continue;
		strcat(v, "; spf=pass");
		if (spfkit__mta_ar_is_ours(v, ID))
			fail_msg("got ours, want not ours: [%s]", v);
		kept++;
	}
	assert_true(kept > 10000);
}

/*
 * Random bytes from an alphabet of what matters: no crash (ASan), and a
 * prefix's verdict, when known, is the whole field's.
 */
static void random_bytes(void **state)
{
	static const char alphabet[] = "mx.tesMXT ()\"\\;=?\r\n\t\x01\xc2\xa0o1";
	char v[48];
	int k;

	(void)state;
	for (k = 0; k < 100000; k++) {
		size_t n = next(sizeof(v)), i;
		enum spfkit__mta_ar_owner whole;

		for (i = 0; i < n; i++)
			v[i] = alphabet[next(sizeof(alphabet) - 1)];
		whole = spfkit__mta_ar_owner(v, n, ID, 1);
		assert_true(whole == SPFKIT__MTA_AR_OURS || whole == SPFKIT__MTA_AR_OTHER);
		for (i = 0; i <= n; i++) {
			enum spfkit__mta_ar_owner part = spfkit__mta_ar_owner(v, i, ID, 0);

			if (part != SPFKIT__MTA_AR_UNKNOWN && part != whole)
				fail_msg("prefix of %zu of %zu bytes: got %d, whole %d", i, n, (int)part,
					 (int)whole);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forged_forms_are_ours),
		cmocka_unit_test(other_hosts_are_kept),
		cmocka_unit_test(our_id_with_a_trailing_dot),
		cmocka_unit_test(a_nul_reads_as_space),
		cmocka_unit_test(prefixes),
		cmocka_unit_test(long_fields),
		cmocka_unit_test(random_splits_of_our_id),
		cmocka_unit_test(random_other_hosts),
		cmocka_unit_test(random_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
