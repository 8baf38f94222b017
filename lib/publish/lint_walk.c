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
 * `spfkit tree` watches this walk (lint_input.observe, the emit_*
 * functions): one walker, so tree's counts are lint's by construction.
 */
#include <stdio.h>
#include <string.h>

#include "domain.h"
#include "publish.h"
#include "reason.h"

#define WALK_MAX_DEPTH 16u    /* past 10 terms it is a permerror anyway */
#define WALK_MAX_RECORDS 500u /* records fetched in one run */
#define TTL_LOW 300u
#define TTL_HIGH 604800u
#define MX_SHOWN 10u /* §4.6.4: "no more than 10" MX names looked up */

/*
 * An mx term whose hosts lack addresses of a family: pyspf and Mail::SPF
 * count each such host as a void lookup for clients of that family.
 * Whether that passes their limit is known only once the whole tree,
 * the terms after this one included, is walked (limit_findings()).
 */
struct short_mx {
	const char *domain; /* in the report's arena, as the term */
	const char *term;
	size_t term_len;
	long offset;
	unsigned hosts[2]; /* without A, without AAAA */
};

struct walk {
	struct lint_dns *dns;
	struct lint_report *r;
	const char *path[WALK_MAX_DEPTH + 1];
	size_t depth;
	unsigned voids[2];   /* [0] IPv4 client, [1] IPv6 client */
	struct short_mx *short_mx;
	size_t nshort_mx, capshort_mx;
	struct spfkit__buf void_names[2];
	const char **included; /* include targets seen, for duplicate-include */
	size_t nincluded, capincluded;
	int fatal;             /* a permerror for every client */
	int err;               /* spfkit_err: the walk could not go on */
	lint_walk_fn *observe; /* spfkit tree, or NULL */
	void *observe_arg;
	const struct lint_input *in;
	unsigned opaque;       /* terms flatten keeps as written: ptr, exists, macro targets */
	struct lint_cover cover;
	struct lint_cover_set *top_term; /* the top record's pass a/mx term being walked */
	unsigned not_pass;     /* > 0: inside an include whose pass is not the top's pass */
};

/* ---- telling the observer (spfkit tree) ------------------------------- */

static void emit(struct walk *w, struct lint_walk_event *ev)
{
	if (w->observe == NULL)
		return;
	ev->dns_terms = w->r->counts.dns_terms;
	ev->voids[0] = w->voids[0];
	ev->voids[1] = w->voids[1];
	w->observe(w->observe_arg, ev);
}

static void emit_simple(struct walk *w, enum lint_walk_kind kind)
{
	emit(w, &(struct lint_walk_event){ .kind = kind });
}

/* A record looked for at name; via: the term that leads there (NULL: the top). */
static void emit_enter(struct walk *w, const char *name, size_t len, enum lint_how how,
		       const char *via_text, const struct spfkit_term *via)
{
	struct lint_walk_event ev = { .kind = LW_ENTER, .name = name, .len = len, .how = how };

	if (via != NULL) {
		ev.via = via_text + via->offset;
		ev.via_len = via->len;
		ev.via_qualifier = via->is_modifier ? '+' : via->qualifier;
	}
	emit(w, &ev);
}

static void emit_problem(struct walk *w, int error, int loop, const char *what)
{
	emit(w, &(struct lint_walk_event){
			.kind = LW_PROBLEM, .what = what, .error = error, .loop = loop });
}

/* A branch that ends before any record is read: a loop, a bad or dynamic name. */
static void emit_leaf(struct walk *w, const char *name, size_t len, enum lint_how how,
		      const char *via_text, const struct spfkit_term *via, int error, int loop,
		      const char *what)
{
	if (w->observe == NULL)
		return;
	emit_enter(w, name, len, how, via_text, via);
	emit_problem(w, error, loop, what);
	emit_simple(w, LW_LEAVE);
}

