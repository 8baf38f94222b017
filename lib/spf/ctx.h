/* The evaluation context (include/spfkit/eval.h): read-only after setup. */
#ifndef SPFKIT_CTX_H
#define SPFKIT_CTX_H

#include <spfkit/eval.h>
#include <spfkit/record.h>

#include <stdatomic.h>

#include "core.h"
#include "record_cache.h"

/*
 * Blocks of finished evaluations a context keeps for the next ones
 * (request.c): an evaluation's block is some 20 KiB, past what malloc
 * hands out from its per-thread caches, and a policy daemon starts two
 * per message. Lock-free slots, so any thread may take or give.
 */
#define SPFKIT__EVAL_SPARES 4
struct spfkit__request_spares {
	_Atomic(void *) slot[SPFKIT__EVAL_SPARES];
	/* One more, allocated with the context itself, so that a context
	 * made for one evaluation allocates once: never freed on its own. */
	void *own;
	atomic_int own_free; /* 1 while no evaluation holds it */
};

struct spfkit_ctx {
	const struct spfkit_allocator *alloc;
	struct spfkit__arena arena;         /* the strings and parsed forms below */
	const char *receiver;
	size_t receiver_len;
	struct spfkit_macro_string default_exp; /* parsed once, SPFKIT__MACRO_EXPLAIN */
	struct spfkit_limits limits;
	int lookahead; /* ask likely questions early (lookahead.c) */
	int record_memo; /* spfkit_config.record_memo, with a record cache */
	/* thread-safe; shared by evaluations; NULL: no cache */
	struct spfkit__record_cache *records;
	unsigned time_budget_ms;        /* spfkit_check() */
	struct spfkit__request_spares *spares; /* in the arena; changes after setup */
};

/* request.c: give back what the spares hold, at spfkit_ctx_free(). */
void spfkit__request_spares_free(struct spfkit_ctx *ctx);
/* request.c: the bytes of an evaluation's block, and the context's own
 * block b (spares->own) handed over once the spares are set up. */
size_t spfkit__request_block_size(void);
void spfkit__request_own_block(struct spfkit_ctx *ctx, void *b);

#define SPFKIT_RECORD_CACHE_DEFAULT 4096u

/* SPFKIT_DEFAULT_EXPLANATION in parsed form, shared by every context. */
extern const struct spfkit_macro_string spfkit__ctx_default_exp;

#endif
