/*
 * The term parser's parts, shared by term_parse.c (a term's grammar and
 * the walk over a record's terms), term_ip.c and term_ip.h (ip networks,
 * cidr-lengths) and term_domain.c (domain-specs); record_parse.c starts
 * the walk over a record and sizes its block with the two scans at the
 * end.
 */
#ifndef SPFKIT_TERM_PARSE_H
#define SPFKIT_TERM_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <spfkit/record.h>

#include "core.h"
#include "reason.h"
#include "record_room.h"

struct spfkit__term_parse {
	struct spfkit__cur c; /* base for offsets, and the first error */
	struct spfkit__arena *ar;   /* the record's arena: macro pieces */
	struct spfkit_record *rec;  /* the record being filled in */
	struct spfkit_term *t;
	const char *section; /* RFC section of the error in c */
	struct spfkit__hot_term *hot; /* the compact terms to fill in, or NULL */
};

/*
 * The term parsers take [p, e) and return where they stopped, or NULL
 * once they have recorded the first error (the term is then dropped, so
 * nothing after it matters). They read the record's own copy, which
 * record_new() ends with a NUL, so *e is always readable: the SP before
 * the next term, or that NUL after the last. Neither is an ALPHA, DIGIT,
 * HEXDIG, ".", ":", "/", "-", "_" or "=", so a scan for a run of those
 * stops at e by itself and need not test a bound on every byte; nor is
 * any byte read that way past e.
 *
 * spfkit__term_parse_fail() records the first error, at `at`, and
 * returns NULL.
 */
const unsigned char *spfkit__term_parse_fail(struct spfkit__term_parse *tp,
					     const unsigned char *at, enum spfkit_reason why,
					     const char *sec);
/* A failure other than syntax, rc (SPFKIT_ENOMEM), while parsing the
 * value that starts at `at`. */
void spfkit__term_parse_nomem(struct spfkit__term_parse *tp, const unsigned char *at, int rc);

/*
 * Byte classes of the term grammar, one table lookup per byte on the
 * paths every term takes. Only bytes of these classes are listed; every
 * other byte (SP, NUL, the high half) is in none.
 */
enum {
	CL_ALNUM = 1,     /* ALPHA / DIGIT: a mechanism name */
	CL_NAME = 2,      /* ALPHA / DIGIT / "-" / "_" / ".": a modifier name (§12) */
	CL_QUALIFIER = 4, /* "+" / "-" / "?" / "~" (§4.6.1) */
	CL_ALPHA = 8,     /* ALPHA: a toplabel needs one or a "-" (§7.1) */
	CL_TOPLABEL = 16, /* ALPHA / DIGIT / "-": a toplabel's bytes */
};
extern const unsigned char spfkit__term_parse_class[256];

/* Parse each term into tp->rec->terms, which has room for max of them. */
void spfkit__term_parse_all(struct spfkit__term_parse *tp, size_t max);

/* ---- term_domain.c --------------------------------------------------- */

/* domain-spec = macro-string domain-end, over [s, e); 0 after an error. */
int spfkit__term_domain_parse(struct spfkit__term_parse *tp, const unsigned char *s,
			      const unsigned char *e, const char *sec);

/* ---- scans the parse and the sizing of its block share ----------------- */

/*
 * Does the term at p, which ends at e, start "ip4:" or "ip6:" (name in
 * any case), as nearly every term of a real record does? The mechanism,
 * or -1 for any other start, which the general path of parse_term()
 * reads as the same. One compare of four bytes, read only when the term
 * has them; the keys are spelt in memory order, so byte order is moot.
 */
static inline int spfkit__term_parse_ip_kind(const unsigned char *p, const unsigned char *e)
{
	static const unsigned char ip4[4] = {'i', 'p', '4', ':'}, ip6[4] = {'i', 'p', '6', ':'},
				   lower[4] = {0x20, 0x20, 0, 0}; /* OR lowers 'I', 'P' only */
	uint32_t word, key4, key6, fold;

	if (e - p < 4)
		return -1;
	memcpy(&word, p, 4);
	memcpy(&key4, ip4, 4);
	memcpy(&key6, ip6, 4);
	memcpy(&fold, lower, 4);
	word |= fold;
	if (word == key4)
		return SPFKIT_MECH_IP4;
	return word == key6 ? SPFKIT_MECH_IP6 : -1;
}

#ifdef SPFKIT__HAVE_SSE2
/* Bit k set where p[k] is SP, for the 16 bytes at p. */
static inline uint32_t spfkit__term_parse_spaces16(const char *p)
{
	__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);

	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8(' ')));
}
#endif

/*
 * The first SP in [p, end), or end. Terms are short: where SSE2 is there,
 * a look at the next 32 bytes finds most for less than a call to memchr()
 * costs, and then 16; memchr() takes what is left.
 */
static inline const char *spfkit__term_parse_next_space(const char *p, const char *end)
{
	const char *q;

#ifdef SPFKIT__HAVE_SSE2
	uint32_t at;

	for (; end - p >= 32; p += 32) {
		at = spfkit__term_parse_spaces16(p) | spfkit__term_parse_spaces16(p + 16) << 16;
		if (at != 0)
			return p + __builtin_ctz(at);
	}
	if (end - p >= 16) {
		at = spfkit__term_parse_spaces16(p);
		if (at != 0)
			return p + __builtin_ctz(at);
		p += 16;
	}
#endif
	q = memchr(p, ' ', (size_t)(end - p));
	return q != NULL ? q : end;
}

#endif
