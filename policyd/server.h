/*
 * The policy service proper: one libevent loop, any number of client
 * connections (listening sockets, or stdin/stdout in spawn mode), each
 * carrying any number of requests; every SPF evaluation asynchronous, so
 * a slow DNS answer holds up only the request that waits for it.
 *
 * Postfix's rule for trouble is followed: a client that breaks the
 * protocol (over-long line, too many attributes, binary junk, a request
 * that never ends, a client that never reads) is logged with a
 * truncated, escaped copy of what it sent and disconnected without a
 * reply (Postfix SMTPD_POLICY_README).
 */
#ifndef SPFKIT_POLICYD_SERVER_H
#define SPFKIT_POLICYD_SERVER_H

#include <stdarg.h>
#include <stddef.h>

#include <event2/event.h>

#include <spfkit/resolver.h>

#include "config.h"
#include "metrics.h"

struct spfkit__policyd_opts {
	const char *config_path;  /* re-read on SIGHUP; NULL: defaults only */
	const char *receiver;     /* this host for headers and %{r}; NULL: gethostname() */
	int log_stderr;           /* 1: stderr; 0: syslog (LOG_MAIL) */
	unsigned max_connections; /* 0: SPFKIT_POLICYD_MAX_CONNECTIONS */
	unsigned max_per_client;  /* TCP connections per client address; 0: max_connections / 4 */
	int idle_timeout;         /* s between requests; 0: SPFKIT_POLICYD_IDLE_TIMEOUT */
	int request_timeout;      /* s from a request's first byte to its end (a deadline, not
				     reset by each byte); 0: SPFKIT_POLICYD_REQUEST_TIMEOUT */
	size_t cache_max;         /* instance cache entries; 0: SPFKIT_POLICYD_CACHE_MAX */
	int time_limit;           /* s for a whole check, whitelists included; then what DNS has
				     not answered is a temperror; 0: SPFKIT_POLICYD_TIME_LIMIT */
	/* The SPF contexts' allocator (every evaluation's memory); NULL: libc.
	 * tests/policyd/test_request.c makes it fail. */
	const struct spfkit_allocator *alloc;
	/* Counts for /metrics (mta/metrics.h): each server takes a block of its own; NULL: off. */
	struct spfkit__metrics *metrics;
};

#define SPFKIT_POLICYD_MAX_CONNECTIONS 4096u
/* Postfix closes an idle policy connection after 300 s (smtpd_policy_service_max_idle). */
#define SPFKIT_POLICYD_IDLE_TIMEOUT 600
#define SPFKIT_POLICYD_REQUEST_TIMEOUT 30
#define SPFKIT_POLICYD_WRITE_TIMEOUT 30
/*
 * Every request is answered within this (--time-limit): twice Lookup_Time's
 * default, so HELO and MAIL FROM keep policyd-spf's 20 s each; under Postfix's
 * 100 s smtpd_policy_service_timeout, and under the 45 s the Exim ACL of
 * docs/exim.md waits, so a slow DNS gets the daemon's answer, not silence.
 */
#define SPFKIT_POLICYD_TIME_LIMIT 40
#define SPFKIT_POLICYD_CACHE_MAX 8192u
/* accept() out of descriptors: stop accepting that long, or until a connection closes. */
#define SPFKIT_POLICYD_ACCEPT_PAUSE_MS 250
/* A warning a flood can repeat is said at most once per this many seconds. */
#define SPFKIT_POLICYD_LOG_INTERVAL 10
/* Replies waiting for a client that does not read, before we stop reading it. */
#define SPFKIT_POLICYD_OUTPUT_MAX 16384u

struct spfkit__policyd;

/*
 * The server takes `cfg` (freed with the server, or replaced on reload)
 * and uses the backend `r` and, if not NULL, the answer cache layer
 * `cache` made over it (questions then go to the cache); both must
 * outlive the server. 0, SPFKIT_ENOMEM, SPFKIT_EINVAL.
 */
int spfkit__policyd_new(struct event_base *base, const struct spfkit__policyd_opts *opts,
			struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
			struct spfkit_resolver *cache, struct spfkit__policyd **out);

/* Serve clients of a bound, listening socket (it is made non-blocking). */
int spfkit__policyd_listen_fd(struct spfkit__policyd *srv, int fd, const char *label);

/* Spawn mode: one client on in_fd/out_fd; the loop ends when it goes. */
int spfkit__policyd_serve_stdio(struct spfkit__policyd *srv, int in_fd, int out_fd);

/* SIGHUP: read the configuration file again; on any error keep the old one. */
int spfkit__policyd_reload(struct spfkit__policyd *srv);

/* SIGTERM: stop accepting, finish the requests in flight, then end the loop. */
void spfkit__policyd_drain(struct spfkit__policyd *srv);

/* Log through the server's channel (for main.c). */
void spfkit__policyd_log(struct spfkit__policyd *srv, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void spfkit__policyd_vlog(struct spfkit__policyd *srv, int prio, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

void spfkit__policyd_free(struct spfkit__policyd *srv);

/*
 * A server's loop runs in spfkit__mta_run() (mta/engine.h): the thread's
 * log lines are held for each pass over its ready connections and sent
 * at the pass's end, one system call for all the decisions of a pass.
 */

/*
 * --workers (policyd/pool.c): servers made with spfkit__policyd_new(),
 * each on its own event base, run as one service. srv[0] is the main
 * thread's: it has the listeners and the signal handlers, accepts every
 * connection and gives each to the worker with the fewest; srv[1..n-1]
 * run their loops on threads of their own (spfkit__policyd_pool_start).
 * After srv[0]'s loop ends, _join stops and waits for the others; then
 * _free, then each server's spfkit__policyd_free(). 0 or SPFKIT_ENOMEM.
 */
struct spfkit__policyd_pool;
int spfkit__policyd_pool_new(struct spfkit__policyd **srv, unsigned n,
			     struct spfkit__policyd_pool **out);
int spfkit__policyd_pool_start(struct spfkit__policyd_pool *p);
#define SPFKIT__POOL_RELOAD 1
#define SPFKIT__POOL_DRAIN 2
#define SPFKIT__POOL_STOP 3
/* A signal's work for the workers other than srv[0] (which the caller does itself). */
void spfkit__policyd_pool_broadcast(struct spfkit__policyd_pool *p, int what);
void spfkit__policyd_pool_join(struct spfkit__policyd_pool *p);
void spfkit__policyd_pool_free(struct spfkit__policyd_pool *p);

#endif
