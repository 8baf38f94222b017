/*
 * spfkit-policyd's server (see server.h): its log, the configuration's
 * generations (reload), the listeners and spawn mode, drain. Connections
 * are conn.c's, taking them in admit.c's, requests request.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "acceptor.h"
#include "engine.h"
#include "internal.h"
#include "peruser.h"
#include "log.h"

/* ---- logging ---------------------------------------------------------- */

int spfkit__policyd_debug_level(const struct spfkit__policyd *srv)
{
	return srv->gen->cfg->debug_level;
}

static void vlog(int level, int prio, const char *fmt, va_list ap)
{
	/* debugLevel -1: silent; 0: errors and warnings; 1+: also decisions */
	if (level < 0 || (level == 0 && prio > LOG_WARNING))
		return;
	spfkit__mta_log_vprintf(prio, fmt, ap);
}

void spfkit__policyd_log_text(const struct spfkit__policyd *srv, int prio, const char *text,
			      size_t len)
{
	int level = spfkit__policyd_debug_level(srv);

	if (level < 0 || (level == 0 && prio > LOG_WARNING))
		return;
	spfkit__mta_log_write(prio, text, len);
}

void spfkit__policyd_vlog(struct spfkit__policyd *srv, int prio, const char *fmt, va_list ap)
{
	vlog(spfkit__policyd_debug_level(srv), prio, fmt, ap);
}

void spfkit__policyd_log(struct spfkit__policyd *srv, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spfkit__policyd_vlog(srv, prio, fmt, ap);
	va_end(ap);
}

/* ---- generations -------------------------------------------------------- */

/*
 * The check's budget, only where it is needed: without DNS whitelists a
 * check is HELO's and MAIL FROM's evaluations, each ended by Lookup_Time,
 * so with 2 x Lookup_Time within --time-limit (the defaults: 40 s) the
 * phases alone end it in time and no budget timer is allocated per request.
 * Each DNS whitelist method (each Domain_Whitelist entry) adds a phase of
 * Whitelist_Lookup_Time: then the budget caps the sum.
 */
static int check_budget(const struct spfkit__mta_config *cfg, int limit)
{
	int whitelists = cfg->domain_whitelist.count > 0 || cfg->helo_whitelist.count > 0 ||
			 cfg->domain_whitelist_ptr.count > 0;

	return whitelists || 2L * cfg->lookup_time > limit ? limit : 0;
}

static void report_diag(void *arg, const struct spfkit__mta_diag *d);

/*
 * A configuration ready to serve: its SPF context and Per_User's file
 * (read with it: a broken one fails the whole, said through the log
 * when `say`). NULL: out of memory, or that file is broken.
 */
static struct gen *gen_new(struct spfkit__policyd *srv, struct spfkit__mta_config *cfg, int say)
{
	struct gen *g = spfkit__zalloc(NULL, sizeof(*g));

	if (g == NULL)
		return NULL;
	if (cfg->per_user != NULL &&
	    spfkit__policyd_peruser_load(cfg->per_user, srv->opts.config_path,
					 say ? report_diag : NULL, srv, &g->peruser) != 0) {
		spfkit__free(NULL, g);
		return NULL;
	}
	if (spfkit__mta_ctx_new(cfg, srv->receiver, srv->dns_cached, srv->opts.alloc, &g->ctx) != 0) {
		spfkit__policyd_peruser_free(g->peruser);
		spfkit__free(NULL, g);
		return NULL;
	}
	g->cfg = cfg;
	g->budget_s = check_budget(cfg, srv->opts.time_limit);
	g->refs = 1;
	return g;
}

void spfkit__policyd_gen_put(struct gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	spfkit_ctx_free(g->ctx);
	spfkit__policyd_peruser_free(g->peruser);
	spfkit__mta_config_free(g->cfg);
	spfkit__free(NULL, g);
}

/* ---- the server ------------------------------------------------------------ */

int spfkit__policyd_new(struct event_base *base, const struct spfkit__policyd_opts *opts,
			struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
			struct spfkit_resolver *cache, struct spfkit__policyd **out)
{
	struct spfkit__policyd *srv = spfkit__zalloc(NULL, sizeof(*srv));

