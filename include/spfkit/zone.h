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
/* Memory one zone may hold (names, records, index): a file of small
 * records takes 15 to 20 times its size, so this, not the file cap,
 * bounds a load; about 12 MB of A records or 20 MB of TXT fit. */
#define SPFKIT_ZONE_MAX_MEMORY (256u << 20)
#define SPFKIT_ZONE_MAX_CNAME 8u      /* CNAMEs followed by one lookup */
#define SPFKIT_ZONE_MAX_PENDING 65536u /* questions queued in one zone resolver */
/* records of one type at one name: what a 64 KiB DNS message can carry, 12 octets each at least */
#define SPFKIT_ZONE_MAX_RRSET 5461u
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
 *
 * Details (RFC 1035 §5.1 unless said): TTL and class IN in either order,
 * both optional; a TTL is seconds or BIND units ("1h30m"), at most
 * 2147483647 (RFC 2181 §8); an omitted TTL is $TTL (RFC 2308 §4), else
 * the last explicit one, else SPFKIT_ZONE_DEFAULT_TTL. TXT/SPF take one
 * or more quoted strings or unquoted words, each at most 255 bytes once
 * decoded, joined with no separator (RFC 7208 §3.3); \000 gives a NUL.
 * "MX 0 ." is a null MX. A record listed twice is loaded once, as by
 * spfkit_zone_add(). SOA, NS, SRV, CAA, DNSSEC and other types SPF does
 * not ask, and any TYPEnnn with RFC 3597 "\# len hex" data, are read,
 * checked for their fields and ignored (generic data of a type SPF asks
 * is decoded and kept), so a real BIND zone file loads. Refused with a
 * message: classes other than IN, $INCLUDE and other directives, an escaped '.' inside a name, raw NUL
 * and control bytes (tab aside), a CR not before LF, a logical record
 * over SPFKIT_ZONE_MAX_LINE bytes (SPFKIT_E2BIG). SPFKIT_EINVAL: NULL
 * zone or path, a bad `origin`. load_file reads at most
 * SPFKIT_ZONE_MAX_FILE bytes (SPFKIT_E2BIG); a zone that would hold more
 * than SPFKIT_ZONE_MAX_MEMORY bytes stops loading at the record that
 * would pass it (SPFKIT_E2BIG, "file:line: zone larger than the memory
 * limit of N bytes"). errbuf may be NULL; a short one gets a cut message.
 */
int spfkit_zone_load_file(struct spfkit_zone *zone, const char *path, const char *origin,
			  char *errbuf, size_t errlen);
/* Same for text in memory; `label` names it in error messages. */
int spfkit_zone_load_text(struct spfkit_zone *zone, const char *text, size_t len,
			  const char *label, const char *origin, char *errbuf, size_t errlen);

/*
 * Add one record. `data` as in struct spfkit_dns_rr: 4 or 16 bytes for
 * A/AAAA, a name for MX/PTR/CNAME, the joined strings for TXT/SPF.
 * Names are raw bytes with '.' between labels: 1..253 bytes once one
 * final dot is dropped, labels 1..63 (RFC 1035 §2.3.4); any other byte
 * is allowed. The data is copied; records are kept in the order added.
 * A record identical to one already at the name (same type and data,
 * names in MX/PTR/CNAME data compared ignoring case) is dropped, as
 * RFC 2181 §5 says, and the smaller TTL kept (§5.2); TXT/SPF data is
 * compared joined, so strings split differently count as identical.
 * An MX to "." or "" is a null MX (RFC 7505),
 * stored with len 0. A CNAME owner holds nothing else (RFC 1034 §3.6.2).
 * 0, SPFKIT_EINVAL (bad name, wrong length, unsupported type, CNAME and
 * other data), SPFKIT_E2BIG (TXT/SPF data over 65535 bytes, or the zone
 * would hold more than SPFKIT_ZONE_MAX_MEMORY bytes), SPFKIT_ENOMEM
 * (then the zone is unchanged).
 */
int spfkit_zone_add(struct spfkit_zone *zone, const char *name, size_t name_len, uint16_t type,
		    uint32_t ttl, const void *data, size_t len, uint16_t pref);

/*
 * Make the name exist with no records of this type (NODATA), when it has
 * no other records: the RFC suite's "TXT: NONE".
 */
int spfkit_zone_add_empty(struct spfkit_zone *zone, const char *name, size_t name_len);

/*
 * Questions for `name` get SPFKIT_DNS_TEMPFAIL with detail "timeout",
 * for every type the name holds no records of; records it does hold are
 * still answered. A name with only a timeout times out for every type.
 * (The RFC 7208 suite's "TIMEOUT" works so: "spftimeout" has a TXT
 * record and a TIMEOUT and expects the TXT to be found.)
 */
int spfkit_zone_add_timeout(struct spfkit_zone *zone, const char *name, size_t name_len);

/*
 * Synchronous lookup: fills *answer with pointers into the zone (valid
 * until the zone is freed or changed); no allocation, no copy.
 * Thread-safe once the zone is filled. CNAMEs are followed (at most
 * SPFKIT_ZONE_MAX_CNAME); a loop or a longer chain is TEMPFAIL ("CNAME
 * loop", "CNAME chain too long"), as a recursive server's SERVFAIL. A
 * name that was never added is NXDOMAIN, unless some name below it
 * exists (then NODATA, RFC 8020 §2); a name DNS could not carry (empty
 * label, label over 63 or name over 253 bytes) is NXDOMAIN. Negative
 * answers carry ttl SPFKIT_ZONE_NEGATIVE_TTL; OK answers the smallest TTL
 * of the records and the CNAMEs followed. 0, or SPFKIT_EINVAL (NULL zone
 * or answer, NULL name with len > 0).
 */
int spfkit_zone_lookup(const struct spfkit_zone *zone, const char *name, size_t len,
		       uint16_t type, struct spfkit_dns_answer *answer);

/* Number of names added (not counting names there only because a name below exists). */
size_t spfkit_zone_size(const struct spfkit_zone *zone);

/*
 * A resolver serving this zone, allocated with the zone's allocator.
 * submit() looks the question up at once (spfkit_zone_lookup()'s errors;
 * SPFKIT_E2BIG past SPFKIT_ZONE_MAX_PENDING queued) and queues the
 * answer; it never calls back. wait() delivers, in the order asked,
 * the answers queued when it was called and returns how many callbacks
 * ran (0 at once when none is queued; the zone never blocks, timeout_ms
 * is not used). Questions a callback submits are delivered by the next
 * wait(); a callback may cancel queued questions, but calling wait()
 * from a callback gives SPFKIT_ESTATE and freeing the resolver from one
 * is not allowed. Freeing it with questions queued runs none of their
 * callbacks. One thread at a time per resolver; the zone must outlive
 * it; free it with spfkit_resolver_free().
 */
SPFKIT_MUSTCHECK int spfkit_zone_resolver(const struct spfkit_zone *zone, struct spfkit_resolver **out);

#ifdef __cplusplus
}
#endif

#endif
