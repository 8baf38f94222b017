/*
 * The c-ares backend: real DNS, asynchronous, behind the resolver seam
 * of <spfkit/resolver.h>. Questions go out as recursive queries with
 * EDNS0 (RFC 6891); a truncated UDP answer is asked again over TCP; the
 * answer bytes are read by spfkit's own bounded DNS reader, so TTLs,
 * the rcode and NXDOMAIN versus NODATA (the void lookups of RFC 7208
 * §4.6.4) are known exactly. Timeouts, SERVFAIL, REFUSED and malformed
 * replies become SPFKIT_DNS_TEMPFAIL with a detail text.
 *
 * Recipes
 *
 *   Blocking (spfkit_check(), the CLI): spfkit_cares_new(), submit
 *   questions, call spfkit_resolver_wait() until your callbacks have
 *   run, spfkit_resolver_free().
 *
 *   libevent: spfkit_event_attach() from <spfkit/event.h> (library
 *   spfkit-event) keeps the loop's events in step with this resolver.
 *
 *   Any other event loop, by hand:
 *     1. spfkit_cares_set_watch(): you are told each socket to watch
 *        and its interest (read, write, or 0 = stop: it is closing);
 *     2. when a socket is ready, spfkit_cares_process_fd();
 *     3. after every call into the resolver (submit, cancel, process),
 *        ask spfkit_cares_timeout() and call
 *        spfkit_cares_process_timeout() when that many ms have passed.
 *   spfkit_cares_fds() lists the sockets at any time, for poll().
 *
 * Callbacks run only from inside spfkit_resolver_wait(),
 * spfkit_cares_process_fd() and spfkit_cares_process_timeout(); never
 * from submit(), cancel() or destroy(). Inside a callback you may
 * submit and cancel (any handle), and read the spfkit_cares_* state;
 * you must not call wait or process (they return SPFKIT_ESTATE), nor
 * free the resolver.
 *
 * Threads: a resolver is used by one thread at a time (it wraps one
 * c-ares channel). Make one per thread; share answers between threads
 * with a struct spfkit_cache (<spfkit/cache.h>).
 *
 * Ownership: the resolver owns its c-ares channel and sockets; the
 * answer given to a callback is the resolver's and is valid only during
 * the callback (as the seam says).
 *
 * Names: submit() reads the name as resolver.h writes it: raw label
 * bytes joined by '.', a final dot optional, no escapes (a '\' is sent
 * as the byte it is). An empty label, a label over 63 octets or a name
 * over 255 on the wire: SPFKIT_EINVAL, and no callback. PTR, CNAME and
 * MX targets come back in that same form; a record whose target has a
 * '.' inside a label is left out of the answer.
 */
#ifndef SPFKIT_CARES_H
#define SPFKIT_CARES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <spfkit/common.h>
#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPFKIT_CARES_TIMEOUT_MS 2000 /* default per-try timeout */
#define SPFKIT_CARES_TRIES 2         /* default tries per server list pass */
#define SPFKIT_CARES_EDNS_UDP 1232u  /* default EDNS0 UDP size (DNS flag day 2020) */
#define SPFKIT_CARES_EDNS_UDP_MAX 4096u /* c-ares 1.18 reads no larger datagram */

/* Fill with spfkit_cares_options_init() first (the ABI rule in common.h). */
struct spfkit_cares_options {
	size_t size; /* sizeof(struct spfkit_cares_options), as compiled */
	/*
	 * "HOST[:PORT][,...]", IPv6 as [addr]:port, e.g.
	 * "127.0.0.1:5353,[::1]:5353". NULL: the servers of
	 * /etc/resolv.conf. The string is read during spfkit_cares_new()
	 * only.
	 */
	const char *servers;
	/*
	 * Per try, in ms; <= 0: SPFKIT_CARES_TIMEOUT_MS. c-ares doubles the
	 * wait on each pass through the server list: with one server and
	 * tries = 2, a silent server is given up after 3 x timeout_ms.
	 */
	int timeout_ms;
	int tries;              /* <= 0: SPFKIT_CARES_TRIES */
	unsigned edns_udp_size; /* 0: SPFKIT_CARES_EDNS_UDP; else 512 .. 4096 */
};

/* Zero every field (the defaults) and set size (inline: the caller's size). */
static inline void spfkit_cares_options_init(struct spfkit_cares_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->size = sizeof(*opt);
}

/*
 * Create a resolver. `opt` NULL means all defaults; `alloc` NULL means
 * libc. On failure *out is NULL and errbuf (if not NULL) holds a line
 * saying why.
 * Returns 0; SPFKIT_EINVAL (bad option, bad server list, opt->size
 * not set by spfkit_cares_options_init()); SPFKIT_EDNS
 * (c-ares could not start, e.g. an unreadable resolv.conf);
 * SPFKIT_ENOMEM. Free with spfkit_resolver_free().
 */
SPFKIT_MUSTCHECK int spfkit_cares_new(const struct spfkit_cares_options *opt,
				      const struct spfkit_allocator *alloc,
				      struct spfkit_resolver **out, char *errbuf, size_t errlen);

/* Interest in a socket. */
#define SPFKIT_CARES_READ 1u
#define SPFKIT_CARES_WRITE 2u

struct spfkit_cares_fd {
	int fd;
	unsigned events; /* SPFKIT_CARES_READ | SPFKIT_CARES_WRITE */
};

/*
 * Told of each change: `fd` now wants `events` (0: stop watching, the
 * socket is about to be closed). fd == -1 (events 0) says the next
 * timeout may have moved: ask spfkit_cares_timeout() again. Called from
 * inside submit, cancel and the process calls; it may only call
 * spfkit_cares_timeout(), spfkit_cares_fds() and spfkit_cares_pending().
 */
typedef void spfkit_cares_watch_fn(void *arg, int fd, unsigned events);

/*
 * Install (fn) or remove (NULL) the watcher. On install, each socket
 * open now is reported at once. SPFKIT_EINVAL if r is not a c-ares
 * resolver.
 */
int spfkit_cares_set_watch(struct spfkit_resolver *r, spfkit_cares_watch_fn *fn, void *arg);

/*
 * Copy up to `max` open sockets into out[]; returns how many there are
 * (more than max means out[] is partial). 0 if r is not c-ares.
 */
size_t spfkit_cares_fds(const struct spfkit_resolver *r, struct spfkit_cares_fd *out, size_t max);

/*
 * ms until spfkit_cares_process_timeout() is due: 0 when answers are
 * ready to deliver now, -1 when nothing is pending (or r is not c-ares).
 */
int spfkit_cares_timeout(struct spfkit_resolver *r);

/*
 * `fd` is ready for `events`: let c-ares read/write it, then run the
 * callbacks of every answer that is complete. Returns the number of
 * callbacks run, or SPFKIT_ESTATE (from inside a callback), SPFKIT_EINVAL.
 */
int spfkit_cares_process_fd(struct spfkit_resolver *r, int fd, unsigned events);

/* Retransmit or give up on questions whose time is up, then run ready
 * callbacks. Returns as spfkit_cares_process_fd(). */
int spfkit_cares_process_timeout(struct spfkit_resolver *r);

/* Questions submitted whose callback has not run and that were not
 * cancelled. */
size_t spfkit_cares_pending(const struct spfkit_resolver *r);

#ifdef __cplusplus
}
#endif

#endif
