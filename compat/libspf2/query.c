/*
 * The three queries of compat/libspf2 (mail from, fallback record,
 * secondary MX), evaluated by spfkit over the server's DNS layer, and
 * the response texts libspf2 programs read: header comment, smtp
 * comment, explanation, Received-SPF.
 *
 * libspf2 behaviour kept: the loopback free pass, postmaster@<helo>,
 * result/reason/errcode as libspf2 reports them for the same cases,
 * its header-comment and smtp-comment wording. Changed on purpose (the
 * table in docs/libspf2-compat.md): RFC 7208 evaluation and limits,
 * syntax errors are permerror, Received-SPF values quoted and
 * sanitised and the header gains receiver= and identity=.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "spf2_int.h"


/* Longest piece of SMTP input copied into a text; the rest becomes "...". */
#define SPF2_VALUE_MAX 256u
/* An explanation as long as the library expands one (8 KiB): libspf2
 * keeps the whole, and a sender of 5 KB shows in the default one. */
#define SPF2_EXPLANATION_MAX 8192u

/* ---- text helpers ---------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (n > SIZE_MAX / 2 - b->len - 1) {
		b->oom = 1;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *q = realloc(b->p, cap);

		if (q == NULL) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* The buffer's string (the caller frees it), or NULL when memory ran out. */
static char *sb_take(struct sbuf *b)
{
	if (b->oom || b->p == NULL) {
		free(b->p);
		return b->oom ? NULL : spf2_strdup("");
	}
	return b->p;
}

/* Bytes that are not printable ASCII become '?'; a value from the SMTP
 * session is cut at SPF2_VALUE_MAX bytes. */
static void sb_clean(struct sbuf *b, const char *s, size_t max)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		char o = (c >= 0x20 && c < 0x7f) ? (char)c : '?';

		sb_add(b, &o, 1);
	}
	if (n > max)
		sb_str(b, "...");
}

static int atext(unsigned char c)
{
	return isalnum(c) || (c != 0 && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL);
}

/* RFC 5322 dot-atom: atext runs joined by single dots. */
static int dot_atom(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SPF2_VALUE_MAX || s[0] == '.' || s[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.' ? s[i + 1] == '.' : !atext(c))
			return 0;
	}
	return 1;
}

/* A Received-SPF value (RFC 7208 §9.1: dot-atom or quoted-string). */
static void sb_value(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (dot_atom(s)) {
		sb_str(b, s);
		return;
	}
	sb_add(b, "\"", 1);
	for (size_t i = 0; i < n && i < SPF2_VALUE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		char o = (c >= 0x20 && c < 0x7f) ? (char)c : '?';

		if (o == '"' || o == '\\')
			sb_add(b, "\\", 1);
		sb_add(b, &o, 1);
	}
	if (n > SPF2_VALUE_MAX)
		sb_str(b, "...");
	sb_add(b, "\"", 1);
}

/* A comment (RFC 5322 §3.2.2): backslashes escaped, parentheses too
 * unless they nest properly. */
static void sb_comment(struct sbuf *b, const char *s)
{
	int depth = 0, balanced = 1;

	for (const char *p = s; *p != '\0'; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth < 0)
			balanced = 0;
	}
	if (depth != 0)
		balanced = 0;
	for (const char *p = s; *p != '\0'; p++) {
		if (*p == '\\' || (!balanced && (*p == '(' || *p == ')')))
			sb_add(b, "\\", 1);
		sb_add(b, p, 1);
	}
}

/* ---- response texts -------------------------------------------------- */

static const char *client_ip(const SPF_request_t *sr, char *buf, size_t size)
{
	const char *ip = NULL;

	if (sr->client_ver == AF_INET)
		ip = inet_ntop(AF_INET, &sr->ipv4, buf, (socklen_t)size);
	else if (sr->client_ver == AF_INET6)
		ip = inet_ntop(AF_INET6, &sr->ipv6, buf, (socklen_t)size);
	return ip;
}

