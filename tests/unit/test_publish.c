/*
 * The public API of lint and tree (include/spfkit/publish.h,
 * lib/publish/public.c): its arguments, and that the findings, counts
 * and tree of a small zone come out as `spfkit lint` and `spfkit tree`
 * count them (tests/python/test_lint_tree.py compares the whole output
 * with the CLI's JSON).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <spfkit/spfkit.h>

#include "zone_text.h"

static const char ZONE[] =
	"$ORIGIN example.org.\n"
	"$TTL 300\n"
	"@ IN TXT \"v=spf1 ip4:192.0.2.0/24 include:a.example.org include:b.example.org "
	"a:gone.example.org -all\"\n"
	"a IN TXT \"v=spf1 include:b.example.org ~all\"\n"
	"b IN TXT \"v=spf1 ip6:2001:db8::/64 ip4:198.51.100.1 -all\"\n"
	"plus IN TXT \"v=spf1 +all\"\n"
	"two IN TXT \"v=spf1 -all\"\n"
	"two IN TXT \"v=spf1 ip4:192.0.2.1 -all\"\n";

static const struct spfkit_lint_finding *find(const struct spfkit_lint *l, const char *id)
{
	size_t i;

	for (i = 0; i < spfkit_lint_count(l); i++)
		if (strcmp(spfkit_lint_finding(l, i)->id, id) == 0)
			return spfkit_lint_finding(l, i);
	return NULL;
}

static void test_arguments(void **state)
{
	struct spfkit_lint_options o;
	struct spfkit_lint *l = (struct spfkit_lint *)&o; /* set to NULL on failure */
	unsigned char big[sizeof(o) + 8];

	(void)state;
	spfkit_lint_options_init(&o);
	o.domain = "example.org";
	o.domain_len = 11;
	assert_int_equal(spfkit_lint_run(NULL, &o, NULL), SPFKIT_EINVAL);
	assert_int_equal(spfkit_lint_run(NULL, NULL, &l), SPFKIT_EINVAL);
	assert_null(l);
	o.size = 0; /* not initialised */
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);
	spfkit_lint_options_init(&o);
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL); /* no domain, no record */
	o.domain = "exa\0mple.org";
	o.domain_len = 12;
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);
	o.domain = NULL;
	o.domain_len = 3;
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);
	spfkit_lint_options_init(&o);
	o.record_len = 5; /* a length and no text */
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);

	/* a newer caller's options: fields this library does not know must be unset */
	spfkit_lint_options_init(&o);
	o.record = "v=spf1 -all";
	o.record_len = 11;
	memset(big, 0, sizeof(big));
	memcpy(big, &o, sizeof(o));
	*(size_t *)(void *)big = sizeof(big);
	assert_int_equal(spfkit_lint_run(NULL, (const void *)big, &l), 0);
	spfkit_lint_free(l);
	/* an older caller's, without the strings: they read as none */
	o.size = offsetof(struct spfkit_lint_options, tree) + sizeof(int);
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), 0);
	spfkit_lint_free(l);
	o.size = offsetof(struct spfkit_lint_options, tree); /* older than any release */
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);
	big[sizeof(o) + 3] = 1;
	assert_int_equal(spfkit_lint_run(NULL, (const void *)big, &l), SPFKIT_EINVAL);
	assert_null(l);

	spfkit_lint_free(NULL);
	assert_null(spfkit_lint_summary(NULL));
	assert_int_equal(spfkit_lint_count(NULL), 0);
	assert_null(spfkit_lint_finding(NULL, 0));
	assert_null(spfkit_lint_tree(NULL));
	assert_string_equal(spfkit_lint_severity_name(SPFKIT_LINT_WARNING), "warning");
	assert_string_equal(spfkit_lint_severity_name((enum spfkit_lint_severity)7), "unknown");
}

