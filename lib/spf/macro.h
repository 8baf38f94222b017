/*
 * Macro-strings (RFC 7208 §7): parsing into struct spfkit_macro_string
 * (include/spfkit/record.h) and bounded expansion. Internal API.
 */
#ifndef SPFKIT_MACRO_H
#define SPFKIT_MACRO_H

#include <spfkit/eval.h>
#include <spfkit/record.h>

#include "core.h"

/* An expansion never grows past this (bytes); beyond it: SPFKIT_E2BIG. */
#define SPFKIT_MACRO_MAX_EXPANSION 8192u
/* §7.3: a name used in a query is cut to this by dropping left labels. */
#define SPFKIT_DOMAIN_MAX_LEN 253u

/* What the letters expand to (§7.3). Strings need not be NUL-terminated. */
struct spfkit__macro_env {
	const char *sender;        /* s: <sender> */
	size_t sender_len;
	const char *local;         /* l: local-part of <sender> */
	size_t local_len;
	const char *sender_domain; /* o: domain of <sender> */
	size_t sender_domain_len;
	const char *domain;        /* d: <domain> of the current check_host() */
	size_t domain_len;
	const struct spfkit_ip *ip; /* i, c, v */
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
	SPFKIT__MACRO_DOMAIN = 0, /* domain-spec: s l o d i p v h; 253 rule applied */
	SPFKIT__MACRO_EXPLAIN,    /* explanation text (§6.2): c r t too; no 253 rule */
};

/*
 * Parse src[0..len) as a macro-string for `use`. Pieces and literal text
 * are allocated from `ar`. On SPFKIT_ESYNTAX, *err_off is the offset of
 * the bad byte in src and *why a static text naming the rule broken.
 */
int spfkit__macro_parse(const char *src, size_t len, enum spfkit__macro_use use,
			struct spfkit__arena *ar, struct spfkit_macro_string *out, size_t *err_off,
			const char **why);

/*
 * Append the expansion of ms to out. SPFKIT__MACRO_DOMAIN applies the
 * 253-octet rule of §7.3 to the whole result (labels dropped from the
 * left). Expansion stops with SPFKIT_E2BIG past SPFKIT_MACRO_MAX_EXPANSION
 * bytes, whatever the record says. 0, SPFKIT_E2BIG, SPFKIT_ENOMEM.
 */
int spfkit__macro_expand(const struct spfkit_macro_string *ms, const struct spfkit__macro_env *env,
			 enum spfkit__macro_use use, struct spfkit__buf *out);

#endif
