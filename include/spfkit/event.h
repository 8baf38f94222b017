/*
 * libevent integration (library spfkit-event, built when libevent is
 * found; libspfkit itself does not need libevent).
 *
 *   struct spfkit_resolver *dns, *r;
 *   struct spfkit_event *glue;
 *   spfkit_cares_new(&copt, NULL, &dns, errbuf, sizeof(errbuf));
 *   spfkit_cache_resolver(cache, dns, &r);          optional
 *   spfkit_event_attach(base, dns, r, NULL, &glue); r may be NULL
 *   ... submit questions to r (or dns); run event_base_dispatch(base):
 *       the callbacks fire from the loop ...
 *   spfkit_event_detach(glue);                       before freeing them
 *   spfkit_resolver_free(r); spfkit_resolver_free(dns);
 *
 * While attached, the c-ares resolver's sockets are libevent events
 * (read/write interest kept in step through spfkit_cares_set_watch()),
 * its next timeout is a libevent timer, and the cache layer's queued
 * hits are delivered by an event activated when a hit is queued. Every
 * resolver callback then runs from inside event_base_loop(), never from
 * inside a submit.
 *
 * One thread: the base, the resolvers and the glue belong to the thread
 * that runs the loop. Do not detach from inside a resolver callback (the
 * glue is on the stack then); detach after the loop returns, or from
 * another event's callback.
 */
#ifndef SPFKIT_EVENT_H
#define SPFKIT_EVENT_H

#include <spfkit/common.h>
#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;
struct spfkit_event;

/*
 * Attach `cares` (made by spfkit_cares_new()) and, if not NULL, `cache`
 * (made by spfkit_cache_resolver() over `cares` or over anything the
 * loop drives) to `base`. Nothing is owned: all three must outlive the
 * glue. The resolvers' watch and ready hooks (spfkit_cares_set_watch(),
 * spfkit_cache_set_ready()) are the glue's until detach. 0,
 * SPFKIT_EINVAL (base NULL, not a c-ares resolver, not a cache layer),
 * SPFKIT_ENOMEM.
 */
SPFKIT_MUSTCHECK int spfkit_event_attach(struct event_base *base, struct spfkit_resolver *cares,
					 struct spfkit_resolver *cache,
					 const struct spfkit_allocator *alloc,
					 struct spfkit_event **out);

/* Remove every event and release the hooks. Questions stay pending in
 * the resolvers. NULL: no-op. */
void spfkit_event_detach(struct spfkit_event *glue);

/*
 * A resolver with no sockets (the zone backend of <spfkit/zone.h>, used
 * by tests and offline runs) is pumped instead: after questions are
 * submitted, spfkit_event_kick() schedules an event that calls its
 * wait(0) until nothing is left queued, answers to questions submitted
 * by the callbacks included. Callbacks run from the loop, as above.
 * `cache`, if not NULL, is a cache layer over `r`, attached as for
 * spfkit_event_attach(). Nothing is owned. 0, SPFKIT_EINVAL (base or r
 * NULL, cache not a cache layer), SPFKIT_ENOMEM.
 */
SPFKIT_MUSTCHECK int spfkit_event_attach_pump(struct event_base *base, struct spfkit_resolver *r,
					      struct spfkit_resolver *cache,
					      const struct spfkit_allocator *alloc,
					      struct spfkit_event **out);

/*
 * Call after submitting (to the resolver or to the cache layer over it):
 * a pumped resolver is pumped from the loop soon; for c-ares the timer
 * is set again from spfkit_cares_timeout() (the watch hook does that
 * already; calling it is harmless). NULL: no-op.
 */
void spfkit_event_kick(struct spfkit_event *glue);

/*
 * The first error met while the loop ran (a socket that could not get an
 * event, a process call that failed), or 0. Questions on such a socket
 * still end, by timeout.
 */
int spfkit_event_error(const struct spfkit_event *glue);

#ifdef __cplusplus
}
#endif

#endif
