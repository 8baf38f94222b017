/*
 * Internal API shared by zone.c (the in-memory zone) and zonefile.c (the
 * master file loader). Nothing here is public.
 */
#ifndef SPFKIT_ZONE_INT_H
#define SPFKIT_ZONE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/zone.h>

#include "core.h"

/* The longest name, final dot removed: 255 wire octets (RFC 1035 §2.3.4). */
#define SPFKIT__ZONE_NAME_MAX 253u
#define SPFKIT__ZONE_LABEL_MAX 63u /* RFC 1035 §2.3.4 */
/* RDATA is at most 65535 octets (RFC 1035 §3.2.1 RDLENGTH). */
#define SPFKIT__ZONE_RDATA_MAX 65535u

/* The allocator the zone was made with (the loader allocates with it too). */
const struct spfkit_allocator *spfkit__zone_alloc(const struct spfkit_zone *zone);

/* The zone's memory limit (SPFKIT_ZONE_MAX_MEMORY when made); tests set
 * a small one. An add past it is SPFKIT_E2BIG, with *why this text. */
void spfkit__zone_set_max_memory(struct spfkit_zone *zone, size_t bytes);
size_t spfkit__zone_max_memory(const struct spfkit_zone *zone);
size_t spfkit__zone_memory(const struct spfkit_zone *zone); /* counted so far */
extern const char spfkit__zone_why_memory[];

/*
 * spfkit_zone_add() that also says why it refused: on SPFKIT_EINVAL or
 * SPFKIT_E2BIG, *why (if why is not NULL) is a static text such as
 * "CNAME and other data". The loader puts it into its file:line message.
 */
int spfkit__zone_add(struct spfkit_zone *zone, const char *name, size_t name_len, uint16_t type,
		     uint32_t ttl, const void *data, size_t len, uint16_t pref, const char **why);

/*
 * Check a name: 1..253 bytes once one final dot is dropped, labels of
 * 1..63 bytes. Returns the length without the final dot, or 0 when the
 * name is not one DNS could carry (then *why, if why is not NULL, says
 * what is wrong).
 */
size_t spfkit__zone_name_check(const char *name, size_t len, const char **why);

#endif
