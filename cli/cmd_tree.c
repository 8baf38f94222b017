/*
 * `spfkit tree`: the include/redirect tree of a domain's SPF record,
 * with per record the lookups it costs and what its subtree costs in
 * the worst case, its void lookups, the addresses it authorises, its
 * TTL and its terms made by macros. The tree is lint's walk, watched
 * (tree.h): the same resolver, parser and counting rules as lint.
 * Output as text, --json, --dot (Graphviz), --svg (spfkit's own
 * drawing, tree_svg.c) or --html (the picture, lint's findings and
 * flatten's proposal, tree_html.c); with --output the file appears whole
 * or not at all (temp file, rename).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tree.h"

#define CMD "tree"
#define TREE_EXIT_USAGE 64       /* as lint: bad arguments, unreadable zone file */
#define TREE_EXIT_INTERNAL 70    /* out of memory, the resolver failed, cannot write */
#define TREE_PATH_MAX 4096u

struct tree_opts {
	const char *zone, *dns, *timeout, *tries, *record, *domain, *output, *time_limit;
	const char *arg_domain;
	int json, dot, svg, html, help;
	unsigned limit_s; /* --time-limit, parsed */
};

void cli_tree_usage(FILE *f)
{
	fputs("Usage: spfkit tree DOMAIN [--zone FILE | --dns HOST[:PORT],...]\n"
	      "                   [--json | --dot | --svg | --html] [--output FILE]\n"
	      "       spfkit tree --record 'v=spf1 ...' [--domain DOMAIN] [same options]\n"
	      "\n"
	      "Show the include/redirect tree of a domain's SPF record (RFC 7208). For each\n"
	      "record: its text, its TTL, the DNS-querying terms it costs and what its\n"
	      "subtree costs in the worst case (limit 10), its void lookups and their names\n"
	      "(limit 2), the addresses its pass terms authorise (IPv4 and IPv6: ip4/ip6\n"
	      "ranges, a/mx targets' addresses as resolved, with the subtree's), and its\n"
	      "terms made by macros. The counts are spfkit lint's, by the evaluator's rules\n"
	      "(docs/lint.md); a loop, or a record reached a second time, is marked and not\n"
	      "expanded again.\n"
	      "\n"
	      "Input (as spfkit lint):\n"
	      "  DOMAIN                the domain whose record is the root\n"
	      "  --record TEXT         this record instead of the domain's\n"
	      "  --domain DOMAIN       with --record: the domain it is for\n"
	      "  --zone FILE           answer from this zone file, no network\n"
	      "  --dns HOST[:PORT][,...]\n"
	      "                        real DNS through these servers (default: the\n"
	      "                        servers of /etc/resolv.conf)\n"
	      "  --timeout MS          real DNS: timeout of one try of a query\n"
	      "  --tries N             real DNS: tries per query\n"
	      "  --time-limit S        give up the walk after S seconds (default 60)\n"
	      "\n"
	      "Output (text by default):\n"
	      "  --json                the tree as one JSON object\n"
	      "  --dot                 a Graphviz digraph\n"
	      "  --svg                 an SVG picture, drawn by spfkit (no Graphviz): a\n"
	      "                        box per record, growing downward, 1200 px wide;\n"
	      "                        red: the path where the count of lookups or void\n"
	      "                        lookups goes over its limit; grey: records never\n"
	      "                        reached; orange: a branch with 2 void lookups\n"
	      "  --html                one self-contained HTML page (no script, nothing\n"
	      "                        fetched): the picture with spfkit lint's findings\n"
	      "                        beside the records they concern, the findings as a\n"
	      "                        table, and the records spfkit flatten would publish\n"
	      "                        (checked as flatten checks them), or why it would not\n"
	      "  --output FILE         write FILE instead of stdout; it is written to a\n"
	      "                        temporary file first and renamed, so FILE is whole\n"
	      "                        or untouched\n"
	      "  --help                this text\n"
	      "\n"
	      "Exit status:\n"
	      "  0 the tree has no error; 2 it has one: a record missing, unparsable or\n"
	      "  duplicated, an include or redirect loop, a DNS failure, or more than 10\n"
	      "  DNS terms or 2 void lookups (receivers return permerror, temperror or\n"
	      "  none; spfkit lint says more); 64 bad arguments or an unreadable zone\n"
	      "  file; 70 no tree (out of memory, the DNS resolver failed, the output\n"
	      "  could not be written); 75 incomplete: the time limit was reached (the\n"
	      "  tree is written, its unanswered branches marked as DNS failures).\n",
	      f);
}

