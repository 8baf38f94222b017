/*
 * Direct access to the answer cache (lib/dns/cache.c), under the
 * resolver layer of include/spfkit/cache.h. Internal API; the layer and
 * the tests use it. Both calls are thread-safe.
 */
#ifndef SPFKIT_DNS_CACHE_INT_H
#define SPFKIT_DNS_CACHE_INT_H

#include <spfkit/cache.h>

#include "core.h"

/* Longest name text accepted as a key (presentation form, escapes). */
#define SPFKIT__CACHE_NAME_MAX 1024u

/*
 * Look (name, type) up. On a hit, *out is a copy in one block from
 * `a` (answer, its records and their data; TTLs lowered by the time
 * spent in the cache), freed with spfkit__free(a, *out).
 * Returns 1 (hit), 0 (miss: absent or expired), SPFKIT_ENOMEM.
 */
int spfkit__cache_get(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
		      const struct spfkit_allocator *a, struct spfkit_dns_answer **out);

/*
 * The same, into a block the caller keeps for reuse: *buf of *cap bytes
 * (NULL and 0 at first). A hit that does not fit frees *buf and puts a
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

/* Entries in the fullest hash bucket (tests: hash flooding). */
size_t spfkit__cache_longest_chain(struct spfkit_cache *c);

#endif
