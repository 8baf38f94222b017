/*
 * Servers, requests and responses of compat/libspf2, with libspf2's
 * memory rules: each object is freed by its own call, strings in them
 * are malloc()ed, the library never aborts (a NULL object or an error
 * code instead of libspf2's SPF_error()).
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spf2_int.h"

/* ---- server ---------------------------------------------------------- */

static char *host_name(void)
{
	char buf[256];

	if (gethostname(buf, sizeof(buf) - 1) != 0)
		return spf2_strdup("localhost");
	buf[sizeof(buf) - 1] = '\0';
	return spf2_strdup(buf);
}

/* A context for this explanation and receiver; NULL if exp is no
 * valid macro-string or memory ran out (*rc says which). */
static struct spfkit_ctx *make_ctx(const char *exp, const char *rec_dom, int *rc)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx = NULL;

	spfkit_config_init(&cfg);
	cfg.default_explanation = exp;
	cfg.receiver = rec_dom;
	/* Layers answer one question at a time: asking ahead only adds questions. */
	cfg.no_lookahead = 1;
	cfg.record_cache_size = 256;
	*rc = spfkit_ctx_new(&cfg, &ctx);
	return *rc == 0 ? ctx : NULL;
}

static void ctxref_drop(struct spf2_ctxref *ref)
{
	spfkit_ctx_free(ref->ctx);
	free(ref->rec_dom);
	free(ref);
}

/* A new context for (exp, rec_dom), holding one reference; NULL with
 * *rc set when exp is refused or memory ran out. */
static struct spf2_ctxref *ctxref_new(const char *exp, const char *rec_dom, int *rc)
{
	struct spf2_ctxref *ref = calloc(1, sizeof(*ref));

	*rc = SPFKIT_ENOMEM;
	if (ref == NULL)
		return NULL;
	ref->rec_dom = spf2_strdup(rec_dom != NULL ? rec_dom : "unknown");
	if (ref->rec_dom == NULL) {
		free(ref);
		return NULL;
	}
	ref->ctx = make_ctx(exp, ref->rec_dom, rc);
	if (ref->ctx == NULL) {
		free(ref->rec_dom);
		free(ref);
		return NULL;
	}
	ref->refs = 1;
	return ref;
}

/* Make ref the current context (the server's reference moves to it). */
static void ctx_install(struct spf2_server *s, struct spf2_ctxref *ref)
{
	struct spf2_ctxref *old;

	pthread_mutex_lock(&s->lock);
	old = s->cur;
	s->cur = ref;
	if (old != NULL && --old->refs > 0)
		old = NULL; /* a query still uses it: its put frees it */
	pthread_mutex_unlock(&s->lock);
	if (old != NULL)
		ctxref_drop(old);
}

struct spf2_ctxref *spf2_ctx_get(SPF_server_t *sp)
{
	struct spf2_server *s = (struct spf2_server *)sp;
	const char *dom = sp->rec_dom != NULL ? sp->rec_dom : "unknown";
	struct spf2_ctxref *ref;
	int rc;

	/* Programs may set rec_dom in the struct itself: compare each time. */
	pthread_mutex_lock(&s->lock);
	ref = s->cur;
	if (ref != NULL && strcmp(ref->rec_dom, dom) == 0) {
		ref->refs++;
		pthread_mutex_unlock(&s->lock);
		return ref;
	}
	pthread_mutex_unlock(&s->lock);
	ref = ctxref_new(s->exp_text, dom, &rc);
	if (ref == NULL)
		return NULL;
	ref->refs++; /* the caller's, besides the server's */
	ctx_install(s, ref);
	return ref;
}

void spf2_ctx_put(SPF_server_t *sp, struct spf2_ctxref *ref)
{
	struct spf2_server *s = (struct spf2_server *)sp;
	int last;

	if (ref == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	last = --ref->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last)
		ctxref_drop(ref);
}

static SPF_server_t *server_new(SPF_dns_server_t *layer, int debug, int own)
{
	struct spf2_server *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->pub.resolver = layer;
	s->pub.max_dns_mech = SPF_MAX_DNS_MECH;
	s->pub.max_dns_ptr = SPF_MAX_DNS_PTR;
	s->pub.max_dns_mx = SPF_MAX_DNS_MX;
	s->pub.debug = debug;
	s->pub.destroy_resolver = own;
	s->pub.rec_dom = host_name();
	s->exp_text = spf2_strdup(SPF_DEFAULT_EXP);
	if (s->pub.rec_dom == NULL || s->exp_text == NULL ||
	    pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s->pub.rec_dom);
		free(s->exp_text);
		free(s);
		return NULL;
	}
	return &s->pub;
}

