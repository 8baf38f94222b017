/*
 * Reason codes: why a result is permerror or temperror, and why a record
 * does not parse, as data (issue 28). A program decides on the code; the
 * English of spfkit_result.problem and spfkit_parse_error.rule is for
 * people and may be reworded in any release.
 *
 * Where a code is found:
 *  - struct spfkit_result (eval.h): `reason` for temperror and
 *    permerror, with the record's domain and the term to blame;
 *    SPFKIT_REASON_NONE for every other result.
 *  - struct spfkit_parse_error (record.h): spfkit_parse_error_reason().
 *
 * ABI rule: the values are fixed forever. New codes are appended; none
 * is renumbered, reused or removed, and each keeps its name. A program
 * built against an older header may meet a newer code: treat a code it
 * does not know by the result it came with (permerror or temperror).
 * The RFC 7208 section beside each code is the rule it stands for.
 */
#ifndef SPFKIT_REASON_H
#define SPFKIT_REASON_H

#include <stddef.h>

#include <spfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_parse_error;

enum spfkit_reason {
	SPFKIT_REASON_NONE = 0, /* no error: pass, fail, softfail, neutral, none */

	/* ---- evaluation: permerror ---------------------------------- */
	SPFKIT_REASON_DNS_TERMS = 1,        /* §4.6.4: more than 10 include a mx ptr exists redirect */
	SPFKIT_REASON_VOID_LOOKUPS = 2,     /* §4.6.4: more than 2 NXDOMAIN/NODATA answers */
	SPFKIT_REASON_MX_NAMES = 3,         /* §4.6.4: an "mx" with more than 10 hosts to look up */
	SPFKIT_REASON_MULTIPLE_RECORDS = 4, /* §4.5: two or more "v=spf1" records */
	SPFKIT_REASON_INCLUDE_NONE = 5,     /* §5.2: the included domain has no SPF record */
	SPFKIT_REASON_INCLUDE_TARGET = 6,   /* §5.2, §4.3: include target is no valid domain name */
	SPFKIT_REASON_REDIRECT_NONE = 7,    /* §6.1: the redirect target has no SPF record */
	SPFKIT_REASON_REDIRECT_TARGET = 8,  /* §6.1, §4.3: redirect target is no valid domain name */
	SPFKIT_REASON_INCLUDE_DEPTH = 9,    /* §4.6.4: include nesting past the evaluator's depth */
	SPFKIT_REASON_EXPANSION_SIZE = 10,  /* §7.3: a macro expansion over the evaluator's cap */

	/* ---- evaluation: temperror (§2.6.6, §4.4, §5) ----------------- */
	SPFKIT_REASON_DNS_TIMEOUT = 11,     /* a DNS question timed out */
	SPFKIT_REASON_DNS_SERVFAIL = 12,    /* a DNS server answered SERVFAIL */
	SPFKIT_REASON_DNS_REFUSED = 13,     /* a DNS server answered REFUSED */
	SPFKIT_REASON_DNS_ERROR = 14,       /* any other DNS failure (malformed reply, CNAME loop, ...) */
	SPFKIT_REASON_TIME_BUDGET = 15,     /* §4.6.4: the evaluation's time limit passed */
	SPFKIT_REASON_DNS_QUESTIONS = 16,   /* one evaluation asked more questions than it may */
	SPFKIT_REASON_DNS_SUBMIT = 17,      /* the resolver refused to send a question */

