/*
 * Drives a resolver from a libevent loop. For the c-ares backend the
 * resolver's sockets and timeout become libevent events (the "by hand"
 * recipe of <spfkit/cares.h>); any other backend (the zone resolver of
 * tests and offline runs) is pumped with its wait(0) from a deferred
 * event after each question. Either way callbacks run from the loop,
 * never from inside submit().
 */
#ifndef SPFKIT_POLICYD_DNSLOOP_H
#define SPFKIT_POLICYD_DNSLOOP_H

#include <event2/event.h>

#include <spfkit/resolver.h>

struct spfkit__dnsloop;

/* 0, SPFKIT_ENOMEM. The resolver must outlive the loop glue. */
int spfkit__dnsloop_new(struct event_base *base, struct spfkit_resolver *r,
			struct spfkit__dnsloop **out);

/* Call after submitting or cancelling: re-arms the timer or the pump. */
void spfkit__dnsloop_kick(struct spfkit__dnsloop *dl);

void spfkit__dnsloop_free(struct spfkit__dnsloop *dl);

#endif
