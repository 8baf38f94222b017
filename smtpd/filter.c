/*
 * spfkit-smtpd-filter: an OpenSMTPD proc-exec filter (smtpd-filters(7)).
 *
 * smtpd writes lines to our stdin: the configuration (config|...), then
 * report events and filter requests for every SMTP session. We keep a
 * session per link-connect (client address, HELO name, authenticated or
 * not), run the SPF check at the mail-from filter phase with the check
 * and decision code spfkit-policyd runs (mta/checker.c, mta/decision.c),
 * and answer reject (550 5.7.23, 451 4.7.24) or proceed. In the
 * data-line phase we prepend our header fields before the first line and
 * drop Authentication-Results fields that carry our authserv-id (RFC 8601
 * §5: a client has no right to our name).
 *
 * One libevent loop: smtpd's lines are read non-blocking and each check
 * runs on c-ares through the loop, so a slow answer for one session
 * never holds another session's lines. A disconnect cancels the check
 * in flight: no reply is written for a session smtpd has forgotten.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <spfkit/event.h>

#include "spfkit_util.h"
#include "checker.h"
#include "decision.h"
#include "engine.h"
#include "escape.h"
#include "filter.h"
#include "header_field.h"
#include "metrics.h"
#include "proto.h"
#include "unfinished.h"

/* An escaped, cut copy of untrusted bytes for a log line (mta/escape.c). */
#define ESC(s, n) spfkit__mta_escape((s), (n), 100, (char[512]){0}, 512)
#define FESC(f) ESC((f)->p, (f)->len)

/* ---- state ----------------------------------------------------------------- */

struct session;

/* One MAIL FROM's check in flight. */
struct eval {
	struct spfkit__mta_job chk; /* chk.arg is the eval */
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
	struct spfkit__mta_config *cfg;
	struct spfkit_ctx *ctx;
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

/* ---- output ------------------------------------------------------------------ */

static void out_line(struct spfkit__smtpd *f, const char *prefix, const char *rest, size_t len)
{
	struct evbuffer *b = bufferevent_get_output(f->out);
	size_t start = 0, i;

	evbuffer_add(b, prefix, strlen(prefix));
	/* a reply text never carries a line break into the protocol: CR, LF -> space */
	for (i = 0; i < len; i++) {
		if (rest[i] != '\r' && rest[i] != '\n')
			continue;
		evbuffer_add(b, rest + start, i - start);
		evbuffer_add(b, " ", 1);
		start = i + 1;
	}
	evbuffer_add(b, rest + start, len - start);
	evbuffer_add(b, "\n", 1);
	if (evbuffer_get_length(b) > SPFKIT_SMTPD_OUT_HIGH)
		bufferevent_disable(f->in, EV_READ); /* smtpd is not reading: stop taking lines */
}

static void reply(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
		  const char *session, const char *token, const char *result)
{
	char prefix[128];

	out_line(f, spfkit__smtpd_reply_prefix(v, "filter-result", session, token, prefix,
					       sizeof(prefix)),
		 result, strlen(result));
}

static void dataline(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
		     const char *session, const char *token, const char *line, size_t len)
{
	char prefix[128];

	out_line(f, spfkit__smtpd_reply_prefix(v, "filter-dataline", session, token, prefix,
					       sizeof(prefix)),
		 line, len);
}

/* ---- sessions ---------------------------------------------------------------- */

/*
 * smtpd draws session ids at random (arc4random), and only smtpd writes
 * to us, so the low bits of the id spread them well enough.
 */
static size_t bucket_of(const char *id, size_t len)
{
	size_t h = 0, i;

	for (i = 0; i < len; i++)
		h = h * 16 + (size_t)(spfkit__is_digit((unsigned char)id[i]) ? id[i] - '0'
									 : (spfkit__lower((unsigned char)id[i]) - 'a' + 10));
	return h % BUCKETS;
}

static struct session *session_find(struct spfkit__smtpd *f, const struct spfkit__smtpd_field *id)
{
	struct session *s;