/* libspf2's header comment, its wording, with SMTP input cleaned. */
static char *header_comment(const SPF_request_t *sr, const SPF_response_t *rp)
{
	const char *rec_dom = SPF_request_get_rec_dom((SPF_request_t *)sr);
	const char *dom = sr->env_from_dp != NULL ? sr->env_from_dp : sr->helo_dom;
	struct sbuf src = {0}, b = {0};
	char ipbuf[INET6_ADDRSTRLEN], num[32];
	const char *ip = client_ip(sr, ipbuf, sizeof(ipbuf));
	char *source;
	size_t room;

	if (ip == NULL)
		ip = "(unknown ip address)";
	if (rp->reason == SPF_REASON_LOCAL_POLICY) {
		sb_str(&src, "local policy");
	} else if (rp->reason == SPF_REASON_2MX && sr->rcpt_to_dom != NULL) {
		sb_clean(&src, sr->rcpt_to_dom, SPF2_VALUE_MAX);
	} else if (dom == NULL) {
		sb_str(&src, "unknown domain");
	} else {
		sb_str(&src, "domain of ");
		sb_clean(&src, dom, SPF2_VALUE_MAX);
	}
	source = sb_take(&src);
	if (source == NULL)
		return NULL;
	sb_clean(&b, rec_dom != NULL ? rec_dom : "", SPF2_VALUE_MAX);
	/* libspf2 writes the comment into rec_dom + source + ip + 80 bytes
	 * and cuts what does not fit (a long SPF_strerror() text) */
	room = b.len + strlen(source) + strlen(ip) + 80 - 1;
	sb_str(&b, ": ");
	switch (rp->result) {
	case SPF_RESULT_PASS:
		if (rp->reason == SPF_REASON_LOCALHOST) {
			sb_str(&b, "localhost is always allowed.");
		} else if (rp->reason == SPF_REASON_2MX) {
			sb_str(&b, "message received from ");
			sb_str(&b, ip);
			sb_str(&b, " which is an MX secondary for ");
			sb_str(&b, source);
			sb_str(&b, ".");
		} else {
			sb_str(&b, source);
			sb_str(&b, " designates ");
			sb_str(&b, ip);
			sb_str(&b, " as permitted sender");
		}
		break;
	case SPF_RESULT_FAIL:
	case SPF_RESULT_SOFTFAIL:
		if (rp->result == SPF_RESULT_SOFTFAIL)
			sb_str(&b, "transitioning ");
		sb_str(&b, source);
		sb_str(&b, " does not designate ");
		sb_str(&b, ip);
		sb_str(&b, " as permitted sender");
		break;
	case SPF_RESULT_PERMERROR:
		sb_str(&b, "error in processing during lookup of ");
		sb_str(&b, source);
		sb_str(&b, ": ");
		sb_str(&b, SPF_strerror(rp->err));
		break;
	case SPF_RESULT_NEUTRAL:
		sb_str(&b, ip);
		sb_str(&b, " is neither permitted nor denied by ");
		sb_str(&b, source);
		break;
	case SPF_RESULT_NONE:
		sb_str(&b, source);
		sb_str(&b, " does not provide an SPF record");
		break;
	case SPF_RESULT_TEMPERROR:
		sb_str(&b, "encountered temporary error during SPF processing of ");
		sb_str(&b, source);
		break;
	default:
		snprintf(num, sizeof(num), "%d", (int)rp->result);
		sb_str(&b, "error: unknown SPF result ");
		sb_str(&b, num);
		sb_str(&b, " encountered while checking ");
		sb_str(&b, ip);
		sb_str(&b, " for ");
		sb_str(&b, source);
		break;
	}
	free(source);
	if (!b.oom && b.len > room) {
		b.len = room;
		b.p[room] = '\0';
	}
	return sb_take(&b);
}

#define RECEIVED_SPF_NAME "Received-SPF: "

/* libspf2's header (result, comment, client-ip, envelope-from, helo),
 * every SMTP value quoted when it is not a dot-atom, plus receiver= and
 * identity= (RFC 7208 §9.1). */
