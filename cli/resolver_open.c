/*
 * The one place where `spfkit check` decides which resolver answers its
 * questions: a zone file (offline, --zone) or the real DNS.
 */
#include <string.h>

#include <spfkit/cares.h>

#include "cli.h"
#include "daemon.h" /* spfkit__mta_dns_servers_ok(): as the daemons check --dns */

static int open_zone(const char *path, struct cli_resolver *out, char *err, size_t errlen)
{
	int rc;

	rc = spfkit_zone_new(NULL, &out->zone);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", path, spfkit_strerror(rc));
		return rc;
	}
	err[0] = '\0';
	rc = spfkit_zone_load_file(out->zone, path, NULL, err, errlen);
	if (rc != 0) {
		/* the loader names file:line; keep a message if it gave none */
		if (err[0] == '\0')
			snprintf(err, errlen, "%s: %s", path, spfkit_strerror(rc));
		cli_resolver_close(out);
		return rc;
	}
	rc = spfkit_zone_resolver(out->zone, &out->resolver);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", path, spfkit_strerror(rc));
		cli_resolver_close(out);
	}
	return rc;
}

/* The machine's DNS (/etc/resolv.conf) or the --dns servers, via c-ares. */
static int open_dns(const struct cli_dns_options *opt, struct cli_resolver *out, char *err,
		    size_t errlen)
{
	struct spfkit_cares_options copt;
	int rc;

	/* c-ares would take port 99999 as some other port */
	if (opt->servers != NULL && !spfkit__mta_dns_servers_ok(opt->servers)) {
		snprintf(err, errlen, "--dns '%.200s': not a list of HOST[:PORT] with ports 1 to 65535",
			 opt->servers);
		return SPFKIT_EINVAL;
	}
	spfkit_cares_options_init(&copt);
	copt.servers = opt->servers;
	copt.timeout_ms = opt->timeout_ms;
	copt.tries = opt->tries;
	err[0] = '\0';
	rc = spfkit_cares_new(&copt, NULL, &out->resolver, err, errlen);
	if (rc != 0 && err[0] == '\0')
		snprintf(err, errlen, "cannot start the DNS resolver: %s", spfkit_strerror(rc));
	return rc;
}

int cli_resolver_open(const struct cli_dns_options *opt, struct cli_resolver *out, char *err,
		      size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (opt->zone_file != NULL)
		return open_zone(opt->zone_file, out, err, errlen);
	return open_dns(opt, out, err, errlen);
}

void cli_resolver_close(struct cli_resolver *r)
{
	spfkit_resolver_free(r->resolver);
	spfkit_zone_free(r->zone);
	r->resolver = NULL;
	r->zone = NULL;
}

int cli_resolver_open_texts(const char *cmd, const char *zone, const char *dns,
			    const char *timeout, const char *tries, struct cli_resolver *out)
{
	struct cli_dns_options opt = {zone, dns, 0, 0};
	char err[512];
	int rc;

	if ((timeout != NULL && cli_parse_count(timeout, 3600000, &opt.timeout_ms) != 0) ||
	    (tries != NULL && cli_parse_count(tries, 100, &opt.tries) != 0)) {
		cli_error(cmd, "%s '%.100s' is not a positive number in range",
			  timeout ? "--timeout" : "--tries", timeout ? timeout : tries);
		return 64;
	}
	rc = cli_resolver_open(&opt, out, err, sizeof(err));
	if (rc != 0) {
		cli_error(cmd, "%s", err);
		return (rc == SPFKIT_ENOMEM || rc == SPFKIT_EDNS) ? 70 : 64;
	}
	return 0;
}
