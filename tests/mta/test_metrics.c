/*
 * mta/metrics.c and mta/metrics_http.c (issue 29): counts from several
 * threads summed at the scrape, histogram buckets at their bounds, the
 * DNS outcome labels, the listener's address syntax, and the listener
 * itself on 127.0.0.1 (a free port): /metrics, 404, 405.
 *
 * `test_mta_metrics --dump` writes an exposition with every family
 * counted into to stdout, for `promtool check metrics`
 * (test_metrics_promtool.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics.h"
#include "metrics_http.h"

#define THREADS 4
#define PER_THREAD 100000u

/* The value of the sample `line` ("name{labels}") in an exposition; -1: absent. */
static long long sample(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
		p += n;
	}
	return -1;
}

static char *render(struct spfkit__metrics *m)
{
	struct spfkit__buf b;
	char *copy;

	spfkit__buf_init(&b, NULL, SPFKIT__METRICS_MAX_BODY);
	assert_int_equal(spfkit__metrics_render(m, &b), 0);
	copy = strdup(spfkit__buf_str(&b));
	spfkit__buf_free(&b);
	assert_non_null(copy);
	return copy;
}

static void *count_many(void *arg)
{
	struct spfkit__metrics_block *b = spfkit__metrics_block(arg);
	struct spfkit_result res;
	unsigned i;

	memset(&res, 0, sizeof(res));
	res.code = SPFKIT_RESULT_FAIL;
	for (i = 0; i < PER_THREAD; i++) {
		spfkit__metrics_check(b, SPFKIT_IDENTITY_MAILFROM, &res, 700);
		spfkit__metrics_action(b, SPFKIT__MTA_REJECT);
		spfkit__metrics_count(b, SPFKIT__METRICS_REQUESTS);
		spfkit__metrics_gauge(b, SPFKIT__METRICS_OPEN, 1);
	}
	return NULL;
}

/* Each thread its own block; the scrape sums them, and reads them while they count. */
static void test_threads_sum(void **state)
{
	struct spfkit__metrics *m;
	pthread_t t[THREADS];
	char want[128];
	char *text;
	int i;

	(void)state;
	assert_int_equal(spfkit__metrics_new("test", &m), 0);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, count_many, m), 0);
	free(render(m)); /* while they count: no lock taken by them, none needed here */
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	text = render(m);
	assert_int_equal(sample(text, "spfkit_checks_total{identity=\"mailfrom\",result=\"fail\"}"),
			 THREADS * PER_THREAD);
	assert_int_equal(sample(text, "spfkit_checks_total{identity=\"helo\",result=\"fail\"}"), 0);
	assert_int_equal(sample(text, "spfkit_actions_total{action=\"reject\"}"),
			 THREADS * PER_THREAD);
	assert_int_equal(sample(text, "spfkit_requests_total"), THREADS * PER_THREAD);
	assert_int_equal(sample(text, "spfkit_connections_open"), THREADS * PER_THREAD);
	assert_int_equal(sample(text, "spfkit_check_duration_seconds_count"), THREADS * PER_THREAD);
	snprintf(want, sizeof(want), "spfkit_check_duration_seconds_sum %u.%06u\n",
		 THREADS * PER_THREAD * 700u / 1000000u, THREADS * PER_THREAD * 700u % 1000000u);
	assert_non_null(strstr(text, want));
	free(text);
	spfkit__metrics_free(m);
}

/* 500 us is in the 0.0005 bucket, 501 us is not; +Inf and _count hold everything. */
static void test_histogram_bounds(void **state)
{
	struct spfkit__metrics *m;
	struct spfkit__metrics_block *b;
	struct spfkit_dns_answer a = {SPFKIT_DNS_OK, 60, NULL, 0, NULL};
	char *text;

	(void)state;
	assert_int_equal(spfkit__metrics_new("test", &m), 0);
	b = spfkit__metrics_block(m);
	assert_non_null(b);
	spfkit__metrics_dns(b, SPFKIT_RR_TXT, &a, 500);
	spfkit__metrics_dns(b, SPFKIT_RR_TXT, &a, 501);
	spfkit__metrics_dns(b, SPFKIT_RR_MX, &a, 30000000); /* past 20 s */
	text = render(m);
	assert_int_equal(sample(text, "spfkit_dns_duration_seconds_bucket{le=\"0.000500\"}"), 1);
	assert_int_equal(sample(text, "spfkit_dns_duration_seconds_bucket{le=\"0.001000\"}"), 2);
	assert_int_equal(sample(text, "spfkit_dns_duration_seconds_bucket{le=\"20.000000\"}"), 2);
	assert_int_equal(sample(text, "spfkit_dns_duration_seconds_bucket{le=\"+Inf\"}"), 3);
	assert_int_equal(sample(text, "spfkit_dns_duration_seconds_count"), 3);
	assert_int_equal(sample(text, "spfkit_dns_queries_total{type=\"TXT\",outcome=\"answer\"}"), 2);
	assert_int_equal(sample(text, "spfkit_dns_queries_total{type=\"MX\",outcome=\"answer\"}"), 1);
	free(text);
	spfkit__metrics_free(m);
}

