/*
 * Unit tests of lib/spf/output.c: Received-SPF (RFC 7208 §9.1),
 * Authentication-Results (RFC 8601 §2.7.2) and RFC 7372 replies. Results
 * are built by hand; every test compares whole strings, got against want.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

/* RFC 5322 §2.1.1: a line MUST be no more than 998 characters. */
#define LINE_MAX_5322 998u

/* A believable MAIL FROM pass; tests change what they need. */
static struct spfkit_result base_result(enum spfkit_result_code code)
{
	struct spfkit_result r;

	memset(&r, 0, sizeof(r));
	r.code = code;
	r.identity = SPFKIT_IDENTITY_MAILFROM;
	r.identity_domain = "example.com";
	r.sender = "alice@example.com";
	r.helo = "mail.example.com";
	r.client_ip = "192.0.2.1";
	r.receiver = "mx.example.org";
	r.mechanism = "-all";
	r.domain = "example.com";
	return r;
}

/* Format into a roomy buffer and check the return equals the length. */
static const char *received(const struct spfkit_result *r, char *buf, size_t size)
{
	int n = spfkit_format_received_spf(r, 1, buf, size);

	assert_true(n >= 0);
	assert_int_equal((size_t)n, strlen(buf));
	return buf;
}

static const char *auth_results(const struct spfkit_result *r, const char *id, char *buf,
				size_t size)
{
	int n = spfkit_format_auth_results(r, id, 1, buf, size);

	assert_true(n >= 0);
	assert_int_equal((size_t)n, strlen(buf));
	return buf;
}

/* Only printable ASCII and space: no CR, LF, TAB, NUL, DEL or 8-bit byte. */
static void assert_clean_line(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f)
			fail_msg("got byte 0x%02x in output, want printable ASCII only", c);
	}
}

/* ---- Received-SPF, one per result ----------------------------------- */

static void rspf_pass(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];

	(void)state;
	r.mechanism = "mx";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: pass (mx.example.org: domain of alice@example.com designates "
		"192.0.2.1 as permitted sender) client-ip=192.0.2.1; "
		"envelope-from=\"alice@example.com\"; helo=mail.example.com; "
		"receiver=mx.example.org; identity=mailfrom; mechanism=mx");
}

static void rspf_fail(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[1024];

	(void)state;
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: fail (mx.example.org: domain of alice@example.com does not "
		"designate 192.0.2.1 as permitted sender) client-ip=192.0.2.1; "
		"envelope-from=\"alice@example.com\"; helo=mail.example.com; "
		"receiver=mx.example.org; identity=mailfrom; mechanism=-all");
}

static void rspf_softfail(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_SOFTFAIL);
	char buf[1024];

	(void)state;
	r.mechanism = "~all";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: softfail (mx.example.org: domain of alice@example.com probably "
		"does not designate 192.0.2.1 as permitted sender) client-ip=192.0.2.1; "
		"envelope-from=\"alice@example.com\"; helo=mail.example.com; "
		"receiver=mx.example.org; identity=mailfrom; mechanism=~all");
}

static void rspf_neutral_default(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_NEUTRAL);
	char buf[1024];

	(void)state;
	r.mechanism = "default"; /* §9.1: "if no mechanisms matched" */
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: neutral (mx.example.org: domain of alice@example.com makes no "
		"assertion about 192.0.2.1) client-ip=192.0.2.1; "
		"envelope-from=\"alice@example.com\"; helo=mail.example.com; "
		"receiver=mx.example.org; identity=mailfrom; mechanism=default");
}

static void rspf_none(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_NONE);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.domain = NULL;
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: none (mx.example.org: no SPF record found for domain of "
		"alice@example.com) client-ip=192.0.2.1; envelope-from=\"alice@example.com\"; "
		"helo=mail.example.com; receiver=mx.example.org; identity=mailfrom");
}

