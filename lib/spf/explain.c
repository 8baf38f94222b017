/*
 * The explanation of a fail (RFC 7208 §6.2): the "exp" modifier of the
 * record that decided names a TXT record whose text is a macro-string.
 * Any trouble on that road (bad name, DNS failure, not exactly one TXT
 * record, non-ASCII text, a syntax error) means no explanation from the
 * record, and the context's default is used. None of these lookups count
 * against the limits of §4.6.4.
 */
#include <string.h>

#include "domain.h"
#include "eval_int.h"

/* §6.2: the explanation string must be 7-bit ASCII; no control bytes. */
static int text_printable(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return 0;
	return 1;
}

/* Fetch and parse the record's explanation; *ms stays empty when there is none. */
static int exp_text(struct spfkit_eval *ev, struct frame *f, struct spfkit_macro_string *ms)
{
	const struct spfkit_term *t = &f->rec->terms[f->rec->exp];
	const struct query *q;
	const char *name, *why;
	size_t len, err_off;
	int failed, fresh, nomem, rc;

	rc = spfkit__mech_expand_target(ev, f, &t->domain, SPFKIT__MACRO_DOMAIN, &name, &len,
		&failed);
	if (rc != STEP_DONE || failed || !spfkit__domain_valid(name, len))
		return rc;
	q = spfkit__query_need(ev, f, SPFKIT_RR_TXT, name, len, 0, &fresh, &nomem);
	if (q == NULL)
		return nomem ? STEP_NOMEM : STEP_PENDING;
	if (q->ans.status != SPFKIT_DNS_OK || q->ans.count != 1)
		return STEP_DONE;
	if (!text_printable(q->ans.rrs[0].data, q->ans.rrs[0].len))
		return STEP_DONE;
	rc = spfkit__macro_parse((const char *)q->ans.rrs[0].data, q->ans.rrs[0].len,
				 SPFKIT__MACRO_EXPLAIN, &ev->arena, ms, &err_off, &why);
	if (rc == SPFKIT_ENOMEM)
		return STEP_NOMEM;
	if (rc != 0)
		memset(ms, 0, sizeof(*ms));
	return STEP_DONE;
}

int spfkit__explain(struct spfkit_eval *ev, struct frame *f)
{
	struct spfkit_macro_string ms;
	const char *text;
	size_t len;
	int failed, rc;

	memset(&ms, 0, sizeof(ms));
	f->uses = 0;
	f->term_level = f->rec_level;
	if (f->rec != NULL && f->rec->exp >= 0) {
		rc = exp_text(ev, f, &ms);
		if (rc != STEP_DONE)
			return rc;
	}
	if (ms.pieces == NULL)
		ms = ev->ctx->default_exp;
	rc = spfkit__mech_expand_target(ev, f, &ms, SPFKIT__MACRO_EXPLAIN, &text, &len, &failed);
	if (rc != STEP_DONE)
		return rc;
	if (failed && ms.pieces != ev->ctx->default_exp.pieces) {
		ms = ev->ctx->default_exp;
		rc = spfkit__mech_expand_target(ev, f, &ms, SPFKIT__MACRO_EXPLAIN, &text, &len,
			&failed);
		if (rc != STEP_DONE)
			return rc;
	}
	ev->result.explanation = failed ? NULL : text;
	f->phase = PH_DONE;
	return STEP_DONE;
}
