/*
 * The walk's questions and what they cost (docs/lint.md, "Counting"): a
 * NODATA or NXDOMAIN answer to an a, mx, ptr or exists term's question
 * is a void lookup, counted for each client family that asks it (RFC
 * 7208 §4.6.4); a failed question is a finding (receivers say
 * temperror); an error of the walk itself stops it (w->err).
 */
#include "lint_walk.h"
#include "reason.h"

void spfkit__lint_count_void(struct walk *w, int fam, const char *what, const char *name,
			     size_t len)
{
	struct spfkit__buf *b = &w->void_names[fam];

	w->voids[fam]++;
	spfkit__lint_observe_event(w, &(struct lint_walk_event){
		.kind = LW_VOID, .family = fam, .what = what, .name = name, .len = len });
	if (b->len > 0)
		spfkit__buf_puts(b, ", ");
	spfkit__buf_printf(b, "%s %.*s", what, (int)(len < 100 ? len : 100), name);
}

/* A question an a/mx/exists term asks: a void answer counts, each time. */
void spfkit__lint_count_charge(struct walk *w, int fam, const char *name, size_t len, uint16_t type,
			       const struct lint_answer *ans)
{
	char tn[16];

	if (ans->status == SPFKIT_DNS_NODATA || ans->status == SPFKIT_DNS_NXDOMAIN)
		spfkit__lint_count_void(w, fam, spfkit_rrtype_name(type, tn, sizeof(tn)), name,
					len);
}

/* Worst case for a target made by macros: a void for both families. */
void spfkit__lint_count_charge_unknown(struct walk *w, const char *src, size_t len)
{
	spfkit__lint_count_void(w, 0, "(macro)", src, len);
	spfkit__lint_count_void(w, 1, "(macro)", src, len);
}

int spfkit__lint_count_ask(struct walk *w, const char *name, size_t len, uint16_t type,
			   const struct lint_answer **out)
{
	int rc = spfkit__lint_dns_ask(w->dns, name, len, type, out);

	if (rc != 0 && w->err == 0)
		w->err = rc;
	return rc;
}

/* TEMPFAIL: a finding (receivers would say temperror); 1 when so. */
int spfkit__lint_count_tempfail(struct walk *w, const char *domain, const char *name, size_t len,
				uint16_t type, const struct lint_answer *a)
{
	struct lint_finding *f;
	char tn[16];

	if (a->status != SPFKIT_DNS_TEMPFAIL)
		return 0;
	f = spfkit__lint_add(w->r, L_DNS_FAILURE, domain, NULL, 0, -1, NULL, "%s %.*s: %s",
			     spfkit_rrtype_name(type, tn, sizeof(tn)),
			     (int)(len < 200 ? len : 200), name,
			     a->detail != NULL ? a->detail : "temporary failure");
	if (f != NULL) /* the evaluator's temperror code for the same answer */
		f->reason = spfkit__lint_dns_late(a) ? SPFKIT_REASON_TIME_BUDGET
						     : spfkit__reason_of_detail(a->detail);
	return 1;
}
