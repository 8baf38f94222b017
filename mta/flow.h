/*
 * The order of one client's SPF check, as data: no I/O, no event loop, so
 * that the daemons' asynchronous checker (checker.c) and the CLI's
 * synchronous `spfkit check --policy` walk the very same steps. The
 * HELO name falls back to the sender's domain; then, unless a bypass
 * applies, HELO is checked, then MAIL FROM unless the HELO result already
 * decides (decision.h). The DNS whitelists, which need DNS answers of
 * their own, stay the checker's. Not an API.
 */
#ifndef SPFKIT_MTA_FLOW_H
#define SPFKIT_MTA_FLOW_H

#include "config.h"
#include "decision.h"

/* No identity left to check. */
#define SPFKIT__MTA_FLOW_DONE (-1)

/* HELO missing (some clients send none): policyd-spf takes the sender's domain, as we do. */
void spfkit__mta_helo_fallback(struct spfkit__mta_input *in);

/*
 * The identity to check after `done` (SPFKIT__MTA_FLOW_DONE: none yet),
 * given the results so far in `in`: SPFKIT_IDENTITY_HELO,
 * SPFKIT_IDENTITY_MAILFROM, or SPFKIT__MTA_FLOW_DONE.
 */
int spfkit__mta_flow_next(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			  int done);

#endif
