/*
 * SPF record parser: RFC 7208 §4.5 (version), §4.6.1 (terms), §5
 * (mechanisms), §6 (modifiers), with §12's collected ABNF as the law.
 *
 * The whole record is checked before anything is evaluated (§4.6: "if
 * there are any syntax errors anywhere in the record, check_host()
 * returns immediately with the result permerror"). One pass over the
 * terms; the only other walk over the bytes counts terms and '%' to size
 * the record's single arena, which usually ends up one allocation.
 */
#include <string.h>

#include <spfkit/record.h>

#include "core.h"
#include "macro.h"

/* The record and everything it points to live in `ar`, this struct too. */
struct record_impl {
	struct spfkit_record rec; /* first: a record pointer is an impl pointer */
	struct spfkit__arena ar;
};

/* Indexed by enum spfkit_mech_kind. */
static const struct {
	const char *name;
	size_t len;
	const char *section;
} mechs[] = {
	{"all", 3, "5.1"}, {"include", 7, "5.2"}, {"a", 1, "5.3"},   {"mx", 2, "5.4"},
	{"ptr", 3, "5.5"}, {"ip4", 3, "5.6"},     {"ip6", 3, "5.6"}, {"exists", 6, "5.7"},
};

static const char *const mod_names[] = {"redirect", "exp", "unknown"};

const char *spfkit_mech_name(enum spfkit_mech_kind kind)
{
	if ((unsigned)kind >= sizeof(mechs) / sizeof(mechs[0]))
		return "invalid";
	return mechs[kind].name;
}

const char *spfkit_mod_name(enum spfkit_mod_kind kind)
{
	if ((unsigned)kind >= sizeof(mod_names) / sizeof(mod_names[0]))
		return "invalid";
	return mod_names[kind];
}

/* §4.5: "v=spf1" (any case) followed by a space or the end of the record. */
int spfkit_record_is_spf(const char *txt, size_t len)
{
	if (txt == NULL || len < 6 || !spfkit__memcaseeq(txt, 6, "v=spf1", 6))
		return 0;
	return len == 6 || txt[6] == ' ';
}

/* ---- one term ------------------------------------------------------- */

struct tparse {
	struct spfkit__cur c; /* over the whole record; c.end is the term's end */
	struct record_impl *r;
	struct spfkit_term *t;
	size_t index;        /* of t in the record */
	const char *section; /* RFC section of the error in c */
};

/*
 * Hot-path reads of the cursor, inline: the parser looks at every byte
 * through these, and the core's spfkit__cur_* are out-of-line calls.
 * Unlike spfkit__cur_peek() they ignore c->err: after the first error
 * the parser only unwinds, and every read is still bounded by c->end.
 */
static inline int peek(const struct spfkit__cur *c)
{
	return c->p < c->end ? *c->p : -1;
}

static inline int accept(struct spfkit__cur *c, unsigned char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return 0;
	c->p++;
	return 1;
}

static inline int at_end(const struct spfkit__cur *c)
{
	return c->p >= c->end;
}

static void fail_at(struct tparse *tp, const unsigned char *at, const char *why, const char *sec)
{
	if (tp->c.err)
		return;
	tp->c.p = at;
	spfkit__cur_fail(&tp->c, SPFKIT_ESYNTAX, why);
	tp->section = sec;
}

static int is_name_char(int b)
{
	/* name = ALPHA *( ALPHA / DIGIT / "-" / "_" / "." ) */
	return spfkit__is_alnum(b) || b == '-' || b == '_' || b == '.';
}

