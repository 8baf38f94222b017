/*
 * Golden comparison with Debian's libspf2 over the RFC 7208 test suite
 * (tests/rfc7208/rfc7208-tests.yml, read by tests/rfc7208/suite.c as
 * spfkit's own runners read it): every case of every scenario through
 * our libspf2.so.2 and through the real one, both loaded with dlopen(),
 * the scenario's zonedata served to both by one layer over spfkit's zone
 * backend (zone_backend_layer.h). The identity is MAIL FROM, as a
 * libspf2 program asks it: SPF_request_set_env_from() with the case's
 * mailfrom, and postmaster@<helo> when that is empty.
 *
 *   test_golden_rfc7208 OUR_LIBSPF2_SO RFC7208_TESTS_YML [REAL_LIBSPF2_SO] [-v]
 *
 * Same result: every text must be libspf2's (golden_texts.h), and the
 * result one the suite accepts. Different result: the difference must
 * match one of the rules below, each a row of the table in
 * docs/libspf2-compat.md, and our result must be one the suite accepts.
 * Anything else fails, naming the scenario, the case, both results and
 * both texts. The summary counts the cases per rule, and how often our
 * permerror carries the error code libspf2 gives for the same case.
 * The layer serves the suite's type-99 (SPF) records too: ours must
 * never ask for them (RFC 7208 §3.1); what the real library asks is
 * counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "golden_api.h"
#include "golden_texts.h"
#include "suite.h"
#include "zone_backend_layer.h"

/* What one case looks like to the rules. */
struct seen {
	const struct suite_scenario *sc;
	const struct suite_case *c;
	const struct spfkit_zone *zone;
	const char *domain; /* the checked domain */
	struct outcome o, r;
	int r_without_type99; /* libspf2's result when type 99 is hidden, or -1 */
};

/* The rules for a different result, in the order they are tried. */
enum rule {
	R_BOTH_ACCEPTED,
	R_TYPE99,
	R_SYNTAX_INVALID,
	R_CIDR_ZERO,
	R_MODIFIER_NAME,
	R_TEMP_RECORD,
	R_TERM_LIMIT,
	R_VOID_LIMIT,
	R_PTR_LIMIT,
	R_PTR_DNS_ERROR,
	R_REDIRECT_IN_PLACE,
	R_IPV4_MAPPED,
	R_UNCHECKED_TOPLABEL,
	R_UNCHECKED_EMPTY_DOMAIN,
	R_UNCHECKED_TWICE,
	R_UNCHECKED_MACRO,
	R_UNCHECKED_BYTES,
	R_UNCHECKED_LEADING_ZERO,
	R_REDIRECT_COLON,
	/* same result, other permerror code or explanation */
	R_LOOP_CODE,
	R_EXP_SPACES,
	R_EXP_IGNORED,
	R_EXP_NOT_FOUND,
	/* same result, both not what the suite wants */
	R_TXT_NUL,
	R_COUNT
};

static const char *const rule_names[R_COUNT] = {
	[R_BOTH_ACCEPTED] = "the suite accepts libspf2's result too",
	[R_TYPE99] = "libspf2 queries type 99 (SPF)",
	[R_SYNTAX_INVALID] = "libspf2 gives (invalid) for a syntax error; we give permerror",
	[R_CIDR_ZERO] = "libspf2 refuses cidr-length 0 ((invalid)); RFC 7208 5.6 allows it",
	[R_MODIFIER_NAME] = "libspf2 refuses '.' in a modifier name; RFC 7208 4.6.1 allows it",
	[R_TEMP_RECORD] = "DNS failure on the domain's record: libspf2 (invalid), we temperror",
	[R_TERM_LIMIT] = "libspf2's DNS-term limit resets inside includes (#51)",
	[R_VOID_LIMIT] = "libspf2 has no void-lookup limit",
	[R_PTR_LIMIT] = "libspf2 permerror for over 10 PTR names; RFC 7208 4.6.4 checks 10",
	[R_PTR_DNS_ERROR] = "libspf2 temperror on a PTR name's DNS error; RFC 7208 5.5 skips it",
	[R_REDIRECT_IN_PLACE] = "libspf2 follows redirect= beside all; RFC 7208 6.1 ignores it",
	[R_IPV4_MAPPED] = "IPv4-mapped client: IPv4 for us (RFC 7208 5), IPv6 for libspf2",
	[R_UNCHECKED_TOPLABEL] = "libspf2 does not check the toplabel of a domain-spec (7.1)",
	[R_UNCHECKED_EMPTY_DOMAIN] = "libspf2 does not check for an empty domain-spec",
	[R_UNCHECKED_TWICE] = "libspf2 does not check for a second exp= or redirect= (6)",
	[R_UNCHECKED_MACRO] = "libspf2 does not check macro-string syntax (7.1)",
	[R_UNCHECKED_BYTES] = "libspf2 does not check for bytes outside the grammar (4.6.1)",
	[R_UNCHECKED_LEADING_ZERO] = "libspf2 does not check for a leading zero in cidr-length",
	[R_REDIRECT_COLON] = "libspf2 takes \"redirect:\" as redirect=; RFC 7208 says unknown",
	[R_LOOP_CODE] = "include/redirect loop: libspf2 SPF_E_RECURSIVE, we SPF_E_BIG_DNS",
	[R_EXP_SPACES] = "exp= text: libspf2 turns spaces into '%', leaves macros (7)",
	[R_EXP_IGNORED] = "libspf2 uses an exp= text RFC 7208 6.2 ignores",
	[R_EXP_NOT_FOUND] = "libspf2 misses the exp= text: a name over 253 bytes (7.3)",
	[R_TXT_NUL] = "a NUL in TXT: SPF_dns_rr_t has C strings, both see the record cut",
};

