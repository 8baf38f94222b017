/*
 * `spfkit lint` checks on a record's text, before and besides parsing:
 * which TXT records are SPF and which nearly are (RFC 7208 §4.5), bytes
 * that are not ASCII, common misspellings, the pre-RFC (2003) syntax,
 * and the sizes of §3.3 and §3.4. They work on any text, so a record
 * the parser refuses still gets told what was probably meant.
 */
#include <stdio.h>
#include <string.h>

#include "idna.h"
#include "publish.h"

#define MAX_BYTE_FINDINGS 5u /* non-ascii findings per record; the first ones tell enough */
#define RECORD_SOFT_MAX 450u /* §3.4: "keep the size of the record ... within 450 octets" */

static int has_prefix_ci(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && spfkit__memcaseeq(s, n, prefix, n);
}

/* ---- which records are SPF (§4.5) ------------------------------------ */

/* A TXT record that was meant to be SPF but is not selected; 1 when reported. */
static int near_miss(struct lint_report *r, const char *domain, const char *s, size_t len)
{
	size_t i = 0;

	if (has_prefix_ci(s, len, "spf2.0/")) {
		spfkit__lint_add_as(
			r, LINT_NOTICE, L_LEGACY_SYNTAX, domain, s, len < 40 ? len : 40, 0,
			"remove it unless a Sender ID receiver still matters to you",
			"a Sender ID record (RFC 4406, historic): SPF receivers ignore it");
		return 1;
	}
	while (i < len && (s[i] == ' ' || s[i] == '"' || s[i] == '\''))
		i++;
	if (!has_prefix_ci(s + i, len - i, "v=spf1"))
		return 0;
	if (i > 0) {
		spfkit__lint_add(r, L_VERSION_GLUED, domain, s, len < 40 ? len : 40, 0,
				 "publish the text with v=spf1 as its very first bytes",
				 "the record starts with a %s before v=spf1: receivers do not see "
				 "an SPF record",
				 s[0] == ' ' ? "space" : "quote character");
		return 1;
	}
	spfkit__lint_add(
		r, L_VERSION_GLUED, domain, s, len < 40 ? len : 40, 0, NULL,
		"\"v=spf1\" is followed by '%c', not a space: receivers do not see an SPF record",
		s[6]);
	return 1;
}

size_t spfkit__lint_select(struct lint_report *r, const char *domain, const struct lint_answer *txt,
			   const char **rec, size_t *len)
{
	size_t i, n = 0;

	*rec = NULL;
	*len = 0;
	for (i = 0; i < txt->count; i++) {
		const char *s = (const char *)txt->rrs[i].data;
		size_t l = txt->rrs[i].len;

		if (!spfkit_record_is_spf(s, l)) {
			near_miss(r, domain, s, l);
			continue;
		}
		if (n++ == 0) {
			*rec = s;
			*len = l;
		}
	}
	return n;
}

/* ---- bytes ------------------------------------------------------------- */

/* What a non-ASCII sequence at s[i] probably is; *skip: its length. */
static const char *byte_name(const unsigned char *s, size_t len, size_t i, size_t *skip)
{
	static const struct {
		const char *bytes;
		const char *name;
	} known[] = {
		{ "\xe2\x80\x9c", "a left smart quote (U+201C)" },
		{ "\xe2\x80\x9d", "a right smart quote (U+201D)" },
		{ "\xe2\x80\x98", "a left single smart quote (U+2018)" },
		{ "\xe2\x80\x99", "a right single smart quote (U+2019)" },
		{ "\xc2\xa0", "a no-break space (U+00A0)" },
		{ "\xe2\x80\x93", "an en dash (U+2013)" },
		{ "\xe2\x80\x94", "an em dash (U+2014)" },
		{ "\xe2\x80\x8b", "a zero-width space (U+200B)" },
		{ "\xef\xbb\xbf", "a byte order mark (U+FEFF)" },
	};
	size_t k, n;

	for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		n = strlen(known[k].bytes);
		if (i + n <= len && memcmp(s + i, known[k].bytes, n) == 0) {
			*skip = n;
			return known[k].name;
		}
	}
	*skip = 1;
	if (s[i] == '\t')
		return "a tab (terms are separated by spaces only)";
	return s[i] < 0x20 || s[i] == 0x7f ? "a control byte" : "a byte that is not ASCII";
}