static void test_dns_outcomes(void **state)
{
	static const struct {
		enum spfkit_dns_status status;
		const char *detail;
		enum spfkit__metrics_dns_outcome want;
	} cases[] = {
		{SPFKIT_DNS_OK, NULL, SPFKIT__METRICS_DNS_ANSWER},
		{SPFKIT_DNS_NODATA, NULL, SPFKIT__METRICS_DNS_NODATA},
		{SPFKIT_DNS_NXDOMAIN, NULL, SPFKIT__METRICS_DNS_NXDOMAIN},
		{SPFKIT_DNS_TEMPFAIL, "timeout", SPFKIT__METRICS_DNS_TIMEOUT},
		{SPFKIT_DNS_TEMPFAIL, "Lookup_Time exceeded", SPFKIT__METRICS_DNS_TIMEOUT},
		{SPFKIT_DNS_TEMPFAIL, "SERVFAIL", SPFKIT__METRICS_DNS_SERVFAIL},
		{SPFKIT_DNS_TEMPFAIL, "SERVFAIL, REFUSED or server unreachable",
		 SPFKIT__METRICS_DNS_SERVFAIL},
		{SPFKIT_DNS_TEMPFAIL, "malformed reply", SPFKIT__METRICS_DNS_ERROR},
		{SPFKIT_DNS_TEMPFAIL, NULL, SPFKIT__METRICS_DNS_ERROR},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spfkit_dns_answer a = {cases[i].status, 0, NULL, 0, cases[i].detail};
		enum spfkit__metrics_dns_outcome got = spfkit__metrics_dns_outcome(&a);

		if (got != cases[i].want)
			fail_msg("status %d detail %s: got outcome %d, want %d", cases[i].status,
				 cases[i].detail ? cases[i].detail : "(none)", got, cases[i].want);
	}
}

/* A NULL block (metrics off) counts nothing and does not crash. */
static void test_null_block(void **state)
{
	struct spfkit_result res;
	struct spfkit_dns_answer a = {SPFKIT_DNS_OK, 0, NULL, 0, NULL};

	(void)state;
	memset(&res, 0, sizeof(res));
	spfkit__metrics_check(NULL, SPFKIT_IDENTITY_HELO, &res, 1);
	spfkit__metrics_action(NULL, SPFKIT__MTA_DUNNO);
	spfkit__metrics_dns(NULL, SPFKIT_RR_A, &a, 1);
	spfkit__metrics_count(NULL, SPFKIT__METRICS_REFUSED);
	spfkit__metrics_gauge(NULL, SPFKIT__METRICS_IN_FLIGHT, 1);
	assert_null(spfkit__metrics_block(NULL));
}

