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
 *
 * Real zone files hold much SPF never asks for. The types SPF reads
 * (A AAAA MX PTR TXT SPF CNAME) are stored; SOA, NS, SRV, CAA, DNSSEC
 * and the other types of ignored_types[], and any type written TYPEnnn
 * (RFC 3597 §5), are read, checked for their number of fields (and the
 * SOA's numbers), and dropped. RFC 3597 "\# length hex" data is taken
 * for every type, and decoded for the types SPF reads. "." owns records
 * of the ignored types (the root's NS in a hints file).
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
	size_t owner_len; /* 0: the root (when owner_set) */
	int owner_set;    /* an owner came before (blank owners repeat it) */
	uint32_t dollar_ttl; /* the last $TTL, if dollar_ttl_set */
	int dollar_ttl_set;
	uint32_t last_ttl; /* the last explicit TTL, else SPFKIT_ZONE_DEFAULT_TTL */
	struct spfkit__buf rdata;
	struct spfkit__buf generic; /* RFC 3597 "\# len hex" data, decoded */
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
	int kept;              /* a type SPF reads: stored; else read and ignored */
	uint8_t min_fields;    /* ignored types: data fields their text form has */
	uint8_t max_fields;    /* 0: no upper bound */
	char type_buf[16];     /* "TYPE123" for a type known by number only */
	uint32_t ttl;
	uint16_t pref;
	unsigned long line;
};

static int rdata_put_at(struct zf *zf, unsigned long line, const void *p, size_t n)
{
	if (spfkit__buf_append(&zf->rdata, p, n) == 0)
		return 0;
	if (zf->rdata.err == SPFKIT_E2BIG)
		zf_fail(zf, SPFKIT_E2BIG, line, "record data longer than %u bytes",
			SPFKIT__ZONE_RDATA_MAX);
	else
		zf_fail(zf, SPFKIT_ENOMEM, line, "out of memory");
	return -1;
}

/* TXT data is kept as written: each string after its length octet
 * (added as SPFKIT_RR_TXT_STRINGS, so lint sees the splits). */
static int rdata_put_length(struct zf *zf, unsigned long line, size_t len)
{
	unsigned char b = (unsigned char)len;

	return rdata_put_at(zf, line, &b, 1);
}

static int rdata_put(struct zf *zf, const struct tok *t, const void *p, size_t n)
{
	return rdata_put_at(zf, t->line, p, n);
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
		if (rr->type == SPFKIT_RR_TXT && rdata_put_length(zf, t->line, len) != 0)
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

/* ---- types SPF does not read, and RFC 3597 generic data ------------ */

/* RFC 3597 §5: data written as "\# length hex..." */
static int is_generic(const struct tok *t)
{
	return t->kind == TOK_WORD && t->len == 2 && t->p[0] == '\\' && t->p[1] == '#';
}

static int hex_value(int c)
{
	if (spfkit__is_digit(c))
		return c - '0';
	c = spfkit__lower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The hex words after the length, into zf->generic; t ends on the record's end. */
static int generic_hex(struct zf *zf, const struct rr_in *rr, struct tok *t, uint16_t want)
{
	char eb[ECHO_SIZE];
	int hi = -1, v;
	size_t i;

	for (next_token(zf, t); t->kind == TOK_WORD; next_token(zf, t)) {
		for (i = 0; i < t->len; i++) {
			v = hex_value((unsigned char)t->p[i]);
			if (v < 0) {
				zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad hex '%s' in %s RFC 3597 data",
					ECHO(t, eb), rr->type_name);
				return -1;
			}
			if (hi < 0) {
				hi = v;
				continue;
			}
			if (zf->generic.len == want) {
				zf_fail(zf, SPFKIT_ESYNTAX, t->line,
					"%s RFC 3597 data longer than its length %u", rr->type_name,
					(unsigned)want);
				return -1;
			}
			if (spfkit__buf_putc(&zf->generic, (char)(hi << 4 | v)) != 0) {
				zf_fail(zf, SPFKIT_ENOMEM, t->line, "out of memory");
				return -1;
			}
			hi = -1;
		}
	}
	if (zf->err)
		return -1;
	if (t->kind == TOK_QUOTED || hi >= 0 || zf->generic.len != want) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "%s RFC 3597 data %s", rr->type_name,
			t->kind == TOK_QUOTED ? "holds a quoted string"
			: hi >= 0	      ? "has an odd number of hex digits"
					      : "shorter than its length");
		return -1;
	}
	return 0;
}

