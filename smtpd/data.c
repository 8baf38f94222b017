/*
 * spfkit-smtpd-filter: a checked message's data lines: our header fields
 * before the first, forged Authentication-Results with our authserv-id
 * dropped (RFC 8601 §5) (internal.h).
 */
#include <string.h>
#include <syslog.h>

#include "internal.h"
#include "header_field.h"

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
				spfkit__smtpd_send_dataline(f, &s->hold_version, s->id, s->hold_token, text + start,
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
			spfkit__smtpd_send_dataline(f, v, s->id, token, line, len);
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
		spfkit__smtpd_send_dataline(f, v, s->id, token, s->d.headers[i], strlen(s->d.headers[i]));
}

void spfkit__smtpd_on_data_line(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
				const struct spfkit__smtpd_field *id,
				const struct spfkit__smtpd_field *token,
				const struct spfkit__smtpd_field *line)
{
	char sid[SPFKIT_SMTPD_ID_MAX + 1], tok[SPFKIT_SMTPD_ID_MAX + 1];
	struct session *s = spfkit__smtpd_session_find(f, id);
	int end = spfkit__smtpd_field_is(line, ".");

	memcpy(sid, id->p, id->len);
	sid[id->len] = '\0';
	memcpy(tok, token->p, token->len);
	tok[token->len] = '\0';
	if (s == NULL || !s->edits) {
		/* nothing to change: every line goes back as it came */
		spfkit__smtpd_send_dataline(f, v, sid, tok, line->p, line->len);
		if (s != NULL && end)
			spfkit__smtpd_tx_clear(s);
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
	spfkit__smtpd_send_dataline(f, v, sid, tok, line->p, line->len);
	if (end)
		spfkit__smtpd_tx_clear(s);
}
