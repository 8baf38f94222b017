/*
 * What lint says of a record beyond the walk's counts (issue 31): the
 * records a domain publishes when it publishes several, the one syntax
 * finding of a record that does not parse and what it would cost once
 * fixed, and which terms of the top record cost what.
 */
#include <stdio.h>
#include <string.h>

#include "publish.h"

#define LINT_HINTS_MAX 400u /* the typo messages folded into a syntax finding */
#define RECORD_QUOTED 150u  /* bytes of each record quoted in a multiple-records message */

/*
 * The syntax finding of a record that does not parse. A typo finding
 * (lint_text.c) on the very term the parser refused is the same defect
 * told better: it goes into this one finding (its message and fix), so
 * one typo gives one error (issue 31).
 */
void spfkit__lint_syntax_finding(struct lint_report *r, const char *domain, const char *text,
				 size_t len, const struct spfkit_parse_error *pe, int rc, size_t first)
{
	char hints[LINT_HINTS_MAX];
	struct lint_finding *syntax;
	const char *fix = NULL;
	size_t i = first, toff = pe->term_offset > len ? len : pe->term_offset, hl = 0;

	hints[0] = '\0';
	while (i < r->n) {
		const struct lint_finding *f = &r->items[i];
		int k;

		if (f->id != L_TYPO || f->offset != (long)toff) {
			i++;
			continue;
		}
		k = snprintf(hints + hl, sizeof(hints) - hl, "; %s", f->message);
		if (k > 0)
			hl = hl + (size_t)k < sizeof(hints) ? hl + (size_t)k : sizeof(hints) - 1;
		if (fix == NULL && f->fix != NULL)
			fix = f->fix; /* the arena's copy outlives the finding */
		if (fix == NULL)
			fix = "write the term the message names";
		spfkit__lint_remove(r, i);
	}
	syntax = spfkit__lint_add(r, L_SYNTAX, domain, text + toff,
				  pe->term_len < len - toff ? pe->term_len : len - toff, (long)toff,
				  fix, "%s at byte %zu (RFC 7208 section %s): receivers return permerror%s",
				  pe->rule != NULL ? pe->rule : spfkit_strerror(rc), pe->offset,
				  pe->section != NULL ? pe->section : "4.6", hints);
	if (syntax != NULL)
		syntax->reason = spfkit_parse_error_reason(pe);
}

#define TYPO_ROOM 32u /* a meant term is at most this much longer than its misspelling */

struct fixed {
	struct spfkit__buf b, probe, meant;
	int redirect, exp; /* taken already: §6 allows one each */
};

/* Append the term to f->b when it parses on its own and is not a second redirect=/exp=. */
static int take(struct fixed *f, const char *term, size_t len)
{
	struct spfkit_record *one = NULL;
	int ok;

	spfkit__buf_reset(&f->probe);
	spfkit__buf_puts(&f->probe, "v=spf1 ");
	spfkit__buf_append(&f->probe, term, len);
	ok = f->probe.err == 0 &&
	     spfkit_record_parse(f->probe.data, f->probe.len, NULL, &one, NULL) == 0 &&
	     !(one->redirect >= 0 && f->redirect) && !(one->exp >= 0 && f->exp);
	if (ok) {
		f->redirect |= one->redirect >= 0;
		f->exp |= one->exp >= 0;
		spfkit__buf_putc(&f->b, ' ');
		spfkit__buf_append(&f->b, term, len);
	}
	spfkit_record_free(one);
	return ok;
}

/*
 * A top record that does not parse is not evaluated at all: receivers
 * return permerror before any lookup. What it would cost once fixed:
 * the record made of the terms that parse on their own (a recognised
 * misspelling read as what it meant, a second redirect= or exp= left
 * out), walked by a run of its own (its questions and findings are not
 * this run's).
 */
