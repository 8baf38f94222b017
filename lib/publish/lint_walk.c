/*
 * The include/redirect tree of `spfkit lint`, walked in evaluation
 * order as a client that matches nothing would walk it: every term up
 * to the first all, includes in full, redirect= when there is no all.
 * That client is the worst case of RFC 7208 §4.6.4 (a client matching
 * earlier stops earlier), and the counts follow the evaluator's rules
 * exactly (docs/lint.md, "Counting"):
 *
 *  - include a mx ptr exists redirect: one DNS term each; exp never;
 *  - mx: its host address lookups are limited to 10 but add no term;
 *  - a void lookup is a NODATA/NXDOMAIN answer to the question of an a,
 *    mx, ptr or exists term, counted each time a term asks it (the same
 *    name asked by two terms, or by one include reached twice, counts
 *    twice); an mx's host lookups are never counted; a asks A for an
 *    IPv4 client and AAAA for an IPv6 one, so the two families are
 *    counted apart; exists asks A for both;
 *  - a target made by macros cannot be known here: its term counts, and
 *    for a, mx, exists and ptr so does a void lookup (the worst case).
 *
 * `spfkit tree` watches this walk (lint_input.observe, lint_observe.c):
 * one walker, so tree's counts are lint's by construction. The pieces
 * of the walker and what they share: lint_walk.h.
 */
#include <stdio.h>
#include <string.h>

#include "domain.h"
#include "lint_walk.h"

#define WALK_MAX_RECORDS 500u /* records fetched in one run */

/* ---- a record's terms, include and redirect followed ----------------------- */

static int walk_domain(struct walk *w, const char *domain, size_t dlen, enum lint_how how,
		       const struct node *parent, const struct spfkit_term *via);

static int on_path(const struct walk *w, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < w->depth; i++)
		if (spfkit__memcaseeq(w->path[i], strlen(w->path[i]), name, len))
			return 1;
	return 0;
}

static void duplicate_include(struct walk *w, const struct node *n, const struct spfkit_term *t,
			      const char *name, size_t len)
{
	const char **included;
	size_t i;

	for (i = 0; i < w->nincluded; i++)
		if (spfkit__memcaseeq(w->included[i], strlen(w->included[i]), name, len)) {
			spfkit__lint_add(w->r, L_DUPLICATE_INCLUDE, n->domain,
					 n->rec->text + t->offset, t->len, (long)t->offset, NULL,
					 "%.*s is included more than once in the tree: each costs "
					 "its lookups again",
					 (int)(len < 200 ? len : 200), name);
			return;
		}
	included = spfkit__array_grow(w->included, &w->capincluded, w->nincluded,
				      sizeof(*included), 32);
	if (included == NULL) {
		w->err = SPFKIT_ENOMEM;
		return;
	}
	w->included = included;
	w->included[w->nincluded] = spfkit__lint_strndup(w->r, name, len);
	if (w->included[w->nincluded] != NULL)
		w->nincluded++;
}

/* include or redirect to a fixed name: loops, then the target's own walk. */
static int follow(struct walk *w, const struct node *n, const struct spfkit_term *t,
		  const char *name, size_t len, enum lint_how how)
{
	int loop = on_path(w, name, len);

	if (how == LINT_HOW_INCLUDE && !loop)
		duplicate_include(w, n, t, name, len);
	if (loop) {
		w->fatal = 1;
		w->r->counts.loop = 1;
		spfkit__lint_add(
			w->r, how == LINT_HOW_INCLUDE ? L_INCLUDE_LOOP : L_REDIRECT_LOOP, n->domain,
			n->rec->text + t->offset, t->len, (long)t->offset, NULL,
			"%.*s is already on this branch: evaluation goes round until the 10-term "
			"limit gives permerror",
			(int)(len < 200 ? len : 200), name);
		spfkit__lint_observe_leaf(
			w, name, len, how, n->rec->text, t, 1, 1,
			"already on this branch, not expanded again: evaluation goes round it "
			"until the 10-term limit gives permerror");
		return 0;
	}
	if (w->depth >= WALK_MAX_DEPTH)
		return 0; /* more than 10 terms on this branch already */
	if (how == LINT_HOW_INCLUDE && t->qualifier != '+') {
		int always;

		w->cover.not_pass++; /* its pass is the top's fail (or softfail...): not authorized */
		always = walk_domain(w, name, len, how, n, t);
		w->cover.not_pass--;
		return always;
	}
	return walk_domain(w, name, len, how, n, t);
}

