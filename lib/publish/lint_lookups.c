/*
 * The terms of lint's walk that look things up (RFC 7208 §5): a, mx and
 * its hosts, exists, ptr, and exp= (§6.2), each asked as the evaluator
 * asks it and charged as it charges (lint_count.c); and a record's
 * questions asked together before the walk reads them from the cache.
 */
#include "domain.h"
#include "lint_walk.h"

#define MX_SHOWN 10u /* §4.6.4: "no more than 10" MX names looked up */

void spfkit__lint_lookups_want(struct prefetch *p, const char *name, size_t len, uint16_t type)
{
	if (p->n < PREFETCH_MAX) {
		p->q[p->n].name = name;
		p->q[p->n].len = len;
		p->q[p->n].type = type;
		p->n++;
	}
}

/* What lint_walk.c's walk_domain_body() asks first at a domain it enters. */
static void want_domain(struct prefetch *p, const char *name, size_t len)
{
	spfkit__lint_lookups_want(p, name, len, SPFKIT_RR_TXT);
	spfkit__lint_lookups_want(p, name, len, SPFKIT_RR_SPF);
	spfkit__lint_lookups_want(p, name, len, SPFKIT_RR_TXT_STRINGS);
}

/* The target of a term: its domain-spec when it has no macros, else the domain. */
int spfkit__lint_lookups_target(const struct node *n, const struct spfkit_term *t,
				const char **name, size_t *len)
{
	if (!t->has_domain) {
		*name = n->domain;
		*len = n->dlen;
		return n->dlen > 0;
	}
	if (t->domain.letters != 0)
		return 0;
	*name = t->domain.src;
	*len = spfkit__domain_trim(t->domain.src, t->domain.src_len);
	return 1;
}

void spfkit__lint_lookups_dynamic(struct walk *w, const struct node *n, const struct spfkit_term *t)
{
	w->r->counts.dynamic = 1;
	spfkit__lint_add(
		w->r, L_DYNAMIC_TARGET, n->domain, n->rec->text + t->offset, t->len,
		(long)t->offset, NULL,
		"the target depends on the sender or client (macros): counted as one DNS term%s, "
		"not followed",
		t->mech == SPFKIT_MECH_INCLUDE || t->is_modifier ? "" : " and one void lookup");
}

/* "a": A for IPv4 clients, AAAA for IPv6 ones (§5.3). */
void spfkit__lint_lookups_a(struct walk *w, const struct node *n, const struct spfkit_term *t,
			    const char *name, size_t len)
{
	const struct lint_answer *a4, *a6;

	if (spfkit__lint_count_ask(w, name, len, SPFKIT_RR_A, &a4) != 0 ||
	    spfkit__lint_count_ask(w, name, len, SPFKIT_RR_AAAA, &a6) != 0)
		return;
	spfkit__lint_count_charge(w, 0, name, len, SPFKIT_RR_A, a4);
	spfkit__lint_count_charge(w, 1, name, len, SPFKIT_RR_AAAA, a6);
	spfkit__lint_observe_addresses(w, t, a4, a6);
	spfkit__lint_cover_answers(&w->cover, w->depth, t, a4, a6);
	if (spfkit__lint_count_tempfail(w, n->domain, name, len, SPFKIT_RR_A, a4) ||
	    spfkit__lint_count_tempfail(w, n->domain, name, len, SPFKIT_RR_AAAA, a6))
		return;
	if (a4->count == 0 && a6->count == 0)
		spfkit__lint_add(
			w->r, L_TARGET_NO_ADDRESS, n->domain, n->rec->text + t->offset, t->len,
			(long)t->offset, NULL,
			"%.*s has no A or AAAA record: the term matches nothing and costs a void "
			"lookup",
			(int)(len < 200 ? len : 200), name);
}

/* Remember an mx term whose hosts pyspf charges; the finding waits for the whole walk. */
static void note_short_mx(struct walk *w, const struct node *n, const struct spfkit_term *t,
			  const unsigned hosts[2])
{
	struct short_mx *s;

	s = spfkit__array_grow(w->short_mx, &w->capshort_mx, w->nshort_mx, sizeof(*s), 32);
	if (s == NULL) {
		w->err = SPFKIT_ENOMEM;
		return;
	}
	w->short_mx = s;
	s = &w->short_mx[w->nshort_mx];
	s->domain = n->domain;
	s->term = spfkit__lint_strndup(w->r, n->rec->text + t->offset, t->len);
	s->term_len = t->len;
	s->offset = (long)t->offset;
	s->hosts[0] = hosts[0];
	s->hosts[1] = hosts[1];
	if (s->term != NULL)
		w->nshort_mx++;
}

