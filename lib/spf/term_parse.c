/*
 * SPF record parser: RFC 7208 §4.5 (version), §4.6.1 (terms), §5
 * (mechanisms), §6 (modifiers), with §12's collected ABNF as the law.
 *
 * The whole record is checked before anything is evaluated (§4.6: "if
 * there are any syntax errors anywhere in the record, check_host()
 * returns immediately with the result permerror"). One pass over the
 * terms, which also writes the compact terms the record cache asks for
 * (record_room.h); ip4 and ip6 terms, most of them, find their own end.
 * The record and all it holds take one block: for a cached record an
 * earlier walk over the terms sizes it exactly; in an evaluation's arena
 * a count of SP bytes sizes it, a term per SP (spfkit__record_parse_loose).
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include <spfkit/record.h>

#include "core.h"
#include "domain.h"
#include "macro.h"
#include "reason.h"
#include "record_room.h"

/* The record and everything it points to live in `ar`, this struct too. */
struct record_impl {
	struct spfkit_record rec; /* first: a record pointer is an impl pointer */
	struct spfkit__arena ar;
};

/* Indexed by enum spfkit_mech_kind. */
static const struct {
	const char *name;
	size_t len;
	const char *section;
} mechs[] = {
	{"all", 3, "5.1"}, {"include", 7, "5.2"}, {"a", 1, "5.3"},   {"mx", 2, "5.4"},
	{"ptr", 3, "5.5"}, {"ip4", 3, "5.6"},     {"ip6", 3, "5.6"}, {"exists", 6, "5.7"},
};

static const char *const mod_names[] = {"redirect", "exp", "unknown"};

const char *spfkit_mech_name(enum spfkit_mech_kind kind)
{
	if ((unsigned)kind >= sizeof(mechs) / sizeof(mechs[0]))
		return "invalid";
	return mechs[kind].name;
}

const char *spfkit_mod_name(enum spfkit_mod_kind kind)
{
	if ((unsigned)kind >= sizeof(mod_names) / sizeof(mod_names[0]))
		return "invalid";
	return mod_names[kind];
}

/* §4.5: "v=spf1" (any case) followed by a space or the end of the record. */
int spfkit_record_is_spf(const char *txt, size_t len)
{
	/* OR 0x20 lowers exactly the letters 'V', 'S', 'P' and 'F' onto these;
	 * compared as two words, of the same byte order as the constants */
	static const unsigned char want[6] = {'v', '=', 's', 'p', 'f', '1'};
	static const unsigned char fold[6] = {0x20, 0, 0x20, 0x20, 0x20, 0};
	uint32_t w4, want4, fold4;
	uint16_t w2, want2, fold2;

	if (txt == NULL || len < 6)
		return 0;
	memcpy(&w4, txt, 4);
	memcpy(&w2, txt + 4, 2);
	memcpy(&want4, want, 4);
	memcpy(&want2, want + 4, 2);
	memcpy(&fold4, fold, 4);
	memcpy(&fold2, fold + 4, 2);
	return (w4 | fold4) == want4 && (w2 | fold2) == want2 && (len == 6 || txt[6] == ' ');
}

/* ---- one term ------------------------------------------------------- */

