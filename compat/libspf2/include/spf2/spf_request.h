/*
 * A request: the SMTP client's address, HELO name and envelope sender,
 * then one of the SPF_request_query_*() calls.
 */
#ifndef INC_SPF_REQUEST
#define INC_SPF_REQUEST

#include <netinet/in.h>

typedef struct SPF_request_struct SPF_request_t;

#include "spf_server.h"

/* Layout of libspf2 1.2.10; programs may read these fields. */
struct SPF_request_struct {
	SPF_server_t *spf_server;
	int client_ver;        /* AF_INET, AF_INET6, or AF_UNSPEC when not set */
	struct in_addr ipv4;
	struct in6_addr ipv6;
	char *env_from;        /* MAIL FROM, or postmaster@<helo> */
	char *helo_dom;
	char *rcpt_to_dom;
	char use_local_policy; /* set by the program: apply the server's local policy */
	char use_helo;         /* set by the program: check the HELO identity */
	char *env_from_lp;     /* local part of env_from */
	char *env_from_dp;     /* domain of env_from */
	char *client_dom;      /* not filled by this library */
	const char *cur_dom;   /* domain checked by the last query */
};

SPF_request_t *SPF_request_new(SPF_server_t *spf_server);
void SPF_request_free(SPF_request_t *sr);
SPF_errcode_t SPF_request_set_ipv4(SPF_request_t *sr, struct in_addr addr);
SPF_errcode_t SPF_request_set_ipv6(SPF_request_t *sr, struct in6_addr addr);
/* SPF_E_INVALID_IP4 / SPF_E_INVALID_IP6 for text that is no address;
 * NULL means 0.0.0.0 / ::. */
SPF_errcode_t SPF_request_set_ipv4_str(SPF_request_t *sr, const char *astr);
SPF_errcode_t SPF_request_set_ipv6_str(SPF_request_t *sr, const char *astr);
/* Also sets env_from to postmaster@<dom> when no sender was set. */
SPF_errcode_t SPF_request_set_helo_dom(SPF_request_t *sr, const char *dom);
/* "" with a HELO name set means postmaster@<helo>; an address without
 * '@' (or starting with it) means postmaster@<address>. */
int SPF_request_set_env_from(SPF_request_t *sr, const char *from);
const char *SPF_request_get_rec_dom(SPF_request_t *sr);
/* 1 for 127.0.0.0/8 and ::1 (always "pass", as libspf2 does). */
int SPF_request_is_loopback(SPF_request_t *sr);

/* Each query allocates *spf_responsep (free with SPF_response_free())
 * and returns its errcode. */
SPF_errcode_t SPF_request_query_mailfrom(SPF_request_t *spf_request,
					 SPF_response_t **spf_responsep);
SPF_errcode_t SPF_request_query_rcptto(SPF_request_t *spf_request,
				       SPF_response_t **spf_responsep, const char *rcpt_to);
/* Evaluates `record` ("v=spf1 ...") as if the sender's domain published
 * it: a best-guess record for a domain without one. */
SPF_errcode_t SPF_request_query_fallback(SPF_request_t *spf_request,
					 SPF_response_t **spf_responsep, const char *record);

#endif
