/* Allocation through the caller's hook (include/spfkit/common.h). */
#include <stdlib.h>
#include <string.h>

#include "spfkit_util.h"

void *spfkit__alloc(const struct spfkit_allocator *a, size_t size)
{
	if (size == 0)
		size = 1;
	if (a == NULL)
		return malloc(size);
	return a->alloc(a->user, size);
}

void *spfkit__zalloc(const struct spfkit_allocator *a, size_t size)
{
	void *p = spfkit__alloc(a, size);

	if (p != NULL)
		memset(p, 0, size);
	return p;
}

void *spfkit__calloc(const struct spfkit_allocator *a, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return spfkit__zalloc(a, n * size);
}

void *spfkit__realloc(const struct spfkit_allocator *a, void *ptr, size_t size)
{
	if (size == 0)
		size = 1;
	if (a == NULL)
		return realloc(ptr, size);
	return a->realloc(a->user, ptr, size);
}

void spfkit__free(const struct spfkit_allocator *a, void *ptr)
{
	if (ptr == NULL)
		return;
	if (a == NULL)
		free(ptr);
	else
		a->free(a->user, ptr);
}

char *spfkit__strndup(const struct spfkit_allocator *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	return spfkit__copy_nul(spfkit__alloc(a, len + 1), s, len);
}
