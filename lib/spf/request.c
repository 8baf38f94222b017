/*
 * Starting and ending an evaluation: the request is copied and its
 * identities normalised as RFC 7208 §4.3 and §2.4 say.
 */
#include <string.h>

#include "domain.h"
#include "eval_int.h"
#include "idna.h"

#define EVAL_ARENA_CHUNK 16384
/* the evaluation rounded up to the arena's alignment */
#define EVAL_SIZE SPFKIT__ALIGN_UP(sizeof(struct spfkit_eval))

static const char postmaster[] = "postmaster";

/* ---- evaluation blocks, kept by the context (ctx.h) ---------------------- */

#define EVAL_BLOCK (EVAL_SIZE + EVAL_FIRST_CHUNK)

/* A kept block is out of bounds to AddressSanitizer until taken again,
 * so a use after spfkit_eval_free() is still caught. */
#if defined(__has_feature) /* clang (the fuzz builds); GCC says __SANITIZE_ADDRESS__ */
#if __has_feature(address_sanitizer)
#define EVAL_BLOCKS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(EVAL_BLOCKS_ASAN)
#include <sanitizer/asan_interface.h>
#define BLOCK_KEPT(b) ASAN_POISON_MEMORY_REGION((b), EVAL_BLOCK)
#define BLOCK_TAKEN(b) ASAN_UNPOISON_MEMORY_REGION((b), EVAL_BLOCK)
#else
#define BLOCK_KEPT(b) ((void)(b))
#define BLOCK_TAKEN(b) ((void)(b))
#endif

size_t spfkit__request_block_size(void)
{
	return EVAL_BLOCK;
}

void spfkit__request_own_block(struct spfkit_ctx *ctx, void *b)
{
	ctx->spares->own = b;
	atomic_init(&ctx->spares->own_free, 1);
	BLOCK_KEPT(b);
}

static void *block_take(const struct spfkit_ctx *ctx)
{
	struct spfkit__request_spares *sp = ctx->spares;
	void *b;
	unsigned i;

	if (atomic_load_explicit(&sp->own_free, memory_order_relaxed) &&
	    atomic_exchange(&sp->own_free, 0)) {
		BLOCK_TAKEN(sp->own);
		return sp->own;
	}

	for (i = 0; i < SPFKIT__EVAL_SPARES; i++)
		if (atomic_load_explicit(&ctx->spares->slot[i], memory_order_relaxed) != NULL) {
			b = atomic_exchange(&ctx->spares->slot[i], NULL);
			if (b != NULL) {
				BLOCK_TAKEN(b);
				return b;
			}
		}
	return spfkit__alloc(ctx->alloc, EVAL_BLOCK);
}

static void block_give(const struct spfkit_ctx *ctx, void *b)
{
	void *empty;
	unsigned i;

	BLOCK_KEPT(b);
	if (b == ctx->spares->own) {
		atomic_store(&ctx->spares->own_free, 1);
		return;
	}
	for (i = 0; i < SPFKIT__EVAL_SPARES; i++) {
		empty = NULL;
		if (atomic_compare_exchange_strong(&ctx->spares->slot[i], &empty, b))
			return;
	}
	BLOCK_TAKEN(b); /* the allocator's own, now */
	spfkit__free(ctx->alloc, b);
}

void spfkit__request_spares_free(struct spfkit_ctx *ctx)
{
	unsigned i;

	if (ctx->spares == NULL)
		return;
	if (ctx->spares->own != NULL)
		BLOCK_TAKEN(ctx->spares->own); /* freed with the context */
	for (i = 0; i < SPFKIT__EVAL_SPARES; i++) {
		void *b = atomic_exchange(&ctx->spares->slot[i], NULL);

		if (b != NULL) {
			BLOCK_TAKEN(b);
			spfkit__free(ctx->alloc, b);
		}
	}
}

