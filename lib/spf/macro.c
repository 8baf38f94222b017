/*
 * Macro-strings, RFC 7208 §7: one-pass parse into pieces, and expansion
 * with a hard cap. The parse never copies text: literal pieces point into
 * the source (or at the static expansions of the escapes below), so a
 * domain-spec without macros expands with a single memcpy.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ipaddr.h"
#include "macro.h"
#include "reason.h"

/* §7.1: "%%" is "%", "%_" a space, "%-" a URL-encoded space. Pieces made
 * from these point here; spfkit__macro_ends_in_expand() relies on it. */
static const char esc_percent[] = "%";
static const char esc_space[] = " ";
static const char esc_urlspace[] = "%20";

/* ---- parse ------------------------------------------------------------ */

struct mparse {
	struct spfkit__cur c;
	enum spfkit__macro_use use;
	struct spfkit_macro_piece *pieces; /* NULL in the counting pass */
	size_t count;
	uint32_t letters;
};

static int is_literal(int b, enum spfkit__macro_use use)
{
	/* macro-literal = %x21-24 / %x26-7E; explain-string adds SP (§7.1) */
	if (b == ' ')
		return use == SPFKIT__MACRO_EXPLAIN;
	return spfkit__is_vchar(b) && b != '%';
}

static enum spfkit_reason bad_byte(int b)
{
	if (b >= 0x80)
		return SPFKIT_REASON_NON_ASCII;
	if (b == ' ')
		return SPFKIT_REASON_MACRO_SPACE;
	return SPFKIT_REASON_MACRO_CONTROL;
}

/* The first error sticks; its text is the code's (reason.h), so the
 * caller finds the code again from the text's address. */
static void macro_fail(struct mparse *m, enum spfkit_reason reason)
{
	spfkit__cur_fail(&m->c, SPFKIT_ESYNTAX, spfkit_reason_text(reason));
}

static unsigned delim_bit(int b)
{
	switch (b) {
	case '.': return SPFKIT_DELIM_DOT;
	case '-': return SPFKIT_DELIM_DASH;
	case '+': return SPFKIT_DELIM_PLUS;
	case ',': return SPFKIT_DELIM_COMMA;
	case '/': return SPFKIT_DELIM_SLASH;
	case '_': return SPFKIT_DELIM_UNDER;
	case '=': return SPFKIT_DELIM_EQUAL;
	default: return 0;
	}
}

static struct spfkit_macro_piece *add_piece(struct mparse *m)
{
	struct spfkit_macro_piece *p = NULL;

	if (m->pieces != NULL) {
		p = &m->pieces[m->count];
		memset(p, 0, sizeof(*p));
	}
	m->count++;
	return p;
}

static void add_literal(struct mparse *m, const char *text, size_t len)
{
	struct spfkit_macro_piece *p = add_piece(m);

	if (p == NULL)
		return;
	p->kind = SPFKIT_PIECE_LITERAL;
	p->text = text;
	p->len = len;
}

/* macro-letter: s l o d i p v h everywhere, c r t only in exp text (§7.2). */
static int parse_letter(struct mparse *m, struct spfkit_macro_piece *p)
{
	int b = spfkit__cur_peek(&m->c);
	int lower = spfkit__lower(b);

	switch (lower) {
	case 's': case 'l': case 'o': case 'd': case 'i': case 'p': case 'v': case 'h':
		break;
	case 'c': case 'r': case 't':
		if (m->use == SPFKIT__MACRO_EXPLAIN)
			break;
		macro_fail(m, SPFKIT_REASON_MACRO_EXP_LETTER);
		return -1;
	default:
		macro_fail(m, b < 0 ? SPFKIT_REASON_MACRO_UNTERMINATED : SPFKIT_REASON_MACRO_LETTER);
		return -1;
	}
	m->c.p++;
	m->letters |= 1u << (lower - 'a');
	if (p != NULL) {
		p->letter = (char)lower;
		p->url_escape = b != lower; /* uppercase letter (§7.3) */
	}
	return 0;
}

