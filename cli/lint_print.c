/*
 * `spfkit lint`'s output: the findings as text grouped by severity for
 * people, one JSON object for CI; record text comes from DNS, so it is
 * printed through cli_put_safe() / cli_json_str(). Also the --time-limit
 * option and what the limit left unchecked.
 */
#include <stdarg.h>
#include <string.h>

#include "lint_print.h"

#define LINT_JSON_MAX (64u << 20)

int lint_time_limit_option(const char *cmd, const char *text, unsigned *seconds)
{
	int v = LINT_TIME_LIMIT_S;

	if (text != NULL && cli_parse_count(text, 86400, &v) != 0) {
		cli_error(cmd, "--time-limit '%.100s' is not a number of seconds from 1 to 86400",
			  text);
		return -1;
	}
	*seconds = (unsigned)v;
	return 0;
}

int lint_dns_incomplete(const char *cmd, const struct lint_dns *d)
{
	if (d->late == 0)
		return 0;
	cli_error(cmd, "incomplete: the time limit of %u s was reached; %u DNS question%s not "
		       "answered, each named by a dns-failure finding",
		  d->limit_s, d->late, d->late == 1 ? "" : "s");
	return 1;
}

/* ---- text -------------------------------------------------------------- */

static void print_finding(FILE *f, const struct lint_finding *x)
{
	fprintf(f, "  %s %s", spfkit__lint_severity_name(x->severity),
		spfkit__lint_checks[x->id].id);
	if (x->domain != NULL) {
		fputs(" [", f);
		cli_put_safe_str(f, x->domain);
		putc(']', f);
	}
	if (x->provider)
		fputs(" (provider's record)", f);
	if (x->term != NULL) {
		fputs(" \"", f);
		cli_put_safe_str(f, x->term);
		putc('"', f);
	}
	if (x->offset >= 0)
		fprintf(f, " at offset %ld", x->offset);
	fputs("\n    ", f);
	cli_put_safe_str(f, x->message);
	fputs("\n    fix: ", f);
	cli_put_safe_str(f, spfkit__lint_finding_fix(x));
	fprintf(f, "\n    RFC 7208 section %s\n", spfkit__lint_checks[x->id].section);
}

/* Over or near the limit: what each DNS term of the top record costs, its tree included. */
static void print_costs(FILE *f, const struct lint_report *r)
{
	const struct lint_counts *c = &r->counts;
	size_t i;
	int over = 0;

	if (c->dns_terms < 8 || r->ncosts == 0)
		return;
	fputs("lookups by term of the record (the term and its tree; the total after it):\n", f);
	for (i = 0; i < r->ncosts; i++) {
		const struct lint_cost *x = &r->costs[i];

		fputs("  ", f);
		cli_put_safe_str(f, x->term);
		fprintf(f, ": %u, total %u", x->cost, x->running);
		if (!over && x->running > SPFKIT_LIMIT_DNS_TERMS) {
			fputs(" (over the limit here)", f);
			over = 1;
		}
		putc('\n', f);
	}
	if (c->dns_terms <= SPFKIT_LIMIT_DNS_TERMS)
		return;
	if (c->flatten_fixes) {
		fprintf(f, "spfkit flatten fixes it: its records need %u DNS term%s\n",
			c->after_flatten, c->after_flatten == 1 ? "" : "s");
	} else if (r->flatten_note != NULL) {
		fputs("spfkit flatten cannot fix it: ", f);
		cli_put_safe_str(f, r->flatten_note);
		putc('\n', f);
	}
}

static void print_counts(FILE *f, const struct lint_report *r)
{
	const struct lint_counts *c = &r->counts;

	if (c->unevaluated == 1) {
		fprintf(f, "lookups: none: the record does not parse, so receivers return permerror "
			   "before any lookup; once it is fixed, the terms that parse cost %u DNS "
			   "term%s (limit %u)",
			c->dns_terms_fixed, c->dns_terms_fixed == 1 ? "" : "s", SPFKIT_LIMIT_DNS_TERMS);
		if (c->fixed_typos > 0)
			fprintf(f, ", %u misspelt term%s read as meant", c->fixed_typos,
				c->fixed_typos == 1 ? "" : "s");
		putc('\n', f);
		fputs("void lookups: none (nothing is evaluated)\n", f);
		return;
	}
	if (c->unevaluated == 2) {
		fputs("lookups: none: more than one SPF record, so receivers return permerror "
		      "before any lookup\n",
		      f);
		fputs("void lookups: none (nothing is evaluated)\n", f);
		return;
	}
	fprintf(f, "lookups: %u DNS term%s (limit %u), worst case over every branch\n", c->dns_terms,
		c->dns_terms == 1 ? "" : "s", SPFKIT_LIMIT_DNS_TERMS);
	fprintf(f, "void lookups: %u for an IPv4 client, %u for an IPv6 client (limit %u)\n",
		c->void_v4, c->void_v6, SPFKIT_LIMIT_VOID_LOOKUPS);
	print_costs(f, r);
	if (c->loop)
		fputs("(a loop: evaluation goes round it until the limit, then permerror)\n", f);
	if (c->dynamic)
		fputs("(some targets are made by macros: their branches are counted, not followed)\n",
		      f);
}

