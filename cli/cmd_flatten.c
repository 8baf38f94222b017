/*
 * `spfkit flatten`: a domain's SPF tree as an equivalent set of records
 * made of ip4:/ip6: terms, under the 10-lookup limit (RFC 7208 §4.6.4),
 * as a BIND zone fragment; proven equal to the original by evaluating
 * both (flatten_verify.c). --check-live compares what is published with
 * what the source resolves to now, for a cron job.
 *
 * The run is lib/publish's (flatten_run.c): lint's walk of the source,
 * watched by the model; refusal on temperror or a permerror of the
 * source; the records; the lookups after; the proof. Here: the options,
 * the output and the exit status.
 */
#include <string.h>
#include <time.h>

#include "flatten.h"

#define CMD "flatten"
#define FLAT_EXIT_OK 0
#define FLAT_EXIT_DRIFT 1
#define FLAT_EXIT_ERROR 2
#define FLAT_MAX_KEEP 64u
#define FLAT_DEFAULT_SAMPLES 256
#define FLAT_DEFAULT_SEED 1
#define FLAT_MAX_SAMPLES 100000u
#define FLAT_SOURCE_PREFIX "_spf-source."
#define FLAT_LINE_MAX 1024u /* --batch: a domain per line */

struct flat_opts {
	const char *zone, *dns, *timeout, *tries, *source, *seed, *samples, *ttl, *batch;
	const char *time_limit;
	unsigned limit_s; /* --time-limit, parsed */
	const char *domain;
	int chain, check_live, json, help;
	const char *keep[FLAT_MAX_KEEP];
	size_t nkeep;
	int seed_n, samples_n, ttl_n;
	char source_name[300];
	struct flat_problem why; /* the last error, for --batch --json */
};

/* The problem that stopped a run (o->why), on stderr. */
static void tell(const struct flat_opts *o)
{
	cli_error(CMD, "%s", o->why.text);
}

/* o->why is an error, said at once. */
static void fail(struct flat_opts *o, const char *text)
{
	spfkit__flat_run_problem(&o->why, "error", "%s", text);
	tell(o);
}