static char *received_spf(const SPF_request_t *sr, const SPF_response_t *rp)
{
	struct sbuf b = {0};
	char ipbuf[INET6_ADDRSTRLEN];
	const char *ip = client_ip(sr, ipbuf, sizeof(ipbuf));
	const char *rec_dom = SPF_request_get_rec_dom((SPF_request_t *)sr);

	sb_str(&b, RECEIVED_SPF_NAME);
	sb_str(&b, SPF_strresult(rp->result));
	sb_str(&b, " (");
	sb_comment(&b, rp->header_comment != NULL ? rp->header_comment : "");
	sb_str(&b, ")");
	if (ip != NULL) {
		sb_str(&b, " client-ip=");
		sb_str(&b, ip);
		sb_str(&b, ";");
	}
	if (sr->env_from != NULL) {
		sb_str(&b, " envelope-from=");
		sb_value(&b, sr->env_from);
		sb_str(&b, ";");
	}
	if (sr->helo_dom != NULL) {
		sb_str(&b, " helo=");
		sb_value(&b, sr->helo_dom);
		sb_str(&b, ";");
	}
	if (rec_dom != NULL && rec_dom[0] != '\0') {
		sb_str(&b, " receiver=");
		sb_value(&b, rec_dom);
		sb_str(&b, ";");
	}
	sb_str(&b, sr->use_helo ? " identity=helo;" : " identity=mailfrom;");
	return sb_take(&b);
}

/* Result, reason and errcode decided: fill every text of the response. */
static SPF_errcode_t finish(SPF_request_t *sr, SPF_response_t *rp, SPF_result_t result,
			    SPF_reason_t reason, SPF_errcode_t err, const char *explanation)
{
	rp->result = result;
	rp->reason = reason;
	rp->err = err;
	free(rp->explanation);
	free(rp->smtp_comment);
	free(rp->header_comment);
	free(rp->received_spf);
	rp->explanation = rp->smtp_comment = rp->header_comment = NULL;
	rp->received_spf = rp->received_spf_value = NULL;
	if ((result == SPF_RESULT_FAIL || result == SPF_RESULT_SOFTFAIL ||
	     result == SPF_RESULT_NEUTRAL) && explanation != NULL) {
		struct sbuf e = {0}, c = {0};
		char *reply;

		sb_clean(&e, explanation, SPF2_EXPLANATION_MAX);
		rp->explanation = sb_take(&e);
		if (rp->explanation != NULL) {
			sb_str(&c, rp->explanation);
			sb_str(&c, " : Reason: ");
			sb_str(&c, SPF_strreason(reason));
			reply = sb_take(&c);
			/* libspf2 keeps SPF_SMTP_COMMENT_SIZE - 1 bytes */
			if (reply != NULL && strlen(reply) > SPF_SMTP_COMMENT_SIZE - 1)
				reply[SPF_SMTP_COMMENT_SIZE - 1] = '\0';
			rp->smtp_comment = reply;
		}
	}
	rp->header_comment = header_comment(sr, rp);
	rp->received_spf = received_spf(sr, rp);
	if (rp->received_spf != NULL)
		rp->received_spf_value = rp->received_spf + strlen(RECEIVED_SPF_NAME);
	return err;
}

/* ---- mapping spfkit's result ----------------------------------------- */

/*
 * What libspf2's compiler stops at in a term: after the qualifier, a
 * name of letters, digits, '-' and '_'; the byte after it ('\0' at the
 * end of the term). The name is term[*name_start .. +*name_len].
 */
static char term_stop(const char *term, size_t term_len, size_t *name_start, size_t *name_len)
{
	size_t i = 0, start;

	while (i < term_len && term[i] != '\0' && strchr("+-~?", term[i]) != NULL)
		i++;
	start = i;
	while (i < term_len && (isalnum((unsigned char)term[i]) || term[i] == '-' || term[i] == '_'))
		i++;
	*name_start = start;
	*name_len = i - start;
	return i < term_len ? term[i] : '\0';
}

/* Is the term an include: or redirect= (qualifier allowed)? */
static int term_names_record(const char *term, size_t term_len)
{
	size_t q = 0;

	while (q < term_len && term[q] != '\0' && strchr("+-~?", term[q]) != NULL)
		q++;
	return (term_len - q >= 8 && strncasecmp(term + q, "include:", 8) == 0) ||
	       (term_len - q >= 9 && strncasecmp(term + q, "redirect=", 9) == 0);
}

/* Does the reason say the record does not parse (§4.6)? */
static int syntax_reason(enum spfkit_reason reason)
{
	return reason >= SPFKIT_REASON_VERSION && reason <= SPFKIT_REASON_MACRO_CONTROL;
}

/* A domain-spec that is not one, by libspf2's lights: its compiler does
 * not check the toplabel nor an empty domain-spec (§7.1). */