SPF_server_t *SPF_server_new(SPF_server_dnstype_t dnstype, int debug)
{
	SPF_dns_server_t *layer = SPF_dns_resolv_new(NULL, NULL, debug);
	SPF_server_t *sp;

	if (layer == NULL)
		return NULL;
	if (dnstype == SPF_DNS_CACHE) {
		SPF_dns_server_t *cache = SPF_dns_cache_new(layer, NULL, debug, 8);

		if (cache == NULL) {
			SPF_dns_free(layer);
			return NULL;
		}
		layer = cache;
	} else if (dnstype != SPF_DNS_RESOLV) {
		/* SPF_DNS_ZONE (libspf2's test zone) is not provided. */
		SPF_dns_free(layer);
		return NULL;
	}
	sp = server_new(layer, debug, 1);
	if (sp == NULL)
		SPF_dns_free(layer);
	return sp;
}

SPF_server_t *SPF_server_new_dns(SPF_dns_server_t *dns, int debug)
{
	if (dns == NULL)
		return NULL;
	return server_new(dns, debug, 0);
}

void SPF_server_free(SPF_server_t *sp)
{
	struct spf2_server *s = (struct spf2_server *)sp;

	if (sp == NULL)
		return;
	if (sp->resolver != NULL && sp->destroy_resolver)
		SPF_dns_free(sp->resolver);
	if (s->cur != NULL)
		spf2_ctx_put(sp, s->cur); /* queries are over: this is the last reference */
	pthread_mutex_destroy(&s->lock);
	free(s->exp_text);
	free(s->policy);
	free(sp->rec_dom);
	free(s);
}

SPF_errcode_t SPF_server_set_rec_dom(SPF_server_t *sp, const char *dom)
{
	char *copy;

	if (sp == NULL)
		return SPF_E_INTERNAL_ERROR;
	copy = dom != NULL ? spf2_strdup(dom) : host_name();
	if (copy == NULL)
		return SPF_E_NO_MEMORY;
	free(sp->rec_dom);
	sp->rec_dom = copy;
	return SPF_E_SUCCESS;
}

SPF_errcode_t SPF_server_set_sanitize(SPF_server_t *sp, int sanitize)
{
	if (sp == NULL)
		return SPF_E_INTERNAL_ERROR;
	sp->sanitize = sanitize;
	return SPF_E_SUCCESS;
}

/* libspf2 reports setup errors in a response it makes when given none. */
static SPF_response_t *setup_response(SPF_response_t **respp)
{
	if (respp == NULL)
		return NULL;
	if (*respp == NULL)
		*respp = SPF_response_new(NULL);
	return *respp;
}

/* Which libspf2 code a macro-string error is. */
static SPF_errcode_t macro_error(const char *text)
{
	for (const char *p = text; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		p++;
		if (*p == '%' || *p == '_' || *p == '-')
			continue;
		if (*p != '{')
			return SPF_E_INVALID_ESC;
		return SPF_E_INVALID_VAR;
	}
	return SPF_E_SYNTAX;
}

SPF_errcode_t SPF_server_set_explanation(SPF_server_t *sp, const char *exp,
					 SPF_response_t **spf_responsep)
{
	struct spf2_server *s = (struct spf2_server *)sp;
	SPF_response_t *resp = setup_response(spf_responsep);
	struct spf2_ctxref *ref;
	char *copy;
	int rc;

	if (sp == NULL || exp == NULL)
		return SPF_E_INTERNAL_ERROR;
	if (resp == NULL)
		return SPF_E_NO_MEMORY;
	copy = spf2_strdup(exp);
	if (copy == NULL)
		return SPF_E_NO_MEMORY;
	/* The context checks the macro-string (RFC 7208 §7.1). */
	ref = ctxref_new(copy, sp->rec_dom, &rc);
	if (ref == NULL) {
		SPF_errcode_t err = rc == SPFKIT_ENOMEM ? SPF_E_NO_MEMORY : macro_error(exp);

		free(copy);
		SPF_response_add_error(resp, err, "Failed to compile explanation '%.200s'", exp);
		return err;
	}
	free(s->exp_text);
	s->exp_text = copy;
	ctx_install(s, ref);
	return SPF_E_SUCCESS;
}

