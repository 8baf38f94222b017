/*
 * The DNS options every daemon takes (spfkit-policyd, spfkit-milter,
 * spfkit-smtpd-filter), parsed in one place so that they mean the same
 * everywhere: --dns, --dns-timeout, --dns-cache-mb, --zone, --zone-timeout.
 */
#ifndef SPFKIT_MTA_OPTIONS_H
#define SPFKIT_MTA_OPTIONS_H

#include <getopt.h>

#include "daemon.h"

/* getopt_long() entries; `first` is the value of --dns, the others follow. */
#define SPFKIT__MTA_DNS_OPTIONS(first)                                      \
	{ "dns", required_argument, NULL, (first) },                        \
	{ "dns-timeout", required_argument, NULL, (first) + 1 },            \
	{ "dns-cache-mb", required_argument, NULL, (first) + 2 },           \
	{ "zone", required_argument, NULL, (first) + 3 },                   \
	{ "zone-timeout", required_argument, NULL, (first) + 4 }
#define SPFKIT__MTA_DNS_OPTION_COUNT 5

/*
 * Option `which` (0 for --dns ... 4 for --zone-timeout) with its value:
 * 0, or -1 when the value is bad (then *o is unchanged and the caller
 * says so, naming spfkit__mta_dns_option_name(which)).
 */
int spfkit__mta_dns_option(struct spfkit__mta_dns_opts *o, int which, const char *value);
const char *spfkit__mta_dns_option_name(int which);

/* --log stderr|syslog: 1 (stderr), 0 (syslog), -1 (anything else). */
int spfkit__mta_log_option(const char *value);

/*
 * After getopt_long(): the one argument policyd-spf and pyspf-milter take,
 * the configuration file, into *config (and *given = 1). 0, or -1 when
 * more arguments are left (the caller shows its usage).
 */
int spfkit__mta_config_argument(int argc, char **argv, const char **config, int *given);

#endif
