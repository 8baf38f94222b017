/*
 * An SPF record's terms: RFC 7208 §4.6.1 (terms), §5 (mechanisms), §6
 * (modifiers), with §12's collected ABNF as the law; record_parse.c
 * starts the walk over a record's terms (spfkit__term_parse_all) and
 * owns the record's block. ip networks and cidr-lengths are term_ip.h's
 * and term_ip.c's, domain-specs term_domain.c's. One pass over the
 * terms, which also writes the compact terms the record cache asks for
 * (record_room.h); ip4 and ip6 terms, most of them, find their own end.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include <spfkit/record.h>

#include "core.h"
#include "domain.h"
#include "macro.h"
#include "reason.h"
#include "record_room.h"
#include "term_ip.h"
#include "term_parse.h"

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

const unsigned char *spfkit__term_parse_fail(struct spfkit__term_parse *tp, const unsigned char *at,
					     enum spfkit_reason why, const char *sec)
{
	if (tp->c.err)
		return NULL;
	tp->c.p = at;
	/* the code's text: spfkit_parse_error_reason() finds it by address */
	spfkit__cur_fail(&tp->c, SPFKIT_ESYNTAX, spfkit_reason_text(why));
	tp->section = sec;
	return NULL;
}

/* A failure other than syntax, rc (SPFKIT_ENOMEM), while parsing the
 * value that starts at `at`. */
void spfkit__term_parse_nomem(struct spfkit__term_parse *tp, const unsigned char *at, int rc)
{
	if (tp->c.err)
		return;
	tp->c.p = at;
	spfkit__cur_fail(&tp->c, rc, "out of memory");
}

#define CL_A (CL_ALNUM | CL_NAME | CL_TOPLABEL)
#define CL_LETTERS(c) [c] = CL_A | CL_ALPHA, [c - 32] = CL_A | CL_ALPHA
const unsigned char spfkit__term_parse_class[256] = {
	['0'] = CL_A, ['1'] = CL_A, ['2'] = CL_A, ['3'] = CL_A, ['4'] = CL_A,
	['5'] = CL_A, ['6'] = CL_A, ['7'] = CL_A, ['8'] = CL_A, ['9'] = CL_A,
	CL_LETTERS('a'), CL_LETTERS('b'), CL_LETTERS('c'), CL_LETTERS('d'), CL_LETTERS('e'),
	CL_LETTERS('f'), CL_LETTERS('g'), CL_LETTERS('h'), CL_LETTERS('i'), CL_LETTERS('j'),
	CL_LETTERS('k'), CL_LETTERS('l'), CL_LETTERS('m'), CL_LETTERS('n'), CL_LETTERS('o'),
	CL_LETTERS('p'), CL_LETTERS('q'), CL_LETTERS('r'), CL_LETTERS('s'), CL_LETTERS('t'),
	CL_LETTERS('u'), CL_LETTERS('v'), CL_LETTERS('w'), CL_LETTERS('x'), CL_LETTERS('y'),
	CL_LETTERS('z'),
	['_'] = CL_NAME, ['.'] = CL_NAME, ['-'] = CL_NAME | CL_QUALIFIER | CL_TOPLABEL,
	['+'] = CL_QUALIFIER, ['?'] = CL_QUALIFIER, ['~'] = CL_QUALIFIER,
};
#undef CL_LETTERS
#undef CL_A

/* a / mx: [ ":" domain-spec ] [ dual-cidr-length ] */
static void mech_a_mx(struct spfkit__term_parse *tp, const unsigned char *p, const unsigned char *e,
		      const char *sec)
{
	const unsigned char *s;

	if (*p == ':') {
		s = p + 1;
		p = spfkit__term_ip_cidr_suffix(s, e);
		if (!spfkit__term_domain_parse(tp, s, p, sec))
			return;
	} else if (p != e && *p != '/') {
		spfkit__term_parse_fail(tp, p, SPFKIT_REASON_MECHANISM_TEXT, sec);
		return;
	}
	spfkit__term_ip_dual_cidr(tp, p, e, sec);
}

