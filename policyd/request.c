/*
 * One policy request (see internal.h): its attributes copied, the DNS
 * whitelists (whitelist.c), then the HELO and the MAIL FROM evaluations
 * as sans-I/O state machines fed by the resolver from the loop, each
 * within Lookup_Time; mta/decision.c turns the results into the answer,
 * which the per-message cache (icache.c) keeps for later recipients.
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "internal.h"

/* ---- DNS ---------------------------------------------------------------- */

/* What an open question gets when its time is up. */
const struct spfkit_dns_answer spfkit__policyd_timed_out = {SPFKIT_DNS_TEMPFAIL, 0, NULL, 0,
							    "Lookup_Time exceeded"};

/* What stands in for an answer the evaluator refused as malformed. */
static const struct spfkit_dns_answer refused = {SPFKIT_DNS_TEMPFAIL, 0, NULL, 0,
						 "unusable answer from the resolver"};

/*
 * Hand an answer to the evaluation being fed. A backend's answer the
 * evaluator refuses (SPFKIT_EINVAL: malformed) is a failed lookup, as
 * a resolver error would be. An id the evaluation no longer waits for
 * needs nothing. Anything else (SPFKIT_ENOMEM: the question stays open
 * and nothing would ever answer it) is returned for the caller to end
 * the request with spfkit__policyd_job_fail().
 */
static int feed(struct job *j, uint32_t id, const struct spfkit_dns_answer *answer)
{
	int rc = spfkit_eval_answer(j->cur, id, answer);

	if (rc == SPFKIT_EINVAL)
		rc = spfkit_eval_answer(j->cur, id, &refused);
	return rc == SPFKIT_ENOTFOUND ? 0 : rc;
}

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
	int rc;

	question_unlink(j, q);
	spfkit__mta_free(NULL, q);
	if (raw) {
		spfkit__policyd_wl_answer(j, answer);
		return;
	}
	rc = feed(j, id, answer);
	if (rc != 0) {
		spfkit__policyd_job_fail(j, rc, "keeping a DNS answer");
		return;
	}
	spfkit__policyd_job_run(j);
}

void spfkit__policyd_cancel_questions(struct job *j)
{
	while (j->questions != NULL) {
		struct question *q = j->questions;

		spfkit_resolver_cancel(j->conn->srv->resolver, q->handle);
		question_unlink(j, q);
		spfkit__mta_free(NULL, q);
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
		spfkit__policyd_cancel_questions(j);
		spfkit__policyd_wl_answer(j, &spfkit__policyd_timed_out);
		return;
	}
	while (j->questions != NULL) {
		struct question *q = j->questions;
		uint32_t id = q->id;
		int rc;

		spfkit_resolver_cancel(j->conn->srv->resolver, q->handle);
		question_unlink(j, q);
		spfkit__mta_free(NULL, q);
		rc = feed(j, id, &spfkit__policyd_timed_out);
		if (rc != 0) {
			spfkit__policyd_job_fail(j, rc, "timing out a DNS question");
			return;
		}
	}
	spfkit__policyd_job_run(j);
}

/* Send one question; 0, or -1 when it could not go (the caller answers it). */
int spfkit__policyd_submit(struct job *j, const char *name, size_t len, uint16_t type, uint32_t id,
			   int raw)
{
	struct question *q;

	if (j->expired)
		return -1;
	q = spfkit__mta_zalloc(NULL, sizeof(*q));
	if (q == NULL)
		return -1;
	q->job = j;
	q->id = id;
	q->raw = raw;
	if (spfkit_resolver_submit(j->conn->srv->resolver, name, len, type, on_answer, q,
				   &q->handle) != 0) {
		spfkit__mta_free(NULL, q);
		return -1;
	}
	q->next = j->questions;
	if (q->next != NULL)
		q->next->prev = q;
	j->questions = q;
	return 0;
}

/* A question that cannot be sent fails as a lookup; 0, or feed()'s error. */
static int ask(struct job *j, const struct spfkit_question *sq)
{
	if (spfkit__policyd_submit(j, sq->name, sq->name_len, sq->type, sq->id, 0) != 0)
		return feed(j, sq->id, &spfkit__policyd_timed_out);
	return 0;
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
	j->no_mail[j->stage] = spfkit__mta_memcaseeq(t, n, want, sizeof(want) - 1);
}

