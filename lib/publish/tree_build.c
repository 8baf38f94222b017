/*
 * The tree of `spfkit tree`, built while lint's walker goes through the
 * include/redirect tree (lint_walk.c tells each step: lint.h,
 * lint_walk_event). Counts per node are differences of the walker's own
 * counters between the node's ENTER and LEAVE, so a node's subtree
 * count is exactly what the walk spent below it and the root's equals
 * lint's worst case.
 */
#include <string.h>

#include "publish.h"

void spfkit__tree_init(struct tree *t, struct lint_report *r)
{
	memset(t, 0, sizeof(*t));
	t->r = r;
}

static void free_node(struct tree_node *n)
{
	struct tree_node *c;

	for (c = n->child; c != NULL; c = c->next)
		free_node(c);
	spfkit__tree_ranges_free(&n->own);
	spfkit__tree_ranges_free(&n->sub);
	spfkit__free(NULL, n->dynamic);
}

void spfkit__tree_free(struct tree *t)
{
	if (t->root != NULL)
		free_node(t->root); /* the nodes themselves are in the report's arena */
	t->root = t->cur = NULL;
}

static void fail(struct tree *t, int rc)
{
	if (t->err == 0)
		t->err = rc;
}

/* Was this domain read before, off this branch? Then it is not expanded again. */
static int seen_before(const struct tree_node *n, const struct tree_node *at, const char *domain)
{
	const struct tree_node *c;

	if (n == at)
		return 0;
	if (!n->loop && n->record != NULL && n->domain[0] != '\0' &&
	    spfkit__memcaseeq(n->domain, strlen(n->domain), domain, strlen(domain)))
		return 1;
	for (c = n->child; c != NULL; c = c->next)
		if (seen_before(c, at, domain))
			return 1;
	return 0;
}

static void on_enter(struct tree *t, const struct lint_walk_event *ev)
{
	struct tree_node *n = spfkit__arena_alloc(&t->r->arena, sizeof(*n));

	if (n == NULL) {
		fail(t, SPFKIT_ENOMEM);
		return;
	}
	memset(n, 0, sizeof(*n));
	n->id = t->nodes++;
	n->domain = spfkit__lint_strndup(t->r, ev->name != NULL ? ev->name : "", ev->len);
	n->how = ev->how;
	n->via = ev->via != NULL ? spfkit__lint_strndup(t->r, ev->via, ev->via_len) : NULL;
	n->via_qualifier = ev->via_qualifier;
	n->enter_terms = ev->dns_terms;
	n->enter_voids[0] = ev->voids[0];
	n->enter_voids[1] = ev->voids[1];
	if (n->domain == NULL)
		n->domain = "";
	n->parent = t->cur;
	if (t->cur == NULL) {
		t->root = n;
	} else {
		if (t->cur->last_child != NULL)
			t->cur->last_child->next = n;
		else
			t->cur->child = n;
		t->cur->last_child = n;
	}
	t->cur = n;
}

static void add_dynamic(struct tree *t, struct tree_node *n, const struct spfkit_record *rec)
{
	size_t i, k = 0;

	for (i = 0; i < rec->count; i++)
		k += rec->terms[i].domain.letters != 0;
	if (k == 0)
		return;
	n->dynamic = spfkit__calloc(NULL, k, sizeof(*n->dynamic));
	if (n->dynamic == NULL) {
		fail(t, SPFKIT_ENOMEM);
		return;
	}
	for (i = 0; i < rec->count; i++)
		if (rec->terms[i].domain.letters != 0)
			n->dynamic[n->ndynamic++] = spfkit__lint_strndup(
				t->r, rec->text + rec->terms[i].offset, rec->terms[i].len);
}

static void on_record(struct tree *t, struct tree_node *n, const struct lint_walk_event *ev)
{
	n->record = spfkit__lint_strndup(t->r, ev->text, ev->text_len);
	n->record_len = ev->text_len;
	n->ttl = ev->ttl;
	n->has_ttl = ev->has_ttl;
	if (n->how != LINT_HOW_TOP && n->parent != NULL && seen_before(t->root, n, n->domain))
		n->repeated = 1;
	n->parsed = ev->rec != NULL;
	if (ev->rec != NULL)
		add_dynamic(t, n, ev->rec);
}

