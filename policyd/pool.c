/*
 * --workers: one spfkit__policyd per thread, each on its own libevent
 * loop with its own resolver, configuration and identity cache; the DNS
 * answer cache is one for all (spfkit_cache is thread-safe).
 *
 * Why one acceptor and hand-off rather than SO_REUSEPORT or every worker
 * accepting on the same socket: the daemon listens on UNIX sockets too
 * (Postfix's usual private/policy-spf), where SO_REUSEPORT does not
 * spread connections, and its limits (--max-connections, --max-per-client)
 * and the backlog behaviour when full (clients wait, none is accepted and
 * closed) need one place that counts every connection. So worker 0, the
 * main thread, accepts on every listener, counts the connection and gives
 * it to the worker with the fewest; the connection then lives on that
 * worker alone, with no lock on the request path. Postfix keeps one
 * connection per smtpd process and sends all of a message's queries on
 * it, so the per-message identity cache may stay per worker.
 *
 * The workers talk through mailboxes: a list under a mutex, and a pipe
 * byte that wakes the receiving loop when the list stops being empty.
 * Messages carry their values, so no memory is shared but through the
 * mutex. Everything about a connection's slot (its address, for the
 * per-client limit) is touched by worker 0 only.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "engine.h"
#include "internal.h"
#include "log.h"

/* Worker 0's record of one connection, wherever it is served. */
struct pool_slot {
	struct spfkit_ip addr;
	int has_addr;
	unsigned worker;
	struct spfkit__link link; /* in the pool's slots */
};

static struct pool_slot *slot_of(const struct spfkit__link *k)
{
	return SPFKIT__LIST_ENTRY(k, struct pool_slot, link);
}

enum pool_msg_kind {
	MSG_CONN,   /* to a worker: serve this accepted descriptor */
	MSG_CLOSED, /* to worker 0: the connection of this slot is gone */
	MSG_DONE,   /* to worker 0: drained, the worker's loop has ended */
	MSG_RELOAD, /* SIGHUP */
	MSG_DRAIN,  /* SIGTERM */
	MSG_STOP,   /* the grace time is over: end the loop now */
	MSG_ROOM,   /* over --max-connections: close an idle connection, if any */
	MSG_NO_ROOM, /* to worker 0: none was idle here */
};

struct pool_msg {
	enum pool_msg_kind kind;
	int fd;
	struct pool_slot *slot; /* opaque to every worker but 0 */
	int has_addr;
	struct spfkit_ip addr;
	int make_room; /* MSG_CONN at the limit: close an idle connection first */
	char peer[96];
	struct pool_msg *next;
};

struct mailbox {
	pthread_mutex_t lock;
	struct pool_msg *head, *tail;
	int wake[2]; /* non-blocking pipe: a byte when the list stopped being empty */
	struct event *ev;
	struct spfkit__policyd *srv;
};

struct spfkit__policyd_pool {
	unsigned n;
	struct spfkit__policyd **srv;
	struct mailbox *mb;
	pthread_t *tid;
	int *running;
	/* worker 0's: every open connection, and how many each worker has */
	struct spfkit__list slots; /* of struct pool_slot */
	size_t n_slots;
	size_t *load;
	unsigned done; /* workers past their drain */
	unsigned next; /* round-robin start among the least loaded */
	unsigned next_room; /* the worker asked next for room (spfkit__policyd_pool_make_room) */
};

static void post(struct mailbox *mb, struct pool_msg *m)
{
	int was_empty;

	m->next = NULL;
	pthread_mutex_lock(&mb->lock);
	was_empty = mb->head == NULL;
	if (mb->tail != NULL)
		mb->tail->next = m;
	else
		mb->head = m;
	mb->tail = m;
	pthread_mutex_unlock(&mb->lock);
	/* a full pipe already holds a wake-up: EAGAIN loses nothing */
	if (was_empty && write(mb->wake[1], "m", 1) < 0 && errno != EAGAIN)
		spfkit__mta_log_printf(LOG_ERR, "worker mailbox: %s", strerror(errno));
}

