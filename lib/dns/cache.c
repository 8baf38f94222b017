/*
 * The answer cache (include/spfkit/cache.h): a hash table of flat
 * entries under one mutex, an LRU list for the memory bound, TTLs on a
 * caller-replaceable clock; and the resolver layer that answers from it.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "cache_int.h"

/* Room for one struct, rounded so the records after it stay aligned. */
#define ALIGNED(n) SPFKIT__ALIGN_UP(n)

static uint64_t monotonic_ms(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- flat copies of an answer ----------------------------------------- */

/* Bytes for `prefix`, the records and their data (each with a NUL), plus
 * `tail`; 0 when that does not fit in a size_t. */
static size_t flat_size(size_t prefix, const struct spfkit_dns_answer *a, size_t tail)
{
	size_t n = ALIGNED(prefix), i;

	if (a->count > (SIZE_MAX - n) / sizeof(struct spfkit_dns_rr))
		return 0;
	n += a->count * sizeof(struct spfkit_dns_rr);
	for (i = 0; i < a->count; i++) {
		if (a->rrs[i].len >= SIZE_MAX - n)
			return 0;
		n += a->rrs[i].len + 1;
	}
	if (tail > SIZE_MAX - n)
		return 0;
	return n + tail;
}

/*
 * Copy src's records into block (laid out as flat_size() counted, after
 * `prefix`), TTLs capped at `ttl`. Returns where the next byte goes.
 */
static unsigned char *flat_copy(unsigned char *block, size_t prefix,
				const struct spfkit_dns_answer *src, struct spfkit_dns_answer *dst,
				uint32_t ttl)
{
	struct spfkit_dns_rr *rrs = (struct spfkit_dns_rr *)(void *)(block + ALIGNED(prefix));
	unsigned char *data = (unsigned char *)(rrs + src->count);
	size_t i;

	*dst = *src;
	dst->ttl = src->ttl < ttl ? src->ttl : ttl;
	dst->rrs = src->count > 0 ? rrs : NULL;
	dst->detail = NULL;
	for (i = 0; i < src->count; i++) {
		rrs[i] = src->rrs[i];
		rrs[i].ttl = src->rrs[i].ttl < ttl ? src->rrs[i].ttl : ttl;
		rrs[i].data = data;
		if (src->rrs[i].len > 0)
			memcpy(data, src->rrs[i].data, src->rrs[i].len);
		data[src->rrs[i].len] = 0;
		data += src->rrs[i].len + 1;
	}
	return data;
}

/* ---- keys ------------------------------------------------------------- */

struct key {
	char name[SPFKIT__CACHE_NAME_MAX];
	size_t len;
	uint16_t type;
	uint64_t hash;
};

/* Names compare without case and without a final dot. 0, or -1 when too long. */
static int make_key(const struct spfkit_cache *c, struct key *k, const char *name, size_t len,
		    uint16_t type)
{
	size_t i;

	if (len > 1 && name[len - 1] == '.')
		len--;
	if (len > sizeof(k->name))
		return -1;
	for (i = 0; i < len; i++)
		k->name[i] = (char)spfkit__lower((unsigned char)name[i]);
	k->len = len;
	k->type = type;
	k->hash = spfkit__hash_siphash13(&c->key, k->name,
					 len) + (uint64_t)type * 0x9e3779b97f4a7c15ull;
	return 0;
}

/* ---- table and LRU (call with the mutex held) ------------------------- */

static struct spfkit__cache_entry **slot(struct spfkit_cache *c, uint64_t hash)
{
	return &c->table[hash & c->mask];
}

static struct spfkit__cache_entry *find(struct spfkit_cache *c, const struct key *k)
{
	struct spfkit__cache_entry *e;

	for (e = *slot(c, k->hash); e != NULL; e = e->hnext)
		if (e->hash == k->hash && e->type == k->type && e->name_len == k->len &&
		    memcmp(e->name, k->name, k->len) == 0)
			return e;
	return NULL;
}

static struct spfkit__cache_entry *entry_of(struct spfkit__link *n)
{
	return n != NULL ? SPFKIT_CONTAINER_OF(n, struct spfkit__cache_entry, lru) : NULL;
}

static void drop(struct spfkit_cache *c, struct spfkit__cache_entry *e)
{
	struct spfkit__cache_entry **pp = slot(c, e->hash);

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	spfkit__list_unlink(&c->lru, &e->lru);
	c->st.entries--;
	c->st.bytes -= e->size;
	spfkit__free(c->alloc, e);
}

static void insert(struct spfkit_cache *c, struct spfkit__cache_entry *e)
{
	struct spfkit__cache_entry **s = slot(c, e->hash);

	while (c->lru.tail != NULL && c->st.bytes > c->max_bytes - e->size) {
		drop(c, entry_of(c->lru.tail));
		c->st.evictions++;
	}
	e->hnext = *s;
	*s = e;
	spfkit__list_push_front(&c->lru, &e->lru);
	c->st.entries++;
	c->st.bytes += e->size;
	c->st.inserts++;
}

/* ---- get and put ------------------------------------------------------ */

/* Seconds left before `expires`, rounded up, so a live entry never says 0. */
static uint32_t seconds_left(uint64_t expires, uint64_t now)
{
	uint64_t s = (expires - now + 999u) / 1000u;

	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* A flat copy of e's answer into *buf (see spfkit__cache_get_into()),
 * TTLs lowered to what is left. 0, or SPFKIT_ENOMEM. */
static int copy_out(const struct spfkit__cache_entry *e, uint64_t now,
		    const struct spfkit_allocator *a, struct spfkit_dns_answer **buf, size_t *cap)
{
	size_t size = flat_size(sizeof(struct spfkit_dns_answer), &e->answer, 0);

	if (size > *cap) {
		spfkit__free(a, *buf);
		*cap = 0;
		*buf = spfkit__alloc(a, size);
		if (*buf == NULL)
			return SPFKIT_ENOMEM;
		*cap = size;
	}
	(void)flat_copy((unsigned char *)*buf, sizeof(**buf), &e->answer, *buf,
			seconds_left(e->expires, now));
	return 0;
}

int spfkit__cache_get_into(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
			   const struct spfkit_allocator *a, struct spfkit_dns_answer **buf,
			   size_t *cap)
{
	struct key k;
	struct spfkit__cache_entry *e;
	uint64_t now = c->clock(c->clock_arg);
	int rc;

	if (make_key(c, &k, name, len, type) != 0)
		return 0;
	pthread_mutex_lock(&c->mu);
	e = find(c, &k);
	if (e != NULL && e->expires <= now) {
		drop(c, e);
		c->st.expirations++;
		e = NULL;
	}
	if (e == NULL) {
		c->st.misses++;
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	c->st.hits++;
	spfkit__list_unlink(&c->lru, &e->lru);
	spfkit__list_push_front(&c->lru, &e->lru);
	rc = copy_out(e, now, a, buf, cap);
	pthread_mutex_unlock(&c->mu);
	return rc == 0 ? 1 : rc;
}

/* How long `ans` may be kept, in seconds; 0: not at all. */
static uint32_t keep_for(const struct spfkit_cache *c, const struct spfkit_dns_answer *ans)
{
	switch (ans->status) {
	case SPFKIT_DNS_OK:
		if (ans->count == 0 || ans->rrs == NULL)
			return 0;
		return ans->ttl < c->max_ttl ? ans->ttl : c->max_ttl;
	case SPFKIT_DNS_NODATA:
	case SPFKIT_DNS_NXDOMAIN:
		return ans->ttl < c->max_neg_ttl ? ans->ttl : c->max_neg_ttl;
	case SPFKIT_DNS_TEMPFAIL:
		break;
	}
	return 0;
}

/* A new entry for k holding `ans`; NULL when out of memory. */
static struct spfkit__cache_entry *entry_new(struct spfkit_cache *c, const struct key *k,
			       const struct spfkit_dns_answer *ans, size_t size, uint32_t ttl,
			       uint64_t now)
{
	struct spfkit__cache_entry *e = spfkit__alloc(c->alloc, size);
	unsigned char *tail;

	if (e == NULL)
		return NULL;
	tail = flat_copy((unsigned char *)e, sizeof(*e), ans, &e->answer, ttl);
	e->answer.ttl = ttl;
	memcpy(tail, k->name, k->len);
	e->name = (char *)tail;
	e->name_len = k->len;
	e->hash = k->hash;
	e->type = k->type;
	e->size = size;
	e->expires = now + (uint64_t)ttl * 1000u;
	return e;
}

int spfkit__cache_put(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
		      const struct spfkit_dns_answer *ans)
{
	uint32_t ttl = keep_for(c, ans);
	struct spfkit_dns_answer src = *ans;
	struct spfkit__cache_entry *e, *old;
	struct key k;
	size_t size;

	if (ttl == 0 || make_key(c, &k, name, len, type) != 0)
		return 0;
	if (src.status != SPFKIT_DNS_OK)
		src.count = 0; /* a void answer keeps no records */
	size = flat_size(sizeof(struct spfkit__cache_entry), &src, k.len);
	if (size == 0 || size > c->max_bytes / 4)
		return 0;
	e = entry_new(c, &k, &src, size, ttl, c->clock(c->clock_arg));
	if (e == NULL)
		return SPFKIT_ENOMEM;
	pthread_mutex_lock(&c->mu);
	old = find(c, &k);
	if (old != NULL)
		drop(c, old);
	insert(c, e);
	pthread_mutex_unlock(&c->mu);
	return 1;
}

/* ---- the cache object ------------------------------------------------- */

static size_t table_size(size_t max_bytes)
{
	size_t n = 64;

	/* about one bucket per 512 bytes of entries: short chains */
	while (n < max_bytes / 512 && n < ((size_t)1 << 20))
		n *= 2;
	return n;
}

int spfkit_cache_new(const struct spfkit_cache_options *opt, const struct spfkit_allocator *alloc,
		     struct spfkit_cache **out)
{
	struct spfkit_cache_options o;
	struct spfkit_cache *c;
	size_t n;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	memset(&o, 0, sizeof(o));
	if (opt != NULL &&
	    spfkit__sized_copy(&o, sizeof(o), opt, SPFKIT__SIZE_UPTO(struct spfkit_cache_options,
								   clock_arg)) != 0)
		return SPFKIT_EINVAL;
	c = spfkit__zalloc(alloc, sizeof(*c));
	if (c == NULL)
		return SPFKIT_ENOMEM;
	c->alloc = alloc;
	spfkit__hash_key_random(&c->key);
	c->max_bytes = o.max_bytes ? o.max_bytes : SPFKIT_CACHE_MAX_BYTES;
	c->max_ttl = o.max_ttl ? o.max_ttl : SPFKIT_CACHE_MAX_TTL;
	c->max_neg_ttl = o.max_negative_ttl ? o.max_negative_ttl : SPFKIT_CACHE_MAX_NEG_TTL;
	c->clock = o.clock ? o.clock : monotonic_ms;
	c->clock_arg = o.clock_arg;
	c->st.max_bytes = c->max_bytes;
	n = table_size(c->max_bytes);
	c->table = spfkit__calloc(alloc, n, sizeof(*c->table));
	if (c->table == NULL || pthread_mutex_init(&c->mu, NULL) != 0) {
		spfkit__free(alloc, c->table);
		spfkit__free(alloc, c);
		return SPFKIT_ENOMEM;
	}
	c->mask = n - 1;
	*out = c;
	return 0;
}

void spfkit_cache_clear(struct spfkit_cache *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	while (c->lru.head != NULL)
		drop(c, entry_of(c->lru.head));
	pthread_mutex_unlock(&c->mu);
}

void spfkit_cache_free(struct spfkit_cache *c)
{
	if (c == NULL)
		return;
	spfkit_cache_clear(c);
	pthread_mutex_destroy(&c->mu);
	spfkit__free(c->alloc, c->table);
	spfkit__free(c->alloc, c);
}

void spfkit_cache_stats(struct spfkit_cache *c, struct spfkit_cache_stats *out)
{
	if (out == NULL)
		return;
	if (c == NULL) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&c->mu);
	*out = c->st;
	pthread_mutex_unlock(&c->mu);
}

/* ---- the resolver layer ----------------------------------------------- */

struct item {
	struct spfkit__link link; /* in the layer's hits or fwd queue */
	struct layer *owner;
	uint64_t handle;
	uint64_t inner_handle;
	spfkit_dns_cb *cb;
	void *arg;
	/* a hit's flat copy (a forwarded item's is unused), in a block of
	 * hit_cap bytes, kept while the item waits among the layer's spares */
	struct spfkit_dns_answer *hit;
	size_t hit_cap;
	uint16_t type;
	size_t name_len, name_room;
	char name[];
};

/*
 * Items a layer keeps for its next questions rather than freeing them:
 * warm, an evaluation's questions are all hits, each an item and a copy
 * of its answer, and recycling both makes a hit allocation-free. Only
 * items of the usual size go there, with a copy of at most
 * ITEM_HIT_KEPT bytes, so the spares stay within some 40 KiB.
 */
#define LAYER_SPARE_ITEMS 16
#define ITEM_NAME_ROOM 255 /* a presentation name's longest (RFC 1035 §2.3.4), less a dot */
#define ITEM_HIT_KEPT 2048

/*
 * A cancelled miss keeps waiting for its answer, to keep it, without
 * calling back: lookahead cancels what strict evaluation turned out not
 * to need, and would otherwise ask it again at every evaluation. At most
 * this many at once; past it, cancelled misses are cancelled in inner.
 */
#define LAYER_ORPHANS_MAX 256

struct layer {
	struct spfkit_resolver pub; /* handed out; destroy() frees all of it */
	struct spfkit_cache *cache;
	struct spfkit_resolver *inner;
	const struct spfkit_allocator *alloc;
	struct spfkit__list hits, fwd; /* of struct item, in order */
	uint64_t next_handle;
	uint64_t forwarded; /* misses passed to inner */
	unsigned orphans;   /* of those, cancelled but still awaited (layer_cancel()) */
	struct item *spare[LAYER_SPARE_ITEMS]; /* see LAYER_SPARE_ITEMS */
	unsigned spares;
	spfkit_cache_ready_fn *ready;
	void *ready_arg;
	int delivering;
};

static const struct spfkit_resolver_ops layer_ops;

static struct item *item_of(struct spfkit__link *n)
{
	return n != NULL ? SPFKIT_CONTAINER_OF(n, struct item, link) : NULL;
}

static void i_append(struct spfkit__list *l, struct item *it)
{
	spfkit__list_push_back(l, &it->link);
}

static void i_unlink(struct spfkit__list *l, struct item *it)
{
	spfkit__list_unlink(l, &it->link);
}

static struct item *i_find(const struct spfkit__list *l, uint64_t handle)
{
	struct item *it;

	for (it = item_of(l->head); it != NULL; it = item_of(it->link.next))
		if (it->handle == handle)
			return it;
	return NULL;
}

static void i_destroy(struct layer *ly, struct item *it)
{
	spfkit__free(ly->alloc, it->hit);
	spfkit__free(ly->alloc, it);
}

/* Done with it: kept among the spares if it is of the usual size. */
static void i_free(struct layer *ly, struct item *it)
{
	if (ly->spares < LAYER_SPARE_ITEMS && it->name_room == ITEM_NAME_ROOM &&
	    it->hit_cap <= ITEM_HIT_KEPT)
		ly->spare[ly->spares++] = it;
	else
		i_destroy(ly, it);
}

/* inner answered a miss: keep the answer, pass it on. */
static void on_inner(void *arg, const struct spfkit_dns_answer *answer)
{
	struct item *it = arg;
	struct layer *ly = it->owner;

	i_unlink(&ly->fwd, it);
	/* Out of memory only means the answer is not kept. */
	(void)spfkit__cache_put(ly->cache, it->name, it->name_len, it->type, answer);
	if (it->cb != NULL)
		it->cb(it->arg, answer);
	else
		ly->orphans--;
	i_free(ly, it);
}

static struct item *item_new(struct layer *ly, const char *name, size_t len, uint16_t type,
			     spfkit_dns_cb *cb, void *arg)
{
	struct item *it;
	size_t room = len > ITEM_NAME_ROOM ? len : ITEM_NAME_ROOM;

	if (len <= ITEM_NAME_ROOM && ly->spares > 0) {
		it = ly->spare[--ly->spares];
		it->inner_handle = 0;
	} else {
		if (room > SIZE_MAX - sizeof(*it) - 1)
			return NULL;
		it = spfkit__zalloc(ly->alloc, sizeof(*it) + room + 1);
		if (it == NULL)
			return NULL;
		it->name_room = room;
	}
	it->owner = ly;
	it->handle = ++ly->next_handle;
	it->cb = cb;
	it->arg = arg;
	it->type = type;
	if (len > 0)
		memcpy(it->name, name, len);
	it->name[len] = 0;
	it->name_len = len;
	return it;
}

static int layer_submit(void *impl, const char *name, size_t len, uint16_t type,
			spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	struct layer *ly = impl;
	struct item *it = item_new(ly, name, len, type, cb, arg);
	int rc, was_empty = ly->hits.head == NULL;

	if (it == NULL)
		return SPFKIT_ENOMEM;
	rc = spfkit__cache_get_into(ly->cache, name, len, type, ly->alloc, &it->hit, &it->hit_cap);
	if (rc == 1) {
		i_append(&ly->hits, it); /* delivered later, never here */
		if (handle != NULL)
			*handle = it->handle;
		if (was_empty && ly->ready != NULL)
			ly->ready(ly->ready_arg);
		return 0;
	}
	/* A miss, or no memory for the copy: ask inner. */
	i_append(&ly->fwd, it);
	rc = ly->inner->ops->submit(ly->inner->impl, name, len, type, on_inner, it,
				    &it->inner_handle);
	if (rc != 0) {
		i_unlink(&ly->fwd, it);
		i_free(ly, it);
		return rc;
	}
	ly->forwarded++;
	if (handle != NULL)
		*handle = it->handle;
	return 0;
}

static void layer_cancel(void *impl, uint64_t handle)
{
	struct layer *ly = impl;
	struct item *it = i_find(&ly->hits, handle);

	if (it != NULL) {
		i_unlink(&ly->hits, it);
		i_free(ly, it);
		return;
	}
	it = i_find(&ly->fwd, handle);
	if (it == NULL || it->cb == NULL)
		return;
	if (ly->orphans < LAYER_ORPHANS_MAX) { /* see LAYER_ORPHANS_MAX */
		it->cb = NULL;
		ly->orphans++;
		return;
	}
	ly->inner->ops->cancel(ly->inner->impl, it->inner_handle);
	i_unlink(&ly->fwd, it);
	i_free(ly, it);
}

static int deliver_hits(struct layer *ly)
{
	struct item *it;
	int n = 0;

	ly->delivering = 1;
	while (ly->hits.head != NULL) {
		it = item_of(ly->hits.head);
		i_unlink(&ly->hits, it);
		it->cb(it->arg, it->hit);
		i_free(ly, it);
		n++;
	}
	ly->delivering = 0;
	return n;
}

static int layer_wait(void *impl, int timeout_ms)
{
	struct layer *ly = impl;

	if (ly->delivering)
		return SPFKIT_ESTATE;
	if (ly->hits.head != NULL)
		return deliver_hits(ly);
	return ly->inner->ops->wait(ly->inner->impl, timeout_ms);
}

static void layer_destroy(void *impl)
{
	struct layer *ly = impl;
	struct item *it;

	while (ly->hits.head != NULL) {
		it = item_of(ly->hits.head);
		i_unlink(&ly->hits, it);
		i_destroy(ly, it);
	}
	while (ly->fwd.head != NULL) {
		it = item_of(ly->fwd.head);
		ly->inner->ops->cancel(ly->inner->impl, it->inner_handle);
		i_unlink(&ly->fwd, it);
		i_destroy(ly, it);
	}
	while (ly->spares > 0)
		i_destroy(ly, ly->spare[--ly->spares]);
	spfkit__free(ly->alloc, ly);
}

static const struct spfkit_resolver_ops layer_ops = {
	layer_submit,
	layer_cancel,
	layer_wait,
	layer_destroy,
};

int spfkit_cache_resolver(struct spfkit_cache *cache, struct spfkit_resolver *inner,
			  struct spfkit_resolver **out)
{
	struct layer *ly;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if (cache == NULL || inner == NULL || inner->ops == NULL)
		return SPFKIT_EINVAL;
	ly = spfkit__zalloc(cache->alloc, sizeof(*ly));
	if (ly == NULL)
		return SPFKIT_ENOMEM;
	ly->cache = cache;
	ly->inner = inner;
	ly->alloc = cache->alloc;
	ly->pub.ops = &layer_ops;
	ly->pub.impl = ly;
	*out = &ly->pub;
	return 0;
}

static struct layer *as_layer(const struct spfkit_resolver *r)
{
	if (r == NULL || r->ops != &layer_ops)
		return NULL;
	return r->impl;
}

int spfkit_cache_set_ready(struct spfkit_resolver *r, spfkit_cache_ready_fn *fn, void *arg)
{
	struct layer *ly = as_layer(r);

	if (ly == NULL)
		return SPFKIT_EINVAL;
	ly->ready = fn;
	ly->ready_arg = arg;
	return 0;
}

int spfkit_cache_deliver(struct spfkit_resolver *r)
{
	struct layer *ly = as_layer(r);

	if (ly == NULL)
		return SPFKIT_EINVAL;
	if (ly->delivering)
		return SPFKIT_ESTATE;
	return deliver_hits(ly);
}

size_t spfkit_cache_queued(const struct spfkit_resolver *r)
{
	const struct layer *ly = as_layer(r);
	const struct item *it;
	size_t n = 0;

	if (ly == NULL)
		return 0;
	for (it = item_of(ly->hits.head); it != NULL; it = item_of(it->link.next))
		n++;
	return n;
}

int spfkit_cache_forwarded(const struct spfkit_resolver *r, uint64_t *out)
{
	const struct layer *ly = as_layer(r);

	if (ly == NULL || out == NULL)
		return SPFKIT_EINVAL;
	*out = ly->forwarded;
	return 0;
}
