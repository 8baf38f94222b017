/* Domain-name checks (RFC 7208 §4.3, §5.5). */
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

int spfkit__domain_valid(const char *name, size_t len)
{
	const char *p, *end, *dot;
	size_t labels = 0;

	len = spfkit__domain_trim(name, len);
	if (len == 0 || len > 253 || name[0] == '[' || has_control_byte((const unsigned char *)name, len))
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
