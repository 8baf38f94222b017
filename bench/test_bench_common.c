/* Tests of bench_common.c: the query and results files, option parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench_common.h"
#include "core.h"

/* Parse `text` (copied: the parser keeps and frees it); returns the code. */
static int parse(const char *text, struct bench_queries *qs, char *err, size_t errlen)
{
	size_t len = strlen(text);
	char *copy = spfkit__strndup(NULL, text, len);

	assert_non_null(copy);
	return bench_queries_parse(qs, copy, len, "q.txt", err, errlen);
}

static void test_three_fields(void **state)
{
	struct bench_queries qs;
	char err[128] = "";

	(void)state;
	assert_int_equal(parse("192.0.2.1 a@b.example mx.b.example\n", &qs, err, sizeof(err)), 0);
	assert_int_equal(qs.count, 1);
	assert_string_equal(qs.q[0].ip, "192.0.2.1");
	assert_string_equal(qs.q[0].sender, "a@b.example");
	assert_int_equal(qs.q[0].sender_len, 11);
	assert_string_equal(qs.q[0].helo, "mx.b.example");
	bench_queries_free(&qs);
}

static void test_empty_sender(void **state)
{
	struct bench_queries qs;
	char err[128] = "";

	(void)state;
	assert_int_equal(parse("2001:db8::1\t<>\tb.example", &qs, err, sizeof(err)), 0);
	assert_string_equal(qs.q[0].sender, "");
	assert_int_equal(qs.q[0].sender_len, 0);
	assert_string_equal(qs.q[0].helo, "b.example");
	bench_queries_free(&qs);
}

static void test_blank_lines_and_crlf(void **state)
{
	struct bench_queries qs;
	char err[128] = "";

	(void)state;
	assert_int_equal(parse("\n  \n192.0.2.1 a@b.example h\r\n\n192.0.2.2 c@d.example h2\r\n",
			       &qs, err, sizeof(err)),
			 0);
	assert_int_equal(qs.count, 2);
	assert_string_equal(qs.q[0].helo, "h");
	assert_int_equal(qs.q[1].line, 5);
	assert_string_equal(qs.q[1].helo, "h2");
	bench_queries_free(&qs);
}

static void test_two_fields_names_the_line(void **state)
{
	struct bench_queries qs;
	char err[128] = "";

	(void)state;
	assert_int_equal(parse("192.0.2.1 a@b h\n192.0.2.1 a@b\n", &qs, err, sizeof(err)),
			 SPFKIT_ESYNTAX);
	assert_string_equal(err, "q.txt:2: want \"ip sender helo\"");
	bench_queries_free(&qs);
}

static void test_four_fields_rejected(void **state)
{
	struct bench_queries qs;
	char err[128] = "";

	(void)state;
	assert_int_equal(parse("192.0.2.1 a@b h extra\n", &qs, err, sizeof(err)), SPFKIT_ESYNTAX);
	bench_queries_free(&qs);
}

static void test_long_field_rejected(void **state)
{
	struct bench_queries qs;
	char err[128] = "";
	char line[BENCH_MAX_FIELD + 64];

	(void)state;
	memset(line, 'a', sizeof(line));
	memcpy(line, "192.0.2.1 ", 10);
	line[sizeof(line) - 4] = ' ';
	line[sizeof(line) - 3] = 'h';
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	assert_int_equal(parse(line, &qs, err, sizeof(err)), SPFKIT_E2BIG);
	bench_queries_free(&qs);
}

static void test_empty_file_rejected(void **state)
{
	struct bench_queries qs;
	char err[128] = "";

	(void)state;
	assert_int_equal(parse("\n\n", &qs, err, sizeof(err)), SPFKIT_ESYNTAX);
	assert_string_equal(err, "q.txt: no queries");
	bench_queries_free(&qs);
}

static void test_result_names(void **state)
{
	unsigned r;

	(void)state;
	for (r = 0; r < BENCH_NRES; r++)
		assert_int_equal(bench_res_from_name(bench_res_name(r), strlen(bench_res_name(r))), r);
	assert_int_equal(bench_res_from_name("PermError", 9), BENCH_PERMERROR);
	assert_int_equal(bench_res_from_name("passed", 6), BENCH_NRES);
	assert_int_equal(bench_res_from_name("", 0), BENCH_NRES);
}

