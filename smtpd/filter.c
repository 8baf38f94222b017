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
 *
 * This file reads smtpd's lines and dispatches them, and runs the I/O;
 * the other parts are listed in internal.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "internal.h"
#include "engine.h"

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
		spfkit__smtpd_on_mail_from(f, v, id, token, param);
		return;
	}
	if (spfkit__smtpd_field_is(phase, "data-line")) {
		spfkit__smtpd_on_data_line(f, v, id, token, param);
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
		spfkit__smtpd_send_result(f, v, sid, tok, "proceed");
	}
}

/* ---- configuration and registration ----------------------------------------------------- */

static void register_all(struct spfkit__smtpd *f)
{
	spfkit__smtpd_register_reports(f);
	spfkit__smtpd_out_text(f, "register|filter|smtp-in|mail-from");
	spfkit__smtpd_out_text(f, "register|filter|smtp-in|data-line");
	spfkit__smtpd_out_text(f, "register|ready");
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
		f->admd_set = 1;
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
	spfkit__smtpd_on_report(f, &v, &fl[4], &fl[5], fl + 6, n - 6);
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
			spfkit__smtpd_session_free(f, f->buckets[i]);
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
	f->dns_cached = cache != NULL;
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
	if (spfkit__smtpd_gen_start(f, cfg, f->ctx) != 0)
		goto fail;
	bufferevent_enable(f->in, EV_READ);
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
	spfkit__mta_gen_put(f->gen); /* every check has ended: the last hold; ctx and cfg go */
	spfkit__free(NULL, f);
}