/* include / exists: ":" domain-spec; ptr: [ ":" domain-spec ] */
static void mech_domain(struct spfkit__term_parse *tp, const unsigned char *p,
			const unsigned char *e, int required, const char *sec)
{
	if (*p == ':') {
		spfkit__term_domain_parse(tp, p + 1, e, sec);
		return;
	}
	if (p == e && !required)
		return;
	spfkit__term_parse_fail(tp, p,
		p == e ? SPFKIT_REASON_MISSING_DOMAIN
		       : SPFKIT_REASON_MECHANISM_TEXT,
		sec);
}

/* A mechanism name of up to 7 bytes folded to lower case in one word:
 * name is a run of ALPHA / DIGIT (parse_term), where OR 0x20 lowers
 * letters and leaves digits alone. */
#define MECH_KEY2(a, b) ((uint64_t)(a) << 8 | (uint64_t)(b))
#define MECH_KEY3(a, b, c) (MECH_KEY2(a, b) << 8 | (uint64_t)(c))

static uint64_t fold_name(const unsigned char *name, size_t len)
{
	uint64_t key = 0;
	size_t i;

	for (i = 0; i < len; i++)
		key = key << 8 | (uint64_t)(name[i] | 0x20);
	return key;
}

static int find_mech(const unsigned char *name, size_t len)
{
	uint64_t key;

	switch (len) {
	case 1:
		return (name[0] | 0x20) == 'a' ? SPFKIT_MECH_A : -1;
	case 2:
		return fold_name(name, 2) == MECH_KEY2('m', 'x') ? SPFKIT_MECH_MX : -1;
	case 3: /* most terms: ip4 ip6 all ptr */
		key = MECH_KEY3(name[0] | 0x20, name[1] | 0x20, name[2] | 0x20);
		if (key == MECH_KEY3('i', 'p', '4'))
			return SPFKIT_MECH_IP4;
		if (key == MECH_KEY3('i', 'p', '6'))
			return SPFKIT_MECH_IP6;
		if (key == MECH_KEY3('a', 'l', 'l'))
			return SPFKIT_MECH_ALL;
		return key == MECH_KEY3('p', 't', 'r') ? SPFKIT_MECH_PTR : -1;
	case 6:
		key = MECH_KEY3('e', 'x', 'i') << 24 | MECH_KEY3('s', 't', 's');
		return fold_name(name, 6) == key ? SPFKIT_MECH_EXISTS : -1;
	case 7:
		key = MECH_KEY3('i', 'n', 'c') << 32 | MECH_KEY2('l', 'u') << 16 |
		      MECH_KEY2('d', 'e');
		return fold_name(name, 7) == key ? SPFKIT_MECH_INCLUDE : -1;
	default:
		return -1;
	}
}

/* mechanism of that kind, its arguments [p, e). */
static void parse_mechanism(struct spfkit__term_parse *tp, int kind, const unsigned char *p,
			    const unsigned char *e)
{
	const char *sec = mechs[kind].section;

	tp->t->mech = (uint8_t)kind;
	switch (kind) {
	case SPFKIT_MECH_IP4: /* parse_term() takes every "ip4:" and "ip6:" itself */
		spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP4_MISSING, sec);
		return;
	case SPFKIT_MECH_IP6:
		spfkit__term_parse_fail(tp, p, SPFKIT_REASON_IP6_MISSING, sec);
		return;
	case SPFKIT_MECH_ALL:
		if (p != e)
			spfkit__term_parse_fail(tp, p, SPFKIT_REASON_ALL_ARGUMENT, sec);
		return;
	case SPFKIT_MECH_INCLUDE:
	case SPFKIT_MECH_EXISTS:
		mech_domain(tp, p, e, 1, sec);
		break;
	case SPFKIT_MECH_PTR:
		mech_domain(tp, p, e, 0, sec);
		break;
	default:
		mech_a_mx(tp, p, e, sec);
		break;
	}
	if (!tp->c.err)
		tp->rec->dns_terms++; /* §4.6.4: include a mx ptr exists */
}