	for (s = f->buckets[bucket_of(id->p, id->len)]; s != NULL; s = s->hnext)
		if (strlen(s->id) == id->len && memcmp(s->id, id->p, id->len) == 0)
			return s;
	return NULL;
}

static void eval_free(struct eval *e)
{
	if (e == NULL)
		return;
	if (e->chk.loop != NULL)
		spfkit__metrics_gauge(e->chk.loop->metrics, SPFKIT__METRICS_IN_FLIGHT, -1);
	spfkit__mta_job_cleanup(&e->chk);
	spfkit__arena_free(&e->arena);
	if (e->s != NULL)
		e->s->ev = NULL;
	spfkit__free(NULL, e);
}

/* The transaction's state: a new MAIL FROM, a reset, the end of a message. */
static void tx_clear(struct session *s)
{
	s->edits = 0;
	s->data = DATA_NONE;
	s->ar = AR_NONE;
	spfkit__buf_reset(&s->hold);
}

static void session_free(struct spfkit__smtpd *f, struct session *s)
{
	struct session **pp = &f->buckets[bucket_of(s->id, strlen(s->id))];

	while (*pp != NULL && *pp != s)
		pp = &(*pp)->hnext;
	if (*pp == s)
		*pp = s->hnext;
	/* a check in flight ends here: its answer would be for a session smtpd forgot */
	eval_free(s->ev);
	spfkit__buf_free(&s->hold);
	spfkit__free(NULL, s);
	f->n_sessions--;
	spfkit__metrics_gauge(f->loop.metrics, SPFKIT__METRICS_OPEN, -1);
}

/* ---- report events ------------------------------------------------------------ */

static void on_link_connect(struct spfkit__smtpd *f, const struct spfkit__smtpd_field *id,
			    const struct spfkit__smtpd_field *a, size_t n)
{
	struct session *s = session_find(f, id);
	char addr[128];

	/* rdns|fcrdns|src|dest; the PTR name is never an SPF input (RFC 7208 §5) */
	if (n != 4) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: link-connect with %zu fields, 4 expected; "
				  "ignored", FESC(id), n);
		return;
	}
	if (s != NULL) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: second link-connect; the session starts over",
				  FESC(id));
		session_free(f, s);
	}
	if (f->n_sessions >= SPFKIT_SMTPD_MAX_SESSIONS) {
		spfkit__mta_log_printf(LOG_ERR, "session %s: %u sessions open already; this one is not checked",
				  FESC(id), SPFKIT_SMTPD_MAX_SESSIONS);
		spfkit__metrics_count(f->loop.metrics, SPFKIT__METRICS_REFUSED);
		return;
	}
	s = spfkit__zalloc(NULL, sizeof(*s));
	if (s == NULL) {
		spfkit__mta_log_printf(LOG_ERR, "session %s: out of memory; not checked", FESC(id));
		return;
	}
	memcpy(s->id, id->p, id->len);
	s->id[id->len] = '\0';
	s->f = f;
	spfkit__buf_init(&s->hold, NULL, SPFKIT_SMTPD_AR_HOLD_MAX + SPFKIT_SMTPD_LINE_MAX + 2);
	if (spfkit__smtpd_src_address(&a[2], addr, sizeof(addr)) == 0 &&
	    spfkit_ip_parse(addr, strlen(addr), &s->ip) == 0) {
		s->have_ip = 1;
		spfkit_ip_format(&s->ip, s->ip_text, sizeof(s->ip_text));
		s->internal = spfkit__mta_net_match(&f->cfg->internal_hosts, &s->ip);
	} else if (!(a[2].len > 5 && memcmp(a[2].p, "unix:", 5) == 0)) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: client address \"%s\" not understood; "
				  "not checked", FESC(id), FESC(&a[2]));
	}
	s->hnext = f->buckets[bucket_of(s->id, id->len)];
	f->buckets[bucket_of(s->id, id->len)] = s;
	f->n_sessions++;
	spfkit__metrics_count(f->loop.metrics, SPFKIT__METRICS_CONNECTIONS);
	spfkit__metrics_gauge(f->loop.metrics, SPFKIT__METRICS_OPEN, 1);
	if (f->cfg->debug_level >= 2)
		spfkit__mta_log_printf(LOG_DEBUG, "session %s: client %s%s", s->id,
				  s->have_ip ? s->ip_text : "local", s->internal ? " (internal)" : "");
}

static void on_link_identify(struct session *s, const struct spfkit__smtpd_field *a, size_t n)
{
	/* method|identity; the identity is the last field and may hold '|' */
	size_t len;

	if (n < 2) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: link-identify without a name; ignored", s->id);
		return;
	}
	len = (size_t)(a[n - 1].p + a[n - 1].len - a[1].p); /* fields are contiguous in the line */
	if (len > SPFKIT_SMTPD_HELO_MAX)
		len = SPFKIT_SMTPD_HELO_MAX;
	memcpy(s->helo, a[1].p, len);
	s->helo[len] = '\0';
	s->helo_len = len;
}

static void on_link_auth(struct spfkit__smtpd *f, struct session *s,
			 const struct spfkit__smtpd_version *v, const struct spfkit__smtpd_field *a,
			 size_t n)
{
	/* 0.7: result|username; before: username|result (the username may hold '|') */
	const struct spfkit__smtpd_field *result;

	if (n < 2) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: link-auth with %zu fields; ignored", s->id, n);
		return;
	}
	result = spfkit__smtpd_version_ge(v, 0, 7) ? &a[0] : &a[n - 1];
	if (spfkit__smtpd_field_is(result, "pass")) {
		s->authenticated = 1;
		if (f->cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_DEBUG, "session %s: authenticated", s->id);
	}
}

