/*
 * `spfkit lint` checks on one parsed record (include/spfkit/record.h),
 * without DNS: how it ends (§4.7, §5.1, §6.1), what its ranges cover
 * (§5.6), its modifiers (§6) and macros (§7).
 */
#include <stdio.h>
#include <string.h>

#include "ipaddr.h"
#include "publish.h"

#define MAX_NETBLOCK_TERMS 2000u /* pairwise comparison beyond this is skipped */

void spfkit__lint_term_text(const struct spfkit_record *rec, const struct spfkit_term *t,
			    const char **p, size_t *len)
{
	*p = rec->text + t->offset;
	*len = t->len;
}

size_t spfkit__lint_first_all(const struct spfkit_record *rec)
{
	size_t i;

	for (i = 0; i < rec->count; i++)
		if (!rec->terms[i].is_modifier && rec->terms[i].mech == SPFKIT_MECH_ALL)
			return i;
	return rec->count;
}

#define TERM_ARGS(rec, t) (rec)->text + (t)->offset, (t)->len, (long)(t)->offset

static int mod_named(const struct spfkit_term *t, const char *name)
{
	return spfkit__memcaseeq(t->name, t->name_len, name, strlen(name));
}

static int has_legacy_default(const struct spfkit_record *rec)
{
	size_t i;

	for (i = 0; i < rec->count; i++)
		if (rec->terms[i].is_modifier && rec->terms[i].mod == SPFKIT_MOD_UNKNOWN &&
		    mod_named(&rec->terms[i], "default"))
			return 1;
	return 0;
}

/* ---- how the record ends ----------------------------------------------- */

static void ending_checks(struct lint_report *r, const char *domain,
			  const struct spfkit_record *rec, int included)
{
	size_t first = spfkit__lint_first_all(rec), i;
	const struct spfkit_term *t;

	if (first == rec->count) {
		/* an included record without all just does not match; default= has its own finding */
		if (rec->redirect < 0 && !included && !has_legacy_default(rec))
			spfkit__lint_add(
				r, L_NO_TERMINATOR, domain, NULL, 0, -1, NULL,
				"the record has no all and no redirect=: senders it does not list "
				"get neutral, as if there were no record");
		return;
	}
	t = &rec->terms[first];
	if (t->qualifier == '+')
		spfkit__lint_add(r, L_PLUS_ALL, domain, TERM_ARGS(rec, t), NULL,
				 "%s lets every host on the Internet send as this domain",
				 t->len == 3 ? "all (no qualifier is +)" : "+all");
	else if (t->qualifier == '?' && !included)
		spfkit__lint_add(
			r, L_NEUTRAL_ALL, domain, TERM_ARGS(rec, t), NULL,
			"?all: senders not listed get neutral, which receivers treat as no policy");
	for (i = first + 1; i < rec->count; i++) {
		if (rec->terms[i].is_modifier)
			continue;
		spfkit__lint_add(r, L_TERMS_AFTER_ALL, domain, TERM_ARGS(rec, &rec->terms[i]), NULL,
				 "this mechanism comes after all and is never evaluated");
		break;
	}
	if (rec->redirect >= 0)
		spfkit__lint_add(r, L_REDIRECT_WITH_ALL, domain,
				 TERM_ARGS(rec, &rec->terms[rec->redirect]), NULL,
				 "redirect= is ignored because the record has an all mechanism");
}

/* ---- ranges (§5.6) ------------------------------------------------------ */

static int is_range(const struct spfkit_term *t)
{
	return !t->is_modifier && (t->mech == SPFKIT_MECH_IP4 || t->mech == SPFKIT_MECH_IP6);
}

static unsigned prefix_of(const struct spfkit_term *t)
{
	return t->mech == SPFKIT_MECH_IP4 ? t->cidr4 : t->cidr6;
}

/* Is b's network inside a's (a's prefix no longer than b's)? The
 * evaluator's prefix match (lib/spf/ipaddr.c, RFC 7208 §5.6). */
static int range_within(const struct spfkit_term *a, const struct spfkit_term *b)
{
	struct spfkit_ip net_b;
	int family = a->mech == SPFKIT_MECH_IP4 ? 4 : 6;

	if (a->mech != b->mech || prefix_of(a) > prefix_of(b))
		return 0;
	net_b.family = family;
	memcpy(net_b.addr, b->ip, sizeof(net_b.addr));
	return spfkit__ipaddr_match(&net_b, family, a->ip, prefix_of(a));
}

