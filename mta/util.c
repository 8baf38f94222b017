/*
 * The front ends' own helpers (util.h): allocation, buffer, arena, ASCII,
 * reverse names. The same behaviour as lib/core's, which a front end may
 * not reach (issue 8: only include/ and the public libraries).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- allocation ------------------------------------------------------ */

void *spfkit__mta_alloc(const struct spfkit_allocator *a, size_t size)
{
	if (size == 0)
		size = 1;
	if (a == NULL)
		return malloc(size);
	return a->alloc(a->user, size);
}

void *spfkit__mta_zalloc(const struct spfkit_allocator *a, size_t size)
{
	void *p = spfkit__mta_alloc(a, size);

	if (p != NULL)
		memset(p, 0, size);
	return p;
}

void *spfkit__mta_calloc(const struct spfkit_allocator *a, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return spfkit__mta_zalloc(a, n * size);
}

void *spfkit__mta_realloc(const struct spfkit_allocator *a, void *ptr, size_t size)
{
	if (size == 0)
		size = 1;
	if (a == NULL)
		return realloc(ptr, size);
	return a->realloc(a->user, ptr, size);
}

void spfkit__mta_free(const struct spfkit_allocator *a, void *ptr)
{
	if (ptr == NULL)
		return;
	if (a == NULL)
		free(ptr);
	else
		a->free(a->user, ptr);
}

char *spfkit__mta_strndup(const struct spfkit_allocator *a, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return NULL;
	p = spfkit__mta_alloc(a, len + 1);
	if (p == NULL)
		return NULL;
	if (len > 0)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* ---- buffer ---------------------------------------------------------- */

void spfkit__mta_buf_init(struct spfkit__mta_buf *b, const struct spfkit_allocator *a, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->alloc = a;
	b->max = max;
}

/* Make room for n more bytes plus the NUL. */
static int buf_grow(struct spfkit__mta_buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->err)
		return b->err;
	if (n > b->max || b->len > b->max - n) {
		b->err = SPFKIT_E2BIG;
		return b->err;
	}
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = spfkit__mta_realloc(b->alloc, b->data, cap);
	if (p == NULL) {
		b->err = SPFKIT_ENOMEM;
		return b->err;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int spfkit__mta_buf_append(struct spfkit__mta_buf *b, const void *p, size_t n)
{
	int rc = buf_grow(b, n);

	if (rc != 0)
		return rc;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int spfkit__mta_buf_putc(struct spfkit__mta_buf *b, char c)
{
	return spfkit__mta_buf_append(b, &c, 1);
}

int spfkit__mta_buf_puts(struct spfkit__mta_buf *b, const char *s)
{
	return spfkit__mta_buf_append(b, s, strlen(s));
}

int spfkit__mta_buf_printf(struct spfkit__mta_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return SPFKIT_EINVAL;
	rc = buf_grow(b, (size_t)n);
	if (rc != 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void spfkit__mta_buf_reset(struct spfkit__mta_buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void spfkit__mta_buf_free(struct spfkit__mta_buf *b)
{
	spfkit__mta_free(b->alloc, b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

const char *spfkit__mta_buf_str(const struct spfkit__mta_buf *b)
{
	return b->data != NULL ? b->data : "";
}

/* ---- arena ----------------------------------------------------------- */

#define ARENA_ALIGN _Alignof(max_align_t)
#define ARENA_ALIGN_UP(n) (((n) + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1))

struct spfkit__mta_arena_chunk {
	struct spfkit__mta_arena_chunk *next;
	size_t size;
	size_t used;
	_Alignas(max_align_t) unsigned char data[];
};

void spfkit__mta_arena_init(struct spfkit__mta_arena *ar, const struct spfkit_allocator *a,
			    size_t chunk, size_t max)
{
	ar->alloc = a;
	ar->head = NULL;
	ar->used = 0;
	ar->max = max;
	ar->chunk = chunk ? chunk : 4096;
}

void *spfkit__mta_arena_alloc(struct spfkit__mta_arena *ar, size_t size)
{
	struct spfkit__mta_arena_chunk *ch = ar->head;
	size_t need;
	void *p;

	if (size > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	need = ARENA_ALIGN_UP(size);
	if (ar->max != 0 && (need > ar->max || ar->used > ar->max - need))
		return NULL;
	if (ch == NULL || ch->size - ch->used < need) {
		size_t csize = need < ar->chunk ? ar->chunk : need;

		if (csize > SIZE_MAX - sizeof(*ch))
			return NULL;
		ch = spfkit__mta_alloc(ar->alloc, sizeof(*ch) + csize);
		if (ch == NULL)
			return NULL;
		ch->size = csize;
		ch->used = 0;
		ch->next = ar->head;
		ar->head = ch;
	}
	p = ch->data + ch->used;
	ch->used += need;
	ar->used += need;
	return p;
}

char *spfkit__mta_arena_strndup(struct spfkit__mta_arena *ar, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return NULL;
	p = spfkit__mta_arena_alloc(ar, len + 1);
	if (p == NULL)
		return NULL;
	if (len > 0)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void spfkit__mta_arena_free(struct spfkit__mta_arena *ar)
{
	struct spfkit__mta_arena_chunk *ch = ar->head, *next;

	while (ch != NULL) {
		next = ch->next;
		spfkit__mta_free(ar->alloc, ch);
		ch = next;
	}
	ar->head = NULL;
	ar->used = 0;
}

/* ---- ASCII ----------------------------------------------------------- */

int spfkit__mta_memcaseeq(const void *a, size_t alen, const void *b, size_t blen)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	if (alen != blen)
		return 0;
	if (alen == 0)
		return 1; /* an empty name may come with no pointer */
	if (memcmp(x, y, alen) == 0)
		return 1;
	for (i = 0; i < alen; i++)
		if (spfkit__mta_lower(x[i]) != spfkit__mta_lower(y[i]))
			return 0;
	return 1;
}

/* ---- reverse names --------------------------------------------------- */

size_t spfkit__mta_ip_reverse_name(const struct spfkit_ip *ip, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	int i;

	if (ip->family == 4) {
		int w = snprintf(buf, SPFKIT__MTA_REVERSE_MAX, "%u.%u.%u.%u.in-addr.arpa",
				 ip->addr[3], ip->addr[2], ip->addr[1], ip->addr[0]);
		return w > 0 ? (size_t)w : 0;
	}
	for (i = 15; i >= 0; i--) {
		buf[n++] = hex[ip->addr[i] & 0xf];
		buf[n++] = '.';
		buf[n++] = hex[ip->addr[i] >> 4];
		buf[n++] = '.';
	}
	memcpy(buf + n, "ip6.arpa", 9);
	return n + 8;
}