void lint_print_tally(FILE *f, const struct lint_report *r)
{
	size_t e = spfkit__lint_tally(r, LINT_ERROR), w = spfkit__lint_tally(r, LINT_WARNING);
	size_t n = spfkit__lint_tally(r, LINT_NOTICE);

	fprintf(f, "%zu error%s, %zu warning%s, %zu notice%s", e, e == 1 ? "" : "s", w,
		w == 1 ? "" : "s", n, n == 1 ? "" : "s");
}

void lint_print_text(FILE *f, const struct lint_report *r)
{
	static const char *const heads[] = { "errors:", "warnings:", "notices:" };
	size_t i, pw, pn;
	int s;

	fputs("domain: ", f);
	cli_put_safe_str(f, r->domain[0] != '\0' ? r->domain : "(none given)");
	fputs("\nrecord: ", f);
	if (r->record != NULL)
		cli_put_safe(f, r->record, r->record_len);
	else
		fputs("(none)", f);
	putc('\n', f);
	for (i = 1; i < r->nrecords; i++) {
		fprintf(f, "record %zu: ", i + 1);
		cli_put_safe(f, r->records[i], r->record_lens[i]);
		putc('\n', f);
	}
	if (r->nrecords > 1)
		fprintf(f, "(%zu SPF records: merge them into one)\n", r->nrecords);
	print_counts(f, r);
	for (s = LINT_ERROR; s <= LINT_NOTICE; s++) {
		if (spfkit__lint_tally(r, (enum lint_severity)s) == 0)
			continue;
		fprintf(f, "\n%s\n", heads[s]);
		for (i = 0; i < r->n; i++)
			if (r->items[i].severity == (enum lint_severity)s)
				print_finding(f, &r->items[i]);
	}
	fputs("\nsummary: ", f);
	lint_print_tally(f, r);
	putc('\n', f);
	pw = spfkit__lint_tally_provider(r, LINT_WARNING);
	pn = spfkit__lint_tally_provider(r, LINT_NOTICE);
	if (pw + pn > 0)
		fprintf(f, "(%zu warning%s and %zu notice%s in records the domain does not control: "
			   "not in the exit status)\n",
			pw, pw == 1 ? "" : "s", pn, pn == 1 ? "" : "s");
}

/* ---- JSON -------------------------------------------------------------- */

static void json_finding(struct spfkit__buf *b, const struct lint_finding *x)
{
	int first = 1;

	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "id");
	cli_json_cstr(b, spfkit__lint_checks[x->id].id);
	cli_json_key(b, &first, "severity");
	cli_json_cstr(b, spfkit__lint_severity_name(x->severity));
	cli_json_key(b, &first, "domain");
	cli_json_cstr(b, x->domain);
	cli_json_key(b, &first, "term");
	cli_json_cstr(b, x->term);
	cli_json_key(b, &first, "offset");
	if (x->offset >= 0)
		spfkit__buf_printf(b, "%ld", x->offset);
	else
		spfkit__buf_puts(b, "null");
	cli_json_key(b, &first, "message");
	cli_json_cstr(b, x->message);
	cli_json_key(b, &first, "fix");
	cli_json_cstr(b, spfkit__lint_finding_fix(x));
	cli_json_key(b, &first, "rfc7208_section");
	cli_json_cstr(b, spfkit__lint_checks[x->id].section);
	cli_json_key(b, &first, "provider");
	spfkit__buf_puts(b, x->provider ? "true" : "false");
	if (x->reason != SPFKIT_REASON_NONE) { /* issue 28: the evaluator's code for it */
		cli_json_key(b, &first, "reason");
		cli_json_cstr(b, spfkit_reason_name(x->reason));
	}
	spfkit__buf_putc(b, '}');
}

