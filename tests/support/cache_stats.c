/* The tests' view of the library's caches (cache_stats.h). */
#include <pthread.h>

#include "cache_stats.h"
#include "record_cache_int.h"

int spfkit__cache_get(struct spfkit_cache *c, const char *name, size_t len, uint16_t type,
		      const struct spfkit_allocator *a, struct spfkit_dns_answer **out)
{
	size_t cap = 0;

	*out = NULL;
	return spfkit__cache_get_into(c, name, len, type, a, out, &cap);
}

size_t spfkit__cache_longest_chain(struct spfkit_cache *c)
{
	size_t i, n, most = 0;
	const struct spfkit__cache_entry *e;

	pthread_mutex_lock(&c->mu);
	for (i = 0; i <= c->mask; i++) {
		for (n = 0, e = c->table[i]; e != NULL; e = e->hnext)
			n++;
		if (n > most)
			most = n;
	}
	pthread_mutex_unlock(&c->mu);
	return most;
}

int spfkit__record_cache_new(const struct spfkit_allocator *a, size_t max_entries,
			     struct spfkit__record_cache **out)
{
	return spfkit__record_cache_new_bounded(a, max_entries, 0, out);
}

void spfkit__record_cache_stats(struct spfkit__record_cache *c, size_t *hits, size_t *misses,
				size_t *entries)
{
	if (c == NULL) {
		*hits = *misses = *entries = 0;
		return;
	}
	pthread_mutex_lock(&c->lock);
	*hits = c->hits;
	*misses = c->misses;
	*entries = c->count;
	pthread_mutex_unlock(&c->lock);
}

void spfkit__record_cache_bytes(struct spfkit__record_cache *c, size_t *bytes, size_t *peak,
				size_t *max)
{
	if (c == NULL) {
		*bytes = *peak = *max = 0;
		return;
	}
	pthread_mutex_lock(&c->lock);
	*bytes = c->bytes;
	*peak = c->peak;
	*max = c->max_bytes;
	pthread_mutex_unlock(&c->lock);
}

size_t spfkit__record_cache_longest_chain(struct spfkit__record_cache *c)
{
	size_t i, n, most = 0;
	const struct spfkit__record_cache_entry *e;

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