/* "." toplabel [ "." ] at the end of a domain-spec (§7.1, §12). */
static void check_toplabel(struct tparse *tp, const unsigned char *s, const unsigned char *e)
{
	const unsigned char *end = e, *label, *q;
	int alpha = 0, dash = 0;

	if (end > s && end[-1] == '.')
		end--;
	for (label = end; label > s && label[-1] != '.'; label--)
		;
	if (label == s) {
		fail_at(tp, s, "domain-spec must end in \".\" toplabel or a macro", "7.1");
		return;
	}
	if (label == end) {
		fail_at(tp, end, "empty toplabel", "7.1");
		return;
	}
	for (q = label; q < end; q++) {
		if (*q == '-')
			dash = 1;
		else if (spfkit__is_alpha(*q))
			alpha = 1;
		else if (!spfkit__is_digit(*q)) {
			fail_at(tp, q, "invalid character in toplabel", "7.1");
			return;
		}
	}
	/* toplabel = ( *alphanum ALPHA *alphanum ) /
	 *            ( 1*alphanum "-" *( alphanum / "-" ) alphanum ) */
	if (*label == '-')
		fail_at(tp, label, "toplabel starts with '-'", "7.1");
	else if (end[-1] == '-')
		fail_at(tp, end - 1, "toplabel ends with '-'", "7.1");
	else if (!alpha && !dash)
		fail_at(tp, label, "all-numeric toplabel", "7.1");
}

/* domain-spec = macro-string domain-end, over [s, e). */
static void parse_domain_spec(struct tparse *tp, const unsigned char *s, const unsigned char *e,
			      const char *sec)
{
	size_t off = 0;
	const char *why = NULL;
	int rc;

	if (s == e) {
		fail_at(tp, s, "empty domain-spec", sec);
		return;
	}
	rc = spfkit__macro_parse((const char *)s, (size_t)(e - s), SPFKIT__MACRO_DOMAIN, &tp->r->ar,
				 &tp->t->domain, &off, &why);
	if (rc == SPFKIT_ESYNTAX) {
		fail_at(tp, s + off, why, "7.1");
		return;
	}
	if (rc != 0) {
		spfkit__cur_fail(&tp->c, rc, "out of memory");
		return;
	}
	tp->t->has_domain = 1;
	if (!spfkit__macro_ends_in_expand(&tp->t->domain))
		check_toplabel(tp, s, e);
}

/* "/" ( "0" / %x31-39 0*1DIGIT ) for ip4, 0*2DIGIT for ip6; c.p is past "/". */
static uint8_t parse_cidr(struct tparse *tp, unsigned max, const char *too_big, const char *sec)
{
	const unsigned char *start = tp->c.p, *p = start, *end = tp->c.end;
	unsigned value = 0;

	while (p < end && spfkit__is_digit(*p)) {
		value = value * 10 + (unsigned)(*p - '0');
		if (value > 1000)
			value = 1000; /* saturate; only "above max" matters */
		p++;
	}
	tp->c.p = p;
	if (p == start)
		fail_at(tp, start, "cidr-length without digits", sec);
	else if (*start == '0' && p - start > 1)
		fail_at(tp, start, "cidr-length with a leading zero", sec);
	else if (value > max)
		fail_at(tp, start, too_big, sec);
	return (uint8_t)(value > max ? max : value);
}

/* dual-cidr-length = [ ip4-cidr-length ] [ "/" ip6-cidr-length ], to the term's end. */
static void parse_dual_cidr(struct tparse *tp, const char *sec)
{
	if (accept(&tp->c, '/')) {
		if (accept(&tp->c, '/')) {
			tp->t->cidr6 = parse_cidr(tp, 128, "ip6-cidr-length above 128", sec);
		} else {
			tp->t->cidr4 = parse_cidr(tp, 32, "ip4-cidr-length above 32", sec);
			if (accept(&tp->c, '/')) {
				if (!accept(&tp->c, '/'))
					fail_at(tp, tp->c.p, "ip6-cidr-length needs \"//\"", sec);
				tp->t->cidr6 =
					parse_cidr(tp, 128, "ip6-cidr-length above 128", sec);
			}
		}
	}
	if (!tp->c.err && !at_end(&tp->c))
		fail_at(tp, tp->c.p, "unexpected text after cidr-length", sec);
}

