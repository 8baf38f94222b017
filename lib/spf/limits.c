/*
 * The processing limits of RFC 7208 §4.6.4, counted here and nowhere
 * else: DNS-querying terms (include a mx ptr exists redirect) and void
 * lookups. The per-mechanism MX/PTR name limits are applied in mech.c,
 * where the names are walked, with the values from the context.
 */
#include <string.h>

#include "eval_int.h"

static void trace_counters(struct spfkit_eval *ev)
{
	struct spfkit_trace_event e;

	if (ev->trace == NULL)
		return;
	memset(&e, 0, sizeof(e));
	e.kind = SPFKIT_TRACE_COUNT;
	e.depth = ev->depth - 1;
	e.domain = ev->frames[ev->depth - 1].domain;
	e.dns_terms = ev->dns_terms;
	e.void_lookups = ev->void_lookups;
	spfkit__eval_trace(ev, &e);
}

/* "SPF implementations MUST limit the total number of those terms to 10
 * during SPF evaluation ... If this limit is exceeded, the implementation
 * MUST return permerror." Charged once per term, however often it replays. */
int spfkit__limits_charge_dns_term(struct spfkit_eval *ev, struct frame *f)
{
	unsigned limit = ev->ctx->limits.dns_terms;

	if (f->term_charged)
		return 0;
	f->term_charged = 1;
	ev->dns_terms++;
	trace_counters(ev);
	if (ev->dns_terms <= limit)
		return 0;
	spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_DNS_TERMS,
			   "more than %u DNS-querying terms (RFC 7208 section 4.6.4)", limit);
	return 1;
}

/* "SPF implementations SHOULD limit void lookups to two ... Exceeding the
 * limit produces a permerror result." */
int spfkit__limits_charge_void(struct spfkit_eval *ev, struct frame *f,
	const struct spfkit_dns_answer *a)
{
	unsigned limit = ev->ctx->limits.void_lookups;

	if (!spfkit__query_answer_void(a))
		return 0;
	ev->void_lookups++;
	trace_counters(ev);
	if (ev->void_lookups <= limit)
		return 0;
	spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_VOID_LOOKUPS,
			   "more than %u void DNS lookups (RFC 7208 section 4.6.4)", limit);
	return 1;
}