/* ip4/ip6 terms that pass, and +all. */
static void on_term(struct tree *t, struct tree_node *n, const struct spfkit_term *term)
{
	int rc = 0;

	if (term->qualifier != '+')
		return;
	if (term->mech == SPFKIT_MECH_ALL)
		n->plus_all = 1;
	else if (term->mech == SPFKIT_MECH_IP4)
		rc = spfkit__tree_ranges_add(&n->own, 0, term->ip, term->cidr4);
	else if (term->mech == SPFKIT_MECH_IP6)
		rc = spfkit__tree_ranges_add(&n->own, 1, term->ip, term->cidr6);
	if (rc != 0)
		fail(t, rc);
}

/* An a or mx term's addresses, widened by its prefix lengths (a/24 counts the /24). */
static void on_addresses(struct tree *t, struct tree_node *n, const struct lint_walk_event *ev)
{
	size_t i;

	if (ev->term->qualifier != '+')
		return;
	for (i = 0; ev->a4 != NULL && i < ev->a4->count; i++)
		if (ev->a4->rrs[i].len == 4 &&
		    spfkit__tree_ranges_add(&n->own, 0, ev->a4->rrs[i].data, ev->term->cidr4) != 0)
			fail(t, SPFKIT_ENOMEM);
	for (i = 0; ev->a6 != NULL && i < ev->a6->count; i++)
		if (ev->a6->rrs[i].len == 16 &&
		    spfkit__tree_ranges_add(&n->own, 1, ev->a6->rrs[i].data, ev->term->cidr6) != 0)
			fail(t, SPFKIT_ENOMEM);
}

/* The walker tells each void once per family: one entry for both when they agree. */
static void on_void(struct tree *t, struct tree_node *n, const struct lint_walk_event *ev)
{
	struct tree_void *v = n->voids_last;
	size_t len = ev->len < 200 ? ev->len : 200;

	if (v != NULL && !(v->families & (1u << ev->family)) && strcmp(v->what, ev->what) == 0 &&
	    strlen(v->name) == len && memcmp(v->name, ev->name, len) == 0) {
		v->families |= 1u << ev->family;
		return;
	}
	v = spfkit__arena_alloc(&t->r->arena, sizeof(*v));
	if (v == NULL) {
		fail(t, SPFKIT_ENOMEM);
		return;
	}
	v->what = spfkit__lint_strndup(t->r, ev->what, strlen(ev->what));
	v->name = spfkit__lint_strndup(t->r, ev->name, len);
	v->families = 1u << ev->family;
	v->next = NULL;
	if (v->what == NULL || v->name == NULL) {
		fail(t, SPFKIT_ENOMEM);
		return;
	}
	if (n->voids_last != NULL)
		n->voids_last->next = v;
	else
		n->voids = v;
	n->voids_last = v;
}

static void on_problem(struct tree *t, struct tree_node *n, const struct lint_walk_event *ev)
{
	n->problem = spfkit__lint_strndup(t->r, ev->what, strlen(ev->what));
	n->error = ev->error;
	n->loop = ev->loop;
	t->errors += ev->error != 0;
}

/* Counts from the walker's counters; ranges joined and handed to the parent. */
static void on_leave(struct tree *t, struct tree_node *n, const struct lint_walk_event *ev)
{
	const struct tree_node *c;
	struct tree_node *p = n->parent;
	int fam;

	n->terms_tree = ev->dns_terms - n->enter_terms;
	n->terms_here = n->terms_tree;
	for (fam = 0; fam < 2; fam++)
		n->voids_tree[fam] = n->voids_here[fam] = ev->voids[fam] - n->enter_voids[fam];
	for (c = n->child; c != NULL; c = c->next) {
		n->terms_here -= c->terms_tree;
		for (fam = 0; fam < 2; fam++)
			n->voids_here[fam] -= c->voids_tree[fam];
	}
	if (spfkit__tree_ranges_merge_from(&n->sub, &n->own) != 0)
		fail(t, SPFKIT_ENOMEM);
	spfkit__tree_ranges_union(&n->own, &n->v4_here, &n->v6_here);
	spfkit__tree_ranges_union(&n->sub, &n->v4_tree, &n->v6_tree);
	n->all_tree |= n->plus_all;
	/* §5.2: an include matches where its record passes; its qualifier says what for */
	if (p != NULL && n->via_qualifier == '+') {
		if (spfkit__tree_ranges_merge_from(&p->sub, &n->sub) != 0)
			fail(t, SPFKIT_ENOMEM);
		p->all_tree |= n->all_tree;
	}
	spfkit__tree_ranges_free(&n->own);
	spfkit__tree_ranges_free(&n->sub);
	t->cur = p;
}

