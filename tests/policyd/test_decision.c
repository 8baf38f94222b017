/*
 * Unit tests of mta/decision.c: each policy value x each result for both
 * identities, the reply texts, the headers, and the CVE-2019-20790 trap
 * (a HELO pass is never reported as a MAIL FROM pass).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decision.h"

static const char *const codes[] = {"none", "neutral", "pass", "fail", "softfail", "temperror",
				    "permerror"};
#define N_CODES 7

static struct spfkit__mta_config *conf(const char *text)
{
	struct spfkit__mta_config *cfg = NULL;

	if (spfkit__mta_config_parse(text, strlen(text), "t", NULL, NULL, NULL, &cfg) != 0)
		fail_msg("config \"%s\" refused", text);
	return cfg;
}

static struct spfkit_result result(enum spfkit_result_code code, enum spfkit_identity id)
{
	struct spfkit_result r;

	memset(&r, 0, sizeof(r));
	r.code = code;
	r.identity = id;
	r.client_ip = "192.0.2.1";
	r.helo = "mx.example.org";
	r.receiver = "mx.receiver.test";
	if (id == SPFKIT_IDENTITY_HELO) {
		r.identity_domain = "mx.example.org";
		r.sender = "postmaster@mx.example.org";
	} else {
		r.identity_domain = "example.com";
		r.sender = "alice@example.com";
	}
	if (code == SPFKIT_RESULT_FAIL)
		r.explanation = "example.com does not designate 192.0.2.1 as permitted sender";
	if (code == SPFKIT_RESULT_PERMERROR)
		r.problem = "record has two 'all' terms";
	if (code == SPFKIT_RESULT_TEMPERROR)
		r.problem = "DNS timeout for example.com TXT";
	r.mechanism = code == SPFKIT_RESULT_PASS ? "ip4:192.0.2.0/24" : "-all";
	return r;
}

/* A session: HELO result h (or -1: not checked), MAIL FROM result m (-1: not checked). */
struct session {
	struct spfkit_result hres, mres;
	struct spfkit__mta_input in;
};

static void session(struct session *s, int h, int m, int null_sender)
{
	memset(s, 0, sizeof(*s));
	s->in.sender = null_sender ? "" : "alice@example.com";
	s->in.sender_len = strlen(s->in.sender);
	s->in.helo = "mx.example.org";
	s->in.helo_len = strlen(s->in.helo);
	s->in.client_ip = "192.0.2.1";
	s->in.receiver = "mx.receiver.test";
	if (h >= 0) {
		s->hres = result((enum spfkit_result_code)h, SPFKIT_IDENTITY_HELO);
		s->in.helo_check.checked = 1;
		s->in.helo_check.res = &s->hres;
	}
	if (m >= 0) {
		s->mres = result((enum spfkit_result_code)m, SPFKIT_IDENTITY_MAILFROM);
		s->in.mfrom_check.checked = 1;
		s->in.mfrom_check.res = &s->mres;
	}
}

static void decide(const char *cfgtext, int h, int m, int null_sender, struct spfkit__mta_decision *d)
{
	struct spfkit__mta_config *cfg = conf(cfgtext);
	struct session s;

	session(&s, h, m, null_sender);
	spfkit__mta_decide(cfg, &s.in, d);
	spfkit__mta_config_free(cfg);
}

static void expect_contains(const char *got, const char *want)
{
	if (strstr(got, want) == NULL)
		fail_msg("got \"%s\", want it to contain \"%s\"", got, want);
}

static void expect_lacks(const char *got, const char *unwanted)
{
	if (strstr(got, unwanted) != NULL)
		fail_msg("got \"%s\", want it not to contain \"%s\"", got, unwanted);
}

/* Rows: policy; columns: none neutral pass fail softfail temperror permerror. */
struct row {
	const char *policy;
	enum spfkit__mta_kind want[N_CODES];
};

#define P SPFKIT__MTA_PREPEND
#define R SPFKIT__MTA_REJECT
#define D SPFKIT__MTA_DEFER

