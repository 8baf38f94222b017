/*
 * The public API of lint and tree (include/spfkit/publish.h): one run of
 * lint's walk, as cli/cmd_lint.c and cli/cmd_tree.c drive it, and its
 * report and tree copied into the public structs. A thin layer: what is
 * found and counted is lint_*.c's and tree_*.c's; this file only reads
 * their results (the CLI's printers read the same fields).
 */
#include <string.h>

#include "core.h"
#include "publish.h"

#include <spfkit/publish.h>

_Static_assert(SPFKIT_LINT_TIME_LIMIT_S == LINT_TIME_LIMIT_S, "one default time limit");
_Static_assert((int)SPFKIT_LINT_ERROR == (int)LINT_ERROR &&
		       (int)SPFKIT_LINT_WARNING == (int)LINT_WARNING &&
		       (int)SPFKIT_LINT_NOTICE == (int)LINT_NOTICE,
	       "public severities are lint's");
_Static_assert((int)SPFKIT_TREE_TOP == (int)LINT_HOW_TOP &&
		       (int)SPFKIT_TREE_INCLUDE == (int)LINT_HOW_INCLUDE &&
		       (int)SPFKIT_TREE_REDIRECT == (int)LINT_HOW_REDIRECT,
	       "public tree links are lint's");

/* The 1.0 layout of the options: what a caller must have at least. */
#define OPTIONS_1_0_SIZE (offsetof(struct spfkit_lint_options, tree) + sizeof(int))

#define COUNT_TEXT 48u /* spfkit__tree_count_str(): 2^128 has 39 digits */

struct spfkit_lint {
	struct lint_report r; /* its arena holds everything below */
	struct tree t;
	struct spfkit_lint_summary summary;
	struct spfkit_lint_finding *findings;
	size_t n;
	struct spfkit_tree_node *root;
};

const char *spfkit_lint_severity_name(enum spfkit_lint_severity s)
{
	if (s != SPFKIT_LINT_ERROR && s != SPFKIT_LINT_WARNING && s != SPFKIT_LINT_NOTICE)
		return "unknown";
	return spfkit__lint_severity_name((enum lint_severity)s);
}

void spfkit_lint_free(struct spfkit_lint *l)
{
	if (l == NULL)
		return;
	spfkit__tree_free(&l->t);
	spfkit__lint_report_free(&l->r);
	spfkit__free(NULL, l);
}

/* ---- copying out ----------------------------------------------------------- */

static void *arena_array(struct spfkit_lint *l, size_t n, size_t size)
{
	if (n == 0)
		return NULL;
	if (n > SIZE_MAX / size) {
		l->r.err = SPFKIT_ENOMEM;
		return NULL;
	}
	return spfkit__arena_alloc(&l->r.arena, n * size);
}

static int copy_findings(struct spfkit_lint *l)
{
	const struct lint_finding *x;
	struct spfkit_lint_finding *f;
	size_t i;

	l->findings = arena_array(l, l->r.n, sizeof(*l->findings));
	if (l->findings == NULL && l->r.n > 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < l->r.n; i++) {
		x = &l->r.items[i];
		f = &l->findings[i];
		f->id = spfkit__lint_checks[x->id].id;
		f->severity = (enum spfkit_lint_severity)x->severity;
		f->domain = x->domain;
		f->term = x->term;
		f->offset = x->offset;
		f->message = x->message;
		f->fix = spfkit__lint_finding_fix(x);
		f->section = spfkit__lint_checks[x->id].section;
		f->provider = x->provider;
		f->reason = x->reason;
	}
	l->n = l->r.n;
	return 0;
}

static int copy_costs(struct spfkit_lint *l, struct spfkit_lint_summary *s)
{
	struct spfkit_lint_cost *out = arena_array(l, l->r.ncosts, sizeof(*out));
	size_t i;

	if (out == NULL && l->r.ncosts > 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < l->r.ncosts; i++) {
		out[i].term = l->r.costs[i].term;
		out[i].offset = l->r.costs[i].offset;
		out[i].cost = l->r.costs[i].cost;
		out[i].total = l->r.costs[i].running;
		out[i].after_flatten = l->r.costs[i].kept;
	}
	s->costs = out;
	s->ncosts = l->r.ncosts;
	return 0;
}