static int failures;
static struct golden_tally texts; /* text comparisons of agreeing cases */
static unsigned cases, agree, per_rule[R_COUNT];
static unsigned code_same, code_other, code_none;
static unsigned real_type99;
static int verbose;
static char rule_cases[R_COUNT][600];

static int accepted(const struct suite_case *c, const struct api *a, SPF_result_t result)
{
	const char *name = a->strresult(result);
	int code = spfkit_result_from_name(name, strlen(name));

	for (size_t i = 0; i < c->nresults; i++)
		if (c->results[i] == code)
			return 1;
	return 0;
}

static int evaluated(SPF_result_t r)
{
	return r == SPF_RESULT_PASS || r == SPF_RESULT_FAIL || r == SPF_RESULT_SOFTFAIL ||
	       r == SPF_RESULT_NEUTRAL;
}

/* The checked domain's one SPF record, from the zone, into buf ("" when
 * it has none or several); *has_nul when a TXT string holds a NUL. */
static void domain_record(const struct seen *s, char *buf, size_t size, int *has_nul)
{
	struct spfkit_dns_answer ans;
	size_t found = 0;

	buf[0] = '\0';
	*has_nul = 0;
	if (spfkit_zone_lookup(s->zone, s->domain, strlen(s->domain), SPFKIT_RR_TXT, &ans) != 0 ||
	    ans.status != SPFKIT_DNS_OK)
		return;
	for (size_t i = 0; i < ans.count; i++) {
		const struct spfkit_dns_rr *rr = &ans.rrs[i];

		if (memchr(rr->data, '\0', rr->len) != NULL)
			*has_nul = 1;
		if (!spfkit_record_is_spf((const char *)rr->data, rr->len) || rr->len >= size)
			continue;
		if (found++ == 0) {
			memcpy(buf, rr->data, rr->len);
			buf[rr->len] = '\0';
		}
	}
	if (found != 1)
		buf[0] = '\0';
}

/* Does the record have a term named `name` (mechanism, after its
 * qualifier, or modifier)? Returns its position among the terms
 * (1-based), or 0. */
static int term_at(const char *record, const char *name)
{
	size_t n = strlen(name);
	int pos = 0;

	for (const char *t = record; *t != '\0';) {
		size_t len = strcspn(t, " ");

		if (len > 0) {
			const char *p = t + strspn(t, "+-~?");
			size_t rest = len - (size_t)(p - t);

			pos++;
			if (rest >= n && strncasecmp(p, name, n) == 0 &&
			    (rest == n || strchr(":/=", p[n]) != NULL))
				return pos;
		}
		t += len;
		t += strspn(t, " ");
	}
	return 0;
}

static int our_message(const struct seen *s, const char *words)
{
	return s->o.nmessages > 0 && strstr(s->o.first_message, words) != NULL;
}

static int real_message(const struct seen *s, const char *words)
{
	return s->r.nmessages > 0 && strstr(s->r.first_message, words) != NULL;
}