/* Private, loopback, link-local and other ranges no public SMTP client has. */
static const char *private_kind(const struct spfkit_term *t)
{
	static const struct {
		unsigned char net[16];
		unsigned plen;
		int v6;
		const char *what;
	} ranges[] = {
		{ { 10 }, 8, 0, "private (RFC 1918)" },
		{ { 172, 16 }, 12, 0, "private (RFC 1918)" },
		{ { 192, 168 }, 16, 0, "private (RFC 1918)" },
		{ { 127 }, 8, 0, "loopback" },
		{ { 169, 254 }, 16, 0, "link-local" },
		{ { 100, 64 }, 10, 0, "shared address space (RFC 6598)" },
		{ { 0 }, 8, 0, "\"this network\" (RFC 1122)" },
		{ { 224 }, 4, 0, "multicast" },
		{ { 240 }, 4, 0, "reserved (class E)" },
		{ { 0xfc }, 7, 1, "unique local (RFC 4193)" },
		{ { 0xfe, 0x80 }, 10, 1, "link-local" },
		{ { 0xff }, 8, 1, "multicast" },
		{ { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 }, 128, 1, "loopback" },
	};
	struct spfkit_term net;
	size_t k;

	if (prefix_of(t) == 0)
		return NULL; /* plus-all's */
	for (k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		if ((t->mech == SPFKIT_MECH_IP6) != ranges[k].v6)
			continue;
		memset(&net, 0, sizeof(net));
		net.mech = t->mech;
		memcpy(net.ip, ranges[k].net, 16);
		if (t->mech == SPFKIT_MECH_IP4)
			net.cidr4 = (uint8_t)ranges[k].plen;
		else
			net.cidr6 = (uint8_t)ranges[k].plen;
		if (range_within(&net, t))
			return ranges[k].what;
	}
	return NULL;
}

/* /0 and very wide prefixes, on ip4/ip6 and on a/mx dual CIDR lengths. */
static void width_check(struct lint_report *r, const char *domain, const struct spfkit_record *rec,
			const struct spfkit_term *t)
{
	int addr = t->mech == SPFKIT_MECH_A || t->mech == SPFKIT_MECH_MX;
	unsigned v4 = t->cidr4, v6 = t->cidr6;

	if (t->is_modifier || (!addr && !is_range(t)) || t->qualifier == '-')
		return;
	if (t->mech == SPFKIT_MECH_IP6)
		v4 = 32;
	if (t->mech == SPFKIT_MECH_IP4)
		v6 = 128;
	if ((v4 == 0 || v6 == 0) && t->qualifier == '+')
		spfkit__lint_add(
			r, L_PLUS_ALL, domain, TERM_ARGS(rec, t), NULL,
			addr ? "a /0 prefix: this term matches every address as soon as the name "
			       "has one, the same as +all"
			     : "a /0 range covers every address: the same as +all");
	else if ((v4 > 0 && v4 < 8) || (v6 > 0 && v6 < 16))
		spfkit__lint_add(r, L_WIDE_NETBLOCK, domain, TERM_ARGS(rec, t), NULL,
				 "a /%u prefix covers %s", v4 < 8 ? v4 : v6,
				 v4 < 8 ? "a large share of all IPv4 addresses"
					: "a huge IPv6 space");
}

static void netblock_pair(struct lint_report *r, const char *domain,
			  const struct spfkit_record *rec, const struct spfkit_term *a,
			  const struct spfkit_term *b)
{
	const char *at;
	size_t alen;

	spfkit__lint_term_text(rec, a, &at, &alen);
	if (range_within(a, b) && range_within(b, a))
		spfkit__lint_add(r, L_DUPLICATE_NETBLOCK, domain, TERM_ARGS(rec, b), NULL,
				 "the same range as \"%.*s\" at offset %zu", (int)alen, at,
				 a->offset);
	else if (range_within(a, b) && a->qualifier != b->qualifier)
		spfkit__lint_add(
			r, L_UNREACHABLE_TERM, domain, TERM_ARGS(rec, b), NULL,
			"inside \"%.*s\" (offset %zu), which comes first and decides with another "
			"qualifier: this term never decides",
			(int)alen, at, a->offset);
	else if ((range_within(a, b) || range_within(b, a)) && a->qualifier == b->qualifier)
		spfkit__lint_add(r, L_OVERLAPPING_NETBLOCK, domain, TERM_ARGS(rec, b), NULL,
				 "overlaps \"%.*s\" (offset %zu): one of the two is redundant",
				 (int)alen, at, a->offset);
	else
		return;
}

