/*
 * The server: configuration shared by requests (DNS layer, receiving
 * domain, explanation, local policy). Queries on one server may run in
 * several threads at once, each with its own request and response (the
 * layer must then allow it: ours do); the SPF_server_set_*() calls must
 * not run while a query does.
 */
#ifndef INC_SPF_SERVER
#define INC_SPF_SERVER

typedef struct SPF_server_struct SPF_server_t;

#include "spf_record.h"
#include "spf_dns.h"

#ifndef SPF_MAX_DNS_MECH
#define SPF_MAX_DNS_MECH 10
#endif
#ifndef SPF_MAX_DNS_PTR
#define SPF_MAX_DNS_PTR 10
#endif
#ifndef SPF_MAX_DNS_MX
#define SPF_MAX_DNS_MX 10
#endif

/* Layout of libspf2 1.2.10. */
struct SPF_server_struct {
	SPF_dns_server_t *resolver; /* the DNS layer every question goes to */
	SPF_record_t *local_policy; /* opaque here */
	SPF_macro_t *explanation;   /* opaque here */
	char *rec_dom;              /* receiving host: %{r}, header comments */
	int max_dns_mech;           /* kept for the accessors; see docs */
	int max_dns_ptr;
	int max_dns_mx;
	int sanitize;
	int debug;
	int destroy_resolver;       /* the server made its layer and frees it */
};

typedef enum SPF_server_dnstype_enum {
	SPF_DNS_RESOLV,
	SPF_DNS_CACHE,
	SPF_DNS_ZONE
} SPF_server_dnstype_t;

/* NULL when out of memory or when DNS cannot be set up (never aborts). */
SPF_server_t *SPF_server_new(SPF_server_dnstype_t dnstype, int debug);
/* Uses the caller's layer `dns` for every question; the server does not
 * free it. */
SPF_server_t *SPF_server_new_dns(SPF_dns_server_t *dns, int debug);
void SPF_server_free(SPF_server_t *sp);
/* NULL: the host name. */
SPF_errcode_t SPF_server_set_rec_dom(SPF_server_t *sp, const char *dom);
SPF_errcode_t SPF_server_set_sanitize(SPF_server_t *sp, int sanitize);
/* A macro-string. On error *spf_responsep holds the message. */
SPF_errcode_t SPF_server_set_explanation(SPF_server_t *sp, const char *exp,
					 SPF_response_t **spf_responsep);
/* Mechanisms tried, when a request sets use_local_policy, before a
 * record's final "-all", "~all" or "?all". */
SPF_errcode_t SPF_server_set_localpolicy(SPF_server_t *sp, const char *policy,
					 int use_default_whitelist,
					 SPF_response_t **spf_responsep);

SPF_errcode_t SPF_server_set_max_dns_mech(SPF_server_t *spf_server, int n);
int SPF_server_get_max_dns_mech(SPF_server_t *spf_server);
SPF_errcode_t SPF_server_set_max_dns_ptr(SPF_server_t *spf_server, int n);
int SPF_server_get_max_dns_ptr(SPF_server_t *spf_server);
SPF_errcode_t SPF_server_set_max_dns_mx(SPF_server_t *spf_server, int n);
int SPF_server_get_max_dns_mx(SPF_server_t *spf_server);

#endif