static void test_results_round_trip(void **state)
{
	char path[] = "/tmp/bench_resultsXXXXXX";
	const unsigned char want[3] = {BENCH_PASS, BENCH_PERMERROR, BENCH_NONE};
	unsigned char got[3] = {0};
	char err[256] = "";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bench_results_write(path, want, 3), 0);
	assert_int_equal(bench_results_read(path, got, 3, err, sizeof(err)), 0);
	assert_memory_equal(got, want, 3);
	/* one result per query, no more, no fewer */
	assert_int_equal(bench_results_read(path, got, 2, err, sizeof(err)), SPFKIT_ESYNTAX);
	assert_int_equal(bench_results_read(path, got, 4, err, sizeof(err)), SPFKIT_ESYNTAX);
	unlink(path);
}

static void test_missing_file(void **state)
{
	struct bench_queries qs;
	char err[256] = "";

	(void)state;
	assert_int_equal(bench_queries_load(&qs, "/nonexistent/q.txt", err, sizeof(err)),
			 SPFKIT_EIO);
	assert_non_null(strstr(err, "/nonexistent/q.txt: cannot open"));
	bench_queries_free(&qs);
}

static void test_parse_size(void **state)
{
	size_t v = 0;

	(void)state;
	assert_int_equal(bench_parse_size("42", 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(bench_parse_size("101", 100, &v), -1);
	assert_int_equal(bench_parse_size("-1", 100, &v), -1);
	assert_int_equal(bench_parse_size("4x", 100, &v), -1);
	assert_int_equal(bench_parse_size("", 100, &v), -1);
	assert_int_equal(bench_parse_size("99999999999999999999999", SIZE_MAX, &v), -1);
}

static void test_parse_seconds(void **state)
{
	double v = 0;

	(void)state;
	assert_int_equal(bench_parse_seconds("2.5", &v), 0);
	assert_true(v > 2.49 && v < 2.51);
	assert_int_equal(bench_parse_seconds("nan", &v), -1);
	assert_int_equal(bench_parse_seconds("-1", &v), -1);
	assert_int_equal(bench_parse_seconds("1e9", &v), -1);
	assert_int_equal(bench_parse_seconds("3s", &v), -1);
}

static int pass_count(void *arg, size_t n)
{
	*(size_t *)arg += n;
	return 0;
}

static void test_time_fixed_rounds(void **state)
{
	struct bench_timing t;
	size_t seen = 0;

	(void)state;
	assert_int_equal(bench_time(pass_count, &seen, 7, 100.0, 3, &t), 0);
	assert_int_equal(t.passes, 3);
	assert_int_equal(t.per_pass, 7);
	assert_int_equal(seen, 21);
}

static void test_time_at_least_one_pass(void **state)
{
	struct bench_timing t;
	size_t seen = 0;

	(void)state;
	assert_int_equal(bench_time(pass_count, &seen, 4, 0.0, 0, &t), 0);
	assert_int_equal(t.passes, 1);
	assert_int_equal(seen, 4);
	assert_true(t.median_pass >= 0.0 && t.median_pass <= t.total_seconds);
}

/* Slow every third pass: the median must not move with them. */
static int pass_uneven(void *arg, size_t n)
{
	size_t *calls = arg;
	double until = bench_now() + ((*calls)++ % 3 == 2 ? 0.02 : 0.001);

	(void)n;
	while (bench_now() < until)
		;
	return 0;
}

static void test_time_median_ignores_slow_passes(void **state)
{
	struct bench_timing t;
	size_t calls = 0;

	(void)state;
	assert_int_equal(bench_time(pass_uneven, &calls, 1, 0.0, 9, &t), 0);
	assert_int_equal(t.passes, 9);
	if (!(t.median_pass < 0.01))
		fail_msg("got median pass %.4f s, want the fast 0.001 s passes", t.median_pass);
}

static int pass_fails(void *arg, size_t n)
{
	(void)arg;
	(void)n;
	return SPFKIT_ENOMEM;
}

static void test_time_stops_on_error(void **state)
{
	struct bench_timing t;

	(void)state;
	assert_int_equal(bench_time(pass_fails, NULL, 4, 1.0, 0, &t), SPFKIT_ENOMEM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_fields),
		cmocka_unit_test(test_empty_sender),
		cmocka_unit_test(test_blank_lines_and_crlf),
		cmocka_unit_test(test_two_fields_names_the_line),
		cmocka_unit_test(test_four_fields_rejected),
		cmocka_unit_test(test_long_field_rejected),
		cmocka_unit_test(test_empty_file_rejected),
		cmocka_unit_test(test_result_names),
		cmocka_unit_test(test_results_round_trip),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_time_fixed_rounds),
		cmocka_unit_test(test_time_at_least_one_pass),
		cmocka_unit_test(test_time_median_ignores_slow_passes),
		cmocka_unit_test(test_time_stops_on_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
