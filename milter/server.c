/*
 * spfkit-milter's connections on one libevent loop, the SPF checks on
 * the same loop (session.c through mta/checker.c): no thread per
 * connection, no thread at all. Here: accepting (mta/acceptor.c: a cap
 * on connections, a pause when descriptors run out), reading packets
 * (proto.c's framing, each packet bounded), the deadlines, writing the
 * replies, and the dispatch of each command to session.c and headers.c.
 *
 * Deadlines (docs/milter.md "Limits"): a new connection must negotiate
 * within read_timeout; a packet must be whole read_timeout after its
 * first byte; between commands a connection may stay idle_timeout; the
 * MTA must take our replies within SPFKIT_MILTER_WRITE_TIMEOUT. While a
 * check runs the connection is not read (the MTA waits for the answer)
 * and the check's own budget (Milter_Time_Limit) bounds it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include <spfkit/event.h>

#include "acceptor.h"
#include "metrics.h"
#include "engine.h"
#include "ratelog.h"
#include "list.h"
#include "spfkit_util.h"
#include "milter.h"

/* bytes per read */
#define READ_MAX 16384u
/* replies waiting for an MTA that does not read: stop reading its commands past this */
#define OUTPUT_MAX (256u * 1024u)

enum deadline { DL_NONE, DL_NEGOTIATE, DL_PACKET, DL_IDLE };

struct spfkit__milter_conn {
	struct spfkit__milter_server *srv;
	int fd;
	struct event *rd, *wr, *deadline, *check_timer;
	unsigned char *in;  /* bytes of a packet not yet whole (or not yet taken) */
	size_t in_len, in_cap;
	unsigned char *out; /* replies not yet written */
	size_t out_len, out_cap;
	enum deadline dl;
	uint64_t active_ms;  /* the end of the last pass over its commands */
	int negotiated;
	uint32_t actions, steps;
	int in_process;      /* inside process(): a check's end must not re-enter */
	int reading;
	struct spfkit__milter_session s;
	char peer[64];
	struct spfkit__link link; /* in the server's conns */
};

struct spfkit__milter_server {
	struct event_base *base;
	struct spfkit__milter_server_opts o;
	struct spfkit__mta_acceptor *acceptor;
	struct spfkit_event *dnsloop;
	struct spfkit__list conns; /* of struct spfkit__milter_conn */
	struct spfkit__mta_ratelog log_peer[2]; /* by enum misdeed */
	char receiver[256];
};

struct spfkit__milter_session *spfkit__milter_session_of(struct spfkit__milter_conn *c)
{
	return &c->s;
}

uint32_t spfkit__milter_actions(const struct spfkit__milter_conn *c)
{
	return c->actions;
}

struct event *spfkit__milter_lent_timer(struct spfkit__milter_conn *c)
{
	return c->check_timer;
}

/* Why a peer is dropped: said at most once per interval for every peer, per kind. */
enum misdeed { M_PROTOCOL, M_TIMEOUT };

static void peer_warning(struct spfkit__milter_conn *c, enum misdeed kind, const char *what)
{
	char note[SPFKIT__MTA_RATELOG_NOTE_MAX];

	if (spfkit__mta_ratelog_due(&c->srv->log_peer[kind], SPFKIT_MILTER_LOG_INTERVAL, note))
		spfkit__mta_log_printf(LOG_WARNING, "%s: %s; closing%s", c->peer, what, note);
}

/* ---- closing ------------------------------------------------------------------ */

static void conn_close(struct spfkit__milter_conn *c)
{
	struct spfkit__milter_server *srv = c->srv;
	struct event *ev[] = {c->rd, c->wr, c->deadline, c->check_timer};
	size_t i;

	spfkit__milter_session_end(&c->s); /* cancels a check in flight */
	spfkit__metrics_gauge(spfkit__milter_g.loop.metrics, SPFKIT__METRICS_OPEN, -1);
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (ev[i] != NULL)
			event_free(ev[i]);
	spfkit__list_unlink(&srv->conns, &c->link);
	close(c->fd);
	spfkit__free(NULL, c->in);
	spfkit__free(NULL, c->out);
	spfkit__free(NULL, c);
	spfkit__mta_acceptor_closed(srv->acceptor);
}

/* ---- writing ------------------------------------------------------------------ */

