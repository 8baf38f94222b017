/*
 * The built-in proof of `spfkit flatten`: original and flattened
 * records evaluated by the library's own check_host() for every
 * boundary address of every range (first, last, and the addresses just
 * outside) and a seeded random sample, with the same sender, HELO,
 * receiver and time. Never this machine's address.
 *
 * Both evaluations read DNS through an overlay resolver: TXT questions
 * for the flattened names are answered from the new records (beside the
 * other TXT records already at the domain), every other question from
 * the walk's answers (lint_dns.c's cache, so a live run sees one
 * consistent DNS), and past that cache straight from the resolver.
 *
 * Limits (docs/flatten.md): the original is evaluated with the lookup
 * and void limits raised, since a flattened record exists to remove
 * the permerror of RFC 7208 §4.6.4 that a too-large tree gives; the
 * flattened records with the RFC's limits. When they differ, the
 * original is evaluated again at the RFC limits: equal there, it is not
 * a difference either. Addresses where the original gives permerror at
 * the RFC limits and the flattened records a result are counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish.h"

#define RAISED_LIMIT 1000u  /* terms and void lookups for the original */
#define REPORT_MAX 20u      /* differences written out */
#define VERIFY_SENDER_LOCAL "postmaster@"
#define VERIFY_HELO "helo.flatten.invalid"
#define VERIFY_RECEIVER "flatten.invalid"

/* ---- the overlay resolver ----------------------------------------------- */

struct ov_name {
	const char *name;
	size_t len;
	struct spfkit_dns_rr *rrs;
	size_t count;
};

struct ov_item {
	uint64_t handle;
	spfkit_dns_cb *cb;
	void *arg;
	struct spfkit_dns_answer ans;
	int cancelled;
};

struct overlay {
	struct spfkit_resolver pub;
	struct lint_dns *dns;
	struct ov_name *names;
	size_t nnames;
	struct ov_item *items;
	size_t n, cap, head;
	uint64_t next;
	struct spfkit__arena arena; /* answers asked past the walk's cache */
	uint32_t ttl;
};

static const struct ov_name *ov_find(const struct overlay *o, const char *name, size_t len)
{
	size_t i;

	if (len > 0 && name[len - 1] == '.')
		len--;
	for (i = 0; i < o->nnames; i++)
		if (spfkit__memcaseeq(o->names[i].name, o->names[i].len, name, len))
			return &o->names[i];
	return NULL;
}

struct direct {
	struct overlay *o;
	struct spfkit_dns_answer *ans;
	int done;
};

static void direct_cb(void *arg, const struct spfkit_dns_answer *a)
{
	struct direct *d = arg;
	struct spfkit_dns_rr *rrs = NULL;
	size_t i;

	d->done = 1;
	*d->ans = *a;
	d->ans->rrs = NULL;
	d->ans->count = 0;
	if (a->count > 0 && a->count <= SIZE_MAX / sizeof(*rrs))
		rrs = spfkit__arena_alloc(&d->o->arena, a->count * sizeof(*rrs));
	if (a->count > 0 && rrs == NULL) {
		d->ans->status = SPFKIT_DNS_TEMPFAIL;
		d->ans->detail = "out of memory";
		return;
	}
	for (i = 0; i < a->count; i++) {
		rrs[i] = a->rrs[i];
		rrs[i].data = (const unsigned char *)spfkit__arena_strndup(
			&d->o->arena, (const char *)a->rrs[i].data, a->rrs[i].len);
		if (rrs[i].data == NULL) {
			d->ans->status = SPFKIT_DNS_TEMPFAIL;
			d->ans->detail = "out of memory";
			return;
		}
	}
	d->ans->rrs = rrs;
	d->ans->count = a->count;
}

/* Past the walk's question cap: ask the resolver itself, one question at a time. */
static int ask_direct(struct overlay *o, const char *name, size_t len, uint16_t type,
		      struct spfkit_dns_answer *ans)
{
	struct direct d = { o, ans, 0 };
	uint64_t h;
	int rc;

