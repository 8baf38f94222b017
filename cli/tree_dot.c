/*
 * `spfkit tree --dot`: the tree as a Graphviz digraph, one
 * box per record, one edge per include or redirect. Labels hold DNS
 * data, so every byte is escaped for dot's quoted strings: '"' and '\\'
 * escaped, '&' as &amp; (dot reads entities in labels), and control or
 * non-ASCII bytes shown as \xNN, because a record need not be UTF-8 and
 * dot refuses what is not. (--svg is spfkit's own drawing: tree_svg.c.)
 */
#include <string.h>

#include "tree.h"

#define DOT_LINE 60u      /* record text is wrapped at spaces near this width */
#define DOT_RECORD_MAX 600u /* and cut after this many bytes */

/* len bytes of s inside a dot "..." string. */
static void dot_bytes(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\\\x%02x", c); /* a visible backslash, then the hex */
		else
			putc(c, f);
	}
}

static void dot_str(FILE *f, const char *s)
{
	dot_bytes(f, s, strlen(s));
}

/* The record in lines of about DOT_LINE bytes, broken at spaces. */
static void dot_record(FILE *f, const char *rec, size_t len)
{
	size_t start = 0, cut = len > DOT_RECORD_MAX ? DOT_RECORD_MAX : len;

	while (start < cut) {
		size_t end = start + DOT_LINE < cut ? start + DOT_LINE : cut, sp = end;

		while (end < cut && sp > start && rec[sp] != ' ')
			sp--;
		if (end < cut && sp > start)
			end = sp;
		dot_bytes(f, rec + start, end - start);
		fputs("\\n", f);
		start = end;
		while (start < cut && rec[start] == ' ')
			start++;
	}
	if (cut < len)
		fputs("...\\n", f);
}

static void dot_counts(FILE *f, const struct tree_node *n)
{
	char a[48], b[48], c[48], d[48];

	fprintf(f, "lookups %u here, %u with the subtree\\n", n->terms_here, n->terms_tree);
	/* each count named: "0/3" reads as "0 of 3" */
	fprintf(f, "void lookups IPv4 %u, IPv6 %u here; IPv4 %u, IPv6 %u with the subtree\\n",
		n->voids_here[0], n->voids_here[1], n->voids_tree[0], n->voids_tree[1]);
	fprintf(f, "addresses IPv4 %s, IPv6 %s here; IPv4 %s, IPv6 %s with the subtree%s\\n",
		spfkit__tree_count_str(&n->v4_here, a, sizeof(a)),
		spfkit__tree_count_text(&n->v6_here, b, sizeof(b)),
		spfkit__tree_count_str(&n->v4_tree, c, sizeof(c)),
		spfkit__tree_count_text(&n->v6_tree, d, sizeof(d)), n->all_tree ? ", +all" : "");
	if (n->has_ttl)
		fprintf(f, "ttl %lu s\\n", (unsigned long)n->ttl);
}

static void dot_node(FILE *f, const struct tree_node *n)
{
	size_t i;

	fprintf(f, "  n%u [label=\"", n->id);
	dot_str(f, n->domain[0] != '\0' ? n->domain : "(record given)");
	fputs("\\n", f);
	if (n->record != NULL) {
		dot_record(f, n->record, n->record_len);
		for (i = 0; i < n->nmore; i++) {
			fprintf(f, "record %zu of %zu:\\n", i + 2, n->nmore + 1);
			dot_record(f, n->more[i].text, n->more[i].len);
		}
		if (n->parsed)
			dot_counts(f, n);
	}
	for (i = 0; i < n->ndynamic; i++) {
		fputs("dynamic: ", f);
		dot_str(f, n->dynamic[i]);
		fputs("\\n", f);
	}
	if (n->problem != NULL) {
		dot_str(f, n->problem);
		fputs("\\n", f);
	}
	if (n->repeated)
		fputs("repeated: shown above, not expanded again\\n", f);
	fputs("\"", f);
	if (n->error)
		fputs(", color=red, fontcolor=red", f);
	if (n->loop || n->repeated)
		fputs(", style=dashed", f);
	fputs("];\n", f);
}

static void dot_tree(FILE *f, const struct tree_node *n)
{
	const struct tree_node *c;

	dot_node(f, n);
	if (n->repeated)
		return;
	for (c = n->child; c != NULL; c = c->next) {
		dot_tree(f, c);
		fprintf(f, "  n%u -> n%u [label=\"", n->id, c->id);
		dot_str(f, c->via != NULL ? c->via : "");
		fprintf(f, "\"%s];\n", c->how == LINT_HOW_REDIRECT ? ", style=bold" : "");
	}
}

int tree_print_dot(FILE *f, const struct tree *t)
{
	const struct lint_counts *c = &t->r->counts;

	fputs("digraph spf {\n"
	      "  graph [fontname=\"monospace\", fontsize=10];\n"
	      "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
	      "  edge [fontname=\"monospace\", fontsize=9];\n",
	      f);
	fprintf(f, "  label=\"%u DNS terms of %u, worst case; void lookups %u (IPv4) %u (IPv6) of %u\";\n",
		c->dns_terms, SPFKIT_LIMIT_DNS_TERMS, c->void_v4, c->void_v6,
		SPFKIT_LIMIT_VOID_LOOKUPS);
	if (t->root != NULL)
		dot_tree(f, t->root);
	fputs("}\n", f);
	return ferror(f) ? SPFKIT_EIO : 0;
}
