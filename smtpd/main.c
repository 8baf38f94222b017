/*
 * spfkit-smtpd-filter: the filter on stdin and stdout; the rest of
 * main() is the daemons' shared one (mta/daemon_main.h).
 *
 * smtpd starts it (smtpd.conf: filter "spf" proc-exec
 * "spfkit-smtpd-filter --config /etc/spfkit/policyd-spf.conf") with the
 * protocol on stdin and stdout and our stderr going to its log. Stdout
 * carries protocol only: every message goes to the log.
 */
#include <syslog.h>

#include "config.h"
#include "daemon_main.h"
#include "filter.h"
#include "log.h"

struct smtpd {
	struct spfkit__smtpd_opts opts;
	struct spfkit__smtpd *f;
	const char *authserv_id; /* the first configuration's, for the line at start */
};

static const char usage[] =
	"usage: spfkit-smtpd-filter [options]\n"
	"  SPF (RFC 7208) for OpenSMTPD as a proc-exec filter: the protocol of\n"
	"  smtpd-filters(7) on stdin and stdout, the decisions of spfkit-policyd.\n"
	"  -c, --config FILE       policyd-spf.conf (default " SPFKIT_MTA_CONF_DEFAULT_PATH
	";\n"
	"                          the defaults when that file does not exist)\n"
	SPFKIT__MTA_USAGE_RESOLVER
	"      --log stderr|syslog where log lines go (default stderr, which smtpd logs)\n"
	"      --metrics HOST:PORT serve counters on http://HOST:PORT/metrics (Prometheus);\n"
	"                          PORT alone: 127.0.0.1 (default: off; Metrics_Listen)\n"
	"  -h, --help, -V, --version\n";

/* stdin may be a regular file when run by hand: no epoll */
static int args_done(struct spfkit__mta_daemon *d)
{
	d->avoid_epoll = 1;
	return 0;
}

static int start(struct spfkit__mta_daemon *d)
{
	struct smtpd *s = d->self;

	s->opts.receiver = d->receiver;
	s->opts.log_stderr = d->log_stderr;
	s->opts.in_fd = 0;
	s->opts.out_fd = 1;
	s->opts.metrics = d->registry;
	if (spfkit__smtpd_new(d->base, &s->opts, d->cfg, d->dns.r, d->dns.layer, &s->f) != 0)
		return -1;
	s->authserv_id = d->cfg->authserv_id;
	d->cfg = NULL; /* the filter's */
	return 0;
}

static int running(struct spfkit__mta_daemon *d)
{
	struct smtpd *s = d->self;

	spfkit__mta_log_printf(LOG_INFO, "started (authserv-id %s)", s->authserv_id);
	return 0;
}

/* SIGHUP: the configuration file again, as spfkit-policyd does (mta/reload.h). */
static int apply(struct spfkit__mta_daemon *d, struct spfkit__mta_config *cfg)
{
	struct smtpd *s = d->self;

	return spfkit__smtpd_reload(s->f, cfg);
}

static void finish(struct spfkit__mta_daemon *d)
{
	struct smtpd *s = d->self;

	spfkit__smtpd_free(s->f);
	s->f = NULL;
}

static const struct spfkit__mta_daemon_desc desc = {
	.name = "spfkit-smtpd-filter",
	.usage = usage,
	.log_stderr = 1, /* smtpd logs what we write there */
	.args_done = args_done,
	.start = start,
	.running = running,
	.apply = apply,
	.finish = finish,
};

int main(int argc, char **argv)
{
	struct smtpd s = {0};

	return spfkit__mta_daemon_main(&desc, &s, argc, argv);
}
