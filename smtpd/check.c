/*
 * spfkit-smtpd-filter: the SPF check at the mail-from phase, through the
 * daemons' engine (mta/checker.c, mta/decision.c, mta/unfinished.c), and
 * its answer (internal.h).
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "internal.h"
#include "outcome.h"
#include "unfinished.h"

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
	const struct spfkit__mta_config *cfg = chk->cfg; /* the one it began with, reloaded or not */
	const struct spfkit__mta_input *in = &chk->in;
	char result[SPFKIT__MTA_TEXT_MAX + 32];

	if (rc != 0) {
		/* the daemons' one answer (mta/unfinished.h); no header claims a result */
		spfkit__mta_unfinished(cfg, chk, rc, &s->d);
		decision_reply(&s->d, result, sizeof(result));
		spfkit__mta_log_printf(LOG_ERR, "session %s: SPF check not finished: %s while %s; "
				       "reason=%s %s", s->id, spfkit_strerror(rc), doing,
				       spfkit__mta_unfinished_reason(rc), result);
		/* forged headers still go when the mail does */
		s->edits = s->d.kind != SPFKIT__MTA_DEFER;
	} else {
		spfkit__mta_decide(cfg, in, &s->d);
		decision_reply(&s->d, result, sizeof(result));
		s->edits = s->d.kind != SPFKIT__MTA_REJECT && s->d.kind != SPFKIT__MTA_DEFER;
		if (cfg->debug_level >= 1) {
			const char *reason = spfkit__mta_reason_of(in);

			spfkit__mta_log_printf(LOG_INFO, "session %s: client=%s helo=%s from=<%s> "
					  "helo_result=%s mailfrom_result=%s%s%s decision=%s "
					  "reply=\"%s\"", s->id, in->client_ip,
					  ESC(in->helo, in->helo_len), ESC(in->sender, in->sender_len),
					  spfkit__mta_result_of(&in->helo_check),
					  spfkit__mta_result_of(&in->mfrom_check),
					  reason != NULL ? " reason=" : "", reason != NULL ? reason : "",
					  spfkit__mta_kind_name(s->d.kind), ESC(result, strlen(result)));
		}
	}
	spfkit__metrics_action(f->loop.metrics, s->d.kind);
	spfkit__smtpd_send_result(f, &e->version, s->id, e->token, result);
	spfkit__smtpd_eval_free(e);
}

/* Out of memory before the check could start: the daemons' one answer (mta/unfinished.h). */
static void not_started(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			const char *sid, const char *tok)
{
	struct spfkit__mta_decision d;
	char result[SPFKIT__MTA_TEXT_MAX + 32];

	spfkit__mta_unfinished(f->cfg, NULL, SPFKIT_ENOMEM, &d);
	decision_reply(&d, result, sizeof(result));
	spfkit__mta_log_printf(LOG_ERR, "session %s: out of memory; not checked; reason=%s %s", sid,
			       spfkit__mta_unfinished_reason(SPFKIT_ENOMEM), result);
	spfkit__smtpd_send_result(f, v, sid, tok, result);
}

void spfkit__smtpd_on_mail_from(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
				const struct spfkit__smtpd_field *id,
				const struct spfkit__smtpd_field *token,
				const struct spfkit__smtpd_field *param)
{
	char sid[SPFKIT_SMTPD_ID_MAX + 1], tok[SPFKIT_SMTPD_ID_MAX + 1];
	struct session *s = spfkit__smtpd_session_find(f, id);
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
	else
		why = spfkit__mta_session_trusted(f->cfg, s->authenticated, 0);
	if (s != NULL && s->ev == NULL)
		spfkit__smtpd_tx_clear(s);
	if (why != NULL) {
		if (f->cfg->debug_level >= 2 || s == NULL || s->ev != NULL)
			spfkit__mta_log_printf(s == NULL || s->ev != NULL ? LOG_WARNING : LOG_DEBUG,
					  "session %s: %s, not checked", sid, why);
		spfkit__smtpd_send_result(f, v, sid, tok, "proceed");
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
	e->gen = spfkit__mta_gen_hold(f->gen);
	e->chk.cfg = f->cfg;
	e->chk.ctx = f->ctx;
	e->chk.ip = s->ip;
	e->chk.done = on_check_done;
	e->chk.arg = e;
	e->chk.in.sender = spfkit__arena_strndup(&e->arena, addr.p, addr.len);
	e->chk.in.sender_len = addr.len;
	/*
	 * Never SMTPUTF8 here: smtpd (OpenSMTPD up to 7.8) offers no SMTPUTF8,
	 * refuses the MAIL FROM parameter and any non-ASCII address, and its
	 * filter protocol has no word for it. Our headers stay ASCII (RFC 8616
	 * §3); a U-label sender that reaches us anyway is checked and written
	 * in A-labels (lib/spf/idna.c).
	 */
	e->chk.in.smtputf8 = 0;
	e->chk.in.helo = spfkit__arena_strndup(&e->arena, s->helo, s->helo_len);
	e->chk.in.helo_len = s->helo_len;
	e->chk.in.client_ip = s->ip_text;
	e->chk.in.receiver = f->receiver;
	if (e->chk.in.sender == NULL || e->chk.in.helo == NULL) {
		not_started(f, v, sid, tok);
		e->s = NULL;
		spfkit__smtpd_eval_free(e);
		return;
	}
	s->ev = e;
	spfkit__mta_job_start(&e->chk); /* may answer before it returns */
}
