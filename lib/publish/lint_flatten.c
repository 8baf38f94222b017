/*
 * Would `spfkit flatten` fix a tree over the 10-term limit (issue 31)?
 * lint points to flatten only when it would: flatten's own model and
 * records (flatten_model.c, flatten_emit.c) are built over the answers
 * lint's walk already holds (flatten_verify.c's overlay resolver on
 * its cache), and the records' own count (spfkit__flat_lookups_after)
 * decides. Flatten's address-by-address verification is not repeated.
 */
#include <stdio.h>
#include <string.h>

#include "publish.h"

/* Why not, into the report's arena. */
static void note(struct lint_report *r, const char *why)
{
	r->flatten_note = spfkit__lint_strndup(r, why, strlen(why));
}

static void estimate(struct lint_dns *dns, const struct lint_input *in, struct lint_dns *d2,
		     struct flat_model *m)
{
	struct lint_report *r = dns->report;
	struct flat_emit_opts eo;
	struct flat_output out;
	struct lint_input in2;
	char err[512];

	memset(&in2, 0, sizeof(in2));
	in2.observe = spfkit__flat_model_observe;
	in2.observe_arg = m;
	in2.domain = r->domain;
	in2.record = in->record;
	in2.record_len = in->record_len;
	in2.counting_only = 1;
	if (spfkit__lint_run(d2, &in2) != 0 || m->err != 0 || d2->late > 0)
		return;
	if (!spfkit__flat_model_usable(m)) {
		note(r, m->problem);
		return;
	}
	memset(&eo, 0, sizeof(eo));
	memset(&out, 0, sizeof(out));
	eo.domain = r->domain;
	eo.dns = d2;
	if (spfkit__flat_emit(m, &eo, &out, err, sizeof(err)) != 0) {
		note(r, err);
	} else if (spfkit__flat_lookups_after(d2, r->domain, &out) == 0) {
		r->counts.flatten_checked = 1;
		r->counts.after_flatten = out.lookups_after;
		r->counts.flatten_fixes = out.lookups_after <= SPFKIT_LIMIT_DNS_TERMS;
		if (!r->counts.flatten_fixes) {
			snprintf(err, sizeof(err),
				 "its records would still need %u DNS-querying terms: too many "
				 "address blocks, or terms kept as written (ptr, exists, macros)",
				 out.lookups_after);
			note(r, err);
		}
	}
	spfkit__flat_output_free(&out);
}

void spfkit__lint_flatten_check(struct lint_dns *dns, const struct lint_input *in)
{
	struct lint_report *r = dns->report, r2;
	struct spfkit_resolver *res = NULL;
	struct flat_model m;
	struct lint_dns d2;

	if (r->domain[0] == '\0' || spfkit__flat_overlay_new(dns, NULL, r->domain, &res) != 0)
		return;
	spfkit__lint_report_init(&r2);
	spfkit__lint_dns_init(&d2, res, &r2);
	d2.deadline_ms = dns->deadline_ms;
	d2.limit_s = dns->limit_s;
	if (spfkit__flat_model_init(&m, &r2, NULL, 0) == 0) {
		estimate(dns, in, &d2, &m);
		spfkit__flat_model_free(&m);
	}
	spfkit__lint_dns_free(&d2);
	spfkit__lint_report_free(&r2);
	spfkit_resolver_free(res);
}
