/*
 * Address plans (record_plan.h). With the record memo on, what strict
 * evaluation of a domain comes to depends on the client address alone
 * for most SPF trees: includes and redirects down to ip4/ip6 lists, "a"
 * and "mx" whose answers the memo holds. The plan of a domain walks its
 * tree in the order of check_host() (RFC 7208 §4.6.2, §5, §6.1) over the
 * memo's answers and lays it out as steps: an address test (ip4, ip6,
 * all, an address of an "a" or "mx") with where a match leads (a result,
 * or past the include whose check_host() it ends without a pass, §5.2),
 * and a mark where a question is asked, with what it counts (§4.6.4: a
 * DNS-querying term, a void lookup) and its level. Running the steps adds
 * up the marks on the way, so the result, the mechanism and domain that
 * decided and every counter are those of strict evaluation through the
 * memo. A plan is for one address family ("a" and "mx" ask A or AAAA).
 *
 * The walk stops where a plan could not say the same: a term with a
 * macro, "ptr" or "exists", a name the memo does not hold (valid), a
 * question met twice (it is not asked again, and its level is that of
 * the first path), an "exp" that a fail of the top check_host() would
 * fetch, a limit reached, anything that is an error. A client that gets
 * past the last step is evaluated as usual; a plan that stopped at a
 * question the memo lacked is built again once the memo has its answer.
 *
 * Plans hang off the memo's node of the domain's TXT answer, are charged
 * with it to the record cache's budget and go with it, and live no longer
 * than the first TTL of the answers they were built from. Built after an
 * evaluation that went through the memo; built and run under the cache's
 * lock.
 */
#include <arpa/inet.h>
#include <string.h>

#include "domain.h"
#include "eval_int.h"
#include "record_cache_int.h"
#include "record_plan.h"

#define PLAN_MAX_STEPS 1024u
#define PLAN_MAX_SEEN 128u
#define PLAN_MAX_POOL 16384u
#define PLAN_MAX_HOPS 16u
/* terms a walk reads, steps or not (64 KiB records of modifiers): the
 * walk holds the cache's lock */
#define PLAN_MAX_TERMS 8192u
/* a step's counters are 16 bits wide */
#define PLAN_MAX_LIMIT 1000u

/* A test's jump: the next step, or one of these with an index */
#define JUMP_END 0x40000000u     /* | k: a match decides, as ends[k] says */
#define JUMP_PENDING 0x80000000u /* | level: past the include of that level (while building) */

enum { PS_IP4 = 0, PS_IP6, PS_ALL, PS_MARK };
enum { STOP_NONE = 0, STOP_SHAPE, STOP_MISSING };

/* What a mark counts, besides its question. */
#define MARK_DNS_TERM 0x01u
#define MARK_VOID 0x02u

/* 16 bytes: the run reads them one after the other (a plan of a big
 * provider tree has hundreds); what only a match reads is aside. */
struct plan_step {
	uint32_t a, b;   /* PS_IP4: network and mask (network order); PS_IP6: a indexes net6 */
	uint32_t jump;   /* tests: on a match (JUMP_*) */
	uint8_t kind;
	uint8_t counts;  /* PS_MARK: MARK_* */
	uint16_t level;  /* PS_MARK: the question's level */
};

/* What a deciding match gives. */
struct plan_end {
	uint32_t mech_off; /* the deciding term's text in the pool */
	uint16_t mech_len;
	uint8_t code, hop;
};

/* An IPv6 network: two 64-bit halves, host order. */
struct plan_net6 {
	uint64_t net[2], mask[2];
};

/* The domain whose record decides: the checked one, then each redirect
 * target of the top check_host(). */
struct plan_hop {
	uint32_t name_off;
	uint16_t name_len, rec_level;
};

