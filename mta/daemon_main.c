/*
 * The daemons' one main() (daemon_main.h): the plumbing spfkit-policyd,
 * spfkit-milter and spfkit-smtpd-filter had each written out, once.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include <spfkit/spfkit.h>
#include <spfkit/version.h>

#include "daemon_main.h"
#include "engine.h"
#include "log.h"
#include "metrics_http.h"
#include "options.h"
#include "reload.h"

/* The shared long options' values: above the short letters, below the daemon's own. */
enum { O_CHECK = 128, O_MODE, O_RECEIVER, O_LOG, O_METRICS, O_DNS };

#define MAX_OPTIONS 64

void spfkit__mta_daemon_say(const struct spfkit__mta_daemon *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (d->quiet_stderr) {
		spfkit__mta_log_vprintf(LOG_ERR, fmt, ap);
	} else {
		fprintf(stderr, "%s: ", d->desc->name);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

void spfkit__mta_daemon_log(struct spfkit__mta_daemon *d, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (d->desc->vlog != NULL)
		d->desc->vlog(d, prio, fmt, ap);
	else
		spfkit__mta_log_vprintf(prio, fmt, ap);
	va_end(ap);
}

/* ---- the options -------------------------------------------------------- */

static int add_option(struct option *all, size_t *n, const char *name, int has_arg, int val)
{
	if (*n + 1 >= MAX_OPTIONS)
		return -1;
	all[*n].name = name;
	all[*n].has_arg = has_arg;
	all[*n].flag = NULL;
	all[*n].val = val;
	(*n)++;
	memset(&all[*n], 0, sizeof(all[*n]));
	return 0;
}

/* The shared options this daemon takes, then its own; and their short letters. */
static int option_table(const struct spfkit__mta_daemon_desc *desc, struct option *all,
			char *shorts, size_t shorts_size)
{
	static const char *const dns[SPFKIT__MTA_DNS_OPTION_COUNT] = {
		"dns", "dns-timeout", "dns-cache-mb", "zone", "zone-timeout",
	};
	unsigned t = desc->takes;
	size_t n = 0, i;
	int bad = 0, len;

	bad |= add_option(all, &n, "config", required_argument, 'c');
	if (t & SPFKIT__MTA_TAKES_CHECK_CONFIG)
		bad |= add_option(all, &n, "check-config", no_argument, O_CHECK);
	if (t & SPFKIT__MTA_TAKES_USER)
		bad |= add_option(all, &n, "user", required_argument, 'u');
	if (t & SPFKIT__MTA_TAKES_PID_FILE)
		bad |= add_option(all, &n, "pid-file", required_argument, 'p');
	if (t & SPFKIT__MTA_TAKES_SOCKET_MODE)
		bad |= add_option(all, &n, "socket-mode", required_argument, O_MODE);
	for (i = 0; i < SPFKIT__MTA_DNS_OPTION_COUNT; i++)
		bad |= add_option(all, &n, dns[i], required_argument, O_DNS + (int)i);
	bad |= add_option(all, &n, "receiver", required_argument, O_RECEIVER);
	bad |= add_option(all, &n, "log", required_argument, O_LOG);
	bad |= add_option(all, &n, "metrics", required_argument, O_METRICS);
	bad |= add_option(all, &n, "help", no_argument, 'h');
	bad |= add_option(all, &n, "version", no_argument, 'V');
	for (i = 0; desc->options != NULL && desc->options[i].name != NULL; i++)
		bad |= add_option(all, &n, desc->options[i].name, desc->options[i].has_arg,
				  desc->options[i].val);
	len = snprintf(shorts, shorts_size, "c:%s%shV%s", t & SPFKIT__MTA_TAKES_USER ? "u:" : "",
		       t & SPFKIT__MTA_TAKES_PID_FILE ? "p:" : "",
		       desc->short_options != NULL ? desc->short_options : "");
	return bad || len < 0 || (size_t)len >= shorts_size ? -1 : 0;
}

static const char *option_name(const struct option *all, int ch)
{
	size_t i;

	for (i = 0; all[i].name != NULL; i++)
		if (all[i].val == ch)
			return all[i].name;
	return "?";
}

/* A shared option: 0, 1 (a bad value), or -1 (not one of them). */
static int shared_option(struct spfkit__mta_daemon *d, int ch, const char *value)
{
	char *end;
	long v;

	switch (ch) {
	case 'c': d->config = value; d->config_given = 1; return 0;
	case O_CHECK: d->check_config = 1; return 0;
	case 'u': d->user = value; return 0;
	case 'p': d->pid_file = value; return 0;
	case O_MODE:
		errno = 0;
		v = strtol(value, &end, 8);
		if (value[0] == '\0' || *end != '\0' || errno != 0 || v < 0 || v > 0777)
			return 1;
		d->socket_mode = (int)v;
		return 0;
	case O_RECEIVER: d->receiver = value; return 0;
	case O_LOG:
		v = spfkit__mta_log_option(value);
		if (v < 0)
			return 1;
		d->log_stderr = (int)v;
		return 0;
	case O_METRICS: d->metrics = value; return 0;
	default:
		if (ch >= O_DNS && ch < O_DNS + SPFKIT__MTA_DNS_OPTION_COUNT)
			return spfkit__mta_dns_option(&d->dns_opts, ch - O_DNS, value) != 0 ? 1 : 0;
		return -1;
	}
}

static int parse_args(struct spfkit__mta_daemon *d, int argc, char **argv)
{
	const struct spfkit__mta_daemon_desc *desc = d->desc;
	struct option all[MAX_OPTIONS];
	char shorts[64];
	int ch, rc;

	if (option_table(desc, all, shorts, sizeof(shorts)) != 0) {
		fprintf(stderr, "%s: too many options\n", desc->name);
		return 2;
	}
	while ((ch = getopt_long(argc, argv, shorts, all, NULL)) != -1) {
		if (ch == 'h') {
			fputs(desc->usage, stdout);
			exit(0);
		}
		if (ch == 'V') {
			printf("%s %s\n", desc->name, SPFKIT_VERSION_STRING);
			exit(0);
		}
		rc = ch == '?' ? -1 : shared_option(d, ch, optarg);
		if (rc < 0 && ch != '?' && desc->option != NULL)
			rc = desc->option(d, ch, optarg);
		if (rc < 0) {
			fputs(desc->usage, stderr);
			return 2;
		}
		if (rc == 1) {
			fprintf(stderr, "%s: bad value '%s' for --%s\n", desc->name, optarg,
				option_name(all, ch));
			return 2;
		}
		if (rc != 0)
			return 2;
	}
	if (desc->takes & SPFKIT__MTA_TAKES_CONFIG_ARG) {
		if (spfkit__mta_config_argument(argc, argv, &d->config, &d->config_given) != 0) {
			fputs(desc->usage, stderr);
			return 2;
		}
	} else if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", desc->name, argv[optind]);
		fputs(desc->usage, stderr);
		return 2;
	}
	return desc->args_done != NULL ? desc->args_done(d) : 0;
}

/* ---- signals ------------------------------------------------------------ */

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct spfkit__mta_daemon *d = arg;

	(void)what;
	if (d->desc->stop != NULL) {
		d->desc->stop(d, (int)sig);
		return;
	}
	spfkit__mta_daemon_log(d, LOG_NOTICE, "signal %d: stopping", (int)sig);
	event_base_loopexit(d->base, NULL);
}