/* The events we registered (register_all()) and read. */
static const char *const events[] = {
	"link-connect", "link-disconnect", "link-identify", "link-auth",
	"tx-begin", "tx-mail", "tx-reset", "tx-rollback", "tx-commit",
};

static int event_known(const struct spfkit__smtpd_field *event)
{
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (spfkit__smtpd_field_is(event, events[i]))
			return 1;
	return 0;
}

static void on_report(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
		      const struct spfkit__smtpd_field *event, const struct spfkit__smtpd_field *id,
		      const struct spfkit__smtpd_field *args, size_t n)
{
	struct session *s;

	if (!event_known(event)) {
		spfkit__mta_log_printf(LOG_NOTICE, "session %s: unknown event \"%s\"; ignored", FESC(id),
				  FESC(event));
		return;
	}
	if (spfkit__smtpd_field_is(event, "link-connect")) {
		on_link_connect(f, id, args, n);
		return;
	}
	s = session_find(f, id);
	if (s == NULL) {
		/* not tracked (refused above) or never seen: nothing to keep */
		if (f->cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_DEBUG, "session %s: %s for an unknown session", FESC(id),
					  FESC(event));
		return;
	}
	if (spfkit__smtpd_field_is(event, "link-disconnect"))
		session_free(f, s);
	else if (spfkit__smtpd_field_is(event, "link-identify"))
		on_link_identify(s, args, n);
	else if (spfkit__smtpd_field_is(event, "link-auth"))
		on_link_auth(f, s, v, args, n);
	else if (spfkit__smtpd_field_is(event, "tx-reset") ||
		 spfkit__smtpd_field_is(event, "tx-rollback") ||
		 spfkit__smtpd_field_is(event, "tx-commit"))
		tx_clear(s);
	/* tx-begin and tx-mail follow our mail-from answer, which had the address already */
}

/* ---- the check at mail-from ---------------------------------------------------- */

static const char *result_of(const struct spfkit__mta_check *c)
{
	return c->checked && c->res != NULL ? spfkit_result_name(c->res->code) : "-";
}

/*
 * What smtpd is told for a decision: a reject keeps the decision's
 * "550 5.7.23 ..."; a defer, written for Postfix as "451 ..." or
 * "defer_if_permit ...", becomes "451" with the same enhanced code and
 * text (RFC 7208 §8.6: temperror; §8.4: fail). Anything else proceeds.
 */
static void decision_reply(const struct spfkit__mta_decision *d, char *buf, size_t size)
{
	const char *rest = d->action + strcspn(d->action, " ");

	while (*rest == ' ')
		rest++;
	if (d->kind == SPFKIT__MTA_REJECT)
		snprintf(buf, size, "reject|%s", d->action);
	else if (d->kind == SPFKIT__MTA_DEFER)
		snprintf(buf, size, "reject|451 %s", rest);
	else
		snprintf(buf, size, "proceed");
}

static void on_check_done(struct spfkit__mta_job *chk, int rc, const char *doing)
{
	struct eval *e = chk->arg;
	struct session *s = e->s;
	struct spfkit__smtpd *f = s->f;
	const struct spfkit__mta_config *cfg = f->cfg;
	const struct spfkit__mta_input *in = &chk->in;
	char result[SPFKIT__MTA_TEXT_MAX + 32];

	if (rc != 0) {
		/* the daemons' one answer (mta/unfinished.h); no header claims a result */
		spfkit__mta_unfinished(cfg, chk, rc, &s->d);
		decision_reply(&s->d, result, sizeof(result));
		spfkit__mta_log_printf(LOG_ERR, "session %s: SPF check not finished: %s while %s; %s",
				       s->id, spfkit_strerror(rc), doing, result);
		/* forged headers still go when the mail does */
		s->edits = s->d.kind != SPFKIT__MTA_DEFER;
	} else {
		spfkit__mta_decide(cfg, in, &s->d);
		decision_reply(&s->d, result, sizeof(result));
		s->edits = s->d.kind != SPFKIT__MTA_REJECT && s->d.kind != SPFKIT__MTA_DEFER;
		if (cfg->debug_level >= 1)
			spfkit__mta_log_printf(LOG_INFO, "session %s: client=%s helo=%s from=<%s> "
					  "helo_result=%s mailfrom_result=%s decision=%s reply=\"%s\"",
					  s->id, in->client_ip, ESC(in->helo, in->helo_len),
					  ESC(in->sender, in->sender_len), result_of(&in->helo_check),
					  result_of(&in->mfrom_check), spfkit__mta_kind_name(s->d.kind),
					  ESC(result, strlen(result)));
	}
	spfkit__metrics_action(f->loop.metrics, s->d.kind);
	reply(f, &e->version, s->id, e->token, result);
	eval_free(e);
}

