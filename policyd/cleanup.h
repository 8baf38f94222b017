/*
 * What spfkit-policyd made and removes at exit: its PID file and its
 * UNIX sockets, each only while it is still the file we made (same
 * device and inode), so a newer daemon's files are never touched.
 *
 * With --user the daemon may no longer remove them itself: the socket
 * usually lives in Postfix's private/ directory (mode 0700, owned by
 * postfix). So before the privilege drop a small keeper process is
 * forked that stays root, holds nothing but one end of a pipe, and does
 * the removal when the pipe reports the daemon gone (at a normal exit,
 * a crash or SIGKILL alike).
 */
#ifndef SPFKIT_POLICYD_CLEANUP_H
#define SPFKIT_POLICYD_CLEANUP_H

struct spfkit__policyd_cleanup;

struct spfkit__policyd_cleanup *spfkit__policyd_cleanup_new(void);

/* Remember path, just made by us, for removal. 0, or -1 (no memory, no file). */
int spfkit__policyd_cleanup_add(struct spfkit__policyd_cleanup *c, const char *path);

/* Fork the keeper (call before dropping privileges). 0, or -1. */
int spfkit__policyd_cleanup_keeper(struct spfkit__policyd_cleanup *c);

/* Remove what is still ours; what we may not remove is left to the keeper. */
void spfkit__policyd_cleanup_run(struct spfkit__policyd_cleanup *c);

void spfkit__policyd_cleanup_free(struct spfkit__policyd_cleanup *c);

#endif
