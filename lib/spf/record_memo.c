/*
 * The record memo (spfkit_config.record_memo, record_cache.h): what the
 * answers to a context's questions held, by question, until their TTLs
 * pass. A TXT answer that held one SPF record binds its name to the
 * cached record; any other answer (addresses, MX hosts, no data, no such
 * name, TXT without exactly one SPF record) is kept as a small copy.
 * Everything is charged to the record cache's byte budget and kept under
 * its lock.
 *
 * TTLs are capped as the DNS cache caps them (cache.h): a day for an
 * answer, an hour for no data or no such name (RFC 2308 §5), so a
 * hostile TTL cannot keep an answer for ever.
 *
 * The name table is keyed by an unkeyed hash (spfkit__namehash, which
 * the evaluation has worked out anyway): a bucket takes at most
 * SPFKIT__RECORD_MEMO_CHAIN names, so colliding names chosen by a
 * publisher cost a lookup a few comparisons and are then asked as if
 * there were no memo.
 */
#include <string.h>

#include <spfkit/cache.h>

#include "macro.h"
#include "record_cache_int.h"

static struct spfkit__record_cache_name **name_bucket_of(struct spfkit__record_cache *c,
							 uint64_t hash)
{
	return &c->names[hash & (c->nnames_buckets - 1)];
}

static struct spfkit__record_cache_name *node_of(struct spfkit__link *l)
{
	return l != NULL ? SPFKIT_CONTAINER_OF(l, struct spfkit__record_cache_name, lru) : NULL;
}

/* Forget one name, and what it was charged. */
static void unbind(struct spfkit__record_cache *c, struct spfkit__record_cache_name *n)
{
	struct spfkit__record_cache_name **pp;

	for (pp = name_bucket_of(c, n->hash); *pp != n; pp = &(*pp)->chain)
		;
	*pp = n->chain;
	if (n->entry != NULL) {
		for (pp = &n->entry->names; *pp != n; pp = &(*pp)->next)
			;
		*pp = n->next;
		n->entry->bytes -= n->cost;
	} else {
		spfkit__list_unlink(&c->answers, &n->lru);
		c->nanswers--;
	}
	c->bytes -= n->cost; /* the plan's bytes with it */
	c->nnames--;
	spfkit__record_plan_free(c, n);
	spfkit__free(c->alloc, n);
}

void spfkit__record_memo_unbind_all(struct spfkit__record_cache *c,
				    struct spfkit__record_cache_entry *e)
{
	while (e->names != NULL)
		unbind(c, e->names);
}

int spfkit__record_memo_evict_answers(struct spfkit__record_cache *c, size_t need)
{
	struct spfkit__record_cache_name *n;

	while (!spfkit__record_cache_room(c, need, 0) && (n = node_of(c->answers.tail)) != NULL)
		unbind(c, n);
	return spfkit__record_cache_room(c, need, 0);
}

void spfkit__record_memo_free(struct spfkit__record_cache *c)
{
	struct spfkit__record_cache_name *n;

	while ((n = node_of(c->answers.head)) != NULL)
		unbind(c, n);
	spfkit__free(c->alloc, c->names);
	c->names = NULL;
}

struct spfkit__record_cache_name *spfkit__record_memo_find(struct spfkit__record_cache *c,
							   uint16_t type, const char *name,
							   size_t len, uint64_t hash)
{
	struct spfkit__record_cache_name *n;

	if (c->names == NULL)
		return NULL;
	for (n = *name_bucket_of(c, hash); n != NULL; n = n->chain)
		if (n->hash == hash && n->type == type &&
		    spfkit__memcaseeq(n->name, n->len, name, len))
			return n;
	return NULL;
}

/* An answer's records, with their data, into the evaluation's arena. */
static int copy_answer(const struct spfkit__record_cache_name *n, struct spfkit__arena *to,
		       struct spfkit__record_memo *out)
{
	struct spfkit_dns_rr *rrs = NULL;
	size_t i;

	if (n->count > 0) {
		rrs = spfkit__arena_alloc(to, n->count * sizeof(*rrs));
		if (rrs == NULL)
			return 0;
	}
	for (i = 0; i < n->count; i++) {
		unsigned char *data = spfkit__arena_alloc(to, n->rrs[i].len + 1);

		if (data == NULL)
			return 0;
		memcpy(data, n->rrs[i].data, n->rrs[i].len + 1);
		rrs[i] = n->rrs[i];
		rrs[i].data = data;
	}
	out->rrs = rrs;
	out->count = n->count;
	out->status = (enum spfkit_dns_status)n->status;
	return 1;
}

