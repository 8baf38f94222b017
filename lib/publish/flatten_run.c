/*
 * One `spfkit flatten` run, without its printing (issue 28 point 3):
 * lint's walk of the source, watched by the model (flatten_model.c);
 * refusal on temperror, on a permerror of the source or past the time
 * limit; the records (flatten_emit.c); lint's walk again over the new
 * records, for the lookups after (flatten_verify.c); the proof, original
 * against flattened address by address. --check-live: two walks, the
 * source and what is published, compared (flatten_live.c).
 *
 * What stops a run is a struct flat_problem: its kind ("refused",
 * "difference" or "error", which --batch --json reports) and a message
 * that names the domain and the problem.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "publish.h"

void spfkit__flat_run_problem(struct flat_problem *why, const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
	why->kind = kind;
}

/* The record at o->source: exactly one SPF record. 0, or -1 with why. */
static int read_source(const struct flat_run_opts *o, struct flat_walk *w,
		       struct flat_problem *why)
{
	const struct lint_answer *a;
	size_t n;
	int rc = spfkit__lint_dns_ask(&w->dns, o->source, strlen(o->source), SPFKIT_RR_TXT, &a);

	if (rc != 0) {
		spfkit__flat_run_problem(why, "error", "cannot read %.200s: %s", o->source,
					 spfkit_strerror(rc));
		return -1;
	}
	if (a->status == SPFKIT_DNS_TEMPFAIL) {
		spfkit__flat_run_problem(why, "refused",
					 "cannot flatten %.200s: TXT %.200s: %s (temperror)",
					 o->domain, o->source,
					 a->detail != NULL ? a->detail : "temporary failure");
		return -1;
	}
	n = spfkit__lint_select(&w->r, o->source, a, &w->text, &w->len);
	if (n != 1) {
		spfkit__flat_run_problem(why, "refused",
					 "cannot flatten %.200s: the source %.200s has %s SPF record",
					 o->domain, o->source, n == 0 ? "no" : "more than one");
		return -1;
	}
	return 0;
}

int spfkit__flat_run_walk(struct flat_walk *w, const struct flat_run_opts *o,
			  struct spfkit_resolver *res, int use_source, struct flat_problem *why)
{
	struct lint_input in;
	int rc;

	spfkit__lint_report_init(&w->r);
	spfkit__lint_dns_init(&w->dns, res, &w->r);
	spfkit__lint_dns_set_time_limit(&w->dns, o->limit_s);
	if (spfkit__flat_model_init(&w->m, &w->r, o->keep, o->nkeep) != 0) {
		spfkit__flat_run_problem(why, "error", "out of memory");
		return -1;
	}
	memset(&in, 0, sizeof(in));
	in.observe = spfkit__flat_model_observe;
	in.observe_arg = &w->m;
	in.domain = o->domain;
	if (use_source && o->source != NULL) {
		if (read_source(o, w, why) != 0)
			return -1;
		in.record = w->text;
		in.record_len = w->len;
	}
	rc = spfkit__lint_run(&w->dns, &in);
	return spfkit__flat_run_judge(w, o->domain, rc, why);
}

int spfkit__flat_run_judge(struct flat_walk *w, const char *domain, int rc,
			   struct flat_problem *why)
{
	if (w->dns.late > 0) {
		spfkit__flat_run_problem(why, "refused",
					 "cannot flatten %.200s: incomplete: the time limit of %u s "
					 "was reached; %u DNS questions not answered",
					 domain, w->dns.limit_s, w->dns.late);
		return -1;
	}
	if (rc == 0)
		rc = w->m.err;
	if (rc == SPFKIT_E2BIG) {
		spfkit__flat_run_problem(why, "refused", "cannot flatten %.200s: over %u DNS questions",
					 domain, LINT_MAX_QUESTIONS);
		return -1;
	}
	if (rc != 0) {
		spfkit__flat_run_problem(why, "error", "cannot flatten %.200s: %s", domain,
					 spfkit_strerror(rc));
		return -1;
	}
	if (!spfkit__flat_model_usable(&w->m)) {
		spfkit__flat_run_problem(why, "refused", "cannot flatten %.200s: %s", domain,
					 w->m.problem);
		return -1;
	}
	w->text = w->r.record;
	w->len = w->r.record_len;
	return 0;
}

