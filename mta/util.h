/*
 * Small helpers shared by the front ends (spfkit, spfkit-policyd, the
 * milter): allocation through the public allocator hook, a capped
 * growable buffer, a bump arena, locale-free ASCII, reverse names.
 *
 * libspfkit has helpers like these in lib/core, but those are its
 * internals: a front end sees include/ and the public libraries only
 * (issue 8), so it keeps its own, here. Externs are spfkit__mta_*; not
 * an API.
 */
#ifndef SPFKIT_MTA_UTIL_H
#define SPFKIT_MTA_UTIL_H

#include <stddef.h>

#include <spfkit/common.h>
#include <spfkit/eval.h>

/* ---- allocation: a NULL allocator means libc ------------------------ */

void *spfkit__mta_alloc(const struct spfkit_allocator *a, size_t size);
void *spfkit__mta_zalloc(const struct spfkit_allocator *a, size_t size);
/* n * size with an overflow check; zeroed. NULL on overflow or failure. */
void *spfkit__mta_calloc(const struct spfkit_allocator *a, size_t n, size_t size);
void *spfkit__mta_realloc(const struct spfkit_allocator *a, void *ptr, size_t size);
void spfkit__mta_free(const struct spfkit_allocator *a, void *ptr);
/* A NUL-terminated copy of len bytes; NULL on failure. */
char *spfkit__mta_strndup(const struct spfkit_allocator *a, const char *s, size_t len);

/* ---- buffer: binary-safe, always NUL-terminated, hard cap ----------- */

struct spfkit__mta_buf {
	char *data; /* NULL until the first append; then data[len] == 0 */
	size_t len;
	size_t cap;
	size_t max; /* appends that would pass max fail with SPFKIT_E2BIG */
	const struct spfkit_allocator *alloc;
	int err; /* sticky: the first failure; later appends do nothing */
};

void spfkit__mta_buf_init(struct spfkit__mta_buf *b, const struct spfkit_allocator *a, size_t max);
int spfkit__mta_buf_append(struct spfkit__mta_buf *b, const void *p, size_t n);
int spfkit__mta_buf_putc(struct spfkit__mta_buf *b, char c);
int spfkit__mta_buf_puts(struct spfkit__mta_buf *b, const char *s);
int spfkit__mta_buf_printf(struct spfkit__mta_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Keep the storage, forget the content and the error. */
void spfkit__mta_buf_reset(struct spfkit__mta_buf *b);
void spfkit__mta_buf_free(struct spfkit__mta_buf *b);
/* Content as a string ("" when empty, never NULL). */
const char *spfkit__mta_buf_str(const struct spfkit__mta_buf *b);

/* ---- arena: bump allocation, freed all at once ---------------------- */

struct spfkit__mta_arena_chunk;
struct spfkit__mta_arena {
	const struct spfkit_allocator *alloc;
	struct spfkit__mta_arena_chunk *head;
	size_t used;  /* bytes handed out so far, for caps */
	size_t max;   /* 0: no cap */
	size_t chunk; /* default chunk size */
};

void spfkit__mta_arena_init(struct spfkit__mta_arena *ar, const struct spfkit_allocator *a,
			    size_t chunk, size_t max);
/* Aligned for any object; NULL on failure or past the cap. */
void *spfkit__mta_arena_alloc(struct spfkit__mta_arena *ar, size_t size);
char *spfkit__mta_arena_strndup(struct spfkit__mta_arena *ar, const char *s, size_t len);
void spfkit__mta_arena_free(struct spfkit__mta_arena *ar);

/* ---- ASCII: locale-free, take unsigned bytes ------------------------ */

static inline int spfkit__mta_is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static inline int spfkit__mta_is_digit(int c) { return c >= '0' && c <= '9'; }
static inline int spfkit__mta_is_alnum(int c)
{
	return spfkit__mta_is_alpha(c) || spfkit__mta_is_digit(c);
}
static inline int spfkit__mta_lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

/* Equal ignoring ASCII case, lengths given. */
int spfkit__mta_memcaseeq(const void *a, size_t alen, const void *b, size_t blen);

/* ---- reverse names (RFC 7208 §5.5, the PTR question) ---------------- */

/* "4.3.2.1.in-addr.arpa" or the 32-nibble ".ip6.arpa" name of ip; returns
 * its length. buf must hold SPFKIT__MTA_REVERSE_MAX bytes. */
#define SPFKIT__MTA_REVERSE_MAX 74
size_t spfkit__mta_ip_reverse_name(const struct spfkit_ip *ip, char *buf);

#endif
