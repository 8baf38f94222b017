/* Unit tests of mta/config.c against policyd-spf's option table (policyd-spf.conf(5), 3.0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

/* ---- allocation through cmocka (leak checks), with optional failure -- */

struct fail_after {
	long left; /* allocations allowed before failing; < 0: never fail */
};

static void *t_alloc(void *user, size_t n)
{
	struct fail_after *f = user;

	if (f != NULL && f->left >= 0 && f->left-- == 0)
		return NULL;
	return test_malloc(n);
}

static void *t_realloc(void *user, void *p, size_t n)
{
	struct fail_after *f = user;

	if (f != NULL && f->left >= 0 && f->left-- == 0)
		return NULL;
	return test_realloc(p, n);
}

static void t_free(void *user, void *p)
{
	(void)user;
	test_free(p);
}

static const struct spfkit_allocator talloc = {t_alloc, t_realloc, t_free, NULL};

/* ---- diagnostics collected as "label:line: error|warning: text\n" --- */

static char diags[8192];

static void collect(void *arg, const struct spfkit__mta_diag *d)
{
	size_t used = strlen(diags);

	(void)arg;
	snprintf(diags + used, sizeof(diags) - used, "%s:%u: %s: %s\n", d->file, d->line,
		 d->is_error ? "error" : "warning", d->text);
}

static struct spfkit__mta_config *parse_ok(const char *text)
{
	struct spfkit__mta_config *cfg = NULL;
	int rc;

	diags[0] = '\0';
	rc = spfkit__mta_config_parse(text, strlen(text), "t.conf", &talloc, collect, NULL, &cfg);
	if (rc != 0)
		fail_msg("parse \"%s\": got %d (%s), want 0", text, rc, diags);
	return cfg;
}

static void parse_refused(const char *text, const char *want_diag)
{
	struct spfkit__mta_config *cfg = NULL;
	int rc;

	diags[0] = '\0';
	rc = spfkit__mta_config_parse(text, strlen(text), "t.conf", &talloc, collect, NULL, &cfg);
	if (rc != SPFKIT_ESYNTAX || cfg != NULL)
		fail_msg("parse \"%s\": got %d, want SPFKIT_ESYNTAX", text, rc);
	if (strstr(diags, want_diag) == NULL)
		fail_msg("parse \"%s\": got diagnostics \"%s\", want one containing \"%s\"", text, diags,
			 want_diag);
}

static void expect_diag(const char *want)
{
	if (strstr(diags, want) == NULL)
		fail_msg("got diagnostics \"%s\", want one containing \"%s\"", diags, want);
}

static struct spfkit_ip ip_of(int family, const char *a)
{
	struct spfkit_ip ip;

	memset(&ip, 0, sizeof(ip));
	ip.family = family;
	assert_int_equal(inet_pton(family == 4 ? AF_INET : AF_INET6, a, ip.addr), 1);
	return ip;
}

/* ---- defaults: policyd-spf.conf(5) ---------------------------------- */

