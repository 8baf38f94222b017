/*
 * Internationalized mail (RFC 8616 §4, issue 30): U-labels become
 * A-labels before the lookup and before every macro expansion that
 * yields a domain (lib/spf/idna.c). A table of names through the
 * conversion, then evaluations over small zones: pass and fail for a
 * U-label sender, %{d} %{o} %{h} %{s} %{l}, HELO names, names that are
 * no IDN. The library's own allocator: the sanitizer build finds leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

#include "core.h"
#include "idna.h"

/* ---- the conversion ---------------------------------------------------- */

struct conv_case {
	const char *in;
	int rc;           /* 0 ASCII (untouched), 1 converted, SPFKIT_ESYNTAX */
	const char *want; /* the A-labels, or a word of the reason */
};

static const struct conv_case conv_cases[] = {
	{"münchen.example", 1, "xn--mnchen-3ya.example"},
	{"MÜNCHEN.Example", 1, "xn--mnchen-3ya.example"},       /* UTS #46 lowercases */
	{"sub.münchen.example", 1, "sub.xn--mnchen-3ya.example"},
	{"münchen\xe3\x80\x82" "example", 1, "xn--mnchen-3ya.example"}, /* ideographic full stop */
	{"münchen.example.", 1, "xn--mnchen-3ya.example."},
	{"faß.de", 1, "xn--fa-hia.de"},                            /* non-transitional: ß kept */
	{"bücher.例え.jp", 1, "xn--bcher-kva.xn--r8jz45g.jp"},
	{"xn--mnchen-3ya.example", 0, "xn--mnchen-3ya.example"},   /* A-labels: as they are */
	{"XN--MNCHEN-3YA.Example", 0, "XN--MNCHEN-3YA.Example"},
	{"Example.COM", 0, "Example.COM"},
	{"\xff.example", SPFKIT_ESYNTAX, "UTF-8"},                 /* not UTF-8 */
	{"m\xc3" ".example", SPFKIT_ESYNTAX, "UTF-8"},             /* a cut sequence */
	{"\xc0\xae.example", SPFKIT_ESYNTAX, "UTF-8"},             /* overlong '.' */
	{"\xe2\x9d\xa4.example", SPFKIT_ESYNTAX, "disallows"},     /* U+2764 heart */
	{"-ü.example", SPFKIT_ESYNTAX, "hyphen"},
	{"\xcc\x81" "a.example", SPFKIT_ESYNTAX, "combining"},    /* U+0301 first */
};

static void conversion_table(void **state)
{
	struct spfkit__arena ar;
	size_t i;

	(void)state;
	spfkit__arena_init(&ar, NULL, 4096, 0);
	for (i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		const struct conv_case *c = &conv_cases[i];
		const char *out = NULL, *why = NULL;
		size_t n = 0;
		int rc = spfkit__idna_to_alabels(&ar, c->in, strlen(c->in), &out, &n, &why);

		if (rc != c->rc)
			fail_msg("%s: rc %d, want %d (%s)", c->in, rc, c->rc, why ? why : "");
		if (rc == SPFKIT_ESYNTAX) {
			assert_non_null(why);
			if (strstr(why, c->want) == NULL)
				fail_msg("%s: reason \"%s\" lacks \"%s\"", c->in, why, c->want);
			continue;
		}
		assert_int_equal(n, strlen(c->want));
		assert_memory_equal(out, c->want, n);
		if (rc == 0)
			assert_ptr_equal(out, c->in); /* ASCII: not even copied */
	}
	spfkit__arena_free(&ar);
}

