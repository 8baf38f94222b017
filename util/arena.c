/* Bump arena: one evaluation's memory, released at once (after unbound's regional). */
#include <string.h>

#include "spfkit_util.h"

struct spfkit__arena_chunk {
	struct spfkit__arena_chunk *next;
	size_t size;
	int borrowed; /* the caller's memory: never freed */
	_Alignas(max_align_t) unsigned char data[];
};

/* cur, end and base of an arena without a chunk: no room, and
 * pointers that may be subtracted from one another. Never written. */
static unsigned char no_room[1];

/* Bytes handed out so far, the head chunk's included. */
static size_t arena_used(const struct spfkit__arena *ar)
{
	return ar->used + (size_t)(ar->cur - ar->base);
}

/* Take from the empty chunk ch from now on; its free bytes are cut to
 * what the cap leaves. */
static void set_head(struct spfkit__arena *ar, struct spfkit__arena_chunk *ch)
{
	size_t left = ch->size;

	ar->used = arena_used(ar);
	if (ar->max != 0 && left > ar->max - ar->used)
		left = ar->max - ar->used;
	ar->head = ch;
	ar->cur = ar->base = ch->data;
	ar->end = ar->cur + left;
}

void spfkit__arena_init(struct spfkit__arena *ar, const struct spfkit_allocator *a, size_t chunk,
			size_t max)
{
	ar->alloc = a;
	ar->head = NULL;
	ar->cur = ar->end = ar->base = no_room;
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
	ch->borrowed = 1;
	set_head(ar, ch);
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
	ch->borrowed = 0;
	ch->next = ar->head;
	set_head(ar, ch);
	return ch;
}

int spfkit__arena_init_first(struct spfkit__arena *ar, const struct spfkit_allocator *a,
			     size_t chunk, size_t first_size)
{
	spfkit__arena_init(ar, a, chunk, 0);
	return arena_new_chunk(ar, first_size) != NULL ? 0 : -1;
}

/* What the inline fast path (spfkit_util.h) could not take from the head
 * chunk: a size of 0 or one that wraps, the cap, or a new chunk. */
void *spfkit__arena_alloc_slow(struct spfkit__arena *ar, size_t size)
{
	size_t need, used = arena_used(ar);
	void *p;

	if (size > SIZE_MAX - SPFKIT__ALIGN)
		return NULL;
	need = SPFKIT__ALIGN_UP(size);
	if (ar->max != 0 && (need > ar->max || used > ar->max - need))
		return NULL;
	if (ar->head == NULL || (size_t)(ar->end - ar->cur) < need) {
		if (arena_new_chunk(ar, need) == NULL)
			return NULL;
	}
	p = ar->cur;
	ar->cur += need;
	return p;
}

char *spfkit__arena_strndup(struct spfkit__arena *ar, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	return spfkit__copy_nul(spfkit__arena_alloc(ar, len + 1), s, len);
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
	ar->used = 0;
	ar->cur = ar->base = no_room;
	set_head(ar, ch);
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
	ar->cur = ar->end = ar->base = no_room;
	ar->used = 0;
}

static void *arena_hook_alloc(void *user, size_t size)
{
	struct spfkit__arena_hook *hook = user;
	size_t need = SPFKIT__ALIGN_UP(size); /* what the arena takes */
	void *p;

	if (need < size || need > hook->left || (p = spfkit__arena_alloc(hook->ar, size)) == NULL)
		return NULL;
	hook->left -= need;
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
