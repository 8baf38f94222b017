/*
 * What the MTA's commands do for one SMTP session. The client address
 * comes from the connect information, the HELO name from HELO (its
 * argument, never a PTR name), and the check runs at MAIL FROM on the
 * server's loop: the shared flow of mta/checker.c (whitelists, HELO,
 * then MAIL FROM; a null sender is judged by its HELO, RFC 7208 §2.4)
 * and the shared decision of mta/decision.c. A refusal is answered
 * there (RFC 7208 §8.4, §8.6, §8.7; RFC 7372 codes); the headers wait
 * for the end of the message (headers.c).
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "ratelog.h"
#include "spfkit_util.h"
#include "metrics.h"
#include "milter.h"
#include "outcome.h"
#include "unfinished.h"

struct spfkit__milter_state spfkit__milter_g;

/* A check in flight: the job and copies of its inputs, in one allocation. */
struct spfkit__milter_check {
	struct spfkit__mta_job chk; /* chk.arg is the check */
	struct spfkit__milter_conn *conn;
	struct spfkit__mta_gen *gen; /* chk.cfg and chk.ctx's, held till the check ends */
	char text[];                /* sender NUL helo NUL client NUL */
};

static void reply(struct spfkit__milter_conn *c, char cmd)
{
	spfkit__milter_send(c, cmd, NULL, 0);
}

/* ---- connect, HELO, macros ---------------------------------------------------- */

/* "IPv6:2001:db8::1" (Sendmail's form) or plain; IPv4-mapped IPv6 is IPv4 (RFC 7208 §5). */
static int client_ip(const struct spfkit__milter_connect *ci, struct spfkit_ip *ip)
{
	const char *a = ci->addr;
	size_t n = ci->addr_len;

	if (ci->family != '4' && ci->family != '6')
		return -1;
	if (ci->family == '6' && n > 5 && spfkit__memcaseeq(a, 5, "IPv6:", 5)) {
		a += 5;
		n -= 5;
	}
	return spfkit_ip_parse(a, n, ip) == 0 ? 0 : -1;
}

int spfkit__milter_on_connect(struct spfkit__milter_conn *c, const unsigned char *d, size_t n)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	struct spfkit__milter_connect ci;

	if (spfkit__milter_connect_parse(d, n, &ci) != 0)
		return -1;
	/* the hostname is a PTR name: never an SPF input */
	spfkit__milter_msg_reset(&s->msg);
	spfkit__milter_macros_clear_from(&s->macros, spfkit__milter_stage('H'));
	s->connected = 1;
	s->helo_len = 0;
	s->helo[0] = '\0';
	s->have_ip = client_ip(&ci, &s->ip) == 0;
	s->accepted = 0;
	/* no address: local submission (Postfix non_smtpd_milters), nothing to check */
	if (!s->have_ip) {
		if (ci.family == '4' || ci.family == '6')
			spfkit__mta_log_printf(LOG_NOTICE, "connect: client address \"%s\" not "
					       "understood; not checking", MESC(ci.addr));
		s->accepted = 1;
		reply(c, SPFKIT_MILTER_R_ACCEPT);
		return 0;
	}
	spfkit_ip_format(&s->ip, s->ip_text, sizeof(s->ip_text));
	if (spfkit__mta_net_match(&spfkit__milter_g.cfg->internal_hosts, &s->ip)) {
		if (spfkit__milter_g.cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_INFO, "client=%s: internal host, not checked", s->ip_text);
		s->accepted = 1;
		reply(c, SPFKIT_MILTER_R_ACCEPT);
		return 0;
	}
	reply(c, SPFKIT_MILTER_R_CONTINUE);
	return 0;
}

void spfkit__milter_on_helo(struct spfkit__milter_conn *c, const unsigned char *d, size_t n)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	const char *helo[1];
	size_t len[1];

	if (spfkit__milter_strings(d, n, helo, len, 1) == 1) {
		/* no valid name is longer: the check says so */
		s->helo_len = len[0] < SPFKIT_MILTER_HELO_MAX ? len[0] : SPFKIT_MILTER_HELO_MAX;
		memcpy(s->helo, helo[0], s->helo_len);
		s->helo[s->helo_len] = '\0';
	}
	reply(c, SPFKIT_MILTER_R_CONTINUE);
}

