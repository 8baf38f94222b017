/*
 * The readers of an ip4-network, of an ip6-network in its common form and
 * of cidr-lengths (RFC 7208 §5.6, §12; RFC 4291 §2.2), inline: the walk
 * over a record's terms (term_parse.c) reads nearly every ip4, ip6, a and
 * mx term with them alone, and term_ip.c's general readers build on them.
 * Errors as in term_parse.h.
 */
#ifndef SPFKIT_TERM_IP_H
#define SPFKIT_TERM_IP_H

#include <stdint.h>
#include <string.h>

#include "reason.h"
#include "term_parse.h"

/* HEXDIG value plus one; 0 for any other byte (term_ip.c). */
extern const unsigned char spfkit__term_ip_hex[256];

/*
 * "/" ( "0" / %x31-39 0*1DIGIT ) for ip4, 0*2DIGIT for ip6; p is past
 * "/". Read straight down the path of its length: a fourth digit makes
 * a value of 1000 or more, above either max, whatever follows.
 */
static inline const unsigned char *spfkit__term_ip_cidr(struct spfkit__term_parse *tp,
							const unsigned char *p, unsigned max,
							uint8_t *out, enum spfkit_reason too_big,
							const char *sec)
{
	unsigned value = (unsigned)p[0] - '0', d;

	if (value > 9)
		return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_CIDR_DIGITS, sec);
	if ((d = (unsigned)p[1] - '0') > 9) {
		*out = (uint8_t)value; /* one digit: at most 9 */
		return p + 1;
	}
	if (value == 0)
		return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_CIDR_ZERO, sec);
	value = value * 10 + d;
	if ((d = (unsigned)p[2] - '0') > 9) {
		if (value > max)
			return spfkit__term_parse_fail(tp, p, too_big, sec);
		*out = (uint8_t)value;
		return p + 2;
	}
	value = value * 10 + d;
	if (value > max || (unsigned)p[3] - '0' <= 9)
		return spfkit__term_parse_fail(tp, p, too_big, sec);
	*out = (uint8_t)value;
	return p + 3;
}

/*
 * The DIGITs of one qnum at p, whose first byte is one: their value, and
 * their count in *n. Reading stops at a fourth digit, which no qnum has:
 * "1234" is then "above 255" and "0123" has "a leading zero", whatever
 * follows. Unrolled: most terms of real records are ip4.
 */
static inline unsigned spfkit__term_ip_qnum(const unsigned char *p, unsigned *n)
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
static inline const unsigned char *spfkit__term_ip_ip4(struct spfkit__term_parse *tp,
						       const unsigned char *p, unsigned char out[4],
						       const char *sec)
{
	uint32_t addr = 0;
	unsigned v, n;
	int i;

	for (i = 0; i < 4; i++) {
		if (i > 0 && *p++ != '.')
			return spfkit__term_parse_fail(tp, p - 1, SPFKIT_REASON_IP4_FORM, sec);
		if ((unsigned)*p - '0' > 9)
			return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP4_FORM, sec);
		v = spfkit__term_ip_qnum(p, &n);
		if (*p == '0' && n > 1)
			return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP4_ZERO, sec);
		if (v > 255 || n > 3)
			return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP4_RANGE, sec);
		p += n;
		addr = addr << 8 | v;
	}
	out[0] = (unsigned char)(addr >> 24);
	out[1] = (unsigned char)(addr >> 16);
	out[2] = (unsigned char)(addr >> 8);
	out[3] = (unsigned char)addr;
	return p;
}

/* Does the ip6-network end at p? At the first "/" of the term (its
 * cidr-length), or the term's end: e, or a SP when e is the record's
 * end (spfkit__term_ip_fast(), which finds where the term ends; no term holds a SP). */
static inline int spfkit__term_ip_end6(const unsigned char *p, const unsigned char *e)
{
	return p == e || *p == '/' || *p == ' ';
}

