/*
 * SIGHUP (issue 29): the filter's current generation (mta/reload.h).
 * The authserv-id smtpd gave with config|admd is kept over the file's.
 */
#include <string.h>

#include "engine.h"
#include "internal.h"

static void make_current(struct spfkit__smtpd *f, struct spfkit__mta_gen *g)
{
	f->gen = g;
	f->cfg = g->cfg;
	f->ctx = g->ctx;
}

int spfkit__smtpd_gen_start(struct spfkit__smtpd *f, struct spfkit__mta_config *cfg,
			    struct spfkit_ctx *ctx)
{
	struct spfkit__mta_gen *g = spfkit__mta_gen_new(cfg, ctx, 1);

	if (g == NULL)
		return SPFKIT_ENOMEM;
	make_current(f, g);
	return 0;
}

int spfkit__smtpd_reload(struct spfkit__smtpd *f, struct spfkit__mta_config *cfg)
{
	struct spfkit__mta_gen *g, *old = f->gen;
	char *admd;

	if (f->admd_set) {
		admd = spfkit__strndup(cfg->alloc, f->cfg->authserv_id, strlen(f->cfg->authserv_id));
		if (admd == NULL) {
			spfkit__mta_config_free(cfg);
			return SPFKIT_ENOMEM;
		}
		spfkit__free(cfg->alloc, cfg->authserv_id);
		cfg->authserv_id = admd;
	}
	g = spfkit__mta_gen_load(cfg, f->receiver, f->dns_cached, f->opts.alloc);
	if (g == NULL)
		return SPFKIT_ENOMEM;
	make_current(f, g);
	spfkit__mta_gen_put(old); /* freed now, or by the last check that holds it */
	return 0;
}
