/* Unit tests of policyd/proto.c: the bounded policy request reader and the reply writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "escape.h"
#include "proto.h"

/* A Postfix 3.x request, shortened. */
static const char REQ[] = "request=smtpd_access_policy\n"
			  "protocol_state=RCPT\n"
			  "helo_name=mx.example.org\n"
			  "sender=alice@example.org\n"
			  "client_address=192.0.2.1\n"
			  "instance=123.456.7\n"
			  "\n";

struct reader {
	struct spfkit__policy_request req;
	struct spfkit__policy_diag diag;
	size_t used;
};

static int read_all(struct reader *r, const char *in, size_t len)
{
	spfkit__policy_init(&r->req);
	r->used = 0;
	return spfkit__policy_read(in, len, &r->req, &r->used, &r->diag);
}

static void expect_refused(const char *in, size_t len, int want_rc,
			   enum spfkit__policy_error want, size_t want_off)
{
	struct reader r;
	int rc = read_all(&r, in, len);

	if (rc != want_rc || r.diag.code != want || r.diag.offset != want_off)
		fail_msg("input \"%.40s\": got rc %d code %s offset %zu, want rc %d code %s offset %zu", in,
			 rc, spfkit__policy_strerror(r.diag.code), r.diag.offset, want_rc,
			 spfkit__policy_strerror(want), want_off);
}

static void complete_request_gives_attrs(void **state)
{
	struct reader r;
	const char *v;
	size_t n;

	(void)state;
	assert_int_equal(read_all(&r, REQ, sizeof(REQ) - 1), SPFKIT__POLICY_COMPLETE);
	assert_int_equal(r.used, sizeof(REQ) - 1);
	assert_int_equal(r.req.count, 6);
	v = spfkit__policy_get(&r.req, "sender", &n);
	assert_non_null(v);
	assert_int_equal(n, strlen("alice@example.org"));
	assert_memory_equal(v, "alice@example.org", n);
}

static void absent_attr_is_null(void **state)
{
	struct reader r;
	size_t n = 99;

	(void)state;
	assert_int_equal(read_all(&r, REQ, sizeof(REQ) - 1), SPFKIT__POLICY_COMPLETE);
	assert_null(spfkit__policy_get(&r.req, "recipient", &n));
	assert_int_equal(n, 0);
}

static void pipelined_requests_stop_at_first(void **state)
{
	char two[2 * sizeof(REQ)];
	struct reader r;

	(void)state;
	memcpy(two, REQ, sizeof(REQ) - 1);
	memcpy(two + sizeof(REQ) - 1, REQ, sizeof(REQ) - 1);
	assert_int_equal(read_all(&r, two, 2 * (sizeof(REQ) - 1)), SPFKIT__POLICY_COMPLETE);
	assert_int_equal(r.used, sizeof(REQ) - 1);
}

static void partial_line_needs_more(void **state)
{
	struct reader r;

	(void)state;
	assert_int_equal(read_all(&r, "request=smtpd_acc", 17), SPFKIT__POLICY_NEED_MORE);
}

static void request_without_empty_line_needs_more(void **state)
{
	struct reader r;

	(void)state;
	assert_int_equal(read_all(&r, REQ, sizeof(REQ) - 2), SPFKIT__POLICY_NEED_MORE);
}

static void byte_by_byte_completes_on_last_byte(void **state)
{
	struct reader r;
	size_t i, len = sizeof(REQ) - 1;
	int rc = SPFKIT__POLICY_NEED_MORE;

	(void)state;
	spfkit__policy_init(&r.req);
	for (i = 1; i <= len; i++) {
		rc = spfkit__policy_read(REQ, i, &r.req, &r.used, &r.diag);
		if (i < len && rc != SPFKIT__POLICY_NEED_MORE)
			fail_msg("after %zu bytes: got %d, want NEED_MORE", i, rc);
	}
	assert_int_equal(rc, SPFKIT__POLICY_COMPLETE);
	assert_int_equal(r.used, len);
	assert_int_equal(r.req.count, 6);
}