/* Out of memory before the check could start: the daemons' one answer (mta/unfinished.h). */
static void not_started(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			const char *sid, const char *tok)
{
	struct spfkit__mta_decision d;
	char result[SPFKIT__MTA_TEXT_MAX + 32];

	spfkit__mta_unfinished(f->cfg, NULL, SPFKIT_ENOMEM, &d);
	decision_reply(&d, result, sizeof(result));
	spfkit__mta_log_printf(LOG_ERR, "session %s: out of memory; not checked; %s", sid, result);
	reply(f, v, sid, tok, result);
}

static void on_mail_from(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			 const struct spfkit__smtpd_field *id, const struct spfkit__smtpd_field *token,
			 const struct spfkit__smtpd_field *param)
{
	char sid[SPFKIT_SMTPD_ID_MAX + 1], tok[SPFKIT_SMTPD_ID_MAX + 1];
	struct session *s = session_find(f, id);
	struct spfkit__smtpd_field addr;
	struct eval *e;
	const char *why = NULL;

	memcpy(sid, id->p, id->len);
	sid[id->len] = '\0';
	memcpy(tok, token->p, token->len);
	tok[token->len] = '\0';
	if (s == NULL)
		why = "unknown session";
	else if (s->ev != NULL)
		why = "a check is in flight already"; /* smtpd waits for our answer: not smtpd */
	else if (!s->have_ip)
		why = "local client";
	else if (s->internal)
		why = "internal host";
	else if (s->authenticated && f->cfg->skip_authenticated)
		why = "authenticated";
	if (s != NULL && s->ev == NULL)
		tx_clear(s);
	if (why != NULL) {
		if (f->cfg->debug_level >= 2 || s == NULL || s->ev != NULL)
			spfkit__mta_log_printf(s == NULL || s->ev != NULL ? LOG_WARNING : LOG_DEBUG,
					  "session %s: %s, not checked", sid, why);
		reply(f, v, sid, tok, "proceed");
		return;
	}
	e = spfkit__zalloc(NULL, sizeof(*e));
	if (e == NULL) {
		not_started(f, v, sid, tok);
		return;
	}
	spfkit__arena_init(&e->arena, NULL, 512, 0);
	e->s = s;
	e->version = *v;
	memcpy(e->token, tok, sizeof(tok));
	addr = spfkit__smtpd_mail_address(param);
	e->chk.loop = &f->loop;
	spfkit__metrics_count(f->loop.metrics, SPFKIT__METRICS_REQUESTS);
	spfkit__metrics_gauge(f->loop.metrics, SPFKIT__METRICS_IN_FLIGHT, 1);
	e->chk.cfg = f->cfg;
	e->chk.ctx = f->ctx;
	e->chk.ip = s->ip;
	e->chk.done = on_check_done;
	e->chk.arg = e;
	e->chk.in.sender = spfkit__arena_strndup(&e->arena, addr.p, addr.len);
	e->chk.in.sender_len = addr.len;
	e->chk.in.helo = spfkit__arena_strndup(&e->arena, s->helo, s->helo_len);
	e->chk.in.helo_len = s->helo_len;
	e->chk.in.client_ip = s->ip_text;
	e->chk.in.receiver = f->receiver;
	if (e->chk.in.sender == NULL || e->chk.in.helo == NULL) {
		not_started(f, v, sid, tok);
		e->s = NULL;
		eval_free(e);
		return;
	}
	s->ev = e;
	spfkit__mta_job_start(&e->chk); /* may answer before it returns */
}

/* ---- data lines ------------------------------------------------------------------ */

