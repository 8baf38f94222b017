/* One DNS answer as layers hand it over. */
#ifndef INC_SPF_DNS_RR
#define INC_SPF_DNS_RR

#include "spf_dns.h"

/* One record's data: A and AAAA in network order, names and TXT text as
 * NUL-terminated strings (TXT strings joined). Allocated at the size
 * the data needs, so only the member of its type may be read. */
typedef union {
	struct in_addr a;
	char ptr[1];
	char mx[1];
	char txt[1];
	struct in6_addr aaaa;
} SPF_dns_rr_data_t;

/* Layout of libspf2 1.2.10. */
typedef struct SPF_dns_rr_struct {
	char *domain;            /* the name asked */
	size_t domain_buf_len;   /* bytes allocated for domain */
	ns_type rr_type;         /* the type asked */
	int num_rr;              /* records in rr */
	SPF_dns_rr_data_t **rr;  /* num_rr records */
	size_t *rr_buf_len;      /* bytes allocated for each rr[i] */
	int rr_buf_num;          /* entries allocated in rr and rr_buf_len */
	time_t ttl;
	time_t utc_ttl;
	SPF_dns_stat_t herrno;   /* NETDB_SUCCESS, HOST_NOT_FOUND, NO_DATA, TRY_AGAIN, NO_RECOVERY */
	void *hook;
	SPF_dns_server_t *source; /* the layer that made it */
} SPF_dns_rr_t;

/* Constructors return NULL when out of memory. */
SPF_dns_rr_t *SPF_dns_rr_new(void);
void SPF_dns_rr_free(SPF_dns_rr_t *spfrr);
SPF_dns_rr_t *SPF_dns_rr_new_init(SPF_dns_server_t *spf_dns_server, const char *domain,
				  ns_type rr_type, int ttl, SPF_dns_stat_t herrno);
SPF_dns_rr_t *SPF_dns_rr_new_nxdomain(SPF_dns_server_t *spf_dns_server, const char *domain);
/* Makes rr[idx] at least len bytes (zeroed), growing the arrays. */
SPF_errcode_t SPF_dns_rr_buf_realloc(SPF_dns_rr_t *spfrr, int idx, size_t len);
/* Deep copy of src (its rr[] entries read by rr_type) into a new *dstp. */
SPF_errcode_t SPF_dns_rr_dup(SPF_dns_rr_t **dstp, SPF_dns_rr_t *src);

#endif
