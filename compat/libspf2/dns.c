/*
 * DNS for compat/libspf2: the SPF_dns_rr_t helpers, the layers a
 * program can make (resolv over spfkit's c-ares backend, cache, null),
 * and the adapter that makes any layer an spfkit resolver, so every
 * question of an evaluation goes to the layer's lookup callback (Exim
 * answers them with its own resolver and test DNS).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "spf2_int.h"

char *spf2_strdup(const char *s)
{
	size_t n;
	char *p;

	if (s == NULL)
		return NULL;
	n = strlen(s) + 1;
	p = malloc(n);
	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

/* ---- SPF_dns_rr_t --------------------------------------------------- */

SPF_dns_rr_t *SPF_dns_rr_new(void)
{
	return SPF_dns_rr_new_init(NULL, "", ns_t_invalid, 0, NO_DATA);
}

SPF_dns_rr_t *SPF_dns_rr_new_init(SPF_dns_server_t *spf_dns_server, const char *domain,
				  ns_type rr_type, int ttl, SPF_dns_stat_t herrno)
{
	SPF_dns_rr_t *rr = calloc(1, sizeof(*rr));

	if (rr == NULL)
		return NULL;
	if (domain != NULL && domain[0] != '\0') {
		rr->domain = spf2_strdup(domain);
		if (rr->domain == NULL) {
			free(rr);
			return NULL;
		}
		rr->domain_buf_len = strlen(domain) + 1;
	}
	rr->source = spf_dns_server;
	rr->rr_type = rr_type;
	rr->ttl = ttl;
	rr->herrno = herrno;
	return rr;
}

SPF_dns_rr_t *SPF_dns_rr_new_nxdomain(SPF_dns_server_t *spf_dns_server, const char *domain)
{
	return SPF_dns_rr_new_init(spf_dns_server, domain, ns_t_any, 0, HOST_NOT_FOUND);
}

void SPF_dns_rr_free(SPF_dns_rr_t *rr)
{
	if (rr == NULL)
		return;
	free(rr->domain);
	if (rr->rr != NULL) {
		for (int i = 0; i < rr->rr_buf_num; i++)
			free(rr->rr[i]);
	}
	free(rr->rr);
	free(rr->rr_buf_len);
	free(rr);
}

SPF_errcode_t SPF_dns_rr_buf_realloc(SPF_dns_rr_t *rr, int idx, size_t len)
{
	if (rr == NULL || idx < 0 || idx > INT32_MAX / 2 - 8)
		return SPF_E_INTERNAL_ERROR;
	if (rr->rr_buf_num < 0 || (rr->rr_buf_num > 0 && (rr->rr == NULL || rr->rr_buf_len == NULL)))
		return SPF_E_INTERNAL_ERROR;
	if (idx >= rr->rr_buf_num) {
		int num = idx + idx / 4 + 4;
		SPF_dns_rr_data_t **data = realloc(rr->rr, (size_t)num * sizeof(*data));

		if (data == NULL)
			return SPF_E_NO_MEMORY;
		rr->rr = data;
		size_t *lens = realloc(rr->rr_buf_len, (size_t)num * sizeof(*lens));
		if (lens == NULL)
			return SPF_E_NO_MEMORY;
		rr->rr_buf_len = lens;
		for (int j = rr->rr_buf_num; j < num; j++) {
			rr->rr[j] = NULL;
			rr->rr_buf_len[j] = 0;
		}
		rr->rr_buf_num = num;
	}
	/* Every entry can be read as the union, whatever its type. */
	if (len < sizeof(SPF_dns_rr_data_t))
		len = sizeof(SPF_dns_rr_data_t);
	if (rr->rr_buf_len[idx] < len) {
		void *p = realloc(rr->rr[idx], len);

		if (p == NULL)
			return SPF_E_NO_MEMORY;
		rr->rr[idx] = p;
		rr->rr_buf_len[idx] = len;
	}
	memset(rr->rr[idx], 0, rr->rr_buf_len[idx]);
	return SPF_E_SUCCESS;
}

