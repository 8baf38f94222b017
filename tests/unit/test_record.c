/*
 * Unit tests of lib/spf/record_parse.c and term_*.c: the record grammar of RFC 7208
 * §4.5, §4.6.1, §5, §6 and §12. The first test holds every SPF record of
 * the RFC 7208 test suite (tests/rfc7208/rfc7208-tests.yml) with the
 * verdict the suite's expected results imply; the others test one rule
 * each. Memory goes through cmocka's test allocator (leaks fail a test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/record.h>

#include "core.h"
#include "record_cache.h"
#include "cache_stats.h" /* tests/support */
#include "cmocka_alloc.h" /* tests/support */
#include "record_room.h"

static int parse(const char *txt, size_t len, struct spfkit_record **rec,
		 struct spfkit_parse_error *err)
{
	return spfkit_record_parse(txt, len, &test_alloc, rec, err);
}

/* Parse a NUL-terminated record that must be valid. */
static struct spfkit_record *must_parse(const char *txt)
{
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;
	int rc = parse(txt, strlen(txt), &rec, &err);

	if (rc != 0)
		print_error("\"%s\": got rc %d at %zu (%s), want 0\n", txt, rc, err.offset,
			    err.rule ? err.rule : "");
	assert_int_equal(rc, 0);
	assert_non_null(rec);
	return rec;
}

/* ---- the RFC 7208 suite's records ------------------------------------ */

struct verdict {
	const char *txt;
	size_t len; /* 0: strlen */
	int valid;
	const char *why; /* the suite case, for the failure message */
};

#define V(t, ok, why) {t, 0, ok, why}
#define VN(t, ok, why) {t, sizeof(t) - 1, ok, why} /* holds a NUL */