/* The space-separated token around offset i. */
static void token_at(const char *s, size_t len, size_t i, size_t *start, size_t *end)
{
	*start = i;
	while (*start > 0 && s[*start - 1] != ' ')
		(*start)--;
	*end = i;
	while (*end < len && s[*end] != ' ')
		(*end)++;
}

/*
 * A term whose domain is written in U-labels ("include:münchen.example"):
 * RFC 7208 §4.3 and RFC 8616 §4 want A-labels in records. Its fix is the
 * term with the domain in A-labels; 1 when the finding was made.
 */
static int ulabel_check(struct lint_report *r, const char *domain, const char *term, size_t len,
			long off)
{
	const char *d = term, *end = term + len, *a, *why, *cut;
	size_t dlen, alen;
	char *fix;

	while (d < end && *d != ':' && *d != '=')
		d++;
	if (d == end)
		return 0;
	d++;
	cut = memchr(d, '/', (size_t)(end - d)); /* a CIDR length follows the name */
	dlen = (size_t)((cut != NULL ? cut : end) - d);
	if (memchr(d, '%', dlen) != NULL ||
	    spfkit__idna_to_alabels(&r->arena, d, dlen, &a, &alen, &why) != 1)
		return 0;
	fix = spfkit__arena_alloc(&r->arena, len - dlen + alen + 7);
	if (fix == NULL)
		return 0;
	memcpy(fix, "write ", 6);
	memcpy(fix + 6, term, (size_t)(d - term));
	memcpy(fix + 6 + (d - term), a, alen);
	memcpy(fix + 6 + (d - term) + alen, d + dlen, (size_t)(end - d - dlen));
	fix[len - dlen + alen + 6] = '\0';
	spfkit__lint_add(r, L_NON_ASCII, domain, term, len, off, fix,
			 "a domain in U-labels: records hold A-labels (RFC 7208 section 4.3, "
			 "RFC 8616 section 4); receivers return permerror");
	return 1;
}

static void byte_checks(struct lint_report *r, const char *domain, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, skip, a, b;
	unsigned found = 0;
	const char *what;

	while (i < len && found < MAX_BYTE_FINDINGS) {
		if (s[i] >= 0x20 && s[i] < 0x7f) {
			i++;
			continue;
		}
		what = byte_name(s, len, i, &skip);
		token_at(text, len, i, &a, &b);
		if (s[i] >= 0x80 && ulabel_check(r, domain, text + a, b - a, (long)a)) {
			found++;
			i = b; /* one finding for the term */
			continue;
		}
		spfkit__lint_add(
			r, L_NON_ASCII, domain, text + a, b - a, (long)a, NULL,
			"%s at byte %zu: receivers return permerror (an editor or a web page "
			"put it there)",
			what, i);
		found++;
		i += skip;
	}
}

/* ---- tokens: typos and the 2003 syntax --------------------------------- */

struct token {
	const char *p;
	size_t len, off;
	const char *name; /* after the qualifier, up to ':' '/' '=' or the end */
	size_t name_len;
	char sep;         /* the byte after the name, or 0 */
};

static void split_token(struct token *t)
{
	size_t i = 0;

	if (t->len > 0 && strchr("+-~?", t->p[0]) != NULL)
		i = 1;
	t->name = t->p + i;
	while (i < t->len && t->p[i] != ':' && t->p[i] != '/' && t->p[i] != '=')
		i++;
	t->name_len = (size_t)(t->p + i - t->name);
	t->sep = i < t->len ? t->p[i] : 0;
}