static void run_table(const char *key, const char *extra, const struct row *rows, size_t n,
		      int helo_identity)
{
	size_t i;
	int c;

	for (i = 0; i < n; i++)
		for (c = 0; c < N_CODES; c++) {
			struct spfkit__mta_decision d;
			char text[256];

			snprintf(text, sizeof(text), "%s = %s\n%s%s", key, rows[i].policy, extra,
				 helo_identity ? "Mail_From_reject = No_Check\n" : "HELO_reject = No_Check\n");
			/* HELO rows: null sender, so HELO is the answer; MAIL FROM rows: no HELO check */
			decide(text, helo_identity ? c : -1, helo_identity ? -1 : c, helo_identity, &d);
			if (d.kind != rows[i].want[c])
				fail_msg("%s = %s (%s), result %s: got %s, want %s", key, rows[i].policy,
					 extra[0] ? extra : "defaults", codes[c],
					 spfkit__mta_kind_name(d.kind),
					 spfkit__mta_kind_name(rows[i].want[c]));
		}
}

static void mail_from_table_default_errors(void **state)
{
	static const struct row rows[] = {
		{"Fail", {P, P, P, R, P, P, P}},
		{"Softfail", {P, P, P, R, R, P, P}},
		{"SPF_Not_Pass", {P, R, P, R, R, P, P}},
		{"False", {P, P, P, P, P, P, P}},
	};

	(void)state;
	run_table("Mail_From_reject", "", rows, 4, 0);
}

static void mail_from_table_errors_act(void **state)
{
	static const struct row rows[] = {
		{"Fail", {P, P, P, R, P, D, R}},
		{"Softfail", {P, P, P, R, R, D, R}},
		{"SPF_Not_Pass", {P, R, P, R, R, D, R}},
		{"False", {P, P, P, P, P, P, P}}, /* False overrides both (policyd-spf.conf(5)) */
	};

	(void)state;
	run_table("Mail_From_reject", "PermError_reject = True\nTempError_Defer = True\n", rows, 4, 0);
}

static void helo_table_default_errors(void **state)
{
	static const struct row rows[] = {
		{"Fail", {P, P, P, R, P, P, P}},
		{"Softfail", {P, P, P, R, R, P, P}},
		{"SPF_Not_Pass", {P, R, P, R, R, P, P}},
		{"Null", {P, P, P, R, P, P, P}}, /* null sender: Null acts like Fail */
		{"False", {P, P, P, P, P, P, P}},
	};

	(void)state;
	run_table("HELO_reject", "", rows, 5, 1);
}

static void helo_table_errors_act(void **state)
{
	static const struct row rows[] = {
		{"Fail", {P, P, P, R, P, D, R}},
		{"Softfail", {P, P, P, R, R, D, R}},
		{"SPF_Not_Pass", {P, R, P, R, R, D, R}},
		{"Null", {P, P, P, R, P, D, R}},
		{"False", {P, P, P, P, P, P, P}},
	};

	(void)state;
	run_table("HELO_reject", "PermError_reject = True\nTempError_Defer = True\n", rows, 5, 1);
}

/* ---- order of the checks --------------------------------------------- */

static void helo_fail_rejects_before_mail_from(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	session(&s, SPFKIT_RESULT_FAIL, -1, 0);
	assert_true(spfkit__mta_want_helo(cfg));
	assert_false(spfkit__mta_want_mailfrom(cfg, &s.in));
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
	assert_int_equal(d.identity, SPFKIT_IDENTITY_HELO);
	expect_contains(d.action, "s=helo;id=mx.example.org");
	spfkit__mta_config_free(cfg);
}

static void helo_pass_still_checks_mail_from(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;

	(void)state;
	session(&s, SPFKIT_RESULT_PASS, -1, 0);
	assert_true(spfkit__mta_want_mailfrom(cfg, &s.in));
	spfkit__mta_config_free(cfg);
}

static void null_sender_skips_mail_from(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;

	(void)state;
	session(&s, SPFKIT_RESULT_NONE, -1, 1);
	assert_false(spfkit__mta_want_mailfrom(cfg, &s.in));
	spfkit__mta_config_free(cfg);
}

static void no_check_turns_identity_off(void **state)
{
	struct spfkit__mta_config *cfg = conf("HELO_reject = No_Check\nMail_From_reject = No_Check\n");
	struct session s;

	(void)state;
	session(&s, -1, -1, 0);
	assert_false(spfkit__mta_want_helo(cfg));
	assert_false(spfkit__mta_want_mailfrom(cfg, &s.in));
	spfkit__mta_config_free(cfg);
}

