/*
 * spfkit-smtpd-filter: options, configuration, DNS, the loop.
 *
 * smtpd starts it (smtpd.conf: filter "spf" proc-exec
 * "spfkit-smtpd-filter --config /etc/spfkit/policyd-spf.conf") with the
 * protocol on stdin and stdout and our stderr going to its log. Stdout
 * carries protocol only: every message goes to the log.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include <spfkit/spfkit.h>

#include "config.h"
#include "daemon.h"
#include "filter.h"
#include "metrics_http.h"
#include "options.h"
#include "reload.h"

struct options {
	const char *config;
	int config_given;
	struct spfkit__mta_dns_opts dns_opts;
	struct spfkit__smtpd_opts filter;
	const char *metrics; /* --metrics, else Metrics_Listen; NULL: no /metrics */
};

static void usage(FILE *f)
{
	fputs("usage: spfkit-smtpd-filter [options]\n"
	      "  SPF (RFC 7208) for OpenSMTPD as a proc-exec filter: the protocol of\n"
	      "  smtpd-filters(7) on stdin and stdout, the decisions of spfkit-policyd.\n"
	      "  -c, --config FILE       policyd-spf.conf (default " SPFKIT_MTA_CONF_DEFAULT_PATH
	      ";\n"
	      "                          the defaults when that file does not exist)\n"
	      "      --dns SERVERS       DNS servers HOST[:PORT],... (default: /etc/resolv.conf)\n"
	      "      --dns-timeout MS    per-try DNS timeout\n"
	      "      --dns-cache-mb N    answer cache size (default 4; 0: none)\n"
	      "      --zone FILE         answer DNS from a zone file (tests, offline use)\n"
	      "      --zone-timeout NAME with --zone: questions for NAME time out (tests)\n"
	      "      --receiver NAME     this host's name in headers (default: the host name)\n"
	      "      --log stderr|syslog where log lines go (default stderr, which smtpd logs)\n"
	      "      --metrics HOST:PORT serve counters on http://HOST:PORT/metrics (Prometheus);\n"
	      "                          PORT alone: 127.0.0.1 (default: off; Metrics_Listen)\n"
	      "  -h, --help, -V, --version\n",
	      f);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { O_DNS = 256, O_DNS_TIMEOUT, O_DNS_CACHE, O_ZONE, O_ZONE_TIMEOUT, O_RECEIVER, O_LOG,
	       O_METRICS };
	static const struct option longs[] = {
		{"config", required_argument, NULL, 'c'}, SPFKIT__MTA_DNS_OPTIONS(O_DNS),
		{"receiver", required_argument, NULL, O_RECEIVER}, {"log", required_argument, NULL, O_LOG},
		{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'},
		{"metrics", required_argument, NULL, O_METRICS}, {NULL, 0, NULL, 0},
	};
	const char *name = "?";
	int ch;
	size_t i;

	o->config = SPFKIT_MTA_CONF_DEFAULT_PATH;
	o->dns_opts.cache_mb = 4;
	o->filter.log_stderr = 1;
	o->filter.in_fd = 0;
	o->filter.out_fd = 1;
	while ((ch = getopt_long(argc, argv, "c:hV", longs, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; o->config_given = 1; break;
		case O_DNS: case O_DNS_TIMEOUT: case O_DNS_CACHE: case O_ZONE: case O_ZONE_TIMEOUT:
			if (spfkit__mta_dns_option(&o->dns_opts, ch - O_DNS, optarg) != 0)
				goto bad;
			break;
		case O_RECEIVER: o->filter.receiver = optarg; break;
		case O_LOG:
			o->filter.log_stderr = spfkit__mta_log_option(optarg);
			if (o->filter.log_stderr < 0)
				goto bad;
			break;
		case O_METRICS: o->metrics = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': puts("spfkit-smtpd-filter " SPFKIT_VERSION_STRING); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "spfkit-smtpd-filter: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return 0;
bad:
	for (i = 0; longs[i].name != NULL; i++)
		if (longs[i].val == ch)
			name = longs[i].name;
	fprintf(stderr, "spfkit-smtpd-filter: bad value '%s' for --%s\n", optarg, name);
	return 2;
}

/* The file, or the defaults when the default one is not there (mta/daemon.h). */
static int load_config(const struct options *o, struct spfkit__mta_config **cfg)
{
	return spfkit__mta_config_read(o->config, o->config_given, "spfkit-smtpd-filter", 0, NULL,
				       cfg);
}

/* /metrics on a thread of its own; the filter's loop counts into the registry. */
static int metrics_start(struct options *o, const struct spfkit__mta_dns *d,
			 struct spfkit__metrics_http **http)
{
	unsigned port = 0;
	int fd = spfkit__metrics_http_listen("spfkit-smtpd-filter", o->metrics, &port);

	if (fd < 0 || spfkit__metrics_http_start(o->filter.metrics, fd, http) != 0) {
		spfkit__mta_log_printf(LOG_ERR, "cannot start the metrics listener on %s", o->metrics);
		return -1;
	}
	spfkit__metrics_set_cache(o->filter.metrics, d->cache);
	spfkit__mta_log_printf(LOG_INFO, "metrics on %s (port %u)", o->metrics, port);
	return 0;
}

struct hup {
	const struct options *o;
	struct spfkit__smtpd *f;
};

static int apply_config(void *arg, struct spfkit__mta_config *cfg)
{
	return spfkit__smtpd_reload(arg, cfg);
}

/* SIGHUP: the configuration file again, as spfkit-policyd does (mta/reload.h). */
static void on_hup(evutil_socket_t sig, short what, void *arg)
{
	const struct hup *h = arg;

	(void)sig;
	(void)what;
	spfkit__mta_reread(h->o->config, h->o->config_given, apply_config, h->f);
}

static int run(struct options *o, struct spfkit__mta_config *cfg, struct spfkit__mta_dns *d)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;
	struct spfkit__smtpd *f = NULL;
	struct spfkit__metrics_http *http = NULL;
	struct event *hup_ev = NULL;
	struct hup hup;

	/* stdin may be a regular file when run by hand; epoll cannot watch those */
	if (ec != NULL)
		event_config_avoid_method(ec, "epoll");
	base = ec != NULL ? event_base_new_with_config(ec) : NULL;
	if (ec != NULL)
		event_config_free(ec);
	if (base == NULL ||
	    spfkit__smtpd_new(base, &o->filter, cfg, d->r, d->layer, &f) != 0) {
		spfkit__mta_log_printf(LOG_ERR, "cannot start the event loop");
		spfkit__mta_config_free(cfg);
		if (base != NULL)
			event_base_free(base);
		return 1;
	}
	if (o->metrics != NULL && metrics_start(o, d, &http) != 0) {
		spfkit__smtpd_free(f);
		event_base_free(base);
		return 1;
	}
	hup.o = o;
	hup.f = f;
	hup_ev = evsignal_new(base, SIGHUP, on_hup, &hup);
	if (hup_ev == NULL || event_add(hup_ev, NULL) != 0)
		spfkit__mta_log_printf(LOG_WARNING, "no SIGHUP handler: reload needs a restart");
	spfkit__mta_log_printf(LOG_INFO, "started (authserv-id %s)", cfg->authserv_id);
	event_base_dispatch(base);
	if (hup_ev != NULL)
		event_free(hup_ev);
	spfkit__metrics_http_stop(http);
	spfkit__smtpd_free(f);
	event_base_free(base);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct spfkit__mta_config *cfg = NULL;
	struct spfkit__mta_dns d;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	rc = load_config(&o, &cfg);
	if (rc != 0) {
		fprintf(stderr, "spfkit-smtpd-filter: %s: %s; not starting\n", o.config,
			spfkit_strerror(rc));
		return 1;
	}
	spfkit__mta_log_open("spfkit-smtpd-filter", o.filter.log_stderr, NULL);
	/* smtpd going away must not kill us in a write: the write fails, we end */
	signal(SIGPIPE, SIG_IGN);
	memset(&d, 0, sizeof(d));
	if (spfkit__mta_dns_open("spfkit-smtpd-filter", &o.dns_opts, &d) != 0) {
		spfkit__mta_config_free(cfg);
		spfkit__mta_dns_close(&d);
		return 1;
	}
	if (o.metrics == NULL)
		o.metrics = cfg->metrics_listen;
	/* the registry before the filter, whose loop takes a block of it */
	if (o.metrics != NULL && spfkit__metrics_new("spfkit-smtpd-filter", &o.filter.metrics) != 0) {
		spfkit__mta_config_free(cfg);
		spfkit__mta_dns_close(&d);
		return 1;
	}
	rc = run(&o, cfg, &d);
	spfkit__metrics_free(o.filter.metrics);
	spfkit__mta_dns_close(&d);
	return rc;
}
