/*
 * spfkit-milter: its options, its socket, daemon mode; then the one
 * event loop (server.c) that speaks the milter protocol and runs every
 * SPF check. The rest of main() is the daemons' shared one
 * (mta/daemon_main.h).
 *
 *   spfkit-milter [options] [CONFIG]
 *
 * The order matters: the socket is opened while still root (a port
 * below 1024, a socket in a root-owned directory), we fork into the
 * background before the event loop exists, and privileges are dropped
 * before the first connection is taken.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "daemon.h"
#include "daemon_main.h"
#include "listen.h"
#include "log.h"
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

struct milter {
	const char *socket; /* --socket, else Socket, else DEFAULT_SOCKET */
	const char *socket_group;
	int foreground;
	struct spfkit__milter_server_opts srv_opts;
	int fd;            /* the listening socket till the server takes it; -1: none */
	int pid_written;
	int socket_opened; /* a UNIX socket's file is ours to remove */
	char receiver[256];
	struct spfkit__milter_server *srv;
};

static const char usage[] =
	"usage: " PROG " [options] [CONFIG]\n"
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
	SPFKIT__MTA_USAGE_RESOLVER
	"      --log syslog|stderr where log lines go (default syslog, facility mail)\n"
	"      --metrics HOST:PORT serve counters on http://HOST:PORT/metrics (Prometheus);\n"
	"                          PORT alone: 127.0.0.1 (default: off; Metrics_Listen)\n"
	"  -h, --help, -V, --version\n";

enum { O_GROUP = SPFKIT__MTA_OWN_OPTIONS, O_MAXC, O_READ, O_IDLE };

static const struct option own_options[] = {
	{"socket", required_argument, NULL, 's'}, {"socket-group", required_argument, NULL, O_GROUP},
	{"foreground", no_argument, NULL, 'f'},
	{"max-connections", required_argument, NULL, O_MAXC},
	{"read-timeout", required_argument, NULL, O_READ},
	{"idle-timeout", required_argument, NULL, O_IDLE},
	{NULL, 0, NULL, 0},
};

static int option(struct spfkit__mta_daemon *d, int ch, const char *value)
{
	struct milter *m = d->self;
	long v;

	switch (ch) {
	case 's': m->socket = value; return 0;
	case O_GROUP: m->socket_group = value; return 0;
	case 'f': m->foreground = 1; return 0;
	case O_MAXC: case O_READ: case O_IDLE:
		v = spfkit__mta_number(value, 1, ch == O_MAXC ? 1000000 : 86400);
		if (v < 0)
			return 1;
		if (ch == O_MAXC)
			m->srv_opts.max_connections = (size_t)v;
		else
			*(ch == O_READ ? &m->srv_opts.read_timeout : &m->srv_opts.idle_timeout) = (int)v;
		return 0;
	default:
		return -1;
	}
}

/* ---- configuration ---------------------------------------------------- */

/*
 * What the milter reads differently from the policy daemon: headers are
 * Authentication-Results unless Header_Type says otherwise (what
 * OpenDMARC and other filters after us read); a Postfix restriction
 * class means nothing to a milter.
 */
