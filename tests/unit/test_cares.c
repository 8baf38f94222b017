/*
 * Tests of the c-ares backend (lib/dns/cares.c) against a tiny DNS
 * server that this file runs on 127.0.0.1, port 0, in a thread: UDP and
 * TCP on the same port, canned answers chosen by the first label of the
 * question name. Loopback only; no other network.
 *
 * Built twice: as the unit test `cares`, and with SPFKIT_TEST_EVENT
 * (lib/event/meson.build, when libevent is found) as `event`, which runs
 * the libevent helper's tests against the same server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <spfkit/cares.h>

#include "msg.h"
#include "dns_build.h" /* tests/support */

#ifdef SPFKIT_TEST_EVENT
#include <event2/event.h>

#include <spfkit/cache.h>
#include <spfkit/event.h>
#endif

/* ---- a counting allocator (leaks are checked in teardown) ------------- */

static void *c_alloc(void *user, size_t n)
{
	void *p = malloc(n);

	if (p != NULL)
		__atomic_add_fetch((long *)user, 1, __ATOMIC_RELAXED);
	return p;
}

static void *c_realloc(void *user, void *old, size_t n)
{
	void *p;

	if (old == NULL)
		return c_alloc(user, n);
	p = realloc(old, n);
	return p;
}

static void c_free(void *user, void *p)
{
	if (p != NULL)
		__atomic_sub_fetch((long *)user, 1, __ATOMIC_RELAXED);
	free(p);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the fake server -------------------------------------------------- */

#define MAX_CONN 8
#define MAX_LATER 16
#define SLOW_MS 300
#define BIG_TXT 3000

struct later {
	int64_t due;
	struct sockaddr_in to;
	unsigned char msg[512];
	size_t len;
};

struct fake {
	int udp, tcp, port;
	int wake[2];
	int conn[MAX_CONN];
	pthread_t th;
	pthread_mutex_t mu;
	int udp_queries, tcp_queries;
	struct later later[MAX_LATER];
	size_t nlater;
};

/* The question of a query: its end offset, first label, type. */
struct q {
	size_t end;
	char label[64];
	uint16_t type;
};

static int read_question(const unsigned char *m, size_t len, struct q *q)
{
	size_t pos = 12, n;

	if (len < 12)
		return -1;
	q->label[0] = 0;
	while (pos < len && m[pos] != 0) {
		n = m[pos];
		if (n > 63 || pos + 1 + n >= len)
			return -1;
		if (pos == 12) {
			memcpy(q->label, m + pos + 1, n);
			q->label[n] = 0;
		}
		pos += 1 + n;
	}
	if (pos + 5 > len)
		return -1;
	q->type = (uint16_t)(m[pos + 1] << 8 | m[pos + 2]);
	q->end = pos + 5;
	return 0;
}

/* Header echoing the query id and RD, then the query's own question. */
static void reply_start(struct spfkit__dnsb *b, const unsigned char *m, const struct q *q,
			unsigned flags, unsigned an, unsigned ns)
{
	spfkit__dnsb_header(b, (uint16_t)(m[0] << 8 | m[1]),
			    (uint16_t)(SPFKIT__DNS_F_QR | SPFKIT__DNS_F_RD | SPFKIT__DNS_F_RA | flags), 1,
			    (uint16_t)an, (uint16_t)ns, 0);
	spfkit__dnsb_bytes(b, m + 12, q->end - 12);
}

/* An RR owned by the question name (a pointer to offset 12). */
static void rr_begin(struct spfkit__dnsb *b, uint16_t type, uint32_t ttl)
{
	spfkit__dnsb_ptr(b, 12);
	spfkit__dnsb_u16(b, type);
	spfkit__dnsb_u16(b, SPFKIT__DNS_CLASS_IN);
	spfkit__dnsb_u32(b, ttl);
	b->rdlen_at = spfkit__dnsb_len(b);
	spfkit__dnsb_u16(b, 0);
}

static void soa(struct spfkit__dnsb *b)
{
	spfkit__dnsb_name(b, "example", 7);
	spfkit__dnsb_u16(b, SPFKIT_RR_SOA);
	spfkit__dnsb_u16(b, SPFKIT__DNS_CLASS_IN);
	spfkit__dnsb_u32(b, 900);
	b->rdlen_at = spfkit__dnsb_len(b);
	spfkit__dnsb_u16(b, 0);
	spfkit__dnsb_name(b, "ns.example", 10);
	spfkit__dnsb_name(b, "hostmaster.example", 18);
	spfkit__dnsb_u32(b, 1);
	spfkit__dnsb_u32(b, 3600);
	spfkit__dnsb_u32(b, 600);
	spfkit__dnsb_u32(b, 86400);
	spfkit__dnsb_u32(b, 600); /* MINIMUM: the negative TTL is min(900, 600) */
	spfkit__dnsb_rr_end(b);
}

static void answer_a(struct spfkit__dnsb *b, const unsigned char *m, const struct q *q)
{
	reply_start(b, m, q, 0, 2, 0);
	rr_begin(b, SPFKIT_RR_A, 300);
	spfkit__dnsb_bytes(b, "\300\000\002\001", 4);
	spfkit__dnsb_rr_end(b);
	rr_begin(b, SPFKIT_RR_A, 60);
	spfkit__dnsb_bytes(b, "\300\000\002\002", 4);
	spfkit__dnsb_rr_end(b);
}

static void answer_txt(struct spfkit__dnsb *b, const unsigned char *m, const struct q *q,
		       size_t len)
{
	char *text = malloc(len);

	memset(text, 'x', len);
	memcpy(text, "v=spf1 -all", len < 11 ? len : 11);
	reply_start(b, m, q, 0, 1, 0);
	rr_begin(b, SPFKIT_RR_TXT, 120);
	spfkit__dnsb_txt(b, text, len);
	spfkit__dnsb_rr_end(b);
	free(text);
}

/*
 * Build the reply to one query into b; returns 0 (send), 1 (send after
 * SLOW_MS), or -1 (stay silent).
 */
static int make_reply(struct spfkit__dnsb *b, const unsigned char *m, size_t len, int tcp)
{
	struct q q;

	if (read_question(m, len, &q) != 0)
		return -1;
	if (strcmp(q.label, "a") == 0 || strcmp(q.label, "slow") == 0) {
		answer_a(b, m, &q);
		return strcmp(q.label, "slow") == 0 ? 1 : 0;
	}
	if (strcmp(q.label, "txt") == 0) {
		answer_txt(b, m, &q, 11);
	} else if (strcmp(q.label, "big") == 0) {
		/* RFC 7766: over UDP only TC=1; the whole answer over TCP */
		if (tcp)
			answer_txt(b, m, &q, BIG_TXT);
		else
			reply_start(b, m, &q, SPFKIT__DNS_F_TC, 0, 0);
	} else if (strcmp(q.label, "nx") == 0) {
		reply_start(b, m, &q, SPFKIT__DNS_NXDOMAIN, 0, 1);
		soa(b);
	} else if (strcmp(q.label, "nodata") == 0) {
		reply_start(b, m, &q, 0, 0, 1);
		soa(b);
	} else if (strcmp(q.label, "servfail") == 0) {
		reply_start(b, m, &q, SPFKIT__DNS_SERVFAIL, 0, 0);
	} else if (strcmp(q.label, "bad") == 0) {
		reply_start(b, m, &q, 0, 1, 0);
		rr_begin(b, SPFKIT_RR_A, 60);
		spfkit__dnsb_bytes(b, "\300\000", 2); /* RDLENGTH says 4 after rr_end... */
		spfkit__dnsb_rr_end(b);
		b->buf.data[spfkit__dnsb_len(b) - 3] = 4; /* ...but 2 octets follow */
	} else {
		return -1; /* "silent" and anything unknown: no answer */
	}
	return 0;
}

static void serve_udp(struct fake *f)
{
	unsigned char m[4096];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	struct spfkit__dnsb b;
	ssize_t n;
	int how;

	n = recvfrom(f->udp, m, sizeof(m), 0, (struct sockaddr *)&from, &fl);
	if (n <= 0)
		return;
	pthread_mutex_lock(&f->mu);
	f->udp_queries++;
	pthread_mutex_unlock(&f->mu);
	spfkit__dnsb_init(&b, NULL, 65535);
	how = make_reply(&b, m, (size_t)n, 0);
	if (how == 0) {
		(void)sendto(f->udp, spfkit__dnsb_data(&b), spfkit__dnsb_len(&b), 0,
			     (struct sockaddr *)&from, fl);
	} else if (how == 1 && f->nlater < MAX_LATER && spfkit__dnsb_len(&b) <= 512) {
		struct later *l = &f->later[f->nlater++];

		l->due = now_ms() + SLOW_MS;
		l->to = from;
		l->len = spfkit__dnsb_len(&b);
		memcpy(l->msg, spfkit__dnsb_data(&b), l->len);
	}
	spfkit__dnsb_free(&b);
}

static void send_due(struct fake *f)
{
	size_t i = 0;

	while (i < f->nlater) {
		if (f->later[i].due > now_ms()) {
			i++;
			continue;
		}
		(void)sendto(f->udp, f->later[i].msg, f->later[i].len, 0,
			     (struct sockaddr *)&f->later[i].to, sizeof(f->later[i].to));
		f->later[i] = f->later[--f->nlater];
	}
}

static int read_full(int fd, unsigned char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One length-prefixed query from a TCP client; -1 closes it. */
static int serve_tcp(struct fake *f, int fd)
{
	unsigned char len2[2], m[4096], pre[2];
	struct spfkit__dnsb b;
	size_t n;
	int rc = 0;

	if (read_full(fd, len2, 2) != 0)
		return -1;
	n = (size_t)len2[0] << 8 | len2[1];
	if (n > sizeof(m) || read_full(fd, m, n) != 0)
		return -1;
	pthread_mutex_lock(&f->mu);
	f->tcp_queries++;
	pthread_mutex_unlock(&f->mu);
	spfkit__dnsb_init(&b, NULL, 65535);
	if (make_reply(&b, m, n, 1) >= 0) {
		pre[0] = (unsigned char)(spfkit__dnsb_len(&b) >> 8);
		pre[1] = (unsigned char)spfkit__dnsb_len(&b);
		if (write(fd, pre, 2) != 2 ||
		    write(fd, spfkit__dnsb_data(&b), spfkit__dnsb_len(&b)) !=
			    (ssize_t)spfkit__dnsb_len(&b))
			rc = -1;
	}
	spfkit__dnsb_free(&b);
	return rc;
}

static void accept_tcp(struct fake *f)
{
	int fd = accept(f->tcp, NULL, NULL);
	int i;

	if (fd < 0)
		return;
	for (i = 0; i < MAX_CONN; i++) {
		if (f->conn[i] < 0) {
			f->conn[i] = fd;
			return;
		}
	}
	close(fd);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	struct pollfd p[3 + MAX_CONN];
	int i, n;

	for (;;) {
		p[0] = (struct pollfd){ f->wake[0], POLLIN, 0 };
		p[1] = (struct pollfd){ f->udp, POLLIN, 0 };
		p[2] = (struct pollfd){ f->tcp, POLLIN, 0 };
		for (i = 0; i < MAX_CONN; i++)
			p[3 + i] = (struct pollfd){ f->conn[i], POLLIN, 0 };
		n = poll(p, 3 + MAX_CONN, f->nlater > 0 ? 10 : 1000);
		if (n < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			serve_udp(f);
		if (p[2].revents & POLLIN)
			accept_tcp(f);
		for (i = 0; i < MAX_CONN; i++) {
			if (f->conn[i] >= 0 && p[3 + i].revents && serve_tcp(f, f->conn[i]) != 0) {
				close(f->conn[i]);
				f->conn[i] = -1;
			}
		}
		send_due(f);
	}
	return NULL;
}

/* UDP and TCP on one port: take a free UDP port, then bind TCP to it. */
static int fake_bind(struct fake *f)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->udp = socket(AF_INET, SOCK_DGRAM, 0);
	f->tcp = socket(AF_INET, SOCK_STREAM, 0);
	if (f->udp < 0 || f->tcp < 0 || bind(f->udp, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(f->udp, (struct sockaddr *)&a, &al) != 0)
		return -1;
	(void)setsockopt(f->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(f->tcp, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(f->tcp, 8) != 0)
		return -1;
	f->port = ntohs(a.sin_port);
	return 0;
}

static struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	int i, tries;

	assert_non_null(f);
	for (tries = 0; tries < 20; tries++) {
		if (fake_bind(f) == 0)
			break;
		close(f->udp);
		close(f->tcp);
	}
	assert_true(tries < 20);
	for (i = 0; i < MAX_CONN; i++)
		f->conn[i] = -1;
	assert_int_equal(pipe(f->wake), 0);
	pthread_mutex_init(&f->mu, NULL);
	assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
	return f;
}

static void fake_stop(struct fake *f)
{
	int i;

	assert_int_equal(write(f->wake[1], "x", 1), 1);
	pthread_join(f->th, NULL);
	for (i = 0; i < MAX_CONN; i++)
		if (f->conn[i] >= 0)
			close(f->conn[i]);
	close(f->udp);
	close(f->tcp);
	close(f->wake[0]);
	close(f->wake[1]);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

static void fake_counts(struct fake *f, int *udp, int *tcp)
{
	pthread_mutex_lock(&f->mu);
	*udp = f->udp_queries;
	*tcp = f->tcp_queries;
	pthread_mutex_unlock(&f->mu);
}

/* ---- fixture: server + resolver --------------------------------------- */

struct got {
	int calls;
	int in_submit_seen; /* a callback ran while submit() was running */
	enum spfkit_dns_status status;
	uint32_t ttl;
	size_t count;
	char detail[128];
	size_t len0; /* data length of the first RR */
	unsigned char data0[BIG_TXT + 1];
};

struct t {
	long live;
	struct spfkit_allocator alloc;
	struct fake *f;
	struct spfkit_resolver *r;
	int in_submit;
	struct got got;
};

static void record(void *arg, const struct spfkit_dns_answer *a)
{
	struct t *t = arg;
	struct got *g = &t->got;

	g->calls++;
	g->in_submit_seen |= t->in_submit;
	g->status = a->status;
	g->ttl = a->ttl;
	g->count = a->count;
	snprintf(g->detail, sizeof(g->detail), "%s", a->detail ? a->detail : "");
	g->len0 = 0;
	if (a->count > 0 && a->rrs[0].len <= BIG_TXT) {
		g->len0 = a->rrs[0].len;
		memcpy(g->data0, a->rrs[0].data, a->rrs[0].len);
	}
}

static struct spfkit_resolver *new_resolver(struct t *t, int timeout_ms, int tries)
{
	struct spfkit_cares_options o;
	struct spfkit_resolver *r = NULL;
	char servers[64], err[256];

	snprintf(servers, sizeof(servers), "127.0.0.1:%d", t->f->port);
	spfkit_cares_options_init(&o);
	o.servers = servers;
	o.timeout_ms = timeout_ms;
	o.tries = tries;
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &r, err, sizeof(err)), 0);
	return r;
}

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->alloc = (struct spfkit_allocator){ c_alloc, c_realloc, c_free, &t->live };
	t->f = fake_start();
	t->r = new_resolver(t, 250, 1);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;
	long live;

	spfkit_resolver_free(t->r);
	fake_stop(t->f);
	live = t->live;
	free(t);
	assert_int_equal(live, 0); /* got live blocks after free: a leak */
	return 0;
}

static uint64_t ask(struct t *t, const char *name, uint16_t type)
{
	uint64_t h = 0;
	int rc;

	t->in_submit = 1;
	rc = spfkit_resolver_submit(t->r, name, strlen(name), type, record, t, &h);
	t->in_submit = 0;
	assert_int_equal(rc, 0);
	assert_true(h != 0);
	return h;
}

#ifndef SPFKIT_TEST_EVENT /* the c-ares tests proper */

/* wait() until the callback ran (or 3 s passed). */
static void wait_answer(struct t *t)
{
	int64_t end = now_ms() + 3000;

	while (t->got.calls == 0 && now_ms() < end)
		assert_true(spfkit_resolver_wait(t->r, 100) >= 0);
	assert_int_equal(t->got.calls, 1);
	assert_int_equal(t->got.in_submit_seen, 0);
}

/* ---- options ---------------------------------------------------------- */

static void rejects_bad_options(void **state)
{
	struct t *t = *state;
	struct spfkit_cares_options o;
	struct spfkit_resolver *r = (struct spfkit_resolver *)1;
	char err[256] = "";

	spfkit_cares_options_init(&o);
	o.edns_udp_size = 100;
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &r, err, sizeof(err)), SPFKIT_EINVAL);
	assert_null(r);
	assert_string_equal(err, "EDNS UDP size must be between 512 and 4096");
	o.edns_udp_size = 8192;
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &r, err, sizeof(err)), SPFKIT_EINVAL);
	o.edns_udp_size = 0;
	o.servers = "";
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &r, err, sizeof(err)), SPFKIT_EINVAL);
	o.servers = "not an address";
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &r, err, sizeof(err)), SPFKIT_EINVAL);
	assert_non_null(strstr(err, "bad DNS server list"));
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, NULL, err, sizeof(err)), SPFKIT_EINVAL);
}

