/*
 * `spfkit flatten --check-live`: what the source means now against what
 * the domain publishes, both as flatten_model.c reads them. The runs are
 * compared in order, set by set; the set each writes as its final "all"
 * by its qualifier only (it is the rest, and changes whenever the blocks
 * before it change).
 */
#include <string.h>

#include "publish.h"

static const char *q_name(int q)
{
	static const char *const names[FQ_COUNT] = { "pass", "fail", "softfail", "neutral" };

	return names[q];
}

static int seg_empty(const struct flat_seg *s)
{
	int q;

	if (s->opaque)
		return 0;
	for (q = 0; q < FQ_COUNT; q++)
		if (s->q[q].n > 0)
			return 0;
	return 1;
}

/* The next segment that says something, from *i on; NULL at the end. */
static const struct flat_seg *next_seg(const struct flat_model *m, size_t *i)
{
	while (*i < m->nsegs && seg_empty(&m->segs[*i]))
		(*i)++;
	return *i < m->nsegs ? &m->segs[(*i)++] : NULL;
}

static int diff_set(struct flat_live *d, char sign, int q, const struct tree_ranges *a,
		    const struct tree_ranges *b)
{
	struct tree_ranges only = { NULL, 0, 0 };
	struct flat_cidrs c = { NULL, 0, 0 };
	char term[64];
	size_t i;
	int rc = spfkit__flat_set_minus(&only, a, b);

	if (rc == 0)
		rc = spfkit__flat_set_cidrs(&only, &c);
	for (i = 0; rc == 0 && i < c.n; i++) {
		struct spfkit__buf *j = sign == '+' ? &d->json_added : &d->json_removed;

		spfkit__flat_cidr_term(&c.items[i], term, sizeof(term));
		spfkit__buf_printf(&d->text, "  %c %s (%s)\n", sign, term, q_name(q));
		spfkit__buf_printf(j, "%s{\"term\":\"%s\",\"result\":\"%s\"}", j->len ? "," : "",
				   term, q_name(q));
		if (sign == '+')
			d->added++;
		else
			d->removed++;
	}
	spfkit__flat_cidrs_free(&c);
	spfkit__tree_ranges_free(&only);
	return rc;
}

static void diff_text(struct flat_live *d, const char *what, const char *now,
		      const char *published)
{
	d->other++;
	spfkit__buf_printf(&d->text, "  %s: source %s, published %s\n", what,
			   now != NULL ? now : "(none)", published != NULL ? published : "(none)");
}

static int same_text(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return spfkit__memcaseeq(a, strlen(a), b, strlen(b));
}

static int compare(const struct flat_model *src, const struct flat_model *pub,
		   struct flat_live *d)
{
	static const char *const all_text[FQ_COUNT] = { "+all", "-all", "~all", "?all" };
	size_t i = 0, j = 0;
	const struct flat_seg *a, *b;
	int q, all_a, all_b, rc;

	rc = spfkit__flat_final_all(src, &all_a);
	if (rc == 0)
		rc = spfkit__flat_final_all(pub, &all_b);
	if (rc != 0)
		return rc;
	if (all_a != all_b)
		diff_text(d, "final all", all_a >= 0 ? all_text[all_a] : NULL,
			  all_b >= 0 ? all_text[all_b] : NULL);

	for (;;) {
		a = next_seg(src, &i);
		b = next_seg(pub, &j);
		if (a == NULL && b == NULL)
			break;
		if (a == NULL || b == NULL || a->opaque != b->opaque) {
			diff_text(d, "terms kept as written, or their order",
				  a && a->opaque ? a->text : NULL, b && b->opaque ? b->text : NULL);
			break;
		}
		if (a->opaque) {
			if (!same_text(a->text, b->text))
				diff_text(d, "term kept as written", a->text, b->text);
			continue;
		}
		for (q = 0; q < FQ_COUNT && rc == 0; q++) {
			if (q == all_a && all_a == all_b && i == src->nsegs && j == pub->nsegs)
				continue; /* both final "all" sets: the rest of what is compared */
			rc = diff_set(d, '+', q, &a->q[q], &b->q[q]);
			if (rc == 0)
				rc = diff_set(d, '-', q, &b->q[q], &a->q[q]);
		}
	}
	if (!same_text(src->redirect, pub->redirect))
		diff_text(d, "redirect", src->redirect, pub->redirect);
	if (!same_text(src->exp, pub->exp))
		diff_text(d, "exp", src->exp, pub->exp);
	return rc;
}

void spfkit__flat_live_init(struct flat_live *d)
{
	memset(d, 0, sizeof(*d));
	spfkit__buf_init(&d->text, NULL, 1u << 24);
	spfkit__buf_init(&d->json_added, NULL, 1u << 24);
	spfkit__buf_init(&d->json_removed, NULL, 1u << 24);
}

void spfkit__flat_live_free(struct flat_live *d)
{
	spfkit__buf_free(&d->text);
	spfkit__buf_free(&d->json_added);
	spfkit__buf_free(&d->json_removed);
}

int spfkit__flat_live_compare(const struct flat_model *src, const struct flat_model *pub,
			      struct flat_live *d)
{
	int rc = compare(src, pub, d);

	if (rc == 0 && (d->text.err != 0 || d->json_added.err != 0 || d->json_removed.err != 0))
		rc = SPFKIT_ENOMEM;
	return rc;
}