/* transformers = *DIGIT [ "r" ]; the number must be nonzero (§7.3). */
static int parse_transformers(struct mparse *m, struct spfkit_macro_piece *p)
{
	const unsigned char *start = m->c.p;
	unsigned value = 0;

	while (spfkit__is_digit(spfkit__cur_peek(&m->c))) {
		value = value * 10 + (unsigned)(*m->c.p - '0');
		if (value > 1000)
			value = 1000; /* saturate: anything above 128 means "all" */
		m->c.p++;
	}
	if (m->c.p != start && value == 0) {
		m->c.p = start;
		macro_fail(m, SPFKIT_REASON_MACRO_ZERO);
		return -1;
	}
	if (p != NULL)
		p->digits = value > 128 ? 0 : (uint8_t)value;
	if (spfkit__lower(spfkit__cur_peek(&m->c)) == 'r') {
		m->c.p++;
		if (p != NULL)
			p->reverse = 1;
	}
	return 0;
}

/* "%{" macro-letter transformers *delimiter "}"; the cursor is past "%{". */
static void parse_expand(struct mparse *m)
{
	struct spfkit_macro_piece *p = add_piece(m);
	unsigned bit, delims = 0;

	if (p != NULL)
		p->kind = SPFKIT_PIECE_MACRO;
	if (parse_letter(m, p) != 0 || parse_transformers(m, p) != 0)
		return;
	for (;;) {
		bit = delim_bit(spfkit__cur_peek(&m->c));
		if (bit == 0)
			break;
		delims |= bit;
		m->c.p++;
	}
	if (p != NULL)
		p->delims = (uint8_t)delims;
	if (spfkit__cur_accept(&m->c, '}'))
		return;
	macro_fail(m, spfkit__cur_eof(&m->c) ? SPFKIT_REASON_MACRO_UNTERMINATED
					      : SPFKIT_REASON_MACRO_CHAR);
}

/* After a '%' (§7.3: "A '%' character not followed by a '{', '%', '-', or
 * '_' character is a syntax error"). */
static void parse_percent(struct mparse *m)
{
	int b;

	m->c.p++;
	b = spfkit__cur_peek(&m->c);
	if (b == '{') {
		m->c.p++;
		parse_expand(m);
		return;
	}
	if (b == '%')
		add_literal(m, esc_percent, 1);
	else if (b == '_')
		add_literal(m, esc_space, 1);
	else if (b == '-')
		add_literal(m, esc_urlspace, 3);
	else {
		macro_fail(m, SPFKIT_REASON_MACRO_PERCENT);
		return;
	}
	m->c.p++;
}

static void parse_all(struct mparse *m)
{
	const unsigned char *start;

	while (!m->c.err && !spfkit__cur_eof(&m->c)) {
		if (*m->c.p == '%') {
			parse_percent(m);
			continue;
		}
		start = m->c.p;
		while (m->c.p < m->c.end && is_literal(*m->c.p, m->use))
			m->c.p++;
		if (m->c.p == start) {
			macro_fail(m, bad_byte(*m->c.p));
			return;
		}
		add_literal(m, (const char *)start, (size_t)(m->c.p - start));
	}
}

/* A string without '%' (the common case, a plain name): check its bytes,
 * make one piece that points into the source. */
static int parse_plain(struct mparse *m, struct spfkit__arena *ar)
{
	const unsigned char *p = m->c.p;

	while (p < m->c.end && is_literal(*p, m->use))
		p++;
	if (p < m->c.end) {
		m->c.p = p;
		macro_fail(m, bad_byte(*p));
		return m->c.err;
	}
	m->pieces = spfkit__arena_alloc(ar, sizeof(*m->pieces));
	if (m->pieces == NULL)
		return SPFKIT_ENOMEM;
	add_literal(m, (const char *)m->c.base, (size_t)(m->c.end - m->c.base));
	return 0;
}

/* Pass 1 validates and counts, pass 2 fills an array of exactly that size. */
static int parse_counted(struct mparse *m, struct spfkit__arena *ar)
{
	parse_all(m);
	if (m->c.err)
		return m->c.err;
	if (m->count == 0)
		return 0;
	if (m->count > SIZE_MAX / sizeof(*m->pieces))
		return SPFKIT_ENOMEM;
	m->pieces = spfkit__arena_alloc(ar, m->count * sizeof(*m->pieces));
	if (m->pieces == NULL)
		return SPFKIT_ENOMEM;
	m->count = 0;
	m->letters = 0;
	m->c.p = m->c.base;
	parse_all(m);
	return m->c.err;
}

