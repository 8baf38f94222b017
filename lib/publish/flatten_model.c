/*
 * What a domain's records mean, as address sets: `spfkit flatten`
 * watches lint's walk (lint_walk.c), which visits the terms in
 * evaluation order as a client matching nothing would (every term to
 * the first all, includes in full, redirect= when there is no all).
 *
 * Each record walked is a frame holding, per result, the addresses its
 * terms decide. A term decides only what no earlier term decided
 * (RFC 7208 §4.6.2: the first match wins), so an address that a -ip4
 * inside an include reaches first is that include's fail, never its
 * pass, whatever a later +ip4 says. When a record is done:
 *  - include (§5.2): the parent's term matches exactly the child's
 *    pass set; the child's fail, softfail and neutral mean "no match"
 *    and the parent goes on;
 *  - redirect (§6.1): the child's result is the parent's for every
 *    address the parent's terms left undecided;
 *  - no all and no redirect (§4.7): the rest is neutral.
 * At the root the decided sets are kept per run of flattenable terms,
 * between the terms kept as written (exists, ptr, macros, --keep), in
 * order: within a run the four sets are disjoint, so their order there
 * does not matter. A record (other than the root) holding a kept term
 * is "tainted": the include or redirect leading to it is kept as written.
 */
#include <stdio.h>
#include <string.h>

#include "publish.h"

struct flat_frame {
	struct tree_ranges q[FQ_COUNT]; /* decided here, per result (not at the root) */
	struct tree_ranges decided;
	struct tree_ranges pending; /* a/mx: the addresses of the term being walked */
	int pending_on;
	enum flat_q pending_q;
	int tainted;  /* holds a term kept as written */
	int has_all;
	int complete; /* every address decided */
	int always;   /* lint's walk saw this record pass every client: its parent stops there */
	int stopped;  /* the walk of this record's terms ended at a mechanism (all, such an include) */
	int redirect_pending; /* the record has redirect=, not walked yet */
	enum lint_how how;
	enum flat_q via_q;  /* the qualifier of the include leading here */
	const char *via;    /* that term (or redirect=) as written */
	const char *domain;
	int expect;         /* an include term waits for its target's walk */
	int expect_skip;    /* ...which is kept: not looked into */
};

char spfkit__flat_q_char(enum flat_q q)
{
	static const char chars[FQ_COUNT] = { '+', '-', '~', '?' };

	return chars[q];
}

enum flat_q spfkit__flat_q_of(int qualifier)
{
	switch (qualifier) {
	case '-': return FQ_FAIL;
	case '~': return FQ_SOFTFAIL;
	case '?': return FQ_NEUTRAL;
	default: return FQ_PASS;
	}
}

#define FNV_OFFSET 0xcbf29ce484222325u
#define FNV_PRIME 0x100000001b3u

static void hash_bytes(struct flat_model *m, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < len; i++) {
		m->hash ^= s[i];
		m->hash *= FNV_PRIME;
	}
}

int spfkit__flat_model_init(struct flat_model *m, struct lint_report *r, const char *const *keep,
			    size_t nkeep)
{
	memset(m, 0, sizeof(*m));
	m->r = r;
	m->keep = keep;
	m->nkeep = nkeep;
	m->hash = FNV_OFFSET;
	m->stack = spfkit__calloc(NULL, FLAT_MAX_DEPTH, sizeof(*m->stack));
	return m->stack != NULL ? 0 : SPFKIT_ENOMEM;
}

static void frame_free(struct flat_frame *f)
{
	int q;

	for (q = 0; q < FQ_COUNT; q++)
		spfkit__tree_ranges_free(&f->q[q]);
	spfkit__tree_ranges_free(&f->decided);
	spfkit__tree_ranges_free(&f->pending);
	memset(f, 0, sizeof(*f));
}

void spfkit__flat_model_free(struct flat_model *m)
{
	size_t i;
	int q;

	if (m->stack != NULL)
		for (i = 0; i < FLAT_MAX_DEPTH; i++)
			frame_free(&m->stack[i]);
	spfkit__free(NULL, m->stack);
	for (i = 0; i < m->nsegs; i++)
		for (q = 0; q < FQ_COUNT; q++)
			spfkit__tree_ranges_free(&m->segs[i].q[q]);
	spfkit__free(NULL, m->segs);
	spfkit__free(NULL, m->reads);
	spfkit__tree_ranges_free(&m->decided);
	spfkit__tree_ranges_free(&m->blocks);
	memset(m, 0, sizeof(*m));
}

