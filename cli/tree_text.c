/*
 * `spfkit tree` as text (indented like `spfkit check --trace`: one block
 * per record, its includes and redirect two columns further in) and as
 * JSON (the same tree, nested). Untrusted bytes go through
 * cli_put_safe() and cli_json_str(). A loop or a record reached a
 * second time is shown once more, marked, and not expanded again.
 */
#include <string.h>

#include "tree.h"

#define TREE_JSON_MAX (16u << 20) /* 500 records of at most 64 KiB fit */

static void indent(FILE *f, unsigned depth)
{
	unsigned i;

	for (i = 0; i < depth; i++)
		fputs("  ", f);
}

static void print_addresses(FILE *f, const struct tree_node *n)
{
	char a[48], b[48], c[48], d[48];

	fprintf(f, "addresses: %s IPv4, %s IPv6 here; %s IPv4, %s IPv6 with the subtree%s\n",
		spfkit__tree_count_str(&n->v4_here, a, sizeof(a)),
		spfkit__tree_count_text(&n->v6_here, b, sizeof(b)),
		spfkit__tree_count_str(&n->v4_tree, c, sizeof(c)),
		spfkit__tree_count_text(&n->v6_tree, d, sizeof(d)),
		n->all_tree ? " (and +all: every address)" : "");
}

static void print_voids(FILE *f, const struct tree_node *n, unsigned depth)
{
	const struct tree_void *v;

	if (n->voids_here[0] == n->voids_here[1] && n->voids_tree[0] == n->voids_tree[1])
		fprintf(f, "void lookups: %u here, %u with the subtree (limit %u)\n", n->voids_here[0],
			n->voids_tree[0], SPFKIT_LIMIT_VOID_LOOKUPS);
	else
		fprintf(f,
			"void lookups: IPv4 clients %u here, %u with the subtree; IPv6 clients %u "
			"here, %u with the subtree (limit %u)\n",
			n->voids_here[0], n->voids_tree[0], n->voids_here[1], n->voids_tree[1],
			SPFKIT_LIMIT_VOID_LOOKUPS);
	for (v = n->voids; v != NULL; v = v->next) {
		indent(f, depth + 1);
		fputs("void: ", f);
		cli_put_safe_str(f, v->what);
		putc(' ', f);
		cli_put_safe_str(f, v->name);
		fputs(v->families == 1 ? " (IPv4 clients)\n" : v->families == 2 ? " (IPv6 clients)\n" : "\n",
		      f);
	}
}

static void print_details(FILE *f, const struct tree_node *n, unsigned depth)
{
	size_t i;

	indent(f, depth + 1);
	fputs("record: ", f);
	cli_put_safe(f, n->record, n->record_len);
	putc('\n', f);
	for (i = 0; i < n->nmore; i++) {
		/* the owner has to see every record to merge them into one */
		indent(f, depth + 1);
		fprintf(f, "record %zu of %zu: ", i + 2, n->nmore + 1);
		cli_put_safe(f, n->more[i].text, n->more[i].len);
		putc('\n', f);
	}
	if (n->has_ttl) {
		indent(f, depth + 1);
		fprintf(f, "ttl: %lu s\n", (unsigned long)n->ttl);
	}
	if (!n->parsed)
		return;
	indent(f, depth + 1);
	fprintf(f, "lookups: %u here, %u with the subtree (limit %u)\n", n->terms_here,
		n->terms_tree, SPFKIT_LIMIT_DNS_TERMS);
	indent(f, depth + 1);
	print_voids(f, n, depth);
	indent(f, depth + 1);
	print_addresses(f, n);
	for (i = 0; i < n->ndynamic; i++) {
		indent(f, depth + 1);
		fputs("dynamic (macros): ", f);
		cli_put_safe_str(f, n->dynamic[i]);
		putc('\n', f);
	}
}