static int domain_spec_reason(enum spfkit_reason reason)
{
	switch (reason) {
	case SPFKIT_REASON_EMPTY_DOMAIN:
	case SPFKIT_REASON_DOMAIN_END:
	case SPFKIT_REASON_EMPTY_TOPLABEL:
	case SPFKIT_REASON_TOPLABEL_CHAR:
	case SPFKIT_REASON_TOPLABEL_DASH_START:
	case SPFKIT_REASON_TOPLABEL_DASH_END:
	case SPFKIT_REASON_TOPLABEL_NUMERIC:
		return 1;
	default:
		return 0;
	}
}

/* The code of a syntax reason that does not depend on the term. */
static SPF_errcode_t syntax_rule_code(enum spfkit_reason reason)
{
	switch (reason) {
	case SPFKIT_REASON_UNKNOWN_MECHANISM: return SPF_E_UNKNOWN_MECH;
	case SPFKIT_REASON_QUALIFIED_MODIFIER: return SPF_E_MOD_W_PREF;
	case SPFKIT_REASON_EMPTY_MODIFIER_NAME: return SPF_E_INVALID_PREFIX;
	case SPFKIT_REASON_MISSING_DOMAIN:
	case SPFKIT_REASON_IP4_MISSING:
	case SPFKIT_REASON_IP6_MISSING:
		return SPF_E_MISSING_OPT;
	case SPFKIT_REASON_IP4_IP6_CIDR:
	case SPFKIT_REASON_IP4_TEXT:
	case SPFKIT_REASON_IP4_FORM:
	case SPFKIT_REASON_IP4_ZERO:
	case SPFKIT_REASON_IP4_RANGE:
		return SPF_E_INVALID_IP4;
	case SPFKIT_REASON_IP6_DOUBLE_SLASH:
	case SPFKIT_REASON_IP6_GROUPS:
	case SPFKIT_REASON_IP6_QUAD_TEXT:
	case SPFKIT_REASON_IP6_CHAR:
	case SPFKIT_REASON_IP6_GROUP_SIZE:
	case SPFKIT_REASON_IP6_DOUBLE_COLON:
	case SPFKIT_REASON_IP6_COLON_END:
	case SPFKIT_REASON_IP6_FORM:
	case SPFKIT_REASON_IP6_FULL_COLONS:
		return SPF_E_INVALID_IP6;
	case SPFKIT_REASON_DOMAIN_END:
	case SPFKIT_REASON_EMPTY_TOPLABEL:
	case SPFKIT_REASON_TOPLABEL_CHAR:
	case SPFKIT_REASON_TOPLABEL_DASH_START:
	case SPFKIT_REASON_TOPLABEL_DASH_END:
	case SPFKIT_REASON_TOPLABEL_NUMERIC:
		return SPF_E_BAD_HOST_TLD;
	case SPFKIT_REASON_CIDR_DIGITS:
	case SPFKIT_REASON_CIDR_ZERO:
	case SPFKIT_REASON_IP4_CIDR:
	case SPFKIT_REASON_IP6_CIDR:
	case SPFKIT_REASON_IP6_CIDR_SLASHES:
	case SPFKIT_REASON_CIDR_TEXT:
	case SPFKIT_REASON_IP6_TEXT:
		return SPF_E_INVALID_CIDR;
	case SPFKIT_REASON_MACRO_EXP_LETTER:
	case SPFKIT_REASON_MACRO_UNTERMINATED:
	case SPFKIT_REASON_MACRO_LETTER:
	case SPFKIT_REASON_MACRO_ZERO:
	case SPFKIT_REASON_MACRO_CHAR:
		return SPF_E_INVALID_VAR;
	case SPFKIT_REASON_NON_ASCII:
	case SPFKIT_REASON_CONTROL_CHAR:
	case SPFKIT_REASON_MACRO_CONTROL:
		return SPF_E_INVALID_CHAR;
	default:
		return SPF_E_SYNTAX; /* the version, two redirects, a '%' alone ... */
	}
}