/* An uncompressed wire-format name (RFC 1035 §3.1) filling d[0..n). */
static int generic_name(struct zf *zf, const struct rr_in *rr, const unsigned char *d, size_t n)
{
	char name[SPFKIT__ZONE_NAME_MAX + 1];
	const char *why = NULL;
	size_t i = 0, len = 0, l;

	for (;;) {
		if (i >= n)
			why = "the name runs past the end";
		else if (d[i] > SPFKIT__ZONE_LABEL_MAX)
			why = "a label over 63 bytes, or a compression pointer";
		else if (i + 1 + d[i] > n)
			why = "the name runs past the end";
		else if (len + (len > 0) + d[i] > SPFKIT__ZONE_NAME_MAX)
			why = "the name is longer than 253 bytes";
		else if (memchr(d + i + 1, '.', d[i]) != NULL)
			why = "a '.' inside a label is not supported";
		if (why != NULL || d[i] == 0)
			break;
		l = d[i++];
		if (len > 0)
			name[len++] = '.';
		memcpy(name + len, d + i, l);
		len += l;
		i += l;
	}
	if (why == NULL && i + 1 != n)
		why = "bytes after the name";
	if (why == NULL && len == 0 && rr->type != SPFKIT_RR_MX)
		why = "the target is the root";
	if (why != NULL) {
		zf_fail(zf, SPFKIT_ESYNTAX, rr->line, "%s RFC 3597 data: %s", rr->type_name, why);
		return -1;
	}
	return rdata_put_at(zf, rr->line, name, len); /* "MX 0 ." stays "" (RFC 7505) */
}

/* TXT/SPF wire data: <length><bytes> character-strings, joined (RFC 7208 §3.3). */
static int generic_strings(struct zf *zf, const struct rr_in *rr, const unsigned char *d, size_t n)
{
	size_t i = 0;

	if (n == 0) {
		zf_fail(zf, SPFKIT_ESYNTAX, rr->line, "%s record without a string", rr->type_name);
		return -1;
	}
	while (i < n) {
		if (i + 1 + d[i] > n) {
			zf_fail(zf, SPFKIT_ESYNTAX, rr->line,
				"%s RFC 3597 data: a string runs past the end", rr->type_name);
			return -1;
		}
		if (rr->type == SPFKIT_RR_TXT && rdata_put_length(zf, rr->line, d[i]) != 0)
			return -1;
		if (rdata_put_at(zf, rr->line, d + i + 1, d[i]) != 0)
			return -1;
		i += 1 + (size_t)d[i];
	}
	return 0;
}

/* Generic data of a type SPF reads, into the form spfkit_zone_add() takes. */
static int generic_convert(struct zf *zf, struct rr_in *rr)
{
	const unsigned char *d = (const unsigned char *)zf->generic.data;
	size_t n = zf->generic.len;
	size_t want = rr->type == SPFKIT_RR_A ? 4 : 16;

	switch (rr->type) {
	case SPFKIT_RR_A:
	case SPFKIT_RR_AAAA:
		if (n != want) {
			zf_fail(zf, SPFKIT_ESYNTAX, rr->line, "%s RFC 3597 data of %zu bytes, want %zu",
				rr->type_name, n, want);
			return -1;
		}
		return rdata_put_at(zf, rr->line, d, n);
	case SPFKIT_RR_TXT:
	case SPFKIT_RR_SPF:
		return generic_strings(zf, rr, d, n);
	case SPFKIT_RR_MX:
		if (n < 2) {
			zf_fail(zf, SPFKIT_ESYNTAX, rr->line, "MX RFC 3597 data without a preference");
			return -1;
		}
		rr->pref = (uint16_t)(d[0] << 8 | d[1]);
		return generic_name(zf, rr, d + 2, n - 2);
	default:
		return generic_name(zf, rr, d, n);
	}
}