/* One mechanism; 1 when it matches every client (the walk of this record stops). */
static int mechanism(struct walk *w, const struct node *n, const struct spfkit_term *t)
{
	const char *name;
	size_t len;

	spfkit__lint_observe_event(w, &(struct lint_walk_event){
		.kind = LW_TERM, .rec = n->rec, .term = t });
	if (t->mech == SPFKIT_MECH_ALL)
		return 1;
	if (t->mech == SPFKIT_MECH_IP4 || t->mech == SPFKIT_MECH_IP6) {
		int excl;
		struct lint_cover_set *s = spfkit__lint_cover_into(&w->cover, w->depth, t, &excl);

		spfkit__lint_cover_add(&w->cover, s, excl, t->mech == SPFKIT_MECH_IP6, t->ip,
				       t->mech == SPFKIT_MECH_IP6 ? t->cidr6 : t->cidr4);
		return 0;
	}
	w->r->counts.dns_terms++;
	if (t->mech == SPFKIT_MECH_PTR) {
		w->opaque++;
		spfkit__lint_lookups_ptr(w);
		return 0;
	}
	if (!spfkit__lint_lookups_target(n, t, &name, &len)) {
		w->opaque++;
		if (n->dlen > 0 || t->has_domain)
			spfkit__lint_lookups_dynamic(w, n, t);
		else
			spfkit__lint_add(
				w->r, L_DYNAMIC_TARGET, NULL, n->rec->text + t->offset, t->len,
				(long)t->offset, "give the record's domain with --domain",
				"no --domain given: this term's target is the record's own domain, "
				"unknown here; counted as one DNS term and one void lookup");
		if (t->mech != SPFKIT_MECH_INCLUDE)
			spfkit__lint_count_charge_unknown(w, t->domain.src, t->domain.src_len);
		else
			spfkit__lint_observe_leaf(w, t->domain.src, t->domain.src_len,
						  LINT_HOW_INCLUDE, n->rec->text, t, 0, 0,
						  "the target is made by macros: not followed");
		return 0;
	}
	if (!spfkit__domain_valid(name, len)) {
		if (t->mech == SPFKIT_MECH_INCLUDE) {
			struct lint_finding *f;

			w->fatal = 1;
			f = spfkit__lint_add(w->r, L_INCLUDE_NO_RECORD, n->domain,
					     n->rec->text + t->offset, t->len, (long)t->offset,
					     NULL, "%.*s is not a valid domain name: permerror",
					     (int)(len < 200 ? len : 200), name);
			if (f != NULL)
				f->reason = SPFKIT_REASON_INCLUDE_TARGET;
			spfkit__lint_observe_leaf(
				w, name, len, LINT_HOW_INCLUDE, n->rec->text, t, 1, 0,
				"not a valid domain name: receivers return permerror");
		} else {
			/* RFC 7208 receivers skip it; RFC 4408 ones return permerror */
			spfkit__lint_add_as(w->r, LINT_ERROR, L_TARGET_NO_ADDRESS, n->domain,
					    n->rec->text + t->offset, t->len, (long)t->offset,
					    "write the host's full, valid name",
					    "%.*s is not a valid domain name: RFC 7208 receivers "
					    "treat the term "
					    "as matching nothing, older ones return permerror",
					    (int)(len < 200 ? len : 200), name);
		}
		return 0;
	}
	switch (t->mech) {
	case SPFKIT_MECH_A: spfkit__lint_lookups_a(w, n, t, name, len); return 0;
	case SPFKIT_MECH_MX: spfkit__lint_lookups_mx(w, n, t, name, len); return 0;
	case SPFKIT_MECH_EXISTS:
		w->opaque++;
		spfkit__lint_lookups_exists(w, n, name, len);
		return 0;
	default: break;
	}
	/* include: a target that passes every client makes it match every client (§5.2) */
	return follow(w, n, t, name, len, LINT_HOW_INCLUDE) == 1;
}