static void helo_null_ignores_helo_fail_with_sender(void **state)
{
	struct spfkit__mta_config *cfg = conf("HELO_reject = Null\n");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	session(&s, SPFKIT_RESULT_FAIL, SPFKIT_RESULT_PASS, 0);
	assert_true(spfkit__mta_want_mailfrom(cfg, &s.in));
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
	expect_contains(d.action, "prepend Received-SPF: pass");
	spfkit__mta_config_free(cfg);
}

static void null_sender_judged_by_helo(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("", SPFKIT_RESULT_PASS, -1, 1, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
	assert_int_equal(d.identity, SPFKIT_IDENTITY_HELO);
	expect_contains(d.action, "prepend Received-SPF: pass");
	expect_contains(d.action, "identity=helo");
}

/* ---- CVE-2019-20790: the identities are never confused ---------------- */

static void helo_pass_mail_from_none_reports_none(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("", SPFKIT_RESULT_PASS, SPFKIT_RESULT_NONE, 0, &d);
	assert_int_equal(d.identity, SPFKIT_IDENTITY_MAILFROM);
	expect_contains(d.action, "prepend Received-SPF: none");
	expect_contains(d.action, "identity=mailfrom");
	expect_lacks(d.action, "pass");
}

static void helo_pass_mail_from_fail_rejects(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("", SPFKIT_RESULT_PASS, SPFKIT_RESULT_FAIL, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
	assert_int_equal(d.identity, SPFKIT_IDENTITY_MAILFROM);
	expect_contains(d.action, "550 5.7.23 ");
}

static void helo_pass_restriction_never_beats_mail_from_fail(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("HELO_pass_restriction = helo_passed_spf\n", SPFKIT_RESULT_PASS, SPFKIT_RESULT_FAIL, 0,
	       &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
	expect_lacks(d.action, "helo_passed_spf");
}

static void helo_pass_mail_from_softfail_reports_softfail(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Header_Type = AR\nAuthserv_Id = mx.test\n", SPFKIT_RESULT_PASS, SPFKIT_RESULT_SOFTFAIL,
	       0, &d);
	expect_contains(d.action, "prepend Authentication-Results: mx.test; spf=softfail");
	expect_contains(d.action, "smtp.mailfrom=example.com");
	expect_lacks(d.action, "smtp.helo");
}

/* ---- replies ---------------------------------------------------------- */

static void fail_reply_carries_explanation(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("", -1, SPFKIT_RESULT_FAIL, 0, &d);
	expect_contains(d.action, "550 5.7.23 Message rejected due to: example.com does not designate "
				  "192.0.2.1 as permitted sender. Please see ");
	expect_contains(d.action, "?s=mfrom;id=alice@example.com;ip=192.0.2.1;r=mx.receiver.test");
}

static void permerror_reply_is_5_7_24(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("PermError_reject = True\n", -1, SPFKIT_RESULT_PERMERROR, 0, &d);
	expect_contains(d.action, "550 5.7.24 Message rejected due to: record has two 'all' terms");
}

static void temperror_defer_is_defer_if_permit(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("TempError_Defer = True\n", -1, SPFKIT_RESULT_TEMPERROR, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_DEFER);
	expect_contains(d.action, "defer_if_permit 4.7.24 Message deferred due to: DNS timeout");
}

static void temperror_action_451_answers_451(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("TempError_Defer = True\nTempError_Action = 451\n", -1, SPFKIT_RESULT_TEMPERROR, 0, &d);
	assert_int_equal(strncmp(d.action, "451 4.7.24 Message deferred", 27), 0);
}

static void no_enhanced_codes(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("SPF_Enhanced_Status_Codes = No\nTempError_Defer = True\n", -1, SPFKIT_RESULT_FAIL, 0, &d);
	assert_int_equal(strncmp(d.action, "550 Message rejected", 20), 0);
	decide("SPF_Enhanced_Status_Codes = No\nTempError_Defer = True\n", -1, SPFKIT_RESULT_TEMPERROR, 0,
	       &d);
	assert_int_equal(strncmp(d.action, "defer_if_permit Message deferred", 32), 0);
}

static void reason_message_placeholders(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Reason_Message = {rejectdefer}: {spf} {{x}}\nReason_URL = https://u.test/w\n", -1,
	       SPFKIT_RESULT_FAIL, 0, &d);
	assert_string_equal(d.action, "550 5.7.23 rejected: example.com does not designate 192.0.2.1 as "
				      "permitted sender {x}");
}

static void hostile_explanation_cannot_break_the_reply(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	session(&s, -1, SPFKIT_RESULT_FAIL, 0);
	s.mres.explanation = "bad\r\n\r\naction=dunno\x01\xff";
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "bad????action=dunno??");
	assert_null(strpbrk(d.action, "\r\n\x01"));
	spfkit__mta_config_free(cfg);
}

