/*
 * Listening sockets and the descriptor budget (see listen.h).
 */
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listen.h"

static int unix_address(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n == 0 || n >= sizeof(sa->sun_path))
		return -1;
	memcpy(sa->sun_path, path, n + 1);
	return 0;
}

/*
 * Non-blocking: a full backlog (EAGAIN) is a live server too;
 * ECONNREFUSED is a socket left by an earlier run.
 */
int spfkit__mta_unix_answers(const char *path)
{
	struct sockaddr_un sa;
	int fd, live;

	if (unix_address(path, &sa) != 0)
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	live = connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN ||
	       errno == EINPROGRESS;
	close(fd);
	return live;
}

int spfkit__mta_listen_unix(const char *prog, const char *path, mode_t mode, uid_t uid,
			    gid_t gid)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd, rc;

	if (unix_address(path, &sa) != 0) {
		fprintf(stderr, "%s: bad socket path (empty or too long): %s\n", prog, path);
		return -1;
	}
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		if (spfkit__mta_unix_answers(path)) {
			fprintf(stderr, "%s: another server answers on %s; not starting\n", prog, path);
			return -1;
		}
		unlink(path); /* left by an earlier run */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "%s: unix:%s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	/* never reachable with wider permissions than asked, not even for a moment */
	old = umask(0777 & ~mode);
	rc = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || chmod(path, mode) != 0 ||
	    ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(path, uid, gid) != 0) ||
	    listen(fd, SPFKIT__MTA_LISTEN_BACKLOG) != 0) {
		fprintf(stderr, "%s: unix:%s: %s\n", prog, path, strerror(errno));
		if (rc == 0)
			unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

static unsigned port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

int spfkit__mta_listen_tcp(const char *prog, const char *host, const char *port, int family,
			   unsigned *bound_port)
{
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, one = 1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host != NULL && host[0] != '\0' ? host : NULL, port, &hints, &ai);
	if (rc != 0) {
		fprintf(stderr, "%s: %s port %s: %s\n", prog, host != NULL ? host : "", port,
			gai_strerror(rc));
		return -1;
	}
	/* SO_REUSEADDR takes a port in TIME_WAIT, never one a live server listens on */
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(fd, SPFKIT__MTA_LISTEN_BACKLOG) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		fprintf(stderr, "%s: %s port %s: %s\n", prog, host != NULL ? host : "", port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	*bound_port = port_of(&ss);
	return fd;
}

/* Descriptors open now: the entries of /proc/self/fd (one is the listing's own), or a guess. */
static size_t fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	if (d == NULL)
		return 16;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

void spfkit__mta_fit_fd_limit(size_t want, size_t reserve, size_t *fit, char *note, size_t size)
{
	struct rlimit rl;
	rlim_t need, cur;

	note[0] = '\0';
	*fit = want;
	reserve += fds_open();
	need = (rlim_t)want + (rlim_t)reserve;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	cur = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
	if (rl.rlim_cur > cur && setrlimit(RLIMIT_NOFILE, &rl) == 0)
		cur = rl.rlim_cur;
	if (cur >= need)
		return;
	*fit = cur > reserve ? (size_t)(cur - reserve) : 1;
	snprintf(note, size,
		 "--max-connections %zu lowered to %zu: the open-file limit (RLIMIT_NOFILE) is %llu "
		 "and %zu descriptors are kept for the listeners, DNS and files",
		 want, *fit, (unsigned long long)cur, reserve);
}
