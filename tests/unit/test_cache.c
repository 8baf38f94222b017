/*
 * Unit tests of the answer cache (lib/dns/cache.c): TTLs on a clock the
 * test moves, negative caching, the memory bound and LRU order,
 * concurrent use from several threads, and the resolver layer over a
 * scripted inner resolver (the seam's contract: hits never delivered
 * inside submit, cancel, destroy with questions pending). Then the
 * parsed-record cache's byte budget (lib/spf/record_cache.c): bytes
 * charged, LRU eviction, threads, and what one evaluation can take.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/cache.h>
#include <spfkit/spfkit.h>

#include "cache_int.h"
#include "cache_stats.h" /* tests/support */
#include "ctx.h" /* the context's parsed-record cache, for its byte counts */

/* ---- allocator: counts live blocks; can fail after `left` ------------- */

struct counter {
	long live;
	long left; /* < 0: never fail */
};

static void *c_alloc(void *user, size_t n)
{
	struct counter *c = user;
	void *p;

	if (__atomic_load_n(&c->left, __ATOMIC_RELAXED) == 0)
		return NULL;
	p = malloc(n);
	if (p != NULL) {
		__atomic_add_fetch(&c->live, 1, __ATOMIC_RELAXED);
		if (__atomic_load_n(&c->left, __ATOMIC_RELAXED) > 0)
			__atomic_sub_fetch(&c->left, 1, __ATOMIC_RELAXED);
	}
	return p;
}

static void *c_realloc(void *user, void *old, size_t n)
{
	if (old == NULL)
		return c_alloc(user, n);
	return realloc(old, n);
}

static void c_free(void *user, void *p)
{
	struct counter *c = user;

	if (p != NULL)
		__atomic_sub_fetch(&c->live, 1, __ATOMIC_RELAXED);
	free(p);
}

/* ---- clock ------------------------------------------------------------ */

static uint64_t test_clock(void *arg)
{
	return *(uint64_t *)arg;
}

/* ---- fixture ---------------------------------------------------------- */

struct t {
	struct counter cnt;
	struct spfkit_allocator alloc;
	uint64_t now;
	struct spfkit_cache *cache;
};

static struct spfkit_cache *make_cache(struct t *t, size_t max_bytes)
{
	struct spfkit_cache_options o;
	struct spfkit_cache *c = NULL;

	spfkit_cache_options_init(&o);
	o.max_bytes = max_bytes;
	o.max_ttl = 3600;
	o.max_negative_ttl = 600;
	o.clock = test_clock;
	o.clock_arg = &t->now;
	assert_int_equal(spfkit_cache_new(&o, &t->alloc, &c), 0);
	return c;
}

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->cnt.left = -1;
	t->alloc = (struct spfkit_allocator){ c_alloc, c_realloc, c_free, &t->cnt };
	t->now = 1000000;
	t->cache = make_cache(t, 64 * 1024);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;
	long live;

	spfkit_cache_free(t->cache);
	live = t->cnt.live;
	free(t);
	assert_int_equal(live, 0); /* got live blocks after free: a leak */
	return 0;
}

/* An OK TXT answer with one record. */
static struct spfkit_dns_answer txt_answer(struct spfkit_dns_rr *rr, const char *text, uint32_t ttl)
{
	struct spfkit_dns_answer a;

	memset(rr, 0, sizeof(*rr));
	rr->type = SPFKIT_RR_TXT;
	rr->ttl = ttl;
	rr->data = (const unsigned char *)text;
	rr->len = strlen(text);
	memset(&a, 0, sizeof(a));
	a.status = SPFKIT_DNS_OK;
	a.ttl = ttl;
	a.rrs = rr;
	a.count = 1;
	return a;
}

static struct spfkit_dns_answer void_answer(enum spfkit_dns_status st, uint32_t ttl)
{
	struct spfkit_dns_answer a;

	memset(&a, 0, sizeof(a));
	a.status = st;
	a.ttl = ttl;
	return a;
}

static int put(struct t *t, const char *name, uint16_t type, const struct spfkit_dns_answer *a)
{
	return spfkit__cache_put(t->cache, name, strlen(name), type, a);
}

/* Get and return the copy (NULL on a miss); the caller frees it. */
static struct spfkit_dns_answer *get(struct t *t, const char *name, uint16_t type)
{
	struct spfkit_dns_answer *out = NULL;
	int rc = spfkit__cache_get(t->cache, name, strlen(name), type, &t->alloc, &out);

	assert_true(rc == 0 || rc == 1);
	assert_true((rc == 1) == (out != NULL));
	return out;
}

static struct spfkit_cache_stats stats(struct t *t)
{
	struct spfkit_cache_stats st;

	spfkit_cache_stats(t->cache, &st);
	return st;
}

static struct spfkit_cache_stats stats_of(struct spfkit_cache *c)
{
	struct spfkit_cache_stats st;

	spfkit_cache_stats(c, &st);
	return st;
}

/* ---- TTLs --------------------------------------------------------------- */

static void hit_is_a_copy(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	char text[] = "v=spf1 -all";
	struct spfkit_dns_answer a = txt_answer(&rr, text, 300), *got;

	assert_int_equal(put(t, "example.com", SPFKIT_RR_TXT, &a), 1);
	memset(text, 'X', sizeof(text) - 1); /* the cache kept its own bytes */
	got = get(t, "example.com", SPFKIT_RR_TXT);
	assert_non_null(got);
	assert_int_equal(got->status, SPFKIT_DNS_OK);
	assert_int_equal(got->count, 1);
	assert_int_equal(got->rrs[0].len, 11);
	assert_memory_equal(got->rrs[0].data, "v=spf1 -all", 11);
	assert_int_equal(got->ttl, 300);
	spfkit__free(&t->alloc, got);
	assert_int_equal(stats(t).hits, 1);
	assert_int_equal(stats(t).inserts, 1);
}

