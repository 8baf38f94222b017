/*
 * spfkit-policyd: its options, its sockets, its workers and its signals;
 * the rest of main() is the daemons' shared one (mta/daemon_main.h).
 *
 * Run like policyd-spf (spawn mode: one client on stdin/stdout, the
 * configuration file as the only argument), or as a daemon with
 * --listen unix:/path and/or --listen inet:HOST:PORT.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "cleanup.h"
#include "config.h"
#include "daemon.h"
#include "daemon_main.h"
#include "listen.h"
#include "log.h"
#include "peruser.h"
#include "spfkit_util.h"
#include "server.h"

#define PROG "spfkit-policyd"
#define MAX_LISTEN 8
/* --workers: more threads than this only add context switches */
#define MAX_WORKERS 256

/* One worker beyond the first: its loop, configuration, DNS and server. */
struct worker {
	struct event_base *base;
	struct spfkit__mta_dns dns;
	struct spfkit__policyd *srv;
};

struct policyd {
	const char *listen[MAX_LISTEN];
	size_t n_listen;
	int stdio;
	struct spfkit__policyd_opts srv_opts;
	long workers; /* --workers; 0: one per online CPU */
	struct spfkit__policyd_cleanup *cleanup; /* what to remove at exit */
	char fd_note[256];                       /* how --max-connections was clamped */
	struct spfkit__policyd *srv;             /* worker 0's, on the main thread */
	struct spfkit__policyd_pool *pool;       /* NULL: one worker */
	unsigned n;                              /* workers running */
	struct worker w[MAX_WORKERS];
	struct event *grace;
};

static const char usage[] =
	"usage: spfkit-policyd [options] [CONFIG]\n"
	"  Postfix SPF policy service, a drop-in for policyd-spf.\n"
	"  -c, --config FILE       policyd-spf.conf (default " SPFKIT_MTA_CONF_DEFAULT_PATH ")\n"
	"      --check-config      report problems of the configuration with file:line, then exit\n"
	"  -l, --listen ADDR       unix:/path or inet:HOST:PORT (repeatable); none: spawn mode\n"
	"      --stdio             spawn mode: one client on stdin/stdout (the default)\n"
	"  -u, --user USER[:GROUP] drop privileges after opening the sockets\n"
	"  -p, --pid-file FILE     write the process id there\n"
	"      --socket-mode MODE  permissions of unix sockets (octal, default 0666)\n"
	SPFKIT__MTA_USAGE_RESOLVER
	"      --log syslog|stderr where log lines go (default syslog, facility mail; when no\n"
	"                          syslog daemon answers, stderr, said once, retried every 10 s)\n"
	"      --log-socket PATH   the syslog daemon's socket (default /dev/log)\n"
	"  -w, --workers N         event loops on threads of their own, 1-256 (default: one per\n"
	"                          online CPU; spawn mode always runs one)\n"
	"      --max-connections N (default 4096; lowered to fit the open-file limit)\n"
	"      --max-per-client N  TCP connections from one address (default max-connections/4;\n"
	"                          UNIX-socket clients are not counted)\n"
	"      --idle-timeout S    close a connection idle that long (default 600)\n"
	"      --request-timeout S drop a client whose request is not complete S seconds after\n"
	"                          its first byte (default 30)\n"
	"      --time-limit S      answer every request within S seconds, DNS whitelists\n"
	"                          included: what DNS has not answered by then is a\n"
	"                          temperror (default 40)\n"
	"      --metrics HOST:PORT serve counters on http://HOST:PORT/metrics (Prometheus);\n"
	"                          PORT alone: 127.0.0.1 (default: off; Metrics_Listen)\n"
	"  -h, --help, -V, --version\n";

enum { O_STDIO = SPFKIT__MTA_OWN_OPTIONS, O_MAXC, O_PER_CLIENT, O_IDLE, O_REQ, O_LOG_SOCKET, O_TIME };

static const struct option own_options[] = {
	{"listen", required_argument, NULL, 'l'}, {"stdio", no_argument, NULL, O_STDIO},
	{"log-socket", required_argument, NULL, O_LOG_SOCKET},
	{"workers", required_argument, NULL, 'w'}, {"max-connections", required_argument, NULL, O_MAXC},
	{"max-per-client", required_argument, NULL, O_PER_CLIENT},
	{"idle-timeout", required_argument, NULL, O_IDLE},
	{"request-timeout", required_argument, NULL, O_REQ},
	{"time-limit", required_argument, NULL, O_TIME}, {NULL, 0, NULL, 0},
};