int spfkit__macro_parse(const char *src, size_t len, enum spfkit__macro_use use,
			struct spfkit__arena *ar, struct spfkit_macro_string *out, size_t *err_off,
			const char **why)
{
	struct mparse m;
	int rc;

	if (out == NULL || ar == NULL || (src == NULL && len > 0))
		return SPFKIT_EINVAL;
	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	m.use = use;
	spfkit__cur_init(&m.c, src, len);
	if (len > 0 && memchr(src, '%', len) == NULL)
		rc = parse_plain(&m, ar);
	else
		rc = parse_counted(&m, ar);
	if (rc == SPFKIT_ESYNTAX) {
		if (err_off != NULL)
			*err_off = m.c.err_off;
		if (why != NULL)
			*why = m.c.err_why;
	}
	if (rc != 0)
		return rc;
	out->pieces = m.pieces;
	out->count = m.count;
	out->letters = m.letters;
	out->src = src;
	out->src_len = len;
	return 0;
}

int spfkit__macro_ends_in_expand(const struct spfkit_macro_string *ms)
{
	const struct spfkit_macro_piece *last;

	if (ms == NULL || ms->count == 0)
		return 0;
	last = &ms->pieces[ms->count - 1];
	return last->kind == SPFKIT_PIECE_MACRO || last->text == esc_percent ||
	       last->text == esc_space || last->text == esc_urlspace;
}

/* ---- expand ----------------------------------------------------------- */

/*
 * Appends to a buffer, counting against SPFKIT_MACRO_MAX_EXPANSION. Small
 * writes (parts, dots) collect in `stage` and reach the buffer in a few
 * appends instead of one per part.
 *
 * A domain-spec longer than the cap is not an error: §7.3 keeps only its
 * last 253 octets (whole labels), so when the buffer fills, the labels
 * that can no longer be part of the result are dropped (cut_to_253 on
 * what is there so far) and expansion goes on in the room freed. Memory
 * stays within the cap; the work is one pass over the expansion.
 */
struct emit {
	struct spfkit__buf *b;
	size_t start; /* b->len when the expansion began */
	int err;
	int domain;   /* SPFKIT__MACRO_DOMAIN: cut instead of failing */
	int skip;     /* a cut fell inside a label: drop up to the next '.' */
	size_t staged;
	char stage[256];
};

static void cut_to_253(struct spfkit__buf *b, size_t start, int *mid_label);

static void emit_flush(struct emit *e)
{
	if (e->err == 0 && e->staged > 0)
		e->err = spfkit__buf_append(e->b, e->stage, e->staged);
	e->staged = 0;
}

/* Domain-specs: what was expanded so far, cut as §7.3 would cut it. A
 * label cut off is never part of the result, whatever follows it. */
static void emit_compact(struct emit *e)
{
	int mid_label;

	emit_flush(e);
	if (e->err)
		return;
	cut_to_253(e->b, e->start, &mid_label);
	if (mid_label)
		e->skip = 1;
}

static void emit_raw(struct emit *e, const char *p, size_t n)
{
	const size_t chunk = SPFKIT_MACRO_MAX_EXPANSION / 2;
	const char *dot;
	size_t used;

	if (e->err || n == 0)
		return;
	if (e->domain && n > chunk) { /* in pieces that fit once compacted */
		for (; n > chunk && !e->err; p += chunk, n -= chunk)
			emit_raw(e, p, chunk);
		if (e->err)
			return;
	}
	if (e->skip) {
		dot = memchr(p, '.', n);
		if (dot == NULL)
			return;
		e->skip = 0;
		n -= (size_t)(dot + 1 - p);
		p = dot + 1;
		if (n == 0)
			return;
	}
	used = e->b->len - e->start + e->staged; /* never above the cap, see below */
	if (n > SPFKIT_MACRO_MAX_EXPANSION - used && e->domain) {
		emit_compact(e);
		if (e->err)
			return;
		if (e->skip) { /* everything so far went: start again on p */
			emit_raw(e, p, n);
			return;
		}
		used = e->b->len - e->start;
	}
	if (n > SPFKIT_MACRO_MAX_EXPANSION - used) {
		e->err = SPFKIT_E2BIG;
		return;
	}
	if (n > sizeof(e->stage) - e->staged) {
		emit_flush(e);
		if (n > sizeof(e->stage)) {
			if (e->err == 0)
				e->err = spfkit__buf_append(e->b, p, n);
			return;
		}
	}
	memcpy(e->stage + e->staged, p, n);
	e->staged += n;
}

