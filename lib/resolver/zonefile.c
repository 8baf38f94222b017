/*
 * RFC 1035 §5 master files into a struct spfkit_zone.
 *
 * The text is read once, front to back, by a tokenizer that never looks
 * past the end of the input. A token is a word (escapes kept as
 * written), a quoted string (quotes removed, escapes kept) or the end of
 * a logical record; parentheses join lines into one record (§5.1).
 * Escapes are decoded only where a token is used, so each use can say
 * precisely what is wrong. Errors stop the load at the first bad line
 * and name it: "demo.zone:12: bad IPv4 address '1.2.3'".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "zone_int.h"

enum tok_kind { TOK_WORD, TOK_QUOTED, TOK_EOL, TOK_EOF, TOK_ERR };

struct tok {
	enum tok_kind kind;
	const char *p; /* as written: escapes not decoded, quotes removed */
	size_t len;
	unsigned long line;
};

struct zf {
	struct spfkit_zone *zone;
	struct spfkit__cur cur; /* over the whole text */
	const char *label;      /* names the input in messages */
	unsigned long line;     /* physical line of cur.p */
	unsigned long paren_line;
	int paren;
	size_t rec_start; /* offset where the current logical record began */
	char origin[SPFKIT__ZONE_NAME_MAX + 1];
	size_t origin_len; /* 0: the root */
	char owner[SPFKIT__ZONE_NAME_MAX + 1];
	size_t owner_len; /* 0: no owner yet */
	uint32_t default_ttl;
	struct spfkit__buf rdata;
	char *errbuf;
	size_t errlen;
	int err; /* first error; sticky */
	int done;
};

#define ZF_ECHO_MAX 64 /* bytes of a bad token quoted in a message */

static void zf_fail(struct zf *zf, int err, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void zf_fail(struct zf *zf, int err, unsigned long line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (zf->err)
		return;
	zf->err = err;
	spfkit__cur_fail(&zf->cur, err, "zone file error");
	if (zf->errbuf == NULL || zf->errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(zf->errbuf, zf->errlen, "%s:%lu: %s", zf->label, line, msg);
}

/* A printable copy of p[0..len) for messages: odd bytes as \DDD, cut short. */
static const char *echo(const char *p, size_t len, char *out, size_t size)
{
	size_t i, n = 0;
	unsigned char c;

	for (i = 0; i < len && n + 8 < size; i++) {
		c = (unsigned char)p[i];
		if (i == ZF_ECHO_MAX) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f) {
			out[n++] = (char)c;
		} else {
			snprintf(out + n, size - n, "\\%03u", (unsigned)c);
			n += 4;
		}
	}
	out[n] = '\0';
	return out;
}

#define ECHO_SIZE (ZF_ECHO_MAX * 4 + 16)
#define ECHO(t, buf) echo((t)->p, (t)->len, (buf), sizeof(buf))

/* ---- tokenizer ----------------------------------------------------- */

static int is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Raw bytes a master file may not hold: NUL and control characters. */
static int check_byte(struct zf *zf, int c)
{
	if (c == 0) {
		zf_fail(zf, SPFKIT_ESYNTAX, zf->line, "NUL byte in the file");
		return -1;
	}
	if ((c < 0x20 && c != '\t') || c == 0x7f) {
		zf_fail(zf, SPFKIT_ESYNTAX, zf->line, "control character 0x%02x", (unsigned)c);
		return -1;
	}
	return 0;
}

/* Bytes since the record began, the newline not counted, within the cap. */
static int check_length(struct zf *zf)
{
	if (spfkit__cur_off(&zf->cur) - zf->rec_start <= SPFKIT_ZONE_MAX_LINE)
		return 0;
	zf_fail(zf, SPFKIT_E2BIG, zf->line, "record longer than %u bytes", SPFKIT_ZONE_MAX_LINE);
	return -1;
}

static void skip_comment(struct zf *zf)
{
	int c;

	for (;;) {
		c = spfkit__cur_peek(&zf->cur);
		if (c < 0 || c == '\n' || c == '\r')
			return;
		if (c == 0 && check_byte(zf, c) != 0)
			return;
		zf->cur.p++;
	}
}

static int tok_end(int c)
{
	return c < 0 || is_blank(c) || c == '\n' || c == '\r' || c == ';' || c == '(' || c == ')' ||
	       c == '"';
}

/* A byte after a backslash: any but a line end (RFC 1035 §5.1 "\X"). */
static int escaped_byte(struct zf *zf, unsigned long line)
{
	int c;

	zf->cur.p++;
	c = spfkit__cur_peek(&zf->cur);
	if (c < 0 || c == '\n' || c == '\r') {
		zf_fail(zf, SPFKIT_ESYNTAX, line, "backslash at the end of a line");
		return -1;
	}
	return check_byte(zf, c);
}

static void read_word(struct zf *zf, struct tok *t)
{
	int c;

	t->kind = TOK_WORD;
	t->p = (const char *)zf->cur.p;
	for (;;) {
		c = spfkit__cur_peek(&zf->cur);
		if (tok_end(c))
			break;
		if (c == '\\' && escaped_byte(zf, t->line) != 0)
			break;
		if (c != '\\' && check_byte(zf, c) != 0)
			break;
		zf->cur.p++;
	}
	t->len = (size_t)((const char *)zf->cur.p - t->p);
}

static void read_quoted(struct zf *zf, struct tok *t)
{
	int c;

	t->kind = TOK_QUOTED;
	zf->cur.p++;
	t->p = (const char *)zf->cur.p;
	for (;;) {
		c = spfkit__cur_peek(&zf->cur);
		if (c < 0 || c == '\n' || c == '\r') {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "quoted string not closed on its line");
			return;
		}
		if (c == '"')
			break;
		if (c == '\\' && escaped_byte(zf, t->line) != 0)
			return;
		if (c != '\\' && check_byte(zf, c) != 0)
			return;
		zf->cur.p++;
	}
	t->len = (size_t)((const char *)zf->cur.p - t->p);
	zf->cur.p++;
}