static void defaults_are_policyd_spf_defaults(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("");
	char host[256] = "";
	struct spfkit_ip ip;

	(void)state;
	assert_int_equal(cfg->debug_level, 1);
	assert_int_equal(cfg->test_only, 1);
	assert_int_equal(cfg->helo_reject, SPFKIT_MTA_REJECT_FAIL);
	assert_int_equal(cfg->mail_from_reject, SPFKIT_MTA_REJECT_FAIL);
	assert_int_equal(cfg->permerror_reject, 0);
	assert_int_equal(cfg->temperror_defer, 0);
	assert_int_equal(cfg->skip_addresses.count, 3);
	assert_int_equal(cfg->whitelist.count, 0);
	assert_int_equal(cfg->helo_whitelist.count, 0);
	assert_int_equal(cfg->domain_whitelist.count, 0);
	assert_int_equal(cfg->domain_whitelist_ptr.count, 0);
	assert_int_equal(cfg->reject_not_pass_domains.count, 0);
	assert_int_equal(cfg->no_mail, 0);
	assert_int_equal(cfg->enhanced_status_codes, 1);
	assert_int_equal(cfg->header_type, SPFKIT_MTA_HEADER_SPF);
	assert_int_equal(cfg->hide_receiver, 0);
	gethostname(host, sizeof(host) - 1);
	assert_string_equal(cfg->authserv_id, host);
	assert_int_equal(cfg->lookup_time, 20);
	assert_int_equal(cfg->whitelist_lookup_time, 10);
	assert_int_equal(cfg->void_limit, 2);
	assert_string_equal(cfg->reason_message,
			    "Message {rejectdefer} due to: {spf}. Please see {url}");
	assert_int_equal(cfg->has_prospective, 0);
	assert_null(cfg->helo_pass_restriction);
	assert_null(cfg->mail_from_pass_restriction);
	assert_int_equal(cfg->mock, 0);
	assert_int_equal(cfg->queue_id, 1);
	assert_int_equal(cfg->temperror_action, SPFKIT_MTA_DEFER_IF_PERMIT);
	ip = ip_of(4, "127.0.0.1");
	assert_true(spfkit__mta_net_match(&cfg->skip_addresses, &ip));
	spfkit__mta_config_free(cfg);
}

/* The file Debian's postfix-policyd-spf-python installs, as is. */
static void debian_shipped_file_reads_clean(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok(
		"#  For a fully commented sample config file see policyd-spf.conf.commented\n"
		"\n"
		"debugLevel = 1 \n"
		"TestOnly = 1\n"
		"\n"
		"HELO_reject = Fail\n"
		"Mail_From_reject = Fail\n"
		"\n"
		"PermError_reject = False\n"
		"TempError_Defer = False\n"
		"\n"
		"skip_addresses = 127.0.0.0/8,::ffff:127.0.0.0/104,::1\n");

	(void)state;
	assert_string_equal(diags, "");
	assert_int_equal(cfg->skip_addresses.count, 3);
	spfkit__mta_config_free(cfg);
}

/* ---- each option, each value ------------------------------------------ */

struct int_case {
	const char *line;
	size_t off;
	int want;
};

#define OFF(f) offsetof(struct spfkit__mta_config, f)

