/*
 * Parallel lookahead (issue 3): when an answer arrives, file at once the
 * questions strict evaluation is likely to ask next, so a caller that
 * sends questions concurrently needs about one round trip per level of
 * the record tree instead of one per question.
 *
 * Correctness rests on query.c: a filed question is only an entry in the
 * table. Strict evaluation still walks the record in order and uses an
 * answer through need(), where void lookups are counted; an answer it
 * never reaches is never counted, never turns the result into an error,
 * and spfkit_eval_step() reports DONE without waiting for it.
 *
 * Bounded (issue 7): the lookup limits exist to bound the load one
 * evaluation puts on DNS (§4.6.4, §11.1), so lookahead only asks for a
 * term strict evaluation could still reach within them. Each time a
 * record or an MX answer arrives, it walks the record tree from where
 * strict evaluation stands, in strict's order, as if no mechanism that
 * needs DNS matched:
 *  - every DNS-querying term passed is one of the 10 (§4.6.4); the walk
 *    stops where strict evaluation would give permerror;
 *  - an ip4/ip6/all term that matches the client decides its record
 *    without DNS (§4.6.2), and so does an a/mx/exists term whose answers
 *    are in and match: nothing after it is asked; an included record
 *    decided "pass" decides its includer the same way (§5.2);
 *  - a record not yet in hides how many terms it holds, so the places
 *    after it are lower bounds: terms there are still asked for (that
 *    is what makes sibling includes travel together), but in records
 *    entered past it only their includes are, and MX hosts wait;
 *  - whatever the records turn out to hold, lookahead asks for at most
 *    as many terms of its own as the limit lets strict evaluation query;
 *  - nor past answers that, all void, would end the evaluation first
 *    (LA_VOID_SPARE below).
 */
#include <string.h>

#include "domain.h"
#include "eval_int.h"
#include "idna.h"
#include "ipaddr.h"

/* Where a walked record leaves strict evaluation. */
enum walked {
	W_ON = 0, /* no match (or unknown yet): the includer goes on */
	W_PASS,   /* decided "pass": an including term matches */
	W_OTHER,  /* decided fail, softfail or neutral: the includer goes on */
	W_END,    /* strict evaluation stops here: permerror, temperror, the limit */
};

struct walk {
	struct spfkit_eval *ev;
	unsigned pos;   /* DNS-querying terms strict evaluation has charged by here */
	unsigned limit; /* the 10 of §4.6.4 */
	int exact;      /* every record before this point is known: pos is exact */
	int blind;      /* in a record entered while !exact: only records are asked for */
	unsigned voids;   /* void answers strict evaluation will have counted by here */
	unsigned pending; /* questions passed whose answer is not in: each may be void */
	int stop;         /* no question past here */
	int rc;         /* SPFKIT_ENOMEM */
};

/*
 * Voids (issue 33): strict evaluation ends at the void lookup past the
 * limit (§4.6.4), so a question filed past answers that may all be void
 * is asked for nothing when they are. The walk files no new question
 * once the voids it knows of plus the answers it passed that are not in
 * exceed the limit by more than LA_VOID_SPARE. With 0, a record of 60
 * includes each naming a void asks as strict does (7 questions) but the
 * corpus's round trips grow 3 % over the minimum; with 1, 9 questions
 * and the minimum kept (bench/lookahead_equal); unbounded, 14.
 */
#define LA_VOID_SPARE 1u


/*
 * A target that needs no DNS to expand: none given (the record's own
 * domain), a macro-free domain-spec, or macros of the request alone
 * (§7.3: all but %{p}, whose validated name needs the PTR lookups of
 * §5.5), expanded as strict evaluation will with `domain` as %{d}. The
 * expansion lives in ev->scratch until the next one: speculate() files
 * a copy.
 */
