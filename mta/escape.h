/* Escaped copies of untrusted bytes for log lines, shared by the daemons. */
#ifndef SPFKIT_MTA_ESCAPE_H
#define SPFKIT_MTA_ESCAPE_H

#include <stddef.h>

/*
 * A printable copy of untrusted bytes for a log line: at most `max`
 * input bytes (then "..."), with backslash, quote and every byte outside
 * %x20-7E written as \xHH. Always NUL-terminated when size > 0. Returns out.
 */
char *spfkit__mta_escape(const char *in, size_t len, size_t max, char *out, size_t size);

/*
 * The same escaping written at out[0..room), without a NUL: the bytes
 * written. For log lines built in place (one copy, no formatting).
 */
size_t spfkit__mta_escape_into(const char *in, size_t len, size_t max, char *out, size_t room);

#endif
