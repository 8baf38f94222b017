/*
 * libevent glue for the c-ares backend and the cache layer
 * (include/spfkit/event.h): the "event loop, by hand" recipe of
 * <spfkit/cares.h>, done once for libevent. A backend with no sockets
 * (the zone resolver) is pumped instead: the timer, set to fire at
 * once by spfkit_event_kick(), runs its wait(0).
 *
 * A socket's event may have to go while its own callback runs (c-ares
 * closes a TCP socket inside spfkit_cares_process_fd()); freeing it
 * there would pull the event out from under libevent. So a dropped
 * event is only deleted, parked on `dead`, and freed at the start of the
 * next callback of the glue (when it cannot be running) or at detach.
 */
#include <string.h>

#include <event2/event.h>

#include <spfkit/cache.h>
#include <spfkit/cares.h>
#include <spfkit/event.h>

#include "core.h"

struct watched {
	int fd;
	unsigned events;
	struct event *ev;
};

struct spfkit_event {
	struct event_base *base;
	struct spfkit_resolver *cares, *cache; /* cares: the backend, pumped or not */
	int pump; /* cares is not c-ares: the timer runs its wait(0) */
	const struct spfkit_allocator *alloc;
	struct watched *w;
	size_t n, cap;
	struct event **dead;
	size_t ndead, capdead;
	struct event *timer;
	struct event *deliver; /* activated when the cache queues a hit */
	int err;
};

static void note_error(struct spfkit_event *g, int err)
{
	if (g->err == 0 && err < 0)
		g->err = err;
}

/* Grow an array of `size`-byte elements to hold one more; 0 or ENOMEM. */
static int grow(const struct spfkit_allocator *a, void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return 0;
	if (ncap > SIZE_MAX / size)
		return SPFKIT_ENOMEM;
	p = spfkit__realloc(a, *arr, ncap * size);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static void bury(struct spfkit_event *g, struct event *ev)
{
	event_del(ev);
	if (grow(g->alloc, (void **)&g->dead, &g->capdead, g->ndead, sizeof(*g->dead)) != 0) {
		/* Cannot defer: leak one event rather than free a running one. */
		note_error(g, SPFKIT_ENOMEM);
		return;
	}
	g->dead[g->ndead++] = ev;
}

static void free_dead(struct spfkit_event *g)
{
	while (g->ndead > 0)
		event_free(g->dead[--g->ndead]);
}

/* ---- the timer and the cache's deliveries ----------------------------- */

static void rearm(struct spfkit_event *g)
{
	int ms;
	struct timeval tv;

	if (g->pump)
		return; /* the timer is the pump's; only a kick sets it */
	ms = spfkit_cares_timeout(g->cares);
	if (ms < 0) {
		evtimer_del(g->timer);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(g->timer, &tv);
}

/* Deliver what the backend has queued, and what its callbacks queue in
 * turn (each wait() delivers only what was queued when it was called). */
static void pump(struct spfkit_event *g)
{
	int n;

	do
		n = spfkit_resolver_wait(g->cares, 0);
	while (n > 0);
	note_error(g, n);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit_event *g = arg;

	(void)fd;
	(void)what;
	free_dead(g);
	if (g->pump) {
		pump(g);
		return;
	}
	note_error(g, spfkit_cares_process_timeout(g->cares));
	rearm(g);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit_event *g = arg;

	(void)fd;
	(void)what;
	free_dead(g);
	note_error(g, spfkit_cache_deliver(g->cache));
	rearm(g);
}

static void on_ready(void *arg)
{
	struct spfkit_event *g = arg;

	event_active(g->deliver, 0, 0);
}

/* ---- sockets ---------------------------------------------------------- */

static void on_fd(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit_event *g = arg;
	unsigned events = ((what & EV_READ) ? SPFKIT_CARES_READ : 0) |
			  ((what & EV_WRITE) ? SPFKIT_CARES_WRITE : 0);

	free_dead(g);
	note_error(g, spfkit_cares_process_fd(g->cares, (int)fd, events));
	rearm(g);
}

static struct watched *find(struct spfkit_event *g, int fd)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->w[i].fd == fd)
			return &g->w[i];
	return NULL;
}

/* A persistent event for fd with the interest asked; NULL on failure. */
static struct event *fd_event(struct spfkit_event *g, int fd, unsigned events)
{
	short flags = (short)(EV_PERSIST | ((events & SPFKIT_CARES_READ) ? EV_READ : 0) |
			      ((events & SPFKIT_CARES_WRITE) ? EV_WRITE : 0));
	struct event *ev = event_new(g->base, fd, flags, on_fd, g);

