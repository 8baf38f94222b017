/*
 * spfkit_event_attach_pump() and spfkit_event_kick() (lib/event): a
 * resolver with no sockets, the zone backend, driven from a libevent
 * loop. Built by lib/event/meson.build, beside the c-ares glue's tests,
 * because it needs libevent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include <spfkit/cache.h>
#include <spfkit/event.h>
#include <spfkit/zone.h>

/* Counts live blocks (teardown wants none left; the zone resolver keeps
 * its queue from one test body to teardown, so cmocka's own per-body
 * leak check cannot be used). `fail_after` > 0 makes that allocation
 * (counting from 1) and all later ones fail. */
struct counting {
	int n, fail_after;
	long live;
};

static int refuse(struct counting *c)
{
	return c->fail_after > 0 && ++c->n >= c->fail_after;
}

static void *t_alloc(void *user, size_t n)
{
	struct counting *c = user;
	void *p = refuse(c) ? NULL : malloc(n);

	if (p != NULL)
		c->live++;
	return p;
}

static void *t_realloc(void *user, void *old, size_t n)
{
	struct counting *c = user;
	void *p;

	if (old == NULL)
		return t_alloc(user, n);
	p = refuse(c) ? NULL : realloc(old, n);
	return p;
}

static void t_free(void *user, void *p)
{
	struct counting *c = user;

	if (p != NULL)
		c->live--;
	free(p);
}

struct t {
	struct counting count;
	struct spfkit_allocator alloc;
	struct spfkit_zone *zone;
	struct spfkit_resolver *r;
	struct event_base *base;
	struct spfkit_event *glue;
	int calls;
	int in_submit; /* set around each submit: a callback must not see it */
	int in_submit_seen;
	enum spfkit_dns_status status;
	int chain;     /* questions the callback still asks in turn */
};

static const char ZONE[] = "a.example. 300 IN A 192.0.2.1\n"
			   "b.example. 300 IN TXT \"v=spf1 -all\"\n";

static int setup(void **state)
{
	struct t *t = test_calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	t->alloc = (struct spfkit_allocator){ t_alloc, t_realloc, t_free, &t->count };
	if (spfkit_zone_new(&t->alloc, &t->zone) != 0 ||
	    spfkit_zone_load_text(t->zone, ZONE, sizeof(ZONE) - 1, "test", NULL, NULL, 0) != 0 ||
	    spfkit_zone_resolver(t->zone, &t->r) != 0)
		return -1;
	t->base = event_base_new();
	*state = t;
	return t->base != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	struct t *t = *state;

	spfkit_event_detach(t->glue);
	event_base_free(t->base);
	spfkit_resolver_free(t->r);
	spfkit_zone_free(t->zone);
	assert_int_equal(t->count.live, 0);
	test_free(t);
	return 0;
}

static void ask(struct t *t, struct spfkit_resolver *r, const char *name, uint16_t type);

static void on_answer(void *arg, const struct spfkit_dns_answer *a)
{
	struct t *t = arg;

	t->calls++;
	t->status = a->status;
	if (t->in_submit)
		t->in_submit_seen = 1;
	if (t->chain > 0) {
		t->chain--;
		ask(t, t->r, "b.example", SPFKIT_RR_TXT); /* no kick: the pump drains */
	}
}

static void ask(struct t *t, struct spfkit_resolver *r, const char *name, uint16_t type)
{
	t->in_submit = 1;
	assert_int_equal(spfkit_resolver_submit(r, name, strlen(name), type, on_answer, t, NULL), 0);
	t->in_submit = 0;
}

/* Run the loop for at most 50 ms (the pump needs no time at all). */
static void turn(struct event_base *base)
{
	struct timeval slice = { 0, 50000 };

	event_base_loopexit(base, &slice);
	assert_true(event_base_dispatch(base) >= 0);
}

static void pump_delivers_from_loop(void **state)
{
	struct t *t = *state;

	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, NULL, &t->alloc, &t->glue), 0);
	ask(t, t->r, "a.example", SPFKIT_RR_A);
	spfkit_event_kick(t->glue);
	assert_int_equal(t->calls, 0);
	turn(t->base);
	assert_int_equal(t->calls, 1);
	assert_int_equal(t->status, SPFKIT_DNS_OK);
	assert_int_equal(t->in_submit_seen, 0);
	assert_int_equal(spfkit_event_error(t->glue), 0);
}

/* What a callback asks is answered by the same pump, as dnsloop did. */
static void pump_drains_chained_questions(void **state)
{
	struct t *t = *state;

	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, NULL, &t->alloc, &t->glue), 0);
	t->chain = 3;
	ask(t, t->r, "a.example", SPFKIT_RR_A);
	spfkit_event_kick(t->glue);
	turn(t->base);
	assert_int_equal(t->calls, 4);
	assert_int_equal(t->chain, 0);
}

