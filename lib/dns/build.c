/*
 * A small DNS message writer: the queries the c-ares backend sends. The
 * tests' canned (often hostile) responses are written with the same
 * builder and the fields of tests/support/dns_build.c.
 */
#include <string.h>

#include "msg.h"

void spfkit__dnsb_init(struct spfkit__dnsb *b, const struct spfkit_allocator *a, size_t max)
{
	spfkit__buf_init(&b->buf, a, max);
	b->rdlen_at = SIZE_MAX;
}

void spfkit__dnsb_free(struct spfkit__dnsb *b)
{
	spfkit__buf_free(&b->buf);
}

int spfkit__dnsb_err(const struct spfkit__dnsb *b)
{
	return b->buf.err;
}

const unsigned char *spfkit__dnsb_data(const struct spfkit__dnsb *b)
{
	return (const unsigned char *)spfkit__buf_str(&b->buf);
}

size_t spfkit__dnsb_len(const struct spfkit__dnsb *b)
{
	return b->buf.len;
}

void spfkit__dnsb_bytes(struct spfkit__dnsb *b, const void *p, size_t n)
{
	(void)spfkit__buf_append(&b->buf, p, n);
}

void spfkit__dnsb_u8(struct spfkit__dnsb *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	spfkit__dnsb_bytes(b, &c, 1);
}

void spfkit__dnsb_u16(struct spfkit__dnsb *b, unsigned v)
{
	unsigned char c[2] = { (unsigned char)(v >> 8), (unsigned char)v };

	spfkit__dnsb_bytes(b, c, 2);
}

void spfkit__dnsb_u32(struct spfkit__dnsb *b, uint32_t v)
{
	unsigned char c[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };

	spfkit__dnsb_bytes(b, c, 4);
}

void spfkit__dnsb_header(struct spfkit__dnsb *b, uint16_t id, uint16_t flags, uint16_t qd,
			 uint16_t an, uint16_t ns, uint16_t ar)
{
	spfkit__dnsb_u16(b, id);
	spfkit__dnsb_u16(b, flags);
	spfkit__dnsb_u16(b, qd);
	spfkit__dnsb_u16(b, an);
	spfkit__dnsb_u16(b, ns);
	spfkit__dnsb_u16(b, ar);
}

void spfkit__dnsb_opt(struct spfkit__dnsb *b, uint16_t udp_size)
{
	/* RFC 6891 §6.1.2: root owner, CLASS = UDP size, TTL = 0 (version
	 * 0, no DO bit), no options. */
	spfkit__dnsb_u8(b, 0);
	spfkit__dnsb_u16(b, SPFKIT__DNS_TYPE_OPT);
	spfkit__dnsb_u16(b, udp_size);
	spfkit__dnsb_u32(b, 0);
	spfkit__dnsb_u16(b, 0);
}

int spfkit__dns_query(struct spfkit__dnsb *b, const char *name, size_t len, uint16_t type,
		      uint16_t edns_udp_size)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t wlen;

	/* The name as submit() got it: raw label bytes (resolver.h), so a
	 * '\\' from a macro expansion is asked as itself, not as an escape. */
	if (spfkit__dns_name_wire_raw(name, len, wire, &wlen) != 0)
		return SPFKIT_EINVAL;
	spfkit__dnsb_header(b, 0, SPFKIT__DNS_F_RD, 1, 0, 0, edns_udp_size > 0 ? 1 : 0);
	spfkit__dnsb_bytes(b, wire, wlen);
	spfkit__dnsb_u16(b, type);
	spfkit__dnsb_u16(b, SPFKIT__DNS_CLASS_IN);
	if (edns_udp_size > 0)
		spfkit__dnsb_opt(b, edns_udp_size);
	return spfkit__dnsb_err(b);
}
