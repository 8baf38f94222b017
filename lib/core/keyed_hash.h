/*
 * The keyed hashes' primitives (hash.c explains them): SipHash with any
 * number of rounds and the multiply-mix hash of long keys, each with an
 * optional ASCII case fold. Inline, so that hash.c builds the library's
 * hashes from them and the tests' support library (tests/support/) the
 * variants only the tests use (SipHash-2-4 for the paper's vector), with
 * one copy of the code.
 */
#ifndef SPFKIT_KEYED_HASH_H
#define SPFKIT_KEYED_HASH_H

#include <string.h>

#include "core.h"

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

static inline void sip_init(struct sip *s, const struct spfkit__hash_key *k)
{
	/* the paper's constants: "somepseudorandomlygeneratedbytes" */
	s->v0 = k->k0 ^ 0x736f6d6570736575ull;
	s->v1 = k->k1 ^ 0x646f72616e646f6dull;
	s->v2 = k->k0 ^ 0x6c7967656e657261ull;
	s->v3 = k->k1 ^ 0x7465646279746573ull;
}

static inline void sip_word(struct sip *s, uint64_t m, int crounds)
{
	int i;

	s->v3 ^= m;
	for (i = 0; i < crounds; i++)
		sip_round(s);
	s->v0 ^= m;
}

static inline uint64_t sip_final(struct sip *s, int drounds)
{
	int i;

	s->v2 ^= 0xff;
	for (i = 0; i < drounds; i++)
		sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* Little-endian load, so the value does not depend on the host. */
static inline uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t w = 0;
	size_t i;

	for (i = n; i > 0; i--)
		w = (w << 8) | p[i - 1];
	return w;
}

static inline uint64_t load8(const unsigned char *p)
{
	uint64_t w;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&w, p, 8);
#else
	w = load_le(p, 8);
#endif
	return w;
}

/*
 * ASCII A-Z to a-z in all eight bytes of a word at once: a byte gets 0x20
 * when it is below 0x80, at least 'A' and at most 'Z'. Unlike OR-ing 0x20
 * into every byte this folds nothing else together ('@' and '`' stay
 * apart), so no set of keys collides under every key.
 */
static inline uint64_t fold_word(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t low7 = w & ~high;
	uint64_t ge_a = low7 + (0x80 - 'A') * ones;    /* high bit: byte >= 'A' */
	uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * ones; /* high bit: byte > 'Z' */
	uint64_t upper = (ge_a & ~gt_z) & ~w & high;

	return w | (upper >> 2);
}

static inline uint64_t sip_bytes(const struct spfkit__hash_key *k, const void *p, size_t len,
				 int crounds, int drounds, int fold)
{
	const unsigned char *b = p;
	struct sip s;
	uint64_t m, last = (uint64_t)len << 56;
	size_t left = len;

	sip_init(&s, k);
	while (left >= 8) {
		m = load8(b);
		sip_word(&s, fold ? fold_word(m) : m, crounds);
		b += 8;
		left -= 8;
	}
	m = load_le(b, left);
	last |= fold ? fold_word(m) : m;
	sip_word(&s, last, crounds);
	return sip_final(&s, drounds);
}

/*
 * The multiply-mix hash for keys longer than 16 bytes. Two odd constants
 * with even bit counts, the fractional parts of sqrt(2) and sqrt(3), keep
 * the secret operands away from zero when a key word is zero.
 */
#define MIX_C0 0x6a09e667f3bcc909ull
#define MIX_C1 0xbb67ae8584caa73bull

/* The 128-bit product folded to 64 bits: every input bit reaches the
 * middle of the product, the halves XORed bring it to both ends. */
static inline uint64_t mix(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* One step: 16 bytes at p into the chain value h. */
static inline uint64_t mix_step(const unsigned char *p, uint64_t secret, uint64_t h, int fold)
{
	uint64_t a = load8(p), b = load8(p + 8);

	if (fold) {
		a = fold_word(a);
		b = fold_word(b);
	}
	return mix(a ^ secret, b ^ h);
}

/*
 * The whole key, 16 bytes a step; the last step reads the final 16 bytes
 * (overlapping the step before when the length is not a multiple of 16),
 * so every byte is read and no partial word is assembled. The length
 * enters the start value: keys of different lengths do not line up.
 */
static inline uint64_t mix_bytes(const struct spfkit__hash_key *k, const unsigned char *p,
				 size_t len, int fold)
{
	const unsigned char *last = p + len - 16; /* the final step's bytes */
	uint64_t secret = k->k1 ^ MIX_C0;
	uint64_t h = mix(k->k0 ^ MIX_C1, secret ^ (uint64_t)len);

	for (; p < last; p += 16)
		h = mix_step(p, secret, h, fold);
	h = mix_step(last, secret, h, fold);
	/* a last multiply so the final words' bits reach every bit */
	return mix(h ^ k->k0, MIX_C1 ^ (uint64_t)len);
}

#endif
