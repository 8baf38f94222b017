/*
 * The three daemons give the same answer when the SPF check does not
 * finish normally (issue 28): one table of scenarios (the sender's DNS
 * silent past Lookup_Time, a SERVFAIL-like TEMPFAIL, the library out of
 * memory) run against spfkit-policyd, spfkit-milter and
 * spfkit-smtpd-filter, each driven in this process over its own protocol
 * on one libevent loop, each answer reduced to what the SMTP client is
 * told: accepted, or deferred / rejected with an enhanced code and a text.
 * The rule they must agree on is mta/unfinished.h's.
 *
 * The daemons' headers are included by path: each names its own
 * "proto.h", found beside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include <spfkit/zone.h>

#include "../../milter/milter.h"
#include "../../policyd/server.h"
#include "../../smtpd/filter.h"
#include "log.h"
#include "unfinished.h"

/*
 * The temperror's reason when DNS stays silent past Lookup_Time: the
 * checker answers the open question "Lookup_Time exceeded", a text of
 * its own (the replies and headers say it), which the library counts as
 * the catch-all dns-error.
 */
#define SILENT_REASON "dns-error"

/* ---- the world: DNS and memory ------------------------------------------ */

static const char zone[] =
	"mx.pass.test.  300 IN TXT \"v=spf1 a -all\"\n"
	"mx.pass.test.  300 IN A 192.0.2.10\n"
	"pass.test.     300 IN TXT \"v=spf1 ip4:192.0.2.0/24 -all\"\n";

/* Questions for names under this get no answer, ever (DNS silent). */
#define SILENT ".silent.test"

enum fault { F_NONE, F_SILENT, F_SERVFAIL, F_ENOMEM };

/* The zone behind a resolver that never answers for SILENT names. */
struct scripted {
	struct spfkit_resolver *zone;
};

static int s_submit(void *impl, const char *name, size_t len, uint16_t type, spfkit_dns_cb *cb,
		    void *arg, uint64_t *handle)
{
	struct scripted *s = impl;
	size_t sl = sizeof(SILENT) - 1;

	if ((len > sl && memcmp(name + len - sl, SILENT, sl) == 0) ||
	    (len == sl - 1 && memcmp(name, SILENT + 1, sl - 1) == 0)) {
		*handle = 1u << 30; /* held forever; cancel is a no-op */
		return 0;
	}
	return spfkit_resolver_submit(s->zone, name, len, type, cb, arg, handle);
}

static void s_cancel(void *impl, uint64_t handle)
{
	struct scripted *s = impl;

	if (handle != 1u << 30)
		spfkit_resolver_cancel(s->zone, handle);
}

static int s_wait(void *impl, int timeout_ms)
{
	struct scripted *s = impl;

	return spfkit_resolver_wait(s->zone, timeout_ms);
}

static void s_destroy(void *impl)
{
	(void)impl;
}

static const struct spfkit_resolver_ops scripted_ops = {s_submit, s_cancel, s_wait, s_destroy};

/* An allocator that fails everything once armed (the SPF context's). */
struct failing {
	int armed;
	long refused;
};

static void *f_alloc(void *user, size_t n)
{
	struct failing *f = user;

	if (f->armed) {
		f->refused++;
		return NULL;
	}
	return malloc(n);
}

static void *f_realloc(void *user, void *old, size_t n)
{
	struct failing *f = user;

	if (f->armed) {
		f->refused++;
		return NULL;
	}
	return realloc(old, n);
}

static void f_free(void *user, void *p)
{
	(void)user;
	free(p);
}

/* ---- a scenario ------------------------------------------------------------ */

struct scenario {
	const char *name;
	enum fault fault;
	const char *sender; /* MAIL FROM */
	int temperror_defer;
	enum spfkit__mta_reject helo_reject, mail_from_reject;
	int test_only;
	/* what the client is told: 'a' accepted, 'd' deferred (451), 'r' rejected (550) */
	char want;
	const char *want_xcode; /* for 'd' and 'r' */
	const char *want_text;  /* the start of the reply text, NULL: any, but the same in all */
	/* what the daemon's log line says why (mta/outcome.h, mta/unfinished.h): "reason=NAME" */
	const char *want_reason;
};

/* What one daemon told the client. */
struct answer {
	char kind; /* 'a', 'd', 'r'; 0: nothing in time */
	char xcode[16];
	char text[1200];
};