void spfkit__policyd_job_free(struct job *j)
{
	spfkit__policyd_cancel_questions(j);
	if (j->deadline != NULL)
		event_free(j->deadline);
	spfkit_eval_free(j->ev[0]);
	spfkit_eval_free(j->ev[1]);
	spfkit_eval_free(j->wl_ev);
	spfkit__policyd_gen_put(j->gen);
	spfkit__mta_arena_free(&j->arena);
	if (j->conn != NULL)
		j->conn->job = NULL;
	spfkit__mta_free(NULL, j);
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

void spfkit__policyd_job_finish(struct job *j)
{
	struct conn *c = j->conn;
	struct spfkit__mta_decision d;

	spfkit__mta_decide(j->gen->cfg, &j->in, &d);
	spfkit__policyd_cache_put(c->srv, j->cache_key, &d);
	spfkit__policyd_send_reply(c, d.action);
	log_decision(j, d.action);
	spfkit__policyd_job_free(j);
	if (!c->in_process)
		spfkit__policyd_conn_process(c);
}

#define FAIL_TEXT "Temporary local problem checking SPF, please try again later"

/*
 * The answer when we cannot tell. Out of memory is no SPF result
 * (include/spfkit/eval.h), so no Received-SPF header claims one: with
 * TempError_Defer the client is told to come back, in the form of
 * TempError_Action, as for a temperror; otherwise no opinion. TestOnly = 0
 * and an identity checked under "False" never defer, as for a temperror.
 * Input the evaluator refuses (SPFKIT_EINVAL) will not get better by
 * coming back: no opinion.
 */
static const char *fail_action(const struct job *j, int rc)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;
	enum spfkit__mta_reject policy;

	if (rc != SPFKIT_ENOMEM || !cfg->temperror_defer || cfg->test_only == 0)
		return "dunno";
	if (j->phase == PH_CHECKS) {
		policy = j->stage == SPFKIT_IDENTITY_HELO ? cfg->helo_reject : cfg->mail_from_reject;
		if (policy == SPFKIT_MTA_REJECT_FALSE || policy == SPFKIT_MTA_REJECT_NO_CHECK)
			return "dunno";
	}
	/* RFC 3463 4.3.0: a local problem, not the sender's DNS (4.7.24) */
	if (cfg->temperror_action == SPFKIT_MTA_DEFER_451)
		return cfg->enhanced_status_codes ? "451 4.3.0 " FAIL_TEXT : "451 " FAIL_TEXT;
	return cfg->enhanced_status_codes ? "defer_if_permit 4.3.0 " FAIL_TEXT
					  : "defer_if_permit " FAIL_TEXT;
}

/*
 * The request cannot go on (rc: what the library said while `doing`):
 * answer it now, never leave it to the client's timeout, and log why.
 * Nothing is cached: the next recipient gets a fresh try.
 */
void spfkit__policyd_job_fail(struct job *j, int rc, const char *doing)
{
	struct conn *c = j->conn;
	const char *action = fail_action(j, rc);

	spfkit__policyd_send_reply(c, action);
	spfkit__policyd_log(c->srv, LOG_ERR, "%s: SPF check not finished: %s while %s; action=%s",
			    c->peer, spfkit_strerror(rc), doing, action);
	spfkit__policyd_job_free(j);
	if (!c->in_process)
		spfkit__policyd_conn_process(c);
}

static int stage_start(struct job *j, enum spfkit_identity id)
{
	struct spfkit_request req;
	struct timeval tv = {j->gen->cfg->lookup_time, 0};
	int rc;

	spfkit_request_init(&req);
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
	rc = spfkit_eval_new(j->gen->ctx, &req, &j->ev[id]);
	if (rc != 0)
		return rc;
	j->cur = j->ev[id];
	evtimer_add(j->deadline, &tv);
	spfkit__policyd_job_run(j);
	return 0;
}


static void stage_done(struct job *j)
{
	struct spfkit__mta_check *chk = j->stage == SPFKIT_IDENTITY_HELO ? &j->in.helo_check
									  : &j->in.mfrom_check;

	evtimer_del(j->deadline);
	if (j->phase == PH_WL_DOMAIN) {
		const struct spfkit_result *r = spfkit_eval_result(j->wl_ev);

		if (r != NULL && r->code == SPFKIT_RESULT_PASS) {
			j->in.bypass = SPFKIT__MTA_BYPASS_DOMAIN;
			spfkit__policyd_job_finish(j);
			return;
		}
		spfkit__policyd_wl_next(j);
		return;
	}
	chk->checked = 1;
	chk->res = spfkit_eval_result(j->ev[j->stage]);
	chk->no_mail_record = j->no_mail[j->stage];
	if (j->stage == SPFKIT_IDENTITY_HELO && spfkit__mta_want_mailfrom(j->gen->cfg, &j->in)) {
		int rc = stage_start(j, SPFKIT_IDENTITY_MAILFROM);

		/* deciding on HELO alone would pass off its result as MAIL FROM's */
		if (rc != 0)
			spfkit__policyd_job_fail(j, rc, "starting the MAIL FROM check");
		return;
	}
	spfkit__policyd_job_finish(j);
}