static int copy_records(struct spfkit_lint *l, struct spfkit_lint_summary *s)
{
	struct spfkit_tree_record *out = arena_array(l, l->r.nrecords, sizeof(*out));
	size_t i;

	if (out == NULL && l->r.nrecords > 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < l->r.nrecords; i++) {
		out[i].text = l->r.records[i];
		out[i].len = l->r.record_lens[i];
	}
	s->spf_records = out;
	s->nspf_records = l->r.nrecords;
	return 0;
}

static int fill_summary(struct spfkit_lint *l, int stopped, unsigned late, int with_tree)
{
	const struct lint_counts *c = &l->r.counts;
	struct spfkit_lint_summary *s = &l->summary;

	s->domain = l->r.domain[0] != '\0' ? l->r.domain : NULL;
	s->record = l->r.record;
	s->record_len = l->r.record_len;
	s->dns_terms = c->dns_terms;
	s->void_lookups_ipv4 = c->void_v4;
	s->void_lookups_ipv6 = c->void_v6;
	s->permerror_ipv4 = c->permerror_v4;
	s->permerror_ipv6 = c->permerror_v6;
	s->dynamic = c->dynamic;
	s->loop = c->loop;
	s->records = c->records;
	s->errors = spfkit__lint_tally(&l->r, LINT_ERROR);
	s->warnings = spfkit__lint_tally(&l->r, LINT_WARNING);
	s->notices = spfkit__lint_tally(&l->r, LINT_NOTICE);
	s->status = spfkit__lint_exit_status(&l->r);
	s->tree_status = with_tree ? spfkit__tree_exit_status(&l->t) : 0;
	s->stopped = stopped;
	s->unanswered = late;
	s->unevaluated = c->unevaluated;
	s->dns_terms_once_fixed = c->dns_terms_fixed;
	s->flatten_checked = c->flatten_checked;
	s->dns_terms_after_flatten = c->after_flatten;
	s->flatten_fixes = c->flatten_fixes;
	s->flatten_note = l->r.flatten_note;
	s->provider_errors = spfkit__lint_tally_provider(&l->r, LINT_ERROR);
	s->provider_warnings = spfkit__lint_tally_provider(&l->r, LINT_WARNING);
	s->provider_notices = spfkit__lint_tally_provider(&l->r, LINT_NOTICE);
	if (copy_records(l, s) != 0 || copy_costs(l, s) != 0)
		return SPFKIT_ENOMEM;
	return 0;
}

static const char *count_text(struct spfkit_lint *l, const struct tree_count *c)
{
	char buf[COUNT_TEXT];

	spfkit__tree_count_str(c, buf, sizeof(buf));
	return spfkit__lint_strndup(&l->r, buf, strlen(buf));
}

static int copy_voids(struct spfkit_lint *l, const struct tree_node *n, struct spfkit_tree_node *p)
{
	const struct tree_void *v;
	struct spfkit_tree_void *out;
	size_t k = 0;

	for (v = n->voids; v != NULL; v = v->next)
		k++;
	out = arena_array(l, k, sizeof(*out));
	if (out == NULL && k > 0)
		return SPFKIT_ENOMEM;
	for (v = n->voids, k = 0; v != NULL; v = v->next, k++) {
		out[k].type = v->what;
		out[k].name = v->name;
		out[k].ipv4 = (v->families & 1u) != 0;
		out[k].ipv6 = (v->families & 2u) != 0;
	}
	p->voids = out;
	p->nvoids = k;
	return 0;
}

static int copy_more(struct spfkit_lint *l, const struct tree_node *n, struct spfkit_tree_node *p)
{
	struct spfkit_tree_record *out = arena_array(l, n->nmore, sizeof(*out));
	size_t i;

	if (out == NULL && n->nmore > 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < n->nmore; i++) {
		out[i].text = n->more[i].text;
		out[i].len = n->more[i].len;
	}
	p->other_records = out;
	p->nother_records = n->nmore;
	return 0;
}

