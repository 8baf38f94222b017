/* Shared by every public header: version, API error codes, allocator hook. */

/*
 * ABI rule for the public structs: no field is ever removed, reordered,
 * renamed or resized within one SONAME.
 * Structs the caller fills and hands in (spfkit_config, spfkit_request,
 * spfkit_cache_options, spfkit_cares_options, spfkit_lint_options) may
 * gain fields at their
 * end: each begins with `size_t size`, set by its inline *_init()
 * function (spfkit_config_init() ...) to the sizeof the caller was
 * compiled with, together with zero for every other field (zero is the
 * default of every optional field). The library reads only those
 * `size` bytes and takes the default for fields the caller's header did
 * not have; a size below the 1.0 struct, or a larger struct with a
 * non-zero byte in fields this library does not know, is SPFKIT_EINVAL.
 * So always call the *_init() function before setting fields.
 * The library-returned spfkit_result, spfkit_record and publish.h's
 * spfkit_lint_summary, spfkit_lint_finding and spfkit_tree_node, read
 * through the pointer the library gives, may gain fields at their end.
 * No other struct may grow: one embedded in another (spfkit_ip,
 * spfkit_limits, spfkit_macro_string), one read as an array
 * (spfkit_term, spfkit_macro_piece, spfkit_dns_rr, spfkit_cares_fd,
 * spfkit_tree_void, spfkit_tree_record),
 * one the caller allocates for the library to fill (spfkit_question,
 * spfkit_cache_stats, spfkit_parse_error, ...), or a table of
 * functions (spfkit_allocator, spfkit_resolver_ops).
 * tests/build/abi-x86_64.txt records every size and offset (test
 * abi-layout; tools/update-abi.sh BUILD_DIR regenerates it).
 */
#ifndef SPFKIT_COMMON_H
#define SPFKIT_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* SPFKIT_VERSION_*, spfkit_version(): generated from meson.build's version. */
#include <spfkit/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SPFKIT_MUSTCHECK __attribute__((warn_unused_result))
#else
#define SPFKIT_MUSTCHECK
#endif

/* API error codes. Values are fixed forever; new codes are appended. */
enum spfkit_err {
	SPFKIT_OK = 0,
	SPFKIT_ENOMEM = -1,   /* an allocation failed; nothing was changed */
	SPFKIT_EINVAL = -2,   /* an argument is invalid (NULL, bad address, ...) */
	SPFKIT_ESYNTAX = -3,  /* input text does not follow its grammar */
	SPFKIT_E2BIG = -4,    /* input or output over a documented size cap */
	SPFKIT_EIO = -5,      /* reading a file or socket failed */
	SPFKIT_ESTATE = -6,   /* call not valid in the object's current state */
	SPFKIT_ENOTFOUND = -7, /* no such entry (question id, file, ...) */
	SPFKIT_EDNS = -8,     /* the DNS backend failed to submit a question */
};

/* Static English text for an `enum spfkit_err` value; never NULL. */
const char *spfkit_strerror(int err);

/*
 * Allocator hook. Every allocation of the library goes through one of
 * these; a NULL `const struct spfkit_allocator *` anywhere means libc.
 * The tests point it at cmocka's test_malloc to count leaks and at a
 * failing allocator to exercise every out-of-memory path.
 *
 * alloc and realloc must return memory aligned for any object type,
 * that is to _Alignof(max_align_t) as malloc() does, and no more is
 * needed: the library places only ordinary types in what it gets (its
 * arenas round every block to max_align_t). alloc is never asked for
 * 0 bytes; free is never given NULL. The hook is called from whatever
 * thread uses the object it belongs to: when objects sharing a hook are
 * used from several threads, its functions must be thread-safe.
 */
struct spfkit_allocator {
	void *(*alloc)(void *user, size_t size);
	void *(*realloc)(void *user, void *ptr, size_t size);
	void (*free)(void *user, void *ptr);
	void *user;
};

#ifdef __cplusplus
}
#endif

#endif
