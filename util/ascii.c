/* Locale-free ASCII helpers. */
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
