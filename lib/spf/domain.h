/* Domain-name checks of RFC 7208 §4.3 and §5.5. Internal API. */
#ifndef SPFKIT_DOMAIN_H
#define SPFKIT_DOMAIN_H

#include <stddef.h>

/*
 * Can this name be queried as <domain> (§4.3)? Multi-label, every label
 * 1..63 octets, at most 253 octets without the optional final dot,
 * no control bytes, not a domain literal, top label not all-numeric.
 */
int spfkit__domain_valid(const char *name, size_t len);

/* Is `name` equal to `parent` or a subdomain of it (case-insensitive,
 * final dots ignored)? §5.5. */
int spfkit__domain_within(const char *name, size_t len, const char *parent, size_t plen);

/* Length without one final dot. */
size_t spfkit__domain_trim(const char *name, size_t len);

#endif