static void url_identity_is_percent_encoded(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	session(&s, SPFKIT_RESULT_FAIL, -1, 1);
	s.in.helo = "evil host;r=x";
	s.in.helo_len = strlen(s.in.helo);
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "id=evil%20host%3Br%3Dx;ip=");
	spfkit__mta_config_free(cfg);
}

static void reject_not_pass_domains_rejects_softfail(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Reject_Not_Pass_Domains = example.com\n", -1, SPFKIT_RESULT_SOFTFAIL, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
	expect_contains(d.action, "due to: Receiver policy for SPF Softfail");
	decide("Reject_Not_Pass_Domains = example.net\n", -1, SPFKIT_RESULT_SOFTFAIL, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
}

static void no_mail_rejects_only_dash_all_domains(void **state)
{
	struct spfkit__mta_config *cfg = conf("No_Mail = True\n");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	session(&s, -1, SPFKIT_RESULT_FAIL, 0);
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
	s.in.mfrom_check.no_mail_record = 1;
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
	spfkit__mta_config_free(cfg);
}

static void test_only_turns_reject_into_header(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("TestOnly = 0\n", -1, SPFKIT_RESULT_FAIL, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
	assert_int_equal(d.test_only, 1);
	expect_contains(d.action, "prepend Received-SPF: fail");
}

static void test_only_turns_defer_into_header(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("TestOnly = 0\nTempError_Defer = True\n", SPFKIT_RESULT_TEMPERROR, -1, 1, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
	expect_contains(d.action, "prepend Received-SPF: temperror");
}

/* ---- headers ---------------------------------------------------------- */

static void header_type_none_gives_dunno(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Header_Type = None\n", -1, SPFKIT_RESULT_PASS, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_DUNNO);
	assert_string_equal(d.action, "dunno");
}

static void both_headers_one_per_query(void **state)
{
	struct spfkit__mta_decision d;
	char buf[SPFKIT__MTA_TEXT_MAX];

	(void)state;
	decide("Header_Type = SPF,AR\nAuthserv_Id = mx.test\n", -1, SPFKIT_RESULT_PASS, 0, &d);
	assert_int_equal(d.header_count, 2);
	spfkit__mta_action_nth(&d, 0, buf, sizeof(buf));
	expect_contains(buf, "prepend Received-SPF: pass");
	spfkit__mta_action_nth(&d, 1, buf, sizeof(buf));
	expect_contains(buf, "prepend Authentication-Results: mx.test; spf=pass");
	spfkit__mta_action_nth(&d, 2, buf, sizeof(buf));
	assert_string_equal(buf, "dunno");
}

static void reject_is_repeated_for_each_recipient(void **state)
{
	struct spfkit__mta_decision d;
	char buf[SPFKIT__MTA_TEXT_MAX];

	(void)state;
	decide("", -1, SPFKIT_RESULT_FAIL, 0, &d);
	spfkit__mta_action_nth(&d, 5, buf, sizeof(buf));
	assert_string_equal(buf, d.action);
}

static void hide_receiver_leaves_it_out(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("", -1, SPFKIT_RESULT_PASS, 0, &d);
	expect_contains(d.action, "mx.receiver.test");
	decide("Hide_Receiver = Yes\n", -1, SPFKIT_RESULT_PASS, 0, &d);
	expect_lacks(d.action, "mx.receiver.test");
	decide("Hide_Receiver = Yes\n", -1, SPFKIT_RESULT_FAIL, 0, &d);
	expect_contains(d.action, ";r=%3CUNKNOWN%3E");
}

static void prospective_adds_no_header(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Prospective = 192.0.2.4\n", -1, SPFKIT_RESULT_PASS, 0, &d);
	assert_string_equal(d.action, "dunno");
	decide("Prospective = 192.0.2.4\n", -1, SPFKIT_RESULT_FAIL, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
}

static void mock_answers_dunno(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Mock = True\n", -1, SPFKIT_RESULT_FAIL, 0, &d);
	assert_string_equal(d.action, "dunno mock header field that should be ignored");
}

/* ---- restrictions ----------------------------------------------------- */

static void mail_from_pass_restriction(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("Mail_From_pass_restriction = mfrom_passed_spf\n", SPFKIT_RESULT_NONE, SPFKIT_RESULT_PASS,
	       0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_RESTRICTION);
	assert_string_equal(d.action, "mfrom_passed_spf");
	decide("Mail_From_pass_restriction = mfrom_passed_spf\n", -1, SPFKIT_RESULT_NEUTRAL, 0, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
}

static void helo_pass_restriction(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("HELO_pass_restriction = helo_passed_spf\n", SPFKIT_RESULT_PASS, -1, 1, &d);
	assert_string_equal(d.action, "helo_passed_spf");
	decide("HELO_pass_restriction = helo_passed_spf\n", SPFKIT_RESULT_PASS, SPFKIT_RESULT_NONE, 0,
	       &d);
	assert_string_equal(d.action, "helo_passed_spf");
}

/* ---- bypass ----------------------------------------------------------- */

static void local_client_gets_trace_header(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;
	struct spfkit__mta_decision d;
	struct spfkit_ip lo = {4, {127, 0, 0, 1}}, out = {4, {192, 0, 2, 1}};

	(void)state;
	assert_int_equal(spfkit__mta_ip_bypass(cfg, &lo), SPFKIT__MTA_BYPASS_LOCAL);
	assert_int_equal(spfkit__mta_ip_bypass(cfg, &out), SPFKIT__MTA_BYPASS_NONE);
	session(&s, -1, -1, 0);
	s.in.bypass = SPFKIT__MTA_BYPASS_LOCAL;
	s.in.client_ip = "127.0.0.1";
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_string_equal(d.action, "prepend X-Comment: SPF check N/A for local connections - "
				      "client-ip=127.0.0.1; helo=mx.example.org; "
				      "envelope-from=alice@example.com; receiver=mx.receiver.test");
	spfkit__mta_config_free(cfg);
}

static void whitelist_bypass_in_ar_form_escapes_helo(void **state)
{
	struct spfkit__mta_config *cfg = conf("Whitelist = 192.0.2.0/24\nHeader_Type = AR\n"
					      "Authserv_Id = mx.test\n");
	struct session s;
	struct spfkit__mta_decision d;
	struct spfkit_ip ip = {4, {192, 0, 2, 1}};

	(void)state;
	assert_int_equal(spfkit__mta_ip_bypass(cfg, &ip), SPFKIT__MTA_BYPASS_WHITELIST);
	session(&s, -1, -1, 0);
	s.in.bypass = SPFKIT__MTA_BYPASS_WHITELIST;
	s.in.helo = "x)\r\nX-Evil: (1";
	s.in.helo_len = strlen(s.in.helo);
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "prepend Authentication-Results: mx.test; none (SPF skipped for "
				  "whitelisted relay - client-ip=192.0.2.1; helo=x\\)??X-Evil: \\(1;");
	assert_null(strpbrk(d.action, "\r\n"));
	spfkit__mta_config_free(cfg);
}

static void nothing_checked_is_dunno(void **state)
{
	struct spfkit__mta_decision d;

	(void)state;
	decide("", -1, -1, 0, &d);
	assert_string_equal(d.action, "dunno");
}

/* ---- every option value x every result x both identities: invariants ---- */

static const char *const option_values[] = {
	"",
	"TestOnly = 0",
	"HELO_reject = Softfail",
	"HELO_reject = SPF_Not_Pass",
	"HELO_reject = Null",
	"HELO_reject = False",
	"Mail_From_reject = Softfail",
	"Mail_From_reject = SPF_Not_Pass",
	"Mail_From_reject = False",
	"PermError_reject = True",
	"TempError_Defer = True",
	"TempError_Defer = True\nTempError_Action = 451",
	"No_Mail = True",
	"SPF_Enhanced_Status_Codes = No",
	"Header_Type = AR\nAuthserv_Id = mx.test",
	"Header_Type = SPF,AR\nAuthserv_Id = mx.test",
	"Header_Type = None",
	"Hide_Receiver = Yes",
	"Reject_Not_Pass_Domains = example.com,mx.example.org",
	"Prospective = 192.0.2.1",
	"HELO_pass_restriction = helo_ok",
	"Mail_From_pass_restriction = mfrom_ok",
	"Reason_Message = {spf}",
};

static int action_shape_ok(const struct spfkit__mta_decision *d)
{
	switch (d->kind) {
	case SPFKIT__MTA_DUNNO: return strcmp(d->action, "dunno") == 0;
	case SPFKIT__MTA_PREPEND: return strncmp(d->action, "prepend ", 8) == 0 && d->header_count > 0;
	case SPFKIT__MTA_REJECT: return strncmp(d->action, "550 ", 4) == 0;
	case SPFKIT__MTA_DEFER:
		return strncmp(d->action, "defer_if_permit ", 16) == 0 || strncmp(d->action, "451 ", 4) == 0;
	case SPFKIT__MTA_RESTRICTION: return strstr(d->action, "_ok") != NULL;
	}
	return 0;
}

static void check_invariants(const char *opt, int h, int m, const struct spfkit__mta_decision *d)
{
	const char *why = NULL;
	size_t i;

	if (!action_shape_ok(d))
		why = "the action does not match its kind";
	else if (strpbrk(d->action, "\r\n") != NULL)
		why = "a line break in the action";
	else if (strstr(opt, "TestOnly = 0") && (d->kind == SPFKIT__MTA_REJECT || d->kind == SPFKIT__MTA_DEFER))
		why = "TestOnly = 0 refused mail";
	else if (strstr(opt, "Header_Type = None") && d->kind == SPFKIT__MTA_PREPEND)
		why = "Header_Type = None added a header";
	/* CVE-2019-20790: with MAIL FROM checked, no header speaks for HELO */
	else if (m >= 0 && d->kind == SPFKIT__MTA_PREPEND && d->identity != SPFKIT_IDENTITY_MAILFROM)
		why = "the HELO result reported although MAIL FROM was checked";
	for (i = 0; why == NULL && i < d->header_count; i++)
		if (m >= 0 && (strstr(d->headers[i], "identity=helo") || strstr(d->headers[i], "smtp.helo")))
			why = "a header for the HELO identity although MAIL FROM was checked";
	if (why != NULL)
		fail_msg("option \"%s\", HELO %s, MAIL FROM %s: %s; got \"%s\"", opt,
			 h < 0 ? "-" : codes[h], m < 0 ? "-" : codes[m], why, d->action);
}

static void every_option_value_result_and_identity(void **state)
{
	size_t o;
	int h, m;

	(void)state;
	for (o = 0; o < sizeof(option_values) / sizeof(option_values[0]); o++)
		for (h = -1; h < N_CODES; h++)
			for (m = -1; m < N_CODES; m++) {
				struct spfkit__mta_decision d;
				char text[256];

				struct spfkit__mta_config *cfg;
				struct session s;

				snprintf(text, sizeof(text), "%s\n", option_values[o]);
				cfg = conf(text);
				session(&s, h, m, 0);
				/* as the server runs it: MAIL FROM only when the HELO result allows */
				if (m < 0 || spfkit__mta_want_mailfrom(cfg, &s.in)) {
					spfkit__mta_decide(cfg, &s.in, &d);
					check_invariants(option_values[o], h, m, &d);
				}
				if (m < 0) {
					session(&s, h, -1, 1); /* the null sender */
					spfkit__mta_decide(cfg, &s.in, &d);
					check_invariants(option_values[o], h, -1, &d);
				}
				spfkit__mta_config_free(cfg);
			}
}

/* ---- internationalized mail (RFC 8616, issue 30) ------------------------ */

#define MUNCHEN "m\xc3\xbcnchen.example" /* münchen.example */
#define MUNCHEN_A "xn--mnchen-3ya.example"

/* A MAIL FROM result for user@münchen.example, as the library makes it. */
static void utf8_session(struct session *s, enum spfkit_result_code code)
{
	session(s, -1, code, 0);
	s->in.sender = "user@" MUNCHEN;
	s->in.sender_len = strlen(s->in.sender);
	s->mres.sender = s->in.sender;
	s->mres.sender_ascii = "user@" MUNCHEN_A;
	s->mres.helo_ascii = s->mres.helo;
	s->mres.identity_domain = MUNCHEN_A;
	s->mres.explanation = NULL;
}

static void smtputf8_message_gets_utf8_headers(void **state)
{
	struct spfkit__mta_config *cfg = conf("Header_Type = SPF,AR\nAuthserv_Id = mx.test\n");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	utf8_session(&s, SPFKIT_RESULT_PASS);
	s.in.smtputf8 = 1;
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.header_count, 2);
	expect_contains(d.headers[0], "Received-SPF: pass (mx.receiver.test: domain of user@" MUNCHEN
				      " designates");
	expect_contains(d.headers[0], "envelope-from=\"user@" MUNCHEN "\"");
	expect_lacks(d.headers[0], "xn--");
	/* the A-R is for programs: ASCII, A-labels, SMTPUTF8 or not (RFC 8616 §3, §6) */
	assert_string_equal(d.headers[1], "Authentication-Results: mx.test; spf=pass "
					  "smtp.mailfrom=" MUNCHEN_A);
	spfkit__mta_config_free(cfg);
}

static void ascii_message_gets_a_labels(void **state)
{
	struct spfkit__mta_config *cfg = conf("Header_Type = SPF,AR\nAuthserv_Id = mx.test\n");
	struct session s;
	struct spfkit__mta_decision d;
	size_t i;

	(void)state;
	utf8_session(&s, SPFKIT_RESULT_PASS);
	s.in.smtputf8 = 0;
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.header_count, 2);
	expect_contains(d.headers[0], "envelope-from=\"user@" MUNCHEN_A "\"");
	assert_string_equal(d.headers[1], "Authentication-Results: mx.test; spf=pass "
					  "smtp.mailfrom=" MUNCHEN_A);
	for (i = 0; i < 2; i++)
		for (const char *p = d.headers[i]; *p != '\0'; p++)
			if ((unsigned char)*p >= 0x80)
				fail_msg("a non-ASCII byte in \"%s\"", d.headers[i]);
	spfkit__mta_config_free(cfg);
}

/* The bypass header has no library result: the sender as sent, UTF-8 only where allowed. */
static void bypass_header_keeps_utf8_only_for_smtputf8(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	utf8_session(&s, SPFKIT_RESULT_PASS);
	s.in.mfrom_check.checked = 0;
	s.in.bypass = SPFKIT__MTA_BYPASS_LOCAL;
	s.in.smtputf8 = 1;
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "envelope-from=user@" MUNCHEN ";");
	s.in.smtputf8 = 0;
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "envelope-from=user@m??nchen.example;");
	spfkit__mta_config_free(cfg);
	/* the A-R form of it stays ASCII even then */
	cfg = conf("Header_Type = AR\nAuthserv_Id = mx.test\n");
	s.in.smtputf8 = 1;
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "envelope-from=user@m??nchen.example;");
	spfkit__mta_config_free(cfg);
	cfg = conf("");
	/* broken UTF-8 and a C1 control are never passed on, SMTPUTF8 or not */
	s.in.smtputf8 = 1;
	s.in.sender = "u@\xc3\x28x\xc2\x85y.example";
	s.in.sender_len = strlen(s.in.sender);
	spfkit__mta_decide(cfg, &s.in, &d);
	expect_contains(d.action, "envelope-from=u@?\\(x??y.example;");
	spfkit__mta_config_free(cfg);
}