/* "\# length hex...": checked for every type, kept for the types SPF reads. */
static int rdata_generic(struct zf *zf, struct rr_in *rr, struct tok *t)
{
	char eb[ECHO_SIZE];
	uint16_t want;

	next_token(zf, t);
	if (zf->err)
		return -1;
	if (parse_u16(t, &want) != 0) {
		if (tok_ends_record(t))
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "%s record: '\\#' without a length (RFC 3597)",
				rr->type_name);
		else
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad RFC 3597 data length '%s'",
				ECHO(t, eb));
		return -1;
	}
	spfkit__buf_reset(&zf->generic);
	if (generic_hex(zf, rr, t, want) != 0)
		return -1;
	return rr->kept ? generic_convert(zf, rr) : 0;
}

/* RFC 1035 §3.3.13: SERIAL is 32 bits, the four times are TTLs. */
static int soa_field(struct zf *zf, const struct tok *t, unsigned idx)
{
	static const char *const what[] = { "MNAME", "RNAME", "serial", "refresh", "retry", "expire",
					     "minimum" };
	char eb[ECHO_SIZE];
	uint64_t v = 0;
	uint32_t ttl;
	size_t i;

	if (idx >= 7)
		return 0; /* counted by the caller */
	if (t->kind == TOK_QUOTED) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "SOA %s is a quoted string", what[idx]);
		return -1;
	}
	if (idx < 2)
		return 0;
	if (idx > 2) {
		if (parse_ttl(zf, t, &ttl) == 1)
			return 0;
		if (!zf->err)
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad SOA %s '%s'", what[idx], ECHO(t, eb));
		return -1;
	}
	for (i = 0; i < t->len && v <= UINT32_MAX; i++) {
		if (!spfkit__is_digit((unsigned char)t->p[i]))
			break;
		v = v * 10 + (uint64_t)(t->p[i] - '0');
	}
	if (i == t->len && v <= UINT32_MAX)
		return 0;
	zf_fail(zf, SPFKIT_ESYNTAX, t->line, "bad SOA serial '%s'", ECHO(t, eb));
	return -1;
}

/*
 * The data of a type SPF never asks for (SOA, NS, SRV, CAA, DNSKEY...):
 * read to the record's end and ignored, after a check of the number of
 * fields its text form has, so a line cut short is still reported.
 */
static int rdata_skip(struct zf *zf, struct rr_in *rr, struct tok *t)
{
	unsigned n = 0;

	while (t->kind == TOK_WORD || t->kind == TOK_QUOTED) {
		if (rr->type == SPFKIT_RR_SOA && soa_field(zf, t, n) != 0)
			return -1;
		if (n < 255)
			n++;
		next_token(zf, t);
	}
	if (zf->err)
		return -1;
	if (n < rr->min_fields || (rr->max_fields > 0 && n > rr->max_fields)) {
		zf_fail(zf, SPFKIT_ESYNTAX, rr->line, "%s record with %u data field%s, want %s%u",
			rr->type_name, n, n == 1 ? "" : "s",
			rr->min_fields == rr->max_fields ? ""
			: n < rr->min_fields		 ? "at least "
							 : "at most ",
			n < rr->min_fields ? (unsigned)rr->min_fields : (unsigned)rr->max_fields);
		return -1;
	}
	return 0;
}

