/*
 * The daemons' shared setup (see daemon.h): option values, privilege
 * drop, the DNS backend. Moved out of spfkit-policyd's main.c so the
 * milter takes the same values the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <spfkit/cares.h>

#include "daemon.h"
#include "log.h"

long spfkit__mta_number(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	return v;
}

int spfkit__mta_port_ok(const char *s, int zero_ok)
{
	return spfkit__mta_number(s, zero_ok ? 0 : 1, 65535) >= 0;
}

int spfkit__mta_dns_servers_ok(const char *list)
{
	char item[128];
	const char *p = list;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		const char *colon, *port = NULL;

		if (n == 0 || n >= sizeof(item))
			return 0;
		memcpy(item, p, n);
		item[n] = '\0';
		colon = strrchr(item, ':');
		if (item[0] == '[') {
			const char *close = strchr(item, ']');

			if (close == NULL || (close[1] != '\0' && close[1] != ':'))
				return 0;
			port = close[1] == ':' ? close + 2 : NULL;
		} else if (colon != NULL && strchr(item, ':') == colon) {
			port = colon + 1; /* one colon: IPv4:PORT; more: bare IPv6 */
		}
		if (port != NULL && !spfkit__mta_port_ok(port, 0))
			return 0;
		p += n;
		if (*p == ',')
			p++;
	}
	return 1;
}

int spfkit__mta_user_ids(const char *prog, const char *spec, uid_t *uid, gid_t *gid)
{
	char name[256];
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	struct passwd *pw;

	if (n >= sizeof(name))
		return -1;
	memcpy(name, spec, n);
	name[n] = '\0';
	pw = getpwnam(name);
	if (pw == NULL) {
		fprintf(stderr, "%s: no such user: %s\n", prog, name);
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	if (colon != NULL) {
		struct group *gr = getgrnam(colon + 1);

		if (gr == NULL) {
			fprintf(stderr, "%s: no such group: %s\n", prog, colon + 1);
			return -1;
		}
		*gid = gr->gr_gid;
	}
	return 0;
}

int spfkit__mta_drop_privileges(const char *prog, const char *spec)
{
	uid_t uid;
	gid_t gid;

	if (spfkit__mta_user_ids(prog, spec, &uid, &gid) != 0)
		return -1;
	if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0) {
		fprintf(stderr, "%s: cannot become %s: %s\n", prog, spec, strerror(errno));
		return -1;
	}
	/* there is no way back */
	if (uid != 0 && setuid(0) == 0) {
		fprintf(stderr, "%s: privileges could be regained; refusing to run\n", prog);
		return -1;
	}
	return 0;
}

int spfkit__mta_write_pid_file(const char *prog, const char *path)
{
	char line[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		fprintf(stderr, "%s: pid file %s: %s\n", prog, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

void spfkit__mta_dns_close(struct spfkit__mta_dns *d)
{
	spfkit_resolver_free(d->layer);
	spfkit_resolver_free(d->r);
	spfkit_cache_free(d->cache);
	if (d->zone != NULL)
		spfkit_zone_free(d->zone);
	d->layer = d->r = NULL;
	d->cache = NULL;
	d->zone = NULL;
}

static int open_zone(const char *prog, const struct spfkit__mta_dns_opts *o,
		     struct spfkit__mta_dns *d)
{
	char err[512] = "";
	size_t i;

	if (spfkit_zone_new(NULL, &d->zone) != 0 ||
	    spfkit_zone_load_file(d->zone, o->zone, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: zone %s: %s\n", prog, o->zone, err[0] ? err : "cannot load");
		return -1;
	}
	for (i = 0; i < o->n_zone_timeout; i++)
		if (spfkit_zone_add_timeout(d->zone, o->zone_timeout[i], strlen(o->zone_timeout[i])) != 0)
			return -1;
	return spfkit_zone_resolver(d->zone, &d->r) == 0 ? 0 : -1;
}

int spfkit__mta_dns_open(const char *prog, const struct spfkit__mta_dns_opts *o,
			 struct spfkit__mta_dns *d)
{
	struct spfkit_cares_options co;
	struct spfkit_cache_options cc;
	char err[512] = "";

	if (o->zone != NULL)
		return open_zone(prog, o, d);
	spfkit_cares_options_init(&co);
	co.servers = o->servers;
	co.timeout_ms = o->timeout_ms;
	if (spfkit_cares_new(&co, NULL, &d->r, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: DNS: %s\n", prog, err);
		return -1;
	}
	if (o->cache_mb == 0)
		return 0;
	spfkit_cache_options_init(&cc);
	cc.max_bytes = (size_t)o->cache_mb << 20;
	if (spfkit_cache_new(&cc, NULL, &d->cache) != 0 ||
	    spfkit_cache_resolver(d->cache, d->r, &d->layer) != 0) {
		fprintf(stderr, "%s: cannot make the DNS cache\n", prog);
		return -1;
	}
	return 0;
}

int spfkit__mta_dns_open_more(const char *prog, const struct spfkit__mta_dns_opts *o,
			      const struct spfkit__mta_dns *first, struct spfkit__mta_dns *more)
{
	struct spfkit_cares_options co;
	char err[512] = "";

	/* more->zone and more->cache stay NULL: first's, closed with first */
	if (first->zone != NULL)
		return spfkit_zone_resolver(first->zone, &more->r) == 0 ? 0 : -1;
	spfkit_cares_options_init(&co);
	co.servers = o->servers;
	co.timeout_ms = o->timeout_ms;
	if (spfkit_cares_new(&co, NULL, &more->r, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: DNS: %s\n", prog, err);
		return -1;
	}
	if (first->cache != NULL && spfkit_cache_resolver(first->cache, more->r, &more->layer) != 0) {
		fprintf(stderr, "%s: cannot make the DNS cache layer\n", prog);
		return -1;
	}
	return 0;
}

/* ---- the configuration file ---------------------------------------------- */

struct diag_to {
	const char *prefix;
	int to_log;
};

static void print_diag(void *arg, const struct spfkit__mta_diag *d)
{
	const struct diag_to *to = arg;
	const char *kind = d->is_error ? "error" : "warning";

	if (to->to_log)
		spfkit__mta_log_printf(d->is_error ? LOG_ERR : LOG_WARNING, "%s:%u: %s: %s", d->file,
				       d->line, kind, d->text);
	else
		fprintf(stderr, "%s%s%s:%u: %s: %s\n", to->prefix != NULL ? to->prefix : "",
			to->prefix != NULL ? ": " : "", d->file, d->line, kind, d->text);
}

int spfkit__mta_config_read(const char *path, int given, const char *prefix, int to_log,
			    int *from_file, struct spfkit__mta_config **cfg)
{
	struct diag_to to = {prefix, to_log};
	int in_file = given || access(path, F_OK) == 0;

	if (from_file != NULL)
		*from_file = in_file;
	if (!in_file)
		return spfkit__mta_config_defaults(NULL, cfg);
	return spfkit__mta_config_load(path, NULL, print_diag, &to, cfg);
}
