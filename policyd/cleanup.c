/*
 * The PID file and UNIX sockets of spfkit-policyd, removed at exit;
 * the keeper process for --user (see cleanup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "spfkit_util.h"

#define CLEANUP_MAX 16 /* MAX_LISTEN sockets and the PID file, with room */

struct made {
	char *path;
	dev_t dev;
	ino_t ino;
};

struct spfkit__policyd_cleanup {
	struct made made[CLEANUP_MAX];
	size_t n;
};

struct spfkit__policyd_cleanup *spfkit__policyd_cleanup_new(void)
{
	return spfkit__zalloc(NULL, sizeof(struct spfkit__policyd_cleanup));
}

int spfkit__policyd_cleanup_add(struct spfkit__policyd_cleanup *c, const char *path)
{
	struct stat st;
	struct made *m;

	if (c == NULL || c->n == CLEANUP_MAX || lstat(path, &st) != 0)
		return -1;
	m = &c->made[c->n];
	m->path = spfkit__strndup(NULL, path, strlen(path));
	if (m->path == NULL)
		return -1;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	c->n++;
	return 0;
}

void spfkit__policyd_cleanup_run(struct spfkit__policyd_cleanup *c)
{
	struct stat st;
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		struct made *m = &c->made[i];

		/* only if it is still ours: a newer daemon may have replaced it */
		if (m->path != NULL && lstat(m->path, &st) == 0 && st.st_dev == m->dev &&
		    st.st_ino == m->ino && unlink(m->path) == 0) {
			spfkit__free(NULL, m->path);
			m->path = NULL;
		}
	}
}

/* The keeper: wait for the daemon's end of the pipe to close, then clean up. */
static void keeper(struct spfkit__policyd_cleanup *c, int rfd)
{
	struct sigaction sa;
	char byte;
	ssize_t n;

	/*
	 * Nothing of the daemon's but the pipe: an inherited listening
	 * socket would keep answering (and look like a live daemon to the
	 * next start). stdin/stdout/stderr stay.
	 */
	if (rfd != 3 && dup2(rfd, 3) != 3)
		_exit(1);
	closefrom(4);
	/* systemd signals the whole group at stop; the keeper ends with the daemon */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	do
		n = read(3, &byte, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	spfkit__policyd_cleanup_run(c);
	_exit(0); /* no atexit handlers: they belong to the daemon */
}

int spfkit__policyd_cleanup_keeper(struct spfkit__policyd_cleanup *c)
{
	int fds[2];
	pid_t pid;

	if (c == NULL || c->n == 0)
		return 0;
	/* close-on-exec: nothing the daemon runs may hold the keeper back */
	if (pipe(fds) != 0)
		return -1;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0)
		keeper(c, fds[0]);
	/* the write end stays open, unused, until this process ends */
	close(fds[0]);
	return 0;
}

void spfkit__policyd_cleanup_free(struct spfkit__policyd_cleanup *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		spfkit__free(NULL, c->made[i].path);
	spfkit__free(NULL, c);
}
