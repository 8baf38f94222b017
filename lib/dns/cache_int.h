/*
 * Direct access to the answer cache (lib/dns/cache.c), under the
 * resolver layer of include/spfkit/cache.h, and the cache's layout, which
 * the tests' statistics (tests/support/cache_stats.c) read. Internal API;
 * the layer and the tests use it. The calls are thread-safe.
 */
#ifndef SPFKIT_DNS_CACHE_INT_H
#define SPFKIT_DNS_CACHE_INT_H

#include <pthread.h>

#include <spfkit/cache.h>

#include "core.h"
#include "list.h"

/* Longest name text accepted as a key (presentation form, escapes). */
#define SPFKIT__CACHE_NAME_MAX 1024u

/*
 * One cached answer, in one allocation:
 *   [struct spfkit__cache_entry][rrs: count x struct spfkit_dns_rr][data, each + NUL][name]
 * so `size` (what the memory bound counts) is the whole block.
 */
struct spfkit__cache_entry {
	struct spfkit__cache_entry *hnext;      /* hash chain */
	struct spfkit__link lru;  /* LRU order, head = most recently used */
	uint64_t hash;
	uint64_t expires;         /* cache clock, ms */
	size_t size;
	uint16_t type;
	size_t name_len;
	char *name;               /* lowercased, no final dot */
	struct spfkit_dns_answer answer;
};

struct spfkit_cache {
	const struct spfkit_allocator *alloc;
	pthread_mutex_t mu;
	struct spfkit__cache_entry **table;
	size_t mask;
	struct spfkit__list lru;
	size_t max_bytes;
	uint32_t max_ttl, max_neg_ttl;
	spfkit_cache_clock_fn *clock;
	void *clock_arg;
	struct spfkit_cache_stats st; /* entries and bytes live here too */
	/* Names come from the network: a keyed hash, key drawn at creation
	 * and read-only after (thread-safe), so no one can fill a bucket. */
	struct spfkit__hash_key key;
};

/*
 * Look (name, type) up, into a block the caller keeps for reuse: *buf
 * of *cap bytes (NULL and 0 at first). On a hit, *buf holds a copy in
 * one block (answer, its records and their data; TTLs lowered by the
 * time spent in the cache). Returns 1 (hit), 0 (miss: absent or
 * expired), SPFKIT_ENOMEM. A hit that does not fit frees *buf and puts a
 * block from `a` there, large enough, and its size in *cap; the caller
 * frees *buf with spfkit__free(a, *buf) when done with it.
 */
int spfkit__cache_get_into(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
			   const struct spfkit_allocator *a, struct spfkit_dns_answer **buf,
			   size_t *cap);

/*
 * Keep a copy of `ans` for (name, type) when it may be kept (see
 * cache.h), replacing an older entry. Returns 1 (kept), 0 (not to be
 * kept: TEMPFAIL, TTL 0, too big, name too long), SPFKIT_ENOMEM.
 */
int spfkit__cache_put(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
		      const struct spfkit_dns_answer *ans);

#endif