static void fail(struct flat_model *m, int rc)
{
	if (m->err == 0)
		m->err = rc;
}

static void say_problem(struct flat_model *m, const char *domain, const char *what)
{
	if (m->problem[0] == '\0')
		snprintf(m->problem, sizeof(m->problem), "%s: %s", domain != NULL ? domain : "?", what);
}

static struct flat_frame *top(struct flat_model *m)
{
	return m->depth > 0 ? &m->stack[m->depth - 1] : NULL;
}

/* ---- the root's segments -------------------------------------------------- */

static struct flat_seg *new_seg(struct flat_model *m)
{
	struct flat_seg *p;

	p = spfkit__array_grow(m->segs, &m->capsegs, m->nsegs, sizeof(*p), 8);
	if (p == NULL) {
		fail(m, SPFKIT_ENOMEM);
		return NULL;
	}
	m->segs = p;
	p = &m->segs[m->nsegs++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* Where the root's decided sets go: the current run, opened when needed. */
static struct tree_ranges *run_sets(struct flat_model *m)
{
	struct flat_seg *s = m->nsegs > 0 ? &m->segs[m->nsegs - 1] : NULL;

	if (s == NULL || s->opaque)
		s = new_seg(m);
	return s != NULL ? s->q : NULL;
}

static struct tree_ranges *target_sets(struct flat_model *m, struct flat_frame *f)
{
	return f == &m->stack[0] ? run_sets(m) : f->q;
}

/* A term kept as written: a segment at the root, a taint below it. */
static void opaque(struct flat_model *m, struct flat_frame *f, const char *text, size_t len)
{
	struct flat_seg *s;

	if (f != &m->stack[0]) {
		f->tainted = 1;
		return;
	}
	s = new_seg(m);
	if (s == NULL)
		return;
	s->opaque = 1;
	s->text = spfkit__lint_strndup(m->r, text, len);
	s->len = len;
	if (s->text == NULL)
		fail(m, SPFKIT_ENOMEM);
}

/* A term with qualifier q matching the (normal) set r: it decides r minus what was decided. */
static void apply(struct flat_model *m, struct flat_frame *f, enum flat_q q,
		  const struct tree_ranges *r)
{
	struct tree_ranges fresh = { NULL, 0, 0 };
	struct tree_ranges *sets = target_sets(m, f);

	if (sets == NULL)
		return;
	if (spfkit__flat_set_minus(&fresh, r, &f->decided) != 0 ||
	    spfkit__flat_set_union(&sets[q], &fresh) != 0 ||
	    spfkit__flat_set_union(&f->decided, r) != 0)
		fail(m, SPFKIT_ENOMEM);
	spfkit__tree_ranges_free(&fresh);
}

/* Every address not decided yet gets q (an all, or §4.7's neutral). */
static void apply_rest(struct flat_model *m, struct flat_frame *f, enum flat_q q)
{
	struct tree_ranges u = { NULL, 0, 0 };

	if (spfkit__flat_set_universe(&u) != 0)
		fail(m, SPFKIT_ENOMEM);
	else
		apply(m, f, q, &u);
	spfkit__tree_ranges_free(&u);
	f->complete = 1;
}

static void flush_pending(struct flat_model *m, struct flat_frame *f)
{
	if (!f->pending_on)
		return;
	f->pending_on = 0;
	if (spfkit__tree_ranges_merge_from(&m->blocks, &f->pending) != 0)
		fail(m, SPFKIT_ENOMEM);
	apply(m, f, f->pending_q, &f->pending);
	f->pending.n = 0;
}

/* An include whose target never came (lint stops past its depth limit). */
static void check_expect(struct flat_model *m, struct flat_frame *f)
{
	if (f->expect)
		say_problem(m, f->domain, "an include was not followed (the tree is too deep)");
	f->expect = 0;
	f->expect_skip = 0;
}

/* ---- events ----------------------------------------------------------------- */

static int is_kept(const struct flat_model *m, const struct spfkit_term *t)
{
	size_t i, len = t->domain.src_len;

	if (len > 0 && t->domain.src[len - 1] == '.')
		len--;
	for (i = 0; i < m->nkeep; i++)
		if (spfkit__memcaseeq(m->keep[i], strlen(m->keep[i]), t->domain.src, len))
			return 1;
	return 0;
}

static int dynamic(const struct spfkit_term *t)
{
	return t->has_domain && t->domain.letters != 0;
}

static void on_term(struct flat_model *m, const struct lint_walk_event *ev)
{
	struct flat_frame *f = top(m);
	const struct spfkit_term *t = ev->term;
	const char *text = ev->rec->text + t->offset;
	struct tree_ranges r = { NULL, 0, 0 };
	enum flat_q q = spfkit__flat_q_of(t->qualifier);

	if (f == NULL)
		return;
	flush_pending(m, f);
	check_expect(m, f);
	switch (t->mech) {
	case SPFKIT_MECH_ALL:
		f->has_all = 1;
		f->always = q == FQ_PASS;
		f->stopped = 1;
		apply_rest(m, f, q);
		break;
	case SPFKIT_MECH_IP4:
	case SPFKIT_MECH_IP6:
		if (spfkit__flat_set_add_prefix(&r, t->mech == SPFKIT_MECH_IP6, t->ip,
						t->mech == SPFKIT_MECH_IP6 ? t->cidr6 : t->cidr4) !=
			    0 ||
		    spfkit__tree_ranges_merge_from(&m->blocks, &r) != 0)
			fail(m, SPFKIT_ENOMEM);
		apply(m, f, q, &r);
		break;
	case SPFKIT_MECH_A:
	case SPFKIT_MECH_MX:
		if (dynamic(t)) {
			opaque(m, f, text, t->len);
			break;
		}
		/* the addresses come as ADDRESSES events; the term ends at the next event */
		f->pending_on = 1;
		f->pending_q = q;
		f->pending.n = 0;
		break;
	case SPFKIT_MECH_INCLUDE:
		if (dynamic(t) || is_kept(m, t)) {
			opaque(m, f, text, t->len);
			f->expect_skip = 1;
			break;
		}
		f->expect = 1;
		break;
	default: /* ptr, exists: the client's own names and addresses decide (§5.5, §5.7) */
		opaque(m, f, text, t->len);
		break;
	}
	spfkit__tree_ranges_free(&r);
}

static void add_answer(struct flat_model *m, struct flat_frame *f, const struct lint_answer *a,
		       int v6, unsigned prefix)
{
	size_t i;

	if (a == NULL || a->status != SPFKIT_DNS_OK)
		return;
	for (i = 0; i < a->count; i++) {
		if (a->rrs[i].len != (v6 ? 16u : 4u))
			continue;
		hash_bytes(m, a->rrs[i].data, a->rrs[i].len);
		if (spfkit__tree_ranges_add(&f->pending, v6, a->rrs[i].data, prefix) != 0)
			fail(m, SPFKIT_ENOMEM);
	}
	if (a->ttl < m->min_ttl || !m->has_ttl) {
		m->min_ttl = a->ttl;
		m->has_ttl = 1;
	}
}

static void on_addresses(struct flat_model *m, const struct lint_walk_event *ev)
{
	struct flat_frame *f = top(m);

	if (f == NULL || !f->pending_on)
		return;
	add_answer(m, f, ev->a4, 0, ev->term->cidr4);
	add_answer(m, f, ev->a6, 1, ev->term->cidr6);
	if (spfkit__flat_set_normalize(&f->pending) != 0)
		fail(m, SPFKIT_ENOMEM);
}

static void on_enter(struct flat_model *m, const struct lint_walk_event *ev)
{
	struct flat_frame *parent = top(m), *f;

	if (m->skip > 0) {
		m->skip++;
		return;
	}
	if (parent != NULL && parent->expect_skip) {
		parent->expect_skip = 0;
		m->skip = 1; /* a kept include: its subtree stays behind it */
		return;
	}
	if (parent != NULL && ev->how == LINT_HOW_INCLUDE && !parent->expect) {
		say_problem(m, parent->domain, "an include came without its term");
		m->skip = 1;
		return;
	}
	if (m->depth >= FLAT_MAX_DEPTH) {
		say_problem(m, parent->domain, "the include/redirect tree is too deep");
		m->skip = 1;
		return;
	}
	if (parent != NULL)
		parent->expect = 0;
	if (parent != NULL && ev->how == LINT_HOW_REDIRECT)
		parent->redirect_pending = 0;
	f = &m->stack[m->depth++];
	frame_free(f);
	f->how = ev->how;
	f->via_q = spfkit__flat_q_of(ev->via_qualifier);
	f->via = ev->via != NULL ? spfkit__lint_strndup(m->r, ev->via, ev->via_len) : NULL;
	f->domain = spfkit__lint_strndup(m->r, ev->name, ev->len);
	if (f->domain == NULL || (ev->via != NULL && f->via == NULL))
		fail(m, SPFKIT_ENOMEM);
}

/* A finished record hands its sets to its parent. */
static void leave_child(struct flat_model *m, struct flat_frame *f, struct flat_frame *parent)
{
	struct tree_ranges fresh = { NULL, 0, 0 };
	struct tree_ranges *sets;
	int q;

	if (f->how == LINT_HOW_INCLUDE && f->always) {
		/*
		 * lint's walk ends the parent's terms at an include whose record
		 * ends in +all (lint_walk.c, walk_terms): right when the include
		 * passes every address, but the terms after it are never seen
		 * when an earlier term of that record keeps some out.
		 */
		struct tree_ranges u = { NULL, 0, 0 };

		if (spfkit__flat_set_universe(&u) != 0)
			fail(m, SPFKIT_ENOMEM);
		if (f->tainted || !spfkit__flat_set_equal(&f->q[FQ_PASS], &u))
			say_problem(m, parent->domain,
				    "an include whose record ends in +all does not pass every address: "
				    "the terms after it are not walked");
		spfkit__tree_ranges_free(&u);
		parent->always = f->via_q == FQ_PASS;
		parent->stopped = 1;
	}
	if (f->how == LINT_HOW_REDIRECT)
		parent->always = f->always;
	if (f->how == LINT_HOW_INCLUDE) {
		if (f->tainted)
			opaque(m, parent, f->via, f->via != NULL ? strlen(f->via) : 0);
		else
			apply(m, parent, f->via_q, &f->q[FQ_PASS]);
		return;
	}
	/* redirect= (§6.1): the target's result for all the parent left open */
	if (f->tainted) {
		if (parent == &m->stack[0])
			m->redirect = f->via;
		else
			parent->tainted = 1;
		return;
	}
	sets = target_sets(m, parent);
	for (q = 0; q < FQ_COUNT && sets != NULL; q++) {
		if (spfkit__flat_set_minus(&fresh, &f->q[q], &parent->decided) != 0 ||
		    spfkit__flat_set_union(&sets[q], &fresh) != 0)
			fail(m, SPFKIT_ENOMEM);
	}
	spfkit__tree_ranges_free(&fresh);
	if (spfkit__flat_set_universe(&parent->decided) != 0)
		fail(m, SPFKIT_ENOMEM);
	parent->complete = 1;
}

static void on_leave(struct flat_model *m)
{
	struct flat_frame *f = top(m);

	if (m->skip > 0) {
		m->skip--;
		return;
	}
	if (f == NULL)
		return;
	flush_pending(m, f);
	check_expect(m, f);
	if (f->redirect_pending && !f->stopped)
		say_problem(m, f->domain, "redirect= was not followed (the tree is too deep)");
	if (m->depth == 1) {
		struct tree_ranges u = { NULL, 0, 0 };

		/* an include that passes everything decides every address too */
		if (spfkit__flat_set_universe(&u) != 0)
			fail(m, SPFKIT_ENOMEM);
		m->complete = f->complete || spfkit__flat_set_equal(&f->decided, &u);
		spfkit__tree_ranges_free(&u);
		m->root_all = f->has_all;
		if (spfkit__flat_set_copy(&m->decided, &f->decided) != 0)
			fail(m, SPFKIT_ENOMEM);
		frame_free(f);
		m->depth = 0;
		return;
	}
	if (!f->complete && !f->tainted)
		apply_rest(m, f, FQ_NEUTRAL); /* §4.7: no match, no redirect: neutral */
	leave_child(m, f, &m->stack[m->depth - 2]);
	frame_free(f);
	m->depth--;
}

static void on_record(struct flat_model *m, const struct lint_walk_event *ev)
{
	struct flat_frame *f = top(m);
	const struct spfkit_term *t;

	if (f == NULL || ev->rec == NULL)
		return;
	m->records++;
	f->redirect_pending = ev->rec->redirect >= 0;
	hash_bytes(m, f->domain, strlen(f->domain));
	hash_bytes(m, "", 1);
	hash_bytes(m, ev->text, ev->text_len);
	hash_bytes(m, "", 1);
	if (ev->has_ttl && (ev->ttl < m->min_ttl || !m->has_ttl)) {
		m->min_ttl = ev->ttl;
		m->has_ttl = 1;
	}
	if (m->depth != 1)
		return;
	m->root_seen = 1;
	if (ev->rec->exp >= 0) {
		t = &ev->rec->terms[ev->rec->exp];
		m->exp = spfkit__lint_strndup(m->r, ev->rec->text + t->offset, t->len);
		if (m->exp == NULL)
			fail(m, SPFKIT_ENOMEM);
	}
}

/*
 * Every name the walk enters, kept subtrees too: the owner's records (or
 * a provider's), which receivers may still read and --check-live reads
 * through the source. flatten_emit.c never writes an _spfN record there.
 */
static void note_read(struct flat_model *m, const char *name, size_t len)
{
	const char **p;

	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || spfkit__flat_model_reads(m, name, len))
		return;
	p = spfkit__array_grow(m->reads, &m->capreads, m->nreads, sizeof(*p), 16);
	if (p == NULL) {
		fail(m, SPFKIT_ENOMEM);
		return;
	}
	m->reads = p;
	m->reads[m->nreads] = spfkit__lint_strndup(m->r, name, len);
	if (m->reads[m->nreads] == NULL)
		fail(m, SPFKIT_ENOMEM);
	else
		m->nreads++;
}

int spfkit__flat_model_reads(const struct flat_model *m, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < m->nreads; i++)
		if (spfkit__memcaseeq(m->reads[i], strlen(m->reads[i]), name, len))
			return 1;
	return 0;
}