void cli_flatten_usage(FILE *f)
{
	fputs("Usage: spfkit flatten DOMAIN [--zone FILE | --dns HOST[:PORT],...]\n"
	      "                      [--source NAME] [--keep include:NAME]... [--chain]\n"
	      "                      [--ttl SECONDS] [--seed N] [--samples N] [--json]\n"
	      "       spfkit flatten DOMAIN --check-live [--source NAME] [same options]\n"
	      "       spfkit flatten --batch FILE|- [same options]\n"
	      "\n"
	      "Write DOMAIN's SPF record (RFC 7208) and everything it includes as an\n"
	      "equivalent set of records made of ip4: and ip6: terms, as a BIND zone\n"
	      "fragment: the root record and, when it does not fit alone, _spf1.DOMAIN\n"
	      "... _spfN.DOMAIN records it includes. Each include's pass set is computed\n"
	      "in term order (a -ip4 inside an include keeps its addresses out), a and\n"
	      "mx become the addresses they resolve to (with their prefix lengths), the\n"
	      "root's qualifiers, final all or redirect, and exp= are kept. exists, ptr,\n"
	      "terms with macros and --keep includes stay as written, in their place;\n"
	      "an include whose records hold such a term stays an include. A redirect=\n"
	      "whose target flattens is inlined. Strings are at most 255 octets, each\n"
	      "record's answer at most 450 (RFC 7208 sections 3.3, 3.4), counting the\n"
	      "other TXT records at the name, and the whole DNS answer there at most 512.\n"
	      "An _spfN name the source reads (the owner's own _spf1.DOMAIN) is left\n"
	      "alone: the numbering skips it. The fragment's comments give the source's\n"
	      "hash, the time, the minimum TTL and the DNS-querying terms before and after.\n"
	      "\n"
	      "Before writing anything, original and flattened records are evaluated for\n"
	      "every boundary address of every range (first, last and the addresses\n"
	      "just outside) and a random sample; any difference is an error. The\n"
	      "original is evaluated with the lookup and void limits raised, so the\n"
	      "addresses where it gave permerror for passing them are counted, not\n"
	      "called differences (docs/flatten.md).\n"
	      "\n"
	      "Options:\n"
	      "  DOMAIN                the domain whose record is flattened\n"
	      "  --zone FILE           answer from this zone file, no network\n"
	      "  --dns HOST[:PORT][,...]\n"
	      "                        real DNS through these servers (default: the\n"
	      "                        servers of /etc/resolv.conf)\n"
	      "  --timeout MS          real DNS: timeout of one try of a query\n"
	      "  --tries N             real DNS: tries per query\n"
	      "  --time-limit S        give up reading the tree after S seconds (default\n"
	      "                        60): nothing is written, exit status 2\n"
	      "  --source NAME         read the record to flatten from NAME's TXT, as\n"
	      "                        DOMAIN's record (a and mx without a name mean\n"
	      "                        DOMAIN); once DOMAIN publishes the flattened set,\n"
	      "                        keep the original at _spf-source.DOMAIN\n"
	      "  --keep include:NAME   keep this include as written (repeatable)\n"
	      "  --chain               each _spfN record includes the next, instead of\n"
	      "                        the root including them all\n"
	      "  --ttl SECONDS         TTL of the records (default: the smallest TTL read)\n"
	      "  --seed N              seed of the random sample (default 1)\n"
	      "  --samples N           random addresses checked (default 256, at most\n"
	      "                        100000)\n"
	      "  --check-live          compare the published set at DOMAIN with what the\n"
	      "                        source (--source, default _spf-source.DOMAIN)\n"
	      "                        resolves to now, and print the blocks added and\n"
	      "                        removed\n"
	      "  --json                one JSON object instead of the zone fragment\n"
	      "  --batch FILE|-        flatten each domain of FILE (one per line; blank\n"
	      "                        lines and # comments skipped); with --json one\n"
	      "                        line per domain, an \"error\" member for a failure\n"
	      "                        (\"refused\", \"difference\" or \"error\")\n"
	      "  --help                this text\n"
	      "\n"
	      "Exit status:\n"
	      "  0 the records were written (--check-live: published and source agree);\n"
	      "  1 --check-live: they differ; 2 error: bad arguments, a DNS failure\n"
	      "  (temperror, or the time limit), a permerror in the source (syntax, a missing include\n"
	      "  target, a loop, several records, more than 10 MX hosts), a name that is\n"
	      "  no domain, a tree the walk cannot follow (over 16 levels, an include\n"
	      "  ending in +all that keeps some addresses out first), records that\n"
	      "  cannot fit, more than 10 lookups after flattening, or a difference\n"
	      "  found by the check.\n",
	      f);
}