static int name_is(const struct token *t, const char *name)
{
	return spfkit__memcaseeq(t->name, t->name_len, name, strlen(name));
}

/* Misspellings seen in published records, with what was meant. */
static const struct {
	const char *name;
	char sep; /* 0: any */
	const char *meant;
} typos[] = {
	{ "ipv4", 0, "ip4:" },      { "ip", 0, "ip4: or ip6:" }, { "ipv6", 0, "ip6:" },
	{ "ip4", '=', "ip4:" },     { "ip6", '=', "ip6:" },      { "prt", 0, "ptr" },
	{ "redirect", ':', "redirect=" }, { "exp", ':', "exp=" }, { "include", '=', "include:" },
	{ "inlcude", 0, "include:" }, { "incude", 0, "include:" }, { "includes", 0, "include:" },
	{ "inclde", 0, "include:" }, { "a", '=', "a:" },         { "mx", '=', "mx:" },
	{ "exists", '=', "exists:" }, { "exist", 0, "exists:" },
	{ "all.", 0, "all" },     { "al", 0, "all" },          { "v", '=', NULL },
};

int spfkit__lint_typo_meant(const char *tok, size_t len, struct spfkit__buf *out)
{
	struct token t;
	const char *meant, *rest;
	size_t k, mlen, q;

	memset(&t, 0, sizeof(t));
	t.p = tok;
	t.len = len;
	split_token(&t);
	q = (size_t)(t.name - tok);
	for (k = 0; k < sizeof(typos) / sizeof(typos[0]); k++) {
		if (!name_is(&t, typos[k].name) || (typos[k].sep != 0 && t.sep != typos[k].sep))
			continue;
		meant = typos[k].meant;
		if (meant == NULL || strchr(meant, ' ') != NULL)
			return 0; /* a second version, or more than one meaning */
		mlen = strlen(meant);
		/* meant ends in its separator ("include:"), or is a whole name ("ptr") */
		rest = t.name + t.name_len;
		if (meant[mlen - 1] == ':' || meant[mlen - 1] == '=') {
			if (t.sep == 0)
				return 0;
			rest++;
		}
		spfkit__buf_reset(out);
		spfkit__buf_append(out, tok, q);
		spfkit__buf_append(out, meant, mlen);
		spfkit__buf_append(out, rest, (size_t)(tok + len - rest));
		return out->err == 0;
	}
	return 0;
}

static void typo_check(struct lint_report *r, const char *domain, const struct token *t)
{
	const char *brace;
	size_t k;

	brace = memchr(t->p, '{', t->len);
	if (memchr(t->p, ',', brace != NULL ? (size_t)(brace - t->p) : t->len) != NULL) {
		spfkit__lint_add(r, L_TYPO, domain, t->p, t->len, (long)t->off,
				 "separate terms with spaces, not commas",
				 "a comma inside a term: terms are separated by spaces");
	}
	for (k = 0; k < sizeof(typos) / sizeof(typos[0]); k++) {
		if (!name_is(t, typos[k].name) || (typos[k].sep != 0 && t->sep != typos[k].sep))
			continue;
		if (typos[k].meant == NULL) {
			if (t->len >= 6 && has_prefix_ci(t->p, t->len, "v=spf"))
				spfkit__lint_add(
					r, L_TYPO, domain, t->p, t->len, (long)t->off,
					"keep one record: merge the terms after the second v=spf1",
					"a second version term: two records were pasted into one");
			return;
		}
		if (typos[k].sep == 0 && t->sep == 0 && name_is(t, "ip"))
			continue; /* a bare word: left to the parser's message */
		spfkit__lint_add(r, L_TYPO, domain, t->p, t->len, (long)t->off, NULL,
				 "\"%.*s\" is not a term: write %s",
				 (int)(t->name_len + (t->sep != 0)), t->name, typos[k].meant);
		return;
	}
}