struct spfkit__record_plan {
	int64_t stored, expires;
	struct spfkit_limits limits; /* those it was built for */
	size_t cost;                 /* charged to the memo node, its entry and the cache */
	uint32_t nsteps, nends, nnet6;
	uint8_t stop;                /* why the steps end: STOP_NONE is the neutral default */
	uint8_t nhops;
	/* STOP_MISSING: the question the memo lacked (its name in the pool) */
	uint16_t missing_type, missing_len;
	uint32_t missing_off;
	uint64_t missing_hash;
	struct plan_hop hops[PLAN_MAX_HOPS];
	struct plan_step *steps;
	struct plan_end *ends;
	struct plan_net6 *net6;
	char *pool;
};

/* A question of the walk. */
struct question {
	const char *name;
	size_t len;
	uint64_t hash;
	uint16_t type;
};

struct walk {
	struct spfkit__record_cache *c;
	int64_t now, expires;
	struct spfkit_limits limits;
	int family;
	unsigned dns_terms, voids, terms;
	int stop;
	struct question missing; /* STOP_MISSING */
	struct plan_step steps[PLAN_MAX_STEPS];
	size_t nsteps;
	struct plan_end ends[PLAN_MAX_STEPS];
	size_t nends;
	struct plan_net6 net6[PLAN_MAX_STEPS];
	size_t nnet6;
	char pool[PLAN_MAX_POOL];
	size_t pool_len;
	struct plan_hop hops[PLAN_MAX_HOPS];
	size_t nhops;
	struct question seen[PLAN_MAX_SEEN];
	size_t nseen;
	/* the include term each open level was entered by */
	struct {
		const struct spfkit_record *rec;
		const struct spfkit_term *t;
	} incl[EVAL_MAX_DEPTH];
};

static int pool_add(struct walk *w, const char *s, size_t len, uint32_t *off)
{
	if (len > 0xffff || len > PLAN_MAX_POOL - w->pool_len) {
		w->stop = STOP_SHAPE;
		return 0;
	}
	memcpy(w->pool + w->pool_len, s, len);
	*off = (uint32_t)w->pool_len;
	w->pool_len += len;
	return 1;
}

static struct plan_step *emit(struct walk *w, uint8_t kind)
{
	struct plan_step *s;

