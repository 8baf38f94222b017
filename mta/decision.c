/*
 * The decision table of policyd-spf (its _get_resultcodes and _spfcheck),
 * written down as data flow: each identity's result goes through its
 * policy to one of dunno / prepend / reject / defer; then TestOnly,
 * Prospective and Header_Type shape the answer. See decision.h for where
 * we knowingly differ (the CVE-2019-20790 trap).
 */
#include <stdio.h>
#include <string.h>

#include <spfkit/output.h>

#include "spfkit_util.h"
#include "decision.h"

/* ---- text into the decision's fixed buffers (spfkit__text) ------------ */

/*
 * Text from the session or from DNS: bytes outside %x20-7E become '?',
 * so no CR or LF reaches a header or a reply; with utf8 (a header of an
 * SMTPUTF8 message, RFC 6532 §3.2) valid UTF-8 characters stay whole.
 * Inside a comment, '(' ')' and '\' are escaped (RFC 5322 ccontent). Cut
 * at `cap` bytes of input with "...", never inside a character.
 */
static void put_clean(struct spfkit__text *w, const char *s, size_t n, size_t cap, int comment,
		      int utf8)
{
	size_t i, u, end = n < cap ? n : cap;

	for (i = 0; i < end; i++) {
		char c = s[i];

		u = utf8 ? spfkit__utf8_len((const unsigned char *)s + i, n - i) : 0;
		if (u > end - i)
			break; /* cut before the character; n > cap, so "..." follows */
		if (u > 0) {
			spfkit__text_put(w, s + i, u);
			i += u - 1;
			continue;
		}
		if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
			c = '?';
		if (comment && (c == '(' || c == ')' || c == '\\'))
			spfkit__text_put(w, "\\", 1);
		spfkit__text_put(w, &c, 1);
	}
	if (n > cap)
		spfkit__text_puts(w, "...");
}

/* Percent-encode all but RFC 3986 unreserved bytes and '@' ':' (for {url}). */
static void put_percent(struct spfkit__text *w, const char *s, size_t n, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n && i < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3] = {'%', hex[c >> 4], hex[c & 15]};

		if (spfkit__is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '@' ||
		    c == ':')
			spfkit__text_put(w, (const char *)&s[i], 1);
		else
			spfkit__text_put(w, esc, 3);
	}
}

/* ---- the table -------------------------------------------------------- */

static int has_sender(const struct spfkit__mta_input *in)
{
	return in->sender != NULL && in->sender_len > 0;
}

static const struct spfkit__mta_check *check_of(const struct spfkit__mta_input *in,
						 enum spfkit_identity id)
{
	return id == SPFKIT_IDENTITY_HELO ? &in->helo_check : &in->mfrom_check;
}

/* The domain a Reject_Not_Pass_Domains entry is compared with. */
static void identity_domain(const struct spfkit__mta_input *in, enum spfkit_identity id,
			    const char **dom, size_t *len)
{
	size_t i;

	*dom = id == SPFKIT_IDENTITY_HELO ? in->helo : in->sender;
	*len = id == SPFKIT_IDENTITY_HELO ? in->helo_len : in->sender_len;
	if (*dom == NULL) {
		*dom = "";
		*len = 0;
		return;
	}
	if (id == SPFKIT_IDENTITY_HELO)
		return;
	for (i = *len; i > 0; i--)
		if ((*dom)[i - 1] == '@') {
			*dom += i;
			*len -= i;
			return;
		}
}

/* Reject_Not_Pass_Domains turns the policy into SPF_Not_Pass for that domain. */
static enum spfkit__mta_reject policy_of(const struct spfkit__mta_config *cfg,
					 const struct spfkit__mta_input *in, enum spfkit_identity id,
					 int *local)
{
	const struct spfkit_result *res = check_of(in, id)->res;
	const char *dom;
	size_t len;

	identity_domain(in, id, &dom, &len);
	*local = len > 0 && spfkit__mta_name_match(&cfg->reject_not_pass_domains, dom, len);
	/* a U-label domain is listed in A-labels, the form SPF checked (RFC 8616 §4) */
	if (!*local && res != NULL && res->identity_domain != NULL &&
	    spfkit__mta_sender_is_utf8(dom, len))
		*local = spfkit__mta_name_match(&cfg->reject_not_pass_domains, res->identity_domain,
						strlen(res->identity_domain));
	if (*local)
		return SPFKIT_MTA_REJECT_NOT_PASS;
	return id == SPFKIT_IDENTITY_HELO ? cfg->helo_reject : cfg->mail_from_reject;
}