static const struct verdict suite[] = {
	/* Initial processing */
	V("v=spf1 -all exp=exp.example.net", 1, "nolocalpart"),
	V("v=spf1 -all", 1, "longlabel"),
	V("v=spf1 a:\xEF\xBB\xBFgarbage.example.net -all", 0, "non-ascii-policy"),
	V("v=spf1 \x80" "a:example.net -all", 0, "non-ascii-mech"),
	V("v=spf1 a:example.net \x96" "all", 0, "non-ascii-result"),
	V("v=spf1 a:example.net -all", 1, "non-ascii-non-spf"),
	V("v=spf1 a:ctrl.example.com\rptr -all", 0, "control-char-policy"),
	V("v=spf1 a  -all", 1, "two-spaces"),
	V("v=spf1 a -all ", 1, "trailing-space"),
	V("v=spf1 ip4:192.0.2.5 -all", 1, "null-text (strings joined)"),
	V("v=spf1 ip4:192.0.2.5\n include:spf.protection.outlook.com ~all", 0, "badip4"),
	/* Selecting records */
	V("v=spf1 mx", 1, "nospace2"),
	V("v=spf1", 1, "empty"),
	V("v=spf1 +all", 1, "spfoverride"),
	V("V=sPf1 +all", 1, "multitxt2"),
	V("V=spf1 -all", 1, "multispf2"),
	V("v=SpF1 ~all", 1, "case-insensitive"),
	/* Record evaluation */
	V("v=spf1 ip4:1.2.3.4 -all moo", 0, "detect-errors-anywhere"),
	V("v=spf1 moo.cow-far_out=man:dog/cat ip4:1.2.3.4 -all", 1, "modifier-charset-good"),
	V("v=spf1 moo.cow/far_out=man:dog/cat ip4:1.2.3.4 -all", 0, "modifier-charset-bad1"),
	V("v=spf1 moo.cow:far_out=man:dog/cat ip4:1.2.3.4 -all", 0, "modifier-charset-bad2"),
	V("v=spf1 redirect=t5.example.com ~all", 1, "redirect-after-mechanisms1"),
	V("v=spf1 ip4:1.2.3.4 redirect=t2.example.com", 1, "redirect-after-mechanisms2"),
	V("v=spf1 ip4:1.2.3.4", 1, "default-result"),
	V("v=spf1 ip4:1.2.3.4 redirect:t2.example.com", 0, "redirect-is-modifier"),
	V("v=spf1 a:foo-bar -all", 0, "invalid-domain"),
	/* valid domain-spec syntax; the name itself is the evaluator's business */
	V("v=spf1 a:mail.example...com -all", 1, "invalid-domain-empty-label"),
	V("v=spf1 a:a123456789012345678901234567890123456789012345678901234567890123.example.com "
	  "-all",
	  1, "invalid-domain-long"),
	V("v=spf1 a:%{H}.bar -all", 1, "invalid-domain-long-via-macro"),
	/* ALL mechanism syntax */
	V("v=spf1 -all.", 0, "all-dot"),
	V("v=spf1 -all:foobar", 0, "all-arg"),
	V("v=spf1 -all/8", 0, "all-cidr"),
	V("v=spf1 ?all", 1, "all-neutral"),
	V("v=spf1 all -all", 1, "all-double"),
	/* PTR mechanism syntax */
	V("v=spf1 ptr/0 -all", 0, "ptr-cidr"),
	V("v=spf1 ptr:example.com -all", 1, "ptr-match-target"),
	V("v=spf1 ptr -all", 1, "ptr-match-implicit"),
	V("v=spf1 ptr:", 0, "ptr-empty-domain"),
	V("v=spf1 ptr:example.Com -all", 1, "ptr-case-change"),
	V("v=spf1 ptr", 1, "ptr-cname-loop"),
	/* A mechanism syntax */
	V("v=spf1 a/0 -all", 1, "a-nxdomain"),
	V("v=spf1 a//0 -all", 1, "a-cidr6-0-ip4"),
	V("v=spf1 a -all", 1, "a-ip6-dualstack"),
	VN("v=spf1 a:foo.example.com\0", 0, "a-null"),
	V("v=spf1 a:111.222.33.44", 0, "a-numeric"),
	V("v=spf1 a:abc.123", 0, "a-numeric-toplabel"),
	V("v=spf1 a:museum", 0, "a-only-toplabel"),
	V("v=spf1 a:museum.", 0, "a-only-toplabel-trailing-dot"),
	V("v=spf1 a//33 -all", 1, "a-cidr6"),
	V("v=spf1 a/33 -all", 0, "a-bad-cidr4"),
	V("v=spf1 a//129 -all", 0, "a-bad-cidr6"),
	V("v=spf1 a/24//64 -all", 1, "a-dual-cidr-ip4-match"),
	V("v=spf1 a/24/64 -all", 0, "a-dual-cidr-ip4-err"),
	V("v=spf1 a/24 -all", 1, "a-dual-cidr-ip6-default"),
	V("v=spf1 a//64 -all", 1, "a-dual-cidr-ip4-default"),
	V("v=spf1 a:example.com:8080", 0, "a-bad-domain"),
	V("v=spf1 a:foo.example.com/24", 1, "a-multi-ip1"),
	V("v=spf1 a:foo:bar/baz.example.com", 1, "a-colon-domain"),
	V("v=spf1 a:example.-com", 0, "a-bad-toplabel"),
	V("v=spf1 a:", 0, "a-empty-domain"),
	V("v=spf1 a:foo.example.xn--zckzah -all", 1, "a-dash-in-toplabel"),
	/* Include mechanism semantics and syntax */
	V("v=spf1 ip4:1.2.3.5 -all", 1, "include-fail (target)"),
	V("v=spf1 ip4:1.2.3.6 ~all", 1, "include-softfail (target)"),
	V("v=spf1 ip4:1.2.3.7 ?all", 1, "include-neutral (target)"),
	V("v=spf1 include:ip5.example.com ~all", 1, "include-fail"),
	V("v=spf1 include:ip6.example.com all", 1, "include-softfail"),
	V("v=spf1 include:ip7.example.com -all", 1, "include-neutral"),
	V("v=spf1 include:ip8.example.com -all", 1, "include-temperror"),
	V("v=spf1 include:e6.example.com -all", 1, "include-permerror (outer)"),
	V("v=spf1 include +all", 0, "include-syntax-error"),
	/* permerror from evaluation (no record there), not from syntax */
	V("v=spf1 include:erehwon.example.com -all", 1, "include-none"),
	V("v=spf1 include: -all", 0, "include-empty-domain"),
	V("v=spf1 include:ip5.example.com/24 -all", 0, "include-cidr"),
	/* MX mechanism syntax */
	V("v=spf1 mx/0 -all", 1, "mx-nxdomain"),
	V("v=spf1 mx//0 -all", 1, "mx-cidr6-0-ip4"),
	VN("v=spf1 mx:foo.example.com\0", 0, "mx-null"),
	V("v=spf1 mx:abc.123", 0, "mx-numeric-top-label"),
	V("v=spf1 mx//33 -all", 1, "mx-cidr6"),
	V("v=spf1 mx/33 -all", 0, "mx-bad-cidr4"),
	V("v=spf1 mx//129 -all", 0, "mx-bad-cidr6"),
	V("v=spf1 mx:example.com:8080", 0, "mx-bad-domain"),
	V("v=spf1 mx:foo.example.com/24", 1, "mx-multi-ip1"),
	V("v=spf1 mx:foo:bar/baz.example.com", 1, "mx-colon-domain"),
	V("v=spf1 mx:example.-com", 0, "mx-bad-toplab"),
	V("v=spf1 mx: -all", 0, "mx-empty-domain"),
	/* EXISTS mechanism syntax */
	V("v=spf1 exists:", 0, "exists-empty-domain"),
	V("v=spf1 exists", 0, "exists-implicit"),
	V("v=spf1 exists:mail.example.com/24", 0, "exists-cidr"),
	V("v=spf1 exists:mail.example.com", 1, "exists-ip4"),
	V("v=spf1 exists:mail6.example.com -all", 1, "exists-ip6only"),
	V("v=spf1 exists:err.example.com -all", 1, "exists-dnserr"),
	/* IP4 mechanism syntax */
	V("v=spf1 ip4:1.1.1.1/0 -all", 1, "cidr4-0"),
	V("v=spf1 ip4:1.2.3.4/32 -all", 1, "cidr4-32"),
	V("v=spf1 ip4:1.2.3.4/33 -all", 0, "cidr4-33"),
	V("v=spf1 ip4:1.2.3.4/032 -all", 0, "cidr4-032"),
	V("v=spf1 ip4", 0, "bare-ip4"),
	V("v=spf1 ip4:1.2.3.4//32", 0, "ip4-dual-cidr"),
	V("v=spf1 -ip4:1.2.3.4 ip6:::FFFF:1.2.3.4", 1, "ip4-mapped-ip6"),
	V("v=spf1 ip4:1.2.3.4:8080", 0, "bad-ip4-port"),
	V("v=spf1 ip4:1.2.3", 0, "bad-ip4-short"),
	/* IP6 mechanism syntax */
	V("v=spf1 -all ip6", 0, "bare-ip6"),
	V("v=spf1 ip6:::1.1.1.1/0", 1, "cidr6-0"),
	V("v=spf1 ip6:::1.1.1.1/129", 0, "cidr6-129"),
	V("v=spf1 ip6:::1.1.1.1//33", 0, "cidr6-bad"),
	V("v=spf1 ip6:Cafe:Babe:8000::/33", 1, "cidr6-33"),
	V("v=spf1 ip6::CAFE::BABE", 0, "ip6-bad1"),
	/* Semantics of exp and other modifiers */
	V("v=spf1 exp=exp1.example.com redirect=e2.example.com", 1, "redirect-cancels-exp"),
	V("v=spf1 exp=exp1.example.com redirect=e4.example.com", 1, "redirect-cancels-prior-exp"),
	V("v=spf1 -all exp=exp2.example.com", 1, "redirect-cancels-prior-exp (target)"),
	V("v=spf1 1up=foo", 0, "invalid-modifier"),
	V("v=spf1 =all", 0, "empty-modifier-name"),
	V("v=spf1 include:e3.example.com -all exp=exp3.example.com", 1, "include-ignores-exp"),
	V("v=spf1 -all exp=exp4.example.com", 1, "dorky-sentinel"),
	V("v=spf1 -all foo=%abc", 0, "unknown-modifier-syntax"),
	V("v=spf1 redirect=erehwon.example.com", 1, "redirect-none"),
	V("v=spf1 -all exp=e11msg.example.com", 1, "exp-multiple-txt"),
	V("v=spf1 exp= -all", 0, "exp-empty-domain"),
	V("v=spf1 exp=e13msg.example.com -all", 1, "explanation-syntax-error"),
	V("v=spf1 exp=e13msg.example.com -all exp=e11msg.example.com", 0, "exp-twice"),
	V("v=spf1 redirect=e12.example.com -all redirect=e12.example.com", 0, "redirect-twice"),
	V("v=spf1 exp=-all", 0, "exp-syntax-error"),
	V("v=spf1 redirect=-all ?all", 0, "redirect-syntax-error"),
	V("v=spf1 ?all redirect=", 0, "redirect-empty-domain"),
	V("v=spf1 default=pass", 1, "default-modifier-obsolete"),
	V("v=spf1 default=+", 1, "default-modifier-obsolete2"),
	V("v=spf1 exp=e21msg.example.com -all", 1, "exp-dns-error"),
	V("v=spf1 exp=mail.example.com -all", 1, "exp-no-txt"),
	V("v=spf1 exp=badexp.example.com -all", 1, "non-ascii-exp"),
	V("v=spf1 exp=twoexp.example.com -all", 1, "two-exp-records"),
	V("v=spf1 a:erehwon.example.com a:foobar.com exp=nxdomain.com -all", 1, "exp-void"),
	V("v=spf1 redirect=testimplicit.example.com", 1, "redirect-implicit"),
	/* Macro expansion rules */
	V("v=spf1 redirect=a.spf.example.com", 1, "trailing-dot-domain (hop)"),
	V("v=spf1 include:o.spf.example.com. ~all", 1, "trailing-dot-domain (hop)"),
	V("v=spf1 ip4:192.168.218.40", 1, "trailing-dot-domain (hop)"),
	V("v=spf1 redirect=%{d}.d.spf.example.com.", 1, "trailing-dot-domain"),
	V("v=spf1 exp=msg.example.com. -all", 1, "trailing-dot-exp"),
	V("v=spf1 -exists:%(ir).sbl.example.com ?all", 0, "invalid-macro-char"),
	V("v=spf1 exists:foo%(ir).sbl.example.com ?all", 0, "invalid-embedded-macro-char"),
	V("v=spf1 exists:foo%.sbl.example.com ?all", 0, "invalid-trailing-macro-char"),
	V("v=spf1 a:macro%%percent%_%_space%-url-space.example.com -all", 1, "macro-mania-in-domain"),
	V("v=spf1 -all exp=%{r}.example.com", 0, "exp-only-macro-char"),
	V("v=spf1 -all exp=%{ir}.example.com", 1, "exp-txt-macro-char"),
	V("v=spf1 -all exp=foobar.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.example.com", 1,
	  "domain-name-truncation"),
	V("v=spf1 -all exp=e4msg.example.com", 1, "v-macro-ip4"),
	V("v=spf1 a:%{a}.example.com -all", 0, "undef-macro"),
	V("v=spf1 -all exp=e6msg.example.com", 1, "p-macro-ip4-novalid"),
	V("v=spf1 exists:%{p}.should.example.com ~exists:%{p}.ok.example.com", 1, "p-macro-multiple"),
	V("v=spf1 -all exp=msg8.%{D2}", 1, "upper-macro"),
	V("v=spf1 a:%{H} -all", 1, "hello-macro"),
	V("v=spf1 -include:_spfh.%{d2} ip4:1.2.3.0/24 -all", 1, "require-valid-helo"),
	V("v=spf1 -a:%{h} +all", 1, "require-valid-helo (hop)"),
	V("v=spf1 exists:%{i}.%{l2r-}.user.%{d2}", 1, "macro-reverse-split-on-dash"),
	V("v=spf1 exists:%{l2r+-}.user.%{d2}", 1, "macro-multiple-delimiters"),
	/* Processing limits: all valid; the limits are the evaluator's */
	V("v=spf1 ip4:1.1.1.1 redirect=e1.example.com", 1, "redirect-loop"),
	V("v=spf1 include:e3.example.com", 1, "include-loop"),
	V("v=spf1 include:e2.example.com", 1, "include-loop"),
	V("v=spf1 a mx a mx a mx a mx a ptr ip4:1.2.3.4 -all", 1, "mech-at-limit"),
	V("v=spf1 a mx a mx a mx a mx a ptr a ip4:1.2.3.4 -all", 1, "mech-over-limit"),
	V("v=spf1 a include:inc.example.com ip4:1.2.3.4 mx -all", 1, "include-at-limit"),
	V("v=spf1 a a a a a a a a", 1, "include-at-limit (target)"),
	V("v=spf1 a include:inc.example.com a ip4:1.2.3.4 -all", 1, "include-over-limit"),
	V("v=spf1 a:err.example.com a:err1.example.com a:err2.example.com ?all", 1, "void-over-limit"),
	V("v=spf1 a:err.example.com a:err1.example.com ?all", 1, "void-at-limit"),
	/* Test cases from implementation bugs */
	V("v=spf1 mx redirect=_spf.example.com", 1, "bytes-bug"),
	V("v=spf1 ptr:fe.example.org ptr:sgp.example.com exp=_expspf.example.org -all", 1,
	  "bytes-bug"),
	V("v=spf1 ip4:192.0.2.225 ?include:webmail.pair.com ?include:relay.pair.com -all", 1,
	  "cname-aliasing"),
	V("v=spf1 include:a.example.org include:b.example.org -all", 1, "cname-aliasing"),
	V("v=spf1 ip4:66.39.3.0/24 ip4:209.68.6.94/32", 1, "cname-aliasing"),
	V("v=spf1 ip4:209.68.5.9/32 ip4:209.68.5.15/32 a -all", 1, "cname-aliasing"),
};

