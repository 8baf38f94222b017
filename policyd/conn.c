/*
 * spfkit-policyd's connections: reading requests through the pure reader
 * of proto.c (at most one request in flight per connection: Postfix waits
 * for each answer, and the rest of the input waits too), replies,
 * timeouts, backpressure, a connection's end. What a request does is in
 * request.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "acceptor.h"
#include "engine.h"
#include "internal.h"
#include "log.h"

/* ---- replies and connection life ---------------------------------------- */

/*
 * The connection's own I/O: a read event and a write event on plain
 * descriptors, not a buffer event. The buffer event's machinery (an
 * ioctl(FIONREAD) and a chunk allocated per read, a pull-up and a drain,
 * watermark callbacks, its timeouts re-armed through its own layers) cost
 * several thousand instructions per request. What it did is kept here
 * rule for rule: at most READ_MAX bytes per read, input capped at
 * INPUT_MAX (reading suspended until requests are taken), the idle
 * timeout on the read event between requests, the write timeout on the
 * write event while replies wait, and the same end for EOF, errors and
 * timeouts.
 */
/* bytes per read: libevent 2.1's evbuffer_read() takes at most 4096, and where a
 * hostile client is cut off (and what its log line shows) depends on it */
#define READ_MAX 4096u
#define INPUT_MAX (2u * SPFKIT_POLICY_MAX_REQUEST)   /* one request beyond the one being read */

static void conn_events_free(struct conn *c);

int spfkit__policyd_conn_has_partial(const struct conn *c)
{
	return c->req.scanned > 0 || c->in.len > 0;
}

/*
 * Reading on or off. The idle timeout stays on the read event all the
 * time, restarted by libevent at each read: it is ignored when it fires
 * while the connection is busy, and when it fires early for an idle one
 * (the idle time began after the read that last restarted it) it is put
 * back for what is left (on_read). So nothing is re-armed per request.
 */
static void read_update(struct conn *c)
{
	struct timeval idle = {c->srv->opts.idle_timeout, 0};

	if (!c->read_on || c->read_full)
		event_del(c->rd);
	else
		event_add(c->rd, &idle);
}

static void read_enable(struct conn *c, int on)
{
	c->read_on = on;
	read_update(c);
}

static void deadline_stop(struct conn *c)
{
	if (c->deadline_on)
		evtimer_del(c->deadline);
	c->deadline_on = 0;
}

/* Idle between requests, a begun request, or waiting for our answer (no read timeout). */
static void set_timeouts(struct conn *c)
{
	struct timeval req = {c->srv->opts.request_timeout, 0};
	/* blocked: what waits is complete requests, not a client still sending */
	int reading = c->job == NULL && !c->blocked && spfkit__policyd_conn_has_partial(c);

	/*
	 * A begun request has a deadline from its first byte: a read timeout
	 * restarts on every byte, so one byte a second would hold the slot
	 * for ever.
	 */
	if (!reading) {
		deadline_stop(c);
	} else if (!c->deadline_on) {
		evtimer_add(c->deadline, &req);
		c->deadline_on = 1;
	}
	c->idle = c->job == NULL && !reading;
	if (c->idle)
		c->idle_since_ms = spfkit__mta_now_ms();
}

/* Room for n more input bytes. 0, or SPFKIT_ENOMEM. */
static int in_reserve(struct conn *c, size_t n)
{
	size_t cap = c->in.cap ? c->in.cap : 1024;
	char *p;

	if (c->in.len + n <= c->in.cap)
		return 0;
	while (cap < c->in.len + n)
		cap *= 2;
	p = spfkit__realloc(NULL, c->in.data, cap);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	c->in.data = p;
	c->in.cap = cap;
	return 0;
}

/* The first n input bytes were taken; an empty buffer is given back (idle connections hold none). */
static void in_consume(struct conn *c, size_t n)
{
	if (n == c->in.len) {
		spfkit__free(NULL, c->in.data);
		c->in.data = NULL;
		c->in.len = c->in.cap = 0;
	} else if (n > 0) {
		memmove(c->in.data, c->in.data + n, c->in.len - n);
		c->in.len -= n;
	}
	if (c->read_full && c->in.len < INPUT_MAX) {
		c->read_full = 0;
		read_update(c);
	}
}

/* The write event's timeout is the write timeout, restarted as the socket takes bytes. */
static void out_queue(struct conn *c, const char *data, size_t len)
{
	struct timeval wr = {SPFKIT_POLICYD_WRITE_TIMEOUT, 0};
	size_t cap = c->out.cap ? c->out.cap : 256;
	char *p;

	if (c->out.len + len > c->out.cap) {
		while (cap < c->out.len + len)
			cap *= 2;
		p = spfkit__realloc(NULL, c->out.data, cap);
		if (p == NULL)
			return; /* lost, as a failed bufferevent_write() lost it: the client times out */
		c->out.data = p;
		c->out.cap = cap;
	}
	memcpy(c->out.data + c->out.len, data, len);
	c->out.len += len;
	if (!event_pending(c->wr, EV_WRITE, NULL))
		event_add(c->wr, &wr);
}

