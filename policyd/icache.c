/*
 * Decisions kept per message (Postfix "instance", with the client and the
 * sender), so the later recipients of a message get the same answer and
 * the header is prepended once. At most opts.cache_max entries, oldest
 * out first; each entry is one compact allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- the bucket hash ---------------------------------------------------- */

/*
 * Keys hold the client's sender and instance: a keyed hash (SipHash-1-3,
 * after Aumasson and Bernstein's paper) so a client cannot pick keys that
 * share a bucket. The daemon's own, not the library's internals.
 */
#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

static uint64_t key_hash(const uint64_t k[2], const char *s, size_t len)
{
	uint64_t v[4] = {k[0] ^ 0x736f6d6570736575ull, k[1] ^ 0x646f72616e646f6dull,
			 k[0] ^ 0x6c7967656e657261ull, k[1] ^ 0x7465646279746573ull};
	uint64_t m;
	size_t i = 0, j;

	/* whole words in the machine's byte order: a bucket index, never stored nor sent */
	for (; len - i >= 8; i += 8) {
		memcpy(&m, s + i, 8);
		v[3] ^= m;
		sip_round(v);
		v[0] ^= m;
	}
	m = (uint64_t)len << 56; /* the last word carries the length */
	for (j = 0; i + j < len; j++)
		m |= (uint64_t)(unsigned char)s[i + j] << (8 * j);
	v[3] ^= m;
	sip_round(v);
	v[0] ^= m;
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* Drawn once, on first use, from getrandom() (else the clocks). */
static void draw_key(uint64_t k[2])
{
	struct timespec ts;
	ssize_t n;

	do
		n = getrandom(k, 2 * sizeof(k[0]), GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)(2 * sizeof(k[0]))) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)k;
		clock_gettime(CLOCK_REALTIME, &ts);
		k[1] = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
	}
	k[1] |= 1; /* never zero again: zero means "not drawn" */
}

/* ---- the instance cache ------------------------------------------------- */

uint64_t spfkit__policyd_cache_hash(struct spfkit__policyd *srv, const char *key, size_t len)
{
	if (srv->icache_key[1] == 0)
		draw_key(srv->icache_key);
	return key_hash(srv->icache_key, key, len);
}

static struct cached **bucket(struct spfkit__policyd *srv, uint64_t hash)
{
	return &srv->buckets[hash % CACHE_BUCKETS];
}

struct cached *spfkit__policyd_cache_find(struct spfkit__policyd *srv, const char *key,
					  size_t len, uint64_t hash)
{
	struct cached *c;

	for (c = *bucket(srv, hash); c != NULL; c = c->hnext)
		if (c->hash == hash && c->key_len == len && memcmp(c->key, key, len) == 0)
			return c;
	return NULL;
}

static void cache_drop_oldest(struct spfkit__policyd *srv)
{
	struct cached *c = srv->oldest, **pp;

	for (pp = bucket(srv, c->hash); *pp != c; pp = &(*pp)->hnext)
		;
	*pp = c->hnext;
	srv->oldest = c->newer;
	if (srv->oldest != NULL)
		srv->oldest->older = NULL;
	else
		srv->newest = NULL;
	srv->n_cached--;
	spfkit__free(NULL, c);
}

static size_t text_size(const char *s)
{
	return strlen(s) + 1; /* our own texts */
}

/* Copy s into the entry's block at *at. */
static char *put_text(char **at, const char *s)
{
	size_t n = text_size(s);
	char *p = *at;

	memcpy(p, s, n);
	*at += n;
	return p;
}

/* Keep d for the next queries of this message; silently skipped when out of memory. */
void spfkit__policyd_cache_put(struct spfkit__policyd *srv, const char *key, size_t len,
			       uint64_t hash, const struct spfkit__mta_decision *d)
{
	struct cached *c, **b;
	size_t size, i;
	char *at;

	size = sizeof(*c) + len + 1;
	size += d->kind == SPFKIT__MTA_PREPEND ? 0 : text_size(d->action);
	for (i = 0; i < d->header_count; i++)
		size += text_size(d->headers[i]);
	while (srv->n_cached >= srv->opts.cache_max && srv->oldest != NULL)
		cache_drop_oldest(srv);
	c = spfkit__alloc(NULL, size);
	if (c == NULL)
		return;
	memset(c, 0, sizeof(*c)); /* the texts after it are all written */
	at = (char *)(c + 1);
	c->key = at;
	memcpy(at, key, len);
	at[len] = '\0';
	at += len + 1;
	c->key_len = len;
	c->hash = hash;
	c->kind = d->kind;
	if (d->kind != SPFKIT__MTA_PREPEND)
		c->action = put_text(&at, d->action);
	for (i = 0; i < d->header_count; i++)
		c->headers[i] = put_text(&at, d->headers[i]);
	c->header_count = d->header_count;
	c->served = 1;
	b = bucket(srv, hash);
	c->hnext = *b;
	*b = c;
	c->older = srv->newest;
	if (srv->newest != NULL)
		srv->newest->newer = c;
	else
		srv->oldest = c;
	srv->newest = c;
	srv->n_cached++;
}

/* As spfkit__mta_action_nth(): a refusal again, each header once, then dunno. */
void spfkit__policyd_cache_action(const struct cached *c, size_t n, char *buf, size_t size)
{
	if (c->kind != SPFKIT__MTA_PREPEND)
		snprintf(buf, size, "%s", c->action);
	else if (n < c->header_count)
		snprintf(buf, size, "prepend %s", c->headers[n]);
	else
		snprintf(buf, size, "dunno");
}

void spfkit__policyd_cache_free(struct spfkit__policyd *srv)
{
	while (srv->oldest != NULL)
		cache_drop_oldest(srv);
}