static int rdata_parse(struct zf *zf, struct rr_in *rr, struct tok *t)
{
	char eb[ECHO_SIZE];
	int rc;

	next_token(zf, t);
	if (zf->err)
		return -1;
	if (is_generic(t))
		return rdata_generic(zf, rr, t);
	if (!rr->kept)
		return rdata_skip(zf, rr, t);
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

/* The types SPF reads (RFC 7208 §4.4, §5): stored. */
static const struct zf_type {
	const char *name;
	uint16_t type;
	uint8_t min, max; /* data fields of the text form; max 0: no bound */
} kept_types[] = {
	{ "A", SPFKIT_RR_A, 0, 0 },     { "AAAA", SPFKIT_RR_AAAA, 0, 0 },
	{ "MX", SPFKIT_RR_MX, 0, 0 },   { "PTR", SPFKIT_RR_PTR, 0, 0 },
	{ "TXT", SPFKIT_RR_TXT, 0, 0 }, { "SPF", SPFKIT_RR_SPF, 0, 0 },
	{ "CNAME", SPFKIT_RR_CNAME, 0, 0 },
};

/*
 * Types a real zone file holds that SPF never asks for: read, checked
 * for their number of fields (RFC 1035 §3.3, RFC 2782, RFC 4034,
 * RFC 8659 ...) and ignored. Any other type is written TYPEnnn (RFC 3597).
 */
static const struct zf_type ignored_types[] = {
	{ "SOA", SPFKIT_RR_SOA, 7, 7 }, { "NS", 2, 1, 1 },          { "MD", 3, 1, 1 },
	{ "MF", 4, 1, 1 },              { "MB", 7, 1, 1 },          { "MG", 8, 1, 1 },
	{ "MR", 9, 1, 1 },              { "NULL", 10, 0, 0 },       { "WKS", 11, 2, 0 },
	{ "HINFO", 13, 2, 2 },          { "MINFO", 14, 2, 2 },      { "RP", 17, 2, 2 },
	{ "AFSDB", 18, 2, 2 },          { "X25", 19, 1, 1 },        { "ISDN", 20, 1, 2 },
	{ "RT", 21, 2, 2 },             { "NSAP", 22, 1, 1 },       { "SIG", 24, 9, 0 },
	{ "KEY", 25, 4, 0 },            { "PX", 26, 3, 3 },         { "GPOS", 27, 3, 3 },
	{ "LOC", 29, 4, 16 },           { "SRV", 33, 4, 4 },        { "NAPTR", 35, 6, 6 },
	{ "KX", 36, 2, 2 },             { "CERT", 37, 4, 0 },       { "DNAME", 39, 1, 1 },
	{ "APL", 42, 0, 0 },            { "DS", 43, 4, 0 },         { "SSHFP", 44, 3, 0 },
	{ "IPSECKEY", 45, 5, 0 },       { "RRSIG", 46, 9, 0 },      { "NSEC", 47, 1, 0 },
	{ "DNSKEY", 48, 4, 0 },         { "DHCID", 49, 1, 0 },      { "NSEC3", 50, 5, 0 },
	{ "NSEC3PARAM", 51, 4, 4 },     { "TLSA", 52, 4, 0 },       { "SMIMEA", 53, 4, 0 },
	{ "HIP", 55, 3, 0 },            { "CDS", 59, 4, 0 },        { "CDNSKEY", 60, 4, 0 },
	{ "OPENPGPKEY", 61, 1, 0 },     { "CSYNC", 62, 2, 0 },      { "ZONEMD", 63, 4, 0 },
	{ "SVCB", 64, 2, 0 },           { "HTTPS", 65, 2, 0 },      { "NID", 104, 2, 2 },
	{ "L32", 105, 2, 2 },           { "L64", 106, 2, 2 },       { "LP", 107, 2, 2 },
	{ "EUI48", 108, 1, 1 },         { "EUI64", 109, 1, 1 },     { "URI", 256, 3, 3 },
	{ "CAA", 257, 3, 3 },           { "AVC", 258, 1, 0 },       { "TA", 32768, 4, 0 },
	{ "DLV", 32769, 4, 0 },
};

#define NKEPT (sizeof(kept_types) / sizeof(kept_types[0]))
#define NIGNORED (sizeof(ignored_types) / sizeof(ignored_types[0]))

static void set_type(struct rr_in *rr, const struct zf_type *zt, int kept)
{
	rr->type = zt->type;
	rr->type_name = zt->name;
	rr->kept = kept;
	rr->min_fields = zt->min;
	rr->max_fields = zt->max;
}

/* RFC 3597 §5 "TYPEnnn": 1 when t is one (the number in *out), else 0. */
static int generic_type(const struct tok *t, uint16_t *out)
{
	struct tok num = *t;

	if (t->kind != TOK_WORD || t->len < 5 || !spfkit__memcaseeq(t->p, 4, "TYPE", 4))
		return 0;
	num.p += 4;
	num.len -= 4;
	return parse_u16(&num, out) == 0;
}

/* TYPEnnn: by its name when known, else ignored with any number of fields. */
static void set_generic_type(struct rr_in *rr, uint16_t type)
{
	size_t i;

	for (i = 0; i < NKEPT; i++)
		if (kept_types[i].type == type) {
			set_type(rr, &kept_types[i], 1);
			return;
		}
	for (i = 0; i < NIGNORED; i++)
		if (ignored_types[i].type == type) {
			set_type(rr, &ignored_types[i], 0);
			return;
		}
	snprintf(rr->type_buf, sizeof(rr->type_buf), "TYPE%u", (unsigned)type);
	rr->type = type;
	rr->type_name = rr->type_buf;
	rr->kept = 0;
	rr->min_fields = 0;
	rr->max_fields = 0;
}

static int parse_type(struct zf *zf, const struct tok *t, struct rr_in *rr)
{
	char eb[ECHO_SIZE];
	uint16_t num;
	size_t i;

	if (tok_ends_record(t)) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "record without a type");
		return -1;
	}
	for (i = 0; i < NKEPT; i++)
		if (tok_is(t, kept_types[i].name)) {
			set_type(rr, &kept_types[i], 1);
			return 0;
		}
	for (i = 0; i < NIGNORED; i++)
		if (tok_is(t, ignored_types[i].name)) {
			set_type(rr, &ignored_types[i], 0);
			return 0;
		}
	if (generic_type(t, &num)) {
		set_generic_type(rr, num);
		return 0;
	}
	if (t->kind == TOK_QUOTED)
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "expected a record type, not a quoted string");
	else
		zf_fail(zf, SPFKIT_ESYNTAX, t->line,
			"unknown record type '%s' (write other types as TYPEnnn, RFC 3597)",
			ECHO(t, eb));
	return -1;
}