/* Too long to be a name in A-labels: refused, never cut. */
static void conversion_overlong(void **state)
{
	struct spfkit__arena ar;
	char name[4200];
	const char *out, *why = NULL;
	size_t n, i;

	(void)state;
	spfkit__arena_init(&ar, NULL, 4096, 0);
	/* one label of 70 "ü": its A-label would pass 63 octets */
	for (i = 0, n = 0; i < 70; i++) {
		memcpy(name + n, "\xc3\xbc", 2);
		n += 2;
	}
	memcpy(name + n, ".example", 8);
	n += 8;
	assert_int_equal(spfkit__idna_to_alabels(&ar, name, n, &out, &n, &why), SPFKIT_ESYNTAX);
	assert_non_null(strstr(why, "63"));
	/* 4 KiB of labels: refused before libidn2 sees it */
	for (i = 0, n = 0; n + 12 < sizeof(name); i++) {
		memcpy(name + n, "\xc3\xbc" "abc.", 6);
		n += 6;
	}
	why = NULL;
	assert_int_equal(spfkit__idna_to_alabels(&ar, name, n, &out, &n, &why), SPFKIT_ESYNTAX);
	assert_non_null(strstr(why, "253"));
	spfkit__arena_free(&ar);
}

/* A NUL among non-ASCII bytes: refused, never the part before it converted
 * (found by fuzz/fuzz_idna.c: "f\0\t\x9f.de" became "f"). */
static void conversion_nul(void **state)
{
	static const char bad[][24] = {"f\0\t\x9f.de", "m\xc3\xbcnchen.example\0.evil",
				       "\0\xc3\xbc.example"};
	static const size_t len[] = {7, 22, 11};
	struct spfkit__arena ar;
	const char *out, *why;
	size_t i, n;

	(void)state;
	spfkit__arena_init(&ar, NULL, 4096, 0);
	for (i = 0; i < 3; i++) {
		why = NULL;
		assert_int_equal(spfkit__idna_to_alabels(&ar, bad[i], len[i], &out, &n, &why),
				 SPFKIT_ESYNTAX);
		assert_non_null(strstr(why, "NUL"));
	}
	spfkit__arena_free(&ar);
}

static void ascii_scan(void **state)
{
	(void)state;
	assert_true(spfkit__ascii_only("", 0));
	assert_true(spfkit__ascii_only("a.example", 9));
	assert_false(spfkit__ascii_only("a.\x80", 3));
	assert_false(spfkit__ascii_only("\xff", 1));
	/* the length, not the NUL, ends the scan */
	assert_false(spfkit__ascii_only("ab\0\xc3", 4));
}

/* The scan reads eight bytes a step and the tail overlapping: a high bit
 * is seen at every position of every length around those steps, and a
 * byte just past the length is not read as part of the name. */
static void ascii_scan_every_position(void **state)
{
	char buf[41];
	size_t len, at;

	(void)state;
	for (len = 0; len < sizeof(buf) - 1; len++) {
		memset(buf, 'a', sizeof(buf));
		buf[len] = (char)0xc3;
		assert_true(spfkit__ascii_only(buf, len));
		for (at = 0; at < len; at++) {
			buf[at] = (char)0x80;
			assert_false(spfkit__ascii_only(buf, len));
			buf[at] = 'a';
		}
	}
}

/* ---- evaluations -------------------------------------------------------- */

struct fixture {
	struct spfkit_zone *zone;
	struct spfkit_ctx *ctx;
	struct spfkit_eval *ev;
	const struct spfkit_result *res;
	char notes[4096]; /* the trace's notes and queries, one per line */
	size_t notes_len;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct spfkit_config cfg;

