/*
 * The serving thread: one poll loop over the wake pipe, the UDP socket,
 * the TCP listener and up to DNSD_MAX_TCP connections. Delayed answers
 * wait in a min-heap of timers, so a delay never blocks other queries.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "dnsd_impl.h"

/* Where an answer goes: a UDP peer or a TCP connection slot. */
struct origin {
	int tcp;
	unsigned slot;
	const struct sockaddr_storage *peer;
	socklen_t peerlen;
};

static void bump(struct dnsd *d, uint64_t *counter)
{
	pthread_mutex_lock(&d->mu);
	(*counter)++;
	pthread_mutex_unlock(&d->mu);
}

/* ---- TCP connections ---------------------------------------------------- */

static void conn_close(struct dnsd *d, unsigned slot)
{
	struct dnsd_conn *c = d->conns[slot];

	close(c->fd);
	spfkit__buf_free(&c->out);
	spfkit__free(d->alloc, c);
	d->conns[slot] = NULL;
}

/* Write what the socket takes; 0, or -1 when the connection was closed. */
static int conn_flush(struct dnsd *d, unsigned slot, uint64_t now_ms)
{
	struct dnsd_conn *c = d->conns[slot];

	while (c->outoff < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->outoff, c->out.len - c->outoff,
				 MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		if (n <= 0) {
			conn_close(d, slot);
			return -1;
		}
		c->outoff += (size_t)n;
		c->last_ms = now_ms;
	}
	spfkit__buf_reset(&c->out);
	c->outoff = 0;
	if (c->rd_closed && c->pending == 0) {
		conn_close(d, slot);
		return -1;
	}
	return 0;
}

/* Queue one framed answer (RFC 1035 §4.2.2: two-byte length first). */
static void conn_send(struct dnsd *d, unsigned slot, const unsigned char *pkt, size_t len,
		      uint64_t now_ms)
{
	struct dnsd_conn *c = d->conns[slot];
	unsigned char pre[2] = { (unsigned char)(len >> 8), (unsigned char)len };

	if (c->outoff > 0) { /* keep the unsent tail at the front */
		memmove(c->out.data, c->out.data + c->outoff, c->out.len - c->outoff);
		c->out.len -= c->outoff;
		c->outoff = 0;
	}
	spfkit__buf_append(&c->out, pre, 2);
	if (spfkit__buf_append(&c->out, pkt, len) != 0) {
		bump(d, &d->c.dropped); /* a client that does not read: let it go */
		conn_close(d, slot);
		return;
	}
	(void)conn_flush(d, slot, now_ms);
}

static unsigned oldest_conn(struct dnsd *d)
{
	unsigned i, best = 0;

	for (i = 1; i < DNSD_MAX_TCP; i++)
		if (d->conns[i]->last_ms < d->conns[best]->last_ms)
			best = i;
	return best;
}

static int free_slot(struct dnsd *d, unsigned *slot)
{
	unsigned i;

	for (i = 0; i < DNSD_MAX_TCP; i++) {
		if (d->conns[i] == NULL) {
			*slot = i;
			return 0;
		}
	}
	return -1;
}

static void accept_one(struct dnsd *d, int fd, uint64_t now_ms)
{
	struct dnsd_conn *c;
	unsigned slot = 0;

	if (free_slot(d, &slot) != 0) { /* full: the least recently active goes */
		slot = oldest_conn(d);
		bump(d, &d->c.tcp_evicted); /* before the peer can see it */
		conn_close(d, slot);
	}
	c = spfkit__zalloc(d->alloc, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->serial = ++d->next_serial;
	c->last_ms = now_ms;
	spfkit__buf_init(&c->out, d->alloc, DNSD_TCP_OUT_MAX);
	d->conns[slot] = c;
	bump(d, &d->c.tcp_accepted);
}

static void accept_conns(struct dnsd *d, uint64_t now_ms)
{
	int i;

	for (i = 0; i < 16; i++) {
		int fd = accept(d->tcp_fd, NULL, NULL);
		int fl;

		if (fd < 0)
			return;
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
			close(fd);
			continue;
		}
		accept_one(d, fd, now_ms);
	}
}