/* redirect / exp: at most once each (§6), value a domain-spec [p, e). */
static void parse_known_modifier(struct spfkit__term_parse *tp, int kind, const unsigned char *name,
				 const unsigned char *p, const unsigned char *e)
{
	struct spfkit_record *rec = tp->rec;
	int *seen = kind == SPFKIT_MOD_REDIRECT ? &rec->redirect : &rec->exp;

	if (*seen >= 0) {
		spfkit__term_parse_fail(tp, name,
			kind == SPFKIT_MOD_REDIRECT ? SPFKIT_REASON_DUPLICATE_REDIRECT
						    : SPFKIT_REASON_DUPLICATE_EXP,
			"6");
		return;
	}
	if (!spfkit__term_domain_parse(tp, p, e, kind == SPFKIT_MOD_REDIRECT ? "6.1" : "6.2"))
		return;
	*seen = (int)(tp->t - rec->terms);
	if (kind == SPFKIT_MOD_REDIRECT)
		rec->dns_terms++; /* §4.6.4 */
}

/* modifier = redirect / explanation / unknown-modifier; value [p, e). */
static void parse_modifier(struct spfkit__term_parse *tp, const unsigned char *name, size_t len,
			   const unsigned char *p, const unsigned char *e)
{
	struct spfkit_term *t = tp->t;
	size_t off = 0;
	const char *why = NULL;
	int rc;

	t->is_modifier = 1;
	t->qualifier = 0;
	if (spfkit__memcaseeq(name, len, "redirect", 8)) {
		t->mod = SPFKIT_MOD_REDIRECT;
		parse_known_modifier(tp, SPFKIT_MOD_REDIRECT, name, p, e);
		return;
	}
	if (spfkit__memcaseeq(name, len, "exp", 3)) {
		t->mod = SPFKIT_MOD_EXP;
		parse_known_modifier(tp, SPFKIT_MOD_EXP, name, p, e);
		return;
	}
	t->mod = SPFKIT_MOD_UNKNOWN;
	if (len == 0 || !spfkit__is_alpha(*name)) {
		spfkit__term_parse_fail(tp, name,
					len == 0 ? SPFKIT_REASON_EMPTY_MODIFIER_NAME
						 : SPFKIT_REASON_MODIFIER_NAME,
					"4.6.1");
		return;
	}
	/* ignored, but its value must still be a macro-string (§6, §12) */
	rc = spfkit__macro_parse((const char *)p, (size_t)(e - p), SPFKIT__MACRO_EXPLAIN,
				 tp->ar, &t->domain, &off, &why);
	if (rc == SPFKIT_ESYNTAX)
		spfkit__term_parse_fail(tp, p + off, spfkit__reason_of_text(why), "7.1");
	else if (rc != 0)
		spfkit__term_parse_nomem(tp, p, rc);
	else
		t->has_domain = 1;
}

/* directive = [ qualifier ] mechanism, or modifier, over [start, e); the
 * term's qualifier is already '+'. */
static void parse_term(struct spfkit__term_parse *tp, const unsigned char *start,
		       const unsigned char *e)
{
	struct spfkit_term *t = tp->t;
	const unsigned char *p = start, *name, *name_end;
	int kind;

	if (spfkit__term_parse_class[*p] & CL_QUALIFIER)
		t->qualifier = *p++;
	name = p;
	t->name = (const char *)name;
	kind = spfkit__term_parse_ip_kind(p, e);
	if (kind >= 0) { /* straight on past the ':', their section spelt out */
		t->name_len = 3;
		t->mech = (uint8_t)kind;
		if (kind == SPFKIT_MECH_IP4)
			spfkit__term_ip_mech4(tp, p + 4, e, "5.6");
		else
			spfkit__term_ip_mech6(tp, p + 4, e, "5.6");
		return;
	}
	while (spfkit__term_parse_class[*p] & CL_ALNUM)
		p++;
	name_end = p;
	while (spfkit__term_parse_class[*p] & CL_NAME)
		p++;
	/* §4.6.1: a modifier has "=" right after its name */
	if (*p == '=') {
		t->name_len = (size_t)(p - name);
		if (name != start)
			spfkit__term_parse_fail(tp, start, SPFKIT_REASON_QUALIFIED_MODIFIER,
						"4.6.1");
		else
			parse_modifier(tp, name, t->name_len, p + 1, e);
		return;
	}
	kind = find_mech(name, (size_t)(name_end - name));
	if (kind < 0) {
		spfkit__term_parse_fail(tp, name, SPFKIT_REASON_UNKNOWN_MECHANISM, "4.6.1");
		return;
	}
	t->name_len = (size_t)(name_end - name);
	parse_mechanism(tp, kind, name_end, e);
}

