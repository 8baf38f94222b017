/*
 * milter/proto.c and milter/macros.c: the milter protocol's framing and
 * packet layouts, and the MTA's macros, over hostile bytes (issue 33:
 * an odd MACRO packet crashed libmilter). Pure functions, got/want.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "macros.h"
#include "proto.h"

#define BYTES(s) (const unsigned char *)(s), sizeof(s) - 1

static void frame_lengths(void **state)
{
	uint32_t size = 7;

	(void)state;
	assert_int_equal(spfkit__milter_frame(BYTES("\0\0\0"), &size), 0);
	assert_int_equal(spfkit__milter_frame(BYTES("\0\0\0\1"), &size), 0); /* the command byte */
	assert_int_equal(spfkit__milter_frame(BYTES("\0\0\0\1Q"), &size), 1);
	assert_int_equal(size, 5);
	assert_int_equal(spfkit__milter_frame(BYTES("\0\0\0\0rest"), &size), 1); /* empty packet */
	assert_int_equal(size, 4);
	assert_int_equal(spfkit__milter_frame(BYTES("\0\1\0\0x"), &size), 0); /* 65536: the cap */
	assert_int_equal(spfkit__milter_frame(BYTES("\0\1\0\1x"), &size), -1);
	assert_int_equal(size, 65537);
	assert_int_equal(spfkit__milter_frame(BYTES("\xff\xff\xff\xff"), &size), -1);
	assert_int_equal(size, 0xffffffffu);
}

static void strings_bounded(void **state)
{
	const char *s[4];
	size_t len[4];

	(void)state;
	assert_int_equal(spfkit__milter_strings(BYTES("a\0bc\0tail"), s, len, 4), 2);
	assert_string_equal(s[1], "bc");
	assert_int_equal(len[1], 2);
	assert_int_equal(spfkit__milter_strings(BYTES("no nul"), s, len, 4), 0);
	assert_int_equal(spfkit__milter_strings(BYTES("a\0b\0c\0d\0e\0"), s, NULL, 4), 4);
	assert_int_equal(spfkit__milter_strings((const unsigned char *)"", 0, s, len, 4), 0);
}

/* RFC 6531 §3.4: the SMTPUTF8 parameter among MAIL FROM's strings after the address. */
static void mail_smtputf8(void **state)
{
	(void)state;
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("<u@x>\0SMTPUTF8\0")), 1);
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("<u@x>\0SIZE=10\0smtputf8\0")), 1);
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("<u@x>\0BODY=8BITMIME\0")), 0);
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("<u@x>\0")), 0);
	/* the address is no parameter, nor is a prefix, nor bytes after the last NUL */
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("SMTPUTF8\0")), 0);
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("<u@x>\0SMTPUTF8X\0SMTPUTF\0")), 0);
	assert_int_equal(spfkit__milter_mail_smtputf8(BYTES("<u@x>\0SMTPUTF8")), 0);
	assert_int_equal(spfkit__milter_mail_smtputf8((const unsigned char *)"", 0), 0);
}

static void connect_forms(void **state)
{
	struct spfkit__milter_connect c;

	(void)state;
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host\0" "4\0\x19" "192.0.2.1\0"), &c), 0);
	assert_string_equal(c.hostname, "host");
	assert_int_equal(c.family, '4');
	assert_int_equal(c.port, 25);
	assert_string_equal(c.addr, "192.0.2.1");
	assert_int_equal(spfkit__milter_connect_parse(BYTES("localhost\0U"), &c), 0);
	assert_int_equal(c.family, 'U');
	assert_string_equal(c.addr, "");
	/* truncated anywhere: refused */
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host\0" "4"), &c), -1);
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host\0" "4\0"), &c), -1);
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host\0" "4\0\x19" "192.0.2.1"), &c), -1);
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host"), &c), -1);
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host\0"), &c), -1);
	assert_int_equal(spfkit__milter_connect_parse(BYTES("host\0" "X\0\x19" "a\0"), &c), -1);
}

static void optneg(void **state)
{
	uint32_t v, a, p;

	(void)state;
	assert_int_equal(spfkit__milter_optneg_parse(BYTES("\0\0\0\6\0\0\1\xff\0\x1f\xff\xff"), &v, &a, &p), 0);
	assert_int_equal(v, 6);
	assert_int_equal(a, 0x1ff);
	assert_int_equal(p, 0x1fffff);
	assert_int_equal(spfkit__milter_optneg_parse(BYTES("\0\0\0\6\0\0\1\xff\0\x1f\xff"), &v, &a, &p), -1);
}

static void macros_odd_and_garbage(void **state)
{
	struct spfkit__milter_macros m;
	size_t dropped;

	(void)state;
	memset(&m, 0, sizeof(m));
	/* libmilter's crash: one string, no value */
	assert_int_equal(spfkit__milter_macros_set(&m, 2, BYTES("{auth_authen}\0"), &dropped), 0);
	assert_int_equal(dropped, 14);
	assert_null(spfkit__milter_macro(&m, "{auth_authen}"));
	/* a whole pair, then an odd string, then bytes without NUL */
	assert_int_equal(spfkit__milter_macros_set(&m, 2, BYTES("{a}\0x\0{b}\0y"), &dropped), 0);
	assert_int_equal(dropped, 5);
	assert_string_equal(spfkit__milter_macro(&m, "{a}"), "x");
	assert_null(spfkit__milter_macro(&m, "{b}"));
	assert_int_equal(spfkit__milter_macros_set(&m, 2, (const unsigned char *)"", 0, &dropped), 0);
	assert_null(spfkit__milter_macro(&m, "{a}"));
	spfkit__milter_macros_clear_from(&m, 0);
}

static void macros_lookup(void **state)
{
	struct spfkit__milter_macros m;
	size_t dropped;

	(void)state;
	memset(&m, 0, sizeof(m));
	assert_int_equal(spfkit__milter_stage('C'), 0);
	assert_int_equal(spfkit__milter_stage('E'), 6);
	assert_int_equal(spfkit__milter_stage('Z'), -1);
	assert_int_equal(spfkit__milter_stage('\0'), -1);
	assert_int_equal(spfkit__milter_macros_set(&m, 0, BYTES("j\0mx\0{i}\0C1\0"), &dropped), 0);
	assert_int_equal(spfkit__milter_macros_set(&m, 2, BYTES("i\0M1\0\0\0"), &dropped), 0);
	/* the latest stage first; "i" and "{i}" are one macro */
	assert_string_equal(spfkit__milter_macro(&m, "{i}"), "M1");
	assert_string_equal(spfkit__milter_macro(&m, "i"), "M1");
	assert_string_equal(spfkit__milter_macro(&m, "{j}"), "mx");
	assert_null(spfkit__milter_macro(&m, "{daemon_name}"));
	spfkit__milter_macros_clear_from(&m, 2);
	assert_string_equal(spfkit__milter_macro(&m, "i"), "C1");
	spfkit__milter_macros_clear_from(&m, 0);
	assert_null(spfkit__milter_macro(&m, "i"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frame_lengths),
		cmocka_unit_test(strings_bounded),
		cmocka_unit_test(mail_smtputf8),
		cmocka_unit_test(connect_forms),
		cmocka_unit_test(optneg),
		cmocka_unit_test(macros_odd_and_garbage),
		cmocka_unit_test(macros_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