void spfkit__tree_observe(void *arg, const struct lint_walk_event *ev)
{
	struct tree *t = arg;
	struct tree_node *n = t->cur;

	if (ev->kind == LW_ENTER) {
		on_enter(t, ev);
		return;
	}
	if (n == NULL)
		return; /* its ENTER failed (out of memory): t->err says so */
	switch (ev->kind) {
	case LW_RECORD: on_record(t, n, ev); break;
	case LW_TERM: on_term(t, n, ev->term); break;
	case LW_ADDRESSES: on_addresses(t, n, ev); break;
	case LW_VOID: on_void(t, n, ev); break;
	case LW_PROBLEM: on_problem(t, n, ev); break;
	case LW_LEAVE: on_leave(t, n, ev); break;
	default: break;
	}
}

int spfkit__tree_exit_status(const struct tree *t)
{
	const struct lint_counts *c = &t->r->counts;

	if (t->errors > 0 || c->permerror_v4 || c->permerror_v6)
		return 2;
	return 0;
}

/* ---- after the walk ------------------------------------------------------- */

static int add_more(struct tree *t, struct lint_dns *d, struct tree_node *n)
{
	const struct lint_answer *a;
	size_t i, k = 0, spf = 0;

	/* several records stop the walk before parsing: only such nodes can have them */
	if (n->record == NULL || n->parsed || !n->has_ttl || n->domain[0] == '\0')
		return 0;
	if (spfkit__lint_dns_ask(d, n->domain, strlen(n->domain), SPFKIT_RR_TXT, &a) != 0)
		return 0; /* not in the walk's answers: nothing to add */
	for (i = 0; i < a->count; i++)
		spf += spfkit_record_is_spf((const char *)a->rrs[i].data, a->rrs[i].len) != 0;
	if (spf < 2)
		return 0;
	n->more = spfkit__arena_alloc(&t->r->arena, (spf - 1) * sizeof(*n->more));
	if (n->more == NULL)
		return SPFKIT_ENOMEM;
	for (i = 0, spf = 0; i < a->count; i++) {
		const char *s = (const char *)a->rrs[i].data;

		if (!spfkit_record_is_spf(s, a->rrs[i].len) || spf++ == 0)
			continue; /* the first is n->record, as the walk read it */
		n->more[k].text = spfkit__lint_strndup(t->r, s, a->rrs[i].len);
		n->more[k].len = a->rrs[i].len;
		if (n->more[k].text == NULL)
			return SPFKIT_ENOMEM;
		k++;
	}
	n->nmore = k;
	return 0;
}

static int add_records_below(struct tree *t, struct lint_dns *d, struct tree_node *n)
{
	struct tree_node *c;
	int rc = add_more(t, d, n);

	for (c = n->child; c != NULL && rc == 0; c = c->next)
		rc = add_records_below(t, d, c);
	return rc;
}

int spfkit__tree_add_records(struct tree *t, struct lint_dns *d)
{
	return t->root != NULL ? add_records_below(t, d, t->root) : 0;
}

static enum tree_limit against(unsigned before, unsigned after, unsigned limit)
{
	if (before > limit)
		return TREE_BEYOND;
	return after > limit ? TREE_CROSSES : TREE_UNDER;
}

void spfkit__tree_marks(const struct tree_node *n, struct tree_marks *m)
{
	enum tree_limit v[2];
	int fam;

	memset(m, 0, sizeof(*m));
	m->terms_before = n->enter_terms;
	m->terms_after = n->enter_terms + n->terms_tree;
	m->lookups = against(m->terms_before, m->terms_after, SPFKIT_LIMIT_DNS_TERMS);
	for (fam = 0; fam < 2; fam++) {
		m->voids_after[fam] = n->enter_voids[fam] + n->voids_tree[fam];
		v[fam] = against(n->enter_voids[fam], m->voids_after[fam], SPFKIT_LIMIT_VOID_LOOKUPS);
		m->void_heavy |= n->voids_tree[fam] >= SPFKIT_LIMIT_VOID_LOOKUPS;
	}
	m->voids = v[0] > v[1] ? v[0] : v[1];
}
