/*
 * Reason codes (include/spfkit/reason.h, lib/spf/reason.c): for each rule,
 * a record or a small zone and the code its result or parse error must
 * carry, with the domain and the term to blame. The codes are the API:
 * a failure here is a changed meaning, whatever the problem text says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

/* ---- record syntax -------------------------------------------------- */

static const struct syntax_case {
	const char *record;
	enum spfkit_reason want;
	const char *term; /* the term to blame, or NULL */
} syntax_cases[] = {
	{"v=spf2 -all", SPFKIT_REASON_VERSION, NULL},
	{"v=spf1 -all foo", SPFKIT_REASON_UNKNOWN_MECHANISM, "foo"},
	{"v=spf1 a\xc3\xa9 -all", SPFKIT_REASON_NON_ASCII, "a\xc3\xa9"},
	{"v=spf1 a\001b -all", SPFKIT_REASON_CONTROL_CHAR, "a\001b"},
	{"v=spf1 -redirect=x.example", SPFKIT_REASON_QUALIFIED_MODIFIER, "-redirect=x.example"},
	{"v=spf1 =x -all", SPFKIT_REASON_EMPTY_MODIFIER_NAME, "=x"},
	{"v=spf1 1x=y -all", SPFKIT_REASON_MODIFIER_NAME, "1x=y"},
	{"v=spf1 redirect=a.example redirect=b.example", SPFKIT_REASON_DUPLICATE_REDIRECT,
	 "redirect=b.example"},
	{"v=spf1 exp=a.example exp=b.example -all", SPFKIT_REASON_DUPLICATE_EXP, "exp=b.example"},
	{"v=spf1 include -all", SPFKIT_REASON_MISSING_DOMAIN, "include"},
	{"v=spf1 ip4 -all", SPFKIT_REASON_IP4_MISSING, "ip4"},
	{"v=spf1 ip6 -all", SPFKIT_REASON_IP6_MISSING, "ip6"},
	{"v=spf1 all:x", SPFKIT_REASON_ALL_ARGUMENT, "all:x"},
	{"v=spf1 mxx -all", SPFKIT_REASON_UNKNOWN_MECHANISM, "mxx"},
	{"v=spf1 ptrx:a.example -all", SPFKIT_REASON_UNKNOWN_MECHANISM, "ptrx:a.example"},
	{"v=spf1 a! -all", SPFKIT_REASON_MECHANISM_TEXT, "a!"},
	{"v=spf1 exists: -all", SPFKIT_REASON_EMPTY_DOMAIN, "exists:"},
	{"v=spf1 a:example -all", SPFKIT_REASON_DOMAIN_END, "a:example"},
	{"v=spf1 a:example.com.. -all", SPFKIT_REASON_EMPTY_TOPLABEL, "a:example.com.."},
	{"v=spf1 a:example.c_m -all", SPFKIT_REASON_TOPLABEL_CHAR, "a:example.c_m"},
	{"v=spf1 a:example.-com -all", SPFKIT_REASON_TOPLABEL_DASH_START, "a:example.-com"},
	{"v=spf1 a:example.com- -all", SPFKIT_REASON_TOPLABEL_DASH_END, "a:example.com-"},
	{"v=spf1 a:example.123 -all", SPFKIT_REASON_TOPLABEL_NUMERIC, "a:example.123"},
	{"v=spf1 ip4:192.0.2.0/ -all", SPFKIT_REASON_CIDR_DIGITS, "ip4:192.0.2.0/"},
	{"v=spf1 a/024 -all", SPFKIT_REASON_CIDR_ZERO, "a/024"},
	{"v=spf1 ip4:192.0.2.0/33 -all", SPFKIT_REASON_IP4_CIDR, "ip4:192.0.2.0/33"},
	{"v=spf1 ip6:2001:db8::/129 -all", SPFKIT_REASON_IP6_CIDR, "ip6:2001:db8::/129"},
	{"v=spf1 a/24/64 -all", SPFKIT_REASON_IP6_CIDR_SLASHES, "a/24/64"},
	{"v=spf1 mx/24x -all", SPFKIT_REASON_CIDR_TEXT, "mx/24x"},
	{"v=spf1 ip4:192.0.2.0//64 -all", SPFKIT_REASON_IP4_IP6_CIDR, "ip4:192.0.2.0//64"},
	{"v=spf1 ip6:2001:db8:://64 -all", SPFKIT_REASON_IP6_DOUBLE_SLASH, "ip6:2001:db8:://64"},
	{"v=spf1 ip4:192.0.2.1x -all", SPFKIT_REASON_IP4_TEXT, "ip4:192.0.2.1x"},
	{"v=spf1 ip4:192.0.2 -all", SPFKIT_REASON_IP4_FORM, "ip4:192.0.2"},
	{"v=spf1 ip4:192.0.02.1 -all", SPFKIT_REASON_IP4_ZERO, "ip4:192.0.02.1"},
	{"v=spf1 ip4:192.0.256.1 -all", SPFKIT_REASON_IP4_RANGE, "ip4:192.0.256.1"},
	{"v=spf1 ip6:1:2:3:4:5:6:7:8:9 -all", SPFKIT_REASON_IP6_GROUPS, "ip6:1:2:3:4:5:6:7:8:9"},
	{"v=spf1 ip6:::192.0.2.1x -all", SPFKIT_REASON_IP6_QUAD_TEXT, "ip6:::192.0.2.1x"},
	{"v=spf1 ip6:2001:db8::g -all", SPFKIT_REASON_IP6_CHAR, "ip6:2001:db8::g"},
	{"v=spf1 ip6:2001:db8::12345 -all", SPFKIT_REASON_IP6_GROUP_SIZE, "ip6:2001:db8::12345"},
	{"v=spf1 ip6:1::2::3 -all", SPFKIT_REASON_IP6_DOUBLE_COLON, "ip6:1::2::3"},
	{"v=spf1 ip6:2001:db8: -all", SPFKIT_REASON_IP6_COLON_END, "ip6:2001:db8:"},
	{"v=spf1 ip6:2001:db8 -all", SPFKIT_REASON_IP6_FORM, "ip6:2001:db8"},
	{"v=spf1 ip6:1:2:3:4::5:6:7:8 -all", SPFKIT_REASON_IP6_FULL_COLONS,
	 "ip6:1:2:3:4::5:6:7:8"},
	{"v=spf1 exists:%{c}.example -all", SPFKIT_REASON_MACRO_EXP_LETTER,
	 "exists:%{c}.example"},
	{"v=spf1 exists:%{d", SPFKIT_REASON_MACRO_UNTERMINATED, "exists:%{d"},
	{"v=spf1 exists:%{z}.example -all", SPFKIT_REASON_MACRO_LETTER, "exists:%{z}.example"},
	{"v=spf1 exists:%{d0}.example -all", SPFKIT_REASON_MACRO_ZERO, "exists:%{d0}.example"},
	{"v=spf1 exists:%x.example -all", SPFKIT_REASON_MACRO_PERCENT, "exists:%x.example"},
	{"v=spf1 exists:%{d!}.example -all", SPFKIT_REASON_MACRO_CHAR, "exists:%{d!}.example"},
};

