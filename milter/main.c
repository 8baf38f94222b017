/*
 * spfkit-milter: options, configuration, the listening socket, the
 * descriptor limit, daemon mode, PID file, privilege drop, signals; then
 * the one event loop (server.c) that speaks the milter protocol and runs
 * every SPF check.
 *
 *   spfkit-milter [options] [CONFIG]
 *
 * The order matters: the socket is opened while still root (a port
 * below 1024, a socket in a root-owned directory), we fork into the
 * background before the event loop exists, and privileges are dropped
 * before the first connection is taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include <spfkit/version.h>

#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "listen.h"
#include "metrics_http.h"
#include "options.h"
#include "reload.h"
#include "spfkit_util.h"
#include "milter.h"

#define PROG "spfkit-milter"
#define DEFAULT_CONFIG "/etc/spfkit/policyd-spf.conf"
#define DEFAULT_SOCKET "unix:/run/spfkit-milter/spfkit-milter.sock"
#define DEFAULT_SOCKET_MODE 0660
/* c-ares's sockets (a UDP and a TCP one per server, at most 3 servers), with room */
#define FD_DNS 16
/* the listening socket, syslog, the event loop's own, the configuration file */
#define FD_SPARE 8

struct options {
	const char *config;
	int config_given;
	int check_config;
	const char *socket;
	int socket_mode;         /* -1: 0660, or from UMask */
	const char *socket_group;
	int foreground;
	const char *user;
	const char *pid_file;
	int log_stderr;
	struct spfkit__milter_server_opts srv;
	struct spfkit__mta_dns_opts dns;
	const char *metrics; /* --metrics, else Metrics_Listen; NULL: no /metrics */
	int metrics_fd;      /* bound before the fork and the privilege drop; -1: none */
	unsigned metrics_port;
};

static void usage(FILE *f)
{
	fputs("usage: " PROG " [options] [CONFIG]\n"
	      "  SPF milter for Postfix and Sendmail (RFC 7208), a drop-in for pyspf-milter.\n"
	      "  -c, --config FILE       policyd-spf.conf format (default " DEFAULT_CONFIG ")\n"
	      "      --check-config      report problems of the configuration with file:line, then exit\n"
	      "  -s, --socket SPEC       unix:/path | inet:PORT@HOST | inet6:PORT@HOST (default: the\n"
	      "                          configuration's Socket, else " DEFAULT_SOCKET ")\n"
	      "      --socket-mode MODE  permissions of a unix socket (octal; default 0660, or 0777\n"
	      "                          less the configuration's UMask)\n"
	      "      --socket-group GROUP  group of a unix socket (e.g. postfix; default: --user's)\n"
	      "  -f, --foreground        do not fork into the background (systemd)\n"
	      "  -u, --user USER[:GROUP] drop privileges after opening the socket (default: UserID)\n"
	      "  -p, --pid-file FILE     write the process id there (default: PidFile)\n"
	      "      --max-connections N MTA connections at once (default 4096; lowered to fit the\n"
	      "                          open-file limit, which is raised first)\n"
	      "      --read-timeout S    drop a connection that has not negotiated S seconds after\n"
	      "                          connecting, or whose packet is not whole S seconds after its\n"
	      "                          first byte (default 30)\n"
	      "      --idle-timeout S    drop a connection with no command for S seconds (default 3600)\n"
	      "      --dns SERVERS       DNS servers HOST[:PORT],... (default: /etc/resolv.conf)\n"
	      "      --dns-timeout MS    per-try DNS timeout\n"
	      "      --dns-cache-mb N    answer cache size (default 4; 0: none)\n"
	      "      --zone FILE         answer DNS from a zone file (tests, offline use)\n"
	      "      --zone-timeout NAME with --zone: questions for NAME time out (tests)\n"
	      "      --receiver NAME     this host's name in headers (default: the host name)\n"
	      "      --log syslog|stderr where log lines go (default syslog, facility mail)\n"
	      "      --metrics HOST:PORT serve counters on http://HOST:PORT/metrics (Prometheus);\n"
	      "                          PORT alone: 127.0.0.1 (default: off; Metrics_Listen)\n"
	      "  -h, --help, -V, --version\n",
	      f);
}

