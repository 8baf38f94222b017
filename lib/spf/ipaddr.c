/* IP addresses: parsing, text form, CIDR match, reverse names. */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <string.h>

#include "core.h"
#include "ipaddr.h"

static const unsigned char v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int spfkit_ip_parse(const char *text, size_t len, struct spfkit_ip *out)
{
	char tmp[64];

	if (text == NULL || out == NULL || len == 0 || len >= sizeof(tmp))
		return SPFKIT_EINVAL;
	/* inet_pton() stops at a NUL: "1.2.3.4\0junk" must not pass for 1.2.3.4 */
	if (memchr(text, '\0', len) != NULL)
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

int spfkit_ip_from_sockaddr(const struct sockaddr *sa, size_t salen, struct spfkit_ip *out)
{
	struct spfkit_ip ip;
	sa_family_t family;

	if (sa == NULL || out == NULL || salen < offsetof(struct sockaddr, sa_family) + sizeof(family))
		return SPFKIT_EINVAL;
	/* copy out of sa: the caller's buffer need not be aligned for the struct */
	memcpy(&family, (const unsigned char *)sa + offsetof(struct sockaddr, sa_family), sizeof(family));
	memset(&ip, 0, sizeof(ip));
	if (family == AF_INET && salen >= sizeof(struct sockaddr_in)) {
		ip.family = 4;
		memcpy(ip.addr, (const unsigned char *)sa + offsetof(struct sockaddr_in, sin_addr), 4);
	} else if (family == AF_INET6 && salen >= sizeof(struct sockaddr_in6)) {
		ip.family = 6;
		memcpy(ip.addr, (const unsigned char *)sa + offsetof(struct sockaddr_in6, sin6_addr), 16);
		/* the same rule as spfkit_ip_parse(): a mapped client is IPv4 (RFC 7208 §5) */
		if (memcmp(ip.addr, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0) {
			memmove(ip.addr, ip.addr + 12, 4);
			memset(ip.addr + 4, 0, 12);
			ip.family = 4;
		}
	} else {
		return SPFKIT_EINVAL;
	}
	*out = ip;
	return 0;
}

/* "00" to "99": two digits at a time. */
static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";

/* Decimal 0..255 without leading zeros; returns the length written. */
static size_t put_octet(char *out, unsigned v)
{
	if (v >= 100) {
		out[0] = (char)('0' + v / 100);
		memcpy(out + 1, digit_pairs + 2 * (v % 100), 2);
		return 3;
	}
	if (v >= 10) {
		memcpy(out, digit_pairs + 2 * v, 2);
		return 2;
	}
	out[0] = (char)('0' + v);
	return 1;
}

/* The dotted quad of a[0..3], or reversed (a[3] first) for in-addr.arpa. */
static size_t put_quad(const unsigned char *a, int reversed, char *out)
{
	size_t n = 0;
	int i;

	for (i = 0; i < 4; i++) {
		if (i > 0)
			out[n++] = '.';
		n += put_octet(out + n, a[reversed ? 3 - i : i]);
	}
	return n;
}

/* A group in lower-case hex without leading zeros: its digits' count. */
static size_t put_hex16(char *out, unsigned v)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = v >= 0x1000 ? 4 : v >= 0x100 ? 3 : v >= 0x10 ? 2 : 1, i;

	for (i = n; i-- > 0; v >>= 4)
		out[i] = hex[v & 0xf];
	return n;
}

/* RFC 5952 §4.2: the longest run of two or more zero groups (the first
 * of equal runs) becomes "::". */
static void longest_zero_run(const unsigned char *a, int *start, int *len)
{
	int i, run = 0;

	*start = -1;
	*len = 0;
	for (i = 0; i < 8; i++) {
		run = (a[2 * i] | a[2 * i + 1]) == 0 ? run + 1 : 0;
		if (run > *len && run >= 2) {
			*len = run;
			*start = i - run + 1;
		}
	}
}

static size_t format_v6(const unsigned char *a, char *out)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	int i, zstart, zlen;
	size_t n = 0;

	if (memcmp(a, mapped, sizeof(mapped)) == 0) { /* RFC 5952 §5 */
		memcpy(out, "::ffff:", 7);
		return 7 + put_quad(a + 12, 0, out + 7);
	}
	longest_zero_run(a, &zstart, &zlen);
	for (i = 0; i < 8; i++) {
		if (i == zstart) {
			out[n++] = ':';
			if (i == 0)
				out[n++] = ':';
			i += zlen - 1;
			continue;
		}
		n += put_hex16(out + n, (unsigned)(a[2 * i] << 8 | a[2 * i + 1]));
		if (i < 7)
			out[n++] = ':';
	}
	return n;
}

