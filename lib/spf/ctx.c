/* spfkit_ctx: configuration shared, read-only, by every evaluation. */
#include <string.h>

#include "ctx.h"
#include "macro.h"

static unsigned limit_or_default(unsigned given, unsigned rfc_default)
{
	return given != 0 ? given : rfc_default;
}

static void ctx_set_limits(struct spfkit_ctx *ctx, const struct spfkit_limits *l)
{
	/* RFC 7208 §4.6.4 defaults where the caller gave 0. */
	ctx->limits.dns_terms = limit_or_default(l->dns_terms, SPFKIT_LIMIT_DNS_TERMS);
	ctx->limits.void_lookups = limit_or_default(l->void_lookups, SPFKIT_LIMIT_VOID_LOOKUPS);
	ctx->limits.mx_names = limit_or_default(l->mx_names, SPFKIT_LIMIT_MX_NAMES);
	ctx->limits.ptr_names = limit_or_default(l->ptr_names, SPFKIT_LIMIT_PTR_NAMES);
}

/*
 * SPFKIT_DEFAULT_EXPLANATION, parsed: a context that keeps the default
 * (nearly all) costs no parse and no copy, so a context made for one
 * evaluation is cheap (tests/unit: equal to what the parser makes).
 */
static const char default_exp_src[] = SPFKIT_DEFAULT_EXPLANATION;
static const struct spfkit_macro_piece default_exp_pieces[] = {
	{ .kind = SPFKIT_PIECE_MACRO, .letter = 'o' },
	{ .kind = SPFKIT_PIECE_LITERAL, .text = default_exp_src + 4, .len = 20 },
	{ .kind = SPFKIT_PIECE_MACRO, .letter = 'c' },
	{ .kind = SPFKIT_PIECE_LITERAL, .text = default_exp_src + 28, .len = 20 },
};

const struct spfkit_macro_string spfkit__ctx_default_exp = {
	.pieces = default_exp_pieces,
	.count = sizeof(default_exp_pieces) / sizeof(default_exp_pieces[0]),
	.letters = 1u << ('o' - 'a') | 1u << ('c' - 'a'),
	.src = default_exp_src,
	.src_len = sizeof(default_exp_src) - 1,
};

static int ctx_set_strings(struct spfkit_ctx *ctx, const struct spfkit_config *cfg)
{
	const char *exp = cfg->default_explanation;
	const char *recv = cfg->receiver ? cfg->receiver : "unknown";
	size_t err_off;
	const char *why;
	int rc;

	ctx->receiver_len = strlen(recv);
	ctx->receiver = spfkit__arena_strndup(&ctx->arena, recv, ctx->receiver_len);
	if (ctx->receiver == NULL)
		return SPFKIT_ENOMEM;
	if (exp == NULL) {
		ctx->default_exp = spfkit__ctx_default_exp;
		return 0;
	}
	/* Parsed macro-strings point into their source: keep our own copy. */
	exp = spfkit__arena_strndup(&ctx->arena, exp, strlen(exp));
	if (exp == NULL)
		return SPFKIT_ENOMEM;
	rc = spfkit__macro_parse(exp, strlen(exp), SPFKIT__MACRO_EXPLAIN, &ctx->arena,
				 &ctx->default_exp, &err_off, &why);
	if (rc == SPFKIT_ESYNTAX)
		return SPFKIT_EINVAL;
	return rc;
}

/* 0: no cache, every record private to its evaluation. */
static size_t cache_entries(const struct spfkit_config *cfg)
{
	if (cfg->no_record_cache)
		return 0;
	return cfg->record_cache_size ? cfg->record_cache_size : SPFKIT_RECORD_CACHE_DEFAULT;
}

/* the context rounded up to the arena's alignment */
#define CTX_SIZE SPFKIT__ALIGN_UP(sizeof(struct spfkit_ctx))
#define CTX_FIRST_CHUNK 128

/* The 1.0 layout: the least a caller's size may say. */
#define CONFIG_SIZE_1_0 SPFKIT__SIZE_UPTO(struct spfkit_config, no_record_cache)

static int ctx_set_spares(struct spfkit_ctx *ctx)
{
	unsigned i;

	ctx->spares = spfkit__arena_alloc(&ctx->arena, sizeof(*ctx->spares));
	if (ctx->spares == NULL)
		return SPFKIT_ENOMEM;
	for (i = 0; i < SPFKIT__EVAL_SPARES; i++)
		atomic_init(&ctx->spares->slot[i], NULL);
	ctx->spares->own = NULL;
	atomic_init(&ctx->spares->own_free, 0);
	return 0;
}

int spfkit_ctx_new(const struct spfkit_config *cfg, struct spfkit_ctx **out)
{
	struct spfkit_config own;
	struct spfkit_ctx *ctx;
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	memset(&own, 0, sizeof(own));
	if (cfg != NULL && spfkit__sized_copy(&own, sizeof(own), cfg, CONFIG_SIZE_1_0) != 0)
		return SPFKIT_EINVAL;
	cfg = &own;
	/* One allocation: the context, its arena's first chunk, which holds
	 * a receiver name of common length, and a block for an evaluation. */
	ctx = spfkit__alloc(cfg->alloc, CTX_SIZE + CTX_FIRST_CHUNK + spfkit__request_block_size());
	if (ctx == NULL)
		return SPFKIT_ENOMEM;
	memset(ctx, 0, CTX_SIZE);
	ctx->alloc = cfg->alloc;
	spfkit__arena_init_with(&ctx->arena, cfg->alloc, 1024, 0, (char *)ctx + CTX_SIZE,
				CTX_FIRST_CHUNK);
	ctx_set_limits(ctx, &cfg->limits);
	ctx->lookahead = !cfg->no_lookahead;
	ctx->record_memo = cfg->record_memo && cache_entries(cfg) > 0;
	ctx->time_budget_ms = limit_or_default(cfg->time_budget_ms, SPFKIT_TIME_BUDGET_MS);
	rc = ctx_set_strings(ctx, cfg);
	if (rc == 0)
		rc = ctx_set_spares(ctx);
	if (rc == 0)
		spfkit__request_own_block(ctx, (char *)ctx + CTX_SIZE + CTX_FIRST_CHUNK);
	/* no cache, no cache object: a context made for one evaluation
	 * pays nothing for it */
	if (rc == 0 && cache_entries(cfg) > 0)
		rc = spfkit__record_cache_new_bounded(cfg->alloc, cache_entries(cfg),
						      cfg->record_cache_bytes, &ctx->records);
	if (rc != 0) {
		spfkit_ctx_free(ctx);
		return rc;
	}
	*out = ctx;
	return 0;
}

void spfkit_ctx_free(struct spfkit_ctx *ctx)
{
	if (ctx == NULL)
		return;
	spfkit__request_spares_free(ctx);
	spfkit__record_cache_free(ctx->records);
	spfkit__arena_free(&ctx->arena);
	spfkit__free(ctx->alloc, ctx);
}
