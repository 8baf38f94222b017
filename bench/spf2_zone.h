/*
 * A hashed in-memory DNS layer for libspf2, filled from the benchmark's
 * zone file, so libspf2 is measured with DNS as cheap as ours.
 *
 * libspf2's own SPF_dns_zone layer scans every record on each lookup;
 * with thousands of names that scan, not SPF, would dominate its figures
 * and flatter our ratio. This layer answers from an open-addressing hash
 * table of prebuilt SPF_dns_rr_t sets, handing out a copy made with
 * SPF_dns_rr_dup() as libspf2's own layers do (the caller frees it).
 *
 * The reader takes the subset of RFC 1035 master files that
 * bench/gen_corpus.py writes: one record per line, absolute owner names,
 * optional TTL and class, types A AAAA MX PTR TXT; TXT strings quoted,
 * with \DDD and \X escapes, joined without separators (RFC 7208 §3.3).
 * Anything else is rejected with "file:line: what".
 */
#ifndef BENCH_SPF2_ZONE_H
#define BENCH_SPF2_ZONE_H

/* libspf2's headers assume these are already included. */
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>

#include <spf2/spf.h>
#include <spf2/spf_dns.h>
#include <spf2/spf_dns_rr.h>

#define SPF2_ZONE_MAX_LINE 65536u
#define SPF2_ZONE_MAX_NAME 253u

/* Loads a zone; *out is a DNS layer for SPF_server_new_dns(). Its
 * destroy hook is NULL: free it with spf2_zone_free() after the server. */
int spf2_zone_load(const char *path, SPF_dns_server_t **out, char *err, size_t errlen);
/* Same from text in memory (len bytes, not kept). */
int spf2_zone_load_text(const char *text, size_t len, const char *label,
			SPF_dns_server_t **out, char *err, size_t errlen);
void spf2_zone_free(SPF_dns_server_t *layer);
/* RRsets held (one per name and type). */
size_t spf2_zone_records(const SPF_dns_server_t *layer);

#endif