void spfkit__flat_run_walk_free(struct flat_walk *w)
{
	spfkit__flat_model_free(&w->m);
	spfkit__lint_dns_free(&w->dns);
	spfkit__lint_report_free(&w->r);
}

int spfkit__flat_run_records(struct flat_walk *w, const struct flat_run_opts *o,
			     struct flat_result *res, struct flat_problem *why)
{
	struct flat_emit_opts eo;
	char err[512];
	int rc;

	memset(&eo, 0, sizeof(eo));
	eo.domain = w->r.domain;
	eo.chain = o->chain;
	eo.dns = &w->dns;
	rc = spfkit__flat_emit(&w->m, &eo, &res->out, err, sizeof(err));
	if (rc != 0) {
		spfkit__flat_run_problem(why, "refused", "cannot flatten %.200s: %s", o->domain, err);
		return -1;
	}
	rc = spfkit__flat_lookups_after(&w->dns, w->r.domain, &res->out);
	if (rc == 0 && res->out.lookups_after > SPFKIT_LIMIT_DNS_TERMS) {
		spfkit__flat_run_problem(why, "refused",
					 "cannot flatten %.200s: the flattened records still need "
					 "%u DNS-querying terms (limit %u): too many blocks or terms "
					 "kept as written",
					 o->domain, res->out.lookups_after, SPFKIT_LIMIT_DNS_TERMS);
		return -1;
	}
	res->v.domain = w->r.domain;
	res->v.source = w->text;
	res->v.source_len = w->len;
	res->v.out = &res->out;
	res->v.m = &w->m;
	res->v.dns = &w->dns;
	res->v.seed = o->seed;
	res->v.samples = o->samples;
	res->v.now = o->now;
	if (rc == 0)
		rc = spfkit__flat_verify_run(&res->v);
	if (rc == SPFKIT_E2BIG) {
		spfkit__flat_run_problem(why, "refused",
					 "cannot flatten %.200s: more than %u addresses to check",
					 o->domain, FLAT_MAX_CHECKED);
		return -1;
	}
	if (rc != 0) {
		spfkit__flat_run_problem(why, "error", "cannot flatten %.200s: %s", o->domain,
					 spfkit_strerror(rc));
		return -1;
	}
	if (res->v.differences > 0) {
		spfkit__flat_run_problem(why, "difference",
					 "%.200s: the flattened records differ from the original "
					 "for %zu of %zu addresses; nothing written",
					 o->domain, res->v.differences, res->v.addresses);
		return -1;
	}
	/* the TTL given, else the shortest the source was read with */
	res->ttl = o->has_ttl ? o->ttl : w->m.has_ttl ? w->m.min_ttl : 3600;
	return 0;
}

void spfkit__flat_run_result_free(struct flat_result *res)
{
	spfkit__flat_output_free(&res->out);
	spfkit__buf_free(&res->v.report);
}

int spfkit__flat_run_live(const struct flat_run_opts *o, struct spfkit_resolver *res,
			  struct flat_live *d, struct flat_problem *why)
{
	struct flat_walk *src = spfkit__zalloc(NULL, sizeof(*src));
	struct flat_walk *pub = spfkit__zalloc(NULL, sizeof(*pub));
	int rc = -1;

	if (src == NULL || pub == NULL)
		spfkit__flat_run_problem(why, "error", "out of memory");
	else if (spfkit__flat_run_walk(src, o, res, 1, why) == 0 &&
		 spfkit__flat_run_walk(pub, o, res, 0, why) == 0) {
		if (spfkit__flat_live_compare(&src->m, &pub->m, d) != 0)
			spfkit__flat_run_problem(why, "error", "out of memory");
		else
			rc = 0;
	}
	if (src != NULL)
		spfkit__flat_run_walk_free(src);
	if (pub != NULL)
		spfkit__flat_run_walk_free(pub);
	spfkit__free(NULL, src);
	spfkit__free(NULL, pub);
	return rc;
}
