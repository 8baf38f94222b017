/*
 * spfkit_check(): the blocking driver over any resolver (the CLI's way).
 * Every question the evaluation files is sent at once, so lookahead
 * questions travel in parallel; when the result is known, questions still
 * outstanding (lookahead that strict evaluation never needed) are
 * cancelled, as the resolver contract allows.
 */
#include <string.h>

#include "eval_int.h"

struct inflight {
	struct check *chk;
	uint32_t id;      /* 0: slot free */
	uint64_t handle;
};

struct check {
	struct spfkit_eval *ev;
	struct spfkit_resolver *resolver;
	struct inflight *slots; /* callbacks hold slot pointers: never moved */
	size_t nslots;          /* allocated */
	size_t used;            /* high-water mark: slots[used..] never touched */
	size_t outstanding;
	int rc; /* first error from spfkit_eval_answer() */
};

static void on_answer(void *arg, const struct spfkit_dns_answer *answer)
{
	struct inflight *slot = arg;
	struct check *chk = slot->chk;
	int rc = spfkit_eval_answer(chk->ev, slot->id, answer);

	if (rc != 0 && chk->rc == 0)
		chk->rc = rc;
	slot->id = 0;
	chk->outstanding--;
}

static struct inflight *free_slot(struct check *chk)
{
	size_t i;

	for (i = 0; i < chk->used; i++)
		if (chk->slots[i].id == 0)
			return &chk->slots[i];
	if (chk->used == chk->nslots)
		return NULL; /* cannot happen: there are as many slots as questions */
	return &chk->slots[chk->used++];
}

static void send_question(struct check *chk, const struct spfkit_question *q)
{
	static const struct spfkit_dns_answer refused = {
		.status = SPFKIT_DNS_TEMPFAIL, .detail = "the resolver refused the question"};
	struct inflight *slot = free_slot(chk);

	if (slot == NULL) {
		spfkit_eval_answer(chk->ev, q->id, &refused);
		return;
	}
	slot->chk = chk;
	slot->id = q->id;
	chk->outstanding++;
	if (spfkit_resolver_submit(chk->resolver, q->name, q->name_len, q->type, on_answer, slot,
				   &slot->handle) != 0)
		on_answer(slot, &refused); /* a failed submit never calls back */
}

static void cancel_outstanding(struct check *chk)
{
	size_t i;

	for (i = 0; i < chk->used; i++) {
		if (chk->slots[i].id == 0)
			continue;
		spfkit_resolver_cancel(chk->resolver, chk->slots[i].handle);
		chk->slots[i].id = 0;
	}
	chk->outstanding = 0;
}

static int drive(struct check *chk)
{
	struct spfkit_question q;
	int rc;

	for (;;) {
		rc = spfkit_eval_step(chk->ev, &q);
		if (rc == SPFKIT_STEP_DONE || rc < 0)
			return rc;
		if (rc == SPFKIT_STEP_QUERY) {
			send_question(chk, &q);
			continue;
		}
		if (chk->outstanding == 0)
			return SPFKIT_ESTATE; /* waiting for nothing: a bug, not a hang */
		rc = spfkit_resolver_wait(chk->resolver, -1);
		if (rc < 0)
			return rc;
		if (chk->rc != 0)
			return chk->rc;
	}
}

int spfkit_check(const struct spfkit_ctx *ctx, struct spfkit_resolver *resolver,
		 const struct spfkit_request *req, struct spfkit_eval **out)
{
	struct check chk;
	int rc;

	if (out == NULL || resolver == NULL || ctx == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	memset(&chk, 0, sizeof(chk));
	chk.resolver = resolver;
	chk.nslots = EVAL_MAX_QUERIES;
	/* Not zeroed: only slots below the high-water mark are ever read. */
	chk.slots = spfkit__alloc(ctx->alloc, chk.nslots * sizeof(*chk.slots));
	if (chk.slots == NULL)
		return SPFKIT_ENOMEM;
	rc = spfkit_eval_new(ctx, req, &chk.ev);
	if (rc == 0)
		rc = drive(&chk);
	cancel_outstanding(&chk);
	spfkit__free(ctx->alloc, chk.slots);
	if (rc != SPFKIT_STEP_DONE) {
		spfkit_eval_free(chk.ev);
		return rc;
	}
	*out = chk.ev;
	return 0;
}
