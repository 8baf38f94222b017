/*
 * The offline zone backend: DNS data held in memory, loaded from RFC 1035
 * master files or filled from code, served through the resolver seam.
 * `make demo`, the RFC 7208 suite and the benchmarks run on it.
 *
 * A zone is filled by one thread, then read-only: lookups from any
 * number of threads at once are safe. Names compare case-insensitively,
 * a final dot is ignored.
 */
#ifndef SPFKIT_ZONE_H
#define SPFKIT_ZONE_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>

#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_allocator;
struct spfkit_zone;

/* Caps, so a hostile file cannot take unbounded memory. */
#define SPFKIT_ZONE_MAX_LINE 65536u   /* one logical record, parentheses joined */
#define SPFKIT_ZONE_MAX_NAME 255u     /* presentation length of a name */
#define SPFKIT_ZONE_MAX_FILE (256u << 20) /* spfkit_zone_load_file() reads at most this */
#define SPFKIT_ZONE_MAX_CNAME 8u      /* CNAMEs followed by one lookup */
#define SPFKIT_ZONE_MAX_PENDING 65536u /* questions queued in one zone resolver */
#define SPFKIT_ZONE_NEGATIVE_TTL 300u /* ttl of NODATA and NXDOMAIN answers */
#define SPFKIT_ZONE_DEFAULT_TTL 3600u /* loader: before any $TTL or explicit TTL */

SPFKIT_MUSTCHECK int spfkit_zone_new(const struct spfkit_allocator *alloc, struct spfkit_zone **out);
void spfkit_zone_free(struct spfkit_zone *zone);

/*
 * Load a master file ($ORIGIN, $TTL, relative names, @, blank owner =
 * previous owner, multi-string TXT with quotes and \DDD / \X escapes,
 * parentheses, ; comments; A AAAA MX PTR TXT SPF CNAME). `origin` may be
 * NULL ("." then). On error returns SPFKIT_ESYNTAX (or SPFKIT_EIO,
 * SPFKIT_ENOMEM, SPFKIT_E2BIG) and writes "file:line: what is wrong" to
 * errbuf; records loaded before the bad line stay loaded.
 */
int spfkit_zone_load_file(struct spfkit_zone *zone, const char *path, const char *origin,
			  char *errbuf, size_t errlen);
/* Same for text in memory; `label` names it in error messages. */
int spfkit_zone_load_text(struct spfkit_zone *zone, const char *text, size_t len,
			  const char *label, const char *origin, char *errbuf, size_t errlen);

/*
 * Add one record. `data` as in struct spfkit_dns_rr: 4 or 16 bytes for
 * A/AAAA, a name for MX/PTR/CNAME, the joined strings for TXT/SPF.
 * 0, SPFKIT_EINVAL (bad name, wrong length), SPFKIT_ENOMEM.
 */
int spfkit_zone_add(struct spfkit_zone *zone, const char *name, size_t name_len, uint16_t type,
		    uint32_t ttl, const void *data, size_t len, uint16_t pref);

/*
 * Make the name exist with no records of this type (NODATA), when it has
 * no other records: the RFC suite's "TXT: NONE".
 */
int spfkit_zone_add_empty(struct spfkit_zone *zone, const char *name, size_t name_len);

/* Every question for `name` (any type) gets SPFKIT_DNS_TEMPFAIL ("timeout"). */
int spfkit_zone_add_timeout(struct spfkit_zone *zone, const char *name, size_t name_len);

/*
 * Synchronous lookup: fills *answer with pointers into the zone (valid
 * until the zone is freed or changed). CNAMEs are followed (at most 8).
 * A name with no records and no CNAME is NXDOMAIN, unless some name
 * below it exists (then NODATA, RFC 8020 aside). 0 or SPFKIT_EINVAL.
 */
int spfkit_zone_lookup(const struct spfkit_zone *zone, const char *name, size_t len,
		       uint16_t type, struct spfkit_dns_answer *answer);

/* Number of names held. */
size_t spfkit_zone_size(const struct spfkit_zone *zone);

/*
 * A resolver serving this zone. Answers are delivered from the
 * resolver's wait(), in the order asked. The zone must outlive the
 * resolver; free it with spfkit_resolver_free().
 */
SPFKIT_MUSTCHECK int spfkit_zone_resolver(const struct spfkit_zone *zone, struct spfkit_resolver **out);

#ifdef __cplusplus
}
#endif

#endif
