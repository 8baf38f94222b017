/*
 * The texts of two responses with the same result, ours against Debian
 * libspf2's: reason, error code and return code, header comment, smtp
 * comment, explanation, and the result and comment that open
 * Received-SPF (the rest of that header is ours by design: quoted
 * values, receiver=, identity=; docs/libspf2-compat.md). Shared by
 * test_golden_corpus.c and tests/compat/test_golden_rfc7208.c.
 */
#ifndef GOLDEN_TEXTS_H
#define GOLDEN_TEXTS_H

#include <ctype.h>

#include "golden_api.h"

struct golden_tally {
	int failures;
	unsigned exp_texts; /* exp= texts libspf2 leaves unexpanded (compared to nothing) */
};

/* Lowercase the hex digits of every "%XX" (URL escapes): libspf2 writes
 * %3a where RFC 3986 and we write %3A. */
static void fold_escapes(char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (s[0] == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
			s[1] = (char)tolower((unsigned char)s[1]);
			s[2] = (char)tolower((unsigned char)s[2]);
		}
	}
}

static void texts_field(struct golden_tally *t, const char *where, const char *what, char *got,
			char *want)
{
	fold_escapes(got);
	fold_escapes(want);
	if (same(got, want))
		return;
	printf("FAIL %s %s: got \"%s\", want \"%s\" (Debian libspf2)\n", where, what,
	       got ? got : "(null)", want ? want : "(null)");
	t->failures++;
}

static void texts_compare(struct golden_tally *t, const struct api *ours, const char *where,
			  struct outcome *o, struct outcome *r)
{
	size_t ho, hr;

	if (o->reason != r->reason || o->err != r->err || o->rc != r->rc) {
		printf("FAIL %s: %s reason %d err %d rc %d, want reason %d err %d rc %d\n", where,
		       ours->strresult(o->result), o->reason, o->err, o->rc, r->reason, r->err, r->rc);
		t->failures++;
	}
	texts_field(t, where, "header_comment", o->header_comment, r->header_comment);
	if (r->explanation != NULL && strchr(r->explanation, ' ') == NULL &&
	    strchr(r->explanation, '%') != NULL && !same(o->explanation, r->explanation)) {
		/* an exp= text: libspf2 turns its spaces into '%' and
		 * leaves macros; ours is RFC 7208 §7's expansion */
		t->exp_texts++;
	} else {
		texts_field(t, where, "smtp_comment", o->smtp_comment, r->smtp_comment);
		texts_field(t, where, "explanation", o->explanation, r->explanation);
	}
	ho = o->received_spf ? strcspn(o->received_spf, ")") : 0;
	hr = r->received_spf ? strcspn(r->received_spf, ")") : 0;
	if (ho != hr || (ho > 0 && strncmp(o->received_spf, r->received_spf, ho) != 0)) {
		printf("FAIL %s received_spf: got \"%s\", want \"%s\"\n", where,
		       o->received_spf ? o->received_spf : "(null)",
		       r->received_spf ? r->received_spf : "(null)");
		t->failures++;
	}
}

#endif