static void rfc7208_suite_records(void **state)
{
	struct spfkit_record *rec;
	struct spfkit_parse_error err;
	size_t i, len;
	int rc, bad = 0;

	(void)state;
	for (i = 0; i < sizeof(suite) / sizeof(suite[0]); i++) {
		len = suite[i].len ? suite[i].len : strlen(suite[i].txt);
		rec = NULL;
		rc = parse(suite[i].txt, len, &rec, &err);
		if (suite[i].valid ? rc != 0 : rc != SPFKIT_ESYNTAX) {
			print_error("%s: \"%.*s\": got rc %d (%s at %zu), want %s\n", suite[i].why,
				    (int)len, suite[i].txt, rc, err.rule ? err.rule : "-", err.offset,
				    suite[i].valid ? "valid" : "ESYNTAX");
			bad++;
		}
		if (rc != 0 && rec != NULL)
			bad++; /* a failed parse stores nothing */
		spfkit_record_free(rec);
	}
	assert_int_equal(bad, 0);
}

/* ---- version and separators ------------------------------------------ */

static void is_spf(void **state)
{
	(void)state;
	assert_true(spfkit_record_is_spf("v=spf1", 6));
	assert_true(spfkit_record_is_spf("v=spf1 -all", 11));
	assert_true(spfkit_record_is_spf("V=SpF1 ", 7));
	assert_false(spfkit_record_is_spf("v=spf10", 7));
	assert_false(spfkit_record_is_spf("v=spf1\t-all", 11));
	assert_false(spfkit_record_is_spf("v=spf1-all", 10));
	assert_false(spfkit_record_is_spf("v=spf", 5));
	assert_false(spfkit_record_is_spf(" v=spf1", 7));
	assert_false(spfkit_record_is_spf("v=spf1 -all", 5)); /* length given wins */
	assert_false(spfkit_record_is_spf(NULL, 6));
	assert_false(spfkit_record_is_spf("spf2.0/pra", 10));
}

/* Every byte value in each of the first seven places: only the letters'
 * two cases, and SP after the "1", keep "v=spf1 x" an SPF record. */
static void is_spf_every_byte(void **state)
{
	static const char upper[] = "V=SPF1 ";
	unsigned place, b;

	(void)state;
	for (place = 0; place < 7; place++) {
		for (b = 0; b < 256; b++) {
			char txt[8] = "v=spf1 x";
			int want = b == (unsigned char)"v=spf1 "[place] ||
				   b == (unsigned char)upper[place];

			txt[place] = (char)b;
			assert_int_equal(spfkit_record_is_spf(txt, 8), want);
		}
	}
}

struct ecase {
	const char *txt;
	size_t len; /* 0: strlen */
	int rc;
	size_t off;
	const char *rule;
	const char *section;
};

static int check_error(const struct ecase *c)
{
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;
	size_t len = c->len ? c->len : strlen(c->txt);
	int rc = parse(c->txt, len, &rec, &err);

	spfkit_record_free(rec);
	if (rc == c->rc && rec == NULL && err.offset == c->off && err.rule != NULL &&
	    strcmp(err.rule, c->rule) == 0 && err.section != NULL &&
	    strcmp(err.section, c->section) == 0)
		return 0;
	print_error("\"%.*s\": got rc %d off %zu \"%s\" §%s, want rc %d off %zu \"%s\" §%s\n",
		    (int)len, c->txt, rc, err.offset, err.rule ? err.rule : "(null)",
		    err.section ? err.section : "(null)", c->rc, c->off, c->rule, c->section);
	return 1;
}

static int check_errors(const struct ecase *c, size_t n)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++)
		bad += check_error(&c[i]);
	return bad;
}

#define E(t, off, rule, sec) {t, 0, SPFKIT_ESYNTAX, off, rule, sec}

static void version_errors(void **state)
{
	static const struct ecase c[] = {
		E("v=spf10 a", 6, "record does not start with \"v=spf1\" and a space", "4.5"),
		E("v=spf2 a", 5, "record does not start with \"v=spf1\" and a space", "4.5"),
		E("spf1", 0, "record does not start with \"v=spf1\" and a space", "4.5"),
		E("v=sp", 4, "record does not start with \"v=spf1\" and a space", "4.5"),
		E("", 0, "record does not start with \"v=spf1\" and a space", "4.5"),
		E("v=spf1\ta", 6, "record does not start with \"v=spf1\" and a space", "4.5"),
	};

	(void)state;
	assert_int_equal(check_errors(c, sizeof(c) / sizeof(c[0])), 0);
}

/* §4.6.1 and §3.1: SP separates terms; any other control or 8-bit byte is an error. */
static void byte_errors(void **state)
{
	static const struct ecase c[] = {
		E("v=spf1 a:ctrl.example.com\rptr -all", 25, "control character between terms",
		  "4.6.1"),
		E("v=spf1 a\t-all", 8, "control character between terms", "4.6.1"),
		E("v=spf1 -all\n", 11, "control character between terms", "4.6.1"),
		E("v=spf1 -all \x7f", 12, "control character between terms", "4.6.1"),
		E("v=spf1 a:\xEF\xBB\xBFgarbage.example.net -all", 9, "non-ASCII byte", "3.1"),
		E("v=spf1 a:example.net \x96" "all", 21, "non-ASCII byte", "3.1"),
		/* an earlier term's error comes first */
		E("v=spf1 moo \x80", 7, "unknown mechanism", "4.6.1"),
		/* within a term, the bad byte wins: it is why the term reads oddly */
		E("v=spf1 a:\x80", 9, "non-ASCII byte", "3.1"),
	};

	(void)state;
	assert_int_equal(check_errors(c, sizeof(c) / sizeof(c[0])), 0);
}