/* An MX record's exchange that names no host: empty, or "." (null MX, RFC 7505). */
int spfkit__lint_lookups_mx_no_host(const struct spfkit_dns_rr *rr)
{
	return rr->len == 0 || (rr->len == 1 && rr->data[0] == '.');
}

/* The hosts of one MX answer: asked as the evaluator asks them, never charged. */
static void mx_hosts(struct walk *w, const struct node *n, const struct spfkit_term *t,
		     const struct lint_answer *mx)
{
	const struct lint_answer *a4, *a6;
	unsigned looked = 0, empty[2] = { 0, 0 };
	struct prefetch p;
	size_t i;

	for (i = 0, p.n = 0; i < mx->count && looked < MX_SHOWN; i++) {
		const char *h = (const char *)mx->rrs[i].data;
		size_t hl = mx->rrs[i].len;

		if (spfkit__lint_lookups_mx_no_host(&mx->rrs[i]))
			continue;
		looked++;
		spfkit__lint_lookups_want(&p, h, hl, SPFKIT_RR_A);
		spfkit__lint_lookups_want(&p, h, hl, SPFKIT_RR_AAAA);
	}
	spfkit__lint_dns_prefetch(w->dns, p.q, p.n);
	for (i = 0, looked = 0; i < mx->count && looked < MX_SHOWN; i++) {
		const char *h = (const char *)mx->rrs[i].data;
		size_t hl = mx->rrs[i].len;

		if (spfkit__lint_lookups_mx_no_host(&mx->rrs[i]))
			continue;
		looked++;
		if (spfkit__lint_count_ask(w, h, hl, SPFKIT_RR_A, &a4) != 0 ||
		    spfkit__lint_count_ask(w, h, hl, SPFKIT_RR_AAAA, &a6) != 0)
			return;
		spfkit__lint_observe_addresses(w, t, a4, a6);
		spfkit__lint_cover_answers(&w->cover, w->depth, t, a4, a6);
		if (spfkit__lint_count_tempfail(w, n->domain, h, hl, SPFKIT_RR_A, a4) ||
		    spfkit__lint_count_tempfail(w, n->domain, h, hl, SPFKIT_RR_AAAA, a6))
			continue;
		empty[0] += a4->count == 0;
		empty[1] += a6->count == 0;
		if (a4->count == 0 && a6->count == 0)
			spfkit__lint_add(w->r, L_TARGET_NO_ADDRESS, n->domain,
					 n->rec->text + t->offset, t->len, (long)t->offset, NULL,
					 "MX host %.*s has no A or AAAA record",
					 (int)(hl < 200 ? hl : 200), h);
	}
	if (empty[0] + empty[1] > 0)
		note_short_mx(w, n, t, empty);
}

/* "mx" (§5.4): one term; more than 10 hosts to look up is permerror (§4.6.4). */
void spfkit__lint_lookups_mx(struct walk *w, const struct node *n, const struct spfkit_term *t,
			     const char *name, size_t len)
{
	const struct lint_answer *mx;
	size_t i, hosts = 0;

	if (spfkit__lint_count_ask(w, name, len, SPFKIT_RR_MX, &mx) != 0)
		return;
	spfkit__lint_count_charge(w, 0, name, len, SPFKIT_RR_MX, mx);
	spfkit__lint_count_charge(w, 1, name, len, SPFKIT_RR_MX, mx);
	if (spfkit__lint_count_tempfail(w, n->domain, name, len, SPFKIT_RR_MX, mx))
		return;
	for (i = 0; i < mx->count; i++)
		hosts += !spfkit__lint_lookups_mx_no_host(&mx->rrs[i]);
	if (mx->count > 0 && hosts == 0) {
		spfkit__lint_add(w->r, L_NULL_MX, n->domain, n->rec->text + t->offset, t->len,
				 (long)t->offset, NULL,
				 "%.*s has a null MX (\"MX 0 .\"): this term matches nothing",
				 (int)(len < 200 ? len : 200), name);
		return;
	}
	if (hosts > MX_SHOWN) {
		w->fatal = 1;
		spfkit__lint_add(w->r, L_MX_OVER_10, n->domain, n->rec->text + t->offset, t->len,
				 (long)t->offset, NULL,
				 "%.*s has %zu MX hosts; receivers look up at most %u",
				 (int)(len < 200 ? len : 200), name, hosts, MX_SHOWN);
	}
	if (mx->count == 0)
		spfkit__lint_add(
			w->r, L_TARGET_NO_ADDRESS, n->domain, n->rec->text + t->offset, t->len,
			(long)t->offset, NULL,
			"%.*s has no MX record: the term matches nothing and costs a void lookup",
			(int)(len < 200 ? len : 200), name);
	mx_hosts(w, n, t, mx);
}

