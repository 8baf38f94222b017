/*
 * spfkit__domain_valid() (RFC 7208 §4.3: a malformed or single-label
 * <domain> makes check_host() return none): named cases of each rule, and
 * random names against a plain reading of the rules, so the SSE2 path
 * for names up to 64 bytes and the byte loop for longer ones agree.
 * And the public matches the daemons' lists use: spfkit_domain_within()
 * and spfkit_ip_in_net().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/eval.h>

#include "domain.h"

static int valid(const char *s)
{
	return spfkit__domain_valid(s, strlen(s));
}

static void test_named_cases(void **state)
{
	char label63[64], label64[65], long_name[300];

	(void)state;
	assert_true(valid("example.com"));
	assert_true(valid("example.com."));  /* one trailing dot: the root */
	assert_true(valid("a.b"));
	assert_true(valid("1.example.com")); /* numeric labels, not the top one */
	assert_true(valid("example.c0m"));
	assert_true(valid("_spf.example.com"));
	assert_true(valid("my host.example.com")); /* a macro may put a space in */
	assert_false(valid(""));
	assert_false(valid("."));
	assert_false(valid("com"));            /* one label */
	assert_false(valid("com."));
	assert_false(valid("example..com"));   /* an empty label */
	assert_false(valid(".example.com"));
	assert_false(valid("example.com.."));
	assert_false(valid("192.0.2.1"));      /* an all-numeric top label */
	assert_false(valid("example.123"));
	assert_false(valid("[192.0.2.1]"));
	assert_false(valid("exa\tmple.com"));  /* control bytes cannot be asked */
	assert_false(valid("example.com\x7f"));

	memset(label63, 'a', 63);
	label63[63] = '\0';
	memset(label64, 'a', 64);
	label64[64] = '\0';
	snprintf(long_name, sizeof(long_name), "%s.com", label63);
	assert_true(valid(long_name));
	snprintf(long_name, sizeof(long_name), "%s.com", label64);
	assert_false(valid(long_name)); /* a label over 63 bytes */
	snprintf(long_name, sizeof(long_name), "x.%s", label63);
	assert_true(valid(long_name));
	/* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 bytes, the most a name has */
	snprintf(long_name, sizeof(long_name), "%s.%s.%s.%.61s", label63, label63, label63, label63);
	assert_int_equal(strlen(long_name), 253);
	assert_true(valid(long_name));
	snprintf(long_name, sizeof(long_name), "%s.%s.%s.%.62s", label63, label63, label63, label63);
	assert_false(valid(long_name)); /* 254 */
}

/* The rules read plainly, one label at a time. */
static int reference(const unsigned char *s, size_t len)
{
	size_t i, start = 0, labels = 0;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0 || len > 253 || s[0] == '[')
		return 0;
	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (i == start || i - start > 63)
			return 0;
		labels++;
		if (i < len)
			start = i + 1;
	}
	for (i = start; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return labels >= 2;
	return 0;
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Names of 0 to 130 bytes from a few telling bytes, lengths around the
 * 16- and 64-byte edges included, against reference(). */
static void test_random_names_agree(void **state)
{
	static const unsigned char alphabet[] = {'a', 'a', 'a', 'b', '7', '0', '.', '.', '-',
						 ' ', '[', 0x1f, 0x7f, 0x80, 0xff};
	unsigned char name[140];
	uint64_t x = 0x9e3779b97f4a7c15u;
	size_t len, i;
	int n, dots;

	(void)state;
	for (n = 0; n < 400000; n++) {
		len = (size_t)(next(&x) % 131);
		dots = (int)(next(&x) % 4); /* mostly plain labels, sometimes many dots */
		for (i = 0; i < len; i++) {
			uint64_t r = next(&x);

			if (dots == 0 && r % 9 != 0)
				name[i] = (unsigned char)('a' + r % 26);
			else if (r % 23 == 0)
				name[i] = alphabet[(r >> 8) % sizeof(alphabet)];
			else
				name[i] = r % 5 == 0 ? '.' : (unsigned char)('0' + r % 10);
		}
		if (spfkit__domain_valid((const char *)name, len) != reference(name, len))
			fail_msg("%.*s (%zu bytes): %d, the rules say %d", (int)len, name, len,
				 spfkit__domain_valid((const char *)name, len), reference(name, len));
	}
}

static int within(const char *name, const char *parent)
{
	return spfkit_domain_within(name, strlen(name), parent, strlen(parent));
}

static void test_domain_within(void **state)
{
	(void)state;
	assert_true(within("example.com", "example.com"));
	assert_true(within("Mail.EXAMPLE.com.", "example.COM"));
	assert_true(within("a.b.example.com", "example.com."));
	assert_false(within("xample.com", "ample.com"));
	assert_false(within("example.com", "mail.example.com"));
	assert_false(within("example.community", "example.com"));
	assert_false(spfkit_domain_within(NULL, 0, "example.com", 11));
	assert_false(spfkit_domain_within("example.com", 11, NULL, 0));
}

static struct spfkit_ip ip_of(const char *text)
{
	struct spfkit_ip ip;

	assert_int_equal(spfkit_ip_parse(text, strlen(text), &ip), 0);
	return ip;
}

static void test_ip_in_net(void **state)
{
	struct spfkit_ip a = ip_of("192.0.2.77"), n4 = ip_of("192.0.2.64");
	struct spfkit_ip b = ip_of("2001:db8::1:2"), n6 = ip_of("2001:db8::");

	(void)state;
	assert_true(spfkit_ip_in_net(&a, &n4, 26));
	assert_true(spfkit_ip_in_net(&a, &n4, 28));
	assert_false(spfkit_ip_in_net(&a, &n4, 29));
	assert_true(spfkit_ip_in_net(&a, &n4, 0));
	assert_true(spfkit_ip_in_net(&a, &a, 32));
	assert_false(spfkit_ip_in_net(&a, &n4, 33));
	assert_true(spfkit_ip_in_net(&b, &n6, 96));
	assert_false(spfkit_ip_in_net(&b, &n6, 112));
	assert_true(spfkit_ip_in_net(&b, &b, 128));
	assert_false(spfkit_ip_in_net(&b, &n6, 129));
	/* another family, a NULL */
	assert_false(spfkit_ip_in_net(&a, &n6, 0));
	assert_false(spfkit_ip_in_net(&b, &n4, 0));
	assert_false(spfkit_ip_in_net(NULL, &n4, 0));
	assert_false(spfkit_ip_in_net(&a, NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_cases),
		cmocka_unit_test(test_random_names_agree),
		cmocka_unit_test(test_domain_within),
		cmocka_unit_test(test_ip_in_net),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
