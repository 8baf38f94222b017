/*
 * spfkit-milter's inside: main.c (options, socket, daemon), server.c
 * (one libevent loop: connections, the milter protocol's framing,
 * deadlines, caps), session.c (what each command does: the client, its
 * HELO, the check at MAIL FROM on the same loop through mta/checker.c),
 * headers.c (a message's header edits), macros.c (the MTA's macros),
 * proto.c (the wire format), text.c (pure text helpers). Not an API.
 */
#ifndef SPFKIT_MILTER_H
#define SPFKIT_MILTER_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/eval.h>
#include <spfkit/resolver.h>

#include "checker.h"
#include "config.h"
#include "decision.h"
#include "header_field.h"
#include "log.h"    /* mta/: the daemons' log channel */
#include "macros.h"
#include "proto.h"
#include "reload.h"

/*
 * The whole check of one MAIL FROM (whitelists, HELO, MAIL FROM) ends
 * within this many seconds (Milter_Time_Limit), whatever Lookup_Time
 * says: Postfix waits milter_command_timeout (30 s) for our answer and
 * then applies milter_default_action, so we answer well before.
 */
#define SPFKIT_MILTER_BUDGET_S 20

/* Caps on what a connection keeps (hostile clients: bounded memory). */
#define SPFKIT_MILTER_HELO_MAX 1024u    /* longer HELO names are cut (no valid one is) */
#define SPFKIT_MILTER_LOG_ADDR 200u     /* bytes of an address in a log line */
#define SPFKIT_MILTER_MAX_REMOVALS 4096u /* header indexes remembered per message */

/* The server's defaults (main.c's options; docs/milter.md "Limits"). */
#define SPFKIT_MILTER_MAX_CONNECTIONS 4096u
/* A packet must be whole this long after its first byte, and a new
 * connection must have negotiated by then: an MTA writes each packet at
 * once, and negotiates as soon as it connects. */
#define SPFKIT_MILTER_READ_TIMEOUT 30
/* Between two commands: the MTA waits for its SMTP client meanwhile
 * (Sendmail up to an hour for a command or a block of DATA). */
#define SPFKIT_MILTER_IDLE_TIMEOUT 3600
/* A reply must be taken by the MTA within this long. */
#define SPFKIT_MILTER_WRITE_TIMEOUT 30
#define SPFKIT_MILTER_ACCEPT_PAUSE_MS 250
#define SPFKIT_MILTER_LOG_INTERVAL 10

/* ---- text.c -------------------------------------------------------------- */

/* Our own Authentication-Results: spfkit__mta_ar_is_ours() (header_field.h). */

/* Is the header name `name` equal to `want`, ignoring ASCII case? */
int spfkit__milter_name_is(const char *name, const char *want);

/* A reply text for the MTA's reply: control bytes and non-ASCII become
 * '?', '%' is doubled (Sendmail and Postfix read the text as libmilter's
 * smfi_setreply() sent it), cut at a whole character to fit `size` (> 0).
 * Returns out. */
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

/* ---- the process-wide state (server.c) ------------------------------------ */

struct spfkit__milter_server_opts {
	size_t max_connections; /* 0: SPFKIT_MILTER_MAX_CONNECTIONS */
	int read_timeout;       /* seconds; 0: the default */
	int idle_timeout;
	const char *receiver;   /* this host for headers and %{r} */
	const struct spfkit_allocator *alloc; /* the evaluations' memory; NULL: libc (tests fail it) */
};

struct spfkit__milter_server;

/* What the sessions read: the configuration and the check's loop. */
struct spfkit__milter_state {
	struct spfkit__mta_gen *gen;    /* the configuration new checks take (reload.c) */
	struct spfkit__mta_config *cfg; /* gen's */
	const char *authserv_id; /* cfg->authserv_id */
	struct spfkit__mta_loop loop;
	struct spfkit_ctx *ctx;
	const char *receiver;
	int budget_s;            /* Milter_Time_Limit */
	int dns_cached;          /* answers come through a cache layer: contexts keep the record memo */
	const struct spfkit_allocator *alloc; /* the contexts' */
};

extern struct spfkit__milter_state spfkit__milter_g;

/*
 * The server on base, checks through r (the c-ares backend or a zone)
 * and cache (NULL, or a cache layer over r). cfg stays the caller's.
 * 0, or SPFKIT_ENOMEM.
 */
int spfkit__milter_server_new(struct event_base *base, const struct spfkit__milter_server_opts *o,
			      struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
			      struct spfkit_resolver *cache, struct spfkit__milter_server **out);
