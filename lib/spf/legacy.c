/*
 * Pre-RFC (2003-era) modifiers in a record: RFC 7208 §6 makes receivers
 * ignore unknown modifiers, so `v=spf1 mx default=deny` ends neutral
 * (§4.7) for every sender its mx does not match, though its owner meant
 * -all. The trace names each one and what it meant; evaluation is not
 * changed (the RFC 7208 suite's default-modifier-obsolete cases).
 */
#include <stdio.h>
#include <string.h>

#include "eval_int.h"

struct legacy {
	const char *name; /* as written before "=", lowercase */
	const char *what;
};

static const struct legacy modifiers[] = {
	{"default", "the pre-RFC default result"},
	{"accredit", "a pre-RFC accreditation service"},
	{"scope", "the pre-RFC identity scope"},
	{"op", "the pre-RFC options"},
	{"match_subdomains", "the pre-RFC subdomain match"},
};

/* default=VALUE: the all term that says it today, or NULL. */
static const char *default_meant(const char *v, size_t len)
{
	static const struct {
		const char *value, *all;
	} map[] = {
		{"deny", "-all"}, {"-", "-all"}, {"softdeny", "~all"}, {"softfail", "~all"},
		{"~", "~all"}, {"allow", "+all"}, {"pass", "+all"}, {"+", "+all"},
		{"unknown", "?all"}, {"neutral", "?all"}, {"?", "?all"},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (spfkit__memcaseeq(v, len, map[i].value, strlen(map[i].value)))
			return map[i].all;
	return NULL;
}

static const struct legacy *legacy_of(const struct spfkit_term *t)
{
	size_t i;

	if (!t->is_modifier || t->mod != SPFKIT_MOD_UNKNOWN)
		return NULL;
	for (i = 0; i < sizeof(modifiers) / sizeof(modifiers[0]); i++)
		if (spfkit__memcaseeq(t->name, t->name_len, modifiers[i].name,
				      strlen(modifiers[i].name)))
			return &modifiers[i];
	return NULL;
}

static int has_all(const struct spfkit_record *rec)
{
	size_t i;

	for (i = 0; i < rec->count; i++)
		if (!rec->terms[i].is_modifier && rec->terms[i].mech == SPFKIT_MECH_ALL)
			return 1;
	return 0;
}

static void note_one(struct spfkit_eval *ev, const struct frame *f, const struct spfkit_term *t,
		     const struct legacy *l, int ends_neutral)
{
	const char *term = f->rec->text + t->offset;
	const char *meant = NULL;
	char text[512];
	int n;

	if (l == &modifiers[0])
		meant = default_meant(t->domain.src, t->domain.src_len);
	n = snprintf(text, sizeof(text),
		     "%.*s ignored: %s, not part of RFC 7208 (unknown modifiers are ignored, "
		     "section 6)%s%s%s",
		     (int)(t->len > 200 ? 200 : t->len), term, l->what, meant ? "; it meant " : "",
		     meant ? meant : "",
		     ends_neutral ? "; with no all and no redirect this record ends neutral "
				    "(section 4.7)"
				  : "");
	if (n > 0)
		spfkit__eval_trace_note(ev, f, text,
			(size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

void spfkit__legacy_trace(struct spfkit_eval *ev, const struct frame *f)
{
	const struct spfkit_record *rec = f->rec;
	int ends_neutral;
	size_t i;

	if (ev->trace == NULL || rec == NULL)
		return;
	ends_neutral = rec->redirect < 0 && !has_all(rec);
	for (i = 0; i < rec->count; i++) {
		const struct legacy *l = legacy_of(&rec->terms[i]);

		if (l != NULL)
			note_one(ev, f, &rec->terms[i], l, ends_neutral && l == &modifiers[0]);
	}
}