/* Store record idx: `len` bytes of data (names and text get a NUL). */
static SPF_errcode_t rr_set(SPF_dns_rr_t *rr, int idx, const void *data, size_t len, int text)
{
	SPF_errcode_t err;

	if (text && len == SIZE_MAX)
		return SPF_E_NO_MEMORY;
	err = SPF_dns_rr_buf_realloc(rr, idx, text ? len + 1 : len);
	if (err != SPF_E_SUCCESS)
		return err;
	if (len > 0)
		memcpy(rr->rr[idx], data, len);
	return SPF_E_SUCCESS;
}

static int is_text_type(int type)
{
	return type == ns_t_ptr || type == ns_t_mx || type == ns_t_txt || type == ns_t_spf ||
	       type == ns_t_cname;
}

SPF_errcode_t SPF_dns_rr_dup(SPF_dns_rr_t **dstp, SPF_dns_rr_t *src)
{
	SPF_dns_rr_t *dst;

	if (dstp == NULL)
		return SPF_E_INTERNAL_ERROR;
	*dstp = NULL;
	if (src == NULL)
		return SPF_E_INTERNAL_ERROR;
	dst = SPF_dns_rr_new_init(src->source, src->domain, src->rr_type, 0, src->herrno);
	if (dst == NULL)
		return SPF_E_NO_MEMORY;
	dst->ttl = src->ttl;
	dst->utc_ttl = src->utc_ttl;
	*dstp = dst;
	if (src->num_rr <= 0 || src->rr == NULL)
		return SPF_E_SUCCESS;
	for (int i = 0; i < src->num_rr; i++) {
		const SPF_dns_rr_data_t *d = src->rr[i];
		SPF_errcode_t err = SPF_E_SUCCESS;

		if (d == NULL)
			continue;
		if (src->rr_type == ns_t_a)
			err = rr_set(dst, i, &d->a, sizeof(d->a), 0);
		else if (src->rr_type == ns_t_aaaa)
			err = rr_set(dst, i, &d->aaaa, sizeof(d->aaaa), 0);
		else if (is_text_type(src->rr_type))
			err = rr_set(dst, i, d->txt, strlen(d->txt), 1);
		else
			continue; /* a type SPF never asks: nothing to copy */
		if (err != SPF_E_SUCCESS)
			return err; /* *dstp stays valid for SPF_dns_rr_free() */
		dst->num_rr = i + 1;
	}
	return SPF_E_SUCCESS;
}

/* ---- layers ---------------------------------------------------------- */

void SPF_dns_free(SPF_dns_server_t *layer)
{
	SPF_dns_server_t *below;

	if (layer == NULL || layer->destroy == NULL)
		return; /* a layer without destructor belongs to its maker */
	below = layer->layer_below;
	layer->destroy(layer);
	SPF_dns_free(below);
}

SPF_dns_rr_t *SPF_dns_lookup(SPF_dns_server_t *layer, const char *domain, ns_type rr_type,
			     int should_cache)
{
	SPF_dns_rr_t *rr = NULL;

	if (layer != NULL && layer->lookup != NULL && domain != NULL)
		rr = layer->lookup(layer, domain, rr_type, should_cache);
	if (rr == NULL)
		rr = SPF_dns_rr_new_init(layer, domain, rr_type, 0, TRY_AGAIN);
	return rr;
}

static SPF_dns_server_t *layer_new(SPF_dns_server_t *below, const char *name, int debug,
				   SPF_dns_lookup_t lookup, SPF_dns_destroy_t destroy)
{
	SPF_dns_server_t *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->destroy = destroy;
	s->lookup = lookup;
	s->layer_below = below;
	s->name = name;
	s->debug = debug;
	return s;
}

