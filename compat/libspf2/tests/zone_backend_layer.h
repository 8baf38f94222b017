/*
 * A libspf2 DNS layer answering from spfkit's zone backend (public API,
 * <spfkit/zone.h>), shared by the golden tests that serve one world to
 * our libspf2.so.2 and to Debian's: test_golden_corpus.c (a zone file)
 * and tests/compat/test_golden_rfc7208.c (the RFC 7208 suite's zonedata).
 *
 * The answer is built in an SPF_dns_rr_t on the stack and handed back as
 * a copy made by the library's own SPF_dns_rr_dup(), as Exim's layer
 * does, so each library frees what it allocated.
 */
#ifndef ZONE_BACKEND_LAYER_H
#define ZONE_BACKEND_LAYER_H

#include <stdlib.h>
#include <string.h>

#include <spfkit/spfkit.h>

#include "golden_api.h"

#define ZLAYER_MAX_RRS 256

struct zlayer {
	SPF_dns_server_t s; /* first: the library sees only this */
	const struct spfkit_zone *zone;
	SPF_errcode_t (*rr_dup)(SPF_dns_rr_t **, SPF_dns_rr_t *);
	/* 0: type 99 is answered NO_DATA whatever the zone holds (as
	 * Exim's layer); 1: served from the zone like any other type */
	int serve_type99;
	unsigned questions, type99_questions; /* counted for the caller */
};

static SPF_dns_rr_t *zlookup(SPF_dns_server_t *server, const char *domain, ns_type type,
			     int should_cache)
{
	struct zlayer *z = (struct zlayer *)server;
	struct spfkit_dns_answer ans;
	SPF_dns_rr_t srr, *out = NULL;
	void *bufs[ZLAYER_MAX_RRS];
	size_t n = 0;

	(void)should_cache;
	z->questions++;
	if (type == ns_t_spf)
		z->type99_questions++;
	memset(&srr, 0, sizeof(srr));
	srr.domain = (char *)domain;
	srr.rr_type = type;
	srr.source = server;
	srr.ttl = 300;
	if ((type == ns_t_spf && !z->serve_type99) ||
	    spfkit_zone_lookup(z->zone, domain, strlen(domain), (uint16_t)type, &ans) != 0) {
		srr.herrno = NO_DATA;
		z->rr_dup(&out, &srr);
		return out;
	}
	switch (ans.status) {
	case SPFKIT_DNS_OK:
		srr.herrno = NETDB_SUCCESS;
		break;
	case SPFKIT_DNS_NODATA:
		srr.herrno = NO_DATA;
		break;
	case SPFKIT_DNS_NXDOMAIN:
		srr.herrno = HOST_NOT_FOUND;
		break;
	default:
		srr.herrno = TRY_AGAIN;
		break;
	}
	for (size_t i = 0; i < ans.count && n < ZLAYER_MAX_RRS; i++) {
		const struct spfkit_dns_rr *r = &ans.rrs[i];
		/* room for an in6_addr, and a NUL after a name or a text */
		size_t size = r->len + 1 > 16 ? r->len + 1 : 16;
		char *b = calloc(1, size);

		if (b == NULL)
			break;
		memcpy(b, r->data, r->len);
		bufs[n++] = b;
	}
	srr.num_rr = (int)n;
	srr.rr = (SPF_dns_rr_data_t **)bufs;
	if (srr.herrno == NETDB_SUCCESS && n == 0)
		srr.herrno = NO_DATA;
	z->rr_dup(&out, &srr);
	for (size_t i = 0; i < n; i++)
		free(bufs[i]);
	return out;
}

static void zlayer_init(struct zlayer *z, const struct spfkit_zone *zone, const char *name,
			SPF_errcode_t (*rr_dup)(SPF_dns_rr_t **, SPF_dns_rr_t *), int serve_type99)
{
	memset(z, 0, sizeof(*z));
	z->s.lookup = zlookup;
	z->s.name = name;
	z->zone = zone;
	z->rr_dup = rr_dup;
	z->serve_type99 = serve_type99;
}

#endif
