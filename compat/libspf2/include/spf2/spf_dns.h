/*
 * DNS layers. A layer answers one question at a time through its
 * `lookup` callback, returning a new SPF_dns_rr_t the caller frees with
 * SPF_dns_rr_free(). Layers stack through `layer_below` (a cache over a
 * resolver); a program may write its own (Exim does), and then every
 * question of an evaluation goes to its callback. This library never
 * asks for type 99 (SPF): RFC 7208 §3.1 retired it.
 */
#ifndef INC_SPF_DNS
#define INC_SPF_DNS

#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <time.h>

/* h_errno values: NETDB_SUCCESS, HOST_NOT_FOUND, NO_DATA, TRY_AGAIN,
 * NO_RECOVERY (<netdb.h>). */
typedef int SPF_dns_stat_t;

typedef struct SPF_dns_server_struct SPF_dns_server_t;

#include "spf_request.h"
#include "spf_dns_rr.h"

typedef void (*SPF_dns_destroy_t)(SPF_dns_server_t *spf_dns_server);
typedef SPF_dns_rr_t *(*SPF_dns_lookup_t)(SPF_dns_server_t *spf_dns_server, const char *domain,
					  ns_type ns_type, int should_cache);
/* Not called by this library (kept for the layout). */
typedef SPF_errcode_t (*SPF_dns_get_spf_t)(SPF_server_t *spf_server, SPF_request_t *spf_request,
					   SPF_response_t *spf_response, SPF_record_t **spf_recordp);
typedef SPF_errcode_t (*SPF_dns_get_exp_t)(SPF_server_t *spf_server, const char *domain,
					   char **buf, size_t *buf_len);
typedef int (*SPF_dns_add_cache_t)(SPF_server_t *spf_server, SPF_dns_rr_t spfrr);

/* Layout of libspf2 1.2.10. */
struct SPF_dns_server_struct {
	SPF_dns_destroy_t destroy;   /* NULL: the layer is not freed by SPF_dns_free() */
	SPF_dns_lookup_t lookup;     /* answers one question */
	SPF_dns_get_spf_t get_spf;   /* not used */
	SPF_dns_get_exp_t get_exp;   /* not used */
	SPF_dns_add_cache_t add_cache; /* not used */
	SPF_dns_server_t *layer_below;
	const char *name;
	int debug;
	void *hook;                  /* the layer's own data */
};

/* Calls the layer's destroy (which frees the layers below it). */
void SPF_dns_free(SPF_dns_server_t *spf_dns_server);
/* The layer's answer, or a TRY_AGAIN record when it gives none; NULL
 * only when out of memory. */
SPF_dns_rr_t *SPF_dns_lookup(SPF_dns_server_t *spf_dns_server, const char *domain,
			     ns_type rr_type, int should_cache);

#endif
