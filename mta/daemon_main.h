/*
 * One main() for spfkit-policyd, spfkit-milter and spfkit-smtpd-filter
 * (issue 28): each daemon describes itself (name, --help text, its own
 * options, its protocol's hooks) and spfkit__mta_daemon_main() does the
 * rest the same way for all three:
 *
 *   prepare -> options -> the configuration file (--check-config ends
 *   here) -> the log -> SIGPIPE ignored -> the /metrics socket bound ->
 *   setup (still root: sockets, fork, PID file) -> DNS -> the metrics
 *   registry -> the event loop -> start (the protocol's server) ->
 *   SIGTERM, SIGINT, SIGHUP -> serve (listeners) -> the privilege drop
 *   -> /metrics served -> running -> the loop, until a signal or the
 *   protocol ends it -> finish -> cleanup.
 *
 * Sockets are opened while root, a daemon that forks does so before the
 * loop exists, and privileges are dropped before the first connection
 * is taken. Not an API.
 */
#ifndef SPFKIT_MTA_DAEMON_MAIN_H
#define SPFKIT_MTA_DAEMON_MAIN_H

#include <getopt.h>
#include <stdarg.h>

#include "config.h"
#include "daemon.h"
#include "metrics.h"

struct event_base;
struct event;
struct spfkit__metrics_http;

/* The shared options a daemon takes beside --config, the DNS ones, --receiver, --log, --metrics. */
#define SPFKIT__MTA_TAKES_CONFIG_ARG 1u   /* CONFIG as the argument, as policyd-spf and pyspf-milter */
#define SPFKIT__MTA_TAKES_CHECK_CONFIG 2u /* --check-config */
#define SPFKIT__MTA_TAKES_USER 4u         /* -u, --user USER[:GROUP] */
#define SPFKIT__MTA_TAKES_PID_FILE 8u     /* -p, --pid-file FILE */
#define SPFKIT__MTA_TAKES_SOCKET_MODE 16u /* --socket-mode MODE (octal) */

/* The daemon's own long options take values from here up (the shared ones are below). */
#define SPFKIT__MTA_OWN_OPTIONS 256

struct spfkit__mta_daemon;

/* --help lines for the resolver options every daemon takes from here, for its usage. */
#define SPFKIT__MTA_USAGE_RESOLVER \
	"      --dns SERVERS       DNS servers HOST[:PORT],... (default: /etc/resolv.conf)\n" \
	"      --dns-timeout MS    per-try DNS timeout\n" \
	"      --dns-cache-mb N    answer cache size (default 4; 0: none)\n" \
	"      --zone FILE         answer DNS from a zone file (tests, offline use)\n" \
	"      --zone-timeout NAME with --zone: questions for NAME time out (tests)\n" \
	"      --receiver NAME     this host's name in headers (default: the host name)\n"

struct spfkit__mta_daemon_desc {
	const char *name;  /* "spfkit-policyd": the log's ident, every message's prefix */
	const char *usage; /* --help, whole */
	const char *default_config; /* NULL: SPFKIT_MTA_CONF_DEFAULT_PATH (policyd-spf's) */
	unsigned takes;    /* SPFKIT__MTA_TAKES_* */
	int log_stderr;    /* --log's default: 1 stderr, 0 syslog */
	const char *short_options;    /* its own, getopt's form ("l:w:"); NULL: none */
	const struct option *options; /* its own, ended by a zeroed entry; NULL: none */

	/*
	 * Every hook may be NULL. Those returning int give 0 to go on; the
	 * ones before the loop say their own problems.
	 */
	/* Before the options are read: 0, or the exit status. */
	int (*prepare)(struct spfkit__mta_daemon *d);
	/* One of its options: 0; 1: a bad value (said here, naming it); 2: said, exit 2. */
	int (*option)(struct spfkit__mta_daemon *d, int ch, const char *value);
	/* All options read: 0, or 2 (said). */
	int (*args_done)(struct spfkit__mta_daemon *d);
	/* The configuration just read (d->config_path set), before --check-config's OK: 0 or an error. */
	int (*config_check)(struct spfkit__mta_daemon *d, struct spfkit__mta_config *cfg);
	/* How this daemon reads the configuration: at start (log open) and on each SIGHUP reread. */
	void (*config_adapt)(struct spfkit__mta_config *cfg);
	/* Still root, before DNS and the loop: its sockets, fork, PID file. */
	int (*setup)(struct spfkit__mta_daemon *d);
	/* The protocol's server on d->base; taking d->cfg means setting it NULL. */
	int (*start)(struct spfkit__mta_daemon *d);
	/* Signal handlers set, privileges not yet dropped: listen, serve stdin. */
	int (*serve)(struct spfkit__mta_daemon *d);
	/* Privileges dropped, /metrics served, the loop about to run. */
	int (*running)(struct spfkit__mta_daemon *d);
	/* SIGTERM, SIGINT. NULL: "signal N: stopping" and the loop ends at once. */
	void (*stop)(struct spfkit__mta_daemon *d, int sig);
	/* SIGHUP. NULL: the file again (mta/reload.h), adapted, handed to apply. */
	void (*reload)(struct spfkit__mta_daemon *d);
	int (*apply)(struct spfkit__mta_daemon *d, struct spfkit__mta_config *cfg);
	/* The loop has ended (or never ran): the protocol's server freed. */
	void (*finish)(struct spfkit__mta_daemon *d);
	/* Last, after DNS is closed: files to remove. */
	void (*cleanup)(struct spfkit__mta_daemon *d);
	/* The shared part's log lines (policyd: under debugLevel). NULL: mta/log.h's. */
	void (*vlog)(struct spfkit__mta_daemon *d, int prio, const char *fmt, va_list ap)
		__attribute__((format(printf, 3, 0)));
};

struct spfkit__mta_daemon {
	const struct spfkit__mta_daemon_desc *desc;
	void *self; /* the daemon's own state */

	/* the shared options */
	const char *config; /* the file; desc->default_config unless given */
	int config_given;
	int check_config;
	const char *user;     /* NULL: stay who we are */
	const char *pid_file; /* the daemon writes it (spfkit__mta_write_pid_file) */
	int socket_mode;      /* -1: not given */
	const char *receiver;
	int log_stderr;
	const char *log_socket; /* NULL: /dev/log */
	const char *metrics;    /* --metrics, else Metrics_Listen; NULL: no /metrics */
	struct spfkit__mta_dns_opts dns_opts;

	/* set by the hooks */
	int quiet_stderr; /* stderr is not ours (spawn mode's client, a daemon gone background) */
	int avoid_epoll;  /* the loop watches stdin, which may be a regular file */

	/* what the run made */
	const char *config_path; /* the file read; NULL: the defaults */
	struct spfkit__mta_config *cfg;
	struct spfkit__mta_dns dns;
	struct spfkit__metrics *registry; /* NULL: no /metrics */
	int metrics_fd;
	unsigned metrics_port;
	struct spfkit__metrics_http *http;
	struct event_base *base;
	struct event *sig[3];
};

/* Run the daemon; its exit status. */
int spfkit__mta_daemon_main(const struct spfkit__mta_daemon_desc *desc, void *self, int argc,
			    char **argv);

/* A problem before the loop: "NAME: TEXT" on stderr, or to the log when stderr is not ours. */
void spfkit__mta_daemon_say(const struct spfkit__mta_daemon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A line through desc->vlog (or mta/log.h). */
void spfkit__mta_daemon_log(struct spfkit__mta_daemon *d, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