/* "exists" (§5.7): an A question whatever the client's family. */
void spfkit__lint_lookups_exists(struct walk *w, const struct node *n, const char *name, size_t len)
{
	const struct lint_answer *a;

	if (spfkit__lint_count_ask(w, name, len, SPFKIT_RR_A, &a) != 0)
		return;
	spfkit__lint_count_charge(w, 0, name, len, SPFKIT_RR_A, a);
	spfkit__lint_count_charge(w, 1, name, len, SPFKIT_RR_A, a);
	spfkit__lint_count_tempfail(w, n->domain, name, len, SPFKIT_RR_A, a);
}

/* "ptr" (§5.5): the client's reverse name; for a client with none, a void. */
void spfkit__lint_lookups_ptr(struct walk *w)
{
	spfkit__lint_count_void(w, 0, "PTR", "(the client's reverse name)", 28);
	spfkit__lint_count_void(w, 1, "PTR", "(the client's reverse name)", 28);
}

/* exp= of the checked domain (§6.2): one TXT record, or no explanation. */
void spfkit__lint_lookups_exp(struct walk *w, const struct node *n)
{
	const struct spfkit_term *t = &n->rec->terms[n->rec->exp];
	const struct lint_answer *a;
	const char *name;
	size_t len;

	if (!spfkit__lint_lookups_target(n, t, &name, &len) || !spfkit__domain_valid(name, len))
		return;
	if (spfkit__lint_count_ask(w, name, len, SPFKIT_RR_TXT, &a) != 0 ||
	    a->status == SPFKIT_DNS_TEMPFAIL)
		return;
	if (a->count != 1)
		spfkit__lint_add(w->r, L_EXP_TARGET, n->domain, n->rec->text + t->offset, t->len,
				 (long)t->offset, NULL,
				 "%.*s has %zu TXT records: receivers give no explanation",
				 (int)(len < 200 ? len : 200), name, a->count);
}

/* The questions of the terms up to the first all, and of the redirect
 * when there is none: those lint_walk.c's walk_terms() is about to ask. */
void spfkit__lint_lookups_prefetch(struct walk *w, const struct node *n)
{
	const struct spfkit_record *rec = n->rec;
	const struct spfkit_term *t;
	struct prefetch p;
	const char *name;
	size_t i, len;

	p.n = 0;
	for (i = 0; i < rec->count; i++) {
		t = &rec->terms[i];
		if (t->is_modifier)
			continue;
		if (t->mech == SPFKIT_MECH_ALL)
			break;
		if (!spfkit__lint_lookups_target(n, t, &name, &len) ||
		    !spfkit__domain_valid(name, len))
			continue;
		if (t->mech == SPFKIT_MECH_A) {
			spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_A);
			spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_AAAA);
		} else if (t->mech == SPFKIT_MECH_MX) {
			spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_MX);
		} else if (t->mech == SPFKIT_MECH_EXISTS) {
			spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_A);
		} else if (t->mech == SPFKIT_MECH_INCLUDE && w->depth < WALK_MAX_DEPTH) {
			want_domain(&p, name, len);
		}
	}
	if (i == rec->count && rec->redirect >= 0 && w->depth < WALK_MAX_DEPTH &&
	    spfkit__lint_lookups_target(n, &rec->terms[rec->redirect], &name, &len) &&
	    spfkit__domain_valid(name, len))
		want_domain(&p, name, len);
	spfkit__lint_dns_prefetch(w->dns, p.q, p.n);
}
