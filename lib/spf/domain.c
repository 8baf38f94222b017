/* Domain-name checks (RFC 7208 §4.3, §5.5). */
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "domain.h"

size_t spfkit__domain_trim(const char *name, size_t len)
{
	if (len > 0 && name[len - 1] == '.')
		len--;
	return len;
}

static int label_all_digits(const char *label, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!spfkit__is_digit((unsigned char)label[i]))
			return 0;
	return 1;
}

/*
 * §4.3: "If the <domain> is malformed (e.g., label longer than 63
 * characters, zero-length label not at the end, etc.) or is not a
 * multi-label domain name, ... check_host() immediately returns none."
 */
/* DNS labels may hold any octet; a macro can even put a space in one
 * (suite: macro-mania-in-domain). Control bytes cannot be asked for. */
static int has_control_byte(const unsigned char *p, size_t len)
{
	unsigned bad = 0;
	size_t i;

	for (i = 0; i < len; i++) /* no branch: the compiler vectorises it */
		bad |= (unsigned)(p[i] < 0x20) | (unsigned)(p[i] == 0x7f);
	return bad != 0;
}

#ifdef SPFKIT__HAVE_SSE2
/*
 * spfkit__domain_valid() for a name of 1 to 64 bytes, in one look (trimmed, not
 * starting '['), from three bit masks over its bytes: dots, bytes no
 * query can hold, digits. With a dot, no label of such a name is over 63
 * bytes, so the labels are fine unless two dots touch or one ends the
 * name or starts it. Blocks overlap at the end rather than read past it.
 */
static int short_domain_valid(const unsigned char *name, size_t len)
{
	unsigned char small[16];
	const unsigned char *p = name;
	uint64_t dots = 0, bad = 0, digits = 0, all, top;
	size_t k, at;

	if (len < 16) {
		memset(small, 'x', sizeof(small));
		memcpy(small, name, len);
		p = small;
	}
	for (k = 0; k < len; k += 16) { /* len is 1 or more */
		__m128i b, d;

		at = len < 16 ? 0 : k + 16 <= len ? k : len - 16;
		b = _mm_loadu_si128((const __m128i *)(const void *)(p + at));
		d = _mm_sub_epi8(b, _mm_set1_epi8('0'));
		dots |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8('.'))) << at;
		bad |= (uint64_t)(uint32_t)_mm_movemask_epi8(
			       _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(b, _mm_set1_epi8(0x1f)), b),
					    _mm_cmpeq_epi8(b, _mm_set1_epi8(0x7f))))
		       << at;
		digits |= (uint64_t)(uint32_t)_mm_movemask_epi8(
				  _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d))
			  << at;
	}
	all = len == 64 ? ~(uint64_t)0 : ((uint64_t)1 << len) - 1;
	dots &= all;
	if ((bad & all) != 0 || dots == 0 || (dots & (dots >> 1)) != 0 || (dots & 1) != 0 ||
	    (dots >> (len - 1)) != 0)
		return 0;
	/* the top label: an all-numeric one is an address literal */
	top = all & ~(((uint64_t)2 << (63 - __builtin_clzll(dots))) - 1);
	return (digits & top) != top;
}
#endif

int spfkit__domain_valid(const char *name, size_t len)
{
	const char *p, *end, *dot;
	size_t labels = 0;

	len = spfkit__domain_trim(name, len);
	if (len == 0 || len > 253 || name[0] == '[')
		return 0;
#ifdef SPFKIT__HAVE_SSE2
	if (len <= 64)
		return short_domain_valid((const unsigned char *)name, len);
#endif
	if (has_control_byte((const unsigned char *)name, len))
		return 0;
	p = name;
	end = name + len;
	for (;;) {
		dot = memchr(p, '.', (size_t)(end - p));
		if (dot == NULL)
			dot = end;
		/* an empty label, or one over 63 octets */
		if (dot == p || dot - p > 63)
			return 0;
		labels++;
		if (dot == end)
			break;
		p = dot + 1;
	}
	/* An all-numeric top label is an address literal, not a domain. */
	return labels >= 2 && !label_all_digits(p, (size_t)(end - p));
}

int spfkit__domain_within(const char *name, size_t len, const char *parent, size_t plen)
{
	len = spfkit__domain_trim(name, len);
	plen = spfkit__domain_trim(parent, plen);
	if (len < plen)
		return 0;
	if (!spfkit__memcaseeq(name + len - plen, plen, parent, plen))
		return 0;
	return len == plen || name[len - plen - 1] == '.';
}

int spfkit_domain_within(const char *name, size_t len, const char *parent, size_t plen)
{
	if (name == NULL || parent == NULL)
		return 0;
	return spfkit__domain_within(name, len, parent, plen);
}