static void emit_addresses(struct walk *w, const struct spfkit_term *t,
			   const struct lint_answer *a4, const struct lint_answer *a6)
{
	emit(w, &(struct lint_walk_event){ .kind = LW_ADDRESSES, .term = t, .a4 = a4, .a6 = a6 });
}

/* ---- counting ----------------------------------------------------------- */

static void note_void(struct walk *w, int fam, const char *what, const char *name, size_t len)
{
	struct spfkit__buf *b = &w->void_names[fam];

	w->voids[fam]++;
	emit(w, &(struct lint_walk_event){
			.kind = LW_VOID, .family = fam, .what = what, .name = name, .len = len });
	if (b->len > 0)
		spfkit__buf_puts(b, ", ");
	spfkit__buf_printf(b, "%s %.*s", what, (int)(len < 100 ? len : 100), name);
}

/* A question an a/mx/exists term asks: a void answer counts, each time. */
static void charge(struct walk *w, int fam, const char *name, size_t len, uint16_t type,
		   const struct lint_answer *ans)
{
	char tn[16];

	if (ans->status == SPFKIT_DNS_NODATA || ans->status == SPFKIT_DNS_NXDOMAIN)
		note_void(w, fam, spfkit_rrtype_name(type, tn, sizeof(tn)), name, len);
}

/* Worst case for a target made by macros: a void for both families. */
static void charge_unknown(struct walk *w, const char *src, size_t len)
{
	note_void(w, 0, "(macro)", src, len);
	note_void(w, 1, "(macro)", src, len);
}

static int ask(struct walk *w, const char *name, size_t len, uint16_t type,
	       const struct lint_answer **out)
{
	int rc = spfkit__lint_dns_ask(w->dns, name, len, type, out);

	if (rc != 0 && w->err == 0)
		w->err = rc;
	return rc;
}

/* TEMPFAIL: a finding (receivers would say temperror); 1 when so. */
static int tempfail(struct walk *w, const char *domain, const char *name, size_t len,
		    uint16_t type, const struct lint_answer *a)
{
	struct lint_finding *f;
	char tn[16];

	if (a->status != SPFKIT_DNS_TEMPFAIL)
		return 0;
	f = spfkit__lint_add(w->r, L_DNS_FAILURE, domain, NULL, 0, -1, NULL, "%s %.*s: %s",
			     spfkit_rrtype_name(type, tn, sizeof(tn)),
			     (int)(len < 200 ? len : 200), name,
			     a->detail != NULL ? a->detail : "temporary failure");
	if (f != NULL) /* the evaluator's temperror code for the same answer */
		f->reason = spfkit__lint_dns_late(a) ? SPFKIT_REASON_TIME_BUDGET
						     : spfkit__reason_of_detail(a->detail);
	return 1;
}

/* ---- the terms that look things up -------------------------------------- */

/* The questions of a record's terms are independent: ask them together
 * (LINT_PARALLEL at a time), then walk as before, from the cache. */
#define PREFETCH_MAX 64u /* questions collected per call; the rest are asked in turn */

struct prefetch {
	struct lint_question q[PREFETCH_MAX];
	size_t n;
};

static void want(struct prefetch *p, const char *name, size_t len, uint16_t type)
{
	if (p->n < PREFETCH_MAX) {
		p->q[p->n].name = name;
		p->q[p->n].len = len;
		p->q[p->n].type = type;
		p->n++;
	}
}

/* What walk_domain_body() asks first at a domain it enters. */
static void want_domain(struct prefetch *p, const char *name, size_t len)
{
	want(p, name, len, SPFKIT_RR_TXT);
	want(p, name, len, SPFKIT_RR_SPF);
	want(p, name, len, SPFKIT_RR_TXT_STRINGS);
}

struct node {
	const char *domain; /* NUL-terminated, in the arena */
	size_t dlen;
	const struct spfkit_record *rec;
	enum lint_how how;
	uint32_t ttl;       /* of the TXT answer; has_ttl 0 for --record */
	int has_ttl;
};

