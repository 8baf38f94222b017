/* Capped growable buffer (after curl's dynbuf and Postfix's VSTRING). */
#include <stdio.h>
#include <string.h>

#include "spfkit_util.h"

void spfkit__buf_init(struct spfkit__buf *b, const struct spfkit_allocator *a, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->alloc = a;
	b->max = max;
}

/* Make room for n more bytes plus the NUL. */
static int buf_grow(struct spfkit__buf *b, size_t n)
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
	p = spfkit__realloc(b->alloc, b->data, cap);
	if (p == NULL) {
		b->err = SPFKIT_ENOMEM;
		return b->err;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int spfkit__buf_append(struct spfkit__buf *b, const void *p, size_t n)
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

int spfkit__buf_putc(struct spfkit__buf *b, char c)
{
	return spfkit__buf_append(b, &c, 1);
}

int spfkit__buf_puts(struct spfkit__buf *b, const char *s)
{
	return spfkit__buf_append(b, s, strlen(s));
}

int spfkit__buf_printf(struct spfkit__buf *b, const char *fmt, ...)
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

void spfkit__buf_reset(struct spfkit__buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void spfkit__buf_free(struct spfkit__buf *b)
{
	spfkit__free(b->alloc, b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

const char *spfkit__buf_str(const struct spfkit__buf *b)
{
	return b->data != NULL ? b->data : "";
}
