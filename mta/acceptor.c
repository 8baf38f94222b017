/*
 * Accepting with a cap and a back-off (see acceptor.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <event2/event.h>
#include <event2/listener.h>

#include <spfkit/common.h>

#include "acceptor.h"
#include "log.h"
#include "ratelog.h"
#include "spfkit_util.h"

#define MAX_LISTENERS 16

struct spfkit__mta_acceptor {
	struct spfkit__mta_acceptor_opts o;
	struct evconnlistener *l[MAX_LISTENERS];
	size_t n_l;
	struct event *pause; /* pending while accept() rests */
	size_t open;
	int on;              /* listeners enabled */
	int stopped;
	struct spfkit__mta_ratelog log_error, log_full;
};

static void set_on(struct spfkit__mta_acceptor *a, int on)
{
	size_t i;

	if (a->on == on)
		return;
	for (i = 0; i < a->n_l; i++) {
		if (on)
			evconnlistener_enable(a->l[i]);
		else
			evconnlistener_disable(a->l[i]);
	}
	a->on = on;
}

static size_t count(const struct spfkit__mta_acceptor *a)
{
	return a->o.count != NULL ? a->o.count(a->o.arg) : a->open;
}

static int full(const struct spfkit__mta_acceptor *a)
{
	return a->o.max_connections > 0 && count(a) >= a->o.max_connections;
}

static void say(const struct spfkit__mta_acceptor *a, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(const struct spfkit__mta_acceptor *a, int prio, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (a->o.log == NULL) {
		spfkit__mta_log_vprintf(prio, fmt, ap);
		va_end(ap);
		return;
	}
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n >= 0)
		a->o.log(a->o.arg, prio, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* Accept again unless stopped, full, or resting after accept() failed. */
static void resume(struct spfkit__mta_acceptor *a)
{
	if (a->stopped || full(a) || evtimer_pending(a->pause, NULL))
		return;
	set_on(a, 1);
}

static void on_pause_end(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	resume(arg);
}

/*
 * accept() failed. For a lack of descriptors or memory, retrying at once
 * fails again: rest for pause_ms, or until one of ours closes and gives
 * a descriptor back. Other errors (a client that reset before we took
 * it) are the client's: libevent goes on.
 */
static void on_error(struct evconnlistener *l, void *arg)
{
	struct spfkit__mta_acceptor *a = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval rest = {a->o.pause_ms / 1000, (a->o.pause_ms % 1000) * 1000};
	char note[SPFKIT__MTA_RATELOG_NOTE_MAX];

	(void)l;
	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
		return;
	set_on(a, 0);
	evtimer_add(a->pause, &rest);
	if (spfkit__mta_ratelog_due(&a->log_error, a->o.log_interval_s, note))
		say(a, LOG_ERR, "accept: %s with %zu connections open; not accepting for %d ms or "
		    "until one closes%s", evutil_socket_error_to_string(err), count(a), a->o.pause_ms,
		    note);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	struct spfkit__mta_acceptor *a = arg;
	char note[SPFKIT__MTA_RATELOG_NOTE_MAX];

	(void)l;
	if (a->stopped || full(a) || a->o.on_conn((int)fd, sa, (socklen_t)salen, a->o.arg) != 0) {
		evutil_closesocket(fd);
		return;
	}
	a->open++;
	if (!full(a))
		return;
	/* the next clients wait in the backlog until one of these closes */
	set_on(a, 0);
	if (!a->o.quiet_when_full && spfkit__mta_ratelog_due(&a->log_full, a->o.log_interval_s, note))
		say(a, LOG_WARNING, "%zu connections (--max-connections): not accepting until one "
		    "closes%s", count(a), note);
}

int spfkit__mta_acceptor_new(struct event_base *base, const struct spfkit__mta_acceptor_opts *o,
			     struct spfkit__mta_acceptor **out)
{
	struct spfkit__mta_acceptor *a = spfkit__zalloc(NULL, sizeof(*a));

	if (a == NULL)
		return SPFKIT_ENOMEM;
	a->o = *o;
	a->on = 1; /* listeners start enabled */
	a->pause = evtimer_new(base, on_pause_end, a);
	if (a->pause == NULL) {
		spfkit__free(NULL, a);
		return SPFKIT_ENOMEM;
	}
	*out = a;
	return 0;
}

int spfkit__mta_acceptor_listen_fd(struct spfkit__mta_acceptor *a, int fd)
{
	struct evconnlistener *l;

	if (a->n_l == MAX_LISTENERS)
		return SPFKIT_E2BIG;
	evutil_make_socket_nonblocking(fd);
	l = evconnlistener_new(event_get_base(a->pause), on_accept, a,
			       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (l == NULL)
		return SPFKIT_ENOMEM;
	evconnlistener_set_error_cb(l, on_error);
	a->l[a->n_l++] = l;
	if (!a->on)
		evconnlistener_disable(l);
	return 0;
}

void spfkit__mta_acceptor_closed(struct spfkit__mta_acceptor *a)
{
	if (a->open > 0)
		a->open--;
	evtimer_del(a->pause);
	resume(a);
}

size_t spfkit__mta_acceptor_open(const struct spfkit__mta_acceptor *a)
{
	return count(a);
}

void spfkit__mta_acceptor_stop(struct spfkit__mta_acceptor *a)
{
	a->stopped = 1;
	set_on(a, 0);
}

void spfkit__mta_acceptor_free(struct spfkit__mta_acceptor *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n_l; i++)
		evconnlistener_free(a->l[i]);
	event_free(a->pause);
	spfkit__free(NULL, a);
}
