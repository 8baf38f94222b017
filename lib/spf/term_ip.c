/*
 * The general readers of ip4 and ip6 terms (RFC 7208 §5.6, §12; the
 * groups and "::" of RFC 4291 §2.2), for term_parse.c: an ip6-network in
 * any form, and every ip term the fast path there (ip_term(), with
 * term_ip.h's readers) does not take, which these read again from the
 * start to word the error.
 */
#include <string.h>

#include "core.h"
#include "reason.h"
#include "term_ip.h"
#include "term_parse.h"

/* HEXDIG value plus one; 0 for any other byte. */
const unsigned char spfkit__term_ip_hex[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * The run of HEXDIGs at p: its end, and in *v the value of its first four
 * digits. A group has one to four (RFC 4291 §2.2); a longer run is an
 * error, for which only its end matters.
 */
static inline const unsigned char *hex_run(const unsigned char *p, unsigned *v)
{
	unsigned acc = 0, h, n;

	for (n = 0; n < 4 && (h = spfkit__term_ip_hex[p[n]]) != 0; n++)
		acc = acc << 4 | (h - 1);
	*v = acc;
	p += n;
	if (n == 4)
		while (spfkit__term_ip_hex[*p] != 0)
			p++;
	return p;
}

/*
 * One h16 group of an ip6-network at p, or the dotted quad ending one
 * (RFC 4291 §2.2), stored at group *n of a (network order). Returns the
 * end, or NULL.
 */
static const unsigned char *ip6_group(struct spfkit__term_parse *tp, const unsigned char *p,
				      const unsigned char *e, unsigned char a[16], int *n,
				      const char *sec)
{
	unsigned v;
	const unsigned char *q = hex_run(p, &v);

	if (*q == '.') { /* ls32 as an IPv4 address */
		if (*n > 6)
			return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_GROUPS, sec);
		q = spfkit__term_ip_ip4(tp, p, a + 2 * *n, sec);
		if (q == NULL)
			return NULL;
		if (!spfkit__term_ip_end6(q, e))
			return spfkit__term_parse_fail(tp, q, SPFKIT_REASON_IP6_QUAD_TEXT, sec);
		*n += 2;
		return q;
	}
	if (q == p)
		return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_CHAR, sec);
	if (q - p > 4)
		return spfkit__term_parse_fail(tp, p + 4, SPFKIT_REASON_IP6_GROUP_SIZE, sec);
	if (*n >= 8)
		return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_GROUPS, sec);
	a[2 * *n] = (unsigned char)(v >> 8);
	a[2 * *n + 1] = (unsigned char)v;
	(*n)++;
	return q;
}

/* ip6-network as in RFC 4291 §2.2, all of [s, e) up to its first "/". */
static const unsigned char *parse_ip6(struct spfkit__term_parse *tp, const unsigned char *s,
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
	while (!spfkit__term_ip_end6(p, e)) {
		p = ip6_group(tp, p, e, a, &n, sec);
		if (p == NULL)
			return NULL;
		if (*p != ':') { /* the end, where a dotted quad always is */
			if (spfkit__term_ip_end6(p, e))
				break;
			return spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_CHAR, sec);
		}
		if (*++p == ':') {
			if (dc >= 0)
				return spfkit__term_parse_fail(tp, p - 1,
							       SPFKIT_REASON_IP6_DOUBLE_COLON, sec);
			dc = n;
			p++;
		} else if (spfkit__term_ip_end6(p, e)) {
			return spfkit__term_parse_fail(tp, p - 1, SPFKIT_REASON_IP6_COLON_END, sec);
		}
	}
	if (dc < 0 && n != 8)
		return spfkit__term_parse_fail(tp, s, SPFKIT_REASON_IP6_FORM, sec);
	if (dc >= 0 && n > 7)
		return spfkit__term_parse_fail(tp, s, SPFKIT_REASON_IP6_FULL_COLONS, sec);
	/* the groups after "::" go to the end; zeros fill the gap */
	for (i = 14, k = 2 * (n - 1); dc >= 0 && k >= 2 * dc; i -= 2, k -= 2) {
		a[i] = a[k];
		a[i + 1] = a[k + 1];
		a[k] = a[k + 1] = 0;
	}
	memcpy(out, a, sizeof(a));
	return p;
}

/* ip4 ":" ip4-network [ ip4-cidr-length ], from past the ":" to e. */
void spfkit__term_ip_mech4(struct spfkit__term_parse *tp, const unsigned char *p,
			   const unsigned char *e, const char *sec)
{
	p = spfkit__term_ip_ip4(tp, p, tp->t->ip, sec);
	if (p != NULL && *p == '/') {
		if (*++p == '/') {
			spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP4_IP6_CIDR, sec);
			return;
		}
		p = spfkit__term_ip_cidr(tp, p, 32, &tp->t->cidr4, SPFKIT_REASON_IP4_CIDR, sec);
	}
	if (p != NULL && p != e)
		spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP4_TEXT, sec);
}

/* ip6 ":" ip6-network [ ip6-cidr-length ], from past the ":" to e. */
void spfkit__term_ip_mech6(struct spfkit__term_parse *tp, const unsigned char *p,
			   const unsigned char *e, const char *sec)
{
	const unsigned char *end = spfkit__term_ip_plain6(p, e, tp->t->ip);

	p = end != NULL ? end : parse_ip6(tp, p, e, tp->t->ip, sec);
	if (p != NULL && p != e) { /* at the slash */
		if (*++p == '/') {
			spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_DOUBLE_SLASH, sec);
			return;
		}
		p = spfkit__term_ip_cidr(tp, p, 128, &tp->t->cidr6, SPFKIT_REASON_IP6_CIDR, sec);
	}
	if (p != NULL && p != e)
		spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_TEXT, sec);
}

