/*
 * The OpenSMTPD filter protocol (smtpd-filters(7)), as text: one line
 * from smtpd cut into its fields, the protocol version read, the reply
 * lines written in the field order of that version. Pure: no I/O, no
 * state; the filter (filter.c) decides what a line means.
 *
 * What changed between the versions we read (checked in OpenSMTPD's
 * usr.sbin/smtpd/lka_filter.c at each release):
 *
 *   0.4 (6.6)      replies "filter-result|TOKEN|SESSION|..." and
 *                  "filter-dataline|TOKEN|SESSION|...";
 *                  tx-mail "MSGID|ADDRESS|RESULT"
 *   0.5, 0.6 (6.7, 6.8, Debian 12's 6.8.0p2)
 *                  replies "filter-result|SESSION|TOKEN|...";
 *                  tx-mail "MSGID|RESULT|ADDRESS" (0.6);
 *                  link-auth "USERNAME|RESULT"
 *   0.7 (7.x)      sends config|protocol;
 *                  link-auth "RESULT|USERNAME"
 *
 * Both 6.8 and 7.x send config|admd (smtpd.conf's admd, else the host name).
 *
 * Requests (filter|VERSION|TIME|SUBSYSTEM|PHASE|SESSION|TOKEN|...) and
 * reports (report|VERSION|TIME|SUBSYSTEM|EVENT|SESSION|...) kept one
 * shape throughout. A version newer than 0.7 is read as 0.7.
 *
 * Not an API.
 */
#ifndef SPFKIT_SMTPD_PROTO_H
#define SPFKIT_SMTPD_PROTO_H

#include <stddef.h>

/*
 * Longest line taken from smtpd, newline excluded. smtpd's own lines are
 * far shorter (an SMTP line is at most 1000 bytes, a data line the same
 * plus dot-stuffing, the prefix under 100 bytes); a longer one is not
 * smtpd's and is dropped whole.
 */
#define SPFKIT_SMTPD_LINE_MAX 65536u

/* The most fields any line we read has (a filter request: 8 plus its last). */
#define SPFKIT_SMTPD_MAX_FIELDS 10u

/* Session ids and tokens: 16 hex digits as smtpd prints them ("%016" PRIx64). */
#define SPFKIT_SMTPD_ID_MAX 16u

/* The newest protocol version we know. */
#define SPFKIT_SMTPD_PROTO_MAJOR 0u
#define SPFKIT_SMTPD_PROTO_MINOR 7u

struct spfkit__smtpd_field {
	const char *p;
	size_t len;
};

struct spfkit__smtpd_version {
	unsigned major, minor;
};

/*
 * Cut line[0..len) at '|' into at most max fields; the last one takes
 * the rest of the line, '|' included (smtpd-filters(7): '|' may appear
 * only in the last field). Returns the number of fields (>= 1).
 */
size_t spfkit__smtpd_split(const char *line, size_t len, struct spfkit__smtpd_field *f,
			   size_t max);

/* "MAJOR.MINOR", each 1-4 digits. 0, or -1 when it is not one. */
int spfkit__smtpd_version_parse(const struct spfkit__smtpd_field *f,
				struct spfkit__smtpd_version *v);

/* Is v at least major.minor? */
int spfkit__smtpd_version_ge(const struct spfkit__smtpd_version *v, unsigned major,
			     unsigned minor);

/* A session id or token: 1-16 hex digits. */
int spfkit__smtpd_id_ok(const struct spfkit__smtpd_field *f);

/* Does the field hold exactly this text? */
int spfkit__smtpd_field_is(const struct spfkit__smtpd_field *f, const char *text);

/*
 * The address of a mail-from request's parameter (the text after
 * "MAIL FROM:", e.g. "<a@b.example> SIZE=100"): without the angle
 * brackets and the ESMTP parameters. The null sender "<>" gives length 0.
 */
struct spfkit__smtpd_field spfkit__smtpd_mail_address(const struct spfkit__smtpd_field *param);

/*
 * The client address of a link-connect's src field: "192.0.2.1:25" or
 * "[2001:db8::1]:25" -> the address text (into buf, NUL-terminated).
 * 0, or -1 for anything else ("unix:/path": a local client).
 */
int spfkit__smtpd_src_address(const struct spfkit__smtpd_field *src, char *buf, size_t size);

/*
 * The reply to a filter request, in the field order of the request's
 * version: "filter-result|SESSION|TOKEN|RESULT" (0.5 and later) or
 * "filter-result|TOKEN|SESSION|RESULT" (0.4), and the same for
 * "filter-dataline". kind is "filter-result" or "filter-dataline";
 * rest is written as given (the caller keeps CR and LF out).
 * Returns the prefix up to and including the '|' before rest.
 */
const char *spfkit__smtpd_reply_prefix(const struct spfkit__smtpd_version *v, const char *kind,
				       const char *session, const char *token, char *buf,
				       size_t size);

#endif