/* Our own text form: inet_ntop costs a sprintf per group, on every evaluation. */
size_t spfkit__ipaddr_text(const struct spfkit_ip *ip, char *out)
{
	return ip->family == 4 ? put_quad(ip->addr, 0, out) : format_v6(ip->addr, out);
}


const char *spfkit_ip_format(const struct spfkit_ip *ip, char *buf, size_t size)
{
	char tmp[SPFKIT_IP_TEXT_MAX];
	size_t n;

	if (ip == NULL || buf == NULL || (ip->family != 4 && ip->family != 6)) {
		if (buf != NULL && size > 0)
			buf[0] = '\0';
		return NULL;
	}
	if (size >= sizeof(tmp)) { /* room for the longest: no copy */
		buf[spfkit__ipaddr_text(ip, buf)] = '\0';
		return buf;
	}
	if (size == 0)
		return buf;
	n = spfkit__ipaddr_text(ip, tmp);
	if (n >= size)
		n = size - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
	return buf;
}

/* The bits of a and b, big-endian words, that differ within the prefix's
 * first `bits` of 64 (0 to 64). */
static uint64_t differ64(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	uint64_t x, y;

	if (bits == 0)
		return 0;
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	return (be64toh(x) ^ be64toh(y)) >> (64 - bits);
}

int spfkit__ipaddr_match(const struct spfkit_ip *ip, int family, const unsigned char *addr,
			 unsigned prefix)
{
	uint32_t x, y;

	if (ip->family != family)
		return 0;
	if (family == 4) {
		if (prefix > 32)
			return 0;
		memcpy(&x, ip->addr, 4);
		memcpy(&y, addr, 4);
		/* shifted as 64 bits: a prefix of 0 shifts all 32 out */
		return ((uint64_t)(ntohl(x) ^ ntohl(y)) >> (32 - prefix)) == 0;
	}
	if (prefix > 128)
		return 0;
	if (prefix <= 64)
		return differ64(ip->addr, addr, prefix) == 0;
	return differ64(ip->addr, addr, 64) == 0 &&
	       differ64(ip->addr + 8, addr + 8, prefix - 64) == 0;
}

size_t spfkit__ipaddr_reverse_name(const struct spfkit_ip *ip, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	int i;

	if (ip->family == 4) {
		n = put_quad(ip->addr, 1, buf);
		memcpy(buf + n, ".in-addr.arpa", 14);
		return n + 13;
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

size_t spfkit_ip_reverse_name(const struct spfkit_ip *ip, char *buf, size_t size)
{
	char tmp[SPFKIT__REVERSE_MAX];
	size_t n;

	if (buf != NULL && size > 0)
		buf[0] = '\0';
	if (ip == NULL || buf == NULL || (ip->family != 4 && ip->family != 6))
		return 0;
	n = spfkit__ipaddr_reverse_name(ip, tmp);
	if (n == 0 || n >= size)
		return 0;
	memcpy(buf, tmp, n + 1);
	return n;
}

int spfkit_ip_in_net(const struct spfkit_ip *ip, const struct spfkit_ip *net, unsigned prefix)
{
	if (ip == NULL || net == NULL || (net->family != 4 && net->family != 6))
		return 0;
	return spfkit__ipaddr_match(ip, net->family, net->addr, prefix);
}