static int target_name(struct walk *w, const struct spfkit_term *t, const char *domain,
		       size_t domain_len, const char **name, size_t *len)
{
	const struct spfkit_macro_string *ms = &t->domain;
	struct spfkit_eval *ev = w->ev;
	struct spfkit__macro_env env;
	int rc;

	if (!t->has_domain) {
		*name = domain;
		*len = domain_len;
		return 1;
	}
	if (ms->letters == 0 && ms->count == 1 && ms->pieces[0].kind == SPFKIT_PIECE_LITERAL) {
		*name = ms->pieces[0].text;
		*len = ms->pieces[0].len;
		return 1; /* speculate() checks it before filing */
	}
	if ((ms->letters & (1u << ('p' - 'a'))) || spfkit__idna_no_ascii(ev, ms))
		return 0;
	spfkit__eval_macro_env_for(ev, domain, domain_len, &env);
	spfkit__buf_reset(&ev->scratch);
	rc = spfkit__macro_expand(ms, &env, SPFKIT__MACRO_DOMAIN, &ev->scratch);
	if (rc != 0)
		return 0; /* too long (strict: permerror) or out of memory: not asked */
	*name = spfkit__buf_str(&ev->scratch);
	*len = spfkit__domain_trim(*name, ev->scratch.len);
	return 1;
}

/* The question already filed, if any (no new entry). */
static struct query *find(const struct spfkit_eval *ev, uint16_t type, const char *name,
			  size_t len)
{
	size_t i;

	len = spfkit__domain_trim(name, len);
	for (i = 0; i < ev->nqueries; i++) {
		struct query *q = ev->queries[i];

		if (q->type == type && q->name_len == len &&
		    spfkit__memcaseeq(q->name, q->name_len, name, len))
			return q;
	}
	return NULL;
}

/*
 * The question (filed now if new), or NULL. `term`: asked for a term
 * itself, not an MX host: lookahead files those for at most as many
 * terms as the limit (§4.6.4) lets strict evaluation query, whatever the
 * records turn out to hold; past that it only reads what is filed.
 */
static struct query *speculate(struct walk *w, uint16_t type, const char *name, size_t len,
			       unsigned flags, unsigned level, int term)
{
	struct spfkit_eval *ev = w->ev;
	size_t before = ev->nqueries;
	struct query *q;

	/* walked again at each answer: most are found, unhashed, unchecked */
	q = find(ev, type, name, len);
	if (q != NULL)
		return q;
	if (ev->speculative >= EVAL_MAX_SPECULATIVE || (term && ev->speculative_terms >= w->limit))
		return NULL;
	if (!spfkit__domain_valid(name, len))
		return NULL; /* strict: no match, or for include a permerror */
	q = spfkit__query_file(ev, type, name, len, flags, level);
	if (q == NULL && ev->nqueries < EVAL_MAX_QUERIES)
		w->rc = SPFKIT_ENOMEM;
	if (ev->nqueries > before) {
		ev->speculative++;
		ev->speculative_terms += term;
	}
	return q;
}

static uint16_t address_type(const struct spfkit_eval *ev)
{
	return ev->ip.family == 4 ? SPFKIT_RR_A : SPFKIT_RR_AAAA;
}

/* Does an address answer hold the client within the term's CIDR length (§5.3, §5.4)? */
static int answer_has_client(const struct spfkit_eval *ev, const struct spfkit_term *t,
			     const struct query *q)
{
	size_t i, want = ev->ip.family == 4 ? 4 : 16;

	if (q->state != Q_DONE || q->ans.status != SPFKIT_DNS_OK)
		return 0;
	for (i = 0; i < q->ans.count; i++) {
		const struct spfkit_dns_rr *rr = &q->ans.rrs[i];

		if (rr->len == want &&
		    spfkit__ipaddr_match(&ev->ip, ev->ip.family, rr->data,
					 ev->ip.family == 4 ? t->cidr4 : t->cidr6))
			return 1;
	}
	return 0;
}

