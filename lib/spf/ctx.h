/* The evaluation context (include/spfkit/eval.h): read-only after setup. */
#ifndef SPFKIT_CTX_H
#define SPFKIT_CTX_H

#include <spfkit/eval.h>
#include <spfkit/record.h>

#include "core.h"
#include "record_cache.h"

struct spfkit_ctx {
	const struct spfkit_allocator *alloc;
	struct spfkit__arena arena;         /* the strings and parsed forms below */
	const char *receiver;
	size_t receiver_len;
	struct spfkit_macro_string default_exp; /* parsed once, SPFKIT__MACRO_EXPLAIN */
	struct spfkit_limits limits;
	int lookahead; /* ask likely questions early (lookahead.c) */
	struct spfkit__rcache *records; /* thread-safe; shared by evaluations */
	unsigned time_budget_ms;        /* spfkit_check() */
};

#define SPFKIT_RECORD_CACHE_DEFAULT 4096u

/* SPFKIT_DEFAULT_EXPLANATION in parsed form, shared by every context. */
extern const struct spfkit_macro_string spfkit__default_exp;

#endif
