/*
 * milter/text.c: is an Authentication-Results field ours (RFC 8601
 * §2.2, §5), reply text for smfi_setreply(), the parts of an action.
 * Pure functions, got/want.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "milter.h"

static void ar_ours_forms(void **state)
{
	static const char *const ours[] = {
		"mx.receiver.test; spf=pass",
		"MX.RECEIVER.TEST;spf=pass",
		"  mx.receiver.test",
		"\r\n\tmx.receiver.test 1; none",
		"(comment) mx.receiver.test; spf=pass",
		"(a (nested \\) one)) mx.receiver.test; x",
		"\"mx.receiver.test\"; spf=pass",
		"\"mx.receiver.\\test\"; spf=pass",
		"mx.receiver.test(c); spf=pass",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!spfkit__mta_ar_is_ours(ours[i], "mx.receiver.test"))
			fail_msg("got not ours, want ours: %s", ours[i]);
}

static void ar_not_ours(void **state)
{
	static const char *const others[] = {
		"other.example; spf=pass",
		"mx.receiver.test.evil; spf=pass",
		"mx.receiver.testx",
		"(mx.receiver.test) other; x",   /* the id in a comment */
		"",
		"   ",
		"; spf=pass",
		"\"\"; spf=pass",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (spfkit__mta_ar_is_ours(others[i], "mx.receiver.test"))
			fail_msg("got ours, want not ours: %s", others[i]);
	assert_false(spfkit__mta_ar_is_ours(NULL, "x"));
	assert_false(spfkit__mta_ar_is_ours("x", ""));
}

static void ar_deep_comments_bounded(void **state)
{
	char v[4096];

	(void)state;
	memset(v, '(', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	/* unclosed and nested: deleted (tests/mta/test_header_field.c, issue 33) */
	assert_true(spfkit__mta_ar_is_ours(v, "x"));
}

static void reply_text_escapes(void **state)
{
	char out[16];

	(void)state;
	assert_string_equal(spfkit__milter_reply_text("100% a\r\nb", out, sizeof(out)),
			    "100%% a??b");
	/* never half of a "%%" at the cut */
	assert_string_equal(spfkit__milter_reply_text("abcdefghijklmn%x", out, sizeof(out)),
			    "abcdefghijklmn");
	assert_string_equal(spfkit__milter_reply_text("\xc3\xa9", out, sizeof(out)), "??");
}

static void action_parts(void **state)
{
	char x[16];

	(void)state;
	assert_string_equal(spfkit__milter_action_text("550 5.7.23 no way", x, sizeof(x)), "no way");
	assert_string_equal(x, "5.7.23");
	assert_string_equal(spfkit__milter_action_text("defer_if_permit 4.7.24 later", x, sizeof(x)),
			    "later");
	assert_string_equal(x, "4.7.24");
	assert_string_equal(spfkit__milter_action_text("550 Message rejected", x, sizeof(x)),
			    "Message rejected");
	assert_string_equal(x, "");
	assert_string_equal(spfkit__milter_action_text("550 5.7.2a3 x", x, sizeof(x)), "5.7.2a3 x");
	assert_string_equal(x, "");
}

static void header_split(void **state)
{
	char name[8];

	(void)state;
	assert_string_equal(spfkit__milter_header_split("A-B: v; x", name, sizeof(name)), "v; x");
	assert_string_equal(name, "A-B");
	assert_null(spfkit__milter_header_split("no colon", name, sizeof(name)));
	assert_null(spfkit__milter_header_split("Too-Long-Name: v", name, sizeof(name)));
}

static void log_escape(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(spfkit__milter_esc("a\nb\\", 100, buf, sizeof(buf)), "a\\x0ab\\x5c");
	assert_string_equal(spfkit__milter_esc("abcdef", 3, buf, sizeof(buf)), "abc...");
	assert_string_equal(spfkit__milter_esc(NULL, 3, buf, sizeof(buf)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ar_ours_forms),
		cmocka_unit_test(ar_not_ours),
		cmocka_unit_test(ar_deep_comments_bounded),
		cmocka_unit_test(reply_text_escapes),
		cmocka_unit_test(action_parts),
		cmocka_unit_test(header_split),
		cmocka_unit_test(log_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