/* The hosts of an MX answer, as many as the MX limit lets "mx" look up;
 * 1 when one whose answer is in holds the client: then the term matches
 * (or strict evaluation meets a failed host before it, temperror): either
 * way it decides. */
static int speculate_mx_hosts(struct walk *w, const struct spfkit_term *t, const struct query *mx)
{
	size_t i, n = 0;
	int found = 0;

	for (i = 0; i < mx->ans.count && w->rc == 0 && n < w->ev->ctx->limits.mx_names; i++) {
		const struct spfkit_dns_rr *rr = &mx->ans.rrs[i];
		const struct query *q;

		if (rr->len == 0 || (rr->len == 1 && rr->data[0] == '.'))
			continue; /* the null MX of RFC 7505, skipped by strict too */
		n++;
		q = speculate(w, address_type(w->ev), (const char *)rr->data, rr->len, 0,
			      mx->level + 1u, 0);
		if (q != NULL && answer_has_client(w->ev, t, q))
			found = 1;
	}
	return found;
}

/* ip4, ip6 and all decide without DNS: does this one match the client? */
static int matches_without_dns(const struct spfkit_eval *ev, const struct spfkit__hot_term *h,
			       const struct spfkit_term *t)
{
	if (h->is_modifier)
		return 0;
	switch (h->mech) {
	case SPFKIT_MECH_ALL: return 1;
	case SPFKIT_MECH_IP4: return ev->ip.family == 4 && ((ev->ip4 ^ h->ip4) & h->mask4) == 0;
	case SPFKIT_MECH_IP6: return ev->ip.family == 6 && spfkit__ipaddr_match(&ev->ip, 6, t->ip,
										t->cidr6);
	default: return 0;
	}
}

/* The first term from `first` on that matches without DNS, or the count. */
static size_t static_stop(const struct spfkit_eval *ev, const struct spfkit_record *rec,
			  const struct spfkit__hot_term *hot, size_t first)
{
	size_t i;

	for (i = first; i < rec->count; i++)
		if (matches_without_dns(ev, &hot[i], &rec->terms[i]))
			break;
	return i;
}

/* An a or exists term whose answer is already in: does it match (§5.3,
 * §5.7)? Then it decides its record as strict evaluation will find. */
static int answered_match(const struct spfkit_eval *ev, const struct spfkit_term *t,
			  const struct query *q)
{
	if (t->mech == SPFKIT_MECH_EXISTS)
		return q->state == Q_DONE && q->ans.status == SPFKIT_DNS_OK && q->ans.count > 0;
	return answer_has_client(ev, t, q);
}

static int queries_dns(const struct spfkit__hot_term *h)
{
	return !h->is_modifier &&
	       (h->mech == SPFKIT_MECH_INCLUDE || h->mech == SPFKIT_MECH_A ||
		h->mech == SPFKIT_MECH_MX || h->mech == SPFKIT_MECH_PTR ||
		h->mech == SPFKIT_MECH_EXISTS);
}

/* One more DNS-querying term passed (unless strict already charged it);
 * 0 when strict evaluation gives permerror there (§4.6.4). */
static int charge(struct walk *w, int charged)
{
	if (!charged)
		w->pos++;
	return w->pos <= w->limit;
}

static enum walked walk_record(struct walk *w, struct query *txt, unsigned depth);

/*
 * The top-level result will be fail, decided in `rec` (the top record or
 * a redirect target: depth 0): its exp= TXT is what strict evaluation
 * asks next (§6.2), so ask it now. Like every speculative question it
 * counts for nothing until strict evaluation uses it, and exp lookups
 * never count against the limits (§4.6.4).
 */
static void prefetch_exp(struct walk *w, const struct spfkit_record *rec, const char *domain,
			 size_t domain_len, unsigned level)
{
	const char *name;
	size_t len;

	if (rec->exp < 0 || w->blind ||
	    !target_name(w, &rec->terms[rec->exp], domain, domain_len, &name, &len))
		return;
	(void)speculate(w, SPFKIT_RR_TXT, name, len, 0, level + 1u, 0);
}