/* The loop does nothing for a question nobody kicked for (a zone has no
 * socket to wake it): kicking is the caller's part of the contract. */
static void pump_needs_a_kick(void **state)
{
	struct t *t = *state;

	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, NULL, &t->alloc, &t->glue), 0);
	turn(t->base); /* the kick of attach, with nothing queued */
	ask(t, t->r, "a.example", SPFKIT_RR_A);
	turn(t->base);
	assert_int_equal(t->calls, 0);
	spfkit_event_kick(t->glue);
	spfkit_event_kick(t->glue); /* a second kick before the pump adds nothing */
	turn(t->base);
	assert_int_equal(t->calls, 1);
}

/* A question queued before attach is delivered without a kick. */
static void pump_attach_delivers_queued(void **state)
{
	struct t *t = *state;

	ask(t, t->r, "a.example", SPFKIT_RR_A);
	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, NULL, &t->alloc, &t->glue), 0);
	turn(t->base);
	assert_int_equal(t->calls, 1);
}

/* A cache layer over the zone: the miss through the pump, the hit from
 * the loop's delivery event, neither from inside submit. */
static void pump_with_cache_layer(void **state)
{
	struct t *t = *state;
	struct spfkit_cache *cache;
	struct spfkit_resolver *layer;
	struct spfkit_cache_stats st;

	assert_int_equal(spfkit_cache_new(NULL, &t->alloc, &cache), 0);
	assert_int_equal(spfkit_cache_resolver(cache, t->r, &layer), 0);
	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, layer, &t->alloc, &t->glue), 0);
	ask(t, layer, "b.example", SPFKIT_RR_TXT);
	spfkit_event_kick(t->glue);
	turn(t->base);
	assert_int_equal(t->calls, 1);
	ask(t, layer, "b.example", SPFKIT_RR_TXT);
	assert_int_equal(t->calls, 1);
	turn(t->base);
	assert_int_equal(t->calls, 2);
	/* a hit and a miss in one turn: delivering the hit leaves the pump be */
	ask(t, layer, "b.example", SPFKIT_RR_TXT);
	ask(t, layer, "a.example", SPFKIT_RR_A);
	spfkit_event_kick(t->glue);
	turn(t->base);
	assert_int_equal(t->calls, 4);
	assert_int_equal(t->in_submit_seen, 0);
	spfkit_cache_stats(cache, &st);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 2);
	spfkit_event_detach(t->glue);
	t->glue = NULL;
	spfkit_resolver_free(layer);
	spfkit_cache_free(cache);
}

/* Detached with an answer queued: it stays in the resolver, no callback. */
static void pump_detach_leaves_questions(void **state)
{
	struct t *t = *state;

	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, NULL, &t->alloc, &t->glue), 0);
	ask(t, t->r, "a.example", SPFKIT_RR_A);
	spfkit_event_kick(t->glue);
	spfkit_event_detach(t->glue);
	t->glue = NULL;
	turn(t->base);
	assert_int_equal(t->calls, 0);
	assert_int_equal(spfkit_resolver_wait(t->r, 0), 1);
	assert_int_equal(t->calls, 1);
}

static void pump_rejects(void **state)
{
	struct t *t = *state;
	struct spfkit_event *g = (struct spfkit_event *)1;

	assert_int_equal(spfkit_event_attach_pump(NULL, t->r, NULL, NULL, &g), SPFKIT_EINVAL);
	assert_null(g);
	assert_int_equal(spfkit_event_attach_pump(t->base, NULL, NULL, NULL, &g), SPFKIT_EINVAL);
	/* the zone resolver is not a cache layer */
	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, t->r, NULL, &g), SPFKIT_EINVAL);
	assert_int_equal(spfkit_event_attach_pump(t->base, t->r, NULL, NULL, NULL), SPFKIT_EINVAL);
	spfkit_event_kick(NULL);
}

/* Every allocation of attach failing in turn: ENOMEM, nothing leaked. */
static void pump_attach_out_of_memory(void **state)
{
	struct t *t = *state;
	int i, rc = SPFKIT_ENOMEM;

	for (i = 1; rc == SPFKIT_ENOMEM && i < 16; i++) {
		t->count.n = 0;
		t->count.fail_after = i;
		rc = spfkit_event_attach_pump(t->base, t->r, NULL, &t->alloc, &t->glue);
		if (rc == SPFKIT_ENOMEM)
			assert_null(t->glue);
	}
	t->count.fail_after = 0;
	assert_int_equal(rc, 0);
	assert_true(i > 2); /* at least one failure was met */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(pump_delivers_from_loop),
		T(pump_drains_chained_questions),
		T(pump_needs_a_kick),
		T(pump_attach_delivers_queued),
		T(pump_with_cache_layer),
		T(pump_detach_leaves_questions),
		T(pump_rejects),
		T(pump_attach_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
