/* cmocka's checked heap as a struct spfkit_allocator (cmocka_alloc.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmocka_alloc.h"

static void *t_alloc(void *user, size_t size)
{
	(void)user;
	return test_malloc(size);
}

static void *t_realloc(void *user, void *ptr, size_t size)
{
	(void)user;
	return test_realloc(ptr, size);
}

static void t_free(void *user, void *ptr)
{
	(void)user;
	test_free(ptr);
}

const struct spfkit_allocator test_alloc = { t_alloc, t_realloc, t_free, NULL };

static void *f_alloc(void *user, size_t size)
{
	struct test_alloc_failing *f = user;

	if (f->left-- <= 0)
		return NULL;
	return test_malloc(size);
}

static void *f_realloc(void *user, void *ptr, size_t size)
{
	struct test_alloc_failing *f = user;

	if (f->left-- <= 0)
		return NULL;
	return test_realloc(ptr, size);
}

struct spfkit_allocator test_alloc_failing(struct test_alloc_failing *f)
{
	struct spfkit_allocator a = { f_alloc, f_realloc, t_free, f };

	return a;
}