	assert_non_null(fx);
	spfkit_config_init(&cfg);
	cfg.receiver = "mx.receiver.example";
	assert_int_equal(spfkit_zone_new(NULL, &fx->zone), 0);
	assert_int_equal(spfkit_ctx_new(&cfg, &fx->ctx), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	spfkit_eval_free(fx->ev);
	spfkit_ctx_free(fx->ctx);
	spfkit_zone_free(fx->zone);
	free(fx);
	return 0;
}

static void txt(struct fixture *fx, const char *name, const char *text)
{
	assert_int_equal(spfkit_zone_add(fx->zone, name, strlen(name), SPFKIT_RR_TXT, 300, text,
					 strlen(text), 0), 0);
}

static void addr4(struct fixture *fx, const char *name, const unsigned char a[4])
{
	assert_int_equal(spfkit_zone_add(fx->zone, name, strlen(name), SPFKIT_RR_A, 300, a, 4, 0), 0);
}

static void keep_trace(void *arg, const struct spfkit_trace_event *e)
{
	struct fixture *fx = arg;
	const char *text = e->kind == SPFKIT_TRACE_QUERY ? e->name : e->text;
	size_t n = e->kind == SPFKIT_TRACE_QUERY ? strlen(e->name) : e->text_len;

	if (e->kind != SPFKIT_TRACE_NOTE && e->kind != SPFKIT_TRACE_QUERY)
		return;
	if (n + 2 > sizeof(fx->notes) - fx->notes_len)
		return;
	memcpy(fx->notes + fx->notes_len, text, n);
	fx->notes_len += n;
	fx->notes[fx->notes_len++] = '\n';
	fx->notes[fx->notes_len] = '\0';
}

static enum spfkit_result_code check_id(struct fixture *fx, const char *ip, const char *sender,
					const char *helo, enum spfkit_identity id)
{
	struct spfkit_resolver *r;
	struct spfkit_request req;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse(ip, strlen(ip), &req.ip), 0);
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = helo;
	req.helo_len = strlen(helo);
	req.identity = id;
	req.now = 1700000000;
	req.trace = keep_trace;
	req.trace_arg = fx;
	fx->notes_len = 0;
	fx->notes[0] = '\0';
	spfkit_eval_free(fx->ev);
	fx->ev = NULL;
	assert_int_equal(spfkit_zone_resolver(fx->zone, &r), 0);
	assert_int_equal(spfkit_check(fx->ctx, r, &req, &fx->ev), 0);
	spfkit_resolver_free(r);
	fx->res = spfkit_eval_result(fx->ev);
	assert_non_null(fx->res);
	return fx->res->code;
}

static enum spfkit_result_code check(struct fixture *fx, const char *ip, const char *sender)
{
	return check_id(fx, ip, sender, "helo.example.org", SPFKIT_IDENTITY_MAILFROM);
}

#define assert_result(got, want) \
	assert_string_equal(spfkit_result_name(got), spfkit_result_name(want))
#define assert_traced(fx, text)                                                     \
	do {                                                                        \
		if (strstr((fx)->notes, (text)) == NULL)                            \
			fail_msg("trace lacks \"%s\":\n%s", (text), (fx)->notes);   \
	} while (0)
#define assert_not_traced(fx, text)                                                 \
	do {                                                                        \
		if (strstr((fx)->notes, (text)) != NULL)                            \
			fail_msg("trace has \"%s\":\n%s", (text), (fx)->notes);     \
	} while (0)

static const unsigned char loopback2[4] = {127, 0, 0, 2};