static const char *arena_concat(struct spfkit__arena *ar, const char *a, size_t alen,
				const char *b, size_t blen)
{
	char *p = spfkit__arena_alloc(ar, alen + blen + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, a, alen);
	memcpy(p + alen, b, blen);
	p[alen + blen] = '\0';
	return p;
}

/* The last '@' splits local-part and domain (a quoted local part may hold '@'). */
/* The last '@' of s[0..len), or NULL: memchr() from the front, as most
 * senders have one '@' (a byte loop from the end read the whole domain). */
static const char *last_at(const char *s, size_t len)
{
	const char *at = NULL, *p = s, *end = s + len;

	while (p < end && (p = memchr(p, '@', (size_t)(end - p))) != NULL)
		at = p++;
	return at;
}

/*
 * <sender> is MAIL FROM, or "postmaster@" HELO when MAIL FROM is empty or
 * the HELO identity is checked (§2.3, §2.4). §4.3: "If the <sender> has
 * no local-part, substitute the string postmaster for the local-part."
 */
static int set_sender(struct spfkit_eval *ev, const struct spfkit_request *req)
{
	const char *s = req->sender, *at;
	size_t len = req->sender_len;

	if (req->identity == SPFKIT_IDENTITY_HELO || len == 0) {
		s = arena_concat(&ev->arena, "postmaster@", 11, ev->helo, ev->helo_len);
		len = 11 + ev->helo_len;
	} else {
		s = spfkit__arena_strndup(&ev->arena, s, len);
	}
	if (s == NULL)
		return SPFKIT_ENOMEM;
	ev->sender = s;
	ev->sender_len = len;
	at = last_at(s, len);
	ev->local = at != NULL && at > s ? s : postmaster;
	ev->local_len = at != NULL && at > s ? (size_t)(at - s) : sizeof(postmaster) - 1;
	ev->sender_domain = at != NULL ? at + 1 : s;
	ev->sender_domain_len = at != NULL ? len - (size_t)(at + 1 - s) : len;
	return 0;
}

static int set_top_frame(struct spfkit_eval *ev)
{
	struct frame *f = &ev->frames[0];

	memset(f, 0, sizeof(*f));
	f->domain_len = spfkit__domain_trim(ev->sender_domain, ev->sender_domain_len);
	f->domain = spfkit__arena_strndup(&ev->arena, ev->sender_domain, f->domain_len);
	if (f->domain == NULL)
		return SPFKIT_ENOMEM;
	f->phase = PH_START;
	ev->depth = 1;
	return 0;
}

static int check_request(const struct spfkit_request *req)
{
	if (req->ip.family != 4 && req->ip.family != 6)
		return SPFKIT_EINVAL;
	if ((req->sender == NULL && req->sender_len != 0) || (req->helo == NULL && req->helo_len != 0))
		return SPFKIT_EINVAL;
	if (req->sender_len > SPFKIT_IDENTITY_MAX || req->helo_len > SPFKIT_IDENTITY_MAX)
		return SPFKIT_EINVAL;
	/* length-delimited: a NUL inside would cut the C strings made from them */
	if ((req->sender_len > 0 && memchr(req->sender, '\0', req->sender_len) != NULL) ||
	    (req->helo_len > 0 && memchr(req->helo, '\0', req->helo_len) != NULL))
		return SPFKIT_EINVAL;
	return 0;
}