static int copy_node_fields(struct spfkit_lint *l, const struct tree_node *n,
			    struct spfkit_tree_node *p)
{
	p->domain = n->domain[0] != '\0' ? n->domain : NULL;
	p->how = (enum spfkit_tree_how)n->how;
	p->via = n->via;
	p->via_qualifier = n->via_qualifier;
	p->record = n->record;
	p->record_len = n->record_len;
	p->ttl = n->ttl;
	p->has_ttl = n->has_ttl;
	p->parsed = n->parsed;
	p->lookups_here = n->terms_here;
	p->lookups_subtree = n->terms_tree;
	p->voids_ipv4_here = n->voids_here[0];
	p->voids_ipv6_here = n->voids_here[1];
	p->voids_ipv4_subtree = n->voids_tree[0];
	p->voids_ipv6_subtree = n->voids_tree[1];
	p->dynamic = n->dynamic;
	p->ndynamic = n->ndynamic;
	p->ipv4_here = count_text(l, &n->v4_here);
	p->ipv6_here = count_text(l, &n->v6_here);
	p->ipv4_subtree = count_text(l, &n->v4_tree);
	p->ipv6_subtree = count_text(l, &n->v6_tree);
	p->plus_all = n->all_tree;
	p->problem = n->problem;
	p->error = n->error;
	p->loop = n->loop;
	p->repeated = n->repeated;
	if (p->ipv4_here == NULL || p->ipv6_here == NULL || p->ipv4_subtree == NULL ||
	    p->ipv6_subtree == NULL)
		return SPFKIT_ENOMEM;
	if (copy_more(l, n, p) != 0)
		return SPFKIT_ENOMEM;
	return copy_voids(l, n, p);
}

/* Depth-first; the walk's depth is bounded (lint_walk.c), so is this recursion. */
static int copy_node(struct spfkit_lint *l, const struct tree_node *n,
		     struct spfkit_tree_node **out)
{
	struct spfkit_tree_node *p = spfkit__arena_alloc(&l->r.arena, sizeof(*p));
	struct spfkit_tree_node *last = NULL, *cn;
	const struct tree_node *c;
	int rc;

	if (p == NULL)
		return SPFKIT_ENOMEM;
	memset(p, 0, sizeof(*p));
	*out = p;
	rc = copy_node_fields(l, n, p);
	/* as `spfkit tree` shows it: a repeated record is not expanded again */
	for (c = n->repeated ? NULL : n->child; c != NULL && rc == 0; c = c->next) {
		rc = copy_node(l, c, &cn);
		if (rc != 0)
			break;
		if (last != NULL)
			last->next = cn;
		else
			p->child = cn;
		last = cn;
	}
	return rc;
}

/* ---- the run --------------------------------------------------------------- */

/* The record as character-strings: checked here, joined by join_strings(). */
static int take_strings(const struct spfkit_lint_options *o)
{
	size_t i, total = 0;

	if (o->nstrings == 0)
		return 0;
	if (o->record != NULL || o->strings == NULL || o->string_lens == NULL)
		return SPFKIT_EINVAL;
	if (o->nstrings > SPFKIT_LINT_MAX_STRINGS)
		return SPFKIT_E2BIG;
	for (i = 0; i < o->nstrings; i++) {
		if (o->strings[i] == NULL && o->string_lens[i] > 0)
			return SPFKIT_EINVAL;
		if (o->string_lens[i] > SPFKIT_LINT_MAX_TEXT - total)
			return SPFKIT_E2BIG;
		total += o->string_lens[i];
	}
	return 0;
}

/* The strings joined (§3.3: with nothing between them) into the report's
 * arena, as the record lint reads; the strings themselves are read as given. */
static int join_strings(struct spfkit_lint *l, const struct spfkit_lint_options *o,
			struct lint_input *in)
{
	size_t i, total = 0;
	char *buf;

	for (i = 0; i < o->nstrings; i++)
		total += o->string_lens[i]; /* bounded by take_strings() */
	buf = spfkit__arena_alloc(&l->r.arena, total + 1);
	if (buf == NULL)
		return SPFKIT_ENOMEM;
	total = 0;
	for (i = 0; i < o->nstrings; i++) {
		if (o->string_lens[i] > 0)
			memcpy(buf + total, o->strings[i], o->string_lens[i]);
		total += o->string_lens[i];
	}
	buf[total] = '\0';
	in->record = buf;
	in->record_len = total;
	in->strs = o->strings;
	in->lens = o->string_lens;
	in->nstrs = o->nstrings;
	return 0;
}

