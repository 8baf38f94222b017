/*
 * One policy request (see internal.h): its attributes copied, then the
 * shared check (mta/checker.c: the DNS whitelists, the HELO and the
 * MAIL FROM evaluations on the loop); mta/decision.c turns the results
 * into the answer, which the per-message cache (icache.c) keeps for
 * later recipients.
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "internal.h"
#include "peruser.h"
#include "flow.h"
#include "outcome.h"
#include "unfinished.h"

/* The cache key, "instance|client|sender": none without an instance, or past this. */
#define KEY_MAX 2048

void spfkit__policyd_job_free(struct job *j)
{
	if (j->chk.loop != NULL)
		spfkit__metrics_gauge(j->chk.loop->metrics, SPFKIT__METRICS_IN_FLIGHT, -1);
	spfkit__mta_job_cleanup(&j->chk);
	spfkit__policyd_gen_put(j->gen);
	if (j->conn != NULL)
		j->conn->job = NULL;
	spfkit__free(NULL, j);
}

/* Microseconds since t0. */
static unsigned long us_since(const struct timespec *t0)
{
	struct timespec t1;
	long us;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (long)(t1.tv_sec - t0->tv_sec) * 1000000L + (t1.tv_nsec - t0->tv_nsec) / 1000L;
	return us > 0 ? (unsigned long)us : 0;
}

/*
 * The per-decision log line, built in place: copies and escapes, no
 * printf. It runs once per request, and formatting it with printf and
 * escaping each field into its own buffer cost about as much as one of
 * the request's two SPF evaluations.
 */
struct line {
	char text[3072];
	size_t len;
};

static void put(struct line *l, const char *s, size_t n)
{
	size_t room = sizeof(l->text) - l->len;

	if (n > room)
		n = room;
	memcpy(l->text + l->len, s, n);
	l->len += n;
}

#define PUT_LIT(l, s) put((l), (s), sizeof(s) - 1)