static void accepts_ipv6_and_lists(void **state)
{
	struct t *t = *state;
	struct spfkit_cares_options o;
	struct spfkit_resolver *r = NULL;
	char err[256] = "";

	spfkit_cares_options_init(&o);
	o.servers = "[::1]:5353,127.0.0.1:53,192.0.2.1";
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &r, err, sizeof(err)), 0);
	spfkit_resolver_free(r);
	/* NULL options: defaults and /etc/resolv.conf */
	assert_int_equal(spfkit_cares_new(NULL, &t->alloc, &r, err, sizeof(err)), 0);
	spfkit_resolver_free(r);
}

/* ---- answers ---------------------------------------------------------- */

static void a_answer(void **state)
{
	struct t *t = *state;

	ask(t, "a.example", SPFKIT_RR_A);
	assert_int_equal(t->got.calls, 0); /* never from inside submit */
	assert_int_equal(spfkit_cares_pending(t->r), 1);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	assert_int_equal(t->got.count, 2);
	assert_int_equal(t->got.ttl, 60);
	assert_memory_equal(t->got.data0, "\300\000\002\001", 4);
	assert_int_equal(spfkit_cares_pending(t->r), 0);
}

static void txt_answer(void **state)
{
	struct t *t = *state;

	ask(t, "txt.example", SPFKIT_RR_TXT);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	assert_int_equal(t->got.len0, 11);
	assert_memory_equal(t->got.data0, "v=spf1 -all", 11);
}