	if (w->nsteps == PLAN_MAX_STEPS) {
		w->stop = STOP_SHAPE;
		return NULL;
	}
	s = &w->steps[w->nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return s;
}

/* An IPv6 address as two 64-bit numbers, most significant first. */
static void halves(const unsigned char *a, uint64_t out[2])
{
	int i;

	out[0] = out[1] = 0;
	for (i = 0; i < 8; i++) {
		out[0] = out[0] << 8 | a[i];
		out[1] = out[1] << 8 | a[8 + i];
	}
}

/* A match of t (in rec, at level d): the result of the top check_host()
 * or, when an include on the way ends without a pass, past that include. */
static void resolve(struct walk *w, struct plan_step *s, unsigned d,
		    const struct spfkit_record *rec, const struct spfkit_term *t)
{
	enum spfkit_result_code code = spfkit__qualifier_result(t);
	struct plan_end *e;

	while (d > 0) {
		/* §5.2: only a pass of the included check_host() is a match */
		if (code != SPFKIT_RESULT_PASS) {
			s->jump = JUMP_PENDING | (d - 1);
			return;
		}
		d--;
		rec = w->incl[d].rec;
		t = w->incl[d].t;
		code = spfkit__qualifier_result(t);
	}
	e = &w->ends[w->nends]; /* as many as steps: never full */
	if (pool_add(w, rec->text + t->offset, t->len, &e->mech_off)) {
		e->mech_len = (uint16_t)t->len;
		e->code = (uint8_t)code;
		e->hop = (uint8_t)(w->nhops - 1);
		s->jump = JUMP_END | (uint32_t)w->nends++;
	}
}

/* A test of `family` for the network at addr/prefix that decides as t does. */
static void emit_test(struct walk *w, unsigned d, const struct spfkit_record *rec,
		      const struct spfkit_term *t, int family, const unsigned char *addr,
		      unsigned prefix)
{
	struct plan_step *s = emit(w, family == 4 ? PS_IP4 : family == 6 ? PS_IP6 : PS_ALL);

	if (s == NULL)
		return;
	if (family == 4) {
		memcpy(&s->a, addr, 4);
		s->b = prefix == 0 ? 0 : htonl(0xffffffffu << (32 - prefix));
	} else if (family == 6) { /* as many as steps: never full */
		struct plan_net6 *n = &w->net6[w->nnet6];

		halves(addr, n->net);
		n->mask[0] = prefix == 0 ? 0 : ~(uint64_t)0 << (prefix >= 64 ? 0 : 64 - prefix);
		n->mask[1] = prefix <= 64 ? 0 : ~(uint64_t)0 << (128 - prefix);
		n->net[0] &= n->mask[0];
		n->net[1] &= n->mask[1];
		s->a = (uint32_t)w->nnet6++;
	}
	resolve(w, s, d, rec, t);
}

/*
 * Ask (type, name) at `level`, counting what a mark says: its memo node,
 * valid, or NULL with w->stop set. A question asked before on the walk
 * stops it (evaluation would not ask it again).
 */
static struct spfkit__record_cache_name *ask(struct walk *w, uint16_t type, const char *name,
					     size_t len, unsigned level, unsigned counts)
{
	struct spfkit__record_cache_name *n;
	struct plan_step *s;
	uint64_t hash;
	size_t i;

	len = spfkit__domain_trim(name, len);
	hash = spfkit__namehash(name, len);
	for (i = 0; i < w->nseen; i++)
		if (w->seen[i].hash == hash && w->seen[i].type == type &&
		    spfkit__memcaseeq(w->seen[i].name, w->seen[i].len, name, len))
			break;
	if (i < w->nseen || w->nseen == PLAN_MAX_SEEN || len > SPFKIT_DOMAIN_MAX_LEN) {
		w->stop = STOP_SHAPE;
		return NULL;
	}
	n = spfkit__record_memo_find(w->c, type, name, len, hash);
	if (n == NULL || w->now < n->stored || w->now >= n->expires) {
		w->stop = STOP_MISSING;
		w->missing = (struct question){name, len, hash, type};
		return NULL;
	}
	if (n->entry != NULL || n->status == SPFKIT_DNS_OK)
		counts &= ~(unsigned)MARK_VOID; /* §4.6.4: only no data or no such name is void */
	if ((counts & MARK_VOID) && ++w->voids > w->limits.void_lookups) {
		w->stop = STOP_SHAPE; /* permerror */
		return NULL;
	}
	if ((s = emit(w, PS_MARK)) == NULL)
		return NULL;
	s->level = (uint16_t)level;
	s->counts = (uint8_t)counts;
	w->seen[w->nseen++] = (struct question){name, len, hash, type};
	if (n->expires < w->expires)
		w->expires = n->expires;
	return n;
}

/* A DNS-querying term (§4.6.4): counted, or the walk stops at the limit. */
static int charge(struct walk *w)
{
	if (++w->dns_terms > w->limits.dns_terms) {
		w->stop = STOP_SHAPE;
		return 0;
	}
	return 1;
}

/* The term's literal target, or NULL with w->stop set (a macro, or not a
 * valid name: the evaluation says what). */
static const char *literal_target(struct walk *w, const struct spfkit_term *t,
				  const struct spfkit__hot_term *h, size_t *len)
{
	if (h->literal != HOT_LITERAL_VALID) {
		w->stop = STOP_SHAPE;
		return NULL;
	}
	*len = t->domain.pieces[0].len;
	return t->domain.pieces[0].text;
}

/* The SPF record an include or redirect's TXT answer holds, or NULL. */
static const struct spfkit__record_cache_entry *ask_record(struct walk *w, const char *name,
							   size_t len,
							   unsigned level)
{
	struct spfkit__record_cache_name *n = ask(w, SPFKIT_RR_TXT, name, len, level,
						  MARK_DNS_TERM);

	if (n != NULL && (n->entry == NULL || n->entry->rc != 0)) {
		w->stop = STOP_SHAPE; /* no record, several, or a bad one */
		return NULL;
	}
	return n != NULL ? n->entry : NULL;
}

/* The addresses of an address answer, each a test for t. */
static void emit_addresses(struct walk *w, unsigned d, const struct spfkit_record *rec,
			   const struct spfkit_term *t, const struct spfkit__record_cache_name *n)
{
	size_t i, want = w->family == 4 ? 4 : 16;
	unsigned prefix = w->family == 4 ? t->cidr4 : t->cidr6;

	if (n->entry != NULL)
		return;
	for (i = 0; i < n->count && !w->stop; i++)
		if (n->rrs[i].len == want)
			emit_test(w, d, rec, t, w->family, n->rrs[i].data, prefix);
}

/* §5.3 "a" and §5.4 "mx" of t, whose target is [name, len), at rec_level. */
static void walk_a_mx(struct walk *w, unsigned d, const struct spfkit_record *rec,
		      const struct spfkit_term *t, const char *name, size_t len,
		      unsigned rec_level)
{
	uint16_t addr_type = w->family == 4 ? SPFKIT_RR_A : SPFKIT_RR_AAAA;
	const struct spfkit__record_cache_name *n, *host;
	size_t i, looked = 0;

	if (t->mech == SPFKIT_MECH_A) {
		n = ask(w, addr_type, name, len, rec_level + 1, MARK_DNS_TERM | MARK_VOID);
		if (n != NULL)
			emit_addresses(w, d, rec, t, n);
		return;
	}
	n = ask(w, SPFKIT_RR_MX, name, len, rec_level + 1, MARK_DNS_TERM | MARK_VOID);
	if (n == NULL || n->entry != NULL)
		return;
	for (i = 0; i < n->count && !w->stop; i++) {
		const struct spfkit_dns_rr *rr = &n->rrs[i];

		if (rr->len == 0 || (rr->len == 1 && rr->data[0] == '.'))
			continue; /* the null MX of RFC 7505 */
		if (++looked > w->limits.mx_names) {
			w->stop = STOP_SHAPE; /* permerror */
			return;
		}
		host = ask(w, addr_type, (const char *)rr->data, rr->len, rec_level + 2, 0);
		if (host != NULL)
			emit_addresses(w, d, rec, t, host);
	}
}

static void walk_record(struct walk *w, const struct spfkit__record_cache_entry *e,
			const char *domain,
			size_t domain_len, unsigned d, unsigned rec_level);

/* §5.2 "include" t at level d: the included record's steps. */
static void walk_include(struct walk *w, unsigned d, const struct spfkit_record *rec,
			 const struct spfkit_term *t, const struct spfkit__hot_term *h,
			 unsigned rec_level)
{
	const struct spfkit__record_cache_entry *child;
	const char *name;
	size_t len, from;

	if (d + 2 > EVAL_MAX_DEPTH) { /* "include nesting too deep" */
		w->stop = STOP_SHAPE;
		return;
	}
	if ((name = literal_target(w, t, h, &len)) == NULL ||
	    (child = ask_record(w, name, len, rec_level + 1)) == NULL)
		return;
	w->incl[d].rec = rec;
	w->incl[d].t = t;
	from = w->nsteps;
	walk_record(w, child, name, spfkit__domain_trim(name, len), d + 1, rec_level + 1);
	/* matches that end the included check_host() without a pass go on here */
	for (; from < w->nsteps; from++)
		if (w->steps[from].jump == (JUMP_PENDING | d))
			w->steps[from].jump = (uint32_t)w->nsteps;
}

/* §6.1 "redirect" of rec at level d. */
static void walk_redirect(struct walk *w, const struct spfkit__record_cache_entry *e, unsigned d,
			  unsigned rec_level)
{
	const struct spfkit_record *rec = e->rec;
	const struct spfkit__record_cache_entry *target;
	const char *name;
	size_t len;

	if ((name = literal_target(w, &rec->terms[rec->redirect], &e->hot[rec->redirect], &len)) ==
		    NULL ||
	    (target = ask_record(w, name, len, rec_level + 1)) == NULL)
		return;
	len = spfkit__domain_trim(name, len);
	if (d == 0) { /* the top check_host() now stands for the target's */
		if (w->nhops == PLAN_MAX_HOPS) {
			w->stop = STOP_SHAPE;
			return;
		}
		if (!pool_add(w, name, len, &w->hops[w->nhops].name_off))
			return;
		w->hops[w->nhops].name_len = (uint16_t)len;
		w->hops[w->nhops++].rec_level = (uint16_t)(rec_level + 1);
	}
	walk_record(w, target, name, len, d, rec_level + 1);
}

/* check_host() over e's record, for `domain`, at level d; the record's
 * TXT question was at rec_level. */
static void walk_record(struct walk *w, const struct spfkit__record_cache_entry *e,
			const char *domain,
			size_t domain_len, unsigned d, unsigned rec_level)
{
	const struct spfkit_record *rec = e->rec;
	const struct spfkit_term *t;
	const char *name;
	size_t i, len;

	if (d == 0 && rec->exp >= 0) {
		/* §6.2: a fail of the top check_host() fetches "exp", from
		 * the record, wherever the modifier stands in it */
		w->stop = STOP_SHAPE;
		return;
	}
	for (i = 0; i < rec->count && !w->stop; i++) {
		if (++w->terms > PLAN_MAX_TERMS) {
			w->stop = STOP_SHAPE;
			break;
		}
		t = &rec->terms[i];
		if (t->is_modifier)
			continue; /* redirect comes after the mechanisms; others are ignored */
		switch (t->mech) {
		case SPFKIT_MECH_IP4:
		case SPFKIT_MECH_IP6:
			emit_test(w, d, rec, t, t->mech == SPFKIT_MECH_IP4 ? 4 : 6, t->ip,
				  t->mech == SPFKIT_MECH_IP4 ? t->cidr4 : t->cidr6);
			break;
		case SPFKIT_MECH_ALL:
			emit_test(w, d, rec, t, 0, NULL, 0);
			break;
		case SPFKIT_MECH_INCLUDE:
			if (charge(w))
				walk_include(w, d, rec, t, &e->hot[i], rec_level);
			break;
		case SPFKIT_MECH_A:
		case SPFKIT_MECH_MX:
			if (!charge(w))
				break;
			name = domain;
			len = domain_len;
			if (t->has_domain && (name = literal_target(w, t, &e->hot[i], &len)) == NULL)
				break;
			walk_a_mx(w, d, rec, t, name, len, rec_level);
			break;
		default:
			w->stop = STOP_SHAPE; /* ptr, exists: more than answers in hand */
			break;
		}
	}
	if (!w->stop && rec->redirect >= 0 && charge(w)) /* else neutral: the includer goes on */
		walk_redirect(w, e, d, rec_level);
}

static void walk_start(struct walk *w, struct spfkit__record_cache *c,
		       const struct spfkit__record_cache_name *n, int64_t now,
		       const struct spfkit_limits *limits, int family)
{
	w->c = c;
	w->now = now;
	w->expires = n->expires;
	w->limits = *limits;
	w->family = family;
	w->dns_terms = w->voids = w->terms = 0;
	w->stop = STOP_NONE;
	memset(&w->missing, 0, sizeof(w->missing));
	w->nsteps = w->nends = w->nnet6 = w->pool_len = 0;
	w->seen[0] = (struct question){n->name, n->len, n->hash, SPFKIT_RR_TXT};
	w->nseen = 1;
	w->hops[0].name_off = 0;
	w->hops[0].name_len = 0; /* the domain itself */
	w->hops[0].rec_level = 1;
	w->nhops = 1;
}

/* The walk's plan as one block; NULL when out of memory or past the budget. */
static struct spfkit__record_plan *plan_of(struct walk *w, size_t *cost)
{
	struct spfkit__record_cache *c = w->c;
	struct spfkit__record_plan *p;
	size_t steps_bytes, ends_bytes, net6_bytes, size;
	uint32_t missing_off = 0;