/* The issue's own example: the record of the A-label name decides. */
static void ulabel_sender_pass_and_fail(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "xn--mnchen-3ya.example", "v=spf1 ip4:192.0.2.1 -all");
	assert_result(check(fx, "192.0.2.1", "user@münchen.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->identity_domain, "xn--mnchen-3ya.example");
	assert_string_equal(fx->res->domain, "xn--mnchen-3ya.example");
	/* the sender as received, and its ASCII form, for the headers */
	assert_string_equal(fx->res->sender, "user@münchen.example");
	assert_string_equal(fx->res->sender_ascii, "user@xn--mnchen-3ya.example");
	assert_traced(fx, "user@münchen.example is checked as user@xn--mnchen-3ya.example");
	assert_traced(fx, "xn--mnchen-3ya.example\n"); /* the question asked */
	assert_not_traced(fx, "münchen.example\n");
	assert_result(check(fx, "192.0.2.9", "user@MÜNCHEN.Example"), SPFKIT_RESULT_FAIL);
	assert_string_equal(fx->res->identity_domain, "xn--mnchen-3ya.example");
	/* %{o} of the default explanation: A-labels */
	assert_string_equal(fx->res->explanation,
			    "xn--mnchen-3ya.example does not designate 192.0.2.9 as permitted sender");
	/* no local part: postmaster@, with the domain in A-labels */
	assert_result(check(fx, "192.0.2.1", "münchen.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->sender_ascii, "xn--mnchen-3ya.example");
}

static void ulabel_subdomain_and_ascii_untouched(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "mail.xn--bcher-kva.example", "v=spf1 ip4:192.0.2.0/24 -all");
	assert_result(check(fx, "192.0.2.7", "a@mail.bücher.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->identity_domain, "mail.xn--bcher-kva.example");
	/* the A-label form is untouched: same case, same record, no note */
	assert_result(check(fx, "192.0.2.7", "a@MAIL.XN--BCHER-KVA.example"), SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->identity_domain, "MAIL.XN--BCHER-KVA.example");
	assert_ptr_equal(fx->res->sender, fx->res->sender_ascii);
	assert_not_traced(fx, "RFC 8616");
}

/* %{d} %{o} %{h} and their transformers see A-labels (RFC 8616 §4). */
static void macros_expand_alabels(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "xn--mnchen-3ya.example",
	    "v=spf1 exists:%{d2}.d.list.example exists:%{or}.o.list.example "
	    "exists:%{h1}.%{h2r}.h.list.example exists:%{s}.s.list.example -all");
	addr4(fx, "xn--mnchen-3ya.example.d.list.example", loopback2);
	assert_result(check(fx, "192.0.2.1", "u@münchen.example"), SPFKIT_RESULT_PASS);
	assert_traced(fx, "xn--mnchen-3ya.example.d.list.example\n");

	txt(fx, "xn--caf-dma.example", "v=spf1 exists:%{or}.o.list.example -all");
	addr4(fx, "example.xn--caf-dma.o.list.example", loopback2);
	assert_result(check(fx, "192.0.2.1", "u@café.example"), SPFKIT_RESULT_PASS);

	/* %{h} of a U-label HELO, which RFC 8616 forbids but names a domain */
	txt(fx, "h.example", "v=spf1 exists:%{h1}.%{h2r}.h.list.example -all");
	addr4(fx, "example.xn--bcher-kva.mx.h.list.example", loopback2);
	assert_result(check_id(fx, "192.0.2.1", "u@h.example", "mx.bücher.example",
			       SPFKIT_IDENTITY_MAILFROM), SPFKIT_RESULT_PASS);
	assert_traced(fx, "HELO mx.bücher.example is in U-labels");
	assert_string_equal(fx->res->helo, "mx.bücher.example");
	assert_string_equal(fx->res->helo_ascii, "mx.xn--bcher-kva.example");

	/* %{s} with an ASCII local part: the whole address, domain in A-labels */
	txt(fx, "xn--tst-qla.example", "v=spf1 exists:%{s}.s.list.example -all");
	addr4(fx, "u@xn--tst-qla.example.s.list.example", loopback2);
	assert_result(check(fx, "192.0.2.1", "u@täst.example"), SPFKIT_RESULT_PASS);
}

/* RFC 8616 §4: "terms that include %{s} or %{l} do not match anything"
 * for a non-ASCII local part; no error, the next term decides. */
static void utf8_local_part_matches_nothing(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "l.example",
	    "v=spf1 exists:%{l}.l.list.example include:%{l}.inc.example a:%{s}.s.example "
	    "ip4:192.0.2.1 -all");
	assert_result(check(fx, "192.0.2.1", "jürgen@l.example"), SPFKIT_RESULT_PASS);
	assert_null(fx->res->problem);
	assert_traced(fx, "exists:%{l}.l.list.example matches nothing");
	assert_traced(fx, "include:%{l}.inc.example matches nothing");
	assert_traced(fx, "local part is not ASCII");
	assert_not_traced(fx, "list.example\n"); /* never asked, not even ahead */
	assert_not_traced(fx, "inc.example\n");
	assert_null(fx->res->sender_ascii);
	assert_string_equal(fx->res->sender, "jürgen@l.example");
	assert_result(check(fx, "192.0.2.9", "jürgen@l.example"), SPFKIT_RESULT_FAIL);
	/* an ASCII local part still matches */
	addr4(fx, "bob.l.list.example", loopback2);
	assert_result(check(fx, "192.0.2.9", "bob@l.example"), SPFKIT_RESULT_PASS);
}

/* A redirect to a name with no ASCII form is malformed: permerror (§6.1). */
static void utf8_local_part_redirect(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "r.example", "v=spf1 redirect=%{l}.r.example");
	assert_result(check(fx, "192.0.2.1", "jürgen@r.example"), SPFKIT_RESULT_PERMERROR);
}

/* RFC 7208 §4.3: a <domain> that is not a valid IDN is malformed: none. */
static void invalid_idn_sender_is_none(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "example", "v=spf1 -all"); /* never reached */
	assert_result(check(fx, "192.0.2.1", "u@\xff\xfe.example"), SPFKIT_RESULT_NONE);
	assert_traced(fx, "not valid UTF-8");
	assert_int_equal(fx->res->queries, 0);
	assert_null(fx->res->sender_ascii);
	assert_result(check(fx, "192.0.2.1", "u@\xe2\x9d\xa4.example"), SPFKIT_RESULT_NONE);
	assert_traced(fx, "disallows");
	assert_int_equal(fx->res->queries, 0);
	assert_result(check(fx, "192.0.2.1", "u@xn--zz.\xc3\xbc.example"), SPFKIT_RESULT_NONE);
	assert_int_equal(fx->res->queries, 0);
}