static void nxdomain_answer(void **state)
{
	struct t *t = *state;

	ask(t, "nx.example", SPFKIT_RR_TXT);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(t->got.ttl, 600);
}

static void nodata_answer(void **state)
{
	struct t *t = *state;

	ask(t, "nodata.example", SPFKIT_RR_TXT);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_NODATA);
	assert_int_equal(t->got.ttl, 600);
}

static void servfail_is_tempfail(void **state)
{
	struct t *t = *state;

	ask(t, "servfail.example", SPFKIT_RR_TXT);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_TEMPFAIL);
	/* c-ares 1.18 reports SERVFAIL from every server as ECONNREFUSED */
	if (strcmp(t->got.detail, "SERVFAIL") != 0)
		assert_string_equal(t->got.detail, "SERVFAIL, REFUSED or server unreachable");
}

static void timeout_is_tempfail_in_time(void **state)
{
	struct t *t = *state;
	int64_t start = now_ms(), took;

	ask(t, "silent.example", SPFKIT_RR_TXT); /* timeout 250 ms, 1 try */
	wait_answer(t);
	took = now_ms() - start;
	assert_int_equal(t->got.status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(t->got.detail, "timeout");
	assert_true(took >= 200);
	assert_true(took < 1000);
}

static void truncated_udp_falls_back_to_tcp(void **state)
{
	struct t *t = *state;
	int udp, tcp;

	ask(t, "big.example", SPFKIT_RR_TXT);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	assert_int_equal(t->got.len0, BIG_TXT);
	assert_memory_equal(t->got.data0, "v=spf1 -allxxx", 14);
	fake_counts(t->f, &udp, &tcp);
	assert_int_equal(udp, 1);
	assert_int_equal(tcp, 1);
}

static void malformed_is_tempfail(void **state)
{
	struct t *t = *state;

	ask(t, "bad.example", SPFKIT_RR_A);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(t->got.detail, "malformed reply: RDATA runs past the end");
}

/* A port nobody listens on: ICMP says so, long before the timeout. */
static void closed_port_is_tempfail(void **state)
{
	struct t *t = *state;
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	struct spfkit_cares_options o;
	char servers[64];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int64_t start;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	close(fd); /* the port is free again: closed */
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", ntohs(a.sin_port));
	spfkit_cares_options_init(&o);
	o.servers = servers;
	o.timeout_ms = 2000;
	o.tries = 1;
	spfkit_resolver_free(t->r);
	assert_int_equal(spfkit_cares_new(&o, &t->alloc, &t->r, NULL, 0), 0);
	start = now_ms();
	ask(t, "a.example", SPFKIT_RR_A);
	assert_int_equal(t->got.calls, 0);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_TEMPFAIL);
	assert_true(now_ms() - start < 1500);
}