	if (w->stop == STOP_MISSING &&
	    !pool_add(w, w->missing.name, w->missing.len, &missing_off))
		w->stop = STOP_SHAPE;
	net6_bytes = w->nnet6 * sizeof(struct plan_net6);
	steps_bytes = w->nsteps * sizeof(struct plan_step);
	ends_bytes = w->nends * sizeof(struct plan_end);
	size = SPFKIT__ALIGN_UP(sizeof(*p)) + net6_bytes + steps_bytes + ends_bytes + w->pool_len;
	*cost = spfkit__record_cache_block_cost(size);
	if (!spfkit__record_cache_room(c, *cost, 0) || (p = spfkit__alloc(c->alloc, size)) == NULL)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->stored = w->now;
	p->expires = w->expires;
	p->limits = w->limits;
	p->cost = *cost;
	p->nsteps = (uint32_t)w->nsteps;
	p->nends = (uint32_t)w->nends;
	p->nnet6 = (uint32_t)w->nnet6;
	p->stop = (uint8_t)w->stop;
	p->missing_type = w->missing.type;
	p->missing_len = (uint16_t)w->missing.len;
	p->missing_off = missing_off;
	p->missing_hash = w->missing.hash;
	p->nhops = (uint8_t)w->nhops;
	memcpy(p->hops, w->hops, sizeof(p->hops));
	/* by alignment: 8-byte halves, then 4-byte steps and ends, then text */
	p->net6 = (struct plan_net6 *)(void *)((char *)p + SPFKIT__ALIGN_UP(sizeof(*p)));
	memcpy(p->net6, w->net6, net6_bytes);
	p->steps = (struct plan_step *)(void *)((char *)p->net6 + net6_bytes);
	memcpy(p->steps, w->steps, steps_bytes);
	p->ends = (struct plan_end *)(void *)((char *)p->steps + steps_bytes);
	memcpy(p->ends, w->ends, ends_bytes);
	p->pool = (char *)p->ends + ends_bytes;
	memcpy(p->pool, w->pool, w->pool_len);
	return p;
}

static struct spfkit__record_plan **slot_of(struct spfkit__record_cache_name *n, int family)
{
	return &n->plan[family == 4 ? 0 : 1];
}

/* Give back the plan in *slot and what it was charged. */
static void drop(struct spfkit__record_cache *c, struct spfkit__record_cache_name *n,
		 struct spfkit__record_plan **slot)
{
	size_t cost = (*slot)->cost;