static void put_str(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* Untrusted bytes: at most max of them, escaped (spfkit__mta_escape). */
static void put_esc(struct line *l, const char *s, size_t n, size_t max)
{
	l->len += spfkit__mta_escape_into(s, n, max, l->text + l->len, sizeof(l->text) - l->len);
}

/* "N.Nms": tenths of a millisecond, as "%.1fms" printed it (rounded down). */
static void put_ms(struct line *l, unsigned long us)
{
	char digits[24];
	size_t n = 0;
	unsigned long tenths = us / 100, whole = tenths / 10;

	do {
		digits[sizeof(digits) - 1 - n++] = (char)('0' + whole % 10);
		whole /= 10;
	} while (whole > 0 && n < sizeof(digits) - 4);
	put(l, digits + sizeof(digits) - n, n);
	digits[0] = '.';
	digits[1] = (char)('0' + tenths % 10);
	put(l, digits, 2);
	PUT_LIT(l, "ms");
}

/*
 * One line per decision: queue id, client, identities, results, the
 * reason code of a permerror or temperror (mta/outcome.h), action, time.
 */
static void log_decision(struct job *j, const char *action)
{
	const struct spfkit__mta_input *in = &j->chk.in;
	const char *reason;
	struct line l;

	/* debugLevel 0 and below log no decisions: do not build the line */
	if (spfkit__policyd_debug_level(j->conn->srv) < 1)
		return;
	l.len = 0;
	if (j->chk.cfg->queue_id && j->queue_id[0]) {
		put_esc(&l, j->queue_id, j->queue_id_len, 100);
		PUT_LIT(&l, ": ");
	}
	put_str(&l, j->conn->peer);
	PUT_LIT(&l, ": client=");
	put_str(&l, in->client_ip);
	PUT_LIT(&l, " helo=");
	put_esc(&l, in->helo, in->helo_len, 100);
	PUT_LIT(&l, " from=<");
	put_esc(&l, in->sender, in->sender_len, 100);
	PUT_LIT(&l, "> helo_result=");
	put_str(&l, spfkit__mta_result_of(&in->helo_check));
	PUT_LIT(&l, " mailfrom_result=");
	put_str(&l, spfkit__mta_result_of(&in->mfrom_check));
	reason = spfkit__mta_reason_of(in);
	if (reason != NULL) {
		PUT_LIT(&l, " reason=");
		put_str(&l, reason);
	}
	PUT_LIT(&l, " action=\"");
	put_esc(&l, action, strlen(action), 400);
	PUT_LIT(&l, "\" time=");
	put_ms(&l, us_since(&j->t0));
	spfkit__policyd_log_text(j->conn->srv, LOG_INFO, l.text, l.len);
}

/*
 * Per_User: recipients of different settings get decisions of their own
 * (keys "...|#N"), but a message gets its header fields once. The first
 * decision of an instance that adds them is also kept under
 * "instance|client|sender|h", and every header-adding answer of the
 * instance, whatever its settings, hands out that decision's next one
 * (then "dunno"), as later recipients of one setting always did
 * (spfkit__mta_action_nth). d: the fresh decision, NULL on a cache hit.
 * The answer, in buf when it changed.
 */
static const char *one_header(struct job *j, const struct spfkit__mta_decision *d,
			      const char *action, char *buf, size_t size)
{
	struct spfkit__policyd *srv = j->conn->srv;
	char key[KEY_MAX + 3];
	size_t n = j->base_len;
	struct cached *mark;
	uint64_t h;

	if (j->gen->peruser == NULL || j->cache_key == NULL || strncmp(action, "prepend ", 8) != 0)
		return action;
	memcpy(key, j->cache_key, n);
	memcpy(key + n, "|h", 2);
	n += 2;
	h = spfkit__policyd_cache_hash(srv, key, n);
	mark = spfkit__policyd_cache_find(srv, key, n, h);
	if (mark == NULL) {
		if (d != NULL) /* its first header goes out now: served 1 */
			spfkit__policyd_cache_put(srv, key, n, h, d);
		return action;
	}
	spfkit__policyd_cache_action(mark, mark->served++, buf, size);
	return buf;
}

static void job_finish(struct job *j)
{
	struct conn *c = j->conn;
	struct spfkit__mta_decision d;
	char buf[SPFKIT__MTA_TEXT_MAX];
	const char *action;

	spfkit__mta_decide(j->chk.cfg, &j->chk.in, &d);
	if (j->cache_key != NULL)
		spfkit__policyd_cache_put(c->srv, j->cache_key, j->key_len, j->key_hash, &d);
	action = one_header(j, &d, d.action, buf, sizeof(buf));
	spfkit__policyd_send_reply(c, action);
	log_decision(j, action);
	spfkit__policyd_job_free(j);
	if (!c->in_process)
		spfkit__policyd_conn_process(c);
}

/*
 * The request cannot go on (rc: what the library said while `doing`):
 * answer it now with the daemons' one answer for an unfinished check
 * (mta/unfinished.h), never leave it to the client's timeout, and log
 * why. Nothing is cached: the next recipient gets a fresh try.
 */
static void job_fail(struct job *j, int rc, const char *doing)
{
	struct conn *c = j->conn;
	struct spfkit__mta_decision d;

	spfkit__mta_unfinished(j->chk.cfg, &j->chk, rc, &d);
	spfkit__policyd_send_reply(c, d.action);
	spfkit__policyd_log(c->srv, LOG_ERR, "%s: SPF check not finished: %s while %s; reason=%s "
			    "action=%s", c->peer, spfkit_strerror(rc), doing,
			    spfkit__mta_unfinished_reason(rc), d.action);
	spfkit__policyd_job_free(j);
	if (!c->in_process)
		spfkit__policyd_conn_process(c);
}

/* The shared check's end (mta/checker.h). */
static void on_check_done(struct spfkit__mta_job *chk, int rc, const char *doing)
{
	struct job *j = chk->arg;

	if (rc != 0)
		job_fail(j, rc, doing);
	else
		job_finish(j);
}

/* The attributes a request's answer depends on. */
enum { A_SENDER, A_HELO, A_CLIENT, A_QUEUE_ID, A_INSTANCE, A_RECIPIENT, A_COUNT };

struct picked {
	const char *value[A_COUNT]; /* NULL: not sent */
	size_t len[A_COUNT];
};

static int attr_index(const char *name, size_t len)
{
	switch (len) {
	case 6:
		return memcmp(name, "sender", 6) == 0 ? A_SENDER : -1;
	case 8:
		if (memcmp(name, "queue_id", 8) == 0)
			return A_QUEUE_ID;
		return memcmp(name, "instance", 8) == 0 ? A_INSTANCE : -1;
	case 9:
		if (memcmp(name, "recipient", 9) == 0)
			return A_RECIPIENT; /* Per_User's key (peruser.h) */
		return memcmp(name, "helo_name", 9) == 0 ? A_HELO : -1;
	case 14:
		return memcmp(name, "client_address", 14) == 0 ? A_CLIENT : -1;
	}
	return -1;
}

/* One pass over the request (the reader refused repeated names). */
static void pick(const struct spfkit__policy_request *r, struct picked *p)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < r->count; i++) {
		int k = attr_index(r->attrs[i].name, r->attrs[i].name_len);

		if (k >= 0) {
			p->value[k] = r->attrs[i].value;
			p->len[k] = r->attrs[i].value_len;
		}
	}
}


