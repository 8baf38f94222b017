/* Unit tests of lib/core: buffer caps, cursor errors, arena, ASCII. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"

static void buf_caps_and_sticks(void **state)
{
	struct spfkit__buf b;

	(void)state;
	spfkit__buf_init(&b, NULL, 8);
	assert_int_equal(spfkit__buf_puts(&b, "abcd"), 0);
	assert_int_equal(spfkit__buf_printf(&b, "%d", 1234), 0);
	assert_string_equal(spfkit__buf_str(&b), "abcd1234");
	assert_int_equal(spfkit__buf_putc(&b, 'x'), SPFKIT_E2BIG);
	/* sticky: a small append after the failure fails too */
	assert_int_equal(spfkit__buf_append(&b, "", 0), SPFKIT_E2BIG);
	assert_int_equal(b.len, 8);
	spfkit__buf_reset(&b);
	assert_int_equal(spfkit__buf_append(&b, "a\0b", 3), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0b", 4);
	spfkit__buf_free(&b);
}

static void cur_first_error_wins(void **state)
{
	struct spfkit__cur c;

	(void)state;
	spfkit__cur_init(&c, "ab", 2);
	spfkit__cur_want(&c, 'a', "want a");
	spfkit__cur_want(&c, 'x', "want x");
	spfkit__cur_want(&c, 'b', "want b");
	assert_int_equal(c.err, SPFKIT_ESYNTAX);
	assert_int_equal(c.err_off, 1);
	assert_string_equal(c.err_why, "want x");
	assert_int_equal(spfkit__cur_peek(&c), -1);
}

static void arena_cap_and_strings(void **state)
{
	struct spfkit__arena ar;
	char *s;

	(void)state;
	spfkit__arena_init(&ar, NULL, 64, 256);
	s = spfkit__arena_strndup(&ar, "hello", 5);
	assert_non_null(s);
	assert_string_equal(s, "hello");
	assert_non_null(spfkit__arena_alloc(&ar, 200));
	assert_null(spfkit__arena_alloc(&ar, 100));
	spfkit__arena_reset(&ar);
	assert_non_null(spfkit__arena_alloc(&ar, 100));
	spfkit__arena_free(&ar);
}

static void arena_borrowed_first_chunk(void **state)
{
	_Alignas(16) unsigned char first[256];
	struct spfkit__arena ar;
	unsigned char *p, *q;

	(void)state;
	spfkit__arena_init_with(&ar, NULL, 64, 0, first, sizeof(first));
	p = spfkit__arena_alloc(&ar, 32);
	assert_true(p >= first && p < first + sizeof(first)); /* from the caller's memory */
	q = spfkit__arena_alloc(&ar, 1000);                   /* too big: a chunk of its own */
	assert_non_null(q);
	assert_false(q >= first && q < first + sizeof(first));
	spfkit__arena_reset(&ar);
	spfkit__arena_free(&ar); /* frees the allocated chunk only (ASan would see a bad free) */
}

static void ascii_case_and_hash(void **state)
{
	(void)state;
	assert_true(spfkit__memcaseeq("Example.COM", 11, "example.com", 11));
	assert_false(spfkit__memcaseeq("example.com", 11, "example.co", 10));
	assert_true(spfkit__name_hash("Example.com.", 12) == spfkit__name_hash("example.COM", 11));
	assert_string_equal(spfkit_strerror(SPFKIT_ENOMEM), "out of memory");
	assert_string_equal(spfkit_strerror(12345), "unknown error");
}

/* The paper's test vector: key 00..0f, message 00..0e. */
static void siphash_paper_vector(void **state)
{
	struct spfkit__hash_key k = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
	unsigned char msg[15];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)i;
	assert_true(spfkit__siphash24(&k, msg, sizeof(msg)) == 0xa129ca6149be45e5ull);
}

static void keyed_hash_depends_on_key_and_whole_name(void **state)
{
	struct spfkit__hash_key k1, k2;
	char a[200], b[200];

	(void)state;
	spfkit__hash_key_random(&k1);
	spfkit__hash_key_random(&k2);
	assert_false(k1.k0 == k2.k0 && k1.k1 == k2.k1); /* two draws, 2^-128 */
	assert_true(spfkit__name_hash_keyed(&k1, "_spf.Example.COM.", 17) ==
		    spfkit__name_hash_keyed(&k1, "_spf.example.com", 16));
	assert_true(spfkit__name_hash_keyed(&k1, "_spf.example.com", 16) !=
		    spfkit__name_hash_keyed(&k2, "_spf.example.com", 16));
	assert_true(spfkit__siphash13(&k1, "v=spf1 -all", 11) !=
		    spfkit__siphash13(&k2, "v=spf1 -all", 11));
	/* case folding is ASCII letters only: '@' and '`' stay apart */
	assert_true(spfkit__name_hash_keyed(&k1, "a@b.example", 11) !=
		    spfkit__name_hash_keyed(&k1, "a`b.example", 11));
	/* every byte counts, not samples: change one in the middle */
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	b[70] = 'y';
	assert_true(spfkit__siphash13(&k1, a, sizeof(a)) != spfkit__siphash13(&k1, b, sizeof(b)));
	assert_true(spfkit__name_hash_keyed(&k1, a, sizeof(a)) !=
		    spfkit__name_hash_keyed(&k1, b, sizeof(b)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buf_caps_and_sticks),
		cmocka_unit_test(cur_first_error_wins),
		cmocka_unit_test(arena_cap_and_strings),
		cmocka_unit_test(arena_borrowed_first_chunk),
		cmocka_unit_test(ascii_case_and_hash),
		cmocka_unit_test(siphash_paper_vector),
		cmocka_unit_test(keyed_hash_depends_on_key_and_whole_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
