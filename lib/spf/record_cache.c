/* The parsed-record cache of a context (record_cache.h). */
#include <pthread.h>
#include <string.h>

#include "record_cache.h"
#include "record_cache_int.h"
#include "record_room.h"

int spfkit__record_cache_new_bounded(const struct spfkit_allocator *a, size_t max_entries,
				     size_t max_bytes, struct spfkit__record_cache **out)
{
	struct spfkit__record_cache *c = spfkit__zalloc(a, sizeof(*c));
	size_t n = RCACHE_FIRST_BUCKETS;

	*out = NULL;
	if (c == NULL)
		return SPFKIT_ENOMEM;
	while (n < max_entries && n < ((size_t)1 << 24))
		n <<= 1;
	c->alloc = a;
	c->max = max_entries;
	c->max_bytes = max_bytes ? max_bytes : SPFKIT__RECORD_CACHE_DEFAULT_BYTES;
	/* No cache (max_entries 0) has no table to key or clear. Otherwise
	 * start small: a context made for one evaluation must not pay for
	 * clearing a table sized for thousands of records. */
	if (max_entries > 0) {
		spfkit__hash_key_random(&c->key);
		c->max_buckets = n;
		c->nbuckets = RCACHE_FIRST_BUCKETS;
		c->buckets = spfkit__calloc(a, c->nbuckets, sizeof(*c->buckets));
	}
	if ((max_entries > 0 && c->buckets == NULL) || pthread_mutex_init(&c->lock, NULL) != 0) {
		spfkit__free(a, c->buckets);
		spfkit__free(a, c);
		return SPFKIT_ENOMEM;
	}
	*out = c;
	return 0;
}

static struct spfkit__record_cache_entry *entry_of(struct spfkit__link *n)
{
	return n != NULL ? SPFKIT_CONTAINER_OF(n, struct spfkit__record_cache_entry, lru) : NULL;
}

static void entry_free(struct spfkit__record_cache_entry *e)
{
	spfkit__free(e->under, e->ip4);
	if (e->rec == NULL) { /* the parse failed: the entry is a block of its own */
		spfkit__free(e->under, e->text);
		spfkit__free(e->under, e);
		return;
	}
	/* the entry and its compact terms are in the record's block: last */
	spfkit_record_free(e->rec);
}

/* What a block of `size` bytes really costs: rounded up to 16 like the
 * allocator does, plus its header. */
size_t spfkit__record_cache_block_cost(size_t size)
{
	return ((size + 15) & ~(size_t)15) + SPFKIT__RECORD_CACHE_BLOCK_OVERHEAD;
}

/*
 * A counting allocator: it forwards to `under` and adds what each block
 * costs to *bytes. The parse counts into a counter of its own; an entry's
 * (e->counting) into e->bytes. Only the thread that parses the entry
 * allocates, before the entry is shared; frees need no count.
 */
static void *count_alloc(void *user, size_t size)
{
	struct spfkit__byte_count *bc = user;
	void *p = spfkit__alloc(bc->under, size);

	if (p != NULL)
		*bc->bytes += spfkit__record_cache_block_cost(size);
	return p;
}

static void *count_realloc(void *user, void *ptr, size_t size)
{
	struct spfkit__byte_count *bc = user;
	void *p = spfkit__realloc(bc->under, ptr, size);

	/* the old block is not subtracted (its size is unknown): counting
	 * high is safe, and the parser's arena never reallocates */
	if (p != NULL)
		*bc->bytes += spfkit__record_cache_block_cost(size);
	return p;
}

static void count_free(void *user, void *ptr)
{
	struct spfkit__byte_count *bc = user;

	spfkit__free(bc->under, ptr);
}

void spfkit__record_cache_free(struct spfkit__record_cache *c)
{
	struct spfkit__record_cache_entry *e, *next;

	if (c == NULL)
		return;
	for (e = entry_of(c->lru.head); e != NULL; e = next) {
		next = entry_of(e->lru.next);
		spfkit__record_memo_unbind_all(c, e);
		entry_free(e);
	}
	spfkit__record_memo_free(c);
	spfkit__record_plan_walk_free(c);
	pthread_mutex_destroy(&c->lock);
	spfkit__free(c->alloc, c->buckets);
	spfkit__free(c->alloc, c);
}

static struct spfkit__record_cache_entry **bucket_of(struct spfkit__record_cache *c, uint64_t hash)
{
	return &c->buckets[hash & (c->nbuckets - 1)];
}