/* Is this header line the start of an Authentication-Results field? */
static int starts_ar(const char *line, size_t len)
{
	static const char name[] = "Authentication-Results";
	size_t n = sizeof(name) - 1, i;

	if (len <= n || !spfkit__memcaseeq(line, n, name, n))
		return 0;
	/* RFC 5322 §3.6.8 allows no space there, but obsolete syntax (§4.5) does */
	for (i = n; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	return i < len && line[i] == ':';
}

/*
 * The held field: drop it (ours) or pass it (not ours); its next lines
 * follow that. `complete`: the field has ended. Otherwise it outgrew
 * what we hold (SPFKIT_SMTPD_AR_HOLD_MAX), or we could hold no more, and
 * we judge what we have. When its authserv-id is still open there (8 KiB
 * of folded comment lines, say), what follows could name us: it goes as
 * ours. No host's field is that long before its first ';', and a field
 * we cannot read is not one we need to keep (RFC 8601 §5, §7.8). The
 * other way, a scanner streaming over its lines, would still have to
 * hold every line until the verdict: memory without bound.
 */
static void ar_judge(struct spfkit__smtpd *f, struct session *s, int complete)
{
	struct spfkit__buf *h = &s->hold;
	const char *colon, *id = f->cfg->authserv_id;
	char *text;
	size_t i, start;
	enum spfkit__mta_ar_owner owner = SPFKIT__MTA_AR_OTHER;

	if (s->ar != AR_HOLD)
		return;
	text = h->data;
	if (text == NULL || h->len == 0) {
		s->ar = AR_NONE;
		return;
	}
	colon = memchr(text, ':', h->len);
	if (colon != NULL)
		owner = spfkit__mta_ar_owner(colon + 1, h->len - (size_t)(colon + 1 - text), id,
					     complete);
	if (owner == SPFKIT__MTA_AR_OURS) {
		spfkit__mta_log_printf(LOG_NOTICE, "session %s: Authentication-Results carrying our "
				  "authserv-id %s removed (forged)", s->id, id);
		s->ar = AR_DROP;
	} else if (owner == SPFKIT__MTA_AR_UNKNOWN) {
		spfkit__mta_log_printf(LOG_NOTICE, "session %s: Authentication-Results with no "
				  "authserv-id in its first %zu bytes removed (it could name ours)",
				  s->id, h->len);
		s->ar = AR_DROP;
	} else {
		/* a NUL a client slipped in goes out as a space: smtpd's lines never hold one */
		for (start = 0, i = 0; i < h->len; i++) {
			if (text[i] == '\0')
				text[i] = ' ';
			if (text[i] == '\n') {
				dataline(f, &s->hold_version, s->id, s->hold_token, text + start,
					 i - start);
				start = i + 1;
			}
		}
		s->ar = AR_PASS;
	}
	spfkit__buf_reset(h);
}

/* Hold one line of the field; it goes out, or not, with the field. */
static void hold_line(struct spfkit__smtpd *f, struct session *s,
		      const struct spfkit__smtpd_version *v, const char *token, const char *line,
		      size_t len)
{
	if (spfkit__buf_append(&s->hold, line, len) != 0 || spfkit__buf_putc(&s->hold, '\n') != 0) {
		/* cannot keep it: judge on what is held; this line follows the verdict */
		ar_judge(f, s, 0);
		if (s->ar == AR_PASS)
			dataline(f, v, s->id, token, line, len);
		return;
	}
	if (s->hold.len > SPFKIT_SMTPD_AR_HOLD_MAX)
		ar_judge(f, s, 0);
}

static void prepend_ours(struct spfkit__smtpd *f, struct session *s,
			 const struct spfkit__smtpd_version *v, const char *token)
{
	size_t i;

	for (i = 0; i < s->d.header_count; i++)
		dataline(f, v, s->id, token, s->d.headers[i], strlen(s->d.headers[i]));
}

static void on_data_line(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			 const struct spfkit__smtpd_field *id, const struct spfkit__smtpd_field *token,
			 const struct spfkit__smtpd_field *line)
{
	char sid[SPFKIT_SMTPD_ID_MAX + 1], tok[SPFKIT_SMTPD_ID_MAX + 1];
	struct session *s = session_find(f, id);
	int end = spfkit__smtpd_field_is(line, ".");

	memcpy(sid, id->p, id->len);
	sid[id->len] = '\0';
	memcpy(tok, token->p, token->len);
	tok[token->len] = '\0';
	if (s == NULL || !s->edits) {
		/* nothing to change: every line goes back as it came */
		dataline(f, v, sid, tok, line->p, line->len);
		if (s != NULL && end)
			tx_clear(s);
		return;
	}
	if (s->data == DATA_NONE) {
		s->data = DATA_HEADER;
		prepend_ours(f, s, v, tok);
	}
	if (s->data == DATA_HEADER) {
		int continuation = line->len > 0 && (line->p[0] == ' ' || line->p[0] == '\t');

		if (continuation && s->ar == AR_HOLD) {
			hold_line(f, s, v, tok, line->p, line->len);
			return;
		}
		if (continuation && s->ar == AR_DROP)
			return;
		if (!continuation) {
			ar_judge(f, s, 1); /* the field before ends here */
			s->ar = AR_NONE;
			if (line->len == 0 || end)
				s->data = DATA_BODY;
			else if (starts_ar(line->p, line->len)) {
				s->ar = AR_HOLD;
				memcpy(s->hold_token, tok, sizeof(tok));
				s->hold_version = *v;
				hold_line(f, s, v, tok, line->p, line->len);
				return;
			}
		}
	}
	dataline(f, v, sid, tok, line->p, line->len);
	if (end)
		tx_clear(s);
}

/* ---- requests ---------------------------------------------------------------------- */

static void on_filter(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
		      const struct spfkit__smtpd_field *fl, size_t n)
{
	/* filter|VER|TIME|SUBSYSTEM|PHASE|SESSION|TOKEN|... */
	const struct spfkit__smtpd_field *phase = &fl[4], *id = &fl[5], *token = &fl[6];
	static const struct spfkit__smtpd_field empty = {"", 0};
	const struct spfkit__smtpd_field *param = n > 7 ? &fl[7] : &empty;

	if (n < 7 || !spfkit__smtpd_id_ok(id) || !spfkit__smtpd_id_ok(token)) {
		spfkit__mta_log_printf(LOG_WARNING, "filter request without a valid session id and token; "
				  "ignored: %s", ESC(fl[0].p, (size_t)(fl[n - 1].p + fl[n - 1].len - fl[0].p)));
		return;
	}
	if (spfkit__smtpd_field_is(phase, "mail-from")) {
		on_mail_from(f, v, id, token, param);
		return;
	}
	if (spfkit__smtpd_field_is(phase, "data-line")) {
		on_data_line(f, v, id, token, param);
		return;
	}
	/* not registered: smtpd waits for an answer all the same, so give the neutral one */
	spfkit__mta_log_printf(LOG_WARNING, "session %s: filter phase \"%s\" not registered; proceed",
			  FESC(id), FESC(phase));
	{
		char sid[SPFKIT_SMTPD_ID_MAX + 1], tok[SPFKIT_SMTPD_ID_MAX + 1];

		memcpy(sid, id->p, id->len);
		sid[id->len] = '\0';
		memcpy(tok, token->p, token->len);
		tok[token->len] = '\0';
		reply(f, v, sid, tok, "proceed");
	}
}

/* ---- configuration and registration ----------------------------------------------------- */

static void out_text(struct spfkit__smtpd *f, const char *text)
{
	out_line(f, "", text, strlen(text));
}

static void register_all(struct spfkit__smtpd *f)
{
	char line[128];
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(line, sizeof(line), "register|report|smtp-in|%s", events[i]);
		out_text(f, line);
	}
	out_text(f, "register|filter|smtp-in|mail-from");
	out_text(f, "register|filter|smtp-in|data-line");
	out_text(f, "register|ready");
}

