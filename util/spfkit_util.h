/*
 * Small helpers shared by libspfkit and its front ends (the CLI, the
 * daemons): allocation through the public allocator hook, a capped
 * growable buffer, a writer into a fixed buffer, a bump arena,
 * locale-free ASCII. A static library
 * of its own (util/), like curl's curlx: the library links it whole and
 * hides it, a front end links its own copy; neither reaches the other's
 * internals through it. Externs are spfkit__*; not an API.
 */
#ifndef SPFKIT_SPFKIT_UTIL_H
#define SPFKIT_SPFKIT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
/* Into dst (len + 1 bytes, or NULL): len bytes of s and a NUL. Returns dst. */
static inline char *spfkit__copy_nul(char *dst, const char *s, size_t len)
{
	if (dst == NULL)
		return NULL;
	if (len > 0)
		memcpy(dst, s, len);
	dst[len] = '\0';
	return dst;
}

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
/* vsnprintf() for the library's messages (format.c), which take only
 * %s, %.*s, %u, %d, %zu and %%: at any other conversion the text ends.
 * Always NUL-terminated when size > 0, cut to fit; returns the length
 * written. */
size_t spfkit__vformat(char *out, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Keep the storage, forget the content and the error. */
void spfkit__buf_reset(struct spfkit__buf *b);
void spfkit__buf_free(struct spfkit__buf *b);
/* Content as a string ("" when empty, never NULL). */
const char *spfkit__buf_str(const struct spfkit__buf *b);

/* ---- text writer: into a caller's fixed buffer, snprintf-style ------ */

/*
 * Counts every byte put and stores what fits, always followed by a NUL
 * (when size > 0): the text is valid after each put, and len >= size
 * after the last one says it was cut, as snprintf()'s return does.
 * Inline: the library's messages and header fields are written a few
 * bytes at a time.
 */
struct spfkit__text {
	char *buf;
	size_t size;
	size_t len; /* bytes put, stored or not (saturates at SIZE_MAX) */
};

static inline void spfkit__text_init(struct spfkit__text *t, char *buf, size_t size)
{
	t->buf = buf;
	t->size = size;
	t->len = 0;
	if (size > 0)
		buf[0] = '\0';
}

/* Bytes stored, at most size - 1. */
static inline size_t spfkit__text_stored(const struct spfkit__text *t)
{
	if (t->size == 0)
		return 0;
	return t->len < t->size - 1 ? t->len : t->size - 1;
}

static inline void spfkit__text_put(struct spfkit__text *t, const void *p, size_t n)
{
	size_t at, room;

	/* the usual case, on every header and reply: all of it fits */
	if (t->len < t->size && n < t->size - t->len) {
		memcpy(t->buf + t->len, p, n);
		t->len += n;
		t->buf[t->len] = '\0';
		return;
	}
	at = spfkit__text_stored(t);
	room = t->size > 0 ? t->size - 1 - at : 0;
	if (room > 0 && n > 0) {
		memcpy(t->buf + at, p, n < room ? n : room);
		t->buf[at + (n < room ? n : room)] = '\0';
	}
	t->len = n > SIZE_MAX - t->len ? SIZE_MAX : t->len + n;
}

static inline void spfkit__text_putc(struct spfkit__text *t, char c)
{
	spfkit__text_put(t, &c, 1);
}

/* For our own constant or already-clean text. */
static inline void spfkit__text_puts(struct spfkit__text *t, const char *s)
{
	spfkit__text_put(t, s, strlen(s));
}

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
	/* the head chunk's free bytes, [cur, end), cut to what the cap
	 * leaves: what spfkit__arena_alloc() takes without a call */
	unsigned char *cur, *end;
	unsigned char *base; /* cur when the head chunk was last set */
	const struct spfkit_allocator *alloc;
	struct spfkit__arena_chunk *head;
	size_t used;  /* bytes handed out before base, for caps */
	size_t max;   /* 0: no cap */
	size_t chunk; /* default chunk size */
};

void spfkit__arena_init(struct spfkit__arena *ar, const struct spfkit_allocator *a, size_t chunk,
			size_t max);
/* Same, with a first chunk in the caller's memory (SPFKIT__ALIGN-aligned, at
 * least 64 bytes), used before anything is allocated and never freed. */
void spfkit__arena_init_with(struct spfkit__arena *ar, const struct spfkit_allocator *a,
			     size_t chunk, size_t max, void *first, size_t first_size);
/* Same as spfkit__arena_init() without a cap, with a first chunk of at
 * least first_size bytes allocated now, when the caller knows what it
 * will take: 0, or -1 when it could not be (the arena is then empty). */
int spfkit__arena_init_first(struct spfkit__arena *ar, const struct spfkit_allocator *a,
			     size_t chunk, size_t first_size);
void *spfkit__arena_alloc_slow(struct spfkit__arena *ar, size_t size);
/* SPFKIT__ALIGN-aligned; NULL on failure or past the cap. Inline: an
 * evaluation takes some 40 small blocks, most from the head chunk. A
 * size that wraps when rounded up rounds to 0 and takes the slow path,
 * which refuses it; so does 0 (it gets a block of its own, never NULL). */
static inline void *spfkit__arena_alloc(struct spfkit__arena *ar, size_t size)
{
	size_t need = SPFKIT__ALIGN_UP(size);
	void *p;

	if (need - 1 >= (size_t)(ar->end - ar->cur))
		return spfkit__arena_alloc_slow(ar, size);
	p = ar->cur;
	ar->cur += need;
	return p;
}
char *spfkit__arena_strndup(struct spfkit__arena *ar, const char *s, size_t len);
/* Free all chunks but the first; keep the arena usable. */
void spfkit__arena_reset(struct spfkit__arena *ar);
void spfkit__arena_free(struct spfkit__arena *ar);
/*
 * An allocator (hook.alloc) that takes its blocks from the arena ar, at
 * most `budget` bytes of them: free does nothing (the arena frees them
 * all at once), realloc always fails. For what lives no longer than the
 * arena and is freed through an allocator.
 */
struct spfkit__arena_hook {
	struct spfkit_allocator alloc;
	struct spfkit__arena *ar;
	size_t left;
};
void spfkit__arena_hook_init(struct spfkit__arena_hook *hook, struct spfkit__arena *ar,
			     size_t budget);

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

/* 1 when none of p[0..len) is 0x80 or above: ASCII only. */
int spfkit__ascii_only(const char *p, size_t len);

/* Equal ignoring ASCII case, lengths given. */
int spfkit__memcaseeq(const void *a, size_t alen, const void *b, size_t blen);

/*
 * The length of the UTF-8 character (RFC 3629 §4) that starts s, 2 to 4,
 * or 0 when s[0..avail) does not start one: an ASCII byte, a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, cut
 * short, or a C1 control (U+0080..U+009F, no text). A NUL-terminated s
 * may pass avail 4: its NUL ends any sequence.
 */
size_t spfkit__utf8_len(const unsigned char *s, size_t avail);
#endif