	n->cost -= cost;
	n->entry->bytes -= cost;
	c->bytes -= cost;
	spfkit__free(c->alloc, *slot);
	*slot = NULL;
}

/* Build n's plan for `family` (the walk's room is the cache's, kept from
 * one build to the next); none when out of memory or past the budget. */
static void build(struct spfkit__record_cache *c, struct spfkit__record_cache_name *n, int64_t now,
		  const struct spfkit_limits *limits, int family)
{
	struct walk *w = c->plan_walk;
	struct spfkit__record_plan *p;
	size_t cost;

	if (w == NULL && (w = c->plan_walk = spfkit__alloc(c->alloc, sizeof(*w))) == NULL)
		return;
	walk_start(w, c, n, now, limits, family);
	walk_record(w, n->entry, n->name, n->len, 0, 1);
	/* what is left pending ends past the steps */
	for (size_t i = 0; i < w->nsteps; i++)
		if (w->steps[i].jump & JUMP_PENDING)
			w->steps[i].jump = (uint32_t)w->nsteps;
	if ((p = plan_of(w, &cost)) == NULL)
		return;
	*slot_of(n, family) = p;
	n->cost += cost;
	n->entry->bytes += cost;
	c->bytes += cost;
	if (c->bytes > c->peak)
		c->peak = c->bytes;
}

void spfkit__record_plan_walk_free(struct spfkit__record_cache *c)
{
	spfkit__free(c->alloc, c->plan_walk);
	c->plan_walk = NULL;
}

void spfkit__record_plan_free(struct spfkit__record_cache *c, struct spfkit__record_cache_name *n)
{
	spfkit__free(c->alloc, n->plan[0]);
	spfkit__free(c->alloc, n->plan[1]);
}

/* The client, as the steps compare it. */
struct client {
	int family;
	uint32_t ip4;    /* network order */
	uint64_t ip6[2]; /* halves() */
};

static int step_matches(const struct spfkit__record_plan *p, const struct plan_step *s,
			const struct client *cl)
{
	const struct plan_net6 *n;

	switch (s->kind) {
	case PS_IP4: return cl->family == 4 && ((cl->ip4 ^ s->a) & s->b) == 0;
	case PS_IP6:
		n = &p->net6[s->a];
		return cl->family == 6 && (cl->ip6[0] & n->mask[0]) == n->net[0] &&
		       (cl->ip6[1] & n->mask[1]) == n->net[1];
	default: return 1;
	}
}

/* The steps for this client: 1 with the counters in *out and the deciding
 * step in *end (NULL: the neutral default), or 0 past the last step of a
 * plan that stopped. */
static int run_steps(const struct spfkit__record_plan *p, const struct spfkit_ip *ip,
		     struct spfkit__record_plan_result *out, const struct plan_end **end)
{
	const struct plan_step *s;
	struct client cl;
	uint32_t i = 0;

