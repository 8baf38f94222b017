/*
 * One client's SPF check (see checker.h): the DNS whitelists, then the
 * HELO and the MAIL FROM evaluations as sans-I/O state machines fed by
 * the resolver from the loop, each within its time. Moved here from
 * spfkit-policyd so the milter runs the very same flow.
 */
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include <spfkit/cache.h>

#include "checker.h"
#include "flow.h"
#include "metrics.h"
#include "spfkit_util.h"

typedef struct spfkit__mta_job job;
typedef struct spfkit__mta_question question;

static void wl_next(job *j);
static void wl_answer(job *j, const struct spfkit_dns_answer *answer);
static void run(job *j);

/* ---- the end ------------------------------------------------------------- */

static void finish(job *j)
{
	j->done(j, 0, NULL);
}

static void fail(job *j, int rc, const char *doing)
{
	j->done(j, rc, doing);
}

/* ---- DNS ---------------------------------------------------------------- */

/* CLOCK_MONOTONIC in microseconds: what the metrics time (read only when counting). */
static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* What an open question gets when its time is up. */
static const struct spfkit_dns_answer timed_out = {SPFKIT_DNS_TEMPFAIL, 0, NULL, 0,
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
 * the check with fail().
 */
static int feed(job *j, uint32_t id, const struct spfkit_dns_answer *answer)
{
	int rc = spfkit_eval_answer(j->cur, id, answer);

	if (rc == SPFKIT_EINVAL)
		rc = spfkit_eval_answer(j->cur, id, &refused);
	return rc == SPFKIT_ENOTFOUND ? 0 : rc;
}

/* A free slot of the job's, else the heap; zeroed. NULL: out of memory. */
static question *question_new(job *j)
{
	unsigned i;

	for (i = 0; i < SPFKIT__MTA_QUESTION_SLOTS; i++)
		if ((j->slots_used & (1u << i)) == 0) {
			j->slots_used |= 1u << i;
			memset(&j->slot[i], 0, sizeof(j->slot[i]));
			j->slot[i].slot = i + 1;
			return &j->slot[i];
		}
	return spfkit__zalloc(NULL, sizeof(question));
}

static void question_free(job *j, question *q)
{
	if (q->slot != 0)
		j->slots_used &= ~(1u << (q->slot - 1));
	else
		spfkit__free(NULL, q);
}

static void question_unlink(job *j, question *q)
{
	spfkit__list_unlink(&j->questions, &q->link);
}

/* The newest open question; NULL: none. */
static question *first_question(const job *j)
{
	return SPFKIT__LIST_ENTRY(j->questions.head, question, link);
}

/* A question that went to the network has its outcome and time counted. */
static void count_answer(const job *j, const question *q, const struct spfkit_dns_answer *answer)
{
	if (q->network)
		spfkit__metrics_dns(j->loop->metrics, q->type, answer, now_us() - q->sent_us);
}

static void on_answer(void *arg, const struct spfkit_dns_answer *answer)
{
	question *q = arg;
	job *j = q->job;
	uint32_t id = q->id;
	int raw = q->raw;
	int rc;

	count_answer(j, q, answer);
	question_unlink(j, q);
	question_free(j, q);
	if (raw) {
		wl_answer(j, answer);
		return;
	}
	rc = feed(j, id, answer);
	if (rc != 0) {
		fail(j, rc, "keeping a DNS answer");
		return;
	}
	run(j);
}

static void cancel_questions(job *j)
{
	while (first_question(j) != NULL) {
		question *q = first_question(j);

		spfkit_resolver_cancel(j->loop->resolver, q->handle);
		question_unlink(j, q);
		question_free(j, q);
	}
}

/* ---- time ---------------------------------------------------------------- */

/*
 * A phase's clock (Lookup_Time, Whitelist_Lookup_Time) and the check's
 * budget run from their start, but their timers go into the loop only
 * when the check waits for an answer: most checks are answered from the
 * caches without waiting, and putting a timer in and taking it out again
 * cost several hundred instructions a request.
 */
uint64_t spfkit__mta_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void arm(struct event *ev, uint64_t end_ms, uint64_t now)
{
	uint64_t left = end_ms > now ? end_ms - now : 0;
	struct timeval tv = {(time_t)(left / 1000u), (suseconds_t)(left % 1000u) * 1000};

	evtimer_add(ev, &tv);
}

/* The check waits for answers: its clocks must be able to end it. */
static void timers_arm(job *j)
{
	uint64_t now;

	if (j->deadline_on && (j->budget == NULL || j->budget_on))
		return;
	now = spfkit__mta_now_ms();
	if (!j->deadline_on) {
		arm(j->deadline, j->phase_end_ms, now);
		j->deadline_on = 1;
	}
	if (j->budget != NULL && !j->budget_on) {
		arm(j->budget, j->budget_end_ms, now);
		j->budget_on = 1;
	}
}

static void deadline_stop(job *j)
{
	if (j->deadline_on)
		evtimer_del(j->deadline);
	j->deadline_on = 0;
}

/* This phase's time is over: every open question, and every later one, times out. */
static void expire(job *j)
{
	j->expired = 1;
	if (first_question(j) != NULL && first_question(j)->raw) {
		/* a whitelist's own lookup ran out of Whitelist_Lookup_Time: no match */
		count_answer(j, first_question(j), &timed_out);
		cancel_questions(j);
		wl_answer(j, &timed_out);
		return;
	}
	while (first_question(j) != NULL) {
		question *q = first_question(j);
		uint32_t id = q->id;
		int rc;

		spfkit_resolver_cancel(j->loop->resolver, q->handle);
		count_answer(j, q, &timed_out);
		question_unlink(j, q);
		question_free(j, q);
		rc = feed(j, id, &timed_out);
		if (rc != 0) {
			fail(j, rc, "timing out a DNS question");
			return;
		}
	}
	run(j);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	job *j = arg;

	(void)fd;
	(void)what;
	j->deadline_on = 0;
	expire(j);
}

/* The whole check's budget is spent: this phase and every later one expire. */
static void on_budget(evutil_socket_t fd, short what, void *arg)
{
	job *j = arg;

	(void)fd;
	(void)what;
	j->budget_on = 0;
	j->over = 1;
	deadline_stop(j);
	expire(j);
}

/* Send one question; 0, or -1 when it could not go (the caller answers it). */
static int submit(job *j, const char *name, size_t len, uint16_t type, uint32_t id, int raw)
{
	uint64_t misses = 0;
	question *q;

	if (j->expired)
		return -1;
	q = question_new(j);
	if (q == NULL)
		return -1;
	q->job = j;
	q->id = id;
	q->raw = raw;
	if (j->loop->metrics != NULL)
		(void)spfkit_cache_forwarded(j->loop->resolver, &misses);
	if (spfkit_resolver_submit(j->loop->resolver, name, len, type, on_answer, q, &q->handle) != 0) {
		question_free(j, q);
		return -1;
	}
	if (j->loop->metrics != NULL) {
		uint64_t after = misses;

		/* not a cache layer (EINVAL): every question goes to the network */
		q->network = spfkit_cache_forwarded(j->loop->resolver, &after) != 0 || after != misses;
		q->type = type;
		q->sent_us = now_us();
	}
	spfkit__list_push_front(&j->questions, &q->link);
	return 0;
}

/*
 * A question that cannot be sent fails as a lookup; 0, or feed()'s
 * error. The first one the DNS cache passes on to the network switches
 * the evaluation's lookahead on (see feed_from()).
 */
static int ask(job *j, const struct spfkit_question *sq)
{
	struct spfkit_resolver *r = j->loop->resolver;
	uint64_t before = 0, after = 0;

	if (j->lazy_lookahead)
		(void)spfkit_cache_forwarded(r, &before);
	if (submit(j, sq->name, sq->name_len, sq->type, sq->id, 0) != 0)
		return feed(j, sq->id, &timed_out);
	if (j->lazy_lookahead && spfkit_cache_forwarded(r, &after) == 0 && after != before) {
		j->lazy_lookahead = 0;
		(void)spfkit_eval_set_lookahead(j->cur, 1);
	}
	return 0;
}

/*
 * Make ev the evaluation fed answers. Behind a DNS cache it starts
 * without lookahead: answers at hand all come back in one delivery, so
 * asking ahead of them saves no round trip and costs about what an
 * evaluation does. ask() switches it on at the first miss.
 */
static void feed_from(job *j, struct spfkit_eval *ev)
{
	uint64_t misses;

	j->cur = ev;
	j->lazy_lookahead = spfkit_cache_forwarded(j->loop->resolver, &misses) == 0;
	if (j->lazy_lookahead)
		(void)spfkit_eval_set_lookahead(ev, 0);
}

/* Start this phase's clock; an exhausted budget leaves it expired at once. */
static void phase_timer(job *j, int seconds)
{
	uint64_t now = spfkit__mta_now_ms();

	deadline_stop(j);
	if (j->budget != NULL && now >= j->budget_end_ms)
		j->over = 1; /* spent before anything waited, so before its timer was armed */
	j->expired = j->over;
	j->phase_end_ms = now + (uint64_t)seconds * 1000u;
}

/* ---- the evaluations ----------------------------------------------------- */

/* No_Mail wants to know whether the top record is exactly "v=spf1 -all". */
static void on_trace(void *arg, const struct spfkit_trace_event *e)
{
	static const char want[] = "v=spf1 -all";
	job *j = arg;
	const char *t = e->text;
	size_t n = e->text_len;

	if (e->kind != SPFKIT_TRACE_RECORD || e->depth != 0 || t == NULL ||
	    j->phase != SPFKIT__MTA_PH_CHECKS)
		return;
	while (n > 0 && t[n - 1] == ' ')
		n--;
	j->no_mail[j->stage] = spfkit__memcaseeq(t, n, want, sizeof(want) - 1);
}

static const struct spfkit_ip *client(const job *j)
{
	return j->cfg->has_prospective ? &j->cfg->prospective : &j->ip;
}

static int stage_start(job *j, enum spfkit_identity id)
{
	struct spfkit_request req;
	int rc;

	spfkit_request_init(&req);
	req.ip = *client(j);
	req.sender = id == SPFKIT_IDENTITY_HELO ? "" : j->in.sender;
	req.sender_len = id == SPFKIT_IDENTITY_HELO ? 0 : j->in.sender_len;
	req.helo = j->in.helo;
	req.helo_len = j->in.helo_len;
	req.identity = id;
	req.now = (int64_t)time(NULL);
	if (j->cfg->no_mail) { /* only No_Mail asks what the record was: a trace costs */
		req.trace = on_trace;
		req.trace_arg = j;
	}
	j->stage = id;
	if (j->loop->metrics != NULL)
		j->stage_t0_us = now_us();
	rc = spfkit_eval_new(j->ctx, &req, &j->ev[id]);
	if (rc != 0)
		return rc;
	feed_from(j, j->ev[id]);
	phase_timer(j, j->cfg->lookup_time);
	run(j);
	return 0;
}

static void stage_done(job *j)
{
	struct spfkit__mta_check *chk = j->stage == SPFKIT_IDENTITY_HELO ? &j->in.helo_check
									  : &j->in.mfrom_check;

	if (j->phase == SPFKIT__MTA_PH_WL_DOMAIN) {
		deadline_stop(j);
		const struct spfkit_result *r = spfkit_eval_result(j->wl_ev);

		if (r != NULL && r->code == SPFKIT_RESULT_PASS) {
			j->in.bypass = SPFKIT__MTA_BYPASS_DOMAIN;
			finish(j);
			return;
		}
		wl_next(j);
		return;
	}
	chk->checked = 1;
	chk->res = spfkit_eval_result(j->ev[j->stage]);
	if (j->loop->metrics != NULL)
		spfkit__metrics_check(j->loop->metrics, j->stage, chk->res, now_us() - j->stage_t0_us);
	chk->no_mail_record = j->no_mail[j->stage];
	if (spfkit__mta_flow_next(j->cfg, &j->in, (int)j->stage) == SPFKIT_IDENTITY_MAILFROM) {
		/* the next stage's start gives the deadline its own Lookup_Time */
		int rc = stage_start(j, SPFKIT_IDENTITY_MAILFROM);

		/* deciding on HELO alone would pass off its result as MAIL FROM's */
		if (rc != 0) {
			deadline_stop(j);
			fail(j, rc, "starting the MAIL FROM check");
		}
		return;
	}
	deadline_stop(j);
	finish(j);
}

static void run(job *j)
{
	int asked = 0;

	for (;;) {
		struct spfkit_question q;
		int s = spfkit_eval_step(j->cur, &q);

		if (s == SPFKIT_STEP_QUERY) {
			int rc = ask(j, &q);

			if (rc != 0) {
				fail(j, rc, "answering an unsent DNS question");
				return;
			}
			asked = 1;
			continue;
		}
		if (asked)
			spfkit_event_kick(j->loop->dnsloop);
		if (s == SPFKIT_STEP_WAIT) {
			timers_arm(j);
			return;
		}
		if (s == SPFKIT_STEP_DONE) {
			stage_done(j);
			return;
		}
		fail(j, s, "evaluating");
		return;
	}
}

/* The SPF checks proper, once no whitelist matched. */
static void checks_start(job *j)
{
	int rc = 0, first = spfkit__mta_flow_next(j->cfg, &j->in, SPFKIT__MTA_FLOW_DONE);

	j->phase = SPFKIT__MTA_PH_CHECKS;
	if (first != SPFKIT__MTA_FLOW_DONE)
		rc = stage_start(j, (enum spfkit_identity)first);
	else {
		deadline_stop(j); /* a whitelist's, if any */
		finish(j);
	}
	if (rc != 0) {
		deadline_stop(j);
		fail(j, rc, "starting the SPF check");
	}
}

/* ---- the DNS whitelists (policyd-spf order: domain, HELO, PTR) ----------- */

/* Domain_Whitelist: check_host(ip, domain, postmaster@domain), as policyd-spf.
 * 0, or spfkit_eval_new()'s error. */
static int wl_domain(job *j, const char *domain)
{
	struct spfkit_request req;
	int rc;

	spfkit_request_init(&req);
	req.ip = *client(j);
	req.sender = "";
	req.helo = domain;
	req.helo_len = strlen(domain); /* our own copy from the configuration */
	req.identity = SPFKIT_IDENTITY_HELO;
	req.now = (int64_t)time(NULL);
	spfkit_eval_free(j->wl_ev);
	j->wl_ev = NULL;
	rc = spfkit_eval_new(j->ctx, &req, &j->wl_ev);
	if (rc != 0)
		return rc;
	feed_from(j, j->wl_ev);
	phase_timer(j, j->cfg->whitelist_lookup_time);
	run(j);
	return 0;
}

static int wl_ask(job *j, const char *name, size_t len, uint16_t type)
{
	phase_timer(j, j->cfg->whitelist_lookup_time);
	if (submit(j, name, len, type, 0, 1) != 0)
		return -1;
	spfkit_event_kick(j->loop->dnsloop);
	timers_arm(j);
	return 0;
}

static uint16_t addr_type(const job *j)
{
	return j->ip.family == 6 ? SPFKIT_RR_AAAA : SPFKIT_RR_A;
}

/* Start the next whitelist method that applies, or the checks. */
static void wl_next(job *j)
{
	const struct spfkit__mta_config *cfg = j->cfg;
	char rev[SPFKIT_IP_REVERSE_MAX];
	size_t n;
	int rc;

	for (;;) {
		switch (j->phase) {
		case SPFKIT__MTA_PH_WL_DOMAIN:
			if (j->wl_index < cfg->domain_whitelist.count) {
				rc = wl_domain(j, cfg->domain_whitelist.names[j->wl_index++]);
				if (rc == 0)
					return;
				/* skipping a listed domain for want of memory could reject its mail */
				if (rc == SPFKIT_ENOMEM) {
					fail(j, rc, "starting a Domain_Whitelist check");
					return;
				}
				continue; /* a name the evaluator refuses cannot match */
			}
			j->phase = SPFKIT__MTA_PH_WL_HELO;
			continue;
		case SPFKIT__MTA_PH_WL_HELO:
			/* policyd-spf compares the HELO name with each entry, exactly */
			if (spfkit__mta_name_listed(&cfg->helo_whitelist, j->in.helo, j->in.helo_len) &&
			    wl_ask(j, j->in.helo, j->in.helo_len, addr_type(j)) == 0)
				return;
			j->phase = SPFKIT__MTA_PH_WL_PTR;
			continue;
		case SPFKIT__MTA_PH_WL_PTR:
			if (cfg->domain_whitelist_ptr.count > 0) {
				n = spfkit_ip_reverse_name(&j->ip, rev, SPFKIT_IP_REVERSE_MAX);
				if (wl_ask(j, rev, n, SPFKIT_RR_PTR) == 0)
					return;
			}
			j->phase = SPFKIT__MTA_PH_CHECKS;
			continue;
		default:
			checks_start(j); /* its first stage re-arms the timer, or it stops it */
			return;
		}
	}
}

static int has_address(const job *j, const struct spfkit_dns_answer *a)
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
static const char *ptr_candidate(job *j, const struct spfkit_dns_answer *a)
{
	size_t i;

	for (i = 0; a->status == SPFKIT_DNS_OK && i < a->count && i < SPFKIT_LIMIT_PTR_NAMES; i++) {
		const char *name = (const char *)a->rrs[i].data;
		size_t len = a->rrs[i].len;

		if (len < sizeof(j->ptr_name) && memchr(name, '\0', len) == NULL &&
		    spfkit__mta_name_match(&j->cfg->domain_whitelist_ptr, name, len)) {
			memcpy(j->ptr_name, name, len);
			j->ptr_name[len] = '\0';
			return j->ptr_name;
		}
	}
	return NULL;
}

static void wl_answer(job *j, const struct spfkit_dns_answer *answer)
{
	const char *name;

	deadline_stop(j);
	switch (j->phase) {
	case SPFKIT__MTA_PH_WL_HELO:
		if (has_address(j, answer)) {
			j->in.bypass = SPFKIT__MTA_BYPASS_HELO;
			finish(j);
			return;
		}
		j->phase = SPFKIT__MTA_PH_WL_PTR;
		break;
	case SPFKIT__MTA_PH_WL_PTR:
		name = ptr_candidate(j, answer);
		j->phase = SPFKIT__MTA_PH_WL_PTR_A;
		if (name != NULL && wl_ask(j, name, strlen(name), addr_type(j)) == 0)
			return;
		j->phase = SPFKIT__MTA_PH_CHECKS;
		break;
	case SPFKIT__MTA_PH_WL_PTR_A:
		if (has_address(j, answer)) {
			j->in.bypass = SPFKIT__MTA_BYPASS_PTR;
			finish(j);
			return;
		}
		j->phase = SPFKIT__MTA_PH_CHECKS;
		break;
	default:
		j->phase = SPFKIT__MTA_PH_CHECKS;
		break;
	}
	wl_next(j);
}

/* ---- a job ---------------------------------------------------------------- */

void spfkit__mta_job_start(job *j)
{
	const struct spfkit__mta_config *cfg = j->cfg;

	spfkit__mta_helo_fallback(&j->in);
	if (cfg->mock || j->in.helo_len == 0) {
		finish(j); /* nothing to check: "dunno" or the Mock answer */
		return;
	}
	j->in.bypass = spfkit__mta_ip_bypass(cfg, client(j));
	j->deadline_on = j->budget_on = 0;
	if (j->lent_timer == NULL)
		j->deadline = evtimer_new(j->loop->base, on_deadline, j);
	else if (evtimer_assign(j->lent_timer, j->loop->base, on_deadline, j) == 0)
		j->deadline = j->lent_timer;
	if (j->budget_s > 0)
		j->budget = evtimer_new(j->loop->base, on_budget, j);
	if (j->deadline == NULL || (j->budget_s > 0 && j->budget == NULL)) {
		fail(j, SPFKIT_ENOMEM, "starting the check");
		return;
	}
	if (j->in.bypass != SPFKIT__MTA_BYPASS_NONE) {
		finish(j);
		return;
	}
	if (j->budget != NULL)
		j->budget_end_ms = spfkit__mta_now_ms() + (uint64_t)j->budget_s * 1000u;
	j->phase = SPFKIT__MTA_PH_WL_DOMAIN;
	j->wl_index = 0;
	wl_next(j);
}

void spfkit__mta_job_cleanup(job *j)
{
	cancel_questions(j);
	if (j->deadline != NULL && j->deadline == j->lent_timer)
		deadline_stop(j);
	else if (j->deadline != NULL)
		event_free(j->deadline);
	if (j->budget != NULL)
		event_free(j->budget);
	j->deadline = NULL;
	j->budget = NULL;
	j->deadline_on = j->budget_on = 0;
	spfkit_eval_free(j->ev[0]);
	spfkit_eval_free(j->ev[1]);
	spfkit_eval_free(j->wl_ev);
	j->ev[0] = j->ev[1] = j->wl_ev = j->cur = NULL;
	j->in.helo_check.res = NULL;
	j->in.mfrom_check.res = NULL;
}
