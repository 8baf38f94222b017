/*
 * The daemons' log channel (spfkit-policyd, spfkit-milter,
 * spfkit-smtpd-filter): one formatted line per message, sent as
 * one datagram to the syslog socket (facility mail) or written with one
 * write() to stderr. Not glibc's syslog(): that one opens a socket and
 * tries to connect on every call while no syslog daemon listens, which
 * costs two failing system calls per log line, and it formats the
 * timestamp anew each time.
 *
 * When nobody listens on the socket (absent, or connection refused), the
 * lines go to stderr, and a line on stderr says so, once; the socket is
 * tried again at most once per SPFKIT__MTA_LOG_RETRY_S seconds, and a line
 * says when syslog answers again. Thread-safe: policyd's workers log
 * here from their threads, and none waits for another's
 * send or write (the lock guards the channel's state, not the system
 * call); a line up to PIPE_BUF bytes arrives whole wherever stderr goes.
 * Not an API.
 */
#ifndef SPFKIT_MTA_LOG_H
#define SPFKIT_MTA_LOG_H

#include <stdarg.h>
#include <stddef.h>

#define SPFKIT__MTA_LOG_DEFAULT_SOCKET "/dev/log"
/* Between two attempts to reach a syslog daemon that did not answer. */
#define SPFKIT__MTA_LOG_RETRY_S 10
/* The longest line sent, prefix included; longer ones end in "...". */
#define SPFKIT__MTA_LOG_LINE_MAX 8192

/*
 * Start logging as `ident` (kept, not copied). to_stderr: every line to
 * stderr; otherwise to the syslog socket at socket_path (NULL: /dev/log,
 * kept, not copied). Never fails: a socket that does not answer means
 * stderr, said once.
 */
void spfkit__mta_log_open(const char *ident, int to_stderr, const char *socket_path);

/* One line at priority prio (LOG_ERR ... LOG_DEBUG). */
void spfkit__mta_log_vprintf(int prio, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void spfkit__mta_log_printf(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line already formatted (no newline): copied once, never formatted. */
void spfkit__mta_log_write(int prio, const char *text, size_t len);

/*
 * Hold the calling thread's lines until spfkit__mta_log_flush(): an
 * event loop's thread holds the lines of one pass over its ready
 * connections and sends them at the pass's end with one write() to
 * stderr, or one sendmmsg() of a datagram each, not one system call a
 * line. At most PIPE_BUF bytes or 64 lines wait; more, or a longer
 * line, flush on the way. -1: no memory (lines then go one by one).
 */
int spfkit__mta_log_hold(void);
void spfkit__mta_log_flush(void);
/* Flush and stop holding (before the thread ends). */
void spfkit__mta_log_unhold(void);

/* 1 while lines go to the syslog socket (tests, and what --help says). */
int spfkit__mta_log_to_syslog(void);

void spfkit__mta_log_close(void);

#endif