static struct spfkit__record_cache_entry *find(struct spfkit__record_cache *c, uint64_t hash,
					       const char *text,
					       size_t len)
{
	struct spfkit__record_cache_entry *e;

	for (e = *bucket_of(c, hash); e != NULL; e = e->chain)
		if (e->hash == hash && e->len == len && memcmp(e->text, text, len) == 0)
			return e;
	return NULL;
}

static void unhash(struct spfkit__record_cache *c, struct spfkit__record_cache_entry *e)
{
	struct spfkit__record_cache_entry **pp = bucket_of(c, e->hash);

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
}

/* Is there room for `need` more bytes, and for one more entry when
 * `entry`? (bytes <= max_bytes always holds, so the subtraction cannot
 * wrap.) */
int spfkit__record_cache_room(const struct spfkit__record_cache *c, size_t need, int entry)
{
	return (!entry || c->count < c->max) && need <= c->max_bytes - c->bytes;
}

static int room_for(const struct spfkit__record_cache *c, size_t need)
{
	return spfkit__record_cache_room(c, need, 1);
}

/* Make room for `need` bytes (and an entry when `entry`): drop the memo's
 * least recently used answers, then least recently used entries nobody
 * holds (records cost a parse to get back). An entry larger than the
 * whole budget is never cached, so it evicts nothing: a huge record must
 * not flush the cache each time. */
void spfkit__record_cache_evict(struct spfkit__record_cache *c, size_t need, int entry)
{
	struct spfkit__record_cache_entry *e = entry_of(c->lru.tail), *prev;

	if (need > c->max_bytes || (spfkit__record_memo_evict_answers(c, need) && !entry))
		return;
	while (!spfkit__record_cache_room(c, need, entry) && e != NULL) {
		prev = entry_of(e->lru.prev);
		if (atomic_load(&e->refs) == 0) {
			spfkit__record_memo_unbind_all(c, e);
			unhash(c, e);
			spfkit__list_unlink(&c->lru, &e->lru);
			c->bytes -= e->bytes;
			entry_free(e);
			c->count--;
		}
		e = prev;
	}
}

/* Look up under the lock; take a reference on a hit. */
static struct spfkit__record_cache_entry *acquire(struct spfkit__record_cache *c, uint64_t hash,
						  const char *text, size_t len)
{
	struct spfkit__record_cache_entry *e;

	e = find(c, hash, text, len);
	if (e == NULL)
		return NULL;
	atomic_fetch_add(&e->refs, 1);
	spfkit__list_unlink(&c->lru, &e->lru);
	spfkit__list_push_front(&c->lru, &e->lru);
	return e;
}

#define ENTRY_ROOM SPFKIT__ALIGN_UP(sizeof(struct spfkit__record_cache_entry))

/*
 * A parsed record is one block holding the record, the entry and its
 * compact terms, which the parse fills in. The parse counts what it
 * allocates through a counter on the stack, then the record frees
 * through the cache's allocator (the counter only forwarded to it). A
 * failed parse has an entry of its own. cached: the entry is for a cache,
 * which also makes it its ip4 scan; loose: under is an evaluation's
 * arena (spfkit__record_parse_loose()).
 */
static struct spfkit__record_cache_entry *parse_entry(int cached,
						      const struct spfkit_allocator *under,
						      int loose, uint64_t hash, const char *text,
						      size_t len)
{
	size_t parsed = 0;
	struct spfkit__byte_count pc = {under, &parsed};
	const struct spfkit_allocator counter = {count_alloc, count_realloc, count_free, &pc};
	struct spfkit__record_cache_entry *e;
	struct spfkit_record *rec;
	struct spfkit_parse_error pe;
	void *room;
	int rc = loose ? spfkit__record_parse_loose(text, len, &counter, ENTRY_ROOM, &rec, &pe, &room)
		       : spfkit__record_parse_room(text, len, &counter, ENTRY_ROOM, &rec, &pe, &room);

	if (rc == SPFKIT_ENOMEM)
		return NULL;
	if (rc == 0) {
		spfkit__record_parse_rebind(rec, under);
		e = room; /* not zeroed: what is not set here is set below */
		e->rec = rec;
		e->text = (char *)(uintptr_t)rec->text; /* NUL-terminated: the key */
		e->hot = (struct spfkit__hot_term *)(void *)((unsigned char *)room + ENTRY_ROOM);
		e->ip4 = NULL;
		e->cached = 0;
		e->names = NULL;
		e->chain = NULL;
		e->lru.prev = e->lru.next = NULL;
	} else {
		e = spfkit__zalloc(under, sizeof(*e));
		if (e == NULL)
			return NULL;
		parsed += spfkit__record_cache_block_cost(sizeof(*e));
	}
	e->under = under;
	e->in_arena = loose;
	e->count = (struct spfkit__byte_count){under, &e->bytes};
	e->counting = (struct spfkit_allocator){count_alloc, count_realloc, count_free, &e->count};
	e->bytes = parsed;
	e->hash = hash;
	e->len = len;
	e->rc = rc;
	e->pe = pe;
	if (rc != 0 && (e->text = spfkit__strndup(&e->counting, text, len)) == NULL) {
		entry_free(e);
		return NULL;
	}
	/* only a cache makes them pay; without them the term loop goes one
	 * by one, so running out of memory here changes nothing else */
	if (rc == 0 && cached)
		e->ip4 = spfkit__ip4_scan_build(e->rec, &e->counting);
	atomic_init(&e->refs, 1);
	return e;
}

