/* Locale-free ASCII helpers. */
#include "core.h"

int spfkit__memcaseeq(const void *a, size_t alen, const void *b, size_t blen)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	if (alen != blen)
		return 0;
	for (i = 0; i < alen; i++)
		if (spfkit__lower(x[i]) != spfkit__lower(y[i]))
			return 0;
	return 1;
}

uint64_t spfkit__name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	if (len > 0 && name[len - 1] == '.')
		len--;
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)spfkit__lower((unsigned char)name[i]);
		h *= 0x100000001b3ull;
	}
	return h;
}