/*
 * The code libspf2's compiler gives a term it refuses, from our reason
 * and the term's shape (libspf2 1.2.10 spf_compile.c: a term starting
 * with a punctuation mark other than a qualifier is SPF_E_INVALID_PREFIX,
 * with another non-letter SPF_E_INVALID_CHAR; then the name runs over
 * letters, digits, '-' and '_': stopped by any other byte than ':', '/',
 * '=' or the end it is SPF_E_INVALID_CHAR; an unknown name
 * SPF_E_UNKNOWN_MECH; a value or a cidr-length where the mechanism
 * takes none SPF_E_INVALID_OPT or SPF_E_INVALID_CIDR; a missing value
 * SPF_E_MISSING_OPT). A domain-spec it does not check (toplabel, empty)
 * in an include: or redirect= is looked up as it is and has no record:
 * SPF_E_NOT_SPF.
 */
static SPF_errcode_t syntax_code(enum spfkit_reason reason, const char *term, size_t term_len)
{
	size_t name_start, name_len;
	char stop;

	if (term == NULL)
		return syntax_rule_code(reason);
	if (domain_spec_reason(reason) && term_names_record(term, term_len))
		return SPF_E_NOT_SPF;
	stop = term_stop(term, term_len, &name_start, &name_len);
	switch (reason) {
	case SPFKIT_REASON_MODIFIER_NAME:
		return ispunct((unsigned char)term[0]) ? SPF_E_INVALID_PREFIX : SPF_E_INVALID_CHAR;
	case SPFKIT_REASON_UNKNOWN_MECHANISM:
		return stop == '\0' || stop == ':' || stop == '/' || stop == '='
			       ? SPF_E_UNKNOWN_MECH
			       : SPF_E_INVALID_CHAR;
	case SPFKIT_REASON_CONTROL_CHAR:
	case SPFKIT_REASON_MACRO_CONTROL:
	case SPFKIT_REASON_NON_ASCII:
		/* libspf2 splits terms at spaces only: the byte is part of
		 * the term, and an ip4:/ip6: address holding it does not parse */
		if (stop == ':' && name_len == 3 && strncasecmp(term + name_start, "ip4", 3) == 0)
			return SPF_E_INVALID_IP4;
		if (stop == ':' && name_len == 3 && strncasecmp(term + name_start, "ip6", 3) == 0)
			return SPF_E_INVALID_IP6;
		return SPF_E_INVALID_CHAR;
	case SPFKIT_REASON_ALL_ARGUMENT:
	case SPFKIT_REASON_MECHANISM_TEXT:
		return stop == ':' || stop == '=' ? SPF_E_INVALID_OPT
		       : stop == '/'		  ? SPF_E_INVALID_CIDR
						  : SPF_E_INVALID_CHAR;
	default:
		return syntax_rule_code(reason);
	}
}

/* The libspf2 error code of a permerror, from its reason code (never
 * from the problem's words, which are for people). */
static SPF_errcode_t reason_code(const struct spfkit_result *res)
{
	switch (res->reason) {
	case SPFKIT_REASON_DNS_TERMS:
	case SPFKIT_REASON_VOID_LOOKUPS:
	case SPFKIT_REASON_MX_NAMES:
		return SPF_E_BIG_DNS;
	case SPFKIT_REASON_MULTIPLE_RECORDS:
		return SPF_E_MULTIPLE_RECORDS;
	/* libspf2 reports an include of a domain without record as the
	 * failed record lookup, SPF_E_NOT_SPF */
	case SPFKIT_REASON_INCLUDE_NONE:
	case SPFKIT_REASON_INCLUDE_TARGET:
	case SPFKIT_REASON_REDIRECT_NONE:
	case SPFKIT_REASON_REDIRECT_TARGET:
		return SPF_E_NOT_SPF;
	case SPFKIT_REASON_INCLUDE_DEPTH:
		return SPF_E_RECURSIVE;
	case SPFKIT_REASON_EXPANSION_SIZE:
		return SPF_E_BIG_STRING;
	default:
		break;
	}
	if (syntax_reason(res->reason))
		return syntax_code(res->reason, res->reason_term, res->reason_term_len);
	return SPF_E_SYNTAX;
}

/* Is the record a syntax error was found in the checked domain's own? */
static int top_record(const struct spfkit_result *res, const char *dom)
{
	size_t len = strlen(dom);

	if (!syntax_reason(res->reason) || res->reason_domain == NULL)
		return 1;
	if (len > 0 && dom[len - 1] == '.')
		len--;
	return strlen(res->reason_domain) == len && strncasecmp(res->reason_domain, dom, len) == 0;
}