static void layer_destroy(SPF_dns_server_t *s)
{
	free(s);
}

/* Cache and null layers pass questions down. */
static SPF_dns_rr_t *pass_lookup(SPF_dns_server_t *s, const char *domain, ns_type type,
				 int should_cache)
{
	if (s->layer_below == NULL)
		return SPF_dns_rr_new_init(s, domain, type, 0, HOST_NOT_FOUND);
	return SPF_dns_lookup(s->layer_below, domain, type, should_cache);
}

SPF_dns_server_t *SPF_dns_cache_new(SPF_dns_server_t *layer_below, const char *name, int debug,
				    int cache_bits)
{
	(void)cache_bits;
	if (layer_below == NULL)
		return NULL;
	return layer_new(layer_below, name ? name : "cache", debug, pass_lookup, layer_destroy);
}

void SPF_dns_cache_set_ttl(SPF_dns_server_t *s, time_t min_ttl, time_t err_ttl, time_t txt_ttl,
			   time_t rdns_ttl)
{
	(void)s, (void)min_ttl, (void)err_ttl, (void)txt_ttl, (void)rdns_ttl;
}

void SPF_dns_set_conserve_cache(SPF_dns_server_t *s, int conserve_cache)
{
	(void)s, (void)conserve_cache;
}

SPF_dns_server_t *SPF_dns_null_new(SPF_dns_server_t *layer_below, const char *name, int debug)
{
	return layer_new(layer_below, name ? name : "null", debug, pass_lookup, layer_destroy);
}

/*
 * The resolv layer: spfkit's c-ares backend. A c-ares resolver serves
 * one thread at a time, and libspf2 programs share a server between
 * threads (milters), so the layer keeps a pool: a lookup takes an idle
 * resolver (or makes one) and gives it back. Resolvers are made on
 * first use in each process: a daemon may fork after setup, and the
 * child never touches its parent's sockets.
 */
struct pooled {
	struct pooled *next;
	struct spfkit_resolver *cares;
};

struct resolv_hook {
	pthread_mutex_t lock;
	struct pooled *idle;
	pid_t pid; /* the process the idle resolvers belong to */
};

static struct pooled *pool_take(struct resolv_hook *h)
{
	struct pooled *p;

	pthread_mutex_lock(&h->lock);
	if (h->pid != getpid()) {
		h->idle = NULL; /* forked: the parent's, not ours to use or free */
		h->pid = getpid();
	}
	p = h->idle;
	if (p != NULL)
		h->idle = p->next;
	pthread_mutex_unlock(&h->lock);
	if (p != NULL)
		return p;
	p = calloc(1, sizeof(*p));
	if (p != NULL) {
		struct spfkit_cares_options opt;

		spfkit_cares_options_init(&opt);
		opt.servers = getenv("SPFKIT_DNS_SERVERS");
		if (opt.servers != NULL && opt.servers[0] == '\0')
			opt.servers = NULL;
		if (spfkit_cares_new(&opt, NULL, &p->cares, NULL, 0) != 0) {
			free(p);
			p = NULL;
		}
	}
	return p;
}

static void pool_give(struct resolv_hook *h, struct pooled *p)
{
	pthread_mutex_lock(&h->lock);
	if (h->pid == getpid()) {
		p->next = h->idle;
		h->idle = p;
		p = NULL;
	}
	pthread_mutex_unlock(&h->lock);
	if (p != NULL) { /* made before a fork of this process: drop it */
		spfkit_resolver_free(p->cares);
		free(p);
	}
}

struct resolv_call {
	SPF_dns_server_t *layer;
	const char *domain;
	ns_type type;
	SPF_dns_rr_t *rr;
	int done;
};