/*
 * Where a trailing dual-cidr-length starts in [s, e), or e. A domain-spec
 * may itself hold "/" ("a:foo:bar/baz.example.com" is legal), so the
 * cidr is taken from the end: "/N", "//N" or "/N//M" with digits only.
 */
static const unsigned char *cidr_suffix(const unsigned char *s, const unsigned char *e)
{
	const unsigned char *i = e, *slash, *j;

	while (i > s && spfkit__is_digit(i[-1]))
		i--;
	if (i == e || i == s || i[-1] != '/')
		return e;
	slash = i - 1;
	if (slash == s || slash[-1] != '/')
		return slash; /* "/N" */
	j = slash - 1;    /* "//N"; maybe "/N" before it */
	while (j > s && spfkit__is_digit(j[-1]))
		j--;
	if (j < slash - 1 && j > s && j[-1] == '/')
		return j - 1;
	return slash - 1;
}

/* ip4-network = qnum "." qnum "." qnum "." qnum, strict (§12). Reads
 * through a local pointer: most terms of real records are ip4. */
static void parse_ip4(struct tparse *tp, unsigned char out[4], const char *sec)
{
	const unsigned char *p = tp->c.p, *end = tp->c.end, *start;
	const char *why;
	unsigned v;
	int i;

	if (tp->c.err)
		return;
	for (i = 0; i < 4; i++) {
		if (i > 0) {
			if (p >= end || *p != '.') {
				fail_at(tp, p, "ip4-network needs four dotted numbers", sec);
				return;
			}
			p++;
		}
		start = p;
		v = 0;
		while (p < end && p - start < 4 && spfkit__is_digit(*p)) {
			v = v * 10 + (unsigned)(*p - '0');
			p++;
		}
		why = NULL;
		if (p == start)
			why = "ip4-network needs four dotted numbers";
		else if (*start == '0' && p - start > 1)
			why = "ip4-network number with a leading zero";
		else if (v > 255)
			why = "ip4-network number above 255";
		if (why != NULL) {
			fail_at(tp, start, why, sec);
			return;
		}
		out[i] = (unsigned char)v;
	}
	tp->c.p = p;
}

static unsigned hex_value(const unsigned char *p, const unsigned char *e)
{
	unsigned v = 0;

	for (; p < e; p++)
		v = v * 16 + (unsigned)(spfkit__is_digit(*p) ? *p - '0' : spfkit__lower(*p) - 'a' + 10);
	return v;
}

/* One h16 group or the embedded dotted quad; returns groups added (0 on error). */
static int ip6_group(struct tparse *tp, unsigned g[8], int n, const char *sec)
{
	const unsigned char *p = tp->c.p, *q = p;
	unsigned char v4[4];

	while (q < tp->c.end && spfkit__is_hex(*q))
		q++;
	if (q < tp->c.end && *q == '.') { /* ls32 as an IPv4 address (RFC 4291 §2.2) */
		if (n > 6) {
			fail_at(tp, p, "too many groups in ip6-network", sec);
			return 0;
		}
		parse_ip4(tp, v4, sec);
		g[n] = (unsigned)v4[0] << 8 | v4[1];
		g[n + 1] = (unsigned)v4[2] << 8 | v4[3];
		if (!tp->c.err && !at_end(&tp->c))
			fail_at(tp, tp->c.p, "text after the dotted quad of an ip6-network", sec);
		return tp->c.err ? 0 : 2;
	}
	if (q == p)
		fail_at(tp, p, "invalid character in ip6-network", sec);
	else if (q - p > 4)
		fail_at(tp, p + 4, "ip6-network group longer than 4 hex digits", sec);
	else if (n >= 8)
		fail_at(tp, p, "too many groups in ip6-network", sec);
	if (tp->c.err)
		return 0;
	g[n] = hex_value(p, q);
	tp->c.p = q;
	return 1;
}

