/*
 * The c-ares backend (include/spfkit/cares.h).
 *
 * Each question is sent with ares_send() as a query we build ourselves,
 * and the raw answer is read by our own reader (msg.c). c-ares never
 * runs a user callback: its completion callback only parks the parsed
 * answer on the `done` list; answers are handed to the user by
 * deliver(), called at the end of wait() and of the process calls. So
 * c-ares calling back synchronously from inside ares_send() (no server,
 * no memory, a send error) cannot break the contract "never from inside
 * submit()", and user callbacks never run inside c-ares.
 *
 * c-ares 1.18 has no per-query cancel (ares_cancel() ends them all), so
 * a cancelled question still in flight becomes an orphan: unlinked, its
 * user callback forgotten, freed when c-ares finishes with it.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ares.h>

#include <spfkit/cares.h>
#include <spfkit/reason.h>

#include "list.h"
#include "msg.h"

enum qstate {
	Q_SENT,   /* c-ares has it; on c->sent */
	Q_DONE,   /* answer parsed; on c->done, waiting for deliver() */
	Q_ORPHAN, /* cancelled while c-ares has it; on no list */
};

struct question {
	struct spfkit__link link; /* on c->sent or c->done */
	struct cares *owner;
	uint64_t handle;
	spfkit_dns_cb *cb;
	void *arg;
	enum qstate state;
	uint16_t type;
	struct spfkit__dns_reply reply;
	size_t name_len;
	char name[]; /* name_len bytes and a NUL */
};

struct cares {
	struct spfkit_resolver pub; /* handed out; destroy() frees all of it */
	const struct spfkit_allocator *alloc;
	ares_channel ch;
	struct spfkit__list sent, done;
	size_t pending; /* on sent or done */
	uint64_t next_handle;
	uint16_t edns_udp_size;
	struct spfkit_cares_fd *fds; /* sockets c-ares has open */
	size_t nfds, capfds;
	struct pollfd *pfds; /* wait()'s poll set, capfds long */
	int err;             /* sticky: our list missed a socket (no memory); wait() fails */
	spfkit_cares_watch_fn *watch;
	void *watch_arg;
	int delivering;
	int destroying;
};

static const struct spfkit_resolver_ops cares_ops;

/* ---- lists ------------------------------------------------------------ */

#define Q_OF(lk) SPFKIT__LIST_ENTRY(lk, struct question, link)

static struct question *q_find(const struct spfkit__list *l, uint64_t handle)
{
	struct question *q;

	for (q = Q_OF(l->head); q != NULL; q = Q_OF(q->link.next))
		if (q->handle == handle)
			return q;
	return NULL;
}

static void q_free(struct cares *c, struct question *q)
{
	spfkit__dns_reply_free(&q->reply);
	spfkit__free(c->alloc, q);
}

/* ---- sockets (ARES_OPT_SOCK_STATE_CB) --------------------------------- */

static int fds_grow(struct cares *c)
{
	size_t cap = c->capfds ? c->capfds * 2 : 8;
	struct spfkit_cares_fd *f;
	struct pollfd *p;

	f = spfkit__realloc(c->alloc, c->fds, cap * sizeof(*f));
	if (f == NULL)
		return SPFKIT_ENOMEM;
	c->fds = f;
	p = spfkit__realloc(c->alloc, c->pfds, cap * sizeof(*p));
	if (p == NULL)
		return SPFKIT_ENOMEM;
	c->pfds = p;
	c->capfds = cap;
	return 0;
}

static void fds_set(struct cares *c, int fd, unsigned events)
{
	size_t i;

	for (i = 0; i < c->nfds && c->fds[i].fd != fd; i++)
		;
	if (i == c->nfds && events == 0)
		return;
	if (events == 0) {
		c->fds[i] = c->fds[--c->nfds];
		return;
	}
	if (i == c->nfds) {
		/* c-ares gives no way to refuse a socket: remember the
		 * failure and report it from the next wait or process call. */
		if (c->nfds == c->capfds && fds_grow(c) != 0) {
			c->err = SPFKIT_ENOMEM;
			return;
		}
		c->nfds++;
	}
	c->fds[i].fd = fd;
	c->fds[i].events = events;
}