/* A term of the top record that costs DNS terms: what it and its tree cost (issue 31). */
static void note_cost(struct walk *w, const struct node *n, const struct spfkit_term *t,
		      unsigned before, unsigned opaque_before)
{
	struct lint_report *r = w->r;
	struct lint_cost *c;
	unsigned cost = r->counts.dns_terms - before;

	if (cost == 0)
		return;
	c = spfkit__array_grow(r->costs, &r->capcosts, r->ncosts, sizeof(*c), 16);
	if (c == NULL) {
		w->err = SPFKIT_ENOMEM;
		return;
	}
	r->costs = c;
	c = &r->costs[r->ncosts];
	c->term = spfkit__lint_strndup(r, n->rec->text + t->offset, t->len);
	c->offset = (long)t->offset;
	c->cost = cost;
	c->running = r->counts.dns_terms;
	/* flatten writes the addresses of a, mx and of includes it can follow
	 * to the end; a tree holding ptr, exists or a macro target is kept */
	c->kept = w->opaque > opaque_before ? cost : 0;
	if (c->term != NULL)
		r->ncosts++;
}

/* A mechanism of the record; at the top, with its cost and the addresses it authorizes. */
static int top_mechanism(struct walk *w, const struct node *n, const struct spfkit_term *t)
{
	unsigned before = w->r->counts.dns_terms, opaque = w->opaque;
	long k = -1;
	int always;

	if (w->depth != 1)
		return mechanism(w, n, t);
	if (t->qualifier == '+' && t->mech == SPFKIT_MECH_INCLUDE)
		spfkit__lint_cover_begin_include(&w->cover, w->r, n->rec->text + t->offset, t->len,
						 (long)t->offset);
	else if (t->qualifier == '+' &&
		 (t->mech == SPFKIT_MECH_IP4 || t->mech == SPFKIT_MECH_IP6 ||
		  t->mech == SPFKIT_MECH_A || t->mech == SPFKIT_MECH_MX))
		k = spfkit__lint_cover_term(&w->cover, w->r, n->rec->text + t->offset, t->len,
					    (long)t->offset);
	w->cover.top_term = k >= 0 ? &w->cover.terms[k] : NULL;
	if (w->cover.top_term != NULL)
		w->cover.top_term->lookup = t->mech == SPFKIT_MECH_A || t->mech == SPFKIT_MECH_MX;
	always = mechanism(w, n, t);
	w->cover.top_term = NULL;
	spfkit__lint_cover_end_include(&w->cover);
	note_cost(w, n, t, before, opaque);
	return always;
}

/* The terms of a parsed record; 1 when the record passes every client. */
static int walk_terms(struct walk *w, const struct node *n)
{
	const struct spfkit_record *rec = n->rec;
	const struct spfkit_term *t;
	const char *name;
	size_t i, len;
	unsigned before, opaque;
	int always = 0;

	spfkit__lint_lookups_prefetch(w, n);
	for (i = 0; i < rec->count && w->err == 0; i++) {
		t = &rec->terms[i];
		if (t->is_modifier)
			continue;
		if (top_mechanism(w, n, t)) {
			always = t->qualifier == '+';
			break;
		}
	}
	if (i == rec->count && rec->redirect >= 0 && w->err == 0) {
		/* §6.1: redirect only when no mechanism matched and there is no all */
		t = &rec->terms[rec->redirect];
		before = w->r->counts.dns_terms;
		opaque = w->opaque;
		w->r->counts.dns_terms++;
		if (!spfkit__lint_lookups_target(n, t, &name, &len)) {
			w->opaque++;
			spfkit__lint_lookups_dynamic(w, n, t);
			spfkit__lint_observe_leaf(w, t->domain.src, t->domain.src_len,
						  LINT_HOW_REDIRECT, rec->text, t, 0, 0,
						  "the target is made by macros: not followed");
		} else {
			always = follow(w, n, t, name, len, LINT_HOW_REDIRECT) == 1;
		}
		if (w->depth == 1)
			note_cost(w, n, t, before, opaque);
	}
	if (n->how == LINT_HOW_TOP && rec->exp >= 0 && w->err == 0)
		spfkit__lint_lookups_exp(w, n);
	if (w->depth == 1)
		spfkit__lint_cover_report(&w->cover, w->r, n->domain);
	return always;
}