/* An spfkit answer as an SPF_dns_rr_t; NULL when out of memory. */
static SPF_dns_rr_t *rr_from_answer(SPF_dns_server_t *layer, const char *domain, ns_type type,
				    const struct spfkit_dns_answer *ans)
{
	int herrno = TRY_AGAIN;
	SPF_dns_rr_t *rr;

	switch (ans->status) {
	case SPFKIT_DNS_OK:
		herrno = NETDB_SUCCESS;
		break;
	case SPFKIT_DNS_NODATA:
		herrno = NO_DATA;
		break;
	case SPFKIT_DNS_NXDOMAIN:
		herrno = HOST_NOT_FOUND;
		break;
	default:
		break;
	}
	rr = SPF_dns_rr_new_init(layer, domain, type, 0, herrno);
	if (rr == NULL)
		return NULL;
	rr->ttl = ans->ttl;
	for (size_t i = 0; ans->status == SPFKIT_DNS_OK && i < ans->count && i < INT32_MAX / 4; i++) {
		const struct spfkit_dns_rr *d = &ans->rrs[i];
		SPF_errcode_t err;

		if (d->type != (unsigned)type)
			continue;
		if (type == ns_t_a && d->len != 4)
			continue;
		if (type == ns_t_aaaa && d->len != 16)
			continue;
		if (is_text_type(type) && memchr(d->data, 0, d->len) != NULL)
			continue; /* a C string cannot carry it */
		err = rr_set(rr, rr->num_rr, d->data, d->len, is_text_type(type));
		if (err != SPF_E_SUCCESS) {
			SPF_dns_rr_free(rr);
			return NULL;
		}
		rr->num_rr++;
	}
	if (herrno == NETDB_SUCCESS && rr->num_rr == 0)
		rr->herrno = NO_DATA;
	return rr;
}

static void resolv_cb(void *arg, const struct spfkit_dns_answer *ans)
{
	struct resolv_call *c = arg;

	c->rr = rr_from_answer(c->layer, c->domain, c->type, ans);
	c->done = 1;
}

static SPF_dns_rr_t *resolv_lookup(SPF_dns_server_t *s, const char *domain, ns_type type,
				   int should_cache)
{
	struct resolv_hook *h = s->hook;
	struct resolv_call call = {s, domain, type, NULL, 0};
	struct pooled *p;
	uint64_t handle;
	int rc;

	(void)should_cache;
	if (type == ns_t_spf) /* RFC 7208 §3.1: type SPF is not asked */
		return SPF_dns_rr_new_init(s, domain, type, 0, NO_DATA);
	p = pool_take(h);
	if (p == NULL)
		return SPF_dns_rr_new_init(s, domain, type, 0, TRY_AGAIN);
	rc = spfkit_resolver_submit(p->cares, domain, strlen(domain), (uint16_t)type, resolv_cb,
				    &call, &handle);
	if (rc != 0) {
		pool_give(h, p);
		return SPF_dns_rr_new_init(s, domain, type, 0,
					   rc == SPFKIT_EINVAL ? HOST_NOT_FOUND : TRY_AGAIN);
	}
	while (!call.done) {
		if (spfkit_resolver_wait(p->cares, -1) < 0) {
			spfkit_resolver_cancel(p->cares, handle);
			break;
		}
	}
	pool_give(h, p);
	if (call.rr == NULL)
		return SPF_dns_rr_new_init(s, domain, type, 0, TRY_AGAIN);
	return call.rr;
}

static void resolv_destroy(SPF_dns_server_t *s)
{
	struct resolv_hook *h = s->hook;

	if (h != NULL) {
		while (h->pid == getpid() && h->idle != NULL) {
			struct pooled *p = h->idle;

			h->idle = p->next;
			spfkit_resolver_free(p->cares);
			free(p);
		}
		pthread_mutex_destroy(&h->lock);
	}
	free(h);
	free(s);
}