	memset(ans, 0, sizeof(*ans));
	if (o->dns->resolver == NULL) {
		ans->status = SPFKIT_DNS_NXDOMAIN;
		return 0;
	}
	rc = spfkit_resolver_submit(o->dns->resolver, name, len, type, direct_cb, &d, &h);
	if (rc == SPFKIT_EINVAL) {
		ans->status = SPFKIT_DNS_NXDOMAIN;
		return 0;
	}
	while (rc == 0 && !d.done) {
		rc = spfkit_resolver_wait(o->dns->resolver, -1);
		if (rc < 0)
			spfkit_resolver_cancel(o->dns->resolver, h);
		else
			rc = 0;
	}
	return rc;
}

static int ov_submit(void *impl, const char *name, size_t len, uint16_t type, spfkit_dns_cb *cb,
		     void *arg, uint64_t *handle)
{
	struct overlay *o = impl;
	const struct ov_name *hit = type == SPFKIT_RR_TXT ? ov_find(o, name, len) : NULL;
	const struct lint_answer *a;
	struct ov_item it, *items;
	int rc;

	memset(&it, 0, sizeof(it));
	if (hit != NULL) {
		it.ans.status = SPFKIT_DNS_OK;
		it.ans.ttl = o->ttl;
		it.ans.rrs = hit->rrs;
		it.ans.count = hit->count;
	} else {
		rc = spfkit__lint_dns_ask(o->dns, name, len, type, &a);
		if (rc == SPFKIT_E2BIG)
			rc = ask_direct(o, name, len, type, &it.ans);
		else if (rc == 0) {
			it.ans.status = a->status;
			it.ans.ttl = a->ttl;
			it.ans.rrs = a->rrs;
			it.ans.count = a->count;
			it.ans.detail = a->detail;
		}
		if (rc != 0)
			return rc;
	}
	items = spfkit__array_grow(o->items, &o->cap, o->n, sizeof(*items), 16);
	if (items == NULL)
		return SPFKIT_ENOMEM;
	o->items = items;
	it.handle = ++o->next;
	it.cb = cb;
	it.arg = arg;
	o->items[o->n++] = it;
	*handle = it.handle;
	return 0;
}

static void ov_cancel(void *impl, uint64_t handle)
{
	struct overlay *o = impl;
	size_t i;

	for (i = o->head; i < o->n; i++)
		if (o->items[i].handle == handle)
			o->items[i].cancelled = 1;
}

/* Deliver what was queued when called; a callback's own questions wait for the next call. */
static int ov_wait(void *impl, int timeout_ms)
{
	struct overlay *o = impl;
	size_t end = o->n;
	int ran = 0;

	(void)timeout_ms;
	while (o->head < end) {
		struct ov_item it = o->items[o->head++]; /* a callback may grow the queue */

		if (it.cancelled)
			continue;
		it.cb(it.arg, &it.ans);
		ran++;
	}
	if (o->head == o->n)
		o->head = o->n = 0;
	return ran;
}

static void ov_destroy(void *impl)
{
	struct overlay *o = impl;

	spfkit__free(NULL, o->items);
	spfkit__free(NULL, o->names);
	spfkit__arena_free(&o->arena);
	spfkit__free(NULL, o);
}

static const struct spfkit_resolver_ops ov_ops = { ov_submit, ov_cancel, ov_wait, ov_destroy };