static void rspf_permerror_problem(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PERMERROR);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.problem = "example.com: \"v=spf1 a:%{z}\" at offset 9: unknown macro letter 'z'";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: permerror (mx.example.org: permanent error checking domain of "
		"alice@example.com) client-ip=192.0.2.1; envelope-from=\"alice@example.com\"; "
		"helo=mail.example.com; receiver=mx.example.org; identity=mailfrom; "
		"problem=\"example.com: \\\"v=spf1 a:%{z}\\\" at offset 9: unknown macro "
		"letter 'z'\"");
}

static void rspf_temperror_problem(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_TEMPERROR);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.problem = "TXT example.com: timeout";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: temperror (mx.example.org: temporary error checking domain of "
		"alice@example.com) client-ip=192.0.2.1; envelope-from=\"alice@example.com\"; "
		"helo=mail.example.com; receiver=mx.example.org; identity=mailfrom; "
		"problem=\"TXT example.com: timeout\"");
}

static void rspf_problem_only_for_errors(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[1024];

	(void)state;
	r.problem = "should not be shown";
	assert_null(strstr(received(&r, buf, sizeof(buf)), "problem="));
}

static void rspf_helo_identity(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];

	(void)state;
	r.identity = SPFKIT_IDENTITY_HELO;
	r.identity_domain = "mail.example.com";
	r.sender = "postmaster@mail.example.com";
	r.mechanism = "a";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: pass (mx.example.org: domain of mail.example.com designates "
		"192.0.2.1 as permitted sender) client-ip=192.0.2.1; helo=mail.example.com; "
		"receiver=mx.example.org; identity=helo; mechanism=a");
}

static void rspf_without_name(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];
	int n;

	(void)state;
	r.mechanism = "mx";
	n = spfkit_format_received_spf(&r, 0, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_memory_equal(buf, "pass (mx.example.org: ", 22);
}

static void rspf_ipv6_and_mechanism_quoted(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];

	(void)state;
	r.client_ip = "2001:db8::1";
	r.mechanism = "ip6:2001:db8::/32";
	r.sender = "bob.smith@example.com";
	r.helo = NULL;
	r.receiver = NULL;
	/* ':' is not atext, so both are quoted-strings (§9.1 grammar) */
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: pass (unknown: domain of bob.smith@example.com designates "
		"2001:db8::1 as permitted sender) client-ip=\"2001:db8::1\"; "
		"envelope-from=\"bob.smith@example.com\"; identity=mailfrom; "
		"mechanism=\"ip6:2001:db8::/32\"");
}

static void rspf_empty_sender_shows_domain(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_NONE);
	char buf[1024];

	(void)state;
	r.sender = "";
	r.identity_domain = "mail.example.com";
	r.mechanism = NULL;
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: none (mx.example.org: no SPF record found for domain of "
		"mail.example.com) client-ip=192.0.2.1; helo=mail.example.com; "
		"receiver=mx.example.org; identity=mailfrom");
}

/* ---- truncation and errors ------------------------------------------ */

static void rspf_truncates_like_snprintf(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char full[1024], small[20];
	int n, m;

	(void)state;
	n = spfkit_format_received_spf(&r, 1, full, sizeof(full));
	memset(small, 'X', sizeof(small));
	m = spfkit_format_received_spf(&r, 1, small, sizeof(small));
	assert_int_equal(m, n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, full, sizeof(small) - 1);
}

static void rspf_measures_with_null_buffer(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char full[1024];
	int n;

	(void)state;
	n = spfkit_format_received_spf(&r, 1, full, sizeof(full));
	assert_int_equal(spfkit_format_received_spf(&r, 1, NULL, 0), n);
}

static void rspf_size_one_gives_empty_string(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char one[1] = { 'X' };

	(void)state;
	assert_true(spfkit_format_received_spf(&r, 1, one, 1) > 1);
	assert_int_equal(one[0], '\0');
}