/* The code of a parse error, and of the permerror evaluating it gives,
 * with the term it names. */
static void syntax_codes(void **state)
{
	struct spfkit_zone *zone;
	struct spfkit_ctx *ctx;
	size_t i;

	(void)state;
	assert_int_equal(spfkit_zone_new(NULL, &zone), 0);
	assert_int_equal(spfkit_ctx_new(NULL, &ctx), 0);
	for (i = 0; i < sizeof(syntax_cases) / sizeof(syntax_cases[0]); i++) {
		const struct syntax_case *c = &syntax_cases[i];
		struct spfkit_parse_error pe;
		struct spfkit_record *rec = NULL;
		struct spfkit_resolver *r;
		struct spfkit_request req;
		struct spfkit_eval *ev = NULL;
		const struct spfkit_result *res;
		enum spfkit_reason got;
		int rc = spfkit_record_parse(c->record, strlen(c->record), NULL, &rec, &pe);

		if (rc != SPFKIT_ESYNTAX)
			fail_msg("%s: parse gave %d, want SPFKIT_ESYNTAX", c->record, rc);
		got = spfkit_parse_error_reason(&pe);
		if (got != c->want)
			fail_msg("%s: parse error reason %s (\"%s\"), want %s", c->record,
				 spfkit_reason_name(got), pe.rule, spfkit_reason_name(c->want));
		/* the rule text is the code's (it is how the code is found) */
		assert_ptr_equal(pe.rule, spfkit_reason_text(c->want));
		if (c->want == SPFKIT_REASON_VERSION)
			continue; /* spfkit_eval_new_record() takes only SPF text */
		spfkit_request_init(&req);
		assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
		req.sender = "user@example.com";
		req.sender_len = strlen(req.sender);
		assert_int_equal(spfkit_zone_resolver(zone, &r), 0);
		assert_int_equal(spfkit_check_record(ctx, r, &req, c->record, strlen(c->record), &ev),
				 0);
		spfkit_resolver_free(r);
		res = spfkit_eval_result(ev);
		assert_non_null(res);
		assert_int_equal(res->code, SPFKIT_RESULT_PERMERROR);
		if (res->reason != c->want)
			fail_msg("%s: result reason %s, want %s", c->record,
				 spfkit_reason_name(res->reason), spfkit_reason_name(c->want));
		assert_string_equal(res->reason_domain, "example.com");
		assert_non_null(res->reason_term);
		assert_int_equal(res->reason_term_len, strlen(c->term));
		if (memcmp(res->reason_term, c->term, res->reason_term_len) != 0)
			fail_msg("%s: term '%s', want '%s'", c->record, res->reason_term, c->term);
		assert_int_equal(res->reason_term_offset, (size_t)(strstr(c->record, c->term) - c->record));
		spfkit_eval_free(ev);
	}
	spfkit_ctx_free(ctx);
	spfkit_zone_free(zone);
}

