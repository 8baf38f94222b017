/*
 * DNS for `spfkit lint`: questions through the public resolver seam
 * (include/spfkit/resolver.h), so --zone and real DNS answer alike; the
 * walk asks one at a time, after prefetching a record's questions
 * together. Answers are copied into the report's arena and kept: a name
 * asked twice is answered from the cache, as the evaluator asks each
 * question once per evaluation (its void count depends on that). The
 * whole run has a time limit (--time-limit): a hostile provider that
 * answers slowly holds it that long, not once per question.
 */
#include <string.h>
#include <time.h>

#include "publish.h"

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

void spfkit__lint_dns_init(struct lint_dns *d, struct spfkit_resolver *resolver,
			   struct lint_report *r)
{
	memset(d, 0, sizeof(*d));
	d->resolver = resolver;
	d->report = r;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void spfkit__lint_dns_set_time_limit(struct lint_dns *d, unsigned seconds)
{
	d->limit_s = seconds;
	d->deadline_ms = seconds > 0 ? now_ms() + (int64_t)seconds * 1000 : 0;
}

/* Milliseconds left (at least 1), 0 when the time is up, -1 without a limit. */
static int time_left(const struct lint_dns *d)
{
	int64_t left;

	if (d->deadline_ms == 0)
		return -1;
	left = d->deadline_ms - now_ms();
	if (left <= 0)
		return 0;
	return left > 3600000 ? 3600000 : (int)left;
}

static void too_late(struct lint_dns *d, struct lint_answer *ans, const char *detail)
{
	ans->status = SPFKIT_DNS_TEMPFAIL;
	ans->ttl = 0;
	ans->detail = detail;
	d->late++;
}

#define LATE_UNANSWERED "no answer within the time limit (--time-limit)"
#define LATE_NOT_ASKED "not asked: the time limit (--time-limit) was reached"

int spfkit__lint_dns_late(const struct lint_answer *a)
{
	return a->status == SPFKIT_DNS_TEMPFAIL && a->detail != NULL &&
	       (strcmp(a->detail, LATE_UNANSWERED) == 0 || strcmp(a->detail, LATE_NOT_ASKED) == 0);
}

void spfkit__lint_dns_free(struct lint_dns *d)
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
		rrs[i].data = (const unsigned char *)spfkit__lint_strndup(
			p->report, (const char *)a->rrs[i].data, a->rrs[i].len);
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

	if (d->n >= LINT_MAX_QUESTIONS)
		return NULL;
	p = spfkit__array_grow(d->cache, &d->cap, d->n, sizeof(*p), 64);
	if (p == NULL)
		return NULL;
	d->cache = p;
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

/* Submit one question; 1 when it was answered at once (no resolver, a
 * name DNS cannot carry, the time is up), 0 when submitted, or an error. */
static int submit(struct lint_dns *d, const char *name, size_t len, uint16_t type,
		  struct pending *p, uint64_t *handle)
{
	int rc;

	if (d->resolver == NULL)
		return ask_nothing(p->ans) + 1;
	if (time_left(d) == 0) {
		too_late(d, p->ans, LATE_NOT_ASKED);
		return 1;
	}
	rc = spfkit_resolver_submit(d->resolver, name, len, type, on_answer, p, handle);
	if (rc == SPFKIT_EINVAL) {
		/* a name DNS cannot carry (resolver.h): it has no records */
		p->ans->status = SPFKIT_DNS_NXDOMAIN;
		return 1;
	}
	return rc;
}

/* Wait for the n submitted questions; those the time limit leaves unanswered are cancelled. */
static int wait_all(struct lint_dns *d, struct pending *p, const uint64_t *handles, size_t n)
{
	size_t i, open;
	int rc = 0, left;

	for (;;) {
		for (i = 0, open = 0; i < n; i++)
			open += !p[i].done;
		if (open == 0)
			return 0;
		left = time_left(d);
		if (left != 0)
			rc = spfkit_resolver_wait(d->resolver, left);
		if (left == 0 || rc < 0)
			break;
	}
	for (i = 0; i < n; i++) {
		if (p[i].done)
			continue;
		spfkit_resolver_cancel(d->resolver, handles[i]);
		if (rc >= 0)
			too_late(d, p[i].ans, LATE_UNANSWERED);
	}
	return rc < 0 ? rc : 0;
}

static int ask(struct lint_dns *d, const char *name, size_t len, uint16_t type,
	       struct lint_answer *ans)
{
	struct pending p = { d->report, ans, 0 };
	uint64_t handle = 0;
	int rc = submit(d, name, len, type, &p, &handle);

	if (rc != 0)
		return rc == 1 ? 0 : rc;
	return wait_all(d, &p, &handle, 1);
}

/* The cache entry of a question about to be asked, or NULL (no room, no memory). */
static struct lint_cached *entry_for(struct lint_dns *d, const char *name, size_t len,
				     uint16_t type)
{
	struct lint_cached *e = new_entry(d);

	if (e == NULL)
		return NULL;
	e->name = spfkit__lint_strndup(d->report, name, len);
	e->len = len;
	e->type = type;
	if (e->name == NULL) {
		d->n--;
		return NULL;
	}
	return e;
}

/* One batch of at most LINT_PARALLEL new questions. */
static void prefetch_batch(struct lint_dns *d, const struct lint_question *q, size_t n)
{
	struct pending p[LINT_PARALLEL];
	uint64_t handles[LINT_PARALLEL];
	struct lint_cached *e;
	size_t i, k = 0;
	int rc;

	for (i = 0; i < n; i++) {
		if (find(d, q[i].name, q[i].len, q[i].type) != NULL)
			continue; /* asked before, or twice in this batch */
		e = entry_for(d, q[i].name, q[i].len, q[i].type);
		if (e == NULL)
			break;
		p[k].report = d->report;
		p[k].ans = &e->ans;
		p[k].done = 0;
		rc = submit(d, q[i].name, q[i].len, q[i].type, &p[k], &handles[k]);
		if (rc == 1)
			continue;
		if (rc != 0) {
			d->n--; /* left for spfkit__lint_dns_ask() to meet */
			break;
		}
		k++;
	}
	if (wait_all(d, p, handles, k) == 0)
		return;
	for (i = 0; i < k; i++) { /* cancelled when the resolver failed */
		if (p[i].done)
			continue;
		p[i].ans->status = SPFKIT_DNS_TEMPFAIL;
		p[i].ans->detail = "the resolver failed";
	}
}

void spfkit__lint_dns_prefetch(struct lint_dns *d, const struct lint_question *q, size_t n)
{
	size_t i;

	if (d->resolver == NULL)
		return;
	for (i = 0; i < n; i += LINT_PARALLEL)
		prefetch_batch(d, q + i, n - i < LINT_PARALLEL ? n - i : LINT_PARALLEL);
}

int spfkit__lint_dns_ask(struct lint_dns *d, const char *name, size_t len, uint16_t type,
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
	e = entry_for(d, name, len, type);
	if (e == NULL)
		return d->n >= LINT_MAX_QUESTIONS ? SPFKIT_E2BIG : SPFKIT_ENOMEM;
	e->ans.asked = 1;
	rc = ask(d, name, len, type, &e->ans);
	if (rc != 0) {
		d->n--;
		d->err = rc;
		return rc;
	}
	*out = &e->ans;
	return 0;
}
