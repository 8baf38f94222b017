/*
 * U-labels to A-labels (RFC 8616 §4, RFC 5891 §5) through Debian's
 * libidn2: IDNA2008 with the UTS #46 mapping that MTAs and browsers use,
 * so "MÜNCHEN.example" and "münchen。example" name the domain that
 * "münchen.example" names.
 */
#include <stdarg.h>
#include <string.h>

#include <idn2.h>

#include "eval_int.h"
#include "idna.h"

#define LETTER(c) (1u << ((c) - 'a'))

/*
 * The longest UTF-8 name handed to libidn2. 253 octets of A-labels come
 * from at most some 4 bytes per character; UTS #46 also drops ignored
 * characters (soft hyphens...), so a longer input could still map to a
 * short name, but nobody sends one, and the bound keeps hostile input
 * from costing more than a few microseconds.
 */
#define IDNA_INPUT_MAX 1024u

/* idn2_strerror() texts are long and name libidn2's internals: ours name the rule. */
static const char *idna_why(int rc)
{
	switch (rc) {
	case IDN2_ENCODING_ERROR:
		return "not valid UTF-8";
	case IDN2_TOO_BIG_LABEL:
	case IDN2_PUNYCODE_BIG_OUTPUT:
		return "a label is longer than 63 octets in A-labels";
	case IDN2_TOO_BIG_DOMAIN:
		return "longer than 253 octets in A-labels";
	case IDN2_DISALLOWED:
	case IDN2_CONTEXTJ:
	case IDN2_CONTEXTO:
	case IDN2_CONTEXTJ_NO_RULE:
	case IDN2_CONTEXTO_NO_RULE:
	case IDN2_UNASSIGNED:
		return "a character IDNA2008 disallows (RFC 5892)";
	case IDN2_BIDI:
		return "breaks the bidi rule of RFC 5893";
	case IDN2_LEADING_COMBINING:
		return "a label starts with a combining mark";
	case IDN2_NOT_NFC:
		return "not in Unicode normalization form C";
	case IDN2_2HYPHEN:
	case IDN2_HYPHEN_STARTEND:
		return "a label with misplaced hyphens (RFC 5891 section 4.2.3.1)";
	case IDN2_PUNYCODE_BAD_INPUT:
	case IDN2_INVALID_ALABEL:
	case IDN2_ALABEL_ROUNDTRIP_FAILED:
		return "an A-label (xn--) that is not valid Punycode";
	default:
		return "not a valid internationalized domain name (RFC 5891)";
	}
}