static void every_scalar_option_takes_its_values(void **state)
{
	static const struct int_case cases[] = {
		{"debugLevel = 0", OFF(debug_level), 0},
		{"debugLevel = -1", OFF(debug_level), -1},
		{"debugLevel = 5", OFF(debug_level), 5},
		{"TestOnly = 0", OFF(test_only), 0},
		{"TestOnly = 1", OFF(test_only), 1},
		{"HELO_reject = Fail", OFF(helo_reject), SPFKIT_MTA_REJECT_FAIL},
		{"HELO_reject = Softfail", OFF(helo_reject), SPFKIT_MTA_REJECT_SOFTFAIL},
		{"HELO_reject = SPF_Not_Pass", OFF(helo_reject), SPFKIT_MTA_REJECT_NOT_PASS},
		{"HELO_reject = Null", OFF(helo_reject), SPFKIT_MTA_REJECT_NULL},
		{"HELO_reject = False", OFF(helo_reject), SPFKIT_MTA_REJECT_FALSE},
		{"HELO_reject = No_Check", OFF(helo_reject), SPFKIT_MTA_REJECT_NO_CHECK},
		{"Mail_From_reject = Fail", OFF(mail_from_reject), SPFKIT_MTA_REJECT_FAIL},
		{"Mail_From_reject = Softfail", OFF(mail_from_reject), SPFKIT_MTA_REJECT_SOFTFAIL},
		{"Mail_From_reject = SPF_Not_Pass", OFF(mail_from_reject), SPFKIT_MTA_REJECT_NOT_PASS},
		{"Mail_From_reject = False", OFF(mail_from_reject), SPFKIT_MTA_REJECT_FALSE},
		{"Mail_From_reject = No_Check", OFF(mail_from_reject), SPFKIT_MTA_REJECT_NO_CHECK},
		{"PermError_reject = True", OFF(permerror_reject), 1},
		{"PermError_reject = False", OFF(permerror_reject), 0},
		{"TempError_Defer = True", OFF(temperror_defer), 1},
		{"TempError_Defer = False", OFF(temperror_defer), 0},
		{"No_Mail = True", OFF(no_mail), 1},
		{"No_Mail = False", OFF(no_mail), 0},
		{"SPF_Enhanced_Status_Codes = No", OFF(enhanced_status_codes), 0},
		{"SPF_Enhanced_Status_Codes = Yes", OFF(enhanced_status_codes), 1},
		{"Header_Type = SPF", OFF(header_type), SPFKIT_MTA_HEADER_SPF},
		{"Header_Type = AR", OFF(header_type), SPFKIT_MTA_HEADER_AR},
		{"Header_Type = None", OFF(header_type), 0},
		{"Header_Type = SPF,AR", OFF(header_type), SPFKIT_MTA_HEADER_SPF | SPFKIT_MTA_HEADER_AR},
		{"Hide_Receiver = Yes", OFF(hide_receiver), 1},
		{"Hide_Receiver = No", OFF(hide_receiver), 0},
		{"Lookup_Time = 5", OFF(lookup_time), 5},
		{"Whitelist_Lookup_Time = 3", OFF(whitelist_lookup_time), 3},
		{"Void_Limit = 0", OFF(void_limit), 0},
		{"Void_Limit = 7", OFF(void_limit), 7},
		{"Mock = True", OFF(mock), 1},
		{"QueueID = False", OFF(queue_id), 0},
		{"TempError_Action = 451", OFF(temperror_action), SPFKIT_MTA_DEFER_451},
		{"TempError_Action = defer_if_permit", OFF(temperror_action), SPFKIT_MTA_DEFER_IF_PERMIT},
		{"defaultSeedOnly = 0", OFF(test_only), 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spfkit__mta_config *cfg = parse_ok(cases[i].line);
		int got = *(const int *)((const char *)cfg + cases[i].off);

		if (got != cases[i].want)
			fail_msg("\"%s\": got %d, want %d", cases[i].line, got, cases[i].want);
		spfkit__mta_config_free(cfg);
	}
}

static void string_options_are_kept(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok(
		"Authserv_Id = mx.example.com\n"
		"Reason_Message = Message {rejectdefer}: {spf} {{literal}}\n"
		"HELO_pass_restriction = helo_passed_spf\n"
		"Mail_From_pass_restriction = mfrom_passed_spf\n"
		"Reason_URL = https://example.com/spf\n");

	(void)state;
	assert_string_equal(cfg->authserv_id, "mx.example.com");
	assert_string_equal(cfg->reason_message, "Message {rejectdefer}: {spf} {{literal}}");
	assert_string_equal(cfg->helo_pass_restriction, "helo_passed_spf");
	assert_string_equal(cfg->mail_from_pass_restriction, "mfrom_passed_spf");
	assert_string_equal(cfg->reason_url, "https://example.com/spf");
	spfkit__mta_config_free(cfg);
}

static void prospective_takes_v4_v6_and_mapped(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("Prospective = 192.0.2.4");

	(void)state;
	assert_int_equal(cfg->has_prospective, 1);
	assert_int_equal(cfg->prospective.family, 4);
	assert_memory_equal(cfg->prospective.addr, "\xc0\x00\x02\x04", 4);
	spfkit__mta_config_free(cfg);
	cfg = parse_ok("Prospective = 2001:db8::4");
	assert_int_equal(cfg->prospective.family, 6);
	spfkit__mta_config_free(cfg);
	cfg = parse_ok("Prospective = ::ffff:192.0.2.4");
	assert_int_equal(cfg->prospective.family, 4);
	spfkit__mta_config_free(cfg);
	parse_refused("Prospective = 192.0.2.0/24", "not an IP address");
}

static void lists_are_read(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok(
		"Whitelist = 192.168.0.0/31,192.168.1.0/30,2001:db8::/32\n"
		"HELO_Whitelist = relay.example.com,sender.example.org\n"
		"Domain_Whitelist = pobox.com,trustedforwarder.org\n"
		"Domain_Whitelist_PTR = yahoo.com,yahoogroups.com\n"
		"Reject_Not_Pass_Domains = aol.com,Hotmail.COM.\n");

	(void)state;
	assert_int_equal(cfg->whitelist.count, 3);
	assert_int_equal(cfg->helo_whitelist.count, 2);
	assert_int_equal(cfg->domain_whitelist.count, 2);
	assert_int_equal(cfg->domain_whitelist_ptr.count, 2);
	assert_int_equal(cfg->reject_not_pass_domains.count, 2);
	assert_string_equal(cfg->reject_not_pass_domains.names[1], "hotmail.com");
	spfkit__mta_config_free(cfg);
}

/* ---- what --check-config reports ---------------------------------------- */

static void unknown_key_is_a_warning_with_line(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("debugLevel = 1\nFrobnicate = 3\n");

	(void)state;
	expect_diag("t.conf:2: warning: unknown option 'Frobnicate'");
	spfkit__mta_config_free(cfg);
}

static void key_in_wrong_case_gets_a_hint(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("helo_reject = False\n");

	(void)state;
	expect_diag("t.conf:1: warning: unknown option 'helo_reject', ignored; did you mean 'HELO_reject'?");
	/* ignored, as policyd-spf ignores it */
	assert_int_equal(cfg->helo_reject, SPFKIT_MTA_REJECT_FAIL);
	spfkit__mta_config_free(cfg);
}

static void value_in_wrong_case_is_an_error(void **state)
{
	(void)state;
	parse_refused("\n\nHELO_reject = fail\n", "t.conf:3: error: HELO_reject: 'fail' must be spelt 'Fail'");
	parse_refused("PermError_reject = true", "'true' must be spelt 'True'");
}

static void bad_values_are_errors(void **state)
{
	(void)state;
	parse_refused("Mail_From_reject = Null", "'Null' applies to HELO_reject only");
	parse_refused("Mail_From_reject = Sometimes", "unknown value 'Sometimes'");
	parse_refused("TestOnly = 2", "out of range 0..1");
	parse_refused("Lookup_Time = twenty", "'twenty' is not a number");
	parse_refused("Lookup_Time = 0", "out of range");
	parse_refused("Lookup_Time = 99999999999", "not a number");
	parse_refused("Header_Type = XML", "unknown header type 'XML'");
	parse_refused("Header_Type = None,SPF", "None cannot be combined");
	parse_refused("Hide_Receiver = Maybe", "unknown value 'Maybe'");
	parse_refused("Authserv_Id = mx example", "holds a space");
	parse_refused("Authserv_Id = a;b", "not an RFC 8601 authserv-id");
	parse_refused("Authserv_Id =", "empty value");
	parse_refused("TempError_Action = 450", "unknown value '450'");
}

static void reason_placeholders_are_checked(void **state)
{
	(void)state;
	parse_refused("Reason_Message = Go away {sender}", "unknown placeholder at column 9");
	parse_refused("Reason_Message = no close {spf", "unknown placeholder");
	parse_refused("Reason_Message = a } b", "single '}' at column 3");
}

static void spaces_inside_lists_are_reported_and_trimmed(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("Whitelist = 10.0.0.0/8, 192.0.2.0/24\n"
						  "Reject_Not_Pass_Domains = aol.com , hotmail.com\n");
	struct spfkit_ip ip = ip_of(4, "192.0.2.9");

	(void)state;
	expect_diag("t.conf:1: warning: Whitelist: space inside the list");
	expect_diag("t.conf:2: warning: Reject_Not_Pass_Domains: space inside the list");
	assert_true(spfkit__mta_net_match(&cfg->whitelist, &ip));
	assert_true(spfkit__mta_name_match(&cfg->reject_not_pass_domains, "aol.com", 7));
	spfkit__mta_config_free(cfg);
}

static void bad_list_entries_are_errors(void **state)
{
	(void)state;
	parse_refused("Whitelist = 10.0.0.0/8,,192.0.2.0/24", "empty entry");
	parse_refused("Whitelist = 10.0.0.1/8", "'10.0.0.1/8' has host bits set");
	parse_refused("Whitelist = 10.0.0.0/33", "'10.0.0.0/33' is not an IP network");
	parse_refused("Whitelist = example.com", "is not an IP network");
	parse_refused("skip_addresses = ::1/129", "is not an IP network");
	parse_refused("HELO_Whitelist = exa mple.com", "'exa mple.com' is not a domain name");
	parse_refused("Domain_Whitelist = a@b.com", "is not a domain name");
}

static void syntax_errors_name_the_line(void **state)
{
	(void)state;
	parse_refused("# c\n\nTestOnly 1\n", "t.conf:3: error: 'TestOnly 1' is not 'Name = Value'");
	parse_refused("TestOnly = 1\x01\n", "t.conf:1: error: control byte 0x01");
}

static void nul_byte_is_an_error(void **state)
{
	struct spfkit__mta_config *cfg = NULL;
	static const char text[] = "TestOnly = 1\nTestOnly\0 = 0\n";

	(void)state;
	diags[0] = '\0';
	assert_int_equal(spfkit__mta_config_parse(text, sizeof(text) - 1, "t.conf", &talloc, collect,
						  NULL, &cfg),
			 SPFKIT_ESYNTAX);
	expect_diag("t.conf:2: error: NUL byte");
}

/* policyd-spf takes a line of any length: a Whitelist of 2,000 networks (issue 7) */
static void long_whitelist_line_is_taken(void **state)
{
	size_t size = 2000 * 20 + 32, n, i;
	char *text = malloc(size);
	struct spfkit__mta_config *cfg;

	(void)state;
	assert_non_null(text);
	n = (size_t)snprintf(text, size, "Whitelist = ");
	for (i = 0; i < 2000; i++)
		n += (size_t)snprintf(text + n, size - n, "%s10.%zu.%zu.0/24", i ? "," : "", i / 256,
				      i % 256);
	cfg = parse_ok(text);
	assert_int_equal(cfg->whitelist.count, 2000);
	spfkit__mta_config_free(cfg);
	free(text);
}

/* past the file cap: the message names the file and the line where the cap fell */
static void file_too_large_names_file_and_line(void **state)
{
	char path[] = "/tmp/spfkit-conf-XXXXXX", want[64], line[1025];
	struct spfkit__mta_config *cfg = NULL;
	int fd = mkstemp(path);
	size_t i;

	(void)state;
	assert_true(fd >= 0);
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (i = 0; i < SPFKIT_MTA_CONF_MAX_FILE / sizeof(line) + 2; i++)
		assert_int_equal(write(fd, line, sizeof(line)), (ssize_t)sizeof(line));
	close(fd);
	diags[0] = '\0';
	assert_int_equal(spfkit__mta_config_load(path, &talloc, collect, NULL, &cfg), SPFKIT_E2BIG);
	snprintf(want, sizeof(want), "%s:%zu: error: file larger than", path,
		 (size_t)SPFKIT_MTA_CONF_MAX_FILE / sizeof(line) + 1);
	expect_diag(want);
	assert_null(cfg);
	unlink(path);
}

static void comments_and_blank_lines(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("  # full line\n\t\n"
						  "TestOnly = 0   # trailing comment\r\n"
						  "Reason_Message = a # not part of it\n");

	(void)state;
	assert_int_equal(cfg->test_only, 0);
	assert_string_equal(cfg->reason_message, "a");
	assert_string_equal(diags, "");
	spfkit__mta_config_free(cfg);
}

static void repeated_option_last_wins_with_warning(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("TestOnly = 0\nTestOnly = 1\n");

	(void)state;
	assert_int_equal(cfg->test_only, 1);
	expect_diag("t.conf:2: warning: TestOnly set again; this replaces line 1");
	spfkit__mta_config_free(cfg);
}

static void unsupported_and_deprecated_are_warnings(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("Per_User = text,/etc/users\ndefaultSeedOnly = 1\n"
						  "Socket = inet:1234@localhost\n");

	(void)state;
	/* Per_User is read now (policyd/peruser.c, issue 29): no warning */
	assert_null(strstr(diags, "Per_User"));
	assert_string_equal(cfg->per_user, "text,/etc/users");
	expect_diag("t.conf:2: warning: defaultSeedOnly is the old name of TestOnly");
	assert_null(strstr(diags, "Socket"));
	spfkit__mta_config_free(cfg);
}

static void authserv_hostname_is_the_host_name(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("Authserv_Id = HOSTNAME");
	char host[256] = "";

	(void)state;
	gethostname(host, sizeof(host) - 1);
	assert_string_equal(cfg->authserv_id, host);
	spfkit__mta_config_free(cfg);
}

/* ---- files -------------------------------------------------------------- */

static void load_reads_a_file(void **state)
{
	char path[] = "/tmp/spfkit-conf-XXXXXX";
	struct spfkit__mta_config *cfg = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "TestOnly = 0\nBogus = 1\n", 23), 23);
	close(fd);
	diags[0] = '\0';
	assert_int_equal(spfkit__mta_config_load(path, &talloc, collect, NULL, &cfg), 0);
	assert_int_equal(cfg->test_only, 0);
	assert_non_null(strstr(diags, ":2: warning: unknown option 'Bogus'"));
	assert_non_null(strstr(diags, path));
	spfkit__mta_config_free(cfg);
	unlink(path);
}

