/* The parsed-record cache of a context (record_cache.h). */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>

#include "record_cache.h"

struct spfkit__rcache {
	const struct spfkit_allocator *alloc;
	pthread_mutex_t lock;
	struct spfkit__rcache_entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count, max;
	struct spfkit__list lru;
	size_t hits, misses;
	/* Record texts are chosen by whoever publishes them: a keyed hash of
	 * the whole text, key drawn here and read-only after (thread-safe). */
	struct spfkit__hash_key key;
};

int spfkit__rcache_new(const struct spfkit_allocator *a, size_t max_entries,
		       struct spfkit__rcache **out)
{
	struct spfkit__rcache *c = spfkit__zalloc(a, sizeof(*c));
	size_t n = 64;

	*out = NULL;
	if (c == NULL)
		return SPFKIT_ENOMEM;
	while (n < max_entries && n < ((size_t)1 << 24))
		n <<= 1;
	c->alloc = a;
	spfkit__hash_key_random(&c->key);
	c->max = max_entries;
	c->nbuckets = n;
	c->buckets = spfkit__calloc(a, n, sizeof(*c->buckets));
	if (c->buckets == NULL || pthread_mutex_init(&c->lock, NULL) != 0) {
		spfkit__free(a, c->buckets);
		spfkit__free(a, c);
		return SPFKIT_ENOMEM;
	}
	*out = c;
	return 0;
}

static struct spfkit__rcache_entry *entry_of(struct spfkit__link *n)
{
	return n != NULL ? SPFKIT_CONTAINER_OF(n, struct spfkit__rcache_entry, lru) : NULL;
}

static void entry_free(struct spfkit__rcache *c, struct spfkit__rcache_entry *e)
{
	spfkit__free(c->alloc, e->hot);
	spfkit_record_free(e->rec);
	spfkit__free(c->alloc, e->text);
	spfkit__free(c->alloc, e);
}

void spfkit__rcache_free(struct spfkit__rcache *c)
{
	struct spfkit__rcache_entry *e, *next;

	if (c == NULL)
		return;
	for (e = entry_of(c->lru.head); e != NULL; e = next) {
		next = entry_of(e->lru.next);
		entry_free(c, e);
	}
	pthread_mutex_destroy(&c->lock);
	spfkit__free(c->alloc, c->buckets);
	spfkit__free(c->alloc, c);
}

static struct spfkit__rcache_entry **bucket_of(struct spfkit__rcache *c, uint64_t hash)
{
	return &c->buckets[hash & (c->nbuckets - 1)];
}

static struct spfkit__rcache_entry *find(struct spfkit__rcache *c, uint64_t hash, const char *text,
					 size_t len)
{
	struct spfkit__rcache_entry *e;

	for (e = *bucket_of(c, hash); e != NULL; e = e->chain)
		if (e->hash == hash && e->len == len && memcmp(e->text, text, len) == 0)
			return e;
	return NULL;
}

static void unhash(struct spfkit__rcache *c, struct spfkit__rcache_entry *e)
{
	struct spfkit__rcache_entry **pp = bucket_of(c, e->hash);

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
}

/* Make room: drop least recently used entries nobody holds. */
static void evict(struct spfkit__rcache *c)
{
	struct spfkit__rcache_entry *e = entry_of(c->lru.tail), *prev;

	while (c->count >= c->max && e != NULL) {
		prev = entry_of(e->lru.prev);
		if (atomic_load(&e->refs) == 0) {
			unhash(c, e);
			spfkit__list_unlink(&c->lru, &e->lru);
			entry_free(c, e);
			c->count--;
		}
		e = prev;
	}
}

/* Look up under the lock; take a reference on a hit. */
static struct spfkit__rcache_entry *acquire(struct spfkit__rcache *c, uint64_t hash,
					    const char *text, size_t len)
{
	struct spfkit__rcache_entry *e;

	e = find(c, hash, text, len);
	if (e == NULL)
		return NULL;
	atomic_fetch_add(&e->refs, 1);
	spfkit__list_unlink(&c->lru, &e->lru);
	spfkit__list_push_front(&c->lru, &e->lru);
	return e;
}

