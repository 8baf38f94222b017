/*
 * covered-by-include (issue 31): the same addresses authorized twice,
 * once by a term of the top record (ip4, ip6, or the addresses of an a
 * or mx term) and once by a record an include of it reaches. The walk
 * (lint_walk.c) hands over what it already has: the ranges of the pass
 * terms it walks, and the A/AAAA answers of a and mx; nothing here asks
 * DNS. The sets are flatten_set.c's.
 */
#include <string.h>

#include "publish.h"

void spfkit__lint_cover_free(struct lint_cover *c)
{
	size_t i;

	for (i = 0; i < c->ninc; i++) {
		spfkit__tree_ranges_free(&c->incs[i].set);
		spfkit__tree_ranges_free(&c->incs[i].excl);
	}
	for (i = 0; i < c->nterms; i++) {
		spfkit__tree_ranges_free(&c->terms[i].set);
		spfkit__tree_ranges_free(&c->terms[i].excl);
	}
	spfkit__free(NULL, c->incs);
	spfkit__free(NULL, c->terms);
	memset(c, 0, sizeof(*c));
	c->cur = -1;
}

static void oom(struct lint_cover *c)
{
	if (c->err == 0)
		c->err = SPFKIT_ENOMEM;
}

/* A new set at the end of *items (n, cap); its index, or -1. */
static long new_set(struct lint_cover *c, struct lint_report *r, struct lint_cover_set **items,
		    size_t *n, size_t *cap, const char *term, size_t len, long offset)
{
	struct lint_cover_set *p;

	p = spfkit__array_grow(*items, cap, *n, sizeof(*p), 8);
	if (p == NULL) {
		oom(c);
		return -1;
	}
	*items = p;
	p = &p[*n];
	memset(p, 0, sizeof(*p));
	p->term = spfkit__lint_strndup(r, term, len);
	p->len = len;
	p->offset = offset;
	if (p->term == NULL)
		return -1;
	return (long)(*n)++;
}

void spfkit__lint_cover_begin_include(struct lint_cover *c, struct lint_report *r,
				      const char *term, size_t len, long offset)
{
	c->cur = new_set(c, r, &c->incs, &c->ninc, &c->capinc, term, len, offset);
}

void spfkit__lint_cover_end_include(struct lint_cover *c)
{
	c->cur = -1;
}

long spfkit__lint_cover_term(struct lint_cover *c, struct lint_report *r, const char *term,
			     size_t len, long offset)
{
	return new_set(c, r, &c->terms, &c->nterms, &c->capterms, term, len, offset);
}

/* Appended only (each add sorting the set would be quadratic); the report normalizes. */
void spfkit__lint_cover_add(struct lint_cover *c, struct lint_cover_set *s, int excl, int v6,
			    const unsigned char *addr, unsigned prefix)
{
	if (s == NULL || c->overflow)
		return;
	if (++c->ranges > LINT_COVER_MAX_RANGES) {
		c->overflow = 1;
		return;
	}
	if (prefix > (v6 ? 128u : 32u))
		prefix = v6 ? 128u : 32u;
	if (spfkit__tree_ranges_add(excl ? &s->excl : &s->set, v6, addr, prefix) != 0)
		oom(c);
}

void spfkit__lint_cover_add_answer(struct lint_cover *c, struct lint_cover_set *s, int excl,
				   const struct lint_answer *a, int v6, unsigned prefix)
{
	size_t i;

	if (s == NULL || a == NULL || a->status != SPFKIT_DNS_OK)
		return;
	for (i = 0; i < a->count; i++)
		if (a->rrs[i].len == (v6 ? 16u : 4u))
			spfkit__lint_cover_add(c, s, excl, v6, a->rrs[i].data, prefix);
}

/*
 * Where a term's addresses go: a pass term of the top record (depth 1)
 * to its own set, a term of a top include's tree to that include's, its
 * pass set when it passes there, else (*excl) the ranges that keep a
 * term of the top record from being called covered; NULL: nowhere.
 */
struct lint_cover_set *spfkit__lint_cover_into(struct lint_cover *c, size_t depth,
					       const struct spfkit_term *t, int *excl)
{
	*excl = t->qualifier != '+' || c->not_pass > 0;
	if (depth == 1)
		return *excl ? NULL : c->top_term;
	if (c->cur >= 0)
		return &c->incs[c->cur];
	return NULL;
}