/* The target of a term: its domain-spec when it has no macros, else the domain. */
static int static_target(const struct node *n, const struct spfkit_term *t, const char **name,
			 size_t *len)
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

static void dynamic_note(struct walk *w, const struct node *n, const struct spfkit_term *t)
{
	w->r->counts.dynamic = 1;
	spfkit__lint_add(
		w->r, L_DYNAMIC_TARGET, n->domain, n->rec->text + t->offset, t->len,
		(long)t->offset, NULL,
		"the target depends on the sender or client (macros): counted as one DNS term%s, "
		"not followed",
		t->mech == SPFKIT_MECH_INCLUDE || t->is_modifier ? "" : " and one void lookup");
}

/* ---- covered-by-include (lint_cover.c) ----------------------------------- */

/*
 * Where a term's addresses go: a pass term of the top record to its own
 * set, a term of a top include's tree to that include's, its pass set
 * when it passes there, else (*excl) the ranges that keep a term of the
 * top record from being called covered; NULL: nowhere.
 */
static struct lint_cover_set *cover_into(struct walk *w, const struct spfkit_term *t, int *excl)
{
	*excl = t->qualifier != '+' || w->not_pass > 0;
	if (w->depth == 1)
		return *excl ? NULL : w->top_term;
	if (w->cover.cur >= 0)
		return &w->cover.incs[w->cover.cur];
	return NULL;
}

/* The A and AAAA answers of an a term or an MX host, with the term's CIDR lengths (§5.3). */
static void cover_addresses(struct walk *w, const struct spfkit_term *t,
			    const struct lint_answer *a4, const struct lint_answer *a6)
{
	int excl;
	struct lint_cover_set *s = cover_into(w, t, &excl);

	if (s == NULL)
		return;
	if (a4->status == SPFKIT_DNS_TEMPFAIL || a6->status == SPFKIT_DNS_TEMPFAIL)
		s->unknown = 1;
	spfkit__lint_cover_add_answer(&w->cover, s, excl, a4, 0, t->cidr4);
	spfkit__lint_cover_add_answer(&w->cover, s, excl, a6, 1, t->cidr6);
}

