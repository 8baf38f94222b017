/*
 * Load generator for SPF milters (spfkit-milter): C concurrent SMTP
 * sessions, each a new milter connection playing what an MTA sends for
 * one message (option negotiation, connect, HELO, MAIL FROM, RCPT, one
 * header, end of headers, end of body), then the next, for T seconds.
 * Prints messages per second and p50/p99 latency of a whole message
 * (what the milter adds to an SMTP session) on a "#BENCH" line.
 *
 *   bench_milter --unix PATH -c 32 -t 5 [--name spfkit-milter]
 *       [--ip 192.0.2.10 --sender alice@example.com --helo mx.example.com]
 *
 * The milter protocol as libmilter speaks it (version 6): each packet is
 * a 4-byte big-endian length, a command byte and its data. We offer no
 * protocol options, so the milter answers every command.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load_common.h"

#define MAX_CLIENTS 256
#define MAX_SAMPLES (1u << 20)
#define PACKET_MAX 65536

/* What one message asks, in order; each step waits for the milter's answer. */
enum step { S_OPTNEG, S_CONNECT, S_HELO, S_MAIL, S_RCPT, S_HEADER, S_EOH, S_EOB, S_DONE };

struct session {
	int fd;
	enum step step;
	unsigned char in[PACKET_MAX];
	size_t in_len;
	uint64_t t0;
	int rejected;
};

struct message {
	const char *ip, *sender, *helo;
};

/* One packet: command and data, written whole (small, blocking socket). */
static int send_packet(int fd, char cmd, const void *data, size_t len)
{
	unsigned char buf[1024];
	uint32_t n = htonl((uint32_t)len + 1);

	if (len + 5 > sizeof(buf))
		return -1;
	memcpy(buf, &n, 4);
	buf[4] = (unsigned char)cmd;
	memcpy(buf + 5, data, len);
	return write(fd, buf, len + 5) == (ssize_t)(len + 5) ? 0 : -1;
}

/* NUL-separated strings into buf: "a\0b\0..." */
static size_t strings(char *buf, size_t size, const char *const *s, size_t n)
{
	size_t len = 0, i, l;

	for (i = 0; i < n; i++) {
		l = strlen(s[i]) + 1;
		if (len + l > size)
			return 0;
		memcpy(buf + len, s[i], l);
		len += l;
	}
	return len;
}

static int send_step(struct session *s, const struct message *m)
{
	char buf[768];
	size_t n;

	switch (s->step) {
	case S_OPTNEG: {
		/* version 6, actions: add/change headers and reply codes; no protocol options */
		uint32_t v[3] = {htonl(6), htonl(0x1ff), htonl(0)};

		return send_packet(s->fd, 'O', v, sizeof(v));
	}
	case S_CONNECT: {
		uint16_t port = htons(25);
		size_t hl = strlen("client.example") + 1;

		memcpy(buf, "client.example", hl);
		buf[hl] = strchr(m->ip, ':') ? '6' : '4';
		memcpy(buf + hl + 1, &port, 2);
		n = hl + 3 + strlen(m->ip) + 1;
		if (n > sizeof(buf))
			return -1;
		memcpy(buf + hl + 3, m->ip, strlen(m->ip) + 1);
		return send_packet(s->fd, 'C', buf, n);
	}
	case S_HELO:
		return send_packet(s->fd, 'H', m->helo, strlen(m->helo) + 1);
	case S_MAIL: {
		char from[300];
		const char *args[1] = {from};

		snprintf(from, sizeof(from), "<%s>", m->sender);
		n = strings(buf, sizeof(buf), args, 1);
		return n ? send_packet(s->fd, 'M', buf, n) : -1;
	}
	case S_RCPT: {
		static const char *const args[1] = {"<bob@receiver.example>"};

		n = strings(buf, sizeof(buf), args, 1);
		return send_packet(s->fd, 'R', buf, n);
	}
	case S_HEADER: {
		static const char *const hdr[2] = {"Subject", "bench"};

		n = strings(buf, sizeof(buf), hdr, 2);
		return send_packet(s->fd, 'L', buf, n);
	}
	case S_EOH:
		return send_packet(s->fd, 'N', "", 0);
	case S_EOB:
		return send_packet(s->fd, 'E', "", 0);
	case S_DONE:
		break;
	}
	return -1;
}

/* A new connection and the first packet of a message. */
static int session_start(struct session *s, const char *path, const struct message *m)
{
	s->fd = load_connect_unix(path);
	if (s->fd < 0)
		return -1;
	s->step = S_OPTNEG;
	s->in_len = 0;
	s->rejected = 0;
	s->t0 = load_now_ns();
	return send_step(s, m);
}

static void session_end(struct session *s)
{
	(void)send_packet(s->fd, 'Q', "", 0);
	close(s->fd);
	s->fd = -1;
}