static int take_options(const struct spfkit_lint_options *opt, struct spfkit_lint_options *o)
{
	if (opt == NULL || spfkit__sized_copy(o, sizeof(*o), opt, OPTIONS_1_0_SIZE) != 0)
		return SPFKIT_EINVAL;
	if (o->domain == NULL && o->domain_len > 0)
		return SPFKIT_EINVAL;
	if (o->record == NULL && o->record_len > 0)
		return SPFKIT_EINVAL;
	if (o->domain == NULL && o->record == NULL && o->nstrings == 0)
		return SPFKIT_EINVAL;
	if (o->domain != NULL && memchr(o->domain, '\0', o->domain_len) != NULL)
		return SPFKIT_EINVAL;
	return take_strings(o);
}

/* The walk, as cmd_lint.c's lint_one() and cmd_tree.c's walk() run it. */
static int walk(struct spfkit_lint *l, struct spfkit_resolver *dns,
		const struct spfkit_lint_options *o)
{
	struct lint_input in;
	struct lint_dns d;
	unsigned late;
	int rc, stopped;

	memset(&in, 0, sizeof(in));
	if (o->tree) {
		in.observe = spfkit__tree_observe;
		in.observe_arg = &l->t;
	}
	if (o->domain != NULL) {
		in.domain = spfkit__lint_strndup(&l->r, o->domain, o->domain_len);
		if (in.domain == NULL)
			return SPFKIT_ENOMEM;
	}
	in.record = o->record;
	in.record_len = o->record_len;
	if (o->nstrings > 0 && join_strings(l, o, &in) != 0)
		return SPFKIT_ENOMEM;
	in.flatten_check = 1; /* as `spfkit lint`: whether flatten fixes a tree over the limit */
	spfkit__lint_dns_init(&d, dns, &l->r);
	spfkit__lint_dns_set_time_limit(&d, o->time_limit_s != 0 ? o->time_limit_s
								  : LINT_TIME_LIMIT_S);
	rc = spfkit__lint_run(&d, &in);
	if (rc == 0 && o->tree)
		rc = spfkit__tree_add_records(&l->t, &d);
	late = d.late;
	spfkit__lint_dns_free(&d);
	stopped = rc == SPFKIT_E2BIG; /* what was found is kept, as the CLI prints it */
	if (stopped)
		rc = 0;
	if (rc == 0 && o->tree)
		rc = l->t.err;
	if (rc != 0)
		return rc;
	return fill_summary(l, stopped, late, o->tree);
}

int spfkit_lint_run(struct spfkit_resolver *dns, const struct spfkit_lint_options *opt,
		    struct spfkit_lint **out)
{
	struct spfkit_lint_options o;
	struct spfkit_lint *l;
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	rc = take_options(opt, &o);
	if (rc != 0)
		return rc;
	l = spfkit__zalloc(NULL, sizeof(*l));
	if (l == NULL)
		return SPFKIT_ENOMEM;
	spfkit__lint_report_init(&l->r);
	spfkit__tree_init(&l->t, &l->r);
	rc = walk(l, dns, &o);
	if (rc == 0)
		rc = copy_findings(l);
	if (rc == 0 && o.tree && l->t.root != NULL)
		rc = copy_node(l, l->t.root, &l->root);
	if (rc != 0) {
		spfkit_lint_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

const struct spfkit_lint_summary *spfkit_lint_summary(const struct spfkit_lint *l)
{
	return l != NULL ? &l->summary : NULL;
}

size_t spfkit_lint_count(const struct spfkit_lint *l)
{
	return l != NULL ? l->n : 0;
}

const struct spfkit_lint_finding *spfkit_lint_finding(const struct spfkit_lint *l, size_t i)
{
	if (l == NULL || i >= l->n)
		return NULL;
	return &l->findings[i];
}

const struct spfkit_tree_node *spfkit_lint_tree(const struct spfkit_lint *l)
{
	return l != NULL ? l->root : NULL;
}
