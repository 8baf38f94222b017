/*
 * spfkit-milter's inside, shared by main.c (options, socket, daemon),
 * callbacks.c (libmilter's per-connection callbacks), worker.c (the one
 * thread that runs every SPF check on a libevent loop), text.c (pure
 * text helpers: authserv-id matching, reply text) and log.c. Not an API.
 */
#ifndef SPFKIT_MILTER_H
#define SPFKIT_MILTER_H

#include <stddef.h>

#include <spfkit/eval.h>
#include <spfkit/resolver.h>

#include "config.h"
#include "decision.h"
#include "header_field.h"
#include "log.h" /* mta/: the daemons' log channel */

/*
 * The whole check of one MAIL FROM (whitelists, HELO, MAIL FROM) ends
 * within this many seconds (Milter_Time_Limit), whatever Lookup_Time
 * says: Postfix waits milter_command_timeout (30 s) for our answer and
 * then applies milter_default_action, so we answer well before.
 */
#define SPFKIT_MILTER_BUDGET_S 20
/* A milter thread waits at most this much longer than the budget for the worker. */
#define SPFKIT_MILTER_GRACE_S 4

/* Caps on what a connection keeps (hostile clients: bounded memory). */
#define SPFKIT_MILTER_HELO_MAX 1024u    /* longer HELO names are cut (no valid one is) */
#define SPFKIT_MILTER_LOG_ADDR 200u     /* bytes of an address in a log line */
#define SPFKIT_MILTER_MAX_REMOVALS 4096u /* header indexes remembered per message */

/* ---- text.c -------------------------------------------------------------- */

/* Our own Authentication-Results: spfkit__mta_ar_is_ours() (header_field.h). */

/* Is the header name `name` equal to `want`, ignoring ASCII case? */
int spfkit__milter_name_is(const char *name, const char *want);

/* A reply text for smfi_setreply(): control bytes and non-ASCII become
 * '?', '%' is doubled (libmilter passes the text on as a format), cut at
 * a whole character to fit `size` (> 0). Returns out. */
char *spfkit__milter_reply_text(const char *in, char *out, size_t size);

/*
 * The parts of a refusing decision's action ("550 5.7.23 text",
 * "451 4.7.24 text", "defer_if_permit 4.7.24 text", or without the
 * enhanced code): the enhanced code (or "" when the configuration has
 * SPF_Enhanced_Status_Codes = No) into xcode (size >= 16), and where the
 * text begins. The SMTP code is the milter's: 550 for a reject, 451 for
 * a defer, whatever Postfix form the action has.
 */
const char *spfkit__milter_action_text(const char *action, char *xcode, size_t size);

/* "Name: value" -> name (cut at the colon, into name[size]) and the value. NULL if no colon. */
const char *spfkit__milter_header_split(const char *line, char *name, size_t size);

/* A copy of untrusted bytes fit for a log line: escaped, cut at cap, into buf. */
const char *spfkit__milter_esc(const char *s, size_t cap, char *buf, size_t size);
#define MESC(s) spfkit__milter_esc((s), 100, (char[512]){0}, 512)

/* ---- worker.c ------------------------------------------------------------ */

struct spfkit__milter_worker;

struct spfkit__milter_worker_opts {
	const struct spfkit__mta_config *cfg; /* outlives the worker */
	const char *receiver;                 /* this host for headers and %{r} */
	struct spfkit_resolver *backend;      /* c-ares or a zone */
	struct spfkit_resolver *cache;        /* NULL, or a cache layer over backend */
	int budget_s;                         /* Milter_Time_Limit; 0: SPFKIT_MILTER_BUDGET_S */
};

/* What a check needs; the strings are copied. */
struct spfkit__milter_query {
	struct spfkit_ip ip;
	const char *client_ip;       /* its text form */
	const char *sender;          /* without <>; "" for the null sender */
	size_t sender_len;
	const char *helo;
	size_t helo_len;
};

/* Start the worker thread with its loop and context. 0, SPFKIT_ENOMEM, SPFKIT_EINVAL. */
int spfkit__milter_worker_new(const struct spfkit__milter_worker_opts *o,
			      struct spfkit__milter_worker **out);

/*
 * Run one check on the worker and wait for it (from a libmilter thread).
 * 0 with *out filled; otherwise the check could not be done (out of
 * memory, the worker stopping, no answer within budget + grace): the
 * library error, or SPFKIT_ESTATE; the caller treats it as a local
 * temporary failure, never as an SPF result.
 */
int spfkit__milter_worker_check(struct spfkit__milter_worker *w,
				const struct spfkit__milter_query *q,
				struct spfkit__mta_decision *out);

/* Stop the loop, fail what is still waiting, join the thread, free all. NULL: no-op. */
void spfkit__milter_worker_free(struct spfkit__milter_worker *w);

/* ---- a connection (callbacks.c) and its message's header edits (headers.c) - */

/* A header field to delete at end of message: its name and its index among those fields. */
struct spfkit__milter_removal {
	int received_spf; /* 0: Authentication-Results; 1: Received-SPF */
	unsigned index;   /* from 1, as smfi_chgheader() counts */
};

/* What one message (MAIL FROM to end of message or abort) keeps. */
struct spfkit__milter_msg {
	int active;       /* MAIL FROM seen, not yet ended */
	int trusted;      /* authenticated, verified or MacroList: nothing done */
	int have_decision;
	struct spfkit__mta_decision d;
	unsigned ar_seen, rspf_seen; /* fields of each name seen so far */
	struct spfkit__milter_removal *removals;
	size_t n_removals, cap_removals;
	int too_many;     /* more forged fields than SPFKIT_MILTER_MAX_REMOVALS */
};

struct spfkit__milter_conn {
	int have_ip;
	struct spfkit_ip ip;
	char ip_text[SPFKIT_IP_TEXT_MAX];
	char helo[SPFKIT_MILTER_HELO_MAX + 1];
	size_t helo_len;
	struct spfkit__milter_msg msg;
};

/* Forget the message (end, abort, a new MAIL FROM); the connection stays. */
void spfkit__milter_msg_reset(struct spfkit__milter_msg *m);

struct smfi_str;
/* xxfi_header: note our forged Authentication-Results (and Received-SPF if configured). */
int spfkit__milter_on_header(struct smfi_str *ctx, char *name, char *value);
/* xxfi_eom: delete the forged fields (highest index first), insert ours at the top. */
int spfkit__milter_on_eom(struct smfi_str *ctx);

/* ---- callbacks.c --------------------------------------------------------- */

/* The process-wide state the libmilter callbacks read (they get no user pointer). */
struct spfkit__milter_state {
	struct spfkit__mta_config *cfg;
	struct spfkit__milter_worker *worker;
	const char *authserv_id; /* cfg->authserv_id */
};

extern struct spfkit__milter_state spfkit__milter_g;

/* libmilter's description of us (name, flags, callbacks). */
struct smfiDesc;
void spfkit__milter_describe(struct smfiDesc *desc);

#endif