static void resumed_read_survives_moved_bytes(void **state)
{
	char a[sizeof(REQ)], b[sizeof(REQ)];
	struct reader r;
	const char *v;
	size_t n;

	(void)state;
	memcpy(a, REQ, sizeof(REQ));
	spfkit__policy_init(&r.req);
	assert_int_equal(spfkit__policy_read(a, 40, &r.req, &r.used, &r.diag), SPFKIT__POLICY_NEED_MORE);
	memcpy(b, REQ, sizeof(REQ));
	memset(a, 'X', sizeof(a));
	assert_int_equal(spfkit__policy_read(b, sizeof(REQ) - 1, &r.req, &r.used, &r.diag),
			 SPFKIT__POLICY_COMPLETE);
	v = spfkit__policy_get(&r.req, "request", &n);
	assert_non_null(v);
	assert_memory_equal(v, "smtpd_access_policy", n);
}

static void crlf_is_tolerated(void **state)
{
	static const char in[] = "request=smtpd_access_policy\r\nsender=a@b\r\n\r\n";
	struct reader r;
	const char *v;
	size_t n;

	(void)state;
	assert_int_equal(read_all(&r, in, sizeof(in) - 1), SPFKIT__POLICY_COMPLETE);
	v = spfkit__policy_get(&r.req, "sender", &n);
	assert_int_equal(n, 3);
	assert_memory_equal(v, "a@b", 3);
}

static void cr_at_end_of_input_needs_more(void **state)
{
	struct reader r;

	(void)state;
	assert_int_equal(read_all(&r, "sender=a\r", 9), SPFKIT__POLICY_NEED_MORE);
}

static void value_may_hold_equal_tab_utf8_and_be_empty(void **state)
{
	static const char in[] = "a=b=c\nb=x\ty\nc=\xc3\xa9\nd=\n\n";
	struct reader r;
	const char *v;
	size_t n;

	(void)state;
	assert_int_equal(read_all(&r, in, sizeof(in) - 1), SPFKIT__POLICY_COMPLETE);
	v = spfkit__policy_get(&r.req, "a", &n);
	assert_int_equal(n, 3);
	assert_memory_equal(v, "b=c", 3);
	v = spfkit__policy_get(&r.req, "d", &n);
	assert_non_null(v);
	assert_int_equal(n, 0);
}

/* Line of `n` bytes "x=xxxx...", then `tail`. */
static size_t make_line(char *buf, size_t n, const char *tail)
{
	size_t t = strlen(tail);

	memset(buf, 'x', n);
	buf[1] = '=';
	memcpy(buf + n, tail, t);
	return n + t;
}

static char big[SPFKIT_POLICY_MAX_REQUEST + 8192];

static void line_at_cap_is_accepted(void **state)
{
	struct reader r;
	size_t len = make_line(big, SPFKIT_POLICY_MAX_LINE, "\n\n");

	(void)state;
	assert_int_equal(read_all(&r, big, len), SPFKIT__POLICY_COMPLETE);
	len = make_line(big, SPFKIT_POLICY_MAX_LINE, "\r\n\n");
	assert_int_equal(read_all(&r, big, len), SPFKIT__POLICY_COMPLETE);
}

static void line_over_cap_refused_before_its_lf(void **state)
{
	size_t len = make_line(big, SPFKIT_POLICY_MAX_LINE + 1, "");

	(void)state;
	expect_refused(big, len, SPFKIT_E2BIG, SPFKIT__POLICY_ELINE_LONG, SPFKIT_POLICY_MAX_LINE);
}

static void too_many_attributes_refused(void **state)
{
	size_t i, o = 0, bad_line = 0;

	(void)state;
	for (i = 0; i <= SPFKIT_POLICY_MAX_ATTRS; i++) {
		bad_line = o;
		o += (size_t)snprintf(big + o, sizeof(big) - o, "a%zu=1\n", i);
	}
	expect_refused(big, o, SPFKIT_E2BIG, SPFKIT__POLICY_ETOO_MANY, bad_line);
}

static void request_over_cap_refused(void **state)
{
	size_t o = 0, i = 0;

	(void)state;
	/* long lines, few attributes: the request cap, not the count, trips */
	while (o < SPFKIT_POLICY_MAX_REQUEST + 8) {
		o += (size_t)snprintf(big + o, sizeof(big) - o, "n%zu=", i++);
		memset(big + o, 'v', 4000);
		o += 4000;
		big[o++] = '\n';
	}
	expect_refused(big, o, SPFKIT_E2BIG, SPFKIT__POLICY_EREQ_LONG, SPFKIT_POLICY_MAX_REQUEST);
}