/* default= values of the 2003 drafts and what they meant. */
static const char *default_meaning(const char *v, size_t n)
{
	static const struct {
		const char *value;
		const char *meant;
	} map[] = {
		{ "deny", "-all" },    { "softdeny", "~all" }, { "softfail", "~all" },
		{ "fail", "-all" },    { "allow", "+all" },    { "pass", "+all" },
		{ "unknown", "?all" }, { "neutral", "?all" },  { "-", "-all" },
		{ "~", "~all" },       { "+", "+all" },        { "?", "?all" },
	};
	size_t k;

	for (k = 0; k < sizeof(map) / sizeof(map[0]); k++)
		if (spfkit__memcaseeq(v, n, map[k].value, strlen(map[k].value)))
			return map[k].meant;
	return NULL;
}

struct shape {
	int has_all, has_redirect;
};

static void default_check(struct lint_report *r, const char *domain, const struct token *t,
			  const struct shape *sh)
{
	const char *value = t->name + t->name_len + 1;
	size_t vlen = t->len - (size_t)(value - t->p);
	const char *meant = default_meaning(value, vlen);
	char fix[128];

	if (meant == NULL) {
		spfkit__lint_add_as(r, LINT_WARNING, L_LEGACY_SYNTAX, domain, t->p, t->len,
				    (long)t->off, "remove it and end the record with -all or ~all",
				    "\"%.*s\" is a pre-RFC modifier that receivers ignore",
				    (int)t->len, t->p);
		return;
	}
	snprintf(fix, sizeof(fix), "replace %.*s with %s", (int)(t->len < 64 ? t->len : 64), t->p,
		 meant);
	if (sh->has_all)
		spfkit__lint_add_as(r, LINT_NOTICE, L_LEGACY_SYNTAX, domain, t->p, t->len,
				    (long)t->off, "remove it",
				    "\"%.*s\" is a pre-RFC modifier and has no effect beside all",
				    (int)t->len, t->p);
	else if (sh->has_redirect)
		spfkit__lint_add_as(
			r, LINT_WARNING, L_LEGACY_SYNTAX, domain, t->p, t->len, (long)t->off, fix,
			"\"%.*s\" is a pre-RFC modifier that receivers ignore: the redirect "
			"decides unmatched senders, not it",
			(int)t->len, t->p);
	else if (meant[0] == '+')
		spfkit__lint_add(
			r, L_LEGACY_SYNTAX, domain, t->p, t->len, (long)t->off,
			"end with -all or ~all instead (+all would let anyone send)",
			"\"%.*s\" is a pre-RFC modifier that receivers ignore: this record ends "
			"neutral, where it meant +all",
			(int)t->len, t->p);
	else
		spfkit__lint_add(
			r, L_LEGACY_SYNTAX, domain, t->p, t->len, (long)t->off, fix,
			"\"%.*s\" is a pre-RFC modifier that receivers ignore: this record ends "
			"neutral; use %s",
			(int)t->len, t->p, meant);
}

static void legacy_check(struct lint_report *r, const char *domain, const struct token *t,
			 const struct shape *sh)
{
	static const char *const old[] = { "accredit", "scope", "op", "match_subdomains" };
	size_t k;

	if (t->sep != '=')
		return;
	if (name_is(t, "default")) {
		default_check(r, domain, t, sh);
		return;
	}
	for (k = 0; k < sizeof(old) / sizeof(old[0]); k++)
		if (name_is(t, old[k]))
			spfkit__lint_add_as(
				r, LINT_WARNING, L_LEGACY_SYNTAX, domain, t->p, t->len,
				(long)t->off, "remove it",
				"\"%s=\" is a pre-RFC (2003) modifier: receivers ignore it",
				old[k]);
}

static size_t next_token(const char *s, size_t len, size_t i, struct token *t)
{
	while (i < len && s[i] == ' ')
		i++;
	t->p = s + i;
	t->off = i;
	while (i < len && s[i] != ' ')
		i++;
	t->len = (size_t)(s + i - t->p);
	split_token(t);
	return i;
}

static int is_all(const struct token *t)
{
	return name_is(t, "all") && t->sep == 0;
}