static int parse_args(int argc, char **argv, struct tree_opts *o)
{
	const struct cli_opt specs[] = {
		{ "--zone", &o->zone, NULL },       { "--dns", &o->dns, NULL },
		{ "--timeout", &o->timeout, NULL }, { "--tries", &o->tries, NULL },
		{ "--record", &o->record, NULL },   { "--domain", &o->domain, NULL },
		{ "--output", &o->output, NULL },   { "--json", NULL, &o->json },
		{ "--time-limit", &o->time_limit, NULL },
		{ "--dot", NULL, &o->dot },         { "--svg", NULL, &o->svg },
		{ "--html", NULL, &o->html },
		{ "--help", NULL, &o->help },
	};

	memset(o, 0, sizeof(*o));
	return cli_take_args(CMD, specs, sizeof(specs) / sizeof(specs[0]), argc, argv,
			     &o->arg_domain);
}

static int check_combination(const struct tree_opts *o)
{
	const char *real_dns = o->dns ? "--dns" : o->timeout ? "--timeout" : o->tries ? "--tries" : NULL;

	if (o->json + o->dot + o->svg + o->html > 1) {
		cli_error(CMD, "give one of --json, --dot, --svg and --html");
		return -1;
	}
	if (o->zone != NULL && real_dns != NULL) {
		cli_error(CMD, "%s is for real DNS and cannot be used with --zone", real_dns);
		return -1;
	}
	if (o->record != NULL && o->arg_domain != NULL) {
		cli_error(CMD, "give DOMAIN or --record, not both (--domain names the record's domain)");
		return -1;
	}
	if (o->record == NULL && o->domain != NULL) {
		cli_error(CMD, "--domain goes with --record; to show a domain's tree, give it as DOMAIN");
		return -1;
	}
	if (o->record == NULL && o->arg_domain == NULL) {
		cli_error(CMD, "missing DOMAIN (or --record TEXT)");
		return -1;
	}
	if (o->output != NULL && strlen(o->output) + 8 > TREE_PATH_MAX) {
		cli_error(CMD, "--output: the name is too long");
		return -1;
	}
	return 0;
}

static int open_resolver(const struct tree_opts *o, struct cli_resolver *res)
{
	return cli_resolver_open_texts(CMD, o->zone, o->dns, o->timeout, o->tries, res);
}

/* ---- output: stdout, or a temporary file renamed into place --------------- */

