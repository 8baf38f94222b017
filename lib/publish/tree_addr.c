/*
 * Address counts of `spfkit tree`: the ranges a node's pass (+) terms
 * authorise, joined where they overlap, then counted per family. An
 * IPv6 count can reach 2^128 (::/0), one bit more than 128, so counts
 * are 128-bit pairs plus an "all" flag, printed in decimal by long
 * division over 32-bit limbs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish.h"

static int grow(struct tree_ranges *r)
{
	struct tree_range *p = spfkit__array_grow(r->items, &r->cap, r->n, sizeof(*p), 8);

	if (p == NULL)
		return SPFKIT_ENOMEM;
	r->items = p;
	return 0;
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* The host bits below a prefix of `bits` in a 64-bit half ([0, 64]). */
static uint64_t host_mask(unsigned bits)
{
	return bits >= 64 ? 0 : bits == 0 ? ~(uint64_t)0 : ~(uint64_t)0 >> bits;
}

int spfkit__tree_ranges_add(struct tree_ranges *r, int v6, const unsigned char *addr,
			    unsigned prefix)
{
	struct tree_range *x;
	uint64_t hm, lm;

	if (grow(r) != 0)
		return SPFKIT_ENOMEM;
	x = &r->items[r->n++];
	x->v6 = v6;
	if (!v6) {
		uint64_t a = (uint64_t)addr[0] << 24 | (uint64_t)addr[1] << 16 |
			     (uint64_t)addr[2] << 8 | addr[3];
		uint64_t m = prefix >= 32 ? 0 : ((uint64_t)1 << (32 - prefix)) - 1;

		x->first_hi = x->last_hi = 0;
		x->first_lo = a & ~m;
		x->last_lo = a | m;
		return 0;
	}
	hm = host_mask(prefix);
	lm = host_mask(prefix > 64 ? prefix - 64 : 0);
	x->first_hi = load64(addr) & ~hm;
	x->last_hi = load64(addr) | hm;
	x->first_lo = load64(addr + 8) & ~lm;
	x->last_lo = load64(addr + 8) | lm;
	return 0;
}

int spfkit__tree_ranges_merge_from(struct tree_ranges *dst, const struct tree_ranges *src)
{
	size_t i;

	for (i = 0; i < src->n; i++) {
		if (grow(dst) != 0)
			return SPFKIT_ENOMEM;
		dst->items[dst->n++] = src->items[i];
	}
	return 0;
}

static int cmp128(uint64_t ah, uint64_t al, uint64_t bh, uint64_t bl)
{
	if (ah != bh)
		return ah < bh ? -1 : 1;
	return al < bl ? -1 : al > bl;
}

static int by_start(const void *pa, const void *pb)
{
	const struct tree_range *a = pa, *b = pb;

	if (a->v6 != b->v6)
		return a->v6 - b->v6;
	return cmp128(a->first_hi, a->first_lo, b->first_hi, b->first_lo);
}

/* c += last - first + 1 */
static void count_add(struct tree_count *c, const struct tree_range *x)
{
	uint64_t lo = x->last_lo - x->first_lo;
	uint64_t hi = x->last_hi - x->first_hi - (x->last_lo < x->first_lo);
	uint64_t carry, old;

	lo += 1;
	hi += lo == 0; /* size - 1 was 2^128 - 1: hi wraps to 0, the count is 2^128 */
	if (lo == 0 && hi == 0) {
		c->all = 1;
		return;
	}
	c->lo += lo;
	carry = c->lo < lo;
	old = c->hi;
	c->hi += hi;
	if (c->hi < old)
		c->all = 1; /* disjoint ranges add up to at most 2^128 */
	c->hi += carry;
	if (carry && c->hi == 0)
		c->all = 1;
	if (c->all)
		c->hi = c->lo = 0;
}

/* Does b start right after a ends, or inside it? */
static int touches(const struct tree_range *a, const struct tree_range *b)
{
	uint64_t nh = a->last_hi, nl = a->last_lo + 1;

	if (a->v6 != b->v6)
		return 0;
	if (!a->v6)
		return b->first_lo <= a->last_lo + 1;
	nh += nl == 0;
	if (nl == 0 && nh == 0)
		return 1; /* a ends at the last address */
	return cmp128(b->first_hi, b->first_lo, nh, nl) <= 0;
}

void spfkit__tree_ranges_union(struct tree_ranges *r, struct tree_count *v4, struct tree_count *v6)
{
	size_t i, out = 0;

	memset(v4, 0, sizeof(*v4));
	memset(v6, 0, sizeof(*v6));
	if (r->n == 0)
		return;
	qsort(r->items, r->n, sizeof(*r->items), by_start);
	for (i = 1; i < r->n; i++) {
		struct tree_range *a = &r->items[out], *b = &r->items[i];

		if (touches(a, b)) {
			if (cmp128(b->last_hi, b->last_lo, a->last_hi, a->last_lo) > 0) {
				a->last_hi = b->last_hi;
				a->last_lo = b->last_lo;
			}
			continue;
		}
		r->items[++out] = *b;
	}
	r->n = out + 1;
	for (i = 0; i < r->n; i++)
		count_add(r->items[i].v6 ? v6 : v4, &r->items[i]);
}

