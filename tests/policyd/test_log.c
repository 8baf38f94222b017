/*
 * mta/log.c from several threads at once. The log lock is not held while
 * a line is written (issue 11: the workers waited for each other's
 * write), so these check that every line still arrives whole and once:
 * on a pipe, lines up to PIPE_BUF (one write, no lock) and longer ones
 * (under the lock); on a syslog datagram socket, one line per datagram;
 * and so for lines a thread holds and sends a batch at a time.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

#define THREADS 4
#define IDENT "test-log"

struct writer {
	int id;
	int lines;
	size_t min_len, spread; /* payload lengths: min_len + (i * 37) % spread */
	int hold;               /* hold the lines, flushed every few */
};

/* The payload of line i of a writer: its letter, repeated. */
static size_t payload_len(const struct writer *w, int i)
{
	return w->min_len + ((size_t)i * 37) % w->spread;
}

static void *write_lines(void *arg)
{
	const struct writer *w = arg;
	int i;

	if (w->hold && spfkit__mta_log_hold() != 0)
		abort();
	for (i = 0; i < w->lines; i++) {
		char line[SPFKIT__MTA_LOG_LINE_MAX];
		size_t len = payload_len(w, i);
		int n = snprintf(line, sizeof(line), "T%d %d ", w->id, i);

		memset(line + n, 'a' + w->id, len);
		spfkit__mta_log_write(LOG_INFO, line, (size_t)n + len);
		if (w->hold && i % 7 == 6)
			spfkit__mta_log_flush();
	}
	if (w->hold)
		spfkit__mta_log_unhold();
	return NULL;
}

/* Everything read from fd until end of file (a thread: the pipe must be
 * drained while the writers fill it). */
struct sink {
	int fd;
	char *buf;
	size_t len, cap;
};