	if (ev != NULL && event_add(ev, NULL) != 0) {
		event_free(ev);
		ev = NULL;
	}
	return ev;
}

static void watch_fd(struct spfkit_event *g, int fd, unsigned events)
{
	struct watched *w = find(g, fd);

	if (w != NULL && w->events == events)
		return;
	if (w != NULL) {
		bury(g, w->ev);
		*w = g->w[--g->n];
	}
	if (events == 0)
		return;
	if (grow(g->alloc, (void **)&g->w, &g->cap, g->n, sizeof(*g->w)) != 0) {
		note_error(g, SPFKIT_ENOMEM);
		return;
	}
	w = &g->w[g->n];
	w->ev = fd_event(g, fd, events);
	if (w->ev == NULL) {
		note_error(g, SPFKIT_ENOMEM);
		return;
	}
	w->fd = fd;
	w->events = events;
	g->n++;
}

static void on_watch(void *arg, int fd, unsigned events)
{
	struct spfkit_event *g = arg;

	if (fd < 0)
		rearm(g);
	else
		watch_fd(g, fd, events);
}

/* ---- attach and detach ------------------------------------------------ */

/* The arguments are checked; `pump` says how to drive `r`. */
static int glue_new(struct event_base *base, struct spfkit_resolver *r,
		    struct spfkit_resolver *cache, const struct spfkit_allocator *alloc, int pump,
		    struct spfkit_event **out)
{
	struct spfkit_event *g = spfkit__zalloc(alloc, sizeof(*g));

	if (g == NULL)
		return SPFKIT_ENOMEM;
	g->base = base;
	g->cares = r;
	g->pump = pump;
	g->cache = cache;
	g->alloc = alloc;
	g->timer = evtimer_new(base, on_timer, g);
	g->deliver = event_new(base, -1, 0, on_deliver, g);
	if (g->timer == NULL || g->deliver == NULL) {
		spfkit_event_detach(g);
		return SPFKIT_ENOMEM;
	}
	if (!pump)
		(void)spfkit_cares_set_watch(r, on_watch, g); /* reports open sockets now */
	if (cache != NULL) {
		(void)spfkit_cache_set_ready(cache, on_ready, g);
		if (spfkit_cache_queued(cache) > 0)
			event_active(g->deliver, 0, 0);
	}
	spfkit_event_kick(g); /* questions may be waiting already */
	if (g->err != 0) {
		spfkit_event_detach(g);
		return SPFKIT_ENOMEM;
	}
	*out = g;
	return 0;
}

int spfkit_event_attach(struct event_base *base, struct spfkit_resolver *cares,
			struct spfkit_resolver *cache, const struct spfkit_allocator *alloc,
			struct spfkit_event **out)
{
	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	/* A NULL watch probes the type without taking the hook. */
	if (base == NULL || spfkit_cares_set_watch(cares, NULL, NULL) != 0 ||
	    (cache != NULL && spfkit_cache_set_ready(cache, NULL, NULL) != 0))
		return SPFKIT_EINVAL;
	return glue_new(base, cares, cache, alloc, 0, out);
}

int spfkit_event_attach_pump(struct event_base *base, struct spfkit_resolver *r,
			     struct spfkit_resolver *cache, const struct spfkit_allocator *alloc,
			     struct spfkit_event **out)
{
	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if (base == NULL || r == NULL ||
	    (cache != NULL && spfkit_cache_set_ready(cache, NULL, NULL) != 0))
		return SPFKIT_EINVAL;
	return glue_new(base, r, cache, alloc, 1, out);
}

void spfkit_event_kick(struct spfkit_event *g)
{
	static const struct timeval now = { 0, 0 };

	if (g == NULL)
		return;
	if (!g->pump) {
		rearm(g);
		return;
	}
	/* One pump drains everything, so one pending is enough. */
	if (!evtimer_pending(g->timer, NULL))
		evtimer_add(g->timer, &now);
}

void spfkit_event_detach(struct spfkit_event *g)
{
	size_t i;

	if (g == NULL)
		return;
	if (!g->pump)
		(void)spfkit_cares_set_watch(g->cares, NULL, NULL);
	if (g->cache != NULL)
		(void)spfkit_cache_set_ready(g->cache, NULL, NULL);
	for (i = 0; i < g->n; i++)
		event_free(g->w[i].ev);
	free_dead(g);
	if (g->timer != NULL)
		event_free(g->timer);
	if (g->deliver != NULL)
		event_free(g->deliver);
	spfkit__free(g->alloc, g->w);
	spfkit__free(g->alloc, g->dead);
	spfkit__free(g->alloc, g);
}

int spfkit_event_error(const struct spfkit_event *g)
{
	return g != NULL ? g->err : SPFKIT_EINVAL;
}
