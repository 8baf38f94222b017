/* The system resolver as a layer: spfkit's c-ares backend with the
 * servers of /etc/resolv.conf (or of $SPFKIT_DNS_SERVERS,
 * "HOST[:PORT],..."), asked synchronously. */
#ifndef INC_SPF_DNS_RESOLV
#define INC_SPF_DNS_RESOLV

#include "spf_dns.h"

/* layer_below is not used. NULL when c-ares cannot start. */
SPF_dns_server_t *SPF_dns_resolv_new(SPF_dns_server_t *layer_below, const char *name, int debug);

#endif
