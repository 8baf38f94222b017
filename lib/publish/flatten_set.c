/*
 * Address sets of `spfkit flatten`: tree_addr.c's ranges (IPv4 in the
 * low 32 bits, IPv6 as two 64-bit halves), kept normal by its union,
 * with the difference flatten needs to take what earlier terms decided
 * away from what a later term names (RFC 7208 §4.6.2: the first
 * matching term decides), and the split of a range into the fewest
 * aligned CIDR blocks for ip4:/ip6: terms (§5.6).
 */
#include <stdio.h>
#include <string.h>

#include "publish.h"

struct u128 {
	uint64_t hi, lo;
};

static int cmp(struct u128 a, struct u128 b)
{
	if (a.hi != b.hi)
		return a.hi < b.hi ? -1 : 1;
	return a.lo < b.lo ? -1 : a.lo > b.lo;
}

static struct u128 first_of(const struct tree_range *r)
{
	struct u128 v = { r->first_hi, r->first_lo };

	return v;
}

static struct u128 last_of(const struct tree_range *r)
{
	struct u128 v = { r->last_hi, r->last_lo };

	return v;
}

/* v + 1 and v - 1; callers never step past the ends of the family's space */
static struct u128 inc(struct u128 v)
{
	v.lo++;
	v.hi += v.lo == 0;
	return v;
}

static struct u128 dec(struct u128 v)
{
	v.hi -= v.lo == 0;
	v.lo--;
	return v;
}

static int push(struct tree_ranges *s, int v6, struct u128 first, struct u128 last)
{
	struct tree_range *p;

	p = spfkit__array_grow(s->items, &s->cap, s->n, sizeof(*p), 8);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	s->items = p;
	p = &s->items[s->n++];
	p->v6 = v6;
	p->first_hi = first.hi;
	p->first_lo = first.lo;
	p->last_hi = last.hi;
	p->last_lo = last.lo;
	return 0;
}

int spfkit__flat_set_normalize(struct tree_ranges *s)
{
	struct tree_count c4, c6;

	spfkit__tree_ranges_union(s, &c4, &c6); /* sorts, joins overlapping and touching ranges */
	return 0;
}

int spfkit__flat_set_add_prefix(struct tree_ranges *s, int v6, const unsigned char *addr,
				unsigned prefix)
{
	if (prefix > (v6 ? 128u : 32u))
		prefix = v6 ? 128u : 32u;
	if (spfkit__tree_ranges_add(s, v6, addr, prefix) != 0)
		return SPFKIT_ENOMEM;
	return spfkit__flat_set_normalize(s);
}

int spfkit__flat_set_union(struct tree_ranges *dst, const struct tree_ranges *src)
{
	if (src->n == 0)
		return 0;
	if (spfkit__tree_ranges_merge_from(dst, src) != 0)
		return SPFKIT_ENOMEM;
	return spfkit__flat_set_normalize(dst);
}

int spfkit__flat_set_copy(struct tree_ranges *dst, const struct tree_ranges *src)
{
	dst->n = 0;
	return spfkit__tree_ranges_merge_from(dst, src) != 0 ? SPFKIT_ENOMEM : 0;
}

/* The parts of x that no range of b from index *j on covers (b normal, sorted). */
static int minus_one(struct tree_ranges *out, const struct tree_range *x,
		     const struct tree_ranges *b, size_t *j)
{
	struct u128 cur = first_of(x), end = last_of(x);
	size_t k;

	while (*j < b->n && (b->items[*j].v6 < x->v6 ||
			     (b->items[*j].v6 == x->v6 && cmp(last_of(&b->items[*j]), cur) < 0)))
		(*j)++;
	for (k = *j; k < b->n && b->items[k].v6 == x->v6; k++) {
		const struct tree_range *y = &b->items[k];

		if (cmp(first_of(y), end) > 0)
			break;
		if (cmp(first_of(y), cur) > 0 && push(out, x->v6, cur, dec(first_of(y))) != 0)
			return SPFKIT_ENOMEM;
		if (cmp(last_of(y), end) >= 0)
			return 0; /* the rest of x is covered */
		cur = inc(last_of(y));
	}
	return push(out, x->v6, cur, end);
}

int spfkit__flat_set_minus(struct tree_ranges *out, const struct tree_ranges *a,
			   const struct tree_ranges *b)
{
	size_t i, j = 0;

	out->n = 0;
	for (i = 0; i < a->n; i++)
		if (minus_one(out, &a->items[i], b, &j) != 0)
			return SPFKIT_ENOMEM;
	return 0;
}