static void load_missing_file_is_eio(void **state)
{
	struct spfkit__mta_config *cfg = NULL;

	(void)state;
	diags[0] = '\0';
	assert_int_equal(spfkit__mta_config_load("/nonexistent/policyd-spf.conf", &talloc, collect,
						 NULL, &cfg),
			 SPFKIT_EIO);
	expect_diag("/nonexistent/policyd-spf.conf:0: error: No such file");
	assert_null(cfg);
}

static void load_directory_is_refused(void **state)
{
	struct spfkit__mta_config *cfg = NULL;

	(void)state;
	diags[0] = '\0';
	assert_int_equal(spfkit__mta_config_load("/tmp", &talloc, collect, NULL, &cfg), SPFKIT_EIO);
	expect_diag("not a regular file");
}

static void oversized_text_is_e2big(void **state)
{
	struct spfkit__mta_config *cfg = NULL;

	(void)state;
	assert_int_equal(spfkit__mta_config_parse("", SPFKIT_MTA_CONF_MAX_FILE + 1, "t", &talloc, NULL,
						  NULL, &cfg),
			 SPFKIT_E2BIG);
}

/* ---- allocation failure: every N fails cleanly, nothing leaks ----------- */

static void every_allocation_failure_is_clean(void **state)
{
	static const char text[] = "Whitelist = 10.0.0.0/8,192.0.2.0/24\n"
				   "Reject_Not_Pass_Domains = aol.com,hotmail.com\n"
				   "Reason_Message = {spf}\nHELO_pass_restriction = x\n";
	struct fail_after f;
	struct spfkit_allocator a = talloc;
	long n;
	int rc = SPFKIT_ENOMEM;

	(void)state;
	a.user = &f;
	for (n = 0; rc == SPFKIT_ENOMEM && n < 1000; n++) {
		struct spfkit__mta_config *cfg = NULL;

		f.left = n;
		rc = spfkit__mta_config_parse(text, sizeof(text) - 1, "t", &a, NULL, NULL, &cfg);
		if (rc == 0)
			spfkit__mta_config_free(cfg);
		else if (rc != SPFKIT_ENOMEM)
			fail_msg("failing allocation %ld: got %d, want SPFKIT_ENOMEM", n, rc);
	}
	assert_int_equal(rc, 0);
}

