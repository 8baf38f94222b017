/*
 * spfkit-policyd: options, sockets, privilege drop, PID file, signals.
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
#include <signal.h>
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
#include "engine.h"
#include "listen.h"
#include "metrics_http.h"
#include "peruser.h"
#include "log.h"
#include "options.h"
#include "spfkit_util.h"
#include "server.h"

#define MAX_LISTEN 8
/* --workers: more threads than this only add context switches */
#define MAX_WORKERS 256

struct options {
	const char *config;
	int config_given;
	int check_config;
	const char *listen[MAX_LISTEN];
	size_t n_listen;
	int stdio;
	const char *user;
	const char *pid_file;
	struct spfkit__mta_dns_opts dns_opts; /* --dns, --dns-timeout, --dns-cache-mb, --zone* */
	mode_t socket_mode;
	struct spfkit__policyd_opts srv;
	long workers;        /* --workers; 0: one per online CPU */
	const char *log_socket; /* --log-socket; NULL: /dev/log */
	struct spfkit__policyd_cleanup *cleanup; /* what to remove at exit */
	char fd_note[256];                       /* how --max-connections was clamped */
	const char *metrics; /* --metrics, else Metrics_Listen; NULL: no /metrics */
};

static void usage(FILE *f)
{
	fputs("usage: spfkit-policyd [options] [CONFIG]\n"
	      "  Postfix SPF policy service, a drop-in for policyd-spf.\n"
	      "  -c, --config FILE       policyd-spf.conf (default " SPFKIT_MTA_CONF_DEFAULT_PATH ")\n"
	      "      --check-config      report problems of the configuration with file:line, then exit\n"
	      "  -l, --listen ADDR       unix:/path or inet:HOST:PORT (repeatable); none: spawn mode\n"
	      "      --stdio             spawn mode: one client on stdin/stdout (the default)\n"
	      "  -u, --user USER[:GROUP] drop privileges after opening the sockets\n"
	      "  -p, --pid-file FILE     write the process id there\n"
	      "      --socket-mode MODE  permissions of unix sockets (octal, default 0666)\n"
	      "      --dns SERVERS       DNS servers HOST[:PORT],... (default: /etc/resolv.conf)\n"
	      "      --dns-timeout MS    per-try DNS timeout\n"
	      "      --dns-cache-mb N    answer cache size (default 4; 0: none)\n"
	      "      --zone FILE         answer DNS from a zone file (tests, offline use)\n"
	      "      --zone-timeout NAME with --zone: questions for NAME time out (tests)\n"
	      "      --receiver NAME     this host's name in headers (default: the host name)\n"
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
	      "  -h, --help, -V, --version\n",
	      f);
}