/* ---- the contract ----------------------------------------------------- */

static void cancel_before_answer(void **state)
{
	struct t *t = *state;
	uint64_t h = ask(t, "slow.example", SPFKIT_RR_A);
	int64_t end = now_ms() + SLOW_MS + 300;

	spfkit_resolver_cancel(t->r, h);
	assert_int_equal(spfkit_cares_pending(t->r), 0);
	while (now_ms() < end)
		assert_true(spfkit_resolver_wait(t->r, 50) >= 0);
	assert_int_equal(t->got.calls, 0);
	spfkit_resolver_cancel(t->r, h);      /* twice: harmless */
	spfkit_resolver_cancel(t->r, 999999); /* unknown: harmless */
}

/* The orphan keeps c-ares busy until the answer; then it is freed. */
static void cancel_then_other_answer(void **state)
{
	struct t *t = *state;
	uint64_t h = ask(t, "slow.example", SPFKIT_RR_A);

	spfkit_resolver_cancel(t->r, h);
	ask(t, "txt.example", SPFKIT_RR_TXT);
	wait_answer(t);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	assert_int_equal(t->got.len0, 11);
}

static void destroy_with_pending(void **state)
{
	struct t *t = *state;

	ask(t, "slow.example", SPFKIT_RR_A);
	ask(t, "silent.example", SPFKIT_RR_A);
	ask(t, "a.example", SPFKIT_RR_A);
	spfkit_resolver_free(t->r);
	t->r = NULL;
	assert_int_equal(t->got.calls, 0); /* teardown checks nothing leaked */
}