int spfkit__flat_set_universe(struct tree_ranges *s)
{
	struct u128 zero = { 0, 0 }, top4 = { 0, 0xffffffffu }, top6 = { ~(uint64_t)0, ~(uint64_t)0 };

	s->n = 0;
	if (push(s, 0, zero, top4) != 0 || push(s, 1, zero, top6) != 0)
		return SPFKIT_ENOMEM;
	return 0;
}

int spfkit__flat_set_equal(const struct tree_ranges *a, const struct tree_ranges *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->items[i].v6 != b->items[i].v6 ||
		    cmp(first_of(&a->items[i]), first_of(&b->items[i])) != 0 ||
		    cmp(last_of(&a->items[i]), last_of(&b->items[i])) != 0)
			return 0;
	return 1;
}

/* ---- CIDR blocks ---------------------------------------------------------- */

/* The low k bits set (k in [0, 128]). */
static struct u128 low_mask(unsigned k)
{
	struct u128 m = { 0, 0 };

	if (k >= 128) {
		m.hi = m.lo = ~(uint64_t)0;
	} else if (k >= 64) {
		m.lo = ~(uint64_t)0;
		m.hi = k == 64 ? 0 : ((uint64_t)1 << (k - 64)) - 1;
	} else {
		m.lo = k == 0 ? 0 : ((uint64_t)1 << k) - 1;
	}
	return m;
}

static unsigned trailing_zeros(struct u128 v, unsigned bits)
{
	unsigned n = 0;

	while (n < bits) {
		uint64_t word = n < 64 ? v.lo : v.hi;

		if ((word >> (n % 64)) & 1)
			break;
		n++;
	}
	return n;
}

static void to_bytes(int v6, struct u128 v, unsigned char *addr)
{
	int i;

	memset(addr, 0, 16);
	if (!v6) {
		for (i = 0; i < 4; i++)
			addr[i] = (unsigned char)(v.lo >> (24 - 8 * i));
		return;
	}
	for (i = 0; i < 8; i++) {
		addr[i] = (unsigned char)(v.hi >> (56 - 8 * i));
		addr[8 + i] = (unsigned char)(v.lo >> (56 - 8 * i));
	}
}

static int add_cidr(struct flat_cidrs *c, int v6, struct u128 first, unsigned prefix)
{
	struct flat_cidr *p;

	p = spfkit__array_grow(c->items, &c->cap, c->n, sizeof(*p), 16);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	c->items = p;
	p = &c->items[c->n++];
	p->v6 = v6;
	p->prefix = prefix;
	to_bytes(v6, first, p->addr);
	return 0;
}

/* Largest aligned block from `first` inside [first, last], repeated. */
static int range_cidrs(const struct tree_range *r, struct flat_cidrs *out)
{
	unsigned bits = r->v6 ? 128 : 32;
	struct u128 first = first_of(r), last = last_of(r), end, m;
	unsigned k;

	for (;;) {
		k = trailing_zeros(first, bits);
		for (;;) {
			m = low_mask(k);
			end.hi = first.hi | m.hi;
			end.lo = first.lo | m.lo;
			if (k == 0 || cmp(end, last) <= 0)
				break;
			k--;
		}
		if (add_cidr(out, r->v6, first, bits - k) != 0)
			return SPFKIT_ENOMEM;
		if (cmp(end, last) >= 0)
			return 0;
		first = inc(end);
	}
}

int spfkit__flat_set_cidrs(const struct tree_ranges *s, struct flat_cidrs *out)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (range_cidrs(&s->items[i], out) != 0)
			return SPFKIT_ENOMEM;
	return 0;
}

void spfkit__flat_cidrs_free(struct flat_cidrs *c)
{
	spfkit__free(NULL, c->items);
	memset(c, 0, sizeof(*c));
}

const char *spfkit__flat_cidr_term(const struct flat_cidr *c, char *buf, size_t size)
{
	struct spfkit_ip ip;
	char text[SPFKIT_IP_TEXT_MAX];

	ip.family = c->v6 ? 6 : 4;
	memcpy(ip.addr, c->addr, sizeof(ip.addr));
	spfkit_ip_format(&ip, text, sizeof(text));
	if (c->prefix == (c->v6 ? 128u : 32u))
		snprintf(buf, size, "%s:%s", c->v6 ? "ip6" : "ip4", text);
	else
		snprintf(buf, size, "%s:%s/%u", c->v6 ? "ip6" : "ip4", text, c->prefix);
	return buf;
}

void spfkit__flat_range_ip(const struct tree_range *r, int last, struct spfkit_ip *out)
{
	struct u128 v = last ? last_of(r) : first_of(r);

	out->family = r->v6 ? 6 : 4;
	to_bytes(r->v6, v, out->addr);
}