/* ---- matching ----------------------------------------------------------- */

static void default_skip_list_covers_loopback_only(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("");
	struct spfkit_ip v4 = ip_of(4, "127.1.2.3"), v6 = ip_of(6, "::1"), out = ip_of(4, "10.0.0.1"),
			 out6 = ip_of(6, "2001:db8::1");

	(void)state;
	assert_true(spfkit__mta_net_match(&cfg->skip_addresses, &v4));
	assert_true(spfkit__mta_net_match(&cfg->skip_addresses, &v6));
	assert_false(spfkit__mta_net_match(&cfg->skip_addresses, &out));
	assert_false(spfkit__mta_net_match(&cfg->skip_addresses, &out6));
	spfkit__mta_config_free(cfg);
}

static void mapped_network_covers_ipv4_client(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("skip_addresses = ::ffff:192.0.2.0/120");
	struct spfkit_ip in = ip_of(4, "192.0.2.77"), out = ip_of(4, "192.0.3.1");

	(void)state;
	assert_true(spfkit__mta_net_match(&cfg->skip_addresses, &in));
	assert_false(spfkit__mta_net_match(&cfg->skip_addresses, &out));
	spfkit__mta_config_free(cfg);
}

static void name_match_takes_subdomains_not_suffixes(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("Reject_Not_Pass_Domains = example.com");

	(void)state;
	assert_true(spfkit__mta_name_match(&cfg->reject_not_pass_domains, "example.com", 11));
	assert_true(spfkit__mta_name_match(&cfg->reject_not_pass_domains, "Mail.Example.COM.", 17));
	assert_false(spfkit__mta_name_match(&cfg->reject_not_pass_domains, "badexample.com", 14));
	assert_false(spfkit__mta_name_match(&cfg->reject_not_pass_domains, "com", 3));
	spfkit__mta_config_free(cfg);
}