SPF_dns_server_t *SPF_dns_resolv_new(SPF_dns_server_t *layer_below, const char *name, int debug)
{
	SPF_dns_server_t *s;
	struct resolv_hook *h = calloc(1, sizeof(*h));

	(void)layer_below; /* like libspf2: the resolver is the bottom layer */
	if (h == NULL)
		return NULL;
	if (pthread_mutex_init(&h->lock, NULL) != 0) {
		free(h);
		return NULL;
	}
	h->pid = getpid();
	s = layer_new(NULL, name ? name : "resolv", debug, resolv_lookup, resolv_destroy);
	if (s == NULL) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	s->hook = h;
	return s;
}

/* ---- the adapter: a layer as an spfkit resolver ---------------------- */

struct spf2_pending {
	struct spf2_pending *next;
	uint64_t handle;
	uint16_t type;
	spfkit_dns_cb *cb;
	void *arg;
	size_t len;
	char name[]; /* len bytes and a NUL */
};

static int adapter_submit(void *impl, const char *name, size_t len, uint16_t type,
			  spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	struct spf2_adapter *a = impl;
	struct spf2_pending *p;

	if (len > 1024)
		return SPFKIT_EINVAL;
	p = malloc(sizeof(*p) + len + 1);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	memcpy(p->name, name, len);
	p->name[len] = '\0';
	p->len = len;
	p->type = type;
	p->cb = cb;
	p->arg = arg;
	p->next = NULL;
	p->handle = ++a->next_handle;
	if (handle != NULL)
		*handle = p->handle;
	if (a->tail != NULL)
		a->tail->next = p;
	else
		a->head = p;
	a->tail = p;
	return 0;
}

static void adapter_cancel(void *impl, uint64_t handle)
{
	struct spf2_adapter *a = impl;
	struct spf2_pending **pp = &a->head, *prev = NULL;

	while (*pp != NULL) {
		struct spf2_pending *p = *pp;

		if (p->handle == handle) {
			*pp = p->next;
			if (a->tail == p)
				a->tail = prev;
			free(p);
			return;
		}
		prev = p;
		pp = &p->next;
	}
}

static int same_name(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	if (alen > 0 && a[alen - 1] == '.')
		alen--;
	if (blen > 0 && b[blen - 1] == '.')
		blen--;
	return alen == blen && strncasecmp(a, b, alen) == 0;
}