static void ttl_counts_down_then_expires(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer a = txt_answer(&rr, "v=spf1", 300), *got;

	assert_int_equal(put(t, "example.com", SPFKIT_RR_TXT, &a), 1);
	t->now += 100500; /* 100.5 s later */
	got = get(t, "example.com", SPFKIT_RR_TXT);
	assert_non_null(got);
	assert_int_equal(got->ttl, 200); /* 199.5 s left, rounded up */
	assert_int_equal(got->rrs[0].ttl, 200);
	spfkit__free(&t->alloc, got);
	t->now += 199499;
	got = get(t, "example.com", SPFKIT_RR_TXT);
	assert_non_null(got); /* 1 ms left */
	assert_int_equal(got->ttl, 1);
	spfkit__free(&t->alloc, got);
	t->now += 1;
	assert_null(get(t, "example.com", SPFKIT_RR_TXT));
	assert_int_equal(stats(t).expirations, 1);
	assert_int_equal(stats(t).misses, 1);
	assert_int_equal(stats(t).entries, 0);
	assert_int_equal(stats(t).bytes, 0);
}

static void ttl_capped(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer a = txt_answer(&rr, "v=spf1", 86400 * 7), *got;

	assert_int_equal(put(t, "example.com", SPFKIT_RR_TXT, &a), 1);
	got = get(t, "example.com", SPFKIT_RR_TXT);
	assert_int_equal(got->ttl, 3600);
	spfkit__free(&t->alloc, got);
	t->now += 3600 * 1000;
	assert_null(get(t, "example.com", SPFKIT_RR_TXT));
}

static void negative_answers_kept(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 300);
	struct spfkit_dns_answer nd = void_answer(SPFKIT_DNS_NODATA, 60);
	struct spfkit_dns_answer *got;

	assert_int_equal(put(t, "nx.example.com", SPFKIT_RR_TXT, &nx), 1);
	assert_int_equal(put(t, "nd.example.com", SPFKIT_RR_A, &nd), 1);
	got = get(t, "nx.example.com", SPFKIT_RR_TXT);
	assert_non_null(got);
	assert_int_equal(got->status, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(got->count, 0);
	assert_null(got->rrs);
	assert_int_equal(got->ttl, 300);
	spfkit__free(&t->alloc, got);
	t->now += 60 * 1000;
	assert_null(get(t, "nd.example.com", SPFKIT_RR_A)); /* NODATA's 60 s are over */
	got = get(t, "nx.example.com", SPFKIT_RR_TXT);
	assert_non_null(got);
	assert_int_equal(got->ttl, 240);
	spfkit__free(&t->alloc, got);
}

static void negative_ttl_capped(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 86400), *got;

	assert_int_equal(put(t, "nx.example.com", SPFKIT_RR_TXT, &nx), 1);
	got = get(t, "nx.example.com", SPFKIT_RR_TXT);
	assert_int_equal(got->ttl, 600);
	spfkit__free(&t->alloc, got);
}

static void tempfail_and_ttl_zero_not_kept(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer tf = void_answer(SPFKIT_DNS_TEMPFAIL, 300);
	struct spfkit_dns_answer nosoa = void_answer(SPFKIT_DNS_NODATA, 0);
	struct spfkit_dns_answer zero = txt_answer(&rr, "v=spf1", 0);

	tf.detail = "SERVFAIL";
	assert_int_equal(put(t, "a.example.com", SPFKIT_RR_TXT, &tf), 0);
	assert_int_equal(put(t, "b.example.com", SPFKIT_RR_TXT, &nosoa), 0);
	assert_int_equal(put(t, "c.example.com", SPFKIT_RR_TXT, &zero), 0);
	assert_null(get(t, "a.example.com", SPFKIT_RR_TXT));
	assert_int_equal(stats(t).entries, 0);
	assert_int_equal(stats(t).inserts, 0);
}

static void keys_ignore_case_and_final_dot(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer a = txt_answer(&rr, "v=spf1", 300), *got;

	assert_int_equal(put(t, "Example.COM.", SPFKIT_RR_TXT, &a), 1);
	got = get(t, "example.com", SPFKIT_RR_TXT);
	assert_non_null(got);
	spfkit__free(&t->alloc, got);
	assert_null(get(t, "example.com", SPFKIT_RR_A)); /* the type is part of the key */
	assert_null(get(t, "www.example.com", SPFKIT_RR_TXT));
}

static void newer_answer_replaces(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr r1, r2;
	struct spfkit_dns_answer a1 = txt_answer(&r1, "old", 300);
	struct spfkit_dns_answer a2 = txt_answer(&r2, "newer", 30), *got;

	assert_int_equal(put(t, "example.com", SPFKIT_RR_TXT, &a1), 1);
	assert_int_equal(put(t, "example.com", SPFKIT_RR_TXT, &a2), 1);
	got = get(t, "example.com", SPFKIT_RR_TXT);
	assert_int_equal(got->rrs[0].len, 5);
	assert_memory_equal(got->rrs[0].data, "newer", 5);
	spfkit__free(&t->alloc, got);
	assert_int_equal(stats(t).entries, 1);
}

/* ---- memory ------------------------------------------------------------- */

static void memory_bound_evicts_least_recent(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	char text[1000], name[32];
	struct spfkit_dns_answer a, *got;
	int i;

	memset(text, 'v', sizeof(text) - 1);
	text[sizeof(text) - 1] = 0;
	a = txt_answer(&rr, text, 300);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%d.example.com", i);
		assert_int_equal(put(t, name, SPFKIT_RR_TXT, &a), 1);
		if (i >= 1) {
			/* keep n0 recently used: it must survive */
			got = get(t, "n0.example.com", SPFKIT_RR_TXT);
			assert_non_null(got);
			spfkit__free(&t->alloc, got);
		}
		assert_true(stats(t).bytes <= 64 * 1024);
	}
	assert_true(stats(t).evictions > 100);
	assert_null(get(t, "n1.example.com", SPFKIT_RR_TXT)); /* least recently used: gone */
	got = get(t, "n199.example.com", SPFKIT_RR_TXT);
	assert_non_null(got);
	spfkit__free(&t->alloc, got);
	assert_int_equal(stats(t).entries + stats(t).evictions, 200);
}

static void answer_over_quarter_not_kept(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_rr rr;
	char *text = malloc(20000);
	struct spfkit_dns_answer a;

	memset(text, 'v', 19999);
	text[19999] = 0;
	a = txt_answer(&rr, text, 300);
	assert_int_equal(put(t, "big.example.com", SPFKIT_RR_TXT, &a), 0);
	assert_int_equal(stats(t).entries, 0);
	free(text);
}