/* NUL bytes anywhere: a syntax error with the NUL's offset, never a crash. */
static void nul_bytes(void **state)
{
	static const struct ecase c[] = {
		{"v=spf1 a:foo.example.com\0", 25, SPFKIT_ESYNTAX, 24, "control character between terms",
		 "4.6.1"},
		{"v=spf1 ip4:1.2\0.3.4 -all", 24, SPFKIT_ESYNTAX, 14, "control character between terms",
		 "4.6.1"},
		{"v=spf1 \0", 8, SPFKIT_ESYNTAX, 7, "control character between terms", "4.6.1"},
		{"v=spf1\0 -all", 12, SPFKIT_ESYNTAX, 6,
		 "record does not start with \"v=spf1\" and a space", "4.5"},
		{"\0\0\0\0\0\0\0\0", 8, SPFKIT_ESYNTAX, 0,
		 "record does not start with \"v=spf1\" and a space", "4.5"},
	};

	(void)state;
	assert_int_equal(check_errors(c, sizeof(c) / sizeof(c[0])), 0);
}

static void spaces(void **state)
{
	struct spfkit_record *rec = must_parse("v=spf1    a     -all   ");

	(void)state;
	assert_int_equal(rec->count, 2);
	assert_int_equal(rec->terms[0].offset, 10);
	assert_int_equal(rec->terms[0].len, 1);
	assert_int_equal(rec->terms[1].offset, 16);
	assert_int_equal(rec->terms[1].len, 4);
	assert_int_equal(rec->len, 23);
	assert_string_equal(rec->text, "v=spf1    a     -all   ");
	spfkit_record_free(rec);
	rec = must_parse("v=spf1 ");
	assert_int_equal(rec->count, 0);
	assert_int_equal(rec->redirect, -1);
	assert_int_equal(rec->exp, -1);
	spfkit_record_free(rec);
}

/*
 * A bad byte anywhere inside any kind of term is reported as that byte, at
 * its offset: the parser only looks for such bytes once a term has failed,
 * so every production must reject them. Try every position of terms of
 * every shape with every kind of bad byte.
 */
static void bad_byte_in_every_position(void **state)
{
	static const char *const recs[] = {
		"v=spf1 +all ~include:_spf.example.com a mx:foo:bar/baz.example.com/24//64",
		"v=spf1 ptr:example.org exists:%{ir}.%{v}._spf.%{D2r-}.example.com ?ptr",
		"v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::1.2.3.4/96 ip6:::/0",
		"v=spf1 redirect=%{d}.x.example exp=e.example. moo.cow-x_y=%%%_%-a:b/c=d e=",
	};
	static const unsigned char bytes[] = {0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x7f, 0x80, 0xef, 0xff};
	char txt[128];
	struct spfkit_record *rec;
	struct spfkit_parse_error err;
	size_t r, pos, k, len;
	int rc, bad = 0;

	(void)state;
	for (r = 0; r < sizeof(recs) / sizeof(recs[0]); r++) {
		len = strlen(recs[r]);
		rec = must_parse(recs[r]);
		spfkit_record_free(rec);
		for (pos = 7; pos < len; pos++) {
			if (recs[r][pos] == ' ')
				continue;
			for (k = 0; k < sizeof(bytes); k++) {
				memcpy(txt, recs[r], len);
				txt[pos] = (char)bytes[k];
				rec = NULL;
				rc = parse(txt, len, &rec, &err);
				spfkit_record_free(rec);
				if (rc == SPFKIT_ESYNTAX && err.offset == pos &&
				    strcmp(err.rule, bytes[k] >= 0x80 ? "non-ASCII byte"
								       : "control character between terms") == 0)
					continue;
				print_error("%s with byte %02x at %zu: got rc %d at %zu (%s)\n", recs[r],
					    bytes[k], pos, rc, err.offset, err.rule ? err.rule : "-");
				bad++;
			}
		}
	}
	assert_int_equal(bad, 0);
}

/* ---- mechanisms ------------------------------------------------------ */

static void every_mechanism(void **state)
{
	static const struct {
		const char *term;
		int kind;
		int qualifier;
		int has_domain;
	} c[] = {
		{"all", SPFKIT_MECH_ALL, '+', 0},
		{"-ALL", SPFKIT_MECH_ALL, '-', 0},
		{"~include:_spf.example.com", SPFKIT_MECH_INCLUDE, '~', 1},
		{"?a", SPFKIT_MECH_A, '?', 0},
		{"+A:example.com", SPFKIT_MECH_A, '+', 1},
		{"mx", SPFKIT_MECH_MX, '+', 0},
		{"Mx:example.com", SPFKIT_MECH_MX, '+', 1},
		{"ptr", SPFKIT_MECH_PTR, '+', 0},
		{"pTr:example.com", SPFKIT_MECH_PTR, '+', 1},
		{"ip4:192.0.2.1", SPFKIT_MECH_IP4, '+', 0},
		{"IP6:2001:db8::1", SPFKIT_MECH_IP6, '+', 0},
		{"exists:%{i}.bl.example.com", SPFKIT_MECH_EXISTS, '+', 1},
	};
	char txt[128];
	struct spfkit_record *rec;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(txt, sizeof(txt), "v=spf1 %s", c[i].term);
		rec = must_parse(txt);
		assert_int_equal(rec->count, 1);
		assert_false(rec->terms[0].is_modifier);
		assert_int_equal(rec->terms[0].mech, c[i].kind);
		assert_int_equal(rec->terms[0].qualifier, c[i].qualifier);
		assert_int_equal(rec->terms[0].has_domain, c[i].has_domain);
		assert_int_equal(rec->terms[0].cidr4, 32);
		assert_int_equal(rec->terms[0].cidr6, 128);
		spfkit_record_free(rec);
	}
}

static void mechanism_names(void **state)
{
	(void)state;
	assert_string_equal(spfkit_mech_name(SPFKIT_MECH_EXISTS), "exists");
	assert_string_equal(spfkit_mech_name((enum spfkit_mech_kind)99), "invalid");
	assert_string_equal(spfkit_mod_name(SPFKIT_MOD_REDIRECT), "redirect");
	assert_string_equal(spfkit_mod_name(SPFKIT_MOD_EXP), "exp");
	assert_string_equal(spfkit_mod_name(SPFKIT_MOD_UNKNOWN), "unknown");
	assert_string_equal(spfkit_mod_name((enum spfkit_mod_kind)-1), "invalid");
}

/* A domain-spec without macros is one literal piece pointing into rec->text. */
static void domain_spec_is_zero_copy(void **state)
{
	struct spfkit_record *rec = must_parse("v=spf1 include:_spf.example.com -all");
	const struct spfkit_macro_string *d = &rec->terms[0].domain;

	(void)state;
	assert_int_equal(d->count, 1);
	assert_int_equal(d->pieces[0].kind, SPFKIT_PIECE_LITERAL);
	assert_ptr_equal(d->pieces[0].text, rec->text + 15);
	assert_int_equal(d->pieces[0].len, 16);
	assert_ptr_equal(d->src, rec->text + 15);
	assert_int_equal(d->src_len, 16);
	assert_ptr_equal(rec->terms[0].name, rec->text + 7);
	assert_int_equal(rec->terms[0].name_len, 7);
	spfkit_record_free(rec);
}

static void macro_domain_pieces(void **state)
{
	struct spfkit_record *rec = must_parse("v=spf1 exists:%{ir}.%{l1r-}.lp._spf.%{d2}");
	const struct spfkit_macro_string *d = &rec->terms[0].domain;

	(void)state;
	assert_int_equal(d->count, 5);
	assert_int_equal(d->pieces[0].letter, 'i');
	assert_true(d->pieces[0].reverse);
	assert_int_equal(d->pieces[2].letter, 'l');
	assert_int_equal(d->pieces[2].digits, 1);
	assert_int_equal(d->pieces[2].delims, SPFKIT_DELIM_DASH);
	assert_int_equal(d->pieces[4].digits, 2);
	assert_int_equal(d->letters, (1u << ('i' - 'a')) | (1u << ('l' - 'a')) | (1u << ('d' - 'a')));
	spfkit_record_free(rec);
}

