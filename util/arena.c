/* Bump arena: one evaluation's memory, released at once (after unbound's regional). */
#include <string.h>

#include "spfkit_util.h"

struct spfkit__arena_chunk {
	struct spfkit__arena_chunk *next;
	size_t size;
	size_t used;
	int borrowed; /* the caller's memory: never freed */
	_Alignas(max_align_t) unsigned char data[];
};

void spfkit__arena_init(struct spfkit__arena *ar, const struct spfkit_allocator *a, size_t chunk,
			size_t max)
{
	ar->alloc = a;
	ar->head = NULL;
	ar->used = 0;
	ar->max = max;
	ar->chunk = chunk ? chunk : 4096;
}

void spfkit__arena_init_with(struct spfkit__arena *ar, const struct spfkit_allocator *a,
			     size_t chunk, size_t max, void *first, size_t first_size)
{
	struct spfkit__arena_chunk *ch = first;

	spfkit__arena_init(ar, a, chunk, max);
	if (first == NULL || first_size < sizeof(*ch) + 64)
		return;
	ch->next = NULL;
	ch->size = first_size - sizeof(*ch);
	ch->used = 0;
	ch->borrowed = 1;
	ar->head = ch;
}

static struct spfkit__arena_chunk *arena_new_chunk(struct spfkit__arena *ar, size_t size)
{
	struct spfkit__arena_chunk *ch;

	if (size < ar->chunk)
		size = ar->chunk;
	if (size > SIZE_MAX - sizeof(*ch))
		return NULL;
	ch = spfkit__alloc(ar->alloc, sizeof(*ch) + size);
	if (ch == NULL)
		return NULL;
	ch->size = size;
	ch->used = 0;
	ch->borrowed = 0;
	ch->next = ar->head;
	ar->head = ch;
	return ch;
}

void *spfkit__arena_alloc(struct spfkit__arena *ar, size_t size)
{
	struct spfkit__arena_chunk *ch = ar->head;
	size_t need;
	void *p;

	if (size > SIZE_MAX - SPFKIT__ALIGN)
		return NULL;
	need = SPFKIT__ALIGN_UP(size);
	if (ar->max != 0 && (need > ar->max || ar->used > ar->max - need))
		return NULL;
	if (ch == NULL || ch->size - ch->used < need) {
		ch = arena_new_chunk(ar, need);
		if (ch == NULL)
			return NULL;
	}
	p = ch->data + ch->used;
	ch->used += need;
	ar->used += need;
	return p;
}

char *spfkit__arena_strndup(struct spfkit__arena *ar, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return NULL;
	p = spfkit__arena_alloc(ar, len + 1);
	if (p == NULL)
		return NULL;
	if (len > 0)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void spfkit__arena_reset(struct spfkit__arena *ar)
{
	struct spfkit__arena_chunk *ch = ar->head, *next;

	if (ch == NULL)
		return;
	/* The newest chunk is the head; keep the last (oldest) one. */
	while (ch->next != NULL) {
		next = ch->next;
		if (!ch->borrowed)
			spfkit__free(ar->alloc, ch);
		ch = next;
	}
	ch->used = 0;
	ar->head = ch;
	ar->used = 0;
}

void spfkit__arena_free(struct spfkit__arena *ar)
{
	struct spfkit__arena_chunk *ch = ar->head, *next;

	while (ch != NULL) {
		next = ch->next;
		if (!ch->borrowed)
			spfkit__free(ar->alloc, ch);
		ch = next;
	}
	ar->head = NULL;
	ar->used = 0;
}

static void *arena_hook_alloc(void *user, size_t size)
{
	struct spfkit__arena_hook *hook = user;
	void *p;

	if (size > hook->left || (p = spfkit__arena_alloc(hook->ar, size)) == NULL)
		return NULL;
	hook->left -= size;
	return p;
}

static void *arena_hook_realloc(void *user, void *ptr, size_t size)
{
	(void)user;
	(void)ptr;
	(void)size;
	return NULL;
}

static void arena_hook_free(void *user, void *ptr)
{
	(void)user;
	(void)ptr;
}

void spfkit__arena_hook_init(struct spfkit__arena_hook *hook, struct spfkit__arena *ar,
			     size_t budget)
{
	hook->alloc = (struct spfkit_allocator){arena_hook_alloc, arena_hook_realloc,
						arena_hook_free, hook};
	hook->ar = ar;
	hook->left = budget;
}
