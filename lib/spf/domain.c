/* Domain-name checks (RFC 7208 §4.3, §5.5). */
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
int spfkit__domain_valid(const char *name, size_t len)
{
	size_t i, label_start = 0, labels = 0;

	len = spfkit__domain_trim(name, len);
	if (len == 0 || len > 253 || name[0] == '[')
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && name[i] != '.') {
			/* DNS labels may hold any octet; a macro can put a space
			 * in one (suite: macro-mania-in-domain). Control bytes
			 * cannot be asked for through a name. */
			if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] == 0x7f)
				return 0;
			continue;
		}
		if (i == label_start || i - label_start > 63)
			return 0;
		labels++;
		if (i < len)
			label_start = i + 1;
	}
	if (labels < 2)
		return 0;
	/* An all-numeric top label is an address literal, not a domain. */
	return !label_all_digits(name + label_start, len - label_start);
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