static int is_unreserved(unsigned char b)
{
	/* RFC 3986 §2.3, as §7.3 asks */
	return spfkit__is_alnum(b) || b == '-' || b == '.' || b == '_' || b == '~';
}

/* URL-escape through a small stack buffer: no allocation per byte. */
static void emit_escaped(struct emit *e, const char *p, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char tmp[192];
	size_t k = 0, i;
	unsigned char b;

	for (i = 0; i < n && !e->err; i++) {
		b = (unsigned char)p[i];
		if (is_unreserved(b)) {
			tmp[k++] = (char)b;
		} else {
			tmp[k++] = '%';
			tmp[k++] = hex[b >> 4];
			tmp[k++] = hex[b & 0x0f];
		}
		if (k > sizeof(tmp) - 3) {
			emit_raw(e, tmp, k);
			k = 0;
		}
	}
	emit_raw(e, tmp, k);
}

static void emit(struct emit *e, const char *p, size_t n, int escape)
{
	if (escape)
		emit_escaped(e, p, n);
	else
		emit_raw(e, p, n);
}

static int is_delim(unsigned char b, unsigned delims)
{
	return (delim_bit(b) & delims) != 0;
}

/* Index of the k-th delimiter of v[0..n) (k >= 1), or n when there are
 * fewer: reads no further than that delimiter. */
static size_t nth_delim(const char *v, size_t n, unsigned delims, size_t k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (is_delim((unsigned char)v[i], delims) && --k == 0)
			return i;
	return n;
}

/* Index just after the k-th delimiter of v[0..n) counted from its end
 * (k >= 1), or 0 when there are fewer: reads only what it skips. */
static size_t after_nth_delim_from_end(const char *v, size_t n, unsigned delims, size_t k)
{
	size_t i;

	for (i = n; i > 0; i--)
		if (is_delim((unsigned char)v[i - 1], delims) && --k == 0)
			return i;
	return 0;
}

/* Parts in order from v[0..n), each delimiter written as "." (§7.3). */
static void emit_forward(struct emit *e, const char *v, size_t n, unsigned delims, int esc)
{
	size_t i, s = 0;

	for (i = 0; i < n && !e->err; i++) {
		if (!is_delim((unsigned char)v[i], delims))
			continue;
		emit(e, v + s, i - s, esc);
		emit_raw(e, ".", 1);
		s = i + 1;
	}
	emit(e, v + s, n - s, esc);
}

/* Parts of v[0..n) in reverse order, joined with ".". */
static void emit_reversed(struct emit *e, const char *v, size_t n, unsigned delims, int esc)
{
	size_t end = n, s;

	while (!e->err) {
		s = end;
		while (s > 0 && !is_delim((unsigned char)v[s - 1], delims))
			s--;
		emit(e, v + s, end - s, esc);
		if (s == 0)
			return;
		emit_raw(e, ".", 1);
		end = s - 1;
	}
}

/*
 * §7.3: split on the delimiters (default "."), reverse if asked, keep the
 * rightmost `digits` parts, rejoin with ".". Empty parts are kept: "no
 * special treatment is given to leading, trailing, or consecutive
 * delimiters". The parts are never counted: the kept ones are found
 * from the end they are kept from, so the bytes read are the bytes
 * written (and an explanation stops reading at its cap).
 */
static void emit_transformed(struct emit *e, const char *v, size_t n,
			     const struct spfkit_macro_piece *p)
{
	unsigned delims = p->delims ? p->delims : SPFKIT_DELIM_DOT;
	int esc = p->url_escape;
	size_t i;

	if (p->digits == 0 && !p->reverse && delims == SPFKIT_DELIM_DOT) {
		emit(e, v, n, esc);
		return;
	}
	if (!p->reverse) {
		i = p->digits == 0 ? 0 : after_nth_delim_from_end(v, n, delims, p->digits);
		emit_forward(e, v + i, n - i, delims, esc);
		return;
	}
	/* reversed, the rightmost `digits` parts are the first ones */
	emit_reversed(e, v, p->digits == 0 ? n : nth_delim(v, n, delims, p->digits), delims, esc);
}

/*
 * A domain-spec keeps at most its last 253 octets, cut after a dot
 * (§7.3), so which ones it keeps depends on nothing but the last 255
 * bytes of the expansion (254 of name, one final dot). Of a
 * letter's value longer than that, a transformation that yields at
 * least DOMAIN_TAIL bytes of its own tail gives the same name: a
 * 64 KiB local part costs each %{l} a few hundred bytes, not 64 KiB.
 */