static void cidr_lengths(void **state)
{
	static const struct {
		const char *txt;
		int cidr4, cidr6;
		const char *domain; /* NULL: none */
	} c[] = {
		{"v=spf1 a/24//64", 24, 64, NULL},
		{"v=spf1 a//64", 32, 64, NULL},
		{"v=spf1 a/0", 0, 128, NULL},
		{"v=spf1 a//0", 32, 0, NULL},
		{"v=spf1 mx/32//128", 32, 128, NULL},
		{"v=spf1 a:foo.example.com/24", 24, 128, "foo.example.com"},
		{"v=spf1 mx:foo.example.com//48", 32, 48, "foo.example.com"},
		{"v=spf1 mx:foo.example.com/16//48", 16, 48, "foo.example.com"},
		{"v=spf1 a:foo:bar/baz.example.com", 32, 128, "foo:bar/baz.example.com"},
		{"v=spf1 a:foo/bar.example.com/8", 8, 128, "foo/bar.example.com"},
		{"v=spf1 a:%{d}/24", 24, 128, "%{d}"},
		{"v=spf1 ip4:10.0.0.0/8", 8, 128, NULL},
		{"v=spf1 ip4:0.0.0.0/0", 0, 128, NULL},
		{"v=spf1 ip6:2001:db8::/32", 32, 32, NULL},
		{"v=spf1 ip6:::/0", 32, 0, NULL},
		{"v=spf1 ip6:::1/128", 32, 128, NULL},
	};
	struct spfkit_record *rec;
	const struct spfkit_term *t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		rec = must_parse(c[i].txt);
		t = &rec->terms[0];
		if (t->cidr4 != c[i].cidr4 || t->cidr6 != c[i].cidr6)
			print_error("\"%s\": got /%d//%d, want /%d//%d\n", c[i].txt, t->cidr4, t->cidr6,
				    c[i].cidr4, c[i].cidr6);
		assert_int_equal(t->cidr4, c[i].cidr4);
		assert_int_equal(t->cidr6, c[i].cidr6);
		assert_int_equal(t->has_domain, c[i].domain != NULL);
		if (c[i].domain != NULL) {
			assert_int_equal(t->domain.src_len, strlen(c[i].domain));
			assert_memory_equal(t->domain.src, c[i].domain, t->domain.src_len);
		}
		spfkit_record_free(rec);
	}
}

static void ip4_network(void **state)
{
	static const unsigned char want[4] = {192, 0, 2, 255};
	struct spfkit_record *rec = must_parse("v=spf1 ip4:192.0.2.255 ip4:0.0.0.0");

	(void)state;
	assert_memory_equal(rec->terms[0].ip, want, 4);
	assert_memory_equal(rec->terms[1].ip, "\0\0\0\0", 4);
	spfkit_record_free(rec);
}

/* RFC 4291 §2.2 text forms. */
static void ip6_network_forms(void **state)
{
	static const struct {
		const char *addr;
		unsigned char want[16];
	} c[] = {
		{"::", {0}},
		{"::1", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"1::", {0, 1}},
		{"2001:DB8::cd30", {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xcd, 0x30}},
		{"2001:db8:0:0:8:800:200c:417a",
		 {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 8, 8, 0, 0x20, 0x0c, 0x41, 0x7a}},
		{"1:2:3:4:5:6:7::", {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 0}},
		{"::2:3:4:5:6:7:8", {0, 0, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}},
		{"1:2::7:8", {0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8}},
		{"::FFFF:1.2.3.4", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}},
		{"::1.1.1.1", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}},
		{"1:2:3:4:5:6:1.2.3.4", {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 1, 2, 3, 4}},
		{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		 {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0xff}},
		{"0001:002:03:4::", {0, 1, 0, 2, 0, 3, 0, 4}},
	};
	char txt[128];
	struct spfkit_record *rec;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(txt, sizeof(txt), "v=spf1 ip6:%s", c[i].addr);
		rec = must_parse(txt);
		assert_memory_equal(rec->terms[0].ip, c[i].want, 16);
		spfkit_record_free(rec);
	}
}

static void ip6_network_errors(void **state)
{
	static const struct ecase c[] = {
		E("v=spf1 ip6:1:2:3:4:5:6:7:8:9", 27, "too many groups in ip6-network", "5.6"),
		E("v=spf1 ip6:1::2::3", 15, "second \"::\" in ip6-network", "5.6"),
		E("v=spf1 ip6:12345::", 15, "ip6-network group longer than 4 hex digits", "5.6"),
		E("v=spf1 ip6::1::", 11, "invalid character in ip6-network", "5.6"),
		E("v=spf1 ip6:1:", 12, "ip6-network ends in a single ':'", "5.6"),
		E("v=spf1 ip6:1:2:3", 11, "ip6-network needs 8 groups or \"::\"", "5.6"),
		E("v=spf1 ip6:1:2:3:4:5:6:7:8::", 11, "\"::\" in an ip6-network of 8 groups", "5.6"),
		E("v=spf1 ip6:::1.2.3", 18, "ip4-network needs four dotted numbers", "5.6"),
		E("v=spf1 ip6:1:2:3:4:5:6:7:1.2.3.4", 25, "too many groups in ip6-network", "5.6"),
		E("v=spf1 ip6:::1.2.3.4:5", 20, "text after the dotted quad of an ip6-network", "5.6"),
		E("v=spf1 ip6:g::", 11, "invalid character in ip6-network", "5.6"),
		E("v=spf1 ip6:", 11, "ip6-network needs 8 groups or \"::\"", "5.6"),
		E("v=spf1 ip6", 10, "ip6 needs \":\" and an address", "5.6"),
		E("v=spf1 ip6:::1/129", 15, "ip6-cidr-length above 128", "5.6"),
		E("v=spf1 ip6:::1/0128", 15, "cidr-length with a leading zero", "5.6"),
		E("v=spf1 ip6:::1//64", 15, "ip6 takes a single \"/\" cidr-length", "5.6"),
		E("v=spf1 ip6:::1/", 15, "cidr-length without digits", "5.6"),
		E("v=spf1 ip6:::1/64x", 17, "unexpected text after ip6-cidr-length", "5.6"),
	};

	(void)state;
	assert_int_equal(check_errors(c, sizeof(c) / sizeof(c[0])), 0);
}

static void ip4_network_errors(void **state)
{
	static const struct ecase c[] = {
		E("v=spf1 ip4:1.2.3", 16, "ip4-network needs four dotted numbers", "5.6"),
		E("v=spf1 ip4:1.2.3.", 17, "ip4-network needs four dotted numbers", "5.6"),
		E("v=spf1 ip4:01.2.3.4", 11, "ip4-network number with a leading zero", "5.6"),
		E("v=spf1 ip4:1.2.3.256", 17, "ip4-network number above 255", "5.6"),
		E("v=spf1 ip4:1.2.3.1000", 17, "ip4-network number above 255", "5.6"),
		E("v=spf1 ip4:1.2.3.4.5", 18, "unexpected text after ip4-network", "5.6"),
		E("v=spf1 ip4:1.2.3.4:8080", 18, "unexpected text after ip4-network", "5.6"),
		E("v=spf1 ip4:1.2.3.4/33", 19, "ip4-cidr-length above 32", "5.6"),
		E("v=spf1 ip4:1.2.3.4/032", 19, "cidr-length with a leading zero", "5.6"),
		E("v=spf1 ip4:1.2.3.4//32", 19, "ip4 takes no ip6-cidr-length", "5.6"),
		E("v=spf1 ip4", 10, "ip4 needs \":\" and an address", "5.6"),
		E("v=spf1 ip4:", 11, "ip4-network needs four dotted numbers", "5.6"),
		E("v=spf1 ip4:a.b.c.d", 11, "ip4-network needs four dotted numbers", "5.6"),
	};

	(void)state;
	assert_int_equal(check_errors(c, sizeof(c) / sizeof(c[0])), 0);
}

