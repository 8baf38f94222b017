/*
 * spfkit-policyd's connections and evaluations (see server.h). Each
 * connection reads requests through the pure reader of proto.c, runs at
 * most one request at a time (Postfix waits for each answer), and keeps
 * the rest of its input for later. Each request runs the HELO and then
 * the MAIL FROM evaluation as sans-I/O state machines fed by the
 * resolver from the loop; mta/decision.c turns the results into the
 * answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include <spfkit/eval.h>

#include "core.h"
#include "decision.h"
#include "dnsloop.h"
#include "ipaddr.h"
#include "proto.h"
#include "server.h"

/* A configuration and the evaluator context made from it; requests hold a reference. */
struct gen {
	struct spfkit__mta_config *cfg;
	struct spfkit_ctx *ctx;
	unsigned refs;
};

struct job;

struct conn {
	struct spfkit__policyd *srv;
	struct bufferevent *in, *out; /* the same object for a socket */
	char peer[96];
	struct spfkit__policy_request req;
	struct job *job;
	int in_process; /* conn_process() is on the stack: no re-entry */
	int eof;        /* the client has finished sending */
	struct conn *prev, *next;
};

/* One DNS question in flight. */
struct question {
	struct job *job;
	uint32_t id;
	uint64_t handle;
	int raw; /* a whitelist's own question, not the evaluator's */
	struct question *prev, *next;
};

/* What a request is doing: the DNS whitelists first, then the checks. */
enum phase {
	PH_WL_DOMAIN = 0, /* Domain_Whitelist: an SPF pass for a listed domain */
	PH_WL_HELO,       /* HELO_Whitelist: A/AAAA of a listed HELO name */
	PH_WL_PTR,        /* Domain_Whitelist_PTR: the client's PTR names */
	PH_WL_PTR_A,      /* ... and the forward check of the one found */
	PH_CHECKS,        /* HELO, then MAIL FROM */
};

struct job {
	struct conn *conn;
	struct gen *gen;
	struct spfkit__arena arena; /* copies of the request's values */
	struct spfkit__mta_input in;
	struct spfkit_ip ip;
	const char *queue_id, *instance;
	char *cache_key;
	enum phase phase;
	size_t wl_index;            /* next Domain_Whitelist entry */
	enum spfkit_identity stage;
	struct spfkit_eval *ev[2]; /* indexed by enum spfkit_identity */
	struct spfkit_eval *wl_ev; /* a Domain_Whitelist evaluation */
	struct spfkit_eval *cur;   /* the evaluation being fed answers */
	int no_mail[2];
	struct question *questions;
	struct event *deadline;
	int expired;
	struct timespec t0;
};

/*
 * A decision kept for the later queries of the same message, compactly:
 * the key, then the texts, in one allocation (a few hundred bytes).
 */
struct cached {
	char *key;
	enum spfkit__mta_kind kind;
	char *action; /* the action when not PREPEND */
	char *headers[SPFKIT__MTA_MAX_HEADERS];
	size_t header_count;
	size_t served;
	struct cached *hnext;           /* hash chain */
	struct cached *older, *newer;   /* age order, for eviction */
};

#define CACHE_BUCKETS 4096u

struct spfkit__policyd {
	struct event_base *base;
	struct spfkit__policyd_opts opts;
	char receiver[256];
	struct gen *gen;
	struct spfkit_resolver *resolver;
	struct spfkit__dnsloop *dnsloop;
	struct evconnlistener *listeners[16];
	size_t n_listeners;
	struct conn *conns;
	size_t n_conns;
	int draining;
	struct cached *buckets[CACHE_BUCKETS];
	struct cached *oldest, *newest;
	size_t n_cached;
};

/* ---- logging ---------------------------------------------------------- */

static int debug_level(const struct spfkit__policyd *srv)
{
	return srv->gen->cfg->debug_level;
}