struct tparse {
	struct spfkit__cur c; /* base for offsets, and the first error */
	struct record_impl *r;
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
 */
static const unsigned char *fail_at(struct tparse *tp, const unsigned char *at,
				    enum spfkit_reason why, const char *sec)
{
	if (tp->c.err)
		return NULL;
	tp->c.p = at;
	/* the code's text: spfkit_parse_error_reason() finds it by address */
	spfkit__cur_fail(&tp->c, SPFKIT_ESYNTAX, spfkit_reason_text(why));
	tp->section = sec;
	return NULL;
}

/* A failure other than syntax, rc (SPFKIT_ENOMEM), while parsing the
 * value that starts at `at`. */
static void fail_nomem(struct tparse *tp, const unsigned char *at, int rc)
{
	if (tp->c.err)
		return;
	tp->c.p = at;
	spfkit__cur_fail(&tp->c, rc, "out of memory");
}

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
#define CL_A (CL_ALNUM | CL_NAME | CL_TOPLABEL)
#define CL_LETTERS(c) [c] = CL_A | CL_ALPHA, [c - 32] = CL_A | CL_ALPHA
static const unsigned char byte_class[256] = {
	['0'] = CL_A, ['1'] = CL_A, ['2'] = CL_A, ['3'] = CL_A, ['4'] = CL_A,
	['5'] = CL_A, ['6'] = CL_A, ['7'] = CL_A, ['8'] = CL_A, ['9'] = CL_A,
	CL_LETTERS('a'), CL_LETTERS('b'), CL_LETTERS('c'), CL_LETTERS('d'), CL_LETTERS('e'),
	CL_LETTERS('f'), CL_LETTERS('g'), CL_LETTERS('h'), CL_LETTERS('i'), CL_LETTERS('j'),
	CL_LETTERS('k'), CL_LETTERS('l'), CL_LETTERS('m'), CL_LETTERS('n'), CL_LETTERS('o'),
	CL_LETTERS('p'), CL_LETTERS('q'), CL_LETTERS('r'), CL_LETTERS('s'), CL_LETTERS('t'),
	CL_LETTERS('u'), CL_LETTERS('v'), CL_LETTERS('w'), CL_LETTERS('x'), CL_LETTERS('y'),
	CL_LETTERS('z'),
	['_'] = CL_NAME, ['.'] = CL_NAME, ['-'] = CL_NAME | CL_QUALIFIER | CL_TOPLABEL,
	['+'] = CL_QUALIFIER, ['?'] = CL_QUALIFIER, ['~'] = CL_QUALIFIER,
};
#undef CL_LETTERS
#undef CL_A

/*
 * "." toplabel [ "." ] at the end of a domain-spec (§7.1, §12), in one
 * walk back from its end to the "." before it. The errors keep the order
 * of a walk forward: no ".", an empty label, then the first bad byte.
 */
static void check_toplabel(struct tparse *tp, const unsigned char *s, const unsigned char *e)
{
	const unsigned char *end = e, *label, *bad = NULL;
	unsigned seen = 0, cl;

	if (end > s && end[-1] == '.')
		end--;
	for (label = end; label > s && label[-1] != '.'; label--) {
		cl = byte_class[label[-1]];
		seen |= cl;
		if (!(cl & CL_TOPLABEL))
			bad = label - 1; /* the leftmost one wins */
	}
	if (label == s) {
		fail_at(tp, s, SPFKIT_REASON_DOMAIN_END, "7.1");
		return;
	}
	if (label == end) {
		fail_at(tp, end, SPFKIT_REASON_EMPTY_TOPLABEL, "7.1");
		return;
	}
	if (bad != NULL) {
		fail_at(tp, bad, SPFKIT_REASON_TOPLABEL_CHAR, "7.1");
		return;
	}
	/* toplabel = ( *alphanum ALPHA *alphanum ) /
	 *            ( 1*alphanum "-" *( alphanum / "-" ) alphanum );
	 * of its bytes only "-" is a qualifier */
	if (*label == '-')
		fail_at(tp, label, SPFKIT_REASON_TOPLABEL_DASH_START, "7.1");
	else if (end[-1] == '-')
		fail_at(tp, end - 1, SPFKIT_REASON_TOPLABEL_DASH_END, "7.1");
	else if (!(seen & (CL_ALPHA | CL_QUALIFIER)))
		fail_at(tp, label, SPFKIT_REASON_TOPLABEL_NUMERIC, "7.1");
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
static int plain_domain_spec(struct tparse *tp, const unsigned char *s, const unsigned char *e)
{
	struct spfkit_macro_piece *piece;

	if (!all_literal(s, e))
		return 0;
	piece = spfkit__arena_alloc(&tp->r->ar, sizeof(*piece));
	if (piece == NULL) {
		fail_nomem(tp, s, SPFKIT_ENOMEM);
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
static int parse_domain_spec(struct tparse *tp, const unsigned char *s, const unsigned char *e,
			     const char *sec)
{
	size_t off = 0;
	const char *why = NULL;
	int rc;

	if (s == e) {
		fail_at(tp, s, SPFKIT_REASON_EMPTY_DOMAIN, sec);
		return 0;
	}
	if (plain_domain_spec(tp, s, e))
		return !tp->c.err;
	rc = spfkit__macro_parse((const char *)s, (size_t)(e - s), SPFKIT__MACRO_DOMAIN, &tp->r->ar,
				 &tp->t->domain, &off, &why);
	if (rc == SPFKIT_ESYNTAX) {
		fail_at(tp, s + off, spfkit__reason_of_text(why), "7.1");
		return 0;
	}
	if (rc != 0) {
		fail_nomem(tp, s, rc);
		return 0;
	}
	tp->t->has_domain = 1;
	if (!spfkit__macro_ends_in_expand(&tp->t->domain))
		check_toplabel(tp, s, e);
	return !tp->c.err;
}

/*
 * "/" ( "0" / %x31-39 0*1DIGIT ) for ip4, 0*2DIGIT for ip6; p is past
 * "/". Read straight down the path of its length: a fourth digit makes
 * a value of 1000 or more, above either max, whatever follows.
 */
static inline const unsigned char *parse_cidr(struct tparse *tp, const unsigned char *p,
					      unsigned max, uint8_t *out, enum spfkit_reason too_big,
					      const char *sec)
{
	unsigned value = (unsigned)p[0] - '0', d;

	if (value > 9)
		return fail_at(tp, p, SPFKIT_REASON_CIDR_DIGITS, sec);
	if ((d = (unsigned)p[1] - '0') > 9) {
		*out = (uint8_t)value; /* one digit: at most 9 */
		return p + 1;
	}
	if (value == 0)
		return fail_at(tp, p, SPFKIT_REASON_CIDR_ZERO, sec);
	value = value * 10 + d;
	if ((d = (unsigned)p[2] - '0') > 9) {
		if (value > max)
			return fail_at(tp, p, too_big, sec);
		*out = (uint8_t)value;
		return p + 2;
	}
	value = value * 10 + d;
	if (value > max || (unsigned)p[3] - '0' <= 9)
		return fail_at(tp, p, too_big, sec);
	*out = (uint8_t)value;
	return p + 3;
}

/* dual-cidr-length = [ ip4-cidr-length ] [ "/" ip6-cidr-length ], to e. */
static void parse_dual_cidr(struct tparse *tp, const unsigned char *p, const unsigned char *e,
			    const char *sec)
{
	struct spfkit_term *t = tp->t;

	if (*p == '/') {
		p++;
		if (*p == '/') {
			p = parse_cidr(tp, p + 1, 128, &t->cidr6, SPFKIT_REASON_IP6_CIDR, sec);
		} else {
			p = parse_cidr(tp, p, 32, &t->cidr4, SPFKIT_REASON_IP4_CIDR, sec);
			if (p != NULL && *p == '/') {
				if (*++p != '/') {
					fail_at(tp, p, SPFKIT_REASON_IP6_CIDR_SLASHES, sec);
					return;
				}
				p = parse_cidr(tp, p + 1, 128, &t->cidr6,
					       SPFKIT_REASON_IP6_CIDR, sec);
			}
		}
		if (p == NULL)
			return;
	}
	if (p != e)
		fail_at(tp, p, SPFKIT_REASON_CIDR_TEXT, sec);
}

/*
 * Where a trailing dual-cidr-length starts in [s, e), or e. A domain-spec
 * may itself hold "/" ("a:foo:bar/baz.example.com" is legal), so the
 * cidr is taken from the end: "/N", "//N" or "/N//M" with digits only.
 */
static const unsigned char *cidr_suffix(const unsigned char *s, const unsigned char *e)
{
	const unsigned char *i = e, *slash, *j;

	while (i > s && spfkit__is_digit(i[-1]))
		i--;
	if (i == e || i == s || i[-1] != '/')
		return e;
	slash = i - 1;
	if (slash == s || slash[-1] != '/')
		return slash; /* "/N" */
	j = slash - 1;    /* "//N"; maybe "/N" before it */
	while (j > s && spfkit__is_digit(j[-1]))
		j--;
	if (j < slash - 1 && j > s && j[-1] == '/')
		return j - 1;
	return slash - 1;
}

/*
 * The DIGITs of one qnum at p, whose first byte is one: their value, and
 * their count in *n. Reading stops at a fourth digit, which no qnum has:
 * "1234" is then "above 255" and "0123" has "a leading zero", whatever
 * follows. Unrolled: most terms of real records are ip4.
 */
static inline unsigned read_qnum(const unsigned char *p, unsigned *n)
{
	unsigned v = (unsigned)p[0] - '0', d;

	if ((d = (unsigned)p[1] - '0') > 9) {
		*n = 1;
		return v;
	}
	v = v * 10 + d;
	if ((d = (unsigned)p[2] - '0') > 9) {
		*n = 2;
		return v;
	}
	*n = (unsigned)p[3] - '0' <= 9 ? 4 : 3;
	return v * 10 + d;
}

/*
 * ip4-network = qnum "." qnum "." qnum "." qnum (§12), at p. The address
 * is stored once at the end: a store through unsigned char may alias
 * anything, and one per number would make the compiler reload every
 * pointer it holds.
 */
static inline const unsigned char *parse_ip4(struct tparse *tp, const unsigned char *p,
					     unsigned char out[4], const char *sec)
{
	uint32_t addr = 0;
	unsigned v, n;
	int i;

	for (i = 0; i < 4; i++) {
		if (i > 0 && *p++ != '.')
			return fail_at(tp, p - 1, SPFKIT_REASON_IP4_FORM, sec);
		if ((unsigned)*p - '0' > 9)
			return fail_at(tp, p, SPFKIT_REASON_IP4_FORM, sec);
		v = read_qnum(p, &n);
		if (*p == '0' && n > 1)
			return fail_at(tp, p, SPFKIT_REASON_IP4_ZERO, sec);
		if (v > 255 || n > 3)
			return fail_at(tp, p, SPFKIT_REASON_IP4_RANGE, sec);
		p += n;
		addr = addr << 8 | v;
	}
	out[0] = (unsigned char)(addr >> 24);
	out[1] = (unsigned char)(addr >> 16);
	out[2] = (unsigned char)(addr >> 8);
	out[3] = (unsigned char)addr;
	return p;
}

/* HEXDIG value plus one; 0 for any other byte. */
static const unsigned char hex_plus_one[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Does the ip6-network end at p? At the first "/" of the term (its
 * cidr-length), or the term's end: e, or a SP when e is the record's
 * end (ip_term(), which finds where the term ends; no term holds a SP). */
static int ip6_at_end(const unsigned char *p, const unsigned char *e)
{
	return p == e || *p == '/' || *p == ' ';
}

/*
 * The run of HEXDIGs at p: its end, and in *v the value of its first four
 * digits. A group has one to four (RFC 4291 §2.2); a longer run is an
 * error, for which only its end matters.
 */
static inline const unsigned char *hex_run(const unsigned char *p, unsigned *v)
{
	unsigned acc = 0, h, n;

	for (n = 0; n < 4 && (h = hex_plus_one[p[n]]) != 0; n++)
		acc = acc << 4 | (h - 1);
	*v = acc;
	p += n;
	if (n == 4)
		while (hex_plus_one[*p] != 0)
			p++;
	return p;
}

/*
 * One h16 group of an ip6-network at p, or the dotted quad ending one
 * (RFC 4291 §2.2), stored at group *n of a (network order). Returns the
 * end, or NULL.
 */
static const unsigned char *ip6_group(struct tparse *tp, const unsigned char *p,
				      const unsigned char *e, unsigned char a[16], int *n,
				      const char *sec)
{
	unsigned v;
	const unsigned char *q = hex_run(p, &v);

	if (*q == '.') { /* ls32 as an IPv4 address */
		if (*n > 6)
			return fail_at(tp, p, SPFKIT_REASON_IP6_GROUPS, sec);
		q = parse_ip4(tp, p, a + 2 * *n, sec);
		if (q == NULL)
			return NULL;
		if (!ip6_at_end(q, e))
			return fail_at(tp, q, SPFKIT_REASON_IP6_QUAD_TEXT, sec);
		*n += 2;
		return q;
	}
	if (q == p)
		return fail_at(tp, p, SPFKIT_REASON_IP6_CHAR, sec);
	if (q - p > 4)
		return fail_at(tp, p + 4, SPFKIT_REASON_IP6_GROUP_SIZE, sec);
	if (*n >= 8)
		return fail_at(tp, p, SPFKIT_REASON_IP6_GROUPS, sec);
	a[2 * *n] = (unsigned char)(v >> 8);
	a[2 * *n + 1] = (unsigned char)v;
	(*n)++;
	return q;
}

/* ip6-network as in RFC 4291 §2.2, all of [s, e) up to its first "/". */
static const unsigned char *parse_ip6(struct tparse *tp, const unsigned char *s,
				      const unsigned char *e, unsigned char out[16],
				      const char *sec)
{
	const unsigned char *p = s;
	unsigned char a[16] = {0};
	int n = 0, dc = -1, i, k;

	if (e - s >= 2 && s[0] == ':' && s[1] == ':') {
		dc = 0;
		p += 2;
	}
	while (!ip6_at_end(p, e)) {
		p = ip6_group(tp, p, e, a, &n, sec);
		if (p == NULL)
			return NULL;
		if (*p != ':') { /* the end, where a dotted quad always is */
			if (ip6_at_end(p, e))
				break;
			return fail_at(tp, p, SPFKIT_REASON_IP6_CHAR, sec);
		}
		if (*++p == ':') {
			if (dc >= 0)
				return fail_at(tp, p - 1, SPFKIT_REASON_IP6_DOUBLE_COLON, sec);
			dc = n;
			p++;
		} else if (ip6_at_end(p, e)) {
			return fail_at(tp, p - 1, SPFKIT_REASON_IP6_COLON_END, sec);
		}
	}
	if (dc < 0 && n != 8)
		return fail_at(tp, s, SPFKIT_REASON_IP6_FORM, sec);
	if (dc >= 0 && n > 7)
		return fail_at(tp, s, SPFKIT_REASON_IP6_FULL_COLONS, sec);
	/* the groups after "::" go to the end; zeros fill the gap */
	for (i = 14, k = 2 * (n - 1); dc >= 0 && k >= 2 * dc; i -= 2, k -= 2) {
		a[i] = a[k];
		a[i + 1] = a[k + 1];
		a[k] = a[k + 1] = 0;
	}
	memcpy(out, a, sizeof(a));
	return p;
}

/*
 * The h16 at p (RFC 4291 §2.2): its count of HEXDIGs, one to four, and
 * in *v its value; 0 if there is none. A fifth HEXDIG is left for the
 * caller to find where it wants ':' or the end. Unrolled, each
 * byte read only after the one before it was a HEXDIG (see fail_at()).
 * Each table entry is one more than its digit, hence the 0x1111; summed,
 * not ORed, as an entry of 16 ('f') spills into the next nibble.
 */
static inline int h16(const unsigned char *p, unsigned *v)
{
	unsigned h0 = hex_plus_one[p[0]], h1, h2, h3;

	if (h0 == 0)
		return 0;
	if ((h1 = hex_plus_one[p[1]]) == 0) {
		*v = h0 - 1;
		return 1;
	}
	if ((h2 = hex_plus_one[p[2]]) == 0) {
		*v = (h0 << 4) + h1 - 0x11;
		return 2;
	}
	if ((h3 = hex_plus_one[p[3]]) == 0) {
		*v = (h0 << 8) + (h1 << 4) + h2 - 0x111;
		return 3;
	}
	*v = (h0 << 12) + (h1 << 8) + (h2 << 4) + h3 - 0x1111;
	return 4;
}

/*
 * The ip6-networks of real records: groups of one to four HEXDIGs joined
 * by ':', at most one "::" (RFC 4291 §2.2), no dotted quad; say
 * "2001:db8::". Their value into out and their end (the first "/" or e),
 * as parse_ip6() would give; NULL for anything else, valid or not, which
 * that parser then reads from the start (and, if it takes it, stores all
 * of out over what this left there). out arrives zeroed (start_term()).
 */
static inline const unsigned char *ip6_plain(const unsigned char *p, const unsigned char *e,
				      unsigned char out[16])
{
	unsigned v;
	int n = 0, gap = -1, k;

	if (p[0] == ':') {
		if (p[1] != ':')
			return NULL;
		gap = 0;
		p += 2;
	}
	/*
	 * A group, then ':' and a group, or "::" and the end or a group. A
	 * single ':' at the end leaves no HEXDIG for h16(), nor does a fifth
	 * HEXDIG leave a ':' after the group: both end in NULL.
	 */
	while (gap != n || !ip6_at_end(p, e)) {
		k = h16(p, &v);
		if (k == 0 || n == 8)
			return NULL;
		out[2 * n] = (unsigned char)(v >> 8);
		out[2 * n + 1] = (unsigned char)v;
		n++;
		p += k;
		if (*p != ':')
			break;
		if (*++p == ':') {
			if (gap >= 0)
				return NULL;
			gap = n;
			p++;
		}
	}
	if (!ip6_at_end(p, e) || (gap < 0 ? n != 8 : n > 7))
		return NULL;
	if (gap >= 0 && gap < n) { /* the groups after "::" go to the end, zeros before them */
		memmove(out + 16 - 2 * (n - gap), out + 2 * gap, (size_t)(2 * (n - gap)));
		memset(out + 2 * gap, 0, (size_t)(2 * (8 - n)));
	}
	return p;
}

/* ip4 ":" ip4-network [ ip4-cidr-length ], from past the ":" to e. */
static void mech_ip4(struct tparse *tp, const unsigned char *p, const unsigned char *e,
		     const char *sec)
{
	p = parse_ip4(tp, p, tp->t->ip, sec);
	if (p != NULL && *p == '/') {
		if (*++p == '/') {
			fail_at(tp, p, SPFKIT_REASON_IP4_IP6_CIDR, sec);
			return;
		}
		p = parse_cidr(tp, p, 32, &tp->t->cidr4, SPFKIT_REASON_IP4_CIDR, sec);
	}
	if (p != NULL && p != e)
		fail_at(tp, p, SPFKIT_REASON_IP4_TEXT, sec);
}

/* ip6 ":" ip6-network [ ip6-cidr-length ], from past the ":" to e. */
static void mech_ip6(struct tparse *tp, const unsigned char *p, const unsigned char *e,
		     const char *sec)
{
	const unsigned char *end = ip6_plain(p, e, tp->t->ip);

	p = end != NULL ? end : parse_ip6(tp, p, e, tp->t->ip, sec);
	if (p != NULL && p != e) { /* at the slash */
		if (*++p == '/') {
			fail_at(tp, p, SPFKIT_REASON_IP6_DOUBLE_SLASH, sec);
			return;
		}
		p = parse_cidr(tp, p, 128, &tp->t->cidr6, SPFKIT_REASON_IP6_CIDR, sec);
	}
	if (p != NULL && p != e)
		fail_at(tp, p, SPFKIT_REASON_IP6_TEXT, sec);
}

/* a / mx: [ ":" domain-spec ] [ dual-cidr-length ] */
static void mech_a_mx(struct tparse *tp, const unsigned char *p, const unsigned char *e,
		      const char *sec)
{
	const unsigned char *s;

	if (*p == ':') {
		s = p + 1;
		p = cidr_suffix(s, e);
		if (!parse_domain_spec(tp, s, p, sec))
			return;
	} else if (p != e && *p != '/') {
		fail_at(tp, p, SPFKIT_REASON_MECHANISM_TEXT, sec);
		return;
	}
	parse_dual_cidr(tp, p, e, sec);
}

/* include / exists: ":" domain-spec; ptr: [ ":" domain-spec ] */
static void mech_domain(struct tparse *tp, const unsigned char *p, const unsigned char *e,
			int required, const char *sec)
{
	if (*p == ':') {
		parse_domain_spec(tp, p + 1, e, sec);
		return;
	}
	if (p == e && !required)
		return;
	fail_at(tp, p,
		p == e ? SPFKIT_REASON_MISSING_DOMAIN
		       : SPFKIT_REASON_MECHANISM_TEXT,
		sec);
}

/* A mechanism name of up to 7 bytes folded to lower case in one word:
 * name is a run of ALPHA / DIGIT (parse_term), where OR 0x20 lowers
 * letters and leaves digits alone. */
#define MECH_KEY2(a, b) ((uint64_t)(a) << 8 | (uint64_t)(b))
#define MECH_KEY3(a, b, c) (MECH_KEY2(a, b) << 8 | (uint64_t)(c))

static uint64_t fold_name(const unsigned char *name, size_t len)
{
	uint64_t key = 0;
	size_t i;

	for (i = 0; i < len; i++)
		key = key << 8 | (uint64_t)(name[i] | 0x20);
	return key;
}

static int find_mech(const unsigned char *name, size_t len)
{
	uint64_t key;

	switch (len) {
	case 1:
		return (name[0] | 0x20) == 'a' ? SPFKIT_MECH_A : -1;
	case 2:
		return fold_name(name, 2) == MECH_KEY2('m', 'x') ? SPFKIT_MECH_MX : -1;
	case 3: /* most terms: ip4 ip6 all ptr */
		key = MECH_KEY3(name[0] | 0x20, name[1] | 0x20, name[2] | 0x20);
		if (key == MECH_KEY3('i', 'p', '4'))
			return SPFKIT_MECH_IP4;
		if (key == MECH_KEY3('i', 'p', '6'))
			return SPFKIT_MECH_IP6;
		if (key == MECH_KEY3('a', 'l', 'l'))
			return SPFKIT_MECH_ALL;
		return key == MECH_KEY3('p', 't', 'r') ? SPFKIT_MECH_PTR : -1;
	case 6:
		key = MECH_KEY3('e', 'x', 'i') << 24 | MECH_KEY3('s', 't', 's');
		return fold_name(name, 6) == key ? SPFKIT_MECH_EXISTS : -1;
	case 7:
		key = MECH_KEY3('i', 'n', 'c') << 32 | MECH_KEY2('l', 'u') << 16 |
		      MECH_KEY2('d', 'e');
		return fold_name(name, 7) == key ? SPFKIT_MECH_INCLUDE : -1;
	default:
		return -1;
	}
}

/* mechanism of that kind, its arguments [p, e). */
static void parse_mechanism(struct tparse *tp, int kind, const unsigned char *p,
			    const unsigned char *e)
{
	const char *sec = mechs[kind].section;

	tp->t->mech = (uint8_t)kind;
	switch (kind) {
	case SPFKIT_MECH_IP4: /* parse_term() takes every "ip4:" and "ip6:" itself */
		fail_at(tp, p, SPFKIT_REASON_IP4_MISSING, sec);
		return;
	case SPFKIT_MECH_IP6:
		fail_at(tp, p, SPFKIT_REASON_IP6_MISSING, sec);
		return;
	case SPFKIT_MECH_ALL:
		if (p != e)
			fail_at(tp, p, SPFKIT_REASON_ALL_ARGUMENT, sec);
		return;
	case SPFKIT_MECH_INCLUDE:
	case SPFKIT_MECH_EXISTS:
		mech_domain(tp, p, e, 1, sec);
		break;
	case SPFKIT_MECH_PTR:
		mech_domain(tp, p, e, 0, sec);
		break;
	default:
		mech_a_mx(tp, p, e, sec);
		break;
	}
	if (!tp->c.err)
		tp->r->rec.dns_terms++; /* §4.6.4: include a mx ptr exists */
}

/* redirect / exp: at most once each (§6), value a domain-spec [p, e). */
static void parse_known_modifier(struct tparse *tp, int kind, const unsigned char *name,
				 const unsigned char *p, const unsigned char *e)
{
	struct spfkit_record *rec = &tp->r->rec;
	int *seen = kind == SPFKIT_MOD_REDIRECT ? &rec->redirect : &rec->exp;

	if (*seen >= 0) {
		fail_at(tp, name,
			kind == SPFKIT_MOD_REDIRECT ? SPFKIT_REASON_DUPLICATE_REDIRECT
						    : SPFKIT_REASON_DUPLICATE_EXP,
			"6");
		return;
	}
	if (!parse_domain_spec(tp, p, e, kind == SPFKIT_MOD_REDIRECT ? "6.1" : "6.2"))
		return;
	*seen = (int)(tp->t - rec->terms);
	if (kind == SPFKIT_MOD_REDIRECT)
		rec->dns_terms++; /* §4.6.4 */
}

/* modifier = redirect / explanation / unknown-modifier; value [p, e). */
static void parse_modifier(struct tparse *tp, const unsigned char *name, size_t len,
			   const unsigned char *p, const unsigned char *e)
{
	struct spfkit_term *t = tp->t;
	size_t off = 0;
	const char *why = NULL;
	int rc;

	t->is_modifier = 1;
	t->qualifier = 0;
	if (spfkit__memcaseeq(name, len, "redirect", 8)) {
		t->mod = SPFKIT_MOD_REDIRECT;
		parse_known_modifier(tp, SPFKIT_MOD_REDIRECT, name, p, e);
		return;
	}
	if (spfkit__memcaseeq(name, len, "exp", 3)) {
		t->mod = SPFKIT_MOD_EXP;
		parse_known_modifier(tp, SPFKIT_MOD_EXP, name, p, e);
		return;
	}
	t->mod = SPFKIT_MOD_UNKNOWN;
	if (len == 0 || !spfkit__is_alpha(*name)) {
		fail_at(tp, name, len == 0 ? SPFKIT_REASON_EMPTY_MODIFIER_NAME : SPFKIT_REASON_MODIFIER_NAME,
			"4.6.1");
		return;
	}
	/* ignored, but its value must still be a macro-string (§6, §12) */
	rc = spfkit__macro_parse((const char *)p, (size_t)(e - p), SPFKIT__MACRO_EXPLAIN,
				 &tp->r->ar, &t->domain, &off, &why);
	if (rc == SPFKIT_ESYNTAX)
		fail_at(tp, p + off, spfkit__reason_of_text(why), "7.1");
	else if (rc != 0)
		fail_nomem(tp, p, rc);
	else
		t->has_domain = 1;
}

/*
 * Does the term at p, which ends at e, start "ip4:" or "ip6:" (name in
 * any case), as nearly every term of a real record does? The mechanism,
 * or -1 for any other start, which the general path of parse_term()
 * reads as the same. One compare of four bytes, read only when the term
 * has them; the keys are spelt in memory order, so byte order is moot.
 */
static int ip_mechanism(const unsigned char *p, const unsigned char *e)
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

/* directive = [ qualifier ] mechanism, or modifier, over [start, e); the
 * term's qualifier is already '+'. */
static void parse_term(struct tparse *tp, const unsigned char *start, const unsigned char *e)
{
	struct spfkit_term *t = tp->t;
	const unsigned char *p = start, *name, *name_end;
	int kind;

	if (byte_class[*p] & CL_QUALIFIER)
		t->qualifier = *p++;
	name = p;
	t->name = (const char *)name;
	kind = ip_mechanism(p, e);
	if (kind >= 0) { /* straight on past the ':', their section spelt out */
		t->name_len = 3;
		t->mech = (uint8_t)kind;
		if (kind == SPFKIT_MECH_IP4)
			mech_ip4(tp, p + 4, e, "5.6");
		else
			mech_ip6(tp, p + 4, e, "5.6");
		return;
	}
	while (byte_class[*p] & CL_ALNUM)
		p++;
	name_end = p;
	while (byte_class[*p] & CL_NAME)
		p++;
	/* §4.6.1: a modifier has "=" right after its name */
	if (*p == '=') {
		t->name_len = (size_t)(p - name);
		if (name != start)
			fail_at(tp, start, SPFKIT_REASON_QUALIFIED_MODIFIER, "4.6.1");
		else
			parse_modifier(tp, name, t->name_len, p + 1, e);
		return;
	}
	kind = find_mech(name, (size_t)(name_end - name));
	if (kind < 0) {
		fail_at(tp, name, SPFKIT_REASON_UNKNOWN_MECHANISM, "4.6.1");
		return;
	}
	t->name_len = (size_t)(name_end - name);
	parse_mechanism(tp, kind, name_end, e);
}

/* ---- the record ----------------------------------------------------- */

static enum spfkit_reason bad_byte(unsigned char b, const char **sec)
{
	if (b >= 0x80) {
		*sec = "3.1"; /* the record is US-ASCII */
		return SPFKIT_REASON_NON_ASCII;
	}
	*sec = "4.6.1"; /* terms are separated by SP only */
	return SPFKIT_REASON_CONTROL_CHAR;
}

/*
 * A term that failed may hold a byte no term may hold; if so that byte is
 * the error, whatever the grammar tripped on (a control byte where a SP
 * belongs, a UTF-8 BOM in a domain). Every production of §12 rejects such
 * bytes, so a term that parsed has none and only failures need the scan.
 */
static void prefer_byte_error(struct tparse *tp, const unsigned char *s, const unsigned char *e)
{
	enum spfkit_reason why;
	const char *sec = NULL;

	for (; s < e; s++) {
		if (spfkit__is_vchar(*s))
			continue;
		why = bad_byte(*s, &sec);
		tp->c.err = 0;
		fail_at(tp, s, why, sec);
		return;
	}
}

/* What count_terms() finds: the counts that size the arena. */
struct term_map {
	size_t terms; /* runs of non-SP after the version */
	size_t named; /* of them, those that may hold a macro-string */
	size_t pct;   /* their '%' bytes */
};

/*
 * A term before parsing: '+', the cidr-lengths that mean "none given",
 * all else zero. This runs for every term: zeroing the whole struct at
 * once compiles (GCC, x86-64) to a "rep stos", a step per word, where
 * zeroing up to `name` and storing the rest takes a few vector stores.
 * name and name_len are left to parse_term(), which sets both on every
 * path that does not fail (and a failed term is never seen).
 */
_Static_assert(offsetof(struct spfkit_term, len) + sizeof(size_t) == sizeof(struct spfkit_term),
	       "start_term() zeroes the fields before name, the parse sets each one after it");

static void start_term(struct spfkit_term *t, size_t offset, size_t len)
{
	memset(t, 0, offsetof(struct spfkit_term, name)); /* byte fields, ip, domain, padding */
	t->qualifier = '+';
	t->cidr4 = 32;
	t->cidr6 = 128;
	t->offset = offset;
	t->len = len;
}

/* Term [s, e) into t; 0 after an error. */
static int parse_one(struct tparse *tp, struct spfkit_term *t, const unsigned char *s,
		     const unsigned char *e)
{
	tp->t = t;
	start_term(t, (size_t)(s - tp->c.base), (size_t)(e - s));
	parse_term(tp, s, e);
	if (tp->c.err == SPFKIT_ESYNTAX)
		prefer_byte_error(tp, s, e);
	return !tp->c.err;
}

/* The compact form of the ip4 or ip6 term t, which parsed. */
static void set_hot_ip(struct spfkit__hot_term *h, const struct spfkit_term *t)
{
	h->mech = t->mech;
	h->is_modifier = 0;
	h->literal = HOT_NOT_LITERAL;
	h->unused = 0;
	h->ip4 = 0;
	h->mask4 = 0;
	if (t->mech != SPFKIT_MECH_IP4)
		return;
	memcpy(&h->ip4, t->ip, 4);
	/* cidr4 0 shifts the ones out of the low 32 bits */
	h->mask4 = htonl((uint32_t)(UINT64_C(0xffffffff) << (32 - t->cidr4)));
}

/* The compact form of the term t, which parsed (record_room.h). */
static void set_hot(struct spfkit__hot_term *h, const struct spfkit_term *t)
{
	h->mech = t->mech;
	h->is_modifier = t->is_modifier;
	h->literal = HOT_NOT_LITERAL;
	h->unused = 0;
	h->ip4 = 0;
	h->mask4 = 0;
	if (t->has_domain && t->domain.letters == 0 && t->domain.count == 1 &&
	    t->domain.pieces[0].kind == SPFKIT_PIECE_LITERAL &&
	    t->domain.pieces[0].len <= SPFKIT_DOMAIN_MAX_LEN) /* longer: cut (§7.3) */
		h->literal = spfkit__domain_valid(t->domain.pieces[0].text, t->domain.pieces[0].len)
				     ? HOT_LITERAL_VALID
				     : HOT_LITERAL_INVALID;
	if (!t->is_modifier && t->mech == SPFKIT_MECH_IP4)
		set_hot_ip(h, t);
}

#ifdef SPFKIT__HAVE_SSE2
static __m128i load16(const char *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* Bit k set where p[k] is SP, for the 16 bytes at p. */
static uint32_t spaces16(const char *p)
{
	__m128i b = load16(p);

	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8(' ')));
}
#endif

/*
 * The first SP in [p, end), or end. Terms are short: where SSE2 is there,
 * a look at the next 32 bytes finds most for less than a call to memchr()
 * costs, and then 16; memchr() takes what is left.
 */
static inline const char *next_space(const char *p, const char *end)
{
	const char *q;

#ifdef SPFKIT__HAVE_SSE2
	uint32_t at;

	for (; end - p >= 32; p += 32) {
		at = spaces16(p) | spaces16(p + 16) << 16;
		if (at != 0)
			return p + __builtin_ctz(at);
	}
	if (end - p >= 16) {
		at = spaces16(p);
		if (at != 0)
			return p + __builtin_ctz(at);
		p += 16;
	}
#endif
	q = memchr(p, ' ', (size_t)(end - p));
	return q != NULL ? q : end;
}

/*
 * The term at s, "ip4:" or "ip6:" (kind) with no qualifier, read to the
 * first byte that its network and cidr-length do not take, so no search
 * for its end: that byte's address if it is SP or the record's end, else
 * NULL, as for an ip6-network other than its common form (ip6_plain()).
 */
static const unsigned char *ip_term(struct tparse *tp, int kind, const unsigned char *s,
				    const unsigned char *end)
{
	struct spfkit_term *t = tp->t;
	const unsigned char *p;

	t->name = (const char *)s;
	t->name_len = 3;
	t->mech = (uint8_t)kind;
	if (kind == SPFKIT_MECH_IP4)
		p = parse_ip4(tp, s + 4, t->ip, "5.6");
	else
		p = ip6_plain(s + 4, end, t->ip);
	if (p != NULL && *p == '/')
		p = kind == SPFKIT_MECH_IP4
			    ? parse_cidr(tp, p + 1, 32, &t->cidr4, SPFKIT_REASON_IP4_CIDR, "5.6")
			    : parse_cidr(tp, p + 1, 128, &t->cidr6, SPFKIT_REASON_IP6_CIDR, "5.6");
	return p != NULL && (p == end || *p == ' ') ? p : NULL; /* NULL: failed, or not here */
}

/* The term at s (not SP) into t: its end (SP or the record's end); NULL
 * after an error. An ip4 or ip6 term that ip_term() does not take is
 * read again the general way, which words its error. */
static const unsigned char *parse_next(struct tparse *tp, struct spfkit_term *t,
				       struct spfkit__hot_term *h, const unsigned char *s)
{
	const unsigned char *e, *end = tp->c.end;
	int kind = ip_mechanism(s, end);

	if (kind >= 0) {
		tp->t = t;
		start_term(t, (size_t)(s - tp->c.base), 0);
		e = ip_term(tp, kind, s, end);
		if (e != NULL) {
			t->len = (size_t)(e - s);
			if (h != NULL)
				set_hot_ip(h, t);
			return e;
		}
		tp->c.err = 0;
	}
	e = (const unsigned char *)next_space((const char *)s, (const char *)end);
	if (!parse_one(tp, t, s, e))
		return NULL;
	if (h != NULL)
		set_hot(h, t);
	return e;
}

/* Parse each term into rec->terms, which has room for max of them. */
static void parse_terms(struct tparse *tp, size_t max)
{
	struct spfkit_record *rec = &tp->r->rec;
	struct spfkit_term *terms = (struct spfkit_term *)rec->terms;
	const unsigned char *p = tp->c.base + 6, *end = tp->c.end;
	size_t n = 0;

	for (;;) {
		while (*p == ' ') /* the text ends in a NUL */
			p++;
		if (p == end)
			break;
		if (n == max) { /* the caller counted otherwise: cannot happen */
			fail_nomem(tp, p, SPFKIT_ENOMEM);
			return;
		}
		p = parse_next(tp, &terms[n], tp->hot != NULL ? &tp->hot[n] : NULL, p);
		if (p == NULL)
			return;
		n++;
	}
	rec->count = n;
}

/*
 * Note in map what the parse of the term [p, end) may allocate: a
 * macro-string (a domain-spec after ':', a modifier's value after '=')
 * takes at most one piece more than twice its '%' bytes. An "ip4:" or
 * "ip6:" term takes none whatever it holds (parse_term() reads those
 * names first), and most terms are those: one word compared, no scan.
 */
static void note_pieces(const char *p, const char *end, struct term_map *map)
{
	const char *q;

	if (ip_mechanism((const unsigned char *)p, (const unsigned char *)end) >= 0)
		return;
	q = memchr(p, ':', (size_t)(end - p));
	if (q == NULL)
		q = memchr(p, '=', (size_t)(end - p));
	if (q == NULL || q + 1 == end) /* an empty value has no pieces */
		return;
	map->named++;
	for (q = p; q < end && (q = memchr(q, '%', (size_t)(end - q))) != NULL; q++)
		map->pct++;
}

/* Fill map for the record txt; next_space() keeps this far cheaper than
 * a loop over every byte. */
static void count_terms(const char *txt, size_t len, struct term_map *map)
{
	const char *p = txt + 6, *end = txt + len, *q;

	map->terms = 0;
	map->named = 0;
	map->pct = 0;
	for (;;) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		q = next_space(p, end);
		map->terms++;
		note_pieces(p, q, map);
		if (q == end)
			break;
		p = q + 1; /* past the SP that ended the term */
	}
}

static void set_error(struct spfkit_parse_error *err, size_t off, const char *rule,
		      const char *section)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	err->offset = off;
	err->rule = rule;
	err->section = section;
}

/* Offset of the first byte that keeps txt from starting "v=spf1" + SP/end. */
static size_t version_error_offset(const char *txt, size_t len)
{
	static const char v[] = "v=spf1";
	size_t i;

	for (i = 0; i < 6 && i < len; i++)
		if (spfkit__lower((unsigned char)txt[i]) != v[i])
			return i;
	return i;
}

static struct record_impl *record_new(const struct spfkit_allocator *alloc, const char *txt,
				      size_t len, size_t nterms, size_t named, size_t npct,
				      size_t room, size_t later)
{
	struct spfkit__arena ar;
	struct record_impl *r;
	char *text;
	/*
	 * Sized to what the parse takes, as the whole block is charged to
	 * the record cache and the evaluation (a 64 KiB record holds 32,768
	 * terms). A macro-string has at most one piece more than twice its
	 * '%' bytes, in one array per term that holds one, rounded up to 16
	 * bytes; the 64 cover the rounding of the record, text and terms.
	 * Short, the arena would only take a second block, of `later` bytes
	 * or, when that is 0, of the first one's size.
	 */
	size_t size = sizeof(*r) + len + 1 + nterms * sizeof(struct spfkit_term) +
		      named * (sizeof(struct spfkit_macro_piece) + 16) +
		      2 * npct * sizeof(struct spfkit_macro_piece) + 64 + room;

	if (spfkit__arena_init_first(&ar, alloc, later != 0 ? later : size, size) != 0)
		return NULL;
	r = spfkit__arena_alloc(&ar, sizeof(*r));
	text = r != NULL ? spfkit__arena_strndup(&ar, txt, len) : NULL;
	if (text == NULL) {
		spfkit__arena_free(&ar);
		return NULL;
	}
	memset(&r->rec, 0, sizeof(r->rec));
	r->ar = ar; /* from here on the arena lives inside its own first block */
	r->rec.text = text;
	r->rec.len = len;
	r->rec.redirect = -1;
	r->rec.exp = -1;
	if (nterms > 0) {
		r->rec.terms = spfkit__arena_alloc(&r->ar, nterms * sizeof(struct spfkit_term));
		if (r->rec.terms == NULL) {
			spfkit_record_free(&r->rec);
			return NULL;
		}
		/* parse_terms() sets each term as it comes to it */
	}
	return r;
}

int spfkit_record_parse(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			struct spfkit_record **out, struct spfkit_parse_error *err)
{
	void *room;

	return spfkit__record_parse_room(txt, len, alloc, 0, out, err, &room);
}

/* The room's bytes: `fixed`, then, if any, n compact terms; SIZE_MAX
 * when they cannot be counted. */
static size_t room_size(size_t fixed, size_t n)
{
	if (fixed == 0)
		return 0;
	fixed = SPFKIT__ALIGN_UP(fixed);
	if (n > (SIZE_MAX / 2 - fixed) / sizeof(struct spfkit__hot_term))
		return SIZE_MAX;
	return SPFKIT__ALIGN_UP(fixed + sizeof(struct spfkit__hot_term) * n);
}

/* What every parse checks first: 0, or the error to return. */
static int parse_start(const char *txt, size_t len, struct spfkit_record **out,
		       struct spfkit_parse_error *err, void **room)
{
	set_error(err, 0, NULL, NULL);
	*room = NULL;
	if (out == NULL || (txt == NULL && len > 0))
		return SPFKIT_EINVAL;
	*out = NULL;
	if (len > SPFKIT_RECORD_MAX_LEN) {
		set_error(err, SPFKIT_RECORD_MAX_LEN, spfkit_reason_text(SPFKIT_REASON_RECORD_SIZE), "3.4");
		return SPFKIT_E2BIG;
	}
	if (!spfkit_record_is_spf(txt, len)) {
		set_error(err, version_error_offset(txt, len),
			  spfkit_reason_text(SPFKIT_REASON_VERSION), "4.5");
		return SPFKIT_ESYNTAX;
	}
	return 0;
}

/* Parse the text of r, which has room for max terms, `extra` bytes of
 * room after it and `fixed` of them before the compact terms. r is
 * freed on failure. */
static int parse_into(struct record_impl *r, size_t max, size_t fixed, size_t extra,
		      struct spfkit_record **out, struct spfkit_parse_error *err, void **room)
{
	struct tparse tp;

	/* the room fits the block sized for it whatever is taken after it */
	if (extra > 0 && (*room = spfkit__arena_alloc(&r->ar, extra)) == NULL) {
		spfkit_record_free(&r->rec);
		return SPFKIT_ENOMEM;
	}
	memset(&tp, 0, sizeof(tp));
	tp.r = r;
	if (extra > 0)
		tp.hot = (struct spfkit__hot_term *)(void *)((unsigned char *)*room +
							     SPFKIT__ALIGN_UP(fixed));
	spfkit__cur_init(&tp.c, r->rec.text, r->rec.len);
	parse_terms(&tp, max);
	if (tp.c.err) {
		set_error(err, tp.c.err_off, tp.c.err_why, tp.section);
		if (err != NULL && tp.t != NULL) {
			err->term_offset = tp.t->offset;
			err->term_len = tp.t->len;
		}
		spfkit_record_free(&r->rec);
		*room = NULL;
		return tp.c.err;
	}
	*out = &r->rec;
	return 0;
}

int spfkit__record_parse_room(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			      size_t fixed, struct spfkit_record **out,
			      struct spfkit_parse_error *err, void **room)
{
	struct record_impl *r;
	struct term_map map;
	size_t extra;
	int rc = parse_start(txt, len, out, err, room);

	if (rc != 0)
		return rc;
	count_terms(txt, len, &map);
	if (map.terms > SPFKIT_RECORD_MAX_TERMS) { /* unreachable within the length cap */
		set_error(err, 0, spfkit_reason_text(SPFKIT_REASON_TERM_COUNT), "3.4");
		return SPFKIT_E2BIG;
	}
	extra = room_size(fixed, map.terms);
	if (extra == SIZE_MAX)
		return SPFKIT_ENOMEM;
	r = record_new(alloc, txt, len, map.terms, map.named, map.pct, extra, 0);
	if (r == NULL)
		return SPFKIT_ENOMEM;
	return parse_into(r, map.terms, fixed, extra, out, err, room);
}

#ifdef SPFKIT__HAVE_SSE2
/* The sum of the 16 byte counters of sum. */
static size_t sum_bytes(__m128i sum)
{
	sum = _mm_sad_epu8(sum, _mm_setzero_si128());
	return (size_t)_mm_cvtsi128_si32(sum) + (size_t)_mm_extract_epi16(sum, 4);
}
#endif

/* SP bytes in [p, end): at least one before each term. SSE2 counts by
 * taking the compare's -1 per SP from 16 byte counters, summed before
 * they wrap; the last bytes are read again from the end, those already
 * counted masked off. */
static size_t count_spaces(const char *p, const char *end)
{
	size_t n = 0;

#ifdef SPFKIT__HAVE_SSE2
	static const unsigned char last[32] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	const __m128i sp = _mm_set1_epi8(' ');
	__m128i sum;
	int k;

	if (end - p >= 16) {
		do { /* 63 rounds of 4 add at most 252 to a counter */
			__m128i a = _mm_setzero_si128(), b = _mm_setzero_si128();

			for (k = 0; k < 63 && end - p >= 64; k++, p += 64) {
				a = _mm_sub_epi8(a, _mm_cmpeq_epi8(load16(p), sp));
				b = _mm_sub_epi8(b, _mm_cmpeq_epi8(load16(p + 16), sp));
				a = _mm_sub_epi8(a, _mm_cmpeq_epi8(load16(p + 32), sp));
				b = _mm_sub_epi8(b, _mm_cmpeq_epi8(load16(p + 48), sp));
			}
			n += sum_bytes(a) + sum_bytes(b);
		} while (end - p >= 64);
		sum = _mm_setzero_si128();
		for (; end - p >= 16; p += 16)
			sum = _mm_sub_epi8(sum, _mm_cmpeq_epi8(load16(p), sp));
		sum = _mm_sub_epi8(sum, _mm_and_si128(_mm_cmpeq_epi8(load16(end - 16), sp),
						      load16((const char *)last + (end - p))));
		return n + sum_bytes(sum);
	}
#endif
	for (; p < end; p++)
		n += *p == ' ';
	return n;
}

/*
 * The block holds a term per SP byte, more than it needs only where SPs
 * run together, and LOOSE_PIECES bytes of macro pieces (a few plain
 * domain-specs); more take a block of LOOSE_PIECES of their own. No walk
 * over every term first.
 */
#define LOOSE_PIECES 256

int spfkit__record_parse_loose(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			       size_t fixed, struct spfkit_record **out,
			       struct spfkit_parse_error *err, void **room)
{
	struct record_impl *r;
	size_t max, extra;
	int rc = parse_start(txt, len, out, err, room);

	if (rc != 0)
		return rc;
	max = count_spaces(txt + 6, txt + len);
	extra = room_size(fixed, max);
	if (extra == SIZE_MAX)
		return SPFKIT_ENOMEM;
	r = record_new(alloc, txt, len, max, 0, 0, extra + LOOSE_PIECES, LOOSE_PIECES);
	if (r == NULL)
		return SPFKIT_ENOMEM;
	return parse_into(r, max, fixed, extra, out, err, room);
}

void spfkit__record_rebind(struct spfkit_record *rec, const struct spfkit_allocator *alloc)
{
	((struct record_impl *)rec)->ar.alloc = alloc;
}

void spfkit_record_free(struct spfkit_record *rec)
{
	struct spfkit__arena ar;

	if (rec == NULL)
		return;
	/* copy the arena out first: the record lives inside it */
	ar = ((struct record_impl *)rec)->ar;
	spfkit__arena_free(&ar);
}