/* A syntax error found by our parser: "SPF record of D, term ... : RULE (RFC ...)". */
static int our_syntax_error(const struct seen *s)
{
	return s->o.result == SPF_RESULT_PERMERROR &&
	       strncmp(s->o.first_message, "SPF record of ", 14) == 0 &&
	       strstr(s->o.first_message, " (RFC 7208 section ") != NULL;
}

/* The rule a different result falls under, or -1. */
static int classify_different(const struct seen *s, const struct api *ours)
{
	const struct outcome *o = &s->o, *r = &s->r;
	char record[4096];
	int nul;

	domain_record(s, record, sizeof(record), &nul);
	if (accepted(s->c, ours, r->result))
		return R_BOTH_ACCEPTED;
	if (s->r_without_type99 >= 0 && s->r_without_type99 == (int)o->result)
		return R_TYPE99;
	if (o->result == SPF_RESULT_PERMERROR && r->result == SPF_RESULT_INVALID &&
	    our_syntax_error(s))
		return R_SYNTAX_INVALID;
	if (o->result != SPF_RESULT_PERMERROR && r->first_code == SPF_E_INVALID_CIDR &&
	    real_message(s, "(=0)"))
		return R_CIDR_ZERO;
	if (o->result != SPF_RESULT_PERMERROR && r->first_code == SPF_E_INVALID_CHAR &&
	    real_message(s, "Invalid character in middle of mechanism"))
		return R_MODIFIER_NAME;
	if (o->result == SPF_RESULT_TEMPERROR && o->err == SPF_E_DNS_ERROR &&
	    r->result == SPF_RESULT_INVALID && r->first_code == SPF_E_DNS_ERROR)
		return R_TEMP_RECORD;
	if (o->result == SPF_RESULT_PERMERROR && o->err == SPF_E_BIG_DNS &&
	    r->result != SPF_RESULT_PERMERROR && our_message(s, "DNS-querying terms"))
		return R_TERM_LIMIT;
	if (o->result == SPF_RESULT_PERMERROR && o->err == SPF_E_BIG_DNS &&
	    r->result != SPF_RESULT_PERMERROR && our_message(s, "void DNS lookups"))
		return R_VOID_LIMIT;
	if (r->result == SPF_RESULT_PERMERROR && r->err == SPF_E_BIG_DNS && evaluated(o->result) &&
	    term_at(record, "ptr"))
		return R_PTR_LIMIT;
	if (r->result == SPF_RESULT_TEMPERROR && evaluated(o->result) && term_at(record, "ptr"))
		return R_PTR_DNS_ERROR;
	if (r->result == SPF_RESULT_PERMERROR && r->err == SPF_E_RECURSIVE && evaluated(o->result) &&
	    term_at(record, "redirect") != 0 && term_at(record, "all") > term_at(record, "redirect"))
		return R_REDIRECT_IN_PLACE;
	if (strncasecmp(s->c->host, "::ffff:", 7) == 0 && strchr(s->c->host, '.') != NULL &&
	    evaluated(o->result) && evaluated(r->result))
		return R_IPV4_MAPPED;
	if (!our_syntax_error(s) || !evaluated(r->result))
		return -1;
	/* a record RFC 7208 calls broken, evaluated by libspf2 as far as
	 * it goes: which rule did it not check? */
	if (our_message(s, "toplabel"))
		return R_UNCHECKED_TOPLABEL;
	if (our_message(s, "empty domain-spec"))
		return R_UNCHECKED_EMPTY_DOMAIN;
	if (our_message(s, ": second exp modifier") || our_message(s, ": second redirect modifier"))
		return R_UNCHECKED_TWICE;
	if (our_message(s, ": '%' not followed by") ||
	    our_message(s, ": macro letter allowed only in exp"))
		return R_UNCHECKED_MACRO;
	if (our_message(s, ": non-ASCII byte") || our_message(s, ": control character"))
		return R_UNCHECKED_BYTES;
	if (our_message(s, ": cidr-length with a leading zero"))
		return R_UNCHECKED_LEADING_ZERO;
	if (our_message(s, ": unknown mechanism") && term_at(record, "redirect") != 0 &&
	    strstr(o->first_message, "term 'redirect:") != NULL)
		return R_REDIRECT_COLON;
	return -1;
}

/* The server's default explanation, SPF_DEFAULT_EXP expanded for the
 * case ("Please see http://www.openspf.org/Why?id=...&receiver=...")? */