/* send(): a client gone must not raise SIGPIPE; stdout in spawn mode may be a pipe. */
static ssize_t out_write(struct conn *c, const char *data, size_t len)
{
	ssize_t n = -1;

	if (!c->not_socket) {
		n = send(c->out_fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == ENOTSOCK)
			c->not_socket = 1;
	}
	if (c->not_socket)
		n = write(c->out_fd, data, len);
	return n;
}

/*
 * Write a reply now when nothing waits before it: one write() instead of
 * turning on write interest and waiting for the loop. What the socket
 * does not take at once, or all of it when earlier replies still wait,
 * waits for the write event, which also finds a broken connection.
 */
static void write_reply(struct conn *c, const char *data, size_t len)
{
	ssize_t n;

	if (c->out.len == 0) {
		n = out_write(c, data, len);
		if (n > 0) {
			data += n;
			len -= (size_t)n;
		}
	}
	if (len > 0)
		out_queue(c, data, len);
}

void spfkit__policyd_send_reply(struct conn *c, const char *action)
{
	char reply[SPFKIT__MTA_TEXT_MAX + 16];
	size_t n = spfkit__policy_reply_into(action, strlen(action), reply, sizeof(reply));

	spfkit__metrics_action(c->srv->loop.metrics, spfkit__metrics_postfix_kind(action));
	if (n > 0)
		write_reply(c, reply, n);
	else
		write_reply(c, "action=dunno\n\n", 14);
}

void spfkit__policyd_drain_check(struct spfkit__policyd *srv)
{
	if (srv->pool != NULL)
		spfkit__policyd_pool_drained(srv); /* worker 0 waits for every worker */
	else if (srv->draining && spfkit__list_empty(&srv->conns))
		event_base_loopexit(srv->base, NULL);
}

void spfkit__policyd_conn_close(struct conn *c)
{
	struct spfkit__policyd *srv = c->srv;

	if (c->job != NULL)
		spfkit__policyd_job_free(c->job);
	spfkit__list_unlink(&srv->conns, &c->link);
	srv->n_conns--;
	spfkit__metrics_gauge(srv->loop.metrics, SPFKIT__METRICS_OPEN, -1);
	conn_events_free(c);
	if (c->own_fd)
		evutil_closesocket(c->in_fd);
	spfkit__free(NULL, c->in.data);
	spfkit__free(NULL, c->out.data);
	if (c->slot != NULL)
		spfkit__policyd_pool_closed(srv, c->slot);
	spfkit__free(NULL, c);
	spfkit__policyd_accept_on_close(srv);
	/* spawn mode: the one client is gone, so is the service */
	if (srv->pool == NULL && srv->n_listeners == 0 && spfkit__list_empty(&srv->conns))
		event_base_loopexit(srv->base, NULL);
	spfkit__policyd_drain_check(srv);
}

/* A broken connection (errno `err`): said at debugLevel 2, then closed. */
static void conn_error(struct conn *c, int err)
{
	if (spfkit__policyd_debug_level(c->srv) >= 2)
		spfkit__policyd_log(c->srv, LOG_INFO, "%s: %s", c->peer,
				    evutil_socket_error_to_string(err));
	spfkit__policyd_conn_close(c);
}

/* Postfix SMTPD_POLICY_README: "log a warning and disconnect", no reply. */
static void conn_refuse(struct conn *c, const char *in, size_t len,
			const struct spfkit__policy_diag *d)
{
	size_t start = d->offset, end = d->offset;

	while (start > 0 && in[start - 1] != '\n')
		start--;
	while (end < len && in[end] != '\n')
		end++;
	spfkit__policyd_log(c->srv, LOG_WARNING,
			    "%s: protocol error: %s at line %zu, byte %zu: \"%s\"; disconnecting without reply",
			    c->peer, spfkit__policy_strerror(d->code), d->line, d->offset,
			    ESC(in + start, end - start));
	spfkit__metrics_count(c->srv->loop.metrics, SPFKIT__METRICS_PROTOCOL_ERRORS);
	spfkit__policyd_conn_close(c);
}

/* The bytes waiting, for a log line. */
static const char *pending_bytes(const struct conn *c)
{
	return c->in.data != NULL ? c->in.data : "";
}

/*
 * After EOF (a close, or a half-close: Exim's ${readsocket} shuts down
 * its sending side before it reads), or while draining: close once
 * every complete request has been answered and every answer written.
 * Bytes after the last complete request can never become one: they get
 * no answer, are logged, and the answers before them still go out.
 */