/* A cut at the cap never splits a character. */
static void bypass_header_cut_keeps_characters_whole(void **state)
{
	struct spfkit__mta_config *cfg = conf("");
	struct session s;
	struct spfkit__mta_decision d;
	char sender[300];
	const char *at;

	(void)state;
	session(&s, -1, -1, 0);
	memset(sender, 'a', 119);
	memcpy(sender + 119, "\xc3\xbc@x.example", 12); /* ü across the 120-byte cap */
	sender[131] = '\0';
	s.in.sender = sender;
	s.in.sender_len = strlen(sender);
	s.in.bypass = SPFKIT__MTA_BYPASS_LOCAL;
	s.in.smtputf8 = 1;
	spfkit__mta_decide(cfg, &s.in, &d);
	at = strstr(d.action, "envelope-from=");
	assert_non_null(at);
	assert_int_equal(strspn(at + 14, "a"), 119);
	assert_memory_equal(at + 14 + 119, "...;", 4);
	spfkit__mta_config_free(cfg);
}

/* Reject_Not_Pass_Domains lists names as SPF checks them: A-labels (RFC 8616 §4). */
static void reject_not_pass_domains_matches_a_labels(void **state)
{
	struct spfkit__mta_config *cfg = conf("Reject_Not_Pass_Domains = " MUNCHEN_A "\n");
	struct session s;
	struct spfkit__mta_decision d;

	(void)state;
	utf8_session(&s, SPFKIT_RESULT_SOFTFAIL);
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_REJECT);
	spfkit__mta_config_free(cfg);
	cfg = conf("Reject_Not_Pass_Domains = example.net\n");
	spfkit__mta_decide(cfg, &s.in, &d);
	assert_int_equal(d.kind, SPFKIT__MTA_PREPEND);
	spfkit__mta_config_free(cfg);
}