static int option(struct spfkit__mta_daemon *d, int ch, const char *value)
{
	struct policyd *p = d->self;
	long v;

	switch (ch) {
	case 'l':
		if (p->n_listen == MAX_LISTEN) {
			fprintf(stderr, PROG ": at most %d --listen\n", MAX_LISTEN);
			return 2;
		}
		p->listen[p->n_listen++] = value;
		return 0;
	case O_STDIO: p->stdio = 1; return 0;
	case O_LOG_SOCKET:
		if (value[0] == '\0' || strlen(value) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return 1;
		d->log_socket = value;
		return 0;
	case 'w':
		p->workers = spfkit__mta_number(value, 1, MAX_WORKERS);
		if (p->workers < 0) {
			fprintf(stderr, PROG ": bad value '%s' for --workers "
				"(a whole number from 1 to %d)\n", value, MAX_WORKERS);
			return 2;
		}
		return 0;
	case O_MAXC:
	case O_PER_CLIENT:
		v = spfkit__mta_number(value, 1, 1000000);
		if (v < 0)
			return 1;
		*(ch == O_MAXC ? &p->srv_opts.max_connections : &p->srv_opts.max_per_client) = (unsigned)v;
		return 0;
	case O_IDLE:
	case O_REQ:
		v = spfkit__mta_number(value, 1, 86400);
		if (v < 0)
			return 1;
		*(ch == O_IDLE ? &p->srv_opts.idle_timeout : &p->srv_opts.request_timeout) = (int)v;
		return 0;
	case O_TIME:
		v = spfkit__mta_number(value, 1, 3600);
		if (v < 0)
			return 1;
		p->srv_opts.time_limit = (int)v;
		return 0;
	default:
		return -1;
	}
}

static int args_done(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	if (p->stdio && p->n_listen > 0) {
		fputs(PROG ": --stdio and --listen exclude each other\n", stderr);
		return 2;
	}
	/* stdin may be a regular file when run by hand */
	d->avoid_epoll = p->n_listen == 0;
	return 0;
}

/*
 * Postfix's spawn(8) gives the child the client's socket as its standard
 * input, output and error: a byte written to stderr reaches Postfix ahead
 * of the reply and corrupts it. So when descriptor 2 is the very socket of
 * descriptor 0 or 1 (or is not open: the next open() would get it), it is
 * pointed at /dev/null before anything can write there (our lines,
 * libevent's, c-ares's), and the log channel sends to syslog only: nowhere
 * when no syslog daemon answers, for there is nobody else to tell.
 * Postfix logs the exit status of a child that cannot start.
 * 0: left alone; 1: now /dev/null; -1: /dev/null cannot be opened.
 */
static int stderr_off_the_client(void)
{
	struct stat err, st;
	int fd, i, same = 0;

	if (fstat(2, &err) == 0) {
		for (i = 0; i < 2 && S_ISSOCK(err.st_mode); i++)
			same |= fstat(i, &st) == 0 && st.st_dev == err.st_dev && st.st_ino == err.st_ino;
		if (!same)
			return 0;
	}
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return -1;
	if (fd != 2 && (dup2(fd, 2) != 2 || close(fd) != 0))
		return -1;
	return 1;
}

static int prepare(struct spfkit__mta_daemon *d)
{
	int rc = stderr_off_the_client();

	if (rc < 0)
		return 1; /* stderr is the client's: not a word may go there */
	/* stderr was the client's connection and now points at /dev/null */
	d->quiet_stderr = rc;
	return 0;
}

/* ---- configuration ---------------------------------------------------- */

static void say_diag(void *arg, const struct spfkit__mta_diag *diag)
{
	const struct spfkit__mta_daemon *d = arg;

	if (d->quiet_stderr)
		spfkit__mta_log_printf(diag->is_error ? LOG_ERR : LOG_WARNING, "%s:%u: %s: %s",
				       diag->file, diag->line, diag->is_error ? "error" : "warning",
				       diag->text);
	else
		fprintf(stderr, PROG ": %s:%u: %s: %s\n", diag->file, diag->line,
			diag->is_error ? "error" : "warning", diag->text);
}

/* Per_User's file, read once here for its problems (--check-config, start); each server reads its own. */
static int config_check(struct spfkit__mta_daemon *d, struct spfkit__mta_config *cfg)
{
	struct policyd *p = d->self;
	struct spfkit__policyd_peruser *t = NULL;
	int rc;

	p->srv_opts.config_path = d->config_path;
	if (cfg->per_user == NULL)
		return 0;
	rc = spfkit__policyd_peruser_load(cfg->per_user, d->config_path, say_diag, d, &t);
	spfkit__policyd_peruser_free(t);
	return rc;
}

/* ---- sockets ---------------------------------------------------------- */

/* A live server's socket is never taken; the file is removed at exit. */
static int listen_unix(const char *path, mode_t mode, struct spfkit__policyd_cleanup *cleanup)
{
	int fd = spfkit__mta_listen_unix(PROG, path, mode, (uid_t)-1, (gid_t)-1);

	if (fd < 0)
		return -1;
	if (spfkit__policyd_cleanup_add(cleanup, path) != 0) {
		fprintf(stderr, PROG ": unix:%s: cannot note it for removal\n", path);
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* "HOST:PORT" or "[V6]:PORT"; HOST numeric or a name from /etc/hosts. */
static int listen_inet(const char *spec, char *bound, size_t bsize)
{
	char host[256], port[16];
	const char *colon = strrchr(spec, ':');
	unsigned bound_port;
	int fd;
	size_t hl;

	if (colon == NULL || strlen(colon + 1) >= sizeof(port) || (size_t)(colon - spec) >= sizeof(host))
		goto bad;
	hl = (size_t)(colon - spec);
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	memcpy(port, colon + 1, strlen(colon + 1) + 1);
	/* getaddrinfo() would take 99999 and bind port 99999 mod 65536 */
	if (!spfkit__mta_port_ok(port, 1))
		goto bad;
	fd = spfkit__mta_listen_tcp(PROG, host, port, AF_UNSPEC, &bound_port);
	if (fd < 0)
		return -1;
	/* the port actually bound, so a test can ask for port 0 */
	snprintf(bound, bsize, "inet:%s:%u", host, bound_port);
	return fd;
bad:
	fprintf(stderr, PROG ": bad listen address inet:%s (want inet:HOST:PORT)\n", spec);
	return -1;
}

static int open_listeners(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;
	mode_t mode = d->socket_mode >= 0 ? (mode_t)d->socket_mode : 0666;
	size_t i;

	for (i = 0; i < p->n_listen; i++) {
		const char *a = p->listen[i];
		char bound[320];
		int fd;

		snprintf(bound, sizeof(bound), "%s", a);
		if (strncmp(a, "unix:", 5) == 0)
			fd = listen_unix(a + 5, mode, p->cleanup);
		else if (strncmp(a, "inet:", 5) == 0)
			fd = listen_inet(a + 5, bound, sizeof(bound));
		else {
			fprintf(stderr, PROG ": bad listen address %s (unix:/path or inet:HOST:PORT)\n", a);
			return -1;
		}
		if (fd < 0 || spfkit__policyd_listen_fd(p->srv, fd, bound) != 0)
			return -1;
		spfkit__policyd_log(p->srv, LOG_NOTICE, "listening on %s", bound);
	}
	return 0;
}

/* ---- descriptors ---------------------------------------------------------- */

/* c-ares's sockets (a UDP and a TCP one per server, at most 3 servers), with room */
#define FD_DNS 16
/* the configuration file on SIGHUP, syslog, the cleanup pipe, the event loop's own */
#define FD_SPARE 8

/*
 * Each connection costs a descriptor. When the open-file limit cannot
 * hold --max-connections beside what the daemon needs itself, accept()
 * would fail with EMFILE, and worse, c-ares could not open a socket, so
 * every answer would become a temperror (RFC 7208 §2.6.6) and forged
 * mail would pass. So raise the soft limit towards the hard one, and if
 * that is not enough, lower --max-connections and say so.
 */
static void fit_fd_limit(struct policyd *p)
{
	size_t want = p->srv_opts.max_connections != 0 ? p->srv_opts.max_connections
						       : SPFKIT_POLICYD_MAX_CONNECTIONS;
	/* each worker has its own DNS sockets, event loop and mailbox pipe */
	size_t reserve = p->n_listen + (size_t)p->workers * (FD_DNS + 4) + FD_SPARE;
	size_t fit;

	if (p->n_listen == 0)
		return;
	spfkit__mta_fit_fd_limit(want, reserve, &fit, p->fd_note, sizeof(p->fd_note));
	if (p->fd_note[0] != '\0')
		p->srv_opts.max_connections = (unsigned)fit;
}

static int setup(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	if (p->workers == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		p->workers = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : cpus;
	}
#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD)
	/*
	 * Every request allocates its evaluations and frees them a moment
	 * later. With many requests in flight, glibc gave the top of the heap
	 * back to the kernel after each wave and took it again for the next:
	 * a brk() and page faults per request, three times the CPU per
	 * request at 64 clients than at 8. Keep what was freed (the peak is
	 * bounded by --max-connections requests in flight) and leave
	 * allocations of up to 4 MiB on the heap.
	 */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_TOP_PAD, 1 << 20);
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
	p->cleanup = spfkit__policyd_cleanup_new();
	if (p->cleanup == NULL) {
		spfkit__mta_daemon_say(d, "out of memory");
		return -1;
	}
	fit_fd_limit(p);
	p->srv_opts.receiver = d->receiver;
	p->srv_opts.log_stderr = d->log_stderr;
	return 0;
}

/* ---- workers ---------------------------------------------------------------- */

/*
 * Each worker reads the configuration itself (the server owns and frees
 * it; a reload replaces it per worker). Problems were said when worker 0
 * read it a moment ago, so this read is quiet.
 */
static int worker_open(struct spfkit__mta_daemon *d, struct worker *w)
{
	struct policyd *p = d->self;
	struct spfkit__mta_config *cfg = NULL;
	int rc;

	w->base = event_base_new();
	if (w->base == NULL)
		return -1;
	if (spfkit__mta_dns_open_more(PROG, &d->dns_opts, &d->dns, &w->dns) != 0)
		return -1;
	rc = d->config_path != NULL ? spfkit__mta_config_load(d->config_path, NULL, NULL, NULL, &cfg)
				    : spfkit__mta_config_defaults(NULL, &cfg);
	if (rc != 0) {
		fprintf(stderr, PROG ": %s: %s; not starting\n", d->config, spfkit_strerror(rc));
		return -1;
	}
	if (spfkit__policyd_new(w->base, &p->srv_opts, cfg, w->dns.r, w->dns.layer, &w->srv) != 0) {
		spfkit__mta_config_free(cfg);
		return -1;
	}
	return 0;
}

static void worker_close(struct worker *w)
{
	spfkit__policyd_free(w->srv);
	w->srv = NULL;
	spfkit__mta_dns_close(&w->dns);
	if (w->base != NULL)
		event_base_free(w->base);
	w->base = NULL;
}

/* Workers 1..n-1 and the pool of all n; 0, or -1 (said). */
static int pool_open(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;
	struct spfkit__policyd *all[MAX_WORKERS];
	unsigned i;

	all[0] = p->srv;
	for (i = 1; i < p->n; i++) {
		if (worker_open(d, &p->w[i]) != 0) {
			fprintf(stderr, PROG ": cannot start worker %u\n", i);
			return -1;
		}
		all[i] = p->w[i].srv;
	}
	if (spfkit__policyd_pool_new(all, p->n, &p->pool) != 0) {
		fputs(PROG ": cannot make the worker pool\n", stderr);
		return -1;
	}
	return 0;
}

/* ---- signals ------------------------------------------------------------ */

static void on_grace(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__mta_daemon *d = arg;
	struct policyd *p = d->self;

	(void)fd;
	(void)what;
	spfkit__policyd_log(p->srv, LOG_WARNING, "requests still running at the end of the grace time");
	if (p->pool != NULL)
		spfkit__policyd_pool_broadcast(p->pool, SPFKIT__POOL_STOP);
	event_base_loopexit(d->base, NULL);
}

/* SIGTERM, SIGINT: the requests in flight are answered first, for 60 s at most. */
static void stop(struct spfkit__mta_daemon *d, int sig)
{
	struct policyd *p = d->self;
	struct timeval grace = {60, 0};

	spfkit__policyd_log(p->srv, LOG_NOTICE, "signal %d: finishing the requests in flight", sig);
	if (p->pool != NULL)
		spfkit__policyd_pool_broadcast(p->pool, SPFKIT__POOL_DRAIN);
	spfkit__policyd_drain(p->srv);
	if (p->grace != NULL && !evtimer_pending(p->grace, NULL))
		evtimer_add(p->grace, &grace);
}

/* SIGHUP: each worker reads the file again itself (server.c). */
static void reload(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	(void)spfkit__policyd_reload(p->srv);
	if (p->pool != NULL)
		spfkit__policyd_pool_broadcast(p->pool, SPFKIT__POOL_RELOAD);
}

/* ---- the run -------------------------------------------------------------- */

static int start(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	/* spawn mode has one client: more loops could not serve it */
	p->n = p->n_listen > 0 ? (unsigned)p->workers : 1;
	p->srv_opts.metrics = d->registry;
	if (spfkit__policyd_new(d->base, &p->srv_opts, d->cfg, d->dns.r, d->dns.layer, &p->srv) != 0)
		return -1;
	d->cfg = NULL; /* the server's */
	if (p->n > 1 && pool_open(d) != 0)
		return -1;
	p->grace = evtimer_new(d->base, on_grace, d);
	return p->grace != NULL ? 0 : -1;
}

static int serve(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	if (p->fd_note[0] != '\0')
		spfkit__policyd_log(p->srv, LOG_WARNING, "%s", p->fd_note);
	if (p->n_listen > 0 ? open_listeners(d) != 0 : spfkit__policyd_serve_stdio(p->srv, 0, 1) != 0)
		return -1;
	if (d->pid_file != NULL) {
		if (spfkit__mta_write_pid_file(PROG, d->pid_file) != 0)
			return -1;
		if (spfkit__policyd_cleanup_add(p->cleanup, d->pid_file) != 0) {
			fprintf(stderr, PROG ": pid file %s: cannot note it for removal\n", d->pid_file);
			unlink(d->pid_file);
			return -1;
		}
	}
	if (d->user != NULL && spfkit__policyd_cleanup_keeper(p->cleanup) != 0) {
		fprintf(stderr, PROG ": cannot fork the cleanup process: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* After the privilege drop: setuid() applies to every thread, but say it plainly. */
static int running(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	if (p->pool == NULL)
		return 0;
	if (spfkit__policyd_pool_start(p->pool) != 0) {
		fputs(PROG ": cannot start the worker threads\n", stderr);
		spfkit__policyd_pool_join(p->pool);
		return -1;
	}
	spfkit__policyd_log(p->srv, LOG_NOTICE, "%u workers", p->n);
	return 0;
}

static void finish(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;
	unsigned k;

	if (p->pool != NULL)
		spfkit__policyd_pool_join(p->pool);
	if (p->grace != NULL)
		event_free(p->grace);
	p->grace = NULL;
	/* the workers' loops have ended: their servers are freed from here */
	for (k = 1; k < p->n; k++) {
		spfkit__policyd_free(p->w[k].srv);
		p->w[k].srv = NULL;
	}
	spfkit__policyd_free(p->srv); /* closes the listeners first */
	p->srv = NULL;
	spfkit__policyd_pool_free(p->pool);
	p->pool = NULL;
	for (k = 1; k < p->n; k++)
		worker_close(&p->w[k]);
}

static void cleanup(struct spfkit__mta_daemon *d)
{
	struct policyd *p = d->self;

	spfkit__policyd_cleanup_run(p->cleanup);
	spfkit__policyd_cleanup_free(p->cleanup);
	p->cleanup = NULL;
}

/* The shared part's lines (metrics on ...) under debugLevel, as the server's own. */
static void vlog(struct spfkit__mta_daemon *d, int prio, const char *fmt, va_list ap)
{
	struct policyd *p = d->self;

	if (p->srv != NULL)
		spfkit__policyd_vlog(p->srv, prio, fmt, ap);
	else
		spfkit__mta_log_vprintf(prio, fmt, ap);
}

static const struct spfkit__mta_daemon_desc desc = {
	.name = PROG,
	.usage = usage,
	.takes = SPFKIT__MTA_TAKES_CONFIG_ARG | SPFKIT__MTA_TAKES_CHECK_CONFIG |
		 SPFKIT__MTA_TAKES_USER | SPFKIT__MTA_TAKES_PID_FILE | SPFKIT__MTA_TAKES_SOCKET_MODE,
	.log_stderr = 0,
	.short_options = "l:w:",
	.options = own_options,
	.prepare = prepare,
	.option = option,
	.args_done = args_done,
	.config_check = config_check,
	.setup = setup,
	.start = start,
	.serve = serve,
	.running = running,
	.stop = stop,
	.reload = reload,
	.finish = finish,
	.cleanup = cleanup,
	.vlog = vlog,
};

int main(int argc, char **argv)
{
	/* static: MAX_WORKERS workers' state is too much for the stack */
	static struct policyd p;

	return spfkit__mta_daemon_main(&desc, &p, argc, argv);
}
