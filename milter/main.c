/*
 * spfkit-milter: options, configuration, the listening socket,
 * daemon mode, PID file, privilege drop; then libmilter's loop, with
 * the worker (worker.c) doing every SPF check.
 *
 *   spfkit-milter [options] [CONFIG]
 *
 * The order matters: the socket is opened while still root (a port
 * below 1024, a socket in a root-owned directory), we fork into the
 * background before any thread exists, and the worker thread starts
 * last, with the signals libmilter handles blocked in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <libmilter/mfapi.h>

#include <spfkit/version.h>

#include "config.h"
#include "daemon.h"
#include "options.h"
#include "spfkit_util.h"
#include "milter.h"

#define PROG "spfkit-milter"
#define DEFAULT_CONFIG "/etc/spfkit/policyd-spf.conf"
#define DEFAULT_SOCKET "inet:8895@127.0.0.1"

struct options {
	const char *config;
	int config_given;
	int check_config;
	const char *socket;
	int foreground;
	const char *user;
	const char *pid_file;
	const char *receiver;
	int log_stderr;
	struct spfkit__mta_dns_opts dns;
};

static void usage(FILE *f)
{
	fputs("usage: " PROG " [options] [CONFIG]\n"
	      "  SPF milter for Postfix and Sendmail (RFC 7208), a drop-in for pyspf-milter.\n"
	      "  -c, --config FILE       policyd-spf.conf format (default " DEFAULT_CONFIG ")\n"
	      "      --check-config      report problems of the configuration with file:line, then exit\n"
	      "  -s, --socket SPEC       unix:/path | inet:PORT@HOST | inet6:PORT@HOST\n"
	      "                          (default: the configuration's Socket, else " DEFAULT_SOCKET ")\n"
	      "  -f, --foreground        do not fork into the background (systemd)\n"
	      "  -u, --user USER[:GROUP] drop privileges after opening the socket (default: UserID)\n"
	      "  -p, --pid-file FILE     write the process id there (default: PidFile)\n"
	      "      --dns SERVERS       DNS servers HOST[:PORT],... (default: /etc/resolv.conf)\n"
	      "      --dns-timeout MS    per-try DNS timeout\n"
	      "      --dns-cache-mb N    answer cache size (default 4; 0: none)\n"
	      "      --zone FILE         answer DNS from a zone file (tests, offline use)\n"
	      "      --zone-timeout NAME with --zone: questions for NAME time out (tests)\n"
	      "      --receiver NAME     this host's name in headers (default: the host name)\n"
	      "      --log syslog|stderr where log lines go (default syslog, facility mail)\n"
	      "  -h, --help, -V, --version\n",
	      f);
}

static int bad_value(const char *name, const char *value)
{
	fprintf(stderr, PROG ": bad value '%s' for --%s\n", value, name);
	return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { O_CHECK = 256, O_DNS, O_DNS_TIMEOUT, O_DNS_CACHE, O_ZONE, O_ZONE_TIMEOUT, O_RECEIVER,
	       O_LOG };
	static const struct option longs[] = {
		{"config", required_argument, NULL, 'c'}, {"check-config", no_argument, NULL, O_CHECK},
		{"socket", required_argument, NULL, 's'}, {"foreground", no_argument, NULL, 'f'},
		{"user", required_argument, NULL, 'u'}, {"pid-file", required_argument, NULL, 'p'},
		SPFKIT__MTA_DNS_OPTIONS(O_DNS),
		{"receiver", required_argument, NULL, O_RECEIVER}, {"log", required_argument, NULL, O_LOG},
		{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	o->config = DEFAULT_CONFIG;
	o->dns.cache_mb = 4;
	while ((ch = getopt_long(argc, argv, "c:s:fu:p:hV", longs, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; o->config_given = 1; break;
		case O_CHECK: o->check_config = 1; break;
		case 's': o->socket = optarg; break;
		case 'f': o->foreground = 1; break;
		case 'u': o->user = optarg; break;
		case 'p': o->pid_file = optarg; break;
		case O_DNS: case O_DNS_TIMEOUT: case O_DNS_CACHE: case O_ZONE: case O_ZONE_TIMEOUT:
			if (spfkit__mta_dns_option(&o->dns, ch - O_DNS, optarg) != 0)
				return bad_value(spfkit__mta_dns_option_name(ch - O_DNS), optarg);
			break;
		case O_RECEIVER: o->receiver = optarg; break;
		case O_LOG:
			if (strcmp(optarg, "stderr") != 0 && strcmp(optarg, "syslog") != 0)
				return bad_value("log", optarg);
			o->log_stderr = strcmp(optarg, "stderr") == 0;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': puts(PROG " " SPFKIT_VERSION_STRING); exit(0);
		default: usage(stderr); return 2;
		}
	}
	/* like policyd-spf and pyspf-milter, the one argument is the configuration file */
	if (optind < argc) {
		o->config = argv[optind++];
		o->config_given = 1;
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* ---- configuration ---------------------------------------------------- */

static void print_diag(void *arg, const struct spfkit__mta_diag *d)
{
	(void)arg;
	fprintf(stderr, "%s:%u: %s: %s\n", d->file, d->line, d->is_error ? "error" : "warning", d->text);
}

static int load_config(const struct options *o, struct spfkit__mta_config **cfg)
{
	/* as pyspf-milter: no file at the default place means the defaults */
	if (!o->config_given && access(o->config, F_OK) != 0)
		return spfkit__mta_config_defaults(NULL, cfg);
	return spfkit__mta_config_load(o->config, NULL, print_diag, NULL, cfg);
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

/* libmilter's socket, opened now (as root, before the fork), a stale UNIX socket replaced. */
static int open_socket(const char *spec, const struct spfkit__mta_config *cfg)
{
	static struct smfiDesc desc;

	if (cfg->umask >= 0)
		umask((mode_t)cfg->umask);
	spfkit__milter_describe(&desc);
	if (smfi_setconn((char *)spec) != MI_SUCCESS || smfi_register(desc) != MI_SUCCESS ||
	    smfi_opensocket(1) != MI_SUCCESS) {
		fprintf(stderr, PROG ": cannot listen on %s\n", spec);
		return -1;
	}
	return 0;
}

/* The path of a unix: or local: socket spec, or NULL. */
static const char *unix_path(const char *spec)
{
	if (strncmp(spec, "unix:", 5) == 0 || strncmp(spec, "local:", 6) == 0)
		return strchr(spec, ':') + 1;
	return NULL;
}

/*
 * A UNIX socket made as root is handed to the user we become, so that
 * with UMask (e.g. 007) the MTA's group can be given access with
 * --user USER:GROUP and the socket can be replaced at the next start.
 */
static int give_socket(const char *spec, const char *user)
{
	const char *path = unix_path(spec);
	uid_t uid;
	gid_t gid;

	if (path == NULL || user == NULL || geteuid() != 0)
		return 0;
	if (spfkit__mta_user_ids(PROG, user, &uid, &gid) != 0)
		return -1;
	if (chown(path, uid, gid) != 0) {
		fprintf(stderr, PROG ": chown %s: %s\n", path, strerror(errno));
		return -1;
	}
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

static void receiver_name(const struct options *o, char *buf, size_t size)
{
	if (o->receiver != NULL)
		snprintf(buf, size, "%s", o->receiver);
	else if (gethostname(buf, size - 1) != 0)
		snprintf(buf, size, "unknown");
	buf[size - 1] = '\0';
}

/* Process setup done: run libmilter until a signal stops it. */
static int serve(const struct options *o, struct spfkit__mta_config *cfg, struct spfkit__mta_dns *d,
		 const char *spec)
{
	struct spfkit__milter_worker_opts wo;
	char receiver[256];
	int rc;

	receiver_name(o, receiver, sizeof(receiver));
	memset(&wo, 0, sizeof(wo));
	wo.cfg = cfg;
	wo.receiver = receiver;
	wo.backend = d->r;
	wo.cache = d->layer;
	wo.budget_s = cfg->milter_time_limit;
	if (spfkit__milter_worker_new(&wo, &spfkit__milter_g.worker) != 0) {
		spfkit__mta_log_printf(LOG_ERR, "cannot start the worker thread");
		return 1;
	}
	spfkit__milter_g.cfg = cfg;
	spfkit__milter_g.authserv_id = cfg->authserv_id;
	spfkit__mta_log_printf(LOG_NOTICE, "ready on %s (authserv-id %s)", spec, cfg->authserv_id);
	rc = smfi_main() == MI_SUCCESS ? 0 : 1;
	spfkit__mta_log_printf(LOG_NOTICE, "stopping");
	spfkit__milter_worker_free(spfkit__milter_g.worker);
	spfkit__milter_g.worker = NULL;
	return rc;
}

static int setup_and_serve(const struct options *o, struct spfkit__mta_config *cfg)
{
	const char *spec = o->socket ? o->socket : cfg->socket ? cfg->socket : DEFAULT_SOCKET;
	const char *pid_file = o->pid_file ? o->pid_file : cfg->pid_file;
	const char *user = o->user ? o->user : cfg->user_id;
	struct spfkit__mta_dns d;
	int rc = 1;

	memset(&d, 0, sizeof(d));
	if (open_socket(spec, cfg) != 0 || give_socket(spec, user) != 0 ||
	    (!o->foreground && go_background() != 0))
		return 1;
	if (pid_file != NULL && write_pid_file(pid_file) != 0)
		return 1;
	if (spfkit__mta_dns_open(PROG, &o->dns, &d) == 0 &&
	    (user == NULL || spfkit__mta_drop_privileges(PROG, user) == 0))
		rc = serve(o, cfg, &d, spec);
	spfkit__mta_dns_close(&d);
	/* ours to remove (libmilter leaves it); may fail after the privilege drop: harmless */
	if (pid_file != NULL)
		unlink(pid_file);
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
	spfkit__mta_log_open("spfkit-milter", o.log_stderr, NULL);
	adapt_config(cfg);
	signal(SIGPIPE, SIG_IGN);
	rc = setup_and_serve(&o, cfg);
	spfkit__mta_config_free(cfg);
	return rc;
}
