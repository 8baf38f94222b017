/*
 * Telling the observer (`spfkit tree`, flatten's model: lint_input.observe)
 * each step of lint's walk, with the walk's counters so far: one walker,
 * so what they show is what lint counts (lint_walk.c).
 */
#include <stdio.h>

#include "lint_walk.h"

void spfkit__lint_observe_event(struct walk *w, struct lint_walk_event *ev)
{
	if (w->observe == NULL)
		return;
	ev->dns_terms = w->r->counts.dns_terms;
	ev->voids[0] = w->voids[0];
	ev->voids[1] = w->voids[1];
	w->observe(w->observe_arg, ev);
}

void spfkit__lint_observe_simple(struct walk *w, enum lint_walk_kind kind)
{
	spfkit__lint_observe_event(w, &(struct lint_walk_event){ .kind = kind });
}

/* A record looked for at name; via: the term that leads there (NULL: the top). */
void spfkit__lint_observe_enter(struct walk *w, const char *name, size_t len, enum lint_how how,
				const char *via_text, const struct spfkit_term *via)
{
	struct lint_walk_event ev = { .kind = LW_ENTER, .name = name, .len = len, .how = how };

	if (via != NULL) {
		ev.via = via_text + via->offset;
		ev.via_len = via->len;
		ev.via_qualifier = via->is_modifier ? '+' : via->qualifier;
	}
	spfkit__lint_observe_event(w, &ev);
}

void spfkit__lint_observe_problem(struct walk *w, int error, int loop, const char *what)
{
	spfkit__lint_observe_event(w, &(struct lint_walk_event){
		.kind = LW_PROBLEM, .what = what, .error = error, .loop = loop });
}

/* A branch that ends before any record is read: a loop, a bad or dynamic name. */
void spfkit__lint_observe_leaf(struct walk *w, const char *name, size_t len, enum lint_how how,
			       const char *via_text, const struct spfkit_term *via, int error,
			       int loop, const char *what)
{
	if (w->observe == NULL)
		return;
	spfkit__lint_observe_enter(w, name, len, how, via_text, via);
	spfkit__lint_observe_problem(w, error, loop, what);
	spfkit__lint_observe_simple(w, LW_LEAVE);
}

void spfkit__lint_observe_addresses(struct walk *w, const struct spfkit_term *t,
				    const struct lint_answer *a4, const struct lint_answer *a6)
{
	spfkit__lint_observe_event(w, &(struct lint_walk_event){
		.kind = LW_ADDRESSES, .term = t, .a4 = a4, .a6 = a6 });
}

void spfkit__lint_observe_record(struct walk *w, const struct node *n, const char *text, size_t len,
				 const struct spfkit_record *rec)
{
	spfkit__lint_observe_event(w, &(struct lint_walk_event){ .kind = LW_RECORD,
								 .rec = rec,
								 .text = text,
								 .text_len = len,
								 .ttl = n->ttl,
								 .has_ttl = n->has_ttl });
}

void spfkit__lint_observe_syntax(struct walk *w, const struct spfkit_parse_error *pe, int rc)
{
	char what[200];

	snprintf(what, sizeof(what), "syntax: %s at byte %zu: receivers return permerror",
		 pe->rule != NULL ? pe->rule : spfkit_strerror(rc), pe->offset);
	spfkit__lint_observe_problem(w, 1, 0, what);
}