/* "-all", "~all", "?all": what local policy may override. */
static int final_all(const char *mech)
{
	return mech != NULL && (mech[0] == '-' || mech[0] == '~' || mech[0] == '?') &&
	       strcasecmp(mech + 1, "all") == 0;
}

struct run {
	SPF_request_t *sr;
	SPF_response_t *rp;
	struct spf2_ctxref *ref;
	struct spfkit_ctx *ctx;
	struct spf2_adapter ad;
	struct spf2_top top;
	struct spfkit_request req;
};

/* Evaluate `record` (NULL: the domain's own) into *out. */
static int evaluate(struct run *r, const char *record, struct spfkit_eval **out)
{
	*out = NULL;
	if (record == NULL)
		return spfkit_check(r->ctx, &r->ad.r, &r->req, out);
	return spfkit_check_record(r->ctx, &r->ad.r, &r->req, record, strlen(record), out);
}

/* The server's explanation expanded for this request: the default
 * explanation of a "v=spf1 -all" evaluated for the checked domain. */
static char *default_explanation(struct run *r)
{
	struct spfkit_eval *ev = NULL;
	const struct spfkit_result *res;
	char *text = NULL;

	if (evaluate(r, "v=spf1 -all", &ev) == 0) {
		res = spfkit_eval_result(ev);
		if (res != NULL && res->explanation != NULL)
			text = spf2_strdup(res->explanation);
	}
	spfkit_eval_free(ev);
	return text;
}

static SPF_errcode_t map_result(struct run *r, const struct spfkit_result *res, int top_level,
				char **explanation)
{
	SPF_request_t *sr = r->sr;
	SPF_response_t *rp = r->rp;
	const char *dom = sr->cur_dom != NULL ? sr->cur_dom : "";
	SPF_errcode_t err;

	rp->num_dns_mech = (int)res->dns_terms;
	switch (res->code) {
	case SPFKIT_RESULT_PASS:
	case SPFKIT_RESULT_FAIL:
	case SPFKIT_RESULT_SOFTFAIL:
	case SPFKIT_RESULT_NEUTRAL: {
		SPF_result_t out = res->code == SPFKIT_RESULT_PASS	   ? SPF_RESULT_PASS
				   : res->code == SPFKIT_RESULT_FAIL	   ? SPF_RESULT_FAIL
				   : res->code == SPFKIT_RESULT_SOFTFAIL ? SPF_RESULT_SOFTFAIL
									   : SPF_RESULT_NEUTRAL;
		SPF_reason_t why = res->mechanism != NULL && strcmp(res->mechanism, "default") == 0
					   ? SPF_REASON_DEFAULT
					   : SPF_REASON_MECH;

		if (out == SPF_RESULT_FAIL && res->explanation != NULL)
			*explanation = spf2_strdup(res->explanation);
		else if (out != SPF_RESULT_PASS)
			*explanation = default_explanation(r);
		return finish(sr, rp, out, why, SPF_E_SUCCESS, *explanation);
	}
	case SPFKIT_RESULT_NONE:
		if (!r->top.seen || r->top.herrno == HOST_NOT_FOUND)
			SPF_response_add_error(rp, SPF_E_NOT_SPF, "Host '%.256s' not found.", dom);
		else if (r->top.spf_records == 0 && r->top.herrno == NETDB_SUCCESS)
			SPF_response_add_error(rp, SPF_E_NOT_SPF, "No SPF records for '%.256s'", dom);
		else
			SPF_response_add_error(rp, SPF_E_NOT_SPF, "No DNS data for '%.256s'.", dom);
		return finish(sr, rp, SPF_RESULT_NONE, SPF_REASON_FAILURE, SPF_E_NOT_SPF, NULL);
	case SPFKIT_RESULT_TEMPERROR:
		if (top_level && r->top.seen && r->top.herrno != NETDB_SUCCESS) {
			SPF_response_add_error(rp, SPF_E_DNS_ERROR,
					       "Temporary DNS failure for '%.256s'.", dom);
			/* libspf2 leaves this result SPF_RESULT_INVALID */
			return finish(sr, rp, SPF_RESULT_TEMPERROR, SPF_REASON_FAILURE,
				      SPF_E_DNS_ERROR, NULL);
		}
		if (res->problem != NULL)
			SPF_response_add_error(rp, SPF_E_DNS_ERROR, "%.400s", res->problem);
		return finish(sr, rp, SPF_RESULT_TEMPERROR, SPF_REASON_NONE, SPF_E_DNS_ERROR, NULL);
	default:
		break;
	}
	/* permerror */
	err = reason_code(res);
	if (err != SPF_E_BIG_DNS && err != SPF_E_MULTIPLE_RECORDS && err != SPF_E_NOT_SPF &&
	    err != SPF_E_RECURSIVE && err != SPF_E_BIG_STRING && !top_record(res, dom))
		err = SPF_E_NOT_SPF; /* libspf2: an included record that does not compile */
	if (res->problem != NULL)
		SPF_response_add_error(rp, err, "%.400s", res->problem);
	if (err == SPF_E_MULTIPLE_RECORDS && top_level && r->top.spf_records > 1) {
		return finish(sr, rp, SPF_RESULT_PERMERROR, SPF_REASON_FAILURE,
			      SPF_E_MULTIPLE_RECORDS, NULL);
	}
	return finish(sr, rp, SPF_RESULT_PERMERROR, SPF_REASON_NONE, err, NULL);
}