static int post_kind(struct mailbox *mb, enum pool_msg_kind kind, struct pool_slot *slot)
{
	struct pool_msg *m = spfkit__zalloc(NULL, sizeof(*m));

	if (m == NULL)
		return SPFKIT_ENOMEM;
	m->kind = kind;
	m->fd = -1;
	m->slot = slot;
	post(mb, m);
	return 0;
}

static void slot_release(struct spfkit__policyd_pool *p, struct pool_slot *s)
{
	spfkit__list_unlink(&p->slots, &s->link);
	p->n_slots--;
	p->load[s->worker]--;
	spfkit__free(NULL, s);
}

static void handle(struct spfkit__policyd *srv, struct pool_msg *m)
{
	struct spfkit__policyd_pool *p = srv->pool;

	switch (m->kind) {
	case MSG_CONN:
		if (m->make_room)
			(void)spfkit__policyd_make_room(srv, 0);
		if (spfkit__policyd_adopt(srv, m->fd, m->peer, m->has_addr ? &m->addr : NULL,
					  m->slot) != 0) {
			close(m->fd);
			spfkit__policyd_pool_closed(srv, m->slot);
		}
		break;
	case MSG_CLOSED:
		slot_release(p, m->slot);
		spfkit__policyd_accept_on_close(srv);
		break;
	case MSG_DONE:
		p->done++;
		spfkit__policyd_pool_drained(srv);
		break;
	case MSG_RELOAD:
		(void)spfkit__policyd_reload(srv);
		break;
	case MSG_DRAIN:
		spfkit__policyd_drain(srv);
		break;
	case MSG_STOP:
		event_base_loopexit(srv->base, NULL);
		break;
	case MSG_ROOM:
		(void)spfkit__policyd_make_room(srv, 1);
		break;
	case MSG_NO_ROOM:
		spfkit__policyd_room_later(srv);
		break;
	}
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct mailbox *mb = arg;
	struct pool_msg *m, *next;
	char drain[64];

	(void)what;
	/* empty the pipe first: a message posted after this wakes us again */
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&mb->lock);
	m = mb->head;
	mb->head = mb->tail = NULL;
	pthread_mutex_unlock(&mb->lock);
	for (; m != NULL; m = next) {
		next = m->next;
		handle(mb->srv, m);
		spfkit__free(NULL, m);
	}
}

static int mailbox_init(struct mailbox *mb, struct spfkit__policyd *srv)
{
	int i;

	mb->srv = srv;
	mb->wake[0] = mb->wake[1] = -1;
	if (pthread_mutex_init(&mb->lock, NULL) != 0)
		return SPFKIT_ENOMEM;
	if (pipe(mb->wake) != 0)
		return SPFKIT_ENOMEM;
	for (i = 0; i < 2; i++)
		if (fcntl(mb->wake[i], F_SETFD, FD_CLOEXEC) != 0 ||
		    fcntl(mb->wake[i], F_SETFL, O_NONBLOCK) != 0)
			return SPFKIT_ENOMEM;
	mb->ev = event_new(srv->base, mb->wake[0], EV_READ | EV_PERSIST, on_wake, mb);
	if (mb->ev == NULL || event_add(mb->ev, NULL) != 0)
		return SPFKIT_ENOMEM;
	return 0;
}

static void mailbox_clear(struct mailbox *mb)
{
	struct pool_msg *m, *next;

	if (mb->srv == NULL)
		return;
	if (mb->ev != NULL)
		event_free(mb->ev);
	for (m = mb->head; m != NULL; m = next) {
		next = m->next;
		if (m->kind == MSG_CONN)
			close(m->fd);
		spfkit__free(NULL, m);
	}
	if (mb->wake[0] >= 0)
		close(mb->wake[0]);
	if (mb->wake[1] >= 0)
		close(mb->wake[1]);
	pthread_mutex_destroy(&mb->lock);
}