/* A term's question: from the record's memo (`slot`, may be NULL) when a
 * walk met it before, else found or filed, and kept there. */
static struct query *term_question(struct walk *w, struct query **slot, uint16_t type,
				   const char *name, size_t len, unsigned flags, unsigned level)
{
	struct query *q = slot != NULL && *slot != NULL ? *slot : find(w->ev, type, name, len);

	if (q == NULL && w->voids + w->pending > w->ev->ctx->limits.void_lookups + LA_VOID_SPARE) {
		w->stop = 1;
		return NULL;
	}
	if (q == NULL)
		q = speculate(w, type, name, len, flags, level, 1);
	if (slot != NULL)
		*slot = q;
	if (q == NULL)
		return NULL;
	if (q->state != Q_DONE)
		w->pending++;
	else if (spfkit__query_answer_void(&q->ans) && ++w->voids > w->ev->ctx->limits.void_lookups)
		w->stop = 1; /* strict evaluation gives permerror here (§4.6.4) */
	return q;
}

/* A DNS-querying term at a place strict evaluation reaches: ask for it. */
static enum walked walk_dns_term(struct walk *w, const struct spfkit_term *t, struct query **slot,
				 const char *domain, size_t domain_len, unsigned level,
				 unsigned depth)
{
	const char *name;
	size_t len;
	struct query *q;
	enum walked r;

	if (!target_name(w, t, domain, domain_len, &name, &len)) {
		if (t->mech == SPFKIT_MECH_INCLUDE)
			w->exact = 0; /* a record we cannot know yet */
		return W_ON;
	}
	if (w->blind && t->mech != SPFKIT_MECH_INCLUDE)
		return W_ON;
	switch (t->mech) {
	case SPFKIT_MECH_A:
	case SPFKIT_MECH_EXISTS:
		q = term_question(w, slot,
				  t->mech == SPFKIT_MECH_EXISTS ? SPFKIT_RR_A : address_type(w->ev),
				  name, len, 0, level + 1u);
		if (q != NULL && answered_match(w->ev, t, q))
			return t->qualifier == '+' ? W_PASS : W_OTHER;
		return W_ON;
	case SPFKIT_MECH_MX:
		q = term_question(w, slot, SPFKIT_RR_MX, name, len, QF_MX, level + 1u);
		if (q != NULL && q->state == Q_DONE && q->ans.status == SPFKIT_DNS_OK && w->exact &&
		    speculate_mx_hosts(w, t, q))
			return t->qualifier == '+' ? W_PASS : W_OTHER;
		return W_ON;
	case SPFKIT_MECH_INCLUDE:
		if (depth + 1u >= EVAL_MAX_DEPTH)
			return W_END;
		q = term_question(w, slot, SPFKIT_RR_TXT, name, len, QF_RECORD, level + 1u);
		if (q == NULL)
			return W_END;
		r = walk_record(w, q, depth + 1u);
		/* §5.2: pass matches the include; fail, softfail, neutral do not */
		return r == W_PASS ? (t->qualifier == '+' ? W_PASS : W_OTHER) : r == W_END ? W_END : W_ON;
	default:
		return W_ON; /* ptr: the client's own reverse name, asked by strict evaluation */
	}
}

/* §6.1: no mechanism matched; the redirect's result is the record's. */
static enum walked walk_redirect(struct walk *w, const struct spfkit_record *rec,
				 struct query **memo, const char *domain, size_t domain_len,
				 int charged, unsigned level, unsigned depth)
{
	const struct spfkit_term *t;
	const char *name;
	size_t len;
	struct query *q;

	if (rec->redirect < 0)
		return W_OTHER; /* neutral (§4.7) */
	if (!charge(w, charged))
		return W_END;
	t = &rec->terms[rec->redirect];
	if (!target_name(w, t, domain, domain_len, &name, &len)) {
		w->exact = 0;
		return W_ON;
	}
	q = term_question(w, memo != NULL ? &memo[rec->redirect] : NULL, SPFKIT_RR_TXT, name, len,
			  QF_RECORD, level + 1u);
	return q == NULL ? W_END : walk_record(w, q, depth);
}

