/*
 * Header-field text both front ends that edit messages need (the milter,
 * the OpenSMTPD filter): is an Authentication-Results field ours. Pure,
 * no I/O. Not an API.
 */
#ifndef SPFKIT_MTA_HEADER_FIELD_H
#define SPFKIT_MTA_HEADER_FIELD_H

/*
 * Is `value` (an Authentication-Results header field body, NUL-terminated,
 * folding included) one whose authserv-id equals `id`? RFC 8601 §2.2: the
 * field begins with [CFWS] authserv-id, a token or a quoted-string,
 * compared without regard to case (§5 tells a receiver to delete such
 * fields it did not add). Comments nest; every loop is bounded by the
 * input. NULL value or an empty id: 0.
 */
int spfkit__mta_ar_is_ours(const char *value, const char *id);

#endif