void spfkit__lint_text_checks(struct lint_report *r, const char *domain, const char *text,
			      size_t len)
{
	struct shape sh = { 0, 0 };
	struct token t;
	size_t i;

	byte_checks(r, domain, text, len);
	for (i = next_token(text, len, 0, &t); t.len > 0; i = next_token(text, len, i, &t)) {
		sh.has_all |= is_all(&t);
		sh.has_redirect |= name_is(&t, "redirect") && t.sep == '=';
	}
	i = next_token(text, len, 0, &t); /* the version */
	for (i = next_token(text, len, i, &t); t.len > 0; i = next_token(text, len, i, &t)) {
		typo_check(r, domain, &t);
		legacy_check(r, domain, &t, &sh);
	}
}

/* ---- strings and sizes (§3.3, §3.4) ------------------------------------ */

void spfkit__lint_string_checks(struct lint_report *r, const char *domain, const char *joined,
				const char *const *strs, const size_t *lens, size_t n)
{
	size_t i, off = 0, a, b;

	for (i = 0; i < n; i++) {
		if (lens[i] > 255)
			spfkit__lint_add(
				r, L_STRING_OVER_255, domain, strs[i], lens[i] < 40 ? lens[i] : 40,
				(long)off, NULL,
				"string %zu is %zu bytes; a DNS character-string holds at most 255",
				i + 1, lens[i]);
		if (i > 0 && lens[i - 1] > 0 && lens[i] > 0 && strs[i - 1][lens[i - 1] - 1] != ' ' &&
		    strs[i][0] != ' ') {
			/* the token made by the join, for the message */
			a = lens[i - 1];
			while (a > 0 && strs[i - 1][a - 1] != ' ')
				a--;
			b = 0;
			while (b < lens[i] && strs[i][b] != ' ')
				b++;
			spfkit__lint_add(
				r, L_SPLIT_INSIDE_TOKEN, domain, joined + off - (lens[i - 1] - a),
				lens[i - 1] - a + b, (long)(off - (lens[i - 1] - a)), NULL,
				"strings %zu and %zu are joined with no space: \"%.*s\" + \"%.*s\" "
				"make one term",
				i, i + 1, (int)(lens[i - 1] - a), strs[i - 1] + a, (int)b, strs[i]);
		}
		off += lens[i];
	}
}

size_t spfkit__lint_txt_wire(size_t len)
{
	return len + (len == 0 ? 1 : (len + 254) / 255);
}

size_t spfkit__lint_txt_answer_octets(size_t name_len, size_t rrs, size_t data)
{
	/* header; question: name, type, class; per record: pointer, type, class, TTL, length */
	return 12 + (name_len + 2) + 4 + rrs * 12 + data;
}

void spfkit__lint_size_checks(struct lint_report *r, const char *domain, size_t name_len,
			      const char *text, size_t len, const struct lint_answer *txt)
{
	size_t total, i;

	if (len > RECORD_SOFT_MAX)
		spfkit__lint_add(r, L_RECORD_OVER_450, domain, NULL, 0, -1, NULL,
				 "the record is %zu bytes; RFC 7208 advises at most %u", len,
				 RECORD_SOFT_MAX);
	if (txt == NULL || txt->count == 0) {
		total = spfkit__lint_txt_answer_octets(name_len, 1, spfkit__lint_txt_wire(len));
	} else {
		for (i = 0, total = 0; i < txt->count; i++)
			total += spfkit__lint_txt_wire(txt->rrs[i].len);
		total = spfkit__lint_txt_answer_octets(name_len, txt->count, total);
	}
	(void)text;
	if (total > LINT_UDP_ANSWER_MAX)
		spfkit__lint_add(r, L_ANSWER_OVER_512, domain, NULL, 0, -1, NULL,
				 "the TXT answer is about %zu bytes (over %u): receivers must "
				 "retry over TCP, "
				 "and some fail",
				 total, LINT_UDP_ANSWER_MAX);
}