static void conn_maybe_close(struct conn *c)
{
	size_t pending = c->in.len;

	if (c->job != NULL || c->blocked || !(c->eof || c->srv->draining))
		return;
	if (c->eof && spfkit__policyd_conn_has_partial(c)) {
		spfkit__policyd_log(c->srv, LOG_WARNING,
				    "%s: connection ended inside a request (%zu bytes: \"%s\"); no reply",
				    c->peer, pending, ESC(pending_bytes(c), pending));
		in_consume(c, pending);
		spfkit__policy_init(&c->req);
		deadline_stop(c);
	}
	if (spfkit__policyd_conn_has_partial(c))
		return; /* draining: let the client finish its request */
	if (c->out.len == 0)
		spfkit__policyd_conn_close(c);
}

/*
 * Take and start the complete requests in p[0..len) while nothing is in
 * flight and the client keeps up. The bytes taken, or -1 when the
 * connection was refused (c is gone).
 */
static long take_requests(struct conn *c, const char *p, size_t len)
{
	size_t off = 0;

	while (c->job == NULL) {
		size_t look = len - off, used = 0;
		struct spfkit__policy_diag d;
		struct job *j;
		int rc;

		if (c->out.len > SPFKIT_POLICYD_OUTPUT_MAX) {
			read_enable(c, 0); /* back on when the client reads */
			c->blocked = 1;
			break;
		}
		if (look == 0)
			break;
		if (look > SPFKIT_POLICY_MAX_REQUEST + 1)
			look = SPFKIT_POLICY_MAX_REQUEST + 1;
		rc = spfkit__policy_read(p + off, look, &c->req, &used, &d);
		if (rc == SPFKIT__POLICY_NEED_MORE)
			break;
		if (rc < 0) {
			conn_refuse(c, p + off, look, &d);
			return -1;
		}
		j = spfkit__policyd_request_take(c, &c->req);
		c->asked = 1;
		off += used;
		spfkit__policy_init(&c->req);
		if (j != NULL)
			spfkit__policyd_request_go(j);
	}
	return (long)off;
}

static void process_end(struct conn *c)
{
	c->in_process = 0;
	set_timeouts(c);
	conn_maybe_close(c);
}

/* Read and start requests while nothing is in flight and the client keeps up. */
void spfkit__policyd_conn_process(struct conn *c)
{
	long taken;

	c->in_process = 1;
	c->blocked = 0;
	taken = take_requests(c, c->in.data, c->in.len);
	if (taken < 0)
		return;
	in_consume(c, (size_t)taken);
	process_end(c);
}

/* ---- libevent callbacks ------------------------------------------------- */

/* A read returned n: an end or an error closes or finishes; 1 when c goes on with bytes. */
static int read_result(struct conn *c, ssize_t n, int err)
{
	if (n > 0)
		return 1;
	if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR))
		return 0;
	read_enable(c, 0);
	if (n < 0) {
		conn_error(c, err);
		return 0;
	}
	/* the end of input: answer what was asked before it, then go */
	c->eof = 1;
	if (!c->in_process)
		spfkit__policyd_conn_process(c);
	return 0;
}

/*
 * Bytes read with nothing waiting (the usual case) are parsed where they
 * were read; only bytes past the requests taken (a partial or pipelined
 * one) are kept.
 */
static void take_fresh(struct conn *c, const char *buf, size_t n)
{
	long taken;

	c->in_process = 1;
	c->blocked = 0;
	taken = take_requests(c, buf, n);
	if (taken < 0)
		return;
	if ((size_t)taken < n) {
		if (in_reserve(c, n - (size_t)taken) != 0) {
			conn_error(c, ENOMEM);
			return;
		}
		memcpy(c->in.data, buf + taken, n - (size_t)taken);
		c->in.len = n - (size_t)taken;
	}
	process_end(c);
}

/* Bytes read behind others: kept with them, up to the cap. */
static void take_more(struct conn *c, const char *buf, size_t n)
{
	if (in_reserve(c, n) != 0) {
		conn_error(c, ENOMEM);
		return;
	}
	memcpy(c->in.data + c->in.len, buf, n);
	c->in.len += n;
	if (c->in.len >= INPUT_MAX) {
		c->read_full = 1; /* until requests are taken */
		read_update(c);
	}
	spfkit__policyd_conn_process(c);
}

/*
 * 1 when the idle time is not over yet: the timeout is put back for the
 * rest. libevent keeps that shorter time as the event's timeout from then
 * on, so the next read puts the whole one back (on_read).
 */
