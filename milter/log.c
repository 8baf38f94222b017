/*
 * The milter's log: syslog (facility mail) or stderr, one line per call,
 * from any thread (libmilter runs a thread per connection).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "milter.h"

static int to_stderr;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void spfkit__milter_log_init(int use_stderr)
{
	to_stderr = use_stderr;
	if (!use_stderr)
		openlog("spfkit-milter", LOG_PID, LOG_MAIL);
}

void spfkit__milter_log(int prio, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!to_stderr) {
		syslog(prio, "%s", line);
		return;
	}
	/* whole lines, never two threads' halves mixed */
	pthread_mutex_lock(&lock);
	fprintf(stderr, "spfkit-milter: %s\n", line);
	fflush(stderr);
	pthread_mutex_unlock(&lock);
}