static int make_hot(struct spfkit__rcache *c, struct spfkit__rcache_entry *e)
{
	size_t i;

	e->hot = spfkit__calloc(c->alloc, e->rec->count, sizeof(*e->hot));
	if (e->hot == NULL && e->rec->count > 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < e->rec->count; i++) {
		const struct spfkit_term *t = &e->rec->terms[i];
		struct spfkit__hot_term *h = &e->hot[i];

		h->mech = t->mech;
		h->is_modifier = t->is_modifier;
		if (t->is_modifier || t->mech != SPFKIT_MECH_IP4)
			continue;
		memcpy(&h->ip4, t->ip, 4);
		h->mask4 = t->cidr4 == 0 ? 0 : htonl(0xffffffffu << (32 - t->cidr4));
	}
	return 0;
}

static struct spfkit__rcache_entry *parse_entry(struct spfkit__rcache *c, uint64_t hash,
						const char *text, size_t len)
{
	struct spfkit__rcache_entry *e = spfkit__zalloc(c->alloc, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->text = spfkit__strndup(c->alloc, text, len);
	if (e->text == NULL) {
		spfkit__free(c->alloc, e);
		return NULL;
	}
	e->hash = hash;
	e->len = len;
	e->rc = spfkit_record_parse(text, len, c->alloc, &e->rec, &e->pe);
	if (e->rc == SPFKIT_ENOMEM || (e->rc == 0 && make_hot(c, e) != 0)) {
		entry_free(c, e);
		return NULL;
	}
	atomic_init(&e->refs, 1);
	return e;
}

int spfkit__rcache_get(struct spfkit__rcache *c, const char *text, size_t len,
		       struct spfkit__rcache_entry **out)
{
	uint64_t hash = spfkit__siphash13(&c->key, text, len);
	struct spfkit__rcache_entry *e, *mine;

	pthread_mutex_lock(&c->lock);
	e = acquire(c, hash, text, len);
	if (e != NULL)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->lock);
	if (e != NULL) {
		*out = e;
		return 0;
	}
	/* Parse outside the lock; another thread may insert the same meanwhile. */
	mine = parse_entry(c, hash, text, len);
	if (mine == NULL)
		return SPFKIT_ENOMEM;
	pthread_mutex_lock(&c->lock);
	e = acquire(c, hash, text, len);
	if (e == NULL) {
		evict(c);
		if (c->count < c->max) {
			mine->chain = *bucket_of(c, hash);
			*bucket_of(c, hash) = mine;
			spfkit__list_push_front(&c->lru, &mine->lru);
			mine->cached = 1;
			c->count++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (e != NULL) {
		entry_free(c, mine);
		mine = e;
	}
	*out = mine;
	return 0;
}

void spfkit__rcache_release(struct spfkit__rcache *c, struct spfkit__rcache_entry *e)
{
	int cached;

	if (e == NULL)
		return;
	/* A cached entry is freed by eviction, under the lock; a private one
	 * (the cache was full) by its last holder. Read `cached` while our
	 * reference still keeps the entry alive: once it is dropped, another
	 * thread may evict and free it at once. */
	cached = e->cached;
	if (atomic_fetch_sub(&e->refs, 1) == 1 && !cached)
		entry_free(c, e);
}

size_t spfkit__rcache_longest_chain(struct spfkit__rcache *c)
{
	size_t i, n, most = 0;
	const struct spfkit__rcache_entry *e;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->nbuckets; i++) {
		for (n = 0, e = c->buckets[i]; e != NULL; e = e->chain)
			n++;
		if (n > most)
			most = n;
	}
	pthread_mutex_unlock(&c->lock);
	return most;
}

void spfkit__rcache_stats(struct spfkit__rcache *c, size_t *hits, size_t *misses, size_t *entries)
{
	pthread_mutex_lock(&c->lock);
	*hits = c->hits;
	*misses = c->misses;
	*entries = c->count;
	pthread_mutex_unlock(&c->lock);
}