static int default_explanation(const char *got)
{
	static const char default_start[] = "Please see http://www.openspf.org/Why?id=";
	static const char default_end[] = "&receiver=mx.receiver.example";
	size_t n = got != NULL ? strlen(got) : 0;

	return n > 0 && strncmp(got, default_start, sizeof(default_start) - 1) == 0 &&
	       n >= sizeof(default_end) - 1 &&
	       strcmp(got + n - (sizeof(default_end) - 1), default_end) == 0;
}

/* Our explanation is the one the suite wants ("DEFAULT": the server's). */
static int suite_explanation_ok(const struct suite_case *c, const char *got)
{
	if (got == NULL)
		return 0;
	if (strcmp(c->explanation, "DEFAULT") != 0)
		return strcmp(got, c->explanation) == 0;
	return default_explanation(got);
}

/* Which documented rule makes libspf2's explanation differ from ours,
 * the suite's: -1 when none. */
static int explanation_rule(const struct seen *s)
{
	int suite_default = strcmp(s->c->explanation, "DEFAULT") == 0;

	if (suite_default && s->r.explanation != NULL && !default_explanation(s->r.explanation))
		return R_EXP_IGNORED;
	if (!suite_default && default_explanation(s->r.explanation))
		return R_EXP_NOT_FOUND;
	if (!suite_default && s->r.explanation != NULL && strchr(s->r.explanation, '%') != NULL)
		return R_EXP_SPACES;
	return -1;
}

/* *text with its first `from` replaced by `to` (a new string). */
static void replace_in(char **text, const char *from, const char *to)
{
	const char *at = *text != NULL && from != NULL && from[0] != '\0' ? strstr(*text, from) : NULL;
	size_t head, size;
	char *out;

	if (at == NULL || to == NULL)
		return;
	head = (size_t)(at - *text);
	size = strlen(*text) - strlen(from) + strlen(to) + 1;
	out = malloc(size);
	if (out == NULL)
		return;
	snprintf(out, size, "%.*s%s%s", (int)head, *text, to, at + strlen(from));
	free(*text);
	*text = out;
}

/* *text ends in ": " and `from`, or the start of it where libspf2 cut
 * its header comment: that end becomes ": " and `to` (a new string). */
static void replace_end(char **text, const char *from, const char *to)
{
	size_t n = *text != NULL ? strlen(*text) : 0;
	char *out;

	for (size_t k = strlen(from); k > 0; k--) {
		if (n < k + 2 || memcmp(*text + n - k, from, k) != 0 ||
		    memcmp(*text + n - k - 2, ": ", 2) != 0)
			continue;
		out = malloc(n - k + strlen(to) + 1);
		if (out == NULL)
			return;
		memcpy(out, *text, n - k);
		memcpy(out + n - k, to, strlen(to) + 1);
		free(*text);
		*text = out;
		return;
	}
}

static void count_rule(int rule, const struct suite_case *c)
{
	size_t used = strlen(rule_cases[rule]);

	per_rule[rule]++;
	if (used + strlen(c->name) + 3 < sizeof(rule_cases[rule]))
		snprintf(rule_cases[rule] + used, sizeof(rule_cases[rule]) - used, "%s%s",
			 used > 0 ? ", " : "", c->name);
}

static void show(const char *tag, const struct api *a, const struct outcome *x)
{
	printf("    %s: %s reason %d err %d \"%s\"; header \"%s\"; smtp \"%s\"\n", tag,
	       a->strresult(x->result), x->reason, x->err, x->first_message,
	       x->header_comment ? x->header_comment : "(null)",
	       x->smtp_comment ? x->smtp_comment : "(null)");
}

static void fail_case(const struct seen *s, const struct api *ours, const char *why)
{
	printf("FAIL [%s] %s: %s\n", s->sc->description, s->c->name, why);
	show("ours", ours, &s->o);
	show("libspf2", ours, &s->r);
	failures++;
}

/* The permerror code figure: ours against libspf2's code for the case
 * (its result's code, or its first compile error's when it says
 * "(invalid)"). */
