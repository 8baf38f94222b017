/* Locale-free ASCII helpers, and the one UTF-8 test of the header writers. */
#include <stdint.h>
#include <string.h>

#include "spfkit_util.h"

int spfkit__memcaseeq(const void *a, size_t alen, const void *b, size_t blen)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	if (alen != blen)
		return 0;
	if (alen == 0)
		return 1; /* an empty name (the root, a null MX) may come with no pointer */
	/* Names nearly always arrive in the same case: try the cheap way first. */
	if (memcmp(x, y, alen) == 0)
		return 1;
	for (i = 0; i < alen; i++)
		if (spfkit__lower(x[i]) != spfkit__lower(y[i]))
			return 0;
	return 1;
}

size_t spfkit__utf8_len(const unsigned char *s, size_t avail)
{
	unsigned cp;
	size_t n, i;

	if (avail < 2 || s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n > avail)
		return 0;
	cp = s[0] & (0x7fu >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return n;
}

/*
 * Every evaluation asks this of its identities, and every daemon request
 * of its sender (RFC 8616: U-labels and SMTPUTF8), strings of some 20-40
 * bytes: eight bytes a step, no branch on the data, and no vector loop
 * whose set-up costs more than such strings do (issue 30: ASCII mail must
 * pay nothing for it).
 */
int spfkit__ascii_only(const char *p, size_t len)
{
	uint64_t any = 0, word;
	unsigned char small = 0;
	size_t i;

	if (len < sizeof(word)) {
		for (i = 0; i < len; i++)
			small |= (unsigned char)p[i];
		return small < 0x80;
	}
	for (i = 0; i + sizeof(word) <= len; i += sizeof(word)) {
		memcpy(&word, p + i, sizeof(word));
		any |= word;
	}
	memcpy(&word, p + len - sizeof(word), sizeof(word)); /* the tail, overlapping */
	any |= word;
	return (any & UINT64_C(0x8080808080808080)) == 0;
}