/*
 * One entry per bucket on average: past that, four times the buckets
 * (under the lock). Out of memory keeps the table as it is: the chains
 * are longer, the results the same.
 */
static void grow(struct spfkit__record_cache *c)
{
	size_t n = c->nbuckets * 4, i;
	struct spfkit__record_cache_entry **b, *e, *next;

	if (c->count <= c->nbuckets || c->nbuckets >= c->max_buckets)
		return;
	if (n > c->max_buckets)
		n = c->max_buckets;
	b = spfkit__calloc(c->alloc, n, sizeof(*b));
	if (b == NULL)
		return;
	for (i = 0; i < c->nbuckets; i++) {
		for (e = c->buckets[i]; e != NULL; e = next) {
			next = e->chain;
			e->chain = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	spfkit__free(c->alloc, c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

/* No cache (spfkit_config.no_record_cache): every entry is private, so
 * there is nothing to hash, look up or lock; nor is it counted. */
int spfkit__record_cache_private(const struct spfkit_allocator *alloc,
				 const struct spfkit_allocator *private_alloc, const char *text,
				 size_t len, struct spfkit__record_cache_entry **out)
{
	/* the evaluation's arena: a record's block goes back with it */
	*out = private_alloc != NULL ? parse_entry(0, private_alloc, 1, 0, text, len) : NULL;
	if (*out == NULL)
		*out = parse_entry(0, alloc, 0, 0, text, len);
	return *out != NULL ? 0 : SPFKIT_ENOMEM;
}

int spfkit__record_cache_get(struct spfkit__record_cache *c, const char *text, size_t len,
			     const struct spfkit_allocator *private_alloc,
			     struct spfkit__record_cache_entry **out)
{
	uint64_t hash;
	struct spfkit__record_cache_entry *e, *mine;

	if (c->max == 0)
		return spfkit__record_cache_private(c->alloc, private_alloc, text, len, out);
	hash = spfkit__hash_keyed(&c->key, text, len);
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
	mine = parse_entry(1, c->alloc, 0, hash, text, len);
	if (mine == NULL)
		return SPFKIT_ENOMEM;
	pthread_mutex_lock(&c->lock);
	e = acquire(c, hash, text, len);
	if (e == NULL) {
		spfkit__record_cache_evict(c, mine->bytes, 1);
		if (room_for(c, mine->bytes)) {
			mine->chain = *bucket_of(c, hash);
			*bucket_of(c, hash) = mine;
			spfkit__list_push_front(&c->lru, &mine->lru);
			mine->cached = 1;
			c->count++;
			grow(c);
			c->bytes += mine->bytes;
			if (c->bytes > c->peak)
				c->peak = c->bytes;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (e != NULL) {
		entry_free(mine);
		mine = e;
	}
	*out = mine;
	return 0;
}

void spfkit__record_cache_release(struct spfkit__record_cache *c,
				  struct spfkit__record_cache_entry *e)
{
	int cached;

	(void)c; /* an entry frees itself through the allocator it was made with */
	if (e == NULL || e->in_arena) /* goes back with the evaluation's arena */
		return;
	/* A cached entry is freed by eviction, under the lock; a private one
	 * (the cache was full) by its last holder. Read `cached` while our
	 * reference still keeps the entry alive: once it is dropped, another
	 * thread may evict and free it at once. */
	cached = e->cached;
	if (atomic_fetch_sub(&e->refs, 1) == 1 && !cached)
		entry_free(e);
}
