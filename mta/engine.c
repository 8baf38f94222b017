/* A daemon's engine parts (see engine.h). */
#include <event2/event.h>

#include <spfkit/cares.h>

#include "checker.h" /* spfkit__mta_now_ms() */
#include "engine.h"
#include "log.h"

int spfkit__mta_ctx_new(const struct spfkit__mta_config *cfg, const char *receiver, int dns_cached,
			const struct spfkit_allocator *alloc, struct spfkit_ctx **out)
{
	struct spfkit_config ec;

	spfkit_config_init(&ec);
	ec.alloc = alloc;
	ec.receiver = receiver;
	ec.limits.void_lookups = (unsigned)cfg->void_limit; /* 0: the RFC's 2 */
	ec.record_memo = dns_cached;
	return spfkit_ctx_new(&ec, out);
}

int spfkit__mta_dns_attach(struct event_base *base, struct spfkit_resolver *r,
			   struct spfkit_resolver *cache, struct spfkit_event **out)
{
	/* a NULL watch only asks whether r is c-ares */
	if (spfkit_cares_set_watch(r, NULL, NULL) == 0)
		return spfkit_event_attach(base, r, cache, NULL, out);
	return spfkit_event_attach_pump(base, r, cache, NULL, out);
}

int spfkit__mta_idle_rest(uint64_t since_ms, int timeout_s, struct timeval *rest)
{
	uint64_t idle_ms = (uint64_t)timeout_s * 1000u;
	uint64_t gone = spfkit__mta_now_ms() - since_ms;

	if (gone >= idle_ms)
		return 0;
	rest->tv_sec = (time_t)((idle_ms - gone) / 1000u);
	rest->tv_usec = (suseconds_t)((idle_ms - gone) % 1000u) * 1000;
	return 1;
}

void spfkit__mta_run(struct event_base *base)
{
	int holding = spfkit__mta_log_hold() == 0;
	int rc;

	do {
		rc = event_base_loop(base, EVLOOP_ONCE);
		spfkit__mta_log_flush();
	} while (rc == 0 && !event_base_got_exit(base) && !event_base_got_break(base));
	if (holding)
		spfkit__mta_log_unhold();
}
