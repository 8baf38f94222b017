/*
 * What the daemons (spfkit-policyd, spfkit-milter, spfkit-smtpd-filter)
 * share outside their protocols: option values checked the same way, the
 * configuration file read, the privilege drop, and the DNS they open
 * (c-ares with an answer cache, or a zone file for tests and offline
 * runs). Problems are written to stderr, prefixed with the program's
 * name: these run before the daemon logs.
 * Not an API.
 */
#ifndef SPFKIT_MTA_DAEMON_H
#define SPFKIT_MTA_DAEMON_H

#include <stddef.h>
#include <sys/types.h>

#include <spfkit/cache.h>
#include <spfkit/resolver.h>
#include <spfkit/zone.h>

#include "config.h"

/* A whole decimal number in [lo, hi], or -1. */
long spfkit__mta_number(const char *s, long lo, long hi);

/* A port number: 1-65535 (0 too when zero_ok: "any free port"). */
int spfkit__mta_port_ok(const char *s, int zero_ok);

/*
 * --dns: HOST[:PORT],... with HOST an IPv4 address, or IPv6 (bracketed
 * when a port follows). Only the ports are checked here; c-ares reads
 * the rest, but would take 99999 as some other port. 1 when fine.
 */
int spfkit__mta_dns_servers_ok(const char *list);

/*
 * The configuration file `path`. When it is the default one (given 0)
 * and is not there, the defaults, as policyd-spf and pyspf-milter do:
 * *from_file (may be NULL) tells which. Each problem goes out as
 * "[prefix: ]FILE:LINE: error|warning: TEXT" (prefix NULL: none), on
 * stderr, or to the log (log.h) when to_log. 0, or the error.
 */
int spfkit__mta_config_read(const char *path, int given, const char *prefix, int to_log,
			    int *from_file, struct spfkit__mta_config **cfg);

/* The ids of USER or USER:GROUP (the user's group by default). 0, or -1 (said on stderr). */
int spfkit__mta_user_ids(const char *prog, const char *spec, uid_t *uid, gid_t *gid);

/* Become USER or USER:GROUP; no way back (checked). 0, or -1 (said on stderr). */
int spfkit__mta_drop_privileges(const char *prog, const char *spec);

/* The process id, one line, into path (made or emptied; not a symlink). 0, or -1 (said on stderr). */
int spfkit__mta_write_pid_file(const char *prog, const char *path);

#define SPFKIT__MTA_MAX_ZONE_TIMEOUT 8

struct spfkit__mta_dns_opts {
	const char *zone;     /* a zone file instead of DNS; NULL: c-ares */
	const char *zone_timeout[SPFKIT__MTA_MAX_ZONE_TIMEOUT]; /* names that time out (tests) */
	size_t n_zone_timeout;
	const char *servers;  /* HOST[:PORT],...; NULL: /etc/resolv.conf */
	int timeout_ms;       /* per try; 0: c-ares' default */
	long cache_mb;        /* answer cache; 0: none */
};

struct spfkit__mta_dns {
	struct spfkit_zone *zone;
	struct spfkit_resolver *r;     /* the backend */
	struct spfkit_resolver *layer; /* NULL, or the cache layer over r */
	struct spfkit_cache *cache;
};

/* Open it (d zeroed first). 0, or -1 (said on stderr; close what is open with _close). */
int spfkit__mta_dns_open(const char *prog, const struct spfkit__mta_dns_opts *o,
			 struct spfkit__mta_dns *d);
void spfkit__mta_dns_close(struct spfkit__mta_dns *d);

/*
 * Another thread's DNS over what `first` opened: its own backend (a
 * c-ares channel, or a resolver on the same zone) and, when first has an
 * answer cache, its own layer over that one cache (spfkit_cache is
 * thread-safe; resolvers are not). `more` (zeroed first) shares first's
 * zone and cache and must be closed before it. 0, or -1 (said on stderr).
 */
int spfkit__mta_dns_open_more(const char *prog, const struct spfkit__mta_dns_opts *o,
			      const struct spfkit__mta_dns *first, struct spfkit__mta_dns *more);

#endif
