/* The parsed-record cache of a context (record_cache.h). */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>

#include "domain.h"
#include "macro.h"
#include "record_cache.h"

struct spfkit__rcache {
	const struct spfkit_allocator *alloc;
	pthread_mutex_t lock;
	struct spfkit__rcache_entry **buckets;
	size_t nbuckets;     /* a power of two; grows with the entries ... */
	size_t max_buckets;  /* ... up to this, fixed by max_entries */
	size_t count, max;
	size_t bytes, peak, max_bytes; /* charged to cached entries (record_cache.h) */
	struct spfkit__list lru;
	size_t hits, misses;
	/* the record memo's names (record_cache.h), made at the first bind */
	struct spfkit__rcache_name **names;
	size_t nnames_buckets, nnames;
	/* Record texts are chosen by whoever publishes them: a keyed hash of
	 * the whole text, key drawn here and read-only after (thread-safe). */
	struct spfkit__hash_key key;
};

#define RCACHE_FIRST_BUCKETS 16u

struct spfkit__rcache_name {
	struct spfkit__rcache_name *chain; /* the name table's bucket */
	struct spfkit__rcache_name *next;  /* the entry's names */
	struct spfkit__rcache_entry *entry;
	uint64_t hash;          /* spfkit__name_hash */
	int64_t stored, expires; /* seconds, the requests' `now` */
	uint32_t txt_count, txt_at; /* the answer's TXT records; the SPF one's place */
	size_t len;
	char name[];
};

int spfkit__rcache_new(const struct spfkit_allocator *a, size_t max_entries,
		       struct spfkit__rcache **out)
{
	return spfkit__rcache_new_bounded(a, max_entries, 0, out);
}