static int eval_setup(struct spfkit_eval *ev, const struct spfkit_request *req)
{
	struct spfkit_result *r = &ev->result;
	int rc;

	ev->ip = req->ip;
	memcpy(&ev->ip4, ev->ip.addr, 4);
	spfkit_ip_format(&ev->ip, ev->client_ip, sizeof(ev->client_ip));
	ev->identity = req->identity;
	ev->now = req->now;
	ev->trace = req->trace;
	ev->trace_arg = req->trace_arg;
	ev->lookahead = ev->ctx->lookahead;
	/* a trace shows every question asked and its answer: none skipped */
	ev->memo = ev->ctx->record_memo && req->trace == NULL && req->now != 0;
	ev->helo = spfkit__arena_strndup(&ev->arena, req->helo ? req->helo : "", req->helo_len);
	if (ev->helo == NULL)
		return SPFKIT_ENOMEM;
	ev->helo_len = req->helo_len;
	rc = set_sender(ev, req);
	if (rc == 0)
		rc = spfkit__idna_identities(ev);
	if (rc == 0)
		rc = set_top_frame(ev);
	if (rc != 0)
		return rc;
	r->identity = ev->identity;
	r->identity_domain = ev->frames[0].domain;
	r->sender = ev->sender_received;
	r->helo = ev->helo_received;
	r->sender_ascii = ev->sender_ascii;
	r->helo_ascii = ev->helo_ascii;
	r->client_ip = ev->client_ip;
	r->receiver = ev->ctx->receiver;
	return 0;
}

/* The 1.0 layout: the least a caller's size may say. */
#define REQUEST_SIZE_1_0 SPFKIT__SIZE_UPTO(struct spfkit_request, trace_arg)

int spfkit_eval_new(const struct spfkit_ctx *ctx, const struct spfkit_request *caller_req,
		    struct spfkit_eval **out)
{
	struct spfkit_request own;
	const struct spfkit_request *req = &own;
	struct spfkit_eval *ev;
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if (ctx == NULL || caller_req == NULL)
		return SPFKIT_EINVAL;
	if (spfkit__sized_copy(&own, sizeof(own), caller_req, REQUEST_SIZE_1_0) != 0 ||
	    check_request(req) != 0)
		return SPFKIT_EINVAL;
	/* One allocation: the evaluation, then its arena's first chunk. */
	ev = block_take(ctx);
	if (ev == NULL)
		return SPFKIT_ENOMEM;
	memset(ev, 0, EVAL_ZEROED_SIZE);
	ev->ctx = ctx;
	ev->queries = ev->queries_first;
	ev->cap_queries = EVAL_FIRST_QUERIES;
	spfkit__arena_init_with(&ev->arena, ctx->alloc, EVAL_ARENA_CHUNK, EVAL_MAX_MEMORY,
				(char *)ev + EVAL_SIZE, EVAL_FIRST_CHUNK);
	spfkit__arena_hook_init(&ev->arena_records, &ev->arena, EVAL_KEEP_RECORD_BYTES);
	spfkit__buf_init(&ev->scratch, ctx->alloc, SPFKIT_MACRO_MAX_EXPANSION);
	rc = eval_setup(ev, req);
	if (rc != 0) {
		spfkit_eval_free(ev);
		return rc;
	}
	*out = ev;
	return 0;
}

int spfkit_eval_new_record(const struct spfkit_ctx *ctx, const struct spfkit_request *req,
			   const char *record, size_t record_len, struct spfkit_eval **out)
{
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if (record == NULL || !spfkit_record_is_spf(record, record_len))
		return SPFKIT_EINVAL;
	if (record_len > SPFKIT_RECORD_TEXT_MAX)
		return SPFKIT_E2BIG;
	rc = spfkit_eval_new(ctx, req, out);
	if (rc != 0)
		return rc;
	rc = spfkit__query_given(*out, record, record_len);
	if (rc != 0) {
		spfkit_eval_free(*out);
		*out = NULL;
	}
	return rc;
}

void spfkit_eval_free(struct spfkit_eval *ev)
{
	size_t i;

	if (ev == NULL)
		return;
	if (ev->given != NULL)
		spfkit__record_cache_release(ev->ctx->records, ev->given->rce);
	for (i = 0; i < ev->nqueries; i++)
		spfkit__record_cache_release(ev->ctx->records, ev->queries[i]->rce);
	if (ev->queries != ev->queries_first)
		spfkit__free(ev->ctx->alloc, ev->queries);
	spfkit__buf_free(&ev->scratch);
	spfkit__arena_free(&ev->arena);
	block_give(ev->ctx, ev);
}