static void clear_forgets_all(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 300);

	assert_int_equal(put(t, "a.example.com", SPFKIT_RR_TXT, &nx), 1);
	assert_int_equal(put(t, "b.example.com", SPFKIT_RR_TXT, &nx), 1);
	spfkit_cache_clear(t->cache);
	assert_int_equal(stats(t).entries, 0);
	assert_int_equal(stats(t).bytes, 0);
	assert_null(get(t, "a.example.com", SPFKIT_RR_TXT));
}

static void out_of_memory(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 300), *got = NULL;

	t->cnt.left = 0;
	assert_int_equal(put(t, "a.example.com", SPFKIT_RR_TXT, &nx), SPFKIT_ENOMEM);
	t->cnt.left = -1;
	assert_int_equal(put(t, "a.example.com", SPFKIT_RR_TXT, &nx), 1);
	t->cnt.left = 0;
	assert_int_equal(spfkit__cache_get(t->cache, "a.example.com", 13, SPFKIT_RR_TXT, &t->alloc,
					   &got),
			 SPFKIT_ENOMEM);
	assert_null(got);
	t->cnt.left = -1;
}

static void new_rejects_null_out(void **state)
{
	struct t *t = *state;
	struct spfkit_cache *c = NULL;

	assert_int_equal(spfkit_cache_new(NULL, &t->alloc, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cache_new(NULL, &t->alloc, &c), 0); /* defaults */
	assert_int_equal((long)(c != NULL), 1);
	spfkit_cache_free(c);
	spfkit_cache_free(NULL);
}

/* ---- threads ------------------------------------------------------------ */

#define THREADS 4
#define ROUNDS 5000

struct worker {
	struct t *t;
	int id;
	int bad; /* answers that did not belong to their name */
	long gets;
};

/* Each name's TXT says the name; a hit must always match its key. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer a, *got;
	char name[32];
	int i, rc;

	for (i = 0; i < ROUNDS; i++) {
		snprintf(name, sizeof(name), "h%d.example.com", (i * 7 + w->id) % 300);
		a = txt_answer(&rr, name, 300);
		rc = spfkit__cache_put(w->t->cache, name, strlen(name), SPFKIT_RR_TXT, &a);
		if (rc != 1)
			w->bad++;
		snprintf(name, sizeof(name), "h%d.example.com", (i * 13 + w->id) % 300);
		rc = spfkit__cache_get(w->t->cache, name, strlen(name), SPFKIT_RR_TXT, &w->t->alloc,
				       &got);
		w->gets++;
		if (rc == 1 && (got->rrs[0].len != strlen(name) ||
				memcmp(got->rrs[0].data, name, got->rrs[0].len) != 0))
			w->bad++;
		if (rc == 1)
			spfkit__free(&w->t->alloc, got);
	}
	return NULL;
}

static void concurrent_threads(void **state)
{
	struct t *t = *state;
	pthread_t th[THREADS];
	struct worker w[THREADS];
	struct spfkit_cache_stats st;
	long gets = 0;
	int i;

	spfkit_cache_free(t->cache);
	t->cache = make_cache(t, 16 * 1024); /* small: evictions race with reads */
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ t, i, 0, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].bad, 0);
		gets += w[i].gets;
	}
	st = stats(t);
	assert_int_equal((long)(st.hits + st.misses), gets);
	assert_true(st.hits > 0);
	assert_true(st.evictions > 0);
	assert_true(st.bytes <= 16 * 1024);
}

/* ---- the resolver layer over a scripted inner resolver ------------------ */

struct fq {
	uint64_t handle;
	spfkit_dns_cb *cb;
	void *arg;
	char name[64];
	int live;
};

struct inner {
	struct spfkit_resolver pub;
	struct fq q[16];
	size_t n;
	int submits, cancels, fail;
	uint64_t next;
};

static int in_submit(void *impl, const char *name, size_t len, uint16_t type, spfkit_dns_cb *cb,
		     void *arg, uint64_t *handle)
{
	struct inner *in = impl;
	struct fq *q;

	(void)type;
	if (in->fail)
		return SPFKIT_EDNS;
	assert_true(in->n < 16 && len < 64);
	q = &in->q[in->n++];
	q->handle = ++in->next;
	q->cb = cb;
	q->arg = arg;
	memcpy(q->name, name, len);
	q->name[len] = 0;
	q->live = 1;
	in->submits++;
	*handle = q->handle;
	return 0;
}

static void in_cancel(void *impl, uint64_t handle)
{
	struct inner *in = impl;
	size_t i;

	for (i = 0; i < in->n; i++)
		if (in->q[i].handle == handle && in->q[i].live) {
			in->q[i].live = 0;
			in->cancels++;
		}
}

/* Answers by name: "nx..." NXDOMAIN, "tf..." TEMPFAIL, else a TXT. */
static int in_wait(void *impl, int timeout_ms)
{
	struct inner *in = impl;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer a;
	size_t i;
	int n = 0;

	(void)timeout_ms;
	for (i = 0; i < in->n; i++) {
		if (!in->q[i].live)
			continue;
		in->q[i].live = 0;
		if (strncmp(in->q[i].name, "nx", 2) == 0) {
			a = void_answer(SPFKIT_DNS_NXDOMAIN, 300);
		} else if (strncmp(in->q[i].name, "tf", 2) == 0) {
			a = void_answer(SPFKIT_DNS_TEMPFAIL, 0);
			a.detail = "timeout";
		} else {
			a = txt_answer(&rr, "v=spf1 -all", 60);
		}
		in->q[i].cb(in->q[i].arg, &a);
		n++;
	}
	return n;
}

static void in_destroy(void *impl)
{
	(void)impl;
}

static const struct spfkit_resolver_ops inner_ops = { in_submit, in_cancel, in_wait, in_destroy };

struct lt {
	struct inner in;
	struct spfkit_resolver *r;
	int submitting;
	int calls, inside_submit;
	enum spfkit_dns_status status;
	uint32_t ttl;
	char detail[32];
	int ready_calls;
};

static void on_answer(void *arg, const struct spfkit_dns_answer *a)
{
	struct lt *l = arg;

	l->calls++;
	l->inside_submit |= l->submitting;
	l->status = a->status;
	l->ttl = a->ttl;
	snprintf(l->detail, sizeof(l->detail), "%s", a->detail ? a->detail : "");
}

static void layer_up(struct t *t, struct lt *l)
{
	memset(l, 0, sizeof(*l));
	l->in.pub.ops = &inner_ops;
	l->in.pub.impl = &l->in;
	assert_int_equal(spfkit_cache_resolver(t->cache, &l->in.pub, &l->r), 0);
}