/* Every other rule the parser names, with the offset of the bad byte. */
static void term_errors(void **state)
{
	static const struct ecase c[] = {
		E("v=spf1 moo", 7, "unknown mechanism", "4.6.1"),
		E("v=spf1 -all moo", 12, "unknown mechanism", "4.6.1"),
		E("v=spf1 redirect:t2.example.com", 7, "unknown mechanism", "4.6.1"),
		E("v=spf1 moo.cow/far_out=man", 7, "unknown mechanism", "4.6.1"),
		E("v=spf1 +", 8, "unknown mechanism", "4.6.1"),
		E("v=spf1 !a", 7, "unknown mechanism", "4.6.1"),
		E("v=spf1 -all.", 11, "all takes no argument", "5.1"),
		E("v=spf1 all:foo", 10, "all takes no argument", "5.1"),
		E("v=spf1 all/8", 10, "all takes no argument", "5.1"),
		E("v=spf1 include", 14, "mechanism needs \":\" and a domain-spec", "5.2"),
		E("v=spf1 exists/24", 13, "unexpected text after mechanism name", "5.7"),
		E("v=spf1 ptr/0", 10, "unexpected text after mechanism name", "5.5"),
		E("v=spf1 a!", 8, "unexpected text after mechanism name", "5.3"),
		E("v=spf1 include:", 15, "empty domain-spec", "5.2"),
		E("v=spf1 a:/24", 9, "empty domain-spec", "5.3"),
		E("v=spf1 a/33", 9, "ip4-cidr-length above 32", "5.3"),
		E("v=spf1 mx//129", 11, "ip6-cidr-length above 128", "5.4"),
		E("v=spf1 a/24/64", 12, "ip6-cidr-length needs \"//\"", "5.3"),
		E("v=spf1 a/", 9, "cidr-length without digits", "5.3"),
		E("v=spf1 a//", 10, "cidr-length without digits", "5.3"),
		E("v=spf1 a/24//64/1", 15, "unexpected text after cidr-length", "5.3"),
		E("v=spf1 a/024", 9, "cidr-length with a leading zero", "5.3"),
		E("v=spf1 a:foo.com/99999999999999999999", 17, "ip4-cidr-length above 32", "5.3"),
		/* domain-end (§7.1) */
		E("v=spf1 a:museum", 9, "domain-spec must end in \".\" toplabel or a macro", "7.1"),
		E("v=spf1 a:foo-bar", 9, "domain-spec must end in \".\" toplabel or a macro", "7.1"),
		E("v=spf1 a:abc.123", 13, "all-numeric toplabel", "7.1"),
		E("v=spf1 a:111.222.33.44", 20, "all-numeric toplabel", "7.1"),
		E("v=spf1 a:example.-com", 17, "toplabel starts with '-'", "7.1"),
		E("v=spf1 a:example.com-", 20, "toplabel ends with '-'", "7.1"),
		E("v=spf1 a:example.com:8080", 20, "invalid character in toplabel", "7.1"),
		E("v=spf1 include:ip5.example.com/24", 30, "invalid character in toplabel", "7.1"),
		E("v=spf1 a:foo..", 13, "empty toplabel", "7.1"),
		/* "." after a macro is neither domain-end form */
		E("v=spf1 a:%{d}.", 9, "domain-spec must end in \".\" toplabel or a macro", "7.1"),
		E("v=spf1 a:foo.%{d}x", 13, "invalid character in toplabel", "7.1"),
		E("v=spf1 a:foo.c_m", 14, "invalid character in toplabel", "7.1"),
		/* macro-strings (§7.1, §7.3) */
		E("v=spf1 a:%{a}.example.com", 11, "unknown macro letter", "7.1"),
		E("v=spf1 exists:%{d0}.x.com", 17, "macro digit transformer is zero", "7.1"),
		E("v=spf1 -exists:%(ir).sbl.example.com", 16,
		  "'%' not followed by '{', '%', '_' or '-'", "7.1"),
		E("v=spf1 exists:foo%", 18, "'%' not followed by '{', '%', '_' or '-'", "7.1"),
		E("v=spf1 -all exp=%{r}.example.com", 18, "macro letter allowed only in exp text",
		  "7.1"),
		E("v=spf1 exists:%{d", 17, "unterminated macro-expand", "7.1"),
		/* modifiers (§4.6.1, §6) */
		E("v=spf1 1up=foo", 7, "modifier name must start with a letter", "4.6.1"),
		E("v=spf1 _x=foo", 7, "modifier name must start with a letter", "4.6.1"),
		E("v=spf1 =all", 7, "empty modifier name", "4.6.1"),
		E("v=spf1 -foo=bar", 7, "qualifier before a modifier", "4.6.1"),
		E("v=spf1 ~redirect=a.example.com", 7, "qualifier before a modifier", "4.6.1"),
		E("v=spf1 -all foo=%abc", 17, "'%' not followed by '{', '%', '_' or '-'", "7.1"),
		E("v=spf1 redirect=a.example.com -all redirect=b.example.com", 35,
		  "second redirect modifier", "6"),
		E("v=spf1 exp=a.example.com EXP=b.example.com", 25, "second exp modifier", "6"),
		E("v=spf1 exp= -all", 11, "empty domain-spec", "6.2"),
		E("v=spf1 ?all redirect=", 21, "empty domain-spec", "6.1"),
		E("v=spf1 exp=-all", 11, "domain-spec must end in \".\" toplabel or a macro", "7.1"),
	};

	(void)state;
	assert_int_equal(check_errors(c, sizeof(c) / sizeof(c[0])), 0);
}

/* The term an error belongs to is reported too. */
static void error_names_the_term(void **state)
{
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;
	const char *txt = "v=spf1 a mx ip4:1.2.3.4/33 -all";

	(void)state;
	assert_int_equal(parse(txt, strlen(txt), &rec, &err), SPFKIT_ESYNTAX);
	assert_null(rec);
	assert_int_equal(err.term_offset, 12);
	assert_int_equal(err.term_len, 14);
	assert_int_equal(err.offset, 24);
}

/* ---- modifiers ------------------------------------------------------- */

static void modifiers(void **state)
{
	struct spfkit_record *rec =
		must_parse("v=spf1 Redirect=_spf.example.com foo.bar-x_y=%{c}:/x a exp=%{d2} ");
	const struct spfkit_term *t = rec->terms;

	(void)state;
	assert_int_equal(rec->count, 4);
	assert_true(t[0].is_modifier);
	assert_int_equal(t[0].mod, SPFKIT_MOD_REDIRECT);
	assert_int_equal(t[0].name_len, 8);
	assert_memory_equal(t[0].name, "Redirect", 8);
	assert_memory_equal(t[0].domain.src, "_spf.example.com", 16);
	assert_int_equal(t[1].mod, SPFKIT_MOD_UNKNOWN);
	assert_int_equal(t[1].name_len, 11);
	assert_memory_equal(t[1].name, "foo.bar-x_y", 11);
	assert_true(t[1].has_domain);
	assert_int_equal(t[1].domain.src_len, 7); /* "%{c}:/x" */
	assert_false(t[2].is_modifier);
	assert_int_equal(t[3].mod, SPFKIT_MOD_EXP);
	assert_int_equal(rec->redirect, 0);
	assert_int_equal(rec->exp, 3);
	assert_int_equal(rec->dns_terms, 2); /* redirect and a, not exp */
	spfkit_record_free(rec);
}

/* An unknown modifier may be empty or use any macro-letter; it is kept. */
static void unknown_modifiers_are_kept(void **state)
{
	struct spfkit_record *rec = must_parse("v=spf1 a=b empty= x=%{t}%{r} a.b=c=d");

	(void)state;
	assert_int_equal(rec->count, 4);
	assert_int_equal(rec->terms[0].mod, SPFKIT_MOD_UNKNOWN);
	assert_int_equal(rec->terms[1].domain.count, 0);
	assert_int_equal(rec->terms[3].name_len, 3);
	assert_int_equal(rec->terms[3].domain.src_len, 3);
	assert_int_equal(rec->dns_terms, 0);
	assert_int_equal(rec->redirect, -1);
	spfkit_record_free(rec);
}