static int idle_left(struct conn *c)
{
	uint64_t idle_ms = (uint64_t)c->srv->opts.idle_timeout * 1000u;
	uint64_t gone = spfkit__mta_now_ms() - c->idle_since_ms;
	struct timeval rest;

	if (gone >= idle_ms)
		return 0;
	rest.tv_sec = (time_t)((idle_ms - gone) / 1000u);
	rest.tv_usec = (suseconds_t)((idle_ms - gone) % 1000u) * 1000;
	c->idle_short = 1;
	return event_add(c->rd, &rest) == 0;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char buf[READ_MAX];
	size_t room = INPUT_MAX - c->in.len;
	ssize_t n;

	(void)fd;
	if (what & EV_TIMEOUT) {
		/* the idle timeout counts between requests only: see read_update() */
		if (!c->idle || idle_left(c))
			return;
		if (spfkit__policyd_debug_level(c->srv) >= 2)
			spfkit__policyd_log(c->srv, LOG_INFO, "%s: idle, closing", c->peer);
		spfkit__policyd_conn_close(c);
		return;
	}
	if (room == 0)
		return; /* full: reading is suspended (read_update) */
	if (c->idle_short) {
		c->idle_short = 0;
		read_update(c);
	}
	n = read(c->in_fd, buf, room < sizeof(buf) ? room : sizeof(buf));
	if (!read_result(c, n, errno))
		return;
	if (c->in.len == 0 && c->job == NULL)
		take_fresh(c, buf, (size_t)n);
	else
		take_more(c, buf, (size_t)n);
}

/* All written: read again if we had stopped, close if draining. */
static void on_drained(struct conn *c)
{
	if (!c->eof)
		read_enable(c, 1);
	if (!c->in_process)
		spfkit__policyd_conn_process(c);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	ssize_t n;
	int err;

	(void)fd;
	if (what & EV_TIMEOUT) {
		spfkit__policyd_log(c->srv, LOG_WARNING,
				    "%s: client does not read its answers; disconnecting", c->peer);
		spfkit__policyd_conn_close(c);
		return;
	}
	n = out_write(c, c->out.data, c->out.len);
	err = errno;
	if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR))
		return;
	if (n <= 0) {
		event_del(c->wr);
		if (n < 0) {
			conn_error(c, err);
			return;
		}
		/* nothing taken: the end, as for reading */
		c->eof = 1;
		read_enable(c, 0);
		if (!c->in_process)
			spfkit__policyd_conn_process(c);
		return;
	}
	memmove(c->out.data, c->out.data + n, c->out.len - (size_t)n);
	c->out.len -= (size_t)n;
	if (c->out.len > 0)
		return;
	event_del(c->wr);
	spfkit__free(NULL, c->out.data); /* an idle connection holds no buffer */
	c->out.data = NULL;
	c->out.cap = 0;
	on_drained(c);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	size_t pending = c->in.len;

	(void)fd;
	(void)what;
	c->deadline_on = 0;
	spfkit__policyd_log(c->srv, LOG_WARNING,
			    "%s: request not finished within %d s (%zu bytes: \"%s\"); "
			    "disconnecting without reply",
			    c->peer, c->srv->opts.request_timeout, pending,
			    ESC(pending_bytes(c), pending));
	spfkit__policyd_conn_close(c);
}

/* Never runs: each request's check assigns the timer its own callback first. */
static void on_lent_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static void conn_events_free(struct conn *c)
{
	struct event *ev[] = {c->deadline, c->check_timer, c->rd, c->wr};
	size_t i;

	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (ev[i] != NULL)
			event_free(ev[i]);
}

struct conn *spfkit__policyd_conn_new(struct spfkit__policyd *srv, int in_fd, int out_fd,
				      const char *peer, const struct spfkit_ip *addr)
{
	struct conn *c = spfkit__zalloc(NULL, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->deadline = evtimer_new(srv->base, on_deadline, c);
	c->check_timer = evtimer_new(srv->base, on_lent_timer, NULL);
	c->rd = event_new(srv->base, in_fd, EV_READ | EV_PERSIST, on_read, c);
	c->wr = event_new(srv->base, out_fd, EV_WRITE | EV_PERSIST, on_write, c);
	if (c->deadline == NULL || c->check_timer == NULL || c->rd == NULL || c->wr == NULL) {
		conn_events_free(c);
		spfkit__free(NULL, c);
		return NULL;
	}
	if (addr != NULL) {
		c->has_addr = 1;
		c->addr = *addr;
	}
	c->srv = srv;
	c->in_fd = in_fd;
	c->out_fd = out_fd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	spfkit__policy_init(&c->req);
	spfkit__list_push_front(&srv->conns, &c->link);
	srv->n_conns++;
	spfkit__metrics_count(srv->loop.metrics, SPFKIT__METRICS_CONNECTIONS);
	spfkit__metrics_gauge(srv->loop.metrics, SPFKIT__METRICS_OPEN, 1);
	c->idle = 1;
	set_timeouts(c);
	read_enable(c, 1); /* the idle time runs from here */
	return c;
}
