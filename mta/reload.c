/* Configuration generations and the SIGHUP reread of milter and smtpd (reload.h). */
#include <syslog.h>

#include "daemon.h"
#include "engine.h"
#include "log.h"
#include "reload.h"
#include "spfkit_util.h"

struct spfkit__mta_gen *spfkit__mta_gen_new(struct spfkit__mta_config *cfg, struct spfkit_ctx *ctx,
					    int owns_cfg)
{
	struct spfkit__mta_gen *g = spfkit__zalloc(NULL, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->cfg = cfg;
	g->ctx = ctx;
	g->refs = 1;
	g->owns_cfg = owns_cfg;
	return g;
}

struct spfkit__mta_gen *spfkit__mta_gen_load(struct spfkit__mta_config *cfg, const char *receiver,
					     int dns_cached, const struct spfkit_allocator *alloc)
{
	struct spfkit_ctx *ctx = NULL;
	struct spfkit__mta_gen *g = NULL;

	if (spfkit__mta_ctx_new(cfg, receiver, dns_cached, alloc, &ctx) == 0)
		g = spfkit__mta_gen_new(cfg, ctx, 1);
	if (g == NULL) {
		spfkit_ctx_free(ctx);
		spfkit__mta_config_free(cfg);
	}
	return g;
}

struct spfkit__mta_gen *spfkit__mta_gen_hold(struct spfkit__mta_gen *g)
{
	g->refs++;
	return g;
}

void spfkit__mta_gen_put(struct spfkit__mta_gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	spfkit_ctx_free(g->ctx);
	if (g->owns_cfg)
		spfkit__mta_config_free(g->cfg);
	spfkit__free(NULL, g);
}

void spfkit__mta_reread(const char *path, int given, spfkit__mta_apply_fn apply, void *arg)
{
	struct spfkit__mta_config *cfg = NULL;
	int rc = spfkit__mta_config_read(path, given, NULL, 1, NULL, &cfg);

	if (rc == 0)
		rc = apply(arg, cfg);
	if (rc != 0)
		spfkit__mta_log_printf(LOG_ERR, "reload of %s failed (%s); keeping the running "
				       "configuration", path, spfkit_strerror(rc));
	else
		spfkit__mta_log_printf(LOG_NOTICE, "configuration %s reloaded", path);
}