/*
 * The h16 at p (RFC 4291 §2.2): its count of HEXDIGs, one to four, and
 * in *v its value; 0 if there is none. A fifth HEXDIG is left for the
 * caller to find where it wants ':' or the end. Unrolled, each
 * byte read only after the one before it was a HEXDIG (see spfkit__term_parse_fail()).
 * Each table entry is one more than its digit, hence the 0x1111; summed,
 * not ORed, as an entry of 16 ('f') spills into the next nibble.
 */
static inline int spfkit__term_ip_h16(const unsigned char *p, unsigned *v)
{
	unsigned h0 = spfkit__term_ip_hex[p[0]], h1, h2, h3;

	if (h0 == 0)
		return 0;
	if ((h1 = spfkit__term_ip_hex[p[1]]) == 0) {
		*v = h0 - 1;
		return 1;
	}
	if ((h2 = spfkit__term_ip_hex[p[2]]) == 0) {
		*v = (h0 << 4) + h1 - 0x11;
		return 2;
	}
	if ((h3 = spfkit__term_ip_hex[p[3]]) == 0) {
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
static inline const unsigned char *spfkit__term_ip_plain6(const unsigned char *p,
							  const unsigned char *e,
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
	 * single ':' at the end leaves no HEXDIG for spfkit__term_ip_h16(), nor does a fifth
	 * HEXDIG leave a ':' after the group: both end in NULL.
	 */
	while (gap != n || !spfkit__term_ip_end6(p, e)) {
		k = spfkit__term_ip_h16(p, &v);
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
	if (!spfkit__term_ip_end6(p, e) || (gap < 0 ? n != 8 : n > 7))
		return NULL;
	if (gap >= 0 && gap < n) { /* the groups after "::" go to the end, zeros before them */
		memmove(out + 16 - 2 * (n - gap), out + 2 * gap, (size_t)(2 * (n - gap)));
		memset(out + 2 * gap, 0, (size_t)(2 * (8 - n)));
	}
	return p;
}

/* dual-cidr-length = [ ip4-cidr-length ] [ "/" ip6-cidr-length ], to e. */
static inline void spfkit__term_ip_dual_cidr(struct spfkit__term_parse *tp,
					     const unsigned char *p, const unsigned char *e,
					     const char *sec)
{
	struct spfkit_term *t = tp->t;

	if (*p == '/') {
		p++;
		if (*p == '/') {
			p = spfkit__term_ip_cidr(tp, p + 1, 128, &t->cidr6, SPFKIT_REASON_IP6_CIDR,
						 sec);
		} else {
			p = spfkit__term_ip_cidr(tp, p, 32, &t->cidr4, SPFKIT_REASON_IP4_CIDR, sec);
			if (p != NULL && *p == '/') {
				if (*++p != '/') {
					spfkit__term_parse_fail(tp, p,
								SPFKIT_REASON_IP6_CIDR_SLASHES, sec);
					return;
				}
				p = spfkit__term_ip_cidr(tp, p + 1, 128, &t->cidr6,
							 SPFKIT_REASON_IP6_CIDR, sec);
			}
		}
		if (p == NULL)
			return;
	}
	if (p != e)
		spfkit__term_parse_fail(tp, p, SPFKIT_REASON_CIDR_TEXT, sec);
}

/*
 * Where a trailing dual-cidr-length starts in [s, e), or e. A domain-spec
 * may itself hold "/" ("a:foo:bar/baz.example.com" is legal), so the
 * cidr is taken from the end: "/N", "//N" or "/N//M" with digits only.
 */
static inline const unsigned char *spfkit__term_ip_cidr_suffix(const unsigned char *s,
								 const unsigned char *e)
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

/* ---- term_ip.c: the general readers ---------------------------------- */

/* ip4 / ip6 ":" network [ cidr-length ], from past the ":" to e. */
void spfkit__term_ip_mech4(struct spfkit__term_parse *tp, const unsigned char *p,
			   const unsigned char *e, const char *sec);
void spfkit__term_ip_mech6(struct spfkit__term_parse *tp, const unsigned char *p,
			   const unsigned char *e, const char *sec);

#endif