/* ip6-network as in RFC 4291 §2.2, over [c.p, c.end). */
static void parse_ip6(struct tparse *tp, unsigned char out[16], const char *sec)
{
	const unsigned char *s = tp->c.p;
	unsigned g[8] = {0};
	int n = 0, dc = -1, added, i, k;

	if (tp->c.end - s >= 2 && s[0] == ':' && s[1] == ':') {
		dc = 0;
		tp->c.p += 2;
	}
	while (!tp->c.err && !at_end(&tp->c)) {
		added = ip6_group(tp, g, n, sec);
		n += added;
		if (added != 1 || at_end(&tp->c))
			break;
		if (!accept(&tp->c, ':')) {
			fail_at(tp, tp->c.p, "invalid character in ip6-network", sec);
			break;
		}
		if (accept(&tp->c, ':')) {
			if (dc >= 0)
				fail_at(tp, tp->c.p - 2, "second \"::\" in ip6-network", sec);
			dc = n;
		} else if (at_end(&tp->c)) {
			fail_at(tp, tp->c.p - 1, "ip6-network ends in a single ':'", sec);
		}
	}
	if (tp->c.err)
		return;
	if (dc < 0 && n != 8)
		fail_at(tp, s, "ip6-network needs 8 groups or \"::\"", sec);
	else if (dc >= 0 && n > 7)
		fail_at(tp, s, "\"::\" in an ip6-network of 8 groups", sec);
	if (tp->c.err)
		return;
	/* move the groups after "::" to the end; zeros fill the gap */
	for (i = 7, k = n - 1; dc >= 0 && k >= dc; i--, k--) {
		g[i] = g[k];
		g[k] = 0;
	}
	for (i = 0; i < 8; i++) {
		out[2 * i] = (unsigned char)(g[i] >> 8);
		out[2 * i + 1] = (unsigned char)(g[i] & 0xff);
	}
}

static void mech_ip4(struct tparse *tp, const char *sec)
{
	if (!accept(&tp->c, ':')) {
		fail_at(tp, tp->c.p, "ip4 needs \":\" and an address", sec);
		return;
	}
	parse_ip4(tp, tp->t->ip, sec);
	if (accept(&tp->c, '/')) {
		if (peek(&tp->c) == '/')
			fail_at(tp, tp->c.p, "ip4 takes no ip6-cidr-length", sec);
		tp->t->cidr4 = parse_cidr(tp, 32, "ip4-cidr-length above 32", sec);
	}
	if (!tp->c.err && !at_end(&tp->c))
		fail_at(tp, tp->c.p, "unexpected text after ip4-network", sec);
}

static void mech_ip6(struct tparse *tp, const char *sec)
{
	const unsigned char *term_end = tp->c.end, *slash;

	if (!accept(&tp->c, ':')) {
		fail_at(tp, tp->c.p, "ip6 needs \":\" and an address", sec);
		return;
	}
	slash = memchr(tp->c.p, '/', (size_t)(term_end - tp->c.p));
	tp->c.end = slash != NULL ? slash : term_end;
	parse_ip6(tp, tp->t->ip, sec);
	tp->c.end = term_end;
	if (tp->c.err)
		return;
	if (accept(&tp->c, '/')) {
		if (peek(&tp->c) == '/')
			fail_at(tp, tp->c.p, "ip6 takes a single \"/\" cidr-length", sec);
		tp->t->cidr6 = parse_cidr(tp, 128, "ip6-cidr-length above 128", sec);
	}
	if (!tp->c.err && !at_end(&tp->c))
		fail_at(tp, tp->c.p, "unexpected text after ip6-cidr-length", sec);
}

/* a / mx: [ ":" domain-spec ] [ dual-cidr-length ] */
static void mech_a_mx(struct tparse *tp, const char *sec)
{
	const unsigned char *s, *cidr;
	int b = peek(&tp->c);

	if (b == ':') {
		s = ++tp->c.p;
		cidr = cidr_suffix(s, tp->c.end);
		parse_domain_spec(tp, s, cidr, sec);
		if (tp->c.err)
			return;
		tp->c.p = cidr;
	} else if (b != '/' && b != -1) {
		fail_at(tp, tp->c.p, "unexpected text after mechanism name", sec);
		return;
	}
	parse_dual_cidr(tp, sec);
}

