/*
 * A parsed SPF record (RFC 7208 §4.5, §4.6, §5, §6, §7, §12): a read-only
 * structure made by spfkit_record_parse(), read by the evaluator and by
 * any caller that inspects a record.
 *
 * Ownership: spfkit_record_parse() allocates one record (one arena,
 * normally a single block, holding the record text, its terms and macro
 * pieces) with the allocator given; spfkit_record_free() releases all of
 * it. Every pointer inside a record points into that block (literal
 * macro pieces and names point into `text`). A record is immutable after
 * parsing and may be read by any number of threads.
 */
#ifndef SPFKIT_RECORD_H
#define SPFKIT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>
#include <spfkit/reason.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_allocator;

/* Hard caps; input past them is rejected, never truncated. */
#define SPFKIT_RECORD_MAX_LEN 65535u /* the largest a DNS message can carry */
/*
 * Sized from the length, not chosen: a term takes at least one byte and
 * its space, so no record within SPFKIT_RECORD_MAX_LEN reaches this and
 * every record that fits in a DNS answer evaluates (as in pyspf and
 * Mail::SPF). Memory stays bounded by the length: a parsed record takes
 * about 100 bytes per term, 50 times its text at worst (tests/unit/test_record.c).
 */
#define SPFKIT_RECORD_MAX_TERMS ((SPFKIT_RECORD_MAX_LEN + 1u) / 2u)

/* mechanism = ( all / include / a / mx / ptr / ip4 / ip6 / exists ) */
enum spfkit_mech_kind {
	SPFKIT_MECH_ALL = 0,
	SPFKIT_MECH_INCLUDE,
	SPFKIT_MECH_A,
	SPFKIT_MECH_MX,
	SPFKIT_MECH_PTR,
	SPFKIT_MECH_IP4,
	SPFKIT_MECH_IP6,
	SPFKIT_MECH_EXISTS,
};

/* modifier = redirect / explanation / unknown-modifier (§6, §12) */
enum spfkit_mod_kind {
	SPFKIT_MOD_REDIRECT = 0,
	SPFKIT_MOD_EXP,
	SPFKIT_MOD_UNKNOWN,
};

/* macro-literal run, or macro-expand "%{" macro-letter transformers *delimiter "}" */
enum spfkit_piece_kind {
	SPFKIT_PIECE_LITERAL = 0,
	SPFKIT_PIECE_MACRO,
};

/* Bits of `delims` in a macro piece, one per §7.1 delimiter. */
#define SPFKIT_DELIM_DOT 0x01u   /* . */
#define SPFKIT_DELIM_DASH 0x02u  /* - */
#define SPFKIT_DELIM_PLUS 0x04u  /* + */
#define SPFKIT_DELIM_COMMA 0x08u /* , */
#define SPFKIT_DELIM_SLASH 0x10u /* / */
#define SPFKIT_DELIM_UNDER 0x20u /* _ */
#define SPFKIT_DELIM_EQUAL 0x40u /* = */

struct spfkit_macro_piece {
	uint8_t kind;       /* enum spfkit_piece_kind */
	char letter;        /* lowercase: s l o d i p v h c r t */
	uint8_t url_escape; /* the letter was uppercase (§7.3) */
	uint8_t reverse;    /* "r" transformer */
	uint8_t digits;     /* 0 = keep all parts; else keep this many rightmost (1..128;
			     * a written value above 128 means all and is stored as 0) */
	uint8_t delims;     /* SPFKIT_DELIM_* bits; 0 means the default, "." */
	/* LITERAL: bytes to copy, with %% %_ %- already resolved (each such
	 * escape is a piece of its own; other text points into the source) */
	const char *text;
	size_t len;
};

/* A macro-string (§7.1) in parsed form. */
struct spfkit_macro_string {
	const struct spfkit_macro_piece *pieces;
	size_t count;
	uint32_t letters; /* bit (letter - 'a') set for each macro letter used */
	const char *src;  /* the source text, pointing into the record */
	size_t src_len;
};

