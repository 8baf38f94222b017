/*
 * SIGHUP (issue 29): the current generation (mta/reload.h) and what the
 * sessions read of it. The first configuration is main.c's, freed
 * there; a reload's is the generation's. What was set up at start stays
 * as it was: the socket, its mode and owner, UserID, PidFile, UMask,
 * Metrics_Listen.
 */
#include "milter.h"

static void make_current(struct spfkit__mta_gen *g)
{
	spfkit__milter_g.gen = g;
	spfkit__milter_g.cfg = g->cfg;
	spfkit__milter_g.ctx = g->ctx;
	spfkit__milter_g.authserv_id = g->cfg->authserv_id;
	spfkit__milter_g.budget_s = g->cfg->milter_time_limit > 0 ? g->cfg->milter_time_limit
								   : SPFKIT_MILTER_BUDGET_S;
}

int spfkit__milter_gen_start(struct spfkit__mta_config *cfg, struct spfkit_ctx *ctx)
{
	struct spfkit__mta_gen *g = spfkit__mta_gen_new(cfg, ctx, 0);

	if (g == NULL)
		return SPFKIT_ENOMEM;
	make_current(g);
	return 0;
}

int spfkit__milter_reload(struct spfkit__mta_config *cfg)
{
	struct spfkit__mta_gen *g, *old = spfkit__milter_g.gen;

	g = spfkit__mta_gen_load(cfg, spfkit__milter_g.receiver, spfkit__milter_g.dns_cached,
				 spfkit__milter_g.alloc);
	if (g == NULL)
		return SPFKIT_ENOMEM;
	make_current(g);
	spfkit__mta_gen_put(old); /* freed now, or by the last check that holds it */
	return 0;
}