/* Malformed macros are kept in part and the session goes on: said at most once per interval. */
static struct spfkit__mta_ratelog macro_log;

void spfkit__milter_on_macro(struct spfkit__milter_conn *c, const unsigned char *d, size_t n)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	int stage = n > 0 ? spfkit__milter_stage((char)d[0]) : -1;
	char note[SPFKIT__MTA_RATELOG_NOTE_MAX];
	size_t dropped = n;

	if (stage >= 0 && spfkit__milter_macros_set(&s->macros, stage, d + 1, n - 1, &dropped) != 0) {
		spfkit__mta_log_printf(LOG_ERR, "out of memory keeping macros; stage %c has none",
				       (char)d[0]);
		return;
	}
	if (dropped > 0 && spfkit__mta_ratelog_due(&macro_log, SPFKIT_MILTER_LOG_INTERVAL, note))
		spfkit__mta_log_printf(LOG_WARNING, "macros for stage 0x%02x: %zu bytes that are no "
				       "whole name and value ignored%s",
				       n > 0 ? (unsigned char)d[0] : 0, dropped, note);
}

/* ---- MAIL FROM -------------------------------------------------------------- */

/* One MacroList entry, "name" (set and not empty) or "name|value" (equal). */
static int macro_entry_matches(const struct spfkit__milter_session *s, const char *e, size_t n)
{
	char name[128];
	const char *bar = memchr(e, '|', n), *v;
	size_t nl = bar != NULL ? (size_t)(bar - e) : n;
	int braced = nl > 0 && e[0] == '{';

	if (nl == 0 || nl + 3 > sizeof(name))
		return 0;
	/* long names are known by their braces: "{daemon_name}" */
	snprintf(name, sizeof(name), nl > 1 && !braced ? "{%.*s}" : "%.*s", (int)nl, e);
	v = spfkit__milter_macro(&s->macros, name);
	if (v == NULL)
		return 0;
	if (bar == NULL)
		return v[0] != '\0';
	return strlen(v) == n - nl - 1 && memcmp(v, bar + 1, n - nl - 1) == 0;
}

static int macro_list_matches(const struct spfkit__milter_session *s, const char *list)
{
	while (list != NULL && *list != '\0') {
		size_t n = strcspn(list, ",");

		if (macro_entry_matches(s, list, n))
			return 1;
		list += n;
		if (*list == ',')
			list++;
	}
	return 0;
}

/* Authenticated, verified or listed senders are the site's own: nothing is done. */
static const char *trusted_why(const struct spfkit__milter_session *s)
{
	const struct spfkit__mta_config *cfg = spfkit__milter_g.cfg;
	const char *auth = spfkit__milter_macro(&s->macros, "{auth_authen}");
	const char *verify = spfkit__milter_macro(&s->macros, "{verify}");
	const char *why = spfkit__mta_session_trusted(cfg, auth != NULL && auth[0] != '\0',
						      verify != NULL && strcmp(verify, "OK") == 0);

	if (why != NULL)
		return why;
	if (macro_list_matches(s, cfg->macro_list))
		return "MacroList";
	return NULL;
}

/*
 * MAIL FROM's address: "<a@b>" (or bare), the first of the packet's
 * strings. Never cut: a cut address would have another domain. The
 * packet (64 KiB) bounds it, and the evaluator refuses names past
 * RFC 7208's limits.
 */
static const char *sender_of(const unsigned char *d, size_t n, size_t *len)
{
	const char *arg[1];
	const char *s = spfkit__milter_strings(d, n, arg, NULL, 1) == 1 ? arg[0] : "";

	while (*s == ' ')
		s++;
	if (*s == '<')
		s++;
	*len = strcspn(s, ">");
	return s;
}

/* A refusing decision's reply; the SMTP code follows the kind. */
static void refuse(struct spfkit__milter_conn *c, const struct spfkit__mta_decision *d)
{
	int reject = d->kind == SPFKIT__MTA_REJECT;
	char xcode[16];
	const char *t = spfkit__milter_action_text(d->action, xcode, sizeof(xcode));

	spfkit__milter_send_reply(c, reject ? "550" : "451", xcode, t);
}