static void print_node(FILE *f, const struct tree_node *n, unsigned depth)
{
	const struct tree_node *c;

	indent(f, depth);
	cli_put_safe_str(f, n->domain[0] != '\0' ? n->domain : "(record given, no domain)");
	if (n->via != NULL) {
		fputs(" (", f);
		cli_put_safe_str(f, n->via);
		putc(')', f);
	}
	putc('\n', f);
	if (n->record != NULL)
		print_details(f, n, depth);
	if (n->problem != NULL) {
		indent(f, depth + 1);
		fputs(n->loop ? "loop: " : n->error ? "error: " : "note: ", f);
		cli_put_safe_str(f, n->problem);
		putc('\n', f);
	}
	if (n->repeated) {
		indent(f, depth + 1);
		fputs("repeated: this record is shown above; counted again, not expanded again\n", f);
		return;
	}
	for (c = n->child; c != NULL; c = c->next)
		print_node(f, c, depth + 1);
}

void tree_print_text(FILE *f, const struct tree *t)
{
	const struct lint_counts *c = &t->r->counts;

	if (t->root != NULL)
		print_node(f, t->root, 0);
	fprintf(f,
		"total: %u DNS term%s (limit %u), worst case over every branch; void lookups %u "
		"for an IPv4 client, %u for an IPv6 client (limit %u); %u record%s\n",
		c->dns_terms, c->dns_terms == 1 ? "" : "s", SPFKIT_LIMIT_DNS_TERMS, c->void_v4,
		c->void_v6, SPFKIT_LIMIT_VOID_LOOKUPS, c->records, c->records == 1 ? "" : "s");
	if (spfkit__tree_exit_status(t) != 0)
		fprintf(f, "errors: receivers return permerror, temperror or none for this tree%s\n",
			c->permerror_v4 || c->permerror_v6 ? " (see spfkit lint)" : "");
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_count(struct spfkit__buf *b, int *first, const char *key,
		       const struct tree_count *c, int as_string)
{
	char num[48];

	cli_json_key(b, first, key);
	spfkit__tree_count_str(c, num, sizeof(num));
	if (as_string)
		cli_json_cstr(b, num); /* 2^128 does not fit a double: a string */
	else
		spfkit__buf_puts(b, num);
}

static void json_voids(struct spfkit__buf *b, const struct tree_node *n)
{
	const struct tree_void *v;
	int first = 1;

	spfkit__buf_printf(b,
			   "{\"ipv4_here\":%u,\"ipv6_here\":%u,\"ipv4_subtree\":%u,\"ipv6_subtree\":%u,"
			   "\"names\":[",
			   n->voids_here[0], n->voids_here[1], n->voids_tree[0], n->voids_tree[1]);
	for (v = n->voids; v != NULL; v = v->next) {
		int f = 1;

		if (!first)
			spfkit__buf_putc(b, ',');
		first = 0;
		spfkit__buf_putc(b, '{');
		cli_json_key(b, &f, "type");
		cli_json_cstr(b, v->what);
		cli_json_key(b, &f, "name");
		cli_json_cstr(b, v->name);
		cli_json_key(b, &f, "ipv4");
		spfkit__buf_puts(b, v->families & 1 ? "true" : "false");
		cli_json_key(b, &f, "ipv6");
		spfkit__buf_puts(b, v->families & 2 ? "true" : "false");
		spfkit__buf_putc(b, '}');
	}
	spfkit__buf_puts(b, "]}");
}

static void json_addresses(struct spfkit__buf *b, const struct tree_node *n)
{
	int first = 1;

	spfkit__buf_putc(b, '{');
	json_count(b, &first, "ipv4_here", &n->v4_here, 0);
	json_count(b, &first, "ipv6_here", &n->v6_here, 1);
	json_count(b, &first, "ipv4_subtree", &n->v4_tree, 0);
	json_count(b, &first, "ipv6_subtree", &n->v6_tree, 1);
	cli_json_key(b, &first, "plus_all");
	spfkit__buf_puts(b, n->all_tree ? "true" : "false");
	spfkit__buf_putc(b, '}');
}

static const char *how_name(enum lint_how how)
{
	return how == LINT_HOW_INCLUDE ? "include" : how == LINT_HOW_REDIRECT ? "redirect" : "top";
}

static void json_node(struct spfkit__buf *b, const struct tree_node *n)
{
	const struct tree_node *c;
	int first = 1;
	size_t i;

	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "domain");
	cli_json_cstr(b, n->domain[0] != '\0' ? n->domain : NULL);
	cli_json_key(b, &first, "how");
	cli_json_cstr(b, how_name(n->how));
	cli_json_key(b, &first, "via");
	cli_json_cstr(b, n->via);
	cli_json_key(b, &first, "record");
	if (n->record != NULL)
		cli_json_str(b, n->record, n->record_len);
	else
		spfkit__buf_puts(b, "null");
	if (n->nmore > 0) {
		cli_json_key(b, &first, "other_records");
		spfkit__buf_putc(b, '[');
		for (i = 0; i < n->nmore; i++) {
			if (i > 0)
				spfkit__buf_putc(b, ',');
			cli_json_str(b, n->more[i].text, n->more[i].len);
		}
		spfkit__buf_putc(b, ']');
	}
	cli_json_key(b, &first, "ttl");
	if (n->has_ttl)
		spfkit__buf_printf(b, "%lu", (unsigned long)n->ttl);
	else
		spfkit__buf_puts(b, "null");
	cli_json_key(b, &first, "lookups");
	spfkit__buf_printf(b, "{\"here\":%u,\"subtree\":%u}", n->terms_here, n->terms_tree);
	cli_json_key(b, &first, "void_lookups");
	json_voids(b, n);
	cli_json_key(b, &first, "addresses");
	json_addresses(b, n);
	cli_json_key(b, &first, "dynamic");
	spfkit__buf_putc(b, '[');
	for (i = 0; i < n->ndynamic; i++) {
		if (i > 0)
			spfkit__buf_putc(b, ',');
		cli_json_cstr(b, n->dynamic[i]);
	}
	spfkit__buf_putc(b, ']');
	cli_json_key(b, &first, "problem");
	cli_json_cstr(b, n->problem);
	spfkit__buf_printf(b, ",\"error\":%s,\"loop\":%s,\"repeated\":%s", n->error ? "true" : "false",
			   n->loop ? "true" : "false", n->repeated ? "true" : "false");
	cli_json_key(b, &first, "children");
	spfkit__buf_putc(b, '[');
	for (c = n->repeated ? NULL : n->child; c != NULL; c = c->next) {
		json_node(b, c);
		if (c->next != NULL)
			spfkit__buf_putc(b, ',');
	}
	spfkit__buf_puts(b, "]}");
}

