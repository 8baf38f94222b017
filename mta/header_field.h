/*
 * Header-field text both front ends that edit messages need (the milter,
 * the OpenSMTPD filter): is an Authentication-Results field ours. Pure,
 * no I/O. Not an API.
 */
#ifndef SPFKIT_MTA_HEADER_FIELD_H
#define SPFKIT_MTA_HEADER_FIELD_H

#include <stddef.h>

/* Whose an Authentication-Results field is, as far as its text so far tells. */
enum spfkit__mta_ar_owner {
	SPFKIT__MTA_AR_OTHER = 0, /* another host's: keep it */
	SPFKIT__MTA_AR_OURS,      /* claims our authserv-id, or could be read so: delete it */
	SPFKIT__MTA_AR_UNKNOWN,   /* not yet known: the id's part has not ended */
};

/*
 * Whose is the Authentication-Results field whose body (after the colon,
 * folding included) begins with body[0..len)? `complete`: that is the
 * whole body; otherwise more may follow and the answer may be
 * SPFKIT__MTA_AR_UNKNOWN (never with `complete`). OURS when a lenient
 * reader could take its authserv-id for `id` (RFC 8601 §2.2 syntax, read
 * without regard to case, CFWS, quotes, a trailing dot or what follows a
 * word), or when the part before the first ';' is one that readers parse
 * differently (header_field.c says which). A NUL reads as a space. The
 * scan stops at the first ';' outside comments and quotes: bounded by
 * len. An empty id: OTHER.
 */
enum spfkit__mta_ar_owner spfkit__mta_ar_owner(const char *body, size_t len, const char *id,
					       int complete);

/* spfkit__mta_ar_owner() of a whole NUL-terminated body: 1 when OURS. NULL value: 0. */
int spfkit__mta_ar_is_ours(const char *value, const char *id);

#endif
