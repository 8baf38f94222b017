/*
 * spfkit-policyd's requests when the SPF library runs out of memory: the
 * service (policyd/server.c, conn.c, request.c) driven over a socketpair in spawn
 * form, its evaluations' allocator failing at the n-th allocation, for
 * every n until a request needs no more. Each request must be answered
 * at once (never left to the client's timeout), with the right answer or
 * the configured reaction to trouble; nothing may crash or leak.
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
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include <spfkit/zone.h>

#include "internal.h"

/* Counts allocations from the time it is armed; `fail_at` > 0 makes that
 * one (from 1) fail, and every later one too when `sticky`. */
struct counting {
	long n, fail_at, refused;
	long live;
	int armed, sticky;
};

static int refuse(struct counting *c)
{
	if (!c->armed || c->fail_at <= 0)
		return 0;
	c->n++;
	if (c->n == c->fail_at || (c->sticky && c->n > c->fail_at)) {
		c->refused++;
		return 1;
	}
	return 0;
}

static void *t_alloc(void *user, size_t n)
{
	struct counting *c = user;
	void *p = refuse(c) ? NULL : malloc(n);

	if (p != NULL)
		c->live++;
	return p;
}

static void *t_realloc(void *user, void *old, size_t n)
{
	if (old == NULL)
		return t_alloc(user, n);
	return refuse(user) ? NULL : realloc(old, n);
}

static void t_free(void *user, void *p)
{
	struct counting *c = user;

	if (p != NULL)
		c->live--;
	free(p);
}

/*
 * big.example's second TXT record is 8,160 bytes of junk: copying that
 * answer takes more than an evaluation's arena has at hand, so
 * spfkit_eval_answer() itself meets the failure, not only
 * spfkit_eval_new() and spfkit_eval_step().
 */
#define JUNK_STRINGS 32

static char zone_buf[16384];

static const char *zone_text(void)
{
	static const char head[] =
		"example.com.     300 IN TXT \"v=spf1 ip4:192.0.2.0/24 -all\"\n"
		"mx.example.com.  300 IN TXT \"v=spf1 a -all\"\n"
		"mx.example.com.  300 IN A 192.0.2.10\n"
		"big.example.     300 IN TXT \"v=spf1 include:example.com -all\"\n"
		"big.example.     300 IN TXT";
	size_t i, len = sizeof(head) - 1;
	char *z = zone_buf;

	assert_true(len + JUNK_STRINGS * 258 + 2 <= sizeof(zone_buf));
	memcpy(z, head, len);
	for (i = 0; i < JUNK_STRINGS; i++) {
		z[len++] = ' ';
		z[len++] = '"';
		memset(z + len, 'x', 255);
		len += 255;
		z[len++] = '"';
	}
	z[len++] = '\n';
	z[len] = '\0';
	return z;
}

#define REQUEST_FROM(helo, sender, ip)                                                     \
	"request=smtpd_access_policy\nprotocol_state=RCPT\nhelo_name=" helo "\nsender=" sender \
	"\nrecipient=bob@receiver.test\nclient_address=" ip "\nqueue_id=Q1\ninstance=\n\n"
#define REQUEST(sender) REQUEST_FROM("mx.example.com", sender, "192.0.2.10")

#define DEFER_ACTION "action=defer_if_permit 4.3.0 Temporary local problem checking SPF"

struct run {
	char reply[4096];
	size_t len;
	int hung;      /* the loop had to be stopped: no answer in time */
	long refused;  /* allocations refused during the request */
	long live;     /* blocks of the counting allocator left at the end */
};

static void on_stuck(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(int *)arg = 1;
}

/*
 * One request to a fresh service (an empty record cache each time), its
 * allocator armed as `count` says; the loop ends when the spawn-mode
 * client is gone or after 2 s (then the request hung).
 */
