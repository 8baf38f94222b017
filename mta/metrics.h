/*
 * What a daemon counts for a monitoring system to scrape (issue 29),
 * written out in the Prometheus text exposition format (0.0.4) by
 * spfkit__metrics_render(); metrics_http.c serves it on /metrics.
 *
 * No lock on the hot path: each thread that counts (a worker and its
 * event loop) owns one block and is its only writer. A count is a
 * relaxed atomic load and store of the writer's own variable (a plain
 * load, add and store on the machines we run on: no locked
 * instruction, no shared cache line between workers); the scrape reads
 * every block with relaxed loads and sums them. Each value it reads is
 * one the writer wrote, never a torn one; a scrape taken while a count
 * is being made may miss that count, and the next scrape has it.
 * Gauges (connections open, requests in flight) are kept per block the
 * same way, raised and lowered by the block's thread; their sum is the
 * process's.
 *
 * A NULL block counts nothing: the metrics listener is off by default,
 * and a daemon without one passes NULL everywhere. Not an API.
 */
#ifndef SPFKIT_MTA_METRICS_H
#define SPFKIT_MTA_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <spfkit/cache.h>
#include <spfkit/eval.h>
#include <spfkit/resolver.h>

#include "decision.h"
#include "spfkit_util.h"

/* SPF results, indexed by enum spfkit_result_code (none .. permerror). */
#define SPFKIT__METRICS_RESULTS 7u
/* Identities, indexed by enum spfkit_identity (mailfrom, helo). */
#define SPFKIT__METRICS_IDENTITIES 2u
/* What the daemon told the MTA, indexed by enum spfkit__mta_kind. */
#define SPFKIT__METRICS_ACTIONS 5u

/* DNS question types counted by name; the rest count as "other". */
enum spfkit__metrics_dns_type {
	SPFKIT__METRICS_DNS_TXT = 0,
	SPFKIT__METRICS_DNS_A,
	SPFKIT__METRICS_DNS_AAAA,
	SPFKIT__METRICS_DNS_MX,
	SPFKIT__METRICS_DNS_PTR,
	SPFKIT__METRICS_DNS_OTHER,
	SPFKIT__METRICS_DNS_TYPES
};

/* How a question ended: the three answers, and the temporary failures by kind. */
enum spfkit__metrics_dns_outcome {
	SPFKIT__METRICS_DNS_ANSWER = 0, /* records of the type asked */
	SPFKIT__METRICS_DNS_NODATA,
	SPFKIT__METRICS_DNS_NXDOMAIN,
	SPFKIT__METRICS_DNS_TIMEOUT,  /* the resolver's timeout, or Lookup_Time */
	SPFKIT__METRICS_DNS_SERVFAIL, /* SERVFAIL, REFUSED or no server reachable */
	SPFKIT__METRICS_DNS_ERROR,    /* any other temporary failure */
	SPFKIT__METRICS_DNS_OUTCOMES
};

/* Plain counters. */
enum spfkit__metrics_counter {
	SPFKIT__METRICS_REQUESTS = 0,    /* requests (policy queries, milter MAIL FROMs, filter sessions) */
	SPFKIT__METRICS_REFUSED,         /* connections or requests refused by a limit */
	SPFKIT__METRICS_PROTOCOL_ERRORS, /* clients dropped for breaking the protocol */
	SPFKIT__METRICS_MEMO_ANSWERS,    /* DNS questions the record memo answered */
	SPFKIT__METRICS_CONNECTIONS,     /* connections accepted */
	SPFKIT__METRICS_COUNTERS
};

/* Gauges: up and down, by the block's own thread. */
enum spfkit__metrics_gauge {
	SPFKIT__METRICS_OPEN = 0,  /* connections open */
	SPFKIT__METRICS_IN_FLIGHT, /* requests being answered */
	SPFKIT__METRICS_GAUGES
};

/*
 * Histogram buckets: upper bounds in microseconds, 0.5 ms to 20 s (a
 * check's Lookup_Time is 20 s by default), then +Inf. Counts are kept
 * per bucket and made cumulative when written out.
 */
#define SPFKIT__METRICS_BUCKETS 16u

