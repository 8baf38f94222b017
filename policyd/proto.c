/*
 * Bounded reader and writer of the Postfix policy delegation protocol
 * (Postfix SMTPD_POLICY_README: "name=value" lines, an empty line ends
 * the request; the reply is "action=..." and an empty line). Pure: the
 * server feeds bytes in and decides what to do with the verdict.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"

void spfkit__policy_init(struct spfkit__policy_request *req)
{
	req->count = 0;
	req->scanned = 0;
	req->lines = 0;
	req->names = 0;
}

/* Postfix attribute names are lowercase words with '_'; allow a little more. */
static const unsigned char name_byte_ok[256] = {
	['-'] = 1, ['.'] = 1, ['_'] = 1,
	['0'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['A'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['a'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

static int refuse(struct spfkit__policy_diag *diag, enum spfkit__policy_error code, size_t off,
		  size_t line)
{
	diag->code = code;
	diag->offset = off;
	diag->line = line;
	if (code == SPFKIT__POLICY_ELINE_LONG || code == SPFKIT__POLICY_EREQ_LONG ||
	    code == SPFKIT__POLICY_ETOO_MANY)
		return SPFKIT_E2BIG;
	return SPFKIT_ESYNTAX;
}

/*
 * Bytes a line may hold as they are: printable ASCII, TAB and 8-bit
 * bytes (UTF-8 in a sender). NUL, CR and the other controls need a look
 * of their own (see scan_line). A table, so that the common case costs
 * one load per byte: request parsing runs once per request and was a
 * fifth of a request's instructions when tested byte by byte.
 */
static const unsigned char line_byte_plain[256] = {
	['\t'] = 1,
	[0x20] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20-0x2f */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           /* 0x30-0x3f */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           /* 0x40-0x4f */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           /* 0x50-0x5f */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           /* 0x60-0x6f */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,           /* 0x70-0x7f: DEL is not */
	[0x80] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/*
 * Find the LF ending the line that starts at `start`, checking each byte
 * on the way. 1 with *eol set; 0 when more input is needed; < 0 refused.
 * The line content may be SPFKIT_POLICY_MAX_LINE bytes, then an optional
 * CR (tolerated before LF, as pypolicyd-spf does), then LF.
 */
/*
 * 1 when p[0..n) has a byte that a line may not hold as it is (not in
 * line_byte_plain). Written so the compiler can do it 16 bytes at a
 * time: no table, no branch, no early exit.
 */
static unsigned char any_unplain(const unsigned char *p, size_t n)
{
	unsigned char bad = 0;
	size_t i;

	for (i = 0; i < n; i++)
		bad |= (unsigned char)(((p[i] < 0x20) & (p[i] != '\t')) | (p[i] == 0x7f));
	return bad;
}

/*
 * The common case, a whole well-formed line: memchr() finds its LF, one
 * vectorised pass checks its bytes. 1 with *eol set; 0 when the line is
 * not (yet) that simple, and scan_line's careful loop decides.
 */
static int scan_line_fast(const unsigned char *in, size_t len, size_t start, size_t *eol)
{
	/* the LF may follow MAX_LINE content bytes and a CR */
	size_t window = len - start < SPFKIT_POLICY_MAX_LINE + 2 ? len - start
								 : SPFKIT_POLICY_MAX_LINE + 2;
	const unsigned char *lf = memchr(in + start, '\n', window);
	size_t e, content;

	if (lf == NULL)
		return 0;
	e = (size_t)(lf - in);
	content = e > start && in[e - 1] == '\r' ? e - 1 - start : e - start;
	if (e >= SPFKIT_POLICY_MAX_REQUEST || content > SPFKIT_POLICY_MAX_LINE ||
	    any_unplain(in + start, content) != 0)
		return 0;
	*eol = e;
	return 1;
}

static int scan_line(const unsigned char *in, size_t len, size_t start, size_t line, size_t *eol,
		     struct spfkit__policy_diag *diag)
{
	/* the plain run may not pass the line's limit nor the request's */
	size_t stop = start + SPFKIT_POLICY_MAX_LINE, i = start;

	if (start < len && scan_line_fast(in, len, start, eol))
		return 1;
	if (stop > SPFKIT_POLICY_MAX_REQUEST)
		stop = SPFKIT_POLICY_MAX_REQUEST;
	if (stop > len)
		stop = len;
	for (;;) {
		unsigned char c;
		size_t col;

		while (i < stop && line_byte_plain[in[i]])
			i++;
		if (i == len)
			return 0;
		if (i >= SPFKIT_POLICY_MAX_REQUEST)
			return refuse(diag, SPFKIT__POLICY_EREQ_LONG, i, line);
		c = in[i];
		col = i - start;
		if (c == '\n') {
			*eol = i;
			return 1;
		}
		if (col > SPFKIT_POLICY_MAX_LINE || (col == SPFKIT_POLICY_MAX_LINE && c != '\r'))
			return refuse(diag, SPFKIT__POLICY_ELINE_LONG, i, line);
		if (c == '\0')
			return refuse(diag, SPFKIT__POLICY_ENUL, i, line);
		if (c == '\r') {
			if (i + 1 == len)
				return 0;
			if (in[i + 1] != '\n')
				return refuse(diag, SPFKIT__POLICY_ECONTROL, i, line);
			i++;
			continue;
		}
		if (line_byte_plain[c]) {
			i++; /* plain, stopped only by the bound: checked above */
			continue;
		}
		return refuse(diag, SPFKIT__POLICY_ECONTROL, i, line);
	}
}

/* A Bloom bit for a name: a line whose bit is new cannot repeat a name. */
static uint64_t name_bit(const unsigned char *name, size_t n)
{
	return (uint64_t)1 << ((n + name[0] + 3u * name[n - 1]) & 63);
}

static int is_duplicate(const struct spfkit__policy_request *req, const unsigned char *in,
			size_t off, size_t n, uint64_t bit)
{
	size_t i;

	if ((req->names & bit) == 0)
		return 0;
	for (i = 0; i < req->count; i++)
		if (req->attrs[i].name_len == n && memcmp(in + req->attrs[i].name_off, in + off, n) == 0)
			return 1;
	return 0;
}

/* A checked name in[start..start+n) and its value up to end: counted and kept. */
static int add_attr(struct spfkit__policy_request *req, const unsigned char *in, size_t start,
		    size_t n, size_t end, struct spfkit__policy_diag *diag)
{
	size_t line = req->lines + 1;
	uint64_t bit = name_bit(in + start, n);
	struct spfkit__policy_attr *a;

	if (req->count == SPFKIT_POLICY_MAX_ATTRS)
		return refuse(diag, SPFKIT__POLICY_ETOO_MANY, start, line);
	if (is_duplicate(req, in, start, n, bit))
		return refuse(diag, SPFKIT__POLICY_EDUPLICATE, start, line);
	req->names |= bit;
	a = &req->attrs[req->count++];
	a->name_off = start;
	a->name_len = n;
	a->value_off = start + n + 1;
	a->value_len = end - a->value_off;
	return 0;
}

/* One "name=value" line in in[start..end). 0, or refused. */
static int take_attr(struct spfkit__policy_request *req, const unsigned char *in, size_t start,
		     size_t end, struct spfkit__policy_diag *diag)
{
	const unsigned char *eq = memchr(in + start, '=', end - start);
	size_t line = req->lines + 1, n, i;

	if (eq == NULL)
		return refuse(diag, SPFKIT__POLICY_ENO_EQUAL, start, line);
	n = (size_t)(eq - (in + start));
	if (n == 0)
		return refuse(diag, SPFKIT__POLICY_EBAD_NAME, start, line);
	for (i = 0; i < n; i++)
		if (!name_byte_ok[in[start + i]])
			return refuse(diag, SPFKIT__POLICY_EBAD_NAME, start + i, line);
	return add_attr(req, in, start, n, end, diag);
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/*
 * 1 when the word may hold a byte a value cannot hold as it is: a control
 * byte (TAB too: the byte loop after it lets a TAB pass) or DEL. The LF
 * that ends the line stops it as well.
 */
static int word_unplain(uint64_t w)
{
	uint64_t del = w ^ (ONES * 0x7f);

	return (((w - ONES * 0x20) & ~w) | ((del - ONES) & ~del)) & HIGHS ? 1 : 0;
}

/*
 * The usual line, "name=value" of plain bytes ended by LF or CR LF, in
 * one pass: a name byte test each, then the value a word at a time. 1
 * with *n (the name's length) and *eol set; 0 for anything else, which
 * scan_line() and take_attr() then judge with their diagnostics.
 */
static int line_fast(const unsigned char *in, size_t len, size_t start, size_t *n, size_t *eol)
{
	/* every byte looked at, the LF included, is below lim */
	size_t lim = start + SPFKIT_POLICY_MAX_LINE + 2, i = start, content;
	uint64_t w;

	if (lim > SPFKIT_POLICY_MAX_REQUEST)
		lim = SPFKIT_POLICY_MAX_REQUEST;
	if (lim > len)
		lim = len;
	while (i < lim && name_byte_ok[in[i]])
		i++;
	if (i == start || i >= lim || in[i] != '=')
		return 0;
	*n = i - start;
	for (i++; lim - i >= 8; i += 8) {
		memcpy(&w, in + i, 8);
		if (word_unplain(w))
			break;
	}
	while (i < lim && line_byte_plain[in[i]])
		i++;
	if (i + 1 < lim && in[i] == '\r' && in[i + 1] == '\n')
		i++;
	if (i >= lim || in[i] != '\n')
		return 0;
	content = in[i - 1] == '\r' ? i - 1 - start : i - start;
	if (content > SPFKIT_POLICY_MAX_LINE)
		return 0;
	*eol = i;
	return 1;
}

static void point_into(struct spfkit__policy_request *req, const char *in)
{
	size_t i;

	for (i = 0; i < req->count; i++) {
		req->attrs[i].name = in + req->attrs[i].name_off;
		req->attrs[i].value = in + req->attrs[i].value_off;
	}
}

int spfkit__policy_read(const char *in, size_t len, struct spfkit__policy_request *req, size_t *used,
			struct spfkit__policy_diag *diag)
{
	const unsigned char *u = (const unsigned char *)in;
	size_t start, eol, end;
	int rc;

	diag->code = SPFKIT__POLICY_OK;
	for (;;) {
		size_t n;

		start = req->scanned;
		if (line_fast(u, len, start, &n, &eol)) {
			end = u[eol - 1] == '\r' ? eol - 1 : eol;
			rc = add_attr(req, u, start, n, end, diag);
			if (rc != 0)
				return rc;
			req->scanned = eol + 1;
			req->lines++;
			continue;
		}
		rc = scan_line(u, len, start, req->lines + 1, &eol, diag);
		if (rc <= 0)
			return rc == 0 ? SPFKIT__POLICY_NEED_MORE : rc;
		end = (eol > start && u[eol - 1] == '\r') ? eol - 1 : eol;
		if (end == start) {
			if (req->count == 0)
				return refuse(diag, SPFKIT__POLICY_EEMPTY, start, req->lines + 1);
			point_into(req, in);
			*used = eol + 1;
			return SPFKIT__POLICY_COMPLETE;
		}
		rc = take_attr(req, u, start, end, diag);
		if (rc != 0)
			return rc;
		req->scanned = eol + 1;
		req->lines++;
	}
}

const char *spfkit__policy_get(const struct spfkit__policy_request *req, const char *name,
			       size_t *len)
{
	size_t i, n = strlen(name); /* our own constant, never client input */

	for (i = 0; i < req->count; i++) {
		const struct spfkit__policy_attr *a = &req->attrs[i];

		if (a->name_len == n && memcmp(a->name, name, n) == 0) {
			*len = a->value_len;
			return a->value;
		}
	}
	*len = 0;
	return NULL;
}

const char *spfkit__policy_strerror(enum spfkit__policy_error code)
{
	switch (code) {
	case SPFKIT__POLICY_OK: return "no error";
	case SPFKIT__POLICY_ELINE_LONG: return "line too long";
	case SPFKIT__POLICY_ETOO_MANY: return "too many attributes";
	case SPFKIT__POLICY_EREQ_LONG: return "request too long";
	case SPFKIT__POLICY_ENUL: return "NUL byte";
	case SPFKIT__POLICY_ECONTROL: return "control byte";
	case SPFKIT__POLICY_ENO_EQUAL: return "line without '='";
	case SPFKIT__POLICY_EBAD_NAME: return "bad attribute name";
	case SPFKIT__POLICY_EDUPLICATE: return "duplicate attribute";
	case SPFKIT__POLICY_EEMPTY: return "empty request";
	}
	return "unknown error";
}

/* 1 when p[0..n) holds a control byte (below 0x20, or 0x7f); branch-free, vectorisable. */
static unsigned char any_control(const unsigned char *p, size_t n)
{
	unsigned char found = 0;
	size_t i;

	for (i = 0; i < n; i++)
		found |= (unsigned char)((p[i] < 0x20) | (p[i] == 0x7f));
	return found;
}

size_t spfkit__policy_reply_into(const char *text, size_t len, char *out, size_t room)
{
	const unsigned char *u = (const unsigned char *)text;
	size_t i = 0, o;

	if (room < len + 9)
		return 0;
	memcpy(out, "action=", 7);
	o = 7;
	if (!any_control(u, len)) { /* the usual case: one vectorised check, one copy */
		memcpy(out + o, text, len);
		o += len;
		i = len;
	}
	/* runs of plain bytes copied whole; as spfkit__policy_reply, a control byte becomes a space */
	while (i < len) {
		size_t run = i;

		while (run < len && (u[run] >= 0x20 && u[run] != 0x7f))
			run++;
		memcpy(out + o, text + i, run - i);
		o += run - i;
		if (run == len)
			break;
		out[o++] = ' ';
		i = run + 1;
	}
	memcpy(out + o, "\n\n", 2);
	return o + 2;
}

int spfkit__policy_reply(struct spfkit__buf *out, const char *text, size_t len)
{
	size_t i, run = 0;

	spfkit__buf_append(out, "action=", 7);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c != 0x7f)
			continue;
		/* one line only: a control byte could end the reply early */
		spfkit__buf_append(out, text + run, i - run);
		spfkit__buf_putc(out, ' ');
		run = i + 1;
	}
	spfkit__buf_append(out, text + run, len - run);
	spfkit__buf_append(out, "\n\n", 2);
	return out->err;
}