void spfkit__policyd_pool_free(struct spfkit__policyd_pool *p)
{
	unsigned i;

	if (p == NULL)
		return;
	/* the servers may be gone already; their event bases may not */
	for (i = 0; i < p->n; i++)
		mailbox_clear(&p->mb[i]);
	while (!spfkit__list_empty(&p->slots))
		slot_release(p, slot_of(p->slots.head));
	spfkit__free(NULL, p->mb);
	spfkit__free(NULL, p->tid);
	spfkit__free(NULL, p->running);
	spfkit__free(NULL, p->load);
	spfkit__free(NULL, p->srv);
	spfkit__free(NULL, p);
}

int spfkit__policyd_pool_new(struct spfkit__policyd **srv, unsigned n,
			     struct spfkit__policyd_pool **out)
{
	struct spfkit__policyd_pool *p = spfkit__zalloc(NULL, sizeof(*p));
	unsigned i;

	if (p == NULL)
		return SPFKIT_ENOMEM;
	p->n = n;
	p->srv = spfkit__zalloc(NULL, n * sizeof(*p->srv));
	p->mb = spfkit__zalloc(NULL, n * sizeof(*p->mb));
	p->tid = spfkit__zalloc(NULL, n * sizeof(*p->tid));
	p->running = spfkit__zalloc(NULL, n * sizeof(*p->running));
	p->load = spfkit__zalloc(NULL, n * sizeof(*p->load));
	if (p->srv == NULL || p->mb == NULL || p->tid == NULL || p->running == NULL ||
	    p->load == NULL) {
		spfkit__policyd_pool_free(p);
		return SPFKIT_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		p->srv[i] = srv[i];
		srv[i]->pool = p;
		srv[i]->worker = i;
		if (mailbox_init(&p->mb[i], srv[i]) != 0) {
			spfkit__policyd_pool_free(p);
			return SPFKIT_ENOMEM;
		}
	}
	*out = p;
	return 0;
}

static void *worker_main(void *arg)
{
	struct spfkit__policyd *srv = arg;

	spfkit__mta_run(srv->base);
	return NULL;
}

