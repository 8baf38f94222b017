/* spfkit-smtpd-filter: the SMTP sessions, kept from smtpd's report events (internal.h). */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "internal.h"

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

struct session *spfkit__smtpd_session_find(struct spfkit__smtpd *f,
					   const struct spfkit__smtpd_field *id)
{
	struct session *s;

	for (s = f->buckets[bucket_of(id->p, id->len)]; s != NULL; s = s->hnext)
		if (strlen(s->id) == id->len && memcmp(s->id, id->p, id->len) == 0)
			return s;
	return NULL;
}

void spfkit__smtpd_eval_free(struct eval *e)
{
	if (e == NULL)
		return;
	if (e->chk.loop != NULL)
		spfkit__metrics_gauge(e->chk.loop->metrics, SPFKIT__METRICS_IN_FLIGHT, -1);
	spfkit__mta_job_cleanup(&e->chk);
	spfkit__mta_gen_put(e->gen);
	spfkit__arena_free(&e->arena);
	if (e->s != NULL)
		e->s->ev = NULL;
	spfkit__free(NULL, e);
}

/* The transaction's state: a new MAIL FROM, a reset, the end of a message. */
void spfkit__smtpd_tx_clear(struct session *s)
{
	s->edits = 0;
	s->data = DATA_NONE;
	s->ar = AR_NONE;
	spfkit__buf_reset(&s->hold);
}

void spfkit__smtpd_session_free(struct spfkit__smtpd *f, struct session *s)
{
	struct session **pp = &f->buckets[bucket_of(s->id, strlen(s->id))];

	while (*pp != NULL && *pp != s)
		pp = &(*pp)->hnext;
	if (*pp == s)
		*pp = s->hnext;
	/* a check in flight ends here: its answer would be for a session smtpd forgot */
	spfkit__smtpd_eval_free(s->ev);
	spfkit__buf_free(&s->hold);
	spfkit__free(NULL, s);
	f->n_sessions--;
	spfkit__metrics_gauge(f->loop.metrics, SPFKIT__METRICS_OPEN, -1);
}

/* ---- report events ------------------------------------------------------------ */

static void on_link_connect(struct spfkit__smtpd *f, const struct spfkit__smtpd_field *id,
			    const struct spfkit__smtpd_field *a, size_t n)
{
	struct session *s = spfkit__smtpd_session_find(f, id);
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
		spfkit__smtpd_session_free(f, s);
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

/* The events we register and read. */
static const char *const events[] = {
	"link-connect", "link-disconnect", "link-identify", "link-auth",
	"tx-begin", "tx-mail", "tx-reset", "tx-rollback", "tx-commit",
};

void spfkit__smtpd_register_reports(struct spfkit__smtpd *f)
{
	char line[128];
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(line, sizeof(line), "register|report|smtp-in|%s", events[i]);
		spfkit__smtpd_out_text(f, line);
	}
}

static int event_known(const struct spfkit__smtpd_field *event)
{
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (spfkit__smtpd_field_is(event, events[i]))
			return 1;
	return 0;
}

void spfkit__smtpd_on_report(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			     const struct spfkit__smtpd_field *event,
			     const struct spfkit__smtpd_field *id,
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
	s = spfkit__smtpd_session_find(f, id);
	if (s == NULL) {
		/* not tracked (refused above) or never seen: nothing to keep */
		if (f->cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_DEBUG, "session %s: %s for an unknown session", FESC(id),
					  FESC(event));
		return;
	}
	if (spfkit__smtpd_field_is(event, "link-disconnect"))
		spfkit__smtpd_session_free(f, s);
	else if (spfkit__smtpd_field_is(event, "link-identify"))
		on_link_identify(s, args, n);
	else if (spfkit__smtpd_field_is(event, "link-auth"))
		on_link_auth(f, s, v, args, n);
	else if (spfkit__smtpd_field_is(event, "tx-reset") ||
		 spfkit__smtpd_field_is(event, "tx-rollback") ||
		 spfkit__smtpd_field_is(event, "tx-commit"))
		spfkit__smtpd_tx_clear(s);
	/* tx-begin and tx-mail follow our mail-from answer, which had the address already */
}
