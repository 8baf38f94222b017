/*
 * What a receiver records or answers for a result (include/spfkit/output.h):
 * the Received-SPF header field (RFC 7208 §9.1), the Authentication-Results
 * method entry (RFC 8601 §2.7.2) and the RFC 7372 rejection replies.
 *
 * Every value that came from the SMTP session or from DNS (sender, HELO,
 * mechanism, problem, explanation) is hostile. Each one is rendered through
 * put_text(), which replaces control and non-ASCII bytes with '?' (but
 * keeps valid UTF-8 in the _utf8 writers, for SMTPUTF8 mail), escapes
 * what the surrounding syntax needs and cuts the value at a cap, so that
 * no CR or LF can reach the output and the line stays under the 998
 * characters of RFC 5322 §2.1.1 (RFC 7208 §9.1: "does not contain invalid
 * characters, is not excessively long").
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <spfkit/eval.h>
#include <spfkit/output.h>

#include "core.h"

/*
 * Caps on one rendered value, in output bytes (escapes included, quotes
 * and the "..." cut marker not). With these the longest Received-SPF line
 * is below 998 bytes whatever the inputs are (tests/unit/test_output.c).
 */
#define COMMENT_VALUE_MAX 64u /* receiver and sender inside the comment */
#define HDR_VALUE_MAX 120u    /* one key=value value of Received-SPF */
#define AR_VALUE_MAX 255u     /* authserv-id and the smtp.* value */
#define REPLY_TEXT_MAX 400u   /* RFC 5321 §4.5.3.1.5: a reply line is <= 512 */

/* Where a value goes decides what must be escaped. */
enum style {
	STYLE_COMMENT, /* inside "( ... )": escape ( ) and backslash (RFC 5322 ccontent) */
	STYLE_QUOTED,  /* inside a quoted-string: escape " and backslash */
	STYLE_PLAIN,   /* SMTP reply text: nothing to escape */
};

/* The writer is snprintf-style (spfkit__text): counts everything,
 * stores what fits; buf may be NULL with size 0, to measure. */
static int out_init(struct spfkit__text *o, char *buf, size_t size)
{
	if (buf == NULL && size > 0)
		return SPFKIT_EINVAL;
	spfkit__text_init(o, buf, size);
	return 0;
}

static int out_finish(const struct spfkit__text *o)
{
	return o->len > INT_MAX ? SPFKIT_E2BIG : (int)o->len;
}

/*
 * Byte sets as four 64-bit masks, bytes 0-63, 64-127 and (always empty)
 * the high half: a test is a load and a shift, not a search. Filled at
 * compile time.
 */
struct byteset {
	uint64_t w[4];
};
#define BIT(c) ((uint64_t)1 << ((unsigned)(c) & 63u))
#define PRINTABLE_LO (~(uint64_t)0 << 32)            /* SP .. '?' */
#define PRINTABLE_HI (~(uint64_t)0 >> 1)             /* '@' .. '~', not DEL */
#define DIGITS_LO (((uint64_t)1 << 10) - 1) << '0'
#define LETTERS_HI ((((uint64_t)1 << 26) - 1) << 1 | (((uint64_t)1 << 26) - 1) << 33)

/* What goes out as it is in each style: printable, minus what needs a backslash. */
static const struct byteset plain_in[] = {
	[STYLE_COMMENT] = {{PRINTABLE_LO & ~(BIT('(') | BIT(')')), PRINTABLE_HI & ~BIT('\\')}},
	[STYLE_QUOTED] = {{PRINTABLE_LO & ~BIT('"'), PRINTABLE_HI & ~BIT('\\')}},
	[STYLE_PLAIN] = {{PRINTABLE_LO, PRINTABLE_HI}},
};
/* RFC 5322 §3.2.3 atext */
static const struct byteset atext = {{
	DIGITS_LO | BIT('!') | BIT('#') | BIT('$') | BIT('%') | BIT('&') | BIT('\'') | BIT('*') |
		BIT('+') | BIT('-') | BIT('/') | BIT('=') | BIT('?'),
	LETTERS_HI | BIT('^') | BIT('_') | BIT('`') | BIT('{') | BIT('|') | BIT('}') | BIT('~'),
}};
/* RFC 2045 token: VCHAR but tspecials (RFC 8601 §2.2 "value") */
static const struct byteset token = {{
	PRINTABLE_LO & ~(BIT(' ') | BIT('(') | BIT(')') | BIT('<') | BIT('>') | BIT(',') |
			 BIT(';') | BIT(':') | BIT('"') | BIT('/') | BIT('=') | BIT('?')),
	PRINTABLE_HI & ~(BIT('@') | BIT('[') | BIT(']') | BIT('\\')),
}};
#undef BIT