static void dns_terms_counted(void **state)
{
	struct spfkit_record *rec = must_parse(
		"v=spf1 include:a.com a mx ptr exists:%{i}.b.com ip4:1.2.3.4 ip6:::1 all "
		"redirect=c.com exp=d.com x=y");

	(void)state;
	assert_int_equal(rec->dns_terms, 6);
	assert_int_equal(rec->count, 11);
	spfkit_record_free(rec);
}

/* ---- caps and hostile input ------------------------------------------ */

/* A record of exactly SPFKIT_RECORD_MAX_LEN bytes parses; one more is E2BIG. */
static void record_64k(void **state)
{
	size_t max = SPFKIT_RECORD_MAX_LEN;
	char *txt = test_malloc(max + 2);
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;

	(void)state;
	memcpy(txt, "v=spf1 x=", 9);
	memset(txt + 9, 'a', max - 9 - 5);
	memcpy(txt + max - 5, " -all", 5);
	assert_int_equal(parse(txt, max, &rec, &err), 0);
	assert_int_equal(rec->count, 2);
	assert_int_equal(rec->terms[0].domain.src_len, max - 9 - 5);
	spfkit_record_free(rec);
	rec = NULL;
	txt[max] = ' ';
	assert_int_equal(parse(txt, max + 1, &rec, &err), SPFKIT_E2BIG);
	assert_null(rec);
	assert_string_equal(err.rule, "record longer than 65535 bytes");
	test_free(txt);
}

/* 64 KiB of macros: parse succeeds, pieces counted exactly. */
static void record_64k_of_macros(void **state)
{
	size_t max = SPFKIT_RECORD_MAX_LEN, n = (max - 14 - 4) / 4, i;
	char *txt = test_malloc(max);
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;
	size_t len;

	(void)state;
	memcpy(txt, "v=spf1 exists:", 14);
	for (i = 0; i < n; i++)
		memcpy(txt + 14 + 4 * i, "%{i}", 4);
	len = 14 + 4 * n;
	assert_int_equal(parse(txt, len, &rec, &err), 0);
	assert_int_equal(rec->terms[0].domain.count, n);
	spfkit_record_free(rec);
	/* the same with "%%" escapes */
	for (i = 14; i < len; i++)
		txt[i] = '%';
	assert_int_equal(parse(txt, len, &rec, &err), 0);
	assert_int_equal(rec->terms[0].domain.count, (len - 14) / 2);
	spfkit_record_free(rec);
	test_free(txt);
}

/*
 * Issue 7, item 6: no term cap below what the length cap allows. The
 * most terms a record of at most 65,535 bytes holds (32,764 " a") parse,
 * and so do 1,025 (a permerror "too large" before, where pyspf and
 * Mail::SPF evaluate); one byte more than the length cap does not.
 */
static void max_terms(void **state)
{
	size_t n = (SPFKIT_RECORD_MAX_LEN - 6) / 2;
	char *txt = test_malloc(6 + 2 * (n + 1));
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;
	size_t i;

	(void)state;
	assert_true(n <= SPFKIT_RECORD_MAX_TERMS);
	memcpy(txt, "v=spf1", 6);
	for (i = 0; i <= n; i++)
		memcpy(txt + 6 + 2 * i, " a", 2);
	assert_int_equal(parse(txt, 6 + 2 * 1025, &rec, &err), 0);
	assert_int_equal(rec->count, 1025);
	spfkit_record_free(rec);
	rec = NULL;
	assert_int_equal(parse(txt, 6 + 2 * n, &rec, &err), 0);
	assert_int_equal(rec->count, n);
	assert_int_equal(rec->dns_terms, n);
	spfkit_record_free(rec);
	rec = NULL;
	assert_int_equal(parse(txt, 6 + 2 * (n + 1), &rec, &err), SPFKIT_E2BIG);
	assert_null(rec);
	assert_string_equal(err.rule, "record longer than 65535 bytes");
	test_free(txt);
}

/* The arena is sized to what the parse takes: one block, and for a
 * 64 KiB record of one-letter terms some 100 bytes a term (the whole
 * block is charged to the record cache and to the evaluation). */
struct sized {
	size_t blocks, bytes;
};

static void *s_alloc(void *u, size_t n)
{
	struct sized *z = u;

	z->blocks++;
	z->bytes += n;
	return test_malloc(n);
}

static void *s_realloc(void *u, void *p, size_t n)
{
	(void)u;
	return test_realloc(p, n);
}

static void arena_is_sized_to_the_record(void **state)
{
	/* " v=..." has a '%' before its ':': all of a term's '%' count */
	static const char *const terms[] = {" a", " x=", " a:%{d}.x%{i}%%%_%-", " ip6:2001:db8::1",
					    " include:%{l}.%{o}", " exp=%{d}", " mx:m.example/24",
					    " ip4:192.0.2.1/24", " v=%{d}:%{i}%{s}"};
	struct sized z;
	struct spfkit_allocator za = {s_alloc, s_realloc, test_alloc.free, &z};
	struct spfkit_record *rec;
	char *txt = test_malloc(SPFKIT_RECORD_MAX_LEN + 1);
	size_t i, n, tl;

	(void)state;
	for (i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		tl = strlen(terms[i]);
		n = 6;
		memcpy(txt, "v=spf1", 6);
		while (n + tl <= SPFKIT_RECORD_MAX_LEN && (i != 5 || n == 6)) {
			memcpy(txt + n, terms[i], tl);
			n += tl;
		}
		memset(&z, 0, sizeof(z));
		assert_int_equal(spfkit_record_parse(txt, n, &za, &rec, NULL), 0);
		if (z.blocks != 1)
			fail_msg("\"%s\" x %zu: %zu blocks", terms[i], (n - 6) / tl, z.blocks);
		if (i == 0 && z.bytes > 50 * n)
			fail_msg("64 KiB of \" a\": %zu bytes parsed", z.bytes);
		/* an ip4 term holds no macro-string: no room kept for pieces */
		if (i == 7 && z.bytes > n + 1 + rec->count * sizeof(rec->terms[0]) + 256)
			fail_msg("%zu ip4 terms: %zu bytes parsed", rec->count, z.bytes);
		spfkit_record_free(rec);
	}
	test_free(txt);
}

/* Where p points: an offset into text, or itself (a static escape). */
static uintptr_t where(const char *p, const char *text, size_t len)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)text;

	return p != NULL && off <= len ? off : (uintptr_t)p;
}

static void same_string(const struct spfkit_macro_string *a, const char *ta,
			const struct spfkit_macro_string *b, const char *tb, size_t len)
{
	size_t k;

	assert_int_equal(a->count, b->count);
	assert_int_equal(a->letters, b->letters);
	assert_int_equal(a->src_len, b->src_len);
	assert_int_equal(where(a->src, ta, len), where(b->src, tb, len));
	for (k = 0; k < a->count; k++) {
		const struct spfkit_macro_piece *x = &a->pieces[k], *y = &b->pieces[k];

		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->letter, y->letter);
		assert_int_equal(x->url_escape, y->url_escape);
		assert_int_equal(x->reverse, y->reverse);
		assert_int_equal(x->digits, y->digits);
		assert_int_equal(x->delims, y->delims);
		assert_int_equal(x->len, y->len);
		assert_int_equal(where(x->text, ta, len), where(y->text, tb, len));
	}
}

/* The loose parse (a block sized by SP bytes) and the exact one agree on
 * txt: result, error, every term and its compact form. 1 if it parsed. */