/* ---- evaluation ----------------------------------------------------- */

#define MAX_RRS 16

struct rr {
	const char *name;
	uint16_t type; /* 0: the name times out */
	const char *data; /* TXT text, MX target or dotted IPv4 */
};

static const struct eval_case {
	const char *label;
	struct rr rrs[MAX_RRS];
	unsigned dns_terms; /* the context's limit; 0: the RFC's */
	enum spfkit_result_code code;
	enum spfkit_reason want;
	const char *domain; /* reason_domain */
	const char *term;   /* reason_term, or NULL */
} eval_cases[] = {
	{"pass",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 ip4:192.0.2.1 -all"}},
	 0, SPFKIT_RESULT_PASS, SPFKIT_REASON_NONE, NULL, NULL},
	{"fail",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 -all"}},
	 0, SPFKIT_RESULT_FAIL, SPFKIT_REASON_NONE, NULL, NULL},
	{"11 DNS terms (4.6.4)",
	 {{"example.com", SPFKIT_RR_TXT,
	   "v=spf1 a:h.example a:h.example a:h.example a:h.example a:h.example a:h.example "
	   "a:h.example a:h.example a:h.example a:h.example mx:h.example -all"},
	  {"h.example", SPFKIT_RR_A, "198.51.100.1"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_DNS_TERMS, "example.com", "mx:h.example"},
	{"3 void lookups (4.6.4)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 a:n1.example a:n2.example a:n3.example -all"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_VOID_LOOKUPS, "example.com", "a:n3.example"},
	{"11 MX names (4.6.4)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 mx:m.example -all"},
	  {"m.example", SPFKIT_RR_MX, "h1.example"}, {"m.example", SPFKIT_RR_MX, "h2.example"},
	  {"m.example", SPFKIT_RR_MX, "h3.example"}, {"m.example", SPFKIT_RR_MX, "h4.example"},
	  {"m.example", SPFKIT_RR_MX, "h5.example"}, {"m.example", SPFKIT_RR_MX, "h6.example"},
	  {"m.example", SPFKIT_RR_MX, "h7.example"}, {"m.example", SPFKIT_RR_MX, "h8.example"},
	  {"m.example", SPFKIT_RR_MX, "h9.example"}, {"m.example", SPFKIT_RR_MX, "h10.example"},
	  {"m.example", SPFKIT_RR_MX, "h11.example"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_MX_NAMES, "example.com", "mx:m.example"},
	{"two records (4.5)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 -all"},
	  {"example.com", SPFKIT_RR_TXT, "v=spf1 +all"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_MULTIPLE_RECORDS, "example.com", NULL},
	{"include of a domain without a record (5.2)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 include:none.example -all"},
	  {"none.example", SPFKIT_RR_TXT, "hello"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_INCLUDE_NONE, "example.com",
	 "include:none.example"},
	{"include of no domain name (5.2)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 include:a..example -all"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_INCLUDE_TARGET, "example.com",
	 "include:a..example"},
	{"redirect to a domain without a record (6.1)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 redirect=none.example"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_REDIRECT_NONE, "none.example", NULL},
	{"redirect to no domain name (6.1)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 redirect=a..example"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_REDIRECT_TARGET, "a..example", NULL},
	{"a syntax error in an included record (4.6)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 include:bad.example -all"},
	  {"bad.example", SPFKIT_RR_TXT, "v=spf1 ip4:192.0.2.0/33 -all"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_IP4_CIDR, "bad.example", "ip4:192.0.2.0/33"},
	{"an include error reaches the top (5.2)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 include:i.example -all"},
	  {"i.example", SPFKIT_RR_TXT, "v=spf1 a:n1.example a:n2.example a:n3.example"}},
	 0, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_VOID_LOOKUPS, "i.example", "a:n3.example"},
	{"include nesting past the evaluator's depth",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 include:example.com -all"}},
	 100, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_INCLUDE_DEPTH, "example.com",
	 "include:example.com"},
	{"a timeout on a term's question (5)",
	 {{"example.com", SPFKIT_RR_TXT, "v=spf1 a:t.example -all"}, {"t.example", 0, NULL}},
	 0, SPFKIT_RESULT_TEMPERROR, SPFKIT_REASON_DNS_TIMEOUT, "example.com", "a:t.example"},
	{"a timeout on the record's question (4.4)",
	 {{"example.com", 0, NULL}},
	 0, SPFKIT_RESULT_TEMPERROR, SPFKIT_REASON_DNS_TIMEOUT, "example.com", NULL},
};