/* Ask the layer; fill ans (pointing into rr and store) from its answer. */
static void adapter_answer(struct spf2_adapter *a, const struct spf2_pending *p,
			   struct spf2_top *top, SPF_dns_rr_t **rrp, struct spfkit_dns_rr *store,
			   size_t store_max, struct spfkit_dns_answer *ans)
{
	SPF_dns_rr_t *rr;
	int herrno;

	memset(ans, 0, sizeof(*ans));
	*rrp = NULL;
	/* A name a C string cannot carry has no records; type SPF is never asked. */
	if (memchr(p->name, 0, p->len) != NULL || p->len == 0) {
		ans->status = SPFKIT_DNS_NXDOMAIN;
		return;
	}
	if (p->type == ns_t_spf) {
		ans->status = SPFKIT_DNS_NODATA;
		return;
	}
	a->questions++;
	rr = SPF_dns_lookup(a->layer, p->name, (ns_type)p->type, 1);
	*rrp = rr;
	if (rr == NULL) {
		ans->status = SPFKIT_DNS_TEMPFAIL;
		ans->detail = "out of memory";
		return;
	}
	herrno = rr->herrno;
	switch (herrno) {
	case NETDB_SUCCESS:
		ans->status = SPFKIT_DNS_OK;
		break;
	case HOST_NOT_FOUND:
		ans->status = SPFKIT_DNS_NXDOMAIN;
		break;
	case NO_DATA:
		ans->status = SPFKIT_DNS_NODATA;
		break;
	case TRY_AGAIN:
		ans->status = SPFKIT_DNS_TEMPFAIL;
		ans->detail = "TRY_AGAIN";
		break;
	default:
		ans->status = SPFKIT_DNS_TEMPFAIL;
		ans->detail = "NO_RECOVERY";
		break;
	}
	ans->ttl = rr->ttl < 0 ? 0 : rr->ttl > (time_t)INT32_MAX ? INT32_MAX : (uint32_t)rr->ttl;
	if (ans->status == SPFKIT_DNS_OK && rr->rr != NULL) {
		for (int i = 0; i < rr->num_rr && ans->count < store_max; i++) {
			const SPF_dns_rr_data_t *d = rr->rr[i];
			struct spfkit_dns_rr *o = &store[ans->count];

			if (d == NULL)
				continue;
			memset(o, 0, sizeof(*o));
			o->type = p->type;
			o->ttl = ans->ttl;
			if (p->type == ns_t_a) {
				o->data = (const unsigned char *)&d->a;
				o->len = 4;
			} else if (p->type == ns_t_aaaa) {
				o->data = (const unsigned char *)&d->aaaa;
				o->len = 16;
			} else if (is_text_type(p->type)) {
				o->data = (const unsigned char *)d->txt;
				o->len = strlen(d->txt);
				/* names: no final dot (resolver.h) */
				if (p->type != ns_t_txt && o->len > 1 && d->txt[o->len - 1] == '.')
					o->len--;
			} else {
				continue;
			}
			ans->count++;
		}
		if (ans->count == 0)
			ans->status = SPFKIT_DNS_NODATA;
	}
	ans->rrs = ans->count > 0 ? store : NULL;
	if (top != NULL && !top->seen && p->type == ns_t_txt && top->domain != NULL &&
	    same_name(p->name, p->len, top->domain)) {
		top->seen = 1;
		top->herrno = herrno;
		for (size_t i = 0; i < ans->count; i++) {
			if (spfkit_record_is_spf((const char *)store[i].data, store[i].len))
				top->spf_records++;
		}
	}
}

#define ADAPTER_MAX_RRS 1024u

static int adapter_wait(void *impl, int timeout_ms)
{
	struct spf2_adapter *a = impl;
	struct spfkit_dns_rr *store;
	size_t queued = 0;
	int ran = 0;

	(void)timeout_ms;
	for (const struct spf2_pending *p = a->head; p != NULL; p = p->next)
		queued++;
	if (queued == 0)
		return 0;
	store = malloc(ADAPTER_MAX_RRS * sizeof(*store));
	if (store == NULL)
		return SPFKIT_ENOMEM;
	/* Answer as many questions as were queued; a callback may queue
	 * more (answered by the next wait) or cancel queued ones (they stay
	 * in the list until their turn, so cancel finds them). */
	while (queued-- > 0 && a->head != NULL) {
		struct spf2_pending *p = a->head;
		struct spfkit_dns_answer ans;
		SPF_dns_rr_t *rr;

		a->head = p->next;
		if (a->head == NULL)
			a->tail = NULL;
		adapter_answer(a, p, a->top, &rr, store, ADAPTER_MAX_RRS, &ans);
		p->cb(p->arg, &ans);
		SPF_dns_rr_free(rr);
		free(p);
		ran++;
	}
	free(store);
	return ran;
}

static void adapter_destroy(void *impl)
{
	spf2_adapter_clear(impl);
}

static const struct spfkit_resolver_ops adapter_ops = {
	adapter_submit, adapter_cancel, adapter_wait, adapter_destroy,
};

void spf2_adapter_init(struct spf2_adapter *a, SPF_dns_server_t *layer, struct spf2_top *top)
{
	memset(a, 0, sizeof(*a));
	a->r.ops = &adapter_ops;
	a->r.impl = a;
	a->layer = layer;
	a->top = top;
}

void spf2_adapter_clear(struct spf2_adapter *a)
{
	while (a->head != NULL) {
		struct spf2_pending *p = a->head;

		a->head = p->next;
		free(p);
	}
	a->tail = NULL;
}