static uint64_t lask(struct lt *l, const char *name)
{
	uint64_t h = 0;

	l->submitting = 1;
	assert_int_equal(spfkit_resolver_submit(l->r, name, strlen(name), SPFKIT_RR_TXT, on_answer,
						l, &h),
			 0);
	l->submitting = 0;
	return h;
}

static void layer_miss_then_hit(void **state)
{
	struct t *t = *state;
	struct lt l;
	uint64_t misses = 99;

	layer_up(t, &l);
	assert_int_equal(spfkit_cache_forwarded(l.r, &misses), 0);
	assert_int_equal(misses, 0);
	lask(&l, "example.com");
	assert_int_equal(l.in.submits, 1);
	assert_int_equal(spfkit_cache_forwarded(l.r, &misses), 0);
	assert_int_equal(misses, 1);
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 1); /* inner delivers the miss */
	assert_int_equal(l.calls, 1);
	assert_int_equal(l.status, SPFKIT_DNS_OK);
	t->now += 10 * 1000;
	lask(&l, "EXAMPLE.com.");
	assert_int_equal(l.in.submits, 1); /* not asked again */
	assert_int_equal(l.calls, 1);      /* not inside submit */
	assert_int_equal(spfkit_cache_queued(l.r), 1);
	assert_int_equal(spfkit_cache_forwarded(l.r, &misses), 0);
	assert_int_equal(misses, 1); /* a hit is not passed on */
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 1);
	assert_int_equal(l.calls, 2);
	assert_int_equal(l.inside_submit, 0);
	assert_int_equal(l.ttl, 50);
	assert_int_equal(stats(t).hits, 1);
	assert_int_equal(stats(t).misses, 1);
	spfkit_resolver_free(l.r);
}

static void layer_negative_kept_tempfail_not(void **state)
{
	struct t *t = *state;
	struct lt l;

	layer_up(t, &l);
	lask(&l, "nx.example.com");
	lask(&l, "tf.example.com");
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 2);
	lask(&l, "nx.example.com");
	lask(&l, "tf.example.com");
	assert_int_equal(l.in.submits, 3); /* the TEMPFAIL is asked again */
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 1); /* the NXDOMAIN hit */
	assert_int_equal(l.status, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 1);
	assert_int_equal(l.status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(l.detail, "timeout");
	spfkit_resolver_free(l.r);
}

static void layer_cancel_hit_and_forwarded(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 300);
	struct lt l;
	uint64_t h1, h2;

	layer_up(t, &l);
	assert_int_equal(put(t, "nx.example.com", SPFKIT_RR_TXT, &nx), 1);
	h1 = lask(&l, "nx.example.com"); /* hit, queued */
	h2 = lask(&l, "example.com");    /* forwarded */
	spfkit_resolver_cancel(l.r, h1);
	spfkit_resolver_cancel(l.r, h2);
	spfkit_resolver_cancel(l.r, h2); /* twice: nothing more */
	/* the miss still waits for its answer, to keep it, and calls no one */
	assert_int_equal(l.in.cancels, 0);
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 1);
	assert_int_equal(l.calls, 0);
	lask(&l, "example.com");
	assert_int_equal(l.in.submits, 1); /* kept: a hit now */
	assert_int_equal(spfkit_cache_queued(l.r), 1);
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 1);
	assert_int_equal(l.calls, 1);
	spfkit_resolver_free(l.r);
}

/* An inner resolver that never answers: it counts. */
struct mute {
	unsigned submits, cancels;
};

static int mute_submit(void *impl, const char *name, size_t len, uint16_t type,
		       spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	struct mute *m = impl;

	(void)name, (void)len, (void)type, (void)cb, (void)arg;
	*handle = ++m->submits;
	return 0;
}

static void mute_cancel(void *impl, uint64_t handle)
{
	struct mute *m = impl;

	(void)handle;
	m->cancels++;
}

static int mute_wait(void *impl, int timeout_ms)
{
	(void)impl, (void)timeout_ms;
	return 0;
}

static void mute_destroy(void *impl) { (void)impl; }

static void never_called(void *arg, const struct spfkit_dns_answer *a)
{
	(void)arg, (void)a;
	fail_msg("a cancelled question was called back");
}

static const struct spfkit_resolver_ops mute_ops = {mute_submit, mute_cancel, mute_wait,
						    mute_destroy};

/* Cancelled misses awaited at once are bounded (LAYER_ORPHANS_MAX, 256):
 * past that, a cancelled miss is cancelled in inner; freeing the layer
 * cancels the rest. */
static void layer_cancelled_misses_are_bounded(void **state)
{
	struct t *t = *state;
	struct mute m = {0, 0};
	struct spfkit_resolver inner = {&mute_ops, &m}, *r = NULL;
	uint64_t h;
	char name[32];
	unsigned i;

	assert_int_equal(spfkit_cache_resolver(t->cache, &inner, &r), 0);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "n%u.example.com", i);
		assert_int_equal(spfkit_resolver_submit(r, name, strlen(name), SPFKIT_RR_TXT,
							never_called, NULL, &h), 0);
		spfkit_resolver_cancel(r, h);
	}
	assert_int_equal(m.submits, 300);
	assert_int_equal(m.cancels, 300 - 256);
	spfkit_resolver_free(r);
	assert_int_equal(m.cancels, 300);
}

static void layer_destroy_with_pending(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 300);
	struct lt l;

	layer_up(t, &l);
	assert_int_equal(put(t, "nx.example.com", SPFKIT_RR_TXT, &nx), 1);
	lask(&l, "nx.example.com");
	lask(&l, "a.example.com");
	lask(&l, "b.example.com");
	spfkit_resolver_free(l.r);
	assert_int_equal(l.in.cancels, 2);
	assert_int_equal(l.calls, 0);
	assert_int_equal(in_wait(&l.in, 0), 0); /* inner has nothing live left */
}

static void note_ready(void *arg)
{
	((struct lt *)arg)->ready_calls++;
}

