/*
 * The metrics listener: GET /metrics over HTTP (libevent's evhttp) on a
 * thread and event loop of its own, so a scrape never waits behind
 * checks and the workers never wait for a scrape (they share no lock
 * with it: metrics.h). Off unless the operator gives --metrics or
 * Metrics_Listen. Not an API.
 */
#ifndef SPFKIT_MTA_METRICS_HTTP_H
#define SPFKIT_MTA_METRICS_HTTP_H

#include <stddef.h>

#include "metrics.h"

/* What --metrics PORT alone binds: the loopback, not every address. */
#define SPFKIT__METRICS_DEFAULT_HOST "127.0.0.1"

/* The largest exposition served (a few KiB in practice). */
#define SPFKIT__METRICS_MAX_BODY ((size_t)1 << 20)

/*
 * Split "HOST:PORT", "[IPV6]:PORT" or "PORT" (host: the loopback) into
 * host and port (NUL-terminated, cut never: too long is an error).
 * 0, or -1 with why[] saying what is wrong.
 */
int spfkit__metrics_http_addr(const char *spec, char *host, size_t host_size, char *port,
			      size_t port_size, char *why, size_t why_size);

/*
 * Bind and listen on spec (above), before privileges are dropped or
 * the process forks; the port bound goes to *bound_port. The
 * descriptor, or -1 (said on stderr, prefixed with prog).
 */
int spfkit__metrics_http_listen(const char *prog, const char *spec, unsigned *bound_port);

struct spfkit__metrics_http;

/*
 * Serve m on the listening descriptor fd (taken over: closed by
 * stop) from a new thread. Start it in the process that serves, after
 * any fork. 0, or -1 (out of memory, no thread).
 */
int spfkit__metrics_http_start(struct spfkit__metrics *m, int fd,
			       struct spfkit__metrics_http **out);

/* Stop the thread (a scrape under way is cut), close the socket, free. NULL: no-op. */
void spfkit__metrics_http_stop(struct spfkit__metrics_http *h);

#endif
