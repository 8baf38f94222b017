/*
 * Address plans (record_plan.c): with the record memo on, a domain's SPF
 * tree as far as it depends on the client address alone (ip4, ip6, all,
 * include, redirect, and "a" and "mx" through the memo's answers),
 * compiled from the memo into address tests and question marks, so that
 * strict evaluation takes one pass over them.
 */
#ifndef SPFKIT_RECORD_PLAN_H
#define SPFKIT_RECORD_PLAN_H

#include <spfkit/eval.h>

#include "record_cache.h"

/* What the plan says strict evaluation of the domain comes to. */
struct spfkit__record_plan_result {
	enum spfkit_result_code code;
	const char *mechanism; /* in `to`, or "default" */
	const char *domain;    /* in `to`: the redirect target that decided, or NULL: the domain */
	size_t domain_len;
	unsigned dns_terms, void_lookups, queries, depth;
	unsigned rec_level; /* the deciding record's TXT question level */
};

/* What spfkit__record_plan_run() came to, when not 1 (a result). */
#define SPFKIT__PLAN_NONE 0  /* evaluate */
#define SPFKIT__PLAN_LEARN 2 /* evaluate, then spfkit__record_plan_learn() */

/*
 * The plan of the SPF record of `name` (hash: spfkit__namehash, no final
 * dot) for client `ip` at `now`. 1: *out is the result, the same as
 * strict evaluation through the memo gives; SPFKIT__PLAN_NONE: no plan
 * says it for this client; SPFKIT__PLAN_LEARN: nor, but one could once
 * the evaluation has gone through the memo; SPFKIT_ENOMEM when `to` is
 * out of memory.
 */
int spfkit__record_plan_run(struct spfkit__record_cache *c, const char *name, size_t len,
			    uint64_t hash,
			    int64_t now, const struct spfkit_ip *ip,
			    const struct spfkit_limits *limits, struct spfkit__arena *to,
			    struct spfkit__record_plan_result *out);
/* (Re)build the plan of `name` for clients of `family` from what the
 * memo holds now: after an evaluation that spfkit__record_plan_run()
 * asked to learn. Best effort. */
void spfkit__record_plan_learn(struct spfkit__record_cache *c, const char *name, size_t len,
			       uint64_t hash, int64_t now, const struct spfkit_limits *limits,
			       int family);

#endif