static void layer_ready_and_deliver(void **state)
{
	struct t *t = *state;
	struct spfkit_dns_answer nx = void_answer(SPFKIT_DNS_NXDOMAIN, 300);
	struct lt l;

	layer_up(t, &l);
	assert_int_equal(spfkit_cache_set_ready(l.r, note_ready, &l), 0);
	assert_int_equal(put(t, "nx.example.com", SPFKIT_RR_TXT, &nx), 1);
	lask(&l, "nx.example.com");
	lask(&l, "NX.example.com");
	assert_int_equal(l.ready_calls, 1); /* once: the queue was empty */
	assert_int_equal(l.calls, 0);
	assert_int_equal(spfkit_cache_deliver(l.r), 2);
	assert_int_equal(l.calls, 2);
	assert_int_equal(l.inside_submit, 0);
	assert_int_equal(spfkit_cache_deliver(l.r), 0);
	spfkit_resolver_free(l.r);
}

static void layer_inner_failure_is_returned(void **state)
{
	struct t *t = *state;
	struct lt l;
	uint64_t h = 0;

	layer_up(t, &l);
	l.in.fail = 1;
	assert_int_equal(spfkit_resolver_submit(l.r, "a.example.com", 13, SPFKIT_RR_TXT, on_answer,
						&l, &h),
			 SPFKIT_EDNS);
	assert_int_equal(spfkit_resolver_wait(l.r, 0), 0);
	assert_int_equal(l.calls, 0);
	spfkit_resolver_free(l.r);
}

static void layer_api_rejects_others(void **state)
{
	struct t *t = *state;
	struct spfkit_resolver other = { &inner_ops, NULL }, *r = NULL;
	uint64_t n;

	assert_int_equal(spfkit_cache_set_ready(&other, note_ready, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cache_deliver(&other), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cache_queued(NULL), 0);
	assert_int_equal(spfkit_cache_forwarded(&other, &n), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cache_forwarded(NULL, &n), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cache_resolver(t->cache, NULL, &r), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cache_resolver(NULL, &other, &r), SPFKIT_EINVAL);
	assert_null(r);
}

/*
 * Hash flooding (issue 7, item 8): 1,024 names that differ only in '@'
 * against '`' all had one hash under the old unkeyed hash (it folded case
 * by OR-ing 0x20 into every byte). Under a keyed hash they spread out.
 */
static void flooded_names_spread(void **state)
{
	struct spfkit_cache_options o;
	struct spfkit_cache *c;
	struct spfkit_dns_rr rr;
	struct spfkit_dns_answer a = txt_answer(&rr, "v=spf1 -all", 300);
	char name[32];
	unsigned i, bit;

	(void)state;
	spfkit_cache_options_init(&o); /* 4 MiB: 8,192 buckets */
	assert_int_equal(spfkit_cache_new(&o, NULL, &c), 0);
	for (i = 0; i < 1024; i++) {
		for (bit = 0; bit < 10; bit++)
			name[bit] = (i >> bit) & 1 ? '@' : '`';
		memcpy(name + 10, ".x.example", 11);
		assert_int_equal(spfkit__cache_put(c, name, strlen(name), SPFKIT_RR_TXT, &a), 1);
	}
	assert_int_equal(stats_of(c).entries, 1024);
	/* 1,024 keys in 8,192 buckets: a chain of 16 has odds far below 2^-40 */
	assert_true(spfkit__cache_longest_chain(c) < 16);
	spfkit_cache_free(c);
}

/* ---- the parsed-record cache's byte budget (lib/spf/record_cache.c) ----- */

/*
 * A parsed record takes some 70 times its text, so the cache of parsed
 * records is bounded by bytes as well as entries: hostile records of many
 * terms must not fill memory. These evaluate through a zone, on a context
 * with a small budget.
 */

/* "v=spf1 ip4:198.51.100.N" then `filler` unknown modifiers (cheap text,
 * one term each, no DNS), then "-all": passes 198.51.100.N only. */
static char *big_record(unsigned n, size_t filler)
{
	size_t cap = 64 + filler * 8, len;
	char *r = malloc(cap);
	size_t i;

	assert_non_null(r);
	len = (size_t)snprintf(r, cap, "v=spf1 ip4:198.51.100.%u", n);
	for (i = 0; i < filler; i++)
		len += (size_t)snprintf(r + len, cap - len, " x%zu=", i % 100);
	snprintf(r + len, cap - len, " -all");
	return r;
}

static void zone_txt(struct spfkit_zone *z, const char *name, const char *text)
{
	assert_int_equal(spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_TXT, 300, text,
					 strlen(text), 0), 0);
}

static enum spfkit_result_code rc_check(const struct spfkit_ctx *ctx, const struct spfkit_zone *z,
					const char *ip, const char *sender)
{
	struct spfkit_resolver *r = NULL;
	struct spfkit_request req;
	struct spfkit_eval *ev = NULL;
	enum spfkit_result_code code = SPFKIT_RESULT_NONE;

	spfkit_request_init(&req);
	if (spfkit_ip_parse(ip, strlen(ip), &req.ip) != 0)
		return (enum spfkit_result_code)-1;
	req.sender = sender;
	req.sender_len = strlen(sender);
	req.helo = "helo.example";
	req.helo_len = 12;
	if (spfkit_zone_resolver(z, &r) != 0)
		return (enum spfkit_result_code)-1;
	if (spfkit_check(ctx, r, &req, &ev) == 0)
		code = spfkit_eval_result(ev)->code;
	else
		code = (enum spfkit_result_code)-1;
	spfkit_eval_free(ev);
	spfkit_resolver_free(r);
	return code;
}

struct rc_bytes {
	size_t now, peak, max, entries;
};

static struct rc_bytes rc_bytes_of(const struct spfkit_ctx *ctx)
{
	struct rc_bytes b;
	size_t hits, misses;

	spfkit__record_cache_bytes(ctx->records, &b.now, &b.peak, &b.max);
	spfkit__record_cache_stats(ctx->records, &hits, &misses, &b.entries);
	return b;
}

#define RC_BUDGET ((size_t)512 << 10)