static void run_one(const char *zone, int temperror_defer, struct counting *count,
		    const char *request, struct run *out)
{
	struct spfkit_allocator alloc = {t_alloc, t_realloc, t_free, count};
	struct spfkit__policyd_opts opts;
	struct spfkit__mta_config *cfg;
	struct spfkit__policyd *srv;
	struct spfkit_resolver *r;
	struct spfkit_zone *z;
	struct event_base *base = event_base_new();
	struct event *stuck;
	struct timeval limit = {2, 0};
	int sv[2];
	ssize_t n;

	memset(out, 0, sizeof(*out));
	assert_non_null(base);
	stuck = evtimer_new(base, on_stuck, &out->hung);
	assert_non_null(stuck);
	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	assert_int_equal(spfkit_zone_load_text(z, zone, strlen(zone), "zone", NULL, NULL, 0), 0);
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	assert_int_equal(spfkit__mta_config_defaults(NULL, &cfg), 0);
	cfg->debug_level = getenv("H7_LOG") != NULL ? 0 : -1; /* many runs: no log */
	cfg->temperror_defer = temperror_defer;
	memset(&opts, 0, sizeof(opts));
	opts.log_stderr = 1;
	opts.receiver = "mx.receiver.test";
	opts.alloc = &alloc;
	assert_int_equal(spfkit__policyd_new(base, &opts, cfg, r, NULL, &srv), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(spfkit__policyd_serve_stdio(srv, sv[0], sv[0]), 0);
	assert_int_equal(write(sv[1], request, strlen(request)), (ssize_t)strlen(request));
	assert_int_equal(shutdown(sv[1], SHUT_WR), 0);

	count->n = count->refused = 0;
	count->armed = 1;
	evtimer_add(stuck, &limit);
	event_base_dispatch(base);
	count->armed = 0;
	out->refused = count->refused;

	spfkit__policyd_free(srv);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	while (out->len < sizeof(out->reply) - 1 &&
	       (n = read(sv[1], out->reply + out->len, sizeof(out->reply) - 1 - out->len)) > 0)
		out->len += (size_t)n;
	out->reply[out->len] = '\0';
	close(sv[0]);
	close(sv[1]);
	event_free(stuck);
	spfkit_resolver_free(r);
	spfkit_zone_free(z);
	event_base_free(base);
	out->live = count->live;
}

/* One complete reply: "action=...\n\n" and nothing after it. */
static int one_reply(const struct run *run)
{
	const char *end = strstr(run->reply, "\n\n");

	return end != NULL && (size_t)(end + 2 - run->reply) == run->len &&
	       strncmp(run->reply, "action=", 7) == 0;
}

/*
 * Fail the n-th allocation (and, when sticky, all after it) for
 * n = 1, 2, ... until a request gets through without a refusal. Returns
 * how many runs ended in the trouble reaction `trouble`.
 */
static int sweep(const char *request, const char *want, int temperror_defer, int sticky,
		 const char *trouble)
{
	const char *zone = zone_text();
	struct counting count;
	struct run run;
	int troubled = 0;
	long n;

	for (n = 1; n < 2000; n++) {
		memset(&count, 0, sizeof(count));
		count.fail_at = n;
		count.sticky = sticky;
		run_one(zone, temperror_defer, &count, request, &run);
		if (run.hung || !one_reply(&run) || run.live != 0)
			fail_msg("allocation %ld failing%s: %s, live blocks %ld, reply \"%s\"", n,
				 sticky ? " and all after it" : "",
				 run.hung ? "no answer within 2 s" : "not one reply", run.live, run.reply);
		if (strstr(run.reply, trouble) != NULL)
			troubled++;
		else if (strstr(run.reply, want) == NULL)
			fail_msg("allocation %ld failing: reply \"%s\", want \"%s\" or \"%s\"", n,
				 run.reply, want, trouble);
		if (run.refused == 0)
			break; /* the request needs fewer than n allocations: all were tried */
	}
	print_message("  %ld allocations tried, %d answered \"%s\"\n", n - 1, troubled, trouble);
	assert_true(n > 2 && n < 2000);
	return troubled;
}

static void test_no_failure_answers(void **state)
{
	const char *zone = zone_text();
	struct counting count;
	struct run run;

	(void)state;
	memset(&count, 0, sizeof(count));
	run_one(zone, 1, &count, REQUEST("alice@big.example"), &run);
	assert_false(run.hung);
	assert_true(one_reply(&run));
	assert_non_null(strstr(run.reply, "action=prepend Received-SPF: pass"));
	assert_int_equal(run.live, 0);
}

/* TempError_Defer = True: out of memory defers, as a temperror would. */
static void test_enomem_defers_sticky(void **state)
{
	(void)state;
	assert_true(sweep(REQUEST("alice@big.example"), "Received-SPF: pass", 1, 1,
			  DEFER_ACTION) > 0);
}

/* One allocation failing, the rest fine: still one answer per request. */
static void test_enomem_defers_once(void **state)
{
	(void)state;
	assert_true(sweep(REQUEST("carol@big.example"), "Received-SPF: pass", 1, 0,
			  DEFER_ACTION) > 0);
}

/* A fail from the zone (HELO without a record, then MAIL FROM fails):
 * reject or defer, never a pass nor a hang. */
static void test_enomem_never_turns_fail_into_pass(void **state)
{
	(void)state;
	assert_true(sweep(REQUEST_FROM("nothing.example", "bob@big.example", "198.51.100.7"), "action=550 5.7.23",
			  1, 1, DEFER_ACTION) > 0);
}

/* TempError_Defer = False (the default): no opinion, and no header
 * claiming an SPF result the library never gave. */
static void test_enomem_without_defer_is_dunno(void **state)
{
	(void)state;
	assert_true(sweep(REQUEST("dave@big.example"), "Received-SPF: pass", 0, 1,
			  "action=dunno\n") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_failure_answers),
		cmocka_unit_test(test_enomem_defers_sticky),
		cmocka_unit_test(test_enomem_defers_once),
		cmocka_unit_test(test_enomem_never_turns_fail_into_pass),
		cmocka_unit_test(test_enomem_without_defer_is_dunno),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
