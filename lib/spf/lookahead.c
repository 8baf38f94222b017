/*
 * Parallel lookahead (issue 3): when an answer arrives, file at once the
 * questions strict evaluation is likely to ask next, so a caller that
 * sends questions concurrently needs about one round trip per level of
 * the record tree instead of one per question.
 *
 * Correctness rests on query.c: a filed question is only an entry in the
 * table. Strict evaluation still walks the record in order and uses an
 * answer through need(), where void lookups are counted; an answer it
 * never reaches is never counted, never turns the result into an error,
 * and spfkit_eval_step() reports DONE without waiting for it.
 */
#include "domain.h"
#include "eval_int.h"

/* A target that needs no DNS to expand: none given (the record's own
 * domain) or a macro-free domain-spec. */
static int literal_target(const struct spfkit_term *t, const struct query *owner,
			  const char **name, size_t *len)
{
	const struct spfkit_macro_string *ms = &t->domain;

	if (!t->has_domain) {
		*name = owner->name;
		*len = owner->name_len;
		return 1;
	}
	if (ms->letters != 0 || ms->count != 1 || ms->pieces[0].kind != SPFKIT_PIECE_LITERAL)
		return 0;
	*name = ms->pieces[0].text;
	*len = ms->pieces[0].len;
	return spfkit__domain_valid(*name, *len);
}

static int speculate(struct spfkit_eval *ev, uint16_t type, const char *name, size_t len,
		     unsigned flags, unsigned level)
{
	if (ev->speculative >= EVAL_MAX_SPECULATIVE)
		return 0;
	if (spfkit__file(ev, type, name, len, flags, level) == NULL)
		return ev->nqueries >= EVAL_MAX_QUERIES ? 0 : SPFKIT_ENOMEM;
	ev->speculative++;
	return 0;
}

static uint16_t address_type(const struct spfkit_eval *ev)
{
	return ev->ip.family == 4 ? SPFKIT_RR_A : SPFKIT_RR_AAAA;
}

/* The DNS-querying terms of a record, in order, as far as the term limit reaches. */
static int speculate_record(struct spfkit_eval *ev, const struct query *q)
{
	const struct spfkit_record *rec = q->rce->rec;
	unsigned dns_terms = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < rec->count && rc == 0; i++) {
		const struct spfkit_term *t = &rec->terms[i];
		int redirect = t->is_modifier && t->mod == SPFKIT_MOD_REDIRECT;
		const char *name;
		size_t len;

		if (t->is_modifier && !redirect)
			continue;
		if (!redirect && t->mech != SPFKIT_MECH_INCLUDE && t->mech != SPFKIT_MECH_A &&
		    t->mech != SPFKIT_MECH_MX && t->mech != SPFKIT_MECH_EXISTS)
			continue;
		if (++dns_terms > ev->ctx->limits.dns_terms)
			break;
		if (!literal_target(t, q, &name, &len))
			continue;
		if (redirect || t->mech == SPFKIT_MECH_INCLUDE)
			rc = speculate(ev, SPFKIT_RR_TXT, name, len, QF_RECORD, q->level + 1u);
		else if (t->mech == SPFKIT_MECH_MX)
			rc = speculate(ev, SPFKIT_RR_MX, name, len, QF_MX, q->level + 1u);
		else
			rc = speculate(ev, t->mech == SPFKIT_MECH_EXISTS ? SPFKIT_RR_A : address_type(ev),
				       name, len, 0, q->level + 1u);
	}
	return rc;
}

/* The hosts of an MX answer, as many as the MX limit lets "mx" look up. */
static int speculate_mx_hosts(struct spfkit_eval *ev, const struct query *q)
{
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < q->ans.count && rc == 0 && n < ev->ctx->limits.mx_names; i++) {
		const struct spfkit_dns_rr *rr = &q->ans.rrs[i];

		if (!spfkit__domain_valid((const char *)rr->data, rr->len))
			continue;
		n++;
		rc = speculate(ev, address_type(ev), (const char *)rr->data, rr->len, 0,
			       q->level + 1u);
	}
	return rc;
}

int spfkit__lookahead(struct spfkit_eval *ev, struct query *q)
{
	int rc;

	if (q->ans.status != SPFKIT_DNS_OK)
		return 0;
	if (q->type == SPFKIT_RR_MX && (q->flags & QF_MX))
		return speculate_mx_hosts(ev, q);
	if (q->type != SPFKIT_RR_TXT || !(q->flags & QF_RECORD))
		return 0;
	rc = spfkit__query_record(ev, q);
	if (rc != 0 || q->rec_state != REC_OK)
		return rc;
	return speculate_record(ev, q);
}
