/*
 * The domain-spec of a term: macro-string domain-end (RFC 7208 §7.1, §12),
 * for term_parse.c. A domain-spec without '%' (nearly every one) is
 * checked and stored here without the macro parser (macro.c); the
 * others go through it.
 */
#include <string.h>

#include "core.h"
#include "macro.h"
#include "reason.h"
#include "term_parse.h"

/*
 * "." toplabel [ "." ] at the end of a domain-spec (§7.1, §12), in one
 * walk back from its end to the "." before it. The errors keep the order
 * of a walk forward: no ".", an empty label, then the first bad byte.
 */
static void check_toplabel(struct spfkit__term_parse *tp, const unsigned char *s,
			   const unsigned char *e)
{
	const unsigned char *end = e, *label, *bad = NULL;
	unsigned seen = 0, cl;

	if (end > s && end[-1] == '.')
		end--;
	for (label = end; label > s && label[-1] != '.'; label--) {
		cl = spfkit__term_parse_class[label[-1]];
		seen |= cl;
		if (!(cl & CL_TOPLABEL))
			bad = label - 1; /* the leftmost one wins */
	}
	if (label == s) {
		spfkit__term_parse_fail(tp, s, SPFKIT_REASON_DOMAIN_END, "7.1");
		return;
	}
	if (label == end) {
		spfkit__term_parse_fail(tp, end, SPFKIT_REASON_EMPTY_TOPLABEL, "7.1");
		return;
	}
	if (bad != NULL) {
		spfkit__term_parse_fail(tp, bad, SPFKIT_REASON_TOPLABEL_CHAR, "7.1");
		return;
	}
	/* toplabel = ( *alphanum ALPHA *alphanum ) /
	 *            ( 1*alphanum "-" *( alphanum / "-" ) alphanum );
	 * of its bytes only "-" is a qualifier */
	if (*label == '-')
		spfkit__term_parse_fail(tp, label, SPFKIT_REASON_TOPLABEL_DASH_START, "7.1");
	else if (end[-1] == '-')
		spfkit__term_parse_fail(tp, end - 1, SPFKIT_REASON_TOPLABEL_DASH_END, "7.1");
	else if (!(seen & (CL_ALPHA | CL_QUALIFIER)))
		spfkit__term_parse_fail(tp, label, SPFKIT_REASON_TOPLABEL_NUMERIC, "7.1");
}

/*
 * Does any of the 8 bytes in w keep [s, e) from being one macro-literal
 * (%x21-24 / %x26-7E, §7.1): a byte of the high half, below 0x21, 0x7F or
 * '%'? The usual word tests for "a byte below n" and "a zero byte", which
 * are exact as a yes or no, whatever the other bytes.
 */
#define BYTES_OF(b) (0x0101010101010101u * (uint64_t)(b))
static uint64_t word_not_literal(uint64_t w)
{
	uint64_t pct = w ^ BYTES_OF('%'), del = w ^ BYTES_OF(0x7f);

	return (w | ((w - BYTES_OF(0x21)) & ~w) | ((pct - BYTES_OF(1)) & ~pct) |
		((del - BYTES_OF(1)) & ~del)) &
	       BYTES_OF(0x80);
}

#ifdef SPFKIT__HAVE_SSE2
/* The same test for the 16 bytes at p: as signed bytes, the high half is
 * below 0x21 too. */
static int block_not_literal(const unsigned char *p)
{
	__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i ok = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8(0x20)),
				   _mm_cmplt_epi8(b, _mm_set1_epi8(0x7f)));

	ok = _mm_andnot_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('%')), ok);
	return _mm_movemask_epi8(ok) != 0xffff;
}
#endif

/* Is [s, e) free of the bytes word_not_literal() looks for? Sixteen or
 * eight at a time, the last ones read again from the end rather than one
 * by one. */
static int all_literal(const unsigned char *s, const unsigned char *e)
{
	uint64_t w, bad = 0;
	const unsigned char *p;

#ifdef SPFKIT__HAVE_SSE2
	if (e - s >= 16) {
		for (p = s; e - p > 16; p += 16)
			bad |= (uint64_t)block_not_literal(p);
		return (bad | (uint64_t)block_not_literal(e - 16)) == 0;
	}
#endif
	if (e - s < 8) {
		for (p = s; p < e; p++)
			bad |= (uint64_t)((unsigned char)(*p - 0x21) > 0x7e - 0x21) |
			       (uint64_t)(*p == '%');
		return bad == 0;
	}
	for (p = s; e - p > 8; p += 8) {
		memcpy(&w, p, 8);
		bad |= word_not_literal(w);
	}
	memcpy(&w, e - 8, 8);
	return (bad | word_not_literal(w)) == 0;
}
#undef BYTES_OF

/*
 * A domain-spec without '%' (nearly every one) is a single literal piece
 * that points into the record: what spfkit__macro_parse() makes of it,
 * built here without that parser's set-up and second scan. Returns 0
 * when [s, e) needs the full parser: a '%', or a byte no macro-literal
 * takes, which that parser then reports.
 */
static int plain_domain_spec(struct spfkit__term_parse *tp, const unsigned char *s,
			     const unsigned char *e)
{
	struct spfkit_macro_piece *piece;

	if (!all_literal(s, e))
		return 0;
	piece = spfkit__arena_alloc(tp->ar, sizeof(*piece));
	if (piece == NULL) {
		spfkit__term_parse_nomem(tp, s, SPFKIT_ENOMEM);
		return 1;
	}
	*piece = (struct spfkit_macro_piece){
		.kind = SPFKIT_PIECE_LITERAL,
		.text = (const char *)s,
		.len = (size_t)(e - s),
	};
	tp->t->domain = (struct spfkit_macro_string){
		.pieces = piece,
		.count = 1,
		.src = (const char *)s,
		.src_len = (size_t)(e - s),
	};
	tp->t->has_domain = 1;
	check_toplabel(tp, s, e); /* a literal never ends in a macro-expand */
	return 1;
}

/* domain-spec = macro-string domain-end, over [s, e); 0 after an error. */
int spfkit__term_domain_parse(struct spfkit__term_parse *tp, const unsigned char *s,
			      const unsigned char *e, const char *sec)
{
	size_t off = 0;
	const char *why = NULL;
	int rc;

	if (s == e) {
		spfkit__term_parse_fail(tp, s, SPFKIT_REASON_EMPTY_DOMAIN, sec);
		return 0;
	}
	if (plain_domain_spec(tp, s, e))
		return !tp->c.err;
	rc = spfkit__macro_parse((const char *)s, (size_t)(e - s), SPFKIT__MACRO_DOMAIN, tp->ar,
				 &tp->t->domain, &off, &why);
	if (rc == SPFKIT_ESYNTAX) {
		spfkit__term_parse_fail(tp, s + off, spfkit__reason_of_text(why), "7.1");
		return 0;
	}
	if (rc != 0) {
		spfkit__term_parse_nomem(tp, s, rc);
		return 0;
	}
	tp->t->has_domain = 1;
	if (!spfkit__macro_ends_in_expand(&tp->t->domain))
		check_toplabel(tp, s, e);
	return !tp->c.err;
}
