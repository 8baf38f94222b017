/*
 * The daemons' listening sockets and descriptor budget: a UNIX socket
 * that refuses to take over a live server's path, a TCP socket, and the
 * open-file limit raised to fit the connections a daemon allows.
 * spfkit-milter and spfkit-policyd use these. Problems go to stderr,
 * prefixed with `prog`: these run before the daemon logs. Not an API.
 */
#ifndef SPFKIT_MTA_LISTEN_H
#define SPFKIT_MTA_LISTEN_H

#include <stddef.h>
#include <sys/types.h>

#define SPFKIT__MTA_LISTEN_BACKLOG 1024

/* 1 when a server answers on the UNIX socket at path (a full backlog counts as one). */
int spfkit__mta_unix_answers(const char *path);

/*
 * Listen on a UNIX socket at path with permissions `mode`, owned by
 * uid:gid when not (uid_t)-1 / (gid_t)-1. A socket left by an earlier
 * run (nobody answers) is replaced; a live one is never taken: a second
 * daemon on the same path refuses to start ("another server answers").
 * Nothing but a socket is ever removed. The descriptor (close-on-exec),
 * or -1 (said).
 */
int spfkit__mta_listen_unix(const char *prog, const char *path, mode_t mode, uid_t uid,
			    gid_t gid);

/*
 * Listen on TCP: host (numeric or from /etc/hosts; "" or NULL: every
 * address of the family), port (1-65535, or 0: any free port), family
 * AF_INET, AF_INET6 or AF_UNSPEC. The port bound goes to *bound_port.
 * The descriptor (close-on-exec), or -1 (said).
 */
int spfkit__mta_listen_tcp(const char *prog, const char *host, const char *port, int family,
			   unsigned *bound_port);

/*
 * Each connection costs a descriptor. Raise the soft RLIMIT_NOFILE
 * towards the hard one until `want` connections fit beside `reserve`
 * descriptors for the daemon's own use (counted on top of those open
 * now). What fits goes to *fit (at least 1); when it is less than want,
 * `note` says so (for the log), else note[0] is '\0'.
 */
void spfkit__mta_fit_fd_limit(size_t want, size_t reserve, size_t *fit, char *note, size_t size);

#endif