void spfkit__policyd_job_run(struct job *j)
{
	struct spfkit_dns_answer none;
	int asked = 0;

	memset(&none, 0, sizeof(none));
	for (;;) {
		struct spfkit_question q;
		int s = spfkit_eval_step(j->cur, &q);

		if (s == SPFKIT_STEP_QUERY) {
			int rc = ask(j, &q);

			if (rc != 0) {
				spfkit__policyd_job_fail(j, rc, "answering an unsent DNS question");
				return;
			}
			asked = 1;
			continue;
		}
		if (asked)
			spfkit_event_kick(j->conn->srv->dnsloop);
		if (s == SPFKIT_STEP_WAIT)
			return;
		if (s == SPFKIT_STEP_DONE) {
			stage_done(j);
			return;
		}
		spfkit__policyd_job_fail(j, s, "evaluating");
		return;
	}
}

static const char *copy_attr(struct job *j, const struct spfkit__policy_request *r,
			     const char *name, size_t *len)
{
	size_t n;
	const char *v = spfkit__policy_get(r, name, &n);
	char *s = spfkit__mta_arena_strndup(&j->arena, v != NULL ? v : "", n);

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
	struct spfkit__mta_buf b;
	char *key;

	if (j->instance[0] == '\0')
		return NULL; /* no instance: every request stands alone */
	spfkit__mta_buf_init(&b, NULL, 2048);
	spfkit__mta_buf_printf(&b, "%s|%s|", j->instance, j->in.client_ip);
	spfkit__mta_buf_append(&b, j->in.sender, j->in.sender_len);
	key = b.err ? NULL : spfkit__mta_arena_strndup(&j->arena, b.data, b.len);
	spfkit__mta_buf_free(&b);
	return key;
}

static void answer_now(struct conn *c, const char *action, int prio, const char *why)
{
	spfkit__policyd_send_reply(c, action);
	if (why != NULL)
		spfkit__policyd_log(c->srv, prio, "%s: %s; action=%s", c->peer, why, action);
}

/*
 * Take one complete request: copy what we need (its bytes go once this
 * returns) and answer at once when we can (cache hit, no usable input).
 * Returns the job to run, or NULL when answered.
 */
struct job *spfkit__policyd_request_take(struct conn *c, const struct spfkit__policy_request *r)
{
	struct spfkit__policyd *srv = c->srv;
	struct job *j = spfkit__mta_zalloc(NULL, sizeof(*j));
	struct cached *hit;
	char action[SPFKIT__MTA_TEXT_MAX];
	int rc;

	if (j == NULL) {
		answer_now(c, "dunno", LOG_ERR, "out of memory");
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &j->t0);
	spfkit__mta_arena_init(&j->arena, NULL, 1024, 0);
	j->conn = c;
	j->gen = srv->gen;
	j->gen->refs++;
	c->job = j;
	rc = job_fill(j, r);
	if (rc != 0) {
		spfkit__policyd_job_free(j);
		answer_now(c, "dunno", rc == SPFKIT_EINVAL ? LOG_NOTICE : LOG_ERR,
			   rc == SPFKIT_EINVAL ? "no usable client_address" : "out of memory");
		return NULL;
	}
	j->cache_key = make_key(j);
	hit = j->cache_key != NULL ? spfkit__policyd_cache_find(srv, j->cache_key) : NULL;
	if (hit == NULL)
		return j;
	/* a later recipient of the same message: same decision, no second header */
	spfkit__policyd_cache_action(hit, hit->served++, action, sizeof(action));
	spfkit__policyd_send_reply(c, action);
	if (spfkit__policyd_debug_level(srv) >= 2)
		log_decision(j, action);
	spfkit__policyd_job_free(j);
	return NULL;
}

/* Run the checks of a taken request; may finish at once. */
void spfkit__policyd_request_go(struct job *j)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;

	if (cfg->mock || j->in.helo_len == 0) {
		spfkit__policyd_job_finish(j); /* nothing to check: "dunno" or the Mock answer */
		return;
	}
	j->in.bypass = spfkit__mta_ip_bypass(cfg, cfg->has_prospective ? &cfg->prospective : &j->ip);
	j->deadline = evtimer_new(j->conn->srv->base, on_deadline, j);
	if (j->deadline == NULL || j->in.bypass != SPFKIT__MTA_BYPASS_NONE) {
		spfkit__policyd_job_finish(j);
		return;
	}
	j->phase = PH_WL_DOMAIN;
	j->wl_index = 0;
	spfkit__policyd_wl_next(j);
}

/* The SPF checks proper, once no whitelist matched. */
void spfkit__policyd_checks_start(struct job *j)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;
	int rc = 0;

	j->phase = PH_CHECKS;
	if (spfkit__mta_want_helo(cfg))
		rc = stage_start(j, SPFKIT_IDENTITY_HELO);
	else if (spfkit__mta_want_mailfrom(cfg, &j->in))
		rc = stage_start(j, SPFKIT_IDENTITY_MAILFROM);
	else
		spfkit__policyd_job_finish(j);
	if (rc != 0)
		spfkit__policyd_job_fail(j, rc, "starting the SPF check");
}
