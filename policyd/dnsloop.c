/* A resolver in a libevent loop: c-ares sockets and timer, or a wait(0) pump. */
#include <string.h>

#include "core.h"
#include "dnsloop.h"

#include <spfkit/cache.h>
#include <spfkit/cares.h>

/* One watched c-ares socket. */
struct watch {
	struct event *ev;
	int fd;
	unsigned events;
	struct spfkit__dnsloop *dl;
	struct watch *next;
};

struct spfkit__dnsloop {
	struct event_base *base;
	struct spfkit_resolver *r;
	struct spfkit_resolver *cache; /* NULL, or a cache layer over r */
	int is_cares;
	struct event *timer;   /* c-ares timeouts, or the pump */
	struct event *deliver; /* the cache layer's queued hits */
	struct watch *watches;
};

static void rearm(struct spfkit__dnsloop *dl)
{
	int ms = spfkit_cares_timeout(dl->r);
	struct timeval tv;

	if (ms < 0) {
		evtimer_del(dl->timer);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(dl->timer, &tv);
}

static void on_fd(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;
	struct spfkit__dnsloop *dl = w->dl;
	unsigned ev = 0;

	if (what & EV_READ)
		ev |= SPFKIT_CARES_READ;
	if (what & EV_WRITE)
		ev |= SPFKIT_CARES_WRITE;
	/* w may be freed from inside: the watcher is told when c-ares closes fd */
	(void)spfkit_cares_process_fd(dl->r, (int)fd, ev);
	rearm(dl);
}

static void drop_watch(struct spfkit__dnsloop *dl, int fd)
{
	struct watch **pp = &dl->watches;

	while (*pp != NULL) {
		struct watch *w = *pp;

		if (w->fd == fd) {
			*pp = w->next;
			event_free(w->ev);
			spfkit__free(NULL, w);
			return;
		}
		pp = &w->next;
	}
}

static void on_watch(void *arg, int fd, unsigned events)
{
	struct spfkit__dnsloop *dl = arg;
	struct watch *w;
	short what = EV_PERSIST;

	if (fd < 0)
		return; /* the timeout moved: rearm() runs after every call in */
	drop_watch(dl, fd);
	if (events == 0)
		return;
	w = spfkit__zalloc(NULL, sizeof(*w));
	if (w == NULL)
		return; /* the question then times out; nothing else to do */
	if (events & SPFKIT_CARES_READ)
		what |= EV_READ;
	if (events & SPFKIT_CARES_WRITE)
		what |= EV_WRITE;
	w->ev = event_new(dl->base, fd, what, on_fd, w);
	if (w->ev == NULL) {
		spfkit__free(NULL, w);
		return;
	}
	w->fd = fd;
	w->events = events;
	w->dl = dl;
	w->next = dl->watches;
	dl->watches = w;
	event_add(w->ev, NULL);
}

/* Called from inside the cache layer's submit: only schedule. */
static void on_ready(void *arg)
{
	struct spfkit__dnsloop *dl = arg;

	event_active(dl->deliver, EV_TIMEOUT, 0);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__dnsloop *dl = arg;

	(void)fd;
	(void)what;
	(void)spfkit_cache_deliver(dl->cache);
	rearm(dl);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__dnsloop *dl = arg;

	(void)fd;
	(void)what;
	if (dl->is_cares) {
		(void)spfkit_cares_process_timeout(dl->r);
		rearm(dl);
		return;
	}
	/* the pump: deliver what the backend has queued, one batch per turn */
	while (spfkit_resolver_wait(dl->r, 0) > 0)
		;
}

int spfkit__dnsloop_new(struct event_base *base, struct spfkit_resolver *r,
			struct spfkit_resolver *cache, struct spfkit__dnsloop **out)
{
	struct spfkit__dnsloop *dl = spfkit__zalloc(NULL, sizeof(*dl));

	if (dl == NULL)
		return SPFKIT_ENOMEM;
	dl->base = base;
	dl->r = r;
	dl->timer = evtimer_new(base, on_timer, dl);
	if (dl->timer == NULL) {
		spfkit__free(NULL, dl);
		return SPFKIT_ENOMEM;
	}
	dl->is_cares = spfkit_cares_set_watch(r, on_watch, dl) == 0;
	if (dl->is_cares && cache != NULL) {
		dl->deliver = event_new(base, -1, 0, on_deliver, dl);
		if (dl->deliver == NULL || spfkit_cache_set_ready(cache, on_ready, dl) != 0) {
			spfkit__dnsloop_free(dl);
			return SPFKIT_ENOMEM;
		}
		dl->cache = cache;
	}
	*out = dl;
	return 0;
}

void spfkit__dnsloop_kick(struct spfkit__dnsloop *dl)
{
	static const struct timeval now = {0, 0};

	if (dl->is_cares) {
		rearm(dl);
		return;
	}
	if (!evtimer_pending(dl->timer, NULL))
		evtimer_add(dl->timer, &now);
}

void spfkit__dnsloop_free(struct spfkit__dnsloop *dl)
{
	if (dl == NULL)
		return;
	if (dl->cache != NULL)
		(void)spfkit_cache_set_ready(dl->cache, NULL, NULL);
	if (dl->deliver != NULL)
		event_free(dl->deliver);
	if (dl->is_cares)
		(void)spfkit_cares_set_watch(dl->r, NULL, NULL);
	while (dl->watches != NULL)
		drop_watch(dl, dl->watches->fd);
	event_free(dl->timer);
	spfkit__free(NULL, dl);
}