/* One term, in record order. */
struct spfkit_term {
	uint8_t is_modifier;
	uint8_t qualifier;  /* mechanisms: '+', '-', '~' or '?' ('+' when omitted); modifiers: 0 */
	uint8_t mech;       /* enum spfkit_mech_kind, mechanisms only */
	uint8_t mod;        /* enum spfkit_mod_kind, modifiers only */
	uint8_t has_domain; /* `domain` holds a parsed string: a domain-spec was given
			     * (include, exists, redirect, exp: always), or the
			     * value of an unknown modifier */
	uint8_t cidr4;      /* ip4-cidr-length; 32 when absent */
	uint8_t cidr6;      /* ip6-cidr-length; 128 when absent */
	unsigned char ip[16]; /* ip4: first 4 bytes; ip6: 16 bytes (network order) */
	/* domain-spec of include a mx ptr exists, value of redirect exp and
	 * of unknown modifiers (parsed as a macro-string, §6) */
	struct spfkit_macro_string domain;
	const char *name; /* modifier or mechanism name (no qualifier, no "="), in the record text */
	size_t name_len;
	size_t offset; /* of the term (with its qualifier) in the record text */
	size_t len;
};

struct spfkit_record {
	const char *text; /* the whole record, NUL-terminated copy */
	size_t len;
	const struct spfkit_term *terms;
	size_t count;
	int redirect;       /* index of the redirect term, or -1 */
	int exp;            /* index of the exp term, or -1 */
	unsigned dns_terms; /* terms that cost a DNS lookup (§4.6.4): include a mx ptr exists redirect */
};

/* Why a record is not valid; filled by a parse that returns SPFKIT_ESYNTAX
 * (and, with the cap named in `rule`, SPFKIT_E2BIG). Its reason code
 * (include/spfkit/reason.h) is spfkit_parse_error_reason(err). */
struct spfkit_parse_error {
	size_t offset;       /* byte offset of the first bad byte in the record */
	size_t term_offset;  /* offset and length of the term it belongs to */
	size_t term_len;
	const char *rule;    /* static text: the rule broken, e.g. "unknown macro letter"
			      * (spfkit_reason_text() of the code) */
	const char *section; /* static text: RFC 7208 section, e.g. "7.1" */
};

/*
 * Is this TXT string an SPF version 1 record? True when it starts with
 * "v=spf1" (any case) followed by a space or the end (§4.5).
 */
int spfkit_record_is_spf(const char *txt, size_t len);

/*
 * Parse one record (starting with "v=spf1"). On success returns 0 and
 * stores a new record in *out. Returns SPFKIT_ESYNTAX with *err filled
 * for a record that is not valid (the SPF result is then permerror),
 * SPFKIT_E2BIG past the caps above, SPFKIT_ENOMEM, SPFKIT_EINVAL (out
 * NULL, or txt NULL with len > 0). On failure *out is NULL. The whole
 * record is checked (§4.6): 7-bit visible ASCII terms separated by SP
 * only, §12's grammar for every term, redirect and exp at most once
 * each (§6), unknown modifiers with a valid macro-string. Names and
 * processing limits are left to evaluation. `txt` may hold NUL bytes
 * (an error, never the end). `alloc` may be NULL (libc). `err` may be
 * NULL. Thread-safe.
 */
SPFKIT_MUSTCHECK int spfkit_record_parse(const char *txt, size_t len,
					 const struct spfkit_allocator *alloc,
					 struct spfkit_record **out, struct spfkit_parse_error *err);

/* NULL is a no-op. */
void spfkit_record_free(struct spfkit_record *rec);

/* "include", "ip4", ... and "redirect", "exp", "unknown". */
const char *spfkit_mech_name(enum spfkit_mech_kind kind);
const char *spfkit_mod_name(enum spfkit_mod_kind kind);

#ifdef __cplusplus
}
#endif

#endif