/* One newline (LF or CRLF); 1 when the logical record ends here. */
static int newline(struct zf *zf, struct tok *t)
{
	if (check_length(zf) != 0)
		return 1;
	if (spfkit__cur_accept(&zf->cur, '\r') && spfkit__cur_peek(&zf->cur) != '\n') {
		zf_fail(zf, SPFKIT_ESYNTAX, zf->line, "carriage return not followed by a line feed");
		return 1;
	}
	zf->cur.p++;
	t->kind = TOK_EOL;
	t->line = zf->line++;
	return zf->paren == 0;
}

/* Parentheses: the record goes on over line ends (RFC 1035 §5.1). */
static int paren(struct zf *zf, int c)
{
	if (c == '(' && zf->paren) {
		zf_fail(zf, SPFKIT_ESYNTAX, zf->line, "'(' inside '('");
		return -1;
	}
	if (c == ')' && !zf->paren) {
		zf_fail(zf, SPFKIT_ESYNTAX, zf->line, "')' without '('");
		return -1;
	}
	zf->paren = c == '(';
	zf->paren_line = zf->line;
	zf->cur.p++;
	return 0;
}

static void next_token(struct zf *zf, struct tok *t)
{
	int c;

	for (;;) {
		t->kind = TOK_ERR;
		t->p = NULL;
		t->len = 0;
		t->line = zf->line;
		if (zf->err)
			return;
		c = spfkit__cur_peek(&zf->cur);
		if (c < 0) {
			if (zf->paren)
				zf_fail(zf, SPFKIT_ESYNTAX, zf->paren_line, "'(' never closed");
			else if (check_length(zf) == 0)
				t->kind = TOK_EOF;
			return;
		}
		if (is_blank(c)) {
			zf->cur.p++;
		} else if (c == ';') {
			skip_comment(zf);
		} else if (c == '\n' || c == '\r') {
			if (newline(zf, t))
				return;
		} else if (c == '(' || c == ')') {
			if (paren(zf, c) != 0)
				return;
		} else {
			if (c == '"')
				read_quoted(zf, t);
			else
				read_word(zf, t);
			if (zf->err || check_length(zf) != 0)
				t->kind = TOK_ERR;
			return;
		}
	}
}