void spfkit__tree_ranges_free(struct tree_ranges *r)
{
	spfkit__free(NULL, r->items);
	memset(r, 0, sizeof(*r));
}

const char *spfkit__tree_count_str(const struct tree_count *c, char *buf, size_t size)
{
	uint32_t limb[4] = { (uint32_t)(c->hi >> 32), (uint32_t)c->hi, (uint32_t)(c->lo >> 32),
			     (uint32_t)c->lo };
	char tmp[48];
	size_t n = 0, i;
	int nonzero = 1;

	if (c->all) {
		snprintf(buf, size, "340282366920938463463374607431768211456");
		return buf;
	}
	while (nonzero && n < sizeof(tmp)) {
		uint64_t rem = 0;

		nonzero = 0;
		for (i = 0; i < 4; i++) {
			uint64_t cur = rem << 32 | limb[i];

			limb[i] = (uint32_t)(cur / 10);
			rem = cur % 10;
			nonzero |= limb[i] != 0;
		}
		tmp[n++] = (char)('0' + rem);
	}
	for (i = 0; i < n && i + 1 < size; i++)
		buf[i] = tmp[n - 1 - i];
	buf[i] = '\0';
	return buf;
}

int spfkit__tree_count_log2(const struct tree_count *c)
{
	uint64_t v = c->hi != 0 ? c->hi : c->lo;
	int n = c->hi != 0 ? 64 : 0;

	if (c->all)
		return 128;
	if (v == 0 || (c->hi != 0 && c->lo != 0) || (v & (v - 1)) != 0)
		return -1;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

/* Below this, a count that is not a power of two is short enough in decimal. */
#define COUNT_DECIMAL_MAX ((uint64_t)1 << 20)

/*
 * floor(log2 c) and log2 c rounded to tenths, without libm: c = m * 2^p
 * with m in [1, 2) (53 bits of it), and round(10 log2 m) is the number
 * of k in 0..9 with m^20 >= 2^(2k+1); m^20 < 2^20 stays exact enough.
 */
static unsigned count_log2_tenths(const struct tree_count *c)
{
	uint64_t v = c->hi != 0 ? c->hi : c->lo;
	unsigned p = c->hi != 0 ? 64 : 0, top = 0, k, tenths = 0;
	double m, m4, m20;
	int i;

	while (top < 63 && (v >> (top + 1)) != 0)
		top++;
	p += top;
	/* the 53 bits below the top one, from hi and lo */
	m = 1.0;
	for (i = 1; i <= 52 && (unsigned)i <= p; i++) {
		unsigned bit = p - (unsigned)i;
		uint64_t word = bit >= 64 ? c->hi : c->lo;

		if ((word >> (bit % 64)) & 1)
			m += 1.0 / (double)((uint64_t)1 << i);
	}
	m4 = m * m;
	m4 = m4 * m4;
	m20 = m4 * m4;    /* m^8 */
	m20 = m20 * m20;  /* m^16 */
	m20 = m20 * m4;
	for (k = 0; k < 10; k++)
		tenths += m20 >= (double)((uint64_t)1 << (2 * k + 1));
	return p * 10 + tenths;
}

/* c as "2^a + 2^b + r" when at most COUNT_SUM_MAX bits from 2^16 up are
 * set (r < 2^16, left out when 0); 0 when more are. */
#define COUNT_SUM_MAX 3
static int count_as_sum(const struct tree_count *c, char *buf, size_t size)
{
	unsigned bits[COUNT_SUM_MAX], n = 0, b;
	size_t used = 0;
	int w;

	for (b = 127; b >= 16; b--) {
		uint64_t word = b >= 64 ? c->hi : c->lo;

		if (!((word >> (b % 64)) & 1))
			continue;
		if (n == COUNT_SUM_MAX)
			return 0;
		bits[n++] = b;
	}
	buf[0] = '\0';
	for (b = 0; b < n; b++) {
		w = snprintf(buf + used, size - used, "%s2^%u", b ? " + " : "", bits[b]);
		if (w < 0 || (size_t)w >= size - used)
			return 0;
		used += (size_t)w;
	}
	if ((c->lo & 0xffff) != 0) {
		w = snprintf(buf + used, size - used, " + %u", (unsigned)(c->lo & 0xffff));
		if (w < 0 || (size_t)w >= size - used)
			return 0;
	}
	return 1;
}

const char *spfkit__tree_count_text(const struct tree_count *c, char *buf, size_t size)
{
	int l = spfkit__tree_count_log2(c);
	unsigned t;

	if (l >= 16) {
		snprintf(buf, size, "2^%d", l);
		return buf;
	}
	if (c->hi == 0 && c->lo < COUNT_DECIMAL_MAX)
		return spfkit__tree_count_str(c, buf, size);
	/* a 26-digit number reads as nothing: powers of two do (a /48 and a
	 * /64 are "2^80 + 2^64"), and past three of them, the size to a tenth */
	if (count_as_sum(c, buf, size))
		return buf;
	t = count_log2_tenths(c);
	snprintf(buf, size, "~2^%u.%u", t / 10, t % 10);
	return buf;
}
