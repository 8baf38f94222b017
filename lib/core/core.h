/*
 * Internal helpers shared by every module of the library: util/spfkit_util.h
 * (allocation, buffers, arenas, ASCII, also used by the front ends),
 * a bounded parse cursor with a sticky error, keyed hashes, and the
 * sized-struct copy of the ABI rule. Internal externs are spfkit__*;
 * nothing here is public API.
 */
#ifndef SPFKIT_CORE_H
#define SPFKIT_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>

/* allocation, buffers, arenas, ASCII: shared with the front ends */
#include "spfkit_util.h"

/*
 * SSE2 (every x86-64): the scans that use it (record_parse.c,
 * term_parse.h, term_domain.c, domain.c, ip4_scan.c) each have a plain C
 * path for the machines without it.
 */
#if defined(__SSE2__) && defined(__GNUC__)
#define SPFKIT__HAVE_SSE2 1
#include <emmintrin.h>
#endif

/* ---- sized structs (sized.c): caller-filled, may grow ------------- */

/*
 * Copy a caller's struct whose first member is `size_t size` into dst
 * (dst_size bytes, the library's layout): what the caller lacks is
 * zeroed. SPFKIT_EINVAL when size is below min_size (the layout of 1.0)
 * or when a byte past dst_size in the caller's struct is not zero.
 */
int spfkit__sized_copy(void *dst, size_t dst_size, const void *src, size_t min_size);
/* The 1.0 size of a struct: the end of its last 1.0 field. */
#define SPFKIT__SIZE_UPTO(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* ---- cursor (cur.c): bounded parse with a sticky error -------------- */

struct spfkit__cur {
	const unsigned char *base; /* start of the input, for offsets */
	const unsigned char *p;
	const unsigned char *end;
	int err;             /* 0, or the first error (SPFKIT_ESYNTAX...) */
	size_t err_off;      /* offset of the first error */
	const char *err_why; /* static text naming the rule broken */
};

void spfkit__cur_init(struct spfkit__cur *c, const void *p, size_t len);
/* Record the first error at the current position; later calls keep it. */
void spfkit__cur_fail(struct spfkit__cur *c, int err, const char *why);
size_t spfkit__cur_off(const struct spfkit__cur *c);
size_t spfkit__cur_left(const struct spfkit__cur *c);
int spfkit__cur_eof(const struct spfkit__cur *c);
/* Next byte or -1 at the end (or after an error). Inline: parsers call it per byte. */
static inline int spfkit__cur_peek(const struct spfkit__cur *c)
{
	if (c->err || c->p >= c->end)
		return -1;
	return *c->p;
}

/* Consume ch if it is next (1), else 0; no error. */
static inline int spfkit__cur_accept(struct spfkit__cur *c, unsigned char ch)
{
	if (spfkit__cur_peek(c) != ch)
		return 0;
	c->p++;
	return 1;
}
/* Consume ch or fail with SPFKIT_ESYNTAX / why. */
void spfkit__cur_want(struct spfkit__cur *c, unsigned char ch, const char *why);

/* Case-insensitive hash of a DNS name, final dot ignored (FNV-1a). */
uint64_t spfkit__namehash(const char *name, size_t len);
/* Hash of bytes, eight at a time: for long keys such as record texts. */
uint64_t spfkit__namehash_bytes(const void *p, size_t len);

/*
 * The hashes above are unkeyed: fine for trusted keys (a zone file) or a
 * linear scan. A table whose keys come from the network (DNS names,
 * record texts) uses the keyed ones below (hash.c), with a key drawn at
 * the table's creation and read-only after, so threads may share it.
 */
struct spfkit__hash_key {
	uint64_t k0, k1;
};

/* 16 bytes from getrandom(), else /dev/urandom, else the clocks; never fails. */
void spfkit__hash_key_random(struct spfkit__hash_key *k);
/* Keys up to this many bytes take SipHash-1-3; longer ones a cheaper
 * keyed multiply-mix hash over the whole key (hash.c explains). */
#define SPFKIT__HASH_SHORT 32u
/* The keyed hash of the whole key: SipHash-1-3 up to SPFKIT__HASH_SHORT
 * bytes, the multiply-mix hash past it. For long keys (record texts). */
uint64_t spfkit__hash_keyed(const struct spfkit__hash_key *k, const void *p, size_t len);
/* SipHash-1-3 of the whole key, any length. */
uint64_t spfkit__hash_siphash13(const struct spfkit__hash_key *k, const void *p, size_t len);
/* SipHash-2-4 and a case-folding name hash, of the same code
 * (keyed_hash.h), are the tests' only: tests/support/support.h. */

#endif