#define DOMAIN_TAIL 256u
#define DELIM_CHARS 7u

/* Where the first delimiter of each kind is at or after DOMAIN_TAIL in
 * the letters' values (n when none): found once per expansion. */
struct tail_memo {
	struct {
		const char *v;
		size_t n;
		size_t at[DELIM_CHARS];
		unsigned known; /* bit i: at[i] is set */
	} slot[8];          /* one per letter with a string value (s l o d h p r) */
	size_t used;
};

static size_t delim_after_tail(struct tail_memo *m, const char *v, size_t n, unsigned delims)
{
	static const char chars[DELIM_CHARS] = {'.', '-', '+', ',', '/', '_', '='};
	size_t s, i, best = n;
	const char *hit;

	for (s = 0; s < m->used && (m->slot[s].v != v || m->slot[s].n != n); s++)
		;
	if (s == m->used) {
		if (s == sizeof(m->slot) / sizeof(m->slot[0]))
			return nth_delim(v + DOMAIN_TAIL, n - DOMAIN_TAIL, delims, 1) + DOMAIN_TAIL;
		m->slot[s].v = v;
		m->slot[s].n = n;
		m->slot[s].known = 0;
		m->used++;
	}
	for (i = 0; i < DELIM_CHARS; i++) {
		if (!(delim_bit(chars[i]) & delims))
			continue;
		if (!(m->slot[s].known & (1u << i))) {
			hit = memchr(v + DOMAIN_TAIL, chars[i], n - DOMAIN_TAIL);
			m->slot[s].at[i] = hit != NULL ? (size_t)(hit - v) : n;
			m->slot[s].known |= 1u << i;
		}
		if (m->slot[s].at[i] < best)
			best = m->slot[s].at[i];
	}
	return best;
}

/* emit_transformed() for a domain-spec and n > DOMAIN_TAIL. */
static void emit_domain_tail(struct emit *e, const char *v, size_t n,
			     const struct spfkit_macro_piece *p, struct tail_memo *m)
{
	unsigned delims = p->delims ? p->delims : SPFKIT_DELIM_DOT;
	char t[2 * DOMAIN_TAIL];
	size_t end, last, part;

	if (!p->reverse) { /* the kept parts end the value: its own tail */
		emit_transformed(e, v + n - DOMAIN_TAIL, DOMAIN_TAIL, p);
		return;
	}
	/* reversed, the value's first parts end the result */
	end = p->digits == 0 ? DOMAIN_TAIL : nth_delim(v, DOMAIN_TAIL, delims, p->digits);
	if (end < DOMAIN_TAIL) { /* all the kept parts are there */
		emit_reversed(e, v, end, delims, p->url_escape);
		return;
	}
	/* the parts before the tail's last delimiter, then the last DOMAIN_TAIL
	 * bytes of the part that crosses it: it comes first in the result */
	last = after_nth_delim_from_end(v, DOMAIN_TAIL, delims, 1);
	end = delim_after_tail(m, v, n, delims);
	part = end - last < DOMAIN_TAIL ? end - last : DOMAIN_TAIL;
	memcpy(t, v, last);
	memcpy(t + last, v + end - part, part);
	emit_reversed(e, t, last + part, delims, p->url_escape);
}

/*
 * %{i} for IPv6: 32 nibbles, most significant first, dot-separated (§7.3).
 * Uppercase: RFC 7208 fixes no case (§7.4's example is lowercase), DNS
 * names compare without case, and the RFC 7208 test suite (v-macro-ip6)
 * expects "...E.B.A.B.E.F.A.C.ip6.arpa" in an explanation, as pyspf
 * writes it. Only explanation texts can show the difference.
 */
static size_t format_nibbles(const unsigned char *a, char *buf)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	int i;

	for (i = 0; i < 16; i++) {
		buf[n++] = hex[a[i] >> 4];
		buf[n++] = '.';
		buf[n++] = hex[a[i] & 0x0f];
		buf[n++] = '.';
	}
	return n - 1; /* no final dot */
}