/* IN, or its RFC 3597 §5 generic name CLASS1. */
static int is_class_in(const struct tok *t)
{
	return tok_is(t, "IN") || tok_is(t, "CLASS1");
}

/* CLASSnnn other than 1. */
static int is_class_other(const struct tok *t)
{
	struct tok num = *t;
	uint16_t v;

	if (t->kind != TOK_WORD || t->len < 6 || !spfkit__memcaseeq(t->p, 5, "CLASS", 5))
		return 0;
	num.p += 5;
	num.len -= 5;
	return parse_u16(&num, &v) == 0;
}

/*
 * An omitted TTL is $TTL's (RFC 2308 §4); an explicit TTL is that
 * record's alone, as in BIND and dnspython. Only a file with no $TTL
 * yet falls back on RFC 1035 §5.1's "the last stated TTL".
 */
static uint32_t omitted_ttl(const struct zf *zf)
{
	return zf->dollar_ttl_set ? zf->dollar_ttl : zf->last_ttl;
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
		} else if (is_class_in(t) && !have_class) {
			have_class = 1;
		} else if (is_class_in(t)) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "second class '%s'", ECHO(t, eb));
			return -1;
		} else if (tok_is(t, "CH") || tok_is(t, "HS") || tok_is(t, "CS") || is_class_other(t)) {
			zf_fail(zf, SPFKIT_ESYNTAX, t->line, "class '%s' is not supported (only IN)",
				ECHO(t, eb));
			return -1;
		} else {
			break;
		}
		next_token(zf, t);
	}
	if (have_ttl)
		zf->last_ttl = rr->ttl;
	else
		rr->ttl = omitted_ttl(zf);
	return zf->err ? -1 : 0;
}