struct world {
	struct event_base *base;
	struct spfkit_zone *z;
	struct spfkit_resolver *zone_r;
	struct scripted sc;
	struct spfkit_resolver r;
	struct failing fail;
	struct spfkit_allocator alloc;
	int client;        /* our end */
	char in[70000];    /* what the daemon wrote to us */
	size_t in_len;
	int (*complete)(const struct world *w); /* the answer is in */
	struct event *reader;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->base = event_base_new();
	assert_non_null(w->base);
	assert_int_equal(spfkit_zone_new(NULL, &w->z), 0);
	assert_int_equal(spfkit_zone_load_text(w->z, zone, strlen(zone), "zone", NULL, NULL, 0), 0);
	assert_int_equal(spfkit_zone_add_timeout(w->z, "servfail.test", strlen("servfail.test")), 0);
	assert_int_equal(spfkit_zone_resolver(w->z, &w->zone_r), 0);
	w->sc.zone = w->zone_r;
	w->r.ops = &scripted_ops;
	w->r.impl = &w->sc;
	w->alloc = (struct spfkit_allocator){f_alloc, f_realloc, f_free, &w->fail};
	w->client = -1;
}

static void world_free(struct world *w)
{
	if (w->reader != NULL)
		event_free(w->reader);
	if (w->client >= 0)
		close(w->client);
	spfkit_resolver_free(w->zone_r);
	spfkit_zone_free(w->z);
	event_base_free(w->base);
}

static struct spfkit__mta_config *config_for(const struct scenario *sc)
{
	struct spfkit__mta_config *cfg;

	assert_int_equal(spfkit__mta_config_defaults(NULL, &cfg), 0);
	cfg->debug_level = 1; /* the decision's line too: it carries the reason code */
	cfg->temperror_defer = sc->temperror_defer;
	cfg->temperror_action = SPFKIT_MTA_DEFER_451;
	cfg->helo_reject = sc->helo_reject;
	cfg->mail_from_reject = sc->mail_from_reject;
	cfg->test_only = sc->test_only;
	cfg->lookup_time = 1; /* the silent DNS's wait */
	return cfg;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct world *w = arg;
	ssize_t n;

	(void)what;
	n = read(fd, w->in + w->in_len, sizeof(w->in) - 1 - w->in_len);
	if (n > 0) {
		w->in_len += (size_t)n;
		w->in[w->in_len] = '\0';
	}
	if (n <= 0 || w->complete(w))
		event_base_loopbreak(w->base);
}