/* include / exists: ":" domain-spec; ptr: [ ":" domain-spec ] */
static void mech_domain(struct tparse *tp, int required, const char *sec)
{
	if (accept(&tp->c, ':')) {
		parse_domain_spec(tp, tp->c.p, tp->c.end, sec);
		return;
	}
	if (at_end(&tp->c) && !required)
		return;
	fail_at(tp, tp->c.p,
		at_end(&tp->c) ? "mechanism needs \":\" and a domain-spec"
					: "unexpected text after mechanism name",
		sec);
}

/* A mechanism name of up to 7 bytes folded to lower case in one word:
 * name is a run of ALPHA / DIGIT (parse_term), where OR 0x20 lowers
 * letters and leaves digits alone. */
#define MECH_KEY2(a, b) ((uint64_t)(a) << 8 | (uint64_t)(b))
#define MECH_KEY3(a, b, c) (MECH_KEY2(a, b) << 8 | (uint64_t)(c))

static int find_mech(const unsigned char *name, size_t len)
{
	uint64_t key = 0;
	size_t i;

	if (len == 0 || len > 7)
		return -1;
	for (i = 0; i < len; i++)
		key = key << 8 | (uint64_t)(name[i] | 0x20);
	switch (len) {
	case 1:
		return key == 'a' ? SPFKIT_MECH_A : -1;
	case 2:
		return key == MECH_KEY2('m', 'x') ? SPFKIT_MECH_MX : -1;
	case 3:
		if (key == MECH_KEY3('i', 'p', '4'))
			return SPFKIT_MECH_IP4;
		if (key == MECH_KEY3('i', 'p', '6'))
			return SPFKIT_MECH_IP6;
		if (key == MECH_KEY3('a', 'l', 'l'))
			return SPFKIT_MECH_ALL;
		return key == MECH_KEY3('p', 't', 'r') ? SPFKIT_MECH_PTR : -1;
	case 6:
		return key == (MECH_KEY3('e', 'x', 'i') << 24 | MECH_KEY3('s', 't', 's'))
			       ? SPFKIT_MECH_EXISTS
			       : -1;
	case 7:
		return key == (MECH_KEY3('i', 'n', 'c') << 32 | MECH_KEY2('l', 'u') << 16 |
			       MECH_KEY2('d', 'e'))
			       ? SPFKIT_MECH_INCLUDE
			       : -1;
	default:
		return -1;
	}
}

static void parse_mechanism(struct tparse *tp, const unsigned char *name, size_t len)
{
	struct spfkit_term *t = tp->t;
	int kind = find_mech(name, len);
	const char *sec;

	if (kind < 0) {
		fail_at(tp, name, "unknown mechanism", "4.6.1");
		return;
	}
	sec = mechs[kind].section;
	t->mech = (uint8_t)kind;
	switch (kind) {
	case SPFKIT_MECH_ALL:
		if (!at_end(&tp->c))
			fail_at(tp, tp->c.p, "all takes no argument", sec);
		break;
	case SPFKIT_MECH_INCLUDE:
	case SPFKIT_MECH_EXISTS:
		mech_domain(tp, 1, sec);
		break;
	case SPFKIT_MECH_PTR:
		mech_domain(tp, 0, sec);
		break;
	case SPFKIT_MECH_A:
	case SPFKIT_MECH_MX:
		mech_a_mx(tp, sec);
		break;
	case SPFKIT_MECH_IP4:
		mech_ip4(tp, sec);
		break;
	default:
		mech_ip6(tp, sec);
		break;
	}
	if (!tp->c.err && kind != SPFKIT_MECH_ALL && kind != SPFKIT_MECH_IP4 &&
	    kind != SPFKIT_MECH_IP6)
		tp->r->rec.dns_terms++; /* §4.6.4: include a mx ptr exists */
}

