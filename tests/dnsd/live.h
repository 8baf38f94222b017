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

#endif