static void rspf_rejects_bad_arguments(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[64];

	(void)state;
	assert_int_equal(spfkit_format_received_spf(NULL, 1, buf, sizeof(buf)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_format_received_spf(&r, 1, NULL, 10), SPFKIT_EINVAL);
	r.code = (enum spfkit_result_code)7;
	assert_int_equal(spfkit_format_received_spf(&r, 1, buf, sizeof(buf)), SPFKIT_EINVAL);
}

/* ---- hostile values -------------------------------------------------- */

static void rspf_crlf_in_helo_cannot_inject(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.helo = "evil\r\nX-Spam: no";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: pass (mx.example.org: domain of alice@example.com designates "
		"192.0.2.1 as permitted sender) client-ip=192.0.2.1; "
		"envelope-from=\"alice@example.com\"; helo=\"evil??X-Spam: no\"; "
		"receiver=mx.example.org; identity=mailfrom");
}

static void rspf_crlf_in_sender_cannot_inject(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.helo = NULL;
	r.sender = "a\r\nb@example.com";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: fail (mx.example.org: domain of a??b@example.com does not designate "
		"192.0.2.1 as permitted sender) client-ip=192.0.2.1; "
		"envelope-from=\"a??b@example.com\"; receiver=mx.example.org; identity=mailfrom");
}

static void rspf_quotes_and_parens_escaped(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.helo = NULL;
	r.receiver = "a(b)\\c";
	r.sender = "\"x) y\\\"@example.com";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: pass (a\\(b\\)\\\\c: domain of \"x\\) y\\\\\"@example.com designates "
		"192.0.2.1 as permitted sender) client-ip=192.0.2.1; "
		"envelope-from=\"\\\"x) y\\\\\\\"@example.com\"; receiver=\"a(b)\\\\c\"; "
		"identity=mailfrom");
}

static void rspf_non_ascii_replaced(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[1024];

	(void)state;
	r.mechanism = NULL;
	r.receiver = NULL;
	r.helo = "m\xc3\xa4il.example\x7f";
	r.sender = "j\xf6rg@example.com";
	assert_string_equal(received(&r, buf, sizeof(buf)),
		"Received-SPF: pass (unknown: domain of j?rg@example.com designates 192.0.2.1 as "
		"permitted sender) client-ip=192.0.2.1; envelope-from=\"j?rg@example.com\"; "
		"helo=\"m??il.example?\"; identity=mailfrom");
}

static void rspf_long_value_is_cut(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char helo[2049], want[256], buf[2048];

	(void)state;
	memset(helo, 'a', sizeof(helo) - 1);
	helo[sizeof(helo) - 1] = '\0';
	r.helo = helo;
	r.mechanism = NULL;
	/* a cut value is no longer a dot-atom: quoted, 120 bytes, then "..." */
	snprintf(want, sizeof(want), "helo=\"%.120s...\";", helo);
	assert_non_null(strstr(received(&r, buf, sizeof(buf)), want));
}

/* The worst inputs we can think of, 2 KiB each, in every field at once. */
static void rspf_hostile_fields_stay_one_short_line(void **state)
{
	static const char fill[] = { '"', '(', ')', '\\', '\r', '\n', 'a', '.', '\xff' };
	char v[sizeof(fill)][2049], buf[4096];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(fill); k++) {
		struct spfkit_result r = base_result(SPFKIT_RESULT_PERMERROR);
		int n;

		memset(v[k], fill[k], 2048);
		v[k][2048] = '\0';
		r.sender = r.helo = r.receiver = r.mechanism = r.problem = v[k];
		r.client_ip = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255";
		n = spfkit_format_received_spf(&r, 1, buf, sizeof(buf));
		assert_true(n > 0);
		if ((size_t)n > LINE_MAX_5322)
			fail_msg("fill 0x%02x: got %d bytes, want <= %u", (unsigned char)fill[k], n,
				 LINE_MAX_5322);
		assert_clean_line(buf);
		r.identity = SPFKIT_IDENTITY_HELO;
		n = spfkit_format_auth_results(&r, v[k], 1, buf, sizeof(buf));
		assert_true(n > 0 && (size_t)n <= LINE_MAX_5322);
		assert_clean_line(buf);
	}
}