static void on_too_long(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Arm the allocator if the scenario says so, and run until the answer is in (or 10 s). */
static void run_until_answer(struct world *w, const struct scenario *sc)
{
	struct timeval limit = {10, 0};
	struct event *stop = evtimer_new(w->base, on_too_long, w->base);

	assert_non_null(stop);
	assert_int_equal(fcntl(w->client, F_SETFL, O_NONBLOCK), 0);
	w->reader = event_new(w->base, w->client, EV_READ | EV_PERSIST, on_readable, w);
	assert_non_null(w->reader);
	event_add(w->reader, NULL);
	evtimer_add(stop, &limit);
	w->fail.armed = sc->fault == F_ENOMEM;
	event_base_dispatch(w->base);
	w->fail.armed = 0;
	event_free(stop);
	if (sc->fault == F_ENOMEM)
		assert_true(w->fail.refused > 0);
}

static void write_all(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

/* "451 4.3.0 text" -> kind, xcode, text (enhanced code optional). */
static void parse_smtp(const char *s, struct answer *a)
{
	const char *x;
	size_t n;

	a->kind = strncmp(s, "550", 3) == 0 ? 'r' : strncmp(s, "451", 3) == 0 ? 'd' : '?';
	s += 3;
	while (*s == ' ')
		s++;
	x = s;
	n = strcspn(x, " ");
	if (n > 0 && n < sizeof(a->xcode) && x[0] >= '2' && x[0] <= '5' && x[1] == '.') {
		memcpy(a->xcode, x, n);
		a->xcode[n] = '\0';
		s = x + n;
		while (*s == ' ')
			s++;
	}
	snprintf(a->text, sizeof(a->text), "%.*s", (int)strcspn(s, "\r\n"), s);
}

/* ---- spfkit-policyd: a policy request, an action= line ---------------------- */

static int policyd_complete(const struct world *w)
{
	return strstr(w->in, "\n\n") != NULL;
}

static void ask_policyd(const struct scenario *sc, struct answer *a)
{
	struct world w;
	struct spfkit__policyd_opts opts;
	struct spfkit__policyd *srv;
	char req[512];
	const char *act;
	int sv[2];

	world_init(&w);
	memset(&opts, 0, sizeof(opts));
	opts.log_stderr = 1;
	opts.receiver = "mx.receiver.test";
	opts.alloc = &w.alloc;
	assert_int_equal(spfkit__policyd_new(w.base, &opts, config_for(sc), &w.r, NULL, &srv), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(spfkit__policyd_serve_stdio(srv, sv[0], sv[0]), 0);
	w.client = sv[1];
	w.complete = policyd_complete;
	snprintf(req, sizeof(req), "request=smtpd_access_policy\nprotocol_state=RCPT\n"
		 "helo_name=mx.pass.test\nsender=%s\nrecipient=bob@receiver.test\n"
		 "client_address=192.0.2.10\nqueue_id=Q1\ninstance=1\n\n", sc->sender);
	write_all(w.client, req, strlen(req));
	run_until_answer(&w, sc);
	spfkit__policyd_free(srv);
	close(sv[0]);
	act = strstr(w.in, "action=");
	if (act != NULL && policyd_complete(&w)) {
		act += 7;
		if (strncmp(act, "dunno", 5) == 0 || strncmp(act, "prepend ", 8) == 0)
			a->kind = 'a';
		else
			parse_smtp(act, a); /* TempError_Action = 451: no defer_if_permit */
	}
	world_free(&w);
}

/* ---- spfkit-milter: the milter protocol, to the reply to MAIL FROM ----------- */

static void milter_packet(int fd, char cmd, const void *data, size_t len)
{
	unsigned char head[5];

	spfkit__milter_put_head(head, cmd, len);
	write_all(fd, head, 5);
	if (len > 0)
		write_all(fd, data, len);
}

/* The packets the daemon wrote, in order; the n-th's command and data. */
static int milter_reply(const struct world *w, size_t nth, char *cmd, const char **data,
			size_t *len)
{
	size_t at = 0, i = 0;

	while (at + 5 <= w->in_len) {
		uint32_t size = spfkit__milter_get32((const unsigned char *)w->in + at);

		if (size == 0 || at + 4 + size > w->in_len)
			return 0;
		if (i++ == nth) {
			*cmd = w->in[at + 4];
			*data = w->in + at + 5;
			*len = size - 1;
			return 1;
		}
		at += 4 + size;
	}
	return 0;
}

/* Replies to O, C, H, then M's. */
static int milter_complete(const struct world *w)
{
	char cmd;
	const char *d;
	size_t n;

	return milter_reply(w, 3, &cmd, &d, &n);
}

static void ask_milter(const struct scenario *sc, struct answer *a)
{
	struct world w;
	struct spfkit__milter_server_opts o;
	struct spfkit__milter_server *srv;
	struct spfkit__mta_config *cfg = config_for(sc);
	struct sockaddr_un sun;
	char dir[] = "/tmp/spfkit-unfinished-XXXXXX", cmd;
	unsigned char neg[12];
	static const unsigned char conn[] = "client.example\0" "4\x9c\x40" "192.0.2.10";
	char mail[300];
	const char *d;
	size_t n;
	int lfd;

	world_init(&w);
	memset(&o, 0, sizeof(o));
	o.receiver = "mx.receiver.test";
	o.alloc = &w.alloc;
	assert_int_equal(spfkit__milter_server_new(w.base, &o, cfg, &w.r, NULL, &srv), 0);
	assert_non_null(mkdtemp(dir));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/m", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(spfkit__milter_server_listen_fd(srv, lfd), 0);
	w.client = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(w.client, (struct sockaddr *)&sun, sizeof(sun)), 0);
	w.complete = milter_complete;
	spfkit__milter_put32(neg, SPFKIT_MILTER_VERSION);
	spfkit__milter_put32(neg + 4, SPFKIT_MILTER_F_ADDHDRS | SPFKIT_MILTER_F_CHGHDRS);
	spfkit__milter_put32(neg + 8, 0);
	milter_packet(w.client, SPFKIT_MILTER_C_OPTNEG, neg, sizeof(neg));
	milter_packet(w.client, SPFKIT_MILTER_C_CONNECT, conn, sizeof(conn));
	milter_packet(w.client, SPFKIT_MILTER_C_HELO, "mx.pass.test", sizeof("mx.pass.test"));
	n = (size_t)snprintf(mail, sizeof(mail), "<%s>", sc->sender) + 1;
	milter_packet(w.client, SPFKIT_MILTER_C_MAIL, mail, n);
	run_until_answer(&w, sc);
	spfkit__milter_server_free(srv);
	unlink(sun.sun_path);
	rmdir(dir);
	if (milter_reply(&w, 3, &cmd, &d, &n)) {
		if (cmd == SPFKIT_MILTER_R_CONTINUE)
			a->kind = 'a';
		else if (cmd == SPFKIT_MILTER_R_REPLYCODE)
			parse_smtp(d, a);
	}
	spfkit__mta_config_free(cfg);
	world_free(&w);
}

/* ---- spfkit-smtpd-filter: smtpd-filters(7) lines ------------------------------ */

#define SID "0000000000000a01"
#define TOK "0000000000000001"

static int smtpd_complete(const struct world *w)
{
	const char *r = strstr(w->in, "filter-result|");

	return r != NULL && strchr(r, '\n') != NULL;
}

static void ask_smtpd(const struct scenario *sc, struct answer *a)
{
	static const char head[] =
		"config|smtpd-version|6.8.0p2\nconfig|smtp-session-timeout|300\n"
		"config|subsystem|smtp-in\nconfig|ready\n"
		"report|0.6|1576146008.006099|smtp-in|link-connect|" SID "|rdns.example|pass|"
		"192.0.2.10:40000|127.0.0.1:25\n"
		"report|0.6|1576146008.006099|smtp-in|link-identify|" SID "|EHLO|mx.pass.test\n";
	struct world w;
	struct spfkit__smtpd_opts opts;
	struct spfkit__smtpd *f;
	char mail[400];
	const char *r, *want = "filter-result|" SID "|" TOK "|";
	int in[2], out[2];

	world_init(&w);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, in), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, out), 0);
	memset(&opts, 0, sizeof(opts));
	opts.receiver = "mx.receiver.test";
	opts.log_stderr = 1;
	opts.in_fd = in[0];
	opts.out_fd = out[0];
	opts.alloc = &w.alloc;
	assert_int_equal(spfkit__smtpd_new(w.base, &opts, config_for(sc), &w.r, NULL, &f), 0);
	w.client = out[1];
	w.complete = smtpd_complete;
	write_all(in[1], head, strlen(head));
	snprintf(mail, sizeof(mail),
		 "filter|0.6|1576146008.006099|smtp-in|mail-from|" SID "|" TOK "|<%s>\n", sc->sender);
	write_all(in[1], mail, strlen(mail));
	run_until_answer(&w, sc);
	spfkit__smtpd_free(f);
	close(in[0]);
	close(in[1]);
	close(out[0]);
	r = strstr(w.in, want);
	if (r != NULL && smtpd_complete(&w)) {
		r += strlen(want);
		if (strncmp(r, "proceed", 7) == 0)
			a->kind = 'a';
		else if (strncmp(r, "reject|", 7) == 0)
			parse_smtp(r + 7, a);
	}
	world_free(&w);
}

/* ---- the table --------------------------------------------------------------- */

#define FAIL_ SPFKIT_MTA_REJECT_FAIL
#define NOT_PASS SPFKIT_MTA_REJECT_NOT_PASS
#define FALSE_ SPFKIT_MTA_REJECT_FALSE

static const struct scenario table[] = {
	/* DNS: the check finishes with temperror, which TempError_Defer answers (RFC 7208 §8.6) */
	{"dns silent past Lookup_Time, TempError_Defer", F_SILENT, "a@x.silent.test", 1, NOT_PASS,
	 FAIL_, 1, 'd', "4.7.24", NULL, SILENT_REASON},
	{"dns silent past Lookup_Time, no TempError_Defer", F_SILENT, "a@x.silent.test", 0,
	 NOT_PASS, FAIL_, 1, 'a', NULL, NULL, SILENT_REASON},
	{"SERVFAIL, TempError_Defer", F_SERVFAIL, "a@servfail.test", 1, NOT_PASS, FAIL_, 1, 'd',
	 "4.7.24", NULL, "dns-timeout"},
	{"SERVFAIL, no TempError_Defer", F_SERVFAIL, "a@servfail.test", 0, NOT_PASS, FAIL_, 1, 'a',
	 NULL, NULL, "dns-timeout"},
	/* out of memory: a temperror of ours (mta/unfinished.h) */
	{"out of memory, TempError_Defer", F_ENOMEM, "a@pass.test", 1, NOT_PASS, FAIL_, 1, 'd',
	 "4.3.0", SPFKIT__MTA_LOCAL_PROBLEM, "out-of-memory"},
	{"out of memory, no TempError_Defer", F_ENOMEM, "a@pass.test", 0, NOT_PASS, FAIL_, 1, 'a',
	 NULL, NULL, "out-of-memory"},
	{"out of memory, TestOnly = 0", F_ENOMEM, "a@pass.test", 1, NOT_PASS, FAIL_, 0, 'a', NULL,
	 NULL, "out-of-memory"},
	/* HELO never refuses, but MAIL FROM, not yet checked, could have deferred */
	{"out of memory, HELO_reject = False", F_ENOMEM, "a@pass.test", 1, FALSE_, FAIL_, 1, 'd',
	 "4.3.0", SPFKIT__MTA_LOCAL_PROBLEM, "out-of-memory"},
	/* nothing could ever be refused: deferring would only delay genuine mail */
	{"out of memory, both policies False", F_ENOMEM, "a@pass.test", 1, FALSE_, FALSE_, 1, 'a',
	 NULL, NULL, "out-of-memory"},
	{"out of memory, null sender, HELO_reject = False", F_ENOMEM, "", 1, FALSE_, FAIL_, 1, 'a',
	 NULL, NULL, "out-of-memory"},
};