static void vlog(const struct spfkit__policyd *srv, int level, int prio, const char *fmt,
		 va_list ap)
{
	/* debugLevel -1: silent; 0: errors and warnings; 1+: also decisions */
	if (level < 0 || (level == 0 && prio > LOG_WARNING))
		return;
	if (srv->opts.log_stderr) {
		fprintf(stderr, "spfkit-policyd[%ld]: ", (long)getpid());
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
}

void spfkit__policyd_log(struct spfkit__policyd *srv, int prio, const char *fmt, ...)
{
	va_list ap;
	int level = debug_level(srv);

	va_start(ap, fmt);
	vlog(srv, level, prio, fmt, ap);
	va_end(ap);
}

/* A truncated, escaped copy of untrusted bytes for a log line. */
#define ESC(s, n) spfkit__policy_escape((s), (n), 100, (char[512]){0}, 512)
#define ESC_LONG(s, n) spfkit__policy_escape((s), (n), 400, (char[1700]){0}, 1700)

/* ---- generations -------------------------------------------------------- */

static struct gen *gen_new(struct spfkit__policyd *srv, struct spfkit__mta_config *cfg)
{
	struct spfkit_config ec;
	struct gen *g = spfkit__zalloc(NULL, sizeof(*g));

	if (g == NULL)
		return NULL;
	memset(&ec, 0, sizeof(ec));
	ec.receiver = srv->receiver;
	ec.limits.void_lookups = (unsigned)cfg->void_limit; /* 0: the RFC's 2 */
	if (spfkit_ctx_new(&ec, &g->ctx) != 0) {
		spfkit__free(NULL, g);
		return NULL;
	}
	g->cfg = cfg;
	g->refs = 1;
	return g;
}

static void gen_put(struct gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	spfkit_ctx_free(g->ctx);
	spfkit__mta_config_free(g->cfg);
	spfkit__free(NULL, g);
}

/* ---- the instance cache ------------------------------------------------- */

static struct cached **bucket(struct spfkit__policyd *srv, const char *key)
{
	return &srv->buckets[spfkit__name_hash(key, strlen(key)) % CACHE_BUCKETS];
}

static struct cached *cache_find(struct spfkit__policyd *srv, const char *key)
{
	struct cached *c;

	for (c = *bucket(srv, key); c != NULL; c = c->hnext)
		if (strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

static void cache_drop_oldest(struct spfkit__policyd *srv)
{
	struct cached *c = srv->oldest, **pp;

	for (pp = bucket(srv, c->key); *pp != c; pp = &(*pp)->hnext)
		;
	*pp = c->hnext;
	srv->oldest = c->newer;
	if (srv->oldest != NULL)
		srv->oldest->older = NULL;
	else
		srv->newest = NULL;
	srv->n_cached--;
	spfkit__free(NULL, c);
}

static size_t text_size(const char *s)
{
	return strlen(s) + 1; /* our own texts */
}

/* Copy s into the entry's block at *at. */
static char *put_text(char **at, const char *s)
{
	size_t n = text_size(s);
	char *p = *at;

	memcpy(p, s, n);
	*at += n;
	return p;
}

/* Keep d for the next queries of this message; silently skipped when out of memory. */
static void cache_put(struct spfkit__policyd *srv, const char *key,
		      const struct spfkit__mta_decision *d)
{
	struct cached *c, **b;
	size_t size, i;
	char *at;

	if (key == NULL)
		return;
	size = sizeof(*c) + text_size(key);
	size += d->kind == SPFKIT__MTA_PREPEND ? 0 : text_size(d->action);
	for (i = 0; i < d->header_count; i++)
		size += text_size(d->headers[i]);
	while (srv->n_cached >= srv->opts.cache_max && srv->oldest != NULL)
		cache_drop_oldest(srv);
	c = spfkit__zalloc(NULL, size);
	if (c == NULL)
		return;
	at = (char *)(c + 1);
	c->key = put_text(&at, key);
	c->kind = d->kind;
	if (d->kind != SPFKIT__MTA_PREPEND)
		c->action = put_text(&at, d->action);
	for (i = 0; i < d->header_count; i++)
		c->headers[i] = put_text(&at, d->headers[i]);
	c->header_count = d->header_count;
	c->served = 1;
	b = bucket(srv, key);
	c->hnext = *b;
	*b = c;
	c->older = srv->newest;
	if (srv->newest != NULL)
		srv->newest->newer = c;
	else
		srv->oldest = c;
	srv->newest = c;
	srv->n_cached++;
}

/* As spfkit__mta_action_nth(): a refusal again, each header once, then dunno. */
static void cached_action(const struct cached *c, size_t n, char *buf, size_t size)
{
	if (c->kind != SPFKIT__MTA_PREPEND)
		snprintf(buf, size, "%s", c->action);
	else if (n < c->header_count)
		snprintf(buf, size, "prepend %s", c->headers[n]);
	else
		snprintf(buf, size, "dunno");
}

static void cache_free(struct spfkit__policyd *srv)
{
	while (srv->oldest != NULL)
		cache_drop_oldest(srv);
}

/* ---- replies and connection life ---------------------------------------- */

static void conn_close(struct conn *c);
static void conn_process(struct conn *c);
static void job_free(struct job *j);

static int has_partial(struct conn *c)
{
	return c->req.scanned > 0 || evbuffer_get_length(bufferevent_get_input(c->in)) > 0;
}

/* Idle between requests, a begun request, or waiting for our answer (no read timeout). */
static void set_timeouts(struct conn *c)
{
	struct timeval idle = {c->srv->opts.idle_timeout, 0};
	struct timeval req = {c->srv->opts.request_timeout, 0};
	struct timeval wr = {SPFKIT_POLICYD_WRITE_TIMEOUT, 0};
	const struct timeval *rd = c->job != NULL ? NULL : has_partial(c) ? &req : &idle;

	if (c->in == c->out) {
		bufferevent_set_timeouts(c->in, rd, &wr);
		return;
	}
	bufferevent_set_timeouts(c->in, rd, NULL);
	bufferevent_set_timeouts(c->out, NULL, &wr);
}

static void send_reply(struct conn *c, const char *action)
{
	struct spfkit__buf b;

	spfkit__buf_init(&b, NULL, SPFKIT__MTA_TEXT_MAX + 16);
	if (spfkit__policy_reply(&b, action, strlen(action)) == 0)
		bufferevent_write(c->out, b.data, b.len);
	else
		bufferevent_write(c->out, "action=dunno\n\n", 14);
	spfkit__buf_free(&b);
}

static void maybe_finish_drain(struct spfkit__policyd *srv)
{
	if (srv->draining && srv->conns == NULL)
		event_base_loopexit(srv->base, NULL);
}

static void conn_close(struct conn *c)
{
	struct spfkit__policyd *srv = c->srv;

	if (c->job != NULL)
		job_free(c->job);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	srv->n_conns--;
	if (c->out != c->in)
		bufferevent_free(c->out);
	bufferevent_free(c->in);
	spfkit__free(NULL, c);
	/* spawn mode: the one client is gone, so is the service */
	if (srv->n_listeners == 0 && srv->conns == NULL)
		event_base_loopexit(srv->base, NULL);
	maybe_finish_drain(srv);
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
	conn_close(c);
}

/* ---- DNS ---------------------------------------------------------------- */

static const struct spfkit_dns_answer timed_out = {SPFKIT_DNS_TEMPFAIL, 0, NULL, 0,
						    "Lookup_Time exceeded"};

static void job_run(struct job *j);
static void wl_answer(struct job *j, const struct spfkit_dns_answer *answer);

static void question_unlink(struct job *j, struct question *q)
{
	if (q->prev != NULL)
		q->prev->next = q->next;
	else
		j->questions = q->next;
	if (q->next != NULL)
		q->next->prev = q->prev;
}

static void on_answer(void *arg, const struct spfkit_dns_answer *answer)
{
	struct question *q = arg;
	struct job *j = q->job;
	uint32_t id = q->id;

	int raw = q->raw;

	question_unlink(j, q);
	spfkit__free(NULL, q);
	if (raw) {
		wl_answer(j, answer);
		return;
	}
	(void)spfkit_eval_answer(j->cur, id, answer);
	job_run(j);
}

static void cancel_questions(struct job *j)
{
	while (j->questions != NULL) {
		struct question *q = j->questions;

		spfkit_resolver_cancel(j->conn->srv->resolver, q->handle);
		question_unlink(j, q);
		spfkit__free(NULL, q);
	}
}

/* Lookup_Time is over: every open question, and every later one, times out. */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct job *j = arg;

	(void)fd;
	(void)what;
	j->expired = 1;
	if (j->questions != NULL && j->questions->raw) {
		/* a whitelist's own lookup ran out of Whitelist_Lookup_Time: no match */
		cancel_questions(j);
		wl_answer(j, &timed_out);
		return;
	}
	while (j->questions != NULL) {
		struct question *q = j->questions;
		uint32_t id = q->id;

		spfkit_resolver_cancel(j->conn->srv->resolver, q->handle);
		question_unlink(j, q);
		spfkit__free(NULL, q);
		(void)spfkit_eval_answer(j->cur, id, &timed_out);
	}
	job_run(j);
}

/* Send one question; 0, or -1 when it could not go (the caller answers it). */
static int submit(struct job *j, const char *name, size_t len, uint16_t type, uint32_t id, int raw)
{
	struct question *q;

	if (j->expired)
		return -1;
	q = spfkit__zalloc(NULL, sizeof(*q));
	if (q == NULL)
		return -1;
	q->job = j;
	q->id = id;
	q->raw = raw;
	if (spfkit_resolver_submit(j->conn->srv->resolver, name, len, type, on_answer, q,
				   &q->handle) != 0) {
		spfkit__free(NULL, q);
		return -1;
	}
	q->next = j->questions;
	if (q->next != NULL)
		q->next->prev = q;
	j->questions = q;
	return 0;
}

static void ask(struct job *j, const struct spfkit_question *sq)
{
	if (submit(j, sq->name, sq->name_len, sq->type, sq->id, 0) != 0)
		(void)spfkit_eval_answer(j->cur, sq->id, &timed_out);
}

/* ---- a request ------------------------------------------------------------ */

/* No_Mail wants to know whether the top record is exactly "v=spf1 -all". */
static void on_trace(void *arg, const struct spfkit_trace_event *e)
{
	static const char want[] = "v=spf1 -all";
	struct job *j = arg;
	const char *t = e->text;
	size_t n = e->text_len;

	if (e->kind != SPFKIT_TRACE_RECORD || e->depth != 0 || t == NULL || j->phase != PH_CHECKS)
		return;
	while (n > 0 && t[n - 1] == ' ')
		n--;
	j->no_mail[j->stage] = spfkit__memcaseeq(t, n, want, sizeof(want) - 1);
}

static void job_free(struct job *j)
{
	cancel_questions(j);
	if (j->deadline != NULL)
		event_free(j->deadline);
	spfkit_eval_free(j->ev[0]);
	spfkit_eval_free(j->ev[1]);
	spfkit_eval_free(j->wl_ev);
	gen_put(j->gen);
	spfkit__arena_free(&j->arena);
	if (j->conn != NULL)
		j->conn->job = NULL;
	spfkit__free(NULL, j);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static const char *result_of(const struct spfkit__mta_check *c)
{
	return c->checked && c->res != NULL ? spfkit_result_name(c->res->code) : "-";
}

/* One line per decision: queue id, client, identities, results, action, time. */
static void log_decision(struct job *j, const char *action)
{
	const struct spfkit__mta_input *in = &j->in;

	spfkit__policyd_log(j->conn->srv, LOG_INFO,
			    "%s%s%s: client=%s helo=%s from=<%s> helo_result=%s mailfrom_result=%s "
			    "action=\"%s\" time=%.1fms",
			    j->gen->cfg->queue_id && j->queue_id[0] ? ESC(j->queue_id, strlen(j->queue_id)) : "",
			    j->gen->cfg->queue_id && j->queue_id[0] ? ": " : "", j->conn->peer,
			    in->client_ip, ESC(in->helo, in->helo_len), ESC(in->sender, in->sender_len),
			    result_of(&in->helo_check), result_of(&in->mfrom_check),
			    ESC_LONG(action, strlen(action)), ms_since(&j->t0));
}

static void job_finish(struct job *j)
{
	struct conn *c = j->conn;
	struct spfkit__mta_decision d;

	spfkit__mta_decide(j->gen->cfg, &j->in, &d);
	cache_put(c->srv, j->cache_key, &d);
	send_reply(c, d.action);
	log_decision(j, d.action);
	job_free(j);
	if (!c->in_process)
		conn_process(c);
}

static int stage_start(struct job *j, enum spfkit_identity id)
{
	struct spfkit_request req;
	struct timeval tv = {j->gen->cfg->lookup_time, 0};

	memset(&req, 0, sizeof(req));
	req.ip = j->gen->cfg->has_prospective ? j->gen->cfg->prospective : j->ip;
	req.sender = id == SPFKIT_IDENTITY_HELO ? "" : j->in.sender;
	req.sender_len = id == SPFKIT_IDENTITY_HELO ? 0 : j->in.sender_len;
	req.helo = j->in.helo;
	req.helo_len = j->in.helo_len;
	req.identity = id;
	req.now = (int64_t)time(NULL);
	req.trace = on_trace;
	req.trace_arg = j;
	j->stage = id;
	j->expired = 0;
	if (spfkit_eval_new(j->gen->ctx, &req, &j->ev[id]) != 0)
		return SPFKIT_ENOMEM;
	j->cur = j->ev[id];
	evtimer_add(j->deadline, &tv);
	job_run(j);
	return 0;
}

static void wl_next(struct job *j);

static void stage_done(struct job *j)
{
	struct spfkit__mta_check *chk = j->stage == SPFKIT_IDENTITY_HELO ? &j->in.helo_check
									  : &j->in.mfrom_check;

	evtimer_del(j->deadline);
	if (j->phase == PH_WL_DOMAIN) {
		const struct spfkit_result *r = spfkit_eval_result(j->wl_ev);

		if (r != NULL && r->code == SPFKIT_RESULT_PASS) {
			j->in.bypass = SPFKIT__MTA_BYPASS_DOMAIN;
			job_finish(j);
			return;
		}
		wl_next(j);
		return;
	}
	chk->checked = 1;
	chk->res = spfkit_eval_result(j->ev[j->stage]);
	chk->no_mail_record = j->no_mail[j->stage];
	if (j->stage == SPFKIT_IDENTITY_HELO && spfkit__mta_want_mailfrom(j->gen->cfg, &j->in)) {
		if (stage_start(j, SPFKIT_IDENTITY_MAILFROM) != 0)
			job_finish(j);
		return;
	}
	job_finish(j);
}

static void job_run(struct job *j)
{
	struct spfkit_dns_answer none;
	int asked = 0;

	memset(&none, 0, sizeof(none));
	for (;;) {
		struct spfkit_question q;
		int s = spfkit_eval_step(j->cur, &q);

		if (s == SPFKIT_STEP_QUERY) {
			ask(j, &q);
			asked = 1;
			continue;
		}
		if (asked)
			spfkit__dnsloop_kick(j->conn->srv->dnsloop);
		if (s == SPFKIT_STEP_WAIT)
			return;
		if (s == SPFKIT_STEP_DONE) {
			stage_done(j);
			return;
		}
		/* out of memory inside the evaluator: no opinion rather than a guess */
		spfkit__policyd_log(j->conn->srv, LOG_ERR, "%s: evaluation failed: %s", j->conn->peer,
				    spfkit_strerror(s));
		send_reply(j->conn, "dunno");
		{
			struct conn *c = j->conn;

			job_free(j);
			if (!c->in_process)
				conn_process(c);
		}
		return;
	}
}

static const char *copy_attr(struct job *j, const struct spfkit__policy_request *r,
			     const char *name, size_t *len)
{
	size_t n;
	const char *v = spfkit__policy_get(r, name, &n);
	char *s = spfkit__arena_strndup(&j->arena, v != NULL ? v : "", n);

	if (len != NULL)
		*len = s != NULL ? n : 0;
	return s;
}

/* helo_name missing: policyd-spf takes the sender's domain, as we do. */
static void fill_helo(struct job *j)
{
	size_t i;

	if (j->in.helo_len > 0)
		return;
	for (i = j->in.sender_len; i > 0; i--)
		if (j->in.sender[i - 1] == '@') {
			j->in.helo = j->in.sender + i;
			j->in.helo_len = j->in.sender_len - i;
			return;
		}
}

static int job_fill(struct job *j, const struct spfkit__policy_request *r)
{
	const char *client, *recipient;
	size_t client_len;

	j->in.sender = copy_attr(j, r, "sender", &j->in.sender_len);
	j->in.helo = copy_attr(j, r, "helo_name", &j->in.helo_len);
	client = copy_attr(j, r, "client_address", &client_len);
	j->queue_id = copy_attr(j, r, "queue_id", NULL);
	j->instance = copy_attr(j, r, "instance", NULL);
	recipient = copy_attr(j, r, "recipient", NULL);
	(void)recipient;
	if (j->in.sender == NULL || j->in.helo == NULL || client == NULL || j->queue_id == NULL ||
	    j->instance == NULL)
		return SPFKIT_ENOMEM;
	j->in.client_ip = client;
	j->in.receiver = j->conn->srv->receiver;
	fill_helo(j);
	if (spfkit_ip_parse(client, client_len, &j->ip) != 0)
		return SPFKIT_EINVAL;
	return 0;
}

/* The cache key: the message (instance) and who sent it. */
static char *make_key(struct job *j)
{
	struct spfkit__buf b;
	char *key;

	if (j->instance[0] == '\0')
		return NULL; /* no instance: every request stands alone */
	spfkit__buf_init(&b, NULL, 2048);
	spfkit__buf_printf(&b, "%s|%s|", j->instance, j->in.client_ip);
	spfkit__buf_append(&b, j->in.sender, j->in.sender_len);
	key = b.err ? NULL : spfkit__arena_strndup(&j->arena, b.data, b.len);
	spfkit__buf_free(&b);
	return key;
}

static void answer_now(struct conn *c, const char *action, int prio, const char *why)
{
	send_reply(c, action);
	if (why != NULL)
		spfkit__policyd_log(c->srv, prio, "%s: %s; action=%s", c->peer, why, action);
}

/*
 * Take one complete request: copy what we need (its bytes go once this
 * returns) and answer at once when we can (cache hit, no usable input).
 * Returns the job to run, or NULL when answered.
 */
static struct job *request_take(struct conn *c, const struct spfkit__policy_request *r)
{
	struct spfkit__policyd *srv = c->srv;
	struct job *j = spfkit__zalloc(NULL, sizeof(*j));
	struct cached *hit;
	char action[SPFKIT__MTA_TEXT_MAX];
	int rc;

	if (j == NULL) {
		answer_now(c, "dunno", LOG_ERR, "out of memory");
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &j->t0);
	spfkit__arena_init(&j->arena, NULL, 1024, 0);
	j->conn = c;
	j->gen = srv->gen;
	j->gen->refs++;
	c->job = j;
	rc = job_fill(j, r);
	if (rc != 0) {
		job_free(j);
		answer_now(c, "dunno", rc == SPFKIT_EINVAL ? LOG_NOTICE : LOG_ERR,
			   rc == SPFKIT_EINVAL ? "no usable client_address" : "out of memory");
		return NULL;
	}
	j->cache_key = make_key(j);
	hit = j->cache_key != NULL ? cache_find(srv, j->cache_key) : NULL;
	if (hit == NULL)
		return j;
	/* a later recipient of the same message: same decision, no second header */
	cached_action(hit, hit->served++, action, sizeof(action));
	send_reply(c, action);
	if (debug_level(srv) >= 2)
		log_decision(j, action);
	job_free(j);
	return NULL;
}

/* Run the checks of a taken request; may finish at once. */
static void request_go(struct job *j)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;

	if (cfg->mock || j->in.helo_len == 0) {
		job_finish(j); /* nothing to check: "dunno" or the Mock answer */
		return;
	}
	j->in.bypass = spfkit__mta_ip_bypass(cfg, cfg->has_prospective ? &cfg->prospective : &j->ip);
	j->deadline = evtimer_new(j->conn->srv->base, on_deadline, j);
	if (j->deadline == NULL || j->in.bypass != SPFKIT__MTA_BYPASS_NONE) {
		job_finish(j);
		return;
	}
	j->phase = PH_WL_DOMAIN;
	j->wl_index = 0;
	wl_next(j);
}

/* The SPF checks proper, once no whitelist matched. */
static void checks_start(struct job *j)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;
	int rc = 0;

	j->phase = PH_CHECKS;
	if (spfkit__mta_want_helo(cfg))
		rc = stage_start(j, SPFKIT_IDENTITY_HELO);
	else if (spfkit__mta_want_mailfrom(cfg, &j->in))
		rc = stage_start(j, SPFKIT_IDENTITY_MAILFROM);
	else
		job_finish(j);
	if (rc != 0)
		job_finish(j);
}

/* ---- the DNS whitelists (policyd-spf order: domain, HELO, PTR) ----------- */

static void wl_timer(struct job *j)
{
	struct timeval tv = {j->gen->cfg->whitelist_lookup_time, 0};

	j->expired = 0;
	evtimer_add(j->deadline, &tv);
}

/* Domain_Whitelist: check_host(ip, domain, postmaster@domain), as policyd-spf. */
static int wl_domain(struct job *j, const char *domain)
{
	struct spfkit_request req;

	memset(&req, 0, sizeof(req));
	req.ip = j->gen->cfg->has_prospective ? j->gen->cfg->prospective : j->ip;
	req.sender = "";
	req.helo = domain;
	req.helo_len = strlen(domain); /* our own copy from the configuration */
	req.identity = SPFKIT_IDENTITY_HELO;
	req.now = (int64_t)time(NULL);
	spfkit_eval_free(j->wl_ev);
	j->wl_ev = NULL;
	if (spfkit_eval_new(j->gen->ctx, &req, &j->wl_ev) != 0)
		return -1;
	j->cur = j->wl_ev;
	wl_timer(j);
	job_run(j);
	return 0;
}

static int wl_ask(struct job *j, const char *name, size_t len, uint16_t type)
{
	wl_timer(j);
	if (submit(j, name, len, type, 0, 1) != 0)
		return -1;
	spfkit__dnsloop_kick(j->conn->srv->dnsloop);
	return 0;
}

static uint16_t addr_type(const struct job *j)
{
	return j->ip.family == 6 ? SPFKIT_RR_AAAA : SPFKIT_RR_A;
}

/* Start the next whitelist method that applies, or the checks. */
static void wl_next(struct job *j)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;
	char rev[SPFKIT__REVERSE_MAX];
	size_t n;

	for (;;) {
		switch (j->phase) {
		case PH_WL_DOMAIN:
			if (j->wl_index < cfg->domain_whitelist.count) {
				if (wl_domain(j, cfg->domain_whitelist.names[j->wl_index++]) == 0)
					return;
				continue;
			}
			j->phase = PH_WL_HELO;
			continue;
		case PH_WL_HELO:
			/* policyd-spf compares the HELO name with each entry, exactly */
			if (spfkit__mta_name_listed(&cfg->helo_whitelist, j->in.helo, j->in.helo_len) &&
			    wl_ask(j, j->in.helo, j->in.helo_len, addr_type(j)) == 0)
				return;
			j->phase = PH_WL_PTR;
			continue;
		case PH_WL_PTR:
			if (cfg->domain_whitelist_ptr.count > 0) {
				n = spfkit__ip_reverse_name(&j->ip, rev);
				if (wl_ask(j, rev, n, SPFKIT_RR_PTR) == 0)
					return;
			}
			j->phase = PH_CHECKS;
			continue;
		default:
			evtimer_del(j->deadline);
			checks_start(j);
			return;
		}
	}
}