/* Value of one letter, before transformers. `tmp` holds computed ones. */
static int letter_value(const struct spfkit__macro_env *env, char letter, char *tmp, size_t size,
			const char **v, size_t *n)
{
	const struct spfkit_ip *ip = env->ip;

	*v = tmp;
	switch (letter) {
	case 's': *v = env->sender; *n = env->sender_len; return 0;
	case 'l': *v = env->local; *n = env->local_len; return 0;
	case 'o': *v = env->sender_domain; *n = env->sender_domain_len; return 0;
	case 'd': *v = env->domain; *n = env->domain_len; return 0;
	case 'h': *v = env->helo; *n = env->helo_len; return 0;
	case 'p':
		*v = env->validated ? env->validated : "unknown";
		*n = env->validated ? env->validated_len : 7;
		return 0;
	case 'r':
		*v = env->receiver ? env->receiver : "unknown";
		*n = env->receiver ? env->receiver_len : 7;
		return 0;
	case 't': {
		int w = snprintf(tmp, size, "%" PRId64, env->now);
		*n = (w > 0 && (size_t)w < size) ? (size_t)w : 0;
		return 0;
	}
	default:
		break;
	}
	if (ip == NULL || (ip->family != 4 && ip->family != 6))
		return SPFKIT_EINVAL;
	if (letter == 'v') {
		*v = ip->family == 4 ? "in-addr" : "ip6";
		*n = ip->family == 4 ? 7 : 3;
	} else if (ip->family == 6 && letter == 'i') {
		*n = format_nibbles(ip->addr, tmp);
	} else if (size >= SPFKIT_IP_TEXT_MAX) {
		*n = spfkit__ipaddr_text(ip, tmp);
	} else {
		return SPFKIT_EINVAL;
	}
	return 0;
}

/* §7.3: drop labels from the left until at most 253 octets remain (one
 * final dot not counted); the cut happens in place, once. *mid_label
 * (may be NULL) is set when everything went and the text did not end in
 * a dot: the last label was cut, and its rest, if more follows, too. */
static void cut_to_253(struct spfkit__buf *b, size_t start, int *mid_label)
{
	char *r = b->data + start;
	size_t n = b->len - start, name, k = 0;
	const char *dot;

	if (mid_label != NULL)
		*mid_label = 0;
	name = (n > 0 && r[n - 1] == '.') ? n - 1 : n;
	while (name - k > SPFKIT_DOMAIN_MAX_LEN) {
		dot = memchr(r + k, '.', name - k);
		if (dot == NULL) {
			k = n; /* one label longer than a name may be: nothing left */
			if (mid_label != NULL)
				*mid_label = name == n;
			break;
		}
		k = (size_t)(dot - r) + 1;
	}
	if (k == 0)
		return;
	memmove(r, r + k, n - k);
	b->len = start + (n - k);
	b->data[b->len] = '\0';
}

int spfkit__macro_expand(const struct spfkit_macro_string *ms, const struct spfkit__macro_env *env,
			 enum spfkit__macro_use use, struct spfkit__buf *out)
{
	struct emit e;
	struct tail_memo memo;
	const struct spfkit_macro_piece *p;
	char tmp[80]; /* IPv6 nibbles: 63 bytes */
	const char *v;
	size_t i, n;

	if (ms == NULL || env == NULL || out == NULL)
		return SPFKIT_EINVAL;
	if (out->err)
		return out->err;
	e.b = out;
	e.start = out->len;
	e.err = 0;
	e.domain = use == SPFKIT__MACRO_DOMAIN;
	e.skip = 0;
	e.staged = 0;
	memo.used = 0;
	for (i = 0; i < ms->count && !e.err; i++) {
		p = &ms->pieces[i];
		if (p->kind == SPFKIT_PIECE_LITERAL) {
			emit_raw(&e, p->text, p->len);
			continue;
		}
		e.err = letter_value(env, p->letter, tmp, sizeof(tmp), &v, &n);
		if (e.err == 0 && e.domain && n > DOMAIN_TAIL)
			emit_domain_tail(&e, v, n, p, &memo);
		else if (e.err == 0)
			emit_transformed(&e, v, n, p);
	}
	emit_flush(&e);
	if (e.err) {
		if (out->data != NULL) { /* leave out as it was */
			out->len = e.start;
			out->data[out->len] = '\0';
		}
		return e.err;
	}
	if (use == SPFKIT__MACRO_DOMAIN && out->data != NULL)
		cut_to_253(out, e.start, NULL);
	return 0;
}
