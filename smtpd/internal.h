/*
 * spfkit-smtpd-filter's parts (not an API): filter.c reads smtpd's lines
 * and dispatches them (configuration and registration, report events,
 * filter requests) and runs the I/O; output.c writes the protocol back;
 * session.c keeps the SMTP sessions from the report events; check.c runs
 * the SPF check at mail-from (mta/checker.c, mta/decision.c) and answers
 * it; data.c edits a checked message's header section in the data-line
 * phase.
 */
#ifndef SPFKIT_SMTPD_INTERNAL_H
#define SPFKIT_SMTPD_INTERNAL_H

#include <stddef.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include <spfkit/event.h>

#include "spfkit_util.h"
#include "checker.h"
#include "decision.h"
#include "escape.h"
#include "filter.h"
#include "metrics.h"
#include "proto.h"
#include "reload.h"

/* An escaped, cut copy of untrusted bytes for a log line (mta/escape.c). */
#define ESC(s, n) spfkit__mta_escape((s), (n), 100, (char[512]){0}, 512)
#define FESC(f) ESC((f)->p, (f)->len)

struct session;

/* One MAIL FROM's check in flight. */
struct eval {
	struct spfkit__mta_job chk; /* chk.arg is the eval */
	struct spfkit__mta_gen *gen; /* chk.cfg and chk.ctx's, held till the check ends */
	struct session *s;
	struct spfkit__smtpd_version version; /* of the request: the reply's field order */
	char token[SPFKIT_SMTPD_ID_MAX + 1];
	struct spfkit__arena arena; /* copies of the sender and HELO */
};

/* Where a message's data lines are. */
enum data_state {
	DATA_NONE = 0, /* not in the data-line phase */
	DATA_HEADER,   /* in the header section */
	DATA_BODY,     /* after the empty line */
};

/* An Authentication-Results field being read (data lines, header section). */
enum ar_state {
	AR_NONE = 0, /* not in such a field */
	AR_HOLD,     /* held until its authserv-id is known */
	AR_DROP,     /* ours, forged: its continuation lines go too */
	AR_PASS,     /* not ours: its continuation lines go out */
};

struct session {
	char id[SPFKIT_SMTPD_ID_MAX + 1];
	struct spfkit__smtpd *f;
	int have_ip;           /* an IP client (not a local socket) */
	struct spfkit_ip ip;
	char ip_text[SPFKIT_IP_TEXT_MAX];
	int internal;          /* InternalHosts: not checked */
	int authenticated;     /* link-auth pass: not checked (Skip_Authenticated) */
	char helo[SPFKIT_SMTPD_HELO_MAX + 1];
	size_t helo_len;
	struct eval *ev;       /* the check in flight, if any */
	/* the transaction: what the data lines get */
	int edits;             /* prepend ours and drop forged fields */
	struct spfkit__mta_decision d;
	enum data_state data;
	enum ar_state ar;
	struct spfkit__buf hold; /* the held field's lines, each ending in '\n' */
	char hold_token[SPFKIT_SMTPD_ID_MAX + 1];
	struct spfkit__smtpd_version hold_version;
	struct session *hnext;
};

#define BUCKETS 4096u

struct spfkit__smtpd {
	struct event_base *base;
	struct spfkit__smtpd_opts opts;
	struct spfkit__mta_gen *gen;    /* the configuration new checks take (reload.c) */
	struct spfkit__mta_config *cfg; /* gen's */
	struct spfkit_ctx *ctx;         /* gen's */
	int dns_cached;                 /* a cache layer answers: contexts keep the record memo */
	int admd_set;                   /* config|admd gave the authserv-id: kept over reloads */
	char receiver[256];
	struct spfkit_event *dnsloop;
	struct spfkit__mta_loop loop;
	struct bufferevent *in, *out;
	int configured;       /* config|ready seen, registered */
	int eof;              /* smtpd closed our stdin */
	int told_newer;       /* a newer protocol version was logged once */
	int skipping;         /* dropping the tail of an overlong line */
	struct session *buckets[BUCKETS];
	size_t n_sessions;
	struct event *stop;   /* after EOF: a last chance for the output to drain */
};

/*
 * reload.c: configurations; a check holds the one it began with
 * (spfkit__mta_gen_hold; see filter.h's reload). cfg and ctx taken.
 */
int spfkit__smtpd_gen_start(struct spfkit__smtpd *f, struct spfkit__mta_config *cfg,
			    struct spfkit_ctx *ctx);

/* output.c: protocol lines to smtpd (a reply text's CR and LF become spaces) */
void spfkit__smtpd_out_line(struct spfkit__smtpd *f, const char *prefix, const char *rest,
			    size_t len);
void spfkit__smtpd_out_text(struct spfkit__smtpd *f, const char *text);
/* "filter-result|...|RESULT" and "filter-dataline|...|LINE" in the request's version's order */
void spfkit__smtpd_send_result(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			       const char *session, const char *token, const char *result);
void spfkit__smtpd_send_dataline(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
				 const char *session, const char *token, const char *line,
				 size_t len);

/* session.c: the sessions of the report events */
struct session *spfkit__smtpd_session_find(struct spfkit__smtpd *f,
					   const struct spfkit__smtpd_field *id);
void spfkit__smtpd_session_free(struct spfkit__smtpd *f, struct session *s);
/* The transaction's state: a new MAIL FROM, a reset, the end of a message. */
void spfkit__smtpd_tx_clear(struct session *s);
/* Cancel a check and free it; NULL: no-op. */
void spfkit__smtpd_eval_free(struct eval *e);
/* "register|report|smtp-in|EVENT" for each event on_report reads */
void spfkit__smtpd_register_reports(struct spfkit__smtpd *f);
void spfkit__smtpd_on_report(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			     const struct spfkit__smtpd_field *event,
			     const struct spfkit__smtpd_field *id,
			     const struct spfkit__smtpd_field *args, size_t n);

/* check.c: the mail-from filter request; answered now or when the check ends */
void spfkit__smtpd_on_mail_from(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
				const struct spfkit__smtpd_field *id,
				const struct spfkit__smtpd_field *token,
				const struct spfkit__smtpd_field *param);

/* data.c: one data-line filter request */
void spfkit__smtpd_on_data_line(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
				const struct spfkit__smtpd_field *id,
				const struct spfkit__smtpd_field *token,
				const struct spfkit__smtpd_field *line);

#endif