static int tok_is(const struct tok *t, const char *word)
{
	return t->kind == TOK_WORD && spfkit__memcaseeq(t->p, t->len, word, strlen(word));
}

static int tok_ends_record(const struct tok *t)
{
	return t->kind == TOK_EOL || t->kind == TOK_EOF;
}

/* ---- decoding ------------------------------------------------------ */

/*
 * Decode the escape at p[*i] (a backslash): \DDD is one byte by its
 * decimal value, \X is X (RFC 1035 §5.1). -1 after an error.
 */
static int unescape_one(struct zf *zf, const struct tok *t, size_t *i)
{
	const char *p = t->p;
	size_t j = *i + 1;
	char eb[ECHO_SIZE];
	unsigned v;

	/* The tokenizer saw to it that a byte follows every backslash. */
	if (!spfkit__is_digit((unsigned char)p[j])) {
		*i = j + 1;
		return (unsigned char)p[j];
	}
	if (j + 3 > t->len || !spfkit__is_digit((unsigned char)p[j + 1]) ||
	    !spfkit__is_digit((unsigned char)p[j + 2])) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad escape '\\%s': want three digits",
			echo(p + j, t->len - j < 3 ? t->len - j : 3, eb, sizeof(eb)));
		return -1;
	}
	v = (unsigned)(p[j] - '0') * 100 + (unsigned)(p[j + 1] - '0') * 10 + (unsigned)(p[j + 2] - '0');
	if (v > 255) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad escape '\\%.3s': over 255", p + j);
		return -1;
	}
	*i = j + 3;
	return (int)v;
}

/* A TXT character-string: at most 255 bytes once decoded (RFC 1035 §3.3). */
static int decode_string(struct zf *zf, const struct tok *t, unsigned char *out, size_t *outlen)
{
	size_t i = 0, n = 0;
	int c;

	while (i < t->len) {
		if (t->p[i] == '\\') {
			c = unescape_one(zf, t, &i);
			if (c < 0)
				return -1;
		} else {
			c = (unsigned char)t->p[i++];
		}
		if (n == 255) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line,
				"string longer than 255 bytes (split it into several quoted strings)");
			return -1;
		}
		out[n++] = (unsigned char)c;
	}
	*outlen = n;
	return 0;
}

/*
 * A name as written into out (no final dot). Relative names get the
 * origin appended (§5.1); "@" is the origin. Dots are label separators,
 * so an escaped dot inside a label cannot be stored and is refused.
 */
static int decode_name(struct zf *zf, const struct tok *t, char *out, size_t *outlen)
{
	char tmp[SPFKIT__ZONE_NAME_MAX + 2], eb[ECHO_SIZE];
	const char *why = NULL;
	size_t i = 0, n = 0;
	int c, absolute = 0;

	if (t->kind != TOK_WORD) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "expected a domain name, not a quoted string");
		return -1;
	}
	if (t->len == 1 && t->p[0] == '@') {
		if (zf->origin_len == 0) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "'@' is the root here (no $ORIGIN)");
			return -1;
		}
		memcpy(out, zf->origin, zf->origin_len);
		*outlen = zf->origin_len;
		return 0;
	}
	while (i < t->len) {
		absolute = 0;
		if (t->p[i] == '\\') {
			c = unescape_one(zf, t, &i);
			if (c < 0)
				return -1;
			if (c == '.') {
				zf_fail(zf, SPFKIT_ESYNTAX, t->line, "escaped '.' in name '%s' is not supported",
					ECHO(t, eb));
				return -1;
			}
		} else {
			c = (unsigned char)t->p[i++];
			absolute = c == '.';
		}
		if (n == sizeof(tmp) - 1)
			break;
		tmp[n++] = (char)c;
	}
	if (i < t->len || (!absolute && zf->origin_len > 0 &&
			   n + 1 + zf->origin_len > SPFKIT__ZONE_NAME_MAX)) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "name '%s' longer than 253 bytes", ECHO(t, eb));
		return -1;
	}
	if (!absolute && zf->origin_len > 0) {
		tmp[n++] = '.';
		memcpy(tmp + n, zf->origin, zf->origin_len);
		n += zf->origin_len;
	}
	n = spfkit__zone_name_check(tmp, n, &why);
	if (n == 0) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad name '%s': %s", ECHO(t, eb), why);
		return -1;
	}
	memcpy(out, tmp, n);
	*outlen = n;
	return 0;
}