/* An authserv-id smtpd may give us (RFC 8601 §2.2: a token); cut at 255. */
static int admd_ok(const struct spfkit__smtpd_field *v)
{
	size_t i;

	if (v->len == 0 || v->len > 255)
		return 0;
	for (i = 0; i < v->len; i++) {
		unsigned char c = (unsigned char)v->p[i];

		if (!spfkit__is_vchar(c) || strchr("()<>@,;:\\\"/[]?=", c) != NULL)
			return 0;
	}
	return 1;
}

static void on_config(struct spfkit__smtpd *f, const struct spfkit__smtpd_field *fl, size_t n)
{
	const struct spfkit__smtpd_field *key = &fl[1];

	if (n < 2) {
		spfkit__mta_log_printf(LOG_WARNING, "config line without a key; ignored");
		return;
	}
	if (spfkit__smtpd_field_is(key, "ready")) {
		if (f->configured) {
			spfkit__mta_log_printf(LOG_WARNING, "second config|ready; ignored");
			return;
		}
		f->configured = 1;
		register_all(f);
		return;
	}
	if (n < 3) {
		spfkit__mta_log_printf(LOG_WARNING, "config line without a value; ignored: %s",
				  FESC(key));
		return;
	}
	if (spfkit__smtpd_field_is(key, "admd")) {
		char *id;

		if (!admd_ok(&fl[2])) {
			spfkit__mta_log_printf(LOG_WARNING, "config|admd \"%s\" is no authserv-id; keeping %s",
					  FESC(&fl[2]), f->cfg->authserv_id);
			return;
		}
		id = spfkit__strndup(NULL, fl[2].p, fl[2].len);
		if (id == NULL) {
			spfkit__mta_log_printf(LOG_ERR, "out of memory; keeping authserv-id %s",
					  f->cfg->authserv_id);
			return;
		}
		/* smtpd's admd is the site's word for our name: headers and forged-field checks use it */
		spfkit__free(f->cfg->alloc, f->cfg->authserv_id);
		f->cfg->authserv_id = id;
		return;
	}
	if (spfkit__smtpd_field_is(key, "protocol")) {
		struct spfkit__smtpd_version v;

		if (spfkit__smtpd_version_parse(&fl[2], &v) != 0)
			spfkit__mta_log_printf(LOG_WARNING, "config|protocol \"%s\" is no version", FESC(&fl[2]));
		return;
	}
	/* smtpd-version, smtp-session-timeout, subsystem: nothing to do with them */
}

