/*
 * DNS for `spfkit lint`: one question at a time through the public
 * resolver seam (include/spfkit/resolver.h), so --zone and real DNS
 * answer alike. Answers are copied into the report's arena and kept:
 * a name asked twice is answered from the cache, as the evaluator asks
 * each question once per evaluation (its void count depends on that).
 */
#include <string.h>

#include "lint.h"

struct lint_cached {
	const char *name;
	size_t len;
	uint16_t type;
	struct lint_answer ans;
};

struct pending {
	struct lint_report *report;
	struct lint_answer *ans;
	int done;
};

void lint_dns_init(struct lint_dns *d, struct spfkit_resolver *resolver, struct lint_report *r)
{
	memset(d, 0, sizeof(*d));
	d->resolver = resolver;
	d->report = r;
}

void lint_dns_free(struct lint_dns *d)
{
	spfkit__free(NULL, d->cache); /* the entries live in the report's arena */
	d->cache = NULL;
	d->n = d->cap = 0;
}

/* The backend's answer is valid only during the callback: copy it. */
static void copy_answer(struct pending *p, const struct spfkit_dns_answer *a)
{
	struct spfkit_dns_rr *rrs = NULL;
	size_t i;

	p->done = 1;
	p->ans->status = a->status;
	p->ans->ttl = a->ttl;
	p->ans->detail = a->detail; /* static text, by the resolver contract */
	if (a->count == 0)
		return;
	if (a->count <= SIZE_MAX / sizeof(*rrs))
		rrs = spfkit__arena_alloc(&p->report->arena, a->count * sizeof(*rrs));
	if (rrs == NULL) {
		p->report->err = SPFKIT_ENOMEM;
		p->ans->status = SPFKIT_DNS_TEMPFAIL;
		p->ans->detail = "out of memory";
		return;
	}
	for (i = 0; i < a->count; i++) {
		rrs[i] = a->rrs[i];
		rrs[i].data = (const unsigned char *)lint_strndup(p->report, (const char *)a->rrs[i].data,
								  a->rrs[i].len);
		if (rrs[i].data == NULL) {
			p->ans->status = SPFKIT_DNS_TEMPFAIL;
			p->ans->detail = "out of memory";
			return;
		}
	}
	p->ans->rrs = rrs;
	p->ans->count = a->count;
}

static void on_answer(void *arg, const struct spfkit_dns_answer *a)
{
	copy_answer(arg, a);
}

static struct lint_answer *find(struct lint_dns *d, const char *name, size_t len, uint16_t type)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->cache[i]->type == type &&
		    spfkit__memcaseeq(d->cache[i]->name, d->cache[i]->len, name, len))
			return &d->cache[i]->ans;
	return NULL;
}

/* A new cache entry, in the arena: answers handed out never move. */
static struct lint_cached *new_entry(struct lint_dns *d)
{
	struct lint_cached **p, *e;
	size_t cap;

	if (d->n >= LINT_MAX_QUESTIONS)
		return NULL;
	if (d->n == d->cap) {
		cap = d->cap ? d->cap * 2 : 64;
		p = spfkit__realloc(NULL, d->cache, cap * sizeof(*p));
		if (p == NULL)
			return NULL;
		d->cache = p;
		d->cap = cap;
	}
	e = spfkit__arena_alloc(&d->report->arena, sizeof(*e));
	if (e == NULL)
		return NULL;
	memset(e, 0, sizeof(*e));
	d->cache[d->n++] = e;
	return e;
}

/* No resolver (--record with nothing to follow through): every name is NXDOMAIN. */
static int ask_nothing(struct lint_answer *ans)
{
	ans->status = SPFKIT_DNS_NXDOMAIN;
	ans->ttl = 0;
	return 0;
}

static int ask(struct lint_dns *d, const char *name, size_t len, uint16_t type,
	       struct lint_answer *ans)
{
	struct pending p = { d->report, ans, 0 };
	uint64_t handle;
	int rc;

	if (d->resolver == NULL)
		return ask_nothing(ans);
	rc = spfkit_resolver_submit(d->resolver, name, len, type, on_answer, &p, &handle);
	if (rc == SPFKIT_EINVAL) {
		/* a name DNS cannot carry (resolver.h): it has no records */
		ans->status = SPFKIT_DNS_NXDOMAIN;
		return 0;
	}
	if (rc != 0)
		return rc;
	while (!p.done) {
		rc = spfkit_resolver_wait(d->resolver, -1);
		if (rc < 0) {
			spfkit_resolver_cancel(d->resolver, handle);
			return rc;
		}
	}
	return 0;
}

int lint_dns_ask(struct lint_dns *d, const char *name, size_t len, uint16_t type,
		 const struct lint_answer **out)
{
	struct lint_answer *hit = find(d, name, len, type);
	struct lint_cached *e;
	int rc;

	if (hit != NULL) {
		hit->asked++;
		*out = hit;
		return 0;
	}
	e = new_entry(d);
	if (e == NULL)
		return d->n >= LINT_MAX_QUESTIONS ? SPFKIT_E2BIG : SPFKIT_ENOMEM;
	e->name = lint_strndup(d->report, name, len);
	e->len = len;
	e->type = type;
	e->ans.asked = 1;
	if (e->name == NULL) {
		d->n--;
		return SPFKIT_ENOMEM;
	}
	rc = ask(d, name, len, type, &e->ans);
	if (rc != 0) {
		d->n--;
		d->err = rc;
		return rc;
	}
	*out = &e->ans;
	return 0;
}