/*
 * No decision: the check could not go on, or never started (rc). The
 * daemons' one answer for it (mta/unfinished.h): deferred as a temperror
 * of the identities left would be, else the mail goes on unchecked and no
 * header claims a result. k: the check, NULL when none was made.
 */
static void local_problem(struct spfkit__milter_conn *c, const struct spfkit__milter_check *k,
			  int rc)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	struct spfkit__mta_decision d;

	spfkit__mta_unfinished(k != NULL ? k->chk.cfg : spfkit__milter_g.cfg,
			       k != NULL ? &k->chk : NULL, rc, &d);
	spfkit__metrics_action(spfkit__milter_g.loop.metrics, d.kind);
	spfkit__mta_log_printf(LOG_ERR, "client=%s: SPF check not done: %s; reason=%s %s",
			       s->ip_text, spfkit_strerror(rc), spfkit__mta_unfinished_reason(rc),
			       d.kind == SPFKIT__MTA_DEFER ? "deferred" : "accepted unchecked");
	if (d.kind != SPFKIT__MTA_DEFER) {
		reply(c, SPFKIT_MILTER_R_CONTINUE);
		return;
	}
	s->msg.active = 0;
	refuse(c, &d);
}

static void log_decision(const struct spfkit__milter_session *s, const struct spfkit__mta_input *in,
			 const struct spfkit__mta_decision *d)
{
	const char *qid, *reason = spfkit__mta_reason_of(in);
	char from[SPFKIT_MILTER_LOG_ADDR + 1];
	size_t n = in->sender_len < SPFKIT_MILTER_LOG_ADDR ? in->sender_len : SPFKIT_MILTER_LOG_ADDR;

	if (spfkit__milter_g.cfg->debug_level < 1)
		return; /* as spfkit-policyd: decisions from debugLevel 1 */
	qid = spfkit__milter_macro(&s->macros, "i");
	memcpy(from, in->sender, n);
	from[n] = '\0';
	spfkit__mta_log_printf(LOG_INFO, "%s: client=%s helo=%s from=<%s> decision=%s identity=%s%s%s "
			       "action=\"%s\"", MESC(qid != NULL ? qid : "NOQUEUE"), s->ip_text,
			       MESC(s->helo), MESC(from), spfkit__mta_kind_name(d->kind),
			       d->identity == SPFKIT_IDENTITY_HELO ? "helo" : "mailfrom",
			       reason != NULL ? " reason=" : "", reason != NULL ? reason : "",
			       spfkit__milter_esc(d->action, 400, (char[1700]){0}, 1700));
}

static void check_free(struct spfkit__milter_check *k)
{
	spfkit__metrics_gauge(spfkit__milter_g.loop.metrics, SPFKIT__METRICS_IN_FLIGHT, -1);
	spfkit__mta_job_cleanup(&k->chk);
	spfkit__mta_gen_put(k->gen);
	spfkit__free(NULL, k);
}

/* The check's end (mta/checker.h): the decision answers MAIL FROM. */
static void on_check_done(struct spfkit__mta_job *chk, int rc, const char *doing)
{
	struct spfkit__milter_check *k = chk->arg;
	struct spfkit__milter_conn *c = k->conn;
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	struct spfkit__milter_msg *m = &s->msg;

	if (rc != 0) {
		spfkit__mta_log_printf(LOG_ERR, "SPF check not finished: %s while %s",
				       spfkit_strerror(rc), doing != NULL ? doing : "checking");
		local_problem(c, k, rc);
	} else {
		/* the configuration the check started with, reloaded or not since */
		spfkit__mta_decide(chk->cfg, &chk->in, &m->d);
		spfkit__metrics_action(spfkit__milter_g.loop.metrics, m->d.kind);
		log_decision(s, &chk->in, &m->d);
		if (m->d.kind == SPFKIT__MTA_REJECT || m->d.kind == SPFKIT__MTA_DEFER) {
			m->active = 0;
			refuse(c, &m->d);
		} else {
			m->have_decision = 1;
			reply(c, SPFKIT_MILTER_R_CONTINUE);
		}
	}
	s->check = NULL;
	check_free(k);
	spfkit__milter_resume(c);
}