static void range_checks(struct lint_report *r, const char *domain, const struct spfkit_record *rec)
{
	size_t i, j, before = r->n, nranges = 0;
	const char *kind;

	for (i = 0; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];

		width_check(r, domain, rec, t);
		if (!is_range(t))
			continue;
		nranges++;
		kind = private_kind(t);
		if (kind != NULL && t->qualifier != '-')
			spfkit__lint_add(r, L_PRIVATE_RANGE, domain, TERM_ARGS(rec, t), NULL,
					 "a %s range: no SMTP client on the Internet comes from it",
					 kind);
	}
	if (nranges > MAX_NETBLOCK_TERMS)
		return;
	for (j = 1; j < rec->count; j++) {
		if (!is_range(&rec->terms[j]))
			continue;
		before = r->n;
		for (i = 0; i < j && r->n == before; i++)
			if (is_range(&rec->terms[i]))
				netblock_pair(r, domain, rec, &rec->terms[i], &rec->terms[j]);
	}
}

/* ---- modifiers (§6) ----------------------------------------------------- */

static int legacy_name(const struct spfkit_term *t)
{
	static const char *const names[] = { "default", "accredit", "scope", "op",
					     "match_subdomains", "v" };
	size_t k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (mod_named(t, names[k]))
			return 1; /* lint_text.c reports them */
	return 0;
}

/* A typo finding (lint_text.c) on this term already says what it is: one finding a defect. */
static int typo_at(const struct lint_report *r, const char *domain, const struct spfkit_term *t)
{
	size_t i;

	for (i = r->n; i > 0; i--) {
		const struct lint_finding *f = &r->items[i - 1];

		if (f->id == L_TYPO && f->offset == (long)t->offset &&
		    (f->domain == NULL ? domain == NULL || domain[0] == '\0'
				       : domain != NULL && strcmp(f->domain, domain) == 0))
			return 1;
	}
	return 0;
}

/*
 * §6: "The modifiers defined in this document ("redirect" and "exp")
 * SHOULD appear at the end of the record, after all mechanisms". A
 * redirect= written first still waits for every mechanism (§6.1); with
 * an all it is ignored, which redirect-with-all says.
 */
static void modifier_order(struct lint_report *r, const char *domain,
			   const struct spfkit_record *rec)
{
	size_t i, j, all = spfkit__lint_first_all(rec);

	for (i = 0; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];

		if (!t->is_modifier || (t->mod != SPFKIT_MOD_REDIRECT && t->mod != SPFKIT_MOD_EXP))
			continue;
		if (t->mod == SPFKIT_MOD_REDIRECT && all < rec->count)
			continue;
		for (j = i + 1; j < rec->count && rec->terms[j].is_modifier; j++)
			;
		if (j == rec->count)
			continue;
		spfkit__lint_add(r, L_MODIFIER_BEFORE_MECHANISM, domain, TERM_ARGS(rec, t), NULL,
				 t->mod == SPFKIT_MOD_REDIRECT
					 ? "redirect= comes before \"%.*s\" (offset %zu), yet it "
					   "applies only after every mechanism, when none matched "
					   "(section 6.1); RFC 7208 section 6: it SHOULD come after "
					   "all mechanisms"
					 : "exp= comes before \"%.*s\" (offset %zu); RFC 7208 "
					   "section 6: it SHOULD come after all mechanisms",
				 (int)(rec->terms[j].len < 60 ? rec->terms[j].len : 60),
				 rec->text + rec->terms[j].offset, rec->terms[j].offset);
	}
}