static int in_set(const struct byteset *set, unsigned char c)
{
	return (int)(set->w[c >> 6] >> (c & 63) & 1);
}

static int needs_escape(unsigned char c, enum style st)
{
	return st != STYLE_PLAIN && c >= 0x20 && c < 0x7f && !in_set(&plain_in[st], c);
}

/* Bytes of a UTF-8 character at s that a UTF-8 output takes as text (RFC 6532 §3.2). */
static size_t utf8_text(const char *s, int utf8)
{
	return utf8 ? spfkit__utf8_len((const unsigned char *)s, 4) : 0; /* s ends in a NUL */
}

/*
 * Write s (NUL-terminated, made by the library, contents from outside)
 * escaped for `st`, at most `cap` output bytes; a cut value ends in "...".
 * Control bytes, DEL and bytes >= 0x80 become '?': the output is 7-bit
 * printable ASCII and space, nothing else; with utf8 (a header of an
 * SMTPUTF8 message), valid UTF-8 characters go out whole too. Runs of
 * plain bytes go out in one copy.
 */
static void put_text(struct spfkit__text *o, const char *s, enum style st, size_t cap, int utf8)
{
	size_t used = 0, run, u;

	for (;;) {
		for (run = 0; run < cap - used && in_set(&plain_in[st], (unsigned char)s[run]); run++)
			;
		spfkit__text_put(o, s, run);
		used += run;
		s += run;
		if (*s == '\0')
			return;
		u = utf8_text(s, utf8);
		if (u > 0 && used + u <= cap) {
			spfkit__text_put(o, s, u);
			used += u;
			s += u;
			continue;
		}
		if (used + (needs_escape((unsigned char)*s, st) ? 2 : 1) > cap) {
			spfkit__text_puts(o, "...");
			return;
		}
		if (needs_escape((unsigned char)*s, st)) {
			spfkit__text_putc(o, '\\');
			used++;
		}
		spfkit__text_putc(o, (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?');
		used++;
		s++;
	}
}

/*
 * The length of s when it may go out unquoted, else 0: at most cap bytes,
 * each in `set` or (with utf8) part of a UTF-8 character; for a dot-atom
 * (RFC 5322 §3.2.3 atext and '.', RFC 6532 §3.2 adds UTF-8) no '.' first,
 * last or doubled; for an RFC 2045 token (RFC 8601 §2.2 "value"; RFC 6531
 * §3.3 for a domain in U-labels) no such rule.
 */
/* Inline in its two callers: with the set and rule known there, the loop
 * costs what each caller's own copy did (some 150 instructions a header). */
__attribute__((always_inline)) static inline size_t
unquoted_len(const char *s, size_t cap, int utf8, const struct byteset *set, int dot_atom)
{
	size_t i, u;

	if (dot_atom && s[0] == '.')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		u = utf8_text(s + i, utf8);
		if (u > 0) {
			i += u - 1;
			if (i >= cap)
				return 0;
			continue;
		}
		if (i == cap)
			return 0;
		if (dot_atom && c == '.') {
			if (s[i + 1] == '.' || s[i + 1] == '\0')
				return 0;
		} else if (!in_set(set, c)) {
			return 0;
		}
	}
	return i;
}

static size_t dot_atom_len(const char *s, size_t cap, int utf8)
{
	return unquoted_len(s, cap, utf8, &atext, 1);
}

static size_t token_len(const char *s, size_t cap, int utf8)
{
	return unquoted_len(s, cap, utf8, &token, 0);
}

/* A value as is when it is plain_len bytes of safe text, else as a quoted-string. */
static void put_value(struct spfkit__text *o, const char *s, size_t plain_len, size_t cap,
		      int utf8)
{
	if (plain_len > 0) {
		spfkit__text_put(o, s, plain_len); /* checked: printable ASCII, at most cap bytes */
		return;
	}
	spfkit__text_putc(o, '"');
	put_text(o, s, STYLE_QUOTED, cap, utf8);
	spfkit__text_putc(o, '"');
}

/* The names of RFC 7208 §2.6, which RFC 8601 §2.7.2 uses unchanged. */
/* The result's name, or NULL for a code that is no result (refused). */
static const char *result_word(enum spfkit_result_code code)
{
	return (unsigned)code <= SPFKIT_RESULT_PERMERROR ? spfkit_result_name(code) : NULL;
}

static int nonempty(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* The identity named in the comment: HELO name, or MAIL FROM <sender>. */
static const char *comment_subject(const struct spfkit_result *res)
{
	if (res->identity == SPFKIT_IDENTITY_HELO && nonempty(res->helo))
		return res->helo;
	if (nonempty(res->sender))
		return res->sender;
	if (nonempty(res->identity_domain))
		return res->identity_domain;
	return "unknown";
}

/* The verb phrase of the comment, one per result; short and factual. */
static void put_comment_claim(struct spfkit__text *o, const struct spfkit_result *res, int utf8,
			      const char *subject)
{
	const char *ip = nonempty(res->client_ip) ? res->client_ip : "unknown";

	switch (res->code) {
	case SPFKIT_RESULT_NONE:
		spfkit__text_puts(o, "no SPF record found for domain of ");
		put_text(o, subject, STYLE_COMMENT, COMMENT_VALUE_MAX, utf8);
		return;
	case SPFKIT_RESULT_TEMPERROR:
	case SPFKIT_RESULT_PERMERROR:
		spfkit__text_puts(o, res->code == SPFKIT_RESULT_TEMPERROR ? "temporary" : "permanent");
		spfkit__text_puts(o, " error checking domain of ");
		put_text(o, subject, STYLE_COMMENT, COMMENT_VALUE_MAX, utf8);
		return;
	default:
		break;
	}
	spfkit__text_puts(o, "domain of ");
	put_text(o, subject, STYLE_COMMENT, COMMENT_VALUE_MAX, utf8);
	if (res->code == SPFKIT_RESULT_PASS)
		spfkit__text_puts(o, " designates ");
	else if (res->code == SPFKIT_RESULT_FAIL)
		spfkit__text_puts(o, " does not designate ");
	else if (res->code == SPFKIT_RESULT_SOFTFAIL)
		spfkit__text_puts(o, " probably does not designate ");
	else
		spfkit__text_puts(o, " makes no assertion about ");
	put_text(o, ip, STYLE_COMMENT, COMMENT_VALUE_MAX, 0);
	if (res->code != SPFKIT_RESULT_NEUTRAL)
		spfkit__text_puts(o, " as permitted sender");
}

/* "(receiver: ...)": RFC 7208 §9.1 SHOULD include such a comment. */
static void put_comment(struct spfkit__text *o, const struct spfkit_result *res, int utf8)
{
	spfkit__text_putc(o, '(');
	put_text(o, nonempty(res->receiver) ? res->receiver : "unknown", STYLE_COMMENT,
		 COMMENT_VALUE_MAX, 0);
	spfkit__text_puts(o, ": ");
	put_comment_claim(o, res, utf8, comment_subject(res));
	spfkit__text_putc(o, ')');
}

/* "; key=value", or "key=value" for the first pair. */
static void put_pair(struct spfkit__text *o, int *first, const char *key, const char *value,
		     int utf8)
{
	if (!*first)
		spfkit__text_puts(o, "; ");
	*first = 0;
	spfkit__text_puts(o, key);
	spfkit__text_putc(o, '=');
	put_value(o, value, dot_atom_len(value, HDR_VALUE_MAX, utf8), HDR_VALUE_MAX, utf8);
}

/* The key-value-list of RFC 7208 §9.1, the keys that apply to this result. */
static void put_pairs(struct spfkit__text *o, const struct spfkit_result *res, int utf8)
{
	int first = 1;
	int helo_id = res->identity == SPFKIT_IDENTITY_HELO;

	if (nonempty(res->client_ip))
		put_pair(o, &first, "client-ip", res->client_ip, utf8);
	/* §9.1: envelope-from "if the MAIL FROM identity was checked" */
	if (!helo_id && nonempty(res->sender))
		put_pair(o, &first, "envelope-from", res->sender, utf8);
	if (nonempty(res->helo))
		put_pair(o, &first, "helo", res->helo, utf8);
	if (nonempty(res->receiver))
		put_pair(o, &first, "receiver", res->receiver, utf8);
	put_pair(o, &first, "identity", helo_id ? "helo" : "mailfrom", utf8);
	if (nonempty(res->mechanism))
		put_pair(o, &first, "mechanism", res->mechanism, utf8);
	if ((res->code == SPFKIT_RESULT_TEMPERROR || res->code == SPFKIT_RESULT_PERMERROR) &&
	    nonempty(res->problem))
		put_pair(o, &first, "problem", res->problem, utf8);
}

static int is_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/* Printable ASCII and valid UTF-8 characters only: a name as a person
 * wrote it, not hostile bytes (those still go out as '?'). */
static int is_utf8_text(const char *s)
{
	size_t u;

	while (*s != '\0') {
		u = spfkit__utf8_len((const unsigned char *)s, 4);
		if (u == 0 && ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f))
			return 0;
		s += u > 0 ? u : 1;
	}
	return 1;
}

/* The ASCII form of an identity for a field that must be ASCII. */
static const char *ascii_form(const char *s, const char *ascii)
{
	if (!nonempty(s) || is_ascii(s) || (ascii == NULL && !is_utf8_text(s)))
		return s;
	return ascii; /* NULL: none, left out */
}

/*
 * The identities as a header shows them (RFC 8616 §3). In a field that
 * must be ASCII: sender and HELO with their domain in A-labels; a sender
 * with no ASCII form (a UTF-8 local part) is left out, and the comment
 * names the checked domain instead. Bytes that are no UTF-8 text stay,
 * to be written as '?'. In a header of an SMTPUTF8 message
 * (RFC 6532): as the SMTP session gave them, and the checked domain in
 * the U-labels the sender wrote.
 */
static void header_view(const struct spfkit_result *res, int utf8, struct spfkit_result *v)
{
	const char *at;

	*v = *res;
	if (!utf8) {
		v->sender = ascii_form(res->sender, res->sender_ascii);
		v->helo = ascii_form(res->helo, res->helo_ascii);
		return;
	}
	if (res->identity == SPFKIT_IDENTITY_MAILFROM && nonempty(res->sender) &&
	    !is_ascii(res->sender) && res->identity_domain != NULL) {
		at = strrchr(res->sender, '@'); /* the domain follows the last (§4.3) */
		v->identity_domain = at != NULL ? at + 1 : res->sender;
	}
}

static int received_spf(const struct spfkit_result *full, int with_name, int utf8, char *buf,
			size_t size)
{
	struct spfkit_result view, *res = &view;
	struct spfkit__text o;
	const char *word;

	if (full == NULL || out_init(&o, buf, size) != 0)
		return SPFKIT_EINVAL;
	header_view(full, utf8, &view);
	word = result_word(res->code);
	if (word == NULL)
		return SPFKIT_EINVAL;
	if (with_name)
		spfkit__text_puts(&o, "Received-SPF: ");
	spfkit__text_puts(&o, word);
	spfkit__text_putc(&o, ' ');
	put_comment(&o, res, utf8);
	spfkit__text_putc(&o, ' ');
	put_pairs(&o, res, utf8);
	return out_finish(&o);
}

int spfkit_format_received_spf(const struct spfkit_result *res, int with_name, char *buf,
			       size_t size)
{
	return received_spf(res, with_name, 0, buf, size);
}

int spfkit_format_received_spf_utf8(const struct spfkit_result *res, int with_name, char *buf,
				    size_t size)
{
	return received_spf(res, with_name, 1, buf, size);
}

/*
 * The smtp.mailfrom value. RFC 8601 §2.7.2 allows the address or its
 * domain; like policyd-spf we give the domain that SPF checked, so a
 * local part (often per-recipient in bounce addresses) is not exposed.
 * For an empty MAIL FROM that is the HELO name (RFC 7208 §2.4).
 */
static const char *mailfrom_domain(const struct spfkit_result *res)
{
	const char *at;

	if (nonempty(res->identity_domain))
		return res->identity_domain;
	if (!nonempty(res->sender))
		return NULL;
	/* a local-part may hold a quoted '@'; the domain follows the last (§4.3) */
	at = strrchr(res->sender, '@');
	return at != NULL ? at + 1 : res->sender;
}

static int auth_results(const struct spfkit_result *full, const char *authserv_id,
			int with_name, int utf8, char *buf, size_t size)
{
	struct spfkit_result view, *res = &view;
	struct spfkit__text o;
	const char *word, *prop, *value;

	if (full == NULL || out_init(&o, buf, size) != 0)
		return SPFKIT_EINVAL;
	header_view(full, utf8, &view);
	word = result_word(res->code);
	if (word == NULL)
		return SPFKIT_EINVAL;
	if (with_name)
		spfkit__text_puts(&o, "Authentication-Results: ");
	if (authserv_id != NULL) {
		put_value(&o, authserv_id, token_len(authserv_id, AR_VALUE_MAX, 0), AR_VALUE_MAX, 0);
		spfkit__text_puts(&o, "; ");
	}
	spfkit__text_puts(&o, "spf=");
	spfkit__text_puts(&o, word);
	if (res->identity == SPFKIT_IDENTITY_HELO) {
		prop = "smtp.helo";
		value = nonempty(res->helo) ? res->helo : res->identity_domain;
	} else {
		prop = "smtp.mailfrom";
		value = mailfrom_domain(res);
	}
	/* RFC 8601 §2.2: a method entry may carry no propspec at all */
	if (nonempty(value)) {
		spfkit__text_putc(&o, ' ');
		spfkit__text_puts(&o, prop);
		spfkit__text_putc(&o, '=');
		put_value(&o, value, token_len(value, AR_VALUE_MAX, utf8), AR_VALUE_MAX, utf8);
	}
	return out_finish(&o);
}

int spfkit_format_auth_results(const struct spfkit_result *res, const char *authserv_id,
			       int with_name, char *buf, size_t size)
{
	return auth_results(res, authserv_id, with_name, 0, buf, size);
}

int spfkit_format_auth_results_utf8(const struct spfkit_result *res, const char *authserv_id,
				    int with_name, char *buf, size_t size)
{
	return auth_results(res, authserv_id, with_name, 1, buf, size);
}

void spfkit_smtp_reply_for(const struct spfkit_result *res, struct spfkit_smtp_reply *out)
{
	if (out == NULL)
		return;
	out->code = 0;
	out->enhanced = "";
	if (res == NULL)
		return;
	/* RFC 7372 §3.2 replaces the 5.7.1, 4.4.3 and 5.5.2 of RFC 7208 §8.4-8.7 */
	switch (res->code) {
	case SPFKIT_RESULT_FAIL:
		out->code = 550;
		out->enhanced = "5.7.23";
		break;
	case SPFKIT_RESULT_PERMERROR:
		out->code = 550;
		out->enhanced = "5.7.24";
		break;
	case SPFKIT_RESULT_TEMPERROR:
		out->code = 451;
		out->enhanced = "4.7.24";
		break;
	default:
		break; /* §8.5: softfail SHOULD NOT be rejected on its own */
	}
}

int spfkit_format_smtp_reply(const struct spfkit_result *res, char *buf, size_t size)
{
	struct spfkit_smtp_reply r;
	struct spfkit__text o;
	char num[4];

	if (res == NULL || out_init(&o, buf, size) != 0)
		return SPFKIT_EINVAL;
	spfkit_smtp_reply_for(res, &r);
	if (r.code == 0)
		return SPFKIT_EINVAL;
	num[0] = (char)('0' + r.code / 100);
	num[1] = (char)('0' + r.code / 10 % 10);
	num[2] = (char)('0' + r.code % 10);
	num[3] = '\0';
	spfkit__text_puts(&o, num);
	spfkit__text_putc(&o, ' ');
	spfkit__text_puts(&o, r.enhanced);
	spfkit__text_putc(&o, ' ');
	if (res->code == SPFKIT_RESULT_FAIL && nonempty(res->explanation)) {
		put_text(&o, res->explanation, STYLE_PLAIN, REPLY_TEXT_MAX, 0);
	} else if (res->code == SPFKIT_RESULT_FAIL) {
		spfkit__text_puts(&o, "SPF validation failed"); /* RFC 7372 §3.2 sample text */
	} else {
		spfkit__text_puts(&o, "SPF validation error");
		if (nonempty(res->problem)) {
			spfkit__text_puts(&o, ": ");
			put_text(&o, res->problem, STYLE_PLAIN, REPLY_TEXT_MAX, 0);
		}
	}
	return out_finish(&o);
}