/* "a": A for IPv4 clients, AAAA for IPv6 ones (§5.3). */
static void term_a(struct walk *w, const struct node *n, const struct spfkit_term *t,
		   const char *name, size_t len)
{
	const struct lint_answer *a4, *a6;

	if (ask(w, name, len, SPFKIT_RR_A, &a4) != 0 || ask(w, name, len, SPFKIT_RR_AAAA, &a6) != 0)
		return;
	charge(w, 0, name, len, SPFKIT_RR_A, a4);
	charge(w, 1, name, len, SPFKIT_RR_AAAA, a6);
	emit_addresses(w, t, a4, a6);
	cover_addresses(w, t, a4, a6);
	if (tempfail(w, n->domain, name, len, SPFKIT_RR_A, a4) ||
	    tempfail(w, n->domain, name, len, SPFKIT_RR_AAAA, a6))
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
static int mx_no_host(const struct spfkit_dns_rr *rr)
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

		if (mx_no_host(&mx->rrs[i]))
			continue;
		looked++;
		want(&p, h, hl, SPFKIT_RR_A);
		want(&p, h, hl, SPFKIT_RR_AAAA);
	}
	spfkit__lint_dns_prefetch(w->dns, p.q, p.n);
	for (i = 0, looked = 0; i < mx->count && looked < MX_SHOWN; i++) {
		const char *h = (const char *)mx->rrs[i].data;
		size_t hl = mx->rrs[i].len;

		if (mx_no_host(&mx->rrs[i]))
			continue;
		looked++;
		if (ask(w, h, hl, SPFKIT_RR_A, &a4) != 0 || ask(w, h, hl, SPFKIT_RR_AAAA, &a6) != 0)
			return;
		emit_addresses(w, t, a4, a6);
		cover_addresses(w, t, a4, a6);
		if (tempfail(w, n->domain, h, hl, SPFKIT_RR_A, a4) ||
		    tempfail(w, n->domain, h, hl, SPFKIT_RR_AAAA, a6))
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
static void term_mx(struct walk *w, const struct node *n, const struct spfkit_term *t,
		    const char *name, size_t len)
{
	const struct lint_answer *mx;
	size_t i, hosts = 0;

	if (ask(w, name, len, SPFKIT_RR_MX, &mx) != 0)
		return;
	charge(w, 0, name, len, SPFKIT_RR_MX, mx);
	charge(w, 1, name, len, SPFKIT_RR_MX, mx);
	if (tempfail(w, n->domain, name, len, SPFKIT_RR_MX, mx))
		return;
	for (i = 0; i < mx->count; i++)
		hosts += !mx_no_host(&mx->rrs[i]);
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
static void term_exists(struct walk *w, const struct node *n, const char *name, size_t len)
{
	const struct lint_answer *a;

	if (ask(w, name, len, SPFKIT_RR_A, &a) != 0)
		return;
	charge(w, 0, name, len, SPFKIT_RR_A, a);
	charge(w, 1, name, len, SPFKIT_RR_A, a);
	tempfail(w, n->domain, name, len, SPFKIT_RR_A, a);
}

/* "ptr" (§5.5): the client's reverse name; for a client with none, a void. */
static void term_ptr(struct walk *w)
{
	note_void(w, 0, "PTR", "(the client's reverse name)", 28);
	note_void(w, 1, "PTR", "(the client's reverse name)", 28);
}

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
		emit_leaf(w, name, len, how, n->rec->text, t, 1, 1,
			  "already on this branch, not expanded again: evaluation goes round it "
			  "until the 10-term limit gives permerror");
		return 0;
	}
	if (w->depth >= WALK_MAX_DEPTH)
		return 0; /* more than 10 terms on this branch already */
	if (how == LINT_HOW_INCLUDE && t->qualifier != '+') {
		int always;

		w->not_pass++; /* its pass is the top's fail (or softfail...): not authorized */
		always = walk_domain(w, name, len, how, n, t);
		w->not_pass--;
		return always;
	}
	return walk_domain(w, name, len, how, n, t);
}