static const char *option_name(const struct option *longs, int ch)
{
	size_t i;

	for (i = 0; longs[i].name != NULL; i++)
		if (longs[i].val == ch)
			return longs[i].name;
	return "?";
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { O_CHECK = 256, O_STDIO, O_MODE, O_DNS, O_DNS_TIMEOUT, O_DNS_CACHE, O_ZONE, O_ZONE_TIMEOUT,
	       O_RECEIVER, O_LOG, O_MAXC, O_PER_CLIENT, O_IDLE, O_REQ, O_LOG_SOCKET, O_TIME,
	       O_METRICS };
	static const struct option longs[] = {
		{"config", required_argument, NULL, 'c'}, {"check-config", no_argument, NULL, O_CHECK},
		{"listen", required_argument, NULL, 'l'}, {"stdio", no_argument, NULL, O_STDIO},
		{"user", required_argument, NULL, 'u'}, {"pid-file", required_argument, NULL, 'p'},
		{"socket-mode", required_argument, NULL, O_MODE}, SPFKIT__MTA_DNS_OPTIONS(O_DNS),
		{"receiver", required_argument, NULL, O_RECEIVER},
		{"log", required_argument, NULL, O_LOG},
		{"log-socket", required_argument, NULL, O_LOG_SOCKET},
		{"workers", required_argument, NULL, 'w'}, {"max-connections", required_argument, NULL, O_MAXC},
		{"max-per-client", required_argument, NULL, O_PER_CLIENT},
		{"idle-timeout", required_argument, NULL, O_IDLE},
		{"request-timeout", required_argument, NULL, O_REQ},
		{"time-limit", required_argument, NULL, O_TIME}, {"help", no_argument, NULL, 'h'},
		{"metrics", required_argument, NULL, O_METRICS},
		{"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0},
	};
	int ch;
	long v;
	char *end;

	o->config = SPFKIT_MTA_CONF_DEFAULT_PATH;
	o->socket_mode = 0666;
	o->dns_opts.cache_mb = 4;
	while ((ch = getopt_long(argc, argv, "c:l:u:p:w:hV", longs, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; o->config_given = 1; break;
		case O_CHECK: o->check_config = 1; break;
		case 'l':
			if (o->n_listen == MAX_LISTEN) {
				fprintf(stderr, "spfkit-policyd: at most %d --listen\n", MAX_LISTEN);
				return 2;
			}
			o->listen[o->n_listen++] = optarg;
			break;
		case O_STDIO: o->stdio = 1; break;
		case 'u': o->user = optarg; break;
		case 'p': o->pid_file = optarg; break;
		case O_MODE:
			v = strtol(optarg, &end, 8);
			if (*end != '\0' || v < 0 || v > 0777)
				goto bad;
			o->socket_mode = (mode_t)v;
			break;
		case O_DNS: case O_DNS_TIMEOUT: case O_DNS_CACHE: case O_ZONE: case O_ZONE_TIMEOUT:
			if (spfkit__mta_dns_option(&o->dns_opts, ch - O_DNS, optarg) != 0)
				goto bad;
			break;
		case O_RECEIVER: o->srv.receiver = optarg; break;
		case O_LOG:
			o->srv.log_stderr = spfkit__mta_log_option(optarg);
			if (o->srv.log_stderr < 0)
				goto bad;
			break;
		case O_LOG_SOCKET:
			if (optarg[0] == '\0' || strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path))
				goto bad;
			o->log_socket = optarg;
			break;
		case 'w':
			o->workers = spfkit__mta_number(optarg, 1, MAX_WORKERS);
			if (o->workers < 0) {
				fprintf(stderr, "spfkit-policyd: bad value '%s' for --workers "
					"(a whole number from 1 to %d)\n", optarg, MAX_WORKERS);
				return 2;
			}
			break;
		case O_MAXC:
			v = spfkit__mta_number(optarg, 1, 1000000);
			if (v < 0)
				goto bad;
			o->srv.max_connections = (unsigned)v;
			break;
		case O_PER_CLIENT:
			v = spfkit__mta_number(optarg, 1, 1000000);
			if (v < 0)
				goto bad;
			o->srv.max_per_client = (unsigned)v;
			break;
		case O_IDLE:
		case O_REQ:
			v = spfkit__mta_number(optarg, 1, 86400);
			if (v < 0)
				goto bad;
			*(ch == O_IDLE ? &o->srv.idle_timeout : &o->srv.request_timeout) = (int)v;
			break;
		case O_TIME:
			v = spfkit__mta_number(optarg, 1, 3600);
			if (v < 0)
				goto bad;
			o->srv.time_limit = (int)v;
			break;
		case O_METRICS: o->metrics = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': puts("spfkit-policyd " SPFKIT_VERSION_STRING); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (spfkit__mta_config_argument(argc, argv, &o->config, &o->config_given) != 0) {
		usage(stderr);
		return 2;
	}
	if (o->stdio && o->n_listen > 0) {
		fputs("spfkit-policyd: --stdio and --listen exclude each other\n", stderr);
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, "spfkit-policyd: bad value '%s' for --%s\n", optarg, option_name(longs, ch));
	return 2;
}

/* ---- stderr ----------------------------------------------------------- */

/* stderr was the client's connection and now points at /dev/null (see below). */
static int stderr_was_client;

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

/* A problem at start: on stderr, or to syslog when stderr was the client. */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (stderr_was_client) {
		spfkit__mta_log_vprintf(LOG_ERR, fmt, ap);
	} else {
		fputs("spfkit-policyd: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

/* ---- configuration ---------------------------------------------------- */

/* The file, or the defaults when the default one is not there (mta/daemon.h). */
static void say_diag(void *arg, const struct spfkit__mta_diag *d)
{
	(void)arg;
	if (stderr_was_client)
		spfkit__mta_log_printf(d->is_error ? LOG_ERR : LOG_WARNING, "%s:%u: %s: %s", d->file,
				       d->line, d->is_error ? "error" : "warning", d->text);
	else
		fprintf(stderr, "%s:%u: %s: %s\n", d->file, d->line,
			d->is_error ? "error" : "warning", d->text);
}

/* Per_User's file, read once here for its problems (--check-config, start); each server reads its own. */
static int check_per_user(const struct options *o, struct spfkit__mta_config **cfg)
{
	struct spfkit__policyd_peruser *t = NULL;
	int rc = spfkit__policyd_peruser_load((*cfg)->per_user, o->srv.config_path, say_diag, NULL,
					      &t);

	spfkit__policyd_peruser_free(t);
	if (rc != 0) {
		spfkit__mta_config_free(*cfg);
		*cfg = NULL;
	}
	return rc;
}

static int load_config(struct options *o, struct spfkit__mta_config **cfg)
{
	int from_file;
	int rc = spfkit__mta_config_read(o->config, o->config_given, NULL, stderr_was_client,
					 &from_file, cfg);

	o->srv.config_path = from_file ? o->config : NULL;
	if (rc == 0 && (*cfg)->per_user != NULL)
		rc = check_per_user(o, cfg);
	return rc;
}

/* ---- sockets ---------------------------------------------------------- */

/* A live server's socket is never taken; the file is removed at exit. */
static int listen_unix(const char *path, mode_t mode, struct spfkit__policyd_cleanup *cleanup)
{
	int fd = spfkit__mta_listen_unix("spfkit-policyd", path, mode, (uid_t)-1, (gid_t)-1);

	if (fd < 0)
		return -1;
	if (spfkit__policyd_cleanup_add(cleanup, path) != 0) {
		fprintf(stderr, "spfkit-policyd: unix:%s: cannot note it for removal\n", path);
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
	fd = spfkit__mta_listen_tcp("spfkit-policyd", host, port, AF_UNSPEC, &bound_port);
	if (fd < 0)
		return -1;
	/* the port actually bound, so a test can ask for port 0 */
	snprintf(bound, bsize, "inet:%s:%u", host, bound_port);
	return fd;
bad:
	fprintf(stderr, "spfkit-policyd: bad listen address inet:%s (want inet:HOST:PORT)\n", spec);
	return -1;
}

static int open_listeners(struct options *o, struct spfkit__policyd *srv)
{
	size_t i;

	for (i = 0; i < o->n_listen; i++) {
		const char *a = o->listen[i];
		char bound[320];
		int fd;

		snprintf(bound, sizeof(bound), "%s", a);
		if (strncmp(a, "unix:", 5) == 0)
			fd = listen_unix(a + 5, o->socket_mode, o->cleanup);
		else if (strncmp(a, "inet:", 5) == 0)
			fd = listen_inet(a + 5, bound, sizeof(bound));
		else {
			fprintf(stderr, "spfkit-policyd: bad listen address %s (unix:/path or inet:HOST:PORT)\n", a);
			return -1;
		}
		if (fd < 0 || spfkit__policyd_listen_fd(srv, fd, bound) != 0)
			return -1;
		spfkit__policyd_log(srv, LOG_NOTICE, "listening on %s", bound);
	}
	return 0;
}

/* ---- PID file ------------------------------------------------------------ */

static int write_pid_file(const char *path, struct spfkit__policyd_cleanup *cleanup)
{
	char line[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		fprintf(stderr, "spfkit-policyd: pid file %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (spfkit__policyd_cleanup_add(cleanup, path) != 0) {
		fprintf(stderr, "spfkit-policyd: pid file %s: cannot note it for removal\n", path);
		unlink(path);
		return -1;
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
static void fit_fd_limit(struct options *o)
{
	size_t want = o->srv.max_connections != 0 ? o->srv.max_connections
						  : SPFKIT_POLICYD_MAX_CONNECTIONS;
	/* each worker has its own DNS sockets, event loop and mailbox pipe */
	size_t reserve = o->n_listen + (size_t)o->workers * (FD_DNS + 4) + FD_SPARE;
	size_t fit;

	if (o->n_listen == 0)
		return;
	spfkit__mta_fit_fd_limit(want, reserve, &fit, o->fd_note, sizeof(o->fd_note));
	if (o->fd_note[0] != '\0')
		o->srv.max_connections = (unsigned)fit;
}

/* ---- DNS ---------------------------------------------------------------- */

/* ---- signals ------------------------------------------------------------ */

struct sigs {
	struct spfkit__policyd *srv;
	struct spfkit__policyd_pool *pool; /* NULL: one worker */
	struct event_base *base;
	struct event *grace;
};

static void on_grace(evutil_socket_t fd, short what, void *arg)
{
	struct sigs *s = arg;

	(void)fd;
	(void)what;
	spfkit__policyd_log(s->srv, LOG_WARNING, "requests still running at the end of the grace time");
	if (s->pool != NULL)
		spfkit__policyd_pool_broadcast(s->pool, SPFKIT__POOL_STOP);
	event_base_loopexit(s->base, NULL);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct sigs *s = arg;
	struct timeval grace = {60, 0};

	(void)what;
	if (sig == SIGHUP) {
		(void)spfkit__policyd_reload(s->srv);
		if (s->pool != NULL)
			spfkit__policyd_pool_broadcast(s->pool, SPFKIT__POOL_RELOAD);
		return;
	}
	spfkit__policyd_log(s->srv, LOG_NOTICE, "signal %d: finishing the requests in flight",
			    (int)sig);
	if (s->pool != NULL)
		spfkit__policyd_pool_broadcast(s->pool, SPFKIT__POOL_DRAIN);
	spfkit__policyd_drain(s->srv);
	if (s->grace != NULL && !evtimer_pending(s->grace, NULL))
		evtimer_add(s->grace, &grace);
}

/* ---- workers ---------------------------------------------------------------- */

/* One worker beyond the first: its loop, configuration, DNS and server. */
struct worker {
	struct event_base *base;
	struct spfkit__mta_dns dns;
	struct spfkit__policyd *srv;
};

/*
 * Each worker reads the configuration itself (the server owns and frees
 * it; a reload replaces it per worker). Problems were said when worker 0
 * read it a moment ago, so this read is quiet.
 */
static int worker_open(struct options *o, const struct spfkit__mta_dns *first, struct worker *w)
{
	struct spfkit__mta_config *cfg = NULL;
	int rc;

	w->base = event_base_new();
	if (w->base == NULL)
		return -1;
	if (spfkit__mta_dns_open_more("spfkit-policyd", &o->dns_opts, first, &w->dns) != 0)
		return -1;
	rc = o->srv.config_path != NULL
		     ? spfkit__mta_config_load(o->srv.config_path, NULL, NULL, NULL, &cfg)
		     : spfkit__mta_config_defaults(NULL, &cfg);
	if (rc != 0) {
		fprintf(stderr, "spfkit-policyd: %s: %s; not starting\n", o->config, spfkit_strerror(rc));
		return -1;
	}
	if (spfkit__policyd_new(w->base, &o->srv, cfg, w->dns.r, w->dns.layer, &w->srv) != 0) {
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
static int pool_open(struct options *o, struct spfkit__policyd *first, const struct spfkit__mta_dns *d,
		     unsigned n, struct worker *w, struct spfkit__policyd_pool **pool)
{
	struct spfkit__policyd *all[MAX_WORKERS];
	unsigned i;

	all[0] = first;
	for (i = 1; i < n; i++) {
		if (worker_open(o, d, &w[i]) != 0) {
			fprintf(stderr, "spfkit-policyd: cannot start worker %u\n", i);
			return -1;
		}
		all[i] = w[i].srv;
	}
	if (spfkit__policyd_pool_new(all, n, pool) != 0) {
		fputs("spfkit-policyd: cannot make the worker pool\n", stderr);
		return -1;
	}
	return 0;
}

/* The /metrics socket, bound with the listeners (before the privilege drop); -1: said. */
static int metrics_listen(const char *spec, struct spfkit__policyd *srv)
{
	unsigned port = 0;
	int fd = spfkit__metrics_http_listen("spfkit-policyd", spec, &port);

	if (fd >= 0)
		spfkit__policyd_log(srv, LOG_NOTICE, "metrics on %s (port %u)", spec, port);
	return fd;
}

/* ---- main ----------------------------------------------------------------- */

static int run(struct options *o, struct spfkit__mta_config *cfg, struct spfkit__mta_dns *d)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;
	struct spfkit__policyd *srv = NULL;
	struct spfkit__policyd_pool *pool = NULL;
	static struct worker workers[MAX_WORKERS];
	/* spawn mode has one client: more loops could not serve it */
	unsigned n = o->n_listen > 0 ? (unsigned)o->workers : 1, k;
	struct sigs s = {NULL, NULL, NULL, NULL};
	struct event *ev[3] = {NULL, NULL, NULL};
	int sigv[3] = {SIGHUP, SIGTERM, SIGINT}, rc = 1, i;
	struct spfkit__metrics_http *metrics = NULL;
	int metrics_fd = -1;

	/* stdin may be a regular file when run by hand; epoll cannot watch those */
	if (ec != NULL && o->n_listen == 0)
		event_config_avoid_method(ec, "epoll");
	base = ec != NULL ? event_base_new_with_config(ec) : NULL;
	if (ec != NULL)
		event_config_free(ec);
	if (base == NULL || spfkit__policyd_new(base, &o->srv, cfg, d->r, d->layer, &srv) != 0) {
		complain("cannot start the event loop");
		spfkit__mta_config_free(cfg);
		goto out;
	}
	if (n > 1 && pool_open(o, srv, d, n, workers, &pool) != 0)
		goto out;
	/* signals first: whoever sees "listening on" may signal us at once */
	s.srv = srv;
	s.pool = pool;
	s.base = base;
	s.grace = evtimer_new(base, on_grace, &s);
	for (i = 0; i < 3; i++) {
		ev[i] = evsignal_new(base, sigv[i], on_signal, &s);
		if (ev[i] != NULL)
			event_add(ev[i], NULL);
	}
	if (o->fd_note[0] != '\0')
		spfkit__policyd_log(srv, LOG_WARNING, "%s", o->fd_note);
	if (o->n_listen > 0 ? open_listeners(o, srv) != 0 : spfkit__policyd_serve_stdio(srv, 0, 1) != 0)
		goto out;
	if (o->metrics != NULL && (metrics_fd = metrics_listen(o->metrics, srv)) < 0)
		goto out;
	if (o->pid_file != NULL && write_pid_file(o->pid_file, o->cleanup) != 0)
		goto out;
	if (o->user != NULL && spfkit__policyd_cleanup_keeper(o->cleanup) != 0) {
		fprintf(stderr, "spfkit-policyd: cannot fork the cleanup process: %s\n", strerror(errno));
		goto out;
	}
	if (o->user != NULL && spfkit__mta_drop_privileges("spfkit-policyd", o->user) != 0)
		goto out;
	/* after the privilege drop: setuid() applies to every thread, but say it plainly */
	if (pool != NULL && spfkit__policyd_pool_start(pool) != 0) {
		fputs("spfkit-policyd: cannot start the worker threads\n", stderr);
		spfkit__policyd_pool_join(pool);
		goto out;
	}
	if (pool != NULL)
		spfkit__policyd_log(srv, LOG_NOTICE, "%u workers", n);
	if (metrics_fd >= 0 && spfkit__metrics_http_start(o->srv.metrics, metrics_fd, &metrics) != 0) {
		metrics_fd = -1; /* closed by the failed start */
		complain("cannot start the metrics listener");
		goto out;
	}
	metrics_fd = -1;
	spfkit__mta_run(base);
	rc = 0;
out:
	spfkit__metrics_http_stop(metrics);
	if (metrics_fd >= 0)
		close(metrics_fd);
	if (pool != NULL)
		spfkit__policyd_pool_join(pool);
	for (i = 0; i < 3; i++)
		if (ev[i] != NULL)
			event_free(ev[i]);
	if (srv != NULL && s.grace != NULL)
		event_free(s.grace);
	/* the workers' loops have ended: their servers are freed from here */
	for (k = 1; k < n; k++) {
		spfkit__policyd_free(workers[k].srv);
		workers[k].srv = NULL;
	}
	spfkit__policyd_free(srv); /* closes the listeners first */
	spfkit__policyd_pool_free(pool);
	for (k = 1; k < n; k++)
		worker_close(&workers[k]);
	spfkit__policyd_cleanup_run(o->cleanup);
	if (base != NULL)
		event_base_free(base);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct spfkit__mta_config *cfg = NULL;
	struct spfkit__mta_dns d;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = stderr_off_the_client();
	if (rc < 0)
		return 1; /* stderr is the client's: not a word may go there */
	stderr_was_client = rc;
	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (stderr_was_client) /* early, for the configuration's problems */
		spfkit__mta_log_open("spfkit-policyd", 0, o.log_socket);
	rc = load_config(&o, &cfg);
	if (o.check_config) {
		if (rc == 0)
			fprintf(stderr, "%s: OK\n", o.srv.config_path ? o.srv.config_path : "(defaults)");
		spfkit__mta_config_free(cfg);
		return rc == 0 ? 0 : 1;
	}
	if (rc != 0) {
		complain("%s: %s; not starting", o.config, spfkit_strerror(rc));
		return 1;
	}
	if (o.workers == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		o.workers = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : cpus;
	}
	/* --log stderr cannot mean the client's connection: syslog then */
	spfkit__mta_log_open("spfkit-policyd", o.srv.log_stderr && !stderr_was_client, o.log_socket);
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
	signal(SIGPIPE, SIG_IGN);
	memset(&d, 0, sizeof(d));
	o.cleanup = spfkit__policyd_cleanup_new();
	if (o.cleanup == NULL || spfkit__mta_dns_open("spfkit-policyd", &o.dns_opts, &d) != 0) {
		spfkit__mta_config_free(cfg);
		spfkit__mta_dns_close(&d);
		spfkit__policyd_cleanup_free(o.cleanup);
		return 1;
	}
	fit_fd_limit(&o);
	if (o.metrics == NULL)
		o.metrics = cfg->metrics_listen;
	if (o.metrics != NULL && spfkit__metrics_new("spfkit-policyd", &o.srv.metrics) != 0) {
		complain("out of memory for the metrics");
		spfkit__mta_config_free(cfg);
		spfkit__mta_dns_close(&d);
		spfkit__policyd_cleanup_free(o.cleanup);
		return 1;
	}
	spfkit__metrics_set_cache(o.srv.metrics, d.cache);
	rc = run(&o, cfg, &d);
	spfkit__metrics_free(o.srv.metrics);
	spfkit__mta_dns_close(&d);
	spfkit__policyd_cleanup_free(o.cleanup);
	return rc;
}