void spfkit__flat_model_observe(void *arg, const struct lint_walk_event *ev)
{
	struct flat_model *m = arg;
	struct flat_frame *f;

	if (m->err != 0)
		return;
	if (ev->kind == LW_ENTER)
		note_read(m, ev->name, ev->len);
	if (m->skip > 0 && ev->kind != LW_ENTER && ev->kind != LW_LEAVE)
		return;
	switch (ev->kind) {
	case LW_ENTER: on_enter(m, ev); break;
	case LW_LEAVE: on_leave(m); break;
	case LW_RECORD: on_record(m, ev); break;
	case LW_TERM: on_term(m, ev); break;
	case LW_ADDRESSES: on_addresses(m, ev); break;
	case LW_PROBLEM:
		f = top(m);
		if (ev->error)
			say_problem(m, f != NULL ? f->domain : NULL, ev->what);
		else if (f != NULL)
			f->tainted = 1; /* a target made by macros, or past the walk's limits */
		break;
	default: break;
	}
}

/* The findings that mean receivers get temperror, or permerror from the source itself. */
static int refused(enum lint_id id)
{
	switch (id) {
	case L_NO_RECORD:
	case L_MULTIPLE_RECORDS:
	case L_SYNTAX:
	case L_INCLUDE_NO_RECORD:
	case L_REDIRECT_NO_RECORD:
	case L_INCLUDE_LOOP:
	case L_REDIRECT_LOOP:
	case L_MX_OVER_10:
	case L_DNS_FAILURE:
		return 1;
	default:
		return 0;
	}
}

int spfkit__flat_model_usable(struct flat_model *m)
{
	size_t i;

	for (i = 0; i < m->r->n; i++) {
		const struct lint_finding *fd = &m->r->items[i];

		if (!refused(fd->id) || fd->severity != LINT_ERROR)
			continue;
		snprintf(m->problem, sizeof(m->problem), "%s (%s, in the record of %s)",
			 fd->message, spfkit__lint_checks[fd->id].id,
			 fd->domain != NULL ? fd->domain : m->r->domain);
		return 0;
	}
	if (m->problem[0] == '\0' && !m->root_seen)
		snprintf(m->problem, sizeof(m->problem), "%s: no SPF record was read", m->r->domain);
	return m->problem[0] == '\0' && m->err == 0;
}