/* Every byte value in every session field: the output stays clean. */
static void rspf_every_byte_value_is_safe(void **state)
{
	char v[4], buf[1024];
	unsigned c;

	(void)state;
	for (c = 1; c < 256; c++) {
		struct spfkit_result r = base_result(SPFKIT_RESULT_TEMPERROR);

		v[0] = 'x';
		v[1] = (char)c;
		v[2] = 'y';
		v[3] = '\0';
		r.sender = r.helo = r.receiver = r.mechanism = r.problem = r.identity_domain = v;
		received(&r, buf, sizeof(buf));
		assert_clean_line(buf);
		auth_results(&r, v, buf, sizeof(buf));
		assert_clean_line(buf);
		r.code = SPFKIT_RESULT_FAIL;
		r.explanation = v;
		assert_true(spfkit_format_smtp_reply(&r, buf, sizeof(buf)) > 0);
		assert_clean_line(buf);
	}
}

/* ---- Authentication-Results ----------------------------------------- */

static void ar_mailfrom_domain(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[512];

	(void)state;
	assert_string_equal(auth_results(&r, "mx.example.org", buf, sizeof(buf)),
			    "Authentication-Results: mx.example.org; spf=pass "
			    "smtp.mailfrom=example.com");
}

static void ar_helo(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[512];

	(void)state;
	r.identity = SPFKIT_IDENTITY_HELO;
	r.identity_domain = "mail.example.com";
	assert_string_equal(auth_results(&r, "mx.example.org", buf, sizeof(buf)),
			    "Authentication-Results: mx.example.org; spf=fail "
			    "smtp.helo=mail.example.com");
}

static void ar_method_entry_only(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_SOFTFAIL);
	char buf[512];
	int n;

	(void)state;
	n = spfkit_format_auth_results(&r, NULL, 0, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "spf=softfail smtp.mailfrom=example.com");
}

static void ar_without_name(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_NEUTRAL);
	char buf[512];

	(void)state;
	assert_true(spfkit_format_auth_results(&r, "mx.example.org", 0, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "mx.example.org; spf=neutral smtp.mailfrom=example.com");
}

static void ar_empty_mailfrom_uses_helo_domain(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[512];

	(void)state;
	r.sender = "postmaster@mail.example.com"; /* §2.4 */
	r.identity_domain = "mail.example.com";
	assert_string_equal(auth_results(&r, "mx.example.org", buf, sizeof(buf)),
			    "Authentication-Results: mx.example.org; spf=pass "
			    "smtp.mailfrom=mail.example.com");
}

static void ar_domain_from_sender_when_missing(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PERMERROR);
	char buf[512];

	(void)state;
	r.identity_domain = NULL;
	r.sender = "\"a@b\"@example.net";
	assert_string_equal(auth_results(&r, "mx.example.org", buf, sizeof(buf)),
			    "Authentication-Results: mx.example.org; spf=permerror "
			    "smtp.mailfrom=example.net");
}

static void ar_no_domain_no_property(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_NONE);
	char buf[512];

	(void)state;
	r.identity_domain = NULL;
	r.sender = NULL;
	assert_string_equal(auth_results(&r, "mx.example.org", buf, sizeof(buf)),
			    "Authentication-Results: mx.example.org; spf=none");
}

static void ar_quotes_non_tokens(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_NONE);
	char buf[512];

	(void)state;
	r.identity_domain = "[192.0.2.1]";
	assert_string_equal(auth_results(&r, "mx (main)", buf, sizeof(buf)),
			    "Authentication-Results: \"mx (main)\"; spf=none "
			    "smtp.mailfrom=\"[192.0.2.1]\"");
}