static int has_address(const struct job *j, const struct spfkit_dns_answer *a)
{
	size_t i, len = j->ip.family == 6 ? 16 : 4;

	for (i = 0; a->status == SPFKIT_DNS_OK && i < a->count; i++)
		if (a->rrs[i].len == len && memcmp(a->rrs[i].data, j->ip.addr, len) == 0)
			return 1;
	return 0;
}

/*
 * The first PTR name under a listed domain, copied. policyd-spf trusts the
 * PTR name alone; we also check that the name points back at the client
 * (forward-confirmed, as the "ptr" mechanism of RFC 7208 §5.5 does).
 */
static const char *ptr_candidate(struct job *j, const struct spfkit_dns_answer *a)
{
	size_t i;

	for (i = 0; a->status == SPFKIT_DNS_OK && i < a->count && i < SPFKIT_LIMIT_PTR_NAMES; i++) {
		const char *name = (const char *)a->rrs[i].data;

		if (spfkit__mta_name_match(&j->gen->cfg->domain_whitelist_ptr, name, a->rrs[i].len))
			return spfkit__arena_strndup(&j->arena, name, a->rrs[i].len);
	}
	return NULL;
}

static void wl_answer(struct job *j, const struct spfkit_dns_answer *answer)
{
	const char *name;

	evtimer_del(j->deadline);
	switch (j->phase) {
	case PH_WL_HELO:
		if (has_address(j, answer)) {
			j->in.bypass = SPFKIT__MTA_BYPASS_HELO;
			job_finish(j);
			return;
		}
		j->phase = PH_WL_PTR;
		break;
	case PH_WL_PTR:
		name = ptr_candidate(j, answer);
		j->phase = PH_WL_PTR_A;
		if (name != NULL && wl_ask(j, name, strlen(name), addr_type(j)) == 0)
			return;
		j->phase = PH_CHECKS;
		break;
	case PH_WL_PTR_A:
		if (has_address(j, answer)) {
			j->in.bypass = SPFKIT__MTA_BYPASS_PTR;
			job_finish(j);
			return;
		}
		j->phase = PH_CHECKS;
		break;
	default:
		j->phase = PH_CHECKS;
		break;
	}
	wl_next(j);
}