/* ---- one line ------------------------------------------------------------------- */

static void on_line(struct spfkit__smtpd *f, const char *line, size_t len)
{
	struct spfkit__smtpd_field fl[SPFKIT_SMTPD_MAX_FIELDS];
	struct spfkit__smtpd_version v;
	size_t n;
	int is_report, is_filter;

	/* a report's fields are all cut ('|' may appear only in the last one) */
	n = spfkit__smtpd_split(line, len, fl, SPFKIT_SMTPD_MAX_FIELDS);
	if (spfkit__smtpd_field_is(&fl[0], "config")) {
		n = spfkit__smtpd_split(line, len, fl, 3);
		on_config(f, fl, n);
		return;
	}
	is_report = spfkit__smtpd_field_is(&fl[0], "report");
	is_filter = spfkit__smtpd_field_is(&fl[0], "filter");
	if (!is_report && !is_filter) {
		spfkit__mta_log_printf(LOG_WARNING, "unknown line ignored: %s", ESC(line, len));
		return;
	}
	if (n < 6) {
		spfkit__mta_log_printf(LOG_WARNING, "%s line with %zu fields ignored: %s", is_report ?
				  "report" : "filter", n, ESC(line, len));
		return;
	}
	if (spfkit__smtpd_version_parse(&fl[1], &v) != 0) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: protocol version \"%s\" not understood; "
				  "line ignored", FESC(&fl[5]), FESC(&fl[1]));
		return;
	}
	if (!spfkit__smtpd_version_ge(&v, SPFKIT_SMTPD_PROTO_MAJOR, SPFKIT_SMTPD_PROTO_MINOR + 1) ||
	    f->told_newer) {
		/* known */
	} else {
		f->told_newer = 1;
		spfkit__mta_log_printf(LOG_NOTICE, "protocol version %u.%u is newer than %u.%u: read as %u.%u "
				  "while its lines parse", v.major, v.minor, SPFKIT_SMTPD_PROTO_MAJOR,
				  SPFKIT_SMTPD_PROTO_MINOR, SPFKIT_SMTPD_PROTO_MAJOR,
				  SPFKIT_SMTPD_PROTO_MINOR);
	}
	if (!spfkit__smtpd_field_is(&fl[3], "smtp-in")) {
		spfkit__mta_log_printf(LOG_WARNING, "session %s: subsystem \"%s\" not registered; ignored",
				  FESC(&fl[5]), FESC(&fl[3]));
		return;
	}
	if (is_filter) {
		/* the last field (a data line, an address) is taken whole, '|' included */
		n = spfkit__smtpd_split(line, len, fl, 8);
		on_filter(f, &v, fl, n);
		return;
	}
	if (!spfkit__smtpd_id_ok(&fl[5])) {
		spfkit__mta_log_printf(LOG_WARNING, "report with session id \"%s\" ignored", FESC(&fl[5]));
		return;
	}
	on_report(f, &v, &fl[4], &fl[5], fl + 6, n - 6);
}

/* ---- I/O ------------------------------------------------------------------------- */

static void stop_soon(struct spfkit__smtpd *f);

static void on_read(struct bufferevent *bev, void *arg)
{
	struct spfkit__smtpd *f = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	while (!f->eof) {
		struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_LF);
		size_t avail = evbuffer_get_length(in), len;
		char *line;

		if (eol.pos < 0) {
			if (avail > SPFKIT_SMTPD_LINE_MAX) {
				/* no line of smtpd's is this long: drop it, and its tail as it comes */
				if (!f->skipping)
					spfkit__mta_log_printf(LOG_WARNING, "line longer than %u bytes dropped",
							  SPFKIT_SMTPD_LINE_MAX);
				evbuffer_drain(in, avail);
				f->skipping = 1;
			}
			return;
		}
		len = (size_t)eol.pos;
		if (f->skipping || len > SPFKIT_SMTPD_LINE_MAX) {
			if (!f->skipping)
				spfkit__mta_log_printf(LOG_WARNING, "line longer than %u bytes dropped",
						  SPFKIT_SMTPD_LINE_MAX);
			f->skipping = 0;
			evbuffer_drain(in, len + 1);
			continue;
		}
		line = (char *)evbuffer_pullup(in, eol.pos + 1);
		if (line == NULL) {
			spfkit__mta_log_printf(LOG_ERR, "out of memory reading a line; stopping");
			stop_soon(f);
			return;
		}
		if (len > 0 && line[len - 1] == '\r')
			len--;
		on_line(f, line, len);
		evbuffer_drain(in, (size_t)eol.pos + 1);
	}
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__smtpd *f = arg;

	(void)fd;
	(void)what;
	event_base_loopexit(f->base, NULL);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct spfkit__smtpd *f = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) <= SPFKIT_SMTPD_OUT_LOW && !f->eof)
		bufferevent_enable(f->in, EV_READ);
	if (f->eof && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		event_base_loopexit(f->base, NULL);
}