int spfkit__rcache_new_bounded(const struct spfkit_allocator *a, size_t max_entries,
			       size_t max_bytes, struct spfkit__rcache **out)
{
	struct spfkit__rcache *c = spfkit__zalloc(a, sizeof(*c));
	size_t n = RCACHE_FIRST_BUCKETS;

	*out = NULL;
	if (c == NULL)
		return SPFKIT_ENOMEM;
	while (n < max_entries && n < ((size_t)1 << 24))
		n <<= 1;
	c->alloc = a;
	c->max = max_entries;
	c->max_bytes = max_bytes ? max_bytes : SPFKIT__RCACHE_DEFAULT_BYTES;
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

static struct spfkit__rcache_entry *entry_of(struct spfkit__link *n)
{
	return n != NULL ? SPFKIT_CONTAINER_OF(n, struct spfkit__rcache_entry, lru) : NULL;
}

static void entry_free(struct spfkit__rcache *c, struct spfkit__rcache_entry *e)
{
	spfkit__free(e->under, e->hot);
	spfkit__free(e->under, e->ip4);
	if (e->rec == NULL || e->text != e->rec->text)
		spfkit__free(e->under, e->text);
	spfkit_record_free(e->rec);
	spfkit__free(c->alloc, e);
}

/* What a block of `size` bytes really costs: rounded up to 16 like the
 * allocator does, plus its header. */
static size_t block_cost(size_t size)
{
	return ((size + 15) & ~(size_t)15) + SPFKIT__RCACHE_BLOCK_OVERHEAD;
}

/*
 * The entry's allocator: every block for the entry (text, parsed record,
 * compact terms) is charged to it. Only the thread that parses the entry
 * allocates, before the entry is shared; frees need no count.
 */
static void *count_alloc(void *user, size_t size)
{
	struct spfkit__rcache_entry *e = user;
	void *p = spfkit__alloc(e->under, size);

	if (p != NULL)
		e->bytes += block_cost(size);
	return p;
}

static void *count_realloc(void *user, void *ptr, size_t size)
{
	struct spfkit__rcache_entry *e = user;
	void *p = spfkit__realloc(e->under, ptr, size);

	/* the old block is not subtracted (its size is unknown): counting
	 * high is safe, and the parser's arena never reallocates */
	if (p != NULL)
		e->bytes += block_cost(size);
	return p;
}

static void count_free(void *user, void *ptr)
{
	struct spfkit__rcache_entry *e = user;

	spfkit__free(e->under, ptr);
}

static void unbind_all(struct spfkit__rcache *c, struct spfkit__rcache_entry *e);

void spfkit__rcache_free(struct spfkit__rcache *c)
{
	struct spfkit__rcache_entry *e, *next;

	if (c == NULL)
		return;
	for (e = entry_of(c->lru.head); e != NULL; e = next) {
		next = entry_of(e->lru.next);
		unbind_all(c, e);
		entry_free(c, e);
	}
	pthread_mutex_destroy(&c->lock);
	spfkit__free(c->alloc, c->names);
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

static struct spfkit__rcache_name **name_bucket_of(struct spfkit__rcache *c, uint64_t hash)
{
	return &c->names[hash & (c->nnames_buckets - 1)];
}

/* What a bound name is charged. */
static size_t name_cost(size_t len)
{
	return block_cost(sizeof(struct spfkit__rcache_name) + len);
}

/* Forget one name (under the lock), and what it was charged. */
static void unbind(struct spfkit__rcache *c, struct spfkit__rcache_name *n)
{
	struct spfkit__rcache_name **pp;
	struct spfkit__rcache_entry *e = n->entry;

	for (pp = name_bucket_of(c, n->hash); *pp != n; pp = &(*pp)->chain)
		;
	*pp = n->chain;
	for (pp = &e->names; *pp != n; pp = &(*pp)->next)
		;
	*pp = n->next;
	e->bytes -= name_cost(n->len);
	c->bytes -= name_cost(n->len);
	c->nnames--;
	spfkit__free(c->alloc, n);
}

static void unbind_all(struct spfkit__rcache *c, struct spfkit__rcache_entry *e)
{
	while (e->names != NULL)
		unbind(c, e->names);
}

/* Is there room for `need` more bytes, and for one more entry when
 * `entry`? (bytes <= max_bytes always holds, so the subtraction cannot
 * wrap.) */
static int room(const struct spfkit__rcache *c, size_t need, int entry)
{
	return (!entry || c->count < c->max) && need <= c->max_bytes - c->bytes;
}

static int room_for(const struct spfkit__rcache *c, size_t need)
{
	return room(c, need, 1);
}

/* Make room for `need` bytes (and an entry when `entry`): drop least
 * recently used entries nobody holds. An entry larger than the whole
 * budget is never cached, so it evicts nothing: a huge record must not
 * flush the cache each time. */
static void evict(struct spfkit__rcache *c, size_t need, int entry)
{
	struct spfkit__rcache_entry *e = entry_of(c->lru.tail), *prev;

	if (need > c->max_bytes)
		return;
	while (!room(c, need, entry) && e != NULL) {
		prev = entry_of(e->lru.prev);
		if (atomic_load(&e->refs) == 0) {
			unbind_all(c, e);
			unhash(c, e);
			spfkit__list_unlink(&c->lru, &e->lru);
			c->bytes -= e->bytes;
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

static int make_hot(struct spfkit__rcache_entry *e)
{
	size_t i;

	e->hot = spfkit__calloc(&e->counting, e->rec->count, sizeof(*e->hot));
	if (e->hot == NULL && e->rec->count > 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < e->rec->count; i++) {
		const struct spfkit_term *t = &e->rec->terms[i];
		struct spfkit__hot_term *h = &e->hot[i];

		h->mech = t->mech;
		h->is_modifier = t->is_modifier;
		if (t->has_domain && t->domain.letters == 0 && t->domain.count == 1 &&
		    t->domain.pieces[0].kind == SPFKIT_PIECE_LITERAL &&
		    t->domain.pieces[0].len <= SPFKIT_DOMAIN_MAX_LEN) /* longer: cut (§7.3) */
			h->literal = spfkit__domain_valid(t->domain.pieces[0].text, t->domain.pieces[0].len)
					     ? HOT_LITERAL_VALID
					     : HOT_LITERAL_INVALID;
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
	e->under = c->alloc;
	e->counting = (struct spfkit_allocator){count_alloc, count_realloc, count_free, e};
	e->bytes = block_cost(sizeof(*e));
	e->hash = hash;
	e->len = len;
	e->rc = spfkit_record_parse(text, len, &e->counting, &e->rec, &e->pe);
	/* a parsed record holds a NUL-terminated copy of its text: the key */
	e->text = e->rc == 0 ? (char *)(uintptr_t)e->rec->text
			     : spfkit__strndup(&e->counting, text, len);
	if (e->rc == SPFKIT_ENOMEM || e->text == NULL || (e->rc == 0 && make_hot(e) != 0)) {
		entry_free(c, e);
		return NULL;
	}
	/* only a cache makes them pay; without them the term loop goes one
	 * by one, so running out of memory here changes nothing else */
	if (e->rc == 0 && c->max > 0)
		e->ip4 = spfkit__ip4_scan_build(e->rec, &e->counting);
	atomic_init(&e->refs, 1);
	return e;
}

/*
 * One entry per bucket on average: past that, four times the buckets
 * (under the lock). Out of memory keeps the table as it is: the chains
 * are longer, the results the same.
 */
static void grow(struct spfkit__rcache *c)
{
	size_t n = c->nbuckets * 4, i;
	struct spfkit__rcache_entry **b, *e, *next;

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

int spfkit__rcache_get(struct spfkit__rcache *c, const char *text, size_t len,
		       struct spfkit__rcache_entry **out)
{
	uint64_t hash;
	struct spfkit__rcache_entry *e, *mine;

	/* No cache (spfkit_config.no_record_cache): every entry is private,
	 * so there is nothing to hash, look up or lock; nor is it counted. */
	if (c->max == 0) {
		*out = parse_entry(c, 0, text, len);
		return *out != NULL ? 0 : SPFKIT_ENOMEM;
	}
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
	mine = parse_entry(c, hash, text, len);
	if (mine == NULL)
		return SPFKIT_ENOMEM;
	pthread_mutex_lock(&c->lock);
	e = acquire(c, hash, text, len);
	if (e == NULL) {
		evict(c, mine->bytes, 1);
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
		entry_free(c, mine);
		mine = e;
	}
	*out = mine;
	return 0;
}

/* A name's binding, or NULL (under the lock). */
static struct spfkit__rcache_name *find_name(struct spfkit__rcache *c, const char *name,
					     size_t len, uint64_t hash)
{
	struct spfkit__rcache_name *n;

	if (c->names == NULL)
		return NULL;
	for (n = *name_bucket_of(c, hash); n != NULL; n = n->chain)
		if (n->hash == hash && spfkit__memcaseeq(n->name, n->len, name, len))
			return n;
	return NULL;
}

int spfkit__rcache_memo_get(struct spfkit__rcache *c, const char *name, size_t len, uint64_t hash,
			    int64_t now, struct spfkit__rcache_memo *out)
{
	struct spfkit__rcache_name *n;
	struct spfkit__rcache_entry *e;
	int hit = 0;

	pthread_mutex_lock(&c->lock);
	n = find_name(c, name, len, hash);
	if (n != NULL && (now < n->stored || now >= n->expires)) {
		unbind(c, n); /* expired, or the caller's clock went back */
		n = NULL;
	}
	if (n != NULL) {
		e = n->entry;
		atomic_fetch_add(&e->refs, 1);
		spfkit__list_unlink(&c->lru, &e->lru);
		spfkit__list_push_front(&c->lru, &e->lru);
		c->hits++;
		out->entry = e;
		out->txt_count = n->txt_count;
		out->txt_at = n->txt_at;
		out->ttl = (uint32_t)(n->expires - now);
		hit = 1;
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

/* Room in the name table for one more name (under the lock): it grows
 * like the entries' table, to four names per entry the cache may hold.
 * 0 when out of memory. */
static int names_room(struct spfkit__rcache *c)
{
	size_t n, i, most = c->max_buckets * 4;
	struct spfkit__rcache_name **b, *p, *next;

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

static size_t chain_length(struct spfkit__rcache *c, uint64_t hash)
{
	const struct spfkit__rcache_name *n;
	size_t len = 0;

	for (n = *name_bucket_of(c, hash); n != NULL; n = n->chain)
		len++;
	return len;
}

/* Bind n to e (under the lock; n's name is unbound): 1 when done. */
static int bind_name(struct spfkit__rcache *c, struct spfkit__rcache_entry *e,
		     struct spfkit__rcache_name *n)
{
	size_t cost = name_cost(n->len);

	if (!names_room(c) || chain_length(c, n->hash) >= SPFKIT__RCACHE_MEMO_CHAIN)
		return 0;
	evict(c, cost, 0);
	if (!room(c, cost, 0))
		return 0;
	n->entry = e;
	n->chain = *name_bucket_of(c, n->hash);
	*name_bucket_of(c, n->hash) = n;
	n->next = e->names;
	e->names = n;
	c->nnames++;
	e->bytes += cost;
	c->bytes += cost;
	if (c->bytes > c->peak)
		c->peak = c->bytes;
	return 1;
}

void spfkit__rcache_memo_put(struct spfkit__rcache *c, struct spfkit__rcache_entry *e,
			     const char *name, size_t len, uint64_t hash, int64_t now, uint32_t ttl,
			     uint32_t txt_count, uint32_t txt_at)
{
	struct spfkit__rcache_name *n, *old;

	if (!e->cached || ttl == 0 || len > SPFKIT_DOMAIN_MAX_LEN)
		return;
	n = spfkit__alloc(c->alloc, sizeof(*n) + len);
	if (n == NULL)
		return;
	memset(n, 0, sizeof(*n));
	memcpy(n->name, name, len);
	n->len = len;
	n->hash = hash;
	n->stored = now;
	n->expires = now + ttl;
	n->txt_count = txt_count;
	n->txt_at = txt_at;
	pthread_mutex_lock(&c->lock);
	old = find_name(c, name, len, hash);
	if (old != NULL)
		unbind(c, old); /* what the name held before */
	if (!bind_name(c, e, n))
		spfkit__free(c->alloc, n);
	pthread_mutex_unlock(&c->lock);
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

void spfkit__rcache_bytes(struct spfkit__rcache *c, size_t *bytes, size_t *peak, size_t *max)
{
	pthread_mutex_lock(&c->lock);
	*bytes = c->bytes;
	*peak = c->peak;
	*max = c->max_bytes;
	pthread_mutex_unlock(&c->lock);
}
