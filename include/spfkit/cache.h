/*
 * An answer cache shared by every evaluation of a process, so a busy
 * server does not ask for _spf.provider.example on every message.
 *
 *   struct spfkit_cache *cache;            one per process
 *   spfkit_cache_new(NULL, NULL, &cache);
 *   per thread (or per event loop):
 *     spfkit_cares_new(&copt, NULL, &dns, errbuf, sizeof(errbuf));
 *     spfkit_cache_resolver(cache, dns, &r);   use r for the evaluations
 *     ...
 *     spfkit_resolver_free(r); spfkit_resolver_free(dns);
 *   spfkit_cache_free(cache);               after every layer made on it
 *
 * What is kept: OK answers for their smallest TTL, NXDOMAIN and NODATA
 * for their negative TTL (RFC 2308 §5: min(SOA TTL, SOA MINIMUM); a
 * negative answer with no SOA has TTL 0 and is not kept), each capped by
 * the options. TEMPFAIL is never kept: a temperror makes the sending MTA
 * retry later, and that retry should ask the DNS again. An answer read
 * back has its TTLs lowered by the time it spent in the cache.
 *
 * Memory: entries are charged their whole size (record data, name and
 * bookkeeping); past max_bytes the least recently used go first. One
 * answer larger than max_bytes / 4 is not kept.
 *
 * Threads: a struct spfkit_cache is thread-safe (one mutex). A resolver
 * layer made by spfkit_cache_resolver() is not: like the c-ares
 * resolver under it, it belongs to one thread at a time.
 */
#ifndef SPFKIT_CACHE_H
#define SPFKIT_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <spfkit/common.h>
#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_cache;

#define SPFKIT_CACHE_MAX_BYTES ((size_t)4 << 20) /* default memory bound: 4 MiB */
#define SPFKIT_CACHE_MAX_TTL 86400u     /* default cap on positive TTLs (s) */
#define SPFKIT_CACHE_MAX_NEG_TTL 3600u  /* default cap on negative TTLs (s), RFC 2308 §5 */

/* Milliseconds from any fixed origin, never going back. */
typedef uint64_t spfkit_cache_clock_fn(void *arg);

/* Fill with spfkit_cache_options_init() first (the ABI rule in common.h). */
struct spfkit_cache_options {
	size_t size;               /* sizeof(struct spfkit_cache_options), as compiled */
	size_t max_bytes;          /* 0: SPFKIT_CACHE_MAX_BYTES */
	uint32_t max_ttl;          /* 0: SPFKIT_CACHE_MAX_TTL */
	uint32_t max_negative_ttl; /* 0: SPFKIT_CACHE_MAX_NEG_TTL */
	spfkit_cache_clock_fn *clock; /* NULL: CLOCK_MONOTONIC (tests move time) */
	void *clock_arg;
};

/* Zero every field (the defaults) and set size (inline: the caller's size). */
static inline void spfkit_cache_options_init(struct spfkit_cache_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->size = sizeof(*opt);
}

/* 0, SPFKIT_ENOMEM, SPFKIT_EINVAL (opt->size not set by
 * spfkit_cache_options_init()). `opt` NULL: all defaults. */
SPFKIT_MUSTCHECK int spfkit_cache_new(const struct spfkit_cache_options *opt,
				      const struct spfkit_allocator *alloc,
				      struct spfkit_cache **out);
/* Every resolver made on the cache must be freed first. NULL: no-op. */
void spfkit_cache_free(struct spfkit_cache *cache);
/* Forget every entry (counters stay). */
void spfkit_cache_clear(struct spfkit_cache *cache);

struct spfkit_cache_stats {
	uint64_t hits;        /* questions answered from the cache */
	uint64_t misses;      /* questions not found (or found expired) */
	uint64_t inserts;     /* answers kept */
	uint64_t evictions;   /* entries dropped for room (LRU) */
	uint64_t expirations; /* entries dropped because their TTL ran out */
	size_t entries;
	size_t bytes;         /* memory charged to entries now */
	size_t max_bytes;
};

/* cache NULL: all zeros; out NULL: nothing. */
void spfkit_cache_stats(struct spfkit_cache *cache, struct spfkit_cache_stats *out);

/*
 * A resolver that answers from `cache` and forwards misses to `inner`,
 * keeping what inner answers. Neither is owned: both must outlive the
 * layer; free it with spfkit_resolver_free() (questions it forwarded
 * are cancelled in inner). The seam's contract holds: a hit is never
 * delivered inside submit() but queued, and delivered by the layer's
 * wait() or by spfkit_cache_deliver(); a miss is delivered when inner
 * delivers its answer (inner's wait() or event processing). A miss
 * cancelled before its answer came still waits for it in inner (up to
 * 256 at once per layer), to keep it, without calling back: lookahead
 * cancels what strict evaluation did not need, and would ask it again.
 * 0, SPFKIT_EINVAL, SPFKIT_ENOMEM.
 */
SPFKIT_MUSTCHECK int spfkit_cache_resolver(struct spfkit_cache *cache,
					   struct spfkit_resolver *inner,
					   struct spfkit_resolver **out);

/*
 * Event loops: `fn` is called (from inside submit) when a hit is queued
 * and none was before; it should arrange for spfkit_cache_deliver() to
 * run soon, outside the submit. It must not call into the layer.
 * SPFKIT_EINVAL if r is not a cache layer.
 */
typedef void spfkit_cache_ready_fn(void *arg);
int spfkit_cache_set_ready(struct spfkit_resolver *r, spfkit_cache_ready_fn *fn, void *arg);

/* Run the callbacks of queued hits. Returns how many ran, or
 * SPFKIT_ESTATE (from inside a callback) or SPFKIT_EINVAL. */
int spfkit_cache_deliver(struct spfkit_resolver *r);

/* Hits queued for delivery. */
size_t spfkit_cache_queued(const struct spfkit_resolver *r);

/*
 * Questions the layer r has passed to its inner resolver so far: the
 * misses. Compared before and after a submit, it tells a question that
 * waits for the network from one the cache answers (see
 * spfkit_eval_set_lookahead()). 0, or SPFKIT_EINVAL (r is not a cache
 * layer, or out is NULL).
 */
int spfkit_cache_forwarded(const struct spfkit_resolver *r, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif
