/*
 * The worker: ONE thread running a libevent loop with the one resolver
 * (c-ares and its answer cache, or a zone), the one SPF context (its
 * record cache) and every check in flight (mta/checker.c, the flow
 * spfkit-policyd runs). libmilter's connection threads hand it jobs
 * through a mutex-guarded queue and a pipe the loop watches, then wait
 * on their job's condition variable. A slow DNS answer holds up only
 * the job that waits for it: the loop never blocks.
 *
 * A job belongs to its milter thread until queued, to the worker until
 * done; a thread that gives up waiting (budget + grace) marks it
 * abandoned and the worker frees it when it ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include <spfkit/cares.h>
#include <spfkit/event.h>

#include "checker.h"
#include "spfkit_util.h"
#include "milter.h"

struct wjob {
	struct spfkit__mta_job chk; /* chk.arg is the wjob */
	struct spfkit__milter_worker *w;
	struct spfkit__arena arena; /* copies of the query's strings */
	pthread_cond_t cond;
	int done, abandoned, rc;
	struct spfkit__mta_decision d;
	struct wjob *next;          /* the queue */
	struct wjob *rprev, *rnext; /* running on the loop */
};

struct spfkit__milter_worker {
	const struct spfkit__mta_config *cfg;
	char receiver[256];
	int budget_s;
	struct event_base *base;
	struct spfkit_ctx *ctx;
	struct spfkit_event *dnsloop;
	struct spfkit__mta_loop loop;
	struct event *wake_ev;
	int wake[2];
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t idle;       /* n_waiting went to 0 */
	struct wjob *qhead, *qtail; /* handed in, not started */
	struct wjob *running;      /* loop thread only */
	int stopping;
	unsigned n_waiting;        /* milter threads inside spfkit__milter_worker_check() */
};

static void wjob_free(struct wjob *j)
{
	spfkit__mta_job_cleanup(&j->chk);
	pthread_cond_destroy(&j->cond);
	spfkit__arena_free(&j->arena);
	spfkit__free(NULL, j);
}

/* Waits are bounded on the monotonic clock: a clock step must not cut or stretch them. */
static int cond_init(pthread_cond_t *c)
{
	pthread_condattr_t attr;
	int rc;

	if (pthread_condattr_init(&attr) != 0)
		return -1;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
	     pthread_cond_init(c, &attr) == 0 ? 0 : -1;
	pthread_condattr_destroy(&attr);
	return rc;
}

static void deadline_in(struct timespec *t, int seconds)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += seconds;
}

/* ---- the loop's side ------------------------------------------------------ */

/* The job is over (rc set, decision made): hand it back, or free it if nobody waits. */
static void complete(struct wjob *j)
{
	struct spfkit__milter_worker *w = j->w;
	int abandoned;

	spfkit__mta_job_cleanup(&j->chk);
	pthread_mutex_lock(&w->mu);
	abandoned = j->abandoned;
	if (!abandoned) {
		j->done = 1;
		pthread_cond_signal(&j->cond);
	}
	pthread_mutex_unlock(&w->mu);
	if (abandoned)
		wjob_free(j);
}

static void running_unlink(struct wjob *j)
{
	struct spfkit__milter_worker *w = j->w;

	if (j->rprev != NULL)
		j->rprev->rnext = j->rnext;
	else if (w->running == j)
		w->running = j->rnext;
	if (j->rnext != NULL)
		j->rnext->rprev = j->rprev;
	j->rprev = j->rnext = NULL;
}

static void on_check_done(struct spfkit__mta_job *chk, int rc, const char *doing)
{
	struct wjob *j = chk->arg;

	running_unlink(j);
	j->rc = rc;
	if (rc == 0)
		spfkit__mta_decide(j->w->cfg, &chk->in, &j->d);
	else
		spfkit__mta_log_printf(LOG_ERR, "SPF check not finished: %s while %s",
				   spfkit_strerror(rc), doing != NULL ? doing : "checking");
	complete(j);
}

static void start(struct spfkit__milter_worker *w, struct wjob *j)
{
	j->rnext = w->running;
	if (j->rnext != NULL)
		j->rnext->rprev = j;
	w->running = j;
	spfkit__mta_job_start(&j->chk); /* may end at once */
}

/* Stopping: every job still here ends without a result. */
static void fail_all(struct spfkit__milter_worker *w, struct wjob *queued)
{
	while (queued != NULL) {
		struct wjob *j = queued;

		queued = j->next;
		j->rc = SPFKIT_ESTATE;
		complete(j);
	}
	while (w->running != NULL) {
		struct wjob *j = w->running;

		running_unlink(j);
		j->rc = SPFKIT_ESTATE;
		complete(j);
	}
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__milter_worker *w = arg;
	struct wjob *list, *j;
	char buf[256];
	int stopping;

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		continue; /* drained: EAGAIN */
	pthread_mutex_lock(&w->mu);
	list = w->qhead;
	w->qhead = w->qtail = NULL;
	stopping = w->stopping;
	pthread_mutex_unlock(&w->mu);
	if (stopping) {
		fail_all(w, list);
		event_base_loopbreak(w->base);
		return;
	}
	while (list != NULL) {
		j = list;
		list = j->next;
		j->next = NULL;
		start(w, j);
	}
}

static void *thread_main(void *arg)
{
	struct spfkit__milter_worker *w = arg;

	event_base_dispatch(w->base);
	return NULL;
}

/* ---- setup ---------------------------------------------------------------- */

static int make_ctx(struct spfkit__milter_worker *w, const struct spfkit__milter_worker_opts *o)
{
	struct spfkit_config ec;

	spfkit_config_init(&ec);
	ec.receiver = w->receiver;
	ec.limits.void_lookups = (unsigned)w->cfg->void_limit; /* 0: the RFC's 2 */
	/* remembering records for their TTL is what the DNS cache does anyway */
	ec.record_memo = o->cache != NULL;
	return spfkit_ctx_new(&ec, &w->ctx);
}

/* c-ares gets socket events; a zone is pumped (include/spfkit/event.h). */
static int attach_dns(struct spfkit__milter_worker *w, const struct spfkit__milter_worker_opts *o)
{
	if (spfkit_cares_set_watch(o->backend, NULL, NULL) == 0)
		return spfkit_event_attach(w->base, o->backend, o->cache, NULL, &w->dnsloop);
	return spfkit_event_attach_pump(w->base, o->backend, o->cache, NULL, &w->dnsloop);
}

static int make_pipe(struct spfkit__milter_worker *w)
{
	int i;

	if (pipe(w->wake) != 0)
		return -1;
	for (i = 0; i < 2; i++)
		if (fcntl(w->wake[i], F_SETFL, O_NONBLOCK) != 0 ||
		    fcntl(w->wake[i], F_SETFD, FD_CLOEXEC) != 0)
			return -1;
	return 0;
}

/*
 * libmilter catches SIGHUP, SIGTERM and SIGINT with sigwait() in a
 * thread of its own, after blocking them in the thread that calls
 * smfi_main(); a thread started earlier must block them too, or the
 * kernel may hand it a SIGTERM whose default action ends the process
 * without the orderly stop.
 */
static int start_thread(struct spfkit__milter_worker *w)
{
	sigset_t block, old;
	int rc;

	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGPIPE);
	if (pthread_sigmask(SIG_BLOCK, &block, &old) != 0)
		return -1;
	rc = pthread_create(&w->thread, NULL, thread_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : -1;
}

static int setup(struct spfkit__milter_worker *w, const struct spfkit__milter_worker_opts *o)
{
	w->base = event_base_new();
	if (w->base == NULL || make_pipe(w) != 0 || make_ctx(w, o) != 0 || attach_dns(w, o) != 0)
		return SPFKIT_ENOMEM;
	w->wake_ev = event_new(w->base, w->wake[0], EV_READ | EV_PERSIST, on_wake, w);
	if (w->wake_ev == NULL || event_add(w->wake_ev, NULL) != 0)
		return SPFKIT_ENOMEM;
	w->loop.base = w->base;
	w->loop.resolver = o->cache != NULL ? o->cache : o->backend;
	w->loop.dnsloop = w->dnsloop;
	if (start_thread(w) != 0)
		return SPFKIT_ENOMEM;
	w->started = 1;
	return 0;
}

int spfkit__milter_worker_new(const struct spfkit__milter_worker_opts *o,
			      struct spfkit__milter_worker **out)
{
	struct spfkit__milter_worker *w;
	int rc;

	if (o == NULL || o->cfg == NULL || o->backend == NULL || out == NULL)
		return SPFKIT_EINVAL;
	w = spfkit__zalloc(NULL, sizeof(*w));
	if (w == NULL)
		return SPFKIT_ENOMEM;
	w->cfg = o->cfg;
	w->budget_s = o->budget_s > 0 ? o->budget_s : SPFKIT_MILTER_BUDGET_S;
	w->wake[0] = w->wake[1] = -1;
	snprintf(w->receiver, sizeof(w->receiver), "%s", o->receiver != NULL ? o->receiver : "unknown");
	if (pthread_mutex_init(&w->mu, NULL) != 0 || cond_init(&w->idle) != 0) {
		spfkit__free(NULL, w);
		return SPFKIT_ENOMEM;
	}
	rc = setup(w, o);
	if (rc != 0) {
		spfkit__milter_worker_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void spfkit__milter_worker_free(struct spfkit__milter_worker *w)
{
	struct timespec until;

	if (w == NULL)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stopping = 1;
		pthread_mutex_unlock(&w->mu);
		if (write(w->wake[1], "s", 1) < 0 && errno != EAGAIN)
			spfkit__mta_log_printf(LOG_ERR, "cannot wake the worker: %s", strerror(errno));
		pthread_join(w->thread, NULL);
	}
	/* milter threads still waking up read their job; let them leave first */
	deadline_in(&until, 5);
	pthread_mutex_lock(&w->mu);
	while (w->n_waiting > 0 && pthread_cond_timedwait(&w->idle, &w->mu, &until) == 0)
		continue;
	pthread_mutex_unlock(&w->mu);
	if (w->wake_ev != NULL)
		event_free(w->wake_ev);
	spfkit_event_detach(w->dnsloop);
	spfkit_ctx_free(w->ctx);
	if (w->base != NULL)
		event_base_free(w->base);
	if (w->wake[0] >= 0)
		close(w->wake[0]);
	if (w->wake[1] >= 0)
		close(w->wake[1]);
	pthread_cond_destroy(&w->idle);
	pthread_mutex_destroy(&w->mu);
	spfkit__free(NULL, w);
}

/* ---- the milter threads' side --------------------------------------------- */

static struct wjob *wjob_new(struct spfkit__milter_worker *w, const struct spfkit__milter_query *q)
{
	struct wjob *j = spfkit__zalloc(NULL, sizeof(*j));
	struct spfkit__mta_input *in;

	if (j == NULL)
		return NULL;
	spfkit__arena_init(&j->arena, NULL, 1024, 0);
	if (cond_init(&j->cond) != 0) {
		spfkit__arena_free(&j->arena);
		spfkit__free(NULL, j);
		return NULL;
	}
	j->w = w;
	j->chk.loop = &w->loop;
	j->chk.cfg = w->cfg;
	j->chk.ctx = w->ctx;
	j->chk.ip = q->ip;
	j->chk.budget_s = w->budget_s;
	j->chk.done = on_check_done;
	j->chk.arg = j;
	in = &j->chk.in;
	in->sender = spfkit__arena_strndup(&j->arena, q->sender, q->sender_len);
	in->sender_len = q->sender_len;
	in->helo = spfkit__arena_strndup(&j->arena, q->helo, q->helo_len);
	in->helo_len = q->helo_len;
	in->client_ip = spfkit__arena_strndup(&j->arena, q->client_ip, strlen(q->client_ip));
	in->receiver = w->receiver;
	if (in->sender == NULL || in->helo == NULL || in->client_ip == NULL) {
		wjob_free(j);
		return NULL;
	}
	return j;
}

/* Queue the job and wake the loop; SPFKIT_ESTATE when stopping. */
static int hand_over(struct spfkit__milter_worker *w, struct wjob *j)
{
	pthread_mutex_lock(&w->mu);
	if (w->stopping) {
		pthread_mutex_unlock(&w->mu);
		return SPFKIT_ESTATE;
	}
	if (w->qtail != NULL)
		w->qtail->next = j;
	else
		w->qhead = j;
	w->qtail = j;
	w->n_waiting++;
	pthread_mutex_unlock(&w->mu);
	/* a full pipe already holds a wake-up: EAGAIN is fine */
	if (write(w->wake[1], "j", 1) < 0 && errno != EAGAIN)
		spfkit__mta_log_printf(LOG_ERR, "cannot wake the worker: %s", strerror(errno));
	return 0;
}

int spfkit__milter_worker_check(struct spfkit__milter_worker *w,
				const struct spfkit__milter_query *q,
				struct spfkit__mta_decision *out)
{
	struct wjob *j;
	struct timespec until;
	int rc, done;

	if (w == NULL)
		return SPFKIT_ESTATE; /* stopped: libmilter does not wait for its threads */
	j = wjob_new(w, q);
	if (j == NULL)
		return SPFKIT_ENOMEM;
	rc = hand_over(w, j);
	if (rc != 0) {
		wjob_free(j);
		return rc;
	}
	deadline_in(&until, w->budget_s + SPFKIT_MILTER_GRACE_S);
	pthread_mutex_lock(&w->mu);
	while (!j->done && pthread_cond_timedwait(&j->cond, &w->mu, &until) != ETIMEDOUT)
		continue;
	done = j->done;
	if (done) {
		*out = j->d;
		rc = j->rc;
	} else {
		j->abandoned = 1; /* the worker frees it */
		rc = SPFKIT_ESTATE;
	}
	if (--w->n_waiting == 0)
		pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->mu);
	if (done)
		wjob_free(j);
	return rc;
}
