/*
 * spfkit_check(): the blocking driver over any resolver (the CLI's way).
 * Every question the evaluation files is sent at once, so lookahead
 * questions travel in parallel; when the result is known, questions still
 * outstanding (lookahead that strict evaluation never needed) are
 * cancelled, as the resolver contract allows.
 */
#include <string.h>
#include <time.h>

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
	int64_t deadline_ms; /* CLOCK_MONOTONIC */
	int expired;         /* the time budget is spent: every question fails */
};

static const struct spfkit_dns_answer out_of_time = {
	.status = SPFKIT_DNS_TEMPFAIL, .detail = spfkit__reason_texts[SPFKIT_REASON_TIME_BUDGET]};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* An answer the evaluation could not keep (out of memory) ends the check
 * with that error: its question would otherwise stay open for ever. */
static void answer_or_fail(struct check *chk, uint32_t id, const struct spfkit_dns_answer *a)
{
	int rc = spfkit_eval_answer(chk->ev, id, a);

	if (rc != 0 && chk->rc == 0)
		chk->rc = rc;
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
		.status = SPFKIT_DNS_TEMPFAIL, .detail = spfkit__reason_texts[SPFKIT_REASON_DNS_SUBMIT]};
	struct inflight *slot = free_slot(chk);

	if (slot == NULL || chk->expired) {
		answer_or_fail(chk, q->id, chk->expired ? &out_of_time : &refused);
		return;
	}
	slot->chk = chk;
	slot->id = q->id;
	chk->outstanding++;
	if (spfkit_resolver_submit(chk->resolver, q->name, q->name_len, q->type, on_answer, slot,
				   &slot->handle) != 0)
		on_answer(slot, &refused); /* a failed submit never calls back */
}

/* Cancel what is still open; with `fail`, answer it "out of time" too. */
static void cancel_outstanding(struct check *chk, int fail)
{
	size_t i;

	for (i = 0; i < chk->used; i++) {
		if (chk->slots[i].id == 0)
			continue;
		spfkit_resolver_cancel(chk->resolver, chk->slots[i].handle);
		if (fail)
			answer_or_fail(chk, chk->slots[i].id, &out_of_time);
		chk->slots[i].id = 0;
	}
	chk->outstanding = 0;
}

/* Wait for answers until the budget runs out (RFC 7208 §4.6.4). */
static int wait_answers(struct check *chk)
{
	int64_t left = chk->deadline_ms - now_ms();
	int rc;

	if (left <= 0) {
		chk->expired = 1;
		cancel_outstanding(chk, 1);
		return 0;
	}
	rc = spfkit_resolver_wait(chk->resolver, left > 0x7fffffff ? 0x7fffffff : (int)left);
	return rc < 0 ? rc : 0;
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
			if (chk->rc != 0)
				return chk->rc;
			continue;
		}
		if (chk->outstanding == 0)
			return SPFKIT_ESTATE; /* waiting for nothing: a bug, not a hang */
		rc = wait_answers(chk);
		if (rc < 0)
			return rc;
		if (chk->rc != 0)
			return chk->rc;
	}
}

/* record NULL: the top record is fetched (spfkit_check()). */
static int check_run(const struct spfkit_ctx *ctx, struct spfkit_resolver *resolver,
		     const struct spfkit_request *req, const char *record, size_t record_len,
		     struct spfkit_eval **out)
{
	struct check chk;
	int rc;

	if (out == NULL || resolver == NULL || ctx == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	memset(&chk, 0, sizeof(chk));
	chk.resolver = resolver;
	chk.deadline_ms = now_ms() + ctx->time_budget_ms;
	chk.nslots = EVAL_MAX_QUERIES;
	/* Not zeroed: only slots below the high-water mark are ever read. */
	chk.slots = spfkit__alloc(ctx->alloc, chk.nslots * sizeof(*chk.slots));
	if (chk.slots == NULL)
		return SPFKIT_ENOMEM;
	if (record != NULL)
		rc = spfkit_eval_new_record(ctx, req, record, record_len, &chk.ev);
	else
		rc = spfkit_eval_new(ctx, req, &chk.ev);
	if (rc == 0)
		rc = drive(&chk);
	cancel_outstanding(&chk, 0);
	spfkit__free(ctx->alloc, chk.slots);
	if (rc != SPFKIT_STEP_DONE) {
		spfkit_eval_free(chk.ev);
		return rc;
	}
	*out = chk.ev;
	return 0;
}

int spfkit_check(const struct spfkit_ctx *ctx, struct spfkit_resolver *resolver,
		 const struct spfkit_request *req, struct spfkit_eval **out)
{
	return check_run(ctx, resolver, req, NULL, 0, out);
}

int spfkit_check_record(const struct spfkit_ctx *ctx, struct spfkit_resolver *resolver,
			const struct spfkit_request *req, const char *record, size_t record_len,
			struct spfkit_eval **out)
{
	if (record == NULL) {
		if (out != NULL)
			*out = NULL;
		return SPFKIT_EINVAL;
	}
	return check_run(ctx, resolver, req, record, record_len, out);
}