/* The new records, and at the domain the TXT records that are not SPF. */
static int ov_fill(struct overlay *o, const struct flat_output *out, const char *domain)
{
	const struct lint_answer *a = NULL;
	size_t i, k, others = 0;

	o->names = spfkit__calloc(NULL, out->n ? out->n : 1, sizeof(*o->names));
	if (o->names == NULL)
		return SPFKIT_ENOMEM;
	if (spfkit__lint_dns_ask(o->dns, domain, strlen(domain), SPFKIT_RR_TXT, &a) != 0)
		a = NULL;
	for (i = 0; a != NULL && i < a->count; i++)
		others += !spfkit_record_is_spf((const char *)a->rrs[i].data, a->rrs[i].len);
	for (i = 0; i < out->n; i++) {
		struct ov_name *nm = &o->names[o->nnames++];
		size_t n = 1 + (i == 0 ? others : 0);

		nm->name = out->recs[i].name;
		nm->len = strlen(nm->name);
		nm->rrs = spfkit__arena_alloc(&o->arena, n * sizeof(*nm->rrs));
		if (nm->rrs == NULL)
			return SPFKIT_ENOMEM;
		memset(nm->rrs, 0, n * sizeof(*nm->rrs));
		nm->rrs[0].type = SPFKIT_RR_TXT;
		nm->rrs[0].ttl = o->ttl;
		nm->rrs[0].data = (const unsigned char *)out->recs[i].text;
		nm->rrs[0].len = out->recs[i].len;
		nm->count = 1;
		for (k = 0; i == 0 && a != NULL && k < a->count; k++)
			if (!spfkit_record_is_spf((const char *)a->rrs[k].data, a->rrs[k].len))
				nm->rrs[nm->count++] = a->rrs[k];
	}
	return 0;
}

int spfkit__flat_overlay_new(struct lint_dns *dns, const struct flat_output *out,
			     const char *domain, struct spfkit_resolver **res)
{
	struct overlay *o = spfkit__zalloc(NULL, sizeof(*o));
	int rc;

	*res = NULL;
	if (o == NULL)
		return SPFKIT_ENOMEM;
	o->dns = dns;
	o->ttl = 300;
	o->pub.ops = &ov_ops;
	o->pub.impl = o;
	spfkit__arena_init(&o->arena, NULL, 16384, 64u << 20);
	rc = out != NULL ? ov_fill(o, out, domain) : 0;
	if (rc != 0) {
		ov_destroy(o);
		return rc;
	}
	*res = &o->pub;
	return 0;
}

/* ---- the addresses ---------------------------------------------------------- */

struct addrs {
	struct spfkit_ip *items;
	size_t n, cap;
};

static int addrs_push(struct addrs *a, const struct spfkit_ip *ip)
{
	struct spfkit_ip *p = spfkit__array_grow(a->items, &a->cap, a->n, sizeof(*p), 256);

	if (p == NULL)
		return SPFKIT_ENOMEM;
	a->items = p;
	a->items[a->n++] = *ip;
	return 0;
}

/* ip + 1 (step 1) or ip - 1 (step -1); 0 when it stays in the family's space. */
static int step_ip(struct spfkit_ip *ip, int step)
{
	int i = ip->family == 6 ? 15 : 3;

	for (; i >= 0; i--) {
		if (step > 0 && ip->addr[i]++ != 0xff)
			return 0;
		if (step < 0 && ip->addr[i]-- != 0x00)
			return 0;
	}
	return -1; /* wrapped round: no such address */
}

/* first, last, first - 1, last + 1 */
static int push_bounds(struct addrs *a, const struct spfkit_ip *first, const struct spfkit_ip *last)
{
	struct spfkit_ip x;

	if (addrs_push(a, first) != 0 || addrs_push(a, last) != 0)
		return SPFKIT_ENOMEM;
	x = *first;
	if (step_ip(&x, -1) == 0 && addrs_push(a, &x) != 0)
		return SPFKIT_ENOMEM;
	x = *last;
	if (step_ip(&x, 1) == 0 && addrs_push(a, &x) != 0)
		return SPFKIT_ENOMEM;
	return 0;
}

static void cidr_ends(const struct flat_cidr *c, struct spfkit_ip *first, struct spfkit_ip *last)
{
	unsigned bits = c->v6 ? 128 : 32, i;

	first->family = last->family = c->v6 ? 6 : 4;
	memset(first->addr, 0, sizeof(first->addr));
	memcpy(first->addr, c->addr, c->v6 ? 16 : 4);
	*last = *first;
	for (i = c->prefix; i < bits; i++)
		last->addr[i / 8] |= (unsigned char)(0x80u >> (i % 8));
}