/* After the last request: close on EOF or drain once the answers are out. */
static void conn_maybe_close(struct conn *c)
{
	size_t pending = evbuffer_get_length(bufferevent_get_input(c->in));

	if (c->job != NULL || !(c->eof || c->srv->draining))
		return;
	if (c->eof && has_partial(c)) {
		spfkit__policyd_log(c->srv, LOG_WARNING,
				    "%s: connection ended inside a request (%zu bytes: \"%s\"); no reply",
				    c->peer, pending,
				    ESC((const char *)evbuffer_pullup(bufferevent_get_input(c->in), -1),
					pending));
		conn_close(c);
		return;
	}
	if (has_partial(c))
		return; /* draining: let the client finish its request */
	if (evbuffer_get_length(bufferevent_get_output(c->out)) == 0)
		conn_close(c);
}

/* Read and start requests while nothing is in flight and the client keeps up. */
static void conn_process(struct conn *c)
{
	struct evbuffer *b = bufferevent_get_input(c->in);

	c->in_process = 1;
	while (c->job == NULL) {
		size_t len = evbuffer_get_length(b), look, used = 0;
		struct spfkit__policy_diag d;
		struct job *j;
		const char *p;
		int rc;

		if (evbuffer_get_length(bufferevent_get_output(c->out)) > SPFKIT_POLICYD_OUTPUT_MAX) {
			bufferevent_disable(c->in, EV_READ); /* back on when the client reads */
			break;
		}
		if (len == 0)
			break;
		look = len < SPFKIT_POLICY_MAX_REQUEST + 1 ? len : SPFKIT_POLICY_MAX_REQUEST + 1;
		p = (const char *)evbuffer_pullup(b, (ev_ssize_t)look);
		rc = p == NULL ? SPFKIT_ENOMEM : spfkit__policy_read(p, look, &c->req, &used, &d);
		if (rc == SPFKIT__POLICY_NEED_MORE)
			break;
		if (rc < 0) {
			if (p == NULL)
				conn_close(c);
			else
				conn_refuse(c, p, look, &d);
			return;
		}
		j = request_take(c, &c->req);
		evbuffer_drain(b, used);
		spfkit__policy_init(&c->req);
		if (j != NULL)
			request_go(j);
	}
	c->in_process = 0;
	set_timeouts(c);
	conn_maybe_close(c);
}

