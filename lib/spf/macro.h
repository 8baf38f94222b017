/*
 * Macro-strings (RFC 7208 §7): parsing into struct spfkit_macro_string
 * (include/spfkit/record.h) and bounded expansion. Internal API.
 *
 * Ownership: a parsed macro-string borrows. Its `src`, and the `text` of
 * every literal piece taken from the source, point into the `src` given
 * to spfkit__macro_parse(); only the piece array comes from the arena.
 * Keep `src` alive (and unchanged) as long as the parsed form is used:
 * the record parser passes its own copy of the record text; a caller
 * parsing a string it does not own copies it into its arena first.
 * Literal pieces for "%%", "%_" and "%-" point at static strings.
 */
#ifndef SPFKIT_MACRO_H
#define SPFKIT_MACRO_H

#include <spfkit/eval.h>
#include <spfkit/record.h>

#include "core.h"

/* An expansion never grows past this (bytes): an explain-string beyond it
 * is SPFKIT_E2BIG, a domain-spec is cut as §7.3 says (see below). */
#define SPFKIT_MACRO_MAX_EXPANSION 8192u
/* §7.3: a name used in a query is cut to this by dropping left labels. */
#define SPFKIT_DOMAIN_MAX_LEN 253u

/* What the letters expand to (§7.3). Strings need not be NUL-terminated;
 * a NULL string with length 0 expands to nothing. */
struct spfkit__macro_env {
	const char *sender;        /* s: <sender> */
	size_t sender_len;
	const char *local;         /* l: local-part of <sender> */
	size_t local_len;
	const char *sender_domain; /* o: domain of <sender> */
	size_t sender_domain_len;
	const char *domain;        /* d: <domain> of the current check_host() */
	size_t domain_len;
	const struct spfkit_ip *ip; /* i, c, v; IPv4 in addr[0..3] */
	const char *validated;     /* p: validated domain name; NULL: "unknown" */
	size_t validated_len;
	const char *helo;          /* h */
	size_t helo_len;
	const char *receiver;      /* r; NULL: "unknown" */
	size_t receiver_len;
	int64_t now;               /* t */
};

/* Where a string is used decides which letters are legal and the 253 rule. */
enum spfkit__macro_use {
	/* domain-spec (§7.1): letters s l o d i p v h; no space; 253 rule */
	SPFKIT__MACRO_DOMAIN = 0,
	/* explain-string (§6.2, §7.1): c r t too, and SP between
	 * macro-strings; no 253 rule. The record parser also checks the value
	 * of an unknown modifier this way: §12's macro-string allows every
	 * macro-letter there. */
	SPFKIT__MACRO_EXPLAIN,
};

/*
 * Parse src[0..len) as a macro-string for `use`. The piece array is
 * allocated from `ar` (exactly as many pieces as needed; none for an
 * empty string). A string without '%' becomes one literal piece that
 * points into src, so its expansion is a single copy. Returns 0,
 * SPFKIT_ENOMEM, SPFKIT_EINVAL (NULL out/ar, or NULL src with len > 0),
 * or SPFKIT_ESYNTAX with *err_off the offset in src of the first bad
 * byte (len when the string ends too early) and *why the rule broken:
 * spfkit_reason_text() of its code (reason.h), whose address
 * spfkit__reason_of_text() turns back into the code; err_off and why
 * may be NULL. Rules (§7.1,
 * §7.3): literal bytes are %x21-24 / %x26-7E (plus SP for EXPLAIN);
 * "%" must be followed by "{", "%", "_" or "-"; macro-letter, then
 * *DIGIT (value nonzero; above 128 it means "all" and is stored as 0),
 * then an optional "r" (either case), then *delimiter, then "}".
 */
int spfkit__macro_parse(const char *src, size_t len, enum spfkit__macro_use use,
			struct spfkit__arena *ar, struct spfkit_macro_string *out, size_t *err_off,
			const char **why);

/*
 * Does the string end in a macro-expand ("%{...}", "%%", "%_", "%-")?
 * The record parser needs it for domain-end (§7.1).
 */
int spfkit__macro_ends_in_expand(const struct spfkit_macro_string *ms);

/*
 * Append the expansion of ms to out. Letters are split, reversed, cut
 * and rejoined with "." as §7.3 says, then URL-escaped when uppercase
 * (every byte outside ALPHA DIGIT "-" "." "_" "~" becomes %XX). %{i} is
 * the dotted quad, or for IPv6 32 uppercase hex nibbles joined by dots
 * (as the RFC 7208 test suite expects; README, conformance notes);
 * %{c} the dotted quad or the RFC 5952 text; %{v} "in-addr" or "ip6".
 *
 * SPFKIT__MACRO_DOMAIN applies the 253-octet rule of §7.3 to what this
 * call appended: labels are dropped from the left (each with its
 * following dot) until at most 253 octets remain, not counting one final
 * dot, which is kept (the suite's "domain-name-truncation" case expands
 * to 258 octets and wants the cut, not an error). A name with no dot to
 * cut at becomes empty. However long the raw expansion, the result is
 * that of the rule (as pyspf and Mail::SPF give it): whenever the
 * expansion reaches SPFKIT_MACRO_MAX_EXPANSION bytes, the labels the
 * rule would drop anyway are dropped then, so memory stays within the
 * cap and the work is one pass. SPFKIT__MACRO_EXPLAIN has no such rule:
 * more than SPFKIT_MACRO_MAX_EXPANSION bytes is SPFKIT_E2BIG.
 *
 * Returns 0, SPFKIT_E2BIG (our cap or out's own), SPFKIT_ENOMEM, or
 * SPFKIT_EINVAL (NULL argument, or i/c/v used with env->ip NULL). On
 * failure out is left as it was before the call, except that a failure
 * of out itself (its cap, memory) stays recorded in out->err.
 */
int spfkit__macro_expand(const struct spfkit_macro_string *ms, const struct spfkit__macro_env *env,
			 enum spfkit__macro_use use, struct spfkit__buf *out);

#endif
