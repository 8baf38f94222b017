/*
 * `spfkit lint`: check a domain's SPF record, and everything it
 * includes, for what makes receivers return permerror or none, or makes
 * the record mean something else than its owner thinks. The checks are
 * in lint_*.c (lint.h); this file reads the options, opens the same
 * resolver as `spfkit check` (resolver_open.c), runs and prints.
 */
#include <string.h>

#include "lint_print.h"

#define CMD "lint"
/* Exit status other than the findings' 0/1/2 (sysexits.h values). */
#define LINT_EXIT_USAGE 64    /* bad arguments, unreadable zone file */
#define LINT_EXIT_INTERNAL 70 /* out of memory, the resolver failed */
#define LINT_MAX_STRINGS 256u /* --record "..." "...": strings taken */

#define LINT_LINE_MAX 1024u /* --batch: a domain per line */

struct lint_opts {
	const char *zone, *dns, *timeout, *tries, *record, *domain, *batch, *time_limit;
	const char *arg_domain;
	int json, help;
	unsigned limit_s; /* --time-limit, parsed */
};

void cli_lint_usage(FILE *f)
{
	fputs("Usage: spfkit lint DOMAIN [--zone FILE | --dns HOST[:PORT],...] [--json]\n"
	      "       spfkit lint --record 'v=spf1 ...' [--domain DOMAIN] [same options]\n"
	      "       spfkit lint --batch FILE|- [same options]\n"
	      "\n"
	      "Check a domain's SPF record (RFC 7208) and every record it includes or\n"
	      "redirects to, for what makes receivers return permerror or none, what makes\n"
	      "the record mean something else than it seems (v=spf1 mx default=deny ends\n"
	      "neutral), and what is risky or wasteful. Each finding has a stable id, a\n"
	      "severity, the domain, the term and its byte offset, a one-line fix and the\n"
	      "RFC 7208 section. Nothing is evaluated: the worst-case counts are those of a\n"
	      "client that matches nothing, by the evaluator's own rules (docs/lint.md).\n"
	      "\n"
	      "Input:\n"
	      "  DOMAIN                the domain whose TXT record is checked\n"
	      "  --record TEXT         check this record instead of the domain's (not yet\n"
	      "                        published); includes and redirects are still looked\n"
	      "                        up. TEXT starting with a double quote is read as\n"
	      "                        zone-file strings (\"v=spf1 ...\" \"...\"), so their\n"
	      "                        sizes and joins are checked too\n"
	      "  --domain DOMAIN       with --record: the domain it is for (a and mx\n"
	      "                        without a name look it up)\n"
	      "  --batch FILE|-        lint each domain of FILE (one per line; blank lines\n"
	      "                        and # comments skipped), one report each (with\n"
	      "                        --json, one object per line); the exit status is\n"
	      "                        the worst of them\n"
	      "\n"
	      "DNS:\n"
	      "  --zone FILE           answer from this zone file (a BIND master file),\n"
	      "                        no network\n"
	      "  --dns HOST[:PORT][,...]\n"
	      "                        real DNS through these servers (default: the\n"
	      "                        servers of /etc/resolv.conf)\n"
	      "  --timeout MS          real DNS: timeout of one try of a query\n"
	      "  --tries N             real DNS: tries per query\n"
	      "  --time-limit S        give up the walk of a domain after S seconds\n"
	      "                        (default 60): what was not answered is a dns-failure\n"
	      "                        finding, and the exit status is 75. A record's\n"
	      "                        questions are asked together, 16 at a time\n"
	      "\n"
	      "Output:\n"
	      "  --json                one JSON object: the record, the counts and the\n"
	      "                        findings; bytes that are not ASCII as \\u0080-\\u00ff\n"
	      "  --help                this text\n"
	      "\n"
	      "Exit status:\n"
	      "  0 no errors or warnings (notices may be shown), 1 warnings only,\n"
	      "  2 at least one error; warnings in provider records (at names outside\n"
	      "  DOMAIN, marked as such) do not count, errors do; 64 bad arguments or\n"
	      "  an unreadable zone file;\n"
	      "  70 no verdict (out of memory, or the DNS resolver could not start or\n"
	      "  could not send a question); 75 incomplete: the time limit was reached.\n",
	      f);
}

static int parse_args(int argc, char **argv, struct lint_opts *o)
{
	const struct cli_opt specs[] = {
		{ "--zone", &o->zone, NULL },     { "--dns", &o->dns, NULL },
		{ "--timeout", &o->timeout, NULL }, { "--tries", &o->tries, NULL },
		{ "--record", &o->record, NULL }, { "--domain", &o->domain, NULL },
		{ "--batch", &o->batch, NULL },   { "--time-limit", &o->time_limit, NULL },
		{ "--json", NULL, &o->json },     { "--help", NULL, &o->help },
	};

	memset(o, 0, sizeof(*o));
	return cli_take_args(CMD, specs, sizeof(specs) / sizeof(specs[0]), argc, argv,
			     &o->arg_domain);
}