SPF_errcode_t SPF_server_set_localpolicy(SPF_server_t *sp, const char *policy,
					 int use_default_whitelist,
					 SPF_response_t **spf_responsep)
{
	struct spf2_server *s = (struct spf2_server *)sp;
	SPF_response_t *resp = setup_response(spf_responsep);
	struct spfkit_record *rec = NULL;
	size_t len;
	char *text;
	int rc;

	if (sp == NULL || policy == NULL)
		return SPF_E_INTERNAL_ERROR;
	if (resp == NULL)
		return SPF_E_NO_MEMORY;
	len = strlen(policy);
	if (len > SPFKIT_RECORD_TEXT_MAX - 64)
		return SPF_E_BIG_STRING;
	len += sizeof(SPF_VER_STR " ") + sizeof(" " SPF_DEFAULT_WHITELIST);
	text = malloc(len);
	if (text == NULL)
		return SPF_E_NO_MEMORY;
	snprintf(text, len, "%s %s%s%s", SPF_VER_STR, policy, use_default_whitelist ? " " : "",
		 use_default_whitelist ? SPF_DEFAULT_WHITELIST : "");
	rc = spfkit_record_parse(text, strlen(text), NULL, &rec, NULL);
	spfkit_record_free(rec);
	if (rc != 0) {
		SPF_errcode_t err = rc == SPFKIT_ENOMEM ? SPF_E_NO_MEMORY : SPF_E_SYNTAX;

		free(text);
		SPF_response_add_error(resp, err, "Failed to compile local policy '%.200s'", policy);
		return err;
	}
	free(s->policy);
	s->policy = text;
	return SPF_E_SUCCESS;
}

#define ACCESS_INT(f) \
	SPF_errcode_t SPF_server_set_##f(SPF_server_t *sp, int n) \
	{ \
		if (sp == NULL) \
			return SPF_E_INTERNAL_ERROR; \
		sp->f = n; \
		return SPF_E_SUCCESS; \
	} \
	int SPF_server_get_##f(SPF_server_t *sp) \
	{ \
		return sp != NULL ? sp->f : 0; \
	}
/* Stored and read back; the RFC 7208 limits (10 each) apply whatever is set. */
ACCESS_INT(max_dns_mech)
ACCESS_INT(max_dns_ptr)
ACCESS_INT(max_dns_mx)

/* ---- request --------------------------------------------------------- */

SPF_request_t *SPF_request_new(SPF_server_t *spf_server)
{
	SPF_request_t *sr = calloc(1, sizeof(*sr));

	if (sr == NULL)
		return NULL;
	sr->spf_server = spf_server;
	sr->client_ver = AF_UNSPEC;
	sr->ipv4.s_addr = htonl(INADDR_ANY);
	sr->ipv6 = in6addr_any;
	return sr;
}

static void drop(char **p)
{
	free(*p);
	*p = NULL;
}

void SPF_request_free(SPF_request_t *sr)
{
	if (sr == NULL)
		return;
	drop(&sr->client_dom);
	drop(&sr->helo_dom);
	drop(&sr->env_from);
	drop(&sr->env_from_lp);
	drop(&sr->env_from_dp);
	drop(&sr->rcpt_to_dom);
	free(sr);
}

SPF_errcode_t SPF_request_set_ipv4(SPF_request_t *sr, struct in_addr addr)
{
	if (sr == NULL)
		return SPF_E_INTERNAL_ERROR;
	drop(&sr->client_dom);
	sr->client_ver = AF_INET;
	sr->ipv4 = addr;
	return SPF_E_SUCCESS;
}

SPF_errcode_t SPF_request_set_ipv6(SPF_request_t *sr, struct in6_addr addr)
{
	if (sr == NULL)
		return SPF_E_INTERNAL_ERROR;
	drop(&sr->client_dom);
	sr->client_ver = AF_INET6;
	sr->ipv6 = addr;
	return SPF_E_SUCCESS;
}

SPF_errcode_t SPF_request_set_ipv4_str(SPF_request_t *sr, const char *astr)
{
	struct in_addr a;

	if (inet_pton(AF_INET, astr != NULL ? astr : "0.0.0.0", &a) != 1)
		return SPF_E_INVALID_IP4;
	return SPF_request_set_ipv4(sr, a);
}

SPF_errcode_t SPF_request_set_ipv6_str(SPF_request_t *sr, const char *astr)
{
	struct in6_addr a;

	if (inet_pton(AF_INET6, astr != NULL ? astr : "::", &a) != 1)
		return SPF_E_INVALID_IP6;
	return SPF_request_set_ipv6(sr, a);
}