static void count_code(const struct seen *s)
{
	SPF_errcode_t want;

	if (s->o.result != SPF_RESULT_PERMERROR)
		return;
	if (s->r.result == SPF_RESULT_PERMERROR)
		want = s->r.err;
	else if (s->r.result == SPF_RESULT_INVALID && s->r.nmessages > 0)
		want = s->r.first_code;
	else {
		code_none++;
		return;
	}
	if (s->o.err == want) {
		code_same++;
	} else {
		code_other++;
		if (verbose)
			printf("  code %s: ours %d, libspf2 %d (\"%s\" / \"%s\")\n", s->c->name,
			       s->o.err, want, s->o.first_message, s->r.first_message);
	}
}

static void check_case(struct seen *s, const struct api *ours, const struct api *real,
		       struct zlayer *lo, struct zlayer *lr, struct zlayer *lr_no99)
{
	struct query q;
	char where[512], record[4096];
	int rule = -1, nul;

	memset(&q, 0, sizeof(q));
	q.ip = s->c->host;
	q.sender = s->c->mailfrom;
	q.helo = s->c->helo;
	snprintf(where, sizeof(where), "[%s] %s", s->sc->description, s->c->name);
	s->r_without_type99 = -1;
	lo->type99_questions = 0;
	if (run_query(ours, &lo->s, &q, &s->o) != 0 || run_query(real, &lr->s, &q, &s->r) != 0) {
		printf("FAIL %s: no server\n", where);
		failures++;
		return;
	}
	cases++;
	if (lo->type99_questions != 0)
		fail_case(s, ours, "our library asked a type-99 question (RFC 7208 3.1)");
	if (s->o.result == SPF_RESULT_INVALID || s->o.header_comment == NULL ||
	    s->o.received_spf == NULL) {
		fail_case(s, ours, "our result is (invalid) or a text is missing");
		return;
	}
	if (s->c->explanation != NULL && s->o.result == SPF_RESULT_FAIL &&
	    !suite_explanation_ok(s->c, s->o.explanation))
		fail_case(s, ours, "our explanation is not the one the suite wants");
	if (s->o.result != s->r.result) {
		struct outcome hidden;

		/* would libspf2 agree if it saw no type-99 record? */
		if (run_query(real, &lr_no99->s, &q, &hidden) == 0) {
			s->r_without_type99 = hidden.result;
			outcome_free(&hidden);
		}
		rule = classify_different(s, ours);
		if (rule < 0) {
			fail_case(s, ours, "different result, not a documented deviation");
			return;
		}
		count_rule(rule, s->c);
		if (!accepted(s->c, ours, s->o.result))
			fail_case(s, ours, "our result is not one the suite accepts");
		if (rule == R_SYNTAX_INVALID && s->o.err != s->r.first_code)
			fail_case(s, ours, "our permerror code is not the one libspf2's compiler gives");
		count_code(s);
		return;
	}
	agree++;
	count_code(s);
	if (s->o.result == SPF_RESULT_PERMERROR && s->o.err == SPF_E_BIG_DNS &&
	    s->r.err == SPF_E_RECURSIVE && our_message(s, "DNS-querying terms")) {
		/* the loop stops at the lookup limit, before libspf2's
		 * recursion check: libspf2's texts with its code's words
		 * replaced by ours must be ours */
		const char *theirs = real->strerror_(s->r.err), *mine = real->strerror_(s->o.err);
		char *before = dup_or_null(s->r.header_comment);

		count_rule(R_LOOP_CODE, s->c);
		replace_end(&s->r.header_comment, theirs, mine);
		replace_in(&s->r.received_spf, before, s->r.header_comment);
		free(before);
		s->r.err = s->o.err;
		s->r.rc = s->o.rc;
	}
	fold_escapes(s->o.explanation); /* %3a or %3A: compared as equal */
	fold_escapes(s->r.explanation);
	if (s->c->explanation != NULL && s->o.result == SPF_RESULT_FAIL &&
	    suite_explanation_ok(s->c, s->o.explanation) &&
	    !same(s->o.explanation, s->r.explanation)) {
		/* libspf2 gives another explanation than RFC 7208 6.2 and 7
		 * do; ours is the suite's: libspf2's smtp comment with ours
		 * in place of its explanation must be ours */
		int why = explanation_rule(s);

		if (why < 0) {
			fail_case(s, ours, "other explanation, not a documented deviation");
			return;
		}
		count_rule(why, s->c);
		replace_in(&s->r.smtp_comment, s->r.explanation, s->o.explanation);
		free(s->r.explanation);
		s->r.explanation = dup_or_null(s->o.explanation);
	}
	{
		int before = texts.failures;

		texts_compare(&texts, ours, where, &s->o, &s->r);
		if (texts.failures > before) {
			show("ours", ours, &s->o);
			show("libspf2", ours, &s->r);
		}
	}
	domain_record(s, record, sizeof(record), &nul);
	if (!accepted(s->c, ours, s->o.result)) {
		if (nul)
			count_rule(R_TXT_NUL, s->c);
		else
			fail_case(s, ours, "both give a result the suite does not accept");
	}
}