static void on_sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct cares *c = data;
	unsigned events = (readable ? SPFKIT_CARES_READ : 0) | (writable ? SPFKIT_CARES_WRITE : 0);

	fds_set(c, (int)fd, events);
	if (c->watch != NULL)
		c->watch(c->watch_arg, (int)fd, events);
}

static void notify_timeout(struct cares *c)
{
	if (c->watch != NULL)
		c->watch(c->watch_arg, -1, 0);
}

/* ---- answers ---------------------------------------------------------- */

/*
 * c-ares 1.18 skips a server that answers SERVFAIL, NOTIMP or REFUSED
 * (trying the next one) and, when all did, ends the query with
 * ARES_ECONNREFUSED, the same status as an unreachable server; later
 * versions say ARES_ESERVFAIL etc. We keep that failover rather than
 * take raw error answers (ARES_FLAG_NOCHECKRESP), so say all it can be.
 */
static const char *status_detail(int status)
{
	switch (status) {
	case ARES_ETIMEOUT: return spfkit_reason_text(SPFKIT_REASON_DNS_TIMEOUT);
	case ARES_ESERVFAIL: return spfkit_reason_text(SPFKIT_REASON_DNS_SERVFAIL);
	case ARES_EREFUSED: return spfkit_reason_text(SPFKIT_REASON_DNS_REFUSED);
	case ARES_ENOTIMP: return "NOTIMP";
	case ARES_EFORMERR: return "FORMERR";
	case ARES_ECONNREFUSED: return "SERVFAIL, REFUSED or server unreachable";
	case ARES_EBADRESP: return "malformed reply";
	case ARES_ENOMEM: return "out of memory";
	}
	return "DNS error";
}

static void set_failure(struct question *q, const char *detail)
{
	memset(&q->reply.answer, 0, sizeof(q->reply.answer));
	q->reply.answer.status = SPFKIT_DNS_TEMPFAIL;
	q->reply.answer.detail = detail;
}

/*
 * c-ares is done with a question: parse the answer and park it for
 * deliver(). Only c-ares state may be touched here; no user code runs.
 */
static void on_reply(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct question *q = arg;
	struct cares *c = q->owner;

	(void)timeouts;
	if (q->state == Q_ORPHAN || c->destroying) {
		if (q->state == Q_SENT)
			spfkit__list_unlink(&c->sent, &q->link);
		q_free(c, q);
		return;
	}
	spfkit__list_unlink(&c->sent, &q->link);
	if (status != ARES_SUCCESS)
		set_failure(q, status_detail(status));
	else if (abuf == NULL || alen < 0)
		set_failure(q, "malformed reply");
	else /* on ENOMEM the answer is already a TEMPFAIL */
		(void)spfkit__dns_reply_parse(&q->reply, abuf, (size_t)alen, q->name, q->name_len,
					      q->type);
	q->state = Q_DONE;
	spfkit__list_push_back(&c->done, &q->link);
}

/* Run the callbacks of every parked answer; returns how many ran. */
static int deliver(struct cares *c)
{
	struct question *q;
	int n = 0;

	c->delivering = 1;
	while (c->done.head != NULL) {
		q = Q_OF(c->done.head);
		spfkit__list_unlink(&c->done, &q->link);
		c->pending--;
		q->cb(q->arg, &q->reply.answer);
		q_free(c, q);
		n++;
	}
	c->delivering = 0;
	return n;
}

/* ---- resolver ops ----------------------------------------------------- */

static struct question *q_new(struct cares *c, const char *name, size_t len, uint16_t type)
{
	struct question *q;

	if (len > SIZE_MAX - sizeof(*q) - 1)
		return NULL;
	q = spfkit__zalloc(c->alloc, sizeof(*q) + len + 1);
	if (q == NULL)
		return NULL;
	q->owner = c;
	q->type = type;
	q->handle = ++c->next_handle;
	spfkit__dns_reply_init(&q->reply, c->alloc);
	memcpy(q->name, name, len);
	q->name[len] = '\0';
	q->name_len = len;
	return q;
}

