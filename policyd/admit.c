/*
 * spfkit-policyd taking connections in: through mta/acceptor.c, with
 * --max-connections (the connection idle the longest makes room) and
 * --max-per-client; a connection accepted by worker 0 is served by the
 * worker pool.c places it with.
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

	for (c = spfkit__policyd_conn_of(srv->conns.head); c != NULL;
	     c = spfkit__policyd_conn_of(c->link.next))
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
	struct conn *c = spfkit__policyd_conn_new(srv, fd, fd, peer, addr);

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

	for (c = spfkit__policyd_conn_of(srv->conns.head); c != NULL;
	     c = spfkit__policyd_conn_of(c->link.next))
		if (c->own_fd && c->idle && c->job == NULL && !c->blocked && !c->eof &&
		    c->out.len == 0 && !spfkit__policyd_conn_has_partial(c) &&
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
	spfkit__policyd_conn_close(c);
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

int spfkit__policyd_admit_new(struct spfkit__policyd *srv)
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

	srv->room_retry = evtimer_new(srv->base, on_room_retry, srv);
	if (srv->room_retry == NULL)
		return SPFKIT_ENOMEM;
	return spfkit__mta_acceptor_new(srv->base, &ao, &srv->acceptor);
}