static void ar_crlf_cannot_inject(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[512];

	(void)state;
	r.identity = SPFKIT_IDENTITY_HELO;
	r.helo = "x\r\nDKIM-Signature: \"forged\"";
	assert_string_equal(auth_results(&r, "mx.example.org", buf, sizeof(buf)),
			    "Authentication-Results: mx.example.org; spf=fail "
			    "smtp.helo=\"x??DKIM-Signature: \\\"forged\\\"\"");
}

static void ar_rejects_bad_arguments(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char buf[64];

	(void)state;
	assert_int_equal(spfkit_format_auth_results(NULL, "x", 1, buf, sizeof(buf)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_format_auth_results(&r, "x", 1, NULL, 1), SPFKIT_EINVAL);
	r.code = (enum spfkit_result_code)-1;
	assert_int_equal(spfkit_format_auth_results(&r, "x", 1, buf, sizeof(buf)), SPFKIT_EINVAL);
}

static void ar_truncates_like_snprintf(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PASS);
	char small[10];

	(void)state;
	assert_int_equal(spfkit_format_auth_results(&r, "mx.example.org", 1, small, sizeof(small)),
			 (int)strlen("Authentication-Results: mx.example.org; spf=pass "
				     "smtp.mailfrom=example.com"));
	assert_string_equal(small, "Authentic");
}

/* ---- RFC 7372 replies ------------------------------------------------ */

