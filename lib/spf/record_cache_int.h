/*
 * Inside the record cache: what record_cache.c (parsed records) and
 * record_memo.c (the record memo: names and answers, spfkit_config
 * .record_memo) share. Everything here is under the cache's lock.
 */
#ifndef SPFKIT_RECORD_CACHE_INT_H
#define SPFKIT_RECORD_CACHE_INT_H

#include <pthread.h>

#include "record_cache.h"

struct spfkit__record_cache {
	const struct spfkit_allocator *alloc;
	pthread_mutex_t lock;
	struct spfkit__record_cache_entry **buckets;
	size_t nbuckets;     /* a power of two; grows with the entries ... */
	size_t max_buckets;  /* ... up to this, fixed by max_entries */
	size_t count, max;
	size_t bytes, peak, max_bytes; /* charged to cached entries and memo names */
	struct spfkit__list lru;
	size_t hits, misses;
	/* the record memo's names (record_memo.c), made at the first bind */
	struct spfkit__record_cache_name **names;
	size_t nnames_buckets, nnames;
	/* the memo's answers (names bound to no entry), most recent first */
	struct spfkit__list answers;
	size_t nanswers;
	/* room for building address plans (record_plan.c), made at the first */
	void *plan_walk;
	/* Record texts are chosen by whoever publishes them: a keyed hash of
	 * the whole text, key drawn here and read-only after (thread-safe). */
	struct spfkit__hash_key key;
};

#define RCACHE_FIRST_BUCKETS 16u

/*
 * A name the memo knows, for one question type: bound to a cached record
 * (entry, for TXT: the answer held that record), or holding a copy of
 * its answer (entry NULL: rrs and their data follow the name in the same
 * block, and the node is on the cache's `answers` list).
 */
struct spfkit__record_cache_name {
	struct spfkit__record_cache_name *chain; /* the name table's bucket */
	struct spfkit__record_cache_name *next;  /* the entry's names */
	struct spfkit__record_cache_entry *entry;
	struct spfkit__link lru;           /* answers only */
	uint64_t hash;           /* spfkit__namehash */
	int64_t stored, expires; /* seconds, the requests' `now` */
	size_t cost;             /* what the node is charged */
	uint16_t type;
	uint8_t status;          /* answers: OK, NODATA or NXDOMAIN */
	uint32_t txt_count, txt_at; /* records: the answer's TXT records; the SPF one's place */
	size_t count;               /* answers: records */
	struct spfkit_dns_rr *rrs;  /* answers: in the node's block */
	/* records: the address plans of the name's SPF tree (record_plan.c)
	 * for IPv4 and IPv6 clients, each one block charged to `cost`, or NULL */
	struct spfkit__record_plan *plan[2];
	size_t len;
	char name[];
};

/* What a block of `size` bytes really costs (record_cache.c). */
size_t spfkit__record_cache_block_cost(size_t size);
/* Is there room for `need` more bytes (and an entry when `entry`)? */
int spfkit__record_cache_room(const struct spfkit__record_cache *c, size_t need, int entry);
/* Make that room: memo answers first, then records nobody holds. */
void spfkit__record_cache_evict(struct spfkit__record_cache *c, size_t need, int entry);

/* record_memo.c */
/* Forget every name bound to e (it is leaving the cache). */
void spfkit__record_memo_unbind_all(struct spfkit__record_cache *c,
				    struct spfkit__record_cache_entry *e);
/* Drop the least recently used answers until `need` bytes fit; 1 if they do. */
int spfkit__record_memo_evict_answers(struct spfkit__record_cache *c, size_t need);
/* At spfkit__record_cache_free(): every answer and the name table. */
void spfkit__record_memo_free(struct spfkit__record_cache *c);
/* record_plan.c: at spfkit__record_cache_free(), the room for building plans;
 * when a name goes, its plans (their charge goes with the node's cost). */
void spfkit__record_plan_walk_free(struct spfkit__record_cache *c);
void spfkit__record_plan_free(struct spfkit__record_cache *c, struct spfkit__record_cache_name *n);
/* The node of (type, name), valid or not, or NULL. */
struct spfkit__record_cache_name *spfkit__record_memo_find(struct spfkit__record_cache *c,
							   uint16_t type, const char *name,
							   size_t len, uint64_t hash);

#endif
