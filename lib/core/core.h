/*
 * Internal helpers shared by every module: allocation through the user
 * hook, a capped growable buffer, a bounded parse cursor with a sticky
 * error, a bump arena, and ASCII helpers that never consult the locale.
 * Internal externs are spfkit__*; nothing here is public API.
 */
#ifndef SPFKIT_CORE_H
#define SPFKIT_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>

/* ---- allocation (alloc.c): every allocation goes through these ------ */

void *spfkit__alloc(const struct spfkit_allocator *a, size_t size);
void *spfkit__zalloc(const struct spfkit_allocator *a, size_t size);
/* n * size with an overflow check; zeroed. NULL on overflow or failure. */
void *spfkit__calloc(const struct spfkit_allocator *a, size_t n, size_t size);
void *spfkit__realloc(const struct spfkit_allocator *a, void *ptr, size_t size);
void spfkit__free(const struct spfkit_allocator *a, void *ptr);
/* A NUL-terminated copy of len bytes; NULL on failure. */
char *spfkit__strndup(const struct spfkit_allocator *a, const char *s, size_t len);

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

/* ---- buffer (buf.c): binary-safe, always NUL-terminated, hard cap ---- */

struct spfkit__buf {
	char *data; /* NULL until the first append; then data[len] == 0 */
	size_t len;
	size_t cap;
	size_t max; /* appends that would pass max fail with SPFKIT_E2BIG */
	const struct spfkit_allocator *alloc;
	int err; /* sticky: the first failure; later appends do nothing */
};

void spfkit__buf_init(struct spfkit__buf *b, const struct spfkit_allocator *a, size_t max);
int spfkit__buf_append(struct spfkit__buf *b, const void *p, size_t n);
int spfkit__buf_putc(struct spfkit__buf *b, char c);
int spfkit__buf_puts(struct spfkit__buf *b, const char *s);
int spfkit__buf_printf(struct spfkit__buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Keep the storage, forget the content and the error. */
void spfkit__buf_reset(struct spfkit__buf *b);
void spfkit__buf_free(struct spfkit__buf *b);
/* Content as a string ("" when empty, never NULL). */
const char *spfkit__buf_str(const struct spfkit__buf *b);

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

/* ---- arena (arena.c): bump allocation, freed all at once ------------ */

/*
 * The one alignment the library needs: that of max_align_t, which is
 * what the allocator hook promises (include/spfkit/common.h). Arena
 * blocks and the flat copies that pack objects after a header are
 * rounded to it; nothing asks for more (no over-aligned type is used).
 */
#define SPFKIT__ALIGN _Alignof(max_align_t)
#define SPFKIT__ALIGN_UP(n) (((n) + (SPFKIT__ALIGN - 1)) & ~(size_t)(SPFKIT__ALIGN - 1))
_Static_assert((SPFKIT__ALIGN & (SPFKIT__ALIGN - 1)) == 0, "alignment is a power of two");

struct spfkit__arena_chunk;
struct spfkit__arena {
	const struct spfkit_allocator *alloc;
	struct spfkit__arena_chunk *head;
	size_t used;  /* bytes handed out so far, for caps */
	size_t max;   /* 0: no cap */
	size_t chunk; /* default chunk size */
};

void spfkit__arena_init(struct spfkit__arena *ar, const struct spfkit_allocator *a, size_t chunk,
			size_t max);
/* Same, with a first chunk in the caller's memory (SPFKIT__ALIGN-aligned, at
 * least 64 bytes), used before anything is allocated and never freed. */
void spfkit__arena_init_with(struct spfkit__arena *ar, const struct spfkit_allocator *a,
			     size_t chunk, size_t max, void *first, size_t first_size);
/* SPFKIT__ALIGN-aligned; NULL on failure or past the cap. */
void *spfkit__arena_alloc(struct spfkit__arena *ar, size_t size);
char *spfkit__arena_strndup(struct spfkit__arena *ar, const char *s, size_t len);
/* Free all chunks but the first; keep the arena usable. */
void spfkit__arena_reset(struct spfkit__arena *ar);
void spfkit__arena_free(struct spfkit__arena *ar);

/* ---- ASCII (ascii.c): locale-free, take unsigned bytes ------------- */

static inline int spfkit__is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int spfkit__is_digit(int c) { return c >= '0' && c <= '9'; }
static inline int spfkit__is_alnum(int c) { return spfkit__is_alpha(c) || spfkit__is_digit(c); }
static inline int spfkit__is_hex(int c)
{
	return spfkit__is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static inline int spfkit__lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }
/* Visible ASCII, %x21-7E. */
static inline int spfkit__is_vchar(int c) { return c >= 0x21 && c <= 0x7e; }

/* Equal ignoring ASCII case, lengths given. */
int spfkit__memcaseeq(const void *a, size_t alen, const void *b, size_t blen);
/* Case-insensitive hash of a DNS name, final dot ignored (FNV-1a). */
uint64_t spfkit__name_hash(const char *name, size_t len);
/* Hash of bytes, eight at a time: for long keys such as record texts. */
uint64_t spfkit__hash_bytes(const void *p, size_t len);
/* Cheaper hash of a long key from samples of it; equal keys hash equal. */
uint64_t spfkit__hash_sample(const void *p, size_t len);

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
uint64_t spfkit__siphash13(const struct spfkit__hash_key *k, const void *p, size_t len);
/* SipHash-2-4, the paper's variant: only to check the code against its test vector. */
uint64_t spfkit__siphash24(const struct spfkit__hash_key *k, const void *p, size_t len);
/* spfkit__hash_keyed() of a DNS name with ASCII case folded and one final dot ignored. */
uint64_t spfkit__name_hash_keyed(const struct spfkit__hash_key *k, const char *name, size_t len);

#endif
