/*
 * Our libspf2.so.2 and Debian's, side by side in one process: both
 * loaded with dlopen(RTLD_LOCAL) (each library's SPF_* calls stay
 * inside it), the calls a program makes, and what one query gives.
 * Shared by test_golden.c and test_golden_corpus.c.
 */
#ifndef GOLDEN_API_H
#define GOLDEN_API_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spf2/spf.h>

struct api {
	const char *path;
	void *h;
	SPF_server_t *(*server_new_dns)(SPF_dns_server_t *, int);
	void (*server_free)(SPF_server_t *);
	SPF_errcode_t (*set_rec_dom)(SPF_server_t *, const char *);
	SPF_request_t *(*request_new)(SPF_server_t *);
	void (*request_free)(SPF_request_t *);
	SPF_errcode_t (*set_ipv4_str)(SPF_request_t *, const char *);
	SPF_errcode_t (*set_ipv6_str)(SPF_request_t *, const char *);
	SPF_errcode_t (*set_helo_dom)(SPF_request_t *, const char *);
	int (*set_env_from)(SPF_request_t *, const char *);
	SPF_errcode_t (*query_mailfrom)(SPF_request_t *, SPF_response_t **);
	SPF_errcode_t (*query_fallback)(SPF_request_t *, SPF_response_t **, const char *);
	void (*response_free)(SPF_response_t *);
	SPF_errcode_t (*rr_dup)(SPF_dns_rr_t **, SPF_dns_rr_t *);
	const char *(*strerror_)(SPF_errcode_t);
	const char *(*strresult)(SPF_result_t);
	const char *(*strreason)(SPF_reason_t);
	/* the response's message list (SPF_response_message()) */
	int (*response_messages)(SPF_response_t *);
	SPF_error_t *(*response_message)(SPF_response_t *, int);
	SPF_errcode_t (*error_code)(SPF_error_t *);
	const char *(*error_message)(SPF_error_t *);
};

#define SYM(a, f, name) \
	do { \
		*(void **)&(a)->f = dlsym((a)->h, name); \
		if ((a)->f == NULL) { \
			fprintf(stderr, "%s: no %s\n", (a)->path, name); \
			return -1; \
		} \
	} while (0)

static int api_load(struct api *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->path = path;
	/* RTLD_LOCAL: each library's SPF_* calls stay inside it */
	a->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (a->h == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return -1;
	}
	SYM(a, server_new_dns, "SPF_server_new_dns");
	SYM(a, server_free, "SPF_server_free");
	SYM(a, set_rec_dom, "SPF_server_set_rec_dom");
	SYM(a, request_new, "SPF_request_new");
	SYM(a, request_free, "SPF_request_free");
	SYM(a, set_ipv4_str, "SPF_request_set_ipv4_str");
	SYM(a, set_ipv6_str, "SPF_request_set_ipv6_str");
	SYM(a, set_helo_dom, "SPF_request_set_helo_dom");
	SYM(a, set_env_from, "SPF_request_set_env_from");
	SYM(a, query_mailfrom, "SPF_request_query_mailfrom");
	SYM(a, query_fallback, "SPF_request_query_fallback");
	SYM(a, response_free, "SPF_response_free");
	SYM(a, rr_dup, "SPF_dns_rr_dup");
	SYM(a, strerror_, "SPF_strerror");
	SYM(a, strresult, "SPF_strresult");
	SYM(a, strreason, "SPF_strreason");
	SYM(a, response_messages, "SPF_response_messages");
	SYM(a, response_message, "SPF_response_message");
	SYM(a, error_code, "SPF_error_code");
	SYM(a, error_message, "SPF_error_message");
	return 0;
}

struct query {
	const char *ip;
	const char *sender; /* NULL: not set */
	const char *helo;   /* NULL: not set */
	const char *fallback;
	int use_helo;
};

struct outcome {
	SPF_errcode_t rc;
	SPF_result_t result;
	SPF_reason_t reason;
	SPF_errcode_t err;
	char *received_spf, *header_comment, *smtp_comment, *explanation;
	int value_ok; /* received_spf_value points just after "Received-SPF: " */
	unsigned questions;
	int nmessages;
	SPF_errcode_t first_code; /* code of the first message, when nmessages > 0 */
	char first_message[512];  /* its text, cut to fit */
};

static char *dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static void outcome_free(struct outcome *o)
{
	free(o->received_spf);
	free(o->header_comment);
	free(o->smtp_comment);
	free(o->explanation);
}

/* One query on a fresh server over `layer` (left to the caller to free). */
static int run_query(const struct api *a, SPF_dns_server_t *layer, const struct query *c,
		     struct outcome *o)
{
	SPF_server_t *srv;
	SPF_request_t *req;
	SPF_response_t *resp = NULL;

	memset(o, 0, sizeof(*o));
	srv = a->server_new_dns(layer, 0);
	if (srv == NULL)
		return -1;
	a->set_rec_dom(srv, "mx.receiver.example");
	req = a->request_new(srv);
	if (strchr(c->ip, ':') != NULL)
		a->set_ipv6_str(req, c->ip);
	else
		a->set_ipv4_str(req, c->ip);
	if (c->helo != NULL)
		a->set_helo_dom(req, c->helo);
	if (c->sender != NULL)
		a->set_env_from(req, c->sender);
	req->use_helo = (char)c->use_helo;
	if (c->fallback != NULL)
		o->rc = a->query_fallback(req, &resp, c->fallback);
	else
		o->rc = a->query_mailfrom(req, &resp);
	if (resp != NULL) {
		/* the fields, read directly as programs do */
		o->result = resp->result;
		o->reason = resp->reason;
		o->err = resp->err;
		o->received_spf = dup_or_null(resp->received_spf);
		o->header_comment = dup_or_null(resp->header_comment);
		o->smtp_comment = dup_or_null(resp->smtp_comment);
		o->explanation = dup_or_null(resp->explanation);
		o->value_ok = resp->received_spf == NULL ||
			      resp->received_spf_value == resp->received_spf + strlen("Received-SPF: ");
		o->nmessages = a->response_messages(resp);
		if (o->nmessages > 0) {
			SPF_error_t *e = a->response_message(resp, 0);
			const char *text = e != NULL ? a->error_message(e) : NULL;

			o->first_code = e != NULL ? a->error_code(e) : SPF_E_SUCCESS;
			snprintf(o->first_message, sizeof(o->first_message), "%s",
				 text != NULL ? text : "");
		}
		a->response_free(resp);
	}
	a->request_free(req);
	a->server_free(srv);
	return 0;
}

static int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

#endif