/* A new empty file "<base>.XXXXXX" with the mode a plain create would give. */
static FILE *temp_file(const char *base, char *path, size_t size)
{
	mode_t mask = umask(0);
	FILE *f;
	int fd;

	umask(mask);
	if (snprintf(path, size, "%s.XXXXXX", base) >= (int)size)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	if (fchmod(fd, 0666 & ~mask) != 0 || (f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(path);
		return NULL;
	}
	return f;
}

/* Close f; on success rename tmp to final, else remove it. 0 or -1. */
static int finish_file(FILE *f, const char *tmp, const char *final, int ok)
{
	if (fclose(f) != 0)
		ok = 0;
	if (ok && rename(tmp, final) == 0)
		return 0;
	unlink(tmp);
	return -1;
}

static int print_as(const struct tree_opts *o, FILE *f, const struct tree *t,
		    const struct tree_html *h)
{
	if (o->html)
		return tree_print_html(f, t, h);
	if (o->json)
		return tree_print_json(f, t);
	if (o->dot)
		return tree_print_dot(f, t);
	if (o->svg)
		return tree_print_svg(f, t, NULL, 1);
	tree_print_text(f, t);
	return ferror(f) ? SPFKIT_EIO : 0;
}

static int write_output(const struct tree_opts *o, const struct tree *t,
			const struct tree_html *h)
{
	char tmp[TREE_PATH_MAX];
	FILE *f;
	int rc;

	if (o->output == NULL) {
		rc = print_as(o, stdout, t, h);
		if (rc != 0 || fflush(stdout) != 0) {
			cli_error(CMD, "cannot write the output: %s", spfkit_strerror(rc ? rc : SPFKIT_EIO));
			return TREE_EXIT_INTERNAL;
		}
		return spfkit__tree_exit_status(t);
	}
	f = temp_file(o->output, tmp, sizeof(tmp));
	if (f == NULL) {
		cli_error(CMD, "cannot create a temporary file beside %.200s", o->output);
		return TREE_EXIT_INTERNAL;
	}
	rc = print_as(o, f, t, h);
	if (finish_file(f, tmp, o->output, rc == 0) != 0) {
		cli_error(CMD, "cannot write %.200s", o->output);
		return TREE_EXIT_INTERNAL;
	}
	return spfkit__tree_exit_status(t);
}

/* ---- the run ------------------------------------------------------------------ */

/*
 * The report and the walk's answers live in a flatten walk (struct
 * flat_walk), so that --html's proposal is flatten's own run over them
 * (spfkit__flat_run_records); its model is used with --html only.
 */
static int walk(const struct tree_opts *o, struct spfkit_resolver *resolver, struct tree *t,
		struct flat_walk *w, struct tree_html *h)
{
	struct lint_input in;
	int rc = 0, incomplete;

	memset(&in, 0, sizeof(in));
	in.observe = spfkit__tree_observe;
	in.observe_arg = t;
	if (o->html) {
		/* one walk for the tree, lint's findings (as spfkit lint makes them) and
		 * the flatten model */
		rc = tree_html_watch(h);
		in.observe = tree_html_observe;
		in.observe_arg = h;
		in.flatten_check = 1;
	}
	in.domain = o->record != NULL ? o->domain : o->arg_domain;
	in.record = o->record;
	in.record_len = o->record != NULL ? strlen(o->record) : 0;
	spfkit__lint_dns_init(&w->dns, resolver, &w->r);
	spfkit__lint_dns_set_time_limit(&w->dns, o->limit_s);
	if (rc == 0)
		rc = spfkit__lint_run(&w->dns, &in);
	if (rc == 0)
		rc = spfkit__tree_add_records(t, &w->dns);
	if (rc == 0 && t->err == 0 && o->html)
		rc = tree_html_flatten(h); /* while the walk's answers are here */
	incomplete = lint_dns_incomplete(CMD, &w->dns);
	spfkit__lint_dns_free(&w->dns);
	if (rc == 0)
		rc = t->err;
	if (rc == SPFKIT_E2BIG) {
		cli_error(CMD, "stopped early: over %u DNS questions", LINT_MAX_QUESTIONS);
		rc = 0;
	}
	if (rc != 0) {
		cli_error(CMD, "cannot finish: %s", spfkit_strerror(rc));
		return TREE_EXIT_INTERNAL;
	}
	rc = write_output(o, t, h);
	return incomplete && rc != TREE_EXIT_INTERNAL ? LINT_EXIT_INCOMPLETE : rc;
}

static int run(const struct tree_opts *o)
{
	struct flat_walk *w = spfkit__zalloc(NULL, sizeof(*w));
	struct tree_html *h = spfkit__zalloc(NULL, sizeof(*h));
	struct cli_resolver res;
	struct tree t;
	int status;

	if (w == NULL || h == NULL) {
		cli_error(CMD, "out of memory");
		status = TREE_EXIT_INTERNAL;
	} else {
		status = open_resolver(o, &res);
	}
	if (status == 0) {
		spfkit__lint_report_init(&w->r);
		spfkit__tree_init(&t, &w->r);
		tree_html_init(h, &t, w);
		status = walk(o, res.resolver, &t, w, h);
		tree_html_free(h);
		spfkit__tree_free(&t);
		spfkit__lint_report_free(&w->r);
		cli_resolver_close(&res);
	}
	spfkit__free(NULL, h);
	spfkit__free(NULL, w);
	return status;
}

int cli_tree_main(int argc, char **argv)
{
	struct tree_opts *o = spfkit__zalloc(NULL, sizeof(*o));
	int status;

	if (o == NULL) {
		cli_error(CMD, "out of memory");
		return TREE_EXIT_INTERNAL;
	}
	if (parse_args(argc, argv, o) != 0) {
		status = TREE_EXIT_USAGE;
	} else if (o->help) {
		cli_tree_usage(stdout);
		status = 0;
	} else if (check_combination(o) != 0 ||
		   lint_time_limit_option(CMD, o->time_limit, &o->limit_s) != 0) {
		status = TREE_EXIT_USAGE;
	} else {
		status = run(o);
	}
	spfkit__free(NULL, o);
	return status;
}