/* The terms of a record from `first` up to `stop` (the first that
 * matches without DNS, or the count; `charged`: strict evaluation already
 * counted term `first`), then its redirect. */
static enum walked walk_terms(struct walk *w, const struct spfkit_record *rec,
			      const struct spfkit__hot_term *hot, struct query **memo, const char *domain,
			      size_t domain_len, size_t first, size_t stop, int charged,
			      unsigned level, unsigned depth)
{
	size_t i = first;

	/* provider records are mostly ip4/ip6 lists: skip them in one go */
	if (rec->dns_terms == (rec->redirect >= 0 ? 1u : 0u))
		i = stop;
	for (; i < stop && w->rc == 0; i++) {
		enum walked r;

		if (w->stop)
			return W_END;
		if (!queries_dns(&hot[i]))
			continue;
		if (!charge(w, charged && i == first))
			return W_END;
		r = walk_dns_term(w, &rec->terms[i], memo != NULL ? &memo[i] : NULL, domain,
				  domain_len, level, depth);
		if (r == W_OTHER && depth == 0 && rec->terms[i].qualifier == '-')
			prefetch_exp(w, rec, domain, domain_len, level);
		if (r != W_ON)
			return r;
	}
	if (w->rc != 0)
		return W_END;
	if (stop < rec->count) { /* §4.6.2: the first match decides */
		if (depth == 0 && rec->terms[stop].qualifier == '-')
			prefetch_exp(w, rec, domain, domain_len, level);
		return rec->terms[stop].qualifier == '+' ? W_PASS : W_OTHER;
	}
	return walk_redirect(w, rec, memo, domain, domain_len, charged && first == rec->count,
			     level, depth);
}

/* Each term's question of a record, kept with its TXT answer for the
 * next walks (NULL when there is no memory for it: then found anew). */
static struct query **term_memo(struct spfkit_eval *ev, struct query *txt)
{
	size_t n = txt->rce->rec->count;

	if (txt->la_terms == NULL && n > 0) {
		txt->la_terms = spfkit__arena_alloc(&ev->arena, n * sizeof(*txt->la_terms));
		if (txt->la_terms != NULL)
			memset(txt->la_terms, 0, n * sizeof(*txt->la_terms));
	}
	return txt->la_terms;
}

/* The terms of a frame's record from `first` on. */
static enum walked walk_frame_terms(struct walk *w, const struct frame *f, size_t first,
				    int charged)
{
	size_t stop = static_stop(w->ev, f->rec, f->hot, first);
	struct query *txt = find(w->ev, SPFKIT_RR_TXT, f->domain, f->domain_len);
	struct query **memo = NULL;

	if (txt != NULL && txt->rec_state == REC_OK && txt->rce->rec == f->rec)
		memo = term_memo(w->ev, txt);
	return walk_terms(w, f->rec, f->hot, memo, f->domain, f->domain_len, first, stop, charged,
			  f->rec_level, (unsigned)(f - w->ev->frames));
}

/* A record's TXT question: enter the record once it is in and known to
 * be at the place counted. */
static enum walked walk_record(struct walk *w, struct query *txt, unsigned depth)
{
	const struct spfkit_record *rec;
	enum walked r;
	int blind;

