/* The fields of the tests' DNS responses (dns_build.h). */
#include <string.h>

#include "dns_build.h"

void spfkit__dnsb_name(struct spfkit__dnsb *b, const char *text, size_t len)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t wlen;

	if (spfkit__dns_name_wire(text, len, wire, &wlen) != 0) {
		if (b->buf.err == 0)
			b->buf.err = SPFKIT_EINVAL;
		return;
	}
	spfkit__dnsb_bytes(b, wire, wlen);
}

void spfkit__dnsb_ptr(struct spfkit__dnsb *b, size_t off)
{
	spfkit__dnsb_u16(b, 0xc000u | (unsigned)(off & 0x3fffu));
}

void spfkit__dnsb_question(struct spfkit__dnsb *b, const char *name, size_t len, uint16_t type)
{
	spfkit__dnsb_name(b, name, len);
	spfkit__dnsb_u16(b, type);
	spfkit__dnsb_u16(b, SPFKIT__DNS_CLASS_IN);
}

void spfkit__dnsb_rr_begin(struct spfkit__dnsb *b, const char *name, size_t len, uint16_t type,
			   uint32_t ttl)
{
	spfkit__dnsb_name(b, name, len);
	spfkit__dnsb_u16(b, type);
	spfkit__dnsb_u16(b, SPFKIT__DNS_CLASS_IN);
	spfkit__dnsb_u32(b, ttl);
	b->rdlen_at = b->buf.len;
	spfkit__dnsb_u16(b, 0);
}

void spfkit__dnsb_rr_end(struct spfkit__dnsb *b)
{
	size_t n;

	if (b->buf.err || b->rdlen_at == SIZE_MAX)
		return;
	n = b->buf.len - b->rdlen_at - 2;
	if (n > 0xffffu) {
		b->buf.err = SPFKIT_E2BIG;
		return;
	}
	b->buf.data[b->rdlen_at] = (char)(n >> 8);
	b->buf.data[b->rdlen_at + 1] = (char)(n & 0xffu);
	b->rdlen_at = SIZE_MAX;
}

void spfkit__dnsb_txt(struct spfkit__dnsb *b, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t n;

	/* RFC 1035 §3.3.14: one or more <character-string>s, each <= 255. */
	do {
		n = len > 255 ? 255 : len;
		spfkit__dnsb_u8(b, (unsigned)n);
		spfkit__dnsb_bytes(b, p, n);
		p += n;
		len -= n;
	} while (len > 0);
}
