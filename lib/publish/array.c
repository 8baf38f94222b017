/*
 * The growing arrays of lib/publish (findings, cache entries, ranges,
 * records...): one rule for all of them, doubling from a first size,
 * with the multiplication checked.
 */
#include <stdint.h>

#include "publish.h"

void *spfkit__array_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
	void *p;
	size_t c;

	if (n < *cap)
		return items;
	c = *cap ? *cap * 2 : first;
	if (c < *cap || c > SIZE_MAX / size)
		return NULL;
	p = spfkit__realloc(NULL, items, c * size);
	if (p != NULL)
		*cap = c;
	return p;
}
