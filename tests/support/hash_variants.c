/* Keyed hashes of the tests only (hash_variants.h). */
#include "hash_variants.h"
#include "keyed_hash.h"

uint64_t spfkit__hash_siphash24(const struct spfkit__hash_key *k, const void *p, size_t len)
{
	return sip_bytes(k, p, len, 2, 4, 0);
}

uint64_t spfkit__namehash_keyed(const struct spfkit__hash_key *k, const char *name, size_t len)
{
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len > SPFKIT__HASH_SHORT)
		return mix_bytes(k, (const unsigned char *)name, len, 1);
	return sip_bytes(k, name, len, 1, 3, 1);
}
