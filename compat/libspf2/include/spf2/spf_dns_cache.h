/* A layer over another. Here it forwards every question to the layer
 * below (answers are not kept), so a program's own layer sees each
 * question; it frees the layer below when it is freed. */
#ifndef INC_SPF_DNS_CACHE
#define INC_SPF_DNS_CACHE

#include "spf_dns.h"

SPF_dns_server_t *SPF_dns_cache_new(SPF_dns_server_t *layer_below, const char *name, int debug,
				    int cache_bits);
/* Accepted and ignored. */
void SPF_dns_cache_set_ttl(SPF_dns_server_t *spf_dns_server, time_t min_ttl, time_t err_ttl,
			   time_t txt_ttl, time_t rdns_ttl);
void SPF_dns_set_conserve_cache(SPF_dns_server_t *spf_dns_server, int conserve_cache);

#endif
