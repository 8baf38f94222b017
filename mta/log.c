/*
 * The daemons' log channel (see log.h): our own datagram socket to
 * the syslog daemon, with stderr behind it when none listens.
 */
#ifdef __linux__
#define _GNU_SOURCE /* sendmmsg(): a thread's held lines in one system call */
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/*
 * The lock guards the state, never a system call on the request path: a
 * line is sent or written after it is let go (threads that logged under
 * it waited for each other's write, a futex wait and wake per line). So
 * the datagram socket, once made, is never closed while the daemon runs:
 * a thread may still send on it after another found the syslog daemon
 * gone, and a number closed and given again (to a client's connection)
 * must never get a log line. It is connected again in place.
 */
static struct {
	pthread_mutex_t lock;
	const char *ident;
	const char *path;
	int to_stderr;    /* asked for stderr: no socket at all */
	int fd;           /* the datagram socket, or -1 before the first try */
	int connected;    /* fd is connected to a syslog daemon that answered */
	int fallback_said; /* the current stretch on stderr has been announced */
	time_t next_try;  /* CLOCK_MONOTONIC s: when to try the socket again */
	atomic_ulong dropped; /* lines the daemon had no room for (EAGAIN) */
	long pid;         /* once: getpid() is a system call with today's glibc */
	char tag[160];    /* "ident[pid]: ", made once: no printf per line */
	size_t tag_len;
} plog = {PTHREAD_MUTEX_INITIALIZER, "spfkit-policyd", SPFKIT__MTA_LOG_DEFAULT_SOCKET, 1, -1, 0, 0,
	  0, 0, 0, "", 0};

static time_t mono_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec;
}