/* Room for `need` bytes in *data (doubling from `first`). 0, or SPFKIT_ENOMEM (unchanged). */
static int reserve(unsigned char **data, size_t *cap, size_t need, size_t first)
{
	size_t n = *cap ? *cap : first;
	unsigned char *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = spfkit__realloc(NULL, *data, n);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	*data = p;
	*cap = n;
	return 0;
}

static int out_reserve(struct spfkit__milter_conn *c, size_t n)
{
	return reserve(&c->out, &c->out_cap, c->out_len + n, 256);
}

/* Up to four pieces of one packet after its head; a reply that cannot be kept is lost (said). */
static void send_parts(struct spfkit__milter_conn *c, char cmd, const void *const *part,
		       const size_t *len, size_t n)
{
	size_t total = 0, i;

	for (i = 0; i < n; i++)
		total += len[i];
	if (out_reserve(c, 5 + total) != 0) {
		spfkit__mta_log_printf(LOG_ERR, "%s: out of memory for a reply", c->peer);
		return;
	}
	spfkit__milter_put_head(c->out + c->out_len, cmd, total);
	c->out_len += 5;
	for (i = 0; i < n; i++) {
		if (len[i] > 0)
			memcpy(c->out + c->out_len, part[i], len[i]);
		c->out_len += len[i];
	}
}

void spfkit__milter_send(struct spfkit__milter_conn *c, char cmd, const void *data, size_t len)
{
	send_parts(c, cmd, &data, &len, 1);
}

void spfkit__milter_send_header(struct spfkit__milter_conn *c, char cmd, uint32_t index,
				const char *name, const char *value)
{
	unsigned char idx[4];
	const void *part[3] = {idx, name, value};
	size_t len[3] = {4, strlen(name) + 1, strlen(value) + 1};

	spfkit__milter_put32(idx, index);
	if (cmd == SPFKIT_MILTER_R_ADDHEADER)
		send_parts(c, cmd, part + 1, len + 1, 2);
	else
		send_parts(c, cmd, part, len, 3);
}

/* As libmilter's smfi_setreply() made it: "550 5.7.23 text", NUL-terminated. */
void spfkit__milter_send_reply(struct spfkit__milter_conn *c, const char *code, const char *xcode,
			       const char *text)
{
	char clean[600], line[640];
	int n;

	spfkit__milter_reply_text(text, clean, sizeof(clean));
	if (xcode != NULL && xcode[0] != '\0')
		n = snprintf(line, sizeof(line), "%s %s %s", code, xcode, clean);
	else
		n = snprintf(line, sizeof(line), "%s %s", code, clean);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = (int)strlen(line);
	spfkit__milter_send(c, SPFKIT_MILTER_R_REPLYCODE, line, (size_t)n + 1);
}

static void read_set(struct spfkit__milter_conn *c, int on)
{
	if (c->reading == on)
		return;
	c->reading = on;
	if (on)
		event_add(c->rd, NULL);
	else
		event_del(c->rd);
}

/* Write what waits; the rest waits for the write event. 0, or -1 (c closed). */
static int flush(struct spfkit__milter_conn *c)
{
	struct timeval wt = {SPFKIT_MILTER_WRITE_TIMEOUT, 0};
	ssize_t n;

	if (c->out_len == 0)
		return 0;
	n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		if (spfkit__milter_g.cfg->debug_level >= 2)
			spfkit__mta_log_printf(LOG_INFO, "%s: %s", c->peer, strerror(errno));
		conn_close(c);
		return -1;
	}
	if (n > 0) {
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
	}
	if (c->out_len == 0) {
		/* an idle connection holds no buffer */
		spfkit__free(NULL, c->out);
		c->out = NULL;
		c->out_cap = 0;
		return 0;
	}
	if (!event_pending(c->wr, EV_WRITE, NULL))
		event_add(c->wr, &wt);
	return 0;
}

static void process_input(struct spfkit__milter_conn *c);

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__milter_conn *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		peer_warning(c, M_TIMEOUT, "replies not taken within the write timeout");
		conn_close(c);
		return;
	}
	if (flush(c) != 0 || c->out_len > 0)
		return;
	event_del(c->wr);
	process_input(c); /* reading stopped for a full output goes on */
}

/* ---- deadlines ------------------------------------------------------------------ */