/* Copy s[0..n) NUL-terminated at *at; the copy. */
static char *put_text(char **at, const char *s, size_t n)
{
	char *p = *at;

	memcpy(p, s, n);
	p[n] = '\0';
	*at += n + 1;
	return p;
}

static struct spfkit__milter_check *check_new(struct spfkit__milter_conn *c, const char *sender,
					       size_t sender_len, int smtputf8)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	const char *helo = s->helo;
	size_t helo_len = s->helo_len, ip_len = strlen(s->ip_text);
	struct spfkit__milter_check *k;
	struct spfkit__mta_input *in;
	char *at;

	k = spfkit__alloc(NULL, sizeof(*k) + sender_len + helo_len + ip_len + 3);
	if (k == NULL)
		return NULL;
	memset(k, 0, sizeof(*k));
	k->conn = c;
	k->chk.loop = &spfkit__milter_g.loop;
	k->gen = spfkit__mta_gen_hold(spfkit__milter_g.gen);
	k->chk.cfg = spfkit__milter_g.cfg;
	k->chk.ctx = spfkit__milter_g.ctx;
	k->chk.ip = s->ip;
	k->chk.budget_s = spfkit__milter_g.budget_s;
	k->chk.lent_timer = spfkit__milter_lent_timer(c);
	k->chk.done = on_check_done;
	k->chk.arg = k;
	spfkit__metrics_count(spfkit__milter_g.loop.metrics, SPFKIT__METRICS_REQUESTS);
	spfkit__metrics_gauge(spfkit__milter_g.loop.metrics, SPFKIT__METRICS_IN_FLIGHT, 1);
	in = &k->chk.in;
	at = k->text;
	in->sender = put_text(&at, sender, sender_len);
	in->sender_len = sender_len;
	in->smtputf8 = smtputf8;
	in->helo = put_text(&at, helo, helo_len);
	in->helo_len = helo_len;
	in->client_ip = put_text(&at, s->ip_text, ip_len);
	in->receiver = spfkit__milter_g.receiver;
	return k;
}

int spfkit__milter_on_mail(struct spfkit__milter_conn *c, const unsigned char *d, size_t n)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);
	struct spfkit__milter_msg *m = &s->msg;
	struct spfkit__milter_check *k;
	const char *why, *sender;
	size_t sender_len;

	spfkit__milter_msg_reset(m); /* a MAIL FROM after a message that ended unseen */
	spfkit__milter_macros_clear_from(&s->macros, spfkit__milter_stage('R'));
	/* no connect information, or accepted at connect: nothing to check */
	if (!s->connected || s->accepted || !s->have_ip) {
		reply(c, SPFKIT_MILTER_R_CONTINUE);
		return 0;
	}
	m->active = 1;
	why = trusted_why(s);
	if (why != NULL) {
		m->trusted = 1;
		if (spfkit__milter_g.cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_INFO, "client=%s: %s, not checked", s->ip_text, why);
		reply(c, SPFKIT_MILTER_R_CONTINUE);
		return 0;
	}
	sender = sender_of(d, n, &sender_len);
	/* the headers carry UTF-8 only for a message the client declared SMTPUTF8 (RFC 6532) */
	k = check_new(c, sender, sender_len, spfkit__milter_mail_smtputf8(d, n));
	if (k == NULL) {
		local_problem(c, NULL, SPFKIT_ENOMEM);
		return 0;
	}
	s->check = k;
	spfkit__mta_job_start(&k->chk); /* may end at once: on_check_done */
	return s->check != NULL ? 1 : 0;
}

void spfkit__milter_on_abort(struct spfkit__milter_conn *c)
{
	struct spfkit__milter_session *s = spfkit__milter_session_of(c);

	spfkit__milter_msg_reset(&s->msg);
	spfkit__milter_macros_clear_from(&s->macros, spfkit__milter_stage('M'));
}

void spfkit__milter_session_end(struct spfkit__milter_session *s)
{
	if (s->check != NULL) {
		check_free(s->check);
		s->check = NULL;
	}
	spfkit__milter_msg_reset(&s->msg);
	spfkit__milter_macros_clear_from(&s->macros, 0);
	s->connected = s->accepted = s->have_ip = 0;
	s->helo_len = 0;
	s->helo[0] = '\0';
	s->ip_text[0] = '\0';
}
