/* Hashes of DNS names and byte strings, unkeyed (see core.h). */
#include <string.h>

#include "core.h"

/* The last 1 to 7 bytes of a name shorter than 8, in one word: two
 * overlapping 4-byte loads, or the first, middle and last byte. */
static uint64_t short_tail(const char *name, size_t len)
{
	uint32_t lo, hi;

	if (len >= 4) {
		memcpy(&lo, name, 4);
		memcpy(&hi, name + len - 4, 4);
		return lo | (uint64_t)hi << 32;
	}
	if (len == 0)
		return 0;
	return (uint64_t)(unsigned char)name[0] | (uint64_t)(unsigned char)name[len / 2] << 8 |
	       (uint64_t)(unsigned char)name[len - 1] << 16;
}

/*
 * Eight bytes at a time. OR-ing 0x20 into every byte folds ASCII case
 * (it also folds a few punctuation pairs together, such as '@' and '`',
 * which only costs a rare extra comparison: equality is always checked
 * with spfkit__memcaseeq). A name of 8 bytes or more ends with its last
 * 8 bytes, overlapping the word before: no load of a variable length.
 */
uint64_t spfkit__namehash(const char *name, size_t len)
{
	const uint64_t fold = 0x2020202020202020ull;
	const char *end;
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	if (len > 0 && name[len - 1] == '.')
		len--;
	h ^= len;
	if (len < 8) {
		w = short_tail(name, len);
	} else {
		end = name + len;
		for (; end - name > 8; name += 8) {
			memcpy(&w, name, 8);
			h = (h ^ (w | fold)) * 0xff51afd7ed558ccdull;
			h ^= h >> 32;
		}
		memcpy(&w, end - 8, 8);
	}
	/* len went in first: names of different lengths that end alike differ */
	h = (h ^ (w | fold)) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

uint64_t spfkit__namehash_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	while (len >= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		b += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, b, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}