/*
 * A TTL: decimal seconds, or BIND's units (1w2d3h4m5s), at most
 * 2147483647 (RFC 2181 §8). 1 when t has the shape of a TTL (starts with
 * a digit), 0 when it does not; -1 after an error.
 */
static int parse_ttl(struct zf *zf, const struct tok *t, uint32_t *out)
{
	uint64_t total = 0, part = 0, mul;
	char eb[ECHO_SIZE];
	size_t i;
	int c;

	if (t->kind != TOK_WORD || !spfkit__is_digit((unsigned char)t->p[0]))
		return 0;
	for (i = 0; i < t->len; i++) {
		c = spfkit__lower((unsigned char)t->p[i]);
		if (spfkit__is_digit(c)) {
			part = part * 10 + (uint64_t)(c - '0');
			if (part > INT32_MAX)
				break;
			continue;
		}
		mul = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : c == 'w' ? 604800 : 0;
		if (mul == 0 || !spfkit__is_digit((unsigned char)t->p[i - 1]))
			break;
		total += part * mul;
		part = 0;
		if (total > INT32_MAX)
			break;
	}
	total += part;
	if (i < t->len || total > INT32_MAX) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad TTL '%s'", ECHO(t, eb));
		return -1;
	}
	*out = (uint32_t)total;
	return 1;
}

static int parse_u16(const struct tok *t, uint16_t *out)
{
	uint32_t v = 0;
	size_t i;

	if (t->kind != TOK_WORD || t->len == 0 || t->len > 5)
		return -1;
	for (i = 0; i < t->len; i++) {
		if (!spfkit__is_digit((unsigned char)t->p[i]))
			return -1;
		v = v * 10 + (uint32_t)(t->p[i] - '0');
	}
	if (v > UINT16_MAX)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* ---- records ------------------------------------------------------- */

struct rr_in {
	uint16_t type;
	const char *type_name;
	uint32_t ttl;
	uint16_t pref;
	unsigned long line;
};

static int rdata_put(struct zf *zf, const struct tok *t, const void *p, size_t n)
{
	if (spfkit__buf_append(&zf->rdata, p, n) == 0)
		return 0;
	if (zf->rdata.err == SPFKIT_E2BIG)
		zf_fail(zf, SPFKIT_E2BIG, t->line, "record data longer than %u bytes",
			SPFKIT__ZONE_RDATA_MAX);
	else
		zf_fail(zf, SPFKIT_ENOMEM, t->line, "out of memory");
	return -1;
}

/* An address in the text forms inet_pton(3) takes, no escapes. */
static int rdata_addr(struct zf *zf, struct rr_in *rr, const struct tok *t)
{
	char text[64], eb[ECHO_SIZE];
	int v6 = rr->type == SPFKIT_RR_AAAA;
	unsigned char bin[16];

	if (t->kind == TOK_WORD && t->len < sizeof(text) && memchr(t->p, '\\', t->len) == NULL) {
		memcpy(text, t->p, t->len);
		text[t->len] = '\0';
		if (inet_pton(v6 ? AF_INET6 : AF_INET, text, bin) == 1)
			return rdata_put(zf, t, bin, v6 ? 16 : 4);
	}
	if (tok_ends_record(t))
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "%s record without an address", rr->type_name);
	else
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad %s address '%s'", v6 ? "IPv6" : "IPv4",
			ECHO(t, eb));
	return -1;
}

static int rdata_name(struct zf *zf, struct rr_in *rr, const struct tok *t)
{
	char name[SPFKIT__ZONE_NAME_MAX + 1];
	size_t len;

	if (tok_ends_record(t)) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "%s record without a target name", rr->type_name);
		return -1;
	}
	/* RFC 7505: "MX 0 ." says the domain takes no mail; stored as "". */
	if (rr->type == SPFKIT_RR_MX && t->kind == TOK_WORD && t->len == 1 && t->p[0] == '.')
		return 0;
	if (decode_name(zf, t, name, &len) != 0)
		return -1;
	return rdata_put(zf, t, name, len);
}

