/*
 * Caller-filled structs that can grow (the ABI rule in spfkit/common.h):
 * each begins with `size_t size`, the sizeof its caller was compiled
 * with. The library copies what the caller has into its own, larger or
 * smaller, layout: fields the caller's header did not have read as zero
 * (their default), and fields of a newer header this library does not
 * know must be zero (unset), or the caller asks for something this
 * library cannot do.
 */
#include <string.h>

#include "core.h"

int spfkit__sized_copy(void *dst, size_t dst_size, const void *src, size_t min_size)
{
	const unsigned char *s = src;
	size_t size;
	size_t i;

	memcpy(&size, src, sizeof(size));
	if (size < min_size)
		return SPFKIT_EINVAL;
	for (i = dst_size; i < size; i++)
		if (s[i] != 0)
			return SPFKIT_EINVAL;
	if (size < dst_size) /* the caller's older layout: the rest reads as zero */
		memset((unsigned char *)dst + size, 0, dst_size - size);
	memcpy(dst, src, size < dst_size ? size : dst_size);
	return 0;
}