/* ---- libevent callbacks ------------------------------------------------- */

static void on_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process(arg);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	/* all written: read again if we had stopped, close if draining */
	if (!c->eof)
		bufferevent_enable(c->in, EV_READ);
	if (!c->in_process)
		conn_process(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	size_t pending = evbuffer_get_length(bufferevent_get_input(c->in));

	(void)bev;
	if (what & BEV_EVENT_TIMEOUT) {
		if (what & BEV_EVENT_WRITING)
			spfkit__policyd_log(c->srv, LOG_WARNING,
					    "%s: client does not read its answers; disconnecting", c->peer);
		else if (c->req.scanned > 0 || pending > 0)
			spfkit__policyd_log(c->srv, LOG_WARNING,
					    "%s: request not finished within %d s (%zu bytes: \"%s\"); "
					    "disconnecting without reply",
					    c->peer, c->srv->opts.request_timeout, pending,
					    ESC((const char *)evbuffer_pullup(bufferevent_get_input(c->in), -1),
						pending));
		else if (debug_level(c->srv) >= 2)
			spfkit__policyd_log(c->srv, LOG_INFO, "%s: idle, closing", c->peer);
		conn_close(c);
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		if (debug_level(c->srv) >= 2)
			spfkit__policyd_log(c->srv, LOG_INFO, "%s: %s", c->peer,
					    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		conn_close(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* answer what was asked before the end, then go */
		c->eof = 1;
		bufferevent_disable(c->in, EV_READ);
		if (!c->in_process)
			conn_process(c);
	}
}

static struct conn *conn_new(struct spfkit__policyd *srv, struct bufferevent *in,
			     struct bufferevent *out, const char *peer)
{
	struct conn *c = spfkit__zalloc(NULL, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->srv = srv;
	c->in = in;
	c->out = out;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	spfkit__policy_init(&c->req);
	/* bounded input: at most one request beyond the one being read */
	bufferevent_setwatermark(in, EV_READ, 0, 2 * SPFKIT_POLICY_MAX_REQUEST);
	bufferevent_setcb(in, on_read, in == out ? on_write : NULL, on_event, c);
	if (out != in)
		bufferevent_setcb(out, NULL, on_write, on_event, c);
	bufferevent_enable(in, EV_READ);
	bufferevent_enable(out, EV_WRITE);
	c->next = srv->conns;
	if (c->next != NULL)
		c->next->prev = c;
	srv->conns = c;
	srv->n_conns++;
	set_timeouts(c);
	return c;
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

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	struct spfkit__policyd *srv = arg;
	struct bufferevent *bev;
	char peer[96];

	(void)l;
	(void)salen;
	peer_name(sa, (int)fd, "client", peer, sizeof(peer));
	if (srv->draining || srv->n_conns >= srv->opts.max_connections) {
		spfkit__policyd_log(srv, LOG_WARNING, "%s: %s; closing", peer,
				    srv->draining ? "shutting down" : "too many connections");
		evutil_closesocket(fd);
		return;
	}
	bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		evutil_closesocket(fd);
		return;
	}
	if (conn_new(srv, bev, bev, peer) == NULL)
		bufferevent_free(bev);
}

/* ---- the server ------------------------------------------------------------ */

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
	if (opts->receiver != NULL)
		snprintf(srv->receiver, sizeof(srv->receiver), "%s", opts->receiver);
	else if (gethostname(srv->receiver, sizeof(srv->receiver) - 1) != 0)
		snprintf(srv->receiver, sizeof(srv->receiver), "unknown");
	srv->resolver = cache != NULL ? cache : r;
	srv->gen = gen_new(srv, cfg);
	if (srv->gen == NULL || spfkit__dnsloop_new(base, r, cache, &srv->dnsloop) != 0) {
		if (srv->gen != NULL)
			srv->gen->cfg = NULL; /* the caller keeps cfg on failure */
		gen_put(srv->gen);
		spfkit__free(NULL, srv);
		return SPFKIT_ENOMEM;
	}
	*out = srv;
	return 0;
}

int spfkit__policyd_listen_fd(struct spfkit__policyd *srv, int fd, const char *label)
{
	struct evconnlistener *l;

	(void)label;
	if (srv->n_listeners == sizeof(srv->listeners) / sizeof(srv->listeners[0]))
		return SPFKIT_E2BIG;
	evutil_make_socket_nonblocking(fd);
	l = evconnlistener_new(srv->base, on_accept, srv, LEV_OPT_CLOSE_ON_FREE, -1, fd);
	if (l == NULL)
		return SPFKIT_ENOMEM;
	srv->listeners[srv->n_listeners++] = l;
	return 0;
}

int spfkit__policyd_serve_stdio(struct spfkit__policyd *srv, int in_fd, int out_fd)
{
	struct bufferevent *in, *out;

	evutil_make_socket_nonblocking(in_fd);
	evutil_make_socket_nonblocking(out_fd);
	in = bufferevent_socket_new(srv->base, in_fd, 0);
	out = in_fd == out_fd ? in : bufferevent_socket_new(srv->base, out_fd, 0);
	if (in == NULL || out == NULL || conn_new(srv, in, out, "stdin") == NULL) {
		if (out != NULL && out != in)
			bufferevent_free(out);
		if (in != NULL)
			bufferevent_free(in);
		return SPFKIT_ENOMEM;
	}
	return 0;
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
	rc = spfkit__mta_config_load(srv->opts.config_path, NULL, report_diag, srv, &cfg);
	if (rc != 0) {
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
	gen_put(srv->gen);
	srv->gen = g;
	spfkit__policyd_log(srv, LOG_NOTICE, "configuration %s reloaded", srv->opts.config_path);
	return 0;
}

void spfkit__policyd_drain(struct spfkit__policyd *srv)
{
	struct conn *c, *next;
	size_t i;

	srv->draining = 1;
	for (i = 0; i < srv->n_listeners; i++)
		evconnlistener_disable(srv->listeners[i]);
	for (c = srv->conns; c != NULL; c = next) {
		next = c->next;
		if (c->job == NULL && c->req.scanned == 0 &&
		    evbuffer_get_length(bufferevent_get_output(c->out)) == 0)
			conn_close(c);
	}
	maybe_finish_drain(srv);
}

void spfkit__policyd_free(struct spfkit__policyd *srv)
{
	size_t i;

	if (srv == NULL)
		return;
	while (srv->conns != NULL)
		conn_close(srv->conns);
	for (i = 0; i < srv->n_listeners; i++)
		evconnlistener_free(srv->listeners[i]);
	cache_free(srv);
	spfkit__dnsloop_free(srv->dnsloop);
	gen_put(srv->gen);
	spfkit__free(NULL, srv);
}