static void bad_name_never_calls_back(void **state)
{
	struct t *t = *state;
	uint64_t h = 0;

	assert_int_equal(spfkit_resolver_submit(t->r, "a..b", 4, SPFKIT_RR_A, record, t, &h),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit_cares_pending(t->r), 0);
	assert_int_equal(spfkit_resolver_wait(t->r, 50), 0);
	assert_int_equal(t->got.calls, 0);
}

static void wait_with_nothing_pending(void **state)
{
	struct t *t = *state;
	int64_t start = now_ms();

	assert_int_equal(spfkit_resolver_wait(t->r, 2000), 0);
	assert_true(now_ms() - start < 500);
}

static void wait_returns_at_its_timeout(void **state)
{
	struct t *t = *state;
	int64_t start = now_ms(), took;

	ask(t, "slow.example", SPFKIT_RR_A);
	assert_int_equal(spfkit_resolver_wait(t->r, 50), 0);
	took = now_ms() - start;
	assert_true(took >= 40 && took < SLOW_MS);
	wait_answer(t);
}

struct chain {
	struct t *t;
	int calls;
	int wait_rc;
	struct got second;
};

static void second_answer(void *arg, const struct spfkit_dns_answer *a)
{
	struct chain *ch = arg;

	ch->calls++;
	ch->second.status = a->status;
}

/* From a callback: submit works, wait is refused. */
static void first_answer(void *arg, const struct spfkit_dns_answer *a)
{
	struct chain *ch = arg;

	(void)a;
	ch->calls++;
	ch->wait_rc = spfkit_resolver_wait(ch->t->r, 0);
	assert_int_equal(spfkit_resolver_submit(ch->t->r, "txt.example", 11, SPFKIT_RR_TXT,
						second_answer, ch, NULL),
			 0);
}