static int check_combination(const struct lint_opts *o)
{
	const char *real_dns = o->dns ? "--dns" : o->timeout ? "--timeout" : o->tries ? "--tries" : NULL;

	if (o->zone != NULL && real_dns != NULL) {
		cli_error(CMD, "%s is for real DNS and cannot be used with --zone", real_dns);
		return -1;
	}
	if (o->batch != NULL && (o->record != NULL || o->arg_domain != NULL)) {
		cli_error(CMD, "--batch reads the domains from its file: no DOMAIN or --record");
		return -1;
	}
	if (o->batch != NULL)
		return 0;
	if (o->record != NULL && o->arg_domain != NULL) {
		cli_error(CMD, "give DOMAIN or --record, not both (--domain names the record's domain)");
		return -1;
	}
	if (o->record == NULL && o->domain != NULL) {
		cli_error(CMD, "--domain goes with --record; to check a domain, give it as DOMAIN");
		return -1;
	}
	if (o->record == NULL && o->arg_domain == NULL) {
		cli_error(CMD, "missing DOMAIN (or --record TEXT)");
		return -1;
	}
	return 0;
}

/* ---- --record "..." "..." ----------------------------------------------- */

struct strings {
	char *joined;
	size_t len;
	const char *strs[LINT_MAX_STRINGS];
	size_t lens[LINT_MAX_STRINGS];
	size_t n;
};

/* One quoted string at s[*i] (at its '"'), decoded into out; \X and \DDD as in zone files. */
static int read_quoted(const char *s, size_t *i, char *out, size_t *n)
{
	size_t j = *i + 1;
	unsigned v;

	while (s[j] != '"') {
		if (s[j] == '\0')
			return -1;
		if (s[j] != '\\') {
			out[(*n)++] = s[j++];
			continue;
		}
		j++;
		if (spfkit__is_digit((unsigned char)s[j]) && spfkit__is_digit((unsigned char)s[j + 1]) &&
		    spfkit__is_digit((unsigned char)s[j + 2])) {
			v = (unsigned)(s[j] - '0') * 100 + (unsigned)(s[j + 1] - '0') * 10 +
			    (unsigned)(s[j + 2] - '0');
			if (v > 255)
				return -1;
			out[(*n)++] = (char)v;
			j += 3;
		} else if (s[j] != '\0') {
			out[(*n)++] = s[j++];
		} else {
			return -1;
		}
	}
	*i = j + 1;
	return 0;
}

/* Split `"a" "b"` into strings, joined as DNS readers join them (§3.3). */
static int parse_strings(const char *s, struct strings *st, struct lint_report *r)
{
	size_t i = 0, n = 0, start;
	char *buf;

	buf = spfkit__arena_alloc(&r->arena, strlen(s) + 1);
	if (buf == NULL)
		return SPFKIT_ENOMEM;
	st->n = 0;
	while (s[i] != '\0') {
		if (s[i] == ' ' || s[i] == '\t') {
			i++;
			continue;
		}
		if (s[i] != '"' || st->n == LINT_MAX_STRINGS)
			return SPFKIT_ESYNTAX;
		start = n;
		if (read_quoted(s, &i, buf, &n) != 0)
			return SPFKIT_ESYNTAX;
		st->strs[st->n] = buf + start;
		st->lens[st->n] = n - start;
		st->n++;
	}
	buf[n] = '\0';
	st->joined = buf;
	st->len = n;
	return 0;
}

/* ---- the run -------------------------------------------------------------- */

static int open_resolver(const struct lint_opts *o, struct cli_resolver *res)
{
	return cli_resolver_open_texts(CMD, o->zone, o->dns, o->timeout, o->tries, res);
}

static int set_input(const struct lint_opts *o, struct lint_input *in, struct strings *st,
		     struct lint_report *r)
{
	memset(in, 0, sizeof(*in));
	in->flatten_check = 1;
	in->domain = o->record != NULL ? o->domain : o->arg_domain;
	if (o->record == NULL)
		return 0;
	if (o->record[0] != '"') {
		in->record = o->record;
		in->record_len = strlen(o->record);
		return 0;
	}
	if (parse_strings(o->record, st, r) != 0) {
		cli_error(CMD, "--record: a text starting with '\"' must be quoted strings, "
			       "as in a zone file: \"v=spf1 ...\" \"...\"");
		return LINT_EXIT_USAGE;
	}
	in->record = st->joined;
	in->record_len = st->len;
	in->strs = st->strs;
	in->lens = st->lens;
	in->nstrs = st->n;
	return 0;
}