/* The HELO identity: a U-label HELO is checked as its A-labels; one that
 * is no IDN is none; with MAIL FROM checked, %{h} of it matches nothing. */
static void helo_identity(void **state)
{
	struct fixture *fx = *state;

	txt(fx, "mx.xn--bcher-kva.example", "v=spf1 ip4:192.0.2.1 -all");
	assert_result(check_id(fx, "192.0.2.1", "", "mx.bücher.example", SPFKIT_IDENTITY_HELO),
		      SPFKIT_RESULT_PASS);
	assert_string_equal(fx->res->identity_domain, "mx.xn--bcher-kva.example");
	assert_string_equal(fx->res->sender_ascii, "postmaster@mx.xn--bcher-kva.example");
	assert_result(check_id(fx, "192.0.2.1", "", "mx.\xff.example", SPFKIT_IDENTITY_HELO),
		      SPFKIT_RESULT_NONE);
	assert_null(fx->res->helo_ascii);

	txt(fx, "hh.example", "v=spf1 exists:%{h}.h.list.example ip4:192.0.2.1 -all");
	assert_result(check_id(fx, "192.0.2.1", "u@hh.example", "mx.\xff.example",
			       SPFKIT_IDENTITY_MAILFROM), SPFKIT_RESULT_PASS);
	assert_traced(fx, "exists:%{h}.h.list.example matches nothing");
	assert_not_traced(fx, "h.list.example\n");
}

/* ---- headers (RFC 8616 §3, RFC 6532) ------------------------------------- */

#define assert_has(text, part)                                                       \
	do {                                                                         \
		if (strstr((text), (part)) == NULL)                                  \
			fail_msg("\"%s\" lacks \"%s\"", (text), (part));           \
	} while (0)