/* Out of line: the ASCII path of spfkit__idna_to_alabels() sets up no frame for it. */
__attribute__((noinline)) static int to_alabels(struct spfkit__arena *ar, const char *name,
						size_t len, const char **out, size_t *out_len,
						const char **why)
{
	char in[IDNA_INPUT_MAX + 1];
	char *a = NULL;
	int rc;

	if (len > IDNA_INPUT_MAX) {
		*why = "longer than 253 octets in A-labels";
		return SPFKIT_ESYNTAX;
	}
	/* libidn2 reads a C string: a NUL would end the name there, the rest unseen */
	if (memchr(name, '\0', len) != NULL) {
		*why = "not a name: it holds a NUL byte";
		return SPFKIT_ESYNTAX;
	}
	memcpy(in, name, len); /* libidn2 wants a C string; the caller's has a length */
	in[len] = '\0';
	rc = idn2_to_ascii_8z(in, &a, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
	if (rc == IDN2_MALLOC)
		return SPFKIT_ENOMEM;
	if (rc != IDN2_OK) {
		*why = idna_why(rc);
		return SPFKIT_ESYNTAX;
	}
	*out_len = strlen(a);
	*out = spfkit__arena_strndup(ar, a, *out_len);
	idn2_free(a);
	return *out == NULL ? SPFKIT_ENOMEM : 1;
}

int spfkit__idna_to_alabels(struct spfkit__arena *ar, const char *name, size_t len,
			    const char **out, size_t *out_len, const char **why)
{
	if (spfkit__ascii_only(name, len)) {
		*out = name;
		*out_len = len;
		return 0;
	}
	return to_alabels(ar, name, len, out, out_len, why);
}

/* <sender> again, its domain now `a`: local-part "@" a, or a alone. */
static int sender_with_domain(struct spfkit_eval *ev, const char *a, size_t alen)
{
	size_t keep = (size_t)(ev->sender_domain - ev->sender); /* local-part and '@', or 0 */
	int local_inside = ev->local == ev->sender;
	char *s = spfkit__arena_alloc(&ev->arena, keep + alen + 1);

	if (s == NULL)
		return SPFKIT_ENOMEM;
	memcpy(s, ev->sender, keep);
	memcpy(s + keep, a, alen);
	s[keep + alen] = '\0';
	ev->sender = s;
	ev->sender_len = keep + alen;
	ev->sender_domain = s + keep;
	ev->sender_domain_len = alen;
	if (local_inside)
		ev->local = s;
	return 0;
}

/*
 * RFC 8616 §4: "All U-labels MUST be converted to A-labels before being
 * used for an SPF validation", for the lookup and for the macros of
 * domain-spec (%{d} %{o} %{h} %{s}). A <sender> domain that is not an
 * IDN is malformed: the check is "none" (RFC 7208 §4.3). A local part
 * that is not ASCII cannot be a DNS label: terms with %{l} or %{s} match
 * nothing. The HELO name, sent before SMTPUTF8 is negotiated, "MUST be
 * represented as A-labels"; one in U-labels names a domain all the
 * same, so it is converted too, and the trace says so (docs/idn.md).
 */
int spfkit__idna_identities(struct spfkit_eval *ev)
{
	const char *a, *why = NULL;
	size_t alen;
	int rc;

	ev->sender_received = ev->sender_ascii = ev->sender;
	ev->helo_received = ev->helo_ascii = ev->helo;
	if (!spfkit__ascii_only(ev->local, ev->local_len)) {
		ev->ascii_less_letters |= LETTER('l') | LETTER('s');
		ev->sender_ascii = NULL;
	}
	rc = spfkit__idna_to_alabels(&ev->arena, ev->helo, ev->helo_len, &a, &alen, &why);
	if (rc == SPFKIT_ENOMEM)
		return rc;
	if (rc == 1) {
		ev->helo = ev->helo_ascii = a;
		ev->helo_len = alen;
	} else if (rc == SPFKIT_ESYNTAX) {
		ev->ascii_less_letters |= LETTER('h');
		ev->helo_ascii = NULL;
	}
	rc = spfkit__idna_to_alabels(&ev->arena, ev->sender_domain, ev->sender_domain_len, &a,
				     &alen, &why);
	if (rc == SPFKIT_ESYNTAX) {
		ev->idna_why = why;
		ev->sender_ascii = NULL;
		return 0;
	}
	if (rc != 1)
		return rc; /* 0: ASCII, as almost every sender */
	rc = sender_with_domain(ev, a, alen);
	if (rc == 0 && ev->sender_ascii != NULL)
		ev->sender_ascii = ev->sender;
	return rc;
}

int spfkit__idna_no_ascii(const struct spfkit_eval *ev, const struct spfkit_macro_string *ms)
{
	return (ms->letters & ev->ascii_less_letters) != 0;
}

static void note(struct spfkit_eval *ev, const struct frame *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct spfkit_eval *ev, const struct frame *f, const char *fmt, ...)
{
	char text[768];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = spfkit__vformat(text, sizeof(text), fmt, ap);
	va_end(ap);
	spfkit__eval_trace_note(ev, f, text, n);
}

void spfkit__idna_trace(struct spfkit_eval *ev, const struct frame *f)
{
	if (ev->trace == NULL || f != ev->frames || f->redirected)
		return;
	if (ev->helo != ev->helo_received)
		note(ev, f, "HELO %s is in U-labels, which RFC 8616 section 4 forbids: checked as %s",
		     ev->helo_received, ev->helo);
	else if (ev->helo_ascii == NULL)
		note(ev, f, "HELO name is not a valid internationalized domain name: %s; "
			    "terms with %%{h} match nothing", ev->helo_received);
	if (ev->idna_why != NULL)
		note(ev, f, "<sender> %s: its domain is %s (RFC 8616 section 4), "
			    "so it is malformed: none (RFC 7208 section 4.3)",
		     ev->sender_received, ev->idna_why);
	else if (ev->sender != ev->sender_received)
		note(ev, f, "<sender> %s is checked as %s: U-labels become A-labels "
			    "(RFC 8616 section 4)", ev->sender_received, ev->sender);
	if (ev->ascii_less_letters & LETTER('l'))
		note(ev, f, "local part is not ASCII: terms with %%{l} or %%{s} match nothing "
			    "(RFC 8616 section 4)");
}

void spfkit__idna_trace_skip(struct spfkit_eval *ev, const struct frame *f,
			     const struct spfkit_term *t)
{
	if (ev->trace != NULL)
		note(ev, f, "%.*s matches nothing: its domain-spec needs a macro letter "
			    "with no ASCII value (RFC 8616 section 4)",
		     (int)(t->len > 200 ? 200 : t->len), f->rec->text + t->offset);
}