static void json_counts(struct spfkit__buf *b, const struct lint_report *r)
{
	const struct lint_counts *c = &r->counts;
	size_t i;

	spfkit__buf_printf(b,
			       "{\"dns_terms\":%u,\"dns_terms_limit\":%u,\"void_lookups_ipv4\":%u,"
			       "\"void_lookups_ipv6\":%u,\"void_lookups_limit\":%u,"
			       "\"permerror_ipv4\":%s,\"permerror_ipv6\":%s,\"dynamic\":%s,"
			       "\"loop\":%s,\"records\":%u",
			       c->dns_terms, SPFKIT_LIMIT_DNS_TERMS, c->void_v4, c->void_v6,
			       SPFKIT_LIMIT_VOID_LOOKUPS, c->permerror_v4 ? "true" : "false",
			       c->permerror_v6 ? "true" : "false", c->dynamic ? "true" : "false",
			       c->loop ? "true" : "false", c->records);
	/* issue 31, added: whether anything is evaluated, what a broken record
	 * would cost once fixed, and what each term of the top record costs */
	spfkit__buf_printf(b, ",\"evaluated\":%s,\"dns_terms_once_fixed\":",
			   c->unevaluated ? "false" : "true");
	if (c->unevaluated == 1)
		spfkit__buf_printf(b, "%u", c->dns_terms_fixed);
	else
		spfkit__buf_puts(b, "null");
	spfkit__buf_puts(b, ",\"dns_terms_after_flatten\":");
	if (c->flatten_checked)
		spfkit__buf_printf(b, "%u", c->after_flatten);
	else
		spfkit__buf_puts(b, "null");
	spfkit__buf_printf(b, ",\"flatten_fixes\":%s,\"by_term\":[",
			   c->flatten_fixes ? "true" : "false");
	for (i = 0; i < r->ncosts; i++) {
		const struct lint_cost *x = &r->costs[i];

		spfkit__buf_puts(b, i > 0 ? ",{\"term\":" : "{\"term\":");
		cli_json_cstr(b, x->term);
		spfkit__buf_printf(b, ",\"offset\":%ld,\"cost\":%u,\"total\":%u,\"after_flatten\":%u}",
				   x->offset, x->cost, x->running, x->kept);
	}
	spfkit__buf_puts(b, "]}");
}

int lint_print_json(FILE *f, const struct lint_report *r)
{
	struct spfkit__buf b;
	size_t i;
	int first = 1, rc;

	spfkit__buf_init(&b, NULL, LINT_JSON_MAX);
	spfkit__buf_putc(&b, '{');
	cli_json_key(&b, &first, "domain");
	cli_json_cstr(&b, r->domain[0] != '\0' ? r->domain : NULL);
	cli_json_key(&b, &first, "record");
	if (r->record != NULL)
		cli_json_str(&b, r->record, r->record_len);
	else
		spfkit__buf_puts(&b, "null");
	cli_json_key(&b, &first, "spf_records"); /* issue 31: all of them, for multiple-records */
	spfkit__buf_putc(&b, '[');
	for (i = 0; i < r->nrecords; i++) {
		if (i > 0)
			spfkit__buf_putc(&b, ',');
		cli_json_str(&b, r->records[i], r->record_lens[i]);
	}
	spfkit__buf_putc(&b, ']');
	cli_json_key(&b, &first, "lookups");
	json_counts(&b, r);
	cli_json_key(&b, &first, "findings");
	spfkit__buf_putc(&b, '[');
	for (i = 0; i < r->n; i++) {
		if (i > 0)
			spfkit__buf_putc(&b, ',');
		json_finding(&b, &r->items[i]);
	}
	spfkit__buf_putc(&b, ']');
	cli_json_key(&b, &first, "summary");
	spfkit__buf_printf(&b,
			   "{\"error\":%zu,\"warning\":%zu,\"notice\":%zu,"
			   "\"provider\":{\"error\":%zu,\"warning\":%zu,\"notice\":%zu}}",
			   spfkit__lint_tally(r, LINT_ERROR), spfkit__lint_tally(r, LINT_WARNING),
			   spfkit__lint_tally(r, LINT_NOTICE),
			   spfkit__lint_tally_provider(r, LINT_ERROR),
			   spfkit__lint_tally_provider(r, LINT_WARNING),
			   spfkit__lint_tally_provider(r, LINT_NOTICE));
	cli_json_key(&b, &first, "exit_status");
	spfkit__buf_printf(&b, "%d", spfkit__lint_exit_status(r));
	spfkit__buf_puts(&b, "}\n");
	rc = b.err;
	if (rc == 0)
		fwrite(b.data, 1, b.len, f);
	spfkit__buf_free(&b);
	return rc;
}