static void callback_may_submit(void **state)
{
	struct t *t = *state;
	struct chain ch = { t, 0, 0, { 0 } };
	int64_t end = now_ms() + 3000;

	assert_int_equal(
		spfkit_resolver_submit(t->r, "a.example", 9, SPFKIT_RR_A, first_answer, &ch, NULL), 0);
	while (ch.calls < 2 && now_ms() < end)
		assert_true(spfkit_resolver_wait(t->r, 100) >= 0);
	assert_int_equal(ch.calls, 2);
	assert_int_equal(ch.wait_rc, SPFKIT_ESTATE);
	assert_int_equal(ch.second.status, SPFKIT_DNS_OK);
}

static void many_at_once(void **state)
{
	struct t *t = *state;
	static const char *names[] = { "a.example", "txt.example", "nx.example", "nodata.example",
				       "big.example", "slow.example" };
	int64_t end = now_ms() + 3000;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ask(t, names[i], SPFKIT_RR_TXT);
	while (t->got.calls < 6 && now_ms() < end)
		assert_true(spfkit_resolver_wait(t->r, 100) >= 0);
	assert_int_equal(t->got.calls, 6);
	assert_int_equal(t->got.in_submit_seen, 0);
}

/* ---- the event-loop API, driven by hand with poll() ------------------- */

struct watch_log {
	struct spfkit_cares_fd fds[8];
	size_t n;
	int timeout_notes;
};

static void on_watch(void *arg, int fd, unsigned events)
{
	struct watch_log *w = arg;
	size_t i;

	if (fd < 0) {
		w->timeout_notes++;
		return;
	}
	for (i = 0; i < w->n && w->fds[i].fd != fd; i++)
		;
	if (events == 0) {
		if (i < w->n)
			w->fds[i] = w->fds[--w->n];
		return;
	}
	if (i == w->n && w->n < 8)
		w->n++;
	w->fds[i].fd = fd;
	w->fds[i].events = events;
}

static void by_hand_with_poll(void **state)
{
	struct t *t = *state;
	struct watch_log w = { .n = 0 };
	struct spfkit_cares_fd list[8];
	struct pollfd p[8];
	int64_t end = now_ms() + 3000;
	size_t i;
	int ms, rc;

	assert_int_equal(spfkit_cares_set_watch(t->r, on_watch, &w), 0);
	assert_int_equal(spfkit_cares_timeout(t->r), -1);
	ask(t, "big.example", SPFKIT_RR_TXT);
	assert_true(w.timeout_notes > 0);
	assert_int_equal(w.n, 1); /* the UDP socket */
	assert_int_equal(spfkit_cares_fds(t->r, list, 8), 1);
	assert_int_equal(list[0].fd, w.fds[0].fd);
	while (t->got.calls == 0 && now_ms() < end) {
		for (i = 0; i < w.n; i++)
			p[i] = (struct pollfd){ w.fds[i].fd,
						(short)(((w.fds[i].events & SPFKIT_CARES_READ) ? POLLIN : 0) |
							((w.fds[i].events & SPFKIT_CARES_WRITE) ? POLLOUT : 0)),
						0 };
		ms = spfkit_cares_timeout(t->r);
		assert_true(ms >= 0);
		rc = poll(p, w.n, ms);
		if (rc == 0)
			assert_true(spfkit_cares_process_timeout(t->r) >= 0);
		for (i = 0; rc > 0 && i < w.n; i++)
			if (p[i].revents)
				assert_true(spfkit_cares_process_fd(
						    t->r, p[i].fd,
						    ((p[i].revents & POLLOUT) ? SPFKIT_CARES_WRITE : 0) |
							    ((p[i].revents & ~POLLOUT) ? SPFKIT_CARES_READ
										       : 0)) >= 0);
	}
	assert_int_equal(t->got.calls, 1);
	assert_int_equal(t->got.len0, BIG_TXT);
	assert_int_equal(spfkit_cares_set_watch(t->r, NULL, NULL), 0);
}