/* The hit: a hold on the record, or a copy of the answer (0 if out of memory). */
static int take(struct spfkit__record_cache *c, struct spfkit__record_cache_name *n, int64_t now,
		struct spfkit__arena *to, struct spfkit__record_memo *out)
{
	struct spfkit__record_cache_entry *e = n->entry;

	memset(out, 0, sizeof(*out));
	out->ttl = (uint32_t)(n->expires - now);
	if (e == NULL) {
		if (!copy_answer(n, to, out))
			return 0;
		spfkit__list_unlink(&c->answers, &n->lru);
		spfkit__list_push_front(&c->answers, &n->lru);
		return 1;
	}
	atomic_fetch_add(&e->refs, 1);
	spfkit__list_unlink(&c->lru, &e->lru);
	spfkit__list_push_front(&c->lru, &e->lru);
	out->entry = e;
	out->txt_count = n->txt_count;
	out->txt_at = n->txt_at;
	return 1;
}

int spfkit__record_memo_get(struct spfkit__record_cache *c, uint16_t type, const char *name,
			    size_t len,
			    uint64_t hash, int64_t now, struct spfkit__arena *to,
			    struct spfkit__record_memo *out)
{
	struct spfkit__record_cache_name *n;
	int hit = 0;

	pthread_mutex_lock(&c->lock);
	n = spfkit__record_memo_find(c, type, name, len, hash);
	if (n != NULL && (now < n->stored || now >= n->expires)) {
		unbind(c, n); /* expired, or the caller's clock went back */
		n = NULL;
	}
	if (n != NULL)
		hit = take(c, n, now, to, out); /* not a parse-cache hit: stats stay the parser's */
	pthread_mutex_unlock(&c->lock);
	return hit;
}

/* Room in the name table for one more name: it grows like the entries'
 * table, to four names per entry the cache may hold. 0 when out of memory. */
static int names_room(struct spfkit__record_cache *c)
{
	size_t n, i, most = c->max_buckets * 4;
	struct spfkit__record_cache_name **b, *p, *next;

	if (c->names != NULL && (c->nnames < c->nnames_buckets || c->nnames_buckets >= most))
		return 1;
	n = c->names == NULL ? RCACHE_FIRST_BUCKETS : c->nnames_buckets * 4;
	if (n > most)
		n = most;
	b = spfkit__calloc(c->alloc, n, sizeof(*b));
	if (b == NULL)
		return c->names != NULL;
	for (i = 0; i < c->nnames_buckets; i++) {
		for (p = c->names[i]; p != NULL; p = next) {
			next = p->chain;
			p->chain = b[p->hash & (n - 1)];
			b[p->hash & (n - 1)] = p;
		}
	}
	spfkit__free(c->alloc, c->names);
	c->names = b;
	c->nnames_buckets = n;
	return 1;
}

static size_t chain_length(struct spfkit__record_cache *c, uint64_t hash)
{
	const struct spfkit__record_cache_name *n;
	size_t len = 0;

	for (n = *name_bucket_of(c, hash); n != NULL; n = n->chain)
		len++;
	return len;
}

/* Bind n (its name unbound) to e, or as an answer when e is NULL: 1 when done. */
static int bind_name(struct spfkit__record_cache *c, struct spfkit__record_cache_entry *e,
		     struct spfkit__record_cache_name *n)
{
	if (!names_room(c) || chain_length(c, n->hash) >= SPFKIT__RECORD_MEMO_CHAIN)
		return 0;
	if (e == NULL && c->nanswers >= c->max && c->answers.tail != NULL)
		unbind(c, node_of(c->answers.tail)); /* as many answers as records, at most */
	spfkit__record_cache_evict(c, n->cost, 0);
	if (!spfkit__record_cache_room(c, n->cost, 0))
		return 0;
	n->entry = e;
	n->chain = *name_bucket_of(c, n->hash);
	*name_bucket_of(c, n->hash) = n;
	if (e != NULL) {
		n->next = e->names;
		e->names = n;
		e->bytes += n->cost;
	} else {
		spfkit__list_push_front(&c->answers, &n->lru);
		c->nanswers++;
	}
	c->nnames++;
	c->bytes += n->cost;
	if (c->bytes > c->peak)
		c->peak = c->bytes;
	return 1;
}

