/*
 * Reason codes (include/spfkit/reason.h): their names, texts and RFC 7208
 * sections in one table, indexed by the code. The texts are the rules
 * that spfkit_parse_error.rule and the problem texts quote; a rule text
 * is always a pointer into this table, so the code is found from it by
 * identity, never by reading the words.
 */
#include <string.h>

#include <spfkit/reason.h>
#include <spfkit/record.h>

#include "core.h"
#include "reason.h"

/* The texts a TEMPFAIL answer's detail may be, by address (reason.h). */
const char spfkit__reason_timeout[] = "timeout";
const char spfkit__reason_servfail[] = "SERVFAIL";
const char spfkit__reason_refused[] = "REFUSED";
const char spfkit__reason_dns_failure[] = "DNS failure";
const char spfkit__reason_budget[] = "evaluation time budget exceeded";
const char spfkit__reason_questions[] = "too many DNS questions in one evaluation";
const char spfkit__reason_submit[] = "the resolver refused the question";

static const struct {
	const char *name;
	const char *text;
	const char *section;
} reasons[] = {
	[SPFKIT_REASON_NONE] = {"none", "", ""},
	[SPFKIT_REASON_DNS_TERMS] = {"dns-terms", "too many DNS-querying terms", "4.6.4"},
	[SPFKIT_REASON_VOID_LOOKUPS] = {"void-lookups", "too many void DNS lookups", "4.6.4"},
	[SPFKIT_REASON_MX_NAMES] = {"mx-names", "too many MX hosts to look up", "4.6.4"},
	[SPFKIT_REASON_MULTIPLE_RECORDS] = {"multiple-records", "more than one SPF record", "4.5"},
	[SPFKIT_REASON_INCLUDE_NONE] = {"include-none", "included domain has no SPF record", "5.2"},
	[SPFKIT_REASON_INCLUDE_TARGET] = {"include-target",
					  "include target is not a valid domain name", "5.2"},
	[SPFKIT_REASON_REDIRECT_NONE] = {"redirect-none", "redirect target has no SPF record",
					 "6.1"},
	[SPFKIT_REASON_REDIRECT_TARGET] = {"redirect-target",
					   "redirect target is not a valid domain name", "6.1"},
	[SPFKIT_REASON_INCLUDE_DEPTH] = {"include-depth", "include nesting too deep", "4.6.4"},
	[SPFKIT_REASON_EXPANSION_SIZE] = {"expansion-size", "macro expansion is too long", "7.3"},
	[SPFKIT_REASON_DNS_TIMEOUT] = {"dns-timeout", spfkit__reason_timeout, "4.4"},
	[SPFKIT_REASON_DNS_SERVFAIL] = {"dns-servfail", spfkit__reason_servfail, "4.4"},
	[SPFKIT_REASON_DNS_REFUSED] = {"dns-refused", spfkit__reason_refused, "4.4"},
	[SPFKIT_REASON_DNS_ERROR] = {"dns-error", spfkit__reason_dns_failure, "4.4"},
	[SPFKIT_REASON_TIME_BUDGET] = {"time-budget", spfkit__reason_budget, "4.6.4"},
	[SPFKIT_REASON_DNS_QUESTIONS] = {"dns-questions", spfkit__reason_questions, "4.6.4"},
	[SPFKIT_REASON_DNS_SUBMIT] = {"dns-submit", spfkit__reason_submit, "4.4"},
	[SPFKIT_REASON_VERSION] = {"version",
				   "record does not start with \"v=spf1\" and a space", "4.5"},
	[SPFKIT_REASON_RECORD_SIZE] = {"record-size", "record longer than 65535 bytes", "3.4"},
	[SPFKIT_REASON_TERM_COUNT] = {"term-count", "more terms than SPFKIT_RECORD_MAX_TERMS",
				      "3.4"},
	[SPFKIT_REASON_NON_ASCII] = {"non-ascii", "non-ASCII byte", "3.1"},
	[SPFKIT_REASON_CONTROL_CHAR] = {"control-char", "control character between terms",
					"4.6.1"},
	[SPFKIT_REASON_UNKNOWN_MECHANISM] = {"unknown-mechanism", "unknown mechanism", "4.6.1"},
	[SPFKIT_REASON_QUALIFIED_MODIFIER] = {"qualified-modifier", "qualifier before a modifier",
					      "4.6.1"},
	[SPFKIT_REASON_EMPTY_MODIFIER_NAME] = {"empty-modifier-name", "empty modifier name",
					       "4.6.1"},
	[SPFKIT_REASON_MODIFIER_NAME] = {"modifier-name", "modifier name must start with a letter",
					 "4.6.1"},
	[SPFKIT_REASON_DUPLICATE_REDIRECT] = {"duplicate-redirect", "second redirect modifier", "6"},
	[SPFKIT_REASON_DUPLICATE_EXP] = {"duplicate-exp", "second exp modifier", "6"},
	[SPFKIT_REASON_MISSING_DOMAIN] = {"missing-domain", "mechanism needs \":\" and a domain-spec",
					  "5.2"},
	[SPFKIT_REASON_IP4_MISSING] = {"ip4-missing", "ip4 needs \":\" and an address", "5.6"},
	[SPFKIT_REASON_IP6_MISSING] = {"ip6-missing", "ip6 needs \":\" and an address", "5.6"},
	[SPFKIT_REASON_ALL_ARGUMENT] = {"all-argument", "all takes no argument", "5.1"},
	[SPFKIT_REASON_MECHANISM_TEXT] = {"mechanism-text", "unexpected text after mechanism name",
					  "12"},
	[SPFKIT_REASON_EMPTY_DOMAIN] = {"empty-domain", "empty domain-spec", "7.1"},
	[SPFKIT_REASON_DOMAIN_END] = {"domain-end",
				      "domain-spec must end in \".\" toplabel or a macro", "7.1"},
	[SPFKIT_REASON_EMPTY_TOPLABEL] = {"empty-toplabel", "empty toplabel", "7.1"},
	[SPFKIT_REASON_TOPLABEL_CHAR] = {"toplabel-char", "invalid character in toplabel", "7.1"},
	[SPFKIT_REASON_TOPLABEL_DASH_START] = {"toplabel-dash-start", "toplabel starts with '-'",
					       "7.1"},
	[SPFKIT_REASON_TOPLABEL_DASH_END] = {"toplabel-dash-end", "toplabel ends with '-'", "7.1"},
	[SPFKIT_REASON_TOPLABEL_NUMERIC] = {"toplabel-numeric", "all-numeric toplabel", "7.1"},
	[SPFKIT_REASON_CIDR_DIGITS] = {"cidr-digits", "cidr-length without digits", "5.6"},
	[SPFKIT_REASON_CIDR_ZERO] = {"cidr-zero", "cidr-length with a leading zero", "12"},
	[SPFKIT_REASON_IP4_CIDR] = {"ip4-cidr", "ip4-cidr-length above 32", "5.6"},
	[SPFKIT_REASON_IP6_CIDR] = {"ip6-cidr", "ip6-cidr-length above 128", "5.6"},
	[SPFKIT_REASON_IP6_CIDR_SLASHES] = {"ip6-cidr-slashes", "ip6-cidr-length needs \"//\"",
					    "5.6"},
	[SPFKIT_REASON_CIDR_TEXT] = {"cidr-text", "unexpected text after cidr-length", "12"},
	[SPFKIT_REASON_IP4_IP6_CIDR] = {"ip4-ip6-cidr", "ip4 takes no ip6-cidr-length", "5.6"},
	[SPFKIT_REASON_IP6_DOUBLE_SLASH] = {"ip6-double-slash",
					    "ip6 takes a single \"/\" cidr-length", "5.6"},
	[SPFKIT_REASON_IP4_TEXT] = {"ip4-text", "unexpected text after ip4-network", "5.6"},
	[SPFKIT_REASON_IP6_TEXT] = {"ip6-text", "unexpected text after ip6-cidr-length", "5.6"},
	[SPFKIT_REASON_IP4_FORM] = {"ip4-form", "ip4-network needs four dotted numbers", "5.6"},
	[SPFKIT_REASON_IP4_ZERO] = {"ip4-zero", "ip4-network number with a leading zero", "12"},
	[SPFKIT_REASON_IP4_RANGE] = {"ip4-range", "ip4-network number above 255", "12"},
	[SPFKIT_REASON_IP6_GROUPS] = {"ip6-groups", "too many groups in ip6-network",
				      "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_QUAD_TEXT] = {"ip6-quad-text",
					 "text after the dotted quad of an ip6-network",
					 "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_CHAR] = {"ip6-char", "invalid character in ip6-network", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_GROUP_SIZE] = {"ip6-group-size",
					  "ip6-network group longer than 4 hex digits",
					  "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_DOUBLE_COLON] = {"ip6-double-colon", "second \"::\" in ip6-network",
					    "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_COLON_END] = {"ip6-colon-end", "ip6-network ends in a single ':'",
					 "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_FORM] = {"ip6-form", "ip6-network needs 8 groups or \"::\"",
				    "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_FULL_COLONS] = {"ip6-full-colons", "\"::\" in an ip6-network of 8 groups",
					   "RFC 4291 2.2"},
	[SPFKIT_REASON_MACRO_EXP_LETTER] = {"macro-exp-letter",
					    "macro letter allowed only in exp text", "7.2"},
	[SPFKIT_REASON_MACRO_UNTERMINATED] = {"macro-unterminated", "unterminated macro-expand",
					      "7.1"},
	[SPFKIT_REASON_MACRO_LETTER] = {"macro-letter", "unknown macro letter", "7.1"},
	[SPFKIT_REASON_MACRO_ZERO] = {"macro-zero", "macro digit transformer is zero", "7.3"},
	[SPFKIT_REASON_MACRO_PERCENT] = {"macro-percent", "'%' not followed by '{', '%', '_' or '-'",
					 "7.1"},
	[SPFKIT_REASON_MACRO_CHAR] = {"macro-char", "invalid character in macro-expand", "7.1"},
	[SPFKIT_REASON_MACRO_SPACE] = {"macro-space", "space in domain-spec", "7.1"},
	[SPFKIT_REASON_MACRO_CONTROL] = {"macro-control", "control character in macro-string", "7.1"},
};