/* Serve a listening socket (taken). 0, or an error. */
int spfkit__milter_server_listen_fd(struct spfkit__milter_server *s, int fd);
/* Stop: no new connections, every connection closed, checks in flight cancelled. */
void spfkit__milter_server_stop(struct spfkit__milter_server *s);
void spfkit__milter_server_free(struct spfkit__milter_server *s);

/*
 * reload.c: configurations and SIGHUP. _start makes (cfg, ctx) the first
 * generation (ctx taken, cfg stays the caller's); a check holds the
 * current one (spfkit__mta_gen_hold) from its start to its end; _reload
 * makes cfg (taken, freed even on failure) the current one for the
 * checks that start from now on.
 */
int spfkit__milter_gen_start(struct spfkit__mta_config *cfg, struct spfkit_ctx *ctx);
int spfkit__milter_reload(struct spfkit__mta_config *cfg);

/* ---- a connection ----------------------------------------------------------- */

/* A header field to delete at end of message: its name and its index among those fields. */
struct spfkit__milter_removal {
	int received_spf; /* 0: Authentication-Results; 1: Received-SPF */
	unsigned index;   /* from 1, as the MTA counts them */
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

struct spfkit__milter_check;

/* The SMTP session's side of a connection (session.c, headers.c). */
struct spfkit__milter_session {
	int connected;    /* connect information seen */
	int accepted;     /* accepted at connect: nothing more is done */
	int have_ip;
	struct spfkit_ip ip;
	char ip_text[SPFKIT_IP_TEXT_MAX];
	char helo[SPFKIT_MILTER_HELO_MAX + 1];
	size_t helo_len;
	struct spfkit__milter_macros macros;
	struct spfkit__milter_msg msg;
	struct spfkit__milter_check *check; /* in flight, or NULL */
};

struct spfkit__milter_conn; /* server.c's */

/* The session of a connection, and the other way. */
struct spfkit__milter_session *spfkit__milter_session_of(struct spfkit__milter_conn *c);

/* Queue a reply packet (written at the end of the pass). */
void spfkit__milter_send(struct spfkit__milter_conn *c, char cmd, const void *data, size_t len);
/* Queue a header edit: 'i' or 'm' with an index, 'h' without (index ignored). */
void spfkit__milter_send_header(struct spfkit__milter_conn *c, char cmd, uint32_t index,
				const char *name, const char *value);
/* Queue 'y': "CODE XCODE TEXT" (xcode NULL or ""; text cleaned by spfkit__milter_reply_text). */
void spfkit__milter_send_reply(struct spfkit__milter_conn *c, const char *code, const char *xcode,
			       const char *text);
/* A timer of the connection's, lent to its check (mta/checker.h lent_timer). */
struct event *spfkit__milter_lent_timer(struct spfkit__milter_conn *c);
/* The actions the MTA allowed (SPFKIT_MILTER_F_*). */
uint32_t spfkit__milter_actions(const struct spfkit__milter_conn *c);
/* A check in flight ended: its reply was queued; go on with the connection. */
void spfkit__milter_resume(struct spfkit__milter_conn *c);

/* ---- session.c: what each command does --------------------------------------- */

/* Each queues the command's reply (or none for a MAIL FROM whose check is started:
 * spfkit__milter_resume() follows). 0, or -1: malformed, close the connection. */
int spfkit__milter_on_connect(struct spfkit__milter_conn *c, const unsigned char *d, size_t n);
void spfkit__milter_on_helo(struct spfkit__milter_conn *c, const unsigned char *d, size_t n);
/* 1: the check runs (no reply yet); 0: answered. */
int spfkit__milter_on_mail(struct spfkit__milter_conn *c, const unsigned char *d, size_t n);
void spfkit__milter_on_macro(struct spfkit__milter_conn *c, const unsigned char *d, size_t n);
void spfkit__milter_on_abort(struct spfkit__milter_conn *c);
/* Forget the SMTP session (QUIT, a new connection on the same socket, close). */
void spfkit__milter_session_end(struct spfkit__milter_session *s);

/* ---- headers.c: a message's header edits ----------------------------------- */

/* Forget the message (end, abort, a new MAIL FROM); the connection stays. */
void spfkit__milter_msg_reset(struct spfkit__milter_msg *m);
/* L: note our forged Authentication-Results (and Received-SPF if configured). */
void spfkit__milter_on_header(struct spfkit__milter_conn *c, const unsigned char *d, size_t n);
/* E: delete the forged fields (highest index first), insert ours at the top, answer. */
void spfkit__milter_on_eom(struct spfkit__milter_conn *c);

#endif