static int rdata_mx(struct zf *zf, struct rr_in *rr, struct tok *t)
{
	char eb[ECHO_SIZE];

	if (tok_ends_record(t)) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "MX record without a preference");
		return -1;
	}
	if (parse_u16(t, &rr->pref) != 0) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad MX preference '%s'", ECHO(t, eb));
		return -1;
	}
	next_token(zf, t);
	return rdata_name(zf, rr, t);
}

/* One or more character-strings, joined with no separator (RFC 7208 §3.3). */
static int rdata_text(struct zf *zf, struct rr_in *rr, struct tok *t)
{
	unsigned char s[255];
	size_t len, n = 0;

	while (t->kind == TOK_WORD || t->kind == TOK_QUOTED) {
		if (decode_string(zf, t, s, &len) != 0)
			return -1;
		if (rdata_put(zf, t, s, len) != 0)
			return -1;
		n++;
		next_token(zf, t);
	}
	if (n == 0 && !zf->err)
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "%s record without a string", rr->type_name);
	return zf->err ? -1 : 0;
}

static int rdata_parse(struct zf *zf, struct rr_in *rr, struct tok *t)
{
	char eb[ECHO_SIZE];
	int rc;

	next_token(zf, t);
	if (zf->err)
		return -1;
	if (rr->type == SPFKIT_RR_TXT || rr->type == SPFKIT_RR_SPF)
		return rdata_text(zf, rr, t);
	if (rr->type == SPFKIT_RR_A || rr->type == SPFKIT_RR_AAAA)
		rc = rdata_addr(zf, rr, t);
	else if (rr->type == SPFKIT_RR_MX)
		rc = rdata_mx(zf, rr, t);
	else
		rc = rdata_name(zf, rr, t);
	if (rc != 0 || zf->err)
		return -1;
	next_token(zf, t);
	if (!tok_ends_record(t) && !zf->err)
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "unexpected '%s' after the %s data", ECHO(t, eb),
			rr->type_name);
	return zf->err ? -1 : 0;
}

static const struct {
	const char *name;
	uint16_t type;
} zf_types[] = {
	{ "A", SPFKIT_RR_A },     { "AAAA", SPFKIT_RR_AAAA },   { "MX", SPFKIT_RR_MX },
	{ "PTR", SPFKIT_RR_PTR }, { "TXT", SPFKIT_RR_TXT },     { "SPF", SPFKIT_RR_SPF },
	{ "CNAME", SPFKIT_RR_CNAME },
};

static int parse_type(struct zf *zf, const struct tok *t, struct rr_in *rr)
{
	char eb[ECHO_SIZE];
	size_t i;

	if (tok_ends_record(t)) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "record without a type");
		return -1;
	}
	for (i = 0; i < sizeof(zf_types) / sizeof(zf_types[0]); i++) {
		if (tok_is(t, zf_types[i].name)) {
			rr->type = zf_types[i].type;
			rr->type_name = zf_types[i].name;
			return 0;
		}
	}
	if (t->kind == TOK_QUOTED)
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "expected a record type, not a quoted string");
	else
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "unsupported record type '%s'", ECHO(t, eb));
	return -1;
}

/* [TTL] [class] or [class] [TTL] before the type (RFC 1035 §5.1). */
static int parse_ttl_class(struct zf *zf, struct tok *t, struct rr_in *rr)
{
	char eb[ECHO_SIZE];
	int have_ttl = 0, have_class = 0, rc;

	for (;;) {
		rc = parse_ttl(zf, t, &rr->ttl);
		if (rc < 0)
			return -1;
		if (rc > 0 && have_ttl) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "second TTL '%s'", ECHO(t, eb));
			return -1;
		}
		if (rc > 0) {
			have_ttl = 1;
		} else if (tok_is(t, "IN") && !have_class) {
			have_class = 1;
		} else if (tok_is(t, "IN")) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "second class 'IN'");
			return -1;
		} else if (tok_is(t, "CH") || tok_is(t, "HS") || tok_is(t, "CS")) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "class '%s' is not supported (only IN)",
				ECHO(t, eb));
			return -1;
		} else {
			break;
		}
		next_token(zf, t);
	}
	if (have_ttl)
		zf->default_ttl = rr->ttl; /* RFC 1035 §5.1: omitted TTL = last one */
	else
		rr->ttl = zf->default_ttl;
	return zf->err ? -1 : 0;
}

