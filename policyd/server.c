/*
 * spfkit-policyd's connections (see server.h): listeners, spawn mode,
 * reading requests through the pure reader of proto.c (at most one
 * request in flight per connection: Postfix waits for each answer, and
 * the rest of the input waits too), timeouts, backpressure, reload,
 * drain. What a request does is in request.c.
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

/* ---- logging ---------------------------------------------------------- */

int spfkit__policyd_debug_level(const struct spfkit__policyd *srv)
{
	return srv->gen->cfg->debug_level;
}

static void vlog(int level, int prio, const char *fmt, va_list ap)
{
	/* debugLevel -1: silent; 0: errors and warnings; 1+: also decisions */
	if (level < 0 || (level == 0 && prio > LOG_WARNING))
		return;
	spfkit__mta_log_vprintf(prio, fmt, ap);
}

void spfkit__policyd_log_text(const struct spfkit__policyd *srv, int prio, const char *text,
			      size_t len)
{
	int level = spfkit__policyd_debug_level(srv);

	if (level < 0 || (level == 0 && prio > LOG_WARNING))
		return;
	spfkit__mta_log_write(prio, text, len);
}

void spfkit__policyd_log(struct spfkit__policyd *srv, int prio, const char *fmt, ...)
{
	va_list ap;
	int level = spfkit__policyd_debug_level(srv);

	va_start(ap, fmt);
	vlog(level, prio, fmt, ap);
	va_end(ap);
}

/* ---- accepting ------------------------------------------------------------ */

/* Connections open on every worker: the limits count them all. */
static size_t open_conns(const struct spfkit__policyd *srv)
{
	return srv->pool != NULL ? spfkit__policyd_pool_conns(srv->pool) : srv->n_conns;
}

/*
 * The acceptor (mta/acceptor.c) counts with us, and its lines follow
 * debugLevel. Its cap is one over --max-connections: at the limit itself
 * the listeners stay on, and a new client makes room by closing an idle
 * connection (on_conn). Beyond it, new clients wait in the kernel's
 * backlog instead of being accepted and closed in a loop.
 */
static size_t acceptor_count(void *arg)
{
	return open_conns(arg);
}

static void acceptor_log(void *arg, int prio, const char *text, size_t len)
{
	spfkit__policyd_log_text(arg, prio, text, len);
}

/* A connection went: its descriptor is free again. */
void spfkit__policyd_accept_on_close(struct spfkit__policyd *srv)
{
	/* --workers: only worker 0 accepts, and it counts what every worker holds */
	if (srv->pool != NULL && srv->worker != 0)
		return;
	spfkit__mta_acceptor_closed(srv->acceptor);
}

/* ---- generations -------------------------------------------------------- */

/*
 * The check's budget, only where it is needed: without DNS whitelists a
 * check is HELO's and MAIL FROM's evaluations, each ended by Lookup_Time,
 * so with 2 x Lookup_Time within --time-limit (the defaults: 40 s) the
 * phases alone end it in time and no budget timer is allocated per request.
 * Each DNS whitelist method (each Domain_Whitelist entry) adds a phase of
 * Whitelist_Lookup_Time: then the budget caps the sum.
 */
static int check_budget(const struct spfkit__mta_config *cfg, int limit)
{
	int whitelists = cfg->domain_whitelist.count > 0 || cfg->helo_whitelist.count > 0 ||
			 cfg->domain_whitelist_ptr.count > 0;

	return whitelists || 2L * cfg->lookup_time > limit ? limit : 0;
}

static struct gen *gen_new(struct spfkit__policyd *srv, struct spfkit__mta_config *cfg)
{
	struct gen *g = spfkit__zalloc(NULL, sizeof(*g));

	if (g == NULL)
		return NULL;
	if (spfkit__mta_ctx_new(cfg, srv->receiver, srv->dns_cached, srv->opts.alloc, &g->ctx) != 0) {
		spfkit__free(NULL, g);
		return NULL;
	}
	g->cfg = cfg;
	g->budget_s = check_budget(cfg, srv->opts.time_limit);
	g->refs = 1;
	return g;
}

void spfkit__policyd_gen_put(struct gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	spfkit_ctx_free(g->ctx);
	spfkit__mta_config_free(g->cfg);
	spfkit__free(NULL, g);
}

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