/* ---- one record ----------------------------------------------------------- */

static void no_record(struct walk *w, const struct node *parent, const struct spfkit_term *via,
		      enum lint_how how, const char *domain, const char *why, int is_parked)
{
	char what[160];

	snprintf(what, sizeof(what), "no SPF record (%s): receivers %s", why,
		 how == LINT_HOW_TOP ? "get the result none" : "return permerror");
	spfkit__lint_observe_problem(w, 1, 0, what);
	if (how == LINT_HOW_TOP && is_parked) {
		/* one finding: the parked domain's record is the fix */
		spfkit__lint_add(w->r, L_NO_RECORD, domain, NULL, 0, -1,
				 "publish \"v=spf1 -all\" at the domain (RFC 7208 section 10.1.2)",
				 "%s has %s: receivers get the result none; it has no MX (or a "
				 "null MX) and no A or AAAA record, so it sends no mail and should "
				 "say so with \"v=spf1 -all\"",
				 domain, why);
		return;
	}
	if (how == LINT_HOW_TOP) {
		spfkit__lint_add(w->r, L_NO_RECORD, domain, NULL, 0, -1, NULL,
				 "%s has %s: receivers get the result none", domain, why);
		return;
	}
	w->fatal = 1;
	spfkit__lint_add(w->r, how == LINT_HOW_INCLUDE ? L_INCLUDE_NO_RECORD : L_REDIRECT_NO_RECORD,
			 parent->domain, parent->rec->text + via->offset, via->len,
			 (long)via->offset, NULL, "%s has %s: receivers return permerror", domain,
			 why);
}

static int parse_and_walk(struct walk *w, struct node *n, const char *text, size_t len)
{
	struct spfkit_parse_error pe;
	struct spfkit_record *rec = NULL;
	size_t first = w->r->n;
	int rc, always;

	spfkit__lint_text_checks(w->r, n->domain, text, len);
	memset(&pe, 0, sizeof(pe));
	rc = spfkit_record_parse(text, len, NULL, &rec, &pe);
	if (rc == SPFKIT_ENOMEM) {
		w->err = rc;
		return 0;
	}
	spfkit__lint_observe_record(w, n, text, len, rec);
	if (rc != 0) {
		spfkit__lint_observe_syntax(w, &pe, rc);
		w->fatal = 1;
		spfkit__lint_syntax_finding(w->r, n->domain, text, len, &pe, rc, first);
		if (n->how == LINT_HOW_TOP) {
			w->r->counts.unevaluated = 1;
			if (!w->in->counting_only)
				spfkit__lint_fixed_count(w->dns, n->domain, text, len);
		}
		return 0;
	}
	w->r->counts.records++;
	n->rec = rec;
	spfkit__lint_term_checks(w->r, n->domain, rec, n->how == LINT_HOW_INCLUDE);
	w->path[w->depth++] = n->domain;
	always = walk_terms(w, n);
	w->depth--;
	if (n->how == LINT_HOW_TOP)
		spfkit__lint_parked_check(w, n);
	spfkit_record_free(rec);
	return always;
}

