/*
 * What the tests read of the library's two caches beyond the public
 * counters: the DNS answer cache (lib/dns/cache_int.h) and a context's
 * parsed-record cache (lib/spf/record_cache_int.h). Each call takes the
 * cache's lock, as the library's own calls do.
 */
#ifndef SPFKIT_TEST_CACHE_STATS_H
#define SPFKIT_TEST_CACHE_STATS_H

#include "cache_int.h"
#include "record_cache.h"

/*
 * Look (name, type) up in the answer cache. On a hit, *out is a copy in
 * one block from `a` (answer, its records and their data; TTLs lowered
 * by the time spent in the cache), freed with spfkit__free(a, *out).
 * Returns 1 (hit), 0 (miss: absent or expired), SPFKIT_ENOMEM.
 */
int spfkit__cache_get(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
		      const struct spfkit_allocator *a, struct spfkit_dns_answer **out);
/* Entries in the answer cache's fullest hash bucket (hash flooding). */
size_t spfkit__cache_longest_chain(struct spfkit_cache *c);

/* A parsed-record cache with the default byte budget. */
int spfkit__record_cache_new(const struct spfkit_allocator *a, size_t max_entries,
			     struct spfkit__record_cache **out);
/* hits, misses and entries; a cache of 0 entries counts nothing, nor
 * does none (NULL: no_record_cache) */
void spfkit__record_cache_stats(struct spfkit__record_cache *c, size_t *hits, size_t *misses,
				size_t *entries);
/* Bytes charged to cached entries now, the most ever, and the budget
 * (bytes <= peak <= max); all 0 for none (NULL). */
void spfkit__record_cache_bytes(struct spfkit__record_cache *c, size_t *bytes, size_t *peak,
				size_t *max);
/* Entries in the parsed-record cache's fullest hash bucket (hash flooding). */
size_t spfkit__record_cache_longest_chain(struct spfkit__record_cache *c);

#endif