/*
 * policyd-spf.conf(5): Fail rejects fail; Softfail also softfail;
 * SPF_Not_Pass also neutral; False never rejects nor defers. PermError_reject
 * and TempError_Defer act under every policy but False.
 */
static enum spfkit__mta_kind kind_for(const struct spfkit__mta_config *cfg,
				      enum spfkit__mta_reject policy, enum spfkit_result_code r)
{
	if (policy == SPFKIT_MTA_REJECT_FALSE || policy == SPFKIT_MTA_REJECT_NO_CHECK)
		return SPFKIT__MTA_PREPEND;
	switch (r) {
	case SPFKIT_RESULT_FAIL:
		return SPFKIT__MTA_REJECT;
	case SPFKIT_RESULT_SOFTFAIL:
		return policy == SPFKIT_MTA_REJECT_SOFTFAIL || policy == SPFKIT_MTA_REJECT_NOT_PASS
			       ? SPFKIT__MTA_REJECT
			       : SPFKIT__MTA_PREPEND;
	case SPFKIT_RESULT_NEUTRAL:
		return policy == SPFKIT_MTA_REJECT_NOT_PASS ? SPFKIT__MTA_REJECT : SPFKIT__MTA_PREPEND;
	case SPFKIT_RESULT_TEMPERROR:
		return cfg->temperror_defer ? SPFKIT__MTA_DEFER : SPFKIT__MTA_PREPEND;
	case SPFKIT_RESULT_PERMERROR:
		return cfg->permerror_reject ? SPFKIT__MTA_REJECT : SPFKIT__MTA_PREPEND;
	default:
		return SPFKIT__MTA_PREPEND;
	}
}

static enum spfkit__mta_kind identity_kind(const struct spfkit__mta_config *cfg,
					   const struct spfkit__mta_input *in,
					   enum spfkit_identity id, int *local)
{
	const struct spfkit__mta_check *chk = check_of(in, id);
	enum spfkit__mta_kind k;

	*local = 0;
	if (!chk->checked || chk->res == NULL)
		return SPFKIT__MTA_DUNNO;
	k = kind_for(cfg, policy_of(cfg, in, id, local), chk->res->code);
	/* "Null": the HELO result only counts for the null sender */
	if (id == SPFKIT_IDENTITY_HELO && cfg->helo_reject == SPFKIT_MTA_REJECT_NULL && !*local &&
	    has_sender(in))
		k = SPFKIT__MTA_PREPEND;
	/* No_Mail: reject only domains that publish "v=spf1 -all" */
	if (k == SPFKIT__MTA_REJECT && cfg->no_mail && !chk->no_mail_record)
		k = SPFKIT__MTA_PREPEND;
	return k;
}

int spfkit__mta_sender_is_utf8(const char *sender, size_t len)
{
	return !spfkit__ascii_only(sender, len);
}

static int refuses(enum spfkit__mta_kind k)
{
	return k == SPFKIT__MTA_REJECT || k == SPFKIT__MTA_DEFER;
}

enum spfkit__mta_bypass spfkit__mta_ip_bypass(const struct spfkit__mta_config *cfg,
					      const struct spfkit_ip *ip)
{
	if (spfkit__mta_net_match(&cfg->skip_addresses, ip))
		return SPFKIT__MTA_BYPASS_LOCAL;
	if (spfkit__mta_net_match(&cfg->whitelist, ip))
		return SPFKIT__MTA_BYPASS_WHITELIST;
	return SPFKIT__MTA_BYPASS_NONE;
}

const char *spfkit__mta_session_trusted(const struct spfkit__mta_config *cfg, int authenticated,
					int verified)
{
	if (cfg->skip_authenticated && authenticated)
		return "authenticated";
	if (cfg->skip_verified && verified)
		return "verified client certificate";
	return NULL;
}

