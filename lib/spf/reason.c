/*
 * Reason codes (include/spfkit/reason.h): their names, texts and RFC 7208
 * sections in tables indexed by the code. The texts are the rules that
 * spfkit_parse_error.rule and the problem texts quote, and the details
 * of the DNS failures: each is a row of one array, so a text the library
 * handed out gives its code back from its address alone (never by
 * reading the words), in constant time.
 */
#include <stdint.h>
#include <string.h>

#include <spfkit/reason.h>
#include <spfkit/record.h>

#include "core.h"
#include "reason.h"

const char spfkit__reason_texts[SPFKIT__REASON_COUNT][SPFKIT__REASON_TEXT_MAX] = {
	[SPFKIT_REASON_NONE] = "",
	[SPFKIT_REASON_DNS_TERMS] = "too many DNS-querying terms",
	[SPFKIT_REASON_VOID_LOOKUPS] = "too many void DNS lookups",
	[SPFKIT_REASON_MX_NAMES] = "too many MX hosts to look up",
	[SPFKIT_REASON_MULTIPLE_RECORDS] = "more than one SPF record",
	[SPFKIT_REASON_INCLUDE_NONE] = "included domain has no SPF record",
	[SPFKIT_REASON_INCLUDE_TARGET] = "include target is not a valid domain name",
	[SPFKIT_REASON_REDIRECT_NONE] = "redirect target has no SPF record",
	[SPFKIT_REASON_REDIRECT_TARGET] = "redirect target is not a valid domain name",
	[SPFKIT_REASON_INCLUDE_DEPTH] = "include nesting too deep",
	[SPFKIT_REASON_EXPANSION_SIZE] = "macro expansion is too long",
	[SPFKIT_REASON_DNS_TIMEOUT] = "timeout",
	[SPFKIT_REASON_DNS_SERVFAIL] = "SERVFAIL",
	[SPFKIT_REASON_DNS_REFUSED] = "REFUSED",
	[SPFKIT_REASON_DNS_ERROR] = "DNS failure",
	[SPFKIT_REASON_TIME_BUDGET] = "evaluation time budget exceeded",
	[SPFKIT_REASON_DNS_QUESTIONS] = "too many DNS questions in one evaluation",
	[SPFKIT_REASON_DNS_SUBMIT] = "the resolver refused the question",
	[SPFKIT_REASON_VERSION] = "record does not start with \"v=spf1\" and a space",
	[SPFKIT_REASON_RECORD_SIZE] = "record longer than 65535 bytes",
	[SPFKIT_REASON_TERM_COUNT] = "more terms than SPFKIT_RECORD_MAX_TERMS",
	[SPFKIT_REASON_NON_ASCII] = "non-ASCII byte",
	[SPFKIT_REASON_CONTROL_CHAR] = "control character between terms",
	[SPFKIT_REASON_UNKNOWN_MECHANISM] = "unknown mechanism",
	[SPFKIT_REASON_QUALIFIED_MODIFIER] = "qualifier before a modifier",
	[SPFKIT_REASON_EMPTY_MODIFIER_NAME] = "empty modifier name",
	[SPFKIT_REASON_MODIFIER_NAME] = "modifier name must start with a letter",
	[SPFKIT_REASON_DUPLICATE_REDIRECT] = "second redirect modifier",
	[SPFKIT_REASON_DUPLICATE_EXP] = "second exp modifier",
	[SPFKIT_REASON_MISSING_DOMAIN] = "mechanism needs \":\" and a domain-spec",
	[SPFKIT_REASON_IP4_MISSING] = "ip4 needs \":\" and an address",
	[SPFKIT_REASON_IP6_MISSING] = "ip6 needs \":\" and an address",
	[SPFKIT_REASON_ALL_ARGUMENT] = "all takes no argument",
	[SPFKIT_REASON_MECHANISM_TEXT] = "unexpected text after mechanism name",
	[SPFKIT_REASON_EMPTY_DOMAIN] = "empty domain-spec",
	[SPFKIT_REASON_DOMAIN_END] = "domain-spec must end in \".\" toplabel or a macro",
	[SPFKIT_REASON_EMPTY_TOPLABEL] = "empty toplabel",
	[SPFKIT_REASON_TOPLABEL_CHAR] = "invalid character in toplabel",
	[SPFKIT_REASON_TOPLABEL_DASH_START] = "toplabel starts with '-'",
	[SPFKIT_REASON_TOPLABEL_DASH_END] = "toplabel ends with '-'",
	[SPFKIT_REASON_TOPLABEL_NUMERIC] = "all-numeric toplabel",
	[SPFKIT_REASON_CIDR_DIGITS] = "cidr-length without digits",
	[SPFKIT_REASON_CIDR_ZERO] = "cidr-length with a leading zero",
	[SPFKIT_REASON_IP4_CIDR] = "ip4-cidr-length above 32",
	[SPFKIT_REASON_IP6_CIDR] = "ip6-cidr-length above 128",
	[SPFKIT_REASON_IP6_CIDR_SLASHES] = "ip6-cidr-length needs \"//\"",
	[SPFKIT_REASON_CIDR_TEXT] = "unexpected text after cidr-length",
	[SPFKIT_REASON_IP4_IP6_CIDR] = "ip4 takes no ip6-cidr-length",
	[SPFKIT_REASON_IP6_DOUBLE_SLASH] = "ip6 takes a single \"/\" cidr-length",
	[SPFKIT_REASON_IP4_TEXT] = "unexpected text after ip4-network",
	[SPFKIT_REASON_IP6_TEXT] = "unexpected text after ip6-cidr-length",
	[SPFKIT_REASON_IP4_FORM] = "ip4-network needs four dotted numbers",
	[SPFKIT_REASON_IP4_ZERO] = "ip4-network number with a leading zero",
	[SPFKIT_REASON_IP4_RANGE] = "ip4-network number above 255",
	[SPFKIT_REASON_IP6_GROUPS] = "too many groups in ip6-network",
	[SPFKIT_REASON_IP6_QUAD_TEXT] = "text after the dotted quad of an ip6-network",
	[SPFKIT_REASON_IP6_CHAR] = "invalid character in ip6-network",
	[SPFKIT_REASON_IP6_GROUP_SIZE] = "ip6-network group longer than 4 hex digits",
	[SPFKIT_REASON_IP6_DOUBLE_COLON] = "second \"::\" in ip6-network",
	[SPFKIT_REASON_IP6_COLON_END] = "ip6-network ends in a single ':'",
	[SPFKIT_REASON_IP6_FORM] = "ip6-network needs 8 groups or \"::\"",
	[SPFKIT_REASON_IP6_FULL_COLONS] = "\"::\" in an ip6-network of 8 groups",
	[SPFKIT_REASON_MACRO_EXP_LETTER] = "macro letter allowed only in exp text",
	[SPFKIT_REASON_MACRO_UNTERMINATED] = "unterminated macro-expand",
	[SPFKIT_REASON_MACRO_LETTER] = "unknown macro letter",
	[SPFKIT_REASON_MACRO_ZERO] = "macro digit transformer is zero",
	[SPFKIT_REASON_MACRO_PERCENT] = "'%' not followed by '{', '%', '_' or '-'",
	[SPFKIT_REASON_MACRO_CHAR] = "invalid character in macro-expand",
	[SPFKIT_REASON_MACRO_SPACE] = "space in domain-spec",
	[SPFKIT_REASON_MACRO_CONTROL] = "control character in macro-string",
};