static int apply_config(void *arg, struct spfkit__mta_config *cfg)
{
	struct spfkit__mta_daemon *d = arg;

	if (d->desc->config_adapt != NULL)
		d->desc->config_adapt(cfg);
	return d->desc->apply(d, cfg);
}

static void on_hup(evutil_socket_t sig, short what, void *arg)
{
	struct spfkit__mta_daemon *d = arg;

	(void)sig;
	(void)what;
	if (d->desc->reload != NULL)
		d->desc->reload(d);
	else if (d->desc->apply != NULL)
		spfkit__mta_reread(d->config, d->config_given, apply_config, d);
}

/* SIGTERM and SIGINT stop, SIGHUP reloads; before the listeners, for whoever sees them may signal at once. */
static int add_signals(struct spfkit__mta_daemon *d)
{
	static const int sigv[3] = {SIGTERM, SIGINT, SIGHUP};
	int i;

	for (i = 0; i < 3; i++) {
		d->sig[i] = evsignal_new(d->base, sigv[i], sigv[i] == SIGHUP ? on_hup : on_stop, d);
		if (d->sig[i] == NULL || event_add(d->sig[i], NULL) != 0)
			return -1;
	}
	return 0;
}

/* ---- the run -------------------------------------------------------------- */

static struct event_base *new_base(int avoid_epoll)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;

	if (ec == NULL)
		return NULL;
	if (avoid_epoll) /* epoll cannot watch a regular file on stdin */
		event_config_avoid_method(ec, "epoll");
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}

/* /metrics served from its own thread, after any fork and the privilege drop. */
static int metrics_start(struct spfkit__mta_daemon *d)
{
	int fd = d->metrics_fd;

	d->metrics_fd = -1; /* the listener's from here, even when it fails */
	if (spfkit__metrics_http_start(d->registry, fd, &d->http) != 0) {
		spfkit__mta_daemon_say(d, "cannot start the metrics listener");
		return -1;
	}
	spfkit__mta_daemon_log(d, LOG_NOTICE, "metrics on %s (port %u)", d->metrics, d->metrics_port);
	return 0;
}