static void reply_codes_per_result(void **state)
{
	static const struct {
		enum spfkit_result_code code;
		int want;
		const char *enhanced;
	} cases[] = {
		{ SPFKIT_RESULT_FAIL, 550, "5.7.23" },      { SPFKIT_RESULT_PERMERROR, 550, "5.7.24" },
		{ SPFKIT_RESULT_TEMPERROR, 451, "4.7.24" }, { SPFKIT_RESULT_SOFTFAIL, 0, "" },
		{ SPFKIT_RESULT_NEUTRAL, 0, "" },           { SPFKIT_RESULT_NONE, 0, "" },
		{ SPFKIT_RESULT_PASS, 0, "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spfkit_result r = base_result(cases[i].code);
		struct spfkit_smtp_reply rep;

		spfkit_smtp_reply_for(&r, &rep);
		if (rep.code != cases[i].want || strcmp(rep.enhanced, cases[i].enhanced) != 0)
			fail_msg("result %d: got %d %s, want %d %s", (int)cases[i].code, rep.code,
				 rep.enhanced, cases[i].want, cases[i].enhanced);
	}
}

static void reply_for_null_is_no_reply(void **state)
{
	struct spfkit_smtp_reply rep = { 1, "x" };

	(void)state;
	spfkit_smtp_reply_for(NULL, &rep);
	assert_int_equal(rep.code, 0);
	assert_string_equal(rep.enhanced, "");
}

static void reply_fail_with_explanation(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[512];

	(void)state;
	r.explanation = "example.com does not designate 192.0.2.1 as permitted sender";
	assert_true(spfkit_format_smtp_reply(&r, buf, sizeof(buf)) > 0);
	assert_string_equal(buf,
		"550 5.7.23 example.com does not designate 192.0.2.1 as permitted sender");
}

static void reply_fail_default_text(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[512];

	(void)state;
	assert_true(spfkit_format_smtp_reply(&r, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "550 5.7.23 SPF validation failed");
}

static void reply_permerror_with_problem(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_PERMERROR);
	char buf[512];

	(void)state;
	r.problem = "more than 10 DNS-querying terms";
	assert_true(spfkit_format_smtp_reply(&r, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "550 5.7.24 SPF validation error: more than 10 DNS-querying terms");
}

static void reply_temperror_default_text(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_TEMPERROR);
	char buf[512];

	(void)state;
	assert_true(spfkit_format_smtp_reply(&r, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "451 4.7.24 SPF validation error");
}

static void reply_refuses_non_rejecting_results(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_SOFTFAIL);
	char buf[512];

	(void)state;
	assert_int_equal(spfkit_format_smtp_reply(&r, buf, sizeof(buf)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_format_smtp_reply(NULL, buf, sizeof(buf)), SPFKIT_EINVAL);
}

static void reply_explanation_crlf_replaced(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char buf[512];

	(void)state;
	r.explanation = "go away\r\n250 OK";
	assert_true(spfkit_format_smtp_reply(&r, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "550 5.7.23 go away??250 OK");
}

static void reply_long_explanation_cut(void **state)
{
	struct spfkit_result r = base_result(SPFKIT_RESULT_FAIL);
	char exp[2049], buf[4096];
	int n;

	(void)state;
	memset(exp, 'e', sizeof(exp) - 1);
	exp[sizeof(exp) - 1] = '\0';
	r.explanation = exp;
	n = spfkit_format_smtp_reply(&r, buf, sizeof(buf));
	/* "550 5.7.23 " + 400 bytes + "..."; RFC 5321 §4.5.3.1.5 allows 512 with CRLF */
	assert_int_equal(n, 11 + 400 + 3);
	assert_string_equal(buf + 411, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rspf_pass),
		cmocka_unit_test(rspf_fail),
		cmocka_unit_test(rspf_softfail),
		cmocka_unit_test(rspf_neutral_default),
		cmocka_unit_test(rspf_none),
		cmocka_unit_test(rspf_permerror_problem),
		cmocka_unit_test(rspf_temperror_problem),
		cmocka_unit_test(rspf_problem_only_for_errors),
		cmocka_unit_test(rspf_helo_identity),
		cmocka_unit_test(rspf_without_name),
		cmocka_unit_test(rspf_ipv6_and_mechanism_quoted),
		cmocka_unit_test(rspf_empty_sender_shows_domain),
		cmocka_unit_test(rspf_truncates_like_snprintf),
		cmocka_unit_test(rspf_measures_with_null_buffer),
		cmocka_unit_test(rspf_size_one_gives_empty_string),
		cmocka_unit_test(rspf_rejects_bad_arguments),
		cmocka_unit_test(rspf_crlf_in_helo_cannot_inject),
		cmocka_unit_test(rspf_crlf_in_sender_cannot_inject),
		cmocka_unit_test(rspf_quotes_and_parens_escaped),
		cmocka_unit_test(rspf_non_ascii_replaced),
		cmocka_unit_test(rspf_long_value_is_cut),
		cmocka_unit_test(rspf_hostile_fields_stay_one_short_line),
		cmocka_unit_test(rspf_every_byte_value_is_safe),
		cmocka_unit_test(ar_mailfrom_domain),
		cmocka_unit_test(ar_helo),
		cmocka_unit_test(ar_method_entry_only),
		cmocka_unit_test(ar_without_name),
		cmocka_unit_test(ar_empty_mailfrom_uses_helo_domain),
		cmocka_unit_test(ar_domain_from_sender_when_missing),
		cmocka_unit_test(ar_no_domain_no_property),
		cmocka_unit_test(ar_quotes_non_tokens),
		cmocka_unit_test(ar_crlf_cannot_inject),
		cmocka_unit_test(ar_rejects_bad_arguments),
		cmocka_unit_test(ar_truncates_like_snprintf),
		cmocka_unit_test(reply_codes_per_result),
		cmocka_unit_test(reply_for_null_is_no_reply),
		cmocka_unit_test(reply_fail_with_explanation),
		cmocka_unit_test(reply_fail_default_text),
		cmocka_unit_test(reply_permerror_with_problem),
		cmocka_unit_test(reply_temperror_default_text),
		cmocka_unit_test(reply_refuses_non_rejecting_results),
		cmocka_unit_test(reply_explanation_crlf_replaced),
		cmocka_unit_test(reply_long_explanation_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
