/*
 * SIGHUP (issue 29): a new configuration for the checks that start from
 * now on, as spfkit-policyd does it. Each check holds the configuration
 * and SPF context it started with (a generation) until it ends; the last
 * check under an old generation frees it. A file that does not load
 * never gets here: main.c logs why and the running one stays. The
 * authserv-id smtpd gave with config|admd is kept over the file's.
 */
#include <string.h>

#include "engine.h"
#include "internal.h"

struct spfkit__smtpd_gen {
	struct spfkit__mta_config *cfg;
	struct spfkit_ctx *ctx;
	unsigned refs;
};

int spfkit__smtpd_gen_start(struct spfkit__smtpd *f, struct spfkit__mta_config *cfg,
			    struct spfkit_ctx *ctx)
{
	struct spfkit__smtpd_gen *g = spfkit__zalloc(NULL, sizeof(*g));

	if (g == NULL)
		return SPFKIT_ENOMEM;
	g->cfg = cfg;
	g->ctx = ctx;
	g->refs = 1;
	f->gen = g;
	f->cfg = cfg;
	f->ctx = ctx;
	return 0;
}

struct spfkit__smtpd_gen *spfkit__smtpd_gen_hold(struct spfkit__smtpd *f)
{
	f->gen->refs++;
	return f->gen;
}

void spfkit__smtpd_gen_put(struct spfkit__smtpd_gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	spfkit_ctx_free(g->ctx);
	spfkit__mta_config_free(g->cfg);
	spfkit__free(NULL, g);
}

int spfkit__smtpd_reload(struct spfkit__smtpd *f, struct spfkit__mta_config *cfg)
{
	struct spfkit__smtpd_gen *old = f->gen;
	struct spfkit_ctx *ctx = NULL;
	char *admd = NULL;

	if (f->admd_set) {
		admd = spfkit__strndup(cfg->alloc, f->cfg->authserv_id, strlen(f->cfg->authserv_id));
		if (admd == NULL)
			goto fail;
		spfkit__free(cfg->alloc, cfg->authserv_id);
		cfg->authserv_id = admd;
	}
	if (spfkit__mta_ctx_new(cfg, f->receiver, f->dns_cached, f->opts.alloc, &ctx) != 0 ||
	    spfkit__smtpd_gen_start(f, cfg, ctx) != 0)
		goto fail;
	spfkit__smtpd_gen_put(old); /* freed now, or by the last check that holds it */
	return 0;
fail:
	spfkit_ctx_free(ctx);
	spfkit__mta_config_free(cfg);
	return SPFKIT_ENOMEM;
}