static void *drain(void *arg)
{
	struct sink *s = arg;
	char chunk[65536];
	ssize_t n;

	while ((n = read(s->fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (s->len + (size_t)n > s->cap) {
			s->cap = (s->len + (size_t)n) * 2;
			s->buf = realloc(s->buf, s->cap);
			if (s->buf == NULL)
				abort();
		}
		memcpy(s->buf + s->len, chunk, (size_t)n);
		s->len += (size_t)n;
	}
	return NULL;
}

/*
 * Check one line (no newline) against what the writers wrote: "T<id> <i>
 * " and the payload, each writer's lines in the order written (so none
 * twice): last[id] is the writer's line before.
 */
static void check_line(const char *line, size_t len, const struct writer *ws, int last[THREADS])
{
	int id, i, n = 0;
	size_t k, want;

	if (sscanf(line, "T%d %d %n", &id, &i, &n) != 2 || n == 0 || id < 0 || id >= THREADS ||
	    i < 0 || i >= ws[id].lines)
		fail_msg("a line not written whole: \"%.60s\"", line);
	want = payload_len(&ws[id], i);
	if (len != (size_t)n + want)
		fail_msg("line T%d %d is %zu bytes, not %zu", id, i, len, (size_t)n + want);
	for (k = (size_t)n; k < len; k++)
		if (line[k] != 'a' + id)
			fail_msg("line T%d %d holds another line's byte at %zu", id, i, k);
	if (i <= last[id])
		fail_msg("line T%d %d after line %d", id, i, last[id]);
	last[id] = i;
}

static void run_writers(struct writer *ws)
{
	pthread_t t[THREADS];
	int i;

	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, write_lines, &ws[i]), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

/* THREADS writers on stderr, a pipe: every line whole, once, in order per writer. */
static void lines_on_a_pipe(size_t min_len, size_t spread, int lines, int hold)
{
	int last[THREADS];
	struct writer ws[THREADS];
	struct sink s = {0};
	pthread_t reader;
	char tag[64];
	int p[2], saved, i, total = 0;
	size_t off, tag_len;

	for (i = 0; i < THREADS; i++) {
		ws[i] = (struct writer){i, lines, min_len, spread, hold};
		last[i] = -1;
	}
	assert_int_equal(pipe(p), 0);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(p[1], 2), 2);
	close(p[1]);
	s.fd = p[0];
	assert_int_equal(pthread_create(&reader, NULL, drain, &s), 0);
	spfkit__mta_log_open(IDENT, 1, NULL);
	run_writers(ws);
	assert_int_equal(dup2(saved, 2), 2); /* the pipe's last writer goes: the reader ends */
	close(saved);
	pthread_join(reader, NULL);
	close(p[0]);

	tag_len = (size_t)snprintf(tag, sizeof(tag), IDENT "[%ld]: ", (long)getpid());
	for (off = 0; off < s.len;) {
		char *nl = memchr(s.buf + off, '\n', s.len - off);

		if (nl == NULL)
			fail_msg("the output ends inside a line");
		if ((size_t)(nl - (s.buf + off)) < tag_len || memcmp(s.buf + off, tag, tag_len) != 0)
			fail_msg("a line without the tag: \"%.60s\"", s.buf + off);
		*nl = '\0';
		check_line(s.buf + off + tag_len, (size_t)(nl - (s.buf + off)) - tag_len, ws, last);
		total++;
		off = (size_t)(nl + 1 - s.buf);
	}
	free(s.buf);
	assert_int_equal(total, THREADS * lines);
}

/* Short lines: one write each, no lock. */
static void test_short_lines_whole(void **state)
{
	(void)state;
	lines_on_a_pipe(1, 3000, 3000, 0);
}

/* Lines past PIPE_BUF, which a pipe may take in parts: written under the lock. */
static void test_long_lines_whole(void **state)
{
	(void)state;
	assert_true(PIPE_BUF < 5000);
	lines_on_a_pipe(5000, 3000, 300, 0);
}

/* Lines held by each thread and written a batch at a time (an event
 * loop's pass), some too long to hold: whole, once, in order. */
static void test_held_lines_whole(void **state)
{
	(void)state;
	lines_on_a_pipe(1, 3000, 3000, 1);
}

/* One thread, held lines of every length, one past PIPE_BUF now and then:
 * a line too long to hold goes after the ones held before it. */
static void test_held_then_long_in_order(void **state)
{
	int last[THREADS] = {-1, -1, -1, -1};
	struct writer w = {0, 400, 1, 7000, 1};
	struct sink s = {0};
	pthread_t t, reader;
	char tag[64];
	int p[2], saved, total = 0;
	size_t off, tag_len;
	struct writer ws[THREADS] = {{0}}; /* only writer 0 writes: a line naming another fails */

	(void)state;
	ws[0] = w;
	assert_int_equal(pipe(p), 0);
	saved = dup(2);
	assert_int_equal(dup2(p[1], 2), 2);
	close(p[1]);
	s.fd = p[0];
	assert_int_equal(pthread_create(&reader, NULL, drain, &s), 0);
	spfkit__mta_log_open(IDENT, 1, NULL);
	assert_int_equal(pthread_create(&t, NULL, write_lines, &ws[0]), 0);
	pthread_join(t, NULL);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	pthread_join(reader, NULL);
	close(p[0]);
	tag_len = (size_t)snprintf(tag, sizeof(tag), IDENT "[%ld]: ", (long)getpid());
	for (off = 0; off < s.len; total++) {
		char *nl = memchr(s.buf + off, '\n', s.len - off);

		assert_non_null(nl);
		assert_memory_equal(s.buf + off, tag, tag_len);
		check_line(s.buf + off + tag_len, (size_t)(nl - (s.buf + off)) - tag_len, ws, last);
		off = (size_t)(nl + 1 - s.buf);
	}
	free(s.buf);
	assert_int_equal(total, w.lines);
}

struct dgram_sink {
	int fd;
	int got;
	const struct writer *ws;
	int last[THREADS];
};

static void *receive_datagrams(void *arg)
{
	struct dgram_sink *d = arg;
	char tag[64], buf[SPFKIT__MTA_LOG_LINE_MAX + 256];
	int tag_len = snprintf(tag, sizeof(tag), IDENT "[%ld]: ", (long)getpid());

	for (;;) {
		ssize_t n = recv(d->fd, buf, sizeof(buf) - 1, 0);
		const char *body = NULL;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf[n] = '\0';
		if (strcmp(buf, "stop") == 0)
			break;
		/* "<22>Mmm dd hh:mm:ss test-log[pid]: ": facility mail, info */
		if (strncmp(buf, "<22>", 4) != 0 || (body = strstr(buf, tag)) == NULL)
			fail_msg("datagram \"%.60s\"", buf);
		body += tag_len;
		if (strstr(body, "log lines dropped") != NULL)
			continue;
		check_line(body, (size_t)(buf + n - body), d->ws, d->last);
		d->got++;
	}
	return NULL;
}

/* THREADS writers to a syslog socket: each datagram one whole line;
 * with hold, a batch at a time (sendmmsg()). */
static void datagrams_whole(int hold)
{
	struct writer ws[THREADS];
	struct sockaddr_un sa;
	struct dgram_sink d;
	pthread_t reader;
	char dir[] = "/tmp/spfkit-test-log.XXXXXX";
	int fd, rcv = 4 << 20, i;

	for (i = 0; i < THREADS; i++)
		ws[i] = (struct writer){i, 1000, 1, 2000, hold};
	assert_non_null(mkdtemp(dir));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/log", dir);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	assert_int_equal(bind(fd, (const struct sockaddr *)&sa, sizeof(sa)), 0);
	d = (struct dgram_sink){fd, 0, ws, {-1, -1, -1, -1}};
	assert_int_equal(pthread_create(&reader, NULL, receive_datagrams, &d), 0);
	spfkit__mta_log_open(IDENT, 0, sa.sun_path);
	assert_int_equal(spfkit__mta_log_to_syslog(), 1);
	run_writers(ws);
	{
		int s = socket(AF_UNIX, SOCK_DGRAM, 0);

		assert_true(s >= 0);
		assert_int_equal(sendto(s, "stop", 4, 0, (const struct sockaddr *)&sa, sizeof(sa)), 4);
		close(s);
	}
	pthread_join(reader, NULL);
	spfkit__mta_log_close();
	close(fd);
	unlink(sa.sun_path);
	rmdir(dir);
	/* a line the socket had no room for is dropped (and counted), never cut */
	assert_true(d.got > 0);
}

static void test_datagrams_whole(void **state)
{
	(void)state;
	datagrams_whole(0);
}

static void test_held_datagrams_whole(void **state)
{
	(void)state;
	datagrams_whole(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_lines_whole),
		cmocka_unit_test(test_long_lines_whole),
		cmocka_unit_test(test_held_lines_whole),
		cmocka_unit_test(test_held_then_long_in_order),
		cmocka_unit_test(test_datagrams_whole),
		cmocka_unit_test(test_held_datagrams_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
