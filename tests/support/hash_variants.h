/*
 * Keyed hashes the library does not use, built from its own primitives
 * (lib/core/keyed_hash.h) so that the tests check that code.
 */
#ifndef SPFKIT_TEST_HASH_VARIANTS_H
#define SPFKIT_TEST_HASH_VARIANTS_H

#include "core.h"

/* SipHash-2-4, the paper's variant: to check the code against its test vector. */
uint64_t spfkit__hash_siphash24(const struct spfkit__hash_key *k, const void *p, size_t len);
/* spfkit__hash_keyed() of a DNS name with ASCII case folded and one final dot ignored. */
uint64_t spfkit__namehash_keyed(const struct spfkit__hash_key *k, const char *name, size_t len);

#endif