static enum spfkit_reason bad_byte(unsigned char b, const char **sec)
{
	if (b >= 0x80) {
		*sec = "3.1"; /* the record is US-ASCII */
		return SPFKIT_REASON_NON_ASCII;
	}
	*sec = "4.6.1"; /* terms are separated by SP only */
	return SPFKIT_REASON_CONTROL_CHAR;
}

/*
 * A term that failed may hold a byte no term may hold; if so that byte is
 * the error, whatever the grammar tripped on (a control byte where a SP
 * belongs, a UTF-8 BOM in a domain). Every production of §12 rejects such
 * bytes, so a term that parsed has none and only failures need the scan.
 */
static void prefer_byte_error(struct spfkit__term_parse *tp, const unsigned char *s,
			      const unsigned char *e)
{
	enum spfkit_reason why;
	const char *sec = NULL;

	for (; s < e; s++) {
		if (spfkit__is_vchar(*s))
			continue;
		why = bad_byte(*s, &sec);
		tp->c.err = 0;
		spfkit__term_parse_fail(tp, s, why, sec);
		return;
	}
}

/*
 * A term before parsing: '+', the cidr-lengths that mean "none given",
 * all else zero. This runs for every term: zeroing the whole struct at
 * once compiles (GCC, x86-64) to a "rep stos", a step per word, where
 * zeroing up to `name` and storing the rest takes a few vector stores.
 * name and name_len are left to parse_term(), which sets both on every
 * path that does not fail (and a failed term is never seen).
 */
_Static_assert(offsetof(struct spfkit_term, len) + sizeof(size_t) == sizeof(struct spfkit_term),
	       "start_term() zeroes the fields before name, the parse sets each one after it");

static void start_term(struct spfkit_term *t, size_t offset, size_t len)
{
	memset(t, 0, offsetof(struct spfkit_term, name)); /* byte fields, ip, domain, padding */
	t->qualifier = '+';
	t->cidr4 = 32;
	t->cidr6 = 128;
	t->offset = offset;
	t->len = len;
}

/* Term [s, e) into t; 0 after an error. */
static int parse_one(struct spfkit__term_parse *tp, struct spfkit_term *t, const unsigned char *s,
		     const unsigned char *e)
{
	tp->t = t;
	start_term(t, (size_t)(s - tp->c.base), (size_t)(e - s));
	parse_term(tp, s, e);
	if (tp->c.err == SPFKIT_ESYNTAX)
		prefer_byte_error(tp, s, e);
	return !tp->c.err;
}

/* The compact form of the ip4 or ip6 term t, which parsed. */
static void set_hot_ip(struct spfkit__hot_term *h, const struct spfkit_term *t)
{
	h->mech = t->mech;
	h->is_modifier = 0;
	h->literal = HOT_NOT_LITERAL;
	h->unused = 0;
	h->ip4 = 0;
	h->mask4 = 0;
	if (t->mech != SPFKIT_MECH_IP4)
		return;
	memcpy(&h->ip4, t->ip, 4);
	/* cidr4 0 shifts the ones out of the low 32 bits */
	h->mask4 = htonl((uint32_t)(UINT64_C(0xffffffff) << (32 - t->cidr4)));
}

