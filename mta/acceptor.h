/*
 * Accepting connections on a libevent loop without spinning or flooding
 * the log when resources run out (docs/STYLE rule 19; issue 33): a cap
 * on connections open at once, beyond which new clients wait in the
 * kernel's backlog; and when accept() fails for want of descriptors or
 * memory (EMFILE, ENFILE, ENOBUFS, ENOMEM), a pause before the next try
 * instead of libevent retrying at once in a busy loop, with one log line
 * per interval. Both daemons use it. Everything runs on the loop's
 * thread. Not an API.
 */
#ifndef SPFKIT_MTA_ACCEPTOR_H
#define SPFKIT_MTA_ACCEPTOR_H

#include <stddef.h>
#include <sys/socket.h>

struct event_base;
struct spfkit__mta_acceptor;

/*
 * A new connection (non-blocking, close-on-exec): the callee takes fd
 * and returns 0 when it keeps it (then it counts until
 * spfkit__mta_acceptor_closed()), or -1 when it could not (the acceptor
 * closes it).
 */
typedef int spfkit__mta_accept_fn(int fd, const struct sockaddr *sa, socklen_t salen, void *arg);

struct spfkit__mta_acceptor_opts {
	size_t max_connections; /* open at once; 0: no cap */
	int pause_ms;           /* after accept() fails for want of resources */
	int log_interval_s;     /* one line per interval for each kind of trouble */
	spfkit__mta_accept_fn *on_conn;
	void *arg;
	/*
	 * Optional (zero: the defaults). count: the connections open, when
	 * the caller counts them itself (spfkit-policyd's workers serve what
	 * one acceptor takes); NULL: those taken and not yet closed. log: where
	 * the lines go (a daemon's debug level); NULL: spfkit__mta_log_write().
	 * quiet_when_full: reaching the cap is the caller's to say (it makes
	 * room first).
	 */
	size_t (*count)(void *arg);
	void (*log)(void *arg, int prio, const char *text, size_t len);
	int quiet_when_full;
};

/* 0, or SPFKIT_ENOMEM. */
int spfkit__mta_acceptor_new(struct event_base *base, const struct spfkit__mta_acceptor_opts *o,
			     struct spfkit__mta_acceptor **out);

/* Accept on fd (listening; taken, closed at free). 0, SPFKIT_ENOMEM or SPFKIT_E2BIG. */
int spfkit__mta_acceptor_listen_fd(struct spfkit__mta_acceptor *a, int fd);

/* A connection taken by on_conn is gone: its descriptor is free again. */
void spfkit__mta_acceptor_closed(struct spfkit__mta_acceptor *a);

/* Connections taken and not yet closed. */
size_t spfkit__mta_acceptor_open(const struct spfkit__mta_acceptor *a);

/* Accept no more (stopping); the listening sockets stay open until free. */
void spfkit__mta_acceptor_stop(struct spfkit__mta_acceptor *a);

/* Close the listening sockets. NULL: no-op. */
void spfkit__mta_acceptor_free(struct spfkit__mta_acceptor *a);

#endif
