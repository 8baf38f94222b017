/*
 * Is an Authentication-Results field ours (header_field.h), for the
 * milter and the OpenSMTPD filter alike.
 *
 * RFC 8601 §5: we MUST delete every field that claims, by its
 * authserv-id, to come from inside our trust boundary. What a field
 * claims is what the readers after us make of it (OpenDMARC, spam
 * filters, MUAs), and they are lenient: Debian's OpenDMARC 1.4.2 joins
 * `mx . test`, `mx.` + fold + `test`, `mx\.test`, `m\x.test` and
 * `mx."test"` into mx.test and believes the spf=pass after it (issue 33,
 * the CVE-2019-20790 class). So we read the id as the most lenient of
 * them would. The text before the first ';' outside comments and quotes
 * is taken without its comments, white space and quote marks (control
 * bytes and non-ASCII bytes count as white space: a reader that decodes
 * UTF-8 drops U+00A0 and its kind); the field is ours when that text
 * begins with our id, in any case, followed by dots at most, up to a
 * place where a reader could end the id: a removed part or a byte no host
 * name goes on with. `mx.test 1`, `mx.test.`, `mx.test(c)x`, `m x.test`
 * and `mx.test/x` all claim our name; `mx.test.evil.example`, `mx.testx`
 * and `xmx.test` do not.
 *
 * Where readers disagree on the structure itself, no reading is safe,
 * and a field we cannot attribute is not one we need to keep: its sender
 * chose an ambiguous form (RFC 8601 §7.1 forged fields, §7.8 fields
 * malformed on purpose), and no host adds one. So a field is ours,
 * whatever it names, when before its first ';' it holds a backslash
 * (some readers honour quoted-pairs in comments, some nowhere, some
 * everywhere), a comment in a comment (a regex ends a comment at its
 * first ')'; 17 levels defeated our own old parser), a quote mark in a
 * comment or a parenthesis in quotes (which holds which), an unclosed
 * comment or quote, a ')' that closes nothing, or "=?" (an RFC 2047
 * encoded word, which readers that decode headers turn into other text).
 */
#include <string.h>

#include "header_field.h"

/* The id read so far against ours. */
struct reading {
	const char *id;
	size_t id_len;  /* without trailing dots: "mx.test." is mx.test */
	size_t matched; /* bytes of the id the text has matched */
	int off;        /* the text has left the id */
};

enum place {
	TOP,
	COMMENT,
	QUOTED,
};

struct scan {
	struct reading r;
	enum place in;
};

static unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Read as white space: CFWS, control bytes, non-ASCII. */
static int is_space(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f;
}

/* Bytes a host name goes on with after what looks like our id. */
static int goes_on(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* A reader could end the id here: does it end as ours? */
static int ends_ours(const struct reading *r)
{
	return !r->off && r->matched == r->id_len;
}

/* One byte of the id's text; 1 when the text now claims our id. */
static int read_byte(struct reading *r, unsigned char c)
{
	if (r->off)
		return 0;
	if (is_space(c))
		return ends_ours(r);
	if (r->matched < r->id_len) {
		if (lower(c) == lower((unsigned char)r->id[r->matched]))
			r->matched++;
		else
			r->off = 1;
		return 0;
	}
	if (c == '.')
		return 0; /* the root's dot */
	if (goes_on(c)) {
		r->off = 1;
		return 0;
	}
	return 1;
}

/* One byte outside comments and quotes. */
static enum spfkit__mta_ar_owner at_top(struct scan *s, unsigned char c)
{
	switch (c) {
	case ';':
		return ends_ours(&s->r) ? SPFKIT__MTA_AR_OURS : SPFKIT__MTA_AR_OTHER;
	case ')':
		return SPFKIT__MTA_AR_OURS; /* closes nothing */
	case '(':
		s->in = COMMENT;
		break;
	case '"':
		s->in = QUOTED;
		break;
	default:
		return read_byte(&s->r, c) ? SPFKIT__MTA_AR_OURS : SPFKIT__MTA_AR_UNKNOWN;
	}
	return ends_ours(&s->r) ? SPFKIT__MTA_AR_OURS : SPFKIT__MTA_AR_UNKNOWN;
}

/* One byte; UNKNOWN: go on. */
static enum spfkit__mta_ar_owner step(struct scan *s, unsigned char c)
{
	switch (s->in) {
	case COMMENT:
		if (c == '(' || c == '"')
			return SPFKIT__MTA_AR_OURS; /* readers disagree on what it holds */
		if (c != ')')
			return SPFKIT__MTA_AR_UNKNOWN;
		s->in = TOP;
		return ends_ours(&s->r) ? SPFKIT__MTA_AR_OURS : SPFKIT__MTA_AR_UNKNOWN;
	case QUOTED:
		if (c == '(' || c == ')')
			return SPFKIT__MTA_AR_OURS;
		if (c == '"') {
			s->in = TOP;
			c = ' '; /* a reader could end the id at the quote mark */
		}
		return read_byte(&s->r, c) ? SPFKIT__MTA_AR_OURS : SPFKIT__MTA_AR_UNKNOWN;
	case TOP:
		break;
	}
	return at_top(s, c);
}

enum spfkit__mta_ar_owner spfkit__mta_ar_owner(const char *body, size_t len, const char *id,
					       int complete)
{
	struct scan s = {{id, 0, 0, 0}, TOP};
	size_t i;

	if (body == NULL || id == NULL)
		return SPFKIT__MTA_AR_OTHER;
	s.r.id_len = strlen(id);
	while (s.r.id_len > 0 && id[s.r.id_len - 1] == '.')
		s.r.id_len--;
	if (s.r.id_len == 0)
		return SPFKIT__MTA_AR_OTHER;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)body[i];
		enum spfkit__mta_ar_owner o;

		if (c == '\\' || (c == '=' && i + 1 < len && body[i + 1] == '?'))
			return SPFKIT__MTA_AR_OURS;
		o = step(&s, c);
		if (o != SPFKIT__MTA_AR_UNKNOWN)
			return o;
	}
	if (!complete)
		return SPFKIT__MTA_AR_UNKNOWN;
	if (s.in != TOP)
		return SPFKIT__MTA_AR_OURS; /* unclosed */
	return ends_ours(&s.r) ? SPFKIT__MTA_AR_OURS : SPFKIT__MTA_AR_OTHER;
}

int spfkit__mta_ar_is_ours(const char *value, const char *id)
{
	if (value == NULL)
		return 0;
	return spfkit__mta_ar_owner(value, strlen(value), id, 1) == SPFKIT__MTA_AR_OURS;
}