/* --keep may be given many times: take those out before the shared parser sees argv. */
static int take_keeps(int argc, char **argv, struct flat_opts *o, char **rest, int *nrest)
{
	int i;
	const char *v;

	*nrest = 0;
	for (i = 0; i < argc; i++) {
		v = NULL;
		if (strcmp(argv[i], "--keep") == 0) {
			if (i + 1 >= argc) {
				cli_error(CMD, "option --keep needs a value");
				return -1;
			}
			v = argv[++i];
		} else if (strncmp(argv[i], "--keep=", 7) == 0) {
			v = argv[i] + 7;
		}
		if (v == NULL) {
			rest[(*nrest)++] = argv[i];
			continue;
		}
		if (strncmp(v, "include:", 8) != 0 || v[8] == '\0') {
			cli_error(CMD, "--keep '%.100s': give include:NAME", v);
			return -1;
		}
		if (o->nkeep >= FLAT_MAX_KEEP) {
			cli_error(CMD, "more than %u --keep options", FLAT_MAX_KEEP);
			return -1;
		}
		o->keep[o->nkeep++] = v + 8;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct flat_opts *o)
{
	const struct cli_opt specs[] = {
		{ "--zone", &o->zone, NULL },       { "--dns", &o->dns, NULL },
		{ "--timeout", &o->timeout, NULL }, { "--tries", &o->tries, NULL },
		{ "--source", &o->source, NULL },   { "--seed", &o->seed, NULL },
		{ "--samples", &o->samples, NULL }, { "--ttl", &o->ttl, NULL },
		{ "--chain", NULL, &o->chain },     { "--check-live", NULL, &o->check_live },
		{ "--json", NULL, &o->json },       { "--help", NULL, &o->help },
		{ "--batch", &o->batch, NULL },     { "--time-limit", &o->time_limit, NULL },
	};
	char **rest;
	int nrest, rc = -1;

	rest = spfkit__calloc(NULL, (size_t)argc + 1, sizeof(*rest));
	if (rest == NULL) {
		cli_error(CMD, "out of memory");
		return -1;
	}
	if (take_keeps(argc, argv, o, rest, &nrest) == 0)
		rc = cli_take_args(CMD, specs, sizeof(specs) / sizeof(specs[0]), nrest, rest,
				   &o->domain);
	spfkit__free(NULL, rest);
	return rc;
}

static int check_args(struct flat_opts *o)
{
	const char *real_dns = o->dns ? "--dns" : o->timeout ? "--timeout" : o->tries ? "--tries" : NULL;

	o->seed_n = FLAT_DEFAULT_SEED;
	o->samples_n = FLAT_DEFAULT_SAMPLES;
	if (lint_time_limit_option(CMD, o->time_limit, &o->limit_s) != 0)
		return -1;
	if (o->zone != NULL && real_dns != NULL) {
		cli_error(CMD, "%s is for real DNS and cannot be used with --zone", real_dns);
		return -1;
	}
	if (o->batch != NULL && (o->domain != NULL || o->source != NULL || o->check_live)) {
		cli_error(CMD, "--batch reads the domains from its file: no DOMAIN, --source or "
			       "--check-live");
		return -1;
	}
	if (o->batch == NULL && o->domain == NULL) {
		cli_error(CMD, "missing DOMAIN");
		return -1;
	}
	if (o->domain != NULL && (o->domain[0] == '\0' || strcmp(o->domain, ".") == 0)) {
		cli_error(CMD, "'%s' is not a domain name", o->domain);
		return -1;
	}
	if (o->domain != NULL && strlen(o->domain) > 253) {
		cli_error(CMD, "'%.100s...' is longer than a domain name can be", o->domain);
		return -1;
	}
	if ((o->seed != NULL && cli_parse_count(o->seed, 2147483647ul, &o->seed_n) != 0 &&
	     strcmp(o->seed, "0") != 0) ||
	    (o->samples != NULL && cli_parse_count(o->samples, FLAT_MAX_SAMPLES, &o->samples_n) != 0 &&
	     strcmp(o->samples, "0") != 0) ||
	    (o->ttl != NULL && cli_parse_count(o->ttl, 2147483647ul, &o->ttl_n) != 0)) {
		cli_error(CMD, "--seed, --samples and --ttl take a decimal number (--ttl at least 1)");
		return -1;
	}
	if (o->seed != NULL && strcmp(o->seed, "0") == 0)
		o->seed_n = 0;
	if (o->samples != NULL && strcmp(o->samples, "0") == 0)
		o->samples_n = 0;
	if (o->check_live && o->source == NULL && strlen(o->domain) + 13 < sizeof(o->source_name)) {
		snprintf(o->source_name, sizeof(o->source_name), "%s%s", FLAT_SOURCE_PREFIX, o->domain);
		o->source = o->source_name;
	}
	return 0;
}

/* ---- the run, as lib/publish's flatten_run.c has it -------------------------- */

static void run_opts(const struct flat_opts *o, struct flat_run_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->domain = o->domain;
	ro->source = o->source;
	ro->keep = o->keep;
	ro->nkeep = o->nkeep;
	ro->limit_s = o->limit_s;
	ro->chain = o->chain;
	ro->seed = (unsigned long)o->seed_n;
	ro->samples = (unsigned)o->samples_n;
	ro->has_ttl = o->ttl != NULL;
	ro->ttl = (uint32_t)o->ttl_n;
	ro->now = (int64_t)time(NULL);
}

/* ---- the new records -------------------------------------------------------- */

static void put_time(char *buf, size_t size, time_t now)
{
	struct tm tm;

	if (gmtime_r(&now, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "%lld", (long long)now);
}

static void print_zone(struct flat_opts *o, const struct flat_walk *w,
		       const struct flat_result *res, const char *when)
{
	struct spfkit__buf b;
	size_t i;

	spfkit__buf_init(&b, NULL, 1u << 24);
	spfkit__buf_printf(&b, "; spfkit flatten %s: %zu record%s, generated %s\n", o->domain,
			   res->out.n, res->out.n == 1 ? "" : "s", when);
	spfkit__buf_printf(&b, "; source: %s (%u record%s read), FNV-1a 64 %016llx, minimum TTL %u\n",
			   o->source != NULL ? o->source : o->domain, w->m.records,
			   w->m.records == 1 ? "" : "s", (unsigned long long)w->m.hash,
			   (unsigned)w->m.min_ttl);
	spfkit__buf_printf(&b, "; DNS-querying terms: %u before (worst case), %u after (limit %u)\n",
			   w->r.counts.dns_terms, res->out.lookups_after, SPFKIT_LIMIT_DNS_TERMS);
	spfkit__buf_printf(&b, "; blocks: %zu IPv4, %zu IPv6\n", res->out.blocks4, res->out.blocks6);
	for (i = 0; i < res->out.nleft; i++)
		spfkit__buf_printf(&b, "; left alone: %s (the source reads it; the new records take "
				       "other _spfN names)\n",
				   res->out.left_alone[i]);
	spfkit__buf_printf(&b, "; verified: %zu addresses, original and flattened agree",
			   res->v.addresses);
	if (res->v.permerror_removed > 0)
		spfkit__buf_printf(&b, "; %zu of them got permerror from the original (over the "
				       "RFC 7208 lookup limits) and get its intended result now",
				   res->v.permerror_removed);
	spfkit__buf_putc(&b, '\n');
	for (i = 0; i < res->out.n; i++)
		spfkit__flat_zone_line(&b, &res->out.recs[i], res->ttl);
	fputs(spfkit__buf_str(&b), stdout);
	spfkit__buf_free(&b);
}

static void print_json(struct flat_opts *o, const struct flat_walk *w,
		       const struct flat_result *res, const char *when)
{
	struct spfkit__buf b, zone;
	size_t i;

	spfkit__buf_init(&b, NULL, 1u << 24);
	spfkit__buf_init(&zone, NULL, 1u << 24);
	spfkit__buf_puts(&b, "{\"domain\":");
	cli_json_cstr(&b, o->domain);
	spfkit__buf_puts(&b, ",\"source\":");
	cli_json_cstr(&b, o->source != NULL ? o->source : o->domain);
	spfkit__buf_puts(&b, ",\"source_record\":");
	cli_json_str(&b, w->text, w->len);
	spfkit__buf_printf(&b, ",\"hash\":\"fnv1a64:%016llx\",\"generated\":\"%s\",\"min_ttl\":%u,"
			       "\"ttl\":%u,\"records_read\":%u,\"lookups_before\":%u,"
			       "\"lookups_after\":%u,\"blocks_ipv4\":%zu,\"blocks_ipv6\":%zu,"
			       "\"records\":[",
			   (unsigned long long)w->m.hash, when, (unsigned)w->m.min_ttl,
			   (unsigned)res->ttl, w->m.records, w->r.counts.dns_terms,
			   res->out.lookups_after, res->out.blocks4, res->out.blocks6);
	for (i = 0; i < res->out.n; i++) {
		const struct flat_record *r = &res->out.recs[i];

		spfkit__buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		cli_json_cstr(&b, r->name);
		spfkit__buf_puts(&b, ",\"text\":");
		cli_json_str(&b, r->text, r->len);
		spfkit__buf_printf(&b,
				   ",\"strings\":%zu,\"answer_octets\":%zu,\"dns_answer_octets\":%zu}",
				   r->strings, r->answer, r->wire);
		spfkit__flat_zone_line(&zone, r, res->ttl);
	}
	spfkit__buf_puts(&b, "],\"left_alone\":[");
	for (i = 0; i < res->out.nleft; i++) {
		if (i > 0)
			spfkit__buf_putc(&b, ',');
		cli_json_cstr(&b, res->out.left_alone[i]);
	}
	spfkit__buf_printf(&b, "],\"verified\":{\"addresses\":%zu,\"differences\":%zu,"
			       "\"permerror_removed\":%zu},\"zone\":",
			   res->v.addresses, res->v.differences, res->v.permerror_removed);
	cli_json_str(&b, zone.data != NULL ? zone.data : "", zone.len);
	spfkit__buf_puts(&b, "}\n");
	fputs(b.err == 0 ? spfkit__buf_str(&b) : "{\"error\":\"output too large\"}\n", stdout);
	spfkit__buf_free(&b);
	spfkit__buf_free(&zone);
}

/* The records of the walk w, printed: an exit status. */
static int flatten(struct flat_opts *o, const struct flat_run_opts *ro, struct flat_walk *w,
		   struct flat_result *res)
{
	char when[40];

	if (spfkit__flat_run_records(w, ro, res, &o->why) != 0) {
		tell(o);
		if (o->why.kind != NULL && strcmp(o->why.kind, "difference") == 0)
			fputs(spfkit__buf_str(&res->v.report), stderr);
		return FLAT_EXIT_ERROR;
	}
	put_time(when, sizeof(when), time(NULL));
	if (o->json)
		print_json(o, w, res, when);
	else
		print_zone(o, w, res, when);
	return fflush(stdout) == 0 ? FLAT_EXIT_OK : FLAT_EXIT_ERROR;
}

/* ---- --check-live ------------------------------------------------------------ */

static void print_live_json(struct flat_opts *o, const struct flat_live *d)
{
	struct spfkit__buf j;

	spfkit__buf_init(&j, NULL, 1u << 25);
	spfkit__buf_puts(&j, "{\"domain\":");
	cli_json_cstr(&j, o->domain);
	spfkit__buf_puts(&j, ",\"source\":");
	cli_json_cstr(&j, o->source);
	spfkit__buf_printf(&j, ",\"equal\":%s,\"added\":%zu,\"removed\":%zu,\"other\":%zu,\"diff\":",
			   d->added + d->removed + d->other ? "false" : "true", d->added,
			   d->removed, d->other);
	cli_json_str(&j, d->text.data != NULL ? d->text.data : "", d->text.len);
	spfkit__buf_printf(&j, ",\"added_blocks\":[%s],\"removed_blocks\":[%s]}\n",
			   spfkit__buf_str(&d->json_added), spfkit__buf_str(&d->json_removed));
	fputs(j.err == 0 ? spfkit__buf_str(&j) : "{\"error\":\"output too large\"}\n", stdout);
	spfkit__buf_free(&j);
}

static int check_live(struct flat_opts *o, const struct flat_run_opts *ro,
		      struct spfkit_resolver *res)
{
	struct flat_live d;
	int status = FLAT_EXIT_ERROR;

	spfkit__flat_live_init(&d);
	if (spfkit__flat_run_live(ro, res, &d, &o->why) != 0) {
		tell(o);
	} else if (o->json) {
		print_live_json(o, &d);
		status = d.added + d.removed + d.other ? FLAT_EXIT_DRIFT : FLAT_EXIT_OK;
	} else if (d.added + d.removed + d.other == 0) {
		printf("%s: the published records match what %s resolves to now\n", o->domain,
		       o->source);
		status = FLAT_EXIT_OK;
	} else {
		printf("%s: drift: the published records differ from what %s resolves to now "
		       "(+ in the source now, not published; - published, no longer in the "
		       "source)\n%s",
		       o->domain, o->source, spfkit__buf_str(&d.text));
		status = FLAT_EXIT_DRIFT;
	}
	spfkit__flat_live_free(&d);
	return fflush(stdout) == 0 ? status : FLAT_EXIT_ERROR;
}

/* ---- main --------------------------------------------------------------------- */

/* One domain (o->domain): flatten it, or --check-live. */
static int run_one(struct flat_opts *o, struct spfkit_resolver *res)
{
	struct flat_run_opts ro;
	struct flat_walk *w;
	struct flat_result *r;
	int status;

	memset(&o->why, 0, sizeof(o->why));
	run_opts(o, &ro);
	if (o->check_live)
		return check_live(o, &ro, res);
	w = spfkit__zalloc(NULL, sizeof(*w));
	r = spfkit__zalloc(NULL, sizeof(*r));
	if (w == NULL || r == NULL) {
		fail(o, "out of memory");
		status = FLAT_EXIT_ERROR;
	} else if (spfkit__flat_run_walk(w, &ro, res, 1, &o->why) != 0) {
		tell(o);
		status = FLAT_EXIT_ERROR;
	} else {
		status = flatten(o, &ro, w, r);
	}
	if (r != NULL)
		spfkit__flat_run_result_free(r);
	if (w != NULL)
		spfkit__flat_run_walk_free(w);
	spfkit__free(NULL, w);
	spfkit__free(NULL, r);
	return status;
}

/* --batch: a domain per line; with --json, a line for each failure too. */
static int run_batch(struct flat_opts *o, struct spfkit_resolver *res)
{
	FILE *f = strcmp(o->batch, "-") == 0 ? stdin : fopen(o->batch, "r");
	char line[FLAT_LINE_MAX + 2];
	struct spfkit__buf j;
	size_t len;
	int status = FLAT_EXIT_OK, first = 1;

	if (f == NULL) {
		cli_error(CMD, "%.200s: cannot open", o->batch);
		return FLAT_EXIT_ERROR;
	}
	spfkit__buf_init(&j, NULL, 1u << 16);
	while (fgets(line, sizeof(line), f) != NULL) {
		len = strcspn(line, "\r\n");
		if (len > FLAT_LINE_MAX) {
			cli_error(CMD, "%.200s: a line longer than %u bytes", o->batch, FLAT_LINE_MAX);
			status = FLAT_EXIT_ERROR;
			break;
		}
		line[len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		o->domain = line;
		if (!o->json && !first)
			putc('\n', stdout);
		first = 0;
		if (run_one(o, res) == FLAT_EXIT_OK)
			continue;
		status = FLAT_EXIT_ERROR;
		if (!o->json)
			continue;
		spfkit__buf_reset(&j);
		spfkit__buf_puts(&j, "{\"domain\":");
		cli_json_cstr(&j, line);
		spfkit__buf_printf(&j, ",\"error\":\"%s\",\"message\":",
				   o->why.kind != NULL ? o->why.kind : "error");
		cli_json_cstr(&j, o->why.text);
		spfkit__buf_puts(&j, "}\n");
		fputs(spfkit__buf_str(&j), stdout);
	}
	spfkit__buf_free(&j);
	if (f != stdin)
		fclose(f);
	return fflush(stdout) == 0 ? status : FLAT_EXIT_ERROR;
}

static int run(struct flat_opts *o)
{
	struct cli_resolver res;
	int status;

	if (cli_resolver_open_texts(CMD, o->zone, o->dns, o->timeout, o->tries, &res) != 0)
		return FLAT_EXIT_ERROR;
	status = o->batch != NULL ? run_batch(o, res.resolver) : run_one(o, res.resolver);
	cli_resolver_close(&res);
	return status;
}

int cli_flatten_main(int argc, char **argv)
{
	struct flat_opts *o = spfkit__zalloc(NULL, sizeof(*o));
	int status;

	if (o == NULL) {
		cli_error(CMD, "out of memory");
		return FLAT_EXIT_ERROR;
	}
	if (parse_args(argc, argv, o) != 0)
		status = FLAT_EXIT_ERROR;
	else if (o->help) {
		cli_flatten_usage(stdout);
		status = FLAT_EXIT_OK;
	} else if (check_args(o) != 0)
		status = FLAT_EXIT_ERROR;
	else
		status = run(o);
	spfkit__free(NULL, o);
	return status;
}