/* ASCII fields: A-labels, never '?'; SMTPUTF8 fields: the sender as sent. */
static void headers_carry_the_sender(void **state)
{
	struct fixture *fx = *state;
	char line[1024];

	txt(fx, "xn--mnchen-3ya.example", "v=spf1 ip4:192.0.2.1 -all");
	assert_result(check_id(fx, "192.0.2.9", "user@münchen.example", "mx.bücher.example",
			       SPFKIT_IDENTITY_MAILFROM), SPFKIT_RESULT_FAIL);
	assert_true(spfkit_format_received_spf(fx->res, 1, line, sizeof(line)) > 0);
	assert_null(strchr(line, '?'));
	assert_has(line, "domain of user@xn--mnchen-3ya.example does not designate");
	assert_has(line, "envelope-from=\"user@xn--mnchen-3ya.example\"");
	assert_has(line, "helo=mx.xn--bcher-kva.example;");
	assert_true(spfkit_format_auth_results(fx->res, "mx.example", 1, line, sizeof(line)) > 0);
	assert_string_equal(line, "Authentication-Results: mx.example; spf=fail "
				  "smtp.mailfrom=xn--mnchen-3ya.example");

	assert_true(spfkit_format_received_spf_utf8(fx->res, 1, line, sizeof(line)) > 0);
	assert_null(strchr(line, '?'));
	assert_has(line, "domain of user@münchen.example does not designate");
	assert_has(line, "envelope-from=\"user@münchen.example\"");
	assert_has(line, "helo=mx.bücher.example;");
	assert_true(spfkit_format_auth_results_utf8(fx->res, "mx.example", 1, line, sizeof(line)) >
		    0);
	assert_string_equal(line, "Authentication-Results: mx.example; spf=fail "
				  "smtp.mailfrom=münchen.example");

	/* a UTF-8 local part has no ASCII form: the checked domain instead */
	assert_result(check(fx, "192.0.2.9", "jürgen@münchen.example"), SPFKIT_RESULT_FAIL);
	assert_true(spfkit_format_received_spf(fx->res, 0, line, sizeof(line)) > 0);
	assert_null(strchr(line, '?'));
	assert_has(line, "domain of xn--mnchen-3ya.example does not");
	assert_null(strstr(line, "envelope-from"));
	assert_true(spfkit_format_received_spf_utf8(fx->res, 0, line, sizeof(line)) > 0);
	assert_has(line, "envelope-from=\"jürgen@münchen.example\"");
}

/* The UTF-8 writers keep only valid UTF-8 text: no control, no broken
 * sequence, and a cut never splits a character. */
static void utf8_headers_stay_safe(void **state)
{
	struct spfkit_result r;
	char line[2048], sender[300];
	size_t i, n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.code = SPFKIT_RESULT_NONE;
	r.identity = SPFKIT_IDENTITY_MAILFROM;
	r.client_ip = "192.0.2.1";
	r.sender = "a\xc2\x85\xc0\xae\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82@x.example"; /* C1 NEL,
		overlong, surrogate, past U+10FFFF, cut */
	r.identity_domain = "x.example";
	assert_true(spfkit_format_received_spf_utf8(&r, 1, line, sizeof(line)) > 0);
	for (i = 0; line[i] != '\0'; i++)
		assert_true((unsigned char)line[i] >= 0x20 && (unsigned char)line[i] < 0x7f);
	/* 100 "é" in the comment (cap 64 bytes): cut between characters */
	for (i = 0, n = 0; i < 100; i++, n += 2)
		memcpy(sender + n, "\xc3\xa9", 2);
	memcpy(sender + n, "@x.example", 11);
	r.sender = sender;
	assert_true(spfkit_format_received_spf_utf8(&r, 1, line, sizeof(line)) > 0);
	assert_has(line, "\xc3\xa9...");
	assert_null(strstr(line, "\xc3..."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conversion_table),
		cmocka_unit_test(conversion_overlong),
		cmocka_unit_test(conversion_nul),
		cmocka_unit_test(ascii_scan),
		cmocka_unit_test(ascii_scan_every_position),
		cmocka_unit_test_setup_teardown(ulabel_sender_pass_and_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(ulabel_subdomain_and_ascii_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(macros_expand_alabels, setup, teardown),
		cmocka_unit_test_setup_teardown(utf8_local_part_matches_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(utf8_local_part_redirect, setup, teardown),
		cmocka_unit_test_setup_teardown(invalid_idn_sender_is_none, setup, teardown),
		cmocka_unit_test_setup_teardown(helo_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(headers_carry_the_sender, setup, teardown),
		cmocka_unit_test(utf8_headers_stay_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