/* A node for (type, name) with `extra` bytes after the name, or NULL. */
static struct spfkit__record_cache_name *node_new(struct spfkit__record_cache *c, uint16_t type,
						  const char *name, size_t len, uint64_t hash,
						  int64_t now, uint32_t ttl, size_t extra)
{
	size_t size = sizeof(struct spfkit__record_cache_name) + SPFKIT__ALIGN_UP(len) + extra;
	struct spfkit__record_cache_name *n;

	if (ttl == 0 || len > SPFKIT_DOMAIN_MAX_LEN)
		return NULL;
	n = spfkit__alloc(c->alloc, size);
	if (n == NULL)
		return NULL;
	memset(n, 0, sizeof(*n));
	memcpy(n->name, name, len);
	n->len = len;
	n->hash = hash;
	n->type = type;
	n->stored = now;
	n->expires = now + ttl;
	n->cost = spfkit__record_cache_block_cost(size);
	return n;
}

/* Bind n in place of what its name held before; n is freed if not bound. */
static void put(struct spfkit__record_cache *c, struct spfkit__record_cache_entry *e,
		struct spfkit__record_cache_name *n)
{
	struct spfkit__record_cache_name *old;

	pthread_mutex_lock(&c->lock);
	old = spfkit__record_memo_find(c, n->type, n->name, n->len, n->hash);
	if (old != NULL)
		unbind(c, old);
	if (!bind_name(c, e, n))
		spfkit__free(c->alloc, n);
	pthread_mutex_unlock(&c->lock);
}

void spfkit__record_memo_put(struct spfkit__record_cache *c, struct spfkit__record_cache_entry *e,
			     const char *name, size_t len, uint64_t hash, int64_t now, uint32_t ttl,
			     uint32_t txt_count, uint32_t txt_at)
{
	struct spfkit__record_cache_name *n;

	if (!e->cached)
		return;
	n = node_new(c, SPFKIT_RR_TXT, name, len, hash, now,
		     ttl < SPFKIT_CACHE_MAX_TTL ? ttl : SPFKIT_CACHE_MAX_TTL, 0);
	if (n == NULL)
		return;
	n->txt_count = txt_count;
	n->txt_at = txt_at;
	put(c, e, n);
}

/* What an answer's records and their data take in a node. */
static size_t answer_bytes(const struct spfkit_dns_answer *a)
{
	size_t i, bytes = a->count * sizeof(struct spfkit_dns_rr);

	for (i = 0; i < a->count && bytes <= SPFKIT__RECORD_MEMO_ANSWER_MAX; i++)
		bytes += a->rrs[i].len + 1;
	return bytes;
}

void spfkit__record_memo_put_answer(struct spfkit__record_cache *c, uint16_t type, const char *name,
				    size_t len, uint64_t hash, int64_t now,
				    const struct spfkit_dns_answer *a)
{
	size_t bytes, i;
	unsigned char *data;
	struct spfkit__record_cache_name *n;
	uint32_t cap = a->status == SPFKIT_DNS_OK ? SPFKIT_CACHE_MAX_TTL : SPFKIT_CACHE_MAX_NEG_TTL;

	if (a->status != SPFKIT_DNS_OK && a->status != SPFKIT_DNS_NODATA &&
	    a->status != SPFKIT_DNS_NXDOMAIN)
		return;
	bytes = answer_bytes(a);
	if (bytes > SPFKIT__RECORD_MEMO_ANSWER_MAX)
		return;
	n = node_new(c, type, name, len, hash, now, a->ttl < cap ? a->ttl : cap, bytes);
	if (n == NULL)
		return;
	n->status = (uint8_t)a->status;
	n->count = a->count;
	n->rrs = (struct spfkit_dns_rr *)(void *)(n->name + SPFKIT__ALIGN_UP(len));
	data = (unsigned char *)(n->rrs + a->count);
	for (i = 0; i < a->count; i++) {
		n->rrs[i] = a->rrs[i];
		if (a->rrs[i].len > 0)
			memcpy(data, a->rrs[i].data, a->rrs[i].len);
		data[a->rrs[i].len] = '\0';
		n->rrs[i].data = data;
		data += a->rrs[i].len + 1;
	}
	put(c, NULL, n);
}