int spfkit__mta_want_helo(const struct spfkit__mta_config *cfg)
{
	return cfg->helo_reject != SPFKIT_MTA_REJECT_NO_CHECK;
}

int spfkit__mta_want_mailfrom(const struct spfkit__mta_config *cfg,
			      const struct spfkit__mta_input *in)
{
	int local;

	if (!has_sender(in) || cfg->mail_from_reject == SPFKIT_MTA_REJECT_NO_CHECK)
		return 0;
	return !refuses(identity_kind(cfg, in, SPFKIT_IDENTITY_HELO, &local));
}

int spfkit__mta_temperror_defers(const struct spfkit__mta_config *cfg,
				 const struct spfkit__mta_input *in, enum spfkit_identity id)
{
	struct spfkit_result temperror;
	struct spfkit__mta_input probe = *in;
	struct spfkit__mta_check *chk = id == SPFKIT_IDENTITY_HELO ? &probe.helo_check
								   : &probe.mfrom_check;
	int local;

	memset(&temperror, 0, sizeof(temperror));
	temperror.code = SPFKIT_RESULT_TEMPERROR;
	chk->checked = 1;
	chk->res = &temperror;
	chk->no_mail_record = 0;
	return cfg->test_only != 0 && identity_kind(cfg, &probe, id, &local) == SPFKIT__MTA_DEFER;
}

/* ---- texts ------------------------------------------------------------ */

static void make_headers(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			 enum spfkit_identity id, struct spfkit__mta_decision *out)
{
	struct spfkit_result res = *check_of(in, id)->res;
	size_t n = 0;
	int rc;

	if (cfg->hide_receiver)
		res.receiver = NULL;
	if (cfg->header_type & SPFKIT_MTA_HEADER_SPF) {
		/* a trace field, read by people: UTF-8 where the message may carry it (RFC 6532) */
		rc = in->smtputf8 ? spfkit_format_received_spf_utf8(&res, 1, out->headers[n],
								    SPFKIT__MTA_TEXT_MAX)
				  : spfkit_format_received_spf(&res, 1, out->headers[n],
							       SPFKIT__MTA_TEXT_MAX);
		if (rc >= 0 && (size_t)rc < SPFKIT__MTA_TEXT_MAX)
			n++;
	}
	if (cfg->header_type & SPFKIT_MTA_HEADER_AR) {
		/*
		 * Always ASCII, smtp.mailfrom in A-labels, SMTPUTF8 or not: it is
		 * text for programs, which RFC 8616 §3 keeps ASCII, and DMARC
		 * compares A-labels (§6). A U-label value is worse than useless to
		 * Debian's OpenDMARC 1.4.2: it takes only ASCII letters there and
		 * tempfails the whole message otherwise (tests/mta/test_smtputf8_e2e.py).
		 */
		rc = spfkit_format_auth_results(&res, cfg->authserv_id, 1, out->headers[n],
						SPFKIT__MTA_TEXT_MAX);
		if (rc >= 0 && (size_t)rc < SPFKIT__MTA_TEXT_MAX)
			n++;
	}
	out->header_count = n;
	out->identity = id;
}

static const char *const bypass_comment[] = {
	[SPFKIT__MTA_BYPASS_NONE] = "",
	[SPFKIT__MTA_BYPASS_LOCAL] = "SPF check N/A for local connections",
	[SPFKIT__MTA_BYPASS_WHITELIST] = "SPF skipped for whitelisted relay",
	[SPFKIT__MTA_BYPASS_DOMAIN] = "SPF skipped for whitelisted relay domain",
	[SPFKIT__MTA_BYPASS_HELO] = "SPF skipped for whitelisted HELO domain",
	[SPFKIT__MTA_BYPASS_PTR] = "SPF skipped for PTR whitelisted relay domain",
};

/* An identity as the session gave it; UTF-8 kept only in an SMTPUTF8 message's header. */
static void put_or_unknown(struct spfkit__text *w, const char *s, size_t n, int utf8)
{
	if (s == NULL || n == 0)
		spfkit__text_puts(w, "<UNKNOWN>");
	else
		put_clean(w, s, n, 120, 1, utf8);
}