static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u); /* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* A random address: a few addresses from a block's end (half the time), else anywhere. */
static void random_ip(uint64_t *state, const struct addrs *bounds, struct spfkit_ip *ip)
{
	uint64_t r = next_random(state), a = next_random(state), b = next_random(state);
	int i;

	memset(ip, 0, sizeof(*ip));
	if ((r & 3) < 2 && bounds->n >= 2) {
		/* one of the boundary addresses with its low 4 bits changed */
		size_t k = (size_t)(a % (bounds->n / 2)) * 2;

		*ip = bounds->items[k];
		ip->addr[ip->family == 6 ? 15 : 3] ^= (unsigned char)(b & 0x0f);
		return;
	}
	ip->family = (r & 3) == 2 ? 4 : 6;
	for (i = 0; i < 8; i++) {
		ip->addr[i] = (unsigned char)(a >> (8 * i));
		ip->addr[8 + i] = (unsigned char)(b >> (8 * i));
	}
	if (ip->family == 4)
		memset(ip->addr + 4, 0, 12);
}

static int by_ip(const void *pa, const void *pb)
{
	const struct spfkit_ip *a = pa, *b = pb;

	if (a->family != b->family)
		return a->family - b->family;
	return memcmp(a->addr, b->addr, 16);
}

static int collect(const struct flat_verify *v, struct addrs *out)
{
	struct spfkit_ip first, last, ip;
	uint64_t state = v->seed;
	size_t i, n;

	for (i = 0; i < v->m->blocks.n; i++) {
		spfkit__flat_range_ip(&v->m->blocks.items[i], 0, &first);
		spfkit__flat_range_ip(&v->m->blocks.items[i], 1, &last);
		if (push_bounds(out, &first, &last) != 0)
			return SPFKIT_ENOMEM;
	}
	for (i = 0; i < v->out->all_blocks.n; i++) {
		cidr_ends(&v->out->all_blocks.items[i], &first, &last);
		if (push_bounds(out, &first, &last) != 0)
			return SPFKIT_ENOMEM;
	}
	n = out->n;
	for (i = 0; i < v->samples; i++) {
		struct addrs bounds = { out->items, n, n };

		random_ip(&state, &bounds, &ip);
		if (addrs_push(out, &ip) != 0)
			return SPFKIT_ENOMEM;
	}
	if (out->n == 0)
		return 0;
	if (out->n > 4 * (size_t)FLAT_MAX_CHECKED)
		return SPFKIT_E2BIG;
	qsort(out->items, out->n, sizeof(*out->items), by_ip);
	for (i = 1, n = 1; i < out->n; i++)
		if (by_ip(&out->items[i], &out->items[n - 1]) != 0)
			out->items[n++] = out->items[i];
	out->n = n;
	return n > FLAT_MAX_CHECKED ? SPFKIT_E2BIG : 0;
}

/* ---- the evaluations -------------------------------------------------------- */

struct worlds {
	struct spfkit_ctx *raised, *rfc;
	struct spfkit_resolver *orig, *flat;
	char sender[300];
};

static int make_ctx(unsigned limit, struct spfkit_ctx **ctx)
{
	struct spfkit_config cfg;

	spfkit_config_init(&cfg);
	cfg.receiver = VERIFY_RECEIVER;
	cfg.no_lookahead = 1; /* answers are in memory: lookahead only adds work */
	cfg.limits.dns_terms = limit;
	cfg.limits.void_lookups = limit;
	return spfkit_ctx_new(&cfg, ctx);
}

static int eval_one(const struct flat_verify *v, struct spfkit_ctx *ctx,
		    struct spfkit_resolver *res, const struct spfkit_request *req, int original,
		    enum spfkit_result_code *code, unsigned *terms, unsigned *voids)
{
	struct spfkit_eval *ev = NULL;
	int rc;

	if (original)
		rc = spfkit_check_record(ctx, res, req, v->source, v->source_len, &ev);
	else
		rc = spfkit_check(ctx, res, req, &ev);
	if (rc == 0 && spfkit_eval_result(ev) == NULL)
		rc = SPFKIT_ESTATE;
	if (rc == 0) {
		*code = spfkit_eval_result(ev)->code;
		if (terms != NULL)
			*terms = spfkit_eval_result(ev)->dns_terms;
		if (voids != NULL)
			*voids = spfkit_eval_result(ev)->void_lookups;
	}
	spfkit_eval_free(ev);
	return rc;
}