static int walk_domain_body(struct walk *w, const char *domain, size_t dlen, enum lint_how how,
			    const struct node *parent, const struct spfkit_term *via)
{
	const struct lint_answer *txt;
	const char *text;
	struct node n;
	size_t count, len;

	memset(&n, 0, sizeof(n));
	n.how = how;
	n.domain = spfkit__lint_strndup(w->r, domain, spfkit__domain_trim(domain, dlen));
	n.dlen = spfkit__domain_trim(domain, dlen);
	if (n.domain == NULL)
		return 0;
	if (w->r->counts.records >= WALK_MAX_RECORDS) {
		spfkit__lint_observe_problem(w, 0, 0,
					     "not followed: the walk stops after 500 records");
		return 0;
	}
	if (spfkit__lint_count_ask(w, n.domain, n.dlen, SPFKIT_RR_TXT, &txt) != 0)
		return 0;
	if (spfkit__lint_count_tempfail(w, n.domain, n.domain, n.dlen, SPFKIT_RR_TXT, txt)) {
		spfkit__lint_observe_problem(w, 1, 0,
					     "the TXT question failed: receivers get temperror");
		return 0;
	}
	n.ttl = txt->ttl;
	n.has_ttl = 1;
	spfkit__lint_published_spf_type(w, n.domain, n.dlen);
	count = spfkit__lint_select(w->r, n.domain, txt, &text, &len);
	if (count == 0) {
		no_record(w, parent, via, how, n.domain,
			  txt->status == SPFKIT_DNS_NXDOMAIN ? "no DNS records at all (NXDOMAIN)"
							     : "no TXT record starting with v=spf1",
			  how == LINT_HOW_TOP && txt->status != SPFKIT_DNS_NXDOMAIN &&
				  !w->in->counting_only &&
				  spfkit__lint_parked_domain(w, n.domain, n.dlen));
		return 0;
	}
	if (how == LINT_HOW_TOP) {
		w->r->record = text;
		w->r->record_len = len;
		w->r->records = &w->r->record;
		w->r->record_lens = &w->r->record_len;
		w->r->nrecords = 1;
		spfkit__lint_published_wildcard(w, n.domain, n.dlen);
	}
	if (count > 1) {
		spfkit__lint_observe_record(w, &n, text, len, NULL);
		spfkit__lint_observe_problem(
			w, 1, 0, "more than one SPF record: receivers return permerror");
		w->fatal = 1;
		spfkit__lint_multiple_records(w->r, n.domain, how == LINT_HOW_TOP, txt, count);
		return 0;
	}
	spfkit__lint_published_ttl(w, n.domain, txt);
	spfkit__lint_published_strings(w, n.domain, n.dlen, text, len);
	spfkit__lint_size_checks(w->r, n.domain, n.dlen, text, len, txt);
	return parse_and_walk(w, &n, text, len);
}

static int walk_domain(struct walk *w, const char *domain, size_t dlen, enum lint_how how,
		       const struct node *parent, const struct spfkit_term *via)
{
	int always;

	spfkit__lint_observe_enter(w, domain, spfkit__domain_trim(domain, dlen), how,
				   parent != NULL ? parent->rec->text : NULL, via);
	always = walk_domain_body(w, domain, dlen, how, parent, via);
	spfkit__lint_observe_simple(w, LW_LEAVE);
	return always;
}

/* ---- the run ------------------------------------------------------------- */

/*
 * pyspf and Mail::SPF also count each MX host without an address of the
 * client's family as a void lookup: the whole tree's voids and those
 * together over the limit make their receivers return permerror, where
 * RFC 7208's count (lint's) stays within it. Named at each mx term
 * that adds such voids.
 */