static void add_record(struct zf *zf, const struct rr_in *rr)
{
	const char *why = NULL;
	int rc;

	rc = spfkit__zone_add(zf->zone, zf->owner, zf->owner_len, rr->type, rr->ttl,
			      zf->rdata.data, zf->rdata.len, rr->pref, &why);
	if (rc == SPFKIT_ENOMEM)
		zf_fail(zf, rc, rr->line, "out of memory");
	else if (rc != 0)
		zf_fail(zf, rc == SPFKIT_E2BIG ? rc : SPFKIT_ESYNTAX, rr->line, "%s record refused: %s",
			rr->type_name, why != NULL ? why : spfkit_strerror(rc));
}

/* ---- directives ---------------------------------------------------- */

static void directive_end(struct zf *zf, struct tok *t, const char *what)
{
	char eb[ECHO_SIZE];

	next_token(zf, t);
	if (!tok_ends_record(t) && !zf->err)
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "unexpected '%s' after %s", ECHO(t, eb), what);
}

/* $TTL whose value parse_ttl() did not take as the shape of a TTL: say what it is instead. */
static void ttl_directive_fail(struct zf *zf, const struct tok *t)
{
	char eb[ECHO_SIZE];

	if (tok_ends_record(t))
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "$TTL without a TTL");
	else if (t->kind == TOK_QUOTED)
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "$TTL '%s' is not a TTL (a quoted string)",
			ECHO(t, eb));
	else
		zf_fail(zf, SPFKIT_ESYNTAX, t->line,
			"$TTL '%s' is not a TTL (want seconds, or units as in 1h30m)", ECHO(t, eb));
}

static void directive(struct zf *zf, struct tok *t)
{
	char eb[ECHO_SIZE];
	uint32_t ttl;

	if (tok_is(t, "$ORIGIN")) {
		next_token(zf, t);
		if (tok_ends_record(t))
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "$ORIGIN without a name");
		else if (t->kind == TOK_WORD && t->len == 1 && t->p[0] == '.')
			zf->origin_len = 0; /* the root */
		else
			decode_name(zf, t, zf->origin, &zf->origin_len); /* relative to the old one */
		directive_end(zf, t, "$ORIGIN");
	} else if (tok_is(t, "$TTL")) {
		next_token(zf, t);
		if (parse_ttl(zf, t, &ttl) == 1)
			zf->default_ttl = ttl; /* RFC 2308 §4 */
		else if (!zf->err)
			ttl_directive_fail(zf, t);
		directive_end(zf, t, "$TTL");
	} else if (tok_is(t, "$INCLUDE")) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "$INCLUDE is not supported");
	} else {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "unknown directive '%s'", ECHO(t, eb));
	}
}

/* One logical record: directive, resource record or nothing. */
static void zf_entry(struct zf *zf)
{
	struct rr_in rr = { 0 };
	struct tok t;
	int blank_owner;

	zf->rec_start = spfkit__cur_off(&zf->cur);
	blank_owner = is_blank(spfkit__cur_peek(&zf->cur));
	next_token(zf, &t);
	if (t.kind == TOK_EOF || t.kind == TOK_ERR)
		zf->done = 1;
	if (t.kind != TOK_WORD && t.kind != TOK_QUOTED)
		return;
	if (!blank_owner && t.kind == TOK_WORD && t.p[0] == '$') {
		directive(zf, &t);
		return;
	}
	if (!blank_owner) {
		if (decode_name(zf, &t, zf->owner, &zf->owner_len) != 0)
			return;
		next_token(zf, &t);
	} else if (zf->owner_len == 0) {
		zf_fail(zf, SPFKIT_ESYNTAX, t.line, "line starts with a blank but no owner came before");
		return;
	}
	rr.line = t.line;
	if (parse_ttl_class(zf, &t, &rr) != 0 || parse_type(zf, &t, &rr) != 0)
		return;
	spfkit__buf_reset(&zf->rdata);
	if (rdata_parse(zf, &rr, &t) != 0)
		return;
	add_record(zf, &rr);
}