static int check_ip(struct flat_verify *v, struct worlds *w, const struct spfkit_ip *ip)
{
	struct spfkit_request req;
	enum spfkit_result_code orig, flat, orig_rfc = SPFKIT_RESULT_NONE;
	unsigned terms = 0, voids = 0;
	char text[SPFKIT_IP_TEXT_MAX];
	int rc, over;

	spfkit_request_init(&req);
	req.ip = *ip;
	req.sender = w->sender;
	req.sender_len = strlen(w->sender);
	req.helo = VERIFY_HELO;
	req.helo_len = strlen(VERIFY_HELO);
	req.now = v->now;
	rc = eval_one(v, w->raised, w->orig, &req, 1, &orig, &terms, &voids);
	if (rc == 0)
		rc = eval_one(v, w->rfc, w->flat, &req, 0, &flat, NULL, NULL);
	if (rc != 0)
		return rc;
	v->addresses++;
	/*
	 * The evaluation at the RFC limits walks the same path and stops with
	 * permerror once a count passes its limit (§4.6.4): over the limits
	 * here means permerror there, so it is not run again when flat agrees.
	 */
	over = terms > SPFKIT_LIMIT_DNS_TERMS || voids > SPFKIT_LIMIT_VOID_LOOKUPS;
	if (orig == flat) {
		v->permerror_removed += over && flat != SPFKIT_RESULT_PERMERROR;
		return 0;
	}
	rc = eval_one(v, w->rfc, w->orig, &req, 1, &orig_rfc, NULL, NULL);
	if (rc != 0)
		return rc;
	if (orig_rfc == flat)
		return 0; /* as receivers see the original today */
	v->differences++;
	if (v->differences <= REPORT_MAX)
		spfkit__buf_printf(&v->report, "%s: original %s, flattened %s\n",
				   spfkit_ip_format(ip, text, sizeof(text)), spfkit_result_name(orig),
				   spfkit_result_name(flat));
	return 0;
}

int spfkit__flat_verify_run(struct flat_verify *v)
{
	struct worlds w;
	struct addrs a = { NULL, 0, 0 };
	size_t i;
	int rc;

	memset(&w, 0, sizeof(w));
	spfkit__buf_init(&v->report, NULL, 1u << 20);
	snprintf(w.sender, sizeof(w.sender), "%s%s", VERIFY_SENDER_LOCAL, v->domain);
	rc = make_ctx(RAISED_LIMIT, &w.raised);
	if (rc == 0)
		rc = make_ctx(0, &w.rfc);
	if (rc == 0)
		rc = spfkit__flat_overlay_new(v->dns, NULL, v->domain, &w.orig);
	if (rc == 0)
		rc = spfkit__flat_overlay_new(v->dns, v->out, v->domain, &w.flat);
	if (rc == 0)
		rc = collect(v, &a);
	for (i = 0; rc == 0 && i < a.n; i++)
		rc = check_ip(v, &w, &a.items[i]);
	spfkit__free(NULL, a.items);
	spfkit_resolver_free(w.orig);
	spfkit_resolver_free(w.flat);
	spfkit_ctx_free(w.raised);
	spfkit_ctx_free(w.rfc);
	return rc;
}

int spfkit__flat_lookups_after(struct lint_dns *dns, const char *domain, struct flat_output *out)
{
	struct spfkit_resolver *res = NULL;
	struct lint_report r;
	struct lint_dns after;
	struct lint_input in;
	int rc;

	rc = spfkit__flat_overlay_new(dns, out, domain, &res);
	if (rc != 0)
		return rc;
	spfkit__lint_report_init(&r);
	spfkit__lint_dns_init(&after, res, &r);
	memset(&in, 0, sizeof(in));
	in.domain = domain;
	rc = spfkit__lint_run(&after, &in);
	out->lookups_after = r.counts.dns_terms;
	spfkit__lint_dns_free(&after);
	spfkit__lint_report_free(&r);
	spfkit_resolver_free(res);
	return rc;
}