	cl.family = ip->family;
	memcpy(&cl.ip4, ip->addr, 4);
	halves(ip->addr, cl.ip6);
	out->dns_terms = out->void_lookups = 0;
	out->queries = out->depth = 1; /* the domain's TXT question */
	*end = NULL;
	while (i < p->nsteps) {
		s = &p->steps[i];
		if (s->kind == PS_MARK) {
			out->dns_terms += s->counts & MARK_DNS_TERM;
			out->void_lookups += (s->counts & MARK_VOID) != 0;
			out->queries++;
			if (s->level > out->depth)
				out->depth = s->level;
			i++;
		} else if (!step_matches(p, s, &cl)) {
			i++;
		} else if (s->jump & JUMP_END) {
			*end = &p->ends[s->jump & ~JUMP_END];
			return 1;
		} else if (s->jump > i) {
			i = s->jump;
		} else {
			return 0; /* jumps go forward (build()): never loop */
		}
	}
	return p->stop == STOP_NONE;
}

static int fill(const struct spfkit__record_plan *p, const struct plan_end *s,
		struct spfkit__arena *to, struct spfkit__record_plan_result *out)
{
	const struct plan_hop *h = &p->hops[s != NULL ? s->hop : p->nhops - 1];

	out->code = s != NULL ? (enum spfkit_result_code)s->code : SPFKIT_RESULT_NEUTRAL;
	out->mechanism = "default";
	if (s != NULL &&
	    (out->mechanism = spfkit__arena_strndup(to, p->pool + s->mech_off, s->mech_len)) == NULL)
		return SPFKIT_ENOMEM;
	out->domain = NULL;
	out->domain_len = h->name_len;
	out->rec_level = h->rec_level;
	if (h != &p->hops[0] &&
	    (out->domain = spfkit__arena_strndup(to, p->pool + h->name_off, h->name_len)) == NULL)
		return SPFKIT_ENOMEM;
	return 1;
}

/* Did the plan stop at a question the memo now answers? */
static int learnt(struct spfkit__record_cache *c, const struct spfkit__record_plan *p, int64_t now)
{
	const struct spfkit__record_cache_name *n;

	if (p->stop != STOP_MISSING)
		return 0;
	n = spfkit__record_memo_find(c, p->missing_type, p->pool + p->missing_off, p->missing_len,
				     p->missing_hash);
	return n != NULL && now >= n->stored && now < n->expires;
}

/* The domain's memo node, when its TXT answer held one valid record. */
static struct spfkit__record_cache_name *record_node(struct spfkit__record_cache *c,
						     const char *name,
						     size_t len, uint64_t hash, int64_t now)
{
	struct spfkit__record_cache_name *n = spfkit__record_memo_find(c, SPFKIT_RR_TXT, name, len,
								       hash);

	if (n == NULL || n->entry == NULL || n->entry->rc != 0 || now < n->stored ||
	    now >= n->expires)
		return NULL;
	return n;
}

/* Is the plan one to use now, for these limits? */
static int plan_current(const struct spfkit__record_plan *p, int64_t now,
			const struct spfkit_limits *limits)
{
	return p != NULL && now >= p->stored && now < p->expires &&
	       memcmp(&p->limits, limits, sizeof(*limits)) == 0;
}

static int limits_fit(const struct spfkit_limits *l)
{
	return l->dns_terms <= PLAN_MAX_LIMIT && l->void_lookups <= PLAN_MAX_LIMIT &&
	       l->mx_names <= PLAN_MAX_LIMIT;
}

int spfkit__record_plan_run(struct spfkit__record_cache *c, const char *name, size_t len,
			    uint64_t hash,
			    int64_t now, const struct spfkit_ip *ip,
			    const struct spfkit_limits *limits, struct spfkit__arena *to,
			    struct spfkit__record_plan_result *out)
{
	struct spfkit__record_cache_name *n;
	const struct spfkit__record_plan *p;
	const struct plan_end *end;
	int rc = SPFKIT__PLAN_LEARN; /* the evaluation fills the memo: the plan comes after */

