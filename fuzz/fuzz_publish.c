/*
 * lint and tree over a hostile zone, through the public API that the
 * Python binding uses (<spfkit/publish.h>): the input is a domain on the
 * first line and then a zone file. The walk runs with the tree, and
 * every finding and node is read back; what the header promises of them
 * (non-NULL texts, counts that add up, a tree without cycles) is
 * checked, anything else aborts. Under ASan/UBSan this also finds
 * crashes, leaks and undefined behaviour on the way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spfkit/spfkit.h>

/* Deeper than the walk ever goes (it stops at 16 levels): a cycle. */
#define DEPTH_MAX 64

static void must(int ok)
{
	if (!ok)
		abort();
}

static void check_node(const struct spfkit_tree_node *n, unsigned depth)
{
	const struct spfkit_tree_node *c;
	size_t i;

	must(depth < DEPTH_MAX);
	must(n->how <= SPFKIT_TREE_REDIRECT);
	must((n->via == NULL) == (depth == 0));
	must(n->record != NULL || n->record_len == 0);
	must(n->lookups_subtree >= n->lookups_here);
	must(n->voids_ipv4_subtree >= n->voids_ipv4_here);
	must(n->voids_ipv6_subtree >= n->voids_ipv6_here);
	must(n->ipv4_here != NULL && n->ipv6_here != NULL);
	must(n->ipv4_subtree != NULL && n->ipv6_subtree != NULL);
	for (i = 0; i < n->nvoids; i++)
		must(n->voids[i].type != NULL && n->voids[i].name != NULL);
	for (i = 0; i < n->ndynamic; i++)
		must(n->dynamic[i] != NULL);
	for (i = 0; i < n->nother_records; i++)
		must(n->other_records[i].text != NULL);
	for (c = n->child; c != NULL; c = c->next)
		check_node(c, depth + 1);
}

static void check_run(const struct spfkit_lint *l)
{
	const struct spfkit_lint_summary *s = spfkit_lint_summary(l);
	const struct spfkit_lint_finding *f;
	size_t i, n = spfkit_lint_count(l), by_severity[3] = {0, 0, 0};

	must(s != NULL);
	for (i = 0; i < n; i++) {
		f = spfkit_lint_finding(l, i);
		must(f != NULL && f->id != NULL && f->message != NULL);
		must(f->severity <= SPFKIT_LINT_NOTICE);
		by_severity[f->severity]++;
	}
	must(spfkit_lint_finding(l, n) == NULL);
	must(by_severity[0] == s->errors && by_severity[1] == s->warnings &&
	     by_severity[2] == s->notices);
	if (spfkit_lint_tree(l) != NULL)
		check_node(spfkit_lint_tree(l), 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nl;
	struct spfkit_lint_options opt;
	struct spfkit_resolver *r = NULL;
	struct spfkit_zone *zone = NULL;
	struct spfkit_lint *l = NULL;
	size_t line;
	char err[256];

	if (size > 65536)
		return 0;
	nl = memchr(p, '\n', size);
	line = nl != NULL ? (size_t)(nl - p) : size;
	if (line == 0 || memchr(p, '\0', line) != NULL)
		return 0;
	if (spfkit_zone_new(NULL, &zone) != 0)
		return 0;
	/* a zone that fails part-way keeps what loaded: lint that too */
	(void)spfkit_zone_load_text(zone, p + line, size - line, "fuzz", "example.com", err,
				    sizeof(err));
	if (spfkit_zone_resolver(zone, &r) == 0) {
		spfkit_lint_options_init(&opt);
		opt.domain = p;
		opt.domain_len = line;
		opt.tree = 1;
		if (spfkit_lint_run(r, &opt, &l) == 0)
			check_run(l);
		spfkit_lint_free(l);
		spfkit_resolver_free(r);
	}
	spfkit_zone_free(zone);
	return 0;
}