/* One mechanism; 1 when it matches every client (the walk of this record stops). */
static int mechanism(struct walk *w, const struct node *n, const struct spfkit_term *t)
{
	const char *name;
	size_t len;

	emit(w, &(struct lint_walk_event){ .kind = LW_TERM, .rec = n->rec, .term = t });
	if (t->mech == SPFKIT_MECH_ALL)
		return 1;
	if (t->mech == SPFKIT_MECH_IP4 || t->mech == SPFKIT_MECH_IP6) {
		int excl;
		struct lint_cover_set *s = cover_into(w, t, &excl);

		spfkit__lint_cover_add(&w->cover, s, excl, t->mech == SPFKIT_MECH_IP6, t->ip,
				       t->mech == SPFKIT_MECH_IP6 ? t->cidr6 : t->cidr4);
		return 0;
	}
	w->r->counts.dns_terms++;
	if (t->mech == SPFKIT_MECH_PTR) {
		w->opaque++;
		term_ptr(w);
		return 0;
	}
	if (!static_target(n, t, &name, &len)) {
		w->opaque++;
		if (n->dlen > 0 || t->has_domain)
			dynamic_note(w, n, t);
		else
			spfkit__lint_add(
				w->r, L_DYNAMIC_TARGET, NULL, n->rec->text + t->offset, t->len,
				(long)t->offset, "give the record's domain with --domain",
				"no --domain given: this term's target is the record's own domain, "
				"unknown here; counted as one DNS term and one void lookup");
		if (t->mech != SPFKIT_MECH_INCLUDE)
			charge_unknown(w, t->domain.src, t->domain.src_len);
		else
			emit_leaf(w, t->domain.src, t->domain.src_len, LINT_HOW_INCLUDE, n->rec->text, t,
				  0, 0, "the target is made by macros: not followed");
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
			emit_leaf(w, name, len, LINT_HOW_INCLUDE, n->rec->text, t, 1, 0,
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
	case SPFKIT_MECH_A: term_a(w, n, t, name, len); return 0;
	case SPFKIT_MECH_MX: term_mx(w, n, t, name, len); return 0;
	case SPFKIT_MECH_EXISTS:
		w->opaque++;
		term_exists(w, n, name, len);
		return 0;
	default: break;
	}
	/* include: a target that passes every client makes it match every client (§5.2) */
	return follow(w, n, t, name, len, LINT_HOW_INCLUDE) == 1;
}

/* exp= of the checked domain (§6.2): one TXT record, or no explanation. */
static void exp_target(struct walk *w, const struct node *n)
{
	const struct spfkit_term *t = &n->rec->terms[n->rec->exp];
	const struct lint_answer *a;
	const char *name;
	size_t len;

	if (!static_target(n, t, &name, &len) || !spfkit__domain_valid(name, len))
		return;
	if (ask(w, name, len, SPFKIT_RR_TXT, &a) != 0 || a->status == SPFKIT_DNS_TEMPFAIL)
		return;
	if (a->count != 1)
		spfkit__lint_add(w->r, L_EXP_TARGET, n->domain, n->rec->text + t->offset, t->len,
				 (long)t->offset, NULL,
				 "%.*s has %zu TXT records: receivers give no explanation",
				 (int)(len < 200 ? len : 200), name, a->count);
}

/* The questions of the terms up to the first all, and of the redirect
 * when there is none: those walk_terms() is about to ask. */
static void prefetch_terms(struct walk *w, const struct node *n)
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
		if (!static_target(n, t, &name, &len) || !spfkit__domain_valid(name, len))
			continue;
		if (t->mech == SPFKIT_MECH_A) {
			want(&p, name, len, SPFKIT_RR_A);
			want(&p, name, len, SPFKIT_RR_AAAA);
		} else if (t->mech == SPFKIT_MECH_MX) {
			want(&p, name, len, SPFKIT_RR_MX);
		} else if (t->mech == SPFKIT_MECH_EXISTS) {
			want(&p, name, len, SPFKIT_RR_A);
		} else if (t->mech == SPFKIT_MECH_INCLUDE && w->depth < WALK_MAX_DEPTH) {
			want_domain(&p, name, len);
		}
	}
	if (i == rec->count && rec->redirect >= 0 && w->depth < WALK_MAX_DEPTH &&
	    static_target(n, &rec->terms[rec->redirect], &name, &len) &&
	    spfkit__domain_valid(name, len))
		want_domain(&p, name, len);
	spfkit__lint_dns_prefetch(w->dns, p.q, p.n);
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
	w->top_term = k >= 0 ? &w->cover.terms[k] : NULL;
	if (w->top_term != NULL)
		w->top_term->lookup = t->mech == SPFKIT_MECH_A || t->mech == SPFKIT_MECH_MX;
	always = mechanism(w, n, t);
	w->top_term = NULL;
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

	prefetch_terms(w, n);
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
		if (!static_target(n, t, &name, &len)) {
			w->opaque++;
			dynamic_note(w, n, t);
			emit_leaf(w, t->domain.src, t->domain.src_len, LINT_HOW_REDIRECT, rec->text, t,
				  0, 0, "the target is made by macros: not followed");
		} else {
			always = follow(w, n, t, name, len, LINT_HOW_REDIRECT) == 1;
		}
		if (w->depth == 1)
			note_cost(w, n, t, before, opaque);
	}
	if (n->how == LINT_HOW_TOP && rec->exp >= 0 && w->err == 0)
		exp_target(w, n);
	if (w->depth == 1)
		spfkit__lint_cover_report(&w->cover, w->r, n->domain);
	return always;
}

/* ---- one record ----------------------------------------------------------- */

/* ---- parked-domain --------------------------------------------------------- */