static void modifier_checks(struct lint_report *r, const char *domain,
			    const struct spfkit_record *rec, int included)
{
	size_t i, j;

	modifier_order(r, domain, rec);

	for (i = 0; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];

		if (!t->is_modifier || t->mod != SPFKIT_MOD_UNKNOWN)
			continue;
		for (j = 0; j < i; j++)
			if (rec->terms[j].is_modifier &&
			    spfkit__memcaseeq(rec->terms[j].name, rec->terms[j].name_len, t->name,
						  t->name_len)) {
				spfkit__lint_add(r, L_DUPLICATE_MODIFIER, domain, TERM_ARGS(rec, t),
						 NULL, "\"%.*s=\" was given before, at offset %zu",
						 (int)t->name_len, t->name, rec->terms[j].offset);
				break;
			}
		if (!legacy_name(t) && !typo_at(r, domain, t))
			spfkit__lint_add(
				r, L_UNKNOWN_MODIFIER, domain, TERM_ARGS(rec, t), NULL,
				"\"%.*s=\" is not an RFC 7208 modifier: receivers ignore it",
				(int)t->name_len, t->name);
	}
	if (included && rec->exp >= 0)
		spfkit__lint_add(
			r, L_EXP_IN_INCLUDE, domain, TERM_ARGS(rec, &rec->terms[rec->exp]), NULL,
			"exp= of an included record is never used: only the checked domain's is");
}

/* ---- macros (§7) -------------------------------------------------------- */

/* A sample expansion with documentation values, never this machine's own. */
static const char *sample_value(char letter, const char *domain)
{
	switch (letter) {
	case 's': return "alice@example.com";
	case 'l': return "alice";
	case 'o': return "example.com";
	case 'd': return domain[0] != '\0' ? domain : "example.com";
	case 'i': return "192.0.2.10";
	case 'p': return "mail.example.com";
	case 'v': return "in-addr";
	case 'h': return "mail.example.com";
	default: return "";
	}
}

static void sample_expand(const struct spfkit_macro_string *m, const char *domain, char *out,
			  size_t size)
{
	size_t i, n = 0;
	int w;

	out[0] = '\0';
	for (i = 0; i < m->count && n < size; i++) {
		const struct spfkit_macro_piece *p = &m->pieces[i];

		if (p->kind == SPFKIT_PIECE_LITERAL)
			w = snprintf(out + n, size - n, "%.*s", (int)p->len, p->text);
		else if (p->letter == 'i' && p->reverse)
			w = snprintf(out + n, size - n, "10.2.0.192");
		else
			w = snprintf(out + n, size - n, "%s", sample_value(p->letter, domain));
		if (w < 0)
			return;
		n += (size_t)w;
	}
}

static void macro_checks(struct lint_report *r, const char *domain, const struct spfkit_record *rec)
{
	const uint32_t leak = 1u << ('l' - 'a') | 1u << ('s' - 'a') | 1u << ('i' - 'a');
	char sample[300];
	size_t i;

	for (i = 0; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];

		if (!t->has_domain || (t->is_modifier && t->mod != SPFKIT_MOD_REDIRECT))
			continue;
		if (t->domain.letters & 1u << ('p' - 'a'))
			spfkit__lint_add(
				r, L_BAD_MACRO, domain, TERM_ARGS(rec, t), NULL,
				"%%{p} costs PTR and address lookups per message and RFC 7208 "
				"section 7.2 says it SHOULD NOT be used");
		if (t->domain.letters & leak) {
			sample_expand(&t->domain, domain, sample, sizeof(sample));
			spfkit__lint_add(r, L_MACRO_LEAK, domain, TERM_ARGS(rec, t), NULL,
					 "every check sends %s to this domain's DNS, e.g. %s",
					 (t->domain.letters & 1u << ('i' - 'a'))
						 ? "the client's address"
						 : "the sender's local part",
					 sample);
		}
	}
}

void spfkit__lint_term_checks(struct lint_report *r, const char *domain,
			      const struct spfkit_record *rec, int included)
{
	size_t i;

	ending_checks(r, domain, rec, included);
	range_checks(r, domain, rec);
	modifier_checks(r, domain, rec, included);
	macro_checks(r, domain, rec);
	for (i = 0; i < rec->count; i++)
		if (!rec->terms[i].is_modifier && rec->terms[i].mech == SPFKIT_MECH_PTR)
			spfkit__lint_add(
				r, L_PTR_USED, domain, TERM_ARGS(rec, &rec->terms[i]), NULL,
				"ptr is slow and unreliable; RFC 7208 says it SHOULD NOT be used");
}