static void deadline_set(struct spfkit__milter_conn *c, enum deadline dl)
{
	struct timeval tv = {dl == DL_IDLE ? c->srv->o.idle_timeout : c->srv->o.read_timeout, 0};

	if (dl == c->dl)
		return;
	c->dl = dl;
	if (dl == DL_NONE)
		evtimer_del(c->deadline);
	else
		evtimer_add(c->deadline, &tv);
}

/* After a pass that took `took` bytes of whole packets: which clock runs now. */
static void deadline_update(struct spfkit__milter_conn *c, size_t took)
{
	if (c->s.check != NULL) {
		deadline_set(c, DL_NONE); /* the check's budget bounds it */
	} else if (!c->negotiated && c->dl == DL_NEGOTIATE) {
		return;                    /* from the connect, whatever came since */
	} else if (c->in_len > 0) {
		if (took > 0)
			c->dl = DL_NONE;   /* a new packet began: its clock starts now */
		deadline_set(c, DL_PACKET);
	} else
		deadline_set(c, c->negotiated ? DL_IDLE : DL_NEGOTIATE);
}

/*
 * The idle clock is armed once and not moved at every command: when it
 * fires before the connection was idle that long, it is put back for
 * the rest.
 */
static int idle_left(struct spfkit__milter_conn *c)
{
	struct timeval rest;

	if (!spfkit__mta_idle_rest(c->active_ms, c->srv->o.idle_timeout, &rest))
		return 0;
	evtimer_add(c->deadline, &rest);
	return 1;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__milter_conn *c = arg;
	char what_text[160];

	(void)fd;
	(void)what;
	if (c->dl == DL_IDLE) {
		if (idle_left(c))
			return;
		snprintf(what_text, sizeof(what_text), "no command for %d s (--idle-timeout)",
			 c->srv->o.idle_timeout);
	} else if (c->dl == DL_NEGOTIATE) {
		snprintf(what_text, sizeof(what_text), "no option negotiation within %d s "
			 "(--read-timeout; %zu bytes)", c->srv->o.read_timeout, c->in_len);
	} else {
		snprintf(what_text, sizeof(what_text), "packet not whole %d s after its first byte "
			 "(--read-timeout; %zu bytes)", c->srv->o.read_timeout, c->in_len);
	}
	peer_warning(c, M_TIMEOUT, what_text);
	conn_close(c);
}

/* ---- commands ---------------------------------------------------------------------- */

/*
 * O: the MTA offers a version, actions and protocol steps. We take the
 * actions we need, adding and deleting header fields, and ask it to
 * leave out what we do not read: RCPT, the body, unknown commands, DATA,
 * the end of headers. Of each, only what it offers.
 */
static int negotiate(struct spfkit__milter_conn *c, const unsigned char *d, size_t n)
{
	const uint32_t want = SPFKIT_MILTER_F_ADDHDRS | SPFKIT_MILTER_F_CHGHDRS;
	const uint32_t skip = SPFKIT_MILTER_P_NORCPT | SPFKIT_MILTER_P_NOBODY |
			      SPFKIT_MILTER_P_NOUNKNOWN | SPFKIT_MILTER_P_NODATA | SPFKIT_MILTER_P_NOEOH;
	uint32_t version, actions, steps;
	unsigned char r[12];

	if (spfkit__milter_optneg_parse(d, n, &version, &actions, &steps) != 0 || version < 2) {
		peer_warning(c, M_PROTOCOL, "malformed option negotiation");
		return -1;
	}
	if ((actions & want) != want)
		spfkit__mta_log_printf(LOG_WARNING, "%s: the MTA does not let us add and delete header "
				       "fields", c->peer);
	c->actions = actions & want;
	c->steps = steps & skip;
	c->negotiated = 1;
	spfkit__milter_put32(r, version < SPFKIT_MILTER_VERSION ? version : SPFKIT_MILTER_VERSION);
	spfkit__milter_put32(r + 4, c->actions);
	spfkit__milter_put32(r + 8, c->steps);
	spfkit__milter_send(c, SPFKIT_MILTER_R_OPTNEG, r, sizeof(r));
	return 0;
}

static void cont(struct spfkit__milter_conn *c)
{
	spfkit__milter_send(c, SPFKIT_MILTER_R_CONTINUE, NULL, 0);
}

