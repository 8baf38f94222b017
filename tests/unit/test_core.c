/* Unit tests of lib/core: buffer caps, cursor errors, arena, ASCII. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "hash_variants.h" /* tests/support */

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

/*
 * The cap holds to the byte across chunks and within a first chunk
 * larger than it, again after a reset; blocks never overlap; 0 bytes
 * get a block, sizes that wrap when rounded up get none.
 */
static void arena_cap_exact(void **state)
{
	_Alignas(max_align_t) unsigned char first[4096];
	unsigned char *p[64];
	struct spfkit__arena ar;
	size_t n, i, round;

	(void)state;
	spfkit__arena_init(&ar, NULL, 64, 40 * SPFKIT__ALIGN + SPFKIT__ALIGN / 2);
	for (n = 0; n < 64 && (p[n] = spfkit__arena_alloc(&ar, SPFKIT__ALIGN)) != NULL; n++)
		memset(p[n], (int)n, SPFKIT__ALIGN);
	assert_int_equal(n, 40);
	for (i = 0; i < n; i++)
		assert_int_equal(p[i][0], i);
	assert_null(spfkit__arena_alloc(&ar, 1));
	spfkit__arena_free(&ar);

	spfkit__arena_init(&ar, NULL, 64, 0);
	assert_non_null(spfkit__arena_alloc(&ar, 0));
	assert_null(spfkit__arena_alloc(&ar, SIZE_MAX));
	assert_null(spfkit__arena_alloc(&ar, SIZE_MAX - SPFKIT__ALIGN / 2));
	assert_null(spfkit__arena_strndup(&ar, "x", SIZE_MAX));
	spfkit__arena_free(&ar);

	spfkit__arena_init_with(&ar, NULL, 64, 10 * SPFKIT__ALIGN, first, sizeof(first));
	for (round = 0; round < 2; round++) {
		for (n = 0; n < 64 && (p[n] = spfkit__arena_alloc(&ar, 1)) != NULL; n++)
			assert_true(p[n] >= first && p[n] < first + sizeof(first));
		assert_int_equal(n, 10);
		spfkit__arena_reset(&ar);
	}
	spfkit__arena_free(&ar);
}

/* The hook's budget counts what the arena takes, rounded blocks; its
 * free leaves blocks to the arena; it never reallocates. */