/*
 * One reply packet in s->in: decide what comes next. Header changes at
 * end of body come before the final answer; a reject or tempfail ends
 * the message early. Returns 1 when the message is done, 0 to go on, -1
 * on a protocol error.
 */
static int on_reply(struct session *s, char cmd, const struct message *m)
{
	if (cmd == 'h' || cmd == 'i' || cmd == 'm' || cmd == 'p')
		return 0; /* modifications and progress: the answer follows */
	if (cmd == 'r' || cmd == 't' || cmd == 'y') {
		s->rejected = 1;
		return 1;
	}
	if (s->step == S_OPTNEG ? cmd != 'O' : (cmd != 'c' && cmd != 'a'))
		return -1;
	if (s->step == S_EOB || cmd == 'a')
		return 1;
	s->step++;
	return send_step(s, m) == 0 ? 0 : -1;
}

/* Read what arrived; returns 1 when the message is done, 0, or -1. */
static int session_read(struct session *s, const struct message *m)
{
	ssize_t r = read(s->fd, s->in + s->in_len, sizeof(s->in) - s->in_len);
	uint32_t len;
	int rc = 0;

	if (r <= 0)
		return -1;
	s->in_len += (size_t)r;
	while (rc == 0 && s->in_len >= 5) {
		memcpy(&len, s->in, 4);
		len = ntohl(len);
		if (len == 0 || len > sizeof(s->in) - 4)
			return -1;
		if (s->in_len < len + 4)
			break;
		rc = on_reply(s, (char)s->in[4], m);
		memmove(s->in, s->in + len + 4, s->in_len - len - 4);
		s->in_len -= len + 4;
	}
	return rc;
}

static int run(const char *path, int n, double secs, const char *name, const struct message *m)
{
	static struct session ss[MAX_CLIENTS];
	static uint64_t samples[MAX_SAMPLES];
	struct pollfd pfd[MAX_CLIENTS];
	unsigned long done = 0, errors = 0, rejected = 0;
	uint64_t t0 = load_now_ns(), end = t0 + (uint64_t)(secs * 1e9), elapsed;
	size_t k;
	int i;

	for (i = 0; i < n; i++)
		if (session_start(&ss[i], path, m) != 0) {
			fprintf(stderr, "%s: cannot connect to %s\n", name, path);
			return 1;
		}
	while (load_now_ns() < end) {
		for (i = 0; i < n; i++) {
			pfd[i].fd = ss[i].fd;
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n, 100) < 0 && errno != EINTR)
			return 1;
		for (i = 0; i < n; i++) {
			int rc;

			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			rc = session_read(&ss[i], m);
			if (rc == 0)
				continue;
			if (rc < 0)
				errors++;
			else if (done < MAX_SAMPLES)
				samples[done] = load_now_ns() - ss[i].t0;
			done += rc > 0;
			rejected += rc > 0 && ss[i].rejected;
			session_end(&ss[i]);
			if (session_start(&ss[i], path, m) != 0) {
				fprintf(stderr, "%s: cannot reconnect\n", name);
				return 1;
			}
		}
	}
	elapsed = load_now_ns() - t0;
	for (i = 0; i < n; i++)
		session_end(&ss[i]);
	if (done == 0) {
		fprintf(stderr, "%s: no message finished\n", name);
		return 1;
	}
	k = done < MAX_SAMPLES ? done : MAX_SAMPLES;
	qsort(samples, k, sizeof(samples[0]), load_cmp_u64);
	printf("#BENCH %s sessions=%d messages=%lu mps=%.0f p50_us=%.0f p99_us=%.0f rejected=%lu "
	       "errors=%lu\n",
	       name, n, done, (double)done / ((double)elapsed / 1e9), samples[k / 2] / 1e3,
	       samples[k * 99 / 100] / 1e3, rejected, errors);
	return errors != 0;
}

int main(int argc, char **argv)
{
	struct message m = {"192.0.2.10", "alice@example.com", "mx.example.com"};
	const char *path = NULL, *name = "milter";
	double secs = 3;
	int n = 1, i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--unix") == 0)
			path = argv[i + 1];
		else if (strcmp(argv[i], "-c") == 0)
			n = (int)strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-t") == 0)
			secs = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--name") == 0)
			name = argv[i + 1];
		else if (strcmp(argv[i], "--ip") == 0)
			m.ip = argv[i + 1];
		else if (strcmp(argv[i], "--sender") == 0)
			m.sender = argv[i + 1];
		else if (strcmp(argv[i], "--helo") == 0)
			m.helo = argv[i + 1];
		else
			break;
	}
	if (i != argc || path == NULL || n < 1 || n > MAX_CLIENTS || secs <= 0 ||
	    strlen(m.ip) > 64 || strlen(m.sender) > 256 || strlen(m.helo) > 256) {
		fprintf(stderr, "usage: see the comment at the top of bench_milter.c\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	return run(path, n, secs, name, &m);
}