static void conn_close(struct conn *c);
static void conn_events_free(struct conn *c);

static int has_partial(const struct conn *c)
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
	int reading = c->job == NULL && !c->blocked && has_partial(c);

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

static void maybe_finish_drain(struct spfkit__policyd *srv)
{
	if (srv->pool != NULL)
		spfkit__policyd_pool_drained(srv); /* worker 0 waits for every worker */
	else if (srv->draining && srv->conns == NULL)
		event_base_loopexit(srv->base, NULL);
}

static void conn_close(struct conn *c)
{
	struct spfkit__policyd *srv = c->srv;

	if (c->job != NULL)
		spfkit__policyd_job_free(c->job);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
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
	if (srv->pool == NULL && srv->n_listeners == 0 && srv->conns == NULL)
		event_base_loopexit(srv->base, NULL);
	maybe_finish_drain(srv);
}

/* A broken connection (errno `err`): said at debugLevel 2, then closed. */
static void conn_error(struct conn *c, int err)
{
	if (spfkit__policyd_debug_level(c->srv) >= 2)
		spfkit__policyd_log(c->srv, LOG_INFO, "%s: %s", c->peer,
				    evutil_socket_error_to_string(err));
	conn_close(c);
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
	conn_close(c);
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
	if (c->eof && has_partial(c)) {
		spfkit__policyd_log(c->srv, LOG_WARNING,
				    "%s: connection ended inside a request (%zu bytes: \"%s\"); no reply",
				    c->peer, pending, ESC(pending_bytes(c), pending));
		in_consume(c, pending);
		spfkit__policy_init(&c->req);
		deadline_stop(c);
	}
	if (has_partial(c))
		return; /* draining: let the client finish its request */
	if (c->out.len == 0)
		conn_close(c);
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
		conn_close(c);
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
		conn_close(c);
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
	conn_close(c);
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

static struct conn *conn_new(struct spfkit__policyd *srv, int in_fd, int out_fd,
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
	c->next = srv->conns;
	if (c->next != NULL)
		c->next->prev = c;
	srv->conns = c;
	srv->n_conns++;
	spfkit__metrics_count(srv->loop.metrics, SPFKIT__METRICS_CONNECTIONS);
	spfkit__metrics_gauge(srv->loop.metrics, SPFKIT__METRICS_OPEN, 1);
	c->idle = 1;
	set_timeouts(c);
	read_enable(c, 1); /* the idle time runs from here */
	return c;
}

/* The address of a TCP client; 0 for a UNIX one (no address). */
static int peer_addr(const struct sockaddr *sa, struct spfkit_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (sa->sa_family == AF_INET) {
		ip->family = 4;
		memcpy(ip->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 1;
	}
	if (sa->sa_family == AF_INET6) {
		ip->family = 6;
		memcpy(ip->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 1;
	}
	return 0;
}

static size_t conns_from(const struct spfkit__policyd *srv, const struct spfkit_ip *ip)
{
	const struct conn *c;
	size_t n = 0;

	if (srv->pool != NULL)
		return spfkit__policyd_pool_conns_from(srv->pool, ip);

	for (c = srv->conns; c != NULL; c = c->next)
		if (c->has_addr && c->addr.family == ip->family &&
		    memcmp(c->addr.addr, ip->addr, sizeof(ip->addr)) == 0)
			n++;
	return n;
}

/*
 * One address may not take every slot (--max-per-client). UNIX clients
 * have no address and are not counted: every Postfix smtpd comes over
 * the one socket.
 */
static int over_per_client(struct spfkit__policyd *srv, const struct spfkit_ip *ip,
			   const char *peer)
{
	size_t n = conns_from(srv, ip);
	char note[SPFKIT__MTA_RATELOG_NOTE_MAX];
	char text[64];

	if (n < srv->opts.max_per_client)
		return 0;
	spfkit__metrics_count(srv->loop.metrics, SPFKIT__METRICS_REFUSED);
	if (spfkit__mta_ratelog_due(&srv->log_per_client, SPFKIT_POLICYD_LOG_INTERVAL, note))
		spfkit__policyd_log(srv, LOG_WARNING,
				    "%s: %zu connections from %s already (--max-per-client); closing%s",
				    peer, n, spfkit_ip_format(ip, text, sizeof(text)), note);
	return 1;
}

static void peer_name(const struct sockaddr *sa, int fd, const char *label, char *out, size_t size)
{
	char host[64] = "";

	if (sa->sa_family == AF_INET)
		evutil_inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
	else if (sa->sa_family == AF_INET6)
		evutil_inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
				 sizeof(host));
	if (host[0] != '\0')
		snprintf(out, size, "%s[%s]:%u", label, host,
			 ntohs(sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
							: ((const struct sockaddr_in6 *)sa)->sin6_port));
	else
		snprintf(out, size, "%s#%d", label, fd);
}

int spfkit__policyd_adopt(struct spfkit__policyd *srv, int fd, const char *peer,
			  const struct spfkit_ip *addr, struct pool_slot *slot)
{
	/* on failure the caller closes fd */
	struct conn *c = conn_new(srv, fd, fd, peer, addr);

	if (c == NULL)
		return SPFKIT_ENOMEM;
	c->own_fd = 1;
	c->slot = slot;
	return 0;
}

/* A connection that has not sent a request yet is spared that long when room is looked for again. */
#define ROOM_GRACE_MS 1000u

/*
 * The connection of this loop idle the longest, with nothing of its own
 * under way: no request in flight or begun, no answer waiting, no end of
 * input being finished; with spare_new, not one let in less than
 * ROOM_GRACE_MS ago that has yet to send its first request. NULL when
 * there is none. A scan, but only at the connection limit: nothing is
 * kept up to date per request for it.
 */
static struct conn *idle_longest(struct spfkit__policyd *srv, int spare_new)
{
	uint64_t now = spfkit__mta_now_ms();
	struct conn *c, *best = NULL;

	for (c = srv->conns; c != NULL; c = c->next)
		if (c->own_fd && c->idle && c->job == NULL && !c->blocked && !c->eof &&
		    c->out.len == 0 && !has_partial(c) &&
		    (!spare_new || c->asked || now - c->idle_since_ms >= ROOM_GRACE_MS) &&
		    (best == NULL || c->idle_since_ms < best->idle_since_ms))
			best = c;
	return best;
}

/* No room was made on this loop: worker 0 (or the only loop) looks again in a moment. */
void spfkit__policyd_room_later(struct spfkit__policyd *srv)
{
	struct timeval soon = {0, SPFKIT_POLICYD_ACCEPT_PAUSE_MS * 1000};

	if (srv->pool != NULL && srv->worker != 0)
		spfkit__policyd_pool_no_room(srv);
	else if (!evtimer_pending(srv->room_retry, NULL))
		evtimer_add(srv->room_retry, &soon);
}

/*
 * At --max-connections, a new client must still be served: idle
 * connections from many addresses (each under --max-per-client) would
 * otherwise hold every slot for --idle-timeout. So the one idle the
 * longest is closed to make room; a Postfix whose connection it was
 * connects again on its next request (its policy client retries a
 * request once on a new connection), as after its own idle timeout. A
 * connection in the middle of a request is never taken: when every one
 * is, the new client is served one over the limit and the next ones wait
 * in the backlog (on_conn), and room is looked for again, sparing the
 * one let in over the limit until it has sent its first request
 * (spare_new, on_room_retry). 1 when one was closed.
 */
int spfkit__policyd_make_room(struct spfkit__policyd *srv, int spare_new)
{
	struct conn *c = idle_longest(srv, spare_new);
	char note[SPFKIT__MTA_RATELOG_NOTE_MAX];

	/* this loop's own count: with --workers, worker 0's total is worker 0's to read */
	if (c == NULL) {
		spfkit__policyd_room_later(srv);
		if (spfkit__mta_ratelog_due(&srv->log_full, SPFKIT_POLICYD_LOG_INTERVAL, note))
			spfkit__policyd_log(srv, LOG_WARNING,
					    "at --max-connections, none of %zu connections idle: not "
					    "accepting until one closes or goes idle%s", srv->n_conns, note);
		return 0;
	}
	if (spfkit__mta_ratelog_due(&srv->log_full, SPFKIT_POLICYD_LOG_INTERVAL, note))
		spfkit__policyd_log(srv, LOG_WARNING,
				    "at --max-connections: closing %s, idle %llu s, to make room "
				    "for a new client%s", c->peer,
				    (unsigned long long)((spfkit__mta_now_ms() - c->idle_since_ms) / 1000u),
				    note);
	conn_close(c);
	return 1;
}

/*
 * Over the limit, with nothing that was idle to close: the connections
 * were all in a request. They go idle as their answers go out, without a
 * word to this loop, so look again every SPFKIT_POLICYD_ACCEPT_PAUSE_MS
 * until one can be closed (with --workers, ask each worker in turn);
 * waiting for a close could mean waiting for --idle-timeout.
 */
static void on_room_retry(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__policyd *srv = arg;

	(void)fd;
	(void)what;
	if (srv->draining || open_conns(srv) <= srv->opts.max_connections)
		return;
	/* where none is found, spfkit__policyd_room_later() brings us back */
	if (srv->pool != NULL)
		spfkit__policyd_pool_make_room(srv->pool);
	else
		(void)spfkit__policyd_make_room(srv, 1);
}

/* The acceptor took fd: -1 to have it closed. */
static int on_conn(int fd, const struct sockaddr *sa, socklen_t salen, void *arg)
{
	struct spfkit__policyd *srv = arg;
	struct spfkit_ip ip;
	int has_addr = peer_addr(sa, &ip);
	char peer[96];
	int full, rc;

	(void)salen;
	peer_name(sa, fd, "client", peer, sizeof(peer));
	if (has_addr && over_per_client(srv, &ip, peer))
		return -1;
	full = open_conns(srv) == srv->opts.max_connections;
	/*
	 * At the limit, one goes over it (the descriptors kept spare hold it)
	 * while an idle connection is closed: here, by another worker (pool.c:
	 * the worker that takes it makes room first), or later (on_room_retry)
	 * when none was idle. The next clients wait in the backlog till then.
	 */
	if (srv->pool != NULL) {
		rc = spfkit__policyd_pool_place(srv, fd, peer, has_addr ? &ip : NULL, full);
	} else {
		if (full)
			(void)spfkit__policyd_make_room(srv, 0);
		rc = spfkit__policyd_adopt(srv, fd, peer, has_addr ? &ip : NULL, NULL);
	}
	return rc != 0 ? -1 : 0;
}

/* ---- the server ------------------------------------------------------------ */

static int acceptor_new(struct spfkit__policyd *srv)
{
	const struct spfkit__mta_acceptor_opts ao = {
		.max_connections = srv->opts.max_connections + 1, /* see acceptor_count() */
		.pause_ms = SPFKIT_POLICYD_ACCEPT_PAUSE_MS,
		.log_interval_s = SPFKIT_POLICYD_LOG_INTERVAL,
		.on_conn = on_conn,
		.arg = srv,
		.count = acceptor_count,
		.log = acceptor_log,
		.quiet_when_full = 1, /* make_room says what happens at the limit */
	};

	return spfkit__mta_acceptor_new(srv->base, &ao, &srv->acceptor);
}

int spfkit__policyd_new(struct event_base *base, const struct spfkit__policyd_opts *opts,
			struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
			struct spfkit_resolver *cache, struct spfkit__policyd **out)
{
	struct spfkit__policyd *srv = spfkit__zalloc(NULL, sizeof(*srv));

	if (srv == NULL)
		return SPFKIT_ENOMEM;
	srv->base = base;
	srv->opts = *opts;
	if (srv->opts.max_connections == 0)
		srv->opts.max_connections = SPFKIT_POLICYD_MAX_CONNECTIONS;
	if (srv->opts.idle_timeout <= 0)
		srv->opts.idle_timeout = SPFKIT_POLICYD_IDLE_TIMEOUT;
	if (srv->opts.request_timeout <= 0)
		srv->opts.request_timeout = SPFKIT_POLICYD_REQUEST_TIMEOUT;
	if (srv->opts.cache_max == 0)
		srv->opts.cache_max = SPFKIT_POLICYD_CACHE_MAX;
	if (srv->opts.time_limit <= 0)
		srv->opts.time_limit = SPFKIT_POLICYD_TIME_LIMIT;
	if (srv->opts.max_per_client == 0)
		srv->opts.max_per_client =
			srv->opts.max_connections >= 4 ? srv->opts.max_connections / 4 : 1;
	if (opts->receiver != NULL)
		snprintf(srv->receiver, sizeof(srv->receiver), "%s", opts->receiver);
	else if (gethostname(srv->receiver, sizeof(srv->receiver) - 1) != 0)
		snprintf(srv->receiver, sizeof(srv->receiver), "unknown");
	srv->resolver = cache != NULL ? cache : r;
	srv->dns_cached = cache != NULL;
	srv->gen = gen_new(srv, cfg);
	srv->room_retry = evtimer_new(base, on_room_retry, srv);
	if (srv->gen == NULL || acceptor_new(srv) != 0 || srv->room_retry == NULL ||
	    spfkit__mta_dns_attach(base, r, cache, &srv->dnsloop) != 0) {
		if (srv->gen != NULL)
			srv->gen->cfg = NULL; /* the caller keeps cfg on failure */
		spfkit__policyd_gen_put(srv->gen);
		spfkit__mta_acceptor_free(srv->acceptor);
		if (srv->room_retry != NULL)
			event_free(srv->room_retry);
		spfkit__free(NULL, srv);
		return SPFKIT_ENOMEM;
	}
	srv->loop.base = base;
	srv->loop.resolver = srv->resolver;
	srv->loop.dnsloop = srv->dnsloop;
	srv->loop.metrics = spfkit__metrics_block(opts->metrics);
	*out = srv;
	return 0;
}

int spfkit__policyd_listen_fd(struct spfkit__policyd *srv, int fd, const char *label)
{
	int rc = spfkit__mta_acceptor_listen_fd(srv->acceptor, fd);

	(void)label;
	if (rc == 0)
		srv->n_listeners++;
	return rc;
}

int spfkit__policyd_serve_stdio(struct spfkit__policyd *srv, int in_fd, int out_fd)
{
	evutil_make_socket_nonblocking(in_fd);
	evutil_make_socket_nonblocking(out_fd);
	return conn_new(srv, in_fd, out_fd, "stdin", NULL) != NULL ? 0 : SPFKIT_ENOMEM;
}

static void report_diag(void *arg, const struct spfkit__mta_diag *d)
{
	struct spfkit__policyd *srv = arg;

	spfkit__policyd_log(srv, d->is_error ? LOG_ERR : LOG_WARNING, "%s:%u: %s: %s", d->file,
			    d->line, d->is_error ? "error" : "warning", d->text);
}

int spfkit__policyd_reload(struct spfkit__policyd *srv)
{
	struct spfkit__mta_config *cfg;
	struct gen *g;
	int rc;

	if (srv->opts.config_path == NULL)
		return 0;
	/* with --workers, each worker reads the file; worker 0 speaks for all */
	rc = spfkit__mta_config_load(srv->opts.config_path, NULL,
				     srv->worker == 0 ? report_diag : NULL, srv, &cfg);
	if (rc != 0) {
		if (srv->worker == 0)
			spfkit__policyd_log(srv, LOG_ERR, "reload of %s failed (%s); keeping the running configuration",
				    srv->opts.config_path, spfkit_strerror(rc));
		return rc;
	}
	g = gen_new(srv, cfg);
	if (g == NULL) {
		spfkit__mta_config_free(cfg);
		return SPFKIT_ENOMEM;
	}
	/* requests in flight finish with the configuration they started with */
	spfkit__policyd_gen_put(srv->gen);
	srv->gen = g;
	if (srv->worker == 0)
		spfkit__policyd_log(srv, LOG_NOTICE, "configuration %s reloaded",
				    srv->opts.config_path);
	return 0;
}

void spfkit__policyd_drain(struct spfkit__policyd *srv)
{
	struct conn *c, *next;

	srv->draining = 1;
	spfkit__mta_acceptor_stop(srv->acceptor);
	for (c = srv->conns; c != NULL; c = next) {
		next = c->next;
		if (c->job == NULL && c->req.scanned == 0 && c->out.len == 0)
			conn_close(c);
	}
	maybe_finish_drain(srv);
}

void spfkit__policyd_free(struct spfkit__policyd *srv)
{
	if (srv == NULL)
		return;
	while (srv->conns != NULL)
		conn_close(srv->conns);
	spfkit__mta_acceptor_free(srv->acceptor);
	event_free(srv->room_retry);
	spfkit__policyd_cache_free(srv);
	spfkit_event_detach(srv->dnsloop);
	spfkit__policyd_gen_put(srv->gen);
	spfkit__free(NULL, srv);
}