/* The compact form of the term t, which parsed (record_room.h). */
static void set_hot(struct spfkit__hot_term *h, const struct spfkit_term *t)
{
	h->mech = t->mech;
	h->is_modifier = t->is_modifier;
	h->literal = HOT_NOT_LITERAL;
	h->unused = 0;
	h->ip4 = 0;
	h->mask4 = 0;
	if (t->has_domain && t->domain.letters == 0 && t->domain.count == 1 &&
	    t->domain.pieces[0].kind == SPFKIT_PIECE_LITERAL &&
	    t->domain.pieces[0].len <= SPFKIT_DOMAIN_MAX_LEN) /* longer: cut (§7.3) */
		h->literal = spfkit__domain_valid(t->domain.pieces[0].text, t->domain.pieces[0].len)
				     ? HOT_LITERAL_VALID
				     : HOT_LITERAL_INVALID;
	if (!t->is_modifier && t->mech == SPFKIT_MECH_IP4)
		set_hot_ip(h, t);
}

/*
 * The term at s, "ip4:" or "ip6:" (kind) with no qualifier, read to the
 * first byte that its network and cidr-length do not take, so no search
 * for its end: that byte's address if it is SP or the record's end, else
 * NULL, as for an ip6-network other than its common form (spfkit__term_ip_plain6()).
 */
static const unsigned char *ip_term(struct spfkit__term_parse *tp, int kind, const unsigned char *s,
				    const unsigned char *end)
{
	struct spfkit_term *t = tp->t;
	const unsigned char *p;

	t->name = (const char *)s;
	t->name_len = 3;
	t->mech = (uint8_t)kind;
	if (kind == SPFKIT_MECH_IP4)
		p = spfkit__term_ip_ip4(tp, s + 4, t->ip, "5.6");
	else
		p = spfkit__term_ip_plain6(s + 4, end, t->ip);
	if (p != NULL && *p == '/')
		p = kind == SPFKIT_MECH_IP4 ? spfkit__term_ip_cidr(tp, p + 1, 32, &t->cidr4,
								    SPFKIT_REASON_IP4_CIDR, "5.6")
					    : spfkit__term_ip_cidr(tp, p + 1, 128, &t->cidr6,
								    SPFKIT_REASON_IP6_CIDR, "5.6");
	return p != NULL && (p == end || *p == ' ') ? p : NULL; /* NULL: failed, or not here */
}

/* The term at s (not SP) into t: its end (SP or the record's end); NULL
 * after an error. An ip4 or ip6 term that ip_term() does not take is
 * read again the general way, which words its error. */
static const unsigned char *parse_next(struct spfkit__term_parse *tp, struct spfkit_term *t,
				       struct spfkit__hot_term *h, const unsigned char *s)
{
	const unsigned char *e, *end = tp->c.end;
	int kind = spfkit__term_parse_ip_kind(s, end);

	if (kind >= 0) {
		tp->t = t;
		start_term(t, (size_t)(s - tp->c.base), 0);
		e = ip_term(tp, kind, s, end);
		if (e != NULL) {
			t->len = (size_t)(e - s);
			if (h != NULL)
				set_hot_ip(h, t);
			return e;
		}
		tp->c.err = 0;
	}
	e = (const unsigned char *)spfkit__term_parse_next_space((const char *)s,
								  (const char *)end);
	if (!parse_one(tp, t, s, e))
		return NULL;
	if (h != NULL)
		set_hot(h, t);
	return e;
}

/* Parse each term into rec->terms, which has room for max of them. */
void spfkit__term_parse_all(struct spfkit__term_parse *tp, size_t max)
{
	struct spfkit_record *rec = tp->rec;
	struct spfkit_term *terms = (struct spfkit_term *)rec->terms;
	const unsigned char *p = tp->c.base + 6, *end = tp->c.end;
	size_t n = 0;

	for (;;) {
		while (*p == ' ') /* the text ends in a NUL */
			p++;
		if (p == end)
			break;
		if (n == max) { /* the caller counted otherwise: cannot happen */
			spfkit__term_parse_nomem(tp, p, SPFKIT_ENOMEM);
			return;
		}
		p = parse_next(tp, &terms[n], tp->hot != NULL ? &tp->hot[n] : NULL, p);
		if (p == NULL)
			return;
		n++;
	}
	rec->count = n;
}