int tree_print_json(FILE *f, const struct tree *t)
{
	const struct lint_counts *c = &t->r->counts;
	struct spfkit__buf b;
	int first = 1, rc;

	spfkit__buf_init(&b, NULL, TREE_JSON_MAX);
	spfkit__buf_putc(&b, '{');
	cli_json_key(&b, &first, "domain");
	cli_json_cstr(&b, t->r->domain[0] != '\0' ? t->r->domain : NULL);
	cli_json_key(&b, &first, "tree");
	if (t->root != NULL)
		json_node(&b, t->root);
	else
		spfkit__buf_puts(&b, "null");
	cli_json_key(&b, &first, "total");
	spfkit__buf_printf(&b,
			   "{\"dns_terms\":%u,\"dns_terms_limit\":%u,\"void_lookups_ipv4\":%u,"
			   "\"void_lookups_ipv6\":%u,\"void_lookups_limit\":%u,\"records\":%u}",
			   c->dns_terms, SPFKIT_LIMIT_DNS_TERMS, c->void_v4, c->void_v6,
			   SPFKIT_LIMIT_VOID_LOOKUPS, c->records);
	cli_json_key(&b, &first, "exit_status");
	spfkit__buf_printf(&b, "%d", spfkit__tree_exit_status(t));
	spfkit__buf_puts(&b, "}\n");
	rc = b.err;
	if (rc == 0 && fwrite(b.data, 1, b.len, f) != b.len)
		rc = SPFKIT_EIO;
	spfkit__buf_free(&b);
	return rc;
}
