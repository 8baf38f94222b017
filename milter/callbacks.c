/*
 * libmilter's callbacks: one connection's life. The client address
 * comes from xxfi_connect, the HELO name from xxfi_helo (its argument,
 * never a PTR name), and the check runs at MAIL FROM (xxfi_envfrom) on
 * the worker: the shared flow of mta/checker.c (whitelists, HELO, then
 * MAIL FROM; a null sender is judged by its HELO, RFC 7208 §2.4) and
 * the shared decision of mta/decision.c. A refusal is answered there
 * (RFC 7208 §8.4, §8.6, §8.7; RFC 7372 codes); the headers wait for the
 * end of the message (headers.c).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>

#include <libmilter/mfapi.h>

#include "spfkit_util.h"
#include "milter.h"

struct spfkit__milter_state spfkit__milter_g;

static struct spfkit__milter_conn *conn_of(SMFICTX *ctx)
{
	return smfi_getpriv(ctx);
}

/* ---- connect, HELO ---------------------------------------------------------- */

/* The client: IPv4, IPv6, IPv4-mapped IPv6 as IPv4 (RFC 7208 §5). 0, or -1 (none, or a local socket). */
static int client_ip(const struct sockaddr *sa, struct spfkit_ip *ip)
{
	if (sa == NULL)
		return -1;
	if (sa->sa_family == AF_INET)
		return spfkit_ip_from_sockaddr(sa, sizeof(struct sockaddr_in), ip) == 0 ? 0 : -1;
	if (sa->sa_family == AF_INET6)
		return spfkit_ip_from_sockaddr(sa, sizeof(struct sockaddr_in6), ip) == 0 ? 0 : -1;
	return -1;
}

static sfsistat on_connect(SMFICTX *ctx, char *hostname, _SOCK_ADDR *addr)
{
	struct spfkit__milter_conn *c;

	(void)hostname; /* a PTR name: never an SPF input */
	c = spfkit__zalloc(NULL, sizeof(*c));
	if (c == NULL) {
		spfkit__mta_log_printf(LOG_ERR, "out of memory at connect; not checking this connection");
		return SMFIS_ACCEPT;
	}
	if (smfi_setpriv(ctx, c) != MI_SUCCESS) {
		spfkit__free(NULL, c);
		return SMFIS_ACCEPT;
	}
	c->have_ip = client_ip(addr, &c->ip) == 0;
	/* no address: local submission (Postfix non_smtpd_milters), nothing to check */
	if (!c->have_ip)
		return SMFIS_ACCEPT;
	spfkit_ip_format(&c->ip, c->ip_text, sizeof(c->ip_text));
	if (spfkit__mta_net_match(&spfkit__milter_g.cfg->internal_hosts, &c->ip)) {
		if (spfkit__milter_g.cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_INFO, "client=%s: internal host, not checked", c->ip_text);
		return SMFIS_ACCEPT;
	}
	return SMFIS_CONTINUE;
}

static sfsistat on_helo(SMFICTX *ctx, char *helo)
{
	struct spfkit__milter_conn *c = conn_of(ctx);
	size_t n;

	if (c == NULL || helo == NULL)
		return SMFIS_CONTINUE;
	n = strlen(helo);
	if (n > SPFKIT_MILTER_HELO_MAX)
		n = SPFKIT_MILTER_HELO_MAX; /* no valid name is that long: the check says so */
	memcpy(c->helo, helo, n);
	c->helo[n] = '\0';
	c->helo_len = n;
	return SMFIS_CONTINUE;
}

/* ---- MAIL FROM -------------------------------------------------------------- */

/* One MacroList entry, "name" (set and not empty) or "name|value" (equal). */
static int macro_entry_matches(SMFICTX *ctx, const char *e, size_t n)
{
	char name[128];
	const char *bar = memchr(e, '|', n), *v;
	size_t nl = bar != NULL ? (size_t)(bar - e) : n;
	int braced = nl > 0 && e[0] == '{';

	if (nl == 0 || nl + 3 > sizeof(name))
		return 0;
	/* libmilter knows long names by their braces: "{daemon_name}" */
	snprintf(name, sizeof(name), nl > 1 && !braced ? "{%.*s}" : "%.*s", (int)nl, e);
	v = smfi_getsymval(ctx, name);
	if (v == NULL)
		return 0;
	if (bar == NULL)
		return v[0] != '\0';
	return strlen(v) == n - nl - 1 && memcmp(v, bar + 1, n - nl - 1) == 0;
}

