/*
 * Postfix SMTP access policy delegation protocol (Postfix
 * SMTPD_POLICY_README): the bounded request reader and the reply writer.
 *
 * A request is "name=value" lines, each ended by LF, and ends at an empty
 * line. The reply is one "action=..." line and an empty line. On any
 * trouble the server must not answer: it logs and disconnects.
 *
 * Pure code: no I/O, no allocation, no clock. The reader looks at the
 * bytes received so far and says: a whole request is there (and how many
 * bytes it took), more input is needed, or the input is bad (with a
 * precise reason and the offset of the first bad byte).
 *
 * The reader resumes where it stopped: lines already checked are not
 * scanned again when more bytes arrive, so a client that sends one byte
 * at a time costs linear work. The caller hands in the same bytes again,
 * grown at the end (they may have moved in memory). Once COMPLETE, the
 * attributes point into the bytes of that last call, which must stay put
 * while the request is used; spfkit__policy_init() starts the next one.
 */
#ifndef SPFKIT_POLICYD_PROTO_H
#define SPFKIT_POLICYD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "spfkit_util.h"

/*
 * Caps. Postfix's own lines are far shorter (its SMTP line limit is 2048
 * bytes and a request has about 35 attributes in Postfix 3.x); anything
 * past these is a broken or hostile client. A line holds what Exim's SMTP
 * command buffer can (smtp_cmd_buffer_size, 16384 bytes): a long MAIL FROM
 * that Exim accepted and asks about with ${readsocket} gets a decision,
 * not a disconnection (issue 33: a 5 KB local part was never checked).
 */
#define SPFKIT_POLICY_MAX_LINE 16384u   /* one line, without its LF */
#define SPFKIT_POLICY_MAX_ATTRS 128u    /* attributes in one request */
#define SPFKIT_POLICY_MAX_REQUEST 32768u /* one request, final empty line included */

struct spfkit__policy_attr {
	const char *name;  /* set when the request is COMPLETE */
	size_t name_len;
	const char *value; /* not NUL-terminated; may be empty */
	size_t value_len;
	size_t name_off;   /* offsets into the input, kept while reading */
	size_t value_off;
};

struct spfkit__policy_request {
	struct spfkit__policy_attr attrs[SPFKIT_POLICY_MAX_ATTRS];
	size_t count;
	size_t scanned; /* bytes of whole lines already checked */
	size_t lines;   /* whole lines already checked */
	uint64_t names; /* a bit per name taken (see name_bit in proto.c): most lines need no
			   comparison with the names before them */
};

/* Forget everything: ready for a new request. */
void spfkit__policy_init(struct spfkit__policy_request *req);

enum spfkit__policy_status {
	SPFKIT__POLICY_COMPLETE = 0, /* a whole request was read */
	SPFKIT__POLICY_NEED_MORE = 1, /* no error so far; wait for more bytes */
};

/* Why input was refused. Each one is a reason to disconnect. */
enum spfkit__policy_error {
	SPFKIT__POLICY_OK = 0,
	SPFKIT__POLICY_ELINE_LONG,   /* a line over SPFKIT_POLICY_MAX_LINE */
	SPFKIT__POLICY_ETOO_MANY,    /* over SPFKIT_POLICY_MAX_ATTRS attributes */
	SPFKIT__POLICY_EREQ_LONG,    /* a request over SPFKIT_POLICY_MAX_REQUEST */
	SPFKIT__POLICY_ENUL,         /* a NUL byte */
	SPFKIT__POLICY_ECONTROL,     /* a control byte (other than TAB, or CR before LF) */
	SPFKIT__POLICY_ENO_EQUAL,    /* a line without '=' */
	SPFKIT__POLICY_EBAD_NAME,    /* empty name, or a byte not [A-Za-z0-9_.-] in it */
	SPFKIT__POLICY_EDUPLICATE,   /* the same name twice in one request */
	SPFKIT__POLICY_EEMPTY,       /* an empty line with no attribute before it */
};

struct spfkit__policy_diag {
	enum spfkit__policy_error code;
	size_t offset;   /* offset of the first bad byte in the input */
	size_t line;     /* line number in the request, from 1 */
};

/*
 * Read one request from in[0..len), resuming after req->scanned. Returns SPFKIT__POLICY_COMPLETE and
 * sets *used to the bytes the request took (the rest is the next
 * request, pipelined), SPFKIT__POLICY_NEED_MORE when the bytes so far are
 * a valid beginning, or a negative SPFKIT_ESYNTAX / SPFKIT_E2BIG with
 * *diag filled. A line over the cap is refused as soon as the cap is
 * passed, without waiting for its LF, so memory stays bounded.
 */
int spfkit__policy_read(const char *in, size_t len, struct spfkit__policy_request *req, size_t *used,
			struct spfkit__policy_diag *diag);

/* The value of attribute `name` (exact match), or NULL; *len its length. */
const char *spfkit__policy_get(const struct spfkit__policy_request *req, const char *name,
			       size_t *len);

/* Static English text for a reader error; never NULL. */
const char *spfkit__policy_strerror(enum spfkit__policy_error code);

/*
 * Append "action=<text>\n\n" to out. Any CR, LF, NUL or other control
 * byte in text becomes a space, so a reply is always exactly one line
 * and one empty line. 0, SPFKIT_E2BIG (past out's cap), SPFKIT_ENOMEM.
 */
int spfkit__policy_reply(struct spfkit__buf *out, const char *text, size_t len);

/*
 * The same reply written at out[0..room): its length, or 0 when room is
 * short of len + 9 bytes (then nothing useful was written).
 */
size_t spfkit__policy_reply_into(const char *text, size_t len, char *out, size_t room);


#endif
