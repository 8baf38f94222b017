/*
 * spfkit-smtpd-filter's inside: the filter (filter.c and the parts
 * internal.h lists) reads smtpd's lines from one descriptor and writes
 * protocol to another, on the caller's libevent loop; main.c does
 * options, configuration and DNS. Not an API.
 */
#ifndef SPFKIT_SMTPD_FILTER_H
#define SPFKIT_SMTPD_FILTER_H

#include <stddef.h>

#include <spfkit/resolver.h>

#include "config.h"
#include "log.h" /* mta/: the daemons' log channel */

struct event_base;
struct spfkit__smtpd;

/* Sessions tracked at once; a link-connect past this is logged and not tracked. */
#define SPFKIT_SMTPD_MAX_SESSIONS 65536u
/*
 * Protocol output waiting for smtpd to read it. Past the high mark we
 * stop reading smtpd's lines (each data line we read is a line we must
 * write back) until it falls under the low mark.
 */
#define SPFKIT_SMTPD_OUT_HIGH (1u << 20)
#define SPFKIT_SMTPD_OUT_LOW (256u << 10)
/* An Authentication-Results field held to read its authserv-id; longer, id still open: deleted. */
#define SPFKIT_SMTPD_AR_HOLD_MAX 8192u
/* HELO names kept per session (no valid one is longer; the check says so). */
#define SPFKIT_SMTPD_HELO_MAX 1024u

struct spfkit__smtpd_opts {
	const char *receiver; /* this host in headers and %{r}; NULL: gethostname() */
	int log_stderr;       /* 1: log to stderr (smtpd logs it); 0: syslog, facility mail */
	int in_fd, out_fd;    /* smtpd's lines in, protocol out (0 and 1) */
	const struct spfkit_allocator *alloc; /* the evaluations' memory; NULL: libc (tests fail it) */
	struct spfkit__metrics *metrics; /* counts for /metrics (mta/metrics.h); NULL: off */
};

/*
 * The filter on base, owning cfg (freed with it) and using the resolver
 * r (with cache, a cache layer over r, or NULL). 0 or SPFKIT_ENOMEM
 * (cfg stays the caller's then).
 */
int spfkit__smtpd_new(struct event_base *base, const struct spfkit__smtpd_opts *opts,
		      struct spfkit__mta_config *cfg, struct spfkit_resolver *r,
		      struct spfkit_resolver *cache, struct spfkit__smtpd **out);

/* Cancel every check, free every session and the filter. NULL: no-op. */
void spfkit__smtpd_free(struct spfkit__smtpd *f);

/*
 * SIGHUP: cfg (taken; freed even on failure) serves the checks that start
 * from now on; those in flight end under theirs. 0 or SPFKIT_ENOMEM.
 */
int spfkit__smtpd_reload(struct spfkit__smtpd *f, struct spfkit__mta_config *cfg);

#endif
