/*
 * A DNS layer answering from a table, written the way Exim writes its
 * own (SPF_dns_exim_lookup in Exim 4.96's spf.c): the answer is built
 * in an SPF_dns_rr_t on the stack and handed back as a copy made by the
 * library's SPF_dns_rr_dup(). The tests run it against our library and
 * against Debian's libspf2 with the same table.
 */
#ifndef ZONE_LAYER_H
#define ZONE_LAYER_H

#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <spf2/spf.h>

struct zone_rr {
	const char *name;
	int type;         /* ns_t_a, ns_t_aaaa, ns_t_mx, ns_t_ptr, ns_t_txt */
	const char *data; /* address text, name, or TXT text */
};

/* Names whose every question times out (TRY_AGAIN). */
static const char *const zone_timeouts[] = {"timeout.example", "temp.example", NULL};

struct zone_layer {
	SPF_dns_server_t s; /* first: the library sees only this */
	const struct zone_rr *rrs;
	size_t count;
	unsigned questions;
	SPF_errcode_t (*rr_dup)(SPF_dns_rr_t **, SPF_dns_rr_t *);
};

static SPF_dns_rr_t *zone_lookup(SPF_dns_server_t *server, const char *domain, ns_type type,
				 int should_cache)
{
	struct zone_layer *z = (struct zone_layer *)server;
	SPF_dns_rr_t srr, *out = NULL;
	void *bufs[64];
	size_t found = 0, named = 0;

	(void)should_cache;
	memset(&srr, 0, sizeof(srr));
	srr.domain = (char *)domain;
	srr.rr_type = type;
	srr.source = server;
	srr.ttl = 300;
	__atomic_add_fetch(&z->questions, 1, __ATOMIC_RELAXED); /* layers may be shared by threads */
	if (type == ns_t_spf) { /* as Exim: type 99 is answered "no data" */
		srr.herrno = NO_DATA;
		z->rr_dup(&out, &srr);
		return out;
	}
	for (size_t i = 0; zone_timeouts[i] != NULL; i++) {
		if (strcasecmp(domain, zone_timeouts[i]) == 0) {
			srr.herrno = TRY_AGAIN;
			z->rr_dup(&out, &srr);
			return out;
		}
	}
	for (size_t i = 0; i < z->count && found < 64; i++) {
		const struct zone_rr *r = &z->rrs[i];
		void *b;

		if (strcasecmp(r->name, domain) != 0)
			continue;
		named++;
		if (r->type != (int)type)
			continue;
		if (type == ns_t_a || type == ns_t_aaaa) {
			b = calloc(1, sizeof(struct in6_addr));
			if (b != NULL)
				inet_pton(type == ns_t_a ? AF_INET : AF_INET6, r->data, b);
		} else {
			b = strdup(r->data);
		}
		if (b == NULL)
			break;
		bufs[found++] = b;
	}
	srr.herrno = found > 0 ? NETDB_SUCCESS : named > 0 ? NO_DATA : HOST_NOT_FOUND;
	srr.num_rr = (int)found;
	srr.rr = (SPF_dns_rr_data_t **)bufs;
	z->rr_dup(&out, &srr);
	for (size_t i = 0; i < found; i++)
		free(bufs[i]);
	return out;
}

static void zone_layer_init(struct zone_layer *z, const struct zone_rr *rrs, size_t count,
			    SPF_errcode_t (*rr_dup)(SPF_dns_rr_t **, SPF_dns_rr_t *))
{
	memset(z, 0, sizeof(*z));
	z->s.destroy = NULL; /* ours: the server must not free it */
	z->s.lookup = zone_lookup;
	z->s.name = "test-zone";
	z->rrs = rrs;
	z->count = count;
	z->rr_dup = rr_dup;
}

#endif