/* redirect / exp: at most once each (§6), value a domain-spec. */
static void parse_known_modifier(struct tparse *tp, int kind, const unsigned char *name)
{
	struct spfkit_record *rec = &tp->r->rec;
	int *seen = kind == SPFKIT_MOD_REDIRECT ? &rec->redirect : &rec->exp;

	if (*seen >= 0) {
		fail_at(tp, name,
			kind == SPFKIT_MOD_REDIRECT ? "second redirect modifier"
						    : "second exp modifier",
			"6");
		return;
	}
	parse_domain_spec(tp, tp->c.p, tp->c.end, kind == SPFKIT_MOD_REDIRECT ? "6.1" : "6.2");
	if (tp->c.err)
		return;
	*seen = (int)tp->index;
	if (kind == SPFKIT_MOD_REDIRECT)
		rec->dns_terms++; /* §4.6.4 */
}

/* modifier = redirect / explanation / unknown-modifier; c.p is past "=". */
static void parse_modifier(struct tparse *tp, const unsigned char *name, size_t len)
{
	struct spfkit_term *t = tp->t;
	size_t off = 0;
	const char *why = NULL;
	int rc;

	t->is_modifier = 1;
	t->qualifier = 0;
	if (spfkit__memcaseeq(name, len, "redirect", 8)) {
		t->mod = SPFKIT_MOD_REDIRECT;
		parse_known_modifier(tp, SPFKIT_MOD_REDIRECT, name);
		return;
	}
	if (spfkit__memcaseeq(name, len, "exp", 3)) {
		t->mod = SPFKIT_MOD_EXP;
		parse_known_modifier(tp, SPFKIT_MOD_EXP, name);
		return;
	}
	t->mod = SPFKIT_MOD_UNKNOWN;
	if (len == 0 || !spfkit__is_alpha(*name)) {
		fail_at(tp, name, len == 0 ? "empty modifier name" : "modifier name must start with a letter",
			"4.6.1");
		return;
	}
	/* ignored, but its value must still be a macro-string (§6, §12) */
	rc = spfkit__macro_parse((const char *)tp->c.p, spfkit__cur_left(&tp->c),
				 SPFKIT__MACRO_EXPLAIN, &tp->r->ar, &t->domain, &off, &why);
	if (rc == SPFKIT_ESYNTAX)
		fail_at(tp, tp->c.p + off, why, "7.1");
	else if (rc != 0)
		spfkit__cur_fail(&tp->c, rc, "out of memory");
	else
		t->has_domain = 1;
}

/* directive = [ qualifier ] mechanism, or modifier, over [c.p, c.end). */
static void parse_term(struct tparse *tp)
{
	const unsigned char *start = tp->c.p, *name, *alnum_end;
	int q = peek(&tp->c);
	struct spfkit_term *t = tp->t;

	t->qualifier = '+';
	if (q == '+' || q == '-' || q == '~' || q == '?') {
		t->qualifier = (uint8_t)q;
		tp->c.p++;
	}
	name = tp->c.p;
	alnum_end = name;
	while (alnum_end < tp->c.end && spfkit__is_alnum(*alnum_end))
		alnum_end++;
	tp->c.p = alnum_end;
	while (tp->c.p < tp->c.end && is_name_char(*tp->c.p))
		tp->c.p++;
	t->name = (const char *)name;
	/* §4.6.1: a modifier has "=" right after its name */
	if (accept(&tp->c, '=')) {
		t->name_len = (size_t)(tp->c.p - 1 - name);
		if (name != start)
			fail_at(tp, start, "qualifier before a modifier", "4.6.1");
		else
			parse_modifier(tp, name, t->name_len);
		return;
	}
	tp->c.p = alnum_end;
	t->name_len = (size_t)(alnum_end - name);
	parse_mechanism(tp, name, t->name_len);
}

/* ---- the record ----------------------------------------------------- */

