/*
 * Library allocators on cmocka's checked heap, so that a test which
 * leaks what the library allocated fails: test_alloc as it is, and one
 * that fails every allocation once its count runs out (the ENOMEM paths).
 */
#ifndef SPFKIT_TEST_CMOCKA_ALLOC_H
#define SPFKIT_TEST_CMOCKA_ALLOC_H

#include <spfkit/common.h>

extern const struct spfkit_allocator test_alloc;

/* Allocations allowed before each one fails (and every later one). */
struct test_alloc_failing {
	long left;
};

/* test_alloc counting down f->left; f must outlive what it allocates. */
struct spfkit_allocator test_alloc_failing(struct test_alloc_failing *f);

#endif