static void event_api_rejects_other_resolvers(void **state)
{
	struct spfkit_resolver other = { NULL, NULL };

	(void)state;
	assert_int_equal(spfkit_cares_set_watch(&other, on_watch, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cares_timeout(&other), -1);
	assert_int_equal(spfkit_cares_fds(&other, NULL, 0), 0);
	assert_int_equal(spfkit_cares_process_timeout(&other), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cares_process_fd(NULL, 3, SPFKIT_CARES_READ), SPFKIT_EINVAL);
	assert_int_equal(spfkit_cares_pending(NULL), 0);
}

/* ---- the name contract (include/spfkit/resolver.h) -------------------- */

/* Raw label bytes: '\' and every other byte but '.' go on the wire as they are. */
static void raw_names_keep_every_byte(void **state)
{
	static const char name[] = "a\\046b\\\\c\"d;e(f g\xc3\xa9.x.Example.";
	static const unsigned char want[] = "\023a\\046b\\\\c\"d;e(f g\xc3\xa9\001x\007Example";
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	size_t wl;

	(void)state;
	assert_int_equal(spfkit__dns_name_wire_raw(name, sizeof(name) - 1, wire, &wl), 0);
	assert_int_equal(wl, sizeof(want)); /* the root's zero is want's NUL */
	assert_memory_equal(wire, want, wl);
	/* the same name without its final dot */
	assert_int_equal(spfkit__dns_name_wire_raw(name, sizeof(name) - 2, wire, &wl), 0);
	assert_memory_equal(wire, want, wl);
	/* a NUL byte is label data too */
	assert_int_equal(spfkit__dns_name_wire_raw("a\0b.c", 5, wire, &wl), 0);
	assert_int_equal(wl, 7);
	assert_memory_equal(wire, "\003a\0b\001c", 7); /* and the root's zero */
	/* the root */
	assert_int_equal(spfkit__dns_name_wire_raw(".", 1, wire, &wl), 0);
	assert_int_equal(wl, 1);
	assert_int_equal(spfkit__dns_name_wire_raw("", 0, wire, &wl), 0);
	assert_int_equal(wl, 1);
}

static void raw_names_reject_bad_shapes(void **state)
{
	unsigned char wire[SPFKIT__DNS_NAME_MAX];
	char big[300];
	size_t wl;

	(void)state;
	assert_int_equal(spfkit__dns_name_wire_raw("a..b", 4, wire, &wl), SPFKIT_EINVAL);
	assert_int_equal(spfkit__dns_name_wire_raw(".a", 2, wire, &wl), SPFKIT_EINVAL);
	assert_int_equal(spfkit__dns_name_wire_raw("a..", 3, wire, &wl), SPFKIT_EINVAL);
	/* 63 raw bytes fit a label; "\\" counts as the one byte it is */
	memset(big, '\\', sizeof(big));
	assert_int_equal(spfkit__dns_name_wire_raw(big, 63, wire, &wl), 0);
	assert_int_equal(wl, 65);
	assert_int_equal(spfkit__dns_name_wire_raw(big, 64, wire, &wl), SPFKIT_EINVAL);
	/* 253 octets of text: 255 on the wire, the most RFC 1035 §2.3.4 allows */
	big[63] = big[127] = big[191] = '.';
	assert_int_equal(spfkit__dns_name_wire_raw(big, 253, wire, &wl), 0);
	assert_int_equal(wl, 255);
	assert_int_equal(spfkit__dns_name_wire_raw(big, 254, wire, &wl), SPFKIT_EINVAL);
}

/* The query carries the raw bytes: "\046" stays four octets, no '.' in a label. */
static void query_carries_raw_name(void **state)
{
	struct spfkit__dnsb b;

	(void)state;
	spfkit__dnsb_init(&b, NULL, 512);
	assert_int_equal(spfkit__dns_query(&b, "a\\046b.x", 8, SPFKIT_RR_A, 0), 0);
	assert_int_equal(spfkit__dnsb_len(&b), 12 + 10 + 4);
	assert_memory_equal(spfkit__dnsb_data(&b) + 12, "\006a\\046b\001x\000\000\001\000\001", 14);
	spfkit__dnsb_free(&b);
}

#endif /* !SPFKIT_TEST_EVENT */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

#ifdef SPFKIT_TEST_EVENT
/* ---- the libevent glue (lib/event) ------------------------------------- */

/* Run the loop in 20 ms slices until *calls reaches want or ms passed. */
static void loop_until(struct event_base *base, const int *calls, int want, int ms)
{
	struct timeval slice = { 0, 20000 };
	int64_t end = now_ms() + ms;

	while (*calls < want && now_ms() < end) {
		event_base_loopexit(base, &slice);
		assert_true(event_base_dispatch(base) >= 0);
	}
}

struct ev_fix {
	struct event_base *base;
	struct spfkit_event *glue;
};

static void ev_up(struct t *t, struct ev_fix *e, struct spfkit_resolver *cache)
{
	e->base = event_base_new();
	assert_non_null(e->base);
	assert_int_equal(spfkit_event_attach(e->base, t->r, cache, &t->alloc, &e->glue), 0);
}

static void ev_down(struct ev_fix *e)
{
	assert_int_equal(spfkit_event_error(e->glue), 0);
	spfkit_event_detach(e->glue);
	event_base_free(e->base);
}

static void event_answer(void **state)
{
	struct t *t = *state;
	struct ev_fix e;

	ev_up(t, &e, NULL);
	ask(t, "a.example", SPFKIT_RR_A);
	loop_until(e.base, &t->got.calls, 1, 3000);
	assert_int_equal(t->got.calls, 1);
	assert_int_equal(t->got.in_submit_seen, 0);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	assert_int_equal(t->got.count, 2);
	ev_down(&e);
}

static void event_timeout(void **state)
{
	struct t *t = *state;
	struct ev_fix e;
	int64_t start = now_ms(), took;

	ev_up(t, &e, NULL);
	ask(t, "silent.example", SPFKIT_RR_TXT);
	loop_until(e.base, &t->got.calls, 1, 3000);
	took = now_ms() - start;
	assert_int_equal(t->got.calls, 1);
	assert_int_equal(t->got.status, SPFKIT_DNS_TEMPFAIL);
	assert_string_equal(t->got.detail, "timeout");
	assert_true(took >= 200 && took < 1000);
	ev_down(&e);
}

static void event_tcp_fallback(void **state)
{
	struct t *t = *state;
	struct ev_fix e;
	int udp, tcp;

	ev_up(t, &e, NULL);
	ask(t, "big.example", SPFKIT_RR_TXT);
	loop_until(e.base, &t->got.calls, 1, 3000);
	assert_int_equal(t->got.calls, 1);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	assert_int_equal(t->got.len0, BIG_TXT);
	fake_counts(t->f, &udp, &tcp);
	assert_int_equal(tcp, 1);
	ev_down(&e);
}

static void event_cancel(void **state)
{
	struct t *t = *state;
	struct ev_fix e;
	int never = 0;

	ev_up(t, &e, NULL);
	spfkit_resolver_cancel(t->r, ask(t, "slow.example", SPFKIT_RR_A));
	loop_until(e.base, &never, 1, SLOW_MS + 200);
	assert_int_equal(t->got.calls, 0);
	ev_down(&e);
}

static void event_many(void **state)
{
	struct t *t = *state;
	struct ev_fix e;

	ev_up(t, &e, NULL);
	ask(t, "a.example", SPFKIT_RR_A);
	ask(t, "big.example", SPFKIT_RR_TXT);
	ask(t, "nx.example", SPFKIT_RR_TXT);
	ask(t, "slow.example", SPFKIT_RR_A);
	ask(t, "silent.example", SPFKIT_RR_A);
	loop_until(e.base, &t->got.calls, 5, 3000);
	assert_int_equal(t->got.calls, 5);
	assert_int_equal(t->got.in_submit_seen, 0);
	ev_down(&e);
}

/* Through the cache layer: a miss over the network, then a hit that
 * the loop delivers, never the submit. */
static void event_cache_hit(void **state)
{
	struct t *t = *state;
	struct spfkit_cache *cache;
	struct spfkit_cache_stats st;
	struct spfkit_resolver *layer, *cares = t->r;
	struct ev_fix e;

	assert_int_equal(spfkit_cache_new(NULL, &t->alloc, &cache), 0);
	assert_int_equal(spfkit_cache_resolver(cache, cares, &layer), 0);
	ev_up(t, &e, layer);
	t->r = layer; /* ask() submits to the layer */
	ask(t, "txt.example", SPFKIT_RR_TXT);
	loop_until(e.base, &t->got.calls, 1, 3000);
	assert_int_equal(t->got.calls, 1);
	ask(t, "txt.example", SPFKIT_RR_TXT);
	assert_int_equal(t->got.calls, 1);
	loop_until(e.base, &t->got.calls, 2, 3000);
	assert_int_equal(t->got.calls, 2);
	assert_int_equal(t->got.in_submit_seen, 0);
	assert_int_equal(t->got.status, SPFKIT_DNS_OK);
	spfkit_cache_stats(cache, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	ev_down(&e);
	spfkit_resolver_free(layer);
	t->r = cares;
	spfkit_cache_free(cache);
}

static void event_attach_rejects(void **state)
{
	struct t *t = *state;
	struct spfkit_resolver other = { NULL, NULL };
	struct spfkit_event *g = (struct spfkit_event *)1;
	struct event_base *base = event_base_new();

	assert_int_equal(spfkit_event_attach(base, &other, NULL, NULL, &g), SPFKIT_EINVAL);
	assert_null(g);
	assert_int_equal(spfkit_event_attach(base, t->r, &other, NULL, &g), SPFKIT_EINVAL);
	assert_int_equal(spfkit_event_attach(NULL, t->r, NULL, NULL, &g), SPFKIT_EINVAL);
	spfkit_event_detach(NULL);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(event_answer),
		T(event_timeout),
		T(event_tcp_fallback),
		T(event_cancel),
		T(event_many),
		T(event_cache_hit),
		T(event_attach_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(rejects_bad_options),
		T(accepts_ipv6_and_lists),
		T(a_answer),
		T(txt_answer),
		T(nxdomain_answer),
		T(nodata_answer),
		T(servfail_is_tempfail),
		T(timeout_is_tempfail_in_time),
		T(truncated_udp_falls_back_to_tcp),
		T(malformed_is_tempfail),
		T(closed_port_is_tempfail),
		T(cancel_before_answer),
		T(cancel_then_other_answer),
		T(destroy_with_pending),
		T(bad_name_never_calls_back),
		T(wait_with_nothing_pending),
		T(wait_returns_at_its_timeout),
		T(callback_may_submit),
		T(many_at_once),
		T(by_hand_with_poll),
		T(event_api_rejects_other_resolvers),
		cmocka_unit_test(raw_names_keep_every_byte),
		cmocka_unit_test(raw_names_reject_bad_shapes),
		cmocka_unit_test(query_carries_raw_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