static void nul_refused_at_its_offset(void **state)
{
	(void)state;
	expect_refused("sender=a\0b\n\n", 12, SPFKIT_ESYNTAX, SPFKIT__POLICY_ENUL, 8);
}

static void control_byte_refused(void **state)
{
	(void)state;
	expect_refused("sender=a\x1b[2J\n\n", 14, SPFKIT_ESYNTAX, SPFKIT__POLICY_ECONTROL, 8);
	expect_refused("sender=a\x7f\n\n", 11, SPFKIT_ESYNTAX, SPFKIT__POLICY_ECONTROL, 8);
}

static void bare_cr_refused(void **state)
{
	(void)state;
	expect_refused("sender=a\rX-Bad: 1\n\n", 19, SPFKIT_ESYNTAX, SPFKIT__POLICY_ECONTROL, 8);
}

static void line_without_equal_refused(void **state)
{
	(void)state;
	expect_refused("request=x\nGET / HTTP/1.0\n\n", 26, SPFKIT_ESYNTAX, SPFKIT__POLICY_ENO_EQUAL,
		       10);
}

static void empty_name_refused(void **state)
{
	(void)state;
	expect_refused("=value\n\n", 8, SPFKIT_ESYNTAX, SPFKIT__POLICY_EBAD_NAME, 0);
}

static void bad_name_byte_refused(void **state)
{
	(void)state;
	expect_refused("send er=x\n\n", 11, SPFKIT_ESYNTAX, SPFKIT__POLICY_EBAD_NAME, 4);
}

static void duplicate_name_refused(void **state)
{
	(void)state;
	expect_refused("sender=a\nsender=b\n\n", 19, SPFKIT_ESYNTAX, SPFKIT__POLICY_EDUPLICATE, 9);
}

static void empty_request_refused(void **state)
{
	(void)state;
	expect_refused("\n", 1, SPFKIT_ESYNTAX, SPFKIT__POLICY_EEMPTY, 0);
}

static void diag_names_the_line(void **state)
{
	struct reader r;

	(void)state;
	assert_int_equal(read_all(&r, "a=1\nb=2\nc\n\n", 11), SPFKIT_ESYNTAX);
	assert_int_equal(r.diag.line, 3);
}

static void reply_is_one_line_and_empty_line(void **state)
{
	struct spfkit__buf b;

	(void)state;
	spfkit__buf_init(&b, NULL, 1024);
	assert_int_equal(spfkit__policy_reply(&b, "dunno", 5), 0);
	assert_string_equal(spfkit__buf_str(&b), "action=dunno\n\n");
	spfkit__buf_free(&b);
}

static void reply_control_bytes_become_spaces(void **state)
{
	static const char text[] = "550 5.7.23 bad\r\n\nX-Injected: 1\0z";
	struct spfkit__buf b;

	(void)state;
	spfkit__buf_init(&b, NULL, 1024);
	assert_int_equal(spfkit__policy_reply(&b, text, sizeof(text) - 1), 0);
	assert_string_equal(spfkit__buf_str(&b), "action=550 5.7.23 bad   X-Injected: 1 z\n\n");
	spfkit__buf_free(&b);
}

static void reply_over_cap_fails(void **state)
{
	struct spfkit__buf b;

	(void)state;
	spfkit__buf_init(&b, NULL, 16);
	assert_int_equal(spfkit__policy_reply(&b, "prepend Received-SPF: pass", 26), SPFKIT_E2BIG);
	spfkit__buf_free(&b);
}