static int macro_list_matches(SMFICTX *ctx, const char *list)
{
	while (list != NULL && *list != '\0') {
		size_t n = strcspn(list, ",");

		if (macro_entry_matches(ctx, list, n))
			return 1;
		list += n;
		if (*list == ',')
			list++;
	}
	return 0;
}

/* Authenticated, verified or listed senders are the site's own: nothing is done. */
static const char *trusted_why(SMFICTX *ctx)
{
	const struct spfkit__mta_config *cfg = spfkit__milter_g.cfg;
	const char *v;

	v = smfi_getsymval(ctx, "{auth_authen}");
	if (cfg->skip_authenticated && v != NULL && v[0] != '\0')
		return "authenticated";
	v = smfi_getsymval(ctx, "{verify}");
	if (cfg->skip_verified && v != NULL && strcmp(v, "OK") == 0)
		return "verified client certificate";
	if (macro_list_matches(ctx, cfg->macro_list))
		return "MacroList";
	return NULL;
}

/*
 * MAIL FROM's address: "<a@b>" (or bare), in place. Never cut: a cut
 * address would have another domain. libmilter's packets (64 KB) bound
 * it, and the evaluator refuses names past RFC 7208's limits.
 */
static const char *sender_of(char **argv, size_t *len)
{
	const char *s = argv != NULL && argv[0] != NULL ? argv[0] : "";

	while (*s == ' ')
		s++;
	if (*s == '<')
		s++;
	*len = strcspn(s, ">");
	return s;
}

/* HELO missing (some MTAs send none): policyd-spf takes the sender's domain, as we do. */
static void helo_of(const struct spfkit__milter_conn *c, struct spfkit__milter_query *q)
{
	size_t i;

	q->helo = c->helo;
	q->helo_len = c->helo_len;
	if (q->helo_len > 0)
		return;
	for (i = q->sender_len; i > 0; i--)
		if (q->sender[i - 1] == '@') {
			q->helo = q->sender + i;
			q->helo_len = q->sender_len - i;
			return;
		}
}

/* smfi_setreply() for a decision that refuses; the SMTP code follows the kind. */
static sfsistat refuse(SMFICTX *ctx, const struct spfkit__mta_decision *d)
{
	int reject = d->kind == SPFKIT__MTA_REJECT;
	char xcode[16], text[600];
	const char *t = spfkit__milter_action_text(d->action, xcode, sizeof(xcode));

	spfkit__milter_reply_text(t, text, sizeof(text));
	if (smfi_setreply(ctx, reject ? "550" : "451", xcode[0] ? xcode : NULL, text) != MI_SUCCESS)
		(void)smfi_setreply(ctx, reject ? "550" : "451", xcode[0] ? xcode : NULL,
				    reject ? "SPF validation failed" : "SPF validation error");
	return reject ? SMFIS_REJECT : SMFIS_TEMPFAIL;
}

#define LOCAL_PROBLEM "Temporary local problem checking SPF, please try again later"

/*
 * No decision (out of memory, the worker stopping or late): that is no
 * SPF result, so no header claims one. With TempError_Defer the client
 * comes back later (RFC 3463 4.3.0: our problem, not the sender's DNS);
 * otherwise the mail goes on unchecked, as with TestOnly = 0.
 */
static sfsistat local_problem(SMFICTX *ctx, const struct spfkit__milter_conn *c, int rc)
{
	const struct spfkit__mta_config *cfg = spfkit__milter_g.cfg;
	int defer = cfg->temperror_defer && cfg->test_only != 0;

	spfkit__mta_log_printf(LOG_ERR, "client=%s: SPF check not done: %s; %s", c->ip_text,
			   spfkit_strerror(rc), defer ? "deferred" : "accepted unchecked");
	if (!defer)
		return SMFIS_CONTINUE;
	smfi_setreply(ctx, "451", cfg->enhanced_status_codes ? "4.3.0" : NULL, LOCAL_PROBLEM);
	return SMFIS_TEMPFAIL;
}

static void log_decision(SMFICTX *ctx, const struct spfkit__milter_conn *c,
			 const struct spfkit__milter_query *q, const struct spfkit__mta_decision *d)
{
	const char *qid;
	char from[SPFKIT_MILTER_LOG_ADDR + 1];
	size_t n = q->sender_len < SPFKIT_MILTER_LOG_ADDR ? q->sender_len : SPFKIT_MILTER_LOG_ADDR;

	if (spfkit__milter_g.cfg->debug_level < 1)
		return; /* as spfkit-policyd: decisions from debugLevel 1 */
	qid = smfi_getsymval(ctx, "i");
	memcpy(from, q->sender, n);
	from[n] = '\0';
	spfkit__mta_log_printf(LOG_INFO, "%s: client=%s helo=%s from=<%s> decision=%s identity=%s "
			   "action=\"%s\"", MESC(qid != NULL ? qid : "NOQUEUE"), c->ip_text,
			   MESC(c->helo), MESC(from),
			   spfkit__mta_kind_name(d->kind),
			   d->identity == SPFKIT_IDENTITY_HELO ? "helo" : "mailfrom",
			   spfkit__milter_esc(d->action, 400, (char[1700]){0}, 1700));
}