static int bad_value(const char *name, const char *value)
{
	fprintf(stderr, PROG ": bad value '%s' for --%s\n", value, name);
	return 2;
}

enum { O_CHECK = 256, O_MODE, O_GROUP, O_MAXC, O_READ, O_IDLE, O_RECEIVER, O_LOG, O_METRICS,
       O_DNS };

/* The server's numbers: 0, or 2 (said). */
static int server_option(struct options *o, int ch, const char *name)
{
	long v = spfkit__mta_number(optarg, 1, ch == O_MAXC ? 1000000 : 86400);

	if (v < 0)
		return bad_value(name, optarg);
	if (ch == O_MAXC)
		o->srv.max_connections = (size_t)v;
	else
		*(ch == O_READ ? &o->srv.read_timeout : &o->srv.idle_timeout) = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"config", required_argument, NULL, 'c'}, {"check-config", no_argument, NULL, O_CHECK},
		{"socket", required_argument, NULL, 's'}, {"socket-mode", required_argument, NULL, O_MODE},
		{"socket-group", required_argument, NULL, O_GROUP},
		{"foreground", no_argument, NULL, 'f'},
		{"user", required_argument, NULL, 'u'}, {"pid-file", required_argument, NULL, 'p'},
		{"max-connections", required_argument, NULL, O_MAXC},
		{"read-timeout", required_argument, NULL, O_READ},
		{"idle-timeout", required_argument, NULL, O_IDLE},
		SPFKIT__MTA_DNS_OPTIONS(O_DNS),
		{"receiver", required_argument, NULL, O_RECEIVER}, {"log", required_argument, NULL, O_LOG},
		{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'},
		{"metrics", required_argument, NULL, O_METRICS},
		{NULL, 0, NULL, 0},
	};
	int ch, rc;
	char *end;
	long v;

	o->config = DEFAULT_CONFIG;
	o->socket_mode = -1;
	o->dns.cache_mb = 4;
	while ((ch = getopt_long(argc, argv, "c:s:fu:p:hV", longs, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; o->config_given = 1; break;
		case O_CHECK: o->check_config = 1; break;
		case 's': o->socket = optarg; break;
		case O_MODE:
			v = strtol(optarg, &end, 8);
			if (optarg[0] == '\0' || *end != '\0' || v < 0 || v > 0777)
				return bad_value("socket-mode", optarg);
			o->socket_mode = (int)v;
			break;
		case O_GROUP: o->socket_group = optarg; break;
		case 'f': o->foreground = 1; break;
		case 'u': o->user = optarg; break;
		case 'p': o->pid_file = optarg; break;
		case O_MAXC: case O_READ: case O_IDLE:
			rc = server_option(o, ch, ch == O_MAXC ? "max-connections" :
					   ch == O_READ ? "read-timeout" : "idle-timeout");
			if (rc != 0)
				return rc;
			break;
		case O_RECEIVER: o->srv.receiver = optarg; break;
		case O_LOG:
			o->log_stderr = spfkit__mta_log_option(optarg);
			if (o->log_stderr < 0)
				return bad_value("log", optarg);
			break;
		case O_METRICS: o->metrics = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': puts(PROG " " SPFKIT_VERSION_STRING); exit(0);
		default:
			if (ch >= O_DNS && ch < O_DNS + SPFKIT__MTA_DNS_OPTION_COUNT) {
				if (spfkit__mta_dns_option(&o->dns, ch - O_DNS, optarg) != 0)
					return bad_value(spfkit__mta_dns_option_name(ch - O_DNS), optarg);
				break;
			}
			usage(stderr);
			return 2;
		}
	}
	if (spfkit__mta_config_argument(argc, argv, &o->config, &o->config_given) != 0) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* ---- configuration ---------------------------------------------------- */

/* The file, or the defaults when the default one is not there (mta/daemon.h). */
static int load_config(const struct options *o, struct spfkit__mta_config **cfg)
{
	return spfkit__mta_config_read(o->config, o->config_given, NULL, 0, NULL, cfg);
}

/*
 * What the milter reads differently from the policy daemon: headers are
 * Authentication-Results unless Header_Type says otherwise (what
 * OpenDMARC and other filters after us read); a Postfix restriction
 * class means nothing to a milter.
 */
static void adapt_config(struct spfkit__mta_config *cfg)
{
	if (!cfg->header_type_set)
		cfg->header_type = SPFKIT_MTA_HEADER_AR;
	if (cfg->helo_pass_restriction != NULL || cfg->mail_from_pass_restriction != NULL)
		spfkit__mta_log_printf(LOG_WARNING, "HELO_pass_restriction and Mail_From_pass_restriction "
				       "are Postfix policy features; the milter ignores them");
	spfkit__free(cfg->alloc, cfg->helo_pass_restriction);
	spfkit__free(cfg->alloc, cfg->mail_from_pass_restriction);
	cfg->helo_pass_restriction = NULL;
	cfg->mail_from_pass_restriction = NULL;
}

/* ---- the socket -------------------------------------------------------- */

/* The path of a unix:, local: or bare absolute socket spec, or NULL. */
static const char *unix_path(const char *spec)
{
	if (strncmp(spec, "unix:", 5) == 0 || strncmp(spec, "local:", 6) == 0)
		return strchr(spec, ':') + 1;
	return spec[0] == '/' ? spec : NULL;
}

/* Who owns a UNIX socket: --user's ids (when root), the group of --socket-group. 0, or -1 (said). */
static int socket_owner(const struct options *o, const char *user, uid_t *uid, gid_t *gid)
{
	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (user != NULL && geteuid() == 0 && spfkit__mta_user_ids(PROG, user, uid, gid) != 0)
		return -1;
	if (o->socket_group != NULL) {
		struct group *gr = getgrnam(o->socket_group);

		if (gr == NULL) {
			fprintf(stderr, PROG ": no such group: %s\n", o->socket_group);
			return -1;
		}
		*gid = gr->gr_gid;
	}
	return 0;
}

/* The socket's directory, made when missing (one level: /run/spfkit-milter), for its owner. */
static int socket_dir(const char *path, uid_t uid, gid_t gid)
{
	char dir[256];
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL ? (size_t)(slash - path) : 0;
	struct stat st;

	if (n == 0 || n >= sizeof(dir))
		return 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (stat(dir, &st) == 0)
		return 0;
	if (mkdir(dir, 0755) != 0 || ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(dir, uid, gid) != 0)) {
		fprintf(stderr, PROG ": socket directory %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* "inet:PORT@HOST", "inet:PORT", "inet6:PORT@HOST" (libmilter's forms). */
static int listen_inet(const char *spec)
{
	int v6 = strncmp(spec, "inet6:", 6) == 0;
	const char *p = spec + (v6 ? 6 : 5), *at = strchr(p, '@');
	char port[16];
	size_t n = at != NULL ? (size_t)(at - p) : strlen(p);
	unsigned bound;

	if (n == 0 || n >= sizeof(port)) {
		fprintf(stderr, PROG ": bad socket %s (want inet:PORT@HOST)\n", spec);
		return -1;
	}
	memcpy(port, p, n);
	port[n] = '\0';
	if (!spfkit__mta_port_ok(port, 1)) {
		fprintf(stderr, PROG ": bad port in %s\n", spec);
		return -1;
	}
	return spfkit__mta_listen_tcp(PROG, at != NULL ? at + 1 : NULL, port, v6 ? AF_INET6 : AF_INET,
				      &bound);
}

/*
 * The socket, opened now (as root, before the fork). A UNIX socket gets
 * `mode` and is handed to the user we become (and --socket-group), so
 * that the MTA's group can be given access and the socket can be
 * replaced at the next start; a live one is never taken over.
 */
static int open_socket(const struct options *o, const char *spec, const char *user, mode_t mode)
{
	const char *path = unix_path(spec);
	uid_t uid;
	gid_t gid;

	if (path == NULL) {
		if (strncmp(spec, "inet:", 5) == 0 || strncmp(spec, "inet6:", 6) == 0)
			return listen_inet(spec);
		fprintf(stderr, PROG ": bad socket %s (unix:/path, inet:PORT@HOST, inet6:PORT@HOST)\n",
			spec);
		return -1;
	}
	if (socket_owner(o, user, &uid, &gid) != 0 || socket_dir(path, uid, gid) != 0)
		return -1;
	return spfkit__mta_listen_unix(PROG, path, mode, uid, gid);
}

/* ---- the process ------------------------------------------------------- */

static int write_pid_file(const char *path)
{
	char line[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		fprintf(stderr, PROG ": pid file %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int go_background(void)
{
	if (daemon(0, 0) != 0) {
		fprintf(stderr, PROG ": cannot go to the background: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void receiver_name(const char *given, char *buf, size_t size)
{
	if (given != NULL)
		snprintf(buf, size, "%s", given);
	else if (gethostname(buf, size - 1) != 0)
		snprintf(buf, size, "unknown");
	buf[size - 1] = '\0';
}

/* SIGTERM and SIGINT stop the milter: connections close, checks end. */
static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	(void)what;
	spfkit__mta_log_printf(LOG_NOTICE, "signal %d: stopping", (int)sig);
	event_base_loopexit(base, NULL);
}

static int apply_config(void *arg, struct spfkit__mta_config *cfg)
{
	(void)arg;
	adapt_config(cfg);
	return spfkit__milter_reload(cfg);
}

/* SIGHUP: the configuration file again, as spfkit-policyd does (mta/reload.h). */
static void on_hup(evutil_socket_t sig, short what, void *arg)
{
	const struct options *o = arg;

	(void)sig;
	(void)what;
	spfkit__mta_reread(o->config, o->config_given, apply_config, NULL);
}

/* /metrics: the loop's counts, served from a thread of its own (after the fork). */
static int metrics_start(struct options *o, const struct spfkit__mta_dns *d,
			 struct spfkit__metrics **m, struct spfkit__metrics_http **http)
{
	int fd = o->metrics_fd;

	o->metrics_fd = -1; /* the listener's from here, even when it fails */
	if (spfkit__metrics_new(PROG, m) != 0 || spfkit__metrics_http_start(*m, fd, http) != 0) {
		if (*m == NULL)
			close(fd);
		spfkit__mta_log_printf(LOG_ERR, "cannot start the metrics listener");
		return -1;
	}
	spfkit__metrics_set_cache(*m, d->cache);
	spfkit__milter_g.loop.metrics = spfkit__metrics_block(*m);
	spfkit__mta_log_printf(LOG_NOTICE, "metrics on %s (port %u)", o->metrics, o->metrics_port);
	return 0;
}

/* Process setup done: serve until a signal stops us. */
static int serve(struct options *o, struct spfkit__mta_config *cfg, struct spfkit__mta_dns *d,
		 int fd, const char *spec, const char *fd_note)
{
	static const int sigv[3] = {SIGTERM, SIGINT, SIGHUP};
	const event_callback_fn handler[3] = {on_signal, on_signal, on_hup};
	struct event_base *base = event_base_new();
	struct spfkit__milter_server *srv = NULL;
	struct event *ev[3] = {NULL, NULL, NULL};
	struct spfkit__metrics *metrics = NULL;
	struct spfkit__metrics_http *http = NULL;
	char receiver[256];
	int rc = 1, i;

	receiver_name(o->srv.receiver, receiver, sizeof(receiver));
	o->srv.receiver = receiver;
	if (base == NULL || spfkit__milter_server_new(base, &o->srv, cfg, d->r, d->layer, &srv) != 0 ||
	    spfkit__milter_server_listen_fd(srv, fd) != 0) {
		spfkit__mta_log_printf(LOG_ERR, "cannot start the event loop");
		if (srv == NULL)
			close(fd);
		goto out;
	}
	for (i = 0; i < 3; i++) {
		ev[i] = evsignal_new(base, sigv[i], handler[i], sigv[i] == SIGHUP ? (void *)o : base);
		if (ev[i] == NULL || event_add(ev[i], NULL) != 0)
			goto out;
	}
	if (fd_note[0] != '\0')
		spfkit__mta_log_printf(LOG_WARNING, "%s", fd_note);
	if (o->metrics_fd >= 0 && metrics_start(o, d, &metrics, &http) != 0)
		goto out;
	spfkit__mta_log_printf(LOG_NOTICE, "ready on %s (authserv-id %s)", spec, cfg->authserv_id);
	spfkit__mta_run(base);
	rc = 0;
out:
	spfkit__metrics_http_stop(http);
	spfkit__milter_server_free(srv); /* closes the connections, then the socket */
	spfkit__milter_g.loop.metrics = NULL;
	spfkit__metrics_free(metrics);
	for (i = 0; i < 3; i++)
		if (ev[i] != NULL)
			event_free(ev[i]);
	if (base != NULL)
		event_base_free(base);
	return rc;
}

/* --socket-mode, else 0777 less UMask when the configuration has one (pyspf-milter's way), else 0660. */
static mode_t socket_mode(const struct options *o, const struct spfkit__mta_config *cfg)
{
	if (o->socket_mode >= 0)
		return (mode_t)o->socket_mode;
	if (cfg->umask >= 0)
		return (mode_t)(0777 & ~cfg->umask);
	return DEFAULT_SOCKET_MODE;
}

static int setup_and_serve(struct options *o, struct spfkit__mta_config *cfg)
{
	const char *spec = o->socket ? o->socket : cfg->socket ? cfg->socket : DEFAULT_SOCKET;
	const char *pid_file = o->pid_file ? o->pid_file : cfg->pid_file;
	const char *user = o->user ? o->user : cfg->user_id;
	struct spfkit__mta_dns d;
	char fd_note[256];
	size_t fit;
	int fd, rc = 1;

	memset(&d, 0, sizeof(d));
	if (cfg->umask >= 0)
		umask((mode_t)cfg->umask);
	fd = open_socket(o, spec, user, socket_mode(o, cfg));
	if (fd < 0)
		return 1;
	if (o->metrics == NULL)
		o->metrics = cfg->metrics_listen;
	if (o->metrics != NULL) {
		o->metrics_fd = spfkit__metrics_http_listen(PROG, o->metrics, &o->metrics_port);
		if (o->metrics_fd < 0) {
			close(fd);
			return 1;
		}
	}
	spfkit__mta_fit_fd_limit(o->srv.max_connections ? o->srv.max_connections
							: SPFKIT_MILTER_MAX_CONNECTIONS,
				 FD_DNS + FD_SPARE, &fit, fd_note, sizeof(fd_note));
	o->srv.max_connections = fit;
	if ((!o->foreground && go_background() != 0) ||
	    (pid_file != NULL && write_pid_file(pid_file) != 0)) {
		close(fd);
		goto out;
	}
	if (spfkit__mta_dns_open(PROG, &o->dns, &d) == 0 &&
	    (user == NULL || spfkit__mta_drop_privileges(PROG, user) == 0))
		rc = serve(o, cfg, &d, fd, spec, fd_note);
	else
		close(fd);
	spfkit__mta_dns_close(&d);
	/* ours to remove; may fail after the privilege drop: harmless */
	if (pid_file != NULL)
		unlink(pid_file);
out:
	if (o->metrics_fd >= 0) /* serve() never took it */
		close(o->metrics_fd);
	o->metrics_fd = -1;
	if (unix_path(spec) != NULL)
		unlink(unix_path(spec));
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct spfkit__mta_config *cfg = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.metrics_fd = -1;
	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	rc = load_config(&o, &cfg);
	if (o.check_config) {
		if (rc == 0)
			fprintf(stderr, "%s: OK\n", o.config_given || access(o.config, F_OK) == 0
							   ? o.config : "(defaults)");
		spfkit__mta_config_free(cfg);
		return rc == 0 ? 0 : 1;
	}
	if (rc != 0) {
		fprintf(stderr, PROG ": %s: %s; not starting\n", o.config, spfkit_strerror(rc));
		return 1;
	}
	spfkit__mta_log_open(PROG, o.log_stderr, NULL);
	adapt_config(cfg);
	signal(SIGPIPE, SIG_IGN);
	rc = setup_and_serve(&o, cfg);
	spfkit__mta_config_free(cfg);
	return rc;
}
