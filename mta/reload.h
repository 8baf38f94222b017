/*
 * SIGHUP for spfkit-milter and spfkit-smtpd-filter (issue 29): the
 * configuration file read again for the checks that start from then on.
 * Each check holds the generation it began with (a configuration and
 * its SPF context) till it ends; the last check of an old one frees it.
 * What was set up at start (sockets, users, Metrics_Listen) stays.
 */
#ifndef SPFKIT_MTA_RELOAD_H
#define SPFKIT_MTA_RELOAD_H

#include <spfkit/spfkit.h>

#include "config.h"

struct spfkit__mta_gen {
	struct spfkit__mta_config *cfg;
	struct spfkit_ctx *ctx;
	unsigned refs;
	int owns_cfg; /* 0: the caller's, freed by it (milter's first one) */
};

/* A generation of cfg and ctx (taken), held once. NULL: out of memory, nothing taken. */
struct spfkit__mta_gen *spfkit__mta_gen_new(struct spfkit__mta_config *cfg, struct spfkit_ctx *ctx,
					    int owns_cfg);
/*
 * A generation of cfg (taken, freed on failure) with a new SPF context
 * (spfkit__mta_ctx_new's arguments). NULL: out of memory.
 */
struct spfkit__mta_gen *spfkit__mta_gen_load(struct spfkit__mta_config *cfg, const char *receiver,
					     int dns_cached, const struct spfkit_allocator *alloc);
struct spfkit__mta_gen *spfkit__mta_gen_hold(struct spfkit__mta_gen *g);
/* One hold less; the last frees the context, and the configuration when owned. */
void spfkit__mta_gen_put(struct spfkit__mta_gen *g);

/*
 * The SIGHUP handler's work: reads path again (given as in
 * spfkit__mta_config_read, its problems to the log) and hands the new
 * configuration to apply, which takes it (freed even when it fails) and
 * returns 0 or an error. Either outcome is logged; on a failure the
 * running configuration stays.
 */
typedef int (*spfkit__mta_apply_fn)(void *arg, struct spfkit__mta_config *cfg);
void spfkit__mta_reread(const char *path, int given, spfkit__mta_apply_fn apply, void *arg);

#endif
