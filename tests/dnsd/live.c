/* dnsd and a c-ares resolver asking it, for the in-process tests (live.h). */
#include <stdio.h>
#include <stdlib.h>

#include "live.h"

int live_dns_start(const struct spfkit_zone *zone, struct spfkit_cares_options *co,
		   struct dnsd **d, struct spfkit_resolver **r)
{
	struct dnsd_options opt = {.addr = "127.0.0.1"};
	char servers[64], err[256];

	*r = NULL;
	if (dnsd_start(&opt, zone, d) != 0) {
		fprintf(stderr, "dnsd_start failed\n");
		return -1;
	}
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", dnsd_port(*d));
	co->servers = servers; /* read during spfkit_cares_new() only */
	if (spfkit_cares_new(co, NULL, r, err, sizeof(err)) != 0) {
		fprintf(stderr, "spfkit_cares_new: %s\n", err);
		co->servers = NULL;
		dnsd_stop(*d);
		*d = NULL;
		return -1;
	}
	co->servers = NULL;
	return 0;
}

void live_dns_stop(struct dnsd *d, struct spfkit_resolver *r)
{
	spfkit_resolver_free(r);
	if (d != NULL)
		dnsd_stop(d);
}

int live_fx_setup(void **state, struct spfkit_zone *zone, struct spfkit_cares_options *co)
{
	struct live_fx *f = calloc(1, sizeof(*f));

	if (f == NULL || zone == NULL) {
		free(f);
		spfkit_zone_free(zone);
		return -1;
	}
	f->zone = zone;
	if (live_dns_start(zone, co, &f->d, &f->r) != 0) {
		spfkit_zone_free(zone);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

int live_fx_teardown(void **state)
{
	struct live_fx *f = *state;

	live_dns_stop(f->d, f->r);
	spfkit_zone_free(f->zone);
	free(f);
	return 0;
}