/* ---- timers ------------------------------------------------------------- */

static int timer_before(const struct dnsd_timer *a, const struct dnsd_timer *b)
{
	return a->due_us < b->due_us || (a->due_us == b->due_us && a->seq < b->seq);
}

static void heap_swap(struct dnsd_timer *h, size_t a, size_t b)
{
	struct dnsd_timer t = h[a];

	h[a] = h[b];
	h[b] = t;
}

static void heap_up(struct dnsd_timer *h, size_t i)
{
	while (i > 0 && timer_before(&h[i], &h[(i - 1) / 2])) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct dnsd_timer *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && timer_before(&h[l], &h[m]))
			m = l;
		if (r < n && timer_before(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		heap_swap(h, i, m);
		i = m;
	}
}

/* Keep a copy of the answer until due_us; 0, or -1 (queue full, no memory). */
static int timer_add(struct dnsd *d, const struct origin *o, uint64_t due_us)
{
	struct dnsd_timer *t;

	if (d->nheap >= DNSD_MAX_PENDING || d->resp.len > DNSD_PENDING_BYTES_MAX - d->heap_bytes)
		return -1;
	if (d->heap == NULL) {
		d->heap = spfkit__calloc(d->alloc, DNSD_MAX_PENDING, sizeof(*d->heap));
		if (d->heap == NULL)
			return -1;
	}
	t = &d->heap[d->nheap];
	memset(t, 0, sizeof(*t));
	t->pkt = spfkit__alloc(d->alloc, d->resp.len);
	if (t->pkt == NULL)
		return -1;
	memcpy(t->pkt, d->resp.data, d->resp.len);
	t->len = d->resp.len;
	d->heap_bytes += t->len;
	t->due_us = due_us;
	t->seq = d->next_seq++;
	t->tcp = o->tcp;
	t->slot = o->slot;
	if (o->tcp) {
		t->serial = d->conns[o->slot]->serial;
		d->conns[o->slot]->pending++;
	} else {
		memcpy(&t->peer, o->peer, o->peerlen);
		t->peerlen = o->peerlen;
	}
	heap_up(d->heap, d->nheap++);
	return 0;
}

static void udp_send(struct dnsd *d, const struct sockaddr_storage *peer, socklen_t peerlen,
		     const unsigned char *pkt, size_t len)
{
	bump(d, &d->c.answers);
	if (sendto(d->udp_fd, pkt, len, 0, (const struct sockaddr *)peer, peerlen) < 0)
		bump(d, &d->c.dropped);
}

static void timer_fire(struct dnsd *d, struct dnsd_timer *t, uint64_t now_ms)
{
	struct dnsd_conn *c = t->tcp ? d->conns[t->slot] : NULL;

	if (!t->tcp) {
		udp_send(d, &t->peer, t->peerlen, t->pkt, t->len);
	} else if (c == NULL || c->serial != t->serial) {
		bump(d, &d->c.dropped); /* the connection is gone */
	} else {
		c->pending--;
		bump(d, &d->c.answers);
		conn_send(d, t->slot, t->pkt, t->len, now_ms);
	}
	spfkit__free(d->alloc, t->pkt);
}

static void fire_timers(struct dnsd *d, uint64_t now_us)
{
	while (d->nheap > 0 && d->heap[0].due_us <= now_us) {
		struct dnsd_timer t = d->heap[0];

		d->heap[0] = d->heap[--d->nheap];
		heap_down(d->heap, d->nheap, 0);
		d->heap_bytes -= t.len;
		timer_fire(d, &t, now_us / 1000u);
	}
}

/* ---- one query ------------------------------------------------------------ */

