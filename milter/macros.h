/*
 * The macros an MTA sends (D packets: the stage's command byte, then
 * NUL-terminated name and value strings), kept per stage as libmilter
 * kept them: a stage's packet replaces that stage's macros; a lookup
 * finds the latest stage's value first; a one-letter name matches with
 * or without braces ("i" and "{i}"). Only whole pairs are kept: a packet
 * with an odd number of strings, missing NULs or garbage keeps what is
 * well-formed before it (libmilter 8.17 read past its array there and
 * crashed: issue 33). Not an API.
 */
#ifndef SPFKIT_MILTER_MACROS_H
#define SPFKIT_MILTER_MACROS_H

#include <stddef.h>

/* Connect, HELO, MAIL, RCPT, DATA, end of headers, end of message: the order they come in. */
#define SPFKIT_MILTER_STAGES 7

struct spfkit__milter_macros {
	char *data[SPFKIT_MILTER_STAGES]; /* a stage's whole pairs, copied; NULL: none */
	size_t len[SPFKIT_MILTER_STAGES];
};

/* The stage of a command byte (C H M R T N E), or -1. */
int spfkit__milter_stage(char cmd);

/*
 * Keep the pairs of one D packet's data (after its stage byte) for
 * `stage`, replacing what that stage had. *dropped: the bytes after the
 * last whole pair (an odd string, no final NUL). 0, or SPFKIT_ENOMEM
 * (then the stage has none).
 */
int spfkit__milter_macros_set(struct spfkit__milter_macros *m, int stage, const unsigned char *d,
			      size_t n, size_t *dropped);

/* Forget the macros of `stage` and of every later one (a new message, an abort). */
void spfkit__milter_macros_clear_from(struct spfkit__milter_macros *m, int stage);

/* The value of macro `name` ("{auth_authen}", "i"), or NULL. */
const char *spfkit__milter_macro(const struct spfkit__milter_macros *m, const char *name);

#endif