static int loose_equals_exact(const char *txt, size_t len)
{
	struct spfkit_record *a = NULL, *b = NULL;
	struct spfkit_parse_error ea, eb;
	void *ra, *rb;
	int rca = spfkit__record_parse_room(txt, len, &test_alloc, 40, &a, &ea, &ra);
	int rcb = spfkit__record_parse_loose(txt, len, &test_alloc, 40, &b, &eb, &rb);
	size_t i;

	if (rca != rcb)
		fail_msg("\"%.*s\": exact %d, loose %d", (int)len, txt, rca, rcb);
	assert_int_equal(ea.offset, eb.offset);
	assert_int_equal(ea.term_offset, eb.term_offset);
	assert_int_equal(ea.term_len, eb.term_len);
	assert_ptr_equal(ea.rule, eb.rule);
	if (rca != 0)
		return 0;
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->redirect, b->redirect);
	assert_int_equal(a->exp, b->exp);
	assert_int_equal(a->dns_terms, b->dns_terms);
	for (i = 0; i < a->count; i++) {
		const struct spfkit_term *x = &a->terms[i], *y = &b->terms[i];

		assert_memory_equal(x, y, offsetof(struct spfkit_term, domain));
		same_string(&x->domain, a->text, &y->domain, b->text, len);
		assert_int_equal(where(x->name, a->text, len), where(y->name, b->text, len));
		assert_int_equal(x->name_len, y->name_len);
		assert_int_equal(x->offset, y->offset);
		assert_int_equal(x->len, y->len);
	}
	assert_memory_equal((char *)ra + SPFKIT__ALIGN_UP(40), (char *)rb + SPFKIT__ALIGN_UP(40),
			    a->count * sizeof(struct spfkit__hot_term));
	spfkit_record_free(a);
	spfkit_record_free(b);
	return 1;
}

/*
 * Records of every length to 300 bytes from random terms (good, bad and
 * the rare forms the loose parse reads the general way) and runs of SP,
 * trailing ones too: the SP count that sizes the loose block is checked
 * at every length and alignment of its tail.
 */
static void loose_parse_equals_exact(void **state)
{
	static const char *const terms[] = {
		"ip4:192.0.2.1", "ip4:10.0.0.0/8", "-ip4:1.2.3.4", "ip6:2001:db8::/32", "ip6:::1",
		"ip6:::ffff:1.2.3.4", "ip6:1:2:3:4:5:6:7:8", "include:_spf.example.com", "a", "mx/24",
		"a:%{d}.x//64", "exists:%{i}.%{l1r-}.e.example", "x=%{d}:y", "~all", "ptr", "?all",
		"Ip6:::1/64", /* the first 17 parse */
		"redirect=r.example", "exp=%{d}", "ip4:1.2.3", "ip4:01.2.3.4", "ip6:12345::", "foo",
		"ip4:1.2.3.4//8", "ip6:::/129", "include:", "v=1", "ip4:1.2.3.4 ",
	};
	const size_t nterms = sizeof(terms) / sizeof(terms[0]);
	char txt[400];
	uint32_t x = 2463534242u;
	size_t len, n, k, round, parsed = 0;

	(void)state;
	for (round = 0; round < 6000; round++) {
		size_t want = 6 + round % 300;

		memcpy(txt, "v=spf1", 6);
		len = 6;
		while (len < want) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			for (n = 1 + (x >> 28) % 3; n > 0 && len < sizeof(txt) - 1; n--)
				txt[len++] = ' ';
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			if (x % 8 == 0) /* a trailing run of SP */
				continue;
			/* mostly the first 17, which parse, so that most records do */
			k = (x >> 8) % 16 < 12 ? (x >> 8) % 17 : x % nterms;
			n = strlen(terms[k]);
			if (len + n >= sizeof(txt) - 1)
				break;
			memcpy(txt + len, terms[k], n);
			len += n;
		}
			parsed += loose_equals_exact(txt, len);
	}
	assert_true(parsed > 1000); /* not only errors compared */
}

static void bad_arguments(void **state)
{
	struct spfkit_record *rec = (struct spfkit_record *)&rec;

	(void)state;
	assert_int_equal(spfkit_record_parse("v=spf1", 6, &test_alloc, NULL, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_record_parse(NULL, 6, &test_alloc, &rec, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_record_parse("v=spf1 moo", 10, &test_alloc, &rec, NULL),
			 SPFKIT_ESYNTAX); /* err may be NULL */
	assert_null(rec);
	assert_int_equal(spfkit_record_parse("v=spf1 a", 8, NULL, &rec, NULL), 0); /* libc */
	spfkit_record_free(rec);
	spfkit_record_free(NULL);
}

/* Allocation failure at every step: a clean SPFKIT_ENOMEM, no leak. */
static void allocation_failures(void **state)
{
	static const char txt[] = "v=spf1 include:%{d2}.x.com a:%{ir}.%{v}._spf.%{d2} -all x=%%";
	struct test_alloc_failing f;
	struct spfkit_allocator fa = test_alloc_failing(&f);
	struct spfkit_record *rec;
	int n, rc;

	(void)state;
	for (n = 0;; n++) {
		f.left = n;
		rec = NULL;
		rc = spfkit_record_parse(txt, sizeof(txt) - 1, &fa, &rec, NULL);
		if (rc == 0)
			break;
		assert_int_equal(rc, SPFKIT_ENOMEM);
		assert_null(rec);
	}
	assert_int_equal(n, 1); /* the estimate holds it all: one allocation */
	spfkit_record_free(rec);
}

/*
 * Hash flooding (issue 7, item 8): the record cache hashed a long text
 * by sampling 88 bytes of it, so records that differ only elsewhere all
 * shared one bucket. 1,000 such records must spread over the buckets.
 */
static void record_cache_flood_spreads(void **state)
{
	struct spfkit__record_cache *c;
	struct spfkit__record_cache_entry *e;
	char txt[201];
	size_t hits, misses, entries;
	unsigned i;

	(void)state;
	assert_int_equal(spfkit__record_cache_new(NULL, 4096, &c), 0);
	memset(txt, 0, sizeof(txt));
	memcpy(txt, "v=spf1 ", 7);
	memset(txt + 7, 'a', sizeof(txt) - 8);
	for (i = 0; i < 1000; i++) {
		/* bytes 60..62: outside the first and last 32 and the sampled words */
		txt[60] = (char)('a' + i % 10);
		txt[61] = (char)('a' + i / 10 % 10);
		txt[62] = (char)('a' + i / 100);
		assert_int_equal(spfkit__record_cache_get(c, txt, sizeof(txt) - 1, NULL, &e), 0);
		spfkit__record_cache_release(c, e);
	}
	spfkit__record_cache_stats(c, &hits, &misses, &entries);
	assert_int_equal(entries, 1000);
	assert_true(spfkit__record_cache_longest_chain(c) < 16); /* 1,000 keys, 4,096 buckets */
	spfkit__record_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_cache_flood_spreads),
		cmocka_unit_test(rfc7208_suite_records),
		cmocka_unit_test(is_spf),
		cmocka_unit_test(is_spf_every_byte),
		cmocka_unit_test(version_errors),
		cmocka_unit_test(byte_errors),
		cmocka_unit_test(nul_bytes),
		cmocka_unit_test(bad_byte_in_every_position),
		cmocka_unit_test(spaces),
		cmocka_unit_test(every_mechanism),
		cmocka_unit_test(mechanism_names),
		cmocka_unit_test(domain_spec_is_zero_copy),
		cmocka_unit_test(macro_domain_pieces),
		cmocka_unit_test(cidr_lengths),
		cmocka_unit_test(ip4_network),
		cmocka_unit_test(ip6_network_forms),
		cmocka_unit_test(ip6_network_errors),
		cmocka_unit_test(ip4_network_errors),
		cmocka_unit_test(term_errors),
		cmocka_unit_test(error_names_the_term),
		cmocka_unit_test(modifiers),
		cmocka_unit_test(unknown_modifiers_are_kept),
		cmocka_unit_test(dns_terms_counted),
		cmocka_unit_test(record_64k),
		cmocka_unit_test(record_64k_of_macros),
		cmocka_unit_test(max_terms),
		cmocka_unit_test(arena_is_sized_to_the_record),
		cmocka_unit_test(loose_parse_equals_exact),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(allocation_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