/* The daemon's in-place writer gives exactly spfkit__policy_reply's bytes. */
static void reply_into_matches_reply(void **state)
{
	static const char *texts[] = {"dunno", "", "550 5.7.23 bad\r\n\nX-Injected: 1\x7f" "z\x01",
				      "\n", "prepend Received-SPF: pass (a \"b\") \xc3\xa9"};
	char out[256];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct spfkit__buf b;
		size_t len = strlen(texts[i]);

		spfkit__buf_init(&b, NULL, 1024);
		assert_int_equal(spfkit__policy_reply(&b, texts[i], len), 0);
		n = spfkit__policy_reply_into(texts[i], len, out, sizeof(out));
		assert_int_equal(n, b.len);
		assert_memory_equal(out, b.data, n);
		spfkit__buf_free(&b);
	}
	/* room for "action=" + text + "\n\n" and no more: fits; one less: refused */
	assert_int_equal(spfkit__policy_reply_into("dunno", 5, out, 14), 14);
	assert_int_equal(spfkit__policy_reply_into("dunno", 5, out, 13), 0);
}

/* escape_into at every room size: the bytes of escape() with a NUL-less buffer of that size. */
static void escape_into_matches_escape_at_every_size(void **state)
{
	static const char in[] = "ab\"c\\d\x01" "efgh\xff" "ij";
	char want[64], got[64];
	size_t room, max, n;

	(void)state;
	for (max = 0; max <= sizeof(in); max++)
		for (room = 0; room < 40; room++) {
			spfkit__mta_escape(in, sizeof(in) - 1, max, want, room + 1);
			memset(got, '#', sizeof(got));
			n = spfkit__mta_escape_into(in, sizeof(in) - 1, max, got, room);
			assert_true(n <= room);
			assert_int_equal(n, strlen(want));
			assert_memory_equal(got, want, n);
			assert_int_equal(got[n], '#'); /* nothing past what it says it wrote */
		}
}

static void escape_shows_binary_as_hex(void **state)
{
	char out[64];

	(void)state;
	spfkit__mta_escape("a\0\n\"\\\xff", 6, 100, out, sizeof(out));
	assert_string_equal(out, "a\\x00\\x0a\\x22\\x5c\\xff");
}

static void escape_truncates_with_dots(void **state)
{
	char out[64];

	(void)state;
	spfkit__mta_escape("abcdefghij", 10, 4, out, sizeof(out));
	assert_string_equal(out, "abcd...");
}

static void escape_never_overflows_small_buffer(void **state)
{
	char out[6];

	(void)state;
	memset(out, 'Z', sizeof(out));
	spfkit__mta_escape("\x01\x02\x03", 3, 100, out, 5);
	assert_string_equal(out, "\\x01");
	assert_int_equal(out[5], 'Z');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(complete_request_gives_attrs),
		cmocka_unit_test(absent_attr_is_null),
		cmocka_unit_test(pipelined_requests_stop_at_first),
		cmocka_unit_test(partial_line_needs_more),
		cmocka_unit_test(request_without_empty_line_needs_more),
		cmocka_unit_test(byte_by_byte_completes_on_last_byte),
		cmocka_unit_test(resumed_read_survives_moved_bytes),
		cmocka_unit_test(crlf_is_tolerated),
		cmocka_unit_test(cr_at_end_of_input_needs_more),
		cmocka_unit_test(value_may_hold_equal_tab_utf8_and_be_empty),
		cmocka_unit_test(line_at_cap_is_accepted),
		cmocka_unit_test(line_over_cap_refused_before_its_lf),
		cmocka_unit_test(too_many_attributes_refused),
		cmocka_unit_test(request_over_cap_refused),
		cmocka_unit_test(nul_refused_at_its_offset),
		cmocka_unit_test(control_byte_refused),
		cmocka_unit_test(bare_cr_refused),
		cmocka_unit_test(line_without_equal_refused),
		cmocka_unit_test(empty_name_refused),
		cmocka_unit_test(bad_name_byte_refused),
		cmocka_unit_test(duplicate_name_refused),
		cmocka_unit_test(empty_request_refused),
		cmocka_unit_test(diag_names_the_line),
		cmocka_unit_test(reply_is_one_line_and_empty_line),
		cmocka_unit_test(reply_control_bytes_become_spaces),
		cmocka_unit_test(reply_over_cap_fails),
		cmocka_unit_test(reply_into_matches_reply),
		cmocka_unit_test(escape_into_matches_escape_at_every_size),
		cmocka_unit_test(escape_shows_binary_as_hex),
		cmocka_unit_test(escape_truncates_with_dots),
		cmocka_unit_test(escape_never_overflows_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