/* "|#N": the per-user entry whose settings decided; keys of different settings differ. */
#define KEY_USER_MAX 24

static size_t key_size(const struct picked *p)
{
	size_t n = p->len[A_INSTANCE] + 1 + p->len[A_CLIENT] + 1 + p->len[A_SENDER] + KEY_USER_MAX;

	return p->len[A_INSTANCE] == 0 || n > KEY_MAX ? 0 : n + 1;
}

/* Copy value k NUL-terminated at *at (the job's text); its copy. */
static char *put_value(char **at, const struct picked *p, int k)
{
	char *s = *at;

	if (p->len[k] > 0)
		memcpy(s, p->value[k], p->len[k]);
	s[p->len[k]] = '\0';
	*at += p->len[k] + 1;
	return s;
}

static void put_key_part(char **at, const char *s, size_t n, char sep)
{
	if (n > 0) /* s is NULL for an attribute not sent */
		memcpy(*at, s, n);
	(*at)[n] = sep;
	*at += n + 1;
}

/*
 * One allocation per request: the job, then copies of the values it
 * uses, then its cache key (the request's bytes go once it is taken).
 */
static struct job *job_alloc(struct spfkit__policyd *srv, const struct picked *p, size_t user)
{
	size_t size = sizeof(struct job) + key_size(p), k;
	struct spfkit__mta_input *in;
	struct job *j;
	char *at;

	for (k = 0; k < A_COUNT; k++)
		size += p->len[k] + 1;
	j = spfkit__alloc(NULL, size);
	if (j == NULL)
		return NULL;
	memset(j, 0, sizeof(*j));
	in = &j->chk.in;
	at = j->text;
	in->sender = put_value(&at, p, A_SENDER);
	in->sender_len = p->len[A_SENDER];
	/* Postfix does not say whether the mail is SMTPUTF8: the sender tells (decision.h) */
	in->smtputf8 = spfkit__mta_sender_is_utf8(in->sender, in->sender_len);
	in->helo = put_value(&at, p, A_HELO);
	in->helo_len = p->len[A_HELO];
	in->client_ip = put_value(&at, p, A_CLIENT);
	j->queue_id = put_value(&at, p, A_QUEUE_ID);
	j->queue_id_len = p->len[A_QUEUE_ID];
	j->instance = put_value(&at, p, A_INSTANCE);
	if (key_size(p) > 0) {
		j->cache_key = at;
		j->key_len = key_size(p) - 1 - KEY_USER_MAX;
		j->base_len = j->key_len; /* instance|client|sender, without the settings' "|#N" */
		put_key_part(&at, p->value[A_INSTANCE], p->len[A_INSTANCE], '|');
		put_key_part(&at, p->value[A_CLIENT], p->len[A_CLIENT], '|');
		put_key_part(&at, p->value[A_SENDER], p->len[A_SENDER], '\0');
		if (user > 0) /* over the NUL just written; room was counted (at most 22 bytes) */
			j->key_len += (size_t)snprintf(at - 1, KEY_USER_MAX, "|#%zu", user);
		j->key_hash = spfkit__policyd_cache_hash(srv, j->cache_key, j->key_len);
	}
	return j;
}

