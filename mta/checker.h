/*
 * One client's SPF check as the three daemons run it (spfkit-policyd,
 * spfkit-milter, spfkit-smtpd-filter): the DNS whitelists of policyd-spf in its order
 * (Domain_Whitelist, HELO_Whitelist, Domain_Whitelist_PTR, each within
 * Whitelist_Lookup_Time), then the HELO identity, then MAIL FROM unless
 * the HELO result already decides (decision.h), each evaluation a
 * sans-I/O state machine fed by the resolver from a libevent loop within
 * Lookup_Time. What is left is protocol: the caller turns the inputs it
 * got (policy attributes, milter commands, filter lines) into a job and
 * the filled spfkit__mta_input into an answer with spfkit__mta_decide(),
 * or, when the check could not finish, spfkit__mta_unfinished().
 *
 * Everything runs on the loop's thread. Not an API.
 */
#ifndef SPFKIT_MTA_CHECKER_H
#define SPFKIT_MTA_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/eval.h>
#include <spfkit/event.h>
#include <spfkit/resolver.h>

#include "config.h"
#include "decision.h"
#include "list.h"

struct event;
struct event_base;
struct spfkit__metrics_block;

/* Where a check is: the DNS whitelists first, then the checks. */
enum spfkit__mta_phase {
	SPFKIT__MTA_PH_WL_DOMAIN = 0, /* Domain_Whitelist: an SPF pass for a listed domain */
	SPFKIT__MTA_PH_WL_HELO,       /* HELO_Whitelist: A/AAAA of a listed HELO name */
	SPFKIT__MTA_PH_WL_PTR,        /* Domain_Whitelist_PTR: the client's PTR names */
	SPFKIT__MTA_PH_WL_PTR_A,      /* ... and the forward check of the one found */
	SPFKIT__MTA_PH_CHECKS,        /* HELO, then MAIL FROM */
};

/* The loop a check runs on; the caller's, outliving every job. */
struct spfkit__mta_loop {
	struct event_base *base;
	struct spfkit_resolver *resolver; /* questions go here (the cache layer, if any) */
	struct spfkit_event *dnsloop;     /* kicked after questions are sent */
	struct spfkit__metrics_block *metrics; /* this loop's counts (metrics.h); NULL: none */
};

struct spfkit__mta_job;

/*
 * One DNS question in flight (checker.c's). 48 bytes: a policyd request
 * is one allocation holding the job with its question slots and the
 * request's texts, and below 1,032 bytes glibc serves it from its
 * per-thread cache (tcache) at a fifth of the instructions.
 */
struct spfkit__mta_question {
	struct spfkit__mta_job *job;
	uint64_t handle;
	uint64_t sent_us;
	struct spfkit__link link; /* in the job's questions */
	uint32_t id;
	unsigned type : 16;
	unsigned slot : 4; /* 1 + its index in the job's slots; 0: allocated on its own */
	unsigned raw : 1;  /* a whitelist's own question, not the evaluator's */
	/* counted (loop->metrics): sent to the network, not answered by the cache */
	unsigned network : 1;
};

/* Questions a job holds without an allocation of their own: an evaluation
 * with warm caches asks a few at a time. */
#define SPFKIT__MTA_QUESTION_SLOTS 4
/* slot holds 1 + an index */
_Static_assert(SPFKIT__MTA_QUESTION_SLOTS < 16, "question slots past the slot field");

/*
 * The end of a check, called exactly once per spfkit__mta_job_start()
 * (possibly from inside it). rc 0: j->in holds the bypass and the
 * identities' results (valid until spfkit__mta_job_cleanup()), ready
 * for spfkit__mta_decide(). Otherwise the check could not go on: rc is
 * the library's error while `doing`, and j->phase / j->stage tell where.
 * The callback may clean up and free the job; the checker does not
 * touch it after the call.
 */
typedef void spfkit__mta_job_done_fn(struct spfkit__mta_job *j, int rc, const char *doing);

struct spfkit__mta_job {
	/* The caller's, set before spfkit__mta_job_start(). */
	const struct spfkit__mta_loop *loop;
	const struct spfkit__mta_config *cfg;
	struct spfkit_ctx *ctx;
	struct spfkit_ip ip;          /* the client */
	struct spfkit__mta_input in;  /* sender, helo (empty: the sender's domain, flow.h),
					 client_ip, receiver; the rest is ours */
	int budget_s;                 /* whole check, whitelists included; 0: no cap */
	/* Optional: a timer of the caller's (from event_new(), not pending) lent for the
	 * job's deadline, so a check allocates none; cleanup stops it and gives it back. */
	struct event *lent_timer;
	spfkit__mta_job_done_fn *done;
	void *arg;
	/* The check's own. */
	enum spfkit__mta_phase phase;
	size_t wl_index;            /* next Domain_Whitelist entry */
	enum spfkit_identity stage; /* the identity being checked */
	struct spfkit_eval *ev[2];  /* indexed by enum spfkit_identity */
	struct spfkit_eval *wl_ev;  /* a Domain_Whitelist evaluation */
	struct spfkit_eval *cur;    /* the evaluation being fed answers */
	/* bytes, not ints: the job stays small (the question's comment) */
	unsigned char lazy_lookahead; /* cur's lookahead waits for a DNS cache miss */
	unsigned char deadline_on, budget_on; /* pending in the loop */
	unsigned char expired;      /* this phase's time is up */
	unsigned char over;         /* the whole budget is up: every later phase starts expired */
	int no_mail[2];
	struct spfkit__list questions; /* of struct spfkit__mta_question, open ones */
	struct spfkit__mta_question slot[SPFKIT__MTA_QUESTION_SLOTS];
	unsigned slots_used; /* a bit per slot */
	struct event *deadline;     /* Lookup_Time / Whitelist_Lookup_Time */
	struct event *budget;       /* budget_s */
	/* the clocks run from the phase's and the check's start; their timers
	 * are armed only when the check waits for an answer (checker.c) */
	uint64_t phase_end_ms;      /* CLOCK_MONOTONIC */
	uint64_t budget_end_ms;
	char ptr_name[256];         /* the Domain_Whitelist_PTR candidate */
	uint64_t stage_t0_us;       /* the identity's evaluation started (counted: loop->metrics) */
};

/* CLOCK_MONOTONIC in milliseconds: the checks' clocks, and the daemons' idle time. */
uint64_t spfkit__mta_now_ms(void);

/* Run the check of a filled job; may end (done called) before returning. */
void spfkit__mta_job_start(struct spfkit__mta_job *j);

/* Cancel what is in flight and free the check's own parts; the job
 * itself is the caller's. Safe at any time, and twice. */
void spfkit__mta_job_cleanup(struct spfkit__mta_job *j);

#endif
