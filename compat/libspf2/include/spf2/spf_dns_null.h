/* A layer that forwards to the one below, or answers HOST_NOT_FOUND
 * when there is none. */
#ifndef INC_SPF_DNS_NULL
#define INC_SPF_DNS_NULL

#include "spf_dns.h"

SPF_dns_server_t *SPF_dns_null_new(SPF_dns_server_t *layer_below, const char *name, int debug);

#endif
