/*
 * libspfkit with libspfkit-event: one evaluation driven from a libevent
 * loop instead of a blocking spfkit_check(). The evaluation asks its
 * questions (spfkit_eval_step), the resolver answers them from inside the
 * loop (a callback), each answer goes back (spfkit_eval_answer), until
 * the result is ready.
 *
 * The resolver here is the offline zone backend, pumped from the loop
 * (spfkit_event_attach_pump); with real DNS it is spfkit_cares_new() and
 * spfkit_event_attach(), and the rest stays the same.
 *
 *   cc event_loop.c $(pkg-config --cflags --libs spfkit-event) -o event_loop
 *   ./event_loop data/demo.zone
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <spfkit/event.h>
#include <spfkit/spfkit.h>

struct ticket;

struct run {
	struct spfkit_eval *ev;
	struct ticket *tickets; /* one per question asked, freed at the end */
	struct spfkit_resolver *resolver;
	struct spfkit_event *glue;
	struct event_base *base;
	int failed;
};

/* Per question: the run and the question's id, for the callback. */
struct ticket {
	struct run *run;
	uint32_t id;
	struct ticket *next;
};

static void drive(struct run *r);

/* An answer, from inside the loop: hand it in, ask what comes next. */
static void on_answer(void *arg, const struct spfkit_dns_answer *answer)
{
	struct ticket *t = arg;

	if (spfkit_eval_answer(t->run->ev, t->id, answer) != 0)
		t->run->failed = 1;
	drive(t->run);
}

/* Send every question the evaluation has; stop the loop when it is done. */
static void drive(struct run *r)
{
	struct spfkit_question q;
	int step = SPFKIT_STEP_WAIT;

	while (!r->failed && (step = spfkit_eval_step(r->ev, &q)) == SPFKIT_STEP_QUERY) {
		struct ticket *t = malloc(sizeof(*t));

		if (t == NULL) {
			r->failed = 1;
			break;
		}
		*t = (struct ticket){.run = r, .id = q.id, .next = r->tickets};
		r->tickets = t;
		if (spfkit_resolver_submit(r->resolver, q.name, q.name_len, q.type, on_answer, t,
					   NULL) != 0)
			r->failed = 1;
	}
	if (r->failed || step < 0 || step == SPFKIT_STEP_DONE)
		event_base_loopbreak(r->base);
	else
		spfkit_event_kick(r->glue); /* the questions just submitted */
}

int main(int argc, char **argv)
{
	const char *zone_file = argc > 1 ? argv[1] : "data/demo.zone";
	struct spfkit_request req;
	struct spfkit_ctx *ctx = NULL;
	struct spfkit_zone *zone = NULL;
	struct run r = {0};
	const struct spfkit_result *res;
	char err[256];
	int rc = 1;

	printf("libspfkit %s\n", spfkit_version());
	spfkit_request_init(&req);
	req.sender = "alice@example.com";
	req.sender_len = strlen(req.sender);
	req.helo = "mx1.example.com";
	req.helo_len = strlen(req.helo);
	if (spfkit_ctx_new(NULL, &ctx) != 0 || spfkit_zone_new(NULL, &zone) != 0)
		goto out;
	if (spfkit_zone_load_file(zone, zone_file, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	if (spfkit_zone_resolver(zone, &r.resolver) != 0 ||
	    spfkit_ip_parse("192.0.2.10", strlen("192.0.2.10"), &req.ip) != 0 ||
	    spfkit_eval_new(ctx, &req, &r.ev) != 0 || (r.base = event_base_new()) == NULL ||
	    spfkit_event_attach_pump(r.base, r.resolver, NULL, NULL, &r.glue) != 0)
		goto out;
	drive(&r);
	if (!r.failed && spfkit_eval_result(r.ev) == NULL)
		event_base_dispatch(r.base); /* returns at event_base_loopbreak() */
	res = spfkit_eval_result(r.ev);
	if (r.failed || res == NULL)
		goto out;
	printf("%s (%s, %u DNS questions)\n", spfkit_result_name(res->code),
	       res->mechanism != NULL ? res->mechanism : "default", res->queries);
	rc = res->code == SPFKIT_RESULT_PASS ? 0 : 1;
out:
	spfkit_event_detach(r.glue); /* before the resolver and the base */
	if (r.base != NULL)
		event_base_free(r.base);
	spfkit_eval_free(r.ev);
	spfkit_resolver_free(r.resolver); /* questions still pending are dropped */
	while (r.tickets != NULL) {
		struct ticket *next = r.tickets->next;

		free(r.tickets);
		r.tickets = next;
	}
	spfkit_zone_free(zone);
	spfkit_ctx_free(ctx);
	return rc;
}