/* Everything after the log is open; the exit status. */
static int run(struct spfkit__mta_daemon *d)
{
	const struct spfkit__mta_daemon_desc *desc = d->desc;
	int rc = 1, i;

	if (d->metrics == NULL)
		d->metrics = d->cfg->metrics_listen;
	if (d->metrics != NULL) {
		d->metrics_fd = spfkit__metrics_http_listen(desc->name, d->metrics, &d->metrics_port);
		if (d->metrics_fd < 0)
			goto out;
	}
	if (desc->setup != NULL && desc->setup(d) != 0)
		goto out;
	if (spfkit__mta_dns_open(desc->name, &d->dns_opts, &d->dns) != 0)
		goto out;
	/* the registry before the server, whose loop takes a block of it */
	if (d->metrics != NULL) {
		if (spfkit__metrics_new(desc->name, &d->registry) != 0) {
			spfkit__mta_daemon_say(d, "out of memory for the metrics");
			goto out;
		}
		spfkit__metrics_set_cache(d->registry, d->dns.cache);
	}
	d->base = new_base(d->avoid_epoll);
	if (d->base == NULL || (desc->start != NULL && desc->start(d) != 0)) {
		spfkit__mta_daemon_say(d, "cannot start the event loop");
		goto out;
	}
	if (add_signals(d) != 0) {
		spfkit__mta_daemon_say(d, "cannot handle signals");
		goto out;
	}
	if (desc->serve != NULL && desc->serve(d) != 0)
		goto out;
	if (d->user != NULL && spfkit__mta_drop_privileges(desc->name, d->user) != 0)
		goto out;
	if (d->metrics_fd >= 0 && metrics_start(d) != 0)
		goto out;
	if (desc->running != NULL && desc->running(d) != 0)
		goto out;
	spfkit__mta_run(d->base);
	rc = 0;
out:
	spfkit__metrics_http_stop(d->http);
	if (d->metrics_fd >= 0)
		close(d->metrics_fd);
	if (desc->finish != NULL)
		desc->finish(d);
	for (i = 0; i < 3; i++)
		if (d->sig[i] != NULL)
			event_free(d->sig[i]);
	if (d->base != NULL)
		event_base_free(d->base);
	spfkit__metrics_free(d->registry);
	spfkit__mta_dns_close(&d->dns);
	if (desc->cleanup != NULL)
		desc->cleanup(d);
	return rc;
}

/* The file, or the defaults when the default one is not there (daemon.h); then the daemon's look. */
static int load_config(struct spfkit__mta_daemon *d)
{
	int from_file;
	int rc = spfkit__mta_config_read(d->config, d->config_given, d->desc->name, d->quiet_stderr,
					 &from_file, &d->cfg);

	d->config_path = from_file ? d->config : NULL;
	if (rc == 0 && d->desc->config_check != NULL)
		rc = d->desc->config_check(d, d->cfg);
	return rc;
}

int spfkit__mta_daemon_main(const struct spfkit__mta_daemon_desc *desc, void *self, int argc,
			    char **argv)
{
	struct spfkit__mta_daemon d;
	int rc;

	memset(&d, 0, sizeof(d));
	d.desc = desc;
	d.self = self;
	d.config = desc->default_config != NULL ? desc->default_config : SPFKIT_MTA_CONF_DEFAULT_PATH;
	d.socket_mode = -1;
	d.log_stderr = desc->log_stderr;
	d.dns_opts.cache_mb = 4;
	d.metrics_fd = -1;
	if (desc->prepare != NULL && (rc = desc->prepare(&d)) != 0)
		return rc;
	rc = parse_args(&d, argc, argv);
	if (rc != 0)
		return rc;
	if (d.quiet_stderr) /* early, for the configuration's problems */
		spfkit__mta_log_open(desc->name, 0, d.log_socket);
	rc = load_config(&d);
	if (d.check_config) {
		if (rc == 0)
			fprintf(stderr, "%s: OK\n", d.config_path != NULL ? d.config_path : "(defaults)");
		spfkit__mta_config_free(d.cfg);
		return rc == 0 ? 0 : 1;
	}
	if (rc != 0) {
		spfkit__mta_config_free(d.cfg);
		spfkit__mta_daemon_say(&d, "%s: %s; not starting", d.config, spfkit_strerror(rc));
		return 1;
	}
	/* --log stderr cannot mean a stderr that is not ours: syslog then */
	spfkit__mta_log_open(desc->name, d.log_stderr && !d.quiet_stderr, d.log_socket);
	if (desc->config_adapt != NULL)
		desc->config_adapt(d.cfg);
	/* a peer going away must not kill us in a write: the write fails, we go on */
	signal(SIGPIPE, SIG_IGN);
	rc = run(&d);
	spfkit__mta_config_free(d.cfg);
	return rc;
}
