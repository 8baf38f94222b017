/*
 * Private declarations of compat/libspf2, the libspf2.so.2 made from
 * spfkit's public API. Nothing here is exported: libspf2.map exports
 * the SPF_* names only.
 */
#ifndef SPF2_INT_H
#define SPF2_INT_H

#include <pthread.h>
#include <stddef.h>

#include <spfkit/spfkit.h>

#include <spf2/spf.h>
#include <spf2/spf_dns_cache.h>
#include <spf2/spf_dns_null.h>
#include <spf2/spf_dns_resolv.h>

/* An spfkit context made for one receiver name and explanation, shared
 * by the queries running on it (programs share servers between threads). */
struct spf2_ctxref {
	struct spfkit_ctx *ctx;
	char *rec_dom;
	unsigned refs; /* the server's (while current) and each query's */
};

/* The server as allocated: the public layout first, then ours. */
struct spf2_server {
	SPF_server_t pub;
	pthread_mutex_t lock;     /* guards cur and the refs */
	char *exp_text;           /* the explanation macro-string */
	char *policy;             /* local policy record ("v=spf1 ..."), or NULL */
	struct spf2_ctxref *cur;  /* for the current rec_dom and exp_text, or NULL */
};

/* What the adapter saw of the checked domain's own TXT question. */
struct spf2_top {
	const char *domain; /* the domain to watch */
	int seen;           /* 1 once its TXT question was answered */
	int herrno;         /* the answer's h_errno value */
	int spf_records;    /* "v=spf1" records among the answer's TXT */
};

/*
 * An spfkit resolver whose every question goes to a libspf2 layer's
 * lookup callback (synchronously, from wait()). Fill it with
 * spf2_adapter_init(), hand &a->r to spfkit_check(), then
 * spf2_adapter_clear().
 */
struct spf2_pending;
struct spf2_adapter {
	struct spfkit_resolver r;
	SPF_dns_server_t *layer;
	struct spf2_pending *head, *tail;
	uint64_t next_handle;
	struct spf2_top *top;   /* may be NULL */
	unsigned questions;
};

void spf2_adapter_init(struct spf2_adapter *a, SPF_dns_server_t *layer, struct spf2_top *top);
void spf2_adapter_clear(struct spf2_adapter *a);

/* strdup that returns NULL for NULL. */
char *spf2_strdup(const char *s);

/* The server's spfkit context for its current receiver and explanation
 * (made again when rec_dom changed), held until spf2_ctx_put(); NULL
 * when out of memory. */
struct spf2_ctxref *spf2_ctx_get(SPF_server_t *sp);
void spf2_ctx_put(SPF_server_t *sp, struct spf2_ctxref *ref);

/* The evaluation behind the three query calls (query.c). */
enum spf2_query_kind { SPF2_Q_MAILFROM, SPF2_Q_FALLBACK, SPF2_Q_RCPTTO };
SPF_errcode_t spf2_query(SPF_request_t *sr, SPF_response_t **out, enum spf2_query_kind kind,
			 const char *arg);

#endif