/*
 * A domain that can receive no mail: no MX, or only a null MX (RFC
 * 7505), and no A or AAAA for RFC 5321 §5.1's fallback. Such a domain
 * sends none either, and RFC 7208 §10.1.2 says: "Publishing SPF records
 * for domains that send no mail is a well-established best practice.
 * The record for a domain that sends no mail is: ... "v=spf1 -all"".
 * 1 when so; 0 when not, or not known (a failed question).
 */
static int parked(struct walk *w, const char *name, size_t len)
{
	const struct lint_answer *mx, *a4, *a6;
	struct prefetch p;
	size_t i;

	p.n = 0;
	want(&p, name, len, SPFKIT_RR_MX);
	want(&p, name, len, SPFKIT_RR_A);
	want(&p, name, len, SPFKIT_RR_AAAA);
	spfkit__lint_dns_prefetch(w->dns, p.q, p.n);
	if (spfkit__lint_dns_ask(w->dns, name, len, SPFKIT_RR_MX, &mx) != 0 ||
	    spfkit__lint_dns_ask(w->dns, name, len, SPFKIT_RR_A, &a4) != 0 ||
	    spfkit__lint_dns_ask(w->dns, name, len, SPFKIT_RR_AAAA, &a6) != 0)
		return 0;
	if (mx->status == SPFKIT_DNS_TEMPFAIL || a4->status == SPFKIT_DNS_TEMPFAIL ||
	    a6->status == SPFKIT_DNS_TEMPFAIL)
		return 0;
	for (i = 0; i < mx->count; i++)
		if (!mx_no_host(&mx->rrs[i]))
			return 0;
	return a4->count == 0 && a6->count == 0;
}

/* The record refuses every sender before anything else: its first mechanism is -all. */
static int only_fail_all(const struct spfkit_record *rec)
{
	size_t i;

	for (i = 0; i < rec->count; i++)
		if (!rec->terms[i].is_modifier)
			return rec->terms[i].mech == SPFKIT_MECH_ALL && rec->terms[i].qualifier == '-';
	return 0;
}

static void parked_check(struct walk *w, const struct node *n)
{
	if (n->dlen == 0 || w->in->counting_only || !parked(w, n->domain, n->dlen))
		return;
	spfkit__lint_add(w->r, L_PARKED_DOMAIN, n->domain, NULL, 0, -1, NULL,
			 "%s has no MX (or a null MX) and no A or AAAA record: it receives no "
			 "mail and so sends none, yet its record authorizes or leaves open more "
			 "than \"v=spf1 -all\" (RFC 7208 section 10.1.2)",
			 n->domain);
}

static void no_record(struct walk *w, const struct node *parent, const struct spfkit_term *via,
		      enum lint_how how, const char *domain, const char *why, int is_parked)
{
	char what[160];

