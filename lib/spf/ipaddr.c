/* IP addresses: parsing, text form, CIDR match, reverse names. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "ipaddr.h"

static const unsigned char v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int spfkit_ip_parse(const char *text, size_t len, struct spfkit_ip *out)
{
	char tmp[64];

	if (text == NULL || out == NULL || len == 0 || len >= sizeof(tmp))
		return SPFKIT_EINVAL;
	memcpy(tmp, text, len);
	tmp[len] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, tmp, out->addr) == 1) {
		out->family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, tmp, out->addr) != 1)
		return SPFKIT_EINVAL;
	out->family = 6;
	/* An IPv4-mapped IPv6 client is an IPv4 client (RFC 7208 §5). */
	if (memcmp(out->addr, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0) {
		memmove(out->addr, out->addr + 12, 4);
		memset(out->addr + 4, 0, 12);
		out->family = 4;
	}
	return 0;
}

const char *spfkit_ip_format(const struct spfkit_ip *ip, char *buf, size_t size)
{
	int af = ip->family == 6 ? AF_INET6 : AF_INET;

	if (size == 0)
		return buf;
	if (inet_ntop(af, ip->addr, buf, (socklen_t)size) == NULL)
		buf[0] = '\0';
	return buf;
}

int spfkit__ip_match(const struct spfkit_ip *ip, int family, const unsigned char *addr,
		     unsigned prefix)
{
	unsigned whole, rest;

	if (ip->family != family)
		return 0;
	if (prefix > (family == 4 ? 32u : 128u))
		return 0;
	whole = prefix / 8;
	rest = prefix % 8;
	if (memcmp(ip->addr, addr, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((ip->addr[whole] ^ addr[whole]) & (0xffu << (8 - rest)) & 0xffu) == 0;
}

size_t spfkit__ip_reverse_name(const struct spfkit_ip *ip, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	int i;

	if (ip->family == 4) {
		int w = snprintf(buf, SPFKIT__REVERSE_MAX, "%u.%u.%u.%u.in-addr.arpa",
				 ip->addr[3], ip->addr[2], ip->addr[1], ip->addr[0]);
		return w > 0 ? (size_t)w : 0;
	}
	for (i = 15; i >= 0; i--) {
		buf[n++] = hex[ip->addr[i] & 0xf];
		buf[n++] = '.';
		buf[n++] = hex[ip->addr[i] >> 4];
		buf[n++] = '.';
	}
	memcpy(buf + n, "ip6.arpa", 9);
	return n + 8;
}