/* Write all of it to stderr (a pipe may take it in parts). */
static void write_stderr(const char *s, size_t len)
{
	while (len > 0) {
		ssize_t n = write(2, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

/* A line of our own on stderr, with the usual prefix. Lock held. */
static void say_stderr(const char *text)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s[%ld]: %s\n", plog.ident, plog.pid, text);

	if (n > 0)
		write_stderr(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/*
 * Connect to the syslog socket. On failure, the lines go to stderr and
 * the first failure of a stretch says so. Lock held.
 */
static int try_connect(time_t now)
{
	struct sockaddr_un sa;
	size_t plen = strlen(plog.path);
	int fd, err;
	char text[400];

	plog.next_try = now + SPFKIT__MTA_LOG_RETRY_S;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (plen >= sizeof(sa.sun_path)) {
		err = ENAMETOOLONG;
		goto fail;
	}
	memcpy(sa.sun_path, plog.path, plen + 1);
	if (plog.fd < 0) {
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			goto fail;
		}
		plog.fd = fd;
	}
	/* a datagram socket may be connected again, to a restarted daemon */
	if (connect(plog.fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
		err = errno;
		goto fail;
	}
	plog.connected = 1;
	return 0;
fail:
	if (!plog.fallback_said) {
		snprintf(text, sizeof(text),
			 "no syslog daemon answers on %s (%s); logging to stderr, trying again every %d s",
			 plog.path, strerror(err), SPFKIT__MTA_LOG_RETRY_S);
		say_stderr(text);
		plog.fallback_said = 1;
	}
	return -1;
}

void spfkit__mta_log_open(const char *ident, int to_stderr, const char *socket_path)
{
	pthread_mutex_lock(&plog.lock);
	plog.ident = ident;
	plog.path = socket_path != NULL ? socket_path : SPFKIT__MTA_LOG_DEFAULT_SOCKET;
	plog.to_stderr = to_stderr;
	plog.pid = (long)getpid();
	plog.tag_len = 0; /* made again for this ident and pid */
	plog.fallback_said = 0;
	if (!to_stderr && !plog.connected)
		(void)try_connect(mono_s());
	pthread_mutex_unlock(&plog.lock);
}

void spfkit__mta_log_close(void)
{
	pthread_mutex_lock(&plog.lock);
	if (plog.fd >= 0)
		close(plog.fd);
	plog.fd = -1;
	plog.connected = 0;
	pthread_mutex_unlock(&plog.lock);
}

int spfkit__mta_log_to_syslog(void)
{
	int on;

	pthread_mutex_lock(&plog.lock);
	on = plog.connected;
	pthread_mutex_unlock(&plog.lock);
	return on;
}

/*
 * "Mmm dd hh:mm:ss " of RFC 3164 §4.1.2, local time, as syslog() sends
 * it. Formatted once a second per thread: localtime_r() is the costly
 * part of a log line otherwise.
 */
static const char *stamp_now(void)
{
	static _Thread_local time_t stamp_sec = -1;
	static _Thread_local char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	if (now != stamp_sec) {
		if (localtime_r(&now, &tm) == NULL ||
		    strftime(stamp, sizeof(stamp), "%b %e %H:%M:%S ", &tm) == 0)
			stamp[0] = '\0';
		stamp_sec = now;
	}
	return stamp;
}

/* Lines lost while the syslog daemon was behind, said once it takes lines again. */
static void report_dropped(int prio)
{
	char line[256];
	unsigned long lost;
	int n;

	pthread_mutex_lock(&plog.lock);
	lost = atomic_load(&plog.dropped);
	n = snprintf(line, sizeof(line), "<%d>%s%s[%ld]: %lu log lines dropped: the syslog daemon "
		     "did not keep up", LOG_MAIL | (prio & 7), stamp_now(), plog.ident, plog.pid, lost);
	if (lost > 0 && n > 0 && (size_t)n < sizeof(line) && plog.connected &&
	    send(plog.fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
		atomic_fetch_sub(&plog.dropped, lost);
	pthread_mutex_unlock(&plog.lock);
}

/* The syslog daemon went away (restarted, stopped): stderr until it is
 * back, said by the first thread to find out. */
static void syslog_gone(int err)
{
	char text[160];

	pthread_mutex_lock(&plog.lock);
	if (plog.connected) {
		snprintf(text, sizeof(text), "syslog on %s stopped answering (%s); logging to stderr, "
			 "trying again every %d s", plog.path, strerror(err), SPFKIT__MTA_LOG_RETRY_S);
		plog.connected = 0;
		plog.next_try = mono_s() + SPFKIT__MTA_LOG_RETRY_S;
		say_stderr(text);
		plog.fallback_said = 1;
	}
	pthread_mutex_unlock(&plog.lock);
}

/* Send one datagram on fd. 0: sent, or dropped because the daemon is
 * behind (never block the event loop on it); -1: it is gone. */
static int send_syslog(int fd, int prio, const char *msg, size_t len)
{
	if (send(fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) {
		if (atomic_load_explicit(&plog.dropped, memory_order_relaxed) != 0)
			report_dropped(prio);
		return 0;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
		atomic_fetch_add(&plog.dropped, 1);
		return 0;
	}
	syslog_gone(errno);
	return -1;
}

/* Room in front of the message for "<PRI>Mmm dd hh:mm:ss ident[pid]: ". */
#define PREFIX_ROOM 192

/* "<PRI>" (RFC 3164 §4.1.1: facility * 8 + severity) and the time
 * stamp (under 32 bytes, stamp_now()), into out; their length. */
#define PRI_STAMP_MAX 40
static size_t pri_stamp(int prio, char out[PRI_STAMP_MAX])
{
	const char *stamp = stamp_now();
	size_t stamp_len = strlen(stamp), pri = (size_t)(LOG_MAIL | (prio & 7)), p = 0;

	out[p++] = '<';
	if (pri >= 100)
		out[p++] = (char)('0' + pri / 100);
	if (pri >= 10)
		out[p++] = (char)('0' + pri / 10 % 10);
	out[p++] = (char)('0' + pri % 10);
	out[p++] = '>';
	memcpy(out + p, stamp, stamp_len);
	return p + stamp_len;
}

/*
 * Put "<PRI>", the time stamp and the tag in front of msg, in place;
 * their length, or 0 when they do not fit. Lock held. The tag ends the
 * prefix: msg - tag_len is the stderr line's start.
 */
static size_t syslog_prefix(int prio, char *msg)
{
	char prefix[PREFIX_ROOM];
	size_t p;

	if (PRI_STAMP_MAX + plog.tag_len > sizeof(prefix))
		return 0;
	p = pri_stamp(prio, prefix);
	memcpy(prefix + p, plog.tag, plog.tag_len);
	p += plog.tag_len;
	memcpy(msg - p, prefix, p);
	return p;
}

/* Where the next line goes: the syslog socket (its fd) or stderr (-1),
 * trying the socket again when it is time. Lock held. */
static int route(void)
{
	char text[300];

	if (plog.pid == 0)
		plog.pid = (long)getpid(); /* used without spfkit__mta_log_open() (unit tests) */
	if (plog.tag_len == 0) {
		int p = snprintf(plog.tag, sizeof(plog.tag), "%s[%ld]: ", plog.ident, plog.pid);

		plog.tag_len = p > 0 && (size_t)p < sizeof(plog.tag) ? (size_t)p : 0;
	}
	if (plog.to_stderr)
		return -1;
	if (!plog.connected && mono_s() >= plog.next_try && try_connect(mono_s()) == 0 &&
	    plog.fallback_said) {
		plog.fallback_said = 0;
		snprintf(text, sizeof(text), "syslog on %s answers again; logging there", plog.path);
		say_stderr(text);
	}
	return plog.connected ? plog.fd : -1;
}

/*
 * A line on stderr, one write() without the lock: whole wherever stderr
 * goes up to PIPE_BUF bytes (the longest a pipe writes at once), and on
 * a file or a socket whatever its length. A longer one is written under
 * the lock, so two of them never mix on a pipe.
 */
static void write_line(const char *s, size_t len)
{
	if (len <= PIPE_BUF) {
		write_stderr(s, len);
		return;
	}
	pthread_mutex_lock(&plog.lock);
	write_stderr(s, len);
	pthread_mutex_unlock(&plog.lock);
}

/*
 * A thread's held lines (spfkit__mta_log_hold()), in stderr's form
 * ("ident[pid]: text\n", the tag as it was when the thread began to
 * hold), at most PIPE_BUF bytes in all, so that one write() puts them
 * whole on a pipe; and each one's priority, for syslog's form.
 */
#define HOLD_LINES 64
_Static_assert(PIPE_BUF <= UINT16_MAX, "held line ends fit 16 bits");

struct held {
	size_t len, n;
	uint16_t end[HOLD_LINES];
	unsigned char prio[HOLD_LINES];
	char tag[sizeof(plog.tag)];
	size_t tag_len;
	char buf[PIPE_BUF];
};

static _Thread_local struct held *held;

int spfkit__mta_log_hold(void)
{
	if (held != NULL)
		return 0;
	held = calloc(1, sizeof(*held));
	if (held == NULL)
		return -1;
	pthread_mutex_lock(&plog.lock);
	(void)route(); /* makes the tag */
	memcpy(held->tag, plog.tag, plog.tag_len);
	held->tag_len = plog.tag_len;
	pthread_mutex_unlock(&plog.lock);
	return 0;
}

void spfkit__mta_log_unhold(void)
{
	spfkit__mta_log_flush();
	free(held);
	held = NULL;
}

/*
 * The held lines to the syslog socket fd, one datagram each; how many of
 * them are done with (sent, or dropped because the daemon is behind).
 * Fewer than all: the daemon is gone.
 */
static size_t send_held(int fd, const struct held *h)
{
	char prefix[HOLD_LINES][PRI_STAMP_MAX];
	struct iovec iov[HOLD_LINES][2];
	size_t i, done = 0;
	int sent;

	for (i = 0; i < h->n; i++) {
		size_t start = i > 0 ? h->end[i - 1] : 0;

		iov[i][0].iov_base = prefix[i];
		iov[i][0].iov_len = pri_stamp(h->prio[i], prefix[i]);
		iov[i][1].iov_base = (char *)(uintptr_t)(h->buf + start);
		iov[i][1].iov_len = h->end[i] - start - 1; /* no newline */
	}
	while (done < h->n) {
#ifdef __linux__
		struct mmsghdr m[HOLD_LINES];

		memset(m, 0, sizeof(m));
		for (i = done; i < h->n; i++) {
			m[i - done].msg_hdr.msg_iov = iov[i];
			m[i - done].msg_hdr.msg_iovlen = 2;
		}
		sent = sendmmsg(fd, m, (unsigned)(h->n - done), MSG_NOSIGNAL | MSG_DONTWAIT);
#else
		struct msghdr m;

		memset(&m, 0, sizeof(m));
		m.msg_iov = iov[done];
		m.msg_iovlen = 2;
		sent = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0 ? 1 : -1;
#endif
		if (sent > 0) {
			done += (size_t)sent;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			atomic_fetch_add(&plog.dropped, h->n - done);
			return h->n;
		}
		syslog_gone(errno);
		return done;
	}
	if (atomic_load_explicit(&plog.dropped, memory_order_relaxed) != 0)
		report_dropped(h->prio[h->n - 1]);
	return h->n;
}

void spfkit__mta_log_flush(void)
{
	struct held *h = held;
	size_t done = 0, start;
	int fd;

	if (h == NULL || h->n == 0)
		return;
	pthread_mutex_lock(&plog.lock);
	fd = route();
	pthread_mutex_unlock(&plog.lock);
	if (fd >= 0)
		done = send_held(fd, h);
	if (done < h->n) {
		start = done > 0 ? h->end[done - 1] : 0;
		write_stderr(h->buf + start, h->len - start);
	}
	h->len = h->n = 0;
}

/* Keep the line msg[0..len) for the next flush; 0 when it does not fit
 * even alone (the lines held before it are written first, in order). */
static int hold_line(struct held *h, int prio, const char *msg, size_t len)
{
	size_t need = h->tag_len + len + 1;

	if (need > sizeof(h->buf) || h->n == HOLD_LINES || h->len + need > sizeof(h->buf))
		spfkit__mta_log_flush();
	if (need > sizeof(h->buf))
		return 0;
	memcpy(h->buf + h->len, h->tag, h->tag_len);
	memcpy(h->buf + h->len + h->tag_len, msg, len);
	h->buf[h->len + need - 1] = '\n';
	h->len += need;
	h->end[h->n] = (uint16_t)h->len;
	h->prio[h->n++] = (unsigned char)prio;
	return 1;
}

/*
 * Send msg[0..len), which sits PREFIX_ROOM bytes into its buffer and has
 * one byte of room after it: the prefix goes in front, in place.
 */
static void emit(int prio, char *msg, size_t len)
{
	size_t tag_len, p = 0;
	int fd;

	if (held != NULL && hold_line(held, prio, msg, len))
		return;
	pthread_mutex_lock(&plog.lock);
	fd = route();
	tag_len = plog.tag_len;
	if (fd >= 0)
		p = syslog_prefix(prio, msg); /* it ends with the tag, where stderr's line starts */
	if (p == 0)
		memcpy(msg - tag_len, plog.tag, tag_len);
	pthread_mutex_unlock(&plog.lock);
	if (p > 0 && send_syslog(fd, prio, msg - p, len + p) == 0)
		return;
	msg[len] = '\n';
	write_line(msg - tag_len, len + 1 + tag_len);
}

void spfkit__mta_log_vprintf(int prio, const char *fmt, va_list ap)
{
	char buf[PREFIX_ROOM + SPFKIT__MTA_LOG_LINE_MAX];
	char *msg = buf + PREFIX_ROOM;
	size_t cap = sizeof(buf) - PREFIX_ROOM - 1; /* one for stderr's newline */
	int n = vsnprintf(msg, cap, fmt, ap);
	size_t len;

	if (n < 0)
		return;
	len = (size_t)n;
	if (len >= cap) {
		len = cap - 1;
		memcpy(msg + len - 3, "...", 3);
	}
	emit(prio, msg, len);
}

void spfkit__mta_log_write(int prio, const char *text, size_t len)
{
	char buf[PREFIX_ROOM + SPFKIT__MTA_LOG_LINE_MAX];
	char *msg = buf + PREFIX_ROOM;
	size_t cap = sizeof(buf) - PREFIX_ROOM - 1;

	if (len >= cap) {
		memcpy(msg, text, cap - 4);
		memcpy(msg + cap - 4, "...", 3);
		len = cap - 1;
	} else {
		memcpy(msg, text, len);
	}
	emit(prio, msg, len);
}

void spfkit__mta_log_printf(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spfkit__mta_log_vprintf(prio, fmt, ap);
	va_end(ap);
}
