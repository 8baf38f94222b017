/* Address matching and reverse names (RFC 7208 §5.3-§5.6, §7.3). Internal API. */
#ifndef SPFKIT_IPADDR_H
#define SPFKIT_IPADDR_H

#include <stddef.h>

#include <spfkit/eval.h>

/* Does `ip` fall in addr/prefix of the given family (4 or 6)? */
int spfkit__ipaddr_match(const struct spfkit_ip *ip, int family, const unsigned char *addr,
			 unsigned prefix);

/* "4.3.2.1.in-addr.arpa" or the 32-nibble ".ip6.arpa" name; returns its
 * length. buf must hold SPFKIT__REVERSE_MAX bytes. */
#define SPFKIT__REVERSE_MAX SPFKIT_IP_REVERSE_MAX
size_t spfkit__ipaddr_reverse_name(const struct spfkit_ip *ip, char *buf);

/* RFC 5952 text of an address (IPv4-mapped with a dotted quad, §5), not
 * NUL-terminated; returns its length. out must hold SPFKIT_IP_TEXT_MAX. */
size_t spfkit__ipaddr_text(const struct spfkit_ip *ip, char *out);

#endif