/* Quit: what was answered goes out if the socket takes it; then the end. */
static int quit(struct spfkit__milter_conn *c)
{
	if (c->out_len > 0)
		(void)send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
	conn_close(c);
	return -1;
}

/* One packet. 0, or -1 when c was closed. */
static int dispatch(struct spfkit__milter_conn *c, char cmd, const unsigned char *d, size_t n)
{
	char what[64];

	if (!c->negotiated && cmd != SPFKIT_MILTER_C_OPTNEG && cmd != SPFKIT_MILTER_C_QUIT) {
		snprintf(what, sizeof(what), "command 0x%02x before option negotiation", (unsigned char)cmd);
		peer_warning(c, M_PROTOCOL, what);
		conn_close(c);
		return -1;
	}
	switch (cmd) {
	case SPFKIT_MILTER_C_OPTNEG:
		if (negotiate(c, d, n) != 0) {
			conn_close(c);
			return -1;
		}
		return 0;
	case SPFKIT_MILTER_C_MACRO: spfkit__milter_on_macro(c, d, n); return 0;
	case SPFKIT_MILTER_C_CONNECT:
		if (spfkit__milter_on_connect(c, d, n) != 0) {
			peer_warning(c, M_PROTOCOL, "malformed connect information");
			conn_close(c);
			return -1;
		}
		return 0;
	case SPFKIT_MILTER_C_HELO: spfkit__milter_on_helo(c, d, n); return 0;
	case SPFKIT_MILTER_C_MAIL: (void)spfkit__milter_on_mail(c, d, n); return 0;
	case SPFKIT_MILTER_C_HEADER:
		spfkit__milter_on_header(c, d, n);
		if (!(c->steps & SPFKIT_MILTER_P_NR_HDR))
			cont(c);
		return 0;
	case SPFKIT_MILTER_C_EOB: spfkit__milter_on_eom(c); return 0;
	case SPFKIT_MILTER_C_RCPT: case SPFKIT_MILTER_C_DATA: case SPFKIT_MILTER_C_EOH:
	case SPFKIT_MILTER_C_BODY: case SPFKIT_MILTER_C_UNKNOWN:
		cont(c);
		return 0;
	case SPFKIT_MILTER_C_ABORT: spfkit__milter_on_abort(c); return 0;
	case SPFKIT_MILTER_C_QUIT_NC: spfkit__milter_session_end(&c->s); return 0;
	case SPFKIT_MILTER_C_QUIT: return quit(c);
	}
	snprintf(what, sizeof(what), "unknown command 0x%02x", (unsigned char)cmd);
	peer_warning(c, M_PROTOCOL, what);
	conn_close(c);
	return -1;
}

/* The whole packets in p[0..len) while no check runs: the bytes taken, or -1 (c closed). */
static long take_packets(struct spfkit__milter_conn *c, const unsigned char *p, size_t len)
{
	size_t off = 0;

	while (c->s.check == NULL) {
		uint32_t size;
		int r = spfkit__milter_frame(p + off, len - off, &size);
		char what[96];

		if (r == 0)
			break;
		if (r < 0) {
			snprintf(what, sizeof(what), "packet length %lu over %u",
				 (unsigned long)size, SPFKIT_MILTER_DATA_MAX + 1);
			peer_warning(c, M_PROTOCOL, what);
			conn_close(c);
			return -1;
		}
		/* an empty packet (no command) asks nothing: skipped, as libmilter did */
		if (size > SPFKIT_MILTER_HEAD &&
		    dispatch(c, (char)p[off + SPFKIT_MILTER_HEAD], p + off + SPFKIT_MILTER_HEAD + 1,
			     size - SPFKIT_MILTER_HEAD - 1) != 0)
			return -1;
		off += size;
	}
	return (long)off;
}

static int in_keep(struct spfkit__milter_conn *c, const unsigned char *p, size_t n)
{
	if (reserve(&c->in, &c->in_cap, c->in_len + n, 1024) != 0)
		return SPFKIT_ENOMEM;
	memmove(c->in + c->in_len, p, n);
	c->in_len += n;
	return 0;
}