	/* ---- record syntax: permerror (§4.6: any error in the record) -- */
	SPFKIT_REASON_VERSION = 18,          /* §4.5: no "v=spf1" then a space or the end */
	SPFKIT_REASON_RECORD_SIZE = 19,      /* §3.4: record longer than 65535 bytes */
	SPFKIT_REASON_TERM_COUNT = 20,       /* §3.4: more terms than SPFKIT_RECORD_MAX_TERMS */
	SPFKIT_REASON_NON_ASCII = 21,        /* §3.1: a byte above 0x7F */
	SPFKIT_REASON_CONTROL_CHAR = 22,     /* §4.6.1: a control byte between terms */
	SPFKIT_REASON_UNKNOWN_MECHANISM = 23, /* §4.6.1, §12: no such mechanism */
	SPFKIT_REASON_QUALIFIED_MODIFIER = 24, /* §4.6.1: a qualifier before a modifier */
	SPFKIT_REASON_EMPTY_MODIFIER_NAME = 25, /* §4.6.1, §12: "=value" */
	SPFKIT_REASON_MODIFIER_NAME = 26,    /* §12: a modifier name not starting with a letter */
	SPFKIT_REASON_DUPLICATE_REDIRECT = 27, /* §6: redirect twice */
	SPFKIT_REASON_DUPLICATE_EXP = 28,    /* §6: exp twice */
	SPFKIT_REASON_MISSING_DOMAIN = 29,   /* §5.2, §5.7: include or exists without ":" domain */
	SPFKIT_REASON_IP4_MISSING = 30,      /* §5.6: ip4 without ":" address */
	SPFKIT_REASON_IP6_MISSING = 31,      /* §5.6: ip6 without ":" address */
	SPFKIT_REASON_ALL_ARGUMENT = 32,     /* §5.1: "all" with an argument */
	SPFKIT_REASON_MECHANISM_TEXT = 33,   /* §12: text after a mechanism name */
	SPFKIT_REASON_EMPTY_DOMAIN = 34,     /* §7.1: empty domain-spec */
	SPFKIT_REASON_DOMAIN_END = 35,       /* §7.1: domain-spec ends neither in a toplabel nor a macro */
	SPFKIT_REASON_EMPTY_TOPLABEL = 36,   /* §7.1: "example." then nothing */
	SPFKIT_REASON_TOPLABEL_CHAR = 37,    /* §7.1: a toplabel byte other than alnum and "-" */
	SPFKIT_REASON_TOPLABEL_DASH_START = 38, /* §7.1 */
	SPFKIT_REASON_TOPLABEL_DASH_END = 39, /* §7.1 */
	SPFKIT_REASON_TOPLABEL_NUMERIC = 40, /* §7.1: an all-numeric toplabel */
	SPFKIT_REASON_CIDR_DIGITS = 41,      /* §5.6, §12: "/" without digits */
	SPFKIT_REASON_CIDR_ZERO = 42,        /* §12: a cidr-length with a leading zero */
	SPFKIT_REASON_IP4_CIDR = 43,         /* §5.6: ip4-cidr-length above 32 */
	SPFKIT_REASON_IP6_CIDR = 44,         /* §5.6: ip6-cidr-length above 128 */
	SPFKIT_REASON_IP6_CIDR_SLASHES = 45, /* §5.6: "/N/M" where "/N//M" is meant */
	SPFKIT_REASON_CIDR_TEXT = 46,        /* §12: text after a dual-cidr-length */
	SPFKIT_REASON_IP4_IP6_CIDR = 47,     /* §5.6: ip4 with an ip6-cidr-length */
	SPFKIT_REASON_IP6_DOUBLE_SLASH = 48, /* §5.6: ip6 with "//" */
	SPFKIT_REASON_IP4_TEXT = 49,         /* §5.6: text after an ip4-network */
	SPFKIT_REASON_IP6_TEXT = 50,         /* §5.6: text after an ip6-cidr-length */
	SPFKIT_REASON_IP4_FORM = 51,         /* §5.6: not four dotted numbers */
	SPFKIT_REASON_IP4_ZERO = 52,         /* §12 qnum: a number with a leading zero */
	SPFKIT_REASON_IP4_RANGE = 53,        /* §12 qnum: a number above 255 */
	SPFKIT_REASON_IP6_GROUPS = 54,       /* §5.6, RFC 4291 §2.2: too many groups */
	SPFKIT_REASON_IP6_QUAD_TEXT = 55,    /* RFC 4291 §2.2: text after the dotted quad */
	SPFKIT_REASON_IP6_CHAR = 56,         /* RFC 4291 §2.2: a byte no ip6-network takes */
	SPFKIT_REASON_IP6_GROUP_SIZE = 57,   /* RFC 4291 §2.2: a group of more than 4 digits */
	SPFKIT_REASON_IP6_DOUBLE_COLON = 58, /* RFC 4291 §2.2: a second "::" */
	SPFKIT_REASON_IP6_COLON_END = 59,    /* RFC 4291 §2.2: ends in a single ":" */
	SPFKIT_REASON_IP6_FORM = 60,         /* RFC 4291 §2.2: neither 8 groups nor "::" */
	SPFKIT_REASON_IP6_FULL_COLONS = 61,  /* RFC 4291 §2.2: "::" among 8 groups */
	SPFKIT_REASON_MACRO_EXP_LETTER = 62, /* §7.2: c, r or t outside exp text */
	SPFKIT_REASON_MACRO_UNTERMINATED = 63, /* §7.1: "%{" without "}" */
	SPFKIT_REASON_MACRO_LETTER = 64,     /* §7.1: an unknown macro letter */
	SPFKIT_REASON_MACRO_ZERO = 65,       /* §7.3: a zero digit transformer */
	SPFKIT_REASON_MACRO_PERCENT = 66,    /* §7.1: "%" not followed by "{", "%", "_" or "-" */
	SPFKIT_REASON_MACRO_CHAR = 67,       /* §7.1: a bad byte inside "%{...}" */
	SPFKIT_REASON_MACRO_SPACE = 68,      /* §7.1: a space in a domain-spec */
	SPFKIT_REASON_MACRO_CONTROL = 69,    /* §7.1: a control byte in a macro-string */
};

/*
 * The code's stable name: lowercase words joined by '-' ("dns-terms",
 * "unknown-mechanism", "none"), never changed once released, for logs
 * and JSON. "unknown" for a value this library does not know.
 */
const char *spfkit_reason_name(enum spfkit_reason reason);
/* Inverse of spfkit_reason_name (case-insensitive); -1 when unknown
 * (name NULL, or len bytes that are no code's name). */
int spfkit_reason_from_name(const char *name, size_t len);
/* Short English text of the rule ("unknown mechanism", "timeout"); ""
 * for SPFKIT_REASON_NONE and unknown values. For people, not programs. */
const char *spfkit_reason_text(enum spfkit_reason reason);
/* The RFC 7208 section the code stands for ("4.6.4", "7.1"; "" for
 * SPFKIT_REASON_NONE and unknown values; a section of RFC 4291 is
 * written "RFC 4291 2.2"). */
const char *spfkit_reason_section(enum spfkit_reason reason);
/*
 * The code of a parse error filled by spfkit_record_parse() that
 * returned SPFKIT_ESYNTAX or SPFKIT_E2BIG (read from its `rule`, which
 * is the code's spfkit_reason_text()). SPFKIT_REASON_NONE for NULL, a
 * parse that succeeded, or a struct the library did not fill.
 */
enum spfkit_reason spfkit_parse_error_reason(const struct spfkit_parse_error *err);

#ifdef __cplusplus
}
#endif

#endif
