/*
 * The fields of the DNS responses the tests write (often hostile ones),
 * on the library's message builder (lib/dns/msg.h, struct spfkit__dnsb).
 * The library itself writes queries only: these live here, not in
 * libspfkit.
 */
#ifndef SPFKIT_TEST_DNS_BUILD_H
#define SPFKIT_TEST_DNS_BUILD_H

#include "msg.h"

/* A name in presentation text, written uncompressed. */
void spfkit__dnsb_name(struct spfkit__dnsb *b, const char *text, size_t len);
/* A compression pointer to `off` (two bytes). */
void spfkit__dnsb_ptr(struct spfkit__dnsb *b, size_t off);
void spfkit__dnsb_question(struct spfkit__dnsb *b, const char *name, size_t len, uint16_t type);
/* Owner, type, class IN, ttl and a RDLENGTH that rr_end() fills in. */
void spfkit__dnsb_rr_begin(struct spfkit__dnsb *b, const char *name, size_t len, uint16_t type,
			   uint32_t ttl);
void spfkit__dnsb_rr_end(struct spfkit__dnsb *b);
/* TXT RDATA: data cut into character-strings of at most 255 octets. */
void spfkit__dnsb_txt(struct spfkit__dnsb *b, const void *data, size_t len);

#endif