static void in_consume(struct spfkit__milter_conn *c, size_t n)
{
	if (n == c->in_len) {
		spfkit__free(NULL, c->in); /* an idle connection holds no buffer */
		c->in = NULL;
		c->in_len = c->in_cap = 0;
	} else if (n > 0) {
		memmove(c->in, c->in + n, c->in_len - n);
		c->in_len -= n;
	}
}

/* A pass's end: replies out, reading on unless a check runs or the MTA does not read, clocks. */
static void pass_end(struct spfkit__milter_conn *c, size_t took)
{
	c->active_ms = spfkit__mta_now_ms();
	if (flush(c) != 0)
		return;
	read_set(c, c->s.check == NULL && c->out_len <= OUTPUT_MAX);
	deadline_update(c, took);
}

/* The packets kept in c->in (after a check, or an MTA that did not read). */
static void process_input(struct spfkit__milter_conn *c)
{
	long taken;

	c->in_process = 1;
	taken = c->in_len > 0 ? take_packets(c, c->in, c->in_len) : 0;
	if (taken < 0)
		return;
	c->in_process = 0;
	in_consume(c, (size_t)taken);
	pass_end(c, (size_t)taken);
}

void spfkit__milter_resume(struct spfkit__milter_conn *c)
{
	if (!c->in_process)
		process_input(c);
}