/* ---- entry points -------------------------------------------------- */

static int set_origin(struct zf *zf, const char *origin)
{
	const char *why = NULL;
	size_t len;

	zf->origin_len = 0;
	if (origin == NULL || (origin[0] == '.' && origin[1] == '\0'))
		return 0;
	len = spfkit__zone_name_check(origin, strlen(origin), &why);
	if (len == 0) {
		if (zf->errbuf != NULL && zf->errlen > 0)
			snprintf(zf->errbuf, zf->errlen, "%s: bad origin: %s", zf->label, why);
		return SPFKIT_EINVAL;
	}
	memcpy(zf->origin, origin, len);
	zf->origin_len = len;
	return 0;
}

int spfkit_zone_load_text(struct spfkit_zone *zone, const char *text, size_t len,
			  const char *label, const char *origin, char *errbuf, size_t errlen)
{
	struct zf zf;
	int rc;

	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	if (zone == NULL || (text == NULL && len > 0))
		return SPFKIT_EINVAL;
	memset(&zf, 0, sizeof(zf));
	zf.zone = zone;
	zf.label = label != NULL ? label : "(text)";
	zf.line = 1;
	zf.default_ttl = SPFKIT_ZONE_DEFAULT_TTL;
	zf.errbuf = errbuf;
	zf.errlen = errlen;
	spfkit__cur_init(&zf.cur, text != NULL ? text : "", len);
	rc = set_origin(&zf, origin);
	if (rc != 0)
		return rc;
	spfkit__buf_init(&zf.rdata, spfkit__zone_alloc(zone), SPFKIT__ZONE_RDATA_MAX);
	while (!zf.done && !zf.err)
		zf_entry(&zf);
	spfkit__buf_free(&zf.rdata);
	return zf.err;
}

/* The whole file in memory, at most SPFKIT_ZONE_MAX_FILE bytes. */
static int read_file(FILE *f, const char *path, struct spfkit__buf *b, char *errbuf, size_t errlen)
{
	char chunk[65536], eb[128];
	size_t n;
	int rc;

	for (;;) {
		n = fread(chunk, 1, sizeof(chunk), f);
		rc = spfkit__buf_append(b, chunk, n);
		if (rc == SPFKIT_E2BIG && errbuf != NULL && errlen > 0)
			snprintf(errbuf, errlen, "%s: file larger than %u bytes", path, SPFKIT_ZONE_MAX_FILE);
		if (rc == SPFKIT_ENOMEM && errbuf != NULL && errlen > 0)
			snprintf(errbuf, errlen, "%s: out of memory", path);
		if (rc != 0)
			return rc;
		if (n < sizeof(chunk))
			break;
	}
	if (!ferror(f))
		return 0;
	if (strerror_r(errno, eb, sizeof(eb)) != 0)
		snprintf(eb, sizeof(eb), "error %d", errno);
	if (errbuf != NULL && errlen > 0)
		snprintf(errbuf, errlen, "%s: %s", path, eb);
	return SPFKIT_EIO;
}

int spfkit_zone_load_file(struct spfkit_zone *zone, const char *path, const char *origin,
			  char *errbuf, size_t errlen)
{
	struct spfkit__buf b;
	char eb[128];
	FILE *f;
	int rc;

	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	if (zone == NULL || path == NULL)
		return SPFKIT_EINVAL;
	f = fopen(path, "rb");
	if (f == NULL) {
		if (strerror_r(errno, eb, sizeof(eb)) != 0)
			snprintf(eb, sizeof(eb), "error %d", errno);
		if (errbuf != NULL && errlen > 0)
			snprintf(errbuf, errlen, "%s: %s", path, eb);
		return SPFKIT_EIO;
	}
	spfkit__buf_init(&b, spfkit__zone_alloc(zone), SPFKIT_ZONE_MAX_FILE);
	rc = read_file(f, path, &b, errbuf, errlen);
	fclose(f);
	if (rc == 0)
		rc = spfkit_zone_load_text(zone, b.data, b.len, path, origin, errbuf, errlen);
	spfkit__buf_free(&b);
	return rc;
}