static sfsistat on_envfrom(SMFICTX *ctx, char **argv)
{
	struct spfkit__milter_conn *c = conn_of(ctx);
	struct spfkit__milter_msg *m;
	struct spfkit__milter_query q;
	const char *why;
	int rc;

	if (c == NULL)
		return SMFIS_CONTINUE;
	m = &c->msg;
	spfkit__milter_msg_reset(m); /* a MAIL FROM after a message that ended unseen */
	m->active = 1;
	why = trusted_why(ctx);
	if (why != NULL) {
		m->trusted = 1;
		if (spfkit__milter_g.cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_INFO, "client=%s: %s, not checked", c->ip_text, why);
		return SMFIS_CONTINUE;
	}
	memset(&q, 0, sizeof(q));
	q.sender = sender_of(argv, &q.sender_len);
	q.ip = c->ip;
	q.client_ip = c->ip_text;
	helo_of(c, &q);
	rc = spfkit__milter_worker_check(spfkit__milter_g.worker, &q, &m->d);
	if (rc != 0)
		return local_problem(ctx, c, rc);
	log_decision(ctx, c, &q, &m->d);
	if (m->d.kind == SPFKIT__MTA_REJECT || m->d.kind == SPFKIT__MTA_DEFER) {
		m->active = 0;
		return refuse(ctx, &m->d);
	}
	m->have_decision = 1;
	return SMFIS_CONTINUE;
}

/* ---- the rest of the connection ---------------------------------------------- */

static sfsistat on_header(SMFICTX *ctx, char *name, char *value)
{
	return spfkit__milter_on_header(ctx, name, value);
}

static sfsistat on_eom(SMFICTX *ctx)
{
	return spfkit__milter_on_eom(ctx);
}

static sfsistat on_abort(SMFICTX *ctx)
{
	struct spfkit__milter_conn *c = conn_of(ctx);

	if (c != NULL)
		spfkit__milter_msg_reset(&c->msg);
	return SMFIS_CONTINUE;
}

static sfsistat on_close(SMFICTX *ctx)
{
	struct spfkit__milter_conn *c = conn_of(ctx);

	if (c != NULL) {
		spfkit__milter_msg_reset(&c->msg);
		spfkit__free(NULL, c);
		smfi_setpriv(ctx, NULL);
	}
	return SMFIS_CONTINUE;
}

/*
 * We need to add and delete header fields; we want the connection, HELO,
 * MAIL FROM, the headers and the end of message, and nothing else: the
 * MTA may leave out RCPT, DATA, the body and unknown commands.
 */
static sfsistat on_negotiate(SMFICTX *ctx, unsigned long f0, unsigned long f1, unsigned long f2,
			     unsigned long f3, unsigned long *pf0, unsigned long *pf1,
			     unsigned long *pf2, unsigned long *pf3)
{
	const unsigned long want = SMFIF_ADDHDRS | SMFIF_CHGHDRS;
	const unsigned long skip = SMFIP_NORCPT | SMFIP_NOBODY | SMFIP_NOUNKNOWN | SMFIP_NODATA |
				   SMFIP_NOEOH;

	(void)ctx;
	(void)f2;
	(void)f3;
	if ((f0 & want) != want)
		spfkit__mta_log_printf(LOG_WARNING, "the MTA does not let us add and delete header fields");
	*pf0 = f0 & want;
	*pf1 = f1 & skip;
	*pf2 = 0;
	*pf3 = 0;
	return SMFIS_CONTINUE;
}

void spfkit__milter_describe(struct smfiDesc *d)
{
	memset(d, 0, sizeof(*d));
	d->xxfi_name = "spfkit-milter";
	d->xxfi_version = SMFI_VERSION;
	d->xxfi_flags = SMFIF_ADDHDRS | SMFIF_CHGHDRS;
	d->xxfi_connect = on_connect;
	d->xxfi_helo = on_helo;
	d->xxfi_envfrom = on_envfrom;
	d->xxfi_header = on_header;
	d->xxfi_eom = on_eom;
	d->xxfi_abort = on_abort;
	d->xxfi_close = on_close;
	d->xxfi_negotiate = on_negotiate;
}