	if (srv == NULL)
		return SPFKIT_ENOMEM;
	srv->base = base;
	srv->opts = *opts;
	if (srv->opts.max_connections == 0)
		srv->opts.max_connections = SPFKIT_POLICYD_MAX_CONNECTIONS;
	if (srv->opts.idle_timeout <= 0)
		srv->opts.idle_timeout = SPFKIT_POLICYD_IDLE_TIMEOUT;
	if (srv->opts.request_timeout <= 0)
		srv->opts.request_timeout = SPFKIT_POLICYD_REQUEST_TIMEOUT;
	if (srv->opts.cache_max == 0)
		srv->opts.cache_max = SPFKIT_POLICYD_CACHE_MAX;
	if (srv->opts.time_limit <= 0)
		srv->opts.time_limit = SPFKIT_POLICYD_TIME_LIMIT;
	if (srv->opts.max_per_client == 0)
		srv->opts.max_per_client =
			srv->opts.max_connections >= 4 ? srv->opts.max_connections / 4 : 1;
	if (opts->receiver != NULL)
		snprintf(srv->receiver, sizeof(srv->receiver), "%s", opts->receiver);
	else if (gethostname(srv->receiver, sizeof(srv->receiver) - 1) != 0)
		snprintf(srv->receiver, sizeof(srv->receiver), "unknown");
	srv->resolver = cache != NULL ? cache : r;
	srv->dns_cached = cache != NULL;
	srv->gen = gen_new(srv, cfg, 0); /* main.c said the files' problems */
	if (srv->gen == NULL || spfkit__policyd_admit_new(srv) != 0 ||
	    spfkit__mta_dns_attach(base, r, cache, &srv->dnsloop) != 0) {
		if (srv->gen != NULL)
			srv->gen->cfg = NULL; /* the caller keeps cfg on failure */
		spfkit__policyd_gen_put(srv->gen);
		spfkit__mta_acceptor_free(srv->acceptor);
		if (srv->room_retry != NULL)
			event_free(srv->room_retry);
		spfkit__free(NULL, srv);
		return SPFKIT_ENOMEM;
	}
	srv->loop.base = base;
	srv->loop.resolver = srv->resolver;
	srv->loop.dnsloop = srv->dnsloop;
	srv->loop.metrics = spfkit__metrics_block(opts->metrics);
	*out = srv;
	return 0;
}

int spfkit__policyd_listen_fd(struct spfkit__policyd *srv, int fd, const char *label)
{
	int rc = spfkit__mta_acceptor_listen_fd(srv->acceptor, fd);

	(void)label;
	if (rc == 0)
		srv->n_listeners++;
	return rc;
}

int spfkit__policyd_serve_stdio(struct spfkit__policyd *srv, int in_fd, int out_fd)
{
	evutil_make_socket_nonblocking(in_fd);
	evutil_make_socket_nonblocking(out_fd);
	return spfkit__policyd_conn_new(srv, in_fd, out_fd, "stdin", NULL) != NULL ? 0 : SPFKIT_ENOMEM;
}

static void report_diag(void *arg, const struct spfkit__mta_diag *d)
{
	struct spfkit__policyd *srv = arg;

	spfkit__policyd_log(srv, d->is_error ? LOG_ERR : LOG_WARNING, "%s:%u: %s: %s", d->file,
			    d->line, d->is_error ? "error" : "warning", d->text);
}

int spfkit__policyd_reload(struct spfkit__policyd *srv)
{
	struct spfkit__mta_config *cfg;
	struct gen *g;
	int rc;

	if (srv->opts.config_path == NULL)
		return 0;
	/* with --workers, each worker reads the file; worker 0 speaks for all */
	rc = spfkit__mta_config_load(srv->opts.config_path, NULL,
				     srv->worker == 0 ? report_diag : NULL, srv, &cfg);
	if (rc != 0) {
		if (srv->worker == 0)
			spfkit__policyd_log(srv, LOG_ERR, "reload of %s failed (%s); keeping the running configuration",
				    srv->opts.config_path, spfkit_strerror(rc));
		return rc;
	}
	g = gen_new(srv, cfg, srv->worker == 0);
	if (g == NULL) {
		spfkit__mta_config_free(cfg);
		if (srv->worker == 0)
			spfkit__policyd_log(srv, LOG_ERR, "reload of %s failed (Per_User's file, or out of "
				    "memory); keeping the running configuration", srv->opts.config_path);
		return SPFKIT_ENOMEM;
	}
	/* requests in flight finish with the configuration they started with */
	spfkit__policyd_gen_put(srv->gen);
	srv->gen = g;
	if (srv->worker == 0)
		spfkit__policyd_log(srv, LOG_NOTICE, "configuration %s reloaded",
				    srv->opts.config_path);
	return 0;
}

void spfkit__policyd_drain(struct spfkit__policyd *srv)
{
	struct conn *c, *next;

	srv->draining = 1;
	spfkit__mta_acceptor_stop(srv->acceptor);
	for (c = spfkit__policyd_conn_of(srv->conns.head); c != NULL; c = next) {
		next = spfkit__policyd_conn_of(c->link.next);
		if (c->job == NULL && c->req.scanned == 0 && c->out.len == 0)
			spfkit__policyd_conn_close(c);
	}
	spfkit__policyd_drain_check(srv);
}

void spfkit__policyd_free(struct spfkit__policyd *srv)
{
	if (srv == NULL)
		return;
	while (!spfkit__list_empty(&srv->conns))
		spfkit__policyd_conn_close(spfkit__policyd_conn_of(srv->conns.head));
	spfkit__mta_acceptor_free(srv->acceptor);
	event_free(srv->room_retry);
	spfkit__policyd_cache_free(srv);
	spfkit_event_detach(srv->dnsloop);
	spfkit__policyd_gen_put(srv->gen);
	spfkit__free(NULL, srv);
}