static const struct {
	const char *name;
	const char *section;
} reasons[SPFKIT__REASON_COUNT] = {
	[SPFKIT_REASON_NONE] = {"none", ""},
	[SPFKIT_REASON_DNS_TERMS] = {"dns-terms", "4.6.4"},
	[SPFKIT_REASON_VOID_LOOKUPS] = {"void-lookups", "4.6.4"},
	[SPFKIT_REASON_MX_NAMES] = {"mx-names", "4.6.4"},
	[SPFKIT_REASON_MULTIPLE_RECORDS] = {"multiple-records", "4.5"},
	[SPFKIT_REASON_INCLUDE_NONE] = {"include-none", "5.2"},
	[SPFKIT_REASON_INCLUDE_TARGET] = {"include-target", "5.2"},
	[SPFKIT_REASON_REDIRECT_NONE] = {"redirect-none", "6.1"},
	[SPFKIT_REASON_REDIRECT_TARGET] = {"redirect-target", "6.1"},
	[SPFKIT_REASON_INCLUDE_DEPTH] = {"include-depth", "4.6.4"},
	[SPFKIT_REASON_EXPANSION_SIZE] = {"expansion-size", "7.3"},
	[SPFKIT_REASON_DNS_TIMEOUT] = {"dns-timeout", "4.4"},
	[SPFKIT_REASON_DNS_SERVFAIL] = {"dns-servfail", "4.4"},
	[SPFKIT_REASON_DNS_REFUSED] = {"dns-refused", "4.4"},
	[SPFKIT_REASON_DNS_ERROR] = {"dns-error", "4.4"},
	[SPFKIT_REASON_TIME_BUDGET] = {"time-budget", "4.6.4"},
	[SPFKIT_REASON_DNS_QUESTIONS] = {"dns-questions", "4.6.4"},
	[SPFKIT_REASON_DNS_SUBMIT] = {"dns-submit", "4.4"},
	[SPFKIT_REASON_VERSION] = {"version", "4.5"},
	[SPFKIT_REASON_RECORD_SIZE] = {"record-size", "3.4"},
	[SPFKIT_REASON_TERM_COUNT] = {"term-count", "3.4"},
	[SPFKIT_REASON_NON_ASCII] = {"non-ascii", "3.1"},
	[SPFKIT_REASON_CONTROL_CHAR] = {"control-char", "4.6.1"},
	[SPFKIT_REASON_UNKNOWN_MECHANISM] = {"unknown-mechanism", "4.6.1"},
	[SPFKIT_REASON_QUALIFIED_MODIFIER] = {"qualified-modifier", "4.6.1"},
	[SPFKIT_REASON_EMPTY_MODIFIER_NAME] = {"empty-modifier-name", "4.6.1"},
	[SPFKIT_REASON_MODIFIER_NAME] = {"modifier-name", "4.6.1"},
	[SPFKIT_REASON_DUPLICATE_REDIRECT] = {"duplicate-redirect", "6"},
	[SPFKIT_REASON_DUPLICATE_EXP] = {"duplicate-exp", "6"},
	[SPFKIT_REASON_MISSING_DOMAIN] = {"missing-domain", "5.2"},
	[SPFKIT_REASON_IP4_MISSING] = {"ip4-missing", "5.6"},
	[SPFKIT_REASON_IP6_MISSING] = {"ip6-missing", "5.6"},
	[SPFKIT_REASON_ALL_ARGUMENT] = {"all-argument", "5.1"},
	[SPFKIT_REASON_MECHANISM_TEXT] = {"mechanism-text", "12"},
	[SPFKIT_REASON_EMPTY_DOMAIN] = {"empty-domain", "7.1"},
	[SPFKIT_REASON_DOMAIN_END] = {"domain-end", "7.1"},
	[SPFKIT_REASON_EMPTY_TOPLABEL] = {"empty-toplabel", "7.1"},
	[SPFKIT_REASON_TOPLABEL_CHAR] = {"toplabel-char", "7.1"},
	[SPFKIT_REASON_TOPLABEL_DASH_START] = {"toplabel-dash-start", "7.1"},
	[SPFKIT_REASON_TOPLABEL_DASH_END] = {"toplabel-dash-end", "7.1"},
	[SPFKIT_REASON_TOPLABEL_NUMERIC] = {"toplabel-numeric", "7.1"},
	[SPFKIT_REASON_CIDR_DIGITS] = {"cidr-digits", "5.6"},
	[SPFKIT_REASON_CIDR_ZERO] = {"cidr-zero", "12"},
	[SPFKIT_REASON_IP4_CIDR] = {"ip4-cidr", "5.6"},
	[SPFKIT_REASON_IP6_CIDR] = {"ip6-cidr", "5.6"},
	[SPFKIT_REASON_IP6_CIDR_SLASHES] = {"ip6-cidr-slashes", "5.6"},
	[SPFKIT_REASON_CIDR_TEXT] = {"cidr-text", "12"},
	[SPFKIT_REASON_IP4_IP6_CIDR] = {"ip4-ip6-cidr", "5.6"},
	[SPFKIT_REASON_IP6_DOUBLE_SLASH] = {"ip6-double-slash", "5.6"},
	[SPFKIT_REASON_IP4_TEXT] = {"ip4-text", "5.6"},
	[SPFKIT_REASON_IP6_TEXT] = {"ip6-text", "5.6"},
	[SPFKIT_REASON_IP4_FORM] = {"ip4-form", "5.6"},
	[SPFKIT_REASON_IP4_ZERO] = {"ip4-zero", "12"},
	[SPFKIT_REASON_IP4_RANGE] = {"ip4-range", "12"},
	[SPFKIT_REASON_IP6_GROUPS] = {"ip6-groups", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_QUAD_TEXT] = {"ip6-quad-text", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_CHAR] = {"ip6-char", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_GROUP_SIZE] = {"ip6-group-size", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_DOUBLE_COLON] = {"ip6-double-colon", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_COLON_END] = {"ip6-colon-end", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_FORM] = {"ip6-form", "RFC 4291 2.2"},
	[SPFKIT_REASON_IP6_FULL_COLONS] = {"ip6-full-colons", "RFC 4291 2.2"},
	[SPFKIT_REASON_MACRO_EXP_LETTER] = {"macro-exp-letter", "7.2"},
	[SPFKIT_REASON_MACRO_UNTERMINATED] = {"macro-unterminated", "7.1"},
	[SPFKIT_REASON_MACRO_LETTER] = {"macro-letter", "7.1"},
	[SPFKIT_REASON_MACRO_ZERO] = {"macro-zero", "7.3"},
	[SPFKIT_REASON_MACRO_PERCENT] = {"macro-percent", "7.1"},
	[SPFKIT_REASON_MACRO_CHAR] = {"macro-char", "7.1"},
	[SPFKIT_REASON_MACRO_SPACE] = {"macro-space", "7.1"},
	[SPFKIT_REASON_MACRO_CONTROL] = {"macro-control", "7.1"},
};

#define REASON_COUNT SPFKIT__REASON_COUNT

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
	return known(reason) ? spfkit__reason_texts[reason] : "";
}

const char *spfkit_reason_section(enum spfkit_reason reason)
{
	return known(reason) ? reasons[reason].section : "";
}

enum spfkit_reason spfkit__reason_of_text(const char *text)
{
	uintptr_t at = (uintptr_t)text, first = (uintptr_t)spfkit__reason_texts[0];
	uintptr_t off = at - first;

	if (at < first || off >= sizeof(spfkit__reason_texts) || off % SPFKIT__REASON_TEXT_MAX != 0)
		return SPFKIT_REASON_NONE;
	return (enum spfkit_reason)(off / SPFKIT__REASON_TEXT_MAX);
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