	if (txt->state != Q_DONE) {
		w->exact = 0;
		return W_ON;
	}
	if (txt->ans.status != SPFKIT_DNS_OK && !spfkit__query_answer_void(&txt->ans))
		return W_END; /* temperror */
	if (spfkit__query_record(w->ev, txt) != 0) {
		w->rc = SPFKIT_ENOMEM;
		return W_END;
	}
	if (txt->rec_state != REC_OK)
		return W_END; /* none, or permerror: for an include or redirect both end it */
	rec = txt->rce->rec;
	/* walked again at each record or MX answer: scan the ip4 lists once */
	if (txt->la_stop == 0)
		txt->la_stop = 1 + static_stop(w->ev, rec, txt->rce->hot, 0);
	blind = w->blind;
	w->blind = blind || !w->exact;
	r = walk_terms(w, rec, txt->rce->hot, term_memo(w->ev, txt), txt->name, txt->name_len, 0,
		       txt->la_stop - 1, 0, txt->level, depth);
	w->blind = blind;
	return r;
}

/* Where strict evaluation stands in its innermost frame. */
static enum walked walk_current(struct walk *w, struct frame *f, unsigned depth)
{
	struct query *q;

	switch (f->phase) {
	case PH_START:
		q = find(w->ev, SPFKIT_RR_TXT, f->domain, f->domain_len);
		if (q != NULL)
			return walk_record(w, q, depth);
		q = spfkit__query_file(w->ev, SPFKIT_RR_TXT, f->domain, f->domain_len, QF_RECORD,
				 (unsigned)f->base_level + 1u);
		if (q == NULL)
			return W_END;
		return walk_record(w, q, depth);
	case PH_TERMS:
		return walk_frame_terms(w, f, f->term, f->term_charged);
	case PH_REDIRECT:
		return walk_frame_terms(w, f, f->rec->count, f->term_charged);
	default:
		return W_END; /* the top-level result is known (§6.2 explanation) */
	}
}

/* Strict's position, then out through the frames of its includes. */
static void walk_from_strict(struct walk *w)
{
	unsigned d = w->ev->depth;
	enum walked r = walk_current(w, &w->ev->frames[d - 1], d - 1);

	for (; d > 1 && r != W_END && w->rc == 0; d--) {
		struct frame *parent = &w->ev->frames[d - 2];
		const struct spfkit_term *t = &parent->rec->terms[parent->term];

		if (r == W_PASS) { /* the include matches: its qualifier is the result */
			if (d == 2 && t->qualifier == '-')
				prefetch_exp(w, parent->rec, parent->domain, parent->domain_len,
					     parent->rec_level);
			r = t->qualifier == '+' ? W_PASS : W_OTHER;
		} else
			r = walk_frame_terms(w, parent, parent->term + 1u, 0);
	}
}

/* File what strict evaluation, where it stands, will likely ask next. */
int spfkit__lookahead_walk(struct spfkit_eval *ev)
{
	struct walk w;

	w.ev = ev;
	w.pos = ev->dns_terms;
	w.limit = ev->ctx->limits.dns_terms;
	w.exact = 1;
	w.blind = 0;
	w.voids = ev->void_lookups;
	w.pending = 0;
	w.stop = 0;
	w.rc = 0;
	walk_from_strict(&w);
	return w.rc;
}

int spfkit__lookahead(struct spfkit_eval *ev, struct query *q)
{
	if (q->ans.status != SPFKIT_DNS_OK || ev->depth == 0)
		return 0;
	/* only a record or an MX answer tells more of what comes next */
	if (!(q->type == SPFKIT_RR_MX && (q->flags & QF_MX)) &&
	    !(q->type == SPFKIT_RR_TXT && (q->flags & QF_RECORD)))
		return 0;
	return spfkit__lookahead_walk(ev);
}

/*
 * Switched on late, the walk from strict's position files what the
 * answers already in would have led lookahead to: each walk starts
 * there, whichever answer set it off.
 */
int spfkit_eval_set_lookahead(struct spfkit_eval *ev, int on)
{
	int was;

	if (ev == NULL)
		return SPFKIT_EINVAL;
	was = ev->lookahead;
	ev->lookahead = on != 0;
	if (ev->lookahead && !was && !ev->done && ev->depth > 0)
		(void)spfkit__lookahead_walk(ev); /* only asks early: failing to is no error */
	return 0;
}