int spfkit__policyd_pool_start(struct spfkit__policyd_pool *p)
{
	sigset_t all, old;
	unsigned i;
	int rc = 0;

	/* the signals are worker 0's (its loop has the handlers) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 1; i < p->n; i++) {
		if (pthread_create(&p->tid[i], NULL, worker_main, p->srv[i]) != 0) {
			rc = SPFKIT_ENOMEM;
			break;
		}
		p->running[i] = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void spfkit__policyd_pool_join(struct spfkit__policyd_pool *p)
{
	unsigned i;

	for (i = 1; i < p->n; i++) {
		if (!p->running[i])
			continue;
		(void)post_kind(&p->mb[i], MSG_STOP, NULL);
		pthread_join(p->tid[i], NULL);
		p->running[i] = 0;
	}
}

void spfkit__policyd_pool_broadcast(struct spfkit__policyd_pool *p, int sig_kind)
{
	unsigned i;
	enum pool_msg_kind kind = sig_kind == SPFKIT__POOL_RELOAD ? MSG_RELOAD
				  : sig_kind == SPFKIT__POOL_DRAIN ? MSG_DRAIN
								   : MSG_STOP;

	for (i = 1; i < p->n; i++)
		if (post_kind(&p->mb[i], kind, NULL) != 0)
			spfkit__policyd_log(p->srv[0], LOG_ERR,
					    "out of memory telling worker %u of a signal", i);
}

size_t spfkit__policyd_pool_conns(const struct spfkit__policyd_pool *p)
{
	return p->n_slots;
}

size_t spfkit__policyd_pool_conns_from(const struct spfkit__policyd_pool *p,
				       const struct spfkit_ip *ip)
{
	const struct pool_slot *s;
	size_t n = 0;

	for (s = slot_of(p->slots.head); s != NULL; s = slot_of(s->link.next))
		if (s->has_addr && s->addr.family == ip->family &&
		    memcmp(s->addr.addr, ip->addr, sizeof(ip->addr)) == 0)
			n++;
	return n;
}

/* The worker with the most connections: the most to choose an idle one from. */
static unsigned most_loaded(const struct spfkit__policyd_pool *p)
{
	unsigned i, best = 0;

	for (i = 1; i < p->n; i++)
		if (p->load[i] > p->load[best])
			best = i;
	return best;
}

/* The worker with the fewest connections, taking turns among equals. */
static unsigned least_loaded(struct spfkit__policyd_pool *p)
{
	unsigned i, best = p->next % p->n;

	for (i = 0; i < p->n; i++) {
		unsigned w = (p->next + i) % p->n;

		if (p->load[w] < p->load[best])
			best = w;
	}
	p->next = best + 1;
	return best;
}

/*
 * At the limit (make_room), the connection goes to the worker with the
 * most, which closes its idle one first (spfkit__policyd_make_room()):
 * the loads stay as they were, and worker 0 counts one over the limit
 * until that close comes back as MSG_CLOSED.
 */
int spfkit__policyd_pool_place(struct spfkit__policyd *srv, int fd, const char *peer,
			       const struct spfkit_ip *addr, int make_room)
{
	struct spfkit__policyd_pool *p = srv->pool;
	struct pool_slot *s = spfkit__zalloc(NULL, sizeof(*s));
	struct pool_msg *m;

	if (s == NULL)
		return SPFKIT_ENOMEM;
	if (addr != NULL) {
		s->has_addr = 1;
		s->addr = *addr;
	}
	s->worker = make_room ? most_loaded(p) : least_loaded(p);
	spfkit__list_push_front(&p->slots, &s->link);
	p->n_slots++;
	p->load[s->worker]++;
	if (s->worker == srv->worker) {
		if (make_room)
			(void)spfkit__policyd_make_room(srv, 0);
		if (spfkit__policyd_adopt(srv, fd, peer, addr, s) != 0) {
			slot_release(p, s);
			return SPFKIT_ENOMEM;
		}
		return 0;
	}
	m = spfkit__zalloc(NULL, sizeof(*m));
	if (m == NULL) {
		slot_release(p, s);
		return SPFKIT_ENOMEM;
	}
	m->kind = MSG_CONN;
	m->fd = fd;
	m->slot = s;
	m->has_addr = addr != NULL;
	if (addr != NULL)
		m->addr = *addr;
	m->make_room = make_room;
	snprintf(m->peer, sizeof(m->peer), "%s", peer);
	post(&p->mb[s->worker], m);
	return 0;
}

void spfkit__policyd_pool_make_room(struct spfkit__policyd_pool *p)
{
	unsigned w = p->next_room++ % p->n;

	if (w == 0)
		(void)spfkit__policyd_make_room(p->srv[0], 1);
	else if (post_kind(&p->mb[w], MSG_ROOM, NULL) != 0)
		spfkit__policyd_log(p->srv[0], LOG_ERR, "out of memory asking worker %u for room", w);
}

void spfkit__policyd_pool_no_room(struct spfkit__policyd *srv)
{
	if (post_kind(&srv->pool->mb[0], MSG_NO_ROOM, NULL) != 0)
		spfkit__policyd_log(srv, LOG_ERR, "out of memory telling worker 0 there is no room");
}

void spfkit__policyd_pool_closed(struct spfkit__policyd *srv, struct pool_slot *slot)
{
	struct spfkit__policyd_pool *p = srv->pool;

	if (srv->worker == 0) {
		slot_release(p, slot);
		return;
	}
	if (post_kind(&p->mb[0], MSG_CLOSED, slot) != 0)
		spfkit__policyd_log(srv, LOG_ERR, "out of memory handing a closed connection back; "
				    "its slot stays counted");
}

void spfkit__policyd_pool_drained(struct spfkit__policyd *srv)
{
	struct spfkit__policyd_pool *p = srv->pool;

	if (!srv->draining || !spfkit__list_empty(&srv->conns))
		return;
	if (srv->worker != 0) {
		if (!srv->done_sent && post_kind(&p->mb[0], MSG_DONE, NULL) == 0)
			srv->done_sent = 1;
		event_base_loopexit(srv->base, NULL);
		return;
	}
	if (p->done + 1 >= p->n)
		event_base_loopexit(srv->base, NULL);
}