/* The A and AAAA answers of an a term or an MX host, with the term's CIDR lengths (§5.3). */
void spfkit__lint_cover_answers(struct lint_cover *c, size_t depth, const struct spfkit_term *t,
				const struct lint_answer *a4, const struct lint_answer *a6)
{
	int excl;
	struct lint_cover_set *s = spfkit__lint_cover_into(c, depth, t, &excl);

	if (s == NULL)
		return;
	if (a4->status == SPFKIT_DNS_TEMPFAIL || a6->status == SPFKIT_DNS_TEMPFAIL)
		s->unknown = 1;
	spfkit__lint_cover_add_answer(c, s, excl, a4, 0, t->cidr4);
	spfkit__lint_cover_add_answer(c, s, excl, a6, 1, t->cidr6);
}

/* a before b: IPv4 first, then by first address (the order of a normal set). */
static int starts_before(const struct tree_range *a, const struct tree_range *b)
{
	if (a->v6 != b->v6)
		return a->v6 < b->v6;
	if (a->first_hi != b->first_hi)
		return a->first_hi < b->first_hi;
	return a->first_lo < b->first_lo;
}

static int ends_within(const struct tree_range *x, const struct tree_range *r)
{
	if (x->last_hi != r->last_hi)
		return x->last_hi < r->last_hi;
	return x->last_lo <= r->last_lo;
}

/* The ranges of normal b: the first one starting after x's first address. */
static size_t after(const struct tree_range *x, const struct tree_ranges *b)
{
	size_t lo = 0, hi = b->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (starts_before(x, &b->items[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Does some address of a lie in b (both normal)? */
static int touches(const struct tree_ranges *a, const struct tree_ranges *b)
{
	size_t i, k;

	for (i = 0; i < a->n; i++) {
		const struct tree_range *x = &a->items[i], *y;

		k = after(x, b);
		y = k > 0 ? &b->items[k - 1] : NULL; /* starts at or before x */
		if (y != NULL && y->v6 == x->v6 &&
		    (y->last_hi > x->first_hi ||
		     (y->last_hi == x->first_hi && y->last_lo >= x->first_lo)))
			return 1;
		y = k < b->n ? &b->items[k] : NULL; /* starts after x's start */
		if (y != NULL && y->v6 == x->v6 &&
		    (y->first_hi < x->last_hi ||
		     (y->first_hi == x->last_hi && y->first_lo <= x->last_lo)))
			return 1;
	}
	return 0;
}

/*
 * Is every address of a inside b? Both normal: ranges neither overlap
 * nor touch, so a covered range lies within one range of b, the last one
 * starting at or before it (a binary search: a hostile tree's sets may be
 * large).
 */
static int inside(const struct tree_ranges *a, const struct tree_ranges *b)
{
	size_t i, lo;

	for (i = 0; i < a->n; i++) {
		const struct tree_range *x = &a->items[i];

		lo = after(x, b);
		if (lo == 0 || b->items[lo - 1].v6 != x->v6 || !ends_within(x, &b->items[lo - 1]))
			return 0;
	}
	return 1;
}

void spfkit__lint_cover_report(struct lint_cover *c, struct lint_report *r, const char *domain)
{
	const struct lint_cover_set *t, *inc;
	size_t i, j;

	if (c->overflow || c->err != 0)
		return;
	for (i = 0; i < c->ninc; i++) {
		spfkit__flat_set_normalize(&c->incs[i].set);
		spfkit__flat_set_normalize(&c->incs[i].excl);
	}
	for (i = 0; i < c->nterms; i++)
		spfkit__flat_set_normalize(&c->terms[i].set);
	for (i = 0; i < c->nterms; i++) {
		t = &c->terms[i];
		if (t->set.n == 0 || t->unknown)
			continue; /* nothing known to compare */
		for (j = 0; j < c->ninc; j++) {
			inc = &c->incs[j];
			/* a -ip4 of the include's tree may keep some of these
			 * addresses out of its pass set: not called covered then */
			if (inc->set.n == 0 || !inside(&t->set, &inc->set) ||
			    touches(&t->set, &inc->excl))
				continue;
			spfkit__lint_add(r, L_COVERED_BY_INCLUDE, domain, t->term, t->len, t->offset,
					 NULL,
					 "every address this term authorizes is also authorized by "
					 "\"%.*s\" (offset %ld), whose records list it: it is "
					 "authorized twice%s",
					 (int)(inc->len < 200 ? inc->len : 200), inc->term, inc->offset,
					 t->lookup ? "; removing the term saves one DNS-querying "
						     "term (RFC 7208 section 4.6.4)"
						   : "");
			break;
		}
	}
}