static void sender_is_utf8(void **state)
{
	(void)state;
	assert_true(spfkit__mta_sender_is_utf8("user@" MUNCHEN, strlen("user@" MUNCHEN)));
	assert_true(spfkit__mta_sender_is_utf8("\xfc@x", 3)); /* 8-bit, even when no UTF-8 */
	assert_false(spfkit__mta_sender_is_utf8("user@" MUNCHEN_A, strlen("user@" MUNCHEN_A)));
	assert_false(spfkit__mta_sender_is_utf8("", 0));
	/* only the given bytes count */
	assert_false(spfkit__mta_sender_is_utf8("a@b\xc3\xbc", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mail_from_table_default_errors),
		cmocka_unit_test(mail_from_table_errors_act),
		cmocka_unit_test(helo_table_default_errors),
		cmocka_unit_test(helo_table_errors_act),
		cmocka_unit_test(helo_fail_rejects_before_mail_from),
		cmocka_unit_test(helo_pass_still_checks_mail_from),
		cmocka_unit_test(null_sender_skips_mail_from),
		cmocka_unit_test(no_check_turns_identity_off),
		cmocka_unit_test(helo_null_ignores_helo_fail_with_sender),
		cmocka_unit_test(null_sender_judged_by_helo),
		cmocka_unit_test(helo_pass_mail_from_none_reports_none),
		cmocka_unit_test(helo_pass_mail_from_fail_rejects),
		cmocka_unit_test(helo_pass_restriction_never_beats_mail_from_fail),
		cmocka_unit_test(helo_pass_mail_from_softfail_reports_softfail),
		cmocka_unit_test(fail_reply_carries_explanation),
		cmocka_unit_test(permerror_reply_is_5_7_24),
		cmocka_unit_test(temperror_defer_is_defer_if_permit),
		cmocka_unit_test(temperror_action_451_answers_451),
		cmocka_unit_test(no_enhanced_codes),
		cmocka_unit_test(reason_message_placeholders),
		cmocka_unit_test(hostile_explanation_cannot_break_the_reply),
		cmocka_unit_test(url_identity_is_percent_encoded),
		cmocka_unit_test(reject_not_pass_domains_rejects_softfail),
		cmocka_unit_test(no_mail_rejects_only_dash_all_domains),
		cmocka_unit_test(test_only_turns_reject_into_header),
		cmocka_unit_test(test_only_turns_defer_into_header),
		cmocka_unit_test(header_type_none_gives_dunno),
		cmocka_unit_test(both_headers_one_per_query),
		cmocka_unit_test(reject_is_repeated_for_each_recipient),
		cmocka_unit_test(hide_receiver_leaves_it_out),
		cmocka_unit_test(prospective_adds_no_header),
		cmocka_unit_test(mock_answers_dunno),
		cmocka_unit_test(mail_from_pass_restriction),
		cmocka_unit_test(helo_pass_restriction),
		cmocka_unit_test(local_client_gets_trace_header),
		cmocka_unit_test(whitelist_bypass_in_ar_form_escapes_helo),
		cmocka_unit_test(nothing_checked_is_dunno),
		cmocka_unit_test(every_option_value_result_and_identity),
		cmocka_unit_test(smtputf8_message_gets_utf8_headers),
		cmocka_unit_test(ascii_message_gets_a_labels),
		cmocka_unit_test(bypass_header_keeps_utf8_only_for_smtputf8),
		cmocka_unit_test(bypass_header_cut_keeps_characters_whole),
		cmocka_unit_test(reject_not_pass_domains_matches_a_labels),
		cmocka_unit_test(sender_is_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