	if (!limits_fit(limits) || (ip->family != 4 && ip->family != 6))
		return SPFKIT__PLAN_NONE;
	pthread_mutex_lock(&c->lock);
	n = record_node(c, name, len, hash, now);
	if (n == NULL || !plan_current(p = *slot_of(n, ip->family), now, limits))
		goto out;
	if (!run_steps(p, ip, out, &end)) {
		/* past a question the memo lacked: the evaluation asks it */
		rc = p->stop == STOP_MISSING ? SPFKIT__PLAN_LEARN : SPFKIT__PLAN_NONE;
		goto out;
	}
	rc = fill(p, end, to, out);
	/* used as the memo would have been: keep the record off the LRU's end */
	spfkit__list_unlink(&c->lru, &n->entry->lru);
	spfkit__list_push_front(&c->lru, &n->entry->lru);
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void spfkit__record_plan_learn(struct spfkit__record_cache *c, const char *name, size_t len,
			       uint64_t hash, int64_t now, const struct spfkit_limits *limits,
			       int family)
{
	struct spfkit__record_cache_name *n;
	struct spfkit__record_plan **slot;

	if (!limits_fit(limits) || (family != 4 && family != 6))
		return;
	pthread_mutex_lock(&c->lock);
	n = record_node(c, name, len, hash, now);
	if (n != NULL) {
		slot = slot_of(n, family);
		if (*slot != NULL && (!plan_current(*slot, now, limits) || learnt(c, *slot, now)))
			drop(c, n, slot);
		if (*slot == NULL)
			build(c, n, now, limits, family); /* without one, evaluation as usual */
	}
	pthread_mutex_unlock(&c->lock);
}
