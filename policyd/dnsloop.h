/*
 * Drives a resolver from a libevent loop. For the c-ares backend the
 * resolver's sockets and timeout become libevent events (the "by hand"
 * recipe of <spfkit/cares.h>), and the hits of an answer cache layer
 * over it (<spfkit/cache.h>) are delivered from an event its ready hook
 * activates; any other backend (the zone resolver of tests and offline
 * runs) is pumped with its wait(0) from a deferred event after each
 * question. Either way callbacks run from the loop, never from inside
 * submit().
 *
 * (The spfkit-event library does the same for c-ares and the cache; it
 * is configured after policyd/ in the top meson.build, so this small
 * glue, which also pumps the zone backend, stays here.)
 */
#ifndef SPFKIT_POLICYD_DNSLOOP_H
#define SPFKIT_POLICYD_DNSLOOP_H

#include <event2/event.h>

#include <spfkit/resolver.h>

struct spfkit__dnsloop;

/*
 * `r` is the backend; `cache` NULL or a cache layer made over r. Both
 * must outlive the glue. 0, SPFKIT_ENOMEM.
 */
int spfkit__dnsloop_new(struct event_base *base, struct spfkit_resolver *r,
			struct spfkit_resolver *cache, struct spfkit__dnsloop **out);

/* Call after submitting or cancelling: re-arms the timer or the pump. */
void spfkit__dnsloop_kick(struct spfkit__dnsloop *dl);

void spfkit__dnsloop_free(struct spfkit__dnsloop *dl);

#endif