/* Lint one input and print its report; the findings' status, or LINT_EXIT_INTERNAL. */
static int lint_one(const struct lint_opts *o, struct spfkit_resolver *resolver,
		    const struct lint_input *in, struct lint_report *r)
{
	struct lint_dns dns;
	int rc;

	int incomplete;

	spfkit__lint_dns_init(&dns, resolver, r);
	spfkit__lint_dns_set_time_limit(&dns, o->limit_s);
	rc = spfkit__lint_run(&dns, in);
	incomplete = lint_dns_incomplete(CMD, &dns);
	spfkit__lint_dns_free(&dns);
	if (rc != 0 && rc != SPFKIT_E2BIG) {
		cli_error(CMD, "cannot finish: %s", spfkit_strerror(rc));
		return LINT_EXIT_INTERNAL;
	}
	if (rc == SPFKIT_E2BIG)
		cli_error(CMD, "stopped early: over %u DNS questions or too many findings",
			  LINT_MAX_QUESTIONS);
	if (!o->json) {
		lint_print_text(stdout, r);
		return incomplete ? LINT_EXIT_INCOMPLETE : spfkit__lint_exit_status(r);
	}
	rc = lint_print_json(stdout, r);
	if (rc == 0)
		return incomplete ? LINT_EXIT_INCOMPLETE : spfkit__lint_exit_status(r);
	cli_error(CMD, "cannot write the JSON: %s", spfkit_strerror(rc));
	return LINT_EXIT_INTERNAL;
}

/* The worse of two statuses: internal failures, then errors, then warnings. */
static int worse(int a, int b)
{
	if (a == LINT_EXIT_INTERNAL || b == LINT_EXIT_INTERNAL)
		return LINT_EXIT_INTERNAL;
	return a > b ? a : b;
}

/* One domain per line; a report each, from a fresh report and cache. */
static int run_batch(const struct lint_opts *o, struct spfkit_resolver *resolver)
{
	FILE *f = strcmp(o->batch, "-") == 0 ? stdin : fopen(o->batch, "r");
	struct lint_report r;
	struct lint_input in;
	char line[LINT_LINE_MAX + 2];
	size_t len;
	int status = 0, first = 1;

	if (f == NULL) {
		cli_error(CMD, "%.200s: cannot open", o->batch);
		return LINT_EXIT_USAGE;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		len = strcspn(line, "\r\n");
		if (len > LINT_LINE_MAX) {
			cli_error(CMD, "%.200s: a line longer than %u bytes", o->batch, LINT_LINE_MAX);
			status = LINT_EXIT_USAGE;
			break;
		}
		line[len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (!o->json && !first)
			putc('\n', stdout);
		first = 0;
		memset(&in, 0, sizeof(in));
		in.flatten_check = 1;
		in.domain = line;
		spfkit__lint_report_init(&r);
		status = worse(status, lint_one(o, resolver, &in, &r));
		spfkit__lint_report_free(&r);
	}
	if (f != stdin)
		fclose(f);
	return status;
}

static int run(const struct lint_opts *o, struct lint_report *r)
{
	struct cli_resolver res;
	struct lint_input in;
	struct strings *st;
	int status;

	st = spfkit__zalloc(NULL, sizeof(*st));
	if (st == NULL) {
		cli_error(CMD, "out of memory");
		return LINT_EXIT_INTERNAL;
	}
	status = o->batch != NULL ? 0 : set_input(o, &in, st, r);
	if (status == 0)
		status = open_resolver(o, &res);
	if (status != 0) {
		spfkit__free(NULL, st);
		return status;
	}
	if (o->batch != NULL)
		status = run_batch(o, res.resolver);
	else
		status = lint_one(o, res.resolver, &in, r);
	cli_resolver_close(&res);
	spfkit__free(NULL, st);
	return status;
}

int cli_lint_main(int argc, char **argv)
{
	struct lint_report r;
	struct lint_opts o;
	int status;

	if (parse_args(argc, argv, &o) != 0)
		return LINT_EXIT_USAGE;
	if (o.help) {
		cli_lint_usage(stdout);
		return 0;
	}
	if (check_combination(&o) != 0 || lint_time_limit_option(CMD, o.time_limit, &o.limit_s) != 0)
		return LINT_EXIT_USAGE;
	spfkit__lint_report_init(&r);
	status = run(&o, &r);
	spfkit__lint_report_free(&r);
	return status;
}