static void add_record(struct zf *zf, const struct rr_in *rr)
{
	const char *why = NULL;
	int rc;

	rc = spfkit__zone_add(zf->zone, zf->owner, zf->owner_len,
			      rr->type == SPFKIT_RR_TXT ? SPFKIT_RR_TXT_STRINGS : rr->type, rr->ttl,
			      zf->rdata.data, zf->rdata.len, rr->pref, &why);
	if (rc == SPFKIT_ENOMEM)
		zf_fail(zf, rc, rr->line, "out of memory");
	else if (why == spfkit__zone_why_memory)
		zf_fail(zf, rc, rr->line, "zone larger than the memory limit of %zu bytes (%zu MiB)",
			spfkit__zone_max_memory(zf->zone), spfkit__zone_max_memory(zf->zone) >> 20);
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
		if (parse_ttl(zf, t, &ttl) == 1) {
			zf->dollar_ttl = ttl; /* RFC 2308 §4 */
			zf->dollar_ttl_set = 1;
		} else if (!zf->err) {
			ttl_directive_fail(zf, t);
		}
		directive_end(zf, t, "$TTL");
	} else if (tok_is(t, "$INCLUDE")) {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "$INCLUDE is not supported");
	} else {
		zf_fail(zf, SPFKIT_ESYNTAX, t->line, "unknown directive '%s'", ECHO(t, eb));
	}
}

/* "." (or "@" at the root origin) as an owner: real zones put SOA, NS... there. */
static int owner_is_root(const struct zf *zf, const struct tok *t)
{
	if (t->kind != TOK_WORD || t->len != 1)
		return 0;
	return t->p[0] == '.' || (t->p[0] == '@' && zf->origin_len == 0);
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
		if (owner_is_root(zf, &t))
			zf->owner_len = 0;
		else if (decode_name(zf, &t, zf->owner, &zf->owner_len) != 0)
			return;
		zf->owner_set = 1;
		next_token(zf, &t);
	} else if (!zf->owner_set) {
		zf_fail(zf, SPFKIT_ESYNTAX, t.line, "line starts with a blank but no owner came before");
		return;
	}
	rr.line = t.line;
	if (parse_ttl_class(zf, &t, &rr) != 0 || parse_type(zf, &t, &rr) != 0)
		return;
	if (rr.kept && zf->owner_len == 0) {
		/* SPF never asks the root, and spfkit_zone_add() cannot hold it */
		zf_fail(zf, SPFKIT_ESYNTAX, rr.line,
			"%s record at the root name ('.', or '@' with no $ORIGIN) is not supported",
			rr.type_name);
		return;
	}
	spfkit__buf_reset(&zf->rdata);
	if (rdata_parse(zf, &rr, &t) != 0)
		return;
	if (rr.kept)
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
	zf.last_ttl = SPFKIT_ZONE_DEFAULT_TTL;
	zf.errbuf = errbuf;
	zf.errlen = errlen;
	spfkit__cur_init(&zf.cur, text != NULL ? text : "", len);
	rc = set_origin(&zf, origin);
	if (rc != 0)
		return rc;
	spfkit__buf_init(&zf.rdata, spfkit__zone_alloc(zone), SPFKIT__ZONE_RDATA_MAX);
	spfkit__buf_init(&zf.generic, spfkit__zone_alloc(zone), SPFKIT__ZONE_RDATA_MAX);
	while (!zf.done && !zf.err)
		zf_entry(&zf);
	spfkit__buf_free(&zf.rdata);
	spfkit__buf_free(&zf.generic);
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