static void record_cache_byte_budget(void **state)
{
	struct t *t = *state;
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &t->alloc, .record_cache_bytes = RC_BUDGET};
	struct spfkit_ctx *ctx;
	struct spfkit_zone *z;
	struct rc_bytes b;
	char name[32], sender[40], ip[32], *rec;
	unsigned i, round;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	/* 24 records of ~2 KB text and 400 terms (~70 KB parsed): several
	 * fit, not all */
	for (i = 0; i < 24; i++) {
		snprintf(name, sizeof(name), "r%u.example", i);
		rec = big_record(i, 400);
		zone_txt(z, name, rec);
		free(rec);
	}
	/* one record of ~52 KB and 13,000 terms (~2 MB parsed), larger than
	 * the budget */
	rec = big_record(200, 13000);
	zone_txt(z, "huge.example", rec);
	free(rec);
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 24; i++) {
			snprintf(sender, sizeof(sender), "a@r%u.example", i);
			snprintf(ip, sizeof(ip), "198.51.100.%u", i);
			assert_int_equal(rc_check(ctx, z, ip, sender), SPFKIT_RESULT_PASS);
			snprintf(ip, sizeof(ip), "198.51.100.%u", i + 1);
			assert_int_equal(rc_check(ctx, z, ip, sender), SPFKIT_RESULT_FAIL);
			b = rc_bytes_of(ctx);
			if (b.now > RC_BUDGET || b.peak > RC_BUDGET)
				fail_msg("record cache holds %zu bytes (peak %zu), budget %zu",
					 b.now, b.peak, RC_BUDGET);
		}
	}
	b = rc_bytes_of(ctx);
	/* the budget is used, by more than one record but not all 24 */
	if (b.entries < 2 || b.entries > 23)
		fail_msg("%zu entries in %zu bytes", b.entries, b.now);
	assert_true(b.now > RC_BUDGET / 2);
	/* over the budget: evaluated every time, never kept, evicts nothing */
	assert_int_equal(rc_check(ctx, z, "198.51.100.200", "a@huge.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(rc_check(ctx, z, "198.51.100.201", "a@huge.example"), SPFKIT_RESULT_FAIL);
	assert_int_equal(rc_bytes_of(ctx).entries, b.entries);
	assert_int_equal(rc_bytes_of(ctx).now, b.now);
	assert_true(rc_bytes_of(ctx).peak <= RC_BUDGET);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

/* ---- a byte-counting allocator: live bytes and their peak ---------------- */

static atomic_size_t rc_live, rc_peak, rc_calls;

static void *rc_alloc(void *u, size_t n)
{
	size_t *p = malloc(n + 16), live;

	(void)u;
	if (p == NULL)
		return NULL;
	p[0] = n;
	atomic_fetch_add(&rc_calls, 1);
	live = atomic_fetch_add(&rc_live, n) + n;
	if (live > atomic_load(&rc_peak))
		atomic_store(&rc_peak, live); /* single-threaded users only */
	return (char *)p + 16;
}

static void rc_free(void *u, void *q)
{
	size_t *p = q != NULL ? (size_t *)((char *)q - 16) : NULL;

	(void)u;
	if (p == NULL)
		return;
	atomic_fetch_sub(&rc_live, p[0]);
	free(p);
}

static void *rc_realloc(void *u, void *q, size_t n)
{
	size_t old = q != NULL ? ((size_t *)((char *)q - 16))[0] : 0;
	char *p = rc_alloc(u, n);

	if (p != NULL && q != NULL) {
		memcpy(p, q, old < n ? old : n);
		rc_free(u, q);
	}
	return p;
}

static const struct spfkit_allocator rc_counting = {rc_alloc, rc_realloc, rc_free, NULL};

/*
 * A context keeps the block of a finished evaluation for the next one
 * (lib/spf/ctx.h): one evaluation of a name with no record, before a
 * test counts live bytes, so that block is already held and the count
 * sees only the records.
 */
static void keep_eval_block(const struct spfkit_ctx *ctx, const struct spfkit_zone *z)
{
	assert_int_equal(rc_check(ctx, z, "192.0.2.1", "a@no-record.invalid"), SPFKIT_RESULT_NONE);
}

/* What the cache charges an entry is at least what was allocated for it. */
static void record_cache_charges_real_bytes(void **state)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &rc_counting};
	struct spfkit_ctx *ctx;
	struct spfkit_zone *z;
	size_t before, held;
	char *rec = big_record(7, 2000);

	(void)state;
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	zone_txt(z, "r.example", rec);
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	keep_eval_block(ctx, z);
	before = atomic_load(&rc_live);
	assert_int_equal(rc_check(ctx, z, "198.51.100.7", "a@r.example"), SPFKIT_RESULT_PASS);
	held = atomic_load(&rc_live) - before; /* the evaluation is gone: the entry */
	assert_int_equal(rc_bytes_of(ctx).entries, 1);
	if (rc_bytes_of(ctx).now < held || rc_bytes_of(ctx).now > held + held / 4)
		fail_msg("entry charged %zu bytes, allocated %zu (text %zu)", rc_bytes_of(ctx).now,
			 held, strlen(rec));
	print_message("record of %zu bytes, 2,002 terms: %zu bytes cached (%.1fx)\n", strlen(rec),
		      held, (double)held / (double)strlen(rec));
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
	free(rec);
	assert_int_equal(atomic_load(&rc_live), 0);
}

/* no_record_cache: the same result, nothing kept, nothing left behind;
 * and a cache that grows its table past its first buckets keeps all. */
static void record_cache_off_and_growing(void **state)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx;
	struct spfkit_zone *z;
	char name[32], text[64];
	unsigned i;

	(void)state;
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	for (i = 0; i < 100; i++) { /* the cache is keyed by text: each its own */
		snprintf(name, sizeof(name), "d%u.example", i);
		snprintf(text, sizeof(text), "v=spf1 ip4:10.0.%u.0/24 %s -all", i,
			 i % 2 ? "ip4:198.51.100.0/24" : "a");
		zone_txt(z, name, text);
	}
	spfkit_config_init(&cfg);
	cfg.alloc = &rc_counting;
	cfg.no_record_cache = 1;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rc_check(ctx, z, "198.51.100.7", "a@d1.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(rc_check(ctx, z, "198.51.100.7", "a@d1.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(rc_bytes_of(ctx).entries, 0);
	assert_int_equal(rc_bytes_of(ctx).now, 0);
	spfkit_ctx_free(ctx);

	cfg.no_record_cache = 0; /* the default cache: 16 buckets at first */
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "a@d%u.example", i);
		assert_int_equal(rc_check(ctx, z, "198.51.100.7", name),
				 i % 2 ? SPFKIT_RESULT_PASS : SPFKIT_RESULT_FAIL);
	}
	assert_int_equal(rc_bytes_of(ctx).entries, 100);
	assert_true(spfkit__record_cache_longest_chain(ctx->records) <= 8);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
	assert_int_equal(atomic_load(&rc_live), 0);
}