SPF_errcode_t SPF_request_set_helo_dom(SPF_request_t *sr, const char *dom)
{
	if (sr == NULL || dom == NULL)
		return SPF_E_INTERNAL_ERROR;
	drop(&sr->helo_dom);
	sr->helo_dom = spf2_strdup(dom);
	if (sr->helo_dom == NULL)
		return SPF_E_NO_MEMORY;
	/* No sender yet: the HELO name's postmaster (RFC 7208 §2.4). */
	if (sr->env_from == NULL)
		return SPF_request_set_env_from(sr, dom);
	return SPF_E_SUCCESS;
}

int SPF_request_set_env_from(SPF_request_t *sr, const char *from)
{
	const char *at, *dom;
	size_t lp_len, len;

	if (sr == NULL || from == NULL)
		return SPF_E_INTERNAL_ERROR;
	drop(&sr->env_from);
	drop(&sr->env_from_lp);
	drop(&sr->env_from_dp);
	if (from[0] == '\0' && sr->helo_dom != NULL)
		from = sr->helo_dom;
	at = strrchr(from, '@');
	if (at != NULL && at != from) {
		lp_len = (size_t)(at - from);
		dom = at + 1;
		sr->env_from = spf2_strdup(from);
		sr->env_from_lp = malloc(lp_len + 1);
		if (sr->env_from_lp != NULL) {
			memcpy(sr->env_from_lp, from, lp_len);
			sr->env_from_lp[lp_len] = '\0';
		}
	} else {
		/* "domain" or "@domain": postmaster@domain (RFC 7208 §4.3) */
		dom = at == from ? from + 1 : from;
		len = strlen(dom) + sizeof("postmaster@");
		sr->env_from = malloc(len);
		if (sr->env_from != NULL)
			snprintf(sr->env_from, len, "postmaster@%s", dom);
		sr->env_from_lp = spf2_strdup("postmaster");
	}
	sr->env_from_dp = spf2_strdup(dom);
	if (sr->env_from == NULL || sr->env_from_lp == NULL || sr->env_from_dp == NULL) {
		drop(&sr->env_from);
		drop(&sr->env_from_lp);
		drop(&sr->env_from_dp);
		return SPF_E_NO_MEMORY;
	}
	return SPF_E_SUCCESS;
}

const char *SPF_request_get_rec_dom(SPF_request_t *sr)
{
	if (sr == NULL || sr->spf_server == NULL)
		return NULL;
	return sr->spf_server->rec_dom;
}

int SPF_request_is_loopback(SPF_request_t *sr)
{
	if (sr == NULL)
		return 0;
	if (sr->client_ver == AF_INET)
		return (ntohl(sr->ipv4.s_addr) >> 24) == 127;
	if (sr->client_ver == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&sr->ipv6);
	return 0;
}

SPF_errcode_t SPF_request_query_mailfrom(SPF_request_t *sr, SPF_response_t **respp)
{
	return spf2_query(sr, respp, SPF2_Q_MAILFROM, NULL);
}

SPF_errcode_t SPF_request_query_fallback(SPF_request_t *sr, SPF_response_t **respp,
					 const char *record)
{
	return spf2_query(sr, respp, SPF2_Q_FALLBACK, record);
}

SPF_errcode_t SPF_request_query_rcptto(SPF_request_t *sr, SPF_response_t **respp,
				       const char *rcpt_to)
{
	return spf2_query(sr, respp, SPF2_Q_RCPTTO, rcpt_to);
}

/* ---- response -------------------------------------------------------- */

SPF_response_t *SPF_response_new(SPF_request_t *spf_request)
{
	SPF_response_t *rp = calloc(1, sizeof(*rp));

	if (rp == NULL)
		return NULL;
	rp->spf_request = spf_request;
	rp->result = SPF_RESULT_INVALID;
	return rp;
}

void SPF_response_free(SPF_response_t *rp)
{
	if (rp == NULL)
		return;
	free(rp->received_spf); /* received_spf_value points into it */
	free(rp->header_comment);
	free(rp->smtp_comment);
	free(rp->explanation);
	if (rp->errors != NULL) {
		for (int i = 0; i < rp->errors_length; i++)
			free(rp->errors[i].message);
		free(rp->errors);
	}
	free(rp);
}

