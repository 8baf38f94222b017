/*
 * The parts of a daemon's engine that do not depend on its protocol:
 * the SPF context made from the configuration, the DNS resolver attached
 * to the event loop, and the loop's run with its log lines held per pass.
 * spfkit-policyd, spfkit-milter and spfkit-smtpd-filter use these.
 * Not an API.
 */
#ifndef SPFKIT_MTA_ENGINE_H
#define SPFKIT_MTA_ENGINE_H

#include <stdint.h>
#include <sys/time.h>

#include <spfkit/eval.h>
#include <spfkit/event.h>
#include <spfkit/resolver.h>

#include "config.h"

struct event_base;

/*
 * The SPF context for cfg: receiver (kept, not copied) for headers and
 * %{r}, Void_Limit, and the record memo when DNS answers are cached
 * (remembering records for their TTL is what the cache does anyway);
 * its evaluations' memory from alloc (NULL: libc). 0, or the library's
 * error.
 */
int spfkit__mta_ctx_new(const struct spfkit__mta_config *cfg, const char *receiver, int dns_cached,
			const struct spfkit_allocator *alloc, struct spfkit_ctx **out);

/* c-ares gets socket events on base; any other backend (a zone) is pumped. 0, or an error. */
int spfkit__mta_dns_attach(struct event_base *base, struct spfkit_resolver *r,
			   struct spfkit_resolver *cache, struct spfkit_event **out);

/*
 * An idle clock armed once, not moved at every command: when it fires
 * before `since_ms` (CLOCK_MONOTONIC, spfkit__mta_now_ms()) is timeout_s
 * old, 1 with *rest what is left, to put it back for; 0 when the time is up.
 */
int spfkit__mta_idle_rest(uint64_t since_ms, int timeout_s, struct timeval *rest);

/* Run base until it is told to exit; the log lines of each pass go out together (log.h). */
void spfkit__mta_run(struct event_base *base);

#endif