/* Allocations one evaluation makes through the context's allocator. */
static size_t rc_calls_of(const struct spfkit_ctx *ctx, const struct spfkit_zone *z, const char *ip,
			  const char *sender, enum spfkit_result_code want)
{
	size_t before = atomic_load(&rc_calls);

	assert_int_equal(rc_check(ctx, z, ip, sender), want);
	return atomic_load(&rc_calls) - before;
}

/*
 * A context made for one evaluation, without a record cache, allocates
 * once (lib/spf/ctx.c): the context holds a block for an evaluation,
 * whose arena takes the records of an include tree. A second evaluation
 * at the same time takes a block of its own, given back at the end.
 */
static void one_allocation_per_cold_context(void **state)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx;
	struct spfkit_zone *z;
	struct spfkit_request req;
	struct spfkit_eval *held;
	size_t first, again, busy;

	(void)state;
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	zone_txt(z, "tree.example", "v=spf1 include:a.example include:b.example -all");
	zone_txt(z, "a.example", "v=spf1 ip4:10.0.1.0/24 ip6:2001:db8::/32 ~all");
	zone_txt(z, "b.example", "v=spf1 ip4:10.0.3.0/24 ip4:198.51.100.0/24 ?all");
	spfkit_config_init(&cfg);
	cfg.alloc = &rc_counting;
	cfg.no_record_cache = 1;
	first = atomic_load(&rc_calls);
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(atomic_load(&rc_calls) - first, 1);
	assert_int_equal(rc_check(ctx, z, "198.51.100.7", "a@tree.example"), SPFKIT_RESULT_PASS);
	first = atomic_load(&rc_calls) - first;
	/* the same again: spfkit_check()'s own state, and no more, each time */
	again = rc_calls_of(ctx, z, "198.51.100.7", "a@tree.example", SPFKIT_RESULT_PASS);
	assert_int_equal(first, 1 + again);
	/* the context's block taken, the next evaluation allocates one */
	spfkit_request_init(&req);
	assert_int_equal(spfkit_ip_parse("192.0.2.1", 9, &req.ip), 0);
	req.sender = "a@tree.example";
	req.sender_len = 14;
	assert_int_equal(spfkit_eval_new(ctx, &req, &held), 0);
	busy = rc_calls_of(ctx, z, "10.0.1.7", "a@tree.example", SPFKIT_RESULT_PASS);
	assert_int_equal(busy, again + 1);
	spfkit_eval_free(held);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
	assert_int_equal(atomic_load(&rc_live), 0);
}

/* Some 20 KiB of ip4 terms in 10.i/16, then 192.0.2.(10 + i). */
static void big_ip4_record(char *buf, size_t size, size_t i)
{
	size_t m = (size_t)snprintf(buf, size, "v=spf1");

	while (m + 40 < size)
		m += (size_t)snprintf(buf + m, size - m, " ip4:10.%zu.%zu.%zu", i, (m / 256) % 256,
				      m % 256);
	snprintf(buf + m, size - m, " ip4:192.0.2.%zu ~all", 10 + i);
}

/*
 * Without a record cache the records an evaluation parses come from its
 * own arena (query.c): an include tree costs no allocation more than a
 * name with no record, and gives what a cached context gives. Past the
 * arena's share for records (EVAL_KEEP_RECORD_BYTES) each record takes
 * a block of its own again: ten includes of 20 KiB records (some 150 KB
 * each parsed) evaluate the same, and every block comes back.
 */
static void records_in_arena_without_cache(void **state)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx, *cached;
	struct spfkit_zone *z;
	char name[32], top[512], *big = malloc(20001);
	size_t none, tree, n, live, i;

	(void)state;
	assert_non_null(big);
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	zone_txt(z, "tree.example", "v=spf1 include:a.example include:b.example include:c.example -all");
	zone_txt(z, "a.example", "v=spf1 ip4:10.0.1.0/24 ip4:10.0.2.0/24 ip6:2001:db8::/32 ~all");
	zone_txt(z, "b.example", "v=spf1 ip4:10.0.3.0/24 a:b.example mx:b.example ?all");
	zone_txt(z, "c.example", "v=spf1 ip4:10.0.4.0/24 ip4:198.51.100.0/24 exp=x.%{d} -all");
	n = (size_t)snprintf(top, sizeof(top), "v=spf1");
	for (i = 0; i < 10; i++) {
		n += (size_t)snprintf(top + n, sizeof(top) - n, " include:big%zu.example", i);
		snprintf(name, sizeof(name), "big%zu.example", i);
		big_ip4_record(big, 20001, i);
		zone_txt(z, name, big);
	}
	snprintf(top + n, sizeof(top) - n, " -all");
	zone_txt(z, "big.example", top);

	spfkit_config_init(&cfg);
	cfg.alloc = &rc_counting;
	assert_int_equal(spfkit_ctx_new(&cfg, &cached), 0);
	cfg.no_record_cache = 1;
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	keep_eval_block(ctx, z);
	none = rc_calls_of(ctx, z, "198.51.100.7", "a@no-record.invalid", SPFKIT_RESULT_NONE);
	tree = rc_calls_of(ctx, z, "198.51.100.7", "a@tree.example", SPFKIT_RESULT_PASS);
	print_message("allocations: %zu for no record, %zu for a tree of 4 records\n", none, tree);
	assert_int_equal(tree, none);
	assert_int_equal(rc_check(ctx, z, "10.0.3.9", "a@tree.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(rc_check(ctx, z, "203.0.113.9", "a@tree.example"),
			 rc_check(cached, z, "203.0.113.9", "a@tree.example"));

	live = atomic_load(&rc_live);
	for (i = 0; i < 10; i++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "192.0.2.%zu", 10 + i);
		assert_int_equal(rc_check(ctx, z, ip, "a@big.example"), SPFKIT_RESULT_PASS);
	}
	assert_true(rc_calls_of(ctx, z, "192.0.2.19", "a@big.example", SPFKIT_RESULT_PASS) > none);
	assert_int_equal(rc_check(ctx, z, "192.0.2.99", "a@big.example"), SPFKIT_RESULT_FAIL);
	assert_int_equal(atomic_load(&rc_live), live);
	assert_int_equal(rc_check(cached, z, "192.0.2.19", "a@big.example"), SPFKIT_RESULT_PASS);
	assert_int_equal(rc_check(cached, z, "192.0.2.99", "a@big.example"), SPFKIT_RESULT_FAIL);
	spfkit_ctx_free(ctx);
	spfkit_ctx_free(cached);
	spfkit_zone_free(z);
	free(big);
	assert_int_equal(atomic_load(&rc_live), 0);
}