static const char *bad_byte_why(unsigned char b, const char **sec)
{
	if (b >= 0x80) {
		*sec = "3.1"; /* the record is US-ASCII */
		return "non-ASCII byte";
	}
	*sec = "4.6.1"; /* terms are separated by SP only */
	return "control character between terms";
}

/*
 * A term that failed may hold a byte no term may hold; if so that byte is
 * the error, whatever the grammar tripped on (a control byte where a SP
 * belongs, a UTF-8 BOM in a domain). Every production of §12 rejects such
 * bytes, so a term that parsed has none and only failures need the scan.
 */
static void prefer_byte_error(struct tparse *tp, const unsigned char *s, const unsigned char *e)
{
	const char *why, *sec = NULL;

	for (; s < e; s++) {
		if (spfkit__is_vchar(*s))
			continue;
		why = bad_byte_why(*s, &sec);
		tp->c.err = 0;
		fail_at(tp, s, why, sec);
		return;
	}
}

/* Split on SP and parse each term into rec->terms (already sized). */
static void parse_terms(struct tparse *tp)
{
	struct spfkit_record *rec = &tp->r->rec;
	struct spfkit_term *terms = (struct spfkit_term *)rec->terms;
	const unsigned char *end = tp->c.end, *start, *term_end;

	tp->c.p += 6; /* "v=spf1", checked by the caller */
	for (;;) {
		while (accept(&tp->c, ' '))
			;
		if (at_end(&tp->c))
			return;
		start = tp->c.p;
		term_end = memchr(start, ' ', (size_t)(end - start));
		if (term_end == NULL)
			term_end = end;
		tp->index = rec->count++;
		tp->t = &terms[tp->index];
		*tp->t = (struct spfkit_term){ .cidr4 = 32, .cidr6 = 128 };
		tp->t->offset = (size_t)(start - tp->c.base);
		tp->t->len = (size_t)(term_end - start);
		tp->c.end = term_end;
		parse_term(tp);
		tp->c.end = end;
		if (tp->c.err == SPFKIT_ESYNTAX)
			prefer_byte_error(tp, start, term_end);
		if (tp->c.err)
			return;
		tp->c.p = term_end;
	}
}

/* Can the term [p, end) hold a macro-string (a domain-spec after ':', a
 * modifier's value after '=')? Then its parse allocates pieces. */
static int may_hold_macro(const char *p, const char *end)
{
	const char *q = memchr(p, ':', (size_t)(end - p));

	if (q == NULL)
		q = memchr(p, '=', (size_t)(end - p));
	return q != NULL && q + 1 < end; /* an empty value has no pieces */
}

/* Terms (runs of non-SP after the version), those of them that may hold
 * a macro-string, and '%' bytes, to size the arena; memchr() keeps this
 * far cheaper than a loop over every byte. */
static void count_terms(const char *txt, size_t len, size_t *terms, size_t *named, size_t *pct)
{
	const char *p = txt + 6, *end = txt + len, *q;

	*terms = 0;
	*named = 0;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		(*terms)++;
		q = memchr(p, ' ', (size_t)(end - p));
		if (q == NULL)
			q = end;
		if (may_hold_macro(p, q))
			(*named)++;
		p = q;
	}
	*pct = 0;
	for (p = txt + 6; p < end; p = q + 1) {
		q = memchr(p, '%', (size_t)(end - p));
		if (q == NULL)
			break;
		(*pct)++;
	}
}

static void set_error(struct spfkit_parse_error *err, size_t off, const char *rule,
		      const char *section)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	err->offset = off;
	err->rule = rule;
	err->section = section;
}

/* Offset of the first byte that keeps txt from starting "v=spf1" + SP/end. */
static size_t version_error_offset(const char *txt, size_t len)
{
	static const char v[] = "v=spf1";
	size_t i;

	for (i = 0; i < 6 && i < len; i++)
		if (spfkit__lower((unsigned char)txt[i]) != v[i])
			return i;
	return i;
}