	snprintf(what, sizeof(what), "no SPF record (%s): receivers %s", why,
		 how == LINT_HOW_TOP ? "get the result none" : "return permerror");
	emit_problem(w, 1, 0, what);
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

static void emit_record(struct walk *w, const struct node *n, const char *text, size_t len,
			const struct spfkit_record *rec)
{
	emit(w, &(struct lint_walk_event){ .kind = LW_RECORD,
					   .rec = rec,
					   .text = text,
					   .text_len = len,
					   .ttl = n->ttl,
					   .has_ttl = n->has_ttl });
}

static void syntax_problem(struct walk *w, const struct spfkit_parse_error *pe, int rc)
{
	char what[200];

	snprintf(what, sizeof(what), "syntax: %s at byte %zu: receivers return permerror",
		 pe->rule != NULL ? pe->rule : spfkit_strerror(rc), pe->offset);
	emit_problem(w, 1, 0, what);
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
	emit_record(w, n, text, len, rec);
	if (rc != 0) {
		syntax_problem(w, &pe, rc);
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
	if (n->how == LINT_HOW_TOP && !only_fail_all(rec))
		parked_check(w, n);
	spfkit_record_free(rec);
	return always;
}

/* Type 99 beside the TXT record (§3.1: no longer to be published). */
static void spf_type(struct walk *w, const char *domain, size_t dlen)
{
	const struct lint_answer *a;

	if (spfkit__lint_dns_ask(w->dns, domain, dlen, SPFKIT_RR_SPF, &a) != 0)
		return; /* not worth failing the run for */
	if (a->count > 0)
		spfkit__lint_add(
			w->r, L_SPF_RR_TYPE, domain, NULL, 0, -1, NULL,
			"%s publishes %zu SPF (type 99) record%s: RFC 7208 removed that type and "
			"no receiver asks for it",
			domain, a->count, a->count == 1 ? "" : "s");
}

/*
 * §3.5: a wildcard "*.D TXT v=spf1 ..." answers for every name under D
 * that does not exist, but not for names that have any other record.
 * Ask a name nobody publishes; an SPF record there came from a wildcard.
 */
#define WILDCARD_PROBE "_spfkit-lint-wildcard-probe."

static void wildcard_check(struct walk *w, const char *domain, size_t dlen)
{
	char probe[sizeof(WILDCARD_PROBE) + 253];
	const struct lint_answer *a;
	size_t i, plen = sizeof(WILDCARD_PROBE) - 1;

	if (plen + dlen > 253)
		return; /* no name under this one fits */
	memcpy(probe, WILDCARD_PROBE, plen);
	memcpy(probe + plen, domain, dlen);
	if (spfkit__lint_dns_ask(w->dns, probe, plen + dlen, SPFKIT_RR_TXT, &a) != 0 ||
	    a->status != SPFKIT_DNS_OK)
		return;
	for (i = 0; i < a->count; i++)
		if (spfkit_record_is_spf((const char *)a->rrs[i].data, a->rrs[i].len))
			break;
	if (i == a->count)
		return;
	spfkit__lint_add(
		w->r, L_WILDCARD_RECORD, domain, NULL, 0, -1, NULL,
		"%.*s%.*s has an SPF record: a wildcard (*.%.*s) gives it to every name under "
		"%.*s that does not exist, but not to names with records of their own",
		(int)plen, probe, (int)dlen, domain, (int)dlen, domain, (int)dlen, domain);
}

/*
 * §3.3: the record's character-strings as published (resolver.h:
 * SPFKIT_RR_TXT_STRINGS), for string-over-255 and split-inside-token.
 * A backend that cannot give them is no finding.
 */
static void published_strings(struct walk *w, const char *domain, size_t dlen, const char *text,
			      size_t len)
{
	const struct lint_answer *a;
	const unsigned char *d;
	const char **strs;
	size_t *lens, i, j, n, off, joined;

	if (spfkit__lint_dns_ask(w->dns, domain, dlen, SPFKIT_RR_TXT_STRINGS, &a) != 0 ||
	    a->status != SPFKIT_DNS_OK)
		return;
	for (i = 0; i < a->count; i++) {
		d = a->rrs[i].data;
		for (n = 0, joined = 0, off = 0; off < a->rrs[i].len; off += 1u + d[off], n++)
			joined += d[off];
		if (off != a->rrs[i].len || joined != len || n == 0)
			continue; /* malformed, or another record */
		strs = spfkit__arena_alloc(&w->r->arena, n * sizeof(*strs));
		lens = spfkit__arena_alloc(&w->r->arena, n * sizeof(*lens));
		if (strs == NULL || lens == NULL) {
			w->r->err = SPFKIT_ENOMEM;
			return;
		}
		for (j = 0, off = 0; j < n; off += 1u + d[off], j++) {
			strs[j] = (const char *)d + off + 1;
			lens[j] = d[off];
		}
		for (j = 0, off = 0; j < n && memcmp(text + off, strs[j], lens[j]) == 0; j++)
			off += lens[j];
		if (j < n)
			continue;
		spfkit__lint_string_checks(w->r, domain, text, strs, lens, n);
		return;
	}
}

static void ttl_check(struct walk *w, const char *domain, const struct lint_answer *a)
{
	if (a->ttl < TTL_LOW)
		spfkit__lint_add(w->r, L_TTL, domain, NULL, 0, -1, NULL,
				 "TTL %u s: every receiver asks again that often",
				 (unsigned)a->ttl);
	else if (a->ttl > TTL_HIGH)
		spfkit__lint_add(w->r, L_TTL, domain, NULL, 0, -1, NULL,
				 "TTL %u s: a change takes over a week to reach every receiver",
				 (unsigned)a->ttl);
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
		emit_problem(w, 0, 0, "not followed: the walk stops after 500 records");
		return 0;
	}
	if (ask(w, n.domain, n.dlen, SPFKIT_RR_TXT, &txt) != 0)
		return 0;
	if (tempfail(w, n.domain, n.domain, n.dlen, SPFKIT_RR_TXT, txt)) {
		emit_problem(w, 1, 0, "the TXT question failed: receivers get temperror");
		return 0;
	}
	n.ttl = txt->ttl;
	n.has_ttl = 1;
	spf_type(w, n.domain, n.dlen);
	count = spfkit__lint_select(w->r, n.domain, txt, &text, &len);
	if (count == 0) {
		no_record(w, parent, via, how, n.domain,
			  txt->status == SPFKIT_DNS_NXDOMAIN ? "no DNS records at all (NXDOMAIN)"
							     : "no TXT record starting with v=spf1",
			  how == LINT_HOW_TOP && txt->status != SPFKIT_DNS_NXDOMAIN &&
				  !w->in->counting_only && parked(w, n.domain, n.dlen));
		return 0;
	}
	if (how == LINT_HOW_TOP) {
		w->r->record = text;
		w->r->record_len = len;
		w->r->records = &w->r->record;
		w->r->record_lens = &w->r->record_len;
		w->r->nrecords = 1;
		wildcard_check(w, n.domain, n.dlen);
	}
	if (count > 1) {
		emit_record(w, &n, text, len, NULL);
		emit_problem(w, 1, 0, "more than one SPF record: receivers return permerror");
		w->fatal = 1;
		spfkit__lint_multiple_records(w->r, n.domain, how == LINT_HOW_TOP, txt, count);
		return 0;
	}
	ttl_check(w, n.domain, txt);
	published_strings(w, n.domain, n.dlen, text, len);
	spfkit__lint_size_checks(w->r, n.domain, n.dlen, text, len, txt);
	return parse_and_walk(w, &n, text, len);
}

static int walk_domain(struct walk *w, const char *domain, size_t dlen, enum lint_how how,
		       const struct node *parent, const struct spfkit_term *via)
{
	int always;

	emit_enter(w, domain, spfkit__domain_trim(domain, dlen), how,
		   parent != NULL ? parent->rec->text : NULL, via);
	always = walk_domain_body(w, domain, dlen, how, parent, via);
	emit_simple(w, LW_LEAVE);
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
		emit_record(w, &n, in->record, in->record_len, NULL);
		emit_problem(w, 1, 0, "the text does not start with \"v=spf1\": not an SPF record");
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
		emit_enter(&w, w.r->domain, strlen(w.r->domain), LINT_HOW_TOP, NULL, NULL);
		walk_given(&w, in);
		emit_simple(&w, LW_LEAVE);
	} else if (!spfkit__domain_valid(w.r->domain, strlen(w.r->domain))) {
		emit_enter(&w, w.r->domain, strlen(w.r->domain), LINT_HOW_TOP, NULL, NULL);
		no_record(&w, NULL, NULL, LINT_HOW_TOP, w.r->domain, "a name that is not a valid domain",
			  0);
		emit_simple(&w, LW_LEAVE);
	} else {
		walk_domain(&w, w.r->domain, strlen(w.r->domain), LINT_HOW_TOP, NULL, NULL);
	}
	limit_findings(&w);
	if (w.cover.err != 0 && w.err == 0)
		w.err = w.cover.err;
	walk_free(&w);
	return w.err != 0 ? w.err : w.r->err;
}