/* reason: a stable name for the log (mta/unfinished.h), or NULL. */
static void answer_now(struct conn *c, const char *action, int prio, const char *why,
		       const char *reason)
{
	spfkit__policyd_send_reply(c, action);
	if (reason != NULL)
		spfkit__policyd_log(c->srv, prio, "%s: %s; reason=%s action=%s", c->peer, why, reason,
				    action);
	else
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
	struct picked p;
	struct job *j;
	struct cached *hit;
	char action[SPFKIT__MTA_TEXT_MAX];
	const struct spfkit__mta_config *ucfg;
	size_t user = 0;
	char buf[SPFKIT__MTA_TEXT_MAX];
	const char *answer;

	pick(r, &p);
	spfkit__metrics_count(srv->loop.metrics, SPFKIT__METRICS_REQUESTS);
	ucfg = spfkit__policyd_peruser_find(srv->gen->peruser, p.value[A_RECIPIENT],
					    p.len[A_RECIPIENT], &user);
	j = job_alloc(srv, &p, ucfg != NULL ? user : 0);
	if (j == NULL) {
		struct spfkit__mta_decision d;

		spfkit__mta_unfinished(srv->gen->cfg, NULL, SPFKIT_ENOMEM, &d);
		answer_now(c, d.action, LOG_ERR, "out of memory",
			   spfkit__mta_unfinished_reason(SPFKIT_ENOMEM));
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &j->t0);
	j->conn = c;
	j->gen = srv->gen;
	j->gen->refs++;
	j->chk.loop = &srv->loop;
	spfkit__metrics_gauge(srv->loop.metrics, SPFKIT__METRICS_IN_FLIGHT, 1);
	/* a recipient of Per_User's file is checked and answered with its settings */
	j->chk.cfg = ucfg != NULL ? ucfg : j->gen->cfg;
	j->chk.ctx = j->gen->ctx;
	j->chk.done = on_check_done;
	j->chk.arg = j;
	j->chk.lent_timer = c->check_timer;
	j->chk.budget_s = j->gen->budget_s;
	j->chk.in.receiver = srv->receiver;
	c->job = j;
	spfkit__mta_helo_fallback(&j->chk.in); /* the checker's own, done early for the log line */
	if (spfkit_ip_parse(j->chk.in.client_ip, p.len[A_CLIENT], &j->chk.ip) != 0) {
		spfkit__policyd_job_free(j);
		answer_now(c, "dunno", LOG_NOTICE, "no usable client_address", NULL);
		return NULL;
	}
	hit = j->cache_key != NULL
		      ? spfkit__policyd_cache_find(srv, j->cache_key, j->key_len, j->key_hash)
		      : NULL;
	if (hit == NULL)
		return j;
	/* a later recipient of the same message: same decision, no second header */
	spfkit__policyd_cache_action(hit, hit->served++, action, sizeof(action));
	answer = one_header(j, NULL, action, buf, sizeof(buf));
	spfkit__policyd_send_reply(c, answer);
	if (spfkit__policyd_debug_level(srv) >= 2)
		log_decision(j, answer);
	spfkit__policyd_job_free(j);
	return NULL;
}

/* Run the checks of a taken request; may finish at once. */
void spfkit__policyd_request_go(struct job *j)
{
	spfkit__mta_job_start(&j->chk);
}