static struct record_impl *record_new(const struct spfkit_allocator *alloc, const char *txt,
				      size_t len, size_t nterms, size_t named, size_t npct)
{
	struct spfkit__arena ar;
	struct record_impl *r;
	char *text;
	/*
	 * Sized to what the parse takes, as the whole block is charged to
	 * the record cache and the evaluation (a 64 KiB record holds 32,768
	 * terms). A macro-string has at most one piece more than twice its
	 * '%' bytes, in one array per term that holds one, rounded up to 16
	 * bytes; the 64 cover the rounding of the record, text and terms.
	 * Short, the arena would only take a second block.
	 */
	size_t size = sizeof(*r) + len + 1 + nterms * sizeof(struct spfkit_term) +
		      named * (sizeof(struct spfkit_macro_piece) + 16) +
		      2 * npct * sizeof(struct spfkit_macro_piece) + 64;

	spfkit__arena_init(&ar, alloc, size, 0);
	r = spfkit__arena_alloc(&ar, sizeof(*r));
	text = r != NULL ? spfkit__arena_strndup(&ar, txt, len) : NULL;
	if (text == NULL) {
		spfkit__arena_free(&ar);
		return NULL;
	}
	memset(&r->rec, 0, sizeof(r->rec));
	r->ar = ar; /* from here on the arena lives inside its own first block */
	r->rec.text = text;
	r->rec.len = len;
	r->rec.redirect = -1;
	r->rec.exp = -1;
	if (nterms > 0) {
		r->rec.terms = spfkit__arena_alloc(&r->ar, nterms * sizeof(struct spfkit_term));
		if (r->rec.terms == NULL) {
			spfkit_record_free(&r->rec);
			return NULL;
		}
		/* parse_terms() sets each term as it comes to it */
	}
	return r;
}

int spfkit_record_parse(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			struct spfkit_record **out, struct spfkit_parse_error *err)
{
	struct tparse tp;
	struct record_impl *r;
	size_t nterms, named, npct;

	set_error(err, 0, NULL, NULL);
	if (out == NULL || (txt == NULL && len > 0))
		return SPFKIT_EINVAL;
	*out = NULL;
	if (len > SPFKIT_RECORD_MAX_LEN) {
		set_error(err, SPFKIT_RECORD_MAX_LEN, "record longer than 65535 bytes", "3.4");
		return SPFKIT_E2BIG;
	}
	if (!spfkit_record_is_spf(txt, len)) {
		set_error(err, version_error_offset(txt, len),
			  "record does not start with \"v=spf1\" and a space", "4.5");
		return SPFKIT_ESYNTAX;
	}
	count_terms(txt, len, &nterms, &named, &npct);
	if (nterms > SPFKIT_RECORD_MAX_TERMS) { /* unreachable within the length cap */
		set_error(err, 0, "more terms than SPFKIT_RECORD_MAX_TERMS", "3.4");
		return SPFKIT_E2BIG;
	}
	r = record_new(alloc, txt, len, nterms, named, npct);
	if (r == NULL)
		return SPFKIT_ENOMEM;
	memset(&tp, 0, sizeof(tp));
	tp.r = r;
	spfkit__cur_init(&tp.c, r->rec.text, len);
	parse_terms(&tp);
	if (tp.c.err) {
		set_error(err, tp.c.err_off, tp.c.err_why, tp.section);
		if (err != NULL && tp.t != NULL) {
			err->term_offset = tp.t->offset;
			err->term_len = tp.t->len;
		}
		spfkit_record_free(&r->rec);
		return tp.c.err;
	}
	*out = &r->rec;
	return 0;
}

void spfkit_record_free(struct spfkit_record *rec)
{
	struct spfkit__arena ar;

	if (rec == NULL)
		return;
	/* copy the arena out first: the record lives inside it */
	ar = ((struct record_impl *)rec)->ar;
	spfkit__arena_free(&ar);
}