static int set_ip(const SPF_request_t *sr, struct spfkit_ip *ip)
{
	if (sr->client_ver == AF_INET) {
		ip->family = 4;
		memcpy(ip->addr, &sr->ipv4, 4);
		return 0;
	}
	if (sr->client_ver == AF_INET6) {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_addr = sr->ipv6;
		/* an IPv4-mapped address is an IPv4 client (RFC 7208 §5) */
		return spfkit_ip_from_sockaddr((const struct sockaddr *)&sin6, sizeof(sin6), ip);
	}
	return -1;
}

SPF_errcode_t spf2_query(SPF_request_t *sr, SPF_response_t **out, enum spf2_query_kind kind,
			 const char *arg)
{
	struct run r;
	struct spf2_server *s;
	struct spfkit_eval *ev = NULL;
	const struct spfkit_result *res;
	const char *record = NULL;
	char *explanation = NULL, *mx_record = NULL;
	SPF_errcode_t err;
	int rc;

	if (out == NULL)
		return SPF_E_INTERNAL_ERROR;
	*out = SPF_response_new(sr);
	if (*out == NULL)
		return SPF_E_NO_MEMORY;
	if (sr == NULL || sr->spf_server == NULL) {
		/* nothing to describe: result and code only */
		(*out)->result = SPF_RESULT_PERMERROR;
		(*out)->err = SPF_E_NOT_CONFIG;
		return SPF_E_NOT_CONFIG;
	}
	memset(&r, 0, sizeof(r));
	r.sr = sr;
	r.rp = *out;
	s = (struct spf2_server *)sr->spf_server;

	/* libspf2 gives localhost a free ride, before anything else. */
	if (SPF_request_is_loopback(sr))
		return finish(sr, r.rp, SPF_RESULT_PASS, SPF_REASON_LOCALHOST, SPF_E_SUCCESS, NULL);

	spfkit_request_init(&r.req);
	sr->cur_dom = sr->use_helo ? sr->helo_dom : sr->env_from_dp;
	if (kind == SPF2_Q_RCPTTO) {
		const char *at = arg != NULL ? strchr(arg, '@') : NULL;
		const char *dom = at != NULL ? at + 1 : arg;
		size_t len;

		free(sr->rcpt_to_dom);
		sr->rcpt_to_dom = spf2_strdup(dom != NULL ? dom : "");
		len = sizeof(SPF_VER_STR " mx:") + (sr->rcpt_to_dom ? strlen(sr->rcpt_to_dom) : 0);
		mx_record = sr->rcpt_to_dom != NULL ? malloc(len) : NULL;
		if (mx_record == NULL)
			return finish(sr, r.rp, SPF_RESULT_TEMPERROR, SPF_REASON_NONE, SPF_E_NO_MEMORY,
				      NULL);
		snprintf(mx_record, len, SPF_VER_STR " mx:%s", sr->rcpt_to_dom);
		record = mx_record;
		sr->cur_dom = sr->rcpt_to_dom; /* as libspf2: the recipient's domain */
	} else if (kind == SPF2_Q_FALLBACK) {
		record = arg;
		if (record == NULL || !spfkit_record_is_spf(record, strlen(record))) {
			SPF_response_add_error(r.rp, SPF_E_NOT_SPF, "Failed to compile fallback record");
			return finish(sr, r.rp, SPF_RESULT_PERMERROR, SPF_REASON_FAILURE, SPF_E_NOT_SPF,
				      NULL);
		}
	}
	if (sr->client_ver != AF_INET && sr->client_ver != AF_INET6) {
		free(mx_record);
		return finish(sr, r.rp, SPF_RESULT_PERMERROR, SPF_REASON_NONE, SPF_E_NOT_CONFIG, NULL);
	}
	if (sr->cur_dom == NULL || sr->env_from == NULL || sr->spf_server->resolver == NULL) {
		/* libspf2 aborts here; a result is kinder */
		SPF_response_add_error(r.rp, SPF_E_NOT_CONFIG, "No sender and no HELO name set");
		free(mx_record);
		return finish(sr, r.rp, SPF_RESULT_PERMERROR, SPF_REASON_NONE, SPF_E_NOT_CONFIG, NULL);
	}
	if (set_ip(sr, &r.req.ip) != 0) {
		free(mx_record);
		return finish(sr, r.rp, SPF_RESULT_PERMERROR, SPF_REASON_NONE, SPF_E_NOT_CONFIG, NULL);
	}
	r.req.sender = sr->env_from;
	r.req.sender_len = strlen(sr->env_from);
	r.req.helo = sr->helo_dom != NULL ? sr->helo_dom : "";
	r.req.helo_len = strlen(r.req.helo);
	r.req.identity = sr->use_helo ? SPFKIT_IDENTITY_HELO : SPFKIT_IDENTITY_MAILFROM;
	r.req.now = (int64_t)time(NULL);
	r.ref = spf2_ctx_get(sr->spf_server);
	r.ctx = r.ref != NULL ? r.ref->ctx : NULL;
	if (r.ctx == NULL) {
		free(mx_record);
		return finish(sr, r.rp, SPF_RESULT_TEMPERROR, SPF_REASON_NONE, SPF_E_NO_MEMORY, NULL);
	}
	r.top.domain = sr->cur_dom;
	spf2_adapter_init(&r.ad, sr->spf_server->resolver, record == NULL ? &r.top : NULL);

	rc = evaluate(&r, record, &ev);
	res = rc == 0 ? spfkit_eval_result(ev) : NULL;
	if (res == NULL) {
		if (rc == SPFKIT_ENOMEM || rc == 0) {
			err = finish(sr, r.rp, SPF_RESULT_TEMPERROR, SPF_REASON_NONE, SPF_E_NO_MEMORY,
				     NULL);
		} else {
			/* a sender or HELO spfkit refuses (over SPFKIT_IDENTITY_MAX
			 * bytes: no SMTP line carries one) */
			SPF_response_add_error(r.rp, SPF_E_INVALID_OPT, "Request refused: %s",
					       spfkit_strerror(rc));
			err = finish(sr, r.rp, SPF_RESULT_PERMERROR, SPF_REASON_NONE,
				     SPF_E_INVALID_OPT, NULL);
		}
		goto out;
	}
	if (kind == SPF2_Q_MAILFROM && sr->use_local_policy && s->policy != NULL &&
	    (res->code == SPFKIT_RESULT_FAIL || res->code == SPFKIT_RESULT_SOFTFAIL ||
	     res->code == SPFKIT_RESULT_NEUTRAL) &&
	    final_all(res->mechanism)) {
		struct spfkit_eval *pev = NULL;
		const struct spfkit_result *pres;

		r.ad.top = NULL;
		if (evaluate(&r, s->policy, &pev) == 0) {
			pres = spfkit_eval_result(pev);
			if (pres != NULL && pres->code == SPFKIT_RESULT_PASS) {
				r.rp->num_dns_mech = (int)(res->dns_terms + pres->dns_terms);
				err = finish(sr, r.rp, SPF_RESULT_PASS, SPF_REASON_LOCAL_POLICY,
					     SPF_E_SUCCESS, NULL);
				spfkit_eval_free(pev);
				goto out;
			}
		}
		spfkit_eval_free(pev);
	}
	err = map_result(&r, res, record == NULL, &explanation);
out:
	spfkit_eval_free(ev);
	spf2_ctx_put(sr->spf_server, r.ref);
	spf2_adapter_clear(&r.ad);
	free(explanation);
	free(mx_record);
	return err;
}