/* Decide and encode under the lock (the zone may be swapped otherwise). */
static int decide(struct dnsd *d, const unsigned char *pkt, size_t len, int tcp, uint64_t t_us,
		  unsigned *delay_ms)
{
	struct dnsd_wire_msg q;
	struct dnsd_plan plan;
	struct dnsd_reply_in in;
	int parsed = dnsd_wire_parse(pkt, len, &q, NULL, 0) == 0 && q.has_question;
	int rc;

	if (tcp)
		d->c.tcp_queries++;
	else
		d->c.udp_queries++;
	*delay_ms = d->delay_ms;
	if (len < DNSD_WIRE_HDR || (dnsd_wire_get16(pkt + 2) & DNSD_F_QR)) {
		d->c.bad_queries++; /* too short to answer, or a response: never reply */
		return DNSD_SILENT;
	}
	if (!parsed) {
		d->c.bad_queries++; /* RFC 1035 §4.1.1: FORMERR, "unable to interpret" */
		return dnsd__reply_empty(&d->resp, &q, DNSD_RCODE_FORMERR, 0) ? DNSD_SILENT : DNSD_SEND;
	}
	dnsd__note_query(d, &q, tcp, t_us, &plan);
	*delay_ms = plan.delay_ms;
	in.q = &q;
	in.zone = d->zone;
	in.action = plan.action;
	in.tcp = tcp;
	in.neg_ttl = d->neg_ttl;
	in.seed = d->seed;
	rc = dnsd__respond(&d->resp, &in);
	if (rc == DNSD_SILENT)
		d->c.unanswered++;
	if (rc == DNSD_TRUNC)
		d->c.truncated++;
	return rc < 0 ? DNSD_SILENT : rc;
}

static void handle_query(struct dnsd *d, const unsigned char *pkt, size_t len,
			 const struct origin *o)
{
	uint64_t t_us = dnsd__now_us();
	unsigned delay_ms = 0;
	int rc;

	pthread_mutex_lock(&d->mu);
	rc = decide(d, pkt, len, o->tcp, t_us, &delay_ms);
	pthread_mutex_unlock(&d->mu);
	if (rc == DNSD_SILENT)
		return;
	if (delay_ms > 0) {
		if (timer_add(d, o, t_us + (uint64_t)delay_ms * 1000u) != 0)
			bump(d, &d->c.dropped);
		return;
	}
	if (!o->tcp) {
		udp_send(d, o->peer, o->peerlen, (const unsigned char *)d->resp.data, d->resp.len);
		return;
	}
	bump(d, &d->c.answers);
	conn_send(d, o->slot, (const unsigned char *)d->resp.data, d->resp.len, t_us / 1000u);
}

static void serve_udp(struct dnsd *d)
{
	int i;

	for (i = 0; i < 64; i++) { /* then give TCP and timers their turn */
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		struct origin o = { 0, 0, &peer, 0 };
		ssize_t n = recvfrom(d->udp_fd, d->udp_in, sizeof(d->udp_in), 0,
				     (struct sockaddr *)&peer, &plen);

		if (n < 0)
			return;
		o.peerlen = plen;
		handle_query(d, d->udp_in, (size_t)n, &o);
	}
}

/* A zero length prefix can frame nothing: count it and hang up. */
static int conn_message(struct dnsd *d, unsigned slot)
{
	struct dnsd_conn *c = d->conns[slot];
	size_t mlen = dnsd_wire_get16(c->in);
	struct origin o = { 1, slot, NULL, 0 };

	if (mlen == 0) {
		pthread_mutex_lock(&d->mu);
		d->c.tcp_queries++;
		d->c.bad_queries++;
		pthread_mutex_unlock(&d->mu);
		conn_close(d, slot);
		return -1;
	}
	c->inlen = 0;
	handle_query(d, c->in + 2, mlen, &o);
	return d->conns[slot] == c ? 0 : -1;
}

/* Read up to the end of the current message each time, so framing stays simple. */
static void conn_read(struct dnsd *d, unsigned slot, uint64_t now_ms)
{
	struct dnsd_conn *c = d->conns[slot];
	int msgs = 0;

	while (msgs < 64) {
		size_t need = c->inlen < 2 ? 2 : 2 + (size_t)dnsd_wire_get16(c->in);
		ssize_t n = recv(c->fd, c->in + c->inlen, need - c->inlen, 0);

		if (n == 0) {
			c->rd_closed = 1;
			if (c->outoff == c->out.len && c->pending == 0)
				conn_close(d, slot);
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				conn_close(d, slot);
			return;
		}
		c->inlen += (size_t)n;
		c->last_ms = now_ms;
		if (c->inlen < 2 || c->inlen < 2 + (size_t)dnsd_wire_get16(c->in))
			continue;
		msgs++;
		if (conn_message(d, slot) != 0)
			return;
	}
}