/* The trace header policyd-spf prepends when no check ran (X-Comment, or AR "none"). */
static void bypass_header(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			  char *buf, int ar)
{
	const char *recv = cfg->hide_receiver ? NULL : in->receiver;
	struct spfkit__text w;

	spfkit__text_init(&w, buf, SPFKIT__MTA_TEXT_MAX);
	if (ar) {
		spfkit__text_puts(&w, "Authentication-Results: ");
		put_clean(&w, cfg->authserv_id, strlen(cfg->authserv_id), 255, 0, 0);
		spfkit__text_puts(&w, "; none (");
	} else {
		spfkit__text_puts(&w, "X-Comment: ");
	}
	spfkit__text_puts(&w, bypass_comment[in->bypass]);
	spfkit__text_puts(&w, " - client-ip=");
	put_or_unknown(&w, in->client_ip, in->client_ip ? strlen(in->client_ip) : 0, 0);
	spfkit__text_puts(&w, "; helo=");
	/* UTF-8 in the X-Comment of an SMTPUTF8 message; an A-R stays ASCII (make_headers) */
	put_or_unknown(&w, in->helo, in->helo_len, in->smtputf8 && !ar);
	spfkit__text_puts(&w, "; envelope-from=");
	put_or_unknown(&w, in->sender, in->sender_len, in->smtputf8 && !ar);
	spfkit__text_puts(&w, "; receiver=");
	put_or_unknown(&w, recv, recv ? strlen(recv) : 0, 0);
	if (ar)
		spfkit__text_puts(&w, ")");
}

static const char *result_word(enum spfkit_result_code r)
{
	static const char *const words[] = {"None", "Neutral", "Pass", "Fail", "Softfail",
					    "Temperror", "Permerror"};

	return (unsigned)r < sizeof(words) / sizeof(words[0]) ? words[r] : "None";
}

/* {spf}: why, in the words of the record or of the evaluator. */
static void put_spf_reason(struct spfkit__text *w, const struct spfkit_result *res, int local)
{
	const char *s = NULL;

	if (local) {
		spfkit__text_puts(w, "Receiver policy for SPF ");
		spfkit__text_puts(w, result_word(res->code));
		return;
	}
	switch (res->code) {
	case SPFKIT_RESULT_FAIL:
		s = res->explanation != NULL ? res->explanation : "SPF fail - not authorized";
		break;
	case SPFKIT_RESULT_SOFTFAIL:
		s = "SPF softfail - the domain discourages use of this host";
		break;
	case SPFKIT_RESULT_NEUTRAL:
		s = "SPF neutral - the domain neither permits nor denies this host";
		break;
	case SPFKIT_RESULT_PERMERROR:
		s = res->problem != NULL ? res->problem : "SPF permanent error";
		break;
	case SPFKIT_RESULT_TEMPERROR:
		s = res->problem != NULL ? res->problem : "SPF temporary error";
		break;
	default:
		s = result_word(res->code);
		break;
	}
	put_clean(w, s, strlen(s), SPFKIT__MTA_REASON_MAX, 0, 0);
}

/* {url}: Reason_URL?s=helo|mfrom;id=<identity>;ip=<client>;r=<receiver>, as policyd-spf. */
static void put_url(struct spfkit__text *w, const struct spfkit__mta_config *cfg,
		    const struct spfkit__mta_input *in, enum spfkit_identity id)
{
	const char *r = cfg->hide_receiver || in->receiver == NULL ? "<UNKNOWN>" : in->receiver;
	const char *ip = in->client_ip != NULL ? in->client_ip : "";

	spfkit__text_puts(w, cfg->reason_url);
	spfkit__text_puts(w, id == SPFKIT_IDENTITY_HELO ? "?s=helo;id=" : "?s=mfrom;id=");
	if (id == SPFKIT_IDENTITY_HELO)
		put_percent(w, in->helo != NULL ? in->helo : "", in->helo_len, 120);
	else
		put_percent(w, in->sender, in->sender_len, 120);
	spfkit__text_puts(w, ";ip=");
	put_percent(w, ip, strlen(ip), 64);
	spfkit__text_puts(w, ";r=");
	put_percent(w, r, strlen(r), 120);
}