struct spfkit__metrics_hist {
	_Atomic uint64_t bucket[SPFKIT__METRICS_BUCKETS + 1]; /* the last one: +Inf */
	_Atomic uint64_t sum_us;
};

/* One writer thread's counts. */
struct spfkit__metrics_block {
	_Atomic uint64_t checks[SPFKIT__METRICS_IDENTITIES][SPFKIT__METRICS_RESULTS];
	_Atomic uint64_t actions[SPFKIT__METRICS_ACTIONS];
	_Atomic uint64_t dns[SPFKIT__METRICS_DNS_TYPES][SPFKIT__METRICS_DNS_OUTCOMES];
	_Atomic uint64_t counters[SPFKIT__METRICS_COUNTERS];
	_Atomic int64_t gauges[SPFKIT__METRICS_GAUGES];
	struct spfkit__metrics_hist check_seconds; /* one identity's evaluation */
	struct spfkit__metrics_hist dns_seconds;   /* a question sent to the network */
	struct spfkit__metrics_block *next;        /* the registry's list */
};

struct spfkit__metrics;

/*
 * A registry for the daemon `name` ("spfkit-policyd", kept, not
 * copied). 0, or SPFKIT_ENOMEM.
 */
int spfkit__metrics_new(const char *name, struct spfkit__metrics **out);
/* After every thread that counts has stopped and the listener is closed. NULL: no-op. */
void spfkit__metrics_free(struct spfkit__metrics *m);

/*
 * A new block, zeroed and registered (the registry owns it). Called by
 * each worker at its start; takes the registry's lock (never on the hot
 * path). NULL: m is NULL or out of memory, and the worker counts nothing.
 */
struct spfkit__metrics_block *spfkit__metrics_block(struct spfkit__metrics *m);

/* The process's answer cache, read (its own lock) at each scrape; NULL: none. m NULL: no-op. */
void spfkit__metrics_set_cache(struct spfkit__metrics *m, struct spfkit_cache *cache);

/*
 * The exposition: every family with HELP and TYPE, the blocks summed.
 * Appended to out. 0, or SPFKIT_ENOMEM (out's cap reached).
 */
int spfkit__metrics_render(struct spfkit__metrics *m, struct spfkit__buf *out);

/* ---- counting: the block's thread only; NULL blocks count nothing ---- */

static inline void spfkit__metrics_bump(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline void spfkit__metrics_count(struct spfkit__metrics_block *b,
					 enum spfkit__metrics_counter c)
{
	if (b != NULL)
		spfkit__metrics_bump(&b->counters[c], 1);
}

static inline void spfkit__metrics_gauge(struct spfkit__metrics_block *b,
					 enum spfkit__metrics_gauge g, int delta)
{
	if (b != NULL)
		atomic_store_explicit(&b->gauges[g],
				      atomic_load_explicit(&b->gauges[g], memory_order_relaxed) + delta,
				      memory_order_relaxed);
}

/* One observation of `us` microseconds. */
void spfkit__metrics_observe(struct spfkit__metrics_hist *h, uint64_t us);

/* An identity's evaluation ended with `res` after `us` microseconds. */
void spfkit__metrics_check(struct spfkit__metrics_block *b, enum spfkit_identity id,
			   const struct spfkit_result *res, uint64_t us);

/* The daemon answered the MTA with `kind`. */
static inline void spfkit__metrics_action(struct spfkit__metrics_block *b,
					  enum spfkit__mta_kind kind)
{
	if (b != NULL && (unsigned)kind < SPFKIT__METRICS_ACTIONS)
		spfkit__metrics_bump(&b->actions[kind], 1);
}

/* The kind of a Postfix policy action: "dunno", "prepend ...", "550 ...", "defer_if_permit ...". */
enum spfkit__mta_kind spfkit__metrics_postfix_kind(const char *action);

/*
 * A DNS question of `type` went to the network (not answered from the
 * cache) and `answer` came back after `us` microseconds.
 */
void spfkit__metrics_dns(struct spfkit__metrics_block *b, uint16_t type,
			 const struct spfkit_dns_answer *answer, uint64_t us);

/* The outcome label of an answer (its status, and for a temporary failure its detail). */
enum spfkit__metrics_dns_outcome spfkit__metrics_dns_outcome(const struct spfkit_dns_answer *a);

#endif