static void name_listed_is_exact(void **state)
{
	struct spfkit__mta_config *cfg = parse_ok("HELO_Whitelist = relay.example.com");

	(void)state;
	assert_true(spfkit__mta_name_listed(&cfg->helo_whitelist, "Relay.Example.COM.", 18));
	assert_false(spfkit__mta_name_listed(&cfg->helo_whitelist, "a.relay.example.com", 19));
	assert_false(spfkit__mta_name_listed(&cfg->helo_whitelist, "example.com", 11));
	spfkit__mta_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_policyd_spf_defaults),
		cmocka_unit_test(debian_shipped_file_reads_clean),
		cmocka_unit_test(every_scalar_option_takes_its_values),
		cmocka_unit_test(string_options_are_kept),
		cmocka_unit_test(prospective_takes_v4_v6_and_mapped),
		cmocka_unit_test(lists_are_read),
		cmocka_unit_test(unknown_key_is_a_warning_with_line),
		cmocka_unit_test(key_in_wrong_case_gets_a_hint),
		cmocka_unit_test(value_in_wrong_case_is_an_error),
		cmocka_unit_test(bad_values_are_errors),
		cmocka_unit_test(reason_placeholders_are_checked),
		cmocka_unit_test(spaces_inside_lists_are_reported_and_trimmed),
		cmocka_unit_test(bad_list_entries_are_errors),
		cmocka_unit_test(syntax_errors_name_the_line),
		cmocka_unit_test(nul_byte_is_an_error),
		cmocka_unit_test(long_whitelist_line_is_taken),
		cmocka_unit_test(file_too_large_names_file_and_line),
		cmocka_unit_test(comments_and_blank_lines),
		cmocka_unit_test(repeated_option_last_wins_with_warning),
		cmocka_unit_test(unsupported_and_deprecated_are_warnings),
		cmocka_unit_test(authserv_hostname_is_the_host_name),
		cmocka_unit_test(load_reads_a_file),
		cmocka_unit_test(load_missing_file_is_eio),
		cmocka_unit_test(load_directory_is_refused),
		cmocka_unit_test(oversized_text_is_e2big),
		cmocka_unit_test(every_allocation_failure_is_clean),
		cmocka_unit_test(default_skip_list_covers_loopback_only),
		cmocka_unit_test(mapped_network_covers_ipv4_client),
		cmocka_unit_test(name_match_takes_subdomains_not_suffixes),
		cmocka_unit_test(name_listed_is_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