static void pyspf_voids(struct walk *w)
{
	const struct short_mx *s;
	unsigned total;
	size_t i;
	int fam;

	for (fam = 0; fam < 2; fam++) {
		for (i = 0, total = w->voids[fam]; i < w->nshort_mx; i++)
			total += w->short_mx[i].hosts[fam];
		if (w->voids[fam] > SPFKIT_LIMIT_VOID_LOOKUPS || total <= SPFKIT_LIMIT_VOID_LOOKUPS)
			continue;
		for (i = 0; i < w->nshort_mx; i++) {
			s = &w->short_mx[i];
			if (s->hosts[fam] == 0)
				continue;
			spfkit__lint_add(
				w->r, L_TARGET_NO_ADDRESS, s->domain, s->term, s->term_len, s->offset,
				fam ? "give the MX hosts AAAA records, or list them with ip4/ip6"
				    : "give the MX hosts A records, or list them with ip4/ip6",
				"%u MX host%s without %s: receivers running pyspf or Mail::SPF count "
				"each as a void lookup, %u in all with the tree's other voids (limit "
				"%u), so IPv%d senders get permerror there",
				s->hosts[fam], s->hosts[fam] == 1 ? "" : "s", fam ? "AAAA" : "A", total,
				SPFKIT_LIMIT_VOID_LOOKUPS, fam ? 6 : 4);
			/* in a provider's record maybe, but it is the domain's mail
			 * that fails: it counts in the exit status (issue 31) */
			if (w->r->n > 0 && w->r->items[w->r->n - 1].id == L_TARGET_NO_ADDRESS)
				w->r->items[w->r->n - 1].provider = 0;
		}
	}
}

static void limit_findings(struct walk *w)
{
	struct lint_report *r = w->r;
	unsigned terms = r->counts.dns_terms;
	char costs[LINT_TEXT_MAX], fix[200];
	int fam;

	/* flatten refuses a source that fails for another reason (w->fatal) */
	if (terms > SPFKIT_LIMIT_DNS_TERMS && !w->fatal && w->in->flatten_check && w->err == 0)
		spfkit__lint_flatten_check(w->dns, w->in);
	snprintf(fix, sizeof(fix),
		 "run spfkit flatten %s: it writes the includes' addresses as ip4/ip6 terms; "
		 "its records need %u DNS term%s",
		 r->domain, r->counts.after_flatten, r->counts.after_flatten == 1 ? "" : "s");
	spfkit__lint_cost_text(r, costs, sizeof(costs));
	if (terms > SPFKIT_LIMIT_DNS_TERMS)
		spfkit__lint_add(
			r, L_LOOKUPS_OVER_10, r->domain, NULL, 0, -1,
			r->counts.flatten_fixes ? fix : NULL,
			"%u DNS-querying terms for a client that matches nothing (limit %u): "
			"receivers return permerror%s",
			terms, SPFKIT_LIMIT_DNS_TERMS, costs);
	else if (terms >= 8)
		spfkit__lint_add(r, L_CLOSE_TO_LIMIT, r->domain, NULL, 0, -1, NULL,
				 "%u DNS-querying terms of the %u allowed, on the worst branch%s",
				 terms, SPFKIT_LIMIT_DNS_TERMS, costs);
	for (fam = 0; fam < 2; fam++)
		if (w->voids[fam] > SPFKIT_LIMIT_VOID_LOOKUPS)
			spfkit__lint_add(r, L_VOID_OVER_2, r->domain, NULL, 0, -1, NULL,
					 "%u void lookups for an IPv%d client (limit %u): %s",
					 w->voids[fam], fam == 0 ? 4 : 6, SPFKIT_LIMIT_VOID_LOOKUPS,
					 spfkit__buf_str(&w->void_names[fam]));
	pyspf_voids(w);
	r->counts.void_v4 = w->voids[0];
	r->counts.void_v6 = w->voids[1];
	r->counts.permerror_v4 = w->fatal || terms > SPFKIT_LIMIT_DNS_TERMS ||
				 w->voids[0] > SPFKIT_LIMIT_VOID_LOOKUPS;
	r->counts.permerror_v6 = w->fatal || terms > SPFKIT_LIMIT_DNS_TERMS ||
				 w->voids[1] > SPFKIT_LIMIT_VOID_LOOKUPS;
}