#define REASON_COUNT (sizeof(reasons) / sizeof(reasons[0]))

static int known(enum spfkit_reason reason)
{
	return (unsigned)reason < REASON_COUNT;
}

const char *spfkit_reason_name(enum spfkit_reason reason)
{
	return known(reason) ? reasons[reason].name : "unknown";
}

int spfkit_reason_from_name(const char *name, size_t len)
{
	size_t i;

	if (name == NULL)
		return -1;
	for (i = 0; i < REASON_COUNT; i++)
		if (spfkit__memcaseeq(name, len, reasons[i].name, strlen(reasons[i].name)))
			return (int)i;
	return -1;
}

const char *spfkit_reason_text(enum spfkit_reason reason)
{
	return known(reason) ? reasons[reason].text : "";
}

const char *spfkit_reason_section(enum spfkit_reason reason)
{
	return known(reason) ? reasons[reason].section : "";
}

enum spfkit_reason spfkit__reason_of_text(const char *text)
{
	size_t i;

	if (text == NULL)
		return SPFKIT_REASON_NONE;
	for (i = 1; i < REASON_COUNT; i++)
		if (text == reasons[i].text)
			return (enum spfkit_reason)i;
	return SPFKIT_REASON_NONE;
}

enum spfkit_reason spfkit_parse_error_reason(const struct spfkit_parse_error *err)
{
	return err != NULL ? spfkit__reason_of_text(err->rule) : SPFKIT_REASON_NONE;
}

enum spfkit_reason spfkit__reason_of_detail(const char *detail)
{
	enum spfkit_reason r = spfkit__reason_of_text(detail);

	return r >= SPFKIT_REASON_DNS_TIMEOUT && r <= SPFKIT_REASON_DNS_SUBMIT
		       ? r
		       : SPFKIT_REASON_DNS_ERROR;
}