/* Reason_Message with its placeholders (checked by the config reader). */
static void put_reason(struct spfkit__text *w, const struct spfkit__mta_config *cfg,
		       const struct spfkit__mta_input *in, enum spfkit_identity id,
		       enum spfkit__mta_kind k, int local)
{
	const char *m = cfg->reason_message;
	size_t start = w->len;

	while (*m != '\0' && w->len - start < SPFKIT__MTA_REASON_MAX) {
		if ((m[0] == '{' || m[0] == '}') && m[1] == m[0]) {
			spfkit__text_put(w, m, 1);
			m += 2;
		} else if (strncmp(m, "{rejectdefer}", 13) == 0) {
			spfkit__text_puts(w, k == SPFKIT__MTA_DEFER ? "deferred" : "rejected");
			m += 13;
		} else if (strncmp(m, "{spf}", 5) == 0) {
			put_spf_reason(w, check_of(in, id)->res, local);
			m += 5;
		} else if (strncmp(m, "{url}", 5) == 0) {
			put_url(w, cfg, in, id);
			m += 5;
		} else {
			spfkit__text_put(w, m, 1);
			m++;
		}
	}
}

/* "550 5.7.23 ...", "550 5.7.24 ..." (errors), "defer_if_permit 4.7.24 ..." or "451 4.7.24 ...". */
static void make_refusal(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			 enum spfkit_identity id, enum spfkit__mta_kind k, int local,
			 struct spfkit__mta_decision *out)
{
	enum spfkit_result_code r = check_of(in, id)->res->code;
	int is_error = r == SPFKIT_RESULT_PERMERROR || r == SPFKIT_RESULT_TEMPERROR;
	struct spfkit__text w;

	spfkit__text_init(&w, out->action, sizeof(out->action));
	if (k == SPFKIT__MTA_REJECT)
		spfkit__text_puts(&w, "550");
	else
		spfkit__text_puts(&w, cfg->temperror_action == SPFKIT_MTA_DEFER_451 ? "451" : "defer_if_permit");
	if (cfg->enhanced_status_codes) /* RFC 7372 §3.2 */
		spfkit__text_puts(&w, k == SPFKIT__MTA_DEFER ? " 4.7.24" : is_error ? " 5.7.24" : " 5.7.23");
	spfkit__text_puts(&w, " ");
	put_reason(&w, cfg, in, id, k, local);
	out->kind = k;
	out->identity = id;
	out->header_count = 0;
}

static void set_prepend_action(struct spfkit__mta_decision *out)
{
	struct spfkit__text w;

	spfkit__text_init(&w, out->action, sizeof(out->action));
	if (out->header_count == 0) {
		out->kind = SPFKIT__MTA_DUNNO;
		spfkit__text_puts(&w, "dunno");
		return;
	}
	out->kind = SPFKIT__MTA_PREPEND;
	spfkit__text_puts(&w, "prepend ");
	spfkit__text_puts(&w, out->headers[0]);
}

static void make_restriction(const char *name, enum spfkit_identity id,
			     struct spfkit__mta_decision *out)
{
	struct spfkit__text w;

	spfkit__text_init(&w, out->action, sizeof(out->action));
	put_clean(&w, name, strlen(name), 512, 0, 0);
	out->kind = SPFKIT__MTA_RESTRICTION;
	out->identity = id;
	out->header_count = 0;
}

static int passed(const struct spfkit__mta_input *in, enum spfkit_identity id)
{
	const struct spfkit__mta_check *c = check_of(in, id);

	return c->checked && c->res != NULL && c->res->code == SPFKIT_RESULT_PASS;
}