/* A record given as text, no DNS at all: its own findings, no tree asked. */
static void test_record_no_dns(void **state)
{
	const struct spfkit_lint_summary *s;
	const struct spfkit_lint_finding *f;
	struct spfkit_lint_options o;
	struct spfkit_lint *l = NULL;

	(void)state;
	spfkit_lint_options_init(&o);
	o.record = "v=spf1 +all";
	o.record_len = strlen(o.record);
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), 0);
	s = spfkit_lint_summary(l);
	assert_null(s->domain);
	assert_int_equal(s->record_len, o.record_len);
	assert_memory_equal(s->record, o.record, o.record_len);
	assert_int_equal(s->dns_terms, 0);
	assert_int_equal(s->status, 2);
	assert_int_equal(s->stopped, 0);
	f = find(l, "plus-all");
	assert_non_null(f);
	assert_int_equal(f->severity, SPFKIT_LINT_ERROR);
	assert_string_equal(f->term, "+all");
	assert_int_equal(f->offset, 7);
	assert_string_equal(f->section, "5.1");
	assert_non_null(f->fix);
	assert_non_null(f->message);
	assert_int_equal(s->errors + s->warnings + s->notices, spfkit_lint_count(l));
	assert_null(spfkit_lint_finding(l, spfkit_lint_count(l)));
	assert_null(spfkit_lint_tree(l));
	spfkit_lint_free(l);
}

static void test_zone_tree(void **state)
{
	struct spfkit_zone *z = zone_of(ZONE);
	const struct spfkit_lint_summary *s;
	const struct spfkit_tree_node *root, *a, *ab, *b;
	struct spfkit_resolver *r = NULL;
	struct spfkit_lint_options o;
	struct spfkit_lint *l = NULL;
	const struct spfkit_lint_finding *f;

	(void)state;
	assert_int_equal(spfkit_zone_resolver(z, &r), 0);
	spfkit_lint_options_init(&o);
	o.domain = "example.org.";
	o.domain_len = strlen(o.domain);
	o.tree = 1;
	assert_int_equal(spfkit_lint_run(r, &o, &l), 0);
	s = spfkit_lint_summary(l);
	assert_string_equal(s->domain, "example.org");
	/* include:a (1) + its include:b (1) + include:b (1) + a:gone (1) */
	assert_int_equal(s->dns_terms, 4);
	/* gone.example.org has no A and no AAAA: one void lookup each family */
	assert_int_equal(s->void_lookups_ipv4, 1);
	assert_int_equal(s->void_lookups_ipv6, 1);
	assert_int_equal(s->records, 4);
	f = find(l, "target-no-address");
	assert_non_null(f);
	assert_string_equal(f->term, "a:gone.example.org");
	assert_string_equal(f->domain, "example.org");
	assert_int_equal(f->provider, 0);
	assert_int_equal(s->nspf_records, 1);
	assert_int_equal(s->spf_records[0].len, s->record_len);
	assert_int_equal(s->unevaluated, 0);
	/* what each DNS-querying term of the top record costs, in order */
	assert_int_equal(s->ncosts, 3);
	assert_string_equal(s->costs[0].term, "include:a.example.org");
	assert_int_equal(s->costs[0].cost, 2);
	assert_int_equal(s->costs[2].total, 4);

	root = spfkit_lint_tree(l);
	assert_non_null(root);
	assert_int_equal(root->how, SPFKIT_TREE_TOP);
	assert_null(root->via);
	assert_int_equal(root->has_ttl, 1);
	assert_int_equal(root->ttl, 300);
	assert_int_equal(root->lookups_subtree, 4);
	assert_int_equal(root->lookups_here, 3); /* two includes and a:gone */
	/* an IPv4 client's void is the A question, an IPv6 client's the AAAA */
	assert_int_equal(root->nvoids, 2);
	assert_string_equal(root->voids[0].type, "A");
	assert_string_equal(root->voids[0].name, "gone.example.org");
	assert_true(root->voids[0].ipv4 && !root->voids[0].ipv6);
	assert_string_equal(root->voids[1].type, "AAAA");
	assert_true(!root->voids[1].ipv4 && root->voids[1].ipv6);
	assert_string_equal(root->ipv4_here, "256");
	assert_string_equal(root->ipv4_subtree, "257"); /* + b's one address; a is ~all */
	assert_string_equal(root->ipv6_subtree, "18446744073709551616"); /* a /64 */
	a = root->child;
	assert_non_null(a);
	assert_string_equal(a->domain, "a.example.org");
	assert_int_equal(a->how, SPFKIT_TREE_INCLUDE);
	assert_string_equal(a->via, "include:a.example.org");
	ab = a->child;
	assert_non_null(ab);
	assert_string_equal(ab->domain, "b.example.org");
	assert_int_equal(ab->repeated, 0);
	assert_null(ab->child);
	b = a->next;
	assert_non_null(b);
	assert_string_equal(b->domain, "b.example.org");
	assert_int_equal(b->repeated, 1); /* reached before, under a */
	assert_null(b->child);
	assert_null(b->next);
	assert_int_equal(s->tree_status, 0);
	spfkit_lint_free(l);

	/* the same walk without the tree: the same findings and counts */
	o.tree = 0;
	assert_int_equal(spfkit_lint_run(r, &o, &l), 0);
	assert_null(spfkit_lint_tree(l));
	assert_int_equal(spfkit_lint_summary(l)->dns_terms, 4);
	assert_non_null(find(l, "target-no-address"));
	spfkit_lint_free(l);

	/* a name with two records: the tree has the second too (the owner merges them) */
	spfkit_lint_options_init(&o);
	o.domain = "two.example.org";
	o.domain_len = strlen(o.domain);
	o.tree = 1;
	assert_int_equal(spfkit_lint_run(r, &o, &l), 0);
	assert_non_null(find(l, "multiple-records"));
	root = spfkit_lint_tree(l);
	assert_int_equal(root->nother_records, 1);
	assert_int_equal(root->other_records[0].len, strlen(root->other_records[0].text));
	assert_true(root->other_records[0].len > 0);
	assert_int_equal(spfkit_lint_summary(l)->tree_status, 2);
	spfkit_lint_free(l);

	spfkit_resolver_free(r);
	spfkit_zone_free(z);
}

