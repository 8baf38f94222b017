/*
 * SIGHUP (issue 29): a new configuration for the checks that start from
 * now on, as spfkit-policyd does it. A check keeps the configuration and
 * SPF context it started with (a generation, held by each check) until
 * it ends; the last check of an old generation frees it. A configuration
 * that does not load never gets here: main.c logs why and the running
 * one stays. What was set up at start stays as it was: the socket, its
 * mode and owner, UserID, PidFile, UMask, Metrics_Listen.
 */
#include "engine.h"
#include "milter.h"
#include "spfkit_util.h"

struct spfkit__milter_gen {
	struct spfkit__mta_config *cfg;
	struct spfkit_ctx *ctx;
	unsigned refs;
	int owns_cfg; /* the first one is main.c's, freed there */
};

static int budget_of(const struct spfkit__mta_config *cfg)
{
	return cfg->milter_time_limit > 0 ? cfg->milter_time_limit : SPFKIT_MILTER_BUDGET_S;
}

static void make_current(struct spfkit__milter_gen *g)
{
	spfkit__milter_g.gen = g;
	spfkit__milter_g.cfg = g->cfg;
	spfkit__milter_g.ctx = g->ctx;
	spfkit__milter_g.authserv_id = g->cfg->authserv_id;
	spfkit__milter_g.budget_s = budget_of(g->cfg);
}

int spfkit__milter_gen_start(struct spfkit__mta_config *cfg, struct spfkit_ctx *ctx)
{
	struct spfkit__milter_gen *g = spfkit__zalloc(NULL, sizeof(*g));

	if (g == NULL)
		return SPFKIT_ENOMEM;
	g->cfg = cfg;
	g->ctx = ctx;
	g->refs = 1;
	make_current(g);
	return 0;
}

struct spfkit__milter_gen *spfkit__milter_gen_hold(void)
{
	spfkit__milter_g.gen->refs++;
	return spfkit__milter_g.gen;
}

void spfkit__milter_gen_put(struct spfkit__milter_gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	spfkit_ctx_free(g->ctx);
	if (g->owns_cfg)
		spfkit__mta_config_free(g->cfg);
	spfkit__free(NULL, g);
}

int spfkit__milter_reload(struct spfkit__mta_config *cfg)
{
	struct spfkit__milter_gen *g = spfkit__zalloc(NULL, sizeof(*g)), *old = spfkit__milter_g.gen;

	if (g == NULL || spfkit__mta_ctx_new(cfg, spfkit__milter_g.receiver,
					     spfkit__milter_g.dns_cached, spfkit__milter_g.alloc,
					     &g->ctx) != 0) {
		spfkit__free(NULL, g);
		spfkit__mta_config_free(cfg);
		return SPFKIT_ENOMEM;
	}
	g->cfg = cfg;
	g->refs = 1;
	g->owns_cfg = 1;
	make_current(g);
	spfkit__milter_gen_put(old); /* freed now, or by the last check that holds it */
	return 0;
}