/* Both identities through the table: the first answer, before TestOnly & co. */
static void decide_checks(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			  struct spfkit__mta_decision *out)
{
	enum spfkit_identity helo = SPFKIT_IDENTITY_HELO, mfrom = SPFKIT_IDENTITY_MAILFROM;
	int local = 0;
	enum spfkit__mta_kind k = identity_kind(cfg, in, helo, &local);

	if (refuses(k)) {
		make_refusal(cfg, in, helo, k, local, out);
		return;
	}
	if (has_sender(in) && in->mfrom_check.checked && in->mfrom_check.res != NULL) {
		k = identity_kind(cfg, in, mfrom, &local);
		if (refuses(k))
			make_refusal(cfg, in, mfrom, k, local, out);
		else if (passed(in, mfrom) && cfg->mail_from_pass_restriction != NULL)
			make_restriction(cfg->mail_from_pass_restriction, mfrom, out);
		else if (passed(in, helo) && cfg->helo_pass_restriction != NULL)
			make_restriction(cfg->helo_pass_restriction, helo, out);
		else
			make_headers(cfg, in, mfrom, out);
		return;
	}
	if (in->helo_check.checked && in->helo_check.res != NULL) {
		if (passed(in, helo) && cfg->helo_pass_restriction != NULL)
			make_restriction(cfg->helo_pass_restriction, helo, out);
		else
			make_headers(cfg, in, helo, out);
	}
}

void spfkit__mta_decide(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			struct spfkit__mta_decision *out)
{
	size_t i;

	/* the texts are emptied, not zeroed: a few kilobytes per decision otherwise */
	out->decided_by_check = 0;
	out->test_only = 0;
	out->header_count = 0;
	for (i = 0; i < SPFKIT__MTA_MAX_HEADERS; i++)
		out->headers[i][0] = '\0';
	out->kind = SPFKIT__MTA_DUNNO;
	out->identity = has_sender(in) ? SPFKIT_IDENTITY_MAILFROM : SPFKIT_IDENTITY_HELO;
	memcpy(out->action, "dunno", 6);
	if (cfg->mock) {
		/* policyd-spf's Mock answers this, whatever the message */
		snprintf(out->action, sizeof(out->action), "dunno mock header field that should be ignored");
		return;
	}
	if (in->bypass != SPFKIT__MTA_BYPASS_NONE) {
		size_t n = 0;

		if (cfg->header_type & SPFKIT_MTA_HEADER_SPF)
			bypass_header(cfg, in, out->headers[n++], 0);
		if (cfg->header_type & SPFKIT_MTA_HEADER_AR)
			bypass_header(cfg, in, out->headers[n++], 1);
		out->header_count = n;
		set_prepend_action(out);
		return;
	}
	out->kind = SPFKIT__MTA_PREPEND;
	decide_checks(cfg, in, out);
	out->decided_by_check = in->helo_check.checked || in->mfrom_check.checked;
	/* TestOnly = 0: never reject nor defer, only record (policyd-spf.conf(5)) */
	if (cfg->test_only == 0 && out->kind != SPFKIT__MTA_PREPEND && out->decided_by_check) {
		make_headers(cfg, in, out->identity, out);
		out->kind = SPFKIT__MTA_PREPEND;
		out->test_only = 1;
	}
	/* Prospective: checking outbound mail; nothing is added to it */
	if (cfg->has_prospective && out->kind == SPFKIT__MTA_PREPEND)
		out->header_count = 0;
	if (out->kind == SPFKIT__MTA_PREPEND)
		set_prepend_action(out);
}

void spfkit__mta_action_nth(const struct spfkit__mta_decision *d, size_t n, char *buf, size_t size)
{
	struct spfkit__text w;

	spfkit__text_init(&w, buf, size);
	if (d->kind != SPFKIT__MTA_PREPEND || n == 0) {
		spfkit__text_puts(&w, d->action);
	} else if (n < d->header_count) {
		spfkit__text_puts(&w, "prepend ");
		spfkit__text_puts(&w, d->headers[n]);
	} else {
		spfkit__text_puts(&w, "dunno");
	}
}

const char *spfkit__mta_kind_name(enum spfkit__mta_kind kind)
{
	switch (kind) {
	case SPFKIT__MTA_DUNNO: return "dunno";
	case SPFKIT__MTA_PREPEND: return "prepend";
	case SPFKIT__MTA_REJECT: return "reject";
	case SPFKIT__MTA_DEFER: return "defer";
	case SPFKIT__MTA_RESTRICTION: return "restriction";
	}
	return "?";
}