static int cares_submit(void *impl, const char *name, size_t len, uint16_t type,
			spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	struct cares *c = impl;
	struct spfkit__dnsb b;
	struct question *q;
	int rc;

	if (cb == NULL || (name == NULL && len > 0))
		return SPFKIT_EINVAL;
	spfkit__dnsb_init(&b, c->alloc, 512);
	/* SPFKIT_RR_TXT_STRINGS is a TXT question whose answer keeps its strings */
	rc = spfkit__dns_query(&b, name, len, type == SPFKIT_RR_TXT_STRINGS ? SPFKIT_RR_TXT : type,
			       c->edns_udp_size);
	q = rc == 0 ? q_new(c, name, len, type) : NULL;
	if (q == NULL) {
		spfkit__dnsb_free(&b);
		return rc != 0 ? rc : SPFKIT_ENOMEM;
	}
	q->cb = cb;
	q->arg = arg;
	spfkit__list_push_back(&c->sent, &q->link);
	c->pending++;
	if (handle != NULL)
		*handle = q->handle;
	/* May call on_reply() at once (no server, no memory): that only
	 * parks the answer, which wait() or a process call delivers. */
	ares_send(c->ch, spfkit__dnsb_data(&b), (int)spfkit__dnsb_len(&b), on_reply, q);
	spfkit__dnsb_free(&b);
	notify_timeout(c);
	return 0;
}

static void cares_cancel(void *impl, uint64_t handle)
{
	struct cares *c = impl;
	struct question *q = q_find(&c->sent, handle);

	if (q != NULL) {
		spfkit__list_unlink(&c->sent, &q->link);
		q->state = Q_ORPHAN; /* c-ares still holds it; on_reply frees it */
		c->pending--;
		return;
	}
	q = q_find(&c->done, handle);
	if (q != NULL) {
		spfkit__list_unlink(&c->done, &q->link);
		c->pending--;
		q_free(c, q);
		notify_timeout(c);
	}
}

static void cares_destroy(void *impl)
{
	struct cares *c = impl;
	struct question *q;

	c->destroying = 1;
	c->watch = NULL;
	/* Ends every query still in flight: on_reply() frees each one. */
	ares_destroy(c->ch);
	while (c->done.head != NULL) {
		q = Q_OF(c->done.head);
		spfkit__list_unlink(&c->done, &q->link);
		q_free(c, q);
	}
	spfkit__free(c->alloc, c->fds);
	spfkit__free(c->alloc, c->pfds);
	spfkit__free(c->alloc, c);
}

