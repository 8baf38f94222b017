/*
 * The daemons' log channel (see log.h): our own datagram socket to
 * the syslog daemon, with stderr behind it when none listens.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

/*
 * Put "<PRI>" (RFC 3164 §4.1.1: facility * 8 + severity), the time stamp
 * and the tag in front of msg, in place; their length, or 0 when they do
 * not fit. Lock held. The tag ends the prefix: msg - tag_len is the
 * stderr line's start.
 */
static size_t syslog_prefix(int prio, char *msg)
{
	char prefix[PREFIX_ROOM];
	const char *stamp = stamp_now();
	size_t stamp_len = strlen(stamp), pri = (size_t)(LOG_MAIL | (prio & 7)), p = 0;

	prefix[p++] = '<';
	if (pri >= 100)
		prefix[p++] = (char)('0' + pri / 100);
	if (pri >= 10)
		prefix[p++] = (char)('0' + pri / 10 % 10);
	prefix[p++] = (char)('0' + pri % 10);
	prefix[p++] = '>';
	if (p + stamp_len + plog.tag_len > sizeof(prefix))
		return 0;
	memcpy(prefix + p, stamp, stamp_len);
	p += stamp_len;
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
 * Send msg[0..len), which sits PREFIX_ROOM bytes into its buffer and has
 * one byte of room after it: the prefix goes in front, in place.
 */
static void emit(int prio, char *msg, size_t len)
{
	size_t tag_len, p = 0;
	int fd;

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