static void add_rr(struct spfkit_zone *z, const struct rr *rr)
{
	unsigned char a[4];
	const void *data = rr->data;
	size_t len = rr->data != NULL ? strlen(rr->data) : 0;

	if (rr->type == 0) {
		assert_int_equal(spfkit_zone_add_timeout(z, rr->name, strlen(rr->name)), 0);
		return;
	}
	if (rr->type == SPFKIT_RR_A) {
		struct spfkit_ip ip;

		assert_int_equal(spfkit_ip_parse(rr->data, len, &ip), 0);
		memcpy(a, ip.addr, 4);
		data = a;
		len = 4;
	}
	assert_int_equal(spfkit_zone_add(z, rr->name, strlen(rr->name), rr->type, 300, data, len,
					 10), 0);
}

static const struct spfkit_result *evaluate(struct spfkit_ctx *ctx, struct spfkit_zone *z,
					    struct spfkit_eval **ev)
{
	struct spfkit_resolver *r;
	struct spfkit_request req;

	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = "user@example.com";
	req.sender_len = strlen(req.sender);
	req.helo = "mx.example.com";
	req.helo_len = strlen(req.helo);
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	assert_int_equal(spfkit_check(ctx, r, &req, ev), 0);
	spfkit_resolver_free(r);
	return spfkit_eval_result(*ev);
}