/* ---- waiting ---------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ms until c-ares wants ares_process_fd() for timeouts; -1: never. */
static int ares_wait_ms(struct cares *c)
{
	struct timeval tv, *t = ares_timeout(c->ch, NULL, &tv);
	int64_t ms;

	if (t == NULL)
		return -1;
	ms = (int64_t)t->tv_sec * 1000 + (t->tv_usec + 999) / 1000; /* round up */
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

static void process(struct cares *c, int fd, unsigned events)
{
	ares_socket_t r = (events & SPFKIT_CARES_READ) ? (ares_socket_t)fd : ARES_SOCKET_BAD;
	ares_socket_t w = (events & SPFKIT_CARES_WRITE) ? (ares_socket_t)fd : ARES_SOCKET_BAD;

	ares_process_fd(c->ch, r, w);
}

/* One poll() over the sockets for at most `ms`, then let c-ares work. */
static int poll_once(struct cares *c, int ms)
{
	size_t i, n = c->nfds;
	unsigned ev;
	int rc;

	for (i = 0; i < n; i++) {
		c->pfds[i].fd = c->fds[i].fd;
		c->pfds[i].events = (short)(((c->fds[i].events & SPFKIT_CARES_READ) ? POLLIN : 0) |
					    ((c->fds[i].events & SPFKIT_CARES_WRITE) ? POLLOUT : 0));
		c->pfds[i].revents = 0;
	}
	rc = poll(c->pfds, (nfds_t)n, ms);
	if (rc < 0)
		return errno == EINTR ? 0 : SPFKIT_EIO;
	/* The set may change while c-ares works: walk our copy. */
	for (i = 0; i < n && rc > 0; i++) {
		ev = (c->pfds[i].revents & (POLLIN | POLLERR | POLLHUP)) ? SPFKIT_CARES_READ : 0;
		ev |= (c->pfds[i].revents & POLLOUT) ? SPFKIT_CARES_WRITE : 0;
		if (ev != 0)
			process(c, c->pfds[i].fd, ev);
	}
	if (rc == 0)
		process(c, -1, 0); /* timeouts only */
	return 0;
}

/* The next poll's wait: c-ares' own timeout, capped by our deadline. */
static int next_wait(struct cares *c, int64_t deadline)
{
	int ms = ares_wait_ms(c);
	int64_t left;

	if (deadline < 0)
		return ms;
	left = deadline - now_ms();
	if (left < 0)
		left = 0;
	if (ms < 0 || left < ms)
		ms = (int)left;
	return ms;
}

static int cares_wait(void *impl, int timeout_ms)
{
	struct cares *c = impl;
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int rc;

	if (c->delivering)
		return SPFKIT_ESTATE;
	for (;;) {
		if (c->err)
			return c->err;
		if (c->done.head != NULL)
			return deliver(c);
		if (c->sent.head == NULL)
			return 0; /* nothing to wait for */
		rc = poll_once(c, next_wait(c, deadline));
		if (rc < 0)
			return rc;
		if (c->done.head == NULL && deadline >= 0 && now_ms() >= deadline)
			return 0;
	}
}

static const struct spfkit_resolver_ops cares_ops = {
	cares_submit,
	cares_cancel,
	cares_wait,
	cares_destroy,
};

/* ---- event-loop API --------------------------------------------------- */

static struct cares *as_cares(const struct spfkit_resolver *r)
{
	if (r == NULL || r->ops != &cares_ops)
		return NULL;
	return r->impl;
}

int spfkit_cares_set_watch(struct spfkit_resolver *r, spfkit_cares_watch_fn *fn, void *arg)
{
	struct cares *c = as_cares(r);
	size_t i;

	if (c == NULL)
		return SPFKIT_EINVAL;
	c->watch = fn;
	c->watch_arg = arg;
	for (i = 0; fn != NULL && i < c->nfds; i++)
		fn(arg, c->fds[i].fd, c->fds[i].events);
	return 0;
}

size_t spfkit_cares_fds(const struct spfkit_resolver *r, struct spfkit_cares_fd *out, size_t max)
{
	const struct cares *c = as_cares(r);
	size_t i;

	if (c == NULL)
		return 0;
	for (i = 0; i < c->nfds && i < max; i++)
		out[i] = c->fds[i];
	return c->nfds;
}

int spfkit_cares_timeout(struct spfkit_resolver *r)
{
	struct cares *c = as_cares(r);

	if (c == NULL)
		return -1;
	if (c->done.head != NULL)
		return 0;
	return ares_wait_ms(c);
}

static int process_and_deliver(struct spfkit_resolver *r, int fd, unsigned events)
{
	struct cares *c = as_cares(r);

	if (c == NULL)
		return SPFKIT_EINVAL;
	if (c->delivering)
		return SPFKIT_ESTATE;
	/* c->err is not ours to report here: it means our own socket list
	 * (wait(), spfkit_cares_fds()) missed one; a watcher saw them all. */
	process(c, fd, events);
	return deliver(c);
}

int spfkit_cares_process_fd(struct spfkit_resolver *r, int fd, unsigned events)
{
	if (fd < 0)
		return SPFKIT_EINVAL;
	return process_and_deliver(r, fd, events);
}

int spfkit_cares_process_timeout(struct spfkit_resolver *r)
{
	return process_and_deliver(r, -1, 0);
}

size_t spfkit_cares_pending(const struct spfkit_resolver *r)
{
	const struct cares *c = as_cares(r);

	return c != NULL ? c->pending : 0;
}

/* ---- creation --------------------------------------------------------- */

static int fail_new(char *errbuf, size_t errlen, int rc, const char *what, int status)
{
	if (errbuf != NULL && errlen > 0) {
		if (status != ARES_SUCCESS)
			snprintf(errbuf, errlen, "%s: %s", what, ares_strerror(status));
		else
			snprintf(errbuf, errlen, "%s", what);
	}
	return rc;
}

/* Check the options and fill in the defaults. */
static int check_options(const struct spfkit_cares_options *opt, struct spfkit_cares_options *o,
			 char *errbuf, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (opt != NULL &&
	    spfkit__sized_copy(o, sizeof(*o), opt,
			       SPFKIT__SIZE_UPTO(struct spfkit_cares_options, edns_udp_size)) != 0)
		return fail_new(errbuf, errlen, SPFKIT_EINVAL,
				"options not set up by spfkit_cares_options_init()", ARES_SUCCESS);
	if (o->timeout_ms <= 0)
		o->timeout_ms = SPFKIT_CARES_TIMEOUT_MS;
	if (o->tries <= 0)
		o->tries = SPFKIT_CARES_TRIES;
	if (o->edns_udp_size == 0)
		o->edns_udp_size = SPFKIT_CARES_EDNS_UDP;
	/* RFC 6891 §6.2.5: below 512 means 512; c-ares 1.18 reads at most 4096. */
	if (o->edns_udp_size < 512 || o->edns_udp_size > SPFKIT_CARES_EDNS_UDP_MAX)
		return fail_new(errbuf, errlen, SPFKIT_EINVAL,
				"EDNS UDP size must be between 512 and 4096", ARES_SUCCESS);
	if (o->servers != NULL && o->servers[0] == '\0')
		return fail_new(errbuf, errlen, SPFKIT_EINVAL, "empty DNS server list",
				ARES_SUCCESS);
	return 0;
}

static int channel_init(struct cares *c, const struct spfkit_cares_options *o, char *errbuf,
			size_t errlen)
{
	struct ares_options ao;
	int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB |
		   ARES_OPT_EDNSPSZ;
	int st;

	memset(&ao, 0, sizeof(ao));
	/* EDNS: c-ares then accepts UDP answers up to ednspsz, and retries
	 * without our OPT record if a server answers FORMERR (RFC 6891 §7). */
	ao.flags = ARES_FLAG_EDNS | ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	ao.timeout = o->timeout_ms;
	ao.tries = o->tries;
	ao.sock_state_cb = on_sock_state;
	ao.sock_state_cb_data = c;
	ao.ednspsz = (int)o->edns_udp_size;
	st = ares_init_options(&c->ch, &ao, mask);
	if (st == ARES_ENOMEM)
		return fail_new(errbuf, errlen, SPFKIT_ENOMEM, "c-ares", st);
	if (st != ARES_SUCCESS)
		return fail_new(errbuf, errlen, SPFKIT_EDNS, "c-ares cannot start", st);
	if (o->servers == NULL)
		return 0;
	st = ares_set_servers_ports_csv(c->ch, o->servers);
	if (st == ARES_SUCCESS)
		return 0;
	ares_destroy(c->ch);
	if (st == ARES_ENOMEM)
		return fail_new(errbuf, errlen, SPFKIT_ENOMEM, "c-ares", st);
	return fail_new(errbuf, errlen, SPFKIT_EINVAL, "bad DNS server list", st);
}

int spfkit_cares_new(const struct spfkit_cares_options *opt, const struct spfkit_allocator *alloc,
		     struct spfkit_resolver **out, char *errbuf, size_t errlen)
{
	struct spfkit_cares_options o;
	struct cares *c;
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	rc = check_options(opt, &o, errbuf, errlen);
	if (rc != 0)
		return rc;
	/* Only WinSock builds need ares_library_init(); elsewhere it would
	 * just bump a process-wide counter, which we leave alone. */
	if (ares_library_initialized() != ARES_SUCCESS)
		return fail_new(errbuf, errlen, SPFKIT_EDNS,
				"call ares_library_init() before spfkit_cares_new()", ARES_SUCCESS);
	c = spfkit__zalloc(alloc, sizeof(*c));
	if (c == NULL)
		return fail_new(errbuf, errlen, SPFKIT_ENOMEM, "out of memory", ARES_SUCCESS);
	c->alloc = alloc;
	if (fds_grow(c) != 0) {
		spfkit__free(alloc, c->fds);
		spfkit__free(alloc, c->pfds);
		spfkit__free(alloc, c);
		return fail_new(errbuf, errlen, SPFKIT_ENOMEM, "out of memory", ARES_SUCCESS);
	}
	c->edns_udp_size = (uint16_t)o.edns_udp_size;
	rc = channel_init(c, &o, errbuf, errlen);
	if (rc != 0) {
		spfkit__free(alloc, c->fds);
		spfkit__free(alloc, c->pfds);
		spfkit__free(alloc, c);
		return rc;
	}
	c->pub.ops = &cares_ops;
	c->pub.impl = c;
	*out = &c->pub;
	return 0;
}