static void on_in_event(struct bufferevent *bev, short what, void *arg)
{
	struct spfkit__smtpd *f = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR)
		spfkit__mta_log_printf(LOG_ERR, "reading from smtpd: %s", strerror(errno));
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		stop_soon(f);
}

static void on_out_event(struct bufferevent *bev, short what, void *arg)
{
	struct spfkit__smtpd *f = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR)
		spfkit__mta_log_printf(LOG_ERR, "writing to smtpd: %s", strerror(errno));
	/* nobody reads us any more: nothing left to do */
	event_base_loopexit(f->base, NULL);
}

static void free_sessions(struct spfkit__smtpd *f)
{
	size_t i;

	for (i = 0; i < BUCKETS; i++)
		while (f->buckets[i] != NULL)
			session_free(f, f->buckets[i]);
}

/*
 * smtpd closed our stdin: it is going away, and no answer we could still
 * give would be read. Cancel the checks; give the output already written
 * a moment to drain, then end.
 */
static void stop_soon(struct spfkit__smtpd *f)
{
	struct timeval drain = {2, 0};

	if (f->eof)
		return;
	f->eof = 1;
	bufferevent_disable(f->in, EV_READ);
	free_sessions(f);
	if (evbuffer_get_length(bufferevent_get_output(f->out)) == 0) {
		event_base_loopexit(f->base, NULL);
		return;
	}
	if (f->stop != NULL)
		evtimer_add(f->stop, &drain);
	else
		event_base_loopexit(f->base, NULL);
}

/* ---- the filter ---------------------------------------------------------------------- */

int spfkit__smtpd_new(struct event_base *base, const struct spfkit__smtpd_opts *opts,
		      struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
		      struct spfkit_resolver *cache, struct spfkit__smtpd **out)
{
	struct spfkit__smtpd *f = spfkit__zalloc(NULL, sizeof(*f));

	if (f == NULL)
		return SPFKIT_ENOMEM;
	f->base = base;
	f->opts = *opts;
	if (opts->receiver != NULL)
		snprintf(f->receiver, sizeof(f->receiver), "%s", opts->receiver);
	else if (gethostname(f->receiver, sizeof(f->receiver) - 1) != 0)
		snprintf(f->receiver, sizeof(f->receiver), "unknown");
	/* the SPF context and DNS on the loop, as every daemon has them (mta/engine.h) */
	if (spfkit__mta_ctx_new(cfg, f->receiver, cache != NULL, opts->alloc, &f->ctx) != 0 ||
	    spfkit__mta_dns_attach(base, r, cache, &f->dnsloop) != 0)
		goto fail;
	evutil_make_socket_nonblocking(opts->in_fd);
	evutil_make_socket_nonblocking(opts->out_fd);
	f->in = bufferevent_socket_new(base, opts->in_fd, 0);
	f->out = bufferevent_socket_new(base, opts->out_fd, 0);
	f->stop = evtimer_new(base, on_stop, f);
	if (f->in == NULL || f->out == NULL || f->stop == NULL)
		goto fail;
	f->loop.base = base;
	f->loop.resolver = cache != NULL ? cache : r;
	f->loop.dnsloop = f->dnsloop;
	f->loop.metrics = spfkit__metrics_block(opts->metrics);
	bufferevent_setcb(f->in, on_read, NULL, on_in_event, f);
	bufferevent_setcb(f->out, NULL, on_write, on_out_event, f);
	bufferevent_setwatermark(f->out, EV_WRITE, SPFKIT_SMTPD_OUT_LOW, 0);
	bufferevent_enable(f->out, EV_WRITE);
	bufferevent_enable(f->in, EV_READ);
	f->cfg = cfg;
	*out = f;
	return 0;
fail:
	if (f->in != NULL)
		bufferevent_free(f->in);
	if (f->out != NULL)
		bufferevent_free(f->out);
	if (f->stop != NULL)
		event_free(f->stop);
	spfkit_event_detach(f->dnsloop);
	spfkit_ctx_free(f->ctx);
	spfkit__free(NULL, f);
	return SPFKIT_ENOMEM;
}

void spfkit__smtpd_free(struct spfkit__smtpd *f)
{
	if (f == NULL)
		return;
	free_sessions(f);
	bufferevent_free(f->in);
	bufferevent_free(f->out);
	event_free(f->stop);
	spfkit_event_detach(f->dnsloop);
	spfkit_ctx_free(f->ctx);
	spfkit__mta_config_free(f->cfg);
	spfkit__free(NULL, f);
}