/* The record as its character-strings: their joins and sizes are checked. */
static void test_strings(void **state)
{
	static const char *const strs[] = {"v=spf1 ip4:192.0.2.1", "-all"};
	static const size_t lens[] = {20, 4};
	const struct spfkit_lint_finding *f;
	struct spfkit_lint_options o;
	struct spfkit_lint *l = NULL;
	const char *many[SPFKIT_LINT_MAX_STRINGS + 1];
	size_t many_lens[SPFKIT_LINT_MAX_STRINGS + 1], i;

	(void)state;
	spfkit_lint_options_init(&o);
	o.strings = strs;
	o.string_lens = lens;
	o.nstrings = 2;
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), 0);
	/* joined with nothing between them (RFC 7208 §3.3) */
	assert_int_equal(spfkit_lint_summary(l)->record_len, 24);
	assert_memory_equal(spfkit_lint_summary(l)->record, "v=spf1 ip4:192.0.2.1-all", 24);
	f = find(l, "split-inside-token");
	assert_non_null(f);
	assert_string_equal(f->term, "ip4:192.0.2.1-all");
	spfkit_lint_free(l);

	o.record = "v=spf1 -all"; /* both: which one? */
	o.record_len = 11;
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);
	o.record = NULL;
	o.record_len = 0;
	o.string_lens = NULL;
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_EINVAL);
	for (i = 0; i <= SPFKIT_LINT_MAX_STRINGS; i++) {
		many[i] = "v=spf1 ";
		many_lens[i] = 7;
	}
	o.strings = many;
	o.string_lens = many_lens;
	o.nstrings = SPFKIT_LINT_MAX_STRINGS + 1;
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_E2BIG);
	o.nstrings = 2;
	many_lens[1] = SPFKIT_LINT_MAX_TEXT; /* 7 + 65535: over a TXT record's data */
	assert_int_equal(spfkit_lint_run(NULL, &o, &l), SPFKIT_E2BIG);
	assert_null(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_record_no_dns),
		cmocka_unit_test(test_zone_tree),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