static void walk_free(struct walk *w)
{
	int fam;

	for (fam = 0; fam < 2; fam++)
		spfkit__buf_free(&w->void_names[fam]);
	spfkit__free(NULL, w->included);
	spfkit__free(NULL, w->short_mx);
	spfkit__lint_cover_free(&w->cover);
}

/* --record: the text stands for the domain's TXT record. */
static void walk_given(struct walk *w, const struct lint_input *in)
{
	struct node n;

	memset(&n, 0, sizeof(n));
	n.how = LINT_HOW_TOP;
	n.domain = w->r->domain;
	n.dlen = strlen(n.domain);
	w->r->record = in->record;
	w->r->record_len = in->record_len;
	w->r->records = &w->r->record;
	w->r->record_lens = &w->r->record_len;
	w->r->nrecords = 1;
	if (in->strs != NULL)
		spfkit__lint_string_checks(w->r, n.domain, in->record, in->strs, in->lens,
					   in->nstrs);
	if (!spfkit_record_is_spf(in->record, in->record_len)) {
		struct lint_answer one;
		struct spfkit_dns_rr rr = { SPFKIT_RR_TXT, 0, 0, (const unsigned char *)in->record,
					    in->record_len };
		const char *text;
		size_t len;

		memset(&one, 0, sizeof(one));
		one.rrs = &rr;
		one.count = 1;
		if (spfkit__lint_select(w->r, n.domain, &one, &text, &len) == 0 && w->r->n == 0)
			spfkit__lint_add(
				w->r, L_NO_RECORD, n.domain, NULL, 0, -1,
				"start the record with v=spf1",
				"the text does not start with \"v=spf1\": it is not an SPF record");
		spfkit__lint_observe_record(w, &n, in->record, in->record_len, NULL);
		spfkit__lint_observe_problem(
			w, 1, 0, "the text does not start with \"v=spf1\": not an SPF record");
		return;
	}
	spfkit__lint_size_checks(w->r, n.domain, n.dlen, in->record, in->record_len, NULL);
	parse_and_walk(w, &n, in->record, in->record_len);
}

int spfkit__lint_run(struct lint_dns *dns, const struct lint_input *in)
{
	struct walk w;
	int fam;

	memset(&w, 0, sizeof(w));
	w.dns = dns;
	w.r = dns->report;
	w.in = in;
	spfkit__lint_cover_free(&w.cover); /* empty */
	for (fam = 0; fam < 2; fam++)
		spfkit__buf_init(&w.void_names[fam], NULL, 4096);
	if (in->domain != NULL)
		w.r->domain = spfkit__lint_strndup(
			w.r, in->domain, spfkit__domain_trim(in->domain, strlen(in->domain)));
	if (w.r->domain == NULL)
		w.r->domain = "";
	w.observe = in->observe;
	w.observe_arg = in->observe_arg;
	if (in->record != NULL) {
		spfkit__lint_observe_enter(&w, w.r->domain, strlen(w.r->domain), LINT_HOW_TOP, NULL,
					   NULL);
		walk_given(&w, in);
		spfkit__lint_observe_simple(&w, LW_LEAVE);
	} else if (!spfkit__domain_valid(w.r->domain, strlen(w.r->domain))) {
		spfkit__lint_observe_enter(&w, w.r->domain, strlen(w.r->domain), LINT_HOW_TOP, NULL,
					   NULL);
		no_record(&w, NULL, NULL, LINT_HOW_TOP, w.r->domain, "a name that is not a valid domain",
			  0);
		spfkit__lint_observe_simple(&w, LW_LEAVE);
	} else {
		walk_domain(&w, w.r->domain, strlen(w.r->domain), LINT_HOW_TOP, NULL, NULL);
	}
	limit_findings(&w);
	if (w.cover.err != 0 && w.err == 0)
		w.err = w.cover.err;
	walk_free(&w);
	return w.err != 0 ? w.err : w.r->err;
}