/* Bytes just read: taken where they are when nothing waits before them. */
static void take_read(struct spfkit__milter_conn *c, const unsigned char *buf, size_t n)
{
	long taken;

	c->in_process = 1;
	if (c->in_len == 0) {
		taken = take_packets(c, buf, n);
		if (taken < 0)
			return;
		if ((size_t)taken < n && in_keep(c, buf + taken, n - (size_t)taken) != 0)
			goto nomem;
	} else {
		if (in_keep(c, buf, n) != 0)
			goto nomem;
		taken = take_packets(c, c->in, c->in_len);
		if (taken < 0)
			return;
		in_consume(c, (size_t)taken);
	}
	c->in_process = 0;
	pass_end(c, (size_t)taken);
	return;
nomem:
	spfkit__mta_log_printf(LOG_ERR, "%s: out of memory for its input; closing", c->peer);
	conn_close(c);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__milter_conn *c = arg;
	unsigned char buf[READ_MAX];
	ssize_t n;

	(void)what;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n > 0) {
		take_read(c, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	/* the MTA went (after QUIT we are gone already): a partial packet is said */
	if (c->in_len > 0)
		peer_warning(c, M_PROTOCOL, "connection ended inside a packet");
	else if (n < 0 && spfkit__milter_g.cfg->debug_level >= 2)
		spfkit__mta_log_printf(LOG_INFO, "%s: %s", c->peer, strerror(errno));
	conn_close(c);
}

/* ---- accepting --------------------------------------------------------------------- */

/* Never runs: each check gives the lent timer its own callback first. */
static void on_lent_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static void peer_name(const struct sockaddr *sa, int fd, char *out, size_t size)
{
	struct spfkit_ip ip;
	char text[SPFKIT_IP_TEXT_MAX];
	size_t salen = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						 : sizeof(struct sockaddr_in6);

	if ((sa->sa_family == AF_INET || sa->sa_family == AF_INET6) &&
	    spfkit_ip_from_sockaddr(sa, salen, &ip) == 0)
		snprintf(out, size, "mta[%s]", spfkit_ip_format(&ip, text, sizeof(text)));
	else
		snprintf(out, size, "mta#%d", fd);
}

static int on_conn(int fd, const struct sockaddr *sa, socklen_t salen, void *arg)
{
	struct spfkit__milter_server *srv = arg;
	struct spfkit__milter_conn *c = spfkit__zalloc(NULL, sizeof(*c));

	(void)salen;
	if (c == NULL)
		return -1;
	c->srv = srv;
	c->fd = fd;
	c->rd = event_new(srv->base, fd, EV_READ | EV_PERSIST, on_read, c);
	c->wr = event_new(srv->base, fd, EV_WRITE | EV_PERSIST, on_write, c);
	c->deadline = evtimer_new(srv->base, on_deadline, c);
	c->check_timer = evtimer_new(srv->base, on_lent_timer, NULL);
	if (c->rd == NULL || c->wr == NULL || c->deadline == NULL || c->check_timer == NULL) {
		struct event *ev[] = {c->rd, c->wr, c->deadline, c->check_timer};
		size_t i;

		for (i = 0; i < 4; i++)
			if (ev[i] != NULL)
				event_free(ev[i]);
		spfkit__free(NULL, c);
		return -1;
	}
	peer_name(sa, fd, c->peer, sizeof(c->peer));
	spfkit__list_push_front(&srv->conns, &c->link);
	c->active_ms = spfkit__mta_now_ms();
	spfkit__metrics_count(spfkit__milter_g.loop.metrics, SPFKIT__METRICS_CONNECTIONS);
	spfkit__metrics_gauge(spfkit__milter_g.loop.metrics, SPFKIT__METRICS_OPEN, 1);
	read_set(c, 1);
	deadline_set(c, DL_NEGOTIATE);
	return 0;
}

/* ---- the server ------------------------------------------------------------------ */

int spfkit__milter_server_new(struct event_base *base, const struct spfkit__milter_server_opts *o,
			      struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
			      struct spfkit_resolver *cache, struct spfkit__milter_server **out)
{
	struct spfkit__milter_server *srv = spfkit__zalloc(NULL, sizeof(*srv));
	struct spfkit__mta_acceptor_opts ao;
	struct spfkit_ctx *ctx = NULL;

	if (srv == NULL)
		return SPFKIT_ENOMEM;
	srv->base = base;
	srv->o = *o;
	if (srv->o.max_connections == 0)
		srv->o.max_connections = SPFKIT_MILTER_MAX_CONNECTIONS;
	if (srv->o.read_timeout <= 0)
		srv->o.read_timeout = SPFKIT_MILTER_READ_TIMEOUT;
	if (srv->o.idle_timeout <= 0)
		srv->o.idle_timeout = SPFKIT_MILTER_IDLE_TIMEOUT;
	snprintf(srv->receiver, sizeof(srv->receiver), "%s", o->receiver != NULL ? o->receiver : "unknown");
	memset(&ao, 0, sizeof(ao));
	ao.max_connections = srv->o.max_connections;
	ao.pause_ms = SPFKIT_MILTER_ACCEPT_PAUSE_MS;
	ao.log_interval_s = SPFKIT_MILTER_LOG_INTERVAL;
	ao.on_conn = on_conn;
	ao.arg = srv;
	spfkit__milter_g.receiver = srv->receiver;
	spfkit__milter_g.dns_cached = cache != NULL;
	spfkit__milter_g.alloc = o->alloc;
	if (spfkit__mta_acceptor_new(base, &ao, &srv->acceptor) != 0 ||
	    spfkit__mta_ctx_new(cfg, srv->receiver, cache != NULL, o->alloc, &ctx) != 0 ||
	    spfkit__milter_gen_start(cfg, ctx) != 0 ||
	    spfkit__mta_dns_attach(base, r, cache, &srv->dnsloop) != 0) {
		if (spfkit__milter_g.gen == NULL)
			spfkit_ctx_free(ctx);
		spfkit__milter_server_free(srv);
		return SPFKIT_ENOMEM;
	}
	spfkit__milter_g.loop.base = base;
	spfkit__milter_g.loop.resolver = cache != NULL ? cache : r;
	spfkit__milter_g.loop.dnsloop = srv->dnsloop;
	*out = srv;
	return 0;
}

int spfkit__milter_server_listen_fd(struct spfkit__milter_server *s, int fd)
{
	return spfkit__mta_acceptor_listen_fd(s->acceptor, fd);
}

void spfkit__milter_server_stop(struct spfkit__milter_server *s)
{
	spfkit__mta_acceptor_stop(s->acceptor);
	while (!spfkit__list_empty(&s->conns))
		conn_close(SPFKIT_CONTAINER_OF(s->conns.head, struct spfkit__milter_conn, link));
}

void spfkit__milter_server_free(struct spfkit__milter_server *s)
{
	if (s == NULL)
		return;
	if (s->acceptor != NULL)
		spfkit__milter_server_stop(s);
	spfkit__mta_acceptor_free(s->acceptor);
	spfkit_event_detach(s->dnsloop);
	spfkit__mta_gen_put(spfkit__milter_g.gen); /* every check has ended: the last hold */
	spfkit__milter_g.gen = NULL;
	spfkit__milter_g.cfg = NULL;
	spfkit__milter_g.ctx = NULL;
	spfkit__free(NULL, s);
}