/*
 * What one evaluation can take, nothing cached (budget 1 byte): a record
 * of 10 includes, each of a different 64 KiB record. Two kinds: one-letter
 * "a" terms (32k of them; strict evaluation stops at the 10th DNS term,
 * lookahead may fetch all ten), and unknown modifiers "x=" (21k, no DNS:
 * all ten are evaluated). The RFC's 10 DNS terms bound the records per
 * evaluation to 11, so the peak is bounded: printed, and held under
 * 11 records' worth plus the evaluation's own 32 MiB cap.
 */
static size_t worst_eval_bytes(const char *term, int no_lookahead)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &rc_counting, .record_cache_bytes = 1,
				    .no_lookahead = no_lookahead};
	struct spfkit_ctx *ctx;
	struct spfkit_zone *z;
	char name[32], top[512];
	size_t tl = 0, before, len, tlen = strlen(term);
	char *rec = malloc(SPFKIT_RECORD_MAX_LEN + 1);
	unsigned i;

	assert_non_null(rec);
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	tl = (size_t)snprintf(top, sizeof(top), "v=spf1");
	for (i = 0; i < 10; i++) {
		tl += (size_t)snprintf(top + tl, sizeof(top) - tl, " include:h%u.example", i);
		/* distinct texts: the 7th byte from the end differs */
		len = (size_t)snprintf(rec, 16, "v=spf1");
		while (len + tlen <= SPFKIT_RECORD_MAX_LEN - 8) {
			memcpy(rec + len, term, tlen);
			len += tlen;
		}
		len += (size_t)snprintf(rec + len, 8, " x%u=", i);
		snprintf(name, sizeof(name), "h%u.example", i);
		assert_int_equal(spfkit_zone_add(z, name, strlen(name), SPFKIT_RR_TXT, 300, rec, len,
						 0), 0);
	}
	snprintf(top + tl, sizeof(top) - tl, " -all");
	zone_txt(z, "top.example", top);
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	keep_eval_block(ctx, z);
	before = atomic_load(&rc_live);
	atomic_store(&rc_peak, before);
	(void)rc_check(ctx, z, "192.0.2.1", "a@top.example");
	assert_int_equal(rc_bytes_of(ctx).entries, 0);
	assert_int_equal(atomic_load(&rc_live), before);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
	free(rec);
	return atomic_load(&rc_peak) - before;
}

static void record_cache_worst_evaluation(void **state)
{
	size_t a_strict = worst_eval_bytes(" a", 1), a_look = worst_eval_bytes(" a", 0);
	size_t x_strict = worst_eval_bytes(" x=", 1);
	size_t bound = (size_t)11 * 80 * SPFKIT_RECORD_MAX_LEN + ((size_t)32 << 20);

	(void)state;
	print_message("one evaluation, 10 includes of 64 KiB records, uncached: "
		      "\" a\" strict %zu, lookahead %zu; \" x=\" %zu bytes at the peak\n",
		      a_strict, a_look, x_strict);
	assert_true(a_strict <= bound && a_look <= bound && x_strict <= bound);
}

/* 4 threads share a context whose budget holds a few of 12 records. */
struct rc_worker {
	const struct spfkit_ctx *ctx;
	const struct spfkit_zone *zone;
	unsigned id;
	int failures;
};

static void *rc_work(void *arg)
{
	struct rc_worker *w = arg;
	char sender[40], ip[32];
	unsigned i, n;

	for (i = 0; i < 150; i++) {
		n = (i * 5 + w->id) % 12;
		snprintf(sender, sizeof(sender), "a@r%u.example", n);
		snprintf(ip, sizeof(ip), "198.51.100.%u", n + (i & 1));
		if (rc_check(w->ctx, w->zone, ip, sender) !=
		    (i & 1 ? SPFKIT_RESULT_FAIL : SPFKIT_RESULT_PASS))
			w->failures++;
	}
	return NULL;
}

static void record_cache_budget_threads(void **state)
{
	struct t *t = *state;
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .alloc = &t->alloc, .record_cache_bytes = RC_BUDGET};
	struct rc_worker w[4];
	pthread_t th[4];
	struct spfkit_ctx *ctx;
	struct spfkit_zone *z;
	struct rc_bytes b;
	char name[32], *rec;
	unsigned i;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "r%u.example", i);
		rec = big_record(i, 400);
		zone_txt(z, name, rec);
		free(rec);
	}
	assert_int_equal(spfkit_ctx_new(&cfg, &ctx), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct rc_worker){ctx, z, i, 0};
		assert_int_equal(pthread_create(&th[i], NULL, rc_work, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	b = rc_bytes_of(ctx);
	if (b.peak > RC_BUDGET)
		fail_msg("record cache peaked at %zu bytes, budget %zu", b.peak, RC_BUDGET);
	assert_true(b.entries > 0 && b.entries < 12);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(z);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(hit_is_a_copy),
		T(ttl_counts_down_then_expires),
		T(ttl_capped),
		T(negative_answers_kept),
		T(negative_ttl_capped),
		T(tempfail_and_ttl_zero_not_kept),
		T(keys_ignore_case_and_final_dot),
		T(newer_answer_replaces),
		T(memory_bound_evicts_least_recent),
		T(answer_over_quarter_not_kept),
		T(clear_forgets_all),
		T(out_of_memory),
		T(new_rejects_null_out),
		T(concurrent_threads),
		T(layer_miss_then_hit),
		T(layer_negative_kept_tempfail_not),
		T(layer_cancel_hit_and_forwarded),
		T(layer_destroy_with_pending),
		T(layer_cancelled_misses_are_bounded),
		T(layer_ready_and_deliver),
		T(layer_inner_failure_is_returned),
		T(layer_api_rejects_others),
		T(flooded_names_spread),
		T(record_cache_byte_budget),
		T(record_cache_charges_real_bytes),
		T(record_cache_off_and_growing),
		T(one_allocation_per_cold_context),
		T(records_in_arena_without_cache),
		T(record_cache_worst_evaluation),
		T(record_cache_budget_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