static void arena_hook_budget(void **state)
{
	struct spfkit__arena ar;
	struct spfkit__arena_hook hook;
	void *p;
	size_t n;

	(void)state;
	spfkit__arena_init(&ar, NULL, 256, 0);
	spfkit__arena_hook_init(&hook, &ar, 3 * SPFKIT__ALIGN);
	for (n = 0; n < 100 && (p = spfkit__alloc(&hook.alloc, 1)) != NULL; n++)
		spfkit__free(&hook.alloc, p);
	assert_int_equal(n, 3);
	assert_null(spfkit__alloc(&hook.alloc, SIZE_MAX));
	spfkit__arena_hook_init(&hook, &ar, 1024);
	p = spfkit__alloc(&hook.alloc, 8);
	assert_non_null(p);
	assert_null(spfkit__realloc(&hook.alloc, p, 16));
	spfkit__arena_free(&ar); /* the blocks are the arena's: the hook's free left them */
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

/*
 * Names of every length up to 40: the hash ignores case and a final dot,
 * and changing any one byte changes it (each byte is read, whatever the
 * length, by the 8-byte words, the overlapping last word or the short
 * forms of spfkit__namehash).
 */
static void name_hash_reads_every_byte(void)
{
	char name[42], other[42];
	size_t len, i;
	uint64_t h;

	for (len = 0; len <= 40; len++) {
		for (i = 0; i < len; i++)
			name[i] = (char)('a' + (i * 7 + len) % 26);
		memcpy(other, name, len);
		for (i = 0; i < len; i++)
			other[i] = (char)(other[i] - 'a' + 'A');
		other[len] = '.';
		h = spfkit__namehash(name, len);
		assert_true(spfkit__namehash(other, len) == h);
		assert_true(spfkit__namehash(other, len + 1) == h);
		for (i = 0; i < len; i++) {
			memcpy(other, name, len);
			other[i] = other[i] == 'z' ? 'y' : (char)(other[i] + 1);
			assert_true(spfkit__namehash(other, len) != h);
		}
		if (len > 0)
			assert_true(spfkit__namehash(name, len - 1) != h);
	}
}

static void ascii_case_and_hash(void **state)
{
	(void)state;
	assert_true(spfkit__memcaseeq("Example.COM", 11, "example.com", 11));
	assert_false(spfkit__memcaseeq("example.com", 11, "example.co", 10));
	assert_true(spfkit__namehash("Example.com.", 12) == spfkit__namehash("example.COM", 11));
	name_hash_reads_every_byte();
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
	assert_true(spfkit__hash_siphash24(&k, msg, sizeof(msg)) == 0xa129ca6149be45e5ull);
}

static void keyed_hash_depends_on_key_and_whole_name(void **state)
{
	struct spfkit__hash_key k1, k2;
	char a[200], b[200];

	(void)state;
	spfkit__hash_key_random(&k1);
	spfkit__hash_key_random(&k2);
	assert_false(k1.k0 == k2.k0 && k1.k1 == k2.k1); /* two draws, 2^-128 */
	assert_true(spfkit__namehash_keyed(&k1, "_spf.Example.COM.", 17) ==
		    spfkit__namehash_keyed(&k1, "_spf.example.com", 16));
	assert_true(spfkit__namehash_keyed(&k1, "_spf.example.com", 16) !=
		    spfkit__namehash_keyed(&k2, "_spf.example.com", 16));
	assert_true(spfkit__hash_siphash13(&k1, "v=spf1 -all", 11) !=
		    spfkit__hash_siphash13(&k2, "v=spf1 -all", 11));
	/* case folding is ASCII letters only: '@' and '`' stay apart */
	assert_true(spfkit__namehash_keyed(&k1, "a@b.example", 11) !=
		    spfkit__namehash_keyed(&k1, "a`b.example", 11));
	/* every byte counts, not samples: change one in the middle */
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	b[70] = 'y';
	assert_true(spfkit__hash_siphash13(&k1, a, sizeof(a)) != spfkit__hash_siphash13(&k1, b,
											sizeof(b)));
	assert_true(spfkit__namehash_keyed(&k1, a, sizeof(a)) !=
		    spfkit__namehash_keyed(&k1, b, sizeof(b)));
}

/*
 * The hash of long keys (spfkit__hash_keyed past SPFKIT__HASH_SHORT
 * bytes, record texts): every byte of every length counts, at any
 * alignment, and the key decides the value.
 */
static void keyed_hash_long_keys_whole_and_keyed(void **state)
{
	static const size_t lens[] = {31, 32, 33, 40, 47, 48, 49, 64, 100, 255, 1000};
	struct spfkit__hash_key k1, k2;
	unsigned char a[1008], b[1008];
	size_t i, j, n;
	uint64_t h;

	(void)state;
	spfkit__hash_key_random(&k1);
	spfkit__hash_key_random(&k2);
	for (i = 0; i < sizeof(a); i++)
		a[i] = (unsigned char)(i * 7 + 3);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		n = lens[i];
		h = spfkit__hash_keyed(&k1, a, n);
		assert_true(h != spfkit__hash_keyed(&k2, a, n));
		assert_true(h != spfkit__hash_keyed(&k1, a, n + 1));
		/* the same bytes at another alignment */
		memcpy(b + 5, a, n);
		assert_true(h == spfkit__hash_keyed(&k1, b + 5, n));
		for (j = 0; j < n; j++) {
			memcpy(b, a, n);
			b[j] ^= (unsigned char)(1u << (j % 8));
			if (spfkit__hash_keyed(&k1, b, n) == h)
				fail_msg("length %zu: flipping byte %zu left the hash alone", n, j);
		}
	}
	/* long names fold case and drop the final dot like short ones */
	assert_true(spfkit__namehash_keyed(&k1, "_spf.Mail-Servers.Example.COM.", 30) ==
		    spfkit__namehash_keyed(&k1, "_spf.mail-servers.example.com", 29));
	assert_true(spfkit__namehash_keyed(&k1, "_spf.a-long-subdomain-name.Example.COM.", 39) ==
		    spfkit__namehash_keyed(&k1, "_spf.a-long-subdomain-name.example.com", 38));
	assert_true(spfkit__namehash_keyed(&k1, "_spf.a-long-subdomain-name@example.com", 38) !=
		    spfkit__namehash_keyed(&k1, "_spf.a-long-subdomain-name`example.com", 38));
}

/* 4,096 texts of 200 bytes differing in two middle bytes only, in 4,096
 * buckets: no chain near 16 (odds far below 2^-40 for a random hash). */
