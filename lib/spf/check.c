/* spfkit_check(): the blocking loop over any resolver (the CLI's way). */
#include "eval_int.h"

struct pending {
	struct spfkit_eval *ev;
	uint32_t id;
	int rc;
};

static void on_answer(void *arg, const struct spfkit_dns_answer *answer)
{
	struct pending *p = arg;
	int rc = spfkit_eval_answer(p->ev, p->id, answer);

	if (rc != 0 && p->rc == 0)
		p->rc = rc;
	p->id = 0;
}

/* Strict sequential evaluation asks one question at a time. */
static int ask(struct spfkit_resolver *r, struct pending *p, const struct spfkit_question *q)
{
	static const struct spfkit_dns_answer submit_failed = {
		.status = SPFKIT_DNS_TEMPFAIL, .detail = "the resolver refused the question"};
	uint64_t handle;

	p->id = q->id;
	if (spfkit_resolver_submit(r, q->name, q->name_len, q->type, on_answer, p, &handle) != 0)
		on_answer(p, &submit_failed);
	while (p->id != 0) {
		int rc = spfkit_resolver_wait(r, -1);

		if (rc < 0)
			return rc;
	}
	return p->rc;
}

int spfkit_check(const struct spfkit_ctx *ctx, struct spfkit_resolver *resolver,
		 const struct spfkit_request *req, struct spfkit_eval **out)
{
	struct pending p = {0};
	struct spfkit_question q;
	struct spfkit_eval *ev;
	int rc;

	if (out == NULL || resolver == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	rc = spfkit_eval_new(ctx, req, &ev);
	if (rc != 0)
		return rc;
	p.ev = ev;
	for (;;) {
		rc = spfkit_eval_step(ev, &q);
		if (rc == SPFKIT_STEP_DONE || rc < 0)
			break;
		if (rc == SPFKIT_STEP_QUERY)
			rc = ask(resolver, &p, &q);
		else
			rc = SPFKIT_ESTATE; /* WAIT with nothing outstanding: cannot happen here */
		if (rc != 0)
			break;
	}
	if (rc != SPFKIT_STEP_DONE) {
		spfkit_eval_free(ev);
		return rc;
	}
	*out = ev;
	return 0;
}