/* Close connections idle for tcp_idle_ms, unless an answer is still due for them. */
static void expire_conns(struct dnsd *d, uint64_t now_ms)
{
	unsigned i;

	for (i = 0; i < DNSD_MAX_TCP; i++) {
		struct dnsd_conn *c = d->conns[i];

		if (c != NULL && c->pending == 0 && now_ms >= c->last_ms &&
		    now_ms - c->last_ms >= d->tcp_idle_ms) {
			bump(d, &d->c.tcp_idle_closed); /* before the peer can see it */
			conn_close(d, i);
		}
	}
}

/* ---- the loop ---------------------------------------------------------------- */

static int poll_timeout(const struct dnsd *d, uint64_t now_us)
{
	uint64_t wait_us = UINT64_MAX, now_ms = now_us / 1000u;
	unsigned i;

	if (d->nheap > 0)
		wait_us = d->heap[0].due_us > now_us ? d->heap[0].due_us - now_us : 0;
	for (i = 0; i < DNSD_MAX_TCP; i++) {
		const struct dnsd_conn *c = d->conns[i];
		uint64_t end;

		if (c == NULL || c->pending > 0)
			continue;
		end = c->last_ms + d->tcp_idle_ms;
		if (end <= now_ms)
			return 0;
		if ((end - now_ms) * 1000u < wait_us)
			wait_us = (end - now_ms) * 1000u;
	}
	if (wait_us == UINT64_MAX)
		return -1;
	if (wait_us > 60000000u)
		return 60000;
	return (int)((wait_us + 999u) / 1000u); /* round up: never fire early */
}

static nfds_t fill_pollfds(struct dnsd *d, struct pollfd *p, unsigned *slots)
{
	nfds_t n = 3;
	unsigned i;

	p[0] = (struct pollfd){ .fd = d->wake_rd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = d->udp_fd, .events = POLLIN };
	p[2] = (struct pollfd){ .fd = d->tcp_fd, .events = POLLIN };
	for (i = 0; i < DNSD_MAX_TCP; i++) {
		const struct dnsd_conn *c = d->conns[i];

		if (c == NULL)
			continue;
		p[n].fd = c->fd;
		p[n].events = (short)((c->rd_closed ? 0 : POLLIN) |
				      (c->outoff < c->out.len ? POLLOUT : 0));
		p[n].revents = 0;
		slots[n - 3] = i;
		n++;
	}
	return n;
}

static void conn_events(struct dnsd *d, const struct pollfd *p, unsigned slot, uint64_t now_ms)
{
	struct dnsd_conn *c = d->conns[slot];

	if (c == NULL || c->fd != p->fd)
		return;
	if ((p->revents & (POLLHUP | POLLERR | POLLNVAL)) && c->rd_closed) {
		conn_close(d, slot); /* gone both ways: nothing left to deliver to */
		return;
	}
	if ((p->revents & POLLOUT) && conn_flush(d, slot, now_ms) != 0)
		return;
	if (p->revents & (POLLIN | POLLHUP | POLLERR))
		conn_read(d, slot, now_ms);
}

void *dnsd__serve(void *arg)
{
	struct dnsd *d = arg;
	struct pollfd p[3 + DNSD_MAX_TCP];
	unsigned slots[DNSD_MAX_TCP];

	for (;;) {
		uint64_t now_us = dnsd__now_us();
		nfds_t i, n;

		fire_timers(d, now_us);
		expire_conns(d, now_us / 1000u);
		n = fill_pollfds(d, p, slots);
		if (poll(p, n, poll_timeout(d, now_us)) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break; /* dnsd_stop() */
		now_us = dnsd__now_us();
		for (i = 3; i < n; i++)
			if (p[i].revents)
				conn_events(d, &p[i], slots[i - 3], now_us / 1000u);
		if (p[1].revents)
			serve_udp(d);
		if (p[2].revents)
			accept_conns(d, now_us / 1000u);
	}
	return NULL;
}
