/*
 * `spfkit tree`: internal interfaces between its files.
 *
 *   cmd_tree.c    options, --help, the run, exit status, --output
 *   tree_build.c  the tree, built from lint's walk (lint_walk.c's events)
 *   tree_addr.c   address ranges: union and count (IPv6 counts need 129 bits)
 *   tree_text.c   text and JSON output
 *   tree_dot.c    Graphviz dot output, and --svg through `dot -Tsvg`
 *
 * There is one walker, lint's: tree watches it (struct lint_input's
 * observe), so the lookups tree shows per node add up to lint's
 * worst case exactly (tests/tree checks it on the benchmark corpus).
 */
#ifndef SPFKIT_CLI_TREE_H
#define SPFKIT_CLI_TREE_H

#include "lint.h"

/* ---- tree_addr.c ---------------------------------------------------------- */

/* One range of addresses; IPv4 in the low 32 bits of lo (hi 0). */
struct tree_range {
	int v6;
	uint64_t first_hi, first_lo, last_hi, last_lo;
};

struct tree_ranges {
	struct tree_range *items;
	size_t n, cap;
};

/* A count of addresses: up to 2^128 (IPv6 ::/0), so 129 bits. */
struct tree_count {
	uint64_t hi, lo;
	int all; /* exactly 2^128 */
};

/* Add addr/prefix (4 or 16 bytes of addr); 0 or SPFKIT_ENOMEM. */
int tree_ranges_add(struct tree_ranges *r, int v6, const unsigned char *addr, unsigned prefix);
/* Append every range of src; 0 or SPFKIT_ENOMEM. */
int tree_ranges_merge_from(struct tree_ranges *dst, const struct tree_ranges *src);
/* Sort and join overlapping ranges; then count each family. */
void tree_ranges_union(struct tree_ranges *r, struct tree_count *v4, struct tree_count *v6);
void tree_ranges_free(struct tree_ranges *r);
/* Decimal text of c into buf (at least 48 bytes). */
const char *tree_count_str(const struct tree_count *c, char *buf, size_t size);
/* n when c is exactly 2^n, else -1. */
int tree_count_log2(const struct tree_count *c);
/* For people: "2^80" for a power of two from 2^16 up, else the decimal text. */
const char *tree_count_text(const struct tree_count *c, char *buf, size_t size);

/* ---- tree_build.c --------------------------------------------------------- */

struct tree_void {
	const char *what, *name; /* "A", "MX", "(macro)"...; the name asked */
	unsigned families;       /* bit 0: IPv4 clients, bit 1: IPv6 clients */
	struct tree_void *next;
};

struct tree_node {
	unsigned id; /* dot node name n<id> */
	const char *domain;
	enum lint_how how;
	const char *via; /* the term leading here as written, or NULL */
	int via_qualifier;
	const char *record; /* NULL: none read */
	size_t record_len;
	uint32_t ttl;
	int has_ttl;
	int parsed;          /* the record parsed: the counts below mean something */
	const char *problem; /* the branch stops: why */
	int error, loop;
	int repeated;        /* reached before elsewhere: not expanded again */
	int plus_all;        /* +all walked: every address passes */
	unsigned terms_here, terms_tree;  /* DNS terms (§4.6.4) */
	unsigned voids_here[2], voids_tree[2];
	struct tree_void *voids, *voids_last;
	const char **dynamic; /* terms made by macros, as written */
	size_t ndynamic;
	struct tree_ranges own, sub; /* ranges of + terms; sub: with the subtree's */
	struct tree_count v4_here, v6_here, v4_tree, v6_tree;
	int all_tree;        /* some + branch ends in +all */
	struct tree_node *parent, *child, *last_child, *next;
	/* counters at ENTER */
	unsigned enter_terms, enter_voids[2];
};

struct tree {
	struct lint_report *r; /* its arena holds every node and string */
	struct tree_node *root, *cur;
	unsigned nodes;
	int errors; /* nodes with an error */
	int err;    /* SPFKIT_ENOMEM: the tree is incomplete */
};

void tree_init(struct tree *t, struct lint_report *r);
void tree_free(struct tree *t);
/* The lint_walk_fn; arg is a struct tree. */
void tree_observe(void *arg, const struct lint_walk_event *ev);
/* 0 no error, 2 the tree has errors (documented in --help and docs/tree.md). */
int tree_exit_status(const struct tree *t);

/* ---- tree_text.c ---------------------------------------------------------- */

void tree_print_text(FILE *f, const struct tree *t);
/* One JSON object and a newline; 0 or an spfkit_err. */
int tree_print_json(FILE *f, const struct tree *t);

/* ---- tree_dot.c ----------------------------------------------------------- */

/* A Graphviz digraph; 0 or an spfkit_err. */
int tree_print_dot(FILE *f, const struct tree *t);
/* The dot program in PATH, into buf; 0, or -1 when there is none. */
int tree_find_dot(char *buf, size_t size);
/* Run `dot -Tsvg -o out in`; 0, or -1 with a line in err. */
int tree_run_dot(const char *dot, const char *in, const char *out, char *err, size_t errlen);

/* ---- cmd_tree.c ----------------------------------------------------------- */

int cli_tree_main(int argc, char **argv);
void cli_tree_usage(FILE *f);

#endif