static void eval_codes(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(eval_cases) / sizeof(eval_cases[0]); i++) {
		const struct eval_case *c = &eval_cases[i];
		struct spfkit_config cfg;
		struct spfkit_zone *z;
		struct spfkit_ctx *ctx;
		struct spfkit_eval *ev = NULL;
		const struct spfkit_result *res;

		spfkit_config_init(&cfg);
		cfg.limits.dns_terms = c->dns_terms;
		assert_int_equal(spfkit_zone_new(NULL, &z), 0);
		assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
		for (k = 0; k < MAX_RRS && c->rrs[k].name != NULL; k++)
			add_rr(z, &c->rrs[k]);
		res = evaluate(ctx, z, &ev);
		assert_non_null(res);
		if (res->code != c->code || res->reason != c->want)
			fail_msg("%s: got %s/%s (%s), want %s/%s", c->label,
				 spfkit_result_name(res->code), spfkit_reason_name(res->reason),
				 res->problem ? res->problem : "-", spfkit_result_name(c->code),
				 spfkit_reason_name(c->want));
		if (c->domain == NULL)
			assert_null(res->reason_domain);
		else if (res->reason_domain == NULL || strcmp(res->reason_domain, c->domain) != 0)
			fail_msg("%s: reason domain %s, want %s", c->label,
				 res->reason_domain ? res->reason_domain : "NULL", c->domain);
		if (c->term == NULL) {
			assert_null(res->reason_term);
			assert_int_equal(res->reason_term_len, 0);
		} else if (res->reason_term == NULL || strcmp(res->reason_term, c->term) != 0) {
			fail_msg("%s: reason term %s, want %s", c->label,
				 res->reason_term ? res->reason_term : "NULL", c->term);
		}
		spfkit_eval_free(ev);
		spfkit_ctx_free(ctx);
		spfkit_zone_free(z);
	}
}

/* ---- DNS failures: the detail's address decides --------------------- */

struct stub {
	struct spfkit_resolver r;
	const char *detail;
	spfkit_dns_cb *cb;
	void *arg;
	int pending;
};

static int stub_submit(void *impl, const char *name, size_t len, uint16_t type, spfkit_dns_cb *cb,
		       void *arg, uint64_t *handle)
{
	struct stub *s = impl;

	(void)name;
	(void)len;
	(void)type;
	s->cb = cb;
	s->arg = arg;
	s->pending = 1;
	*handle = 1;
	return 0;
}

static void stub_cancel(void *impl, uint64_t handle)
{
	(void)handle;
	((struct stub *)impl)->pending = 0;
}

static int stub_wait(void *impl, int timeout_ms)
{
	struct stub *s = impl;
	struct spfkit_dns_answer a = {.status = SPFKIT_DNS_TEMPFAIL, .detail = s->detail};

	(void)timeout_ms;
	if (!s->pending)
		return 0;
	s->pending = 0;
	s->cb(s->arg, &a);
	return 1;
}

static void stub_destroy(void *impl)
{
	(void)impl;
}

static const struct spfkit_resolver_ops stub_ops = {stub_submit, stub_cancel, stub_wait,
						     stub_destroy};

/* One TEMPFAIL answer with `detail` for the record's question. */
static enum spfkit_reason tempfail_reason(const char *detail)
{
	struct stub s = {.r = {&stub_ops, NULL}, .detail = detail};
	struct spfkit_ctx *ctx;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	const struct spfkit_result *res;
	enum spfkit_reason got;

	s.r.impl = &s;
	assert_int_equal(spfkit_ctx_new(NULL, &ctx), 0);
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = "user@example.com";
	req.sender_len = strlen(req.sender);
	assert_int_equal(spfkit_check(ctx, &s.r, &req, &ev), 0);
	res = spfkit_eval_result(ev);
	assert_non_null(res);
	assert_int_equal(res->code, SPFKIT_RESULT_TEMPERROR);
	got = res->reason;
	spfkit_eval_free(ev);
	spfkit_ctx_free(ctx);
	return got;
}

static void dns_detail_codes(void **state)
{
	char copy[16];

	(void)state;
	assert_int_equal(tempfail_reason(spfkit_reason_text(SPFKIT_REASON_DNS_TIMEOUT)),
			 SPFKIT_REASON_DNS_TIMEOUT);
	assert_int_equal(tempfail_reason(spfkit_reason_text(SPFKIT_REASON_DNS_SERVFAIL)),
			 SPFKIT_REASON_DNS_SERVFAIL);
	assert_int_equal(tempfail_reason(spfkit_reason_text(SPFKIT_REASON_DNS_REFUSED)),
			 SPFKIT_REASON_DNS_REFUSED);
	/* the same words at another address are just text: no code read from words */
	snprintf(copy, sizeof(copy), "%s", spfkit_reason_text(SPFKIT_REASON_DNS_SERVFAIL));
	assert_int_equal(tempfail_reason(copy), SPFKIT_REASON_DNS_ERROR);
	assert_int_equal(tempfail_reason(NULL), SPFKIT_REASON_DNS_ERROR);
	/* a code that is not a DNS one is not taken from a detail */
	assert_int_equal(tempfail_reason(spfkit_reason_text(SPFKIT_REASON_UNKNOWN_MECHANISM)),
			 SPFKIT_REASON_DNS_ERROR);
}