static void config_adapt(struct spfkit__mta_config *cfg)
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
static int socket_owner(const struct milter *m, const char *user, uid_t *uid, gid_t *gid)
{
	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (user != NULL && geteuid() == 0 && spfkit__mta_user_ids(PROG, user, uid, gid) != 0)
		return -1;
	if (m->socket_group != NULL) {
		struct group *gr = getgrnam(m->socket_group);

		if (gr == NULL) {
			fprintf(stderr, PROG ": no such group: %s\n", m->socket_group);
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
static int open_socket(const struct milter *m, const char *spec, const char *user, mode_t mode)
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
	if (socket_owner(m, user, &uid, &gid) != 0 || socket_dir(path, uid, gid) != 0)
		return -1;
	return spfkit__mta_listen_unix(PROG, path, mode, uid, gid);
}

/* --socket-mode, else 0777 less UMask when the configuration has one (pyspf-milter's way), else 0660. */
static mode_t socket_mode(const struct spfkit__mta_daemon *d)
{
	if (d->socket_mode >= 0)
		return (mode_t)d->socket_mode;
	if (d->cfg->umask >= 0)
		return (mode_t)(0777 & ~d->cfg->umask);
	return DEFAULT_SOCKET_MODE;
}

/* ---- the process ------------------------------------------------------- */

/* Still root: the socket, the descriptor limit, the fork, the PID file. */
static int setup(struct spfkit__mta_daemon *d)
{
	struct milter *m = d->self;
	const struct spfkit__mta_config *cfg = d->cfg;
	size_t fit;
	char fd_note[256];

	if (m->socket == NULL)
		m->socket = cfg->socket != NULL ? cfg->socket : DEFAULT_SOCKET;
	if (d->pid_file == NULL)
		d->pid_file = cfg->pid_file;
	if (d->user == NULL)
		d->user = cfg->user_id;
	if (cfg->umask >= 0)
		umask((mode_t)cfg->umask);
	m->fd = open_socket(m, m->socket, d->user, socket_mode(d));
	if (m->fd < 0)
		return -1;
	m->socket_opened = 1;
	spfkit__mta_fit_fd_limit(m->srv_opts.max_connections ? m->srv_opts.max_connections
							     : SPFKIT_MILTER_MAX_CONNECTIONS,
				 FD_DNS + FD_SPARE, &fit, fd_note, sizeof(fd_note));
	m->srv_opts.max_connections = fit;
	if (!m->foreground) {
		if (daemon(0, 0) != 0) {
			fprintf(stderr, PROG ": cannot go to the background: %s\n", strerror(errno));
			return -1;
		}
		d->quiet_stderr = 1; /* /dev/null now */
	}
	if (fd_note[0] != '\0')
		spfkit__mta_log_printf(LOG_WARNING, "%s", fd_note);
	if (d->pid_file != NULL) {
		if (spfkit__mta_write_pid_file(PROG, d->pid_file) != 0)
			return -1;
		m->pid_written = 1;
	}
	return 0;
}

static int start(struct spfkit__mta_daemon *d)
{
	struct milter *m = d->self;
	int fd = m->fd;

	if (d->receiver != NULL)
		snprintf(m->receiver, sizeof(m->receiver), "%s", d->receiver);
	else if (gethostname(m->receiver, sizeof(m->receiver) - 1) != 0)
		snprintf(m->receiver, sizeof(m->receiver), "unknown");
	m->srv_opts.receiver = m->receiver;
	/* d->cfg stays ours: the first generation's (reload.c) */
	if (spfkit__milter_server_new(d->base, &m->srv_opts, d->cfg, d->dns.r, d->dns.layer, &m->srv) != 0)
		return -1;
	m->fd = -1; /* the server's, even when it cannot take it */
	if (spfkit__milter_server_listen_fd(m->srv, fd) != 0)
		return -1;
	if (d->registry != NULL)
		spfkit__milter_g.loop.metrics = spfkit__metrics_block(d->registry);
	return 0;
}

static int running(struct spfkit__mta_daemon *d)
{
	struct milter *m = d->self;

	spfkit__mta_log_printf(LOG_NOTICE, "ready on %s (authserv-id %s)", m->socket,
			       d->cfg->authserv_id);
	return 0;
}

/* SIGHUP: the configuration file again, as spfkit-policyd does (mta/reload.h). */
static int apply(struct spfkit__mta_daemon *d, struct spfkit__mta_config *cfg)
{
	(void)d;
	return spfkit__milter_reload(cfg);
}

static void finish(struct spfkit__mta_daemon *d)
{
	struct milter *m = d->self;

	spfkit__milter_server_free(m->srv); /* closes the connections, then the socket */
	m->srv = NULL;
	spfkit__milter_g.loop.metrics = NULL;
}

static void cleanup(struct spfkit__mta_daemon *d)
{
	struct milter *m = d->self;

	if (m->fd >= 0) /* the server never took it */
		close(m->fd);
	m->fd = -1;
	/* ours to remove; may fail after the privilege drop: harmless */
	if (m->pid_written)
		unlink(d->pid_file);
	if (m->socket_opened && unix_path(m->socket) != NULL)
		unlink(unix_path(m->socket));
}

static const struct spfkit__mta_daemon_desc desc = {
	.name = PROG,
	.usage = usage,
	.takes = SPFKIT__MTA_TAKES_CONFIG_ARG | SPFKIT__MTA_TAKES_CHECK_CONFIG |
		 SPFKIT__MTA_TAKES_USER | SPFKIT__MTA_TAKES_PID_FILE | SPFKIT__MTA_TAKES_SOCKET_MODE,
	.default_config = DEFAULT_CONFIG,
	.log_stderr = 0,
	.short_options = "s:f",
	.options = own_options,
	.option = option,
	.config_adapt = config_adapt,
	.setup = setup,
	.start = start,
	.running = running,
	.apply = apply,
	.finish = finish,
	.cleanup = cleanup,
};

int main(int argc, char **argv)
{
	struct milter m;

	memset(&m, 0, sizeof(m));
	m.fd = -1;
	return spfkit__mta_daemon_main(&desc, &m, argc, argv);
}
