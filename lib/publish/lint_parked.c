/*
 * parked-domain: a domain that can receive no mail: no MX, or only a
 * null MX (RFC 7505), and no A or AAAA for RFC 5321 §5.1's fallback.
 * Such a domain sends none either, and RFC 7208 §10.1.2 says:
 * "Publishing SPF records for domains that send no mail is a
 * well-established best practice. The record for a domain that sends no
 * mail is: ... "v=spf1 -all"".
 */
#include "lint_walk.h"

/* 1 when so; 0 when not, or not known (a failed question). */
int spfkit__lint_parked_domain(struct walk *w, const char *name, size_t len)
{
	const struct lint_answer *mx, *a4, *a6;
	struct prefetch p;
	size_t i;

	p.n = 0;
	spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_MX);
	spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_A);
	spfkit__lint_lookups_want(&p, name, len, SPFKIT_RR_AAAA);
	spfkit__lint_dns_prefetch(w->dns, p.q, p.n);
	if (spfkit__lint_dns_ask(w->dns, name, len, SPFKIT_RR_MX, &mx) != 0 ||
	    spfkit__lint_dns_ask(w->dns, name, len, SPFKIT_RR_A, &a4) != 0 ||
	    spfkit__lint_dns_ask(w->dns, name, len, SPFKIT_RR_AAAA, &a6) != 0)
		return 0;
	if (mx->status == SPFKIT_DNS_TEMPFAIL || a4->status == SPFKIT_DNS_TEMPFAIL ||
	    a6->status == SPFKIT_DNS_TEMPFAIL)
		return 0;
	for (i = 0; i < mx->count; i++)
		if (!spfkit__lint_lookups_mx_no_host(&mx->rrs[i]))
			return 0;
	return a4->count == 0 && a6->count == 0;
}

/* The record refuses every sender before anything else: its first mechanism is -all. */
static int only_fail_all(const struct spfkit_record *rec)
{
	size_t i;

	for (i = 0; i < rec->count; i++)
		if (!rec->terms[i].is_modifier)
			return rec->terms[i].mech == SPFKIT_MECH_ALL && rec->terms[i].qualifier == '-';
	return 0;
}

void spfkit__lint_parked_check(struct walk *w, const struct node *n)
{
	if (only_fail_all(n->rec) || n->dlen == 0 || w->in->counting_only ||
	    !spfkit__lint_parked_domain(w, n->domain, n->dlen))
		return;
	spfkit__lint_add(w->r, L_PARKED_DOMAIN, n->domain, NULL, 0, -1, NULL,
			 "%s has no MX (or a null MX) and no A or AAAA record: it receives no "
			 "mail and so sends none, yet its record authorizes or leaves open more "
			 "than \"v=spf1 -all\" (RFC 7208 section 10.1.2)",
			 n->domain);
}