/* A SERVFAIL reply read by the library's wire parser (the c-ares
 * backend's path) gives the SERVFAIL code. */
static void servfail_wire(void **state)
{
	/* id 1, QR RD RA, rcode 2; one question: example.com TXT IN */
	static const unsigned char msg[] = {0x00, 0x01, 0x81, 0x82, 0x00, 0x01, 0x00, 0x00,
					    0x00, 0x00, 0x00, 0x00, 7,    'e',  'x',  'a',
					    'm',  'p',  'l',  'e',  3,    'c',  'o',  'm',
					    0,    0x00, 0x10, 0x00, 0x01};
	struct spfkit_dns_answer *a = NULL;

	(void)state;
	assert_int_equal(spfkit_dns_answer_from_wire(msg, sizeof(msg), "example.com", 11,
						     SPFKIT_RR_TXT, NULL, &a),
			 0);
	assert_int_equal(a->status, SPFKIT_DNS_TEMPFAIL);
	assert_ptr_equal(a->detail, spfkit_reason_text(SPFKIT_REASON_DNS_SERVFAIL));
	assert_int_equal(tempfail_reason(a->detail), SPFKIT_REASON_DNS_SERVFAIL);
	spfkit_dns_answer_free(a);
}

/* ---- names ---------------------------------------------------------- */

/* Every code has a distinct name that reads back, a text and a section;
 * the values are the ABI (reason.h): a few are pinned here. */
static void names(void **state)
{
	int i, j;

	(void)state;
	assert_int_equal(SPFKIT_REASON_DNS_TERMS, 1);
	assert_int_equal(SPFKIT_REASON_DNS_TIMEOUT, 11);
	assert_int_equal(SPFKIT_REASON_VERSION, 18);
	assert_int_equal(SPFKIT_REASON_MACRO_CONTROL, 69);
	for (i = 0; i <= SPFKIT_REASON_MACRO_CONTROL; i++) {
		const char *n = spfkit_reason_name((enum spfkit_reason)i);

		assert_string_not_equal(n, "unknown");
		assert_int_equal(spfkit_reason_from_name(n, strlen(n)), i);
		for (j = 0; j < i; j++)
			assert_string_not_equal(n, spfkit_reason_name((enum spfkit_reason)j));
		if (i > 0) {
			assert_true(spfkit_reason_text((enum spfkit_reason)i)[0] != '\0');
			assert_true(spfkit_reason_section((enum spfkit_reason)i)[0] != '\0');
		}
	}
	assert_string_equal(spfkit_reason_name(SPFKIT_REASON_DNS_TERMS), "dns-terms");
	assert_string_equal(spfkit_reason_section(SPFKIT_REASON_DNS_TERMS), "4.6.4");
	assert_string_equal(spfkit_reason_name((enum spfkit_reason)(SPFKIT_REASON_MACRO_CONTROL + 1)),
			    "unknown");
	assert_int_equal(spfkit_reason_from_name("DNS-Terms", 9), SPFKIT_REASON_DNS_TERMS);
	assert_int_equal(spfkit_reason_from_name("dns-term", 8), -1);
	assert_int_equal(spfkit_reason_from_name(NULL, 0), -1);
	assert_int_equal(spfkit_parse_error_reason(NULL), SPFKIT_REASON_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syntax_codes),
		cmocka_unit_test(eval_codes),
		cmocka_unit_test(dns_detail_codes),
		cmocka_unit_test(servfail_wire),
		cmocka_unit_test(names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
