/*
 * Decisions kept per message (Postfix "instance", with the client and the
 * sender), so the later recipients of a message get the same answer and
 * the header is prepended once. At most opts.cache_max entries, oldest
 * out first; each entry is one compact allocation.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- the instance cache ------------------------------------------------- */

static struct cached **bucket(struct spfkit__policyd *srv, const char *key)
{
	return &srv->buckets[spfkit__name_hash(key, strlen(key)) % CACHE_BUCKETS];
}

struct cached *spfkit__policyd_cache_find(struct spfkit__policyd *srv, const char *key)
{
	struct cached *c;

	for (c = *bucket(srv, key); c != NULL; c = c->hnext)
		if (strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

static void cache_drop_oldest(struct spfkit__policyd *srv)
{
	struct cached *c = srv->oldest, **pp;

	for (pp = bucket(srv, c->key); *pp != c; pp = &(*pp)->hnext)
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
void spfkit__policyd_cache_put(struct spfkit__policyd *srv, const char *key,
		      const struct spfkit__mta_decision *d)
{
	struct cached *c, **b;
	size_t size, i;
	char *at;

	if (key == NULL)
		return;
	size = sizeof(*c) + text_size(key);
	size += d->kind == SPFKIT__MTA_PREPEND ? 0 : text_size(d->action);
	for (i = 0; i < d->header_count; i++)
		size += text_size(d->headers[i]);
	while (srv->n_cached >= srv->opts.cache_max && srv->oldest != NULL)
		cache_drop_oldest(srv);
	c = spfkit__zalloc(NULL, size);
	if (c == NULL)
		return;
	at = (char *)(c + 1);
	c->key = put_text(&at, key);
	c->kind = d->kind;
	if (d->kind != SPFKIT__MTA_PREPEND)
		c->action = put_text(&at, d->action);
	for (i = 0; i < d->header_count; i++)
		c->headers[i] = put_text(&at, d->headers[i]);
	c->header_count = d->header_count;
	c->served = 1;
	b = bucket(srv, key);
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