static void keyed_hash_long_keys_spread(void **state)
{
	static unsigned short chain[4096];
	struct spfkit__hash_key k;
	char txt[200];
	unsigned i, most = 0;
	size_t b;

	(void)state;
	spfkit__hash_key_random(&k);
	memset(chain, 0, sizeof(chain));
	memset(txt, 'a', sizeof(txt));
	for (i = 0; i < 4096; i++) {
		txt[90] = (char)(' ' + i % 64);
		txt[91] = (char)(' ' + i / 64);
		b = spfkit__hash_keyed(&k, txt, sizeof(txt)) & 4095;
		if (++chain[b] > most)
			most = chain[b];
	}
	assert_true(most < 16);
}

/* An older caller's struct has fewer fields: they read as defaults. */
struct sized_v2 {
	size_t size;
	int a; /* 1.0 */
	int b; /* added later */
};

static size_t format(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static size_t format(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = spfkit__vformat(out, size, fmt, ap);
	va_end(ap);
	return n;
}

/* Every conversion it takes, as snprintf() writes it, cut at every size;
 * at one it does not take, the text ends there. */
static void format_as_snprintf(void **state)
{
	static const char term[] = "ip4:192.0.2.1/33 rest";
	char got[128], want[128];
	size_t size, n;
	int w;

	(void)state;
	for (size = 1; size <= sizeof(got); size++) {
		w = snprintf(want, size, "SPF record of %s, term '%.*s' at offset %zu: %s %u%% %d %d%s",
			     "example.com", 16, term, (size_t)18446744073709551615u, "rule",
			     4294967295u, -2147483647 - 1, 0, "");
		n = format(got, size, "SPF record of %s, term '%.*s' at offset %zu: %s %u%% %d %d%s",
			   "example.com", 16, term, (size_t)18446744073709551615u, "rule",
			   4294967295u, -2147483647 - 1, 0, "");
		assert_string_equal(got, want);
		assert_int_equal(n, (size_t)w < size ? (size_t)w : size - 1);
	}
	assert_int_equal(format(got, sizeof(got), "%.*s|%.*s|%.*s", 0, "abc", -1, "abc", 2, "abc"), 7);
	assert_string_equal(got, "|abc|ab");
	assert_int_equal(format(got, sizeof(got), "a %x b %s", 15u, "never read"), 2);
	assert_string_equal(got, "a ");
	assert_int_equal(format(got, 0, "abc"), 0);
}

static void sized_copy_older_and_newer(void **state)
{
	unsigned char raw[sizeof(struct sized_v2) + 8];
	struct sized_v2 in, out;
	size_t min = SPFKIT__SIZE_UPTO(struct sized_v2, a);

	(void)state;
	memset(&in, 0x5a, sizeof(in)); /* b holds garbage past an old caller's end */
	in.size = min;
	in.a = 3;
	assert_int_equal(spfkit__sized_copy(&out, sizeof(out), &in, min), 0);
	assert_int_equal(out.a, 3);
	assert_int_equal(out.b, 0);
	in.size = min - 1;
	assert_int_equal(spfkit__sized_copy(&out, sizeof(out), &in, min), SPFKIT_EINVAL);
	/* a newer caller: bytes past our layout must be zero */
	memset(raw, 0, sizeof(raw));
	in.size = sizeof(raw);
	in.b = 4;
	memcpy(raw, &in, sizeof(in));
	assert_int_equal(spfkit__sized_copy(&out, sizeof(out), raw, min), 0);
	assert_int_equal(out.b, 4);
	raw[sizeof(raw) - 1] = 1;
	assert_int_equal(spfkit__sized_copy(&out, sizeof(out), raw, min), SPFKIT_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buf_caps_and_sticks),
		cmocka_unit_test(cur_first_error_wins),
		cmocka_unit_test(arena_cap_and_strings),
		cmocka_unit_test(arena_borrowed_first_chunk),
		cmocka_unit_test(arena_cap_exact),
		cmocka_unit_test(arena_hook_budget),
		cmocka_unit_test(ascii_case_and_hash),
		cmocka_unit_test(siphash_paper_vector),
		cmocka_unit_test(keyed_hash_depends_on_key_and_whole_name),
		cmocka_unit_test(keyed_hash_long_keys_whole_and_keyed),
		cmocka_unit_test(keyed_hash_long_keys_spread),
		cmocka_unit_test(sized_copy_older_and_newer),
		cmocka_unit_test(format_as_snprintf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