typedef void ask_fn(const struct scenario *sc, struct answer *a);

static const struct {
	const char *name;
	ask_fn *ask;
} daemons[] = {
	{"spfkit-policyd", ask_policyd},
	{"spfkit-milter", ask_milter},
	{"spfkit-smtpd-filter", ask_smtpd},
};

#define N_DAEMONS (sizeof(daemons) / sizeof(daemons[0]))

static int check_one(const struct scenario *sc, const char *daemon, const struct answer *a,
		     const struct answer *first)
{
	int ok = a->kind == sc->want;

	if (ok && sc->want != 'a') {
		ok = strcmp(a->xcode, sc->want_xcode) == 0 &&
		     (sc->want_text == NULL || strncmp(a->text, sc->want_text, strlen(sc->want_text)) == 0) &&
		     (first == NULL || strcmp(a->text, first->text) == 0);
	}
	if (!ok)
		print_error("%s: %s answered %c %s \"%s\"; want %c %s \"%s\"%s\n", sc->name, daemon,
			    a->kind != 0 ? a->kind : '-', a->xcode, a->text, sc->want,
			    sc->want_xcode != NULL ? sc->want_xcode : "",
			    sc->want_text != NULL ? sc->want_text : "...",
			    first != NULL ? " (as the first daemon)" : "");
	return ok;
}

/* The daemon's log lines (stderr, mta/log.h) while it answers: they must say why, as a code. */
static int ask_and_read_log(ask_fn *ask, const struct scenario *sc, struct answer *a,
			    const char *daemon)
{
	static char log[65536];
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t n;
	char want[64];

	assert_non_null(f);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fileno(f), 2), 2);
	ask(sc, a);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	rewind(f);
	n = fread(log, 1, sizeof(log) - 1, f);
	log[n] = '\0';
	fclose(f);
	if (getenv("UNFINISHED_LOG") != NULL)
		print_message("%s", log);
	snprintf(want, sizeof(want), "reason=%s ", sc->want_reason);
	if (strstr(log, want) != NULL)
		return 1;
	print_error("%s: %s logged no \"%s\":\n%s\n", sc->name, daemon, want, log);
	return 0;
}

static void test_same_answer_everywhere(void **state)
{
	size_t i, k;
	int bad = 0;

	(void)state;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct answer got[N_DAEMONS];

		for (k = 0; k < N_DAEMONS; k++) {
			memset(&got[k], 0, sizeof(got[k]));
			bad += !ask_and_read_log(daemons[k].ask, &table[i], &got[k], daemons[k].name);
			bad += !check_one(&table[i], daemons[k].name, &got[k], k > 0 ? &got[0] : NULL);
		}
		print_message("  %-50s %c %s\n", table[i].name, got[0].kind, got[0].xcode);
	}
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_answer_everywhere),
	};

	/* every daemon's lines on stderr, one write each, as --log stderr */
	spfkit__mta_log_open("test", 1, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
