/*
 * The in-process tests' live DNS: dnsd serving a zone on a free
 * 127.0.0.1 port, and lib/dns's c-ares backend aimed at it.
 */
#ifndef SPFKIT_TESTS_DNSD_LIVE_H
#define SPFKIT_TESTS_DNSD_LIVE_H

#include <spfkit/cares.h>
#include <spfkit/zone.h>

#include "dnsd.h"

/*
 * Start dnsd on `zone` (which must outlive it) and make a c-ares
 * resolver from `co` (its servers are set here) asking it. 0, or -1
 * with the reason on stderr and nothing left running.
 */
int live_dns_start(const struct spfkit_zone *zone, struct spfkit_cares_options *co,
		   struct dnsd **d, struct spfkit_resolver **r);
/* Free the resolver, then stop dnsd. */
void live_dns_stop(struct dnsd *d, struct spfkit_resolver *r);

/* A cmocka fixture's state: the test's zone, dnsd serving it, the resolver asking it. */
struct live_fx {
	struct spfkit_zone *zone;
	struct dnsd *d;
	struct spfkit_resolver *r;
};

/*
 * A cmocka setup's body: *state becomes a live_fx owning `zone` (NULL
 * fails) with dnsd and the resolver from `co` started on it. 0 or -1.
 */
int live_fx_setup(void **state, struct spfkit_zone *zone, struct spfkit_cares_options *co);
/* The matching teardown: stops both, frees the zone and the fixture. */
int live_fx_teardown(void **state);

#endif