SPF_response_t *SPF_response_combine(SPF_response_t *main, SPF_response_t *r2mx)
{
	SPF_result_t m, x;
	int take_2mx;

	if (main == NULL)
		return r2mx;
	if (r2mx == NULL)
		return main;
	m = main->result;
	x = r2mx->result;
	switch (m) {
	case SPF_RESULT_INVALID:
	case SPF_RESULT_FAIL:
		take_2mx = 1;
		break;
	case SPF_RESULT_PASS:
		take_2mx = 0;
		break;
	case SPF_RESULT_NEUTRAL:
		take_2mx = x == SPF_RESULT_PASS;
		break;
	default:
		take_2mx = x == SPF_RESULT_PASS || x == SPF_RESULT_NEUTRAL || x == SPF_RESULT_SOFTFAIL;
		break;
	}
	if (take_2mx) {
		SPF_response_free(main);
		return r2mx;
	}
	SPF_response_free(r2mx);
	return main;
}

SPF_result_t SPF_response_result(SPF_response_t *rp)
{
	return rp != NULL ? rp->result : SPF_RESULT_INVALID;
}

SPF_reason_t SPF_response_reason(SPF_response_t *rp)
{
	return rp != NULL ? rp->reason : SPF_REASON_NONE;
}

SPF_errcode_t SPF_response_errcode(SPF_response_t *rp)
{
	return rp != NULL ? rp->err : SPF_E_INTERNAL_ERROR;
}

const char *SPF_response_get_received_spf(SPF_response_t *rp)
{
	return rp != NULL ? rp->received_spf : NULL;
}

const char *SPF_response_get_received_spf_value(SPF_response_t *rp)
{
	return rp != NULL ? rp->received_spf_value : NULL;
}

const char *SPF_response_get_header_comment(SPF_response_t *rp)
{
	return rp != NULL ? rp->header_comment : NULL;
}

const char *SPF_response_get_smtp_comment(SPF_response_t *rp)
{
	return rp != NULL ? rp->smtp_comment : NULL;
}

const char *SPF_response_get_explanation(SPF_response_t *rp)
{
	return rp != NULL ? rp->explanation : NULL;
}

int SPF_response_messages(SPF_response_t *rp)
{
	return rp != NULL ? rp->errors_length : 0;
}

int SPF_response_errors(SPF_response_t *rp)
{
	return rp != NULL ? rp->num_errors : 0;
}

int SPF_response_warnings(SPF_response_t *rp)
{
	return rp != NULL ? rp->errors_length - rp->num_errors : 0;
}

SPF_error_t *SPF_response_message(SPF_response_t *rp, int idx)
{
	if (rp == NULL || idx < 0 || idx >= rp->errors_length)
		return NULL;
	return &rp->errors[idx];
}

SPF_errcode_t SPF_error_code(SPF_error_t *err)
{
	return err != NULL ? err->code : SPF_E_INTERNAL_ERROR;
}

const char *SPF_error_message(SPF_error_t *err)
{
	return err != NULL && err->message != NULL ? err->message : "";
}

char SPF_error_errorp(SPF_error_t *err)
{
	return err != NULL ? err->is_error : 0;
}

#define SPF2_MSG_MAX 4096
#define SPF2_MSGS_MAX 1000 /* errors_length is an unsigned short */

__attribute__((format(printf, 4, 0)))
static SPF_errcode_t add_message(SPF_response_t *rp, SPF_errcode_t code, int is_error,
				 const char *format, va_list ap)
{
	char buf[SPF2_MSG_MAX];

	if (rp == NULL || rp->errors_length >= SPF2_MSGS_MAX)
		return code;
	if (format == NULL)
		snprintf(buf, sizeof(buf), "%s", SPF_strerror(code));
	else
		vsnprintf(buf, sizeof(buf), format, ap);
	if (rp->errors_length == rp->errors_size) {
		unsigned n = rp->errors_size + rp->errors_size / 4u + 4u;
		SPF_error_t *e = realloc(rp->errors, n * sizeof(*e));

		if (e == NULL)
			return code;
		rp->errors = e;
		rp->errors_size = (unsigned short)n;
	}
	rp->errors[rp->errors_length].code = code;
	rp->errors[rp->errors_length].is_error = (char)is_error;
	rp->errors[rp->errors_length].message = spf2_strdup(buf);
	rp->errors_length++;
	if (is_error)
		rp->num_errors++;
	return code;
}

SPF_errcode_t SPF_response_add_error(SPF_response_t *rp, SPF_errcode_t code, const char *format,
				     ...)
{
	va_list ap;

	va_start(ap, format);
	add_message(rp, code, 1, format, ap);
	va_end(ap);
	return code;
}

SPF_errcode_t SPF_response_add_warn(SPF_response_t *rp, SPF_errcode_t code, const char *format,
				    ...)
{
	va_list ap;

	va_start(ap, format);
	add_message(rp, code, 0, format, ap);
	va_end(ap);
	return code;
}
