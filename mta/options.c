/* The daemons' shared DNS options (options.h). */
#include <getopt.h>
#include <string.h>

#include "options.h"

static const char *const names[SPFKIT__MTA_DNS_OPTION_COUNT] = {
	"dns", "dns-timeout", "dns-cache-mb", "zone", "zone-timeout",
};

const char *spfkit__mta_dns_option_name(int which)
{
	return which >= 0 && which < SPFKIT__MTA_DNS_OPTION_COUNT ? names[which] : "?";
}

int spfkit__mta_dns_option(struct spfkit__mta_dns_opts *o, int which, const char *value)
{
	long n;

	switch (which) {
	case 0:
		if (!spfkit__mta_dns_servers_ok(value))
			return -1;
		o->servers = value;
		return 0;
	case 1: /* ms per try: at least 1, at most 10 minutes */
		n = spfkit__mta_number(value, 1, 600000);
		if (n < 0)
			return -1;
		o->timeout_ms = (int)n;
		return 0;
	case 2: /* MiB of answer cache; 0: none */
		n = spfkit__mta_number(value, 0, 4096);
		if (n < 0)
			return -1;
		o->cache_mb = n;
		return 0;
	case 3:
		o->zone = value;
		return 0;
	case 4:
		if (o->n_zone_timeout == SPFKIT__MTA_MAX_ZONE_TIMEOUT)
			return -1;
		o->zone_timeout[o->n_zone_timeout++] = value;
		return 0;
	default:
		return -1;
	}
}

int spfkit__mta_log_option(const char *value)
{
	if (strcmp(value, "stderr") == 0)
		return 1;
	return strcmp(value, "syslog") == 0 ? 0 : -1;
}

int spfkit__mta_config_argument(int argc, char **argv, const char **config, int *given)
{
	if (optind < argc) {
		*config = argv[optind++];
		*given = 1;
	}
	return optind < argc ? -1 : 0;
}