void spfkit__lint_fixed_count(struct lint_dns *dns, const char *domain, const char *text, size_t len)
{
	struct fixed f;
	struct lint_report fr;
	struct lint_dns fd;
	struct lint_input in;
	struct spfkit__buf b;
	size_t i = 0, start;
	unsigned typos = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	spfkit__buf_init(&f.b, NULL, len + 8 + TYPO_ROOM * (len / 2 + 1));
	spfkit__buf_init(&f.probe, NULL, len + 8 + TYPO_ROOM);
	spfkit__buf_init(&f.meant, NULL, len + TYPO_ROOM);
	spfkit__buf_puts(&f.b, "v=spf1");
	while (i < len && text[i] != ' ')
		i++; /* the version term */
	while (i < len) {
		while (i < len && text[i] == ' ')
			i++;
		start = i;
		while (i < len && text[i] != ' ')
			i++;
		if (i == start || take(&f, text + start, i - start))
			continue;
		if (spfkit__lint_typo_meant(text + start, i - start, &f.meant) &&
		    take(&f, f.meant.data, f.meant.len))
			typos++;
	}
	rc = f.b.err;
	b = f.b;
	spfkit__buf_free(&f.probe);
	spfkit__buf_free(&f.meant);
	if (rc != 0) {
		spfkit__buf_free(&b);
		return;
	}
	spfkit__lint_report_init(&fr);
	spfkit__lint_dns_init(&fd, dns->resolver, &fr);
	fd.deadline_ms = dns->deadline_ms;
	fd.limit_s = dns->limit_s;
	memset(&in, 0, sizeof(in));
	in.domain = domain != NULL && domain[0] != '\0' ? domain : NULL;
	in.record = b.data;
	in.record_len = b.len;
	in.counting_only = 1;
	rc = spfkit__lint_run(&fd, &in);
	if (rc == 0 || rc == SPFKIT_E2BIG) {
		dns->report->counts.dns_terms_fixed = fr.counts.dns_terms;
		dns->report->counts.fixed_typos = typos;
		dns->report->counts.unevaluated = 1;
	}
	dns->late += fd.late;
	spfkit__lint_dns_free(&fd);
	spfkit__lint_report_free(&fr);
	spfkit__buf_free(&b);
}

/*
 * §4.5: more than one record is permerror. The owner must merge them,
 * so every one is shown: the top domain's in the report (records), an
 * included domain's in the finding's message.
 */
void spfkit__lint_multiple_records(struct lint_report *r, const char *domain, int top,
				   const struct lint_answer *txt, size_t count)
{
	const char **texts;
	size_t *lens, i, k = 0;
	char quoted[LINT_HINTS_MAX];
	size_t ql = 0;
	int q;

	texts = spfkit__arena_alloc(&r->arena, count * sizeof(*texts));
	lens = spfkit__arena_alloc(&r->arena, count * sizeof(*lens));
	if (texts == NULL || lens == NULL) {
		r->err = SPFKIT_ENOMEM;
		return;
	}
	quoted[0] = '\0';
	for (i = 0; i < txt->count && k < count; i++) {
		const char *s = (const char *)txt->rrs[i].data;
		size_t l = txt->rrs[i].len;

		if (!spfkit_record_is_spf(s, l))
			continue;
		texts[k] = s;
		lens[k++] = l;
		q = snprintf(quoted + ql, sizeof(quoted) - ql, "%s\"%.*s%s\"", ql > 0 ? ", " : ": ",
			     (int)(l < RECORD_QUOTED ? l : RECORD_QUOTED), s,
			     l > RECORD_QUOTED ? "..." : "");
		if (q > 0)
			ql = ql + (size_t)q < sizeof(quoted) ? ql + (size_t)q : sizeof(quoted) - 1;
	}
	if (top) {
		r->records = texts;
		r->record_lens = lens;
		r->nrecords = k;
		r->counts.unevaluated = 2;
		quoted[0] = '\0'; /* the report shows them */
	}
	spfkit__lint_add(r, L_MULTIPLE_RECORDS, domain, NULL, 0, -1, NULL,
			 "%s publishes %zu SPF records: receivers return permerror%s", domain,
			 count, quoted);
}

/*
 * Which terms of the top record cost what (issue 31): the costliest
 * first, each with its tree's share, and the term during which the
 * count passes the limit. Into b, for the finding's message.
 */
void spfkit__lint_cost_text(const struct lint_report *r, char *b, size_t size)
{
	size_t i, j, used = 0, shown = 0, order[8];
	int k;

	b[0] = '\0';
	for (i = 0; i < r->ncosts; i++)
		if (r->costs[i].running > SPFKIT_LIMIT_DNS_TERMS) {
			k = snprintf(b, size, "; the 11th is reached in \"%.60s\"", r->costs[i].term);
			used = k > 0 && (size_t)k < size ? (size_t)k : 0;
			break;
		}
	/* the costliest (up to 8), in evaluation order among equals */
	for (i = 0; i < r->ncosts && shown < 8; i++) {
		for (j = shown; j > 0 && r->costs[order[j - 1]].cost < r->costs[i].cost; j--)
			order[j] = order[j - 1];
		order[j] = i;
		shown++;
	}
	for (i = shown; i < r->ncosts; i++) {
		if (r->costs[i].cost <= r->costs[order[shown - 1]].cost)
			continue;
		for (j = shown - 1; j > 0 && r->costs[order[j - 1]].cost < r->costs[i].cost; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (j = 0; j < shown && used < size; j++) {
		const struct lint_cost *c = &r->costs[order[j]];

		k = snprintf(b + used, size - used, "%s\"%.60s\" %u", j == 0 ? "; cost by term: " : ", ",
			     c->term, c->cost);
		if (k < 0)
			break;
		used = used + (size_t)k < size ? used + (size_t)k : size - 1;
	}
}