static void test_addr(void **state)
{
	static const struct {
		const char *spec, *host, *port; /* host NULL: refused */
	} cases[] = {
		{"127.0.0.1:9101", "127.0.0.1", "9101"},
		{"9101", SPFKIT__METRICS_DEFAULT_HOST, "9101"},
		{"[::1]:9101", "::1", "9101"},
		{"localhost:0", "localhost", "0"},
		{"::1:9101", NULL, NULL},
		{"[::1]9101", NULL, NULL},
		{"[]:9101", NULL, NULL},
		{":9101", NULL, NULL},
		{"127.0.0.1:", NULL, NULL},
		{"127.0.0.1:65536", NULL, NULL},
		{"127.0.0.1:9x", NULL, NULL},
		{"127.0.0.1:123456789", NULL, NULL},
		{"", NULL, NULL},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char host[64] = "", port[8] = "", why[200] = "";
		int rc = spfkit__metrics_http_addr(cases[i].spec, host, sizeof(host), port,
						   sizeof(port), why, sizeof(why));

		if (cases[i].host == NULL) {
			if (rc == 0 || why[0] == '\0')
				fail_msg("'%s': got host '%s' port '%s', want refused with a reason",
					 cases[i].spec, host, port);
			continue;
		}
		if (rc != 0 || strcmp(host, cases[i].host) != 0 || strcmp(port, cases[i].port) != 0)
			fail_msg("'%s': got rc %d host '%s' port '%s' (%s), want '%s' '%s'",
				 cases[i].spec, rc, host, port, why, cases[i].host, cases[i].port);
	}
}

/* One HTTP/1.0 exchange with 127.0.0.1:port; the whole reply, NUL-terminated. */
static char *http(unsigned port, const char *request)
{
	struct sockaddr_in sa;
	static char reply[65536];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	struct timeval tv = {10, 0}; /* a listener that never answers fails the test */

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	while (got < sizeof(reply) - 1 && (n = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	reply[got] = '\0';
	return reply;
}

static void test_listener(void **state)
{
	struct spfkit__metrics *m;
	struct spfkit__metrics_http *h;
	struct spfkit_result res;
	unsigned port = 0;
	char *r;
	int fd;

	(void)state;
	assert_int_equal(spfkit__metrics_new("spfkit-test", &m), 0);
	memset(&res, 0, sizeof(res));
	res.code = SPFKIT_RESULT_PASS;
	spfkit__metrics_check(spfkit__metrics_block(m), SPFKIT_IDENTITY_HELO, &res, 3);
	fd = spfkit__metrics_http_listen("test", "127.0.0.1:0", &port);
	assert_true(fd >= 0);
	assert_true(port > 0);
	assert_int_equal(spfkit__metrics_http_start(m, fd, &h), 0);

	r = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.0 200"));
	assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4"));
	assert_non_null(strstr(r, "\nspfkit_checks_total{identity=\"helo\",result=\"pass\"} 1\n"));
	assert_non_null(strstr(r, "spfkit_build_info{daemon=\"spfkit-test\",version=\""));
	r = http(port, "GET /other HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 404 "));
	r = http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
	assert_non_null(strstr(r, " 405 "));
	r = http(port, "GARBAGE\r\n\r\n");
	assert_null(strstr(r, " 200 "));
	r = http(port, "GET /metrics HTTP/1.0\r\n\r\n"); /* still serving */
	assert_non_null(strstr(r, " 200 "));

	spfkit__metrics_http_stop(h);
	spfkit__metrics_free(m);
}

/* Every family with a value, for promtool. */
static int dump(void)
{
	struct spfkit__metrics *m;
	struct spfkit__metrics_block *b;
	struct spfkit_result res;
	struct spfkit_dns_answer a = {SPFKIT_DNS_TEMPFAIL, 0, NULL, 0, "timeout"};
	char *text;

	if (spfkit__metrics_new("spfkit-test", &m) != 0)
		return 1;
	b = spfkit__metrics_block(m);
	memset(&res, 0, sizeof(res));
	res.code = SPFKIT_RESULT_TEMPERROR;
	res.memo_answers = 2;
	spfkit__metrics_check(b, SPFKIT_IDENTITY_MAILFROM, &res, 1234567);
	spfkit__metrics_action(b, SPFKIT__MTA_DEFER);
	spfkit__metrics_dns(b, SPFKIT_RR_AAAA, &a, 5000000);
	spfkit__metrics_count(b, SPFKIT__METRICS_PROTOCOL_ERRORS);
	spfkit__metrics_gauge(b, SPFKIT__METRICS_IN_FLIGHT, 1);
	text = render(m);
	fputs(text, stdout);
	free(text);
	spfkit__metrics_free(m);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_sum),   cmocka_unit_test(test_histogram_bounds),
		cmocka_unit_test(test_dns_outcomes),  cmocka_unit_test(test_null_block),
		cmocka_unit_test(test_addr),          cmocka_unit_test(test_listener),
	};

	if (argc == 2 && strcmp(argv[1], "--dump") == 0)
		return dump();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