static int run_scenario(const struct suite_scenario *sc, const struct api *ours,
			const struct api *real)
{
	struct spfkit_zone *zone = NULL;
	struct zlayer lo, lr, lr_no99;

	if (spfkit_zone_new(NULL, &zone) != 0 || suite_fill_zone(sc, zone) != 0) {
		printf("FAIL [%s]: cannot build its zone\n", sc->description);
		failures++;
		spfkit_zone_free(zone);
		return -1;
	}
	/* type 99 served as the suite gives it; a third layer hides it */
	zlayer_init(&lo, zone, "rfc7208", ours->rr_dup, 1);
	zlayer_init(&lr, zone, "rfc7208", real->rr_dup, 1);
	zlayer_init(&lr_no99, zone, "rfc7208", real->rr_dup, 0);
	for (size_t i = 0; i < sc->ncases; i++) {
		const struct suite_case *c = &sc->cases[i];
		struct seen s;
		const char *at = strrchr(c->mailfrom, '@');

		memset(&s, 0, sizeof(s));
		s.sc = sc;
		s.c = c;
		s.zone = zone;
		/* libspf2 checks postmaster@<helo> for an empty MAIL FROM,
		 * and a sender without '@' is a domain */
		s.domain = c->mailfrom[0] == '\0' ? c->helo : at != NULL ? at + 1 : c->mailfrom;
		check_case(&s, ours, real, &lo, &lr, &lr_no99);
		if (verbose)
			printf("  %-32s %-10s %-10s\n", c->name, ours->strresult(s.o.result),
			       ours->strresult(s.r.result));
		outcome_free(&s.o);
		outcome_free(&s.r);
	}
	real_type99 += lr.type99_questions;
	spfkit_zone_free(zone);
	return 0;
}

int main(int argc, char **argv)
{
	static struct suite suite;
	struct api ours, real;
	const char *real_path = "/usr/lib/libspf2.so.2";
	unsigned deviating = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: test_golden_rfc7208 OUR_SO RFC7208_TESTS_YML [REAL_SO] [-v]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else
			real_path = argv[i];
	}
	if (api_load(&ours, argv[1]) != 0)
		return 1;
	if (api_load(&real, real_path) != 0) {
		printf("skip: Debian libspf2 not loadable\n");
		return 77;
	}
	if (suite_load(&suite, argv[2]) != 0)
		return 1;
	for (size_t i = 0; i < suite.nscenarios; i++)
		run_scenario(&suite.scenarios[i], &ours, &real);
	suite_free(&suite);

	for (int k = 0; k < R_LOOP_CODE; k++)
		deviating += per_rule[k];
	printf("RFC 7208 suite through both libraries (MAIL FROM; postmaster@HELO when empty):\n");
	printf("  %u cases in %zu scenarios\n", cases, suite.nscenarios);
	printf("  %u same result, every text libspf2's but for the rows under \"same result\"\n",
	       agree);
	if (texts.exp_texts > 0)
		printf("  (%u exp= texts libspf2 leaves unexpanded, without an explanation in the "
		       "suite to check ours against)\n",
		       texts.exp_texts);
	printf("  %u different result, each a documented deviation:\n", deviating);
	for (int k = 0; k < R_COUNT; k++) {
		if (k == R_LOOP_CODE)
			printf("  same result, texts differing by a documented row:\n");
		if (k == R_TXT_NUL)
			printf("  same result, not the suite's:\n");
		printf("    %3u  %s%s%s%s\n", per_rule[k], rule_names[k], per_rule[k] ? " (" : "",
		       rule_cases[k], per_rule[k] ? ")" : "");
	}
	printf("  type-99 questions: ours 0 (asserted), libspf2 %u\n", real_type99);
	printf("  our permerror code = libspf2's: %u of %u (%u more where libspf2 gives no code)\n",
	       code_same, code_same + code_other, code_none);
	failures += texts.failures;
	printf("%d failure(s)\n", failures);
	return failures == 0 && cases > 0 ? 0 : 1;
}
